//! Streams in RDB form against redis-server 7.0.15, both ways: streams
//! with several nodes, tombstones, consumer groups with pending entries
//! and consumers (one without any), a group whose read counter is
//! unknown, and an empty stream with a group.
//!
//! - DUMP/RESTORE: a payload DUMPed by one server RESTOREs on the other
//!   to the same XINFO STREAM FULL, and DUMPs there to the same bytes.
//! - Whole files: redis-server's SAVE loads into an engine, and an
//!   engine's file passes redis-check-rdb and loads into redis-server,
//!   with the same XINFO STREAM FULL on both sides.
//!
//! Skipped, with a printed reason, when redis-server is not installed.

use std::time::{SystemTime, UNIX_EPOCH};

use seedkv_engine::resp::Frame;
use seedkv_engine::testing::TestEngine;
use seedkv_engine::{Config, Engine, Now};
use seedkv_tests::{
    find_in_path, redis_server, redis_server_with, run_tool, RespClient, ServerProcess,
};

/// The keys [`SETUP`] builds.
const KEYS: &[&str] = &["st", "empty", "wide", "trimmed"];

/// Commands that build the streams (explicit IDs, so both servers hold
/// the same entries; delivery and seen times are each server's clock,
/// carried as they are).
const SETUP: &[&str] = &[
    "CONFIG SET stream-node-max-entries 4",
    "XADD st 1-1 f v n 1",
    "XADD st 1-2 f v n 2",
    "XADD st 2-1 other 7",
    "XADD st 3-1 f v n -300",
    "XADD st 4-1 f v n 70000",
    "XADD st 5-1 f v n 9223372036854775807",
    "XADD st 18446744073-0 f v",
    "XADD st 18446744073-5 a b c d e f",
    "XADD st 18446744074-0 f v n x",
    "XDEL st 3-1 18446744073-0",
    "XGROUP CREATE st g1 0",
    "XREADGROUP GROUP g1 alice COUNT 3 STREAMS st >",
    "XREADGROUP GROUP g1 bob COUNT 2 STREAMS st >",
    "XACK st g1 1-1",
    "XGROUP CREATECONSUMER st g1 idle",
    "XCLAIM st g1 carol 0 4-1 TIME 1700000000000 RETRYCOUNT 5",
    "XGROUP CREATE st g2 $",
    "XGROUP CREATE st g3 2-1",
    "XGROUP SETID st g3 2-1 ENTRIESREAD -1",
    "XGROUP CREATE empty g $ MKSTREAM",
    "CONFIG SET stream-node-max-entries 100",
    "CONFIG SET stream-node-max-bytes 300",
    "XADD wide 1-0 field aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "XADD wide 2-0 field bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
    "XADD wide 3-0 field cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc",
    "XADD wide 4-0 field dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
    "CONFIG SET stream-node-max-bytes 4096",
    "XADD trimmed 1-0 a 1",
    "XADD trimmed 2-0 a 2",
    "XADD trimmed 3-0 a 3",
    "XTRIM trimmed MAXLEN 1",
    "XSETID trimmed 9-9 ENTRIESADDED 20 MAXDELETEDID 5-0",
];

fn words(line: &str) -> Vec<&[u8]> {
    line.split(' ').map(str::as_bytes).collect()
}

fn ok(reply: &Frame, what: &str) {
    assert!(!matches!(reply, Frame::Error(_)), "{what}: {reply:?}");
}

fn build(c: &mut RespClient) {
    ok(&c.command(&[b"FLUSHALL"]), "FLUSHALL");
    for line in SETUP {
        ok(&c.command(&words(line)), line);
    }
}

fn info(c: &mut dyn FnMut(&[&[u8]]) -> Frame, key: &str) -> Frame {
    c(&[b"XINFO", b"STREAM", key.as_bytes(), b"FULL", b"COUNT", b"0"])
}

fn dump(c: &mut RespClient, key: &str) -> Vec<u8> {
    match c.command(&[b"DUMP", key.as_bytes()]) {
        Frame::Bulk(b) => b,
        other => panic!("DUMP {key}: {other:?}"),
    }
}

