//! One test per rewrite of the table in the module docs, each checked
//! against what redis-server 7.0.15 writes into its AOF.

use crate::resp::{Frame, FrameDecoder};
use crate::testing::{TestEngine, UNIX_ORIGIN_US};
use crate::Config;

/// The wall clock of [`TestEngine`] in unix milliseconds.
const NOW_MS: u64 = UNIX_ORIGIN_US / 1000;

fn engine_with(config: Config) -> (TestEngine, crate::ClientId) {
    let mut t = TestEngine::with_config(config);
    t.engine.propagation_mut().set_enabled(true);
    let c = t.connect();
    (t, c)
}

fn engine() -> (TestEngine, crate::ClientId) {
    engine_with(Config::default())
}

/// The commands propagated since the last call, each as its words.
fn stream(t: &mut TestEngine) -> Vec<String> {
    let bytes = t.engine.propagation_mut().take();
    let mut d = FrameDecoder::new();
    d.feed(&bytes);
    let mut out = Vec::new();
    while let Some(frame) = d.next_frame().expect("valid RESP") {
        let Frame::Array(items) = frame else {
            panic!("a command is an array")
        };
        let words: Vec<String> = items
            .into_iter()
            .map(|f| match f {
                Frame::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
                other => panic!("a word is a bulk string: {other:?}"),
            })
            .collect();
        out.push(words.join(" "));
    }
    out
}

fn run(t: &mut TestEngine, c: crate::ClientId, commands: &[&str]) {
    for line in commands {
        let words: Vec<&str> = line.split(' ').collect();
        t.cmd(c, &words);
    }
}

#[test]
fn disabled_propagates_nothing() {
    let mut t = TestEngine::new();
    let c = t.connect();
    run(&mut t, c, &["SET a 1", "EXPIRE a 100"]);
    assert!(t.engine.propagation().is_empty());
    assert_eq!(t.engine.propagation().propagated_bytes(), 0);
}

#[test]
fn writes_verbatim_with_select_and_reads_not_at_all() {
    let (mut t, c) = engine();
    run(&mut t, c, &["set a 1", "GET a", "DEL nothing", "rpush l x"]);
    assert_eq!(stream(&mut t), ["SELECT 0", "set a 1", "rpush l x"]);
    run(&mut t, c, &["SELECT 3", "SET b 2", "SELECT 0", "SET c 3"]);
    assert_eq!(
        stream(&mut t),
        ["SELECT 3", "SET b 2", "SELECT 0", "SET c 3"]
    );
    t.engine.propagation_mut().reset_selected_db();
    run(&mut t, c, &["SET d 4"]);
    assert_eq!(stream(&mut t), ["SELECT 0", "SET d 4"]);
}

#[test]
fn bytes_are_feed_append_only_file_s() {
    let (mut t, c) = engine();
    run(&mut t, c, &["SET k v"]);
    let bytes = t.engine.propagation_mut().take();
    assert_eq!(
        bytes,
        b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
    );
    assert_eq!(
        t.engine.propagation().propagated_bytes(),
        bytes.len() as u64
    );
    assert!(t.engine.propagation().is_empty());
}

#[test]
fn relative_expiries_become_pexpireat() {
    let (mut t, c) = engine();
    run(&mut t, c, &["SET a 1"]);
    run(
        &mut t,
        c,
        &["EXPIRE a 100", "PEXPIRE a 5000 GT", "EXPIREAT a 1800000000"],
    );
    run(
        &mut t,
        c,
        &["pexpireat a 1900000000000 xx", "EXPIRE a 100 NX"],
    );
    assert_eq!(
        stream(&mut t),
        [
            "SELECT 0".to_string(),
            "SET a 1".into(),
            format!("PEXPIREAT a {}", NOW_MS + 100_000),
            // GT against a later expiry: refused, nothing propagated.
            "PEXPIREAT a 1800000000000".into(),
            "pexpireat a 1900000000000 xx".into(),
        ]
    );
}

#[test]
fn an_expiry_in_the_past_deletes() {
    let (mut t, c) = engine();
    run(
        &mut t,
        c,
        &["SET a 1", "SET b 1", "EXPIRE a -1", "PEXPIREAT b 1"],
    );
    assert_eq!(
        stream(&mut t),
        ["SELECT 0", "SET a 1", "SET b 1", "DEL a", "DEL b"]
    );
    let config = Config {
        lazyfree_lazy_expire: true,
        ..Config::default()
    };
    let (mut t, c) = engine_with(config);
    run(&mut t, c, &["SET a 1", "EXPIRE a 0"]);
    assert_eq!(stream(&mut t), ["SELECT 0", "SET a 1", "UNLINK a"]);
}

