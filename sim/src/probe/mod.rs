//! The probe: the simulator's workloads and its history-only checkers over
//! real TCP against a real server (seedkv-server, redis-server, or any
//! Redis-compatible server), Jepsen-style.
//!
//! # The one real-time path
//!
//! Everything else in this crate (but `report/load/`, the `seedkv-load`
//! binary's experiment) is deterministic: virtual time, seeded streams, no
//! sockets, no clocks. This module is the exception, and is
//! excluded from those rules on purpose: it opens sockets, runs a thread per
//! client, sleeps, and timestamps the history with the monotonic clock
//! (`Instant`, nanoseconds since the probe started). The seed still fixes
//! every client's workload draws and fault draws (the same streams as the
//! simulator's), but when requests meet on the server is up to real time,
//! so a probe is not replayable. Nothing outside `probe/` calls into it
//! except the `probe` subcommand.
//!
//! # Safety and bounds
//!
//! The probe sends traffic only to a loopback address (it refuses others),
//! and flushes that server's data first (the checkers assume every key
//! starts absent). It stops at `ops` requests or `duration`, whichever
//! comes first; every loop is bounded by the budget, a deadline or a count.
//!
//! # Checkers
//!
//! Only the checkers that need nothing but what clients saw run here; see
//! [`checkers::black_box`] and [`checkers::NOT_RUN`] for the choice.

pub mod checkers;
pub mod cli;
pub mod client;
pub mod conn;
pub mod faults;
pub mod proxy;
pub mod report;
pub mod restart;
pub mod scan;
pub mod transfer;

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use seedkv_engine::resp::Frame;

use crate::check::RunFacts;
use crate::history::History;
use crate::workload::WorkloadKind;
use client::{faults_stop, run_client, ClientRecord, Shared};
use conn::ProbeConn;
use faults::{FaultKind, SharedFaults, FAULT_PER_MILLE_DEFAULT};
use report::{CheckerVerdict, ProbeReport};

/// Clients at most.
pub const CLIENTS_MAX: u32 = 64;
/// Requests at most.
pub const OPS_MAX: u64 = 100_000_000;
/// Longest probe.
pub const DURATION_S_MAX: u64 = 3_600;
/// Liveness bound: once faults stop, every request on an open connection is
/// answered within this much real time (generous: the machine is shared).
pub const LIVENESS_BOUND_NS: u64 = 5_000_000_000;
/// Set-up commands (INFO, FLUSHALL) may take this long.
pub(crate) const SETUP_MS: u64 = 10_000;

/// What to probe, and how hard.
#[derive(Clone, Debug)]
pub struct ProbeConfig {
    pub addr: String,
    pub clients: u32,
    pub ops: u64,
    pub duration: Duration,
    pub seed: u64,
    /// Client `i` runs `workloads[i % len]`.
    pub workloads: Vec<WorkloadKind>,
    /// Chance per batch of a fault, per mille (0: none).
    pub fault_per_mille: u32,
    /// The crash-restart fault, when a restart command is given.
    pub restart: Option<restart::RestartFault>,
    /// The servers behind a sharding proxy at `addr` (see [`proxy`]);
    /// empty when `addr` is the server itself.
    pub shards: Vec<String>,
}

impl ProbeConfig {
    /// Every workload, one client each.
    pub fn new(addr: &str) -> ProbeConfig {
        let workloads = default_workloads();
        ProbeConfig {
            addr: addr.to_owned(),
            clients: workloads.len() as u32,
            ops: 10_000,
            duration: Duration::from_secs(60),
            seed: 0,
            workloads,
            fault_per_mille: FAULT_PER_MILLE_DEFAULT,
            restart: None,
            shards: Vec::new(),
        }
    }

    /// A probe of the sharding proxy at `addr` in front of `shards`, with
    /// every workload that can run through it, one client each.
    pub fn through_proxy(addr: &str, shards: &[String]) -> ProbeConfig {
        let workloads = proxy::default_sharded_workloads();
        ProbeConfig {
            clients: workloads.len() as u32,
            workloads,
            shards: shards.to_vec(),
            ..ProbeConfig::new(addr)
        }
    }
}

/// The workloads a probe can drive: every one of the simulator's (pub/sub
/// messages are routed as the world routes them, see `client.rs`).
pub const PROBE_WORKLOADS: &[&str] = &[
    "kv", "counter", "pipeline", "scan", "ttl", "big", "ping", "hashes", "sets", "zsets", "lists",
    "blocking", "transfer", "pubsub", "streams",
];

