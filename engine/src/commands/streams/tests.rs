//! Unit tests of the stream commands: blocking reads and how they are
//! woken, virtual-time idle counters, and what each write propagates
//! (checked against the AOF redis-server 7.0.15 writes). The transcript in
//! tests/scripts/streams.txt covers every reply against Redis.

use crate::resp::{Frame, FrameDecoder};
use crate::testing::{bulk, err, int, TestEngine, TestHost, UNIX_ORIGIN_US};
use crate::{ClientId, Config};

fn host() -> (TestHost, ClientId, ClientId) {
    let mut h = TestHost::new(Config::default());
    let a = h.connect();
    let b = h.connect();
    (h, a, b)
}

fn entry(id: &str, pairs: &[&str]) -> Frame {
    Frame::Array(vec![
        bulk(id),
        Frame::Array(pairs.iter().map(|s| bulk(s)).collect()),
    ])
}

/// A RESP2 XREAD reply for one stream.
fn read_reply(key: &str, entries: Vec<Frame>) -> Frame {
    Frame::Array(vec![Frame::Array(vec![bulk(key), Frame::Array(entries)])])
}

#[test]
fn xread_block_is_served_by_xadd_after_dollar() {
    let (mut h, a, b) = host();
    h.cmd(b, &["xadd", "s", "1-1", "f", "old"]);
    assert!(h
        .call(a, &["xread", "block", "0", "streams", "s", "$"])
        .is_empty());
    // An entry on another key does not wake it.
    h.cmd(b, &["xadd", "other", "1-1", "f", "v"]);
    assert!(h.frames(a).is_empty());
    h.cmd(b, &["xadd", "s", "2-1", "f", "new"]);
    assert_eq!(
        h.frames(a),
        [read_reply("s", vec![entry("2-1", &["f", "new"])])]
    );
}

#[test]
fn blocked_readers_are_served_in_fifo_order_and_time_out() {
    let (mut h, a, b) = host();
    let c = h.connect();
    h.send(a, &["xread", "block", "0", "streams", "s", "0"]);
    h.send(c, &["xread", "block", "100", "streams", "s", "0"]);
    h.cmd(b, &["xadd", "s", "1-1", "f", "v"]);
    let want = read_reply("s", vec![entry("1-1", &["f", "v"])]);
    assert_eq!(h.frames(a), std::slice::from_ref(&want));
    assert_eq!(h.frames(c), [want]);
    h.send(a, &["xread", "block", "100", "streams", "s", "$"]);
    h.advance_ms(99);
    assert!(h.frames(a).is_empty());
    h.advance_ms(1);
    assert_eq!(h.frames(a), [Frame::Null]);
}

#[test]
fn xreadgroup_block_delivers_each_entry_to_one_consumer() {
    let (mut h, a, b) = host();
    let c = h.connect();
    h.cmd(b, &["del", "s"]);
    h.cmd(b, &["xgroup", "create", "s", "g", "$", "mkstream"]);
    let read = |name| {
        [
            "xreadgroup",
            "group",
            "g",
            name,
            "block",
            "0",
            "streams",
            "s",
            ">",
        ]
    };
    h.send(a, &read("alice"));
    h.send(c, &read("carol"));
    h.cmd(b, &["xadd", "s", "1-1", "f", "v"]);
    assert_eq!(
        h.frames(a),
        [read_reply("s", vec![entry("1-1", &["f", "v"])])]
    );
    assert!(h.frames(c).is_empty(), "the entry went to alice only");
    h.cmd(b, &["xadd", "s", "2-1", "f", "w"]);
    assert_eq!(
        h.frames(c),
        [read_reply("s", vec![entry("2-1", &["f", "w"])])]
    );
    let pending = h.cmd(b, &["xpending", "s", "g"]);
    let Frame::Array(items) = pending else {
        panic!()
    };
    assert_eq!(items[0], int(2));
}

