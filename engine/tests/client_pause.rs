//! CLIENT PAUSE / UNPAUSE and DEBUG SLEEP in the engine, driven in virtual
//! time: what a WRITE pause holds and what it serves, ALL, order behind a
//! held request, release by CLIENT UNPAUSE and at the deadline (which
//! `poll_timeout` reports), MULTI/EXEC, scripts, a pause extended by a
//! second one, disconnects while held, and the stall DEBUG SLEEP hands to
//! the host. Each behaviour was checked against redis-server 7.0.15.

use seedkv_engine::resp::Frame;
use seedkv_engine::testing::TestHost;
use seedkv_engine::{ClientId, CloseReason, Config, Now};

const MS: u64 = 1_000_000;

/// The shared multi-client test host, recording executions.
type World = TestHost;

fn recording_host() -> World {
    World::new(Config {
        record_executions: true,
        ..Config::default()
    })
}

fn ok() -> Frame {
    Frame::Simple(b"OK".to_vec())
}

fn bulk(s: &str) -> Frame {
    Frame::Bulk(s.as_bytes().to_vec())
}

fn err(s: &str) -> Frame {
    Frame::Error(s.as_bytes().to_vec())
}

#[test]
fn a_write_pause_holds_set_and_serves_get() {
    let mut w = recording_host();
    let (admin, writer, reader) = (w.connect(), w.connect(), w.connect());
    assert_eq!(w.cmd(writer, &["SET", "k", "old"]), ok());
    assert_eq!(w.cmd(admin, &["CLIENT", "PAUSE", "1000", "WRITE"]), ok());
    w.send(writer, &["SET", "k", "new"]);
    assert_eq!(w.frames(writer), [], "SET waits");
    assert_eq!(w.cmd(reader, &["GET", "k"]), bulk("old"));
    assert_eq!(w.cmd(reader, &["PING"]), Frame::Simple(b"PONG".to_vec()));
    assert_eq!(
        w.cmd(reader, &["EVAL_RO", "return 1", "0"]),
        Frame::Integer(1)
    );
    assert_eq!(
        w.cmd(reader, &["EVAL", "#!lua flags=no-writes\nreturn 2", "0"]),
        Frame::Integer(2),
        "a script that declares no-writes runs"
    );
    for held in [
        &["DEL", "k"][..],
        &["PUBLISH", "ch", "m"],
        &["EVAL", "return 1", "0"],
        &["FLUSHALL"],
    ] {
        let c = w.connect();
        w.send(c, held);
        assert_eq!(w.frames(c), [], "{held:?} waits");
    }
    assert_eq!(w.cmd(admin, &["CLIENT", "UNPAUSE"]), ok());
    assert_eq!(w.frames(writer), [ok()]);
}

#[test]
fn an_all_pause_holds_everything_but_rejections() {
    let mut w = recording_host();
    let (admin, a, b) = (w.connect(), w.connect(), w.connect());
    assert_eq!(w.cmd(admin, &["CLIENT", "PAUSE", "500"]), ok());
    w.pipeline(a, &[&["NOSUCH"], &["GET", "k"], &["SET"]]);
    assert_eq!(
        w.frames(a),
        [err(
            "ERR unknown command 'NOSUCH', with args beginning with: "
        )],
        "rejected at once; GET waits, and the bad SET behind it"
    );
    w.send(b, &["CLIENT", "UNPAUSE"]);
    assert_eq!(w.frames(b), [], "even CLIENT UNPAUSE waits under ALL");
    w.send(admin, &["PING"]);
    assert_eq!(w.frames(admin), [], "the pausing client too");
    w.advance_ms(499);
    assert_eq!(w.frames(a), []);
    w.advance_ms(1);
    assert_eq!(
        w.frames(a),
        [
            Frame::Null,
            err("ERR wrong number of arguments for 'set' command")
        ]
    );
    assert_eq!(w.frames(b), [ok()]);
    assert_eq!(w.frames(admin), [Frame::Simple(b"PONG".to_vec())]);
}