#[test]
fn set_with_expiry_becomes_set_pxat() {
    let (mut t, c) = engine();
    run(
        &mut t,
        c,
        &["set a v ex 100", "SET a v PX 5 NX", "SET b v px 5 GET"],
    );
    run(
        &mut t,
        c,
        &["SETEX c 10 v", "PSETEX d 10 v", "set e v pxat 1"],
    );
    run(&mut t, c, &["SET f v exat 1800000000", "set g v KEEPTTL"]);
    assert_eq!(
        stream(&mut t),
        [
            "SELECT 0".to_string(),
            format!("SET a v PXAT {}", NOW_MS + 100_000),
            format!("SET b v PXAT {}", NOW_MS + 5),
            format!("SET c v PXAT {}", NOW_MS + 10_000),
            format!("SET d v PXAT {}", NOW_MS + 10),
            "SET e v PXAT 1".into(),
            "SET f v PXAT 1800000000000".into(),
            "set g v KEEPTTL".into(),
        ]
    );
}

#[test]
fn getex_getdel_and_getset() {
    let (mut t, c) = engine();
    run(
        &mut t,
        c,
        &[
            "SET a v",
            "GETEX a EX 10",
            "GETEX a PERSIST",
            "GETEX a PERSIST",
        ],
    );
    run(
        &mut t,
        c,
        &[
            "GETEX a",
            "GETEX a PXAT 1",
            "SET b v",
            "GETDEL b",
            "GETDEL b",
            "getset g v",
        ],
    );
    assert_eq!(
        stream(&mut t),
        [
            "SELECT 0".to_string(),
            "SET a v".into(),
            format!("PEXPIREAT a {}", NOW_MS + 10_000),
            "PERSIST a".into(),
            "DEL a".into(),
            "SET b v".into(),
            "DEL b".into(),
            "SET g v".into(),
        ]
    );
    let config = Config {
        lazyfree_lazy_user_del: true,
        ..Config::default()
    };
    let (mut t, c) = engine_with(config);
    run(&mut t, c, &["SET b v", "GETDEL b"]);
    assert_eq!(stream(&mut t), ["SELECT 0", "SET b v", "UNLINK b"]);
}

#[test]
fn float_increments_propagate_their_result() {
    let (mut t, c) = engine();
    run(
        &mut t,
        c,
        &[
            "INCRBYFLOAT f 1.5",
            "INCRBYFLOAT f 1e3",
            "HINCRBYFLOAT h x 0.1",
        ],
    );
    run(&mut t, c, &["INCRBYFLOAT f abc"]);
    assert_eq!(
        stream(&mut t),
        [
            "SELECT 0",
            "SET f 1.5 KEEPTTL",
            "SET f 1001.5 KEEPTTL",
            "HSET h x 0.1"
        ]
    );
}

#[test]
fn spop_becomes_srem_or_del() {
    let (mut t, c) = engine();
    run(&mut t, c, &["SADD s a", "SPOP s", "SPOP s"]);
    assert_eq!(stream(&mut t), ["SELECT 0", "SADD s a", "SREM s a"]);
    run(&mut t, c, &["SADD s a b c d e f g h i j", "SPOP s 3"]);
    let got = stream(&mut t);
    assert_eq!(got.len(), 6, "{got:?}");
    assert_eq!(got[1], "MULTI");
    assert!(
        got[2..5].iter().all(|w| w.starts_with("SREM s ")),
        "{got:?}"
    );
    assert_eq!(got[5], "EXEC");
    // Nine of ten: the survivors strategy, still one SREM per member.
    run(&mut t, c, &["SADD s2 a b c d e f g h i j", "SPOP s2 9"]);
    let got = stream(&mut t);
    assert_eq!(got.len(), 1 + 2 + 9, "{got:?}");
    run(&mut t, c, &["SPOP s 100", "SPOP s 1", "SPOP nothing 3"]);
    assert_eq!(stream(&mut t), ["DEL s"]);
}

