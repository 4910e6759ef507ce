//! Replication across implementations: a redis-server 7.0.15 replica of a
//! seedkv-server primary syncs in full (the RDB and the stream, with
//! writes before and during the sync), then, after its link is killed,
//! partially (`+CONTINUE` from the backlog); the datasets are compared
//! key by key after each. WAIT, ROLE and INFO replication are checked
//! against what redis-server prints in the same situation.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use seedkv_engine::resp::Frame;
use seedkv_tests::{redis_server, redis_server_with, RespClient, ServerProcess};

/// How long a sync may take before the test gives up on it (a hang fails
/// the test; nothing asserts how fast it is).
const SYNC_TIMEOUT: Duration = Duration::from_secs(30);
const DATABASES: usize = 16;

fn call(c: &mut RespClient, args: &[&str]) -> Frame {
    let refs: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    c.command(&refs)
}

fn ok(c: &mut RespClient, args: &[&str]) {
    let reply = call(c, args);
    assert!(
        !matches!(reply, Frame::Error(_)),
        "{args:?} failed: {reply:?}"
    );
}

fn text(frame: Frame) -> String {
    match frame {
        Frame::Bulk(b) | Frame::Simple(b) => String::from_utf8_lossy(&b).into_owned(),
        Frame::Verbatim { data, .. } => String::from_utf8_lossy(&data).into_owned(),
        other => panic!("not text: {other:?}"),
    }
}

/// INFO `section` as `field -> value`, in order.
fn info(c: &mut RespClient, section: &str) -> Vec<(String, String)> {
    text(call(c, &["INFO", section]))
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn field(c: &mut RespClient, section: &str, name: &str) -> String {
    info(c, section)
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("INFO {section} has no {name}"))
}

/// Writes one key of every type (and one with a TTL) into databases 0
/// and 5, with names tagged by `tag`, through `c`.
fn write_dataset(c: &mut RespClient, tag: &str) {
    for db in ["0", "5"] {
        ok(c, &["SELECT", db]);
        let k = |name: &str| format!("{tag}:{name}");
        ok(c, &["SET", &k("str"), &format!("value-{tag}-{db}")]);
        ok(c, &["INCRBY", &k("counter"), "41"]);
        ok(c, &["RPUSH", &k("list"), "a", "b", "c", tag]);
        ok(c, &["LPOP", &k("list")]);
        ok(c, &["HSET", &k("hash"), "f1", "v1", "f2", tag]);
        ok(c, &["SADD", &k("set"), "x", "y", "z", tag]);
        ok(c, &["SPOP", &k("set")]);
        ok(
            c,
            &["ZADD", &k("zset"), "1.5", "one", "2", "two", "-3", tag],
        );
        ok(c, &["ZINCRBY", &k("zset"), "10", "one"]);
        ok(c, &["XADD", &k("stream"), "*", "field", tag]);
        ok(c, &["XADD", &k("stream"), "*", "other", "value"]);
        ok(c, &["SET", &k("ttl"), "expiring", "EX", "1000"]);
        ok(c, &["EXPIRE", &k("hash"), "2000"]);
        ok(c, &["MULTI"]);
        ok(c, &["INCR", &k("tx")]);
        ok(c, &["APPEND", &k("str"), "!"]);
        ok(c, &["EXEC"]);
        ok(
            c,
            &[
                "EVAL",
                "redis.call('set', KEYS[1], ARGV[1])",
                "1",
                &k("lua"),
                tag,
            ],
        );
    }
    ok(c, &["SELECT", "0"]);
}

/// Every key of every database, as its type and contents in a canonical
/// text (members of sets and hashes sorted), and whether it has a TTL.
fn dataset(c: &mut RespClient) -> BTreeMap<(usize, String), String> {
    let mut all = BTreeMap::new();
    for db in 0..DATABASES {
        ok(c, &["SELECT", &db.to_string()]);
        for key in scan_keys(c) {
            let value = canonical(c, &key);
            all.insert((db, key), value);
        }
    }
    ok(c, &["SELECT", "0"]);
    all
}

fn scan_keys(c: &mut RespClient) -> Vec<String> {
    let mut keys = Vec::new();
    let mut cursor = "0".to_string();
    loop {
        let Frame::Array(mut parts) = call(c, &["SCAN", &cursor, "COUNT", "1000"]) else {
            panic!("SCAN reply");
        };
        let Frame::Array(batch) = parts.pop().expect("keys") else {
            panic!("SCAN keys");
        };
        keys.extend(batch.into_iter().map(text));
        cursor = text(parts.pop().expect("cursor"));
        if cursor == "0" {
            return keys;
        }
    }
}

fn canonical(c: &mut RespClient, key: &str) -> String {
    let kind = text(call(c, &["TYPE", key]));
    let value = match kind.as_str() {
        "string" => call(c, &["GET", key]).render(),
        "list" => call(c, &["LRANGE", key, "0", "-1"]).render(),
        "hash" => sorted(call(c, &["HGETALL", key])),
        "set" => sorted(call(c, &["SMEMBERS", key])),
        "zset" => call(c, &["ZRANGE", key, "0", "-1", "WITHSCORES"]).render(),
        "stream" => call(c, &["XRANGE", key, "-", "+"]).render(),
        other => panic!("unexpected type {other} of {key}"),
    };
    let has_ttl = matches!(call(c, &["PTTL", key]), Frame::Integer(ms) if ms > 0);
    format!("{kind} ttl={has_ttl} {value}")
}

fn sorted(frame: Frame) -> String {
    let Frame::Array(items) = frame else {
        panic!("array reply");
    };
    let mut items: Vec<String> = items.into_iter().map(|f| f.render()).collect();
    items.sort();
    items.join("|")
}

/// Waits until the replica's link is up and it has applied everything the
/// primary produced, then returns that offset.
fn wait_in_sync(primary: &mut RespClient, replica: &mut RespClient) -> u64 {
    let start = Instant::now();
    loop {
        let target = field(primary, "replication", "master_repl_offset");
        let repl = info(replica, "replication");
        let get = |name: &str| repl.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        if get("master_link_status").as_deref() == Some("up")
            && get("slave_repl_offset").as_deref() == Some(target.as_str())
        {
            return target.parse().expect("an offset");
        }
        assert!(
            start.elapsed() < SYNC_TIMEOUT,
            "replica not in sync: primary at {target}, replica {repl:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn assert_same_dataset(primary: &mut RespClient, replica: &mut RespClient, when: &str) {
    let (p, r) = (dataset(primary), dataset(replica));
    assert!(!p.is_empty(), "{when}: the primary has no keys");
    assert_eq!(p, r, "{when}: the datasets differ");
}

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
