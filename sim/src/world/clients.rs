//! The clients' side of the world: sending a batch of requests, opening
//! and closing connections, reading replies, thinking and reconnecting.

use std::collections::VecDeque;

use rand::Rng;
use seedkv_engine::resp::Frame;
use seedkv_engine::ConnectInfo;

use super::{conn_slot, frame_summary, ConnState, SimEvent, World, CONNS_MAX};
use crate::check::blocking::blocking_timeout;
use crate::client::{encode_request_into, RECONNECT_NS};
use crate::history::{CacheServe, Conn, Op};
use crate::net::{Pipe, CLIENT_PIPE_BYTES_MAX};

impl World {
    pub(super) fn client_wake(&mut self, client: u32) {
        let ci = client as usize;
        debug_assert!(self.clients[ci].outstanding.is_empty());
        if self.clients[ci].ops_left == 0 || self.clients[ci].workload.finished() {
            self.mark_done(client);
            return;
        }
        if self.idle_until_ns > self.now_ns {
            let gen = self.clients[ci].wake_gen;
            self.schedule(self.idle_until_ns, SimEvent::ClientWake { client, gen });
            return;
        }
        let conn = match self.clients[ci].conn {
            Some(c) => c,
            None => self.connect(client),
        };
        let slot = conn_slot(conn);
        // Build and record the batch.
        let mut batch = std::mem::take(&mut self.clients[ci].batch);
        batch.clear();
        {
            let c = &mut self.clients[ci];
            c.workload.next_batch(&mut c.rng, &mut batch);
            // Reads the client answered from its cache, before this batch.
            let mut served = Vec::new();
            c.workload.take_cache_serves(&mut served);
            for (key, value) in served {
                self.history.tracking.serves.push(CacheServe {
                    conn,
                    client,
                    at_ns: self.now_ns,
                    seq_next: c.seq_next,
                    key,
                    value,
                });
            }
        }
        assert!(!batch.is_empty() && batch.len() <= crate::workload::BATCH_REQUESTS_MAX);
        // The batch is encoded straight into the connection's pipe (staged,
        // unseen by the server until written below).
        let staged_from = self.conns[slot].up.stage().len();
        let workload = self.clients[ci].workload.kind().name();
        // A blocked request legitimately waits for its timeout: a reset
        // drawn for this batch may then land while the client is blocked.
        let mut blocking_wait_ns = 0;
        for request in batch.drain(..) {
            let staged = self.conns[slot].up.stage();
            encode_request_into(staged, &request);
            let staged_bytes = staged.len() - staged_from;
            let c = &mut self.clients[ci];
            let seq_in_conn = c.seq_next;
            c.seq_next += 1;
            if let Some(timeout) = blocking_timeout(&request) {
                blocking_wait_ns = blocking_wait_ns.max(timeout.wait_ns_max().unwrap_or(0));
                let cs = &mut self.conns[slot];
                let end = cs.up_sent_bytes + staged_bytes as u64;
                cs.up_watched.push_back((end, seq_in_conn));
            }
            // A request CLIENT REPLY silenced (no frames) awaits nothing.
            let frames = c.workload.reply_frames(&request);
            if frames > 0 {
                c.outstanding.push_back(self.history.ops.len());
                c.reply_frames.push_back(frames);
            }
            self.history.ops.push(Op {
                client,
                conn,
                seq_in_conn,
                args: request,
                workload,
                invoke_ns: self.now_ns,
                complete: None,
            });
        }
        self.clients[ci].batch = batch;
        // The batch ends when its last reply is in: one must come.
        assert!(
            !self.clients[ci].outstanding.is_empty(),
            "a batch whose every reply CLIENT REPLY silenced"
        );
        if self.trace.printing() {
            let c = &self.clients[ci];
            let first = c.outstanding.front().map_or(String::new(), |&i| {
                crate::check::pipeline::render_args(&self.history.ops[i].args)
            });
            self.trace.line(
                self.now_ns,
                format_args!(
                    "  client {client} ({workload}) conn {conn} sends {} request(s), {} bytes: {first}{}",
                    c.outstanding.len(),
                    self.conns[slot].up.stage().len() - staged_from,
                    if c.outstanding.len() > 1 { " ..." } else { "" }
                ),
            );
        }
        let sent = self.clients[ci].outstanding.len() as u64;
        self.clients[ci].ops_left = self.clients[ci].ops_left.saturating_sub(sent);
        self.ops_sent += sent;
        self.maybe_schedule_crash();
        let now = self.now_ns;
        let cs = &mut self.conns[slot];
        let staged = cs.up.stage();
        let batch_bytes = staged.len() - staged_from;
        self.trace.bytes(&staged[staged_from..]);
        self.stats.bytes_up += batch_bytes as u64;
        assert!(cs.up.unread_bytes() <= CLIENT_PIPE_BYTES_MAX);
        cs.up_sent_bytes += batch_bytes as u64;
        let queue = &mut self.queue;
        let pending = &mut self.pending_non_cron;
        let last = cs
            .up
            .write_staged(now, batch_bytes, &self.knobs.net, &mut self.net_rng, |at| {
                *pending += 1;
                queue.push(at, SimEvent::UpArrive { slot: slot as u32 });
            });
        self.maybe_faults_after_send(slot, last + blocking_wait_ns);
    }

