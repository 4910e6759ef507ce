//! The replica side across implementations: a seedkv-server replica of a
//! redis-server 7.0.15 primary syncs in full (the RDB as a `$<len>` bulk,
//! or diskless `$EOF:<mark>`), then partially after its link is killed
//! from either end; a seedkv replica of a seedkv primary does the same.
//! The datasets are compared key by key after each sync. What a replica
//! answers (read-only errors, REPLICAOF, ROLE, INFO replication, expired
//! keys, promotion with REPLICAOF NO ONE) is compared with a redis-server
//! replica in the same situation.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use seedkv_engine::resp::Frame;
use seedkv_tests::replication::{
    assert_same_dataset, call, field, info, ok, wait_in_sync, write_dataset, SYNC_TIMEOUT,
};
use seedkv_tests::{redis_server_with, RespClient, ServerProcess};

const DISK: &[&str] = &["--repl-diskless-sync", "no"];
const DISKLESS: &[&str] = &[
    "--repl-diskless-sync",
    "yes",
    "--repl-diskless-sync-delay",
    "0",
];

fn seedkv_replica_of(port: u16) -> ServerProcess {
    ServerProcess::seedkv(&["--replicaof", "127.0.0.1", &port.to_string()])
}

fn redis_replica_of(port: u16) -> Option<ServerProcess> {
    redis_server_with(&["--replicaof", "127.0.0.1", &port.to_string()])
}

