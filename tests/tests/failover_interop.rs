//! FAILOVER across implementations: a seedkv primary hands its role to a
//! redis-server 7.0.15 replica and a redis-server primary to a seedkv
//! replica; the roles swap, the datasets are equal, no write acknowledged
//! with WAIT before the FAILOVER is lost, and the refusals are the same
//! replies on both servers.

use std::time::{Duration, Instant};

use seedkv_engine::resp::Frame;
use seedkv_tests::replication::{
    assert_same_dataset, call, field, ok, wait_in_sync, write_dataset,
};
use seedkv_tests::{redis_server, redis_server_with, RespClient, ServerProcess};

/// How long a hand-over may take: the target acks once a second.
const FAILOVER_TIMEOUT: Duration = Duration::from_secs(20);

fn role(c: &mut RespClient) -> String {
    match call(c, &["ROLE"]) {
        Frame::Array(items) => match &items[0] {
            Frame::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
            other => panic!("ROLE: {other:?}"),
        },
        other => panic!("ROLE: {other:?}"),
    }
}

/// Waits until `new_primary` is a primary and `old` its replica with the
/// link up and no failover in progress.
fn wait_swapped(new_primary: &mut RespClient, old: &mut RespClient) {
    let start = Instant::now();
    loop {
        let swapped = role(new_primary) == "master"
            && role(old) == "slave"
            && field(old, "replication", "master_link_status") == "up"
            && field(old, "replication", "master_failover_state") == "no-failover";
        if swapped {
            return;
        }
        assert!(
            start.elapsed() < FAILOVER_TIMEOUT,
            "the roles never swapped"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Writes acknowledged by the replica (WAIT 1), then FAILOVER with `args`
/// on `primary`, and the checks after the swap.
fn fail_over(primary: &mut RespClient, replica: &mut RespClient, args: &[&str]) {
    write_dataset(primary, "before");
    ok(primary, &["SET", "acked", "1"]);
    assert_eq!(call(primary, &["WAIT", "1", "10000"]), Frame::Integer(1));
    wait_in_sync(primary, replica);
    ok(primary, args);
    assert_eq!(
        call(primary, &["FAILOVER"]),
        Frame::Error(b"ERR FAILOVER already in progress.".to_vec())
    );
    wait_swapped(replica, primary);
    assert_eq!(
        field(replica, "replication", "master_failover_state"),
        "no-failover"
    );
    assert_eq!(call(replica, &["GET", "acked"]), Frame::Bulk(b"1".to_vec()));
    assert_same_dataset(replica, primary, "after the failover");
    assert_eq!(
        call(primary, &["SET", "late", "1"]),
        Frame::Error(b"READONLY You can't write against a read only replica.".to_vec())
    );
    assert_eq!(
        call(primary, &["FAILOVER"]),
        Frame::Error(b"ERR FAILOVER is not valid when server is a replica.".to_vec())
    );
    // The new primary's writes reach the old one.
    ok(replica, &["SET", "after", "1"]);
    wait_in_sync(replica, primary);
    assert_same_dataset(replica, primary, "after a write on the new primary");
}

#[test]
fn seedkv_primary_fails_over_to_a_redis_replica() {
    let primary_process = ServerProcess::seedkv(&[]);
    let port = primary_process.port.to_string();
    let Some(replica_process) = redis_server_with(&["--replicaof", "127.0.0.1", &port]) else {
        return;
    };
    let mut primary = RespClient::connect(primary_process.port);
    let mut replica = RespClient::connect(replica_process.port);
    fail_over(&mut primary, &mut replica, &["FAILOVER"]);
}

#[test]
fn redis_primary_fails_over_to_a_seedkv_replica() {
    let Some(primary_process) = redis_server() else {
        return;
    };
    let port = primary_process.port.to_string();
    let replica_process = ServerProcess::seedkv(&["--replicaof", "127.0.0.1", &port]);
    let mut primary = RespClient::connect(primary_process.port);
    let mut replica = RespClient::connect(replica_process.port);
    let target = replica_process.port.to_string();
    let args = ["FAILOVER", "TO", "127.0.0.1", &target, "TIMEOUT", "10000"];
    fail_over(&mut primary, &mut replica, &args);
}

/// The refusals of a primary without replicas, reply for reply.
#[test]
fn refusals_match_redis() {
    let Some(redis_process) = redis_server() else {
        return;
    };
    let seedkv_process = ServerProcess::seedkv(&[]);
    let mut redis = RespClient::connect(redis_process.port);
    let mut seedkv = RespClient::connect(seedkv_process.port);
    for args in [
        &["FAILOVER"][..],
        &["FAILOVER", "ABORT"],
        &["FAILOVER", "abort", "now"],
        &["FAILOVER", "TIMEOUT", "0"],
        &["FAILOVER", "TIMEOUT", "-5"],
        &["FAILOVER", "TIMEOUT", "x"],
        &["FAILOVER", "TIMEOUT", "5", "TIMEOUT", "5"],
        &["FAILOVER", "TO", "127.0.0.1"],
        &["FAILOVER", "TO", "127.0.0.1", "x"],
        &["FAILOVER", "TO", "127.0.0.1", "1", "FORCE"],
        &["FAILOVER", "FORCE", "FORCE"],
        &["FAILOVER", "bogus"],
        &[
            "PSYNC",
            "0123456789abcdef0123456789abcdef01234567",
            "1",
            "FAILOVER",
        ],
    ] {
        assert_eq!(call(&mut seedkv, args), call(&mut redis, args), "{args:?}");
    }
}