    /// Opens a new connection for `client`; returns its engine id.
    fn connect(&mut self, client: u32) -> u64 {
        assert!(self.conns.len() < CONNS_MAX, "too many connections");
        let info = ConnectInfo {
            addr: format!(
                "10.0.0.{}:{}",
                client % 250 + 1,
                40000 + self.conns.len() % 20000
            ),
            laddr: "10.0.0.254:6379".into(),
            fd: 8 + self.conns.len() as i64,
        };
        let id = self.engine.connect(self.now(), info);
        assert_eq!(
            conn_slot(id.0),
            self.conns.len(),
            "engine client ids are dense from 1"
        );
        self.conns.push(ConnState {
            client,
            id,
            up: Pipe::default(),
            down: Pipe::default(),
            server_open: true,
            client_open: true,
            in_ready: false,
            write_blocked: false,
            up_sent_bytes: 0,
            up_read_bytes: 0,
            up_watched: VecDeque::new(),
            ready_since_ns: 0,
        });
        self.history.conns.push(Conn {
            conn: id.0,
            client,
            opened_ns: self.now_ns,
            closed: None,
        });
        let c = &mut self.clients[client as usize];
        c.conn = Some(id.0);
        c.seq_next = 0;
        c.workload.on_connect();
        self.drain_engine(None);
        if !self.cpu_busy {
            self.release();
        }
        id.0
    }

    pub(super) fn down_arrive(&mut self, slot: u32) {
        let cs = &mut self.conns[slot as usize];
        cs.down.advance(self.now_ns);
        if !cs.client_open {
            return;
        }
        let client = cs.client;
        let c = &mut self.clients[client as usize];
        match c.slow_reader {
            None => self.client_read(client, usize::MAX),
            Some(s) => {
                if !c.read_scheduled {
                    c.read_scheduled = true;
                    let gen = c.wake_gen;
                    self.schedule(
                        self.now_ns + s.interval_ns,
                        SimEvent::ClientRead { client, gen },
                    );
                }
            }
        }
    }

    /// The client reads up to `max` arrived bytes and handles every reply
    /// they complete.
    pub(super) fn client_read(&mut self, client: u32, max: usize) {
        let ci = client as usize;
        let Some(conn) = self.clients[ci].conn else {
            return;
        };
        let slot = conn_slot(conn);
        let cs = &mut self.conns[slot];
        let readable = cs.down.readable();
        let n = readable.len().min(max);
        let c = &mut self.clients[ci];
        c.decoder.feed(&readable[..n]);
        cs.down.consume(n);
        let more = !cs.down.readable().is_empty() || cs.down.in_flight();
        let eof = cs.down.at_eof(self.now_ns);
        if n > 0 && cs.write_blocked && cs.server_open {
            if self.cpu_busy {
                self.pending_flush.push(slot as u32);
            } else {
                self.flush(slot as u32);
            }
        }
        let had_outstanding = !self.clients[ci].outstanding.is_empty();
        // Replies, first in first out.
        loop {
            let c = &mut self.clients[ci];
            match c.decoder.next_frame() {
                Ok(Some(frame)) => {
                    self.trace.word(0xf4a3e);
                    // Pub/sub: messages answer no request; a reply of
                    // several frames (subscribe confirmations) is gathered.
                    let frame = match self.pubsub_frame(client, conn, frame) {
                        Some(frame) => frame,
                        None => continue,
                    };
                    let c = &mut self.clients[ci];
                    let Some(op_index) = c.outstanding.pop_front() else {
                        if matches!(frame, Frame::Push(_)) {
                            continue;
                        }
                        let reason = format!("client: unexpected reply {}", frame_summary(&frame));
                        self.client_close_conn(client, reason, true);
                        return;
                    };
                    let op = &mut self.history.ops[op_index];
                    c.workload.on_reply(&op.args, Some(&frame));
                    if self.trace.printing() {
                        self.trace.line(
                            self.now_ns,
                            format_args!(
                                "  client {client} conn {} #{} {} -> {}",
                                op.conn,
                                op.seq_in_conn,
                                crate::check::pipeline::render_args(&op.args),
                                frame_summary(&frame)
                            ),
                        );
                    }
                    op.complete = Some((self.now_ns, frame));
                }
                Ok(None) => break,
                Err(e) => {
                    let reason = format!("client: invalid reply stream: {e}");
                    self.client_close_conn(client, reason, true);
                    return;
                }
            }
        }
        if eof {
            self.client_close_conn(client, "server closed".into(), false);
            return;
        }
        let c = &mut self.clients[ci];
        if let Some(s) = c.slow_reader {
            if more && !c.read_scheduled {
                c.read_scheduled = true;
                let gen = c.wake_gen;
                self.schedule(
                    self.now_ns + s.interval_ns,
                    SimEvent::ClientRead { client, gen },
                );
            }
        }
        if had_outstanding && self.clients[ci].outstanding.is_empty() {
            self.batch_done(client);
        }
    }

