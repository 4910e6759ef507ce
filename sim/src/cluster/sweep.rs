//! The multi-node sweep: many seeds over worker threads (threads live only
//! here; each run is single-threaded and deterministic), with a summary.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{run, ClusterConfig, ClusterReport};
use crate::check::cluster::{FailoverCounts, Loss};

/// Worker threads at most, and failures kept in full.
pub const CLUSTER_JOBS_MAX: usize = 64;
pub const CLUSTER_FAILURES_KEPT_MAX: usize = 100;

/// Totals over a multi-node sweep.
#[derive(Debug, Default)]
pub struct ClusterSummary {
    pub seeds_count: u64,
    pub ops_count: u64,
    pub events_count: u64,
    pub faults_count: u64,
    pub partitions_count: u64,
    pub sim_ns: u64,
    pub full_resyncs_count: u64,
    pub partial_resyncs_count: u64,
    pub loss: Loss,
    pub failover: FailoverCounts,
    pub wall: Duration,
    pub failures_count: u64,
    /// Per checker: the runs it failed, and the lowest such seed.
    pub by_checker: std::collections::BTreeMap<&'static str, (u64, u64)>,
    /// Failing runs, lowest seed first.
    pub failures: Vec<ClusterReport>,
}

impl ClusterSummary {
    /// The summary as a Markdown table.
    pub fn table(&self, replicas: u32, jobs: usize) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "| seeds | replicas | client requests | faults (crashes) | partitions | resyncs full / partial | simulated | wall ({jobs} jobs) | lost acked writes (WAIT-confirmed) | failures |");
        let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|");
        let _ = writeln!(
            s,
            "| {} | {replicas} | {} | {} | {} | {} / {} | {:.1} s | {:.1} s | {} of {} ({}) | {} |",
            self.seeds_count,
            self.ops_count,
            self.faults_count,
            self.partitions_count,
            self.full_resyncs_count,
            self.partial_resyncs_count,
            self.sim_ns as f64 / 1e9,
            self.wall.as_secs_f64(),
            self.loss.lost_count,
            self.loss.acked_count,
            self.loss.wait_confirmed_lost_count,
            self.failures_count
        );
        let f = &self.failover;
        let _ = writeln!(
            s,
            "failovers: {} requested, {} accepted, {} completed ({} by FORCE), {} aborted; acked appends before them lost: {} (WAIT-confirmed: {} of {} checked)",
            f.requested_count,
            f.accepted_count,
            f.completed_count,
            f.forced_count,
            f.aborted_count,
            f.lost_count,
            f.lost_confirmed_count,
            f.confirmed_count
        );
        for (checker, (count, first)) in &self.by_checker {
            let _ = writeln!(s, "  {checker}: {count} runs fail it (first: seed {first})");
        }
        s
    }
}

/// Runs seeds `start..start + seeds_count` of `base` on `jobs` threads;
/// `on_done` sees every report as it finishes.
pub fn sweep(
    base: &ClusterConfig,
    start: u64,
    seeds_count: u64,
    jobs: usize,
    on_done: &(dyn Fn(&ClusterReport) + Sync),
) -> ClusterSummary {
    let started = Instant::now();
    let next = AtomicU64::new(0);
    let summary = Mutex::new(ClusterSummary::default());
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, CLUSTER_JOBS_MAX) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= seeds_count {
                    break;
                }
                let config = ClusterConfig {
                    seed: start + i,
                    ..base.clone()
                };
                let mut report = run(&config, false, false);
                report.history = None;
                on_done(&report);
                let mut t = summary.lock().expect("summary lock");
                t.seeds_count += 1;
                t.ops_count += report.ops_count;
                t.events_count += report.events_count;
                t.faults_count += report.faults_count;
                t.partitions_count += report.knobs.partitions.partitions.len() as u64;
                t.sim_ns += report.sim_ns;
                t.full_resyncs_count += report.full_resyncs_count;
                t.partial_resyncs_count += report.partial_resyncs_count;
                t.loss.add(report.loss);
                t.failover.add(report.failover);
                for v in &report.violations {
                    let e = t.by_checker.entry(v.checker).or_insert((0, u64::MAX));
                    e.0 += 1;
                    e.1 = e.1.min(report.config.seed);
                }
                if report.failed() {
                    t.failures_count += 1;
                    if t.failures.len() < CLUSTER_FAILURES_KEPT_MAX {
                        t.failures.push(report);
                    }
                }
            });
        }
    });
    let mut summary = summary.into_inner().expect("summary lock");
    summary.failures.sort_by_key(|r| r.config.seed);
    summary.wall = started.elapsed();
    summary
}
