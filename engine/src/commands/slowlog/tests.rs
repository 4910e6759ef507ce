//! SLOWLOG: entries, thresholds, truncation, redaction, errors, RESP3.

use super::*;
use crate::client::ClientId;
use crate::resp::Frame;
use crate::stopwatch::ScriptedStopwatch;
use crate::testing::{bulk, err, int, simple, TestEngine, UNIX_ORIGIN_US};
use crate::{Config, ConnectInfo};

/// An engine where every command takes `duration_us`, and a client at a
/// known address.
fn engine(duration_us: u64) -> (TestEngine, ClientId) {
    let mut t = TestEngine::with_config(Config {
        slowlog_log_slower_than_us: 0,
        ..Config::default()
    });
    t.engine.set_stopwatch(Box::new(ScriptedStopwatch {
        durations_ns: Default::default(),
        fallback_ns: duration_us * 1000,
    }));
    let c = t.engine.connect(
        t.now,
        ConnectInfo {
            addr: "127.0.0.1:4000".into(),
            ..ConnectInfo::default()
        },
    );
    (t, c)
}

fn entries(f: Frame) -> Vec<Vec<Frame>> {
    match f {
        Frame::Array(items) => items
            .into_iter()
            .map(|e| match e {
                Frame::Array(fields) => fields,
                other => panic!("entry {other:?}"),
            })
            .collect(),
        other => panic!("not an array: {other:?}"),
    }
}

fn args_of(entry: &[Frame]) -> Vec<String> {
    match &entry[3] {
        Frame::Array(a) => a
            .iter()
            .map(|f| match f {
                Frame::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
                other => panic!("arg {other:?}"),
            })
            .collect(),
        other => panic!("args {other:?}"),
    }
}

#[test]
fn entries_have_redis_fields_newest_first() {
    let (mut t, c) = engine(7);
    assert_eq!(t.cmd(c, &["slowlog", "reset"]), simple("OK"));
    t.cmd(c, &["client", "setname", "me"]);
    t.cmd(c, &["set", "k", "v"]);
    let got = entries(t.cmd(c, &["slowlog", "get", "2"]));
    assert_eq!(got.len(), 2);
    let unix_s = (UNIX_ORIGIN_US / 1_000_000) as i64;
    assert_eq!(
        got[0],
        [
            int(2),
            int(unix_s),
            int(7),
            Frame::Array(vec![bulk("set"), bulk("k"), bulk("v")]),
            bulk("127.0.0.1:4000"),
            bulk("me"),
        ]
    );
    // The reset itself was logged (id 0), as Redis logs it after running.
    assert_eq!(args_of(&got[1]), ["client", "setname", "me"]);
    assert_eq!(got[1][0], int(1));
    assert_eq!(t.cmd(c, &["slowlog", "len"]), int(4));
}

#[test]
fn get_count_default_all_and_errors() {
    let (mut t, c) = engine(1);
    for _ in 0..12 {
        t.cmd(c, &["ping"]);
    }
    assert_eq!(entries(t.cmd(c, &["slowlog", "get"])).len(), 10);
    // Each GET is logged after it ran.
    assert_eq!(entries(t.cmd(c, &["SLOWLOG", "GET", "-1"])).len(), 13);
    assert_eq!(entries(t.cmd(c, &["slowlog", "get", "0"])).len(), 0);
    assert_eq!(entries(t.cmd(c, &["slowlog", "get", "1000"])).len(), 15);
    let count_err = err("ERR count should be greater than or equal to -1");
    for bad in ["-2", "x", "99999999999999999999", "1.5", ""] {
        assert_eq!(t.cmd(c, &["slowlog", "get", bad]), count_err, "{bad}");
    }
    assert_eq!(
        t.cmd(c, &["slowlog", "Get", "1", "2"]),
        err("ERR unknown subcommand or wrong number of arguments for 'Get'. Try SLOWLOG HELP.")
    );
    assert_eq!(
        t.cmd(c, &["slowlog", "len", "x"]),
        err("ERR wrong number of arguments for 'slowlog|len' command")
    );
    assert_eq!(
        t.cmd(c, &["slowlog", "reset", "x"]),
        err("ERR wrong number of arguments for 'slowlog|reset' command")
    );
    assert_eq!(
        t.cmd(c, &["slowlog", "foo"]),
        err("ERR unknown subcommand 'foo'. Try SLOWLOG HELP.")
    );
    assert_eq!(
        t.cmd(c, &["slowlog"]),
        err("ERR wrong number of arguments for 'slowlog' command")
    );
}

