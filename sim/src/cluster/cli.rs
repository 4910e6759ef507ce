//! `run`, `replay` and `sweep` with `--replicas N`: the multi-node world
//! from the command line, with the same repro and shrink lines as the
//! one-node world.

use super::sweep::sweep;
use super::{check_determinism, run, shrink, ClusterConfig, ClusterReport};

fn describe(r: &ClusterReport) {
    let k = &r.knobs;
    println!(
        "seed {}: primary + {} replicas, {} writers, {} readers, {} requests each, backlog {} bytes, repl-timeout {} s, {}, appendfsync {}, {} partitions, {} crashes",
        r.config.seed,
        k.replicas_count,
        k.writers_count,
        k.readers_count,
        k.ops_per_client,
        k.repl.backlog_bytes,
        k.repl.timeout_s,
        if k.repl.diskless { "diskless" } else { "disk-based" },
        k.repl.appendfsync,
        k.partitions.partitions.len(),
        k.crashes.len()
    );
    println!(
        "  {} requests, {} events, {} faults, resyncs {} full / {} partial, lost acked writes {} of {}, {:.3} s simulated in {:.3} s wall, trace hash {:016x}",
        r.ops_count,
        r.events_count,
        r.faults_count,
        r.full_resyncs_count,
        r.partial_resyncs_count,
        r.loss.lost_count,
        r.loss.acked_count,
        r.sim_ns as f64 / 1e9,
        r.wall.as_secs_f64(),
        r.trace_hash
    );
    describe_failovers(r);
}

/// One line per FAILOVER the admin sent, and what became of it.
fn describe_failovers(r: &ClusterReport) {
    let Some(h) = &r.history else {
        return;
    };
    for f in &h.failovers {
        println!(
            "  `{}` to node{} at {} ns: {}{}{}{}",
            f.args.join(" "),
            f.node,
            f.at_ns,
            f.reply,
            f.handed_over_ns
                .map_or(String::new(), |t| format!(", handed over at {t} ns")),
            f.completed.map_or(String::new(), |(t, n)| format!(
                ", node{n} promoted at {t} ns"
            )),
            f.abort
                .as_ref()
                .map_or(String::new(), |(t, a)| format!(", ABORT at {t} ns: {a}")),
        );
    }
}

fn report_failure(r: &ClusterReport, no_shrink: bool) {
    for v in &r.violations {
        println!("FAIL [{}] {}", v.checker, v.message);
    }
    println!("repro: {}", r.config.repro_line());
    if no_shrink {
        return;
    }
    let (shrunk, runs_count) = shrink(r);
    println!(
        "shrunk in {runs_count} runs (still fails {})",
        r.first_checker().unwrap_or("?")
    );
    println!("repro (shrunk): {}", shrunk.repro_line());
}

/// One seed, twice, trace hashes compared.
pub fn cmd_run(config: &ClusterConfig, trace: bool, no_shrink: bool) -> bool {
    if trace {
        return cmd_replay(config, true);
    }
    match check_determinism(config) {
        Ok(r) => {
            describe(&r);
            if r.failed() {
                report_failure(&r, no_shrink);
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

/// One seed, exactly, optionally with its event trace.
pub fn cmd_replay(config: &ClusterConfig, trace: bool) -> bool {
    let r = run(config, trace, false);
    describe(&r);
    if r.failed() {
        report_failure(&r, true);
        return false;
    }
    println!("ok");
    true
}

/// One seed's line for `--seed-log`: what must not change when only the
/// simulator's code layout or speed does.
fn seed_log_line(r: &ClusterReport) -> String {
    let verdict = match r.violations.first() {
        None => "ok".to_string(),
        Some(v) => format!("FAIL [{}] {}", v.checker, v.message),
    };
    format!(
        "seed {} trace {:016x} ops {} events {} faults {} sim_ns {} resyncs {}/{} lost {}/{}/{} {verdict}\n",
        r.config.seed,
        r.trace_hash,
        r.ops_count,
        r.events_count,
        r.faults_count,
        r.sim_ns,
        r.full_resyncs_count,
        r.partial_resyncs_count,
        r.loss.lost_count,
        r.loss.acked_count,
        r.loss.wait_confirmed_lost_count,
    )
}

/// Many seeds and a summary; the first failure is shrunk. With
/// `seed_log`, one line per seed (sorted by seed) goes to that file.
pub fn cmd_sweep(
    base: &ClusterConfig,
    start: u64,
    seeds: u64,
    jobs: usize,
    no_shrink: bool,
    seed_log: Option<&std::path::Path>,
) -> bool {
    let lines = std::sync::Mutex::new(Vec::new());
    let summary = sweep(base, start, seeds, jobs, &|r| {
        if seed_log.is_some() {
            let line = seed_log_line(r);
            lines
                .lock()
                .expect("seed lines")
                .push((r.config.seed, line));
        }
    });
    if let Some(path) = seed_log {
        let mut lines = lines.into_inner().expect("seed lines");
        lines.sort();
        let text: String = lines.into_iter().map(|(_, line)| line).collect();
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("seedkv-sim: cannot write {}: {e}", path.display());
            return false;
        }
    }
    println!("multi-node sweep summary");
    print!("{}", summary.table(base.replicas, jobs));
    if summary.failures_count == 0 {
        return true;
    }
    for r in summary.failures.iter().take(10) {
        let v = &r.violations[0];
        println!("seed {} FAIL [{}] {}", r.config.seed, v.checker, v.message);
    }
    report_failure(&summary.failures[0], no_shrink);
    false
}