#[test]
fn pops_with_counts_and_blocking_pops_served_at_once() {
    let (mut t, c) = engine();
    run(&mut t, c, &["RPUSH l a b c d e", "LMPOP 1 l LEFT COUNT 2"]);
    run(
        &mut t,
        c,
        &["BLMPOP 0 2 x l RIGHT COUNT 9", "RPUSH l a b c"],
    );
    run(&mut t, c, &["BLPOP x l 0", "BRPOP l 0", "LPUSH l a b"]);
    run(&mut t, c, &["BLMOVE l d left RIGHT 0", "BRPOPLPUSH l d 0"]);
    assert_eq!(
        stream(&mut t),
        [
            "SELECT 0",
            "RPUSH l a b c d e",
            "LPOP l 2",
            "RPOP l 3",
            "RPUSH l a b c",
            "LPOP l",
            "RPOP l",
            "LPUSH l a b",
            "LMOVE l d left RIGHT",
            "RPOPLPUSH l d",
        ]
    );
    run(
        &mut t,
        c,
        &[
            "ZADD z 1 a 2 b 3 c 4 d",
            "ZMPOP 1 z MIN COUNT 2",
            "BZPOPMAX z 0",
        ],
    );
    run(
        &mut t,
        c,
        &["BZMPOP 0 1 z MAX COUNT 5", "ZADD z 1 a", "zpopmin z 5"],
    );
    assert_eq!(
        stream(&mut t),
        [
            "ZADD z 1 a 2 b 3 c 4 d",
            "ZPOPMIN z 2",
            "ZPOPMAX z",
            "ZPOPMAX z 1",
            "ZADD z 1 a",
            "zpopmin z 5"
        ]
    );
}

#[test]
fn blocked_pops_propagate_when_served_after_the_push() {
    let (mut t, c) = engine();
    let waiter = t.connect();
    let mover = t.connect();
    let z = t.connect();
    t.raw(waiter, b"*3\r\n$5\r\nBLPOP\r\n$1\r\nl\r\n$1\r\n0\r\n");
    let blmove = crate::resp::encode::encode_request(&[
        b"BLMOVE".as_slice(),
        b"m",
        b"d",
        b"left",
        b"right",
        b"0",
    ]);
    t.raw(mover, &blmove);
    t.raw(z, b"*3\r\n$8\r\nBZPOPMIN\r\n$1\r\nz\r\n$1\r\n0\r\n");
    assert!(t.engine.is_blocked(waiter) && t.engine.is_blocked(mover));
    assert!(t.engine.propagation().is_empty());
    run(&mut t, c, &["RPUSH l a b", "RPUSH m x", "ZADD z 1 a 2 b"]);
    assert_eq!(
        stream(&mut t),
        [
            "SELECT 0",
            "RPUSH l a b",
            "LPOP l",
            "RPUSH m x",
            "LMOVE m d left right",
            "ZADD z 1 a 2 b",
            "ZPOPMIN z"
        ]
    );
}

#[test]
fn transactions_wrap_when_more_than_one_command_propagates() {
    let (mut t, c) = engine();
    run(&mut t, c, &["MULTI", "SET a 1", "INCR a", "GET a", "EXEC"]);
    run(&mut t, c, &["MULTI", "SET b 1", "GET b", "EXEC"]);
    run(&mut t, c, &["MULTI", "GET b", "EXEC"]);
    run(
        &mut t,
        c,
        &[
            "MULTI", "SELECT 2", "SET c 1", "SELECT 0", "SET d 1", "EXEC",
        ],
    );
    assert_eq!(
        stream(&mut t),
        [
            "SELECT 0", "MULTI", "SET a 1", "INCR a", "EXEC", "SET b 1", "SELECT 2", "MULTI",
            "SET c 1", "SELECT 0", "SET d 1", "EXEC"
        ]
    );
    // MULTI takes its first command's database: SELECT comes before it.
    run(
        &mut t,
        c,
        &["SELECT 5", "MULTI", "SET a 1", "SET b 2", "EXEC"],
    );
    assert_eq!(
        stream(&mut t),
        ["SELECT 5", "MULTI", "SET a 1", "SET b 2", "EXEC"]
    );
}

#[test]
fn scripts_propagate_their_effects_never_themselves() {
    let (mut t, c) = engine();
    run(&mut t, c, &["SET x 1"]);
    stream(&mut t);
    let two = "redis.call('set','x','2'); redis.call('incrbyfloat','y','1.5')";
    t.cmd(c, &["EVAL", two, "0"]);
    t.cmd(c, &["EVAL", "redis.call('expire','x',10)", "0"]);
    t.cmd(c, &["EVAL", "return redis.call('get','x')", "0"]);
    t.cmd(c, &["EVAL", "redis.call('spop','nothing')", "0"]);
    assert_eq!(
        stream(&mut t),
        [
            "MULTI".to_string(),
            "set x 2".into(),
            "SET y 1.5 KEEPTTL".into(),
            "EXEC".into(),
            format!("PEXPIREAT x {}", NOW_MS + 10_000),
        ]
    );
    // redis.set_repl: only the calls made while the AOF bit is on.
    let repl = "redis.set_repl(redis.REPL_NONE); redis.call('set','n','1'); \
                redis.set_repl(redis.REPL_ALL); redis.call('set','a','1'); \
                redis.set_repl(redis.REPL_REPLICA); redis.call('set','r','1')";
    t.cmd(c, &["EVAL", repl, "0"]);
    assert_eq!(stream(&mut t), ["set a 1"]);
    // A script inside a transaction: one unit.
    run(&mut t, c, &["MULTI", "SET a 1"]);
    t.cmd(c, &["EVAL", "redis.call('del','a')", "0"]);
    run(&mut t, c, &["EXEC"]);
    assert_eq!(stream(&mut t), ["MULTI", "SET a 1", "del a", "EXEC"]);
}

