//! Replication across a restart, against redis-server 7.0.15: a dump
//! records where the replication stream stood (`repl-id`, `repl-offset`,
//! `repl-stream-db`), and a server started from it resyncs partially.
//!
//! - A seedkv replica of a redis-server primary shuts down with SHUTDOWN
//!   SAVE while the primary goes on writing (in the database its stream
//!   selected last, so that no SELECT follows), starts again from its
//!   dump and continues with `PSYNC <replid> <offset + 1>`: the primary
//!   counts a partial resync and no second full one, and the datasets are
//!   equal.
//! - A seedkv primary restarted from its dump keeps its old history as
//!   `replid2`, as redis-server does, so that a redis-server replica of
//!   the old run resyncs partially with it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use seedkv_engine::resp::reply::encode_request;
use seedkv_tests::replication::{
    assert_same_dataset, field, ok, wait_in_sync, write_dataset, SYNC_TIMEOUT,
};
use seedkv_tests::{redis_server, redis_server_with, RespClient, ServerProcess};

/// SHUTDOWN SAVE, then waits for the process to exit cleanly.
fn shutdown_save(server: &mut ServerProcess) {
    let mut s = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    s.write_all(&encode_request(&[&b"SHUTDOWN"[..], b"SAVE"]))
        .unwrap();
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    assert!(server.wait_exit().success(), "{}", server.log());
}

fn wait_link_up(replica: &mut RespClient) {
    let start = Instant::now();
    while field(replica, "replication", "master_link_status") != "up" {
        assert!(start.elapsed() < SYNC_TIMEOUT, "the link never came up");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_restarted_seedkv_replica_resyncs_partially_from_its_dump() {
    let Some(primary_process) = redis_server() else {
        return;
    };
    let mut primary = RespClient::connect(primary_process.port);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let port = primary_process.port.to_string();
    let args = ["--dir", &d, "--save", "", "--replicaof", "127.0.0.1", &port];

    write_dataset(&mut primary, "before");
    let mut replica_process = ServerProcess::seedkv(&args);
    let mut replica = RespClient::connect(replica_process.port);
    wait_in_sync(&mut primary, &mut replica);
    let replid = field(&mut primary, "replication", "master_replid");
    shutdown_save(&mut replica_process);

    // The stream's last database was 5 (write_dataset ends its writes
    // there); these go on in it with no SELECT, so the restarted replica
    // must take the database from its dump.
    ok(&mut primary, &["SELECT", "5"]);
    ok(&mut primary, &["SET", "while-down", "db5"]);
    ok(&mut primary, &["INCRBY", "before:counter", "1"]);
    ok(&mut primary, &["SELECT", "0"]);

    let replica_process = ServerProcess::seedkv(&args);
    let mut replica = RespClient::connect(replica_process.port);
    wait_link_up(&mut replica);
    wait_in_sync(&mut primary, &mut replica);
    assert_same_dataset(&mut primary, &mut replica, "after the restart");
    assert_eq!(field(&mut primary, "stats", "sync_full"), "1");
    assert_eq!(field(&mut primary, "stats", "sync_partial_ok"), "1");
    assert_eq!(field(&mut replica, "replication", "master_replid"), replid);
    let log = replica_process.log();
    assert!(log.contains("synthesize a cached master"), "{log}");
    assert!(
        log.contains("Master accepted a Partial Resynchronization"),
        "{log}"
    );
}

/// What `INFO replication` of a primary restarted from its dump shows of
/// its old history, beside that history's id and offset before.
fn restarted_history(before_replid: &str, before_offset: u64, c: &mut RespClient) -> String {
    let replid2 = field(c, "replication", "master_replid2");
    let second = field(c, "replication", "second_repl_offset");
    let offset = field(c, "replication", "master_repl_offset");
    let first = field(c, "replication", "repl_backlog_first_byte_offset");
    format!(
        "replid2-is-old={} second={} offset={} first={} active={} histlen={}",
        replid2 == before_replid,
        second.parse::<u64>().unwrap() - before_offset,
        offset.parse::<u64>().unwrap() - before_offset,
        first.parse::<u64>().unwrap() - before_offset,
        field(c, "replication", "repl_backlog_active"),
        field(c, "replication", "repl_backlog_histlen"),
    )
}

/// A primary with a replica, SHUTDOWN SAVE, started again from its dump:
/// the history it reports, and (for seedkv) a partial resync of the old
/// replica.
fn restart_primary(seedkv: bool) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let args = ["--dir", &d, "--save", ""];
    let start = |args: &[&str]| match seedkv {
        true => Some(ServerProcess::seedkv(args)),
        false => redis_server_with(args),
    };
    let mut primary_process = start(&args)?;
    let mut primary = RespClient::connect(primary_process.port);
    write_dataset(&mut primary, "before");
    let replica_process = redis_server_with(&[
        "--replicaof",
        "127.0.0.1",
        &primary_process.port.to_string(),
    ])?;
    let mut replica = RespClient::connect(replica_process.port);
    wait_in_sync(&mut primary, &mut replica);
    let replid = field(&mut primary, "replication", "master_replid");
    let offset: u64 = field(&mut primary, "replication", "master_repl_offset")
        .parse()
        .unwrap();
    shutdown_save(&mut primary_process);

    let primary_process = start(&args)?;
    let mut primary = RespClient::connect(primary_process.port);
    let history = restarted_history(&replid, offset, &mut primary);
    // The first write after the restart selects its database again.
    ok(&mut primary, &["SET", "after-restart", "1"]);
    let port = primary_process.port.to_string();
    ok(&mut replica, &["REPLICAOF", "127.0.0.1", &port]);
    wait_link_up(&mut replica);
    wait_in_sync(&mut primary, &mut replica);
    assert_same_dataset(&mut primary, &mut replica, "after the primary's restart");
    assert_eq!(field(&mut primary, "stats", "sync_full"), "0");
    assert_eq!(field(&mut primary, "stats", "sync_partial_ok"), "1");
    Some(history)
}

#[test]
fn a_restarted_primary_keeps_its_history_as_redis_does() {
    let Some(want) = restart_primary(false) else {
        return;
    };
    let got = restart_primary(true).expect("redis-server ran above");
    assert_eq!(got, want, "seedkv (left) differs from redis-server (right)");
}
