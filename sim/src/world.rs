//! The world: the engine on one virtual CPU, the network, the clients and
//! the fault injector, advanced by one event queue in virtual time.
//!
//! # The server's CPU
//!
//! Bytes that arrive while the CPU is busy wait. When it is free, the CPU
//! takes the next readable connection (first come, first served, at most
//! [`SERVER_READ_BYTES_MAX`] bytes: one `read()` per event-loop turn, as in
//! Redis), hands the bytes to the engine, and stays busy for the cost of
//! every command they completed (see `cost.rs`). The replies are written to
//! the network when that time is over, like Redis writing in `beforeSleep`.
//! Cron ticks (`handle_timeout`) occupy the CPU too. Values handed out to be
//! freed in the background occupy a second CPU, which only keeps time.
//!
//! The engine itself runs instantly at the start of each turn; virtual time
//! is only ever charged by the cost model, so a run is a pure function of
//! its seed and knobs, whatever machine it runs on.

use std::collections::VecDeque;

use rand::Rng;
use seedkv_engine::resp::Frame;
use seedkv_engine::{ClientId, Config, ConnectInfo, Engine, Event, Now, PlantedBug};

use crate::check::blocking::blocking_timeout;
use crate::client::{encode_request_into, SimClient, SlowReader, RECONNECT_NS};
use crate::cost::CostModel;
use crate::history::{Conn, Delivery, Execution, History, Op, Received};
use crate::knobs::{Knobs, CLOCK_JUMP_MS_MAX, IDLE_MS_MAX};
use crate::net::{Pipe, CLIENT_PIPE_BYTES_MAX, SERVER_READ_BYTES_MAX};
use crate::queue::EventQueue;
use crate::rng::{choice_rng, stream, stream_rng, stream_seed, ChoiceRng};
use crate::trace::TraceHash;

/// The wall clock at virtual time zero: 2023-11-14T22:13:20Z, in µs.
pub const UNIX_ORIGIN_US: u64 = 1_700_000_000_000_000;
/// How long after the last sign of progress a run with unanswered requests
/// is ended, and the bound the liveness checker holds answers to.
pub const LIVENESS_BOUND_NS: u64 = 30_000_000_000;
/// Virtual time a run may last at most.
pub const RUN_VIRTUAL_NS_MAX: u64 = 24 * 3600 * 1_000_000_000;
/// Events a run may process at most.
pub const RUN_EVENTS_MAX: u64 = 200_000_000;
/// Connections a run may open at most (each reconnect opens one).
pub const CONNS_MAX: usize = 1_000_000;

/// What the world schedules.
#[derive(Clone, Copy, Debug)]
enum SimEvent {
    /// A client's think time is over (stale if `gen` moved on).
    ClientWake { client: u32, gen: u64 },
    /// A slow reader's next read.
    ClientRead { client: u32, gen: u64 },
    /// Client→server bytes arrived at the server. (`slot` is the engine's
    /// client id minus one.)
    UpArrive { slot: u32 },
    /// Server→client bytes arrived at the client.
    DownArrive { slot: u32 },
    /// The server's CPU finished its turn (`cron`: a timer turn).
    CpuDone { cron: bool },
    /// The engine's timer deadline.
    Cron { deadline_ns: u64 },
    /// A connection reset (both directions lost at once).
    Reset { slot: u32 },
}

/// A readable name for an event tag (as logged by the trace).
pub fn describe_tag(tag: u64) -> String {
    let id = (tag >> 8) & 0xff_ffff;
    match tag & 0xff {
        1 => format!("ClientWake {{ client: {id} }}"),
        2 => format!("ClientRead {{ client: {id} }}"),
        3 => format!("UpArrive {{ slot: {id} }}"),
        4 => format!("DownArrive {{ slot: {id} }}"),
        5 => "CpuDone".into(),
        7 => format!("Reset {{ slot: {id} }}"),
        _ => "Cron".into(),
    }
}