#[test]
fn blocked_xreadgroup_ends_when_its_group_or_stream_goes() {
    let (mut h, a, b) = host();
    h.cmd(b, &["xgroup", "create", "s", "g", "$", "mkstream"]);
    let read = [
        "xreadgroup",
        "group",
        "g",
        "c",
        "block",
        "0",
        "streams",
        "s",
        ">",
    ];
    h.send(a, &read);
    h.cmd(b, &["xgroup", "destroy", "s", "g"]);
    assert_eq!(
        h.frames(a),
        [err(
            "NOGROUP the consumer group this client was blocked on no longer exists"
        )]
    );
    h.cmd(b, &["xgroup", "create", "s", "g", "$"]);
    h.send(a, &read);
    h.cmd(b, &["del", "s"]);
    assert_eq!(
        h.frames(a),
        [err("UNBLOCKED the stream key no longer exists")]
    );
    h.cmd(b, &["xgroup", "create", "s", "g", "$", "mkstream"]);
    h.send(a, &read);
    h.cmd(b, &["set", "s", "x"]);
    assert_eq!(
        h.frames(a),
        [err("UNBLOCKED the stream key no longer exists")]
    );
    // An XREADGROUP parked behind an XREAD on the same stream is still
    // ended by its deletion.
    let c = h.connect();
    h.cmd(b, &["del", "s"]);
    h.cmd(b, &["xgroup", "create", "s", "g", "$", "mkstream"]);
    h.send(c, &["xread", "block", "0", "streams", "s", "$"]);
    h.send(a, &read);
    h.cmd(b, &["del", "s"]);
    assert_eq!(
        h.frames(a),
        [err("UNBLOCKED the stream key no longer exists")]
    );
    assert!(h.frames(c).is_empty());
    h.cmd(b, &["xadd", "s", "1-0", "f", "v"]);
    assert_eq!(h.frames(c).len(), 1);
    // XREAD is left waiting by a deletion, as in Redis.
    h.cmd(b, &["del", "s"]);
    h.send(a, &["xread", "block", "0", "streams", "s", "0"]);
    h.cmd(b, &["set", "s", "x"]);
    h.cmd(b, &["del", "s"]);
    assert!(h.frames(a).is_empty());
    h.cmd(b, &["xadd", "s", "1-1", "f", "v"]);
    assert_eq!(
        h.frames(a),
        [read_reply("s", vec![entry("1-1", &["f", "v"])])]
    );
}

#[test]
fn client_unblock_and_multi_never_block() {
    let (mut h, a, b) = host();
    h.send(a, &["client", "id"]);
    let Some(Frame::Integer(id)) = h.frames(a).pop() else {
        panic!()
    };
    h.send(a, &["xread", "block", "0", "streams", "s", "$"]);
    assert_eq!(h.cmd(b, &["client", "unblock", &id.to_string()]), int(1));
    assert_eq!(h.frames(a), [Frame::Null]);
    h.cmd(a, &["multi"]);
    h.cmd(a, &["xread", "block", "0", "streams", "s", "$"]);
    assert_eq!(h.cmd(a, &["exec"]), Frame::Array(vec![Frame::Null]));
}

#[test]
fn idle_times_follow_virtual_time() {
    let (mut h, a, _) = host();
    h.cmd(a, &["xadd", "s", "1-1", "f", "v"]);
    h.cmd(a, &["xgroup", "create", "s", "g", "0"]);
    h.cmd(a, &["xreadgroup", "group", "g", "c", "streams", "s", ">"]);
    h.advance_ms(1500);
    let Frame::Array(rows) = h.cmd(a, &["xpending", "s", "g", "-", "+", "10"]) else {
        panic!()
    };
    assert_eq!(
        rows[0],
        Frame::Array(vec![bulk("1-1"), bulk("c"), int(1500), int(1)])
    );
    assert_eq!(
        h.cmd(a, &["xpending", "s", "g", "idle", "2000", "-", "+", "10"]),
        Frame::Array(vec![])
    );
    assert_eq!(
        h.cmd(a, &["xclaim", "s", "g", "d", "1000", "1-1", "justid"]),
        Frame::Array(vec![bulk("1-1")])
    );
    assert_eq!(
        h.cmd(a, &["xclaim", "s", "g", "e", "1000", "1-1", "justid"]),
        Frame::Array(vec![]),
        "just claimed: not idle"
    );
}

/// The commands propagated since the last call, each as its words.
fn propagated(t: &mut TestEngine) -> Vec<String> {
    let bytes = t.engine.propagation_mut().take();
    let mut d = FrameDecoder::new();
    d.feed(&bytes);
    let mut out = Vec::new();
    while let Some(Frame::Array(items)) = d.next_frame().expect("valid RESP") {
        let words: Vec<String> = items
            .into_iter()
            .map(|f| match f {
                Frame::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
                other => panic!("not a word: {other:?}"),
            })
            .collect();
        out.push(words.join(" "));
    }
    out
}

