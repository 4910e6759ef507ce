//! Expiry in the states where Redis 7.0.15 does not simply delete an
//! expired key, compared with redis-server:
//!
//! - Under CLIENT PAUSE the dataset stays static: an expired key reads as
//!   absent but is neither deleted on access nor by the active cycle until
//!   the pause ends.
//! - A writable replica (`replica-read-only no`) deletes an expired key
//!   when a write looks it up, and expires the keys its own clients gave a
//!   TTL by itself (`expireSlaveKeys`), while a read leaves an expired key
//!   in place.

use std::time::{Duration, Instant};

use seedkv_engine::resp::Frame;
use seedkv_tests::replication::{call, field, ok};
use seedkv_tests::{redis_server_with, RespClient, ServerProcess};

/// How long a test waits for a key's expiry to be acted on.
const EXPIRY_WAIT: Duration = Duration::from_secs(10);

fn show(frame: Frame) -> String {
    format!("{frame:?}")
}

/// Waits until INFO stats `expired_keys` reaches `want`.
fn wait_expired(c: &mut RespClient, want: u64) {
    let start = Instant::now();
    while field(c, "stats", "expired_keys").parse::<u64>().unwrap() < want {
        assert!(start.elapsed() < EXPIRY_WAIT, "the keys never expired");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn same_on_both(name: &str, scenario: impl Fn(u16) -> Vec<String>) {
    let Some(redis) = redis_server_with(&[]) else {
        return;
    };
    let want = scenario(redis.port);
    let seedkv = ServerProcess::seedkv(&[]);
    let got = scenario(seedkv.port);
    assert_eq!(
        got, want,
        "{name}: seedkv (left) differs from redis-server (right)"
    );
}

#[test]
fn client_pause_keeps_expired_keys_until_it_ends() {
    same_on_both("pause", |port| {
        let mut c = RespClient::connect(port);
        let mut out = Vec::new();
        ok(&mut c, &["SET", "a", "1", "PX", "50"]);
        ok(&mut c, &["SET", "b", "1", "PX", "50"]);
        ok(&mut c, &["CLIENT", "PAUSE", "100000", "WRITE"]);
        // Expired for a while: well past a few active-expiry cycles.
        std::thread::sleep(Duration::from_millis(400));
        out.push(show(call(&mut c, &["GET", "a"])));
        out.push(show(call(&mut c, &["EXISTS", "a", "b"])));
        out.push(show(call(&mut c, &["DBSIZE"])));
        out.push(field(&mut c, "stats", "expired_keys"));
        ok(&mut c, &["CLIENT", "UNPAUSE"]);
        wait_expired(&mut c, 2);
        out.push(show(call(&mut c, &["DBSIZE"])));
        out
    });
}

#[test]
fn a_writable_replica_expires_what_its_clients_wrote() {
    same_on_both("writable replica", |port| {
        let mut c = RespClient::connect(port);
        let mut out = Vec::new();
        ok(&mut c, &["CONFIG", "SET", "replica-read-only", "no"]);
        // Port 1: nothing listens; the replica takes its clients' writes.
        ok(&mut c, &["REPLICAOF", "127.0.0.1", "1"]);
        ok(&mut c, &["SET", "a", "1", "PX", "50"]);
        ok(&mut c, &["SET", "b", "1", "PX", "50"]);
        ok(&mut c, &["RPUSH", "l", "x"]);
        ok(&mut c, &["PEXPIRE", "l", "50"]);
        ok(&mut c, &["SET", "c", "5", "PX", "50"]);
        ok(&mut c, &["SET", "keep", "1", "PX", "1000000"]);
        wait_expired(&mut c, 4);
        out.push(show(call(&mut c, &["DBSIZE"])));
        out.push(show(call(&mut c, &["EXISTS", "keep"])));
        // A write on a key that had a TTL starts it afresh.
        out.push(show(call(&mut c, &["SET", "b", "2", "NX"])));
        out.push(show(call(&mut c, &["INCR", "c"])));
        out.push(show(call(&mut c, &["TTL", "c"])));
        out.push(show(call(&mut c, &["DBSIZE"])));
        out.push(field(&mut c, "stats", "expired_keys"));
        out
    });
}
