//! Runs the audit's inputs over growing sizes and judges each one.

use std::sync::mpsc;
use std::time::Duration;

use super::fit::{declared_exponent, growth_exponent};
use super::inputs::Input;
use super::measure::{Bench, Sample};
use super::template::{expand, Request};
use crate::cost::CostModel;

/// A measured request at or above this CPU time stops the growth of its
/// input (the next size could take minutes).
const POINT_NS_MAX: u64 = 2_000_000_000;
/// Growth verdicts need at least this much CPU at the largest size, and a
/// ratio verdict this much CPU beyond the modelled time: below it, fixed
/// overheads, cold caches (each run is on a fresh engine) and the clock's
/// own cost dominate, and the simulator's virtual time would not notice.
pub const GROWTH_NS_MIN: f64 = 20_000.0;
/// A command may cost up to this many times its modelled time.
pub const RATIO_MAX: f64 = 10.0;
/// Measured growth may exceed the declared exponent (and the charged
/// growth) by this much before it fails: noise, caches, allocators.
pub const EXPONENT_TOLERANCE: f64 = 0.5;

/// What one CPU-nanosecond of modelled time is made of on this machine.
///
/// The audit does **not** judge against the cost model's constants
/// (`cost.rs`: 300 ns per unit, 1 µs per command), which stand for a real
/// Redis server end to end on the seeds' laptop, syscalls included. It
/// measures, at its start and on this machine, what one work unit of the
/// model's own reference command costs (KEYS over 65,536 keys, the figure
/// `WORK_UNIT_NS` was calibrated on) and what the cheapest command costs
/// (PING: the fixed part), and models every other command as
/// `commands × fixed + units × per unit + bytes × BYTE_COST_PS`.
/// A command's ratio is then "its real cost per unit, relative to KEYS's
/// cost per unit on the same machine", which is what the simulator assumes
/// to be 1: the verdict does not depend on how fast or loaded the machine
/// is, and a loop that charges nothing shows up however fast the engine
/// is. The model's constants are printed beside the calibration for
/// comparison.
#[derive(Clone, Copy, Debug)]
pub struct Rates {
    pub command_ns: f64,
    pub unit_ns: f64,
    pub byte_ps: f64,
}

impl Rates {
    pub fn modelled_ns(&self, s: &Sample) -> f64 {
        s.commands as f64 * self.command_ns
            + s.work_units as f64 * self.unit_ns
            + (s.reply_bytes + s.request_bytes) as f64 * self.byte_ps / 1000.0
    }
}

/// One size of one input.
#[derive(Clone, Debug)]
pub struct Point {
    pub n: usize,
    /// The cheapest of the repetitions.
    pub sample: Sample,
    pub modelled_ns: f64,
}

impl Point {
    pub fn ratio(&self) -> f64 {
        self.sample.cpu_ns as f64 / self.modelled_ns.max(1.0)
    }
}

/// The audit of one input.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub input: Input,
    pub points: Vec<Point>,
    pub measured_exponent: Option<f64>,
    pub charged_exponent: Option<f64>,
    pub declared_exponent: Option<f64>,
    /// Why it failed; empty when it passed.
    pub failures: Vec<String>,
    /// Sizes not run, and why.
    pub stopped: Option<String>,
}

/// Expands and runs one input at size `n`, `reps` times on fresh engines;
/// keeps the cheapest run.
pub fn measure_point(input: &Input, n: usize, reps: usize, rates: &Rates) -> Point {
    let mut setup = Vec::new();
    for template in input.setup {
        expand(template, n, &mut setup);
    }
    let mut run: Vec<Request> = Vec::new();
    expand(input.run, n, &mut run);
    let request = run.pop().expect("a run template expands to one request");
    let mut best: Option<Sample> = None;
    for _ in 0..reps.max(1) {
        let mut bench = Bench::new();
        bench.setup(&setup);
        let sample = bench.measure(&request);
        let too_slow = sample.cpu_ns >= POINT_NS_MAX;
        if best.as_ref().is_none_or(|b| sample.cpu_ns < b.cpu_ns) {
            best = Some(sample);
        }
        if too_slow {
            break;
        }
    }
    let sample = best.expect("at least one repetition");
    Point {
        n,
        modelled_ns: rates.modelled_ns(&sample),
        sample,
    }
}

/// Measures this machine's cost per work unit (KEYS over 65,536 keys) and
/// per command (PING).
pub fn calibrate(reps: usize) -> Rates {
    let model = CostModel::default();
    let zero = Rates {
        command_ns: 0.0,
        unit_ns: 0.0,
        byte_ps: model.byte_cost_ps as f64,
    };
    let keys = Input {
        name: "keys",
        grows: "",
        setup: &["MSET {kvs}"],
        run: "KEYS *",
        shrink: 1,
        declared: None,
        error_ok: None,
    };
    let ping = Input {
        setup: &[],
        run: "PING",
        ..keys.clone()
    };
    let ping = measure_point(&ping, 1, reps * 4, &zero);
    let keys = measure_point(&keys, 65_536, reps, &zero);
    let command_ns = ping.sample.cpu_ns as f64;
    Rates {
        command_ns,
        unit_ns: (keys.sample.cpu_ns as f64 - command_ns).max(1.0)
            / keys.sample.work_units.max(1) as f64,
        byte_ps: model.byte_cost_ps as f64,
    }
}