#[test]
fn pipelined_requests_wait_behind_a_held_one_in_order() {
    let mut w = recording_host();
    let (admin, a, b) = (w.connect(), w.connect(), w.connect());
    assert_eq!(w.cmd(admin, &["CLIENT", "PAUSE", "1000", "WRITE"]), ok());
    w.take_executed();
    w.pipeline(
        a,
        &[
            &["GET", "k"],
            &["SET", "k", "1"],
            &["GET", "k"],
            &["INCR", "k"],
        ],
    );
    assert_eq!(w.frames(a), [Frame::Null], "the GET before the SET runs");
    w.pipeline(b, &[&["SET", "k", "b"], &["GET", "k"]]);
    assert_eq!(w.frames(b), []);
    assert_eq!(w.take_executed(), ["get"]);
    assert_eq!(w.cmd(admin, &["CLIENT", "UNPAUSE"]), ok());
    // Released in the order they were held: all of a's, then b's.
    assert_eq!(
        w.take_executed(),
        ["client|unpause", "set", "get", "incr", "set", "get"]
    );
    assert_eq!(w.frames(a), [ok(), bulk("1"), Frame::Integer(2)]);
    assert_eq!(w.frames(b), [ok(), bulk("b")]);
    assert_eq!(w.engine.paused_clients_count(), 0);
}

#[test]
fn the_pause_ends_at_its_deadline_through_poll_timeout() {
    let mut w = recording_host();
    let (admin, a) = (w.connect(), w.connect());
    let cron_ns = w.engine.poll_timeout();
    assert_eq!(w.cmd(admin, &["CLIENT", "PAUSE", "30", "WRITE"]), ok());
    assert_eq!(
        w.engine.poll_timeout(),
        cron_ns,
        "a pause that holds nobody wants no wake-up"
    );
    let end_ns = w.now.mono_ns + 30 * MS;
    w.send(a, &["SET", "k", "v"]);
    assert_eq!(w.engine.poll_timeout(), end_ns.min(cron_ns));
    w.set_time(end_ns - 1);
    assert_eq!(w.frames(a), [], "not a nanosecond early");
    assert_eq!(w.engine.poll_timeout(), end_ns);
    w.set_time(end_ns);
    assert_eq!(w.frames(a), [ok()]);
    assert!(w.engine.poll_timeout() > end_ns, "nothing left to wake");
    assert_eq!(w.cmd(a, &["SET", "k", "w"]), ok(), "no pause any more");
}

#[test]
fn held_clients_run_before_input_that_arrives_after_the_end() {
    let mut w = recording_host();
    let (admin, a, b) = (w.connect(), w.connect(), w.connect());
    assert_eq!(w.cmd(admin, &["CLIENT", "PAUSE", "100", "WRITE"]), ok());
    w.send(a, &["SET", "k", "a"]);
    // b's input arrives after the end, before the host ran the timer.
    w.now = Now::from_ns(w.now.mono_ns + 150 * MS, w.now.unix_us + 150_000);
    w.take_executed();
    w.send(b, &["SET", "k", "b"]);
    assert_eq!(w.take_executed(), ["set", "set"]);
    assert_eq!(w.frames(a), [ok()]);
    assert_eq!(w.frames(b), [ok()]);
    assert_eq!(w.cmd(admin, &["GET", "k"]), bulk("b"), "a's SET went first");
}

#[test]
fn a_second_pause_keeps_the_later_end_and_the_stronger_mode() {
    let mut w = recording_host();
    let (admin, a) = (w.connect(), w.connect());
    w.pipeline(
        admin,
        &[
            &["CLIENT", "PAUSE", "800", "WRITE"],
            &["CLIENT", "PAUSE", "100", "ALL"],
        ],
    );
    assert_eq!(w.frames(admin), [ok(), ok()]);
    w.advance_ms(200);
    w.send(a, &["GET", "k"]);
    assert_eq!(w.frames(a), [], "still ALL, past the second pause's end");
    w.advance_ms(599);
    assert_eq!(w.frames(a), []);
    w.advance_ms(1);
    assert_eq!(w.frames(a), [Frame::Null]);
}

