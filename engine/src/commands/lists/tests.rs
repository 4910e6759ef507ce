//! Unit tests of the list commands: the tricky cases, byte-exact null
//! shapes, encodings around the fill limits, and work accounting. The
//! transcript in tests/scripts/lists.txt covers every reply against Redis.

use super::COMMANDS;
use crate::cmd::flags::*;
use crate::resp::Frame;
use crate::testing::{bulk, err, int, simple, TestEngine};
use crate::{ClientId, Config};

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

fn setup() -> (TestEngine, ClientId) {
    let mut t = TestEngine::new();
    let c = t.connect();
    (t, c)
}

fn arr(items: &[&str]) -> Frame {
    Frame::Array(items.iter().map(|s| bulk(s)).collect())
}

fn ints(items: &[i64]) -> Frame {
    Frame::Array(items.iter().map(|&n| int(n)).collect())
}

fn range(t: &mut TestEngine, c: ClientId, key: &str) -> Frame {
    t.cmd(c, &["lrange", key, "0", "-1"])
}

/// The list at `key`, read straight from the keyspace.
fn node_count(t: &TestEngine, key: &str) -> usize {
    let v = t.engine.server().keyspace.dbs[0]
        .get(key.as_bytes())
        .expect("key exists");
    v.as_list().expect("a list").node_count()
}

#[test]
fn push_pop_and_length() {
    let (mut t, c) = setup();
    assert_eq!(t.cmd(c, &["rpush", "l", "b", "c"]), int(2));
    assert_eq!(t.cmd(c, &["lpush", "l", "a", "z"]), int(4));
    assert_eq!(range(&mut t, c, "l"), arr(&["z", "a", "b", "c"]));
    assert_eq!(t.cmd(c, &["lpushx", "missing", "x"]), int(0));
    assert_eq!(t.cmd(c, &["exists", "missing"]), int(0));
    assert_eq!(t.cmd(c, &["rpushx", "l", "d"]), int(5));
    assert_eq!(t.cmd(c, &["lpop", "l"]), bulk("z"));
    assert_eq!(t.cmd(c, &["rpop", "l", "2"]), arr(&["d", "c"]));
    assert_eq!(t.cmd(c, &["llen", "l"]), int(2));
    assert_eq!(t.cmd(c, &["lpop", "l", "10"]), arr(&["a", "b"]));
    // Emptied lists are deleted.
    assert_eq!(t.cmd(c, &["exists", "l"]), int(0));
    assert_eq!(t.cmd(c, &["llen", "l"]), int(0));
}

#[test]
fn pop_null_shapes_are_byte_exact() {
    let (mut t, c) = setup();
    assert_eq!(t.raw(c, b"*2\r\n$4\r\nlpop\r\n$1\r\nk\r\n"), b"$-1\r\n");
    assert_eq!(
        t.raw(c, b"*3\r\n$4\r\nlpop\r\n$1\r\nk\r\n$1\r\n0\r\n"),
        b"*-1\r\n"
    );
    t.cmd(c, &["rpush", "k", "v"]);
    assert_eq!(
        t.raw(c, b"*3\r\n$4\r\nrpop\r\n$1\r\nk\r\n$1\r\n0\r\n"),
        b"*0\r\n"
    );
    assert_eq!(
        t.cmd(c, &["lpop", "k", "-1"]),
        err("ERR value is out of range, must be positive")
    );
    assert_eq!(
        t.cmd(c, &["lpop", "k", "1", "2"]),
        err("ERR wrong number of arguments for 'lpop' command")
    );
    t.cmd(c, &["hello", "3"]);
    assert_eq!(
        t.raw(c, b"*3\r\n$4\r\nlpop\r\n$1\r\nx\r\n$1\r\n1\r\n"),
        b"_\r\n"
    );
    assert_eq!(
        t.raw(
            c,
            b"*4\r\n$5\r\nlmpop\r\n$1\r\n1\r\n$1\r\nx\r\n$4\r\nleft\r\n"
        ),
        b"_\r\n"
    );
}

#[test]
fn linsert_pivot_missing_and_found() {
    let (mut t, c) = setup();
    assert_eq!(t.cmd(c, &["linsert", "l", "before", "a", "x"]), int(0));
    t.cmd(c, &["rpush", "l", "a", "b", "a"]);
    assert_eq!(t.cmd(c, &["linsert", "l", "before", "zz", "x"]), int(-1));
    assert_eq!(t.cmd(c, &["linsert", "l", "AFTER", "a", "x"]), int(4));
    assert_eq!(t.cmd(c, &["linsert", "l", "Before", "a", "y"]), int(5));
    assert_eq!(range(&mut t, c, "l"), arr(&["y", "a", "x", "b", "a"]));
    assert_eq!(
        t.cmd(c, &["linsert", "l", "middle", "a", "x"]),
        err("ERR syntax error")
    );
    t.cmd(c, &["set", "s", "v"]);
    assert_eq!(
        t.cmd(c, &["linsert", "s", "after", "a", "x"]),
        err(WRONGTYPE)
    );
}

