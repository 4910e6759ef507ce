//! The cost audit (`seedkv-sim audit cost`): the harness's check that the
//! work units the engine *reports* are what its commands really cost.
//!
//! The simulator charges every command by its reported work units
//! (`cost.rs`), so a loop that forgets `ctx.work()` is free in virtual time
//! and invisible to every checker. The audit runs every command of the
//! engine's table ([`inputs`]: a setup and one measured request per
//! command, over growing sizes, often of adversarial shape) on a fresh
//! in-process engine, reads the thread CPU time of the command's handler
//! ([`measure`]), and compares it with the reported units at a per-unit
//! cost calibrated on this machine ([`run::Rates`] says why calibrated).
//! It fails when a command costs over 10x its model, or when its cost
//! grows faster in `n` than its declared complexity or than its charge
//! ([`fit`]).
//!
//! This is a measuring tool, like the calibration example: it reads real
//! clocks, outside every deterministic run. Nothing in a test asserts a
//! figure it measures.

pub mod fit;
pub mod inputs;
pub mod measure;
pub mod report;
pub mod run;
pub mod template;

use std::time::Duration;

use clap::{Args, Subcommand};
use seedkv_engine::cmd::CommandSpec;

/// `seedkv-sim audit ...`
#[derive(Subcommand, Clone, Debug)]
pub enum AuditCommand {
    /// Measure every command's real CPU cost against its reported work
    /// units and its declared complexity; exit 1 on any failure.
    Cost(CostArgs),
}

#[derive(Args, Clone, Debug)]
pub struct CostArgs {
    /// Audit only this command (`lrange`, `client|list`); repeatable.
    #[arg(long = "command")]
    commands: Vec<String>,
    /// Sizes n, comma-separated (an input may divide them: see its shrink).
    #[arg(long, value_delimiter = ',', default_values_t = [256usize, 2048, 16384])]
    sizes: Vec<usize>,
    /// Runs per size; the cheapest is kept.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Seconds one input may take over all its sizes before it fails.
    #[arg(long, default_value_t = 20)]
    budget_s: u64,
}

impl AuditCommand {
    /// Runs the audit; `Ok(false)` when something failed.
    pub fn run(&self) -> Result<bool, String> {
        match self {
            AuditCommand::Cost(args) => cost(args),
        }
    }
}

fn cost(args: &CostArgs) -> Result<bool, String> {
    let mut sizes = args.sizes.clone();
    sizes.sort_unstable();
    sizes.dedup();
    if sizes.is_empty() || sizes[0] == 0 {
        return Err("--sizes wants positive sizes".into());
    }
    let all = inputs::inputs();
    for name in &args.commands {
        if !all.iter().any(|i| i.name.eq_ignore_ascii_case(name)) {
            return Err(format!("no audit input for command {name:?}"));
        }
    }
    let selected: Vec<&inputs::Input> = all
        .iter()
        .filter(|i| {
            args.commands.is_empty() || args.commands.iter().any(|c| i.name.eq_ignore_ascii_case(c))
        })
        .collect();
    let rates = run::calibrate(args.reps);
    report::print_header(&rates, &sizes, args.reps);
    let mut failed = Vec::new();
    for input in selected {
        let outcome = run::audit_input(
            input,
            &sizes,
            args.reps,
            rates,
            Duration::from_secs(args.budget_s),
        );
        report::print_outcome(&outcome);
        if !outcome.failures.is_empty() {
            failed.push(outcome.input.name);
        }
    }
    println!();
    if failed.is_empty() {
        println!("cost audit: every input passed");
        Ok(true)
    } else {
        println!(
            "cost audit: {} input(s) FAILED: {}",
            failed.len(),
            failed.join(", ")
        );
        Ok(false)
    }
}

/// Every command of the engine's table, containers replaced by their
/// subcommands (`client|list`), each with its spec, in name order.
pub fn table_commands() -> Vec<(String, &'static CommandSpec)> {
    let table = seedkv_engine::cmd::CommandTable::new(seedkv_engine::commands::FAMILIES);
    let mut out = Vec::new();
    for spec in table.iter() {
        if spec.subcommands.is_empty() || spec.handler.is_some() {
            out.push((spec.name.to_string(), spec));
        }
        for sub in spec.subcommands {
            let name = if sub.name.contains('|') {
                sub.name.to_string()
            } else {
                format!("{}|{}", spec.name, sub.name)
            };
            out.push((name, sub));
        }
    }
    out
}