#[test]
fn lazy_expiry_propagates_a_del_within_the_unit() {
    let (mut t, c) = engine();
    run(
        &mut t,
        c,
        &["SET k v PX 10", "SET k2 v PX 10", "SET k3 v PX 10"],
    );
    stream(&mut t);
    t.now.unix_us += 20_000;
    run(&mut t, c, &["GET k", "SET k2 new", "TTL nothing"]);
    assert_eq!(
        stream(&mut t),
        ["DEL k", "MULTI", "DEL k2", "SET k2 new", "EXEC"]
    );
    let config = Config {
        lazyfree_lazy_expire: true,
        ..Config::default()
    };
    let (mut t, c) = engine_with(config);
    run(&mut t, c, &["SET k v PX 10"]);
    stream(&mut t);
    t.now.unix_us += 20_000;
    run(&mut t, c, &["EXISTS k"]);
    assert_eq!(stream(&mut t), ["UNLINK k"]);
}

#[test]
fn active_expiry_propagates_bare_dels() {
    let (mut t, c) = engine();
    run(&mut t, c, &["SET a v PX 10", "SET b v PX 10", "SET c v"]);
    stream(&mut t);
    t.advance_ms(1_000);
    let mut got = stream(&mut t);
    got.sort();
    assert_eq!(got, ["DEL a", "DEL b"]);
}

#[test]
fn restore_makes_its_ttl_absolute() {
    let (mut t, c) = engine();
    run(&mut t, c, &["SET s v"]);
    let Frame::Bulk(payload) = t.cmd(c, &["DUMP", "s"]) else {
        panic!("DUMP replies a bulk")
    };
    stream(&mut t);
    let restore = |t: &mut TestEngine, ttl: &str, extra: &[&str]| {
        let mut args: Vec<&[u8]> = vec![b"RESTORE", b"r", ttl.as_bytes(), &payload];
        args.extend(extra.iter().map(|a| a.as_bytes()));
        t.cmd_bytes(c, &args)
    };
    restore(&mut t, "0", &[]);
    restore(&mut t, "5000", &["REPLACE"]);
    restore(&mut t, "1800000000000", &["REPLACE", "ABSTTL"]);
    restore(&mut t, "1", &["REPLACE", "ABSTTL"]);
    restore(&mut t, "1", &["ABSTTL"]);
    let p = String::from_utf8_lossy(&payload).into_owned();
    assert_eq!(
        stream(&mut t),
        [
            format!("RESTORE r 0 {p}"),
            format!("RESTORE r {} {p} REPLACE ABSTTL", NOW_MS + 5000),
            format!("RESTORE r 1800000000000 {p} REPLACE ABSTTL"),
            "DEL r".into(),
        ]
    );
}

#[test]
fn eviction_propagates_bare_dels_before_the_command() {
    let config = Config {
        maxmemory_policy: crate::config::MaxmemoryPolicy::AllkeysLru,
        ..Config::default()
    };
    let (mut t, c) = engine_with(config);
    for i in 0..50 {
        let key = format!("key{i}");
        t.cmd(c, &["SET", &key, &"x".repeat(100)]);
    }
    stream(&mut t);
    run(&mut t, c, &["CONFIG SET maxmemory 1"]);
    // Every key goes, and the SET is still refused (OOM): bare DELs only.
    t.cmd(c, &["SET", "new", "v"]);
    let got = stream(&mut t);
    assert_eq!(got.len(), 50, "{got:?}");
    assert!(got.iter().all(|w| w.starts_with("DEL key")), "{got:?}");
}

#[test]
fn flushes_swaps_and_moves_are_verbatim() {
    let (mut t, c) = engine();
    run(
        &mut t,
        c,
        &[
            "FLUSHALL",
            "FLUSHDB ASYNC",
            "SET a 1",
            "MOVE a 1",
            "SWAPDB 0 1",
        ],
    );
    run(
        &mut t,
        c,
        &["COPY a b DB 1", "RENAME a c", "MOVE nothing 1"],
    );
    assert_eq!(
        stream(&mut t),
        [
            "SELECT 0",
            "FLUSHALL",
            "FLUSHDB ASYNC",
            "SET a 1",
            "MOVE a 1",
            "SWAPDB 0 1",
            "COPY a b DB 1",
            "RENAME a c"
        ]
    );
}
