//! INFO commandstats / errorstats / latencystats and the timing of blocked
//! commands, through the public API with a scripted stopwatch. Expected
//! texts were taken from redis-server 7.0.15.

use seedkv_engine::blocking::TimeoutReply;
use seedkv_engine::cmd::{flags, CommandSpec, Ctx};
use seedkv_engine::resp::Frame;
use seedkv_engine::stopwatch::ScriptedStopwatch;
use seedkv_engine::testing::TestEngine;
use seedkv_engine::value::Value;
use seedkv_engine::{ClientId, Config, Engine};

fn info(t: &mut TestEngine, c: ClientId, section: &str) -> String {
    match t.cmd(c, &["info", section]) {
        Frame::Bulk(b) | Frame::Verbatim { data: b, .. } => String::from_utf8(b).expect("utf-8"),
        other => panic!("INFO replied {other:?}"),
    }
}

fn scripted(t: &mut TestEngine, durations_us: &[u64]) {
    t.engine.set_stopwatch(Box::new(ScriptedStopwatch {
        durations_ns: durations_us.iter().map(|us| us * 1000).collect(),
        fallback_ns: 0,
    }));
}

#[test]
fn errorstats_and_rejected_and_failed_calls_like_redis() {
    let mut t = TestEngine::new();
    let c = t.connect();
    t.cmd(c, &["config", "resetstat"]);
    t.cmd(c, &["nosuchcommand"]);
    t.cmd(c, &["get"]);
    t.cmd(c, &["config", "get"]);
    t.cmd(c, &["config", "nosuch"]);
    t.cmd(c, &["set", "k", "v"]);
    t.cmd(c, &["incr", "k"]);
    t.cmd(c, &["auth", "nosuchuser", "pw"]);
    assert_eq!(
        info(&mut t, c, "errorstats"),
        "# Errorstats\r\nerrorstat_ERR:count=5\r\nerrorstat_WRONGPASS:count=1\r\n"
    );
    let stats = info(&mut t, c, "commandstats");
    let line = |name: &str| {
        stats
            .lines()
            .find(|l| l.starts_with(&format!("cmdstat_{name}:")))
            .unwrap_or_else(|| panic!("{name} in {stats}"))
            .to_string()
    };
    assert!(
        line("get").ends_with("calls=0,usec=0,usec_per_call=0.00,rejected_calls=1,failed_calls=0")
    );
    assert!(line("config|get").ends_with("rejected_calls=1,failed_calls=0"));
    assert!(
        line("incr").contains("calls=1,")
            && line("incr").ends_with("rejected_calls=0,failed_calls=1")
    );
    assert!(line("config|resetstat").starts_with("cmdstat_config|resetstat:calls=1,"));
    assert!(!stats.contains("cmdstat_config:"), "{stats}");
    assert!(!stats.contains("nosuch"), "{stats}");
    let all = info(&mut t, c, "stats");
    assert!(all.contains("total_error_replies:6\r\n"), "{all}");
}

#[test]
fn commandstats_usec_and_latencystats_come_from_the_stopwatch() {
    let mut t = TestEngine::new();
    let c = t.connect();
    t.cmd(c, &["config", "resetstat"]);
    scripted(&mut t, &[10, 30, 64]);
    t.cmd(c, &["set", "k", "v"]);
    t.cmd(c, &["set", "k", "v"]);
    t.cmd(c, &["get", "k"]);
    let stats = info(&mut t, c, "commandstats");
    assert!(
        stats.contains(
            "cmdstat_set:calls=2,usec=40,usec_per_call=20.00,rejected_calls=0,failed_calls=0\r\n"
        ),
        "{stats}"
    );
    let lat = info(&mut t, c, "latencystats");
    assert!(
        lat.contains("latency_percentiles_usec_get:p50=64.255,p99=64.255,p99.9=64.255\r\n"),
        "{lat}"
    );
    assert!(
        lat.contains("latency_percentiles_usec_set:p50=10.047,p99=30.079,p99.9=30.079\r\n"),
        "{lat}"
    );
    t.cmd(
        c,
        &[
            "config",
            "set",
            "latency-tracking-info-percentiles",
            "0 100",
        ],
    );
    let lat = info(&mut t, c, "latencystats");
    assert!(
        lat.contains("latency_percentiles_usec_set:p0=9.984,p100=30.079\r\n"),
        "{lat}"
    );
    // INFO all lists the sections in Redis's order.
    let everything = info(&mut t, c, "everything");
    let at = |s: &str| everything.find(s).expect("section");
    assert!(at("# Commandstats") < at("# Errorstats"));
    assert!(at("# Errorstats") < at("# Latencystats"));
}

