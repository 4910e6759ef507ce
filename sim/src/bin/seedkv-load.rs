//! `seedkv-load [--host H] [--port P] [--keys N] [--hash-fields M] [--flush]`
//!
//! Seed 002's head-of-line experiment over real sockets against any RESP
//! server: PING p50/p99/max while nothing, KEYS k:1*, KEYS *, a full SCAN
//! COUNT 1000, DEL and UNLINK of an M-field hash run. Every reply is
//! checked, and DBSIZE and HLEN verified, before any figure is printed.
//! See `sim/src/report/load/mod.rs`.

use std::process::ExitCode;

use clap::Parser;
use seedkv_sim::report::load;

#[derive(Parser)]
#[command(
    name = "seedkv-load",
    about = "Head-of-line latency over real sockets (seed 002) against any RESP server"
)]
struct Cli {
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    #[arg(long, default_value_t = 6379)]
    port: u16,
    /// String keys k:0 .. k:<N-1> to fill.
    #[arg(long, default_value_t = 2_000_000)]
    keys: u64,
    /// Fields of the hash that DEL and UNLINK remove.
    #[arg(long, default_value_t = 3_000_000)]
    hash_fields: u64,
    /// FLUSHALL before filling (without it, a non-empty database is refused).
    #[arg(long)]
    flush: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let config = load::LoadConfig {
        host: cli.host,
        port: cli.port,
        keys_count: cli.keys,
        hash_fields_count: cli.hash_fields,
        flush: cli.flush,
    };
    match load::run(&config) {
        Ok(report) => {
            print!("{report}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("seedkv-load: {e}");
            ExitCode::FAILURE
        }
    }
}
