//! Sweeps: many seeds over worker threads (threads live only here, in the
//! CLI's driver — a run itself is single-threaded and deterministic), with
//! a summary of what was simulated and how fast.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use seedkv_engine::PlantedBug;

use crate::check::CheckCounts;
use crate::knobs::Overrides;
use crate::run::{run, CheckTime, RunConfig, RunOptions, RunReport};

/// Worker threads at most.
pub const SWEEP_JOBS_MAX: usize = 256;
/// Failures kept in full (the rest are only counted).
pub const SWEEP_FAILURES_KEPT_MAX: usize = 100;

#[derive(Clone, Debug)]
pub struct SweepConfig {
    pub start: u64,
    pub seeds_count: u64,
    pub jobs: usize,
    /// Run only seeds with `seed % shard_count == shard_index`.
    pub shard_index: u64,
    pub shard_count: u64,
    pub bug: Option<PlantedBug>,
    pub overrides: Overrides,
    /// Stop at the first failure (used by tests that hunt planted bugs).
    pub stop_at_first_failure: bool,
    /// Skip the checkers (to measure the simulator alone).
    pub skip_checks: bool,
}

/// Totals over a sweep.
#[derive(Debug, Default)]
pub struct SweepSummary {
    pub seeds_count: u64,
    pub commands_count: u64,
    pub work_units: u64,
    pub ops_count: u64,
    pub faults_count: u64,
    pub events_count: u64,
    pub sim_ns: u64,
    pub wall: Duration,
    /// Summed wall time of the runs (CPU time of workers, roughly).
    pub run_wall: Duration,
    /// Of `run_wall`, the part spent simulating (the rest went to checkers).
    pub sim_wall: Duration,
    /// Thread CPU time of the runs, and of their simulations alone (see
    /// [`RunReport::cpu_ns`]): the per-core figures that a machine shared
    /// with other work does not inflate.
    pub cpu_ns: u64,
    pub sim_cpu_ns: u64,
    /// Wall and CPU time per checker (and count), summed over runs, in
    /// [`RunReport::check_walls`] order.
    pub check_walls: Vec<CheckTime>,
    /// Replies the reference model compared, and declined to predict.
    pub model_counts: CheckCounts,
    pub failures_count: u64,
    /// Failing runs, lowest seed first.
    pub failures: Vec<RunReport>,
    /// Commands, options and shapes the runs exercised, merged.
    pub coverage: crate::coverage::Coverage,
    /// The argument classes every seed's requests reached together.
    pub arg_classes: crate::argclass::ArgClasses,
    /// Persistence runs: crashes, recovered keys, the disk.
    pub persist: crate::persistence::PersistStats,
}

