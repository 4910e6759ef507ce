//! LATENCY: events, history, reset, doctor, graph, histogram, errors.

use super::*;
use crate::client::ClientId;
use crate::resp::Frame;
use crate::stopwatch::ScriptedStopwatch;
use crate::testing::{bulk, err, int, simple, TestEngine, UNIX_ORIGIN_US};
use crate::Config;

const NOW_S: i64 = (UNIX_ORIGIN_US / 1_000_000) as i64;

/// An engine with the monitor at 1 ms, whose commands take the scripted
/// durations (in ms), then 0.
fn engine(durations_ms: &[u64]) -> (TestEngine, ClientId) {
    let mut t = TestEngine::with_config(Config {
        latency_monitor_threshold_ms: 1,
        ..Config::default()
    });
    t.engine.set_stopwatch(Box::new(ScriptedStopwatch {
        durations_ns: durations_ms.iter().map(|ms| ms * 1_000_000).collect(),
        fallback_ns: 0,
    }));
    let c = t.connect();
    (t, c)
}

fn text(f: Frame) -> String {
    match f {
        Frame::Verbatim { data, .. } | Frame::Bulk(data) => String::from_utf8(data).expect("utf-8"),
        other => panic!("not text: {other:?}"),
    }
}

#[test]
fn samples_per_event_and_second() {
    // KEYS is a `command`, GET a `fast-command`; 0 ms is under the threshold.
    let (mut t, c) = engine(&[5, 3, 0, 7, 2]);
    t.cmd(c, &["keys", "*"]);
    t.cmd(c, &["get", "k"]);
    t.cmd(c, &["keys", "*"]);
    t.cmd(c, &["keys", "*"]);
    t.advance_ms(2_000);
    t.cmd(c, &["get", "k"]);
    assert_eq!(
        t.cmd(c, &["latency", "latest"]),
        Frame::Array(vec![
            Frame::Array(vec![bulk("command"), int(NOW_S), int(7), int(7)]),
            Frame::Array(vec![bulk("fast-command"), int(NOW_S + 2), int(2), int(3)]),
        ])
    );
    // One sample per second: the worst of it.
    assert_eq!(
        t.cmd(c, &["latency", "history", "command"]),
        Frame::Array(vec![Frame::Array(vec![int(NOW_S), int(7)])])
    );
    assert_eq!(
        t.cmd(c, &["latency", "history", "fast-command"]),
        Frame::Array(vec![
            Frame::Array(vec![int(NOW_S), int(3)]),
            Frame::Array(vec![int(NOW_S + 2), int(2)]),
        ])
    );
    // Names are case-sensitive for HISTORY, not for RESET.
    assert_eq!(
        t.cmd(c, &["latency", "history", "COMMAND"]),
        Frame::Array(vec![])
    );
    assert_eq!(t.cmd(c, &["latency", "reset", "COMMAND", "x"]), int(1));
    assert_eq!(t.cmd(c, &["latency", "reset"]), int(1));
    assert_eq!(t.cmd(c, &["latency", "latest"]), Frame::Array(vec![]));
}

#[test]
fn history_is_bounded() {
    let (mut t, c) = engine(&[]);
    t.engine.set_stopwatch(Box::new(ScriptedStopwatch {
        durations_ns: Default::default(),
        fallback_ns: 4_000_000,
    }));
    for _ in 0..SAMPLES_MAX + 5 {
        t.cmd(c, &["keys", "*"]);
        t.advance_ms(1_000);
    }
    let Frame::Array(h) = t.cmd(c, &["latency", "history", "command"]) else {
        panic!("array")
    };
    assert_eq!(h.len(), SAMPLES_MAX);
    // Oldest first: the first five seconds fell off.
    assert_eq!(h[0], Frame::Array(vec![int(NOW_S + 5), int(4)]));
}

#[test]
fn threshold_zero_records_nothing() {
    let mut t = TestEngine::new();
    t.engine.set_stopwatch(Box::new(ScriptedStopwatch {
        durations_ns: Default::default(),
        fallback_ns: 50_000_000,
    }));
    let c = t.connect();
    t.cmd(c, &["keys", "*"]);
    assert_eq!(t.cmd(c, &["latency", "latest"]), Frame::Array(vec![]));
    assert!(text(t.cmd(c, &["latency", "doctor"])).starts_with("I'm sorry, Dave, I can't do that."));
}

#[test]
fn doctor_reports_like_redis() {
    let (mut t, c) = engine(&[]);
    assert_eq!(
        text(t.cmd(c, &["latency", "doctor"])),
        "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n"
    );
    let (mut t, c) = engine(&[1]);
    t.cmd(c, &["config", "set", "slowlog-log-slower-than", "0"]);
    t.cmd(c, &["latency", "doctor"]);
    // The same report redis-server 7.0.15 gave for one 1 ms `command`
    // spike with slowlog-log-slower-than 0.
    let (mut t, c) = engine(&[0, 1]);
    t.cmd(c, &["config", "set", "slowlog-log-slower-than", "0"]);
    t.cmd(c, &["keys", "*"]);
    assert_eq!(
        text(t.cmd(c, &["latency", "doctor"])),
        "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n\
         1. command: 1 latency spikes (average 1ms, mean deviation 0ms, period 1.00 sec). Worst all time event 1ms.\n\
         \nI have a few advices for you:\n\n\
         - Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n\
         - Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n"
    );
    // The default slowlog threshold (10 ms) is above the monitor's 1 ms.
    let (mut t, c) = engine(&[4, 2]);
    t.cmd(c, &["keys", "*"]);
    t.cmd(c, &["get", "k"]);
    let report = text(t.cmd(c, &["latency", "doctor"]));
    assert!(
        report.contains("2. fast-command: 1 latency spikes"),
        "{report}"
    );
    assert!(report.contains("Please use 'CONFIG SET slowlog-log-slower-than 1000'."));
    assert!(report.contains("  1) Lower the system load.\n"));
}