    pub(super) fn mark_done(&mut self, client: u32) {
        let c = &mut self.clients[client as usize];
        if !c.done {
            c.done = true;
            self.clients_done_count += 1;
        }
    }

    /// Every reply of the batch is in: maybe disconnect, then think.
    fn batch_done(&mut self, client: u32) {
        let ci = client as usize;
        if self.faults_active
            && self.fault_rng.gen_range(0..1000) < self.knobs.faults.disconnect_per_mille
        {
            self.stats.disconnects_count += 1;
            self.stats.faults_count += 1;
            self.client_close_conn(client, "client closed".into(), true);
            return;
        }
        if self.clients[ci].ops_left == 0 || self.clients[ci].workload.finished() {
            self.mark_done(client);
            return;
        }
        let c = &mut self.clients[ci];
        let think = c.workload.think_ns(&mut c.rng);
        c.wake_gen += 1;
        let gen = c.wake_gen;
        // A slow reader's scheduled read went stale with `wake_gen`: read
        // on, for pub/sub messages keep arriving between batches.
        if let (true, Some(s)) = (c.read_scheduled, c.slow_reader) {
            self.schedule(
                self.now_ns + s.interval_ns,
                SimEvent::ClientRead { client, gen },
            );
        }
        self.schedule(self.now_ns + think, SimEvent::ClientWake { client, gen });
    }

    /// The client stops using its connection (after EOF, a protocol
    /// violation, or a deliberate close) and reconnects later. When
    /// `send_fin`, the server will see the stream end.
    fn client_close_conn(&mut self, client: u32, reason: String, send_fin: bool) {
        let ci = client as usize;
        let Some(conn) = self.clients[ci].conn else {
            return;
        };
        let slot = conn_slot(conn);
        self.trace.line(
            self.now_ns,
            format_args!("  conn {conn} closed by client: {reason}"),
        );
        self.history.conns[slot]
            .closed
            .get_or_insert((self.now_ns, reason));
        let cs = &mut self.conns[slot];
        cs.client_open = false;
        if send_fin && cs.server_open {
            let at = cs.up.write_fin(self.now_ns);
            self.schedule(at, SimEvent::UpArrive { slot: slot as u32 });
        }
        self.forget_outstanding(client);
        self.schedule_reconnect(client);
    }

    pub(super) fn forget_outstanding(&mut self, client: u32) {
        let c = &mut self.clients[client as usize];
        while let Some(op_index) = c.outstanding.pop_front() {
            c.workload.on_reply(&self.history.ops[op_index].args, None);
        }
        c.drop_conn();
    }

    pub(super) fn schedule_reconnect(&mut self, client: u32) {
        if self.clients[client as usize].ops_left == 0 {
            self.mark_done(client);
            return;
        }
        let gen = self.clients[client as usize].wake_gen;
        self.schedule(
            self.now_ns + RECONNECT_NS,
            SimEvent::ClientWake { client, gen },
        );
    }
}
