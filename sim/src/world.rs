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
//!
//! # Layout
//!
//! This file holds the world's state, its event loop and dispatch; the
//! handlers live by concern in `clients` (requests, replies, reconnects),
//! `pubsub` (messages told apart from replies), `faults` (fault draws and
//! resets), `server` (arrivals, CPU turns, draining the engine), `output`
//! (writing replies and closes) and `render` (frames as short text).
//!
//! [`SERVER_READ_BYTES_MAX`]: crate::net::SERVER_READ_BYTES_MAX

use std::collections::VecDeque;

use rand::Rng;
use seedkv_engine::{ClientId, Config, Engine, Now, PlantedBug};

use crate::client::{SimClient, SlowReader};
use crate::cost::CostModel;
use crate::history::History;
use crate::knobs::Knobs;
use crate::net::Pipe;
use crate::queue::EventQueue;
use crate::rng::{choice_rng, stream, stream_rng, stream_seed, ChoiceRng};
use crate::trace::TraceHash;

mod clients;
mod crash;
pub mod disk;
mod faults;
pub(crate) mod inspect;
mod invariants;
mod output;
mod pubsub;
mod render;
#[cfg(test)]
mod restart_tests;
mod server;
mod storage;

pub use render::frame_summary;

/// The wall clock at virtual time zero: 2023-11-14T22:13:20Z, in µs.
pub const UNIX_ORIGIN_US: u64 = 1_700_000_000_000_000;

/// `hash-max-listpack-entries` in simulated runs: below the hashes
/// workload's field range (Redis's default, 512, is above it).
pub const SIM_HASH_MAX_LISTPACK_ENTRIES: usize = 128;
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
    /// A background storage request's time is over.
    StorageDone { token: u64 },
    /// A forked child's current step is over.
    ChildStep { child: u64 },
    /// The server crashes (and restarts over the same disk).
    Crash,
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
        8 => format!("StorageDone {{ token: {id} }}"),
        9 => format!("ChildStep {{ child: {id} }}"),
        10 => "Crash".into(),
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
            SimEvent::StorageDone { token } => 8 | token << 8,
            SimEvent::ChildStep { child } => 9 | child << 8,
            SimEvent::Crash => 10,
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
    /// When it last joined `ready` (for the snapshot-slices checker).
    ready_since_ns: u64,
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
    /// Ends of event-loop turns that released a group commit.
    pub before_sleeps_count: u64,
    pub bytes_up: u64,
    pub bytes_down: u64,
    pub cpu_busy_ns: u64,
    pub bg_busy_ns: u64,
    /// The run hit a hard bound (events or virtual time) before finishing.
    pub bound_hit: bool,
    /// Crashes, snapshots and the disk (runs with persistence).
    pub persist: crate::persistence::PersistStats,
}

pub struct World {
    now_ns: u64,
    queue: EventQueue<SimEvent>,
    /// Events other than timer events (cron ticks and their CPU turns)
    /// waiting in the queue.
    pending_non_cron: u64,
    last_progress_ns: u64,

    engine: Engine,
    /// When the engine's invariants are checked next (debug builds).
    invariants: invariants::InvariantPacing,
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
    /// The last CPU turn ran a slice of a suspended script: the next one
    /// reads a ready connection first, so that other clients' input
    /// reaches the engine between slices (buffered before the busy
    /// threshold, answered in busy mode after it).
    slice_turn_last: bool,
    /// Connections still to read before a snapshot read's next slice: as
    /// Redis's event loop serves every ready connection between two timer
    /// events, the connections ready when a slice ends are all read before
    /// the next slice runs.
    snapshot_reads_left: usize,
    /// The last CPU turn ran a snapshot read's slice.
    snapshot_slice_last: bool,
    /// Work of the suspended script's slices charged so far, by its
    /// (client, request): its EVAL's record carries it again.
    script_slices_charged: Option<(u64, u64, u64)>,
    /// Connection turns left in the current event-loop turn (group commit
    /// runs `before_sleep` when it reaches 0).
    loop_turns_left: usize,
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
    /// The disk, children and crash (runs with persistence).
    persist: Option<Box<storage::PersistHost>>,

    pub history: History,
    pub trace: TraceHash,
    pub stats: WorldStats,
}

