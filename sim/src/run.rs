//! One run: draw the knobs of a seed, build the world, run it, check the
//! history. Also the repro line that reproduces a run from the shell.

use std::time::{Duration, Instant};

use seedkv_engine::PlantedBug;

use crate::argclass::ArgClasses;
use crate::audit::measure::thread_cpu_ns;
use crate::check::{self, CheckCounts, RunFacts, Violation};
use crate::cost::CostModel;
use crate::history::History;
use crate::knobs::{Knobs, Overrides};
use crate::trace::first_divergence;
use crate::world::{slow_reader_of, World, WorldStats, LIVENESS_BOUND_NS};

/// Everything that determines a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunConfig {
    pub seed: u64,
    pub bug: Option<PlantedBug>,
    pub overrides: Overrides,
}

impl RunConfig {
    pub fn new(seed: u64) -> RunConfig {
        RunConfig {
            seed,
            ..RunConfig::default()
        }
    }

    /// The flags after the subcommand that reproduce this run.
    pub fn flags(&self) -> String {
        let mut s = format!("--seed {}", self.seed);
        if let Some(b) = self.bug {
            s.push_str(&format!(" --bug {}", b.name()));
        }
        s.push_str(&self.overrides.flags());
        s
    }

    /// One copy-pasteable line that replays this run with its event trace.
    pub fn repro_line(&self) -> String {
        format!(
            "cargo run --release -p seedkv-sim -- replay {} --trace",
            self.flags()
        )
    }
}

/// How to run (not what: that is [`RunConfig`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// Print the event trace to stdout.
    pub print_trace: bool,
    /// Keep the per-event hash log (for divergence reports).
    pub record_event_hashes: bool,
    /// Keep the history in the report.
    pub keep_history: bool,
    /// Do not run the checkers (the second run of a determinism check).
    pub skip_checks: bool,
}

/// What a run produced.
#[derive(Debug)]
pub struct RunReport {
    pub config: RunConfig,
    pub knobs: Knobs,
    pub trace_hash: u64,
    pub event_hashes: Vec<u64>,
    /// (virtual time, tag) per logged event, parallel to `event_hashes`.
    pub event_names: Vec<(u64, u64)>,
    pub violations: Vec<Violation>,
    /// Requests the engine executed.
    pub commands_count: u64,
    /// Work units the engine reported for them (keys visited, bytes, ...).
    pub work_units: u64,
    pub ops_count: u64,
    pub sim_ns: u64,
    pub wall: Duration,
    /// Wall time of the simulation alone (the rest went to checkers).
    pub run_wall: Duration,
    /// Wall and thread CPU time of each checker that ran, in
    /// `check::all()` order, then of the coverage and argument-class
    /// counts (named `coverage` and `arg-classes`).
    pub check_walls: Vec<CheckTime>,
    /// This thread's CPU time for the whole run, and for the simulation
    /// alone: wall time counts the waits of a loaded machine too, CPU
    /// time only this run's work, so figures compare across loads.
    pub cpu_ns: u64,
    pub sim_cpu_ns: u64,
    /// Replies the checkers compared with a prediction, and declined to.
    pub model_counts: CheckCounts,
    pub stats: WorldStats,
    /// The argument classes the run's requests reached.
    pub arg_classes: ArgClasses,
    pub history: Option<History>,
    /// What the run exercised (commands, options, shapes).
    pub coverage: crate::coverage::Coverage,
}

impl RunReport {
    pub fn failed(&self) -> bool {
        !self.violations.is_empty()
    }

    /// The first violated checker's name.
    pub fn first_checker(&self) -> Option<&'static str> {
        self.violations.first().map(|v| v.checker)
    }
}

/// What one checker (or count) of a run cost.
#[derive(Clone, Copy, Debug)]
pub struct CheckTime {
    pub name: &'static str,
    pub wall: Duration,
    /// Thread CPU time: on a loaded machine, the figure that compares.
    pub cpu_ns: u64,
}

impl CheckTime {
    /// Runs `f`, timing it under `name`.
    fn measure<T>(name: &'static str, times: &mut Vec<CheckTime>, f: impl FnOnce() -> T) -> T {
        let (started, cpu_started_ns) = (Instant::now(), thread_cpu_ns());
        let out = f();
        times.push(CheckTime {
            name,
            wall: started.elapsed(),
            cpu_ns: thread_cpu_ns().saturating_sub(cpu_started_ns),
        });
        out
    }
}

/// The facts checkers get besides the history.
pub fn facts_for(config: &RunConfig, knobs: &Knobs) -> RunFacts {
    let cost = CostModel::default();
    RunFacts {
        seed: config.seed,
        // A fast command alone: two one-way trips, its own CPU time, and a
        // full CPU turn of every other client's work queued ahead of it.
        fast_latency_bound_ns: 2 * knobs.net.one_way_ns_max()
            + (knobs.clients_count as u64 + 1) * cost.fast_command_ns_max(),
        liveness_bound_ns: LIVENESS_BOUND_NS,
        slow_readers: (0..knobs.clients_count)
            .map(|client| slow_reader_of(config.seed, knobs, client))
            .collect(),
    }
}

