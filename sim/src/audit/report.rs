//! The audit's table: one line per input, its failures under it.

use super::run::{Outcome, Rates, EXPONENT_TOLERANCE, GROWTH_NS_MIN, RATIO_MAX};
use crate::cost::CostModel;

/// Compact figure: 950, 12.3k, 4.50M.
fn short(x: f64) -> String {
    if x >= 1e9 {
        format!("{:.2}G", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.2}M", x / 1e6)
    } else if x >= 1e4 {
        format!("{:.0}k", x / 1e3)
    } else if x >= 1e3 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

fn joined(values: impl Iterator<Item = String>) -> String {
    values.collect::<Vec<_>>().join("/")
}

fn exponent(e: Option<f64>) -> String {
    e.map_or("-".into(), |e| format!("{e:.2}"))
}

pub fn print_header(rates: &Rates, sizes: &[usize], reps: usize) {
    let model = CostModel::default();
    println!("cost audit: thread CPU time of each command's handler in an in-process engine,");
    println!(
        "the cheapest of {reps} runs per size, sizes {sizes:?} (divided by the input's shrink)"
    );
    println!(
        "calibrated here: {:.0} ns per command (PING), {:.1} ns per work unit (KEYS * over 65,536 keys)",
        rates.command_ns, rates.unit_ns
    );
    println!(
        "cost model (cost.rs): {} ns per command, {} ns per work unit; {} ps per byte in both",
        model.command_overhead_ns, model.ns_per_work_unit, model.byte_cost_ps
    );
    println!(
        "fails when measured > {RATIO_MAX}x modelled (calibrated) and over it by >= {0:.0} us, or when \
         at >= {0:.0} us the growth exponent exceeds the declared one or the charged one by > \
         {EXPONENT_TOLERANCE}",
        GROWTH_NS_MIN / 1000.0
    );
    println!();
    println!(
        "{:<22} {:<44} {:<15} {:<22} {:<18} {:<15} {:>5} {:>5} {:>4}  verdict",
        "command", "n grows", "n", "measured ns", "units", "ratio", "exp", "chg", "decl"
    );
}

pub fn print_outcome(o: &Outcome) {
    let n = joined(o.points.iter().map(|p| p.n.to_string()));
    let ns = joined(o.points.iter().map(|p| short(p.sample.cpu_ns as f64)));
    let units = joined(o.points.iter().map(|p| short(p.sample.work_units as f64)));
    let ratio = joined(o.points.iter().map(|p| format!("{:.2}", p.ratio())));
    let verdict = if o.failures.is_empty() { "ok" } else { "FAIL" };
    let mut grows = o.input.grows.to_string();
    if grows.len() > 44 {
        grows.truncate(41);
        grows.push_str("...");
    }
    println!(
        "{:<22} {:<44} {:<15} {:<22} {:<18} {:<15} {:>5} {:>5} {:>4}  {verdict}",
        o.input.name,
        grows,
        n,
        ns,
        units,
        ratio,
        exponent(o.measured_exponent),
        exponent(o.charged_exponent),
        o.declared_exponent
            .map_or("-".into(), |d| format!("{d:.0}")),
    );
    if let Some((_, why)) = o.input.declared {
        println!("{:<22}   declared: {why}", "");
    }
    if let Some(why) = o.input.error_ok {
        println!("{:<22}   error reply expected: {why}", "");
    }
    if let Some(why) = &o.stopped {
        println!("{:<22}   {why}", "");
    }
    for f in &o.failures {
        println!("{:<22}   FAIL {}: {f}", "", o.input.name);
    }
}