#[test]
fn a_zero_or_overflowing_timeout_pauses_nothing_and_errors_match_redis() {
    let mut w = recording_host();
    let (admin, a) = (w.connect(), w.connect());
    for timeout in ["0", "9223372036854775807"] {
        assert_eq!(w.cmd(admin, &["CLIENT", "PAUSE", timeout]), ok());
        assert_eq!(w.cmd(a, &["SET", "k", timeout]), ok(), "{timeout}");
    }
    let cases: &[(&[&str], &str)] = &[
        (
            &["CLIENT", "PAUSE"],
            "ERR wrong number of arguments for 'client|pause' command",
        ),
        (&["CLIENT", "PAUSE", "-1"], "ERR timeout is negative"),
        (
            &["CLIENT", "PAUSE", "1.5"],
            "ERR timeout is not an integer or out of range",
        ),
        (
            &["CLIENT", "PAUSE", "abc", "foo"],
            "ERR CLIENT PAUSE mode must be WRITE or ALL",
        ),
        (
            &["CLIENT", "PAUSE", "0", "write", "all"],
            "ERR unknown subcommand or wrong number of arguments for 'PAUSE'. Try CLIENT HELP.",
        ),
        (
            &["CLIENT", "UNPAUSE", "x"],
            "ERR wrong number of arguments for 'client|unpause' command",
        ),
    ];
    for (args, message) in cases {
        assert_eq!(w.cmd(admin, args), err(message), "{args:?}");
    }
    assert_eq!(w.cmd(a, &["SET", "k", "after"]), ok(), "no error paused");
}

#[test]
fn multi_exec_with_a_write_waits() {
    let mut w = recording_host();
    let (admin, a) = (w.connect(), w.connect());
    // Paused before queueing: the write waits when it is queued.
    assert_eq!(w.cmd(admin, &["CLIENT", "PAUSE", "1000", "WRITE"]), ok());
    w.pipeline(
        a,
        &[&["MULTI"], &["GET", "k"], &["SET", "k", "2"], &["EXEC"]],
    );
    assert_eq!(
        w.frames(a),
        [ok(), Frame::Simple(b"QUEUED".to_vec())],
        "the SET waits to be queued"
    );
    assert_eq!(w.cmd(admin, &["CLIENT", "UNPAUSE"]), ok());
    assert_eq!(
        w.frames(a),
        [
            Frame::Simple(b"QUEUED".to_vec()),
            Frame::Array(vec![Frame::Null, ok()])
        ]
    );
    // Paused after queueing: EXEC waits, since a queued command writes.
    w.pipeline(a, &[&["MULTI"], &["SET", "k", "3"]]);
    assert_eq!(w.frames(a), [ok(), Frame::Simple(b"QUEUED".to_vec())]);
    assert_eq!(w.cmd(admin, &["CLIENT", "PAUSE", "1000", "WRITE"]), ok());
    w.send(a, &["EXEC"]);
    assert_eq!(w.frames(a), [], "EXEC of a write waits");
    // A read-only EXEC runs.
    let b = w.connect();
    w.pipeline(b, &[&["MULTI"], &["GET", "k"], &["EXEC"]]);
    assert_eq!(
        w.frames(b),
        [
            ok(),
            Frame::Simple(b"QUEUED".to_vec()),
            Frame::Array(vec![bulk("2")])
        ]
    );
    w.advance_ms(1000);
    assert_eq!(w.frames(a), [Frame::Array(vec![ok()])]);
}

#[test]
fn a_pause_begun_by_a_released_client_holds_the_rest_again() {
    let mut w = recording_host();
    let (admin, a, b) = (w.connect(), w.connect(), w.connect());
    assert_eq!(w.cmd(admin, &["CLIENT", "PAUSE", "100", "WRITE"]), ok());
    // a's first request is a write: a waits with the new pause behind it.
    w.pipeline(
        a,
        &[&["SET", "x", "1"], &["CLIENT", "PAUSE", "100", "WRITE"]],
    );
    w.send(b, &["SET", "y", "1"]);
    assert_eq!((w.frames(a), w.frames(b)), (vec![], vec![]));
    w.advance_ms(100);
    assert_eq!(w.frames(a), [ok(), ok()], "a ran, then paused again");
    assert_eq!(w.frames(b), [], "b is held by a's pause");
    w.advance_ms(100);
    assert_eq!(w.frames(b), [ok()]);
}