impl SweepSummary {
    pub fn table(&self, jobs: usize) -> String {
        let wall_s = self.wall.as_secs_f64().max(1e-9);
        let run_s = self.run_wall.as_secs_f64().max(1e-9);
        let sim_s = self.sim_ns as f64 / 1e9;
        let mut t = String::new();
        let mut row = |k: &str, v: String| t.push_str(&format!("  {k:<34} {v}\n"));
        row("seeds", self.seeds_count.to_string());
        row("simulated commands", self.commands_count.to_string());
        row("requests sent", self.ops_count.to_string());
        row("engine work units", self.work_units.to_string());
        row("faults injected", self.faults_count.to_string());
        row("events", self.events_count.to_string());
        let p = &self.persist;
        if p.runs_count > 0 {
            row(
                "persistence: crashes / keys back",
                format!("{} / {}", p.crashes_count, p.recovered_keys_count),
            );
            row(
                "persistence: snapshots / exits",
                format!("{} / {}", p.snapshots_count, p.exits_count),
            );
            row(
                "disk: fsyncs / MB appended",
                format!("{} / {:.1}", p.fsyncs_count, p.bytes_appended as f64 / 1e6),
            );
            row(
                "disk: faults / torn sectors",
                format!("{} / {}", p.disk_faults_count, p.torn_sectors_count),
            );
        }
        row("simulated time", format!("{sim_s:.1} s"));
        row("wall time", format!("{wall_s:.2} s ({jobs} jobs)"));
        row(
            "wall time per core: sim / checks",
            format!(
                "{:.2} s / {:.2} s",
                self.sim_wall.as_secs_f64(),
                (self.run_wall - self.sim_wall).as_secs_f64()
            ),
        );
        let (cpu_s, sim_cpu_s) = (
            (self.cpu_ns as f64 / 1e9).max(1e-9),
            (self.sim_cpu_ns as f64 / 1e9).max(1e-9),
        );
        row(
            "CPU time per core: sim / checks",
            format!("{sim_cpu_s:.2} s / {:.2} s", cpu_s - sim_cpu_s),
        );
        for t in &self.check_walls {
            row(
                &format!("  checker {}", t.name),
                format!(
                    "{:.2} s CPU ({:.2} s wall)",
                    t.cpu_ns as f64 / 1e9,
                    t.wall.as_secs_f64()
                ),
            );
        }
        row(
            "replies compared / declined",
            format!(
                "{} / {} ({:.1}% compared)",
                self.model_counts.compared,
                self.model_counts.declined,
                self.model_counts.compared_percent()
            ),
        );
        row("failures", self.failures_count.to_string());
        row(
            "commands per wall second",
            format!("{:.0}", self.commands_count as f64 / wall_s),
        );
        row(
            "commands per wall second per core",
            format!("{:.0}", self.commands_count as f64 / run_s),
        );
        row(
            "commands per CPU second per core",
            format!("{:.0}", self.commands_count as f64 / cpu_s),
        );
        row(
            "without checkers: commands/CPU s/core",
            format!("{:.0}", self.commands_count as f64 / sim_cpu_s),
        );
        row(
            "seeds per wall second",
            format!("{:.1}", self.seeds_count as f64 / wall_s),
        );
        row(
            "simulated / wall time (per core)",
            format!("{:.0}x", sim_s / run_s),
        );
        let sim_only_s = self.sim_wall.as_secs_f64().max(1e-9);
        row(
            "without checkers: commands/s/core",
            format!("{:.0}", self.commands_count as f64 / sim_only_s),
        );
        row(
            "without checkers: simulated / wall",
            format!("{:.0}x", sim_s / sim_only_s),
        );
        row(
            "without checkers: work units/s/core",
            format!("{:.0}", self.work_units as f64 / sim_only_s),
        );
        t
    }
}

/// Runs the sweep; `on_done` is called after each seed (for progress).
pub fn sweep(config: &SweepConfig, on_done: &(dyn Fn(&RunReport) + Sync)) -> SweepSummary {
    assert!(config.shard_count >= 1 && config.shard_index < config.shard_count);
    let jobs = config.jobs.clamp(1, SWEEP_JOBS_MAX);
    let started = Instant::now();
    let next = AtomicU64::new(0);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let summary = Mutex::new(SweepSummary::default());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= config.seeds_count {
                    break;
                }
                let seed = config.start + i;
                if seed % config.shard_count != config.shard_index {
                    continue;
                }
                let rc = RunConfig {
                    seed,
                    bug: config.bug,
                    overrides: config.overrides.clone(),
                };
                let report = run(
                    &rc,
                    RunOptions {
                        skip_checks: config.skip_checks,
                        ..RunOptions::default()
                    },
                );
                on_done(&report);
                let mut sum = summary.lock().expect("summary lock");
                sum.seeds_count += 1;
                sum.commands_count += report.commands_count;
                sum.work_units += report.work_units;
                sum.ops_count += report.ops_count;
                sum.faults_count += report.stats.faults_count;
                sum.events_count += report.stats.events_count;
                sum.sim_ns += report.sim_ns;
                sum.run_wall += report.wall;
                sum.sim_wall += report.run_wall;
                sum.cpu_ns += report.cpu_ns;
                sum.sim_cpu_ns += report.sim_cpu_ns;
                sum.arg_classes.merge(&report.arg_classes);
                sum.persist.add(&report.stats.persist);
                sum.model_counts.add(report.model_counts);
                sum.coverage.merge(&report.coverage);
                // By name: a run whose checkers were skipped (a panic)
                // timed only the counts.
                for t in &report.check_walls {
                    match sum.check_walls.iter_mut().find(|s| s.name == t.name) {
                        Some(slot) => {
                            slot.wall += t.wall;
                            slot.cpu_ns += t.cpu_ns;
                        }
                        None => sum.check_walls.push(*t),
                    }
                }
                if report.failed() {
                    sum.failures_count += 1;
                    if config.stop_at_first_failure {
                        stop.store(true, Ordering::Relaxed);
                    }
                    if sum.failures.len() < SWEEP_FAILURES_KEPT_MAX {
                        sum.failures.push(report);
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
