//! The multi-node world: a primary and N replicas, each an engine with its
//! own virtual CPU, disk and clock, linked by the network model under
//! partitions drawn per seed; nodes crash and restart; clients write to
//! the primary (with WAIT) and read from the replicas. The replication
//! checkers ([`crate::check::cluster`]) read what it recorded.
//!
//! A run is a pure function of its [`ClusterConfig`]: `run --replicas 2
//! --seed N` twice gives the same trace hash.

pub mod cli;
pub mod clients;
mod contract;
mod delivery;
mod failover;
mod faults;
pub mod history;
mod links;
pub mod node;
pub mod partition;
mod settle;
pub mod sweep;
pub mod tap;
#[cfg(test)]
mod tests;
mod wiring;
pub mod world;

use std::time::{Duration, Instant};

use rand::Rng;
use seedkv_engine::PlantedBug;

use crate::check::cluster::{self as checks, FailoverCounts, Loss};
use crate::check::Violation;
use crate::net::NetKnobs;
use crate::rng::stream_rng;
use crate::trace::{first_divergence, TraceHash};
use history::ClusterHistory;
use node::{NodeClock, ReplKnobs};
use partition::PartitionPlan;
use world::ClusterWorld;

/// Replicas a run may have at most.
pub const REPLICAS_MAX: u32 = 8;
/// Crashes drawn per run at most.
pub const CRASHES_MAX: usize = 2;

/// Everything that determines a multi-node run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterConfig {
    pub seed: u64,
    pub replicas: u32,
    pub bug: Option<PlantedBug>,
    /// Total clients (half writers, half readers), requests per client,
    /// no faults: overrides of the drawn knobs (the shrinker's handles).
    pub clients: Option<u32>,
    pub ops: Option<u64>,
    pub no_faults: bool,
}

impl ClusterConfig {
    pub fn new(seed: u64, replicas: u32) -> ClusterConfig {
        ClusterConfig {
            seed,
            replicas,
            ..ClusterConfig::default()
        }
    }

    /// The flags after the subcommand that reproduce this run.
    pub fn flags(&self) -> String {
        let mut s = format!("--seed {} --replicas {}", self.seed, self.replicas);
        if let Some(b) = self.bug {
            s.push_str(&format!(" --bug {}", b.name()));
        }
        if let Some(c) = self.clients {
            s.push_str(&format!(" --clients {c}"));
        }
        if let Some(o) = self.ops {
            s.push_str(&format!(" --ops {o}"));
        }
        if self.no_faults {
            s.push_str(" --no-faults");
        }
        s
    }

    pub fn repro_line(&self) -> String {
        format!(
            "cargo run --release -p seedkv-sim -- replay {} --trace",
            self.flags()
        )
    }
}

/// A node crash: which, when, for how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeCrash {
    pub node: u32,
    pub at_ns: u64,
    /// 10 ms ..= 1 s.
    pub down_ns: u64,
}

/// A reset of a replica's link to its primary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkReset {
    pub replica: u32,
    pub at_ns: u64,
}

/// Link resets drawn per run at most.
pub const LINK_RESETS_MAX: usize = 4;

/// The form of FAILOVER the admin sends the primary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailoverKind {
    /// `FAILOVER`: to the first replica that acknowledged the whole stream.
    Plain,
    /// `FAILOVER TO <replica>`.
    To,
    /// `FAILOVER TIMEOUT <ms>`: aborts if no replica catches up in time.
    Timeout,
    /// `FAILOVER TO <replica> TIMEOUT <ms>`.
    ToTimeout,
    /// `FAILOVER TO <replica> FORCE TIMEOUT <ms>`: hands over at the
    /// timeout even though the target has not caught up.
    ToForce,
}

/// The FAILOVER fault of one run: an admin connection asks the primary of
/// the moment to hand its role over (see `failover.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FailoverPlan {
    pub at_ns: u64,
    pub kind: FailoverKind,
    /// Which of the other nodes `TO` names: the `target`-th (1-based,
    /// wrapping) of the nodes that are not the primary.
    pub target: u32,
    /// TIMEOUT: 10 ..= 2000 ms.
    pub timeout_ms: u64,
    /// `FAILOVER ABORT` this long after the request, if drawn: 1 ..= 200 ms
    /// (else after the operator's patience, if it did not complete).
    pub abort_after_ns: Option<u64>,
    /// How long the operator takes to point the other replicas at the new
    /// primary once the failover completed: 1 ..= 500 ms.
    pub repoint_after_ns: u64,
}

impl FailoverPlan {
    /// Draws the failover of a run (none on about half of the seeds) from
    /// its own stream, so that the other knobs of a seed stay as they were.
    fn draw(seed: u64, fault_window_ns: u64) -> Option<FailoverPlan> {
        let mut rng = stream_rng(seed, "cluster-failover", 0);
        if rng.gen_bool(0.5) {
            return None;
        }
        let kind = match rng.gen_range(0..5) {
            0 => FailoverKind::Plain,
            1 => FailoverKind::To,
            2 => FailoverKind::Timeout,
            3 => FailoverKind::ToTimeout,
            _ => FailoverKind::ToForce,
        };
        Some(FailoverPlan {
            at_ns: rng.gen_range(fault_window_ns / 10..=fault_window_ns * 8 / 10),
            kind,
            target: rng.gen_range(1..=REPLICAS_MAX),
            timeout_ms: rng.gen_range(10..=2000),
            abort_after_ns: rng
                .gen_bool(0.2)
                .then(|| rng.gen_range(1_000_000..=200_000_000)),
            repoint_after_ns: rng.gen_range(1_000_000..=500_000_000),
        })
    }
}

