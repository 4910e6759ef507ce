//! Propagation against redis-server 7.0.15: one fixed script of writes
//! (every rewrite of `seedkv_engine::propagate`'s table, transactions,
//! scripts, blocked pops served, lazy expiry) runs on a redis-server with
//! `appendonly yes` and on an engine with propagation on; the AOF's
//! incremental file and the engine's stream must be the same bytes, once
//! the absolute times computed from each server's clock are replaced by a
//! placeholder.
//!
//! Skipped, with a printed reason, when redis-server is not installed
//! (and failing instead under `SEEDKV_REQUIRE_TOOLS=1`).

use std::path::PathBuf;
use std::time::Duration;

use seedkv_engine::resp::encode::encode_request;
use seedkv_engine::resp::{Frame, FrameDecoder};
use seedkv_engine::testing::TestEngine;
use seedkv_engine::ClientId;
use seedkv_tests::{RespClient, ServerProcess};

/// One step of the script.
enum Step {
    /// A command on the main connection.
    Cmd(&'static str),
    /// A command on the second connection that blocks until a later step
    /// serves it.
    Block(&'static str),
    /// Reads the blocked connection's reply (after the step that served it).
    Served,
    /// Lets time pass (for lazy expiry).
    SleepMs(u64),
    /// RESTORE of the DUMP taken from `dumped` (same payload on both).
    Restore(&'static str),
}

use Step::*;

const SCRIPT: &[Step] = &[
    Cmd("SET a 1"),
    Cmd("set b 2"),
    Cmd("INCR a"),
    Cmd("APPEND b x"),
    Cmd("GET a"),
    Cmd("DEL b nothing"),
    Cmd("DEL nothing"),
    Cmd("MSET m1 1 m2 2"),
    Cmd("EXPIRE a 100"),
    Cmd("PEXPIRE a 200000 GT"),
    Cmd("EXPIRE a 100 NX"),
    Cmd("EXPIREAT a 9000000000"),
    Cmd("pexpireat a 9000000001000 xx"),
    Cmd("SET e v EX 100"),
    Cmd("set e v px 100000 GET"),
    Cmd("SET e v PX 100 NX"),
    Cmd("SETEX e 100 v"),
    Cmd("PSETEX e 100000 v"),
    Cmd("SET e v EXAT 9000000000"),
    Cmd("SET e v KEEPTTL"),
    Cmd("GETEX e EX 100"),
    Cmd("GETEX e PERSIST"),
    Cmd("GETEX e PERSIST"),
    Cmd("GETEX e PXAT 1"),
    Cmd("SET g v"),
    Cmd("GETDEL g"),
    Cmd("GETDEL g"),
    Cmd("INCRBYFLOAT f 1.5"),
    Cmd("INCRBYFLOAT f 1e3"),
    Cmd("incrbyfloat f 0.1"),
    Cmd("HINCRBYFLOAT h x 0.1"),
    Cmd("HSET h y 1"),
    Cmd("SADD s a"),
    Cmd("SPOP s"),
    Cmd("SADD s2 a b c"),
    Cmd("SPOP s2 10"),
    Cmd("SPOP s2 1"),
    // Random members: compared as `<member>` (see `normalized`).
    Cmd("SADD s3 a b c d e f g h i j"),
    Cmd("SPOP s3 2"),
    Cmd("SPOP s3 7"),
    Cmd("SADD s4 1 2 3"),
    Cmd("SADD s5 3 4"),
    Cmd("SMOVE s4 s5 1"),
    Cmd("SINTERSTORE s6 s4 s5"),
    Cmd("SUNIONSTORE s6 s4 s5"),
    Cmd("SDIFFSTORE s6 s4 s5"),
    Cmd("SREM s5 nothing 4"),
    Cmd("HSET h2 a 1 b 2"),
    Cmd("HSETNX h2 a 9"),
    Cmd("HSETNX h2 c 3"),
    Cmd("HINCRBY h2 a 5"),
    Cmd("HDEL h2 b nothing"),
    Cmd("HMSET h2 d 4"),
    Cmd("SETRANGE b 1 yy"),
    Cmd("GETSET b new"),
    Cmd("SETNX b x"),
    Cmd("SETNX b2 x"),
    Cmd("MSETNX m1 x m9 y"),
    Cmd("MSETNX m8 x m9 y"),
    Cmd("DECRBY a 3"),
    Cmd("DECR a"),
    Cmd("INCRBY a 10"),
    Cmd("PERSIST a"),
    Cmd("UNLINK m8 nothing"),
    Cmd("RPUSH l a b c d e f"),
    Cmd("LMPOP 1 l LEFT COUNT 2"),
    Cmd("BLPOP l 0"),
    Cmd("BRPOP nothing l 0"),
    Cmd("BRPOPLPUSH l l2 0"),
    Cmd("BLMOVE l2 l left RIGHT 0"),
    Cmd("LMOVE l l2 RIGHT LEFT"),
    Cmd("BLMPOP 0 1 l RIGHT COUNT 5"),
    Cmd("ZADD z 1 a 2 b 3 c 4 d"),
    Cmd("ZMPOP 1 z MAX COUNT 1"),
    Cmd("BZPOPMIN z 0"),
    Cmd("BZMPOP 0 1 z MIN COUNT 9"),
    Cmd("ZADD z 1 a 2 b"),
    Cmd("ZPOPMAX z 3"),
    Cmd("ZINCRBY z2 1.5 m"),
    Cmd("ZADD z2 INCR 2.5 m"),
    Cmd("ZADD z2 NX 1 a 2 b 3 c"),
    Cmd("ZREM z2 a nothing"),
    Cmd("ZREMRANGEBYSCORE z2 0 1"),
    Cmd("ZRANGESTORE z3 z2 0 -1"),
    Cmd("ZUNIONSTORE z4 2 z2 z3 WEIGHTS 1 2"),
    Cmd("ZINTERSTORE z4 2 z2 z3"),
    Cmd("ZDIFFSTORE z5 2 z2 z3"),
    Cmd("RPUSH l3 c a b a"),
    Cmd("LSET l3 0 d"),
    Cmd("LINSERT l3 BEFORE a x"),
    Cmd("LREM l3 1 a"),
    Cmd("LTRIM l3 0 2"),
    Cmd("LPUSHX l3 y"),
    Cmd("RPUSHX nothing y"),
    Cmd("SORT l3 ALPHA STORE l4"),
    Cmd("RPOPLPUSH l3 l4"),
    Cmd("LPOP l4 2"),
    Cmd("RPOP l4"),
    // Bitmaps: verbatim, and only when a bit or the length changed.
    Cmd("SETBIT bits 9 1"),
    Cmd("SETBIT bits 9 1"),
    Cmd("SETBIT bits 3 0"),
    Cmd("SETBIT bits 100 0"),
    Cmd("GETBIT bits 9"),
    Cmd("BITCOUNT bits"),
    Cmd("BITPOS bits 1"),
    Cmd("BITFIELD bits GET u8 0"),
    Cmd("BITFIELD bits SET u8 0 0"),
    Cmd("BITFIELD bits SET u8 0 5 INCRBY u4 8 1"),
    Cmd("BITFIELD bits OVERFLOW FAIL INCRBY u2 0 9"),
    Cmd("BITFIELD nobits OVERFLOW FAIL INCRBY u2 0 9"),
    Cmd("BITFIELD_RO bits GET i4 0"),
    Cmd("BITOP OR bits2 bits nothing"),
    Cmd("BITOP NOT bits2 bits2"),
    Cmd("BITOP AND bits2 nothing"),
    Cmd("BITOP AND bits2 nothing"),
    Cmd("MULTI"),
    Cmd("SET t 1"),
    Cmd("INCR t"),
    Cmd("GET t"),
    Cmd("EXEC"),
    Cmd("MULTI"),
    Cmd("SET t 2"),
    Cmd("EXEC"),
    Cmd("MULTI"),
    Cmd("GET t"),
    Cmd("EXEC"),
    Cmd("SELECT 3"),
    Cmd("SET x 1"),
    Cmd("MULTI"),
    Cmd("SET y 1"),
    Cmd("SELECT 4"),
    Cmd("SET y 2"),
    Cmd("EXEC"),
    Cmd("SWAPDB 3 4"),
    Cmd("MOVE x 5"),
    Cmd("SELECT 0"),
    Cmd("COPY m1 m3"),
    Cmd("COPY m1 m1 DB 6"),
    Cmd("RENAME m3 m4"),
    Cmd("RENAMENX m4 m2"),
    Cmd("EVAL redis.call('set','ev','1');redis.call('incrbyfloat','ev','0.5') 0"),
    Cmd("EVAL redis.call('expire','ev',100) 0"),
    Cmd("EVAL return(redis.call('get','ev')) 0"),
    Cmd("EVAL redis.set_repl(redis.REPL_NONE);redis.call('set','rn','1');redis.set_repl(redis.REPL_ALL);redis.call('set','ra','1');redis.set_repl(redis.REPL_REPLICA);redis.call('set','rr','1') 0"),
    Cmd("EVAL redis.set_repl(redis.REPL_AOF);redis.call('set','rn','1');redis.call('set','ra','1') 0"),
    Cmd("EXPIRE m4 -1"),
    Block("BLPOP bl 0"),
    Cmd("RPUSH bl x"),
    Served,
    Block("BLMOVE bm d left right 0"),
    Cmd("RPUSH bm x"),
    Served,
    Block("BZPOPMAX bz 0"),
    Cmd("ZADD bz 1 a 2 b"),
    Served,
    Block("BLMPOP 0 1 bl LEFT COUNT 3"),
    Cmd("LPUSH bl a b"),
    Served,
    Cmd("SET k v PX 1"),
    Cmd("SET k2 v PX 1"),
    SleepMs(20),
    Cmd("GET k"),
    Cmd("SET k2 new"),
    Cmd("SET dumped v"),
    Restore("RESTORE r 100000 {} REPLACE"),
    Restore("RESTORE r 0 {} REPLACE"),
    Restore("RESTORE r 9000000000000 {} REPLACE ABSTTL"),
    Restore("RESTORE r 1 {} REPLACE ABSTTL"),
    Restore("RESTORE r 1 {} ABSTTL"),
    // HyperLogLog: PFADD verbatim; PFCOUNT only when it rewrote the cache.
    Cmd("PFADD hll a b c"),
    Cmd("PFADD hll a"),
    Cmd("PFCOUNT hll"),
    Cmd("PFCOUNT hll"),
    Cmd("PFCOUNT hll nokey"),
    Cmd("PFMERGE hll2 hll"),
    Cmd("PFDEBUG TODENSE hll2"),
    Cmd("PFDEBUG TODENSE hll2"),
    // Geo: GEOADD as the ZADD it ran; the searches that store verbatim.
    Cmd("GEOADD geo CH 13.361389 38.115556 Palermo 15.087269 37.502669 Catania"),
    Cmd("GEOADD geo NX 13.361389 38.115556 Palermo"),
    Cmd("GEORADIUS geo 15 37 200 km STORE gdst"),
    Cmd("GEORADIUS geo 15 37 1 m STORE gdst"),
    Cmd("GEOSEARCHSTORE gdst geo FROMLONLAT 15 37 BYRADIUS 200 km STOREDIST"),
    Cmd("GEORADIUS_RO geo 15 37 200 km"),
    Cmd("FLUSHDB"),
    Cmd("FLUSHALL ASYNC"),
    Cmd("FLUSHALL"),
    Cmd("SET last 1"),
];

/// The words of a step's command; an EVAL's script is one word.
fn words(line: &str) -> Vec<Vec<u8>> {
    if let Some(rest) = line.strip_prefix("EVAL ") {
        let (script, keys) = rest.rsplit_once(' ').expect("EVAL script numkeys");
        return vec![b"EVAL".to_vec(), script.into(), keys.into()];
    }
    line.split(' ').map(|w| w.as_bytes().to_vec()).collect()
}

fn restore_args(line: &str, payload: &[u8]) -> Vec<Vec<u8>> {
    words(line)
        .into_iter()
        .map(|w| if w == b"{}" { payload.to_vec() } else { w })
        .collect()
}

struct Redis {
    _server: ServerProcess,
    main: RespClient,
    blocked: RespClient,
    dir: PathBuf,
}

/// Runs the script on redis-server; returns its incremental AOF.
fn run_redis(r: &mut Redis) -> Vec<u8> {
    // Active expiry (the fast cycle runs before every sleep) would race
    // the lazy expiry the script exercises.
    let off = r.main.command(&[b"DEBUG", b"SET-ACTIVE-EXPIRE", b"0"]);
    assert_eq!(off, Frame::Simple(b"OK".to_vec()));
    for step in SCRIPT {
        match step {
            Cmd(line) => {
                let args = words(line);
                let args: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
                r.main.command(&args);
            }
            Block(line) => {
                let args = words(line);
                let args: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
                r.blocked.send(&args);
                // Let it park before the serving step.
                wait_until_blocked(&mut r.main);
            }
            Served => {
                r.blocked.next_reply();
            }
            SleepMs(ms) => std::thread::sleep(Duration::from_millis(*ms)),
            Restore(line) => {
                let Frame::Bulk(payload) = r.main.command(&[b"DUMP", b"dumped"]) else {
                    panic!("DUMP replies a bulk")
                };
                let args = restore_args(line, &payload);
                let args: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
                r.main.command(&args);
            }
        }
    }
    let incr = r
        .dir
        .join("appendonlydir")
        .join("appendonly.aof.1.incr.aof");
    std::fs::read(&incr).expect("redis-server wrote its incremental AOF")
}

/// Waits until INFO clients shows a blocked client.
fn wait_until_blocked(main: &mut RespClient) {
    for _ in 0..500 {
        let Frame::Bulk(info) = main.command(&[b"INFO", b"clients"]) else {
            panic!("INFO replies a bulk")
        };
        if String::from_utf8_lossy(&info).contains("blocked_clients:1") {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    panic!("the client never blocked");
}

/// Runs the script on an engine with propagation on; returns its stream.
fn run_engine() -> Vec<u8> {
    let mut t = TestEngine::new();
    t.engine.propagation_mut().set_enabled(true);
    let main = t.connect();
    let blocked = t.connect();
    let mut stream = Vec::new();
    for step in SCRIPT {
        match step {
            Cmd(line) => send(&mut t, main, &words(line)),
            Block(line) => {
                send(&mut t, blocked, &words(line));
                assert!(t.engine.is_blocked(blocked));
            }
            Served => assert!(!t.engine.is_blocked(blocked)),
            SleepMs(ms) => {
                // The clock moves without the cron running (Redis's active
                // expiry is off).
                t.now.mono_ns += ms * 1_000_000;
                t.now.unix_us += ms * 1000;
            }
            Restore(line) => {
                let Frame::Bulk(payload) = t.cmd(main, &["DUMP", "dumped"]) else {
                    panic!("DUMP replies a bulk")
                };
                send(&mut t, main, &restore_args(line, &payload));
            }
        }
        t.engine.propagation_mut().drain_into(&mut stream);
    }
    stream
}

fn send(t: &mut TestEngine, client: ClientId, args: &[Vec<u8>]) {
    let args: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
    t.raw(client, &encode_request(&args));
}

/// The stream's commands, with every absolute time a server computed from
/// its own clock (2020 to 2065 in unix ms; the script's own absolute times
/// are later) replaced by `<now>`, and the members SPOP drew at random
/// from `s3` by `<member>`.
fn normalized(stream: &[u8]) -> Vec<String> {
    let mut d = FrameDecoder::new();
    d.feed(stream);
    let mut out = Vec::new();
    while let Some(frame) = d.next_frame().expect("valid RESP") {
        let Frame::Array(items) = frame else {
            panic!("a command is an array")
        };
        let words: Vec<String> = items
            .into_iter()
            .map(|f| {
                let Frame::Bulk(b) = f else {
                    panic!("a word is a bulk")
                };
                let text = String::from_utf8_lossy(&b).into_owned();
                match text.parse::<u64>() {
                    Ok(ms) if (1_600_000_000_000..3_000_000_000_000).contains(&ms) => {
                        "<now>".to_string()
                    }
                    _ => text,
                }
            })
            .collect();
        let mut words = words;
        if words.len() == 3 && words[0] == "SREM" && words[1] == "s3" {
            words[2] = "<member>".to_string();
        }
        out.push(words.join(" "));
    }
    assert!(d.next_frame().expect("valid RESP").is_none());
    out
}

#[test]
fn the_stream_is_redis_s_incremental_aof() {
    if !seedkv_tests::require_tool("redis-server") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("seedkv-propagation-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the AOF directory");
    let dir_arg = dir.to_str().expect("utf-8 path").to_string();
    let server = ServerProcess::redis_with(&[
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
        "--dir",
        &dir_arg,
        "--enable-debug-command",
        "yes",
    ])
    .expect("redis-server installed");
    let mut redis = Redis {
        main: RespClient::connect(server.port),
        blocked: RespClient::connect(server.port),
        _server: server,
        dir: dir.clone(),
    };
    let theirs = run_redis(&mut redis);
    let ours = run_engine();
    let _ = std::fs::remove_dir_all(&dir);
    let (theirs, ours) = (normalized(&theirs), normalized(&ours));
    for (i, (t, o)) in theirs.iter().zip(&ours).enumerate() {
        assert_eq!(
            t, o,
            "command {i} differs; redis wrote {theirs:#?}\nours: {ours:#?}"
        );
    }
    assert_eq!(
        theirs.len(),
        ours.len(),
        "redis: {theirs:#?}\nours: {ours:#?}"
    );
}
