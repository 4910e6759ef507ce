//! Replication across implementations: a redis-server 7.0.15 replica of a
//! seedkv-server primary syncs in full (the RDB and the stream, with
//! writes before and during the sync), then, after its link is killed,
//! partially (`+CONTINUE` from the backlog); the datasets are compared
//! key by key after each. WAIT, ROLE and INFO replication are checked
//! against what redis-server prints in the same situation.

use seedkv_engine::resp::Frame;
use seedkv_tests::replication::{
    assert_same_dataset, call, field, info, ok, wait_in_sync, write_dataset,
};
use seedkv_tests::{redis_server, redis_server_with, RespClient, ServerProcess};

#[test]
fn redis_replica_of_seedkv_syncs_full_then_partial() {
    let primary_process = ServerProcess::seedkv(&[]);
    let mut primary = RespClient::connect(primary_process.port);
    write_dataset(&mut primary, "before");
    let port = primary_process.port.to_string();
    let Some(replica_process) = redis_server_with(&["--replicaof", "127.0.0.1", &port]) else {
        return;
    };
    // Writes while the replica connects and syncs.
    write_dataset(&mut primary, "during");
    let mut replica = RespClient::connect(replica_process.port);
    wait_in_sync(&mut primary, &mut replica);
    assert_same_dataset(&mut primary, &mut replica, "after the full sync");
    assert_eq!(
        field(&mut primary, "replication", "master_replid"),
        field(&mut replica, "replication", "master_replid")
    );
    assert_eq!(field(&mut primary, "stats", "sync_full"), "1");

    // WAIT counts the replica once it acknowledged this client's writes.
    ok(&mut primary, &["SET", "waited", "1"]);
    assert_eq!(
        call(&mut primary, &["WAIT", "1", "10000"]),
        Frame::Integer(1)
    );
    let offset = wait_in_sync(&mut primary, &mut replica);
    let role = call(&mut primary, &["ROLE"]);
    let Frame::Array(role) = role else {
        panic!("ROLE: {role:?}")
    };
    assert_eq!(role[0], Frame::Bulk(b"master".to_vec()));
    assert!(matches!(role[1], Frame::Integer(o) if o as u64 >= offset));
    let Frame::Array(replicas) = &role[2] else {
        panic!("ROLE replicas")
    };
    let listed = &replicas[0];
    let Frame::Array(entry) = listed else {
        panic!("ROLE entry")
    };
    assert_eq!(entry[0], Frame::Bulk(b"127.0.0.1".to_vec()));
    assert_eq!(
        entry[1],
        Frame::Bulk(replica_process.port.to_string().into_bytes())
    );

    // Killing the link: the replica comes back with PSYNC and the backlog
    // covers the gap, so the resync is partial.
    let killed = call(&mut primary, &["CLIENT", "KILL", "TYPE", "replica"]);
    assert_eq!(killed, Frame::Integer(1));
    write_dataset(&mut primary, "after-kill");
    wait_in_sync(&mut primary, &mut replica);
    assert_same_dataset(&mut primary, &mut replica, "after the partial resync");
    assert_eq!(field(&mut primary, "stats", "sync_partial_ok"), "1");
    assert_eq!(field(&mut primary, "stats", "sync_full"), "1");
    assert!(replica_process
        .log()
        .contains("Successful partial resynchronization"));
}

/// INFO replication of a primary with one replica has the fields, in the
/// order, that redis-server 7.0.15 prints, and the replica's line the same
/// shape.
#[test]
fn info_replication_of_a_primary_has_redis_fields() {
    let Some(redis_primary) = redis_server() else {
        return;
    };
    let rport = redis_primary.port.to_string();
    let Some(redis_replica) = redis_server_with(&["--replicaof", "127.0.0.1", &rport]) else {
        return;
    };
    let seedkv_primary = ServerProcess::seedkv(&[]);
    let sport = seedkv_primary.port.to_string();
    let Some(seedkv_replica) = redis_server_with(&["--replicaof", "127.0.0.1", &sport]) else {
        return;
    };
    let mut expected = RespClient::connect(redis_primary.port);
    let mut actual = RespClient::connect(seedkv_primary.port);
    for (primary, replica) in [
        (&mut expected, &redis_replica),
        (&mut actual, &seedkv_replica),
    ] {
        ok(primary, &["SET", "k", "v"]);
        wait_in_sync(primary, &mut RespClient::connect(replica.port));
    }
    let names = |c: &mut RespClient| -> Vec<String> {
        info(c, "replication").into_iter().map(|(k, _)| k).collect()
    };
    assert_eq!(names(&mut actual), names(&mut expected));
    let shape = |c: &mut RespClient| -> Vec<String> {
        field(c, "replication", "slave0")
            .split(',')
            .map(|kv| kv.split('=').next().unwrap_or("").to_string())
            .collect()
    };
    assert_eq!(shape(&mut actual), shape(&mut expected));
    assert_eq!(
        field(&mut actual, "replication", "repl_backlog_active"),
        "1"
    );
}