/// DUMPs every key on `from`, RESTOREs it on `to`, and checks the stream
/// and, without compression, the bytes DUMPed back. (With compression the
/// `lzf` crate and Redis's liblzf may cut the last bytes of a payload
/// differently: a literal where liblzf finds a 3-byte match.)
fn transfer(from: &mut RespClient, to: &mut RespClient, direction: &str, same_bytes: bool) {
    for key in KEYS {
        let payload = dump(from, key);
        ok(
            &to.command(&[b"RESTORE", key.as_bytes(), b"0", &payload, b"REPLACE"]),
            &format!("{direction}: RESTORE {key}"),
        );
        let want = info(&mut |a| from.command(a), key);
        let got = info(&mut |a| to.command(a), key);
        assert_eq!(want, got, "{direction}: XINFO STREAM {key} FULL");
        if same_bytes {
            assert_eq!(dump(to, key), payload, "{direction}: DUMP {key} again");
        }
    }
}

#[test]
fn streams_dump_and_restore_both_ways() {
    let Some(redis) = redis_server() else { return };
    let seedkv = ServerProcess::seedkv(&[]);
    let mut theirs = RespClient::connect(redis.port);
    let mut ours = RespClient::connect(seedkv.port);
    for compression in ["yes", "no"] {
        for c in [&mut theirs, &mut ours] {
            ok(
                &c.command(&[b"CONFIG", b"SET", b"rdbcompression", compression.as_bytes()]),
                "rdbcompression",
            );
            build(c);
        }
        let same_bytes = compression == "no";
        transfer(&mut theirs, &mut ours, "redis -> seedkv", same_bytes);
        build(&mut ours);
        transfer(&mut ours, &mut theirs, "seedkv -> redis", same_bytes);
    }
}

fn wall_now() -> Now {
    let unix_us = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_micros() as u64;
    Now {
        mono_ns: unix_us * 1000,
        unix_us,
    }
}

fn engine() -> (TestEngine, seedkv_engine::ClientId) {
    let now = wall_now();
    let mut t = TestEngine {
        engine: Engine::new(Config::default(), now),
        now,
        events: Vec::new(),
    };
    let c = t.connect();
    (t, c)
}

#[test]
fn stream_files_load_both_ways() {
    let dir = std::env::temp_dir().join(format!("seedkv-stream-rdb-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let dir_arg = dir.to_str().expect("utf-8").to_string();
    let Some(redis) = redis_server_with(&["--dir", &dir_arg, "--dbfilename", "dump.rdb"]) else {
        return;
    };
    let mut theirs = RespClient::connect(redis.port);
    build(&mut theirs);
    ok(&theirs.command(&[b"SAVE"]), "SAVE");
    let bytes = std::fs::read(dir.join("dump.rdb")).expect("redis wrote dump.rdb");
    let (mut t, c) = engine();
    let report = t.engine.load_rdb_file(wall_now(), &bytes).expect("loads");
    assert_eq!(report.keys_loaded as usize, KEYS.len());
    for key in KEYS {
        let want = info(&mut |a| theirs.command(a), key);
        let got = info(&mut |a| t.cmd_bytes(c, a), key);
        assert_eq!(want, got, "redis -> seedkv file: {key}");
    }
    drop(redis);

    // The other way: the engine builds the streams, writes its file.
    let (mut t, c) = engine();
    for line in SETUP {
        let reply = t.cmd_bytes(c, &words(line));
        ok(&reply, line);
    }
    let bytes = t.engine.rdb_file_bytes(t.now);
    let path = dir.join("dump.rdb");
    std::fs::write(&path, &bytes).expect("write dump.rdb");
    if let Some(check_rdb) = find_in_path("redis-check-rdb") {
        let (ok, out, err) = run_tool(&check_rdb, &[path.to_str().unwrap()], b"");
        assert!(ok && out.contains("RDB looks OK"), "{out}{err}");
    }
    let Some(redis) = redis_server_with(&["--dir", &dir_arg, "--dbfilename", "dump.rdb"]) else {
        return;
    };
    let mut theirs = RespClient::connect(redis.port);
    for key in KEYS {
        let want = info(&mut |a| t.cmd_bytes(c, a), key);
        let got = info(&mut |a| theirs.command(a), key);
        assert_eq!(want, got, "seedkv -> redis file: {key}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