impl SimEvent {
    /// Timer events: they happen forever, so they are no sign of progress.
    fn is_timer(self) -> bool {
        matches!(
            self,
            SimEvent::Cron { .. } | SimEvent::CpuDone { cron: true }
        )
    }

    fn tag(self) -> u64 {
        match self {
            SimEvent::ClientWake { client, gen } => 1 | (client as u64) << 8 | gen << 32,
            SimEvent::ClientRead { client, gen } => 2 | (client as u64) << 8 | gen << 32,
            SimEvent::UpArrive { slot } => 3 | (slot as u64) << 8,
            SimEvent::DownArrive { slot } => 4 | (slot as u64) << 8,
            SimEvent::CpuDone { cron } => 5 | (cron as u64) << 8,
            SimEvent::Cron { deadline_ns } => 6 | deadline_ns << 8,
            SimEvent::Reset { slot } => 7 | (slot as u64) << 8,
        }
    }
}

/// The server's view of one connection, plus the two pipes.
struct ConnState {
    client: u32,
    id: ClientId,
    up: Pipe,
    down: Pipe,
    /// The engine still knows this connection.
    server_open: bool,
    /// The client still uses this connection.
    client_open: bool,
    /// Queued in `ready` for a read.
    in_ready: bool,
    /// The engine holds output that did not fit the socket buffer.
    write_blocked: bool,
    /// Bytes the client wrote, and bytes handed to the engine, on this
    /// connection: where each request ends in the stream.
    up_sent_bytes: u64,
    up_read_bytes: u64,
    /// Requests that may block, not yet wholly handed to the engine: (end
    /// offset in the stream, index on the connection). Their hand-over is
    /// recorded in `History::received` for the blocking checker.
    up_watched: VecDeque<(u64, u64)>,
}

/// Counters for the summary.
#[derive(Clone, Debug, Default)]
pub struct WorldStats {
    pub events_count: u64,
    pub faults_count: u64,
    pub resets_count: u64,
    pub disconnects_count: u64,
    pub clock_jumps_count: u64,
    pub idles_count: u64,
    pub server_closes_count: u64,
    pub bytes_up: u64,
    pub bytes_down: u64,
    pub cpu_busy_ns: u64,
    pub bg_busy_ns: u64,
    /// The run hit a hard bound (events or virtual time) before finishing.
    pub bound_hit: bool,
}

pub struct World {
    now_ns: u64,
    queue: EventQueue<SimEvent>,
    /// Events other than timer events (cron ticks and their CPU turns)
    /// waiting in the queue.
    pending_non_cron: u64,
    last_progress_ns: u64,

    engine: Engine,
    cost: CostModel,
    cpu_busy: bool,
    /// Connections whose output to write when the CPU turn ends.
    pending_flush: Vec<u32>,
    /// Connections the engine asked to close, closed when the turn ends.
    pending_close: Vec<u32>,
    /// The connection read in the current turn.
    turn_conn: Option<u32>,
    ready: VecDeque<u32>,
    cron_scheduled_ns: Option<u64>,
    cron_due: bool,
    bg_busy_until_ns: u64,

    conns: Vec<ConnState>,
    clients: Vec<SimClient>,
    clients_done_count: usize,
    knobs: Knobs,
    net_rng: ChoiceRng,
    fault_rng: ChoiceRng,
    faults_active: bool,
    /// Requests sent so far, and the count after which faults stop.
    ops_sent: u64,
    faults_stop_after_ops: u64,
    clock_skew_us: u64,
    idle_until_ns: u64,
    /// Scratch for encoding requests.
    scratch: Vec<u8>,

    pub history: History,
    pub trace: TraceHash,
    pub stats: WorldStats,
}