/// Clients a pub/sub workload gets in a row: its role follows the client
/// index (`client % 4`: publisher, subscribers RESP2 and RESP3), and any
/// four consecutive indices hold every role.
pub const PUBSUB_CLIENTS: usize = 4;

/// The workloads a probe runs by default: every one it can drive.
pub fn default_workloads() -> Vec<WorkloadKind> {
    expand_workloads(
        PROBE_WORKLOADS
            .iter()
            .filter_map(|n| WorkloadKind::from_name(n))
            .collect(),
    )
}

/// Each pub/sub entry repeated [`PUBSUB_CLIENTS`] times, so that with one
/// client per entry (or any multiple of the list) it has every role.
pub fn expand_workloads(kinds: Vec<WorkloadKind>) -> Vec<WorkloadKind> {
    kinds
        .into_iter()
        .flat_map(|k| {
            let n = match k {
                WorkloadKind::PubSub => PUBSUB_CLIENTS,
                _ => 1,
            };
            std::iter::repeat_n(k, n)
        })
        .collect()
}

/// The loopback address `addr` names; an error for any other.
pub fn loopback_addr(addr: &str) -> Result<SocketAddr, String> {
    let addrs: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {addr:?}: {e}"))?
        .collect();
    let Some(first) = addrs.first().copied() else {
        return Err(format!("{addr:?} resolves to no address"));
    };
    if let Some(other) = addrs.iter().find(|a| !a.ip().is_loopback()) {
        return Err(format!(
            "refusing {addr:?}: {other} is not a loopback address (the probe only \
             sends load to 127.0.0.0/8 or ::1)"
        ));
    }
    Ok(first)
}

/// Runs a probe and checks its history.
pub fn probe(config: &ProbeConfig) -> Result<ProbeReport, String> {
    let addr = loopback_addr(&config.addr)?;
    if config.workloads.is_empty() {
        return Err("at least one workload".into());
    }
    let clients = config.clients.clamp(1, CLIENTS_MAX);
    let ops = config.ops.clamp(1, OPS_MAX);
    let duration = config.duration.min(Duration::from_secs(DURATION_S_MAX));
    if config.restart.is_some() && !config.shards.is_empty() {
        return Err("the crash-restart fault needs a direct probe, not one through a proxy".into());
    }
    let server = match config.shards.is_empty() {
        true => prepare_server(addr)?,
        false => {
            proxy::check_workloads(&config.workloads)?;
            proxy::prepare_shards(addr, &config.shards)?
        }
    };
    let start = Instant::now();
    let (faults_stop_ops, faults_stop_at) = faults_stop(ops, start, duration);
    let shared = Shared {
        addr,
        seed: config.seed,
        start,
        deadline: start + duration,
        ops_max: ops,
        ops_reserved: AtomicU64::new(0),
        faults_stop_ops,
        faults_stop_at,
        faults_end_ns: AtomicU64::new(u64::MAX),
        fault_per_mille: config.fault_per_mille,
        faults: SharedFaults::new(clients),
        next_conn: AtomicU64::new(1),
        liveness_bound_ns: LIVENESS_BOUND_NS,
        restarting: std::sync::atomic::AtomicBool::new(false),
        through_proxy: !config.shards.is_empty(),
    };
    let clients_done = std::sync::atomic::AtomicBool::new(false);
    let kinds: Vec<WorkloadKind> = (0..clients)
        .map(|i| config.workloads[i as usize % config.workloads.len()])
        .collect();
    let mut restarts = restart::RestartRecord::default();
    let records: Vec<ClientRecord> = std::thread::scope(|scope| {
        let restarter = config.restart.as_ref().map(|fault| {
            let (shared, done) = (&shared, &clients_done);
            scope.spawn(move || restart::run_restarts(shared, fault, done))
        });
        let handles: Vec<_> = kinds
            .iter()
            .enumerate()
            .map(|(i, &kind)| {
                let shared = &shared;
                std::thread::Builder::new()
                    .name(format!("probe-client-{i}"))
                    .spawn_scoped(scope, move || run_client(shared, i as u32, kind))
            })
            .collect();
        let records: Vec<ClientRecord> = handles
            .into_iter()
            .map(|h| match h {
                Ok(handle) => handle.join().unwrap_or_default(),
                Err(_) => ClientRecord::default(),
            })
            .collect();
        clients_done.store(true, Ordering::Relaxed);
        if let Some(r) = restarter {
            restarts = r.join().unwrap_or_default();
        }
        records
    });
    if let Some(why) = restarts.failure {
        return Err(why);
    }
    let wall = start.elapsed();
    let end_ns = shared.now_ns();
    let gave_up = records.iter().filter(|r| r.gave_up).count() as u64;
    let connect_failures = records.iter().map(|r| r.connect_failures).sum();
    let mut history = merge(records, end_ns);
    let faults_end = shared.faults_end_ns.load(Ordering::Relaxed);
    history.faults_end_ns = faults_end.min(end_ns);
    let facts = RunFacts {
        seed: config.seed,
        fast_latency_bound_ns: LIVENESS_BOUND_NS,
        liveness_bound_ns: LIVENESS_BOUND_NS,
        slow_readers: Vec::new(),
    };
    checkers::synthesize_executions(&mut history);
    let transfer_end = match kinds.contains(&WorkloadKind::Transfer) {
        true => Some(transfer::read_end_state(addr)?),
        false => None,
    };
    let verdicts: Vec<CheckerVerdict> = checkers::black_box(transfer_end)
        .iter()
        .map(|c| {
            let t = Instant::now();
            let result = c.check(&history, &facts);
            CheckerVerdict {
                name: c.name(),
                result,
                wall: t.elapsed(),
            }
        })
        .collect();
    let count = |slot: &[AtomicU64; 5]| -> Vec<(FaultKind, u64)> {
        FaultKind::ALL
            .iter()
            .map(|&k| (k, slot[k.index()].load(Ordering::Relaxed)))
            .collect()
    };
    let mut report = ProbeReport::new(
        config.clone(),
        server,
        kinds,
        history,
        verdicts,
        wall,
        count(&shared.faults.injected),
        count(&shared.faults.skipped),
        gave_up,
        connect_failures,
    );
    report.restarts = restarts.restarts;
    Ok(report)
}