/// The knobs of one multi-node run, drawn per seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterKnobs {
    pub replicas_count: u32,
    /// Clients of the primary, and of the replicas: 1 ..= 4 each.
    pub writers_count: u32,
    pub readers_count: u32,
    /// Requests per client: 50 ..= 500.
    pub ops_per_client: u64,
    pub net: NetKnobs,
    pub repl: ReplKnobs,
    pub clocks: Vec<NodeClock>,
    pub partitions: PartitionPlan,
    pub crashes: Vec<NodeCrash>,
    /// Resets of replication links (a replica then resumes with PSYNC).
    pub link_resets: Vec<LinkReset>,
    /// The FAILOVER fault, if drawn.
    pub failover: Option<FailoverPlan>,
    /// Faults happen within `[0, fault_window_ns)`.
    pub fault_window_ns: u64,
}

impl ClusterKnobs {
    pub fn draw(config: &ClusterConfig) -> ClusterKnobs {
        let mut rng = stream_rng(config.seed, "cluster-knobs", 0);
        let replicas_count = config.replicas.clamp(1, REPLICAS_MAX);
        let nodes_count = replicas_count + 1;
        let (mut writers_count, mut readers_count) = (rng.gen_range(1..=4), rng.gen_range(1..=4));
        if let Some(c) = config.clients {
            writers_count = c.div_ceil(2).max(1);
            readers_count = (c / 2).max(1);
        }
        let mut ops_per_client = rng.gen_range(50..=500);
        if let Some(ops) = config.ops {
            ops_per_client = ops.max(1);
        }
        let net = NetKnobs::draw(&mut rng);
        let repl = ReplKnobs {
            backlog_bytes: 1 << rng.gen_range(10..=20),
            timeout_s: rng.gen_range(2..=6),
            diskless: rng.gen_bool(0.5),
            appendfsync: if rng.gen_bool(0.5) {
                "always"
            } else {
                "everysec"
            },
        };
        let clocks = (0..nodes_count)
            .map(|_| NodeClock {
                offset_us: if rng.gen_bool(0.5) {
                    rng.gen_range(-2_000_000..=2_000_000)
                } else {
                    0
                },
                drift_ppm: rng.gen_range(-200..=200),
            })
            .collect();
        // About as long as the clients run (a request's round trip and think
        // time average ~1 ms).
        let fault_window_ns = (ops_per_client * 1_000_000).max(200_000_000);
        let faults = !config.no_faults;
        let partitions = match faults {
            true => PartitionPlan::draw(&mut rng, nodes_count, fault_window_ns, 6),
            false => PartitionPlan::default(),
        };
        let mut crashes = Vec::new();
        if faults {
            for _ in 0..rng.gen_range(0..=CRASHES_MAX) {
                crashes.push(NodeCrash {
                    node: rng.gen_range(0..nodes_count),
                    at_ns: rng.gen_range(1..fault_window_ns),
                    down_ns: rng.gen_range(10_000_000..=1_000_000_000),
                });
            }
        }
        let mut link_resets = Vec::new();
        if faults {
            for _ in 0..rng.gen_range(0..=LINK_RESETS_MAX) {
                link_resets.push(LinkReset {
                    replica: rng.gen_range(1..nodes_count),
                    at_ns: rng.gen_range(1..fault_window_ns),
                });
            }
        }
        let failover = match faults {
            true => FailoverPlan::draw(config.seed, fault_window_ns),
            false => None,
        };
        ClusterKnobs {
            failover,
            link_resets,
            replicas_count,
            writers_count,
            readers_count,
            ops_per_client,
            net,
            repl,
            clocks,
            partitions,
            crashes,
            fault_window_ns,
        }
    }

    /// When the last fault is over: partitions healed, nodes restarted.
    pub fn faults_end_ns(&self) -> u64 {
        let restarts = self.crashes.iter().map(|c| c.at_ns + c.down_ns);
        restarts
            .chain([self.partitions.heal_ns()])
            .max()
            .unwrap_or(0)
    }

    /// How long after the faults end (and the clients finish) every
    /// replica must hold the primary's stream: a dead link is noticed
    /// within `repl-timeout`, the replica retries every second, and a
    /// full resync of this world's small datasets takes milliseconds; twice
    /// the timeout plus 5 s covers a second attempt.
    pub fn convergence_bound_ns(&self) -> u64 {
        (2 * self.repl.timeout_s + 5) * 1_000_000_000
    }
}

