//! The simulator's command line: `run`, `sweep`, `replay` and `report`.
//!
//! Any failure prints one line that reproduces it and exits non-zero.

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use seedkv_engine::PlantedBug;
use seedkv_sim::cluster::{cli as cluster_cli, ClusterConfig};
use seedkv_sim::knobs::Overrides;
use seedkv_sim::persistence::PersistMode;
use seedkv_sim::run::{check_determinism, run, RunConfig, RunOptions, RunReport};
use seedkv_sim::shrink::shrink;
use seedkv_sim::sweep::{sweep, SweepConfig};
use seedkv_sim::workload::WorkloadKind;

/// See the `mimalloc` line of sim/Cargo.toml: allocation is a large part
/// of a run's CPU, and no result depends on where a block lands.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc's `mi_option_t` (the same index in
/// its v2 and v3 headers; libmimalloc-sys exports no constant for it).
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;
/// mimalloc's default purge delay (v3), in milliseconds: the index check.
const MI_PURGE_DELAY_DEFAULT_MS: std::ffi::c_long = 1000;

extern "C" {
    fn mi_option_get(option: std::ffi::c_int) -> std::ffi::c_long;
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}

/// Keeps freed memory mapped: mimalloc returns pages to the OS a second
/// after they are freed, and a sweep frees a whole world per seed (about
/// a second of CPU), so every seed faulted its memory back in and the
/// kernel zeroed it again: 48,645 page faults and ~15% of the CPU of
/// `sweep --seeds 5` (593 faults without purging). A sweep's footprint
/// is then its largest seed per worker, which it reaches anyway.
///
/// Leaves the option alone unless it still holds the default (a
/// `MIMALLOC_PURGE_DELAY` in the environment wins, and a renumbered
/// option in a later mimalloc is not written blindly).
fn keep_freed_memory_mapped() {
    // SAFETY: plain C calls on an option index mimalloc defines, made at
    // the start of main, before any other thread exists (mimalloc's
    // option setters are not thread-safe).
    unsafe {
        if mi_option_get(MI_OPTION_PURGE_DELAY) == MI_PURGE_DELAY_DEFAULT_MS {
            mi_option_set(MI_OPTION_PURGE_DELAY, -1);
        }
    }
}

/// `PR_SET_THP_DISABLE` in linux/prctl.h.
#[cfg(target_os = "linux")]
const PR_SET_THP_DISABLE: std::ffi::c_int = 41;

#[cfg(target_os = "linux")]
extern "C" {
    fn prctl(option: std::ffi::c_int, ...) -> std::ffi::c_int;
}

/// Turns transparent huge pages off for this process: mimalloc's arenas
/// are THP-eligible, so every first touch of a 2 MiB region made the
/// kernel zero all of it, and a seed that grows big Lua tables or
/// collections touched fresh regions all along (seeds 86-89: 0.9-1.5 s
/// of system time for 6 s of user time; 0.3 s with 4 KiB pages, and no
/// slower in user time). Nothing a run computes depends on page size.
fn no_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: a plain prctl on this process with integer arguments; a
    // kernel without the option answers EINVAL, which is harmless.
    unsafe {
        prctl(
            PR_SET_THP_DISABLE,
            1 as std::ffi::c_ulong,
            0 as std::ffi::c_ulong,
            0 as std::ffi::c_ulong,
            0 as std::ffi::c_ulong,
        );
    }
}