#[test]
fn an_unpause_run_by_a_released_client_wakes_the_clients_held_again() {
    let mut w = recording_host();
    let (admin, a, b, c) = (w.connect(), w.connect(), w.connect(), w.connect());
    assert_eq!(w.cmd(admin, &["CLIENT", "PAUSE", "100", "ALL"]), ok());
    w.pipeline(a, &[&["PING"], &["CLIENT", "PAUSE", "1000", "WRITE"]]);
    w.send(b, &["SET", "y", "1"]);
    w.pipeline(c, &[&["GET", "y"], &["CLIENT", "UNPAUSE"]]);
    w.advance_ms(100);
    // a paused writes again, so b was held again; then c unpaused.
    assert_eq!(w.frames(a), [Frame::Simple(b"PONG".to_vec()), ok()]);
    assert_eq!(w.frames(c), [Frame::Null, ok()]);
    assert_eq!(w.frames(b), []);
    assert!(w.engine.poll_timeout() <= w.now.mono_ns, "due at once");
    w.set_time(w.now.mono_ns);
    assert_eq!(w.frames(b), [ok()]);
}

#[test]
fn a_held_client_that_disconnects_is_forgotten() {
    let mut w = recording_host();
    let (admin, a, b) = (w.connect(), w.connect(), w.connect());
    assert_eq!(w.cmd(admin, &["CLIENT", "PAUSE", "100", "WRITE"]), ok());
    w.send(a, &["SET", "k", "a"]);
    w.send(b, &["SET", "k", "b"]);
    w.engine.disconnect(w.now, a);
    assert_eq!(w.engine.paused_clients_count(), 1);
    w.advance_ms(100);
    assert_eq!(w.frames(b), [ok()]);
    assert_eq!(w.cmd(admin, &["GET", "k"]), bulk("b"), "a's SET never ran");
}

#[test]
fn a_held_client_keeps_its_query_buffer_limit() {
    let mut w = World::new(Config {
        client_query_buffer_limit_bytes: 1024,
        ..Config::default()
    });
    let (admin, a) = (w.connect(), w.connect());
    assert_eq!(w.cmd(admin, &["CLIENT", "PAUSE", "100", "WRITE"]), ok());
    w.send(a, &["SET", "k", "v"]);
    let big = "x".repeat(2048);
    w.send(a, &["GET", &big]);
    assert_eq!(w.closed, [(a, CloseReason::QueryBufferLimit)]);
}

#[test]
fn debug_sleep_asks_the_host_to_stall() {
    let mut w = recording_host();
    let a = w.connect();
    assert_eq!(
        w.cmd(a, &["DEBUG", "SLEEP", "0"]),
        err(
            "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", \
             you can run it from a local connection, otherwise you need to set this option in the \
             configuration file, and then restart the server."
        )
    );
    let mut config = Config {
        record_executions: true,
        ..Config::default()
    };
    config
        .extra
        .insert("enable-debug-command".into(), "local".into());
    let mut w = World::new(config);
    let a = w.connect();
    assert_eq!(std::mem::take(&mut w.stalled_ns), 0);
    assert_eq!(w.cmd(a, &["DEBUG", "SLEEP", "0.25"]), ok());
    assert_eq!(std::mem::take(&mut w.stalled_ns), 250 * MS);
    assert_eq!(std::mem::take(&mut w.stalled_ns), 0, "taken once");
    w.pipeline(a, &[&["DEBUG", "SLEEP", "0.001"], &["DEBUG", "sleep", "2"]]);
    assert_eq!(w.frames(a), [ok(), ok()]);
    assert_eq!(
        std::mem::take(&mut w.stalled_ns),
        2_001 * MS,
        "one input's sleeps add up"
    );
    // Redis reads the seconds with strtod and no check.
    for seconds in ["0", "abc", "-1", "1e-3x"] {
        assert_eq!(w.cmd(a, &["DEBUG", "SLEEP", seconds]), ok(), "{seconds}");
    }
    assert_eq!(std::mem::take(&mut w.stalled_ns), MS);
    assert_eq!(
        w.cmd(a, &["DEBUG", "SLEEP"]),
        err("ERR unknown subcommand or wrong number of arguments for 'SLEEP'. Try DEBUG HELP.")
    );
}