/// What redis-server 7.0.15 writes to its AOF for these commands.
#[test]
fn propagation_matches_redis_aof() {
    let mut t = TestEngine::new();
    t.engine.propagation_mut().set_enabled(true);
    let c = t.connect();
    let now_ms = UNIX_ORIGIN_US / 1000;
    let run = |t: &mut TestEngine, line: &str| {
        let words: Vec<&str> = line.split(' ').collect();
        t.cmd(c, &words)
    };
    run(&mut t, "xadd s 1-1 a b");
    run(&mut t, "xadd s * a b");
    run(&mut t, "xgroup create s g 0");
    run(&mut t, "xreadgroup group g c count 1 streams s >");
    run(&mut t, "xreadgroup group g c2 noack count 1 streams s >");
    run(&mut t, "xreadgroup group g c3 streams s 0");
    run(&mut t, "xreadgroup group g c streams s 0");
    let auto = format!("{now_ms}-0");
    assert_eq!(
        propagated(&mut t),
        [
            "SELECT 0".to_string(),
            "xadd s 1-1 a b".into(),
            format!("xadd s {auto} a b"),
            "xgroup create s g 0".into(),
            format!("XCLAIM s g c 0 1-1 TIME {now_ms} RETRYCOUNT 1 FORCE JUSTID LASTID 1-1"),
            "MULTI".into(),
            "XGROUP CREATECONSUMER s g c2".into(),
            format!("XGROUP SETID s g {auto} ENTRIESREAD 2"),
            "EXEC".into(),
        ]
    );
    for i in 10..=250 {
        run(&mut t, &format!("xadd s2 {i}-1 f v"));
    }
    propagated(&mut t);
    run(&mut t, "xadd s2 maxlen ~ 50 300-1 a b");
    run(&mut t, "xtrim s2 maxlen ~ 10 limit 100");
    run(&mut t, "xtrim s2 minid ~ 200");
    run(&mut t, "xautoclaim s g c4 0 0 count 1");
    run(&mut t, "xclaim s g c5 0 1-1");
    run(&mut t, "xclaim s g c5 0 1-1 justid");
    run(&mut t, "xack s g 1-1");
    run(&mut t, "xgroup createconsumer s g zz");
    run(&mut t, "xreadgroup group g newc streams s >");
    let claim = |c: &str, n: u32| {
        format!("XCLAIM s g {c} 0 1-1 TIME {now_ms} RETRYCOUNT {n} FORCE JUSTID LASTID {auto}")
    };
    assert_eq!(
        propagated(&mut t),
        [
            "xadd s2 maxlen = 142 300-1 a b".to_string(),
            "xtrim s2 maxlen = 42 limit 100".into(),
            claim("c4", 3),
            claim("c5", 4),
            claim("c5", 4),
            "xack s g 1-1".into(),
            "xgroup createconsumer s g zz".into(),
        ]
    );
}

#[test]
fn work_is_charged_per_entry_read() {
    let mut t = TestEngine::with_config(Config {
        record_executions: true,
        ..Config::default()
    });
    let c = t.connect();
    for i in 1..=300 {
        t.cmd(c, &["xadd", "s", &format!("{i}-1"), "f", "v"]);
    }
    t.cmd(c, &["xrange", "s", "-", "+"]);
    let all = t.executed_work("xrange");
    t.cmd(c, &["xrange", "s", "-", "+", "count", "3"]);
    let three = t.executed_work("xrange");
    assert!(all >= 300, "{all}");
    assert!(three < 20, "{three}");
}

fn aof_config(preamble: bool) -> Config {
    let mut c = Config {
        storage: true,
        ..Config::default()
    };
    c.extra.insert("save".into(), String::new());
    c.extra.insert("appendonly".into(), "yes".into());
    c.extra.insert("appendfsync".into(), "always".into());
    let preamble = if preamble { "yes" } else { "no" };
    c.extra
        .insert("aof-use-rdb-preamble".into(), preamble.into());
    c
}