#[derive(Parser)]
#[command(
    name = "seedkv-sim",
    about = "Deterministic simulation testing for seedkv"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one seed (twice, comparing trace hashes) and check it.
    Run {
        #[arg(long)]
        seed: u64,
        #[command(flatten)]
        knobs: KnobArgs,
        /// Print the event trace.
        #[arg(long)]
        trace: bool,
        /// Do not minimise a failing run.
        #[arg(long)]
        no_shrink: bool,
    },
    /// Run many seeds in parallel and print a summary.
    Sweep {
        /// How many seeds.
        #[arg(long, default_value_t = 1000)]
        seeds: u64,
        /// The first seed.
        #[arg(long, default_value_t = 0)]
        start: u64,
        /// Worker threads (default: available cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// Run only shard I of N (seeds with seed % N == I), as `I/N`.
        #[arg(long)]
        shard: Option<String>,
        #[command(flatten)]
        knobs: KnobArgs,
        /// Do not minimise the first failure.
        #[arg(long)]
        no_shrink: bool,
        /// Skip the checkers (measures the simulator alone; finds nothing).
        #[arg(long)]
        no_checks: bool,
        /// Print the full coverage table (every command, option and shape
        /// with its count), not only the totals and the zero rows.
        #[arg(long)]
        coverage: bool,
        /// Write one line per seed (trace hash, counts, verdict), sorted by
        /// seed, to this file: two sweeps of one build, or of two builds
        /// that must agree, are then compared with `diff`.
        #[arg(long)]
        seed_log: Option<std::path::PathBuf>,
    },
    /// Re-run one seed exactly, optionally printing its event trace.
    Replay {
        #[arg(long)]
        seed: u64,
        #[command(flatten)]
        knobs: KnobArgs,
        #[arg(long)]
        trace: bool,
    },
    /// Black-box mode: the workloads and history-only checkers over real
    /// TCP against a real server on a loopback address (real time).
    Probe(seedkv_sim::probe::cli::ProbeArgs),
    /// Measuring tools outside the deterministic runs (`audit cost`).
    Audit {
        #[command(subcommand)]
        audit: seedkv_sim::audit::AuditCommand,
    },
    /// Experiments that print a table (`report latency`: seed 002).
    Report {
        #[command(subcommand)]
        report: seedkv_sim::report::cli::ReportCommand,
    },
}

#[derive(Args, Clone)]
struct KnobArgs {
    /// A planted engine bug, by name.
    #[arg(long)]
    bug: Option<String>,
    /// Override the number of clients.
    #[arg(long)]
    clients: Option<u32>,
    /// Override the number of requests.
    #[arg(long)]
    ops: Option<u64>,
    /// Inject no faults.
    #[arg(long)]
    no_faults: bool,
    /// Run only these workloads, comma-separated (kv, counter, pipeline,
    /// scan, ttl, big, ping).
    #[arg(long, value_delimiter = ',')]
    workloads: Option<Vec<String>>,
    /// Give the server a modelled disk and persist: rdb, aof-always,
    /// aof-everysec or aof-no.
    #[arg(long)]
    persistence: Option<String>,
    /// With --persistence: crash the server once at a seeded time, restart
    /// it over the same disk and check what it recovered.
    #[arg(long)]
    crash: bool,
    /// With --persistence: inject no disk faults (errors, short writes,
    /// a full disk); crash semantics stay.
    #[arg(long)]
    no_disk_faults: bool,
    /// The multi-node world: a primary and this many replicas, with
    /// partitions and crashes drawn per seed and the replication checkers.
    #[arg(long)]
    replicas: Option<u32>,
}

impl KnobArgs {
    fn bug(&self) -> Result<Option<PlantedBug>, String> {
        match &self.bug {
            None => Ok(None),
            Some(name) => PlantedBug::from_name(name).map(Some).ok_or_else(|| {
                let names: Vec<&str> = PlantedBug::ALL.iter().map(|b| b.name()).collect();
                format!("unknown bug {name:?}; known: {}", names.join(", "))
            }),
        }
    }

