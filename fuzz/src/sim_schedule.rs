//! sim_schedule: libFuzzer's bytes make the simulator's choices — the
//! run's knobs (workloads, network latency/jitter/fragmentation/bandwidth,
//! fault rates), then every network and fault draw as the run makes it —
//! in place of the seeded ChaCha streams (`seedkv_sim::rng::with_choices`),
//! so coverage guidance explores schedules, fragmentations, resets, clock
//! jumps and idle periods. The workloads stay seeded, so every request is
//! one the checkers understand. Every checker runs; a violation is a crash
//! whose message is the checker's.

use seedkv_engine::PlantedBug;
use seedkv_sim::knobs::Overrides;
use seedkv_sim::run::{run_with_choices, RunConfig, RunOptions, RunReport};

/// Clients per run: 2 ..= this (few, so one execution takes milliseconds).
pub const CLIENTS_MAX: u32 = 4;
/// Requests per run, shared by the clients.
pub const OPS_COUNT: u64 = 240;

/// Input layout: byte 0 picks the client count, bytes 1..3 the seed of the
/// workload streams (and of the engine), the rest are the choices. Short
/// inputs run too: missing choices come from a stream seeded by the input.
pub fn run(data: &[u8]) {
    let report = run_input(data, None);
    if let Some(v) = report.violations.first() {
        panic!(
            "checker {} failed ({} violations; knobs {:?}): {}",
            v.checker,
            report.violations.len(),
            report.knobs,
            v.message
        );
    }
}

/// Runs the input, on an engine with `bug` planted (the target: none).
pub fn run_input(data: &[u8], bug: Option<PlantedBug>) -> RunReport {
    let config = RunConfig {
        bug,
        ..config_of(data)
    };
    let choices = data.get(3..).unwrap_or(&[]);
    run_with_choices(&config, RunOptions::default(), choices)
}

/// The run an input asks for (its seeded half).
pub fn config_of(data: &[u8]) -> RunConfig {
    let byte = |i: usize| data.get(i).copied().unwrap_or(0);
    RunConfig {
        seed: u64::from(u16::from_le_bytes([byte(1), byte(2)])),
        bug: None,
        overrides: Overrides {
            clients: Some(2 + u32::from(byte(0)) % (CLIENTS_MAX - 1)),
            ops: Some(OPS_COUNT),
            ..Overrides::default()
        },
    }
}
