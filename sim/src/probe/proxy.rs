//! The probe through a sharding proxy (twemproxy, Debian's `nutcracker`)
//! in front of several servers.
//!
//! A sharding proxy hashes each key to one server and forwards the command
//! there; it splits the multi-key commands it knows how to split (MGET,
//! MSET, DEL, UNLINK, EXISTS) and merges the replies. What it cannot
//! route it refuses, and twemproxy refuses by closing the client's
//! connection without a reply: server-wide commands (INFO, FLUSHALL,
//! CLIENT, DEBUG, KEYS, SCAN), MULTI/EXEC/WATCH, pub/sub and blocking
//! commands. Commands naming several keys that it does not split (SINTER,
//! SUNIONSTORE, LMOVE, EVAL with keys...) go to the first key's server
//! unchecked. So a probe through a proxy differs from a direct one in
//! three ways:
//!
//! - set-up (INFO server, FLUSHALL) goes to each shard directly, and the
//!   proxy is only asked for PING;
//! - a client's handshake is PING, not `CLIENT ID`, and the server-side
//!   faults (CLIENT KILL, CLIENT PAUSE, DEBUG SLEEP) are not sent (drawn,
//!   counted as skipped, so the streams stay those of a direct probe);
//!   the socket faults (disconnect mid-pipeline, slow read) still apply;
//! - only the workloads whose every command is single-key or split by the
//!   proxy run ([`SHARDED_WORKLOADS`]); the others are refused with the
//!   reason ([`NOT_SHARDED`]).
//!
//! The checkers are the probe's usual black-box ones. Pipeline order,
//! liveness, INCR atomicity and per-key linearizability all speak of one
//! connection or one key, so a sharded keyspace must satisfy them as one
//! server does; the SCAN, transfer and pub/sub checkers have nothing to
//! judge without their workloads.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use seedkv_engine::resp::Frame;

use super::conn::ProbeConn;
use super::{loopback_addr, SETUP_MS};
use crate::workload::WorkloadKind;

/// The workloads a probe through a proxy runs: every command they send
/// names one key, or is one the proxy splits by key (MSET, MGET, DEL,
/// EXISTS), or is a bare PING.
pub const SHARDED_WORKLOADS: &[&str] = &["kv", "counter", "ttl", "ping", "hashes"];

/// The probe's other workloads, and why they cannot run through a proxy.
pub const NOT_SHARDED: &[(&str, &str)] = &[
    (
        "pipeline",
        "its PING <token> is not proxied (twemproxy takes PING without an argument only)",
    ),
    ("scan", "SCAN is not proxied (it would walk one shard)"),
    ("big", "KEYS and DBSIZE are not proxied"),
    (
        "sets",
        "SINTER and SUNIONSTORE across shards go to the first key's shard",
    ),
    (
        "zsets",
        "ZUNIONSTORE across shards goes to the first key's shard",
    ),
    (
        "lists",
        "LMOVE/RPOPLPUSH across shards go to the source's shard; BLMOVE is not proxied",
    ),
    ("blocking", "blocking pops are not proxied"),
    ("transfer", "MULTI/EXEC and WATCH are not proxied"),
    ("pubsub", "pub/sub is not proxied"),
    ("streams", "stream commands are not proxied"),
];

/// `Err` naming the first workload that cannot run through a proxy.
pub fn check_workloads(kinds: &[WorkloadKind]) -> Result<(), String> {
    let Some(kind) = kinds
        .iter()
        .find(|k| !SHARDED_WORKLOADS.contains(&k.name()))
    else {
        return Ok(());
    };
    let why = NOT_SHARDED
        .iter()
        .find(|(name, _)| *name == kind.name())
        .map_or("it sends commands a proxy does not route", |(_, why)| *why);
    Err(format!(
        "workload {:?} cannot run through a sharding proxy: {why} (it can: {})",
        kind.name(),
        SHARDED_WORKLOADS.join(",")
    ))
}

/// The default workloads through a proxy: every one that can run there.
pub fn default_sharded_workloads() -> Vec<WorkloadKind> {
    SHARDED_WORKLOADS
        .iter()
        .filter_map(|n| WorkloadKind::from_name(n))
        .collect()
}

/// Checks that the proxy at `proxy` answers PING, then names and flushes
/// every shard directly. Returns e.g. `proxy over 2 shards: seedkv-server
/// 0.1.0 (redis_version 7.0.15) x2`.
pub fn prepare_shards(proxy: SocketAddr, shards: &[String]) -> Result<String, String> {
    let deadline = Instant::now() + Duration::from_millis(SETUP_MS);
    let mut conn =
        ProbeConn::connect(proxy).map_err(|e| format!("cannot connect to {proxy}: {e}"))?;
    match conn.call(&[b"PING"], deadline) {
        Ok(Frame::Simple(s)) if s == b"PONG" => {}
        other => {
            return Err(format!(
                "the proxy at {proxy} does not answer PING: {other:?}"
            ))
        }
    }
    let mut names: Vec<String> = Vec::with_capacity(shards.len());
    for shard in shards {
        let addr = loopback_addr(shard)?;
        names.push(super::prepare_server(addr)?);
    }
    Ok(format!(
        "proxy over {} shards: {}",
        shards.len(),
        summarize(&names)
    ))
}

/// `a x2, b` for the names `[a, a, b]`, in first-seen order.
fn summarize(names: &[String]) -> String {
    let mut counted: Vec<(&str, usize)> = Vec::new();
    for name in names {
        match counted.iter_mut().find(|(n, _)| n == name) {
            Some((_, count)) => *count += 1,
            None => counted.push((name, 1)),
        }
    }
    counted
        .iter()
        .map(|(name, count)| match count {
            1 => (*name).to_owned(),
            _ => format!("{name} x{count}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_probe_workload_is_either_sharded_or_refused_with_a_reason() {
        for name in super::super::PROBE_WORKLOADS {
            let sharded = SHARDED_WORKLOADS.contains(name);
            let refused = NOT_SHARDED.iter().any(|(n, _)| n == name);
            assert!(sharded != refused, "{name}");
        }
        assert!(check_workloads(&default_sharded_workloads()).is_ok());
        let e = check_workloads(&[WorkloadKind::Counter, WorkloadKind::Transfer]).unwrap_err();
        assert!(e.contains("MULTI/EXEC"), "{e}");
    }

    #[test]
    fn shard_names_are_summarized() {
        let names = ["a".to_owned(), "a".to_owned(), "b".to_owned()];
        assert_eq!(summarize(&names), "a x2, b");
    }
}