impl World {
    pub fn new(
        seed: u64,
        knobs: Knobs,
        bug: Option<PlantedBug>,
        record_event_hashes: bool,
        print_trace: bool,
    ) -> World {
        let config = Config {
            seed: stream_seed(seed, stream::ENGINE, 0),
            record_executions: true,
            planted_bug: bug,
            ..Config::default()
        };
        let mut engine = Engine::new(config, Now::from_ns(0, UNIX_ORIGIN_US));
        // SLOWLOG, LATENCY and INFO commandstats then report the virtual CPU
        // time this world charges for each command (see `drain_engine`).
        let cost = CostModel::default();
        engine.set_stopwatch(Box::new(seedkv_engine::stopwatch::CostStopwatch(
            move |work_units, reply_bytes| cost.command_ns(work_units, reply_bytes),
        )));
        let clients_count = knobs.clients_count;
        let mut clients = Vec::with_capacity(clients_count as usize);
        for i in 0..clients_count {
            let mut rng = stream_rng(seed, stream::WORKLOAD, i as u64);
            let workload = knobs.workload_of(i).build(i, &mut rng);
            let ops = knobs.ops_of(i);
            let slow = slow_reader_of(seed, &knobs, i);
            clients.push(SimClient::new(i, workload, rng, ops, slow));
        }
        let faults_active = knobs.faults != crate::knobs::FaultKnobs::none();
        let faults_stop_after_ops = if faults_active {
            knobs.ops_count * knobs.faults.stop_per_mille as u64 / 1000
        } else {
            0
        };
        let mut world = World {
            now_ns: 0,
            queue: EventQueue::default(),
            pending_non_cron: 0,
            last_progress_ns: 0,
            engine,
            cost,
            cpu_busy: false,
            pending_flush: Vec::new(),
            pending_close: Vec::new(),
            turn_conn: None,
            ready: VecDeque::new(),
            cron_scheduled_ns: None,
            cron_due: false,
            bg_busy_until_ns: 0,
            conns: Vec::new(),
            clients,
            clients_done_count: 0,
            knobs,
            net_rng: choice_rng(seed, stream::NETWORK, 0),
            fault_rng: choice_rng(seed, stream::FAULTS, 0),
            faults_active,
            ops_sent: 0,
            faults_stop_after_ops,
            clock_skew_us: 0,
            idle_until_ns: 0,
            scratch: Vec::new(),
            history: History::default(),
            trace: TraceHash::new(record_event_hashes, print_trace),
            stats: WorldStats::default(),
        };
        for i in 0..clients_count {
            // Clients start staggered over the first millisecond.
            let at = world.stagger_draw(1_000_000);
            world.schedule(at, SimEvent::ClientWake { client: i, gen: 0 });
        }
        world.reschedule_cron();
        world
    }

    /// Gives client `client` another workload before the run starts: a
    /// scripted scenario (the latency report) instead of the knobs' draw.
    pub fn set_workload(&mut self, client: u32, workload: Box<dyn crate::workload::Workload>) {
        assert_eq!(
            self.stats.events_count, 0,
            "workloads are set before the run"
        );
        self.clients[client as usize].workload = workload;
    }

