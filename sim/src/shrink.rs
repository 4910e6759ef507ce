//! Minimisation: re-run a failing configuration with fewer faults, clients
//! and requests while it still fails the same checker, and keep the
//! smallest. Because every concern has its own RNG stream, dropping clients
//! or faults leaves the remaining clients' workloads as they were, so a
//! failure usually survives the cut.

use crate::knobs::Knobs;
use crate::run::{run, RunConfig, RunOptions, RunReport};

/// Re-runs the shrinker tries at most.
pub const SHRINK_RUNS_MAX: u32 = 64;

/// The result of shrinking.
pub struct Shrunk {
    pub config: RunConfig,
    pub report: RunReport,
    pub runs_count: u32,
}

/// Shrinks `failing` (whose report is `report`) while the first violated
/// checker stays the same.
pub fn shrink(report: RunReport) -> Shrunk {
    let checker = report.first_checker().expect("shrink needs a failing run");
    let mut best = report;
    let mut runs_count = 0;
    let still_fails = |config: &RunConfig, runs: &mut u32| -> Option<RunReport> {
        if *runs >= SHRINK_RUNS_MAX {
            return None;
        }
        *runs += 1;
        let r = run(config, RunOptions::default());
        (r.first_checker() == Some(checker)).then_some(r)
    };
    // Faults first: a failure without faults is much easier to read.
    if !best.config.overrides.no_faults {
        let mut c = best.config.clone();
        c.overrides.no_faults = true;
        if let Some(r) = still_fails(&c, &mut runs_count) {
            best = r;
        }
    }
    // Then drop workloads one at a time.
    let mut i = 0;
    while best.knobs.workloads.len() > 1 && i < best.knobs.workloads.len() {
        let mut fewer = best.knobs.workloads.clone();
        fewer.remove(i);
        let mut c = best.config.clone();
        c.overrides.workloads = Some(fewer);
        match still_fails(&c, &mut runs_count) {
            Some(r) => best = r,
            None => i += 1,
        }
    }
    // Then halve clients and requests alternately until neither halves.
    loop {
        let mut progressed = false;
        let knobs: &Knobs = &best.knobs;
        if knobs.clients_count > 1 {
            let mut c = best.config.clone();
            c.overrides.clients = Some(knobs.clients_count / 2);
            if let Some(r) = still_fails(&c, &mut runs_count) {
                best = r;
                progressed = true;
            } else if knobs.clients_count > 2 {
                let mut c = best.config.clone();
                c.overrides.clients = Some(knobs.clients_count - 1);
                if let Some(r) = still_fails(&c, &mut runs_count) {
                    best = r;
                    progressed = true;
                }
            }
        }
        let knobs: &Knobs = &best.knobs;
        if knobs.ops_count > 1 {
            let mut c = best.config.clone();
            c.overrides.ops = Some(knobs.ops_count / 2);
            if let Some(r) = still_fails(&c, &mut runs_count) {
                best = r;
                progressed = true;
            }
        }
        if !progressed || runs_count >= SHRINK_RUNS_MAX {
            break;
        }
    }
    Shrunk {
        config: best.config.clone(),
        report: best,
        runs_count,
    }
}
