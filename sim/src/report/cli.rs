//! The `report` subcommand's arguments and entry point, kept here so that
//! the binary only names them.

use std::path::PathBuf;

use clap::Subcommand;

use super::chart::write_svg;
use super::latency::{run_latency, LatencyConfig, HASH_FIELDS_COUNT_DEFAULT, KEYS_COUNT_DEFAULT};

#[derive(Subcommand, Clone, Debug)]
pub enum ReportCommand {
    /// Seed 002's head-of-line table in virtual time: PING p50/p99/max
    /// while nothing, KEYS k:1*, KEYS *, a full SCAN COUNT 1000, DEL and
    /// UNLINK of a big hash run on the one server CPU.
    Latency {
        /// The run's seed (network jitter, spikes, the engine's RNG).
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// String keys k:0 .. k:<N-1> to fill.
        #[arg(long, default_value_t = KEYS_COUNT_DEFAULT)]
        keys: u64,
        /// Fields of the hash that DEL and UNLINK remove.
        #[arg(long, default_value_t = HASH_FIELDS_COUNT_DEFAULT)]
        hash_fields: u64,
        /// Also write the chart of PING latency over virtual time here.
        #[arg(long)]
        svg: Option<PathBuf>,
    },
}

impl ReportCommand {
    /// Runs the report and prints it; an error (bad flags, or data that
    /// did not check out) is returned unprinted.
    pub fn run(&self) -> Result<bool, String> {
        match self {
            ReportCommand::Latency {
                seed,
                keys,
                hash_fields,
                svg,
            } => {
                let config = LatencyConfig {
                    seed: *seed,
                    keys_count: *keys,
                    hash_fields_count: *hash_fields,
                    snapshot_reads: false,
                };
                let report = run_latency(&config)?;
                print!("{}", report.text());
                if let Some(path) = svg {
                    write_svg(&report, path)?;
                    println!("chart: {}", path.display());
                }
                Ok(true)
            }
        }
    }
}
