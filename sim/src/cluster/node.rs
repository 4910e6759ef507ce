//! One node of the multi-node world: an engine with its own virtual CPU,
//! disk and clock, and what the host does for it (storage requests,
//! forked children run to their end, crash and restart over its disk).

use std::collections::BTreeMap;

use seedkv_engine::commands::config::apply_config_line;
use seedkv_engine::{ClientId, Config, Engine, Event, Now, PlantedBug};

use crate::cost::CostModel;
use crate::rng::{choice_rng, stream, stream_seed};
use crate::world::disk::{Disk, DiskKnobs};
use crate::world::UNIX_ORIGIN_US;

/// Engine events one restart may produce at most while loading.
pub const LOAD_EVENTS_MAX: u64 = 10_000_000;
/// Requests one forked child may make at most.
pub const CHILD_REQUESTS_MAX: u64 = 1_000_000;

/// A node's clock: a constant offset from the world's and a drift.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeClock {
    /// -2 s ..= +2 s.
    pub offset_us: i64,
    /// -200 ..= +200 parts per million.
    pub drift_ppm: i64,
}

impl NodeClock {
    /// The node's reading of the world's time `now_ns`.
    pub fn now(&self, now_ns: u64) -> Now {
        let drift_us = (now_ns / 1000) as i64 * self.drift_ppm / 1_000_000;
        let unix_us = UNIX_ORIGIN_US as i64 + (now_ns / 1000) as i64 + self.offset_us + drift_us;
        Now {
            mono_ns: now_ns,
            unix_us: unix_us.max(0) as u64,
        }
    }
}

/// What a drain of the engine's events asks of the world.
#[derive(Debug, Default)]
pub struct Drained {
    /// CPU time the drained work took.
    pub cost_ns: u64,
    pub closes: Vec<ClientId>,
    pub connects: Vec<(ClientId, String, u16)>,
    /// Background storage requests: (token, latency).
    pub background: Vec<(u64, u64)>,
    /// Keys removed by the node itself (expiry, eviction).
    pub removed: Vec<String>,
    /// Executed commands: (client, flags, name).
    pub executed: Vec<(ClientId, u32, &'static str)>,
}

pub struct Node {
    pub index: u32,
    /// Bumped at every restart: connections of an older one are gone.
    pub incarnation: u32,
    pub engine: Engine,
    pub config: Config,
    pub disk: Disk,
    pub clock: NodeClock,
    pub up: bool,
    /// The CPU is busy until then.
    pub busy_until_ns: u64,
    /// Background storage requests in flight.
    pub bg_pending: BTreeMap<u64, seedkv_engine::persist::StorageRequest>,
    next_token: u64,
    bg_disk_free_ns: u64,
    /// The engine timer armed (its deadline), if any.
    pub timer_ns: Option<u64>,
}

/// The configuration every node starts with.
pub fn node_config(seed: u64, index: u32, bug: Option<PlantedBug>, repl: &ReplKnobs) -> Config {
    let mut config = Config {
        seed: stream_seed(seed, stream::ENGINE, index as u64),
        record_executions: true,
        planted_bug: bug,
        ..Config::default()
    };
    config.storage = true;
    let mut set = |key: &str, value: &str| {
        apply_config_line(&mut config, key, value)
            .unwrap_or_else(|e| panic!("config {key} {value}: {e}"));
    };
    set("save", "");
    set("appendonly", "yes");
    set("appendfsync", repl.appendfsync);
    set("auto-aof-rewrite-percentage", "0");
    set("repl-backlog-size", &repl.backlog_bytes.to_string());
    set("repl-timeout", &repl.timeout_s.to_string());
    set("repl-ping-replica-period", "1");
    set(
        "repl-diskless-sync",
        if repl.diskless { "yes" } else { "no" },
    );
    config
}

/// Replication settings drawn per seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplKnobs {
    /// `repl-backlog-size`: 1 KiB ..= 1 MiB (small ones make full
    /// resyncs after a partition likely).
    pub backlog_bytes: u64,
    /// `repl-timeout`: 2 ..= 6 s.
    pub timeout_s: u64,
    pub diskless: bool,
    pub appendfsync: &'static str,
}

impl Node {
    pub fn new(index: u32, seed: u64, config: Config, clock: NodeClock) -> Node {
        let disk = Disk::new(
            DiskKnobs::none(),
            choice_rng(seed, "node-disk", index as u64),
        );
        Node {
            index,
            incarnation: 0,
            engine: Engine::new(config.clone(), clock.now(0)),
            config,
            disk,
            clock,
            up: true,
            busy_until_ns: 0,
            bg_pending: BTreeMap::new(),
            next_token: 0,
            bg_disk_free_ns: 0,
            timer_ns: None,
        }
    }