/// Redis's idle `timeout` skips postponed (held) clients: a client held
/// longer than the timeout is served when the pause ends, while a client
/// merely idle for as long is closed.
#[test]
fn a_held_client_outlives_the_idle_timeout() {
    let mut w = recording_host();
    let (admin, held, idle) = (w.connect(), w.connect(), w.connect());
    assert_eq!(w.cmd(admin, &["CONFIG", "SET", "timeout", "1"]), ok());
    assert_eq!(w.cmd(idle, &["PING"]), Frame::Simple(b"PONG".to_vec()));
    assert_eq!(w.cmd(admin, &["CLIENT", "PAUSE", "3000", "WRITE"]), ok());
    w.send(held, &["SET", "k", "v"]);
    assert_eq!(w.frames(held), [], "SET waits");
    let Frame::Bulk(list) = w.cmd(admin, &["CLIENT", "LIST"]) else {
        panic!("CLIENT LIST is a bulk string");
    };
    let list = String::from_utf8_lossy(&list).into_owned();
    let line_of = |id: ClientId| {
        list.lines()
            .find(|l| l.starts_with(&format!("id={} ", id.0)))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        line_of(held).contains(" flags=b "),
        "held shows as blocked: {list}"
    );
    assert!(line_of(idle).contains(" flags=N "), "{list}");
    for _ in 0..25 {
        w.advance_ms(100);
    }
    assert!(
        w.closed
            .iter()
            .any(|&(c, r)| c == idle && r == CloseReason::IdleTimeout),
        "the idle client is closed: {:?}",
        w.closed
    );
    assert!(
        w.closed.iter().all(|&(c, _)| c != held),
        "the held client is spared: {:?}",
        w.closed
    );
    for _ in 0..6 {
        w.advance_ms(100);
    }
    assert_eq!(w.frames(held), [ok()], "served when the pause ends");
}

/// The text of a verbatim or bulk reply.
fn text(frame: Frame) -> String {
    match frame {
        Frame::Bulk(b) | Frame::Verbatim { data: b, .. } => String::from_utf8(b).unwrap(),
        other => panic!("expected text, got {other:?}"),
    }
}

#[test]
fn a_held_client_counts_as_blocked_and_lists_its_held_command() {
    let mut w = recording_host();
    let (admin, writer, reader) = (w.connect(), w.connect(), w.connect());
    assert_eq!(w.cmd(admin, &["CLIENT", "PAUSE", "2000", "WRITE"]), ok());
    w.send(writer, &["SET", "k", "1"]);
    assert_eq!(w.frames(writer), [], "SET waits");
    // Redis 7.0.15: blocked_clients:1, and the held client's CLIENT LIST
    // line says flags=b cmd=set argv-mem=5 (the lengths of SET, k, 1).
    let info = text(w.cmd(reader, &["INFO", "clients"]));
    assert!(info.contains("\r\nblocked_clients:1\r\n"), "{info}");
    assert!(
        info.contains("\r\nclients_in_timeout_table:0\r\n"),
        "{info}"
    );
    let list = text(w.cmd(reader, &["CLIENT", "LIST"]));
    let line = list
        .lines()
        .find(|l| l.starts_with(&format!("id={} ", writer.0)))
        .expect("the writer is listed");
    for field in [" flags=b ", " argv-mem=5 ", " cmd=set "] {
        assert!(line.contains(field), "{field} in {line}");
    }
    assert_eq!(w.cmd(admin, &["CLIENT", "UNPAUSE"]), ok());
    assert_eq!(w.frames(writer), [ok()]);
    let info = text(w.cmd(reader, &["INFO", "clients"]));
    assert!(info.contains("\r\nblocked_clients:0\r\n"), "{info}");
}