/// Waits until `replica`'s link is back up after a kill (a fresh link
/// may take the replication cron's second to reconnect).
fn wait_link_up(replica: &mut RespClient) {
    let start = Instant::now();
    while field(replica, "replication", "master_link_status") != "up" {
        assert!(start.elapsed() < SYNC_TIMEOUT, "the link never came back");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Full sync with writes before and during it, then a kill of the link
/// from the replica's side and one from the primary's, each followed by
/// writes and a partial resync; the datasets equal after each.
fn full_then_partial(
    primary: &mut RespClient,
    replica_port: u16,
    primary_log: impl Fn() -> String,
) {
    let mut replica = RespClient::connect(replica_port);
    write_dataset(primary, "during");
    wait_in_sync(primary, &mut replica);
    assert_same_dataset(primary, &mut replica, "after the full sync");
    assert_eq!(
        field(primary, "replication", "master_replid"),
        field(&mut replica, "replication", "master_replid")
    );
    assert_eq!(field(primary, "stats", "sync_full"), "1");

    // The replica drops its master client: it caches it and PSYNCs.
    let killed = call(&mut replica, &["CLIENT", "KILL", "TYPE", "master"]);
    assert_eq!(killed, Frame::Integer(1));
    write_dataset(primary, "after-replica-kill");
    wait_link_up(&mut replica);
    wait_in_sync(primary, &mut replica);
    assert_same_dataset(primary, &mut replica, "after the first partial resync");
    assert_eq!(field(primary, "stats", "sync_partial_ok"), "1");

    // The primary drops the replica.
    let killed = call(primary, &["CLIENT", "KILL", "TYPE", "replica"]);
    assert_eq!(killed, Frame::Integer(1));
    write_dataset(primary, "after-primary-kill");
    wait_link_up(&mut replica);
    wait_in_sync(primary, &mut replica);
    assert_same_dataset(primary, &mut replica, "after the second partial resync");
    assert_eq!(field(primary, "stats", "sync_partial_ok"), "2");
    assert_eq!(
        field(primary, "stats", "sync_full"),
        "1",
        "{}",
        primary_log()
    );
}

fn seedkv_replica_of_redis(sync: &[&str]) {
    let Some(primary_process) = redis_server_with(sync) else {
        return;
    };
    let mut primary = RespClient::connect(primary_process.port);
    write_dataset(&mut primary, "before");
    let replica_process = seedkv_replica_of(primary_process.port);
    full_then_partial(&mut primary, replica_process.port, || primary_process.log());
    let log = replica_process.log();
    assert!(
        log.contains("Master accepted a Partial Resynchronization"),
        "{log}"
    );
}

#[test]
fn seedkv_replica_of_redis_syncs_full_on_disk_then_partial() {
    seedkv_replica_of_redis(DISK);
}

#[test]
fn seedkv_replica_of_redis_syncs_full_diskless_then_partial() {
    seedkv_replica_of_redis(DISKLESS);
}

#[test]
fn seedkv_replica_of_seedkv_syncs_full_then_partial() {
    for diskless in ["no", "yes"] {
        let primary_process = ServerProcess::seedkv(&[]);
        let mut primary = RespClient::connect(primary_process.port);
        ok(
            &mut primary,
            &["CONFIG", "SET", "repl-diskless-sync", diskless],
        );
        write_dataset(&mut primary, "before");
        let replica_process = seedkv_replica_of(primary_process.port);
        full_then_partial(&mut primary, replica_process.port, || primary_process.log());
    }
}

/// A sub-replica of a seedkv replica gets its primary's stream as the
/// replica applies it (chained replication).
#[test]
fn seedkv_sub_replica_gets_the_primary_stream() {
    let Some(primary_process) = redis_server_with(DISK) else {
        return;
    };
    let mut primary = RespClient::connect(primary_process.port);
    write_dataset(&mut primary, "before");
    let replica_process = seedkv_replica_of(primary_process.port);
    let mut replica = RespClient::connect(replica_process.port);
    wait_in_sync(&mut primary, &mut replica);
    let Some(sub_process) = redis_replica_of(replica_process.port) else {
        return;
    };
    let mut sub = RespClient::connect(sub_process.port);
    write_dataset(&mut primary, "chained");
    wait_in_sync(&mut primary, &mut replica);
    wait_in_sync(&mut replica, &mut sub);
    assert_same_dataset(&mut primary, &mut sub, "at the end of the chain");
    assert_eq!(
        field(&mut sub, "replication", "master_repl_offset"),
        field(&mut primary, "replication", "master_repl_offset")
    );
}

/// The replies a replica gives, each compared with a redis-server replica
/// of the same primary.
#[test]
fn replica_replies_match_redis() {
    let Some(primary_process) = redis_server_with(DISK) else {
        return;
    };
    let mut primary = RespClient::connect(primary_process.port);
    ok(&mut primary, &["SET", "k", "v"]);
    let Some(redis_process) = redis_replica_of(primary_process.port) else {
        return;
    };
    let seedkv_process = seedkv_replica_of(primary_process.port);
    let mut expected = RespClient::connect(redis_process.port);
    let mut actual = RespClient::connect(seedkv_process.port);
    wait_in_sync(&mut primary, &mut expected);
    wait_in_sync(&mut primary, &mut actual);
    let port = primary_process.port.to_string();
    let requests: &[&[&str]] = &[
        &["SET", "k", "w"],
        &["DEL", "k"],
        &["EVAL", "return redis.call('set', 'x', '1')", "0"],
        &["GET", "k"],
        &["WAIT", "0", "0"],
        &["REPLICAOF", "127.0.0.1", &port],
        &["SLAVEOF", "127.0.0.1", &port],
        &["REPLICAOF", "127.0.0.1", "nope"],
        &["REPLICAOF", "127.0.0.1", "65536"],
        &["REPLICAOF", "127.0.0.1", "-1"],
        &["REPLICAOF", "127.0.0.1"],
        &["CONFIG", "GET", "replica-priority"],
        &["CONFIG", "GET", "slave-read-only"],
    ];
    for args in requests {
        let want = call(&mut expected, args);
        let got = call(&mut actual, args);
        assert_eq!(got, want, "{args:?}");
    }
    // ROLE: the same shape and values but the offset.
    let (Frame::Array(want), Frame::Array(got)) =
        (call(&mut expected, &["ROLE"]), call(&mut actual, &["ROLE"]))
    else {
        panic!("ROLE is an array");
    };
    assert_eq!(got[..4], want[..4]);
    assert!(matches!(got[4], Frame::Integer(_)));
    // INFO replication: the same fields in the same order, and the same
    // values where they do not depend on timing.
    let names = |c: &mut RespClient| -> Vec<String> {
        info(c, "replication").into_iter().map(|(k, _)| k).collect()
    };
    assert_eq!(names(&mut actual), names(&mut expected));
    for name in [
        "role",
        "master_host",
        "master_port",
        "master_link_status",
        "master_sync_in_progress",
        "slave_priority",
        "slave_read_only",
        "replica_announced",
        "connected_slaves",
        "master_failover_state",
        "master_replid",
        "master_replid2",
        "second_repl_offset",
        "repl_backlog_active",
    ] {
        assert_eq!(
            field(&mut actual, "replication", name),
            field(&mut expected, "replication", name),
            "{name}"
        );
    }
    // The master client, as CLIENT LIST shows it.
    let master_line = |c: &mut RespClient| -> String {
        seedkv_tests::replication::text(call(c, &["CLIENT", "LIST", "TYPE", "master"]))
    };
    let line = master_line(&mut actual);
    assert!(line.contains(" flags=M "), "{line}");
    assert!(line.contains(&format!("addr=127.0.0.1:{port} ")), "{line}");
    assert!(master_line(&mut expected).contains(" flags=M "));
}

/// An expired key reads as absent on a replica, but stays until its
/// primary's DEL (Redis 7.0's replicas do not expire keys themselves).
#[test]
fn replica_keeps_expired_keys_until_the_primary_deletes_them() {
    let Some(primary_process) = redis_server_with(&["--enable-debug-command", "yes"]) else {
        return;
    };
    let mut primary = RespClient::connect(primary_process.port);
    let Some(redis_process) = redis_replica_of(primary_process.port) else {
        return;
    };
    let seedkv_process = seedkv_replica_of(primary_process.port);
    let mut expected = RespClient::connect(redis_process.port);
    let mut actual = RespClient::connect(seedkv_process.port);
    // The primary neither expires actively nor is asked for the key.
    ok(&mut primary, &["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
    ok(&mut primary, &["SET", "soon", "v", "PX", "100"]);
    ok(&mut primary, &["SET", "kept", "v"]);
    wait_in_sync(&mut primary, &mut expected);
    wait_in_sync(&mut primary, &mut actual);
    std::thread::sleep(Duration::from_millis(300));
    for args in [
        &["GET", "soon"][..],
        &["EXISTS", "soon"],
        &["TTL", "soon"],
        &["DBSIZE"],
        &["GET", "kept"],
    ] {
        assert_eq!(
            call(&mut actual, args),
            call(&mut expected, args),
            "{args:?}"
        );
    }
    assert_eq!(call(&mut actual, &["DBSIZE"]), Frame::Integer(2));
    // The primary's lazy expiry sends the DEL: now it is gone.
    assert_eq!(call(&mut primary, &["GET", "soon"]), Frame::Null);
    wait_in_sync(&mut primary, &mut actual);
    assert_eq!(call(&mut actual, &["DBSIZE"]), Frame::Integer(1));
}

/// REPLICAOF NO ONE promotes the replica: its history shifts to
/// `master_replid2`, it takes writes, and INFO says so as redis-server's.
#[test]
fn replicaof_no_one_promotes_as_redis() {
    let Some(primary_process) = redis_server_with(DISK) else {
        return;
    };
    let mut primary = RespClient::connect(primary_process.port);
    write_dataset(&mut primary, "before");
    let Some(redis_process) = redis_replica_of(primary_process.port) else {
        return;
    };
    let seedkv_process = seedkv_replica_of(primary_process.port);
    let mut expected = RespClient::connect(redis_process.port);
    let mut actual = RespClient::connect(seedkv_process.port);
    let offset = wait_in_sync(&mut primary, &mut expected);
    assert_eq!(wait_in_sync(&mut primary, &mut actual), offset);
    let old_id = field(&mut primary, "replication", "master_replid");
    for c in [&mut expected, &mut actual] {
        assert_eq!(
            call(c, &["REPLICAOF", "NO", "ONE"]),
            Frame::Simple(b"OK".to_vec())
        );
        assert_eq!(field(c, "replication", "role"), "master");
        assert_eq!(field(c, "replication", "master_replid2"), old_id);
        assert_eq!(
            field(c, "replication", "second_repl_offset"),
            (offset + 1).to_string()
        );
        assert_ne!(field(c, "replication", "master_replid"), old_id);
        ok(c, &["SET", "promoted", "yes"]);
        assert_eq!(
            call(c, &["REPLICAOF", "NO", "ONE"]),
            Frame::Simple(b"OK".to_vec())
        );
    }
    let names = |c: &mut RespClient| -> Vec<String> {
        info(c, "replication").into_iter().map(|(k, _)| k).collect()
    };
    assert_eq!(names(&mut actual), names(&mut expected));
    let role = |c: &mut RespClient| match call(c, &["ROLE"]) {
        Frame::Array(parts) => parts[0].clone(),
        other => panic!("ROLE: {other:?}"),
    };
    assert_eq!(role(&mut actual), role(&mut expected));
}

/// Everything `s` sends until it closes the connection (or a timeout).
fn read_to_close(mut s: TcpStream) -> String {
    s.set_read_timeout(Some(SYNC_TIMEOUT)).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// A server that becomes a replica ends every blocked command (BLPOP,
/// XREAD BLOCK, WAIT) with `-UNBLOCKED ... (master -> replica?)` and
/// closes those connections; a client held by CLIENT PAUSE is not among
/// them. Replies, closes and the stats they leave compared with
/// redis-server's.
#[test]
fn replicaof_unblocks_blocked_clients_as_redis() {
    let transcript = |port: u16| -> String {
        let mut blocked = Vec::new();
        for cmd in [
            &["BLPOP", "q", "0"][..],
            &["XREAD", "BLOCK", "0", "STREAMS", "s", "$"],
            &["WAIT", "1", "0"],
        ] {
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            let args: Vec<&[u8]> = cmd.iter().map(|a| a.as_bytes()).collect();
            s.write_all(&seedkv_engine::resp::reply::encode_request(&args))
                .unwrap();
            blocked.push(s);
        }
        let mut admin = RespClient::connect(port);
        // Every blocked command is in before the role changes.
        let start = Instant::now();
        while field(&mut admin, "clients", "blocked_clients") != "3" {
            assert!(start.elapsed() < SYNC_TIMEOUT, "the clients never blocked");
            std::thread::sleep(Duration::from_millis(10));
        }
        // Port 1: nothing listens, the link stays down.
        ok(&mut admin, &["REPLICAOF", "127.0.0.1", "1"]);
        let mut out: Vec<String> = blocked.into_iter().map(read_to_close).collect();
        for section in ["errorstats", "commandstats"] {
            // Redis lists commands in its dict's order: sorted here.
            let mut lines = info(&mut admin, section);
            lines.sort();
            for (k, v) in lines {
                if k.contains("blpop")
                    || k.contains("xread")
                    || k.contains("wait")
                    || k.contains("UNBLOCKED")
                {
                    // Durations differ between servers; counts must not.
                    let counts: Vec<&str> = v.split(',').filter(|f| !f.contains("usec")).collect();
                    out.push(format!("{k}:{}", counts.join(",")));
                }
            }
        }
        out.push(field(&mut admin, "clients", "blocked_clients"));
        out.push(field(&mut admin, "stats", "total_error_replies"));
        out.join("\n")
    };
    let Some(redis) = redis_server_with(&[]) else {
        return;
    };
    let want = transcript(redis.port);
    let seedkv = ServerProcess::seedkv(&[]);
    let got = transcript(seedkv.port);
    assert_eq!(got, want, "seedkv (left) differs from redis-server (right)");
}