#[test]
fn lpos_rank_negative_count_and_maxlen() {
    let (mut t, c) = setup();
    t.cmd(c, &["rpush", "l", "a", "b", "c", "a", "b", "c", "a"]);
    assert_eq!(t.cmd(c, &["lpos", "l", "a"]), int(0));
    assert_eq!(t.cmd(c, &["lpos", "l", "a", "rank", "-1"]), int(6));
    assert_eq!(t.cmd(c, &["lpos", "l", "a", "rank", "-2"]), int(3));
    assert_eq!(t.cmd(c, &["lpos", "l", "a", "rank", "-4"]), Frame::Null);
    assert_eq!(
        t.cmd(c, &["lpos", "l", "a", "rank", "-2", "count", "0"]),
        ints(&[3, 0])
    );
    assert_eq!(
        t.cmd(c, &["lpos", "l", "a", "count", "0", "maxlen", "4"]),
        ints(&[0, 3])
    );
    assert_eq!(
        t.cmd(c, &["lpos", "l", "c", "rank", "-1", "maxlen", "1"]),
        Frame::Null
    );
    // Redis 7.0 takes LONG_MIN as a rank; its negation wraps, so every
    // match from the tail is reported.
    let min = i64::MIN.to_string();
    assert_eq!(t.cmd(c, &["lpos", "l", "a", "rank", &min]), int(6));
    assert_eq!(
        t.cmd(c, &["lpos", "l", "a", "rank", &min, "count", "2"]),
        ints(&[6, 3, 0])
    );
    assert_eq!(
        t.cmd(c, &["lpos", "l", "a", "rank", "0"]),
        err("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")
    );
    assert_eq!(
        t.cmd(c, &["lpos", "l", "a", "count", "x"]),
        err("ERR COUNT can't be negative")
    );
    assert_eq!(t.cmd(c, &["lpos", "missing", "a", "count", "1"]), ints(&[]));
}