/// What a restart must reproduce: entries, counters, groups, PELs with
/// their delivery times and counts (consumers' seen times are the
/// replay's clock, as with Redis's own).
fn observe(h: &mut TestHost, c: ClientId) -> Vec<Frame> {
    let mut out = Vec::new();
    for key in ["s", "t", "e"] {
        out.push(h.cmd(c, &["xrange", key, "-", "+"]));
        out.push(h.cmd(c, &["xinfo", "stream", key]));
        out.push(h.cmd(c, &["xinfo", "groups", key]));
    }
    out.push(h.cmd(c, &["xpending", "s", "g", "-", "+", "100"]));
    out.push(h.cmd(c, &["xpending", "s", "g"]));
    out
}

fn build_streams(h: &mut TestHost, c: ClientId) {
    for i in 1..=250 {
        h.cmd(c, &["xadd", "s", &format!("{i}-1"), "f", "v"]);
    }
    for line in [
        "xadd s maxlen ~ 120 * x y",
        "xtrim s maxlen ~ 10 limit 100",
        "xdel s 240-1",
        "xgroup create s g 200-1",
        "xreadgroup group g alice count 5 streams s >",
        "xreadgroup group g bob noack count 2 streams s >",
        "xclaim s g carol 0 202-1 203-1",
        "xack s g 201-1",
        "xgroup createconsumer s g dave",
        "xdel s 204-1",
        "xautoclaim s g erin 0 0 count 1",
        "xgroup create s g2 $",
        "xadd t 1-1 a 1",
        "xadd t 2-1 a 2",
        "xtrim t minid 2",
        "xsetid t 5-5 entriesadded 9 maxdeletedid 3-0",
        "xgroup create e g $ mkstream",
    ] {
        let words: Vec<&str> = line.split(' ').collect();
        let reply = h.cmd(c, &words);
        assert!(!matches!(reply, Frame::Error(_)), "{line}: {reply:?}");
    }
}

#[test]
fn streams_survive_an_aof_restart_and_rewrite() {
    for preamble in [true, false] {
        let mut h = TestHost::new(aof_config(preamble));
        let c = h.connect();
        build_streams(&mut h, c);
        h.advance_ms(1000);
        let before = observe(&mut h, c);
        // A restarted host's clock starts where the first one did: move
        // it to the same time, so that idle times compare.
        let mut h = TestHost::with_disk(aof_config(preamble), h.disk);
        let c = h.connect();
        h.advance_ms(1000);
        assert_eq!(
            observe(&mut h, c),
            before,
            "replayed incr file, preamble {preamble}"
        );
        // A rewrite writes the streams as RDB or as commands. As commands,
        // a pending entry whose stream entry was deleted is lost, in Redis
        // too: its forced XCLAIM finds no entry when replayed.
        h.cmd(c, &["xack", "s", "g", "204-1"]);
        h.cmd(c, &["bgrewriteaof"]);
        h.advance_ms(1000);
        let before = observe(&mut h, c);
        let mut h = TestHost::with_disk(aof_config(preamble), h.disk);
        let c = h.connect();
        h.advance_ms(2000);
        let after = observe(&mut h, c);
        for (i, (a, b)) in after.iter().zip(&before).enumerate() {
            assert_eq!(a, b, "rewritten base, preamble {preamble}, observation {i}");
        }
    }
}

/// RENAME, FLUSHALL and expiry (lazy or by the cron) delete a stream as
/// DEL does: a blocked XREADGROUP is ended at once (checked against
/// redis-server 7.0.15, which ends it with the same error).
#[test]
fn rename_flushall_and_expiry_end_a_blocked_xreadgroup() {
    let (mut h, a, b) = host();
    let read = [
        "xreadgroup",
        "group",
        "g",
        "c",
        "block",
        "0",
        "streams",
        "s",
        ">",
    ];
    let gone = || [err("UNBLOCKED the stream key no longer exists")];
    h.cmd(b, &["xgroup", "create", "s", "g", "$", "mkstream"]);
    h.send(a, &read);
    h.cmd(b, &["rename", "s", "s2"]);
    assert_eq!(h.frames(a), gone());
    h.cmd(b, &["xgroup", "create", "s", "g", "$", "mkstream"]);
    h.send(a, &read);
    h.cmd(b, &["flushall"]);
    assert_eq!(h.frames(a), gone());
    // Expired by the cron, with no other command to follow.
    h.cmd(b, &["xgroup", "create", "s", "g", "$", "mkstream"]);
    h.cmd(b, &["pexpire", "s", "50"]);
    h.send(a, &read);
    assert!(h.frames(a).is_empty());
    for _ in 0..40 {
        h.advance_ms(100);
    }
    assert_eq!(h.frames(a), gone());
}