#[test]
fn threshold_and_max_len() {
    let mut t = TestEngine::with_config(Config {
        slowlog_log_slower_than_us: 5,
        slowlog_max_len: 3,
        ..Config::default()
    });
    t.engine.set_stopwatch(Box::new(ScriptedStopwatch {
        // ping 4 µs (not logged), ping 5 µs (logged: at least the threshold).
        durations_ns: [4_000, 5_000].into(),
        fallback_ns: 0,
    }));
    let c = t.connect();
    t.cmd(c, &["ping", "a"]);
    t.cmd(c, &["ping", "b"]);
    let got = entries(t.cmd(c, &["slowlog", "get"]));
    assert_eq!(got.len(), 1);
    assert_eq!(args_of(&got[0]), ["ping", "b"]);
    assert_eq!(got[0][2], int(5));

    // -1 disables; 0 logs everything; ids keep counting through RESET.
    t.cmd(c, &["config", "set", "slowlog-log-slower-than", "-1"]);
    t.cmd(c, &["ping"]);
    assert_eq!(t.cmd(c, &["slowlog", "len"]), int(1));
    t.cmd(c, &["config", "set", "slowlog-log-slower-than", "0"]);
    for _ in 0..5 {
        t.cmd(c, &["ping"]);
    }
    assert_eq!(t.cmd(c, &["slowlog", "len"]), int(3));
    // The CONFIG SET is itself logged, and trims the log to its new length.
    t.cmd(c, &["config", "set", "slowlog-max-len", "1"]);
    assert_eq!(t.cmd(c, &["slowlog", "len"]), int(1));
    t.cmd(c, &["slowlog", "reset"]);
    let got = entries(t.cmd(c, &["slowlog", "get"]));
    assert_eq!(args_of(&got[0]), ["slowlog", "reset"]);
    let id = match got[0][0] {
        Frame::Integer(id) => id,
        _ => unreachable!(),
    };
    assert!(id >= 9, "ids continue: {id}");

    // max-len 0 logs nothing, but ids are still taken.
    t.cmd(c, &["config", "set", "slowlog-max-len", "0"]);
    t.cmd(c, &["ping"]);
    assert_eq!(t.cmd(c, &["slowlog", "len"]), int(0));
    t.cmd(c, &["config", "set", "slowlog-max-len", "5"]);
    let got = entries(t.cmd(c, &["slowlog", "get"]));
    assert!(matches!(got[0][0], Frame::Integer(n) if n > id + 3));

    // CONFIG RESETSTAT keeps the log.
    t.cmd(c, &["config", "resetstat"]);
    assert_ne!(t.cmd(c, &["slowlog", "len"]), int(0));
}

