//! What the host does around each node's engine: starts it (the witness
//! on the primary, REPLICAOF on a replica), runs its own admin commands,
//! and after every drain charges the CPU, writes the outputs into the
//! pipes (or to the witness), and carries out closes and connects.

use seedkv_engine::cmd::flags;
use seedkv_engine::resp::encode::encode_request;

use super::history::WitnessStream;
use super::node::Drained;
use super::tap::{Answer, DownTap};
use super::world::{info, node_host, ClusterWorld, Ev, Peer, NODE_PORT};

impl ClusterWorld {
    /// A node (re)started: the primary of the moment gets the witness, any
    /// other node is told to follow it.
    pub(super) fn node_started(&mut self, node: u32) {
        if node == self.primary {
            self.connect_witness(node, None);
        } else {
            let port = NODE_PORT.to_string();
            let host = node_host(self.primary);
            self.admin(node, &[b"REPLICAOF", host.as_bytes(), port.as_bytes()]);
        }
        self.arm_timer(node);
    }

    /// Runs the host's own command on `node`, at once (no network), and
    /// returns its reply.
    pub(super) fn admin(&mut self, node: u32, args: &[&[u8]]) -> Vec<u8> {
        let now_ns = self.now_ns;
        let n = &mut self.nodes[node as usize];
        let now = n.now(now_ns);
        let id = match self.admin[node as usize] {
            Some(id) => id,
            None => {
                let id = n.engine.connect(now, info("10.0.9.1:1", node));
                self.admin[node as usize] = Some(id);
                id
            }
        };
        n.engine.handle_input(now, id, &encode_request(args));
        let d = n.drain(now_ns, &self.cost);
        let reply = n.engine.pending_output(id).to_vec();
        n.engine.consume_output(id, reply.len());
        self.after_drain(node, d, now_ns);
        reply
    }

    /// Connects the witness to `node`, the primary: from scratch
    /// (`PSYNC ? -1`), or continuing witness stream `from` (`PSYNC <its id>
    /// <its end + 1>`), which a primary that took the history over answers
    /// with `+CONTINUE` (see [`WitnessStream`]).
    pub(super) fn connect_witness(&mut self, node: u32, from: Option<usize>) {
        let now_ns = self.now_ns;
        let (replid, offset) = match from {
            Some(i) => {
                let w = &self.history.witness[i];
                (w.replid.clone(), (w.end() + 1) as i64)
            }
            None => ("?".to_string(), -1),
        };
        let n = &mut self.nodes[node as usize];
        let now = n.now(now_ns);
        let id = n.engine.connect(now, info("10.0.9.2:1", node));
        let mut hello = encode_request(&[b"REPLCONF", b"capa", b"eof", b"capa", b"psync2"]);
        let offset_text = offset.to_string();
        hello.extend_from_slice(&encode_request(&[
            b"PSYNC",
            replid.as_bytes(),
            offset_text.as_bytes(),
        ]));
        n.engine.handle_input(now, id, &hello);
        let mut tap = DownTap::default();
        tap.asked_offset = from.map(|_| offset);
        self.witness = Some((id, tap));
        self.witness_node = node;
        self.witness_acked = false;
        let incarnation = n.incarnation;
        self.history.witness.push(WitnessStream {
            node,
            incarnation,
            parent: from,
            ..WitnessStream::default()
        });
        let d = self.nodes[node as usize].drain(now_ns, &self.cost);
        self.after_drain(node, d, now_ns);
    }

    /// The primary's stream end as witnessed (0 before it started).
    pub(super) fn primary_end(&self) -> u64 {
        self.history.witness.last().map_or(0, |w| w.end())
    }

    /// The primary's stream end after a drain's writes: the witnessed end
    /// less the keep-alives (`REPLCONF GETACK *`, `PING`) the same drain
    /// appended after them (from `end_before` on). A client's write offset
    /// (Redis's `woff`, taken as its command propagates) never includes
    /// them, and a replica acks a GETACK with the offset before it (seed
    /// 646: writes a FAILOVER's pause released ran in a timer turn that
    /// then sent a GETACK, and WAIT's acks were held against its end).
    fn write_end(&self, end_before: u64) -> u64 {
        const KEEPALIVES: [&[u8]; 2] = [
            b"*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n",
            b"*1\r\n$4\r\nPING\r\n",
        ];
        let Some(w) = self.history.witness.last() else {
            return 0;
        };
        let from = end_before.saturating_sub(w.base).min(w.bytes.len() as u64) as usize;
        let mut len = w.bytes.len();
        while let Some(k) = KEEPALIVES
            .iter()
            .find(|k| len >= from + k.len() && w.bytes[from..len].ends_with(k))
        {
            len -= k.len();
        }
        w.base + len as u64
    }