#[test]
fn lset_out_of_range_and_missing() {
    let (mut t, c) = setup();
    assert_eq!(t.cmd(c, &["lset", "l", "x", "v"]), err("ERR no such key"));
    t.cmd(c, &["rpush", "l", "a", "b"]);
    assert_eq!(
        t.cmd(c, &["lset", "l", "2", "v"]),
        err("ERR index out of range")
    );
    assert_eq!(
        t.cmd(c, &["lset", "l", "-3", "v"]),
        err("ERR index out of range")
    );
    assert_eq!(
        t.cmd(c, &["lset", "l", "x", "v"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(t.cmd(c, &["lset", "l", "-1", "z"]), simple("OK"));
    assert_eq!(range(&mut t, c, "l"), arr(&["a", "z"]));
}

#[test]
fn lmove_same_key_rotates() {
    let (mut t, c) = setup();
    t.cmd(c, &["rpush", "l", "a", "b", "c"]);
    assert_eq!(t.cmd(c, &["lmove", "l", "l", "left", "right"]), bulk("a"));
    assert_eq!(range(&mut t, c, "l"), arr(&["b", "c", "a"]));
    assert_eq!(t.cmd(c, &["rpoplpush", "l", "l"]), bulk("a"));
    assert_eq!(range(&mut t, c, "l"), arr(&["a", "b", "c"]));
    // A one-element list rotated onto itself survives.
    t.cmd(c, &["rpush", "one", "x"]);
    assert_eq!(
        t.cmd(c, &["lmove", "one", "one", "right", "left"]),
        bulk("x")
    );
    assert_eq!(range(&mut t, c, "one"), arr(&["x"]));
    // Moving the last element away deletes the source.
    assert_eq!(
        t.cmd(c, &["lmove", "one", "dst", "left", "left"]),
        bulk("x")
    );
    assert_eq!(t.cmd(c, &["exists", "one"]), int(0));
    t.cmd(c, &["set", "s", "v"]);
    assert_eq!(
        t.cmd(c, &["lmove", "l", "s", "left", "left"]),
        err(WRONGTYPE)
    );
    assert_eq!(t.cmd(c, &["llen", "l"]), int(3), "nothing moved");
    assert_eq!(
        t.cmd(c, &["lmove", "missing", "s", "left", "left"]),
        Frame::Null
    );
}

#[test]
fn lrem_and_ltrim() {
    let (mut t, c) = setup();
    t.cmd(c, &["rpush", "l", "a", "b", "a", "c", "a"]);
    assert_eq!(t.cmd(c, &["lrem", "l", "-2", "a"]), int(2));
    assert_eq!(range(&mut t, c, "l"), arr(&["a", "b", "c"]));
    assert_eq!(t.cmd(c, &["lrem", "l", "0", "a"]), int(1));
    assert_eq!(t.cmd(c, &["ltrim", "l", "1", "5"]), simple("OK"));
    assert_eq!(range(&mut t, c, "l"), arr(&["c"]));
    assert_eq!(t.cmd(c, &["ltrim", "l", "1", "0"]), simple("OK"));
    assert_eq!(t.cmd(c, &["exists", "l"]), int(0));
    t.cmd(c, &["rpush", "m", "a", "a"]);
    let min = i64::MIN.to_string();
    assert_eq!(t.cmd(c, &["lrem", "m", &min, "a"]), int(2));
}

#[test]
fn mpop_and_blocking_forms_that_return_at_once() {
    let (mut t, c) = setup();
    t.cmd(c, &["rpush", "b", "1", "2", "3"]);
    assert_eq!(
        t.cmd(c, &["lmpop", "2", "a", "b", "right", "count", "2"]),
        Frame::Array(vec![bulk("b"), arr(&["3", "2"])])
    );
    assert_eq!(t.cmd(c, &["blpop", "a", "b", "0"]), arr(&["b", "1"]));
    assert_eq!(t.cmd(c, &["exists", "b"]), int(0));
    assert_eq!(
        t.cmd(c, &["blpop", "a", "-1"]),
        err("ERR timeout is negative")
    );
    assert_eq!(
        t.cmd(c, &["blmpop", "x", "1", "a", "left", "count", "0"]),
        err("ERR count should be greater than 0")
    );
    assert_eq!(
        t.cmd(c, &["blmove", "a", "b", "up", "left", "x"]),
        err("ERR syntax error")
    );
    assert_eq!(
        t.cmd(c, &["brpoplpush", "a", "b", "x"]),
        err("ERR timeout is not a float or out of range")
    );
    t.cmd(c, &["set", "s", "v"]);
    assert_eq!(t.cmd(c, &["brpop", "a", "s", "0"]), err(WRONGTYPE));
    t.cmd(c, &["rpush", "a", "v"]);
    assert_eq!(
        t.cmd(c, &["blmove", "a", "d", "left", "right", "0"]),
        bulk("v")
    );
    assert_eq!(
        t.cmd(c, &["lmpop", "9223372036854775807", "a", "left"]),
        err("ERR syntax error")
    );
}

#[test]
fn nodes_follow_list_max_listpack_size() {
    let (mut t, c) = setup();
    t.cmd(c, &["config", "set", "list-max-listpack-size", "4"]);
    for i in 0..10 {
        t.cmd(c, &["rpush", "l", &i.to_string()]);
    }
    assert_eq!(node_count(&t, "l"), 3);
    assert_eq!(t.cmd(c, &["object", "encoding", "l"]), bulk("quicklist"));
    // Inserting into a full node splits it.
    t.cmd(c, &["linsert", "l", "after", "1", "x"]);
    assert_eq!(node_count(&t, "l"), 4);
    assert_eq!(t.cmd(c, &["lindex", "l", "2"]), bulk("x"));
    // The fill is fixed when the list is created.
    t.cmd(c, &["config", "set", "list-max-listpack-size", "-2"]);
    t.cmd(c, &["rpush", "l", "a", "b", "c", "d", "e"]);
    assert!(node_count(&t, "l") >= 5);
    t.cmd(c, &["rpush", "m", "a", "b", "c", "d", "e"]);
    assert_eq!(node_count(&t, "m"), 1);
}

#[test]
fn work_counts_elements_visited() {
    let mut t = TestEngine::with_config(Config {
        record_executions: true,
        ..Config::default()
    });
    let c = t.connect();
    let mut args = vec!["rpush".to_string(), "l".to_string()];
    args.extend((0..1000).map(|i| i.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    t.cmd(c, &args);
    assert!(t.executed_work("rpush") >= 1000);
    t.cmd(c, &["lrange", "l", "0", "-1"]);
    assert!(t.executed_work("lrange") >= 1000);
    t.cmd(c, &["lrange", "l", "0", "0"]);
    assert!(t.executed_work("lrange") < 10);
    t.cmd(c, &["lpos", "l", "999"]);
    assert!(t.executed_work("lpos") >= 1000);
    t.cmd(c, &["lindex", "l", "-1"]);
    assert!(t.executed_work("lindex") < 10, "the tail is O(1)");
    t.cmd(c, &["ltrim", "l", "500", "-1"]);
    assert!(t.executed_work("ltrim") >= 500);
}

#[test]
fn specs_match_redis() {
    let spec = |name: &str| COMMANDS.iter().find(|s| s.name == name).expect(name);
    assert_eq!(COMMANDS.len(), 22);
    for name in ["lrange", "lrem", "ltrim", "lpos", "lmpop", "blmpop"] {
        assert!(spec(name).has(O_N), "{name}");
    }
    assert!(spec("blpop").has(BLOCKING));
    assert_eq!(spec("blpop").last_key, -2);
    assert_eq!(spec("lmove").last_key, 2);
    for s in COMMANDS {
        assert_eq!(s.group, "list");
        assert!(s.handler.is_some());
    }
}

/// Sends `args` from `client` without reading any output, then returns each
/// client's pending output (so a parked client's later reply is seen).
fn send_and_collect(
    t: &mut TestEngine,
    client: ClientId,
    args: &[&str],
) -> std::collections::BTreeMap<ClientId, Vec<u8>> {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    let now = t.now;
    t.engine
        .handle_input(now, client, &crate::resp::encode::encode_request(&args));
    let mut out = std::collections::BTreeMap::new();
    while let Some(c) = t.engine.poll_transmit() {
        let bytes = t.engine.pending_output(c).to_vec();
        t.engine.consume_output(c, bytes.len());
        out.entry(c).or_insert_with(Vec::new).extend(bytes);
    }
    out
}

#[test]
fn blocked_list_commands_are_served_by_pushes() {
    let (mut t, a) = setup();
    let b = t.connect();
    // BLMOVE parks on its source; a push serves it and fills the destination.
    let out = send_and_collect(&mut t, a, &["blmove", "src", "dst", "left", "right", "0"]);
    assert!(
        out.get(&a).is_none_or(|o| o.is_empty()),
        "parked: no reply yet"
    );
    let out = send_and_collect(&mut t, b, &["rpush", "src", "v", "w"]);
    assert_eq!(out[&b], b":2\r\n");
    assert_eq!(out[&a], b"$1\r\nv\r\n");
    assert_eq!(range(&mut t, b, "dst"), arr(&["v"]));
    assert_eq!(range(&mut t, b, "src"), arr(&["w"]));
    // BLMPOP waits on several keys and pops COUNT from the one pushed to.
    let out = send_and_collect(
        &mut t,
        a,
        &["blmpop", "0", "2", "k1", "k2", "right", "count", "2"],
    );
    assert!(out.get(&a).is_none_or(|o| o.is_empty()));
    let out = send_and_collect(&mut t, b, &["lpush", "k2", "x", "y", "z"]);
    assert_eq!(out[&a], b"*2\r\n$2\r\nk2\r\n*2\r\n$1\r\nx\r\n$1\r\ny\r\n");
    assert_eq!(range(&mut t, b, "k2"), arr(&["z"]));
    // BRPOP is served by LMOVE's push into its key.
    send_and_collect(&mut t, a, &["brpop", "k3", "0"]);
    let out = send_and_collect(&mut t, b, &["lmove", "k2", "k3", "left", "left"]);
    assert_eq!(out[&b], b"$1\r\nz\r\n");
    assert_eq!(out[&a], b"*2\r\n$2\r\nk3\r\n$1\r\nz\r\n");
    assert_eq!(t.cmd(b, &["exists", "k2", "k3"]), int(0));
}

#[test]
fn blocking_commands_inside_multi_reply_nulls() {
    let (mut t, c) = setup();
    t.cmd(c, &["multi"]);
    for cmd in [
        &["blpop", "none", "0"][..],
        &["blmove", "none", "d", "left", "left", "0"],
        &["brpoplpush", "none", "d", "0"],
        &["blmpop", "0", "1", "none", "left"],
    ] {
        assert_eq!(t.cmd(c, cmd), simple("QUEUED"));
    }
    assert_eq!(
        t.raw(c, b"*1\r\n$4\r\nexec\r\n"),
        b"*4\r\n*-1\r\n$-1\r\n$-1\r\n*-1\r\n"
    );
}