#[test]
fn long_requests_are_truncated_like_redis() {
    let (mut t, c) = engine(1);
    t.cmd(c, &["slowlog", "reset"]);
    let mut args: Vec<String> = vec!["mset".into()];
    for i in 1..=20 {
        args.push(format!("k{i}"));
        args.push(format!("v{i}"));
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    t.cmd(c, &refs);
    let big = "x".repeat(200);
    t.cmd(c, &["set", "big", &big]);
    let exact = "y".repeat(128);
    t.cmd(c, &["set", "exact", &exact]);
    let got = entries(t.cmd(c, &["slowlog", "get", "3"]));
    assert_eq!(args_of(&got[0]), ["set", "exact", exact.as_str()]);
    let cut = format!("{}... (72 more bytes)", "x".repeat(128));
    // SET took its value apart, yet the entry shows it: it was captured.
    assert_eq!(args_of(&got[1]), ["set", "big", cut.as_str()]);
    let mset = args_of(&got[2]);
    assert_eq!(mset.len(), ENTRY_ARGS_MAX);
    assert_eq!(mset[30], "v15");
    assert_eq!(mset[31], "... (10 more arguments)");
    // Exactly 32 arguments are kept whole.
    let mut args: Vec<String> = vec!["mset".into(), "a".into(), "b".into()];
    args.extend((0..29).map(|i| i.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    t.cmd(c, &refs);
    let got = entries(t.cmd(c, &["slowlog", "get", "1"]));
    assert_eq!(args_of(&got[0]), args);
}

#[test]
fn secrets_are_redacted() {
    let (mut t, c) = engine(1);
    t.cmd(c, &["slowlog", "reset"]);
    t.cmd(c, &["auth", "foo"]);
    t.cmd(c, &["auth", "user", "pw"]);
    t.cmd(c, &["hello", "2", "auth", "default", "pw", "setname", "n"]);
    t.cmd(c, &["hello", "x", "auth", "a", "b"]);
    t.cmd(c, &["hello", "3", "auth", "a"]);
    t.cmd(c, &["config", "set", "requirepass", "", "maxmemory", "0"]);
    t.cmd(c, &["config", "set", "foo", "bar", "REQUIREPASS", "x"]);
    t.cmd(c, &["config", "set", "requirepass", "x", "port"]);
    t.cmd(c, &["hello", "2"]);
    let got = entries(t.cmd(c, &["slowlog", "get", "9"]));
    let all: Vec<Vec<String>> = got.iter().rev().map(|e| args_of(e)).collect();
    let r = "(redacted)";
    assert_eq!(
        all,
        [
            vec!["auth", r],
            vec!["auth", r, r],
            vec!["hello", "2", "auth", r, r, "setname", "n"],
            vec!["hello", "x", "auth", "a", "b"],
            vec!["hello", "3", "auth", "a"],
            vec!["config", "set", "requirepass", r, "maxmemory", "0"],
            vec!["config", "set", "foo", "bar", "REQUIREPASS", r],
            vec!["config", "set", "requirepass", "x", "port"],
            vec!["hello", "2"],
        ]
    );
}

#[test]
fn rejected_requests_are_not_logged_but_failed_ones_are() {
    let (mut t, c) = engine(1);
    t.cmd(c, &["slowlog", "reset"]);
    t.cmd(c, &["nosuchcommand"]);
    t.cmd(c, &["get"]);
    t.cmd(c, &["incr", "k", "x"]);
    t.cmd(c, &["set", "s", "x"]);
    t.cmd(c, &["incr", "s"]);
    let got = entries(t.cmd(c, &["slowlog", "get"]));
    let all: Vec<Vec<String>> = got.iter().map(|e| args_of(e)).collect();
    assert_eq!(
        all,
        [
            vec!["incr", "s"],
            vec!["set", "s", "x"],
            vec!["slowlog", "reset"]
        ]
    );
}

#[test]
fn resp3_shape_and_help() {
    let (mut t, c) = engine(3);
    t.cmd(c, &["hello", "3"]);
    t.cmd(c, &["slowlog", "reset"]);
    let got = t.cmd(c, &["slowlog", "get"]);
    let Frame::Array(items) = got else {
        panic!("array in RESP3 too")
    };
    assert!(matches!(&items[0], Frame::Array(f) if f.len() == 6 && f[5] == bulk("")));
    let Frame::Array(help) = t.cmd(c, &["slowlog", "help"]) else {
        panic!("help is an array")
    };
    assert_eq!(help.len(), 12);
    assert_eq!(
        help[0],
        simple("SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
    );
    assert_eq!(help[11], simple("    Prints this help."));
}

#[test]
fn default_stopwatch_counts_work_units_as_microseconds() {
    let mut t = TestEngine::with_config(Config {
        slowlog_log_slower_than_us: 0,
        ..Config::default()
    });
    let c = t.connect();
    t.cmd(c, &["slowlog", "reset"]);
    t.cmd(c, &["set", "k", "v"]);
    let got = entries(t.cmd(c, &["slowlog", "get", "1"]));
    // SET does one unit of work: one microsecond.
    assert_eq!(got[0][2], int(1));
    assert_eq!(got[0][4], bulk(""));
}