#[test]
fn graph_like_redis() {
    let (mut t, c) = engine(&[1]);
    t.cmd(c, &["keys", "*"]);
    assert_eq!(
        t.cmd(c, &["latency", "graph", "command"]),
        Frame::Bulk(
            format!(
                "command - high 1 ms, low 1 ms (all time high 1 ms)\n{}\n \n \n \n_\n \n0\ns\n",
                "-".repeat(80)
            )
            .into_bytes()
        )
    );
    assert_eq!(
        t.cmd(c, &["latency", "graph", "x"]),
        err("ERR No samples available for event 'x'")
    );
    t.cmd(c, &["hello", "3"]);
    assert!(matches!(
        t.cmd(c, &["latency", "graph", "command"]),
        Frame::Verbatim { format, .. } if &format == b"txt"
    ));
}

#[test]
fn histogram_per_command() {
    let mut t = TestEngine::new();
    let c = t.connect();
    t.cmd(c, &["hello", "3"]);
    t.engine.set_stopwatch(Box::new(ScriptedStopwatch {
        // set 16 µs, set 40 µs, then config get 16 µs; the rest 0.
        durations_ns: [16_000, 40_000, 16_000].into(),
        fallback_ns: 0,
    }));
    t.cmd(c, &["set", "a", "1"]);
    t.cmd(c, &["set", "a", "2"]);
    t.cmd(c, &["config", "get", "hz"]);
    let set_entry = (
        bulk("set"),
        Frame::Map(vec![
            (bulk("calls"), int(2)),
            (
                bulk("histogram_usec"),
                Frame::Map(vec![(int(16), int(1)), (int(66), int(2))]),
            ),
        ]),
    );
    assert_eq!(
        t.cmd(c, &["latency", "histogram", "set", "nosuch"]),
        Frame::Map(vec![set_entry.clone()])
    );
    // A container names its subcommands; `a|b` names one.
    let Frame::Map(got) = t.cmd(c, &["latency", "histogram", "CONFIG", "config|get"]) else {
        panic!("map")
    };
    let names: Vec<Frame> = got.into_iter().map(|(k, _)| k).collect();
    assert_eq!(names, [bulk("config|get"), bulk("config|get")]);
    // Without names: every command with a histogram.
    let Frame::Map(all) = t.cmd(c, &["latency", "histogram"]) else {
        panic!("map")
    };
    assert!(all.contains(&set_entry));
    // latency-tracking no: no new histograms; RESETSTAT drops them.
    t.cmd(c, &["config", "set", "latency-tracking", "no"]);
    t.cmd(c, &["get", "a"]);
    assert_eq!(
        t.cmd(c, &["latency", "histogram", "get"]),
        Frame::Map(vec![])
    );
    t.cmd(c, &["config", "resetstat"]);
    assert_eq!(
        t.cmd(c, &["latency", "histogram", "set"]),
        Frame::Map(vec![])
    );
}

#[test]
fn cumulative_buckets_follow_hdr_log_iteration() {
    let mut h = Histogram::<u64>::new_with_bounds(1, 1_000_000_000, 2).expect("bounds");
    // Under 1 µs lands in the first bucket, reported as 1 µs.
    h.record(500).expect("in range");
    h.record(1_031).expect("in range");
    h.record(16_000).expect("in range");
    h.record(33_000).expect("in range");
    // 33 µs is at most 33 023 ns, the highest value of 32 768's bucket.
    assert_eq!(cumulative_buckets(&h), [(1, 2), (16, 3), (33, 4)]);
    h.record(1_000_000_000).expect("in range");
    let last = *cumulative_buckets(&h).last().expect("buckets");
    assert_eq!(last.1, 5);
    assert!(last.0 >= 1_000_000, "{last:?}");
}

#[test]
fn help_and_errors() {
    let (mut t, c) = engine(&[]);
    let Frame::Array(help) = t.cmd(c, &["latency", "help"]) else {
        panic!("array")
    };
    assert_eq!(help.len(), 17);
    assert_eq!(
        help[0],
        simple("LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
    );
    assert_eq!(
        t.cmd(c, &["latency", "history"]),
        err("ERR wrong number of arguments for 'latency|history' command")
    );
    assert_eq!(
        t.cmd(c, &["latency", "latest", "x"]),
        err("ERR wrong number of arguments for 'latency|latest' command")
    );
    assert_eq!(
        t.cmd(c, &["latency", "nope"]),
        err("ERR unknown subcommand 'nope'. Try LATENCY HELP.")
    );
}