/// Runs `input` over `sizes` on a worker thread, giving up after `budget`
/// (a runaway command cannot be interrupted in process: its thread is left
/// behind and the process exits at the end of the audit).
pub fn audit_input(
    input: &Input,
    sizes: &[usize],
    reps: usize,
    rates: Rates,
    budget: Duration,
) -> Outcome {
    let (tx, rx) = mpsc::channel();
    let worker_input = input.clone();
    let worker_sizes = sizes.to_vec();
    let spawned = std::thread::Builder::new()
        .name(format!("audit {}", input.name))
        .spawn(move || {
            for &size in &worker_sizes {
                let n = (size / worker_input.shrink.max(1)).max(1);
                let point = measure_point(&worker_input, n, reps, &rates);
                let slow = point.sample.cpu_ns >= POINT_NS_MAX;
                if tx.send(point).is_err() || slow {
                    return;
                }
            }
        });
    let mut points = Vec::new();
    let mut stopped = None;
    if spawned.is_err() {
        stopped = Some("could not start a thread".to_string());
    } else {
        let deadline = std::time::Instant::now() + budget;
        while points.len() < sizes.len() {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match rx.recv_timeout(left) {
                Ok(point) => points.push(point),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let next = sizes
                        .get(points.len())
                        .map_or(0, |s| (s / input.shrink.max(1)).max(1));
                    stopped = Some(format!(
                        "n={next} did not finish within {} s",
                        budget.as_secs()
                    ));
                    break;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    if points.len() < sizes.len() {
                        stopped = Some(format!(
                            "stopped growing: a run took over {} s",
                            POINT_NS_MAX / 1_000_000_000
                        ));
                    }
                    break;
                }
            }
        }
    }
    judge(input, points, stopped)
}

/// Applies the verdicts to the measured points.
fn judge(input: &Input, points: Vec<Point>, stopped: Option<String>) -> Outcome {
    let spec_exponent = super::table_commands()
        .into_iter()
        .find(|(name, _)| name == input.name)
        .and_then(|(_, spec)| declared_exponent(spec.complexity));
    let declared = input.declared.map(|d| d.0).or(spec_exponent);
    let measured: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (p.n as f64, p.sample.cpu_ns as f64))
        .collect();
    let charged: Vec<(f64, f64)> = points.iter().map(|p| (p.n as f64, p.modelled_ns)).collect();
    let measured_exponent = growth_exponent(&measured);
    let charged_exponent = growth_exponent(&charged);
    let mut failures = Vec::new();
    if let Some(why) = &stopped {
        if why.contains("did not finish") || why.contains("took over") {
            failures.push(why.clone());
        }
    }
    for p in &points {
        if p.sample.reply_head.first() == Some(&b'-') && input.error_ok.is_none() {
            let text = String::from_utf8_lossy(&p.sample.reply_head);
            failures.push(format!("n={}: error reply {}", p.n, text.trim_end()));
            break;
        }
    }
    if let Some(worst) = points.iter().max_by(|a, b| a.ratio().total_cmp(&b.ratio())) {
        if worst.ratio() > RATIO_MAX
            && worst.sample.cpu_ns as f64 - worst.modelled_ns >= GROWTH_NS_MIN
        {
            failures.push(format!(
                "n={}: measured {:.0} ns is {:.1}x its modelled {:.0} ns ({} units): work not charged",
                worst.n,
                worst.sample.cpu_ns,
                worst.ratio(),
                worst.modelled_ns,
                worst.sample.work_units
            ));
        }
    }
    let largest_ns = measured.last().map_or(0.0, |p| p.1);
    if largest_ns >= GROWTH_NS_MIN {
        if let (Some(m), Some(d)) = (measured_exponent, declared) {
            if m > d + EXPONENT_TOLERANCE {
                failures.push(format!(
                    "grows as n^{m:.2} in {}, declared n^{d:.0}",
                    input.grows
                ));
            }
        }
        if let (Some(m), Some(c)) = (measured_exponent, charged_exponent) {
            if m > c + EXPONENT_TOLERANCE {
                failures.push(format!(
                    "cost grows as n^{m:.2} but its charge as n^{c:.2}: work not charged"
                ));
            }
        }
    }
    if declared.is_none() {
        failures.push("no declared exponent (the input must state one)".into());
    }
    Outcome {
        input: input.clone(),
        points,
        measured_exponent,
        charged_exponent,
        declared_exponent: declared,
        failures,
        stopped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every input runs at a small size and answers as it should: no error
    /// reply unless the input expects one, and at least one command
    /// recorded. No time is asserted (the audit's figures are not for tests).
    #[test]
    fn every_input_executes_at_a_small_size() {
        let rates = Rates {
            command_ns: 1.0,
            unit_ns: 1.0,
            byte_ps: 1.0,
        };
        for input in super::super::inputs::inputs() {
            for n in [1, 5] {
                let point = measure_point(&input, n, 1, &rates);
                let reply = String::from_utf8_lossy(&point.sample.reply_head).into_owned();
                let is_error = reply.starts_with('-');
                assert_eq!(
                    is_error,
                    input.error_ok.is_some(),
                    "{} at n={n}: {reply:?}",
                    input.name
                );
                assert!(
                    point.sample.commands >= 1,
                    "{} at n={n}: not executed",
                    input.name
                );
                assert!(point.sample.work_units >= 1, "{} at n={n}", input.name);
            }
        }
    }
}
