//! Replication helpers shared by the cross-implementation tests: writing
//! a dataset of every type, reading one back in a canonical form key by
//! key, INFO fields, and waiting until a replica has applied everything
//! its primary produced.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use seedkv_engine::resp::Frame;

use crate::RespClient;

/// How long a sync may take before the test gives up on it (a hang fails
/// the test; nothing asserts how fast it is).
pub const SYNC_TIMEOUT: Duration = Duration::from_secs(30);
pub const DATABASES: usize = 16;

pub fn call(c: &mut RespClient, args: &[&str]) -> Frame {
    let refs: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    c.command(&refs)
}

pub fn ok(c: &mut RespClient, args: &[&str]) {
    let reply = call(c, args);
    assert!(
        !matches!(reply, Frame::Error(_)),
        "{args:?} failed: {reply:?}"
    );
}

pub fn text(frame: Frame) -> String {
    match frame {
        Frame::Bulk(b) | Frame::Simple(b) => String::from_utf8_lossy(&b).into_owned(),
        Frame::Verbatim { data, .. } => String::from_utf8_lossy(&data).into_owned(),
        other => panic!("not text: {other:?}"),
    }
}

/// INFO `section` as `field -> value`, in order.
pub fn info(c: &mut RespClient, section: &str) -> Vec<(String, String)> {
    text(call(c, &["INFO", section]))
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

pub fn field(c: &mut RespClient, section: &str, name: &str) -> String {
    info(c, section)
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("INFO {section} has no {name}"))
}

/// Writes one key of every type (and one with a TTL) into databases 0
/// and 5, with names tagged by `tag`, through `c`.
pub fn write_dataset(c: &mut RespClient, tag: &str) {
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
pub fn dataset(c: &mut RespClient) -> BTreeMap<(usize, String), String> {
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

pub fn scan_keys(c: &mut RespClient) -> Vec<String> {
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

pub fn canonical(c: &mut RespClient, key: &str) -> String {
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

pub fn sorted(frame: Frame) -> String {
    let Frame::Array(items) = frame else {
        panic!("array reply");
    };
    let mut items: Vec<String> = items.into_iter().map(|f| f.render()).collect();
    items.sort();
    items.join("|")
}

/// Waits until the replica's link is up and it has applied everything the
/// primary produced, then returns that offset.
pub fn wait_in_sync(primary: &mut RespClient, replica: &mut RespClient) -> u64 {
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

pub fn assert_same_dataset(primary: &mut RespClient, replica: &mut RespClient, when: &str) {
    let (p, r) = (dataset(primary), dataset(replica));
    assert!(!p.is_empty(), "{when}: the primary has no keys");
    assert_eq!(p, r, "{when}: the datasets differ");
}
