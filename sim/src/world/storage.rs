//! The host's side of persistence: storage requests performed against the
//! modelled disk (inline ones on the command thread's CPU before anything
//! else, background ones as a later event on a serial disk thread), forked
//! children run as their own virtual process, and the server's exit.

use std::collections::BTreeMap;

use rand::Rng;
use seedkv_engine::persist::{
    ChildJob, ChildProcess, ForkRequest, IoMode, StorageOp, StorageRequest, StorageResult,
};
use seedkv_engine::Config;

use super::disk::{Disk, LATENCY_NS_MAX};
use super::{SimEvent, World};
use crate::persistence::record::{PersistRecord, Snapshot};
use crate::persistence::PersistKnobs;
use crate::rng::{choice_rng, ChoiceRng};

/// Background requests in flight at most, and children at once.
pub const BG_PENDING_MAX: usize = 1024;
pub const CHILDREN_MAX: usize = 4;
/// Requests one child may make at most (bounds a looping child).
pub const CHILD_REQUESTS_MAX: u64 = 1_000_000;
/// Placeholder for a prefix bound fixed at the end of the drain.
const PREFIX_OPEN: usize = usize::MAX;

/// A forked child: its state machine and the request being performed.
struct SimChild {
    process: ChildProcess,
    pending: Option<StorageRequest>,
    requests_count: u64,
}

/// Persistence state of the world (present when the run persists).
pub(super) struct PersistHost {
    /// The engine's configuration, to build the restarted engine.
    pub config: Config,
    pub disk: Disk,
    pub rng: ChoiceRng,
    pub record: PersistRecord,
    bg_pending: BTreeMap<u64, StorageRequest>,
    next_token: u64,
    bg_disk_free_ns: u64,
    children: BTreeMap<u64, SimChild>,
    /// File name → the prefix interval of the dataset written to it.
    temp_prefix: BTreeMap<String, (usize, usize)>,
    pub crash_after_ops: Option<u64>,
    pub crash_scheduled: bool,
    /// The server process is gone (exited or crashed without restart).
    pub dead: bool,
    /// The engine asked to exit (handled when the drain ends).
    pub exit_pending: Option<i32>,
    pub last_warning: String,
    dbfilename: String,
}

impl PersistHost {
    pub fn new(seed: u64, knobs: PersistKnobs, config: Config, ops_count: u64) -> PersistHost {
        let disk = Disk::new(knobs.disk.clone(), choice_rng(seed, "disk", 0));
        let latency = &knobs.disk.latency;
        let fsync_max_ns = (latency.fsync_ns * 3 / 2)
            .saturating_mul(latency.tail_factor.max(1))
            .min(LATENCY_NS_MAX);
        let crash_after_ops = knobs
            .crash_after_per_mille
            .map(|per_mille| (ops_count * per_mille as u64 / 1000).max(1));
        let dbfilename = seedkv_engine::commands::config::config_get(&config, "dbfilename")
            .unwrap_or_else(|| "dump.rdb".into());
        let mut disk = disk;
        let aclfile = seedkv_engine::commands::config::config_get(&config, "aclfile");
        if let Some(file) = aclfile.filter(|f| !f.is_empty()) {
            disk.install(&file, b"");
        }
        PersistHost {
            record: PersistRecord::new(knobs.mode, fsync_max_ns),
            config,
            disk,
            rng: choice_rng(seed, "persist", 0),
            bg_pending: BTreeMap::new(),
            next_token: 0,
            bg_disk_free_ns: 0,
            children: BTreeMap::new(),
            temp_prefix: BTreeMap::new(),
            crash_after_ops,
            crash_scheduled: false,
            dead: false,
            exit_pending: None,
            last_warning: String::new(),
            dbfilename,
        }
    }

    /// Everything in flight is gone (a crash).
    pub fn forget_in_flight(&mut self) {
        self.bg_pending.clear();
        self.children.clear();
        self.temp_prefix.clear();
        self.bg_disk_free_ns = 0;
        self.exit_pending = None;
    }

