//! The server's side of the world: arrivals, the CPU turns that hand
//! bytes to the engine, and the drain of the engine's events that charges
//! their virtual cost.

use seedkv_engine::{ClientId, Event, LogLevel};

use super::{conn_slot, SimEvent, World};
use crate::history::{Execution, KeyRemoval, Received, ScriptRun};
use crate::net::SERVER_READ_BYTES_MAX;

impl World {
    pub(super) fn up_arrive(&mut self, slot: u32) {
        let now = self.now_ns;
        let cs = &mut self.conns[slot as usize];
        cs.up.advance(now);
        if !cs.server_open {
            return;
        }
        if !cs.up.readable().is_empty() {
            if !cs.in_ready {
                cs.in_ready = true;
                cs.ready_since_ns = now;
                self.ready.push_back(slot);
            }
            self.cpu_start();
        } else if cs.up.at_eof(now) && !cs.in_ready {
            self.server_disconnect(slot);
        }
    }

    pub(super) fn server_disconnect(&mut self, slot: u32) {
        let cs = &mut self.conns[slot as usize];
        if !cs.server_open {
            return;
        }
        cs.server_open = false;
        let id = cs.id;
        self.record_server_disconnect(id);
        self.engine.disconnect(self.now(), id);
        self.drain_engine(None);
    }

    /// For the pub/sub checker: from here on `id` has no subscriptions.
    pub(super) fn record_server_disconnect(&mut self, id: ClientId) {
        let at = self.history.executions.len();
        self.history.pubsub.server_disconnects.push((id.0, at));
    }

    /// Starts a CPU turn if the CPU is free and has work.
    pub(super) fn cpu_start(&mut self) {
        if self.cpu_busy || self.server_dead() {
            return;
        }
        let now = self.now();
        if std::mem::take(&mut self.snapshot_slice_last) {
            self.snapshot_reads_left = self.ready.len();
        }
        let read_first =
            (self.slice_turn_last || self.snapshot_reads_left > 0) && !self.ready.is_empty();
        self.slice_turn_last = false;
        if self.cron_due && !read_first {
            self.cron_due = false;
            self.snapshot_reads_left = 0;
            self.slice_turn_last = self.engine.script_running();
            self.snapshot_slice_last = self.engine.snapshot_read_running();
            self.engine.handle_timeout(now);
            // Blocked commands that time out execute in this turn.
            let cost_ns = self.drain_engine(Some(self.now_ns));
            self.begin_turn(self.cost.cron_overhead_ns + cost_ns, None);
            return;
        }
        // The end of an event-loop turn (Redis's beforeSleep): the
        // connections ready when the turn began were served, or none is.
        if self.engine.wants_before_sleep() && (self.loop_turns_left == 0 || self.ready.is_empty())
        {
            self.loop_turns_left = 0;
            self.stats.before_sleeps_count += 1;
            self.engine.before_sleep(now);
            let cost_ns = self.drain_engine(Some(self.now_ns));
            // Progress, not a timer: it releases the turn's replies.
            self.begin_turn_as(cost_ns, None, false);
            return;
        }
        if self.loop_turns_left == 0 {
            self.loop_turns_left = self.ready.len();
        }
        while let Some(slot) = self.ready.pop_front() {
            let cs = &mut self.conns[slot as usize];
            cs.in_ready = false;
            if !cs.server_open {
                continue;
            }
            let readable = cs.up.readable();
            let n = readable.len().min(SERVER_READ_BYTES_MAX);
            if n == 0 {
                continue;
            }
            let executions_before = self.history.executions.len();
            let received_before = self.history.received.len();
            self.loop_turns_left = self.loop_turns_left.saturating_sub(1);
            self.snapshot_reads_left = self.snapshot_reads_left.saturating_sub(1);
            if self
                .history
                .reply_slices
                .last()
                .is_some_and(|s| s.end_ns >= cs.ready_since_ns)
            {
                // A slice ran while this input waited: how many, the
                // snapshot-slices checker counts.
                self.history.slice_waits.push(crate::history::SliceWait {
                    conn: cs.id.0,
                    ready_ns: cs.ready_since_ns,
                    read_ns: self.now_ns,
                });
            }
            self.engine.handle_input(now, cs.id, &readable[..n]);
            cs.up.consume(n);
            cs.up_read_bytes += n as u64;
            while let Some(&(end, seq_in_conn)) = cs.up_watched.front() {
                if end > cs.up_read_bytes {
                    break;
                }
                cs.up_watched.pop_front();
                self.history.received.push(Received {
                    conn: cs.id.0,
                    seq_in_conn,
                    at_ns: self.now_ns,
                    executions_before,
                    executions_after: usize::MAX,
                });
            }
            let received_in_turn = received_before..self.history.received.len();
            if !cs.up.readable().is_empty() {
                cs.in_ready = true;
                cs.ready_since_ns = self.now_ns;
                self.ready.push_back(slot);
            }
            let mut cost_ns = self.cost.read_ns(n as u64);
            let executed_before = self.history.executions.len();
            cost_ns += self.drain_engine(Some(self.now_ns + cost_ns));
            let executions_after = self.history.executions.len();
            for r in &mut self.history.received[received_in_turn] {
                r.executions_after = executions_after;
            }
            if executions_after == executed_before && cost_ns > 0 {
                // Reading input it could not run yet (a partial request, or
                // one a script or pause holds) is still the command
                // thread's time: a timeout served late behind many such
                // reads waited for a busy CPU, not an idle one.
                self.history
                    .thread_busy_spans
                    .push((self.now_ns, self.now_ns + cost_ns));
            }
            if self.trace.printing() {
                let executed = self.history.executions.len() - executed_before;
                self.trace.line(
                    self.now_ns,
                    format_args!(
                        "  server reads {n} bytes from conn {}, executes {executed} command(s), CPU busy {cost_ns} ns",
                        slot + 1
                    ),
                );
            }
            self.pending_flush.push(slot);
            self.begin_turn(cost_ns, Some(slot));
            return;
        }
        if read_first && self.cron_due {
            // No ready connection had bytes after all: the slice is next
            // (`slice_turn_last` is now false, so this recurses once).
            self.cpu_start();
        }
    }