    pub fn knobs(&self) -> &Knobs {
        &self.knobs
    }

    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }

    fn stagger_draw(&mut self, max: u64) -> u64 {
        self.net_rng.gen_range(0..=max)
    }

    fn now(&self) -> Now {
        Now {
            mono_ns: self.now_ns,
            unix_us: UNIX_ORIGIN_US + self.now_ns / 1000 + self.clock_skew_us,
        }
    }

    fn schedule(&mut self, at_ns: u64, event: SimEvent) {
        debug_assert!(at_ns >= self.now_ns);
        if !event.is_timer() {
            self.pending_non_cron += 1;
        }
        self.queue.push(at_ns, event);
    }

    /// Runs to the end: every client finished, or nothing can happen any
    /// more but timers and the liveness bound has passed, or a hard bound.
    pub fn run(&mut self) {
        loop {
            if self.clients_done_count == self.clients.len() {
                break;
            }
            if self.pending_non_cron == 0 && self.now_ns > self.last_progress_ns + LIVENESS_BOUND_NS
            {
                break;
            }
            if self.stats.events_count >= RUN_EVENTS_MAX || self.now_ns >= RUN_VIRTUAL_NS_MAX {
                self.stats.bound_hit = true;
                break;
            }
            let Some((at, event)) = self.queue.pop() else {
                break;
            };
            assert!(at >= self.now_ns, "time went back");
            self.now_ns = at;
            if !event.is_timer() {
                self.pending_non_cron -= 1;
                self.last_progress_ns = at;
            }
            self.stats.events_count += 1;
            self.trace.begin_event(at, event.tag());
            if self.trace.printing() {
                self.trace.line(at, format_args!("{:?}", event));
            }
            self.handle(event);
            self.trace.end_event();
        }
        self.history.end_ns = self.now_ns;
        if self.faults_active {
            // Faults never stopped: judge liveness from the end only.
            self.history.faults_end_ns = self.now_ns;
        }
    }

    fn handle(&mut self, event: SimEvent) {
        match event {
            SimEvent::ClientWake { client, gen } => {
                if self.clients[client as usize].wake_gen == gen {
                    self.client_wake(client);
                }
            }
            SimEvent::ClientRead { client, gen } => {
                let c = &mut self.clients[client as usize];
                if c.wake_gen == gen && c.read_scheduled {
                    c.read_scheduled = false;
                    let max = c.slow_reader.map_or(usize::MAX, |s| s.read_bytes_max);
                    self.client_read(client, max);
                }
            }
            SimEvent::UpArrive { slot } => self.up_arrive(slot),
            SimEvent::DownArrive { slot } => self.down_arrive(slot),
            SimEvent::CpuDone { .. } => self.cpu_done(),
            SimEvent::Cron { deadline_ns } => {
                if self.cron_scheduled_ns == Some(deadline_ns) {
                    self.cron_scheduled_ns = None;
                    self.cron_due = true;
                    self.cpu_start();
                }
            }
            SimEvent::Reset { slot } => self.reset(slot, "reset"),
        }
    }

    // ---------------------------------------------------------------- clients

    fn client_wake(&mut self, client: u32) {
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
        }
        assert!(!batch.is_empty() && batch.len() <= crate::workload::BATCH_REQUESTS_MAX);
        self.scratch.clear();
        let workload = self.clients[ci].workload.kind().name();
        // A blocked request legitimately waits for its timeout: a reset
        // drawn for this batch may then land while the client is blocked.
        let mut blocking_wait_ns = 0;
        for request in batch.drain(..) {
            encode_request_into(&mut self.scratch, &request);
            let c = &mut self.clients[ci];
            let seq_in_conn = c.seq_next;
            c.seq_next += 1;
            if let Some(timeout) = blocking_timeout(&request) {
                blocking_wait_ns = blocking_wait_ns.max(timeout.wait_ns_max().unwrap_or(0));
                let cs = &mut self.conns[slot];
                let end = cs.up_sent_bytes + self.scratch.len() as u64;
                cs.up_watched.push_back((end, seq_in_conn));
            }
            c.outstanding.push_back(self.history.ops.len());
            let frames = c.workload.reply_frames(&request);
            c.reply_frames.push_back(frames);
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
                    self.scratch.len(),
                    if c.outstanding.len() > 1 { " ..." } else { "" }
                ),
            );
        }
        let sent = self.clients[ci].outstanding.len() as u64;
        self.clients[ci].ops_left = self.clients[ci].ops_left.saturating_sub(sent);
        self.ops_sent += sent;
        self.trace.bytes(&self.scratch);
        self.stats.bytes_up += self.scratch.len() as u64;
        let now = self.now_ns;
        let cs = &mut self.conns[slot];
        assert!(cs.up.unread_bytes() + self.scratch.len() <= CLIENT_PIPE_BYTES_MAX);
        cs.up_sent_bytes += self.scratch.len() as u64;
        let queue = &mut self.queue;
        let pending = &mut self.pending_non_cron;
        let last = cs.up.write(
            now,
            &self.scratch,
            &self.knobs.net,
            &mut self.net_rng,
            |at| {
                *pending += 1;
                queue.push(at, SimEvent::UpArrive { slot: slot as u32 });
            },
        );
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

    /// Fault draws made each time a batch is sent.
    fn maybe_faults_after_send(&mut self, slot: usize, arrival_last_ns: u64) {
        if !self.faults_active {
            return;
        }
        if self.ops_sent >= self.faults_stop_after_ops {
            self.faults_active = false;
            self.history.faults_end_ns = self.now_ns;
            return;
        }
        let f = self.knobs.faults.clone();
        if self.fault_rng.gen_range(0..1000) < f.reset_request_per_mille {
            // Somewhere while the request is on the wire or being read.
            let at = self
                .fault_rng
                .gen_range(self.now_ns..=arrival_last_ns.max(self.now_ns));
            self.schedule(at, SimEvent::Reset { slot: slot as u32 });
        }
        if self.fault_rng.gen_range(0..1000) < f.clock_jump_per_mille {
            let jump_ms = self.fault_rng.gen_range(1..=CLOCK_JUMP_MS_MAX);
            self.clock_skew_us += jump_ms * 1000;
            self.stats.clock_jumps_count += 1;
            self.stats.faults_count += 1;
            self.trace.word(jump_ms);
            self.trace.line(
                self.now_ns,
                format_args!("  fault: wall clock +{jump_ms} ms"),
            );
        }
        if self.fault_rng.gen_range(0..1000) < f.idle_per_mille {
            let idle_ms = self.fault_rng.gen_range(1..=IDLE_MS_MAX);
            self.idle_until_ns = self.idle_until_ns.max(self.now_ns + idle_ms * 1_000_000);
            self.stats.idles_count += 1;
            self.stats.faults_count += 1;
            self.trace
                .line(self.now_ns, format_args!("  fault: idle {idle_ms} ms"));
        }
    }

    fn down_arrive(&mut self, slot: u32) {
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
    fn client_read(&mut self, client: u32, max: usize) {
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

    /// Routes one received frame of a client that may be subscribed: a
    /// pub/sub message is recorded (`History::pubsub`) and handed to the
    /// workload; a frame that is part of a reply of several frames is kept
    /// until the last one. Returns the frame (or the gathered array of
    /// frames) that answers the oldest outstanding request, if complete.
    fn pubsub_frame(&mut self, client: u32, conn: u64, frame: Frame) -> Option<Frame> {
        let c = &mut self.clients[client as usize];
        if c.workload.takes_messages() {
            if let Some((kind, pattern, channel, payload)) = Delivery::parse(&frame) {
                let before_seq = c
                    .outstanding
                    .front()
                    .map_or(c.seq_next, |&i| self.history.ops[i].seq_in_conn);
                let delivery = Delivery {
                    conn,
                    client,
                    at_ns: self.now_ns,
                    before_seq,
                    kind,
                    pattern,
                    channel,
                    payload,
                };
                if self.trace.printing() {
                    self.trace.line(
                        self.now_ns,
                        format_args!(
                            "  client {client} conn {conn} message {}",
                            frame_summary(&frame)
                        ),
                    );
                }
                c.workload.on_message(&delivery);
                self.history.pubsub.deliveries.push(delivery);
                return None;
            }
        }
        let wanted = c.reply_frames.front().copied().unwrap_or(1);
        if wanted <= 1 {
            c.reply_frames.pop_front();
            return Some(frame);
        }
        c.reply_parts.push(frame);
        if c.reply_parts.len() < wanted {
            return None;
        }
        c.reply_frames.pop_front();
        Some(Frame::Array(std::mem::take(&mut c.reply_parts)))
    }

    fn mark_done(&mut self, client: u32) {
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

    fn forget_outstanding(&mut self, client: u32) {
        let c = &mut self.clients[client as usize];
        while let Some(op_index) = c.outstanding.pop_front() {
            c.workload.on_reply(&self.history.ops[op_index].args, None);
        }
        c.drop_conn();
    }

    fn schedule_reconnect(&mut self, client: u32) {
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

    /// Both ends lose the connection at once; whatever was in flight is lost.
    fn reset(&mut self, slot: u32, reason: &str) {
        let cs = &mut self.conns[slot as usize];
        if !cs.server_open && !cs.client_open {
            return;
        }
        self.stats.resets_count += 1;
        self.stats.faults_count += 1;
        let client = cs.client;
        let id = cs.id;
        let was_client_open = cs.client_open;
        cs.up = Pipe::default();
        cs.down = Pipe::default();
        cs.client_open = false;
        if cs.server_open {
            cs.server_open = false;
            self.record_server_disconnect(id);
            self.engine.disconnect(self.now(), id);
            self.drain_engine(None);
        }
        if was_client_open {
            self.trace
                .line(self.now_ns, format_args!("  conn {} {reason}", id.0));
            self.history.conns[slot as usize]
                .closed
                .get_or_insert((self.now_ns, reason.to_string()));
            self.forget_outstanding(client);
            self.schedule_reconnect(client);
        }
    }

    // ----------------------------------------------------------------- server

    fn up_arrive(&mut self, slot: u32) {
        let now = self.now_ns;
        let cs = &mut self.conns[slot as usize];
        cs.up.advance(now);
        if !cs.server_open {
            return;
        }
        if !cs.up.readable().is_empty() {
            if !cs.in_ready {
                cs.in_ready = true;
                self.ready.push_back(slot);
            }
            self.cpu_start();
        } else if cs.up.at_eof(now) && !cs.in_ready {
            self.server_disconnect(slot);
        }
    }

    fn server_disconnect(&mut self, slot: u32) {
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
    fn record_server_disconnect(&mut self, id: ClientId) {
        let at = self.history.executions.len();
        self.history.pubsub.server_disconnects.push((id.0, at));
    }

    /// Starts a CPU turn if the CPU is free and has work.
    fn cpu_start(&mut self) {
        if self.cpu_busy {
            return;
        }
        let now = self.now();
        if self.cron_due {
            self.cron_due = false;
            self.engine.handle_timeout(now);
            // Blocked commands that time out execute in this turn.
            let cost_ns = self.drain_engine(None);
            self.begin_turn(self.cost.cron_overhead_ns + cost_ns, None);
            return;
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
                self.ready.push_back(slot);
            }
            let mut cost_ns = self.cost.read_ns(n as u64);
            let executed_before = self.history.executions.len();
            cost_ns += self.drain_engine(Some(self.now_ns + cost_ns));
            let executions_after = self.history.executions.len();
            for r in &mut self.history.received[received_in_turn] {
                r.executions_after = executions_after;
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
    }

    fn begin_turn(&mut self, cost_ns: u64, conn: Option<u32>) {
        debug_assert!(!self.cpu_busy);
        self.cpu_busy = true;
        self.turn_conn = conn;
        self.stats.cpu_busy_ns += cost_ns;
        let cron = conn.is_none();
        self.schedule(self.now_ns + cost_ns.max(1), SimEvent::CpuDone { cron });
    }

    fn cpu_done(&mut self) {
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
    /// executions starting at `turn_start_ns` (None: outside a command turn)
    /// and returns the CPU time they cost.
    fn drain_engine(&mut self, turn_start_ns: Option<u64>) -> u64 {
        let mut cost_ns = 0;
        let unix_ms = self.now().unix_ms();
        while let Some(event) = self.engine.poll_event() {
            match event {
                Event::Executed(e) => {
                    let ns = self.cost.command_ns(e.work_units, e.reply_bytes as u64);
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
            }
        }
        while let Some(id) = self.engine.poll_transmit() {
            self.pending_flush.push(conn_slot(id.0) as u32);
        }
        if turn_start_ns.is_some() && cost_ns > 0 {
            cost_ns += self.cost.write_overhead_ns;
        }
        self.reschedule_cron();
        cost_ns
    }

    fn reschedule_cron(&mut self) {
        if let Some(deadline) = self.engine.poll_timeout() {
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

    /// Writes every pending reply and carries out pending closes.
    fn release(&mut self) {
        let mut flush = std::mem::take(&mut self.pending_flush);
        for &slot in &flush {
            self.flush(slot);
        }
        flush.clear();
        self.pending_flush = flush;
        let mut closes = std::mem::take(&mut self.pending_close);
        for &slot in &closes {
            let cs = &mut self.conns[slot as usize];
            if cs.server_open {
                let at = cs.down.write_fin(self.now_ns);
                self.schedule(at, SimEvent::DownArrive { slot });
                self.server_disconnect(slot);
            }
        }
        closes.clear();
        self.pending_close = closes;
    }

    /// Writes as much of the engine's pending output for `slot` as the
    /// socket buffer takes.
    fn flush(&mut self, slot: u32) {
        let cs = &mut self.conns[slot as usize];
        if !cs.server_open {
            return;
        }
        let pending = self.engine.pending_output(cs.id);
        let room = self
            .knobs
            .net
            .socket_buffer_bytes
            .saturating_sub(cs.down.unread_bytes());
        let n = pending.len().min(room);
        cs.write_blocked = n < pending.len();
        if n == 0 {
            return;
        }
        let bytes = &pending[..n];
        self.trace.bytes(bytes);
        self.stats.bytes_down += n as u64;
        let queue = &mut self.queue;
        let counter = &mut self.pending_non_cron;
        let last = cs.down.write(
            self.now_ns,
            bytes,
            &self.knobs.net,
            &mut self.net_rng,
            |at| {
                *counter += 1;
                queue.push(at, SimEvent::DownArrive { slot });
            },
        );
        let id = cs.id;
        self.engine.consume_output(id, n);
        if self.faults_active
            && self.fault_rng.gen_range(0..1000) < self.knobs.faults.reset_reply_per_mille
        {
            let at = self
                .fault_rng
                .gen_range(self.now_ns..=last.max(self.now_ns));
            self.schedule(at, SimEvent::Reset { slot });
        }
    }
}

/// Whether client `client` of a run reads slowly, and how slowly (drawn
/// from its own stream, so the checkers can know it without the world).
pub fn slow_reader_of(seed: u64, knobs: &Knobs, client: u32) -> Option<SlowReader> {
    let mut reader_rng = stream_rng(seed, "slow-reader", client as u64);
    SlowReader::draw(&mut reader_rng, &knobs.net)
}

/// Index into `World::conns` of an engine client id (ids are dense from 1).
fn conn_slot(id: u64) -> usize {
    debug_assert!(id >= 1);
    (id - 1) as usize
}

/// A short, readable rendering of a frame for messages and traces.
pub fn frame_summary(frame: &Frame) -> String {
    let mut out = String::new();
    render_frame(frame, &mut out);
    if out.len() > 160 {
        let mut cut = 157;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push_str("...");
    }
    out
}

fn render_frame(frame: &Frame, out: &mut String) {
    use std::fmt::Write;
    if out.len() > 200 {
        return;
    }
    let text = |b: &[u8]| String::from_utf8_lossy(&b[..b.len().min(64)]).into_owned();
    let _ = match frame {
        Frame::Simple(b) => write!(out, "+{}", text(b)),
        Frame::Error(b) => write!(out, "-{}", text(b)),
        Frame::Integer(n) => write!(out, ":{n}"),
        Frame::Bulk(b) => write!(out, "{:?}", text(b)),
        Frame::Null => write!(out, "nil"),
        Frame::Double(d) => write!(out, ",{d}"),
        Frame::Boolean(b) => write!(out, "#{b}"),
        Frame::BigNumber(b) => write!(out, "({}", text(b)),
        Frame::Verbatim { data, .. } => write!(out, "={:?}", text(data)),
        Frame::Array(items) | Frame::Set(items) | Frame::Push(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                if out.len() > 200 {
                    let _ = write!(out, "...({} items)", items.len());
                    break;
                }
                render_frame(item, out);
            }
            write!(out, "]")
        }
        Frame::Map(pairs) => {
            out.push('{');
            for (k, v) in pairs {
                if out.len() > 200 {
                    break;
                }
                render_frame(k, out);
                out.push_str(": ");
                render_frame(v, out);
                out.push_str(", ");
            }
            write!(out, "}}")
        }
    };
}
