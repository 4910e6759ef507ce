//! MULTI/EXEC/WATCH and MONITOR across clients, in virtual time: EXEC runs
//! its queue with no other client's command in between (checked on the
//! execution records), EXECABORT, WATCH invalidated by other clients' writes
//! of every kind and by expiry, blocking commands that never block inside
//! MULTI, cleanup on disconnect, and the lines MONITOR streams.

use seedkv_engine::resp::encode::encode_request;
use seedkv_engine::resp::{Frame, FrameDecoder};
use seedkv_engine::testing::{bulk, err, int, simple, TestEngine};
use seedkv_engine::{ClientId, Config, Event, Executed};

fn recording() -> TestEngine {
    TestEngine::with_config(Config {
        record_executions: true,
        ..Config::default()
    })
}

fn frames(out: &[u8]) -> Vec<Frame> {
    let mut d = FrameDecoder::new();
    d.feed(out);
    let mut all = Vec::new();
    while let Some(f) = d.next_frame().expect("valid RESP") {
        all.push(f);
    }
    all
}

fn pipeline(cmds: &[&[&str]]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for c in cmds {
        let args: Vec<&[u8]> = c.iter().map(|a| a.as_bytes()).collect();
        bytes.extend_from_slice(&encode_request(&args));
    }
    bytes
}

fn executions(t: &TestEngine) -> Vec<Executed> {
    t.events
        .iter()
        .filter_map(|e| match e {
            Event::Executed(x) => Some(x.clone()),
            _ => None,
        })
        .collect()
}

/// MULTI, one PING queued, EXEC on `c`: whether the EXEC ran.
fn exec_runs(t: &mut TestEngine, c: ClientId) -> bool {
    assert_eq!(t.cmd(c, &["MULTI"]), simple("OK"));
    assert_eq!(t.cmd(c, &["PING"]), simple("QUEUED"));
    match t.cmd(c, &["EXEC"]) {
        Frame::Array(replies) => {
            assert_eq!(replies, vec![simple("PONG")]);
            true
        }
        Frame::Null => false,
        other => panic!("EXEC replied {other:?}"),
    }
}

#[test]
fn exec_runs_its_queue_with_nothing_in_between() {
    let mut t = recording();
    let a = t.connect();
    let b = t.connect();
    t.cmd(a, &["SET", "c", "0"]);
    // A queues its transaction; B pipelines writes of the same key.
    let queued = pipeline(&[&["MULTI"], &["INCR", "c"], &["GET", "c"], &["INCR", "c"]]);
    let replies = frames(&t.raw(a, &queued));
    assert_eq!(
        replies,
        vec![
            simple("OK"),
            simple("QUEUED"),
            simple("QUEUED"),
            simple("QUEUED")
        ]
    );
    t.events.clear();
    // B's batch arrives, then A's EXEC, then B's second batch: each input
    // runs to the end, and EXEC's commands run back to back.
    let b_batch = pipeline(&[&["INCRBY", "c", "100"], &["INCRBY", "c", "100"]]);
    t.raw(b, &b_batch);
    let out = t.raw(a, &pipeline(&[&["EXEC"]]));
    t.raw(b, &b_batch);
    assert_eq!(
        frames(&out),
        vec![Frame::Array(vec![int(201), bulk("201"), int(202)])]
    );
    assert_eq!(t.cmd(b, &["GET", "c"]), bulk("402"));
    let runs = executions(&t);
    let names: Vec<(ClientId, &str, Option<u64>)> =
        runs.iter().map(|x| (x.client, x.name, x.in_exec)).collect();
    assert_eq!(
        names[..6],
        [
            (b, "incrby", None),
            (b, "incrby", None),
            (a, "incr", Some(5)),
            (a, "get", Some(5)),
            (a, "incr", Some(5)),
            (a, "exec", None),
        ]
    );
    // Each queued command keeps the request_seq it was queued with.
    let seqs: Vec<u64> = runs[2..6].iter().map(|x| x.request_seq).collect();
    assert_eq!(seqs, [2, 3, 4, 5]);
}

#[test]
fn whole_transaction_in_one_batch() {
    let mut t = TestEngine::new();
    let a = t.connect();
    let out = t.raw(
        a,
        &pipeline(&[
            &["MULTI"],
            &["SET", "x", "1"],
            &["INCR", "x"],
            &["EXEC"],
            &["GET", "x"],
        ]),
    );
    assert_eq!(
        frames(&out),
        vec![
            simple("OK"),
            simple("QUEUED"),
            simple("QUEUED"),
            Frame::Array(vec![simple("OK"), int(2)]),
            bulk("2"),
        ]
    );
}

