//! Bytes between the ends of a connection: written into a pipe under the
//! network knobs (held by a partition until it heals), arriving at a
//! client or queued for a node's CPU, one ready connection per turn, and
//! read off replication links by the taps on their way in.

use super::tap::{Answer, UpRequest};
use super::world::{ClusterWorld, Ev, Peer};
use crate::net::SERVER_READ_BYTES_MAX;

impl ClusterWorld {
    /// Queues `bytes` from one end of `conn` towards the other.
    pub(super) fn write(&mut self, conn: u32, from_acceptor: bool, send_ns: u64, bytes: &[u8]) {
        let c = &self.conns[conn as usize];
        let (from_node, to_node) = match (c.peer, from_acceptor) {
            (Peer::Node { node, .. }, true) => (Some(c.node), Some(node)),
            (Peer::Node { node, .. }, false) => (Some(node), Some(c.node)),
            _ => (None, None),
        };
        let send_ns = match (from_node, to_node) {
            (Some(a), Some(b)) => self.knobs.partitions.open_at(send_ns, a, b),
            _ => send_ns,
        };
        self.trace.bytes(bytes);
        let mut arrivals = Vec::new();
        let c = &mut self.conns[conn as usize];
        let pipe = if from_acceptor {
            &mut c.down
        } else {
            &mut c.up
        };
        if (from_acceptor && !c.acceptor_open) || (!from_acceptor && !c.peer_open) {
            return;
        }
        pipe.write(send_ns, bytes, &self.knobs.net, &mut self.net_rng, |t| {
            arrivals.push(t)
        });
        for t in arrivals {
            self.schedule(
                t.max(self.now_ns),
                Ev::Arrive {
                    conn,
                    at_acceptor: !from_acceptor,
                },
            );
        }
    }

    /// Bytes or a FIN reached one end.
    pub(super) fn arrive(&mut self, conn: u32, at_acceptor: bool) {
        let now_ns = self.now_ns;
        let c = &mut self.conns[conn as usize];
        let pipe = if at_acceptor { &mut c.up } else { &mut c.down };
        pipe.advance(now_ns);
        match (at_acceptor, c.peer) {
            (false, Peer::Client(client)) => {
                if c.peer_open {
                    self.client_read(client, conn);
                }
            }
            (true, _) => {
                let node = c.node;
                if !c.acceptor_open || c.incarnation != self.nodes[node as usize].incarnation {
                    return;
                }
                self.node_input_ready(node, conn, true);
            }
            (false, Peer::Node { node, .. }) => {
                if !c.peer_open || c.peer_incarnation != self.nodes[node as usize].incarnation {
                    return;
                }
                self.node_input_ready(node, conn, false);
            }
        }
    }

    pub(super) fn node_input_ready(&mut self, node: u32, conn: u32, acceptor: bool) {
        let c = &mut self.conns[conn as usize];
        let flag = if acceptor {
            &mut c.acceptor_ready
        } else {
            &mut c.peer_ready
        };
        if !*flag {
            *flag = true;
            self.ready[node as usize].push_back((conn, acceptor));
        }
        let at = self.nodes[node as usize].busy_until_ns.max(self.now_ns);
        self.schedule(at, Ev::NodeTurn { node });
    }

    /// One CPU turn of `node`: one ready connection's input.
    pub(super) fn node_turn(&mut self, node: u32) {
        let now_ns = self.now_ns;
        let n = &self.nodes[node as usize];
        if !n.up || n.busy_until_ns > now_ns {
            return; // a later turn event serves the queue
        }
        let Some((conn, acceptor)) = self.ready[node as usize].pop_front() else {
            return;
        };
        let c = &mut self.conns[conn as usize];
        if acceptor {
            c.acceptor_ready = false;
        } else {
            c.peer_ready = false;
        }
        let (id, open) = match (acceptor, c.peer) {
            (true, _) => (c.id, c.acceptor_open),
            (false, Peer::Node { id, .. }) => (Some(id), c.peer_open),
            (false, Peer::Client(_)) => (None, false),
        };
        let Some(id) = id.filter(|_| open) else {
            return;
        };
        let pipe = if acceptor { &mut c.up } else { &mut c.down };
        let readable = pipe.readable();
        let take = readable.len().min(SERVER_READ_BYTES_MAX);
        let bytes = readable[..take].to_vec();
        pipe.consume(take);
        let more = !pipe.readable().is_empty();
        let eof = pipe.at_eof(now_ns);
        if !bytes.is_empty() {
            self.tap(conn, acceptor, &bytes);
            let n = &mut self.nodes[node as usize];
            let now = n.now(now_ns);
            n.engine.handle_input(now, id, &bytes);
            let mut d = n.drain(now_ns, &self.cost);
            d.cost_ns += self.cost.read_ns(bytes.len() as u64);
            self.after_drain(node, d, now_ns);
        }
        if more {
            self.node_input_ready(node, conn, acceptor);
        } else if eof {
            self.engine_end_gone(node, conn, acceptor);
        }
    }

    /// Feeds a replication link's taps with the bytes an engine is handed.
    pub(super) fn tap(&mut self, conn: u32, to_acceptor: bool, bytes: &[u8]) {
        let now_ns = self.now_ns;
        let primary_end = self.primary_end();
        let primary_replid = self
            .history
            .witness
            .last()
            .map_or(String::new(), |w| w.replid.clone());
        let c = &mut self.conns[conn as usize];
        let Some(s) = c.session else {
            return;
        };
        let session = &mut self.history.sessions[s];
        if to_acceptor {
            for request in c.up_tap.feed(bytes) {
                match request {
                    UpRequest::Psync { replid, offset } => {
                        c.down_tap.asked_offset = Some(offset);
                        session.psync = Some((replid, offset));
                        session.psync_ns = now_ns;
                        session.primary_end_at_psync = primary_end;
                        session.primary_replid_at_psync = primary_replid.clone();
                    }
                    UpRequest::Ack { offset } => session.acks.push((now_ns, offset)),
                }
            }
        } else {
            c.down_tap.feed(bytes);
            let t = &c.down_tap;
            if session.full.is_none() {
                match &t.answer {
                    Some(Answer::Full { replid, .. }) => {
                        session.full = Some(true);
                        session.answer_replid = Some(replid.clone());
                    }
                    Some(Answer::Continue { replid }) => {
                        session.full = Some(false);
                        session.answer_replid = replid.clone();
                    }
                    None => {}
                }
            }
            session.stream_base = t.stream_base;
            let have = session.stream.len();
            if t.stream.len() > have {
                session.stream.extend_from_slice(&t.stream[have..]);
            }
            session.garbled = t.garbled();
            session.synced = matches!(t.answer, Some(Answer::Continue { .. })) || t.rdb_done;
        }
    }
}