/// Runs `config` and checks it.
pub fn run(config: &RunConfig, options: RunOptions) -> RunReport {
    let started = Instant::now();
    let cpu_started_ns = thread_cpu_ns();
    let knobs = Knobs::draw(config.seed, &config.overrides);
    let mut world = World::new_configured(
        config.seed,
        knobs.clone(),
        config.bug,
        (options.record_event_hashes, options.print_trace),
        // Only a checker (no-freeze) reads the engine's per-execution
        // sizes; measuring them is instrumentation, not simulation (6% of
        // the light mix's instructions), and changes no byte of the run.
        |engine| engine.record_sizes = !options.skip_checks,
    );
    // A panic (in the engine or the simulator) fails this seed like any
    // checker would, with its repro line; the sweep goes on with the rest.
    let panicked = crate::panic::catch(|| world.run()).err();
    let run_wall = started.elapsed();
    let sim_cpu_ns = thread_cpu_ns().saturating_sub(cpu_started_ns);
    let facts = facts_for(config, &knobs);
    let history = std::mem::take(&mut world.history);
    let mut violations = Vec::new();
    let mut check_walls = Vec::new();
    let mut model_counts = CheckCounts::default();
    if let Some(message) = panicked {
        violations.push(Violation {
            checker: "panic",
            message: format!(
                "the run panicked after {} events at {} ns: {message}",
                world.stats.events_count,
                world.now_ns()
            ),
        });
    }
    // A history cut short by a panic is not worth checking.
    let skip_checks = options.skip_checks || !violations.is_empty();
    for checker in check::all().into_iter().filter(|_| !skip_checks) {
        let counted = |counts: &mut CheckCounts| checker.check_counted(&history, &facts, counts);
        let verdict = CheckTime::measure(checker.name(), &mut check_walls, || {
            crate::panic::catch(|| counted(&mut model_counts))
        });
        match verdict {
            Ok(Ok(())) => {}
            Ok(Err(v)) => violations.push(v),
            Err(message) => violations.push(Violation {
                checker: "panic",
                message: format!("checker {} panicked: {message}", checker.name()),
            }),
        }
    }
    if world.stats.bound_hit {
        violations.push(Violation {
            checker: "bounds",
            message: format!(
                "the run hit a hard bound after {} events at {} ns",
                world.stats.events_count,
                world.now_ns()
            ),
        });
    }
    let coverage = CheckTime::measure("coverage", &mut check_walls, || {
        crate::coverage::Coverage::of_run(&history)
    });
    let arg_classes = CheckTime::measure("arg-classes", &mut check_walls, || {
        ArgClasses::of_history(&history)
    });
    RunReport {
        config: config.clone(),
        knobs,
        trace_hash: world.trace.value(),
        event_names: (0..world.trace.events_count() as usize)
            .map_while(|i| world.trace.logged_event(i))
            .collect(),
        event_hashes: world.trace.take_log(),
        violations,
        commands_count: history.executions.len() as u64,
        work_units: history.executions.iter().map(|e| e.work_units).sum(),
        ops_count: history.ops.len() as u64,
        sim_ns: history.end_ns,
        wall: started.elapsed(),
        run_wall,
        check_walls,
        cpu_ns: thread_cpu_ns().saturating_sub(cpu_started_ns),
        sim_cpu_ns,
        model_counts,
        stats: world.stats.clone(),
        coverage,
        arg_classes,
        history: options.keep_history.then_some(history),
    }
}

/// Runs `config` with its knobs, network and fault choices read from
/// `choices` (fuzzer bytes, see [`crate::rng::with_choices`]) instead of
/// drawn from the seed; the workloads stay seeded, so requests stay valid.
/// The `sim_schedule` fuzz target; not reproducible from `--seed` alone.
pub fn run_with_choices(config: &RunConfig, options: RunOptions, choices: &[u8]) -> RunReport {
    crate::rng::with_choices(choices, || run(config, options))
}

/// Runs `config` twice and compares trace hashes. On a mismatch, names the
/// first event at which the two runs diverged.
pub fn check_determinism(config: &RunConfig) -> Result<RunReport, Violation> {
    let options = RunOptions {
        record_event_hashes: true,
        ..RunOptions::default()
    };
    let a = run(config, options);
    let b = run(
        config,
        RunOptions {
            skip_checks: true,
            ..options
        },
    );
    if a.trace_hash == b.trace_hash && a.event_hashes == b.event_hashes {
        return Ok(a);
    }
    let at = first_divergence(&a.event_hashes, &b.event_hashes);
    let name = |r: &RunReport, i: usize| {
        r.event_names
            .get(i)
            .map_or("(not logged)".to_string(), |&(t, tag)| {
                format!("{} at {} ns", crate::world::describe_tag(tag), t)
            })
    };
    Err(Violation {
        checker: "determinism",
        message: match at {
            Some(i) => format!(
                "seed {}: trace hashes differ ({:016x} vs {:016x}); first diverging event: #{} — \
                 first run: {}, second run: {} (replay with --trace; it is line {} there)",
                config.seed,
                a.trace_hash,
                b.trace_hash,
                i + 1,
                name(&a, i),
                name(&b, i),
                i + 1
            ),
            None => format!(
                "seed {}: trace hashes differ ({:016x} vs {:016x}) after the logged events",
                config.seed, a.trace_hash, b.trace_hash
            ),
        },
    })
}