#[test]
fn queueing_errors_abort_exec() {
    let mut t = TestEngine::new();
    let a = t.connect();
    t.cmd(a, &["MULTI"]);
    assert_eq!(t.cmd(a, &["SET", "k", "v"]), simple("QUEUED"));
    assert!(matches!(t.cmd(a, &["NOSUCH"]), Frame::Error(_)));
    assert_eq!(
        t.cmd(a, &["EXEC"]),
        err("EXECABORT Transaction discarded because of previous errors.")
    );
    assert_eq!(t.cmd(a, &["EXISTS", "k"]), int(0));
    assert_eq!(t.cmd(a, &["EXEC"]), err("ERR EXEC without MULTI"));
}

#[test]
fn blocking_commands_inside_multi_reply_at_once() {
    let mut t = TestEngine::new();
    let a = t.connect();
    t.cmd(a, &["MULTI"]);
    t.cmd(a, &["BLPOP", "nosuch", "0"]);
    t.cmd(a, &["BZPOPMIN", "nosuch", "0"]);
    assert_eq!(
        t.cmd(a, &["EXEC"]),
        Frame::Array(vec![Frame::Null, Frame::Null])
    );
    assert!(!t.engine.is_blocked(a));
    // The client may block again afterwards.
    t.raw(a, &pipeline(&[&["BLPOP", "nosuch", "0"]]));
    assert!(t.engine.is_blocked(a));
}

/// Each write of `write` by another client fails a WATCH on `key` in db 0;
/// `setup` prepares the keys first.
fn assert_invalidates(setup: &[&[&str]], key: &str, write: &[&str]) {
    let mut t = TestEngine::new();
    let a = t.connect();
    let b = t.connect();
    for c in setup {
        t.cmd(b, c);
    }
    t.cmd(a, &["WATCH", key]);
    t.cmd(b, write);
    assert!(!exec_runs(&mut t, a), "{write:?} did not touch {key}");
    // EXEC forgot the watch: the next transaction runs.
    assert!(exec_runs(&mut t, a));
}

#[test]
fn watch_is_invalidated_by_every_kind_of_write() {
    assert_invalidates(&[], "k", &["SET", "k", "v"]);
    assert_invalidates(&[&["SET", "k", "1"]], "k", &["INCR", "k"]);
    assert_invalidates(&[&["SET", "k", "1"]], "k", &["DEL", "k"]);
    assert_invalidates(&[&["SET", "k", "1"]], "k", &["UNLINK", "k"]);
    assert_invalidates(&[&["SET", "k", "1"]], "k", &["EXPIRE", "k", "100"]);
    assert_invalidates(&[&["HSET", "k", "f", "v"]], "k", &["HSET", "k", "g", "v"]);
    assert_invalidates(&[&["RPUSH", "k", "a"]], "k", &["LSET", "k", "0", "b"]);
    assert_invalidates(&[&["SADD", "k", "a"]], "k", &["SPOP", "k"]);
    assert_invalidates(
        &[&["ZADD", "k", "1", "a"]],
        "k",
        &["ZINCRBY", "k", "2", "a"],
    );
    assert_invalidates(&[&["SET", "a", "1"]], "a", &["RENAME", "a", "k"]);
    assert_invalidates(&[&["SET", "a", "1"]], "k", &["RENAME", "a", "k"]);
    assert_invalidates(&[&["SET", "a", "1"]], "k", &["COPY", "a", "k"]);
    assert_invalidates(&[&["SET", "k", "1"]], "k", &["MOVE", "k", "3"]);
    assert_invalidates(&[&["SET", "k", "1"]], "k", &["FLUSHDB"]);
    assert_invalidates(&[&["SET", "k", "1"]], "k", &["FLUSHALL", "ASYNC"]);
    assert_invalidates(
        &[&["SELECT", "5"], &["SET", "k", "1"]],
        "k",
        &["SWAPDB", "0", "5"],
    );
    assert_invalidates(&[&["SADD", "s", "a"]], "k", &["SUNIONSTORE", "k", "s"]);
}