    pub(super) fn begin_turn(&mut self, cost_ns: u64, conn: Option<u32>) {
        self.begin_turn_as(cost_ns, conn, conn.is_none());
    }

    /// [`World::begin_turn`]; `cron`: a timer's turn (no sign of progress).
    pub(super) fn begin_turn_as(&mut self, cost_ns: u64, conn: Option<u32>, cron: bool) {
        debug_assert!(!self.cpu_busy);
        self.cpu_busy = true;
        self.turn_conn = conn;
        self.stats.cpu_busy_ns += cost_ns;
        self.schedule(self.now_ns + cost_ns.max(1), SimEvent::CpuDone { cron });
    }

    pub(super) fn cpu_done(&mut self) {
        debug_assert!(self.cpu_busy);
        self.cpu_busy = false;
        self.release();
        if let Some(slot) = self.turn_conn.take() {
            let cs = &self.conns[slot as usize];
            if cs.server_open && !cs.in_ready && cs.up.at_eof(self.now_ns) {
                self.server_disconnect(slot);
                self.release();
            }
        }
        self.cpu_start();
    }

    /// Drains the engine after an input (the drive/drain contract): records
    /// executions starting at `turn_start_ns` and returns the CPU time they
    /// cost. `None`: outside a turn, the caller does not charge the time
    /// (executions are placed at now; thread-busy spans are not recorded).
    pub(super) fn drain_engine(&mut self, turn_start_ns: Option<u64>) -> u64 {
        self.invariants.after_input(&self.engine);
        let mut cost_ns = 0;
        let mut stall_ns: u64 = 0;
        let unix_ms = self.now().unix_ms();
        while let Some(event) = self.engine.poll_event() {
            match event {
                Event::ScriptSlice {
                    client,
                    request_seq,
                    work_units,
                } => {
                    // The CPU ran the slice; the EVAL's record, when the
                    // script ends, is charged only what is left. The slice
                    // is no execution of its own, so its span is recorded
                    // as the command thread's: a request that waited
                    // behind it waited for a busy CPU, not an idle one.
                    let ns = self.cost.command_ns(work_units, 0);
                    if turn_start_ns.is_some() {
                        let start_ns = turn_start_ns.unwrap_or(self.now_ns) + cost_ns;
                        self.history
                            .thread_busy_spans
                            .push((start_ns, start_ns + ns));
                    }
                    cost_ns += ns;
                    let key = (client.0, request_seq);
                    let before = match self.script_slices_charged {
                        Some((c, r, units)) if (c, r) == key => units,
                        _ => {
                            // The script's first slice: it started in this
                            // turn.
                            let threshold_ms = self.engine.config().busy_reply_threshold_ms;
                            self.history.script_runs.push(ScriptRun {
                                conn: key.0,
                                seq_in_conn: key.1,
                                started_ns: self.now_ns,
                                executions_from: self.history.executions.len(),
                                eval_execution: None,
                                threshold_ms,
                            });
                            0
                        }
                    };
                    self.script_slices_charged = Some((key.0, key.1, before + work_units));
                }
                Event::ReplySlice {
                    client,
                    request_seq,
                    work_units,
                    reply_bytes,
                    elements,
                    last,
                } => {
                    // A slice of a snapshot read: the command executed
                    // (and was recorded) when the read opened; the CPU
                    // now produces part of its reply. Its span is the
                    // command thread's, as a script slice's.
                    let ns = self.cost.command_ns(work_units, reply_bytes);
                    let start_ns = turn_start_ns.unwrap_or(self.now_ns) + cost_ns;
                    if turn_start_ns.is_some() {
                        self.history
                            .thread_busy_spans
                            .push((start_ns, start_ns + ns));
                    }
                    cost_ns += ns;
                    self.trace
                        .word(0x511ce ^ client.0 ^ request_seq << 20 ^ work_units << 40);
                    self.history.reply_slices.push(crate::history::ReplySlice {
                        conn: client.0,
                        seq_in_conn: request_seq,
                        start_ns,
                        end_ns: start_ns + ns,
                        work_units,
                        elements,
                        last,
                    });
                }
                Event::Executed(e) => {
                    let charged_units = match self.script_slices_charged {
                        Some((c, r, units)) if (c, r) == (e.client.0, e.request_seq) => {
                            self.script_slices_charged = None;
                            units
                        }
                        _ => 0,
                    };
                    let units_left = e.work_units.saturating_sub(charged_units);
                    let ns = self.cost.command_ns(units_left, e.reply_bytes as u64);
                    if charged_units > 0 {
                        let index = self.history.executions.len();
                        if let Some(run) = self.history.script_runs.last_mut() {
                            debug_assert_eq!(
                                (run.conn, run.seq_in_conn),
                                (e.client.0, e.request_seq)
                            );
                            run.eval_execution = Some(index);
                        }
                    }
                    let start_ns = turn_start_ns.unwrap_or(self.now_ns) + cost_ns;
                    cost_ns += ns;
                    self.trace
                        .word(e.client.0 ^ e.request_seq << 20 ^ e.work_units << 40);
                    self.history.executions.push(Execution {
                        conn: e.client.0,
                        seq_in_conn: e.request_seq,
                        start_ns,
                        end_ns: start_ns + ns,
                        unix_ms,
                        name: e.name,
                        flags: e.flags,
                        work_units: e.work_units,
                        in_exec: e.in_exec,
                        sizes: e.sizes,
                    });
                }
                Event::KeyRemoved(r) => {
                    self.history.key_removals.push(KeyRemoval {
                        executions_before: self.history.executions.len(),
                        db: r.db,
                        key: r.key,
                        cause: r.cause,
                    });
                }
                Event::Free(garbage) => {
                    let ns = self.cost.free_ns(garbage.work_units());
                    self.bg_busy_until_ns = self.bg_busy_until_ns.max(self.now_ns) + ns;
                    self.stats.bg_busy_ns += ns;
                    drop(garbage);
                }
                Event::Close { client, reason } => {
                    self.stats.server_closes_count += 1;
                    let slot = conn_slot(client.0);
                    self.trace.word(0xc105e ^ client.0);
                    self.trace.line(
                        self.now_ns,
                        format_args!("  server closes {}: {:?}", client.0, reason),
                    );
                    if reason.flush_first() {
                        self.pending_flush.push(slot as u32);
                    }
                    self.pending_close.push(slot as u32);
                }
                // DEBUG SLEEP: the CPU serves nobody for that long, as
                // Redis's does. Charged after this input's commands (below).
                Event::Stall { duration_ns } => stall_ns = stall_ns.saturating_add(duration_ns),
                Event::Shutdown(_) => {
                    unreachable!("the simulated server's table has no SHUTDOWN")
                }
                Event::Log { level, text } => {
                    if let (LogLevel::Warning, Some(host)) = (level, self.persist.as_mut()) {
                        host.last_warning = text;
                    }
                }
                Event::Storage(request) => {
                    let start_ns = turn_start_ns.unwrap_or(self.now_ns) + cost_ns;
                    let ns = self.storage_request(request);
                    // Recorded when the caller charges it as a turn.
                    if ns > 0 && turn_start_ns.is_some() {
                        self.history
                            .thread_busy_spans
                            .push((start_ns, start_ns + ns));
                    }
                    cost_ns += ns;
                }
                Event::Fork(fork) => self.fork(fork),
                // The single-node world has no primary to connect to: the
                // link stays down (the workloads never send REPLICAOF).
                Event::ConnectPrimary { .. } => {}
                Event::SyncLoaded { work_units, .. } => {
                    cost_ns += self.cost.command_ns(work_units, 0)
                }
                Event::Exit { status } => {
                    let host = self
                        .persist
                        .as_mut()
                        .expect("only a server with storage exits");
                    host.exit_pending.get_or_insert(status);
                }
            }
        }
        if let Some(host) = self.persist.as_mut() {
            host.close_prefixes(self.history.executions.len());
            if let Some(status) = host.exit_pending.take() {
                self.server_exited(status);
                return cost_ns;
            }
        }
        while let Some(id) = self.engine.poll_transmit() {
            self.pending_flush.push(conn_slot(id.0) as u32);
        }
        if stall_ns > 0 && turn_start_ns.is_some() {
            let start_ns = turn_start_ns.unwrap_or(self.now_ns) + cost_ns;
            self.history
                .thread_busy_spans
                .push((start_ns, start_ns + stall_ns));
        }
        cost_ns += stall_ns;
        if turn_start_ns.is_some() && cost_ns > 0 {
            cost_ns += self.cost.write_overhead_ns;
        }
        self.reschedule_cron();
        cost_ns
    }

    pub(super) fn reschedule_cron(&mut self) {
        let deadline = self.engine.poll_timeout();
        if self.cron_scheduled_ns != Some(deadline) && !self.cron_due {
            self.cron_scheduled_ns = Some(deadline);
            let at = deadline.max(self.now_ns);
            self.schedule(
                at,
                SimEvent::Cron {
                    deadline_ns: deadline,
                },
            );
        }
    }
}
