//! Engine-level tests of the sorted-set commands: blocking pops served by
//! writes and timing out, work accounting, encodings and RESP3 shapes.
//! (Replies and errors are compared with redis-server by the differential
//! script tests/scripts/zsets.txt.)

use crate::client::ClientId;
use crate::resp::encode::encode_request;
use crate::resp::{Frame, FrameDecoder};
use crate::testing::{bulk, err, int, TestEngine};
use crate::{Config, Event};

fn engine() -> TestEngine {
    TestEngine::with_config(Config {
        record_executions: true,
        ..Config::default()
    })
}

/// Sends without reading, so that a blocked client's later reply is kept.
fn send(t: &mut TestEngine, c: ClientId, args: &[&str]) {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    t.engine.handle_input(t.now, c, &encode_request(&args));
    while let Some(e) = t.engine.poll_event() {
        t.events.push(e);
    }
}

/// Every frame `c` has pending.
fn frames(t: &mut TestEngine, c: ClientId) -> Vec<Frame> {
    let bytes = t.engine.pending_output(c).to_vec();
    t.engine.consume_output(c, bytes.len());
    let mut d = FrameDecoder::new();
    d.feed(&bytes);
    let mut out = Vec::new();
    while let Some(f) = d.next_frame().expect("valid RESP") {
        out.push(f);
    }
    out
}

fn spec(name: &str) -> &'static crate::cmd::CommandSpec {
    super::COMMANDS
        .iter()
        .find(|s| s.name == name)
        .expect("a sorted-set command")
}

/// Sends a command that replies at once, leaving other clients' output
/// pending.
fn call(t: &mut TestEngine, c: ClientId, args: &[&str]) -> Frame {
    send(t, c, args);
    let mut out = frames(t, c);
    assert_eq!(out.len(), 1, "{args:?}");
    out.remove(0)
}

fn array(items: Vec<Frame>) -> Frame {
    Frame::Array(items)
}

#[test]
fn bzpopmin_blocks_until_zadd_and_serves_the_first_waiter() {
    let mut t = engine();
    let (a, b, w) = (t.connect(), t.connect(), t.connect());
    send(&mut t, a, &["BZPOPMIN", "k1", "k2", "0"]);
    send(&mut t, b, &["BZPOPMAX", "k2", "0"]);
    assert!(frames(&mut t, a).is_empty(), "a is blocked");
    assert!(frames(&mut t, b).is_empty(), "b is blocked");
    // One element: the first waiter on k2 (a) gets it, b stays blocked.
    assert_eq!(call(&mut t, w, &["ZADD", "k2", "5", "m"]), int(1));
    assert_eq!(
        frames(&mut t, a),
        vec![array(vec![bulk("k2"), bulk("m"), bulk("5")])]
    );
    assert!(frames(&mut t, b).is_empty());
    // An add into an existing set serves the next waiter too.
    assert_eq!(call(&mut t, w, &["ZADD", "k2", "1", "x", "9", "y"]), int(2));
    assert_eq!(
        frames(&mut t, b),
        vec![array(vec![bulk("k2"), bulk("y"), bulk("9")])]
    );
    assert_eq!(t.cmd(w, &["ZCARD", "k2"]), int(1));
}

#[test]
fn bzmpop_is_served_with_its_count_and_times_out_with_a_null_array() {
    let mut t = engine();
    let (a, w) = (t.connect(), t.connect());
    send(&mut t, a, &["BZMPOP", "0", "1", "z", "MAX", "COUNT", "2"]);
    assert!(frames(&mut t, a).is_empty());
    assert_eq!(
        call(&mut t, w, &["ZADD", "z", "1", "a", "2", "b", "3", "c"]),
        int(3)
    );
    assert_eq!(
        frames(&mut t, a),
        vec![array(vec![
            bulk("z"),
            array(vec![
                array(vec![bulk("c"), bulk("3")]),
                array(vec![bulk("b"), bulk("2")]),
            ]),
        ])]
    );
    send(&mut t, a, &["BZPOPMIN", "nokey", "0.5"]);
    assert!(frames(&mut t, a).is_empty());
    t.advance_ms(499);
    assert!(frames(&mut t, a).is_empty());
    t.advance_ms(2);
    assert_eq!(frames(&mut t, a), vec![Frame::Null]);
}