    /// Performs `op` and notes what the checkers need (snapshots).
    fn perform(&mut self, op: &StorageOp, executions_count: usize, now_ns: u64) -> StorageResult {
        self.advance_disk(now_ns);
        let result = self.disk.perform(op);
        if result.is_ok() {
            match op {
                StorageOp::Create { file } => {
                    self.temp_prefix
                        .entry(file.clone())
                        .or_insert((executions_count, PREFIX_OPEN));
                }
                StorageOp::Rename { from, to } if *to == self.dbfilename => {
                    if let Some(&(lo, hi)) = self.temp_prefix.get(from) {
                        self.record.snapshots.push(Snapshot {
                            prefix_lo: lo,
                            prefix_hi: hi,
                            renamed_ns: now_ns,
                            dir_synced: false,
                        });
                    }
                    self.temp_prefix.remove(from);
                }
                StorageOp::SyncDir { dir } if dir.is_empty() => self.snapshots_durable(),
                StorageOp::Rename { from, .. } => {
                    self.temp_prefix.remove(from);
                }
                StorageOp::Remove { file } => {
                    self.temp_prefix.remove(file);
                }
                _ => {}
            }
        }
        result
    }

    /// Moves the disk's clock; a journal commit makes every rename so far
    /// durable.
    pub fn advance_disk(&mut self, now_ns: u64) {
        if self.disk.advance(now_ns) {
            self.snapshots_durable();
        }
    }

    fn snapshots_durable(&mut self) {
        for s in &mut self.record.snapshots {
            s.dir_synced = true;
        }
    }

    /// Closes the prefix intervals opened during a drain.
    pub fn close_prefixes(&mut self, executions_count: usize) {
        for (_, hi) in self.temp_prefix.values_mut() {
            if *hi == PREFIX_OPEN {
                *hi = executions_count;
            }
        }
    }
}

impl World {
    /// An [`seedkv_engine::Event::Storage`] from the engine: returns the
    /// CPU time it took if inline (performed and reported now).
    pub(super) fn storage_request(&mut self, request: StorageRequest) -> u64 {
        let executions_count = self.history.executions.len();
        let now_ns = self.now_ns;
        let now = self.now();
        let host = self.persist.as_mut().expect("storage events need a disk");
        let latency_ns = host.disk.latency_ns(&request.op);
        match request.mode {
            IoMode::Inline => {
                let result = host.perform(&request.op, executions_count, now_ns);
                self.trace.word(0x5704 ^ latency_ns);
                if self.trace.printing() {
                    let op = describe(&request.op);
                    self.trace.line(
                        now_ns,
                        format_args!("  storage inline {op} ({latency_ns} ns): {result:?}"),
                    );
                }
                self.engine.storage_done(now, request.id, result);
                latency_ns
            }
            IoMode::Background => {
                assert!(
                    host.bg_pending.len() < BG_PENDING_MAX,
                    "background requests pile up"
                );
                let token = host.next_token;
                host.next_token += 1;
                let at = host.bg_disk_free_ns.max(now_ns) + latency_ns;
                host.bg_disk_free_ns = at;
                host.bg_pending.insert(token, request);
                self.schedule(at, SimEvent::StorageDone { token });
                0
            }
        }
    }

    /// A background request's time is over: perform it and report it.
    pub(super) fn storage_done_event(&mut self, token: u64) {
        let executions_count = self.history.executions.len();
        let now_ns = self.now_ns;
        let Some(host) = self.persist.as_mut() else {
            return;
        };
        let Some(request) = host.bg_pending.remove(&token) else {
            return; // lost in a crash
        };
        let result = host.perform(&request.op, executions_count, now_ns);
        if self.trace.printing() {
            let op = describe(&request.op);
            self.trace.line(
                now_ns,
                format_args!("  storage background {op}: {result:?}"),
            );
        }
        self.engine.storage_done(self.now(), request.id, result);
        self.after_background_input();
    }