/// Names the server (INFO server) and flushes it. Returns e.g.
/// `redis_version:7.0.15` or `seedkv_version:0.1.0 (redis_version:7.0.15)`.
pub(crate) fn prepare_server(addr: SocketAddr) -> Result<String, String> {
    let mut conn =
        ProbeConn::connect(addr).map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    let deadline = Instant::now() + Duration::from_millis(SETUP_MS);
    let info = match conn.call(&[b"INFO", b"server"], deadline) {
        Ok(Frame::Bulk(text)) | Ok(Frame::Verbatim { data: text, .. }) => text,
        other => return Err(format!("INFO server failed: {other:?}")),
    };
    let info = String::from_utf8_lossy(&info);
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .map(str::trim)
            .map(str::to_owned)
    };
    let redis = field("redis_version").unwrap_or_else(|| "?".into());
    let server = match field("seedkv_version") {
        Some(v) => format!("seedkv-server {v} (redis_version {redis})"),
        None => format!("redis-server {redis}"),
    };
    match conn.call(&[b"FLUSHALL"], deadline) {
        Ok(Frame::Simple(s)) if s == b"OK" => Ok(server),
        other => Err(format!("FLUSHALL failed: {other:?}")),
    }
}

/// One history from every client's records: ops in invocation order,
/// connections by id.
fn merge(records: Vec<ClientRecord>, end_ns: u64) -> History {
    let mut history = History::default();
    for r in records {
        history.ops.extend(r.ops);
        history.conns.extend(r.conns);
        history.pubsub.deliveries.extend(r.deliveries);
    }
    // Stable: each connection's messages stay in the order it read them.
    history.pubsub.deliveries.sort_by_key(|d| d.at_ns);
    history
        .ops
        .sort_by_key(|op| (op.invoke_ns, op.conn, op.seq_in_conn));
    history.conns.sort_by_key(|c| c.conn);
    history.end_ns = end_ns;
    history
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_are_accepted() {
        assert!(loopback_addr("127.0.0.1:6379").is_ok());
        assert!(loopback_addr("[::1]:6379").is_ok());
        let e = loopback_addr("10.1.2.3:6379").unwrap_err();
        assert!(e.contains("not a loopback"), "{e}");
        assert!(loopback_addr("192.168.0.1:1").is_err());
        assert!(loopback_addr("no port").is_err());
    }
}