/// TPOP key timeout-ms: pops a string key, blocking while it is missing.
fn tpop(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let key = args[1].clone();
    let value = match ctx.lookup(&key) {
        Some(Value::Str(s)) => s.as_bytes().to_vec(),
        _ => {
            if ctx.may_block() {
                ctx.block_on_keys(vec![key], 0, TimeoutReply::NullArray);
            } else {
                ctx.w().null_array();
            }
            return;
        }
    };
    ctx.delete(&key, false);
    ctx.bulk(&value);
}

static TEST_COMMANDS: &[CommandSpec] = &[CommandSpec {
    name: "tpop",
    arity: 3,
    flags: flags::WRITE | flags::BLOCKING,
    first_key: 1,
    last_key: 1,
    key_step: 1,
    acl_categories: &["write", "slow", "blocking"],
    handler: Some(tpop),
    ..CommandSpec::DEFAULT
}];

#[test]
fn a_blocked_command_is_timed_once_over_its_runs() {
    let mut t = TestEngine::with_config(Config {
        slowlog_log_slower_than_us: 100,
        latency_monitor_threshold_ms: 1,
        ..Config::default()
    });
    t.engine = Engine::with_commands(t.engine.config().clone(), t.now, &[TEST_COMMANDS]);
    let waiter = t.connect();
    let writer = t.connect();
    // The blocking attempt takes 60 µs, the SET 5 µs, the serving re-run
    // 1 500 µs: the command is logged once with 1 560 µs, and the re-run is
    // a `command-unblocking` latency sample of 1 ms.
    scripted(&mut t, &[60, 5, 1_500]);
    let out = t.raw(
        waiter,
        &seedkv_engine::resp::encode::encode_request(&[b"tpop", b"k", b"0"]),
    );
    assert!(out.is_empty(), "blocked");
    t.cmd(writer, &["set", "k", "v"]);
    scripted(&mut t, &[]);
    let Frame::Array(entries) = t.cmd(writer, &["slowlog", "get"]) else {
        panic!("array")
    };
    assert_eq!(entries.len(), 1, "{entries:?}");
    let Frame::Array(fields) = &entries[0] else {
        panic!("entry")
    };
    assert_eq!(fields[2], Frame::Integer(1_560));
    assert_eq!(
        fields[3],
        Frame::Array(vec![
            Frame::Bulk(b"tpop".to_vec()),
            Frame::Bulk(b"k".to_vec()),
            Frame::Bulk(b"0".to_vec()),
        ])
    );
    let Frame::Array(latest) = t.cmd(writer, &["latency", "latest"]) else {
        panic!("array")
    };
    let names: Vec<Frame> = latest
        .iter()
        .map(|e| match e {
            Frame::Array(f) => f[0].clone(),
            _ => panic!("event"),
        })
        .collect();
    assert_eq!(
        names,
        [
            Frame::Bulk(b"command".to_vec()),
            Frame::Bulk(b"command-unblocking".to_vec())
        ]
    );
    let stats = info(&mut t, writer, "commandstats");
    assert!(stats.contains("cmdstat_tpop:calls=1,usec=1560,"), "{stats}");
}