    /// An [`seedkv_engine::Event::Fork`]: the child starts now, on the
    /// dataset as the engine holds it.
    pub(super) fn fork(&mut self, fork: ForkRequest) {
        let executions_count = self.history.executions.len();
        let now = self.now();
        let process = self.engine.start_child(now, &fork);
        let serialize_ns = self.cost.command_ns(process.work_units(), 0);
        let host = self.persist.as_mut().expect("forks need a disk");
        let (ChildJob::RdbSave { temp, .. } | ChildJob::AofRewrite { temp, .. }) = &fork.job;
        host.temp_prefix
            .insert(temp.clone(), (executions_count, PREFIX_OPEN));
        if host.children.len() >= CHILDREN_MAX {
            // Cannot fork: reported failed at once.
            self.engine.child_exited(now, fork.id, false);
            return;
        }
        let id = fork.id.0;
        host.children.insert(
            id,
            SimChild {
                process,
                pending: None,
                requests_count: 0,
            },
        );
        self.trace.word(0xf04c ^ id);
        self.schedule(
            self.now_ns + serialize_ns.max(1),
            SimEvent::ChildStep { child: id },
        );
    }

    /// A child's request is done (or its serialization): report it, then
    /// issue the next or report the exit.
    pub(super) fn child_step(&mut self, child: u64) {
        let executions_count = self.history.executions.len();
        let now_ns = self.now_ns;
        let Some(host) = self.persist.as_mut() else {
            return;
        };
        let Some(mut c) = host.children.remove(&child) else {
            return; // lost in a crash
        };
        if let Some(request) = c.pending.take() {
            let result = host.perform(&request.op, executions_count, now_ns);
            if self.trace.printing() {
                let op = describe(&request.op);
                self.trace.line(
                    now_ns,
                    format_args!("  child {child} storage {op}: {result:?}"),
                );
            }
            c.process.storage_done(request.id, result);
        }
        let next = if c.requests_count < CHILD_REQUESTS_MAX {
            c.process.poll_storage()
        } else {
            None
        };
        match next {
            Some(request) => {
                let latency_ns = host.disk.latency_ns(&request.op);
                c.pending = Some(request);
                c.requests_count += 1;
                host.children.insert(child, c);
                self.schedule(now_ns + latency_ns, SimEvent::ChildStep { child });
            }
            None => {
                let ok = c.process.exit_status().unwrap_or(false);
                let id = c.process.id();
                self.trace.word(0xe417 ^ child ^ (ok as u64) << 40);
                self.engine.child_exited(self.now(), id, ok);
                self.after_background_input();
            }
        }
    }

    /// After an input outside a CPU turn (a completion, a child's exit):
    /// drain, and write what it produced if the CPU is not mid-turn. The
    /// inline requests it made (an everysec append after a background
    /// fsync) occupy the command thread as a turn of their own when it is
    /// free; mid-turn, their time is not charged (a known undercount).
    fn after_background_input(&mut self) {
        let charged = !self.cpu_busy && !self.server_dead();
        let cost_ns = self.drain_engine(charged.then_some(self.now_ns));
        if !self.cpu_busy && !self.server_dead() {
            if cost_ns > 0 {
                self.begin_turn(cost_ns, None);
            } else {
                self.release();
                self.cpu_start();
            }
        }
    }

    /// Whether the server process is gone.
    pub(super) fn server_dead(&self) -> bool {
        self.persist.as_ref().is_some_and(|h| h.dead)
    }

    /// After each batch sent: schedule the crash once its share of the
    /// requests went out, at a random instant within the next millisecond.
    pub(super) fn maybe_schedule_crash(&mut self) {
        let ops_sent = self.ops_sent;
        let now_ns = self.now_ns;
        let Some(host) = self.persist.as_mut() else {
            return;
        };
        let Some(after) = host.crash_after_ops else {
            return;
        };
        if host.crash_scheduled || ops_sent < after {
            return;
        }
        host.crash_scheduled = true;
        let at = now_ns + host.rng.gen_range(0..=1_000_000);
        self.schedule(at, SimEvent::Crash);
    }
}

/// A request in a few words, for the trace.
fn describe(op: &StorageOp) -> String {
    match op {
        StorageOp::Append { file, bytes } => format!("append {} bytes to {file}", bytes.len()),
        StorageOp::Read {
            file,
            offset_bytes,
            len_bytes,
        } => format!("read {file} at {offset_bytes} for {len_bytes}"),
        StorageOp::Rename { from, to } => format!("rename {from} to {to}"),
        other => format!("{other:?}"),
    }
}