    fn overrides(&self) -> Result<Overrides, String> {
        let workloads = match &self.workloads {
            None => None,
            Some(names) => Some(
                names
                    .iter()
                    .map(|n| {
                        WorkloadKind::from_name(n).ok_or_else(|| format!("unknown workload {n:?}"))
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        if workloads.as_ref().is_some_and(|w| w.is_empty()) {
            return Err("--workloads needs at least one".into());
        }
        let persistence = match &self.persistence {
            None => None,
            Some(name) => Some(PersistMode::from_name(name).ok_or_else(|| {
                format!(
                    "unknown persistence {name:?}; known: rdb, aof-always, aof-everysec, aof-no"
                )
            })?),
        };
        if persistence.is_none() && (self.crash || self.no_disk_faults) {
            return Err("--crash and --no-disk-faults need --persistence".into());
        }
        Ok(Overrides {
            clients: self.clients,
            ops: self.ops,
            no_faults: self.no_faults,
            workloads,
            persistence,
            crash: self.crash,
            no_disk_faults: self.no_disk_faults,
        })
    }

    /// The multi-node run of `seed`, if `--replicas` asks for one.
    fn cluster(&self, seed: u64) -> Result<Option<ClusterConfig>, String> {
        let Some(replicas) = self.replicas else {
            return Ok(None);
        };
        if !(1..=seedkv_sim::cluster::REPLICAS_MAX).contains(&replicas) {
            return Err(format!(
                "--replicas wants 1..={}",
                seedkv_sim::cluster::REPLICAS_MAX
            ));
        }
        if self.workloads.is_some() || self.persistence.is_some() || self.crash {
            return Err("--replicas runs its own workload, disks and crashes".into());
        }
        Ok(Some(ClusterConfig {
            seed,
            replicas,
            bug: self.bug()?,
            clients: self.clients,
            ops: self.ops,
            no_faults: self.no_faults,
        }))
    }

    fn config(&self, seed: u64) -> Result<RunConfig, String> {
        Ok(RunConfig {
            seed,
            bug: self.bug()?,
            overrides: self.overrides()?,
        })
    }
}

fn main() -> ExitCode {
    keep_freed_memory_mapped();
    no_transparent_huge_pages();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run {
            seed,
            knobs,
            trace,
            no_shrink,
        } => match knobs.cluster(seed) {
            Ok(Some(c)) => Ok(cluster_cli::cmd_run(&c, trace, no_shrink)),
            Ok(None) => knobs.config(seed).map(|c| cmd_run(&c, trace, no_shrink)),
            Err(e) => Err(e),
        },
        Command::Replay { seed, knobs, trace } => match knobs.cluster(seed) {
            Ok(Some(c)) => Ok(cluster_cli::cmd_replay(&c, trace)),
            Ok(None) => knobs.config(seed).map(|c| cmd_replay(&c, trace)),
            Err(e) => Err(e),
        },
        Command::Report { report } => report.run(),
        Command::Audit { audit } => audit.run(),
        Command::Probe(args) => return seedkv_sim::probe::cli::run(&args),
        Command::Sweep {
            seeds,
            start,
            jobs,
            shard,
            knobs,
            no_shrink,
            no_checks,
            coverage,
            seed_log,
        } if knobs.replicas.is_some() => knobs.cluster(start).and_then(|base| {
            if shard.is_some() || no_checks || coverage {
                return Err("--replicas sweeps take no --shard, --no-checks or --coverage".into());
            }
            let jobs =
                jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
            let base = base.expect("--replicas given");
            Ok(cluster_cli::cmd_sweep(
                &base,
                start,
                seeds,
                jobs,
                no_shrink,
                seed_log.as_deref(),
            ))
        }),
        Command::Sweep {
            seeds,
            start,
            jobs,
            shard,
            knobs,
            no_shrink,
            no_checks,
            coverage,
            seed_log,
        } => parse_shard(shard.as_deref()).and_then(|(shard_index, shard_count)| {
            Ok(cmd_sweep(
                SweepConfig {
                    start,
                    seeds_count: seeds,
                    jobs: jobs.unwrap_or_else(|| {
                        std::thread::available_parallelism().map_or(1, |n| n.get())
                    }),
                    shard_index,
                    shard_count,
                    bug: knobs.bug()?,
                    overrides: knobs.overrides()?,
                    stop_at_first_failure: false,
                    skip_checks: no_checks,
                },
                no_shrink,
                coverage,
                seed_log.as_deref(),
            ))
        }),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("seedkv-sim: {e}");
            ExitCode::from(2)
        }
    }
}

fn parse_shard(s: Option<&str>) -> Result<(u64, u64), String> {
    let Some(s) = s else { return Ok((0, 1)) };
    let (i, n) = s.split_once('/').ok_or("--shard wants I/N")?;
    let i: u64 = i.parse().map_err(|_| "--shard: bad I")?;
    let n: u64 = n.parse().map_err(|_| "--shard: bad N")?;
    if n == 0 || i >= n {
        return Err("--shard I/N needs 0 <= I < N".into());
    }
    Ok((i, n))
}

fn describe(report: &RunReport) {
    let k = &report.knobs;
    let names: Vec<&str> = k.workloads.iter().map(|w| w.name()).collect();
    println!(
        "seed {}: {} clients, {} requests, workloads [{}], latency {} us, faults {:?}",
        report.config.seed,
        k.clients_count,
        k.ops_count,
        names.join(" "),
        k.net.latency_ns / 1000,
        k.faults
    );
    println!(
        "  {} commands executed, {} events, {} faults, {:.3} s simulated in {:.3} s wall ({:.3} s simulating), trace hash {:016x}",
        report.commands_count,
        report.stats.events_count,
        report.stats.faults_count,
        report.sim_ns as f64 / 1e9,
        report.wall.as_secs_f64(),
        report.run_wall.as_secs_f64(),
        report.trace_hash
    );
}

/// Prints a failing report, shrinks it (unless told not to) and prints the
/// repro lines.
fn report_failure(report: RunReport, no_shrink: bool) {
    for v in &report.violations {
        println!("FAIL [{}] {}", v.checker, v.message);
    }
    println!("repro: {}", report.config.repro_line());
    if no_shrink {
        return;
    }
    let checker = report.first_checker().unwrap_or("?");
    let shrunk = shrink(report);
    println!(
        "shrunk in {} runs: {} clients, {} requests, faults {} (still fails {checker})",
        shrunk.runs_count,
        shrunk.report.knobs.clients_count,
        shrunk.report.knobs.ops_count,
        if shrunk.config.overrides.no_faults {
            "off"
        } else {
            "on"
        },
    );
    println!("repro (shrunk): {}", shrunk.config.repro_line());
}

fn cmd_run(config: &RunConfig, trace: bool, no_shrink: bool) -> bool {
    if trace {
        return cmd_replay(config, true);
    }
    match check_determinism(config) {
        Ok(report) => {
            describe(&report);
            if report.failed() {
                report_failure(report, no_shrink);
                return false;
            }
            println!("ok (deterministic: two runs, equal trace hashes)");
            true
        }
        Err(v) => {
            println!("FAIL [{}] {}", v.checker, v.message);
            println!("repro: {}", config.repro_line());
            false
        }
    }
}

fn cmd_replay(config: &RunConfig, trace: bool) -> bool {
    let report = run(
        config,
        RunOptions {
            print_trace: trace,
            ..RunOptions::default()
        },
    );
    describe(&report);
    if report.failed() {
        report_failure(report, true);
        return false;
    }
    println!("ok");
    true
}

/// One seed's line for `--seed-log`: everything that must not change when
/// only the simulator's speed does.
fn seed_log_line(r: &RunReport) -> String {
    let verdict = match r.violations.first() {
        None => "ok".to_string(),
        Some(v) => format!("FAIL [{}] {}", v.checker, v.message),
    };
    format!(
        "seed {} trace {:016x} commands {} ops {} events {} sim_ns {} compared {} declined {} {verdict}\n",
        r.config.seed,
        r.trace_hash,
        r.commands_count,
        r.ops_count,
        r.stats.events_count,
        r.sim_ns,
        r.model_counts.compared,
        r.model_counts.declined,
    )
}

fn cmd_sweep(
    config: SweepConfig,
    no_shrink: bool,
    coverage_full: bool,
    seed_log: Option<&std::path::Path>,
) -> bool {
    let total =
        (config.seeds_count + config.shard_count - 1 - config.shard_index.min(config.seeds_count))
            / config.shard_count;
    let bar = ProgressBar::new(total.max(1));
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:40} {pos}/{len} seeds  {elapsed_precise} eta {eta}  {msg}",
        )
        .expect("template"),
    );
    let failures = std::sync::atomic::AtomicU64::new(0);
    let seed_lines = std::sync::Mutex::new(Vec::new());
    let summary = sweep(&config, &|r: &RunReport| {
        if seed_log.is_some() {
            let line = seed_log_line(r);
            seed_lines
                .lock()
                .expect("seed lines")
                .push((r.config.seed, line));
        }
        if r.failed() {
            let n = failures.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            bar.set_message(format!("{n} failing"));
        }
        bar.inc(1);
    });
    bar.finish_and_clear();
    if let Some(path) = seed_log {
        let mut lines = seed_lines.into_inner().expect("seed lines");
        lines.sort();
        let text: String = lines.into_iter().map(|(_, line)| line).collect();
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("seedkv-sim: cannot write {}: {e}", path.display());
            return false;
        }
    }
    println!("sweep summary");
    print!("{}", summary.table(config.jobs));
    print!("{}", summary.coverage.report(coverage_full));
    println!("{}", summary.arg_classes.summary_line());
    if summary.failures_count == 0 {
        return true;
    }
    for r in summary.failures.iter().take(10) {
        let v = &r.violations[0];
        println!("seed {} FAIL [{}] {}", r.config.seed, v.checker, v.message);
    }
    let mut failures = summary.failures;
    let first = failures.remove(0);
    report_failure(first, no_shrink);
    false
}
