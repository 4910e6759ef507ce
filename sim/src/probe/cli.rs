//! `seedkv-sim probe`: the command line of the black-box mode.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use super::faults::FAULT_PER_MILLE_DEFAULT;
use super::{default_workloads, probe, ProbeConfig};
use crate::workload::WorkloadKind;

/// Flags of `seedkv-sim probe`.
#[derive(Args, Clone, Debug)]
pub struct ProbeArgs {
    /// The server to probe: a loopback address only (127.0.0.1:PORT, [::1]:PORT).
    /// Its data is flushed first.
    #[arg(long)]
    pub addr: String,
    /// Real TCP clients, each running one workload (default: one per workload).
    #[arg(long)]
    pub clients: Option<u32>,
    /// Stop after this many requests...
    #[arg(long, default_value_t = 10_000)]
    pub ops: u64,
    /// ... or after this many seconds, whichever comes first.
    #[arg(long, default_value_t = 60)]
    pub duration: u64,
    /// Fixes every client's workload and fault draws (not the timing).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Workloads, comma-separated (default: all). Client i runs the
    /// (i mod n)th.
    #[arg(long, value_delimiter = ',')]
    pub workloads: Option<Vec<String>>,
    /// Chance per batch that a client injects a fault, per mille.
    #[arg(long, default_value_t = FAULT_PER_MILLE_DEFAULT)]
    pub fault_per_mille: u32,
    /// Inject no faults (same as --fault-per-mille 0).
    #[arg(long)]
    pub no_faults: bool,
    /// The crash-restart fault: a shell command (run with `sh -c`) that
    /// kills the server under test and starts it again on the same port
    /// and files, then returns. The probe waits for PONG, and the
    /// checkers judge whether acknowledged writes survived.
    #[arg(long, value_name = "CMD")]
    pub restart_cmd: Option<String>,
    /// Mean milliseconds between restarts (with --restart-cmd).
    #[arg(long, default_value_t = 1_000)]
    pub restart_every_ms: u64,
    /// --addr is a sharding proxy (twemproxy) in front of these servers,
    /// comma-separated loopback addresses: they are flushed directly, only
    /// the workloads a proxy can route run (default: all of those), and no
    /// server-side fault is sent.
    #[arg(long, value_delimiter = ',', value_name = "ADDR,...")]
    pub shards: Option<Vec<String>>,
}

impl ProbeArgs {
    pub fn config(&self) -> Result<ProbeConfig, String> {
        let shards = self.shards.clone().unwrap_or_default();
        let workloads = match &self.workloads {
            None if !shards.is_empty() => super::proxy::default_sharded_workloads(),
            None => default_workloads(),
            Some(names) => names
                .iter()
                .map(|n| {
                    WorkloadKind::from_name(n).ok_or_else(|| format!("unknown workload {n:?}"))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(super::expand_workloads)?,
        };
        if let Some(k) = workloads
            .iter()
            .find(|k| !super::PROBE_WORKLOADS.contains(&k.name()))
        {
            return Err(format!(
                "the probe cannot drive workload {:?} yet (it can: {})",
                k.name(),
                super::PROBE_WORKLOADS.join(",")
            ));
        }
        if workloads.is_empty() {
            return Err("--workloads needs at least one".into());
        }
        if !shards.is_empty() {
            super::proxy::check_workloads(&workloads)?;
            if self.restart_cmd.is_some() {
                return Err("--restart-cmd and --shards do not go together".into());
            }
        }
        let clients = self.clients.unwrap_or(workloads.len() as u32);
        if clients == 0 || clients > super::CLIENTS_MAX {
            return Err(format!("--clients must be 1..={}", super::CLIENTS_MAX));
        }
        if self.ops == 0 || self.ops > super::OPS_MAX {
            return Err(format!("--ops must be 1..={}", super::OPS_MAX));
        }
        if self.duration == 0 || self.duration > super::DURATION_S_MAX {
            return Err(format!(
                "--duration must be 1..={} s",
                super::DURATION_S_MAX
            ));
        }
        if self.fault_per_mille > 1000 {
            return Err("--fault-per-mille must be 0..=1000".into());
        }
        Ok(ProbeConfig {
            addr: self.addr.clone(),
            clients,
            ops: self.ops,
            duration: Duration::from_secs(self.duration),
            seed: self.seed,
            workloads,
            fault_per_mille: if self.no_faults {
                0
            } else {
                self.fault_per_mille
            },
            restart: self
                .restart_cmd
                .as_ref()
                .map(|command| super::restart::RestartFault {
                    command: command.clone(),
                    every_ms: self.restart_every_ms.clamp(1, 3_600_000),
                }),
            shards,
        })
    }
}

/// Runs the subcommand: prints the report; exit code 1 on any violation or
/// unexpected error reply, 2 if the probe could not run.
pub fn run(args: &ProbeArgs) -> ExitCode {
    let config = match args.config() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match probe(&config) {
        Ok(report) => {
            print!("{}", report.render());
            if report.passed() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