/// Elements a snapshot read's slice produces in the run of `seed`: 4 to
/// 64, drawn per seed, so that the workloads' collections (tens to
/// hundreds of elements) are read in slices too.
pub fn snapshot_slice_elements(seed: u64) -> usize {
    4 << (stream_seed(seed, stream::ENGINE, 1) % 5)
}

impl World {
    pub fn new(
        seed: u64,
        knobs: Knobs,
        bug: Option<PlantedBug>,
        record_event_hashes: bool,
        print_trace: bool,
    ) -> World {
        World::new_configured(seed, knobs, bug, (record_event_hashes, print_trace), |_| {})
    }

    /// [`World::new`], with `configure` given the engine's configuration
    /// last (the latency report sets `snapshot-reads`).
    pub fn new_configured(
        seed: u64,
        knobs: Knobs,
        bug: Option<PlantedBug>,
        (record_event_hashes, print_trace): (bool, bool),
        configure: impl FnOnce(&mut Config),
    ) -> World {
        let mut config = Config {
            seed: stream_seed(seed, stream::ENGINE, 0),
            record_executions: true,
            record_sizes: true,
            planted_bug: bug,
            snapshot_slice_elements: snapshot_slice_elements(seed),
            ..Config::default()
        };
        // The hashes workload grows its keys past this threshold and back
        // (its fields are bounded well below Redis's default of 512).
        config.limits.hash_max_listpack_entries = SIM_HASH_MAX_LISTPACK_ENTRIES;
        configure(&mut config);
        let persist = knobs.persist.clone().map(|persist_knobs| {
            persist_knobs.configure(&mut config);
            if persist_knobs.wants_aclfile(&knobs.workloads) {
                let set = seedkv_engine::commands::config::apply_config_line(
                    &mut config,
                    "aclfile",
                    crate::persistence::ACL_FILE,
                );
                debug_assert!(set.is_ok());
            }
            Box::new(storage::PersistHost::new(
                seed,
                persist_knobs,
                config.clone(),
                knobs.ops_count,
            ))
        });
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
        let requests_planned: u64 = clients.iter().map(|c| c.ops_left).sum();
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
            invariants: Default::default(),
            cost,
            cpu_busy: false,
            pending_flush: Vec::new(),
            pending_close: Vec::new(),
            turn_conn: None,
            ready: VecDeque::new(),
            cron_scheduled_ns: None,
            cron_due: false,
            slice_turn_last: false,
            snapshot_reads_left: 0,
            snapshot_slice_last: false,
            script_slices_charged: None,
            loop_turns_left: 0,
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
            persist,
            history: History::with_request_capacity(requests_planned),
            trace: TraceHash::new(record_event_hashes, print_trace),
            stats: WorldStats::default(),
        };
        for i in 0..clients_count {
            // Clients start staggered over the first millisecond.
            let at = world.stagger_draw(1_000_000);
            world.schedule(at, SimEvent::ClientWake { client: i, gen: 0 });
        }
        if world.persist.is_some() {
            // Loading at start (and creating the AOF): inline, on the
            // command thread, before it serves any client.
            let cost_ns = world.drain_engine(Some(0));
            if cost_ns > 0 {
                world.begin_turn(cost_ns, None);
            }
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
        if let Some(host) = &self.persist {
            self.history.persist = Some(Box::new(host.record.clone()));
            let p = &mut self.stats.persist;
            let disk = &host.disk.stats;
            p.runs_count = 1;
            p.crashes_count = host.record.crash.is_some() as u64;
            p.recovered_keys_count = host
                .record
                .crash
                .as_ref()
                .map_or(0, |c| c.observed.len() as u64);
            p.exits_count = host.record.exit.is_some() as u64;
            p.snapshots_count = host.record.snapshots.len() as u64;
            p.fsyncs_count = disk.fsyncs_count;
            p.bytes_appended = disk.bytes_appended;
            p.disk_faults_count = disk.faults_count;
            p.torn_sectors_count = disk.torn_count;
        }
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
            SimEvent::StorageDone { token } => self.storage_done_event(token),
            SimEvent::ChildStep { child } => self.child_step(child),
            SimEvent::Crash => self.crash(),
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
