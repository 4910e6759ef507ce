//! `seedkv-server [config-file] [--port N] [--bind ADDR] [--requirepass PW] [--protected-mode yes|no] [--enable-debug-command no|yes|local] [--dir DIR] [--save POINTS] [--dbfilename NAME] [--appendonly yes|no] [--appendfsync always|everysec|no] [--seed N]`

use clap::Parser;
use seedkv_server::{Args, Options};

#[global_allocator]
static GLOBAL: seedkv_server::alloc::CountingAlloc = seedkv_server::alloc::CountingAlloc;

fn main() {
    seedkv_server::alloc::mark_installed();
    seedkv_server::logging::RedisStyleLog::install(tracing::Level::INFO);
    let args = Args::parse();
    let options = match Options::from_args(&args) {
        Ok(options) => options,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = seedkv_server::run(options) {
        seedkv_server::logging::warn(&format!("Server stopped: {e}"));
        std::process::exit(1);
    }
}