#[test]
fn writes_that_change_nothing_or_other_dbs_keep_the_watch() {
    let mut t = TestEngine::new();
    let a = t.connect();
    let b = t.connect();
    t.cmd(b, &["SET", "k", "1"]);
    t.cmd(a, &["WATCH", "k"]);
    t.cmd(b, &["SETNX", "k", "2"]);
    t.cmd(b, &["GET", "k"]);
    t.cmd(b, &["SELECT", "1"]);
    t.cmd(b, &["SET", "k", "other-db"]);
    t.cmd(b, &["FLUSHDB"]);
    assert!(exec_runs(&mut t, a));
}

#[test]
fn watched_key_expiring_in_virtual_time_fails_exec() {
    let mut t = TestEngine::new();
    let a = t.connect();
    t.cmd(a, &["SET", "k", "v", "PX", "100"]);
    t.cmd(a, &["WATCH", "k"]);
    // Still alive at EXEC: runs.
    t.advance_ms(50);
    assert!(exec_runs(&mut t, a));
    // Expires between WATCH and EXEC, with nobody touching it.
    t.cmd(a, &["WATCH", "k"]);
    t.advance_ms(60);
    assert!(!exec_runs(&mut t, a));
    // Deleted by active expiry meanwhile: fails too.
    t.cmd(a, &["SET", "j", "v", "PX", "10"]);
    t.cmd(a, &["WATCH", "j"]);
    for _ in 0..50 {
        t.advance_ms(100);
    }
    assert!(!exec_runs(&mut t, a));
    // A key already expired at WATCH is a missing key: no change later.
    t.cmd(a, &["SET", "e", "v", "PX", "10"]);
    t.advance_ms(20);
    t.cmd(a, &["WATCH", "e"]);
    t.advance_ms(1000);
    assert!(exec_runs(&mut t, a));
}

#[test]
fn watch_table_is_cleaned_up() {
    let mut t = TestEngine::new();
    let a = t.connect();
    let b = t.connect();
    t.cmd(a, &["WATCH", "x", "y", "x"]);
    t.cmd(b, &["WATCH", "x"]);
    assert_eq!(t.engine.watched_keys_count(), 3);
    t.cmd(a, &["UNWATCH"]);
    assert_eq!(t.engine.watched_keys_count(), 1);
    t.cmd(a, &["WATCH", "z"]);
    t.cmd(a, &["MULTI"]);
    t.cmd(a, &["DISCARD"]);
    assert_eq!(t.engine.watched_keys_count(), 1);
    t.cmd(a, &["WATCH", "z"]);
    assert_eq!(t.cmd(a, &["RESET"]), simple("RESET"));
    let now = t.now;
    t.engine.disconnect(now, b);
    assert_eq!(t.engine.watched_keys_count(), 0);
}

/// Sends `bytes` from `from` and returns what `to` received meanwhile.
fn output_of(t: &mut TestEngine, from: ClientId, bytes: &[u8], to: ClientId) -> Vec<u8> {
    let now = t.now;
    t.engine.handle_input(now, from, bytes);
    while t.engine.poll_event().is_some() {}
    let mut out = Vec::new();
    while let Some(c) = t.engine.poll_transmit() {
        let pending = t.engine.pending_output(c).to_vec();
        t.engine.consume_output(c, pending.len());
        if c == to {
            out.extend_from_slice(&pending);
        }
    }
    out
}

/// The lines `m` received, with the timestamp cut off.
fn monitor_lines(out: &[u8]) -> Vec<String> {
    frames(out)
        .into_iter()
        .map(|f| match f {
            Frame::Simple(s) => {
                let s = String::from_utf8(s).expect("utf-8");
                s.split_once(' ').expect("timestamp").1.to_string()
            }
            other => format!("{other:?}"),
        })
        .collect()
}