#[test]
fn o_n_commands_report_o_n_work() {
    let mut t = engine();
    let c = t.connect();
    let mut args = vec!["ZADD".to_string(), "big".to_string()];
    for i in 0..1000 {
        args.push(i.to_string());
        args.push(format!("m{i}"));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(t.cmd(c, &args), int(1000));
    assert!(t.executed_work("zadd") >= 1000);
    t.cmd(c, &["ZRANGE", "big", "0", "-1"]);
    assert!(t.executed_work("zrange") >= 1000);
    t.cmd(c, &["ZRANGE", "big", "0", "9"]);
    assert!(t.executed_work("zrange") < 100, "a short range is cheap");
    t.cmd(c, &["ZUNIONSTORE", "u", "1", "big"]);
    assert!(t.executed_work("zunionstore") >= 2000);
    assert_eq!(
        t.cmd(c, &["ZREMRANGEBYSCORE", "u", "-inf", "+inf"]),
        int(1000)
    );
    assert!(t.executed_work("zremrangebyscore") >= 1000);
    assert_eq!(t.cmd(c, &["ZCOUNT", "big", "10", "20"]), int(11));
    assert!(t.executed_work("zcount") < 10, "counting is two seeks");
    assert_eq!(t.cmd(c, &["DEL", "big"]), int(1));
    assert!(t.executed_work("del") >= 1000);
    for name in [
        "zrange",
        "zunionstore",
        "zremrangebyrank",
        "zrandmember",
        "zpopmin",
    ] {
        assert!(spec(name).has(crate::cmd::flags::O_N), "{name}");
    }
    for name in ["zadd", "zscore", "zcard", "zrank", "zcount", "zscan"] {
        assert!(!spec(name).has(crate::cmd::flags::O_N), "{name}");
    }
}

#[test]
fn encodings_follow_the_config_limits() {
    let mut t = engine();
    let c = t.connect();
    t.cmd(c, &["CONFIG", "SET", "zset-max-listpack-entries", "2"]);
    t.cmd(c, &["ZADD", "z", "1", "a", "2", "b"]);
    assert_eq!(t.cmd(c, &["OBJECT", "ENCODING", "z"]), bulk("listpack"));
    t.cmd(c, &["ZADD", "z", "3", "c"]);
    assert_eq!(t.cmd(c, &["OBJECT", "ENCODING", "z"]), bulk("skiplist"));
    assert_eq!(t.cmd(c, &["ZRANK", "z", "c"]), int(2));
    t.cmd(c, &["ZREM", "z", "c", "b"]);
    assert_eq!(t.cmd(c, &["OBJECT", "ENCODING", "z"]), bulk("skiplist"));
    // A store command's small result is a listpack again.
    t.cmd(c, &["ZUNIONSTORE", "d", "1", "z"]);
    assert_eq!(t.cmd(c, &["OBJECT", "ENCODING", "d"]), bulk("listpack"));
}

#[test]
fn resp3_scores_are_doubles_and_pairs_nest() {
    let mut t = engine();
    let c = t.connect();
    t.cmd(c, &["HELLO", "3"]);
    t.cmd(c, &["ZADD", "z", "1.5", "a", "2", "b"]);
    assert_eq!(t.cmd(c, &["ZSCORE", "z", "a"]), Frame::Double(1.5));
    assert_eq!(
        t.cmd(c, &["ZRANGE", "z", "0", "-1", "WITHSCORES"]),
        array(vec![
            array(vec![bulk("a"), Frame::Double(1.5)]),
            array(vec![bulk("b"), Frame::Double(2.0)]),
        ])
    );
    assert_eq!(
        t.cmd(c, &["ZPOPMIN", "z"]),
        array(vec![bulk("a"), Frame::Double(1.5)])
    );
    assert_eq!(t.cmd(c, &["ZSCORE", "z", "nosuch"]), Frame::Null);
}

#[test]
fn wrong_types_and_empty_sets() {
    let mut t = engine();
    let c = t.connect();
    t.cmd(c, &["SET", "s", "x"]);
    let wrongtype = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    for args in [
        &["ZADD", "s", "1", "a"][..],
        &["ZRANGE", "s", "0", "-1"],
        &["ZUNIONSTORE", "d", "1", "s"],
        &["ZPOPMIN", "s"],
        &["BZPOPMIN", "s", "0"],
    ] {
        assert_eq!(t.cmd(c, args), wrongtype, "{args:?}");
    }
    t.cmd(c, &["ZADD", "z", "1", "a"]);
    t.cmd(c, &["ZPOPMIN", "z"]);
    assert_eq!(
        t.cmd(c, &["EXISTS", "z"]),
        int(0),
        "an emptied set is deleted"
    );
    let frees_before = t.frees();
    assert!(t.events.iter().all(|e| !matches!(e, Event::Close { .. })));
    assert_eq!(t.frees(), frees_before);
}