    pub fn now(&self, now_ns: u64) -> Now {
        self.clock.now(now_ns)
    }

    /// Drains the engine's events: storage performed (inline at once,
    /// background handed back with a token), forks run to their end,
    /// costs summed.
    pub fn drain(&mut self, now_ns: u64, cost: &CostModel) -> Drained {
        let now = self.now(now_ns);
        let mut d = Drained::default();
        let mut events_count = 0u64;
        loop {
            let Some(event) = self.engine.poll_event() else {
                if self.engine.wants_before_sleep() {
                    self.engine.before_sleep(now);
                    events_count += 1;
                    if events_count < LOAD_EVENTS_MAX {
                        continue;
                    }
                }
                break;
            };
            events_count += 1;
            assert!(events_count <= LOAD_EVENTS_MAX, "a drain never ends");
            match event {
                Event::Executed(e) => {
                    d.cost_ns += cost.command_ns(e.work_units, e.reply_bytes as u64);
                    d.executed.push((e.client, e.flags, e.name));
                }
                Event::KeyRemoved(r) => {
                    d.removed.push(format!(
                        "{} ({:?})",
                        String::from_utf8_lossy(&r.key),
                        r.cause
                    ));
                }
                Event::Close { client, .. } => d.closes.push(client),
                Event::Storage(request) => match request.mode {
                    seedkv_engine::persist::IoMode::Inline => {
                        self.disk.advance(now_ns);
                        d.cost_ns += self.disk.latency_ns(&request.op);
                        let result = self.disk.perform(&request.op);
                        self.engine.storage_done(now, request.id, result);
                    }
                    seedkv_engine::persist::IoMode::Background => {
                        let latency_ns = self.disk.latency_ns(&request.op);
                        let token = self.next_token;
                        self.next_token += 1;
                        let at = self.bg_disk_free_ns.max(now_ns) + latency_ns;
                        self.bg_disk_free_ns = at;
                        self.bg_pending.insert(token, request);
                        d.background.push((token, at - now_ns));
                    }
                },
                Event::Fork(fork) => {
                    let ok = self.run_child(now, &fork);
                    self.engine.child_exited(now, fork.id, ok);
                }
                Event::Stall { duration_ns } => d.cost_ns += duration_ns,
                Event::ScriptSlice { work_units, .. } => {
                    d.cost_ns += cost.command_ns(work_units, 0)
                }
                Event::ReplySlice {
                    work_units,
                    reply_bytes,
                    ..
                } => d.cost_ns += cost.command_ns(work_units, reply_bytes),
                other => super::contract::host_event(other, &mut d, cost),
            }
        }
        d
    }

    /// A forked child's whole run, performed at once (its time is not
    /// modelled: the multi-node world turns automatic rewrites off).
    fn run_child(&mut self, now: Now, fork: &seedkv_engine::persist::ForkRequest) -> bool {
        let mut process = self.engine.start_child(now, fork);
        for _ in 0..CHILD_REQUESTS_MAX {
            let Some(request) = process.poll_storage() else {
                return process.exit_status().unwrap_or(false);
            };
            let result = self.disk.perform(&request.op);
            process.storage_done(request.id, result);
        }
        false
    }

    /// A background request's time is over: perform it and report it.
    pub fn storage_done(&mut self, now_ns: u64, token: u64) -> bool {
        let Some(request) = self.bg_pending.remove(&token) else {
            return false;
        };
        self.disk.advance(now_ns);
        let result = self.disk.perform(&request.op);
        self.engine
            .storage_done(self.now(now_ns), request.id, result);
        true
    }

    /// The process dies: the engine and everything in flight are gone;
    /// the disk keeps what crash semantics keep.
    pub fn crash(&mut self, now_ns: u64) {
        self.up = false;
        self.bg_pending.clear();
        self.bg_disk_free_ns = 0;
        self.timer_ns = None;
        self.disk.advance(now_ns);
        self.disk.crash();
    }

    /// A new engine over the same disk; its loading is performed inline.
    pub fn restart(&mut self, now_ns: u64, cost: &CostModel) -> Drained {
        self.incarnation += 1;
        self.engine = Engine::new(self.config.clone(), self.now(now_ns));
        self.up = true;
        self.busy_until_ns = now_ns;
        self.drain(now_ns, cost)
    }
}