    /// After the engine of `node` ran at `now_ns`: its CPU is busy for
    /// the cost, then its outputs leave; closes, connects and background
    /// requests are carried out.
    pub(super) fn after_drain(&mut self, node: u32, d: Drained, now_ns: u64) {
        let was_primary = self.role_primary[node as usize];
        let is_primary = !self.nodes[node as usize].engine.is_replica();
        if self.nodes[node as usize].up {
            self.role_primary[node as usize] = is_primary;
        }
        let n = &mut self.nodes[node as usize];
        let done_ns = n.busy_until_ns.max(now_ns) + d.cost_ns;
        n.busy_until_ns = done_ns;
        let incarnation = n.incarnation;
        self.trace.word(d.cost_ns ^ (node as u64) << 56);
        for &(token, latency_ns) in &d.background {
            self.schedule(
                now_ns + latency_ns,
                Ev::Storage {
                    node,
                    incarnation,
                    token,
                },
            );
        }
        // A node that was a replica before and after this drain (a
        // hand-over or a promotion happens between two commands).
        if !was_primary && !is_primary {
            self.note_replica_writes(node, &d);
        }
        for (client, flags_bits, _) in &d.executed {
            if node == self.primary && flags_bits & flags::WRITE != 0 {
                // Provisional: the stream end once this drain's output is
                // witnessed (set below).
                self.woff.insert((node, *client), u64::MAX);
            }
        }
        let end_before = self.primary_end();
        self.flush(node, done_ns);
        if node == self.primary {
            let end = self.write_end(end_before);
            for v in self.woff.values_mut() {
                if *v == u64::MAX {
                    *v = end;
                }
            }
        }
        for client in d.closes {
            self.engine_closes(node, client, done_ns);
        }
        for (client, host, port) in d.connects {
            self.connect_primary(node, client, &host, port);
        }
        if !self.ready[node as usize].is_empty() {
            self.schedule(done_ns, Ev::NodeTurn { node });
        }
        if self.nodes[node as usize].up && was_primary != is_primary {
            self.role_changed(node, is_primary);
        }
        self.arm_timer(node);
    }

    /// A replica changes its data only as its primary's stream says: a key
    /// it removed itself, or a write a client got through, is invented.
    pub(super) fn note_replica_writes(&mut self, node: u32, d: &Drained) {
        for r in &d.removed {
            self.history.invented.push((
                node,
                self.now_ns,
                format!("removed a key by itself: {r}"),
            ));
        }
        for (client, flags_bits, name) in &d.executed {
            let from_link = matches!(self.node_conns[node as usize].get(client), Some((_, false)));
            let admin = self.admin[node as usize] == Some(*client);
            if flags_bits & flags::WRITE != 0 && !name.is_empty() && !from_link && !admin {
                self.history.invented.push((
                    node,
                    self.now_ns,
                    format!("ran {name} for a client of its own"),
                ));
            }
        }
    }

    /// Writes every output `node`'s engine holds into its pipes, leaving
    /// at `send_ns`.
    pub(super) fn flush(&mut self, node: u32, send_ns: u64) {
        let mut budget = 1_000_000usize;
        while let Some(id) = self.nodes[node as usize].engine.poll_transmit() {
            budget -= 1;
            assert!(budget > 0, "poll_transmit never ends");
            let engine = &mut self.nodes[node as usize].engine;
            let bytes = engine.pending_output(id).to_vec();
            engine.consume_output(id, bytes.len());
            if bytes.is_empty() {
                continue;
            }
            if node == self.witness_node && self.witness.as_ref().is_some_and(|(w, _)| *w == id) {
                self.witness_read(&bytes);
                continue;
            }
            let Some(&(conn, acceptor)) = self.node_conns[node as usize].get(&id) else {
                continue; // the admin connection, or a connection gone
            };
            if let Peer::Client(client) = self.conns[conn as usize].peer {
                // WAIT's reply is produced now, from the acks handed over
                // so far.
                if let Some(op) = self.clients[client as usize].outstanding {
                    let op = &mut self.history.ops[op];
                    if op.args[0] == b"WAIT" && op.wait_answered_ns == 0 {
                        op.wait_answered_ns = self.now_ns;
                    }
                }
            }
            self.write(conn, acceptor, send_ns, &bytes);
        }
    }

    /// The witness reads the primary's bytes.
    pub(super) fn witness_read(&mut self, bytes: &[u8]) {
        let Some((id, tap)) = &mut self.witness else {
            return;
        };
        let id = *id;
        tap.feed(bytes);
        let streams = &mut self.history.witness;
        let parent_end = streams
            .last()
            .and_then(|w| w.parent)
            .map(|p| streams[p].end());
        let w = streams.last_mut().expect("witness stream");
        match &tap.answer {
            Some(Answer::Full { replid, offset }) if w.replid.is_empty() => {
                w.replid = replid.clone();
                w.base = *offset;
                // Asked to continue a history (a promotion, an aborted
                // hand-over), the primary holds it up to its offset only
                // (a FORCE hand-over to a target that was behind): the
                // child takes the parent over there. Else a new history.
                if parent_end.is_none_or(|end| *offset > end) {
                    w.parent = None;
                }
            }
            Some(Answer::Continue {
                replid: Some(replid),
            }) if w.replid.is_empty() => {
                w.replid = replid.clone();
                w.base = tap.stream_base.unwrap_or(0);
            }
            _ => {}
        }
        let have = w.bytes.len();
        if tap.stream.len() > have {
            w.bytes.extend_from_slice(&tap.stream[have..]);
        }
        if tap.rdb_done && !self.witness_acked {
            // Online (a diskless RDB waits for an ack), acking nothing.
            self.witness_acked = true;
            let node = self.witness_node as usize;
            let now = self.nodes[node].now(self.now_ns);
            let ack = encode_request(&[b"REPLCONF", b"ACK", b"0"]);
            self.nodes[node].engine.handle_input(now, id, &ack);
        }
    }
}
