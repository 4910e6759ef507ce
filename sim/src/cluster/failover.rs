//! The FAILOVER fault: an admin connection asks the primary of the moment
//! to hand its role over (plain, `TO` a replica, with `TIMEOUT`, `TO ...
//! FORCE TIMEOUT`, sometimes `FAILOVER ABORT` shortly after), and the
//! world learns the new topology as an operator does.
//!
//! The world watches each node's role after every drain
//! (`Engine::is_replica`, what ROLE answers): the primary turning replica
//! has handed over (the witness is dropped: its stream stopped at the
//! hand-over offset); a replica turning primary has been promoted by the
//! old primary's `PSYNC ... FAILOVER`. It becomes the primary of the
//! moment, the witness reconnects to it continuing the old stream (see
//! [`super::history::WitnessStream`]), and after the operator's delay the
//! admin points every other node at it with REPLICAOF: FAILOVER repoints
//! only the old primary, and Redis leaves the other replicas to their
//! operator (until then they follow the old primary, now a replica, as
//! chained replicas). A primary that turns primary again without a
//! promotion elsewhere aborted a hand-over in progress: the witness
//! reconnects to it the same way.

use super::history::FailoverRecord;
use super::world::{node_host, node_of_host, ClusterWorld, Ev, NODE_PORT};
use super::FailoverKind;
use seedkv_engine::resp::{Frame, FrameDecoder};

/// How long the operator lets an accepted FAILOVER run before sending
/// `FAILOVER ABORT` (one without TIMEOUT waits for ever if its target
/// cannot catch up: Redis refuses a reconnecting replica's PSYNC while
/// failing over).
pub const FAILOVER_PATIENCE_NS: u64 = 3_000_000_000;

/// The address a primary knows replica `node` by (FAILOVER TO names it).
fn replica_address(node: u32) -> String {
    format!("10.0.1.{node}")
}

/// The first frame of an admin reply, as text (`+OK`, an error's line).
fn reply_text(bytes: &[u8]) -> String {
    let mut decoder = FrameDecoder::new();
    decoder.feed(bytes);
    match decoder.next_frame() {
        Ok(Some(Frame::Simple(s))) => format!("+{}", String::from_utf8_lossy(&s)),
        Ok(Some(Frame::Error(e))) => format!("-{}", String::from_utf8_lossy(&e)),
        Ok(Some(other)) => format!("{other:?}"),
        _ => String::new(),
    }
}

impl ClusterWorld {
    /// The drawn FAILOVER, sent to the primary of the moment.
    pub(super) fn failover_begin(&mut self) {
        let Some(plan) = self.knobs.failover else {
            return;
        };
        let node = self.primary;
        if !self.nodes[node as usize].up || !self.role_primary[node as usize] {
            return; // no primary to ask now: the fault does not happen
        }
        self.faults_count += 1;
        self.trace.word(0xfa11 ^ node as u64);
        let others: Vec<u32> = (0..self.nodes.len() as u32)
            .filter(|&n| n != node)
            .collect();
        let target = others[(plan.target as usize - 1) % others.len()];
        let (host, port, timeout) = (
            replica_address(target),
            NODE_PORT.to_string(),
            plan.timeout_ms.to_string(),
        );
        let mut args: Vec<&str> = vec!["FAILOVER"];
        let to = ["TO", host.as_str(), port.as_str()];
        match plan.kind {
            FailoverKind::Plain => {}
            FailoverKind::To => args.extend(to),
            FailoverKind::Timeout => args.extend(["TIMEOUT", &timeout]),
            FailoverKind::ToTimeout => {
                args.extend(to);
                args.extend(["TIMEOUT", &timeout]);
            }
            FailoverKind::ToForce => {
                args.extend(to);
                args.extend(["FORCE", "TIMEOUT", &timeout]);
            }
        }
        // Recorded first: a primary whose target already acknowledged its
        // whole stream hands over within the command itself.
        self.history.failovers.push(FailoverRecord {
            node,
            at_ns: self.now_ns,
            args: args.iter().map(|a| a.to_string()).collect(),
            force: plan.kind == FailoverKind::ToForce,
            witness_before: self.history.witness.len().checked_sub(1),
            ..FailoverRecord::default()
        });
        let arg_bytes: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let reply = reply_text(&self.admin(node, &arg_bytes));
        let accepted = reply == "+OK";
        if let Some(f) = self.history.failovers.last_mut() {
            f.accepted = accepted;
            f.reply = reply;
        }
        if accepted {
            let after_ns = plan.abort_after_ns.unwrap_or(FAILOVER_PATIENCE_NS);
            self.schedule(self.now_ns + after_ns, Ev::FailoverAbort);
        }
    }