/// What a multi-node run produced.
#[derive(Debug)]
pub struct ClusterReport {
    pub config: ClusterConfig,
    pub knobs: ClusterKnobs,
    pub trace_hash: u64,
    pub event_hashes: Vec<u64>,
    pub violations: Vec<Violation>,
    pub events_count: u64,
    pub faults_count: u64,
    pub ops_count: u64,
    pub sim_ns: u64,
    pub wall: Duration,
    pub full_resyncs_count: u64,
    pub partial_resyncs_count: u64,
    /// Lost acknowledged writes (Jepsen's count).
    pub loss: Loss,
    /// What the FAILOVER fault did.
    pub failover: FailoverCounts,
    pub history: Option<ClusterHistory>,
}

impl ClusterReport {
    pub fn failed(&self) -> bool {
        !self.violations.is_empty()
    }

    pub fn first_checker(&self) -> Option<&'static str> {
        self.violations.first().map(|v| v.checker)
    }
}

/// Runs `config` and checks it (unless `skip_checks`).
pub fn run(config: &ClusterConfig, print_trace: bool, skip_checks: bool) -> ClusterReport {
    let started = Instant::now();
    let knobs = ClusterKnobs::draw(config);
    let mut violations = Vec::new();
    let trace = TraceHash::new(true, print_trace);
    let mut world = None;
    let panicked = crate::panic::catch(|| {
        let mut w = ClusterWorld::new(config.seed, knobs.clone(), config.bug, trace);
        w.run();
        w
    });
    match panicked {
        Ok(w) => world = Some(w),
        Err(message) => violations.push(Violation {
            checker: "panic",
            message: format!("the multi-node run panicked: {message}"),
        }),
    }
    let (history, trace_hash, event_hashes, events_count, faults_count) = match world {
        Some(mut w) => {
            if w.bound_hit {
                violations.push(Violation {
                    checker: "bounds",
                    message: format!(
                        "the run hit a hard bound after {} events at {} ns",
                        w.events_count, w.now_ns
                    ),
                });
            }
            let hash = w.trace.value();
            let log = w.trace.take_log();
            (w.history, hash, log, w.events_count, w.faults_count)
        }
        None => (ClusterHistory::default(), 0, Vec::new(), 0, 0),
    };
    if !skip_checks && violations.is_empty() {
        for checker in checks::all() {
            match crate::panic::catch(|| checker.check(&history)) {
                Ok(Ok(())) => {}
                Ok(Err(v)) => violations.push(v),
                Err(message) => violations.push(Violation {
                    checker: "panic",
                    message: format!("checker {} panicked: {message}", checker.name()),
                }),
            }
        }
    }
    let full = history
        .sessions
        .iter()
        .filter(|s| s.full == Some(true))
        .count() as u64;
    let partial = history
        .sessions
        .iter()
        .filter(|s| s.full == Some(false))
        .count() as u64;
    ClusterReport {
        config: config.clone(),
        loss: checks::loss(&history),
        failover: checks::failover_counts(&history),
        knobs,
        trace_hash,
        event_hashes,
        violations,
        events_count,
        faults_count,
        ops_count: history.ops.len() as u64,
        sim_ns: history.end_ns,
        wall: started.elapsed(),
        full_resyncs_count: full,
        partial_resyncs_count: partial,
        history: Some(history),
    }
}

/// Runs `config` twice and compares trace hashes.
pub fn check_determinism(config: &ClusterConfig) -> Result<ClusterReport, Violation> {
    let a = run(config, false, false);
    let b = run(config, false, true);
    if a.trace_hash == b.trace_hash && a.event_hashes == b.event_hashes {
        return Ok(a);
    }
    let at = first_divergence(&a.event_hashes, &b.event_hashes);
    Err(Violation {
        checker: "determinism",
        message: format!(
            "seed {}: trace hashes differ ({:016x} vs {:016x}); first diverging event: {:?}",
            config.seed, a.trace_hash, b.trace_hash, at
        ),
    })
}

/// A smaller run that still fails the same checker: fewer requests,
/// fewer clients, no faults, each kept only if the checker still fires.
pub fn shrink(report: &ClusterReport) -> (ClusterConfig, u32) {
    let Some(checker) = report.first_checker() else {
        return (report.config.clone(), 0);
    };
    let mut best = report.config.clone();
    let mut runs_count = 0;
    let fails = |c: &ClusterConfig, runs: &mut u32| {
        *runs += 1;
        run(c, false, false).first_checker() == Some(checker)
    };
    let mut ops = report.knobs.ops_per_client;
    while ops > 1 && runs_count < 40 {
        let candidate = ClusterConfig {
            ops: Some(ops / 2),
            ..best.clone()
        };
        if !fails(&candidate, &mut runs_count) {
            break;
        }
        ops /= 2;
        best = candidate;
    }
    let clients = report.knobs.writers_count + report.knobs.readers_count;
    if clients > 2 {
        let candidate = ClusterConfig {
            clients: Some(2),
            ..best.clone()
        };
        if fails(&candidate, &mut runs_count) {
            best = candidate;
        }
    }
    if !best.no_faults {
        let candidate = ClusterConfig {
            no_faults: true,
            ..best.clone()
        };
        if fails(&candidate, &mut runs_count) {
            best = candidate;
        }
    }
    (best, runs_count)
}