#[test]
fn monitor_streams_executed_commands() {
    let mut t = TestEngine::new();
    let m = t.connect();
    let a = t.connect();
    assert_eq!(t.cmd(m, &["MONITOR"]), simple("OK"));
    let mut seen = Vec::new();
    let mut run = |t: &mut TestEngine, args: &[&str]| {
        seen.extend(monitor_lines(&output_of(t, a, &pipeline(&[args]), m)));
    };
    run(&mut t, &["SET", "k", "a b\"\n"]);
    run(&mut t, &["CONFIG", "GET", "maxclients"]);
    run(&mut t, &["AUTH", "user", "pass"]);
    run(&mut t, &["HELLO", "2", "AUTH", "user", "pass"]);
    run(&mut t, &["MULTI"]);
    run(&mut t, &["INCR", "n"]);
    run(&mut t, &["NOSUCH"]);
    run(&mut t, &["DISCARD"]);
    run(&mut t, &["MULTI"]);
    run(&mut t, &["INCR", "n"]);
    run(&mut t, &["EXEC"]);
    run(&mut t, &["SELECT", "3"]);
    assert_eq!(
        seen,
        [
            "[0 ] \"SET\" \"k\" \"a b\\\"\\n\"",
            "[0 ] \"AUTH\" \"(redacted)\" \"(redacted)\"",
            "[0 ] \"HELLO\" \"2\" \"AUTH\" \"(redacted)\" \"(redacted)\"",
            "[0 ] \"MULTI\"",
            "[0 ] \"DISCARD\"",
            "[0 ] \"MULTI\"",
            "[0 ] \"INCR\" \"n\"",
            "[0 ] \"EXEC\"",
            "[3 ] \"SELECT\" \"3\"",
        ]
    );
    // The monitor may PING, is refused the keyspace, and MONITOR again is
    // silent; RESET ends monitoring.
    let out = t.raw(m, &pipeline(&[&["PING"], &["GET", "k"], &["MONITOR"]]));
    let replies = frames(&out);
    assert_eq!(replies.len(), 3, "{replies:?}");
    assert_eq!(replies[0], simple("PONG"));
    assert!(matches!(&replies[1], Frame::Simple(l) if l.ends_with(b"[0 ] \"PING\"")));
    assert_eq!(
        replies[2],
        err("ERR Replica can't interact with the keyspace")
    );
    assert_eq!(t.cmd(m, &["RESET"]), simple("RESET"));
    t.cmd(a, &["SET", "k", "v"]);
    assert_eq!(t.raw(m, b""), b"");
    // A ran SELECT 3 above, so its SET went to database 3.
    assert_eq!(t.cmd(m, &["GET", "k"]), bulk("a b\"\n"));
}

#[test]
fn monitor_is_refused_inside_multi() {
    let mut t = TestEngine::new();
    let a = t.connect();
    t.cmd(a, &["MULTI"]);
    t.cmd(a, &["MONITOR"]);
    assert_eq!(
        t.cmd(a, &["EXEC"]),
        Frame::Array(vec![err(
            "ERR MONITOR isn't allowed for DENY BLOCKING client"
        )])
    );
    assert_eq!(t.engine.monitors_count(), 0);
}

/// WATCH of a key twice (in one call or two, by two clients) watches it
/// once per client: the duplicate check now looks the client up among the
/// key's watchers (WATCH of N keys was quadratic; the cost audit found it),
/// and UNWATCH and the watch table stay in step.
#[test]
fn watching_a_key_twice_watches_it_once() {
    let mut t = TestEngine::new();
    let a = t.connect();
    let b = t.connect();
    t.cmd(a, &["WATCH", "k", "k", "j"]);
    t.cmd(a, &["WATCH", "k"]);
    t.cmd(b, &["WATCH", "k"]);
    assert_eq!(t.engine.watched_keys_count(), 3);
    t.cmd(b, &["SET", "k", "v"]);
    assert!(!exec_runs(&mut t, a), "the write to k failed a's EXEC");
    assert_eq!(t.engine.watched_keys_count(), 1, "b still watches k");
    t.cmd(b, &["UNWATCH"]);
    assert_eq!(t.engine.watched_keys_count(), 0);
}

/// An EXEC rejected before running (here: wrong arity) discards the
/// transaction and says why, with the rejection's text after the prefix
/// (Redis's `execCommandAbort`; found by cargo-mutants: the text's offset
/// was not checked).
#[test]
fn exec_with_wrong_arity_discards_the_transaction_and_says_why() {
    let mut t = TestEngine::new();
    let c = t.connect();
    assert_eq!(t.cmd(c, &["MULTI"]), simple("OK"));
    assert_eq!(t.cmd(c, &["SET", "k", "v"]), simple("QUEUED"));
    assert_eq!(
        t.cmd(c, &["EXEC", "extra"]),
        err("EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command")
    );
    assert_eq!(t.cmd(c, &["EXEC"]), err("ERR EXEC without MULTI"));
    assert_eq!(t.cmd(c, &["EXISTS", "k"]), int(0));
}