    /// `FAILOVER ABORT` to the node the FAILOVER went to, unless it
    /// completed.
    pub(super) fn failover_abort(&mut self) {
        let Some(f) = self.history.failovers.last() else {
            return;
        };
        let node = f.node;
        if f.completed.is_some() || !self.nodes[node as usize].up {
            return;
        }
        let reply = reply_text(&self.admin(node, &[b"FAILOVER", b"ABORT"]));
        if let Some(f) = self.history.failovers.last_mut() {
            f.abort = Some((self.now_ns, reply));
        }
    }

    /// `node`'s engine turned primary (`true`) or replica after a drain.
    pub(super) fn role_changed(&mut self, node: u32, primary: bool) {
        self.trace
            .word(0x401e ^ (node as u64) << 8 ^ primary as u64);
        let now_ns = self.now_ns;
        match (primary, node == self.primary) {
            (false, true) => {
                // The primary handed over: its stream stops here.
                self.drop_witness();
                if let Some(f) = self.history.failovers.last_mut() {
                    f.handed_over_ns.get_or_insert(now_ns);
                }
            }
            (false, false) => {} // a restarted node told to follow
            (true, true) => {
                // A hand-over in progress was aborted: the old primary
                // goes on, under a new id continuing its history.
                if self.witness.is_none() {
                    let from = self.history.witness.len().checked_sub(1);
                    self.connect_witness(node, from);
                }
            }
            (true, false) => {
                // A replica promoted itself for a FAILOVER.
                self.drop_witness();
                self.primary = node;
                let from = self.history.witness.len().checked_sub(1);
                self.connect_witness(node, from);
                let after = self.history.witness.len() - 1;
                if let Some(f) = self.history.failovers.last_mut() {
                    f.completed.get_or_insert((now_ns, node));
                    f.witness_after.get_or_insert(after);
                }
                let delay_ns = self.knobs.failover.map_or(0, |f| f.repoint_after_ns);
                self.schedule(now_ns + delay_ns, Ev::Repoint);
            }
        }
    }

    /// The witness leaves the node it reads.
    fn drop_witness(&mut self) {
        let Some((id, _)) = self.witness.take() else {
            return;
        };
        let node = self.witness_node;
        let now_ns = self.now_ns;
        let n = &mut self.nodes[node as usize];
        if !n.up {
            return;
        }
        let now = n.now(now_ns);
        n.engine.disconnect(now, id);
        let d = n.drain(now_ns, &self.cost);
        self.after_drain(node, d, now_ns);
    }

    /// The operator points every node that does not follow the primary
    /// of the moment at it (ROLE first, as an operator checks).
    pub(super) fn repoint(&mut self) {
        let primary = self.primary;
        let nodes_count = self.nodes.len() as u32;
        for node in (0..nodes_count).filter(|&n| n != primary) {
            if !self.nodes[node as usize].up {
                continue; // it follows the primary when it restarts
            }
            let mut decoder = FrameDecoder::new();
            decoder.feed(&self.admin(node, &[b"ROLE"]));
            let follows = match decoder.next_frame() {
                Ok(Some(Frame::Array(items))) => match items.get(1) {
                    Some(Frame::Bulk(host)) if items.first() == Some(&bulk(b"slave")) => {
                        node_of_host(&String::from_utf8_lossy(host), nodes_count)
                    }
                    _ => None,
                },
                _ => None,
            };
            if follows != Some(primary) {
                let host = node_host(primary);
                let port = NODE_PORT.to_string();
                self.admin(node, &[b"REPLICAOF", host.as_bytes(), port.as_bytes()]);
            }
        }
    }
}

fn bulk(b: &[u8]) -> Frame {
    Frame::Bulk(b.to_vec())
}
