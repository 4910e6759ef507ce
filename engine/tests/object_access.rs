//! OBJECT IDLETIME and FREQ against the engine's LRU clock and LFU
//! counter, in virtual time. Every expectation was taken from
//! redis-server 7.0.15 (values are strings, not integers: Redis shares the
//! objects of the integers 0..9999 between keys while maxmemory is 0, so
//! their access data is shared too, which seedkv does not model).

use seedkv_engine::resp::Frame;
use seedkv_engine::testing::TestEngine;

const LFU_SELECTED: &str = "ERR An LFU maxmemory policy is selected, idle time not tracked. \
    Please note that when switching between policies at runtime LRU and LFU data will take \
    some time to adjust.";

fn idle_s(t: &mut TestEngine, c: seedkv_engine::ClientId, key: &str) -> Frame {
    t.cmd(c, &["OBJECT", "IDLETIME", key])
}

#[test]
fn idle_time_grows_with_virtual_time_and_is_not_reset_by_object() {
    let mut t = TestEngine::new();
    let c = t.connect();
    t.cmd(c, &["SET", "k", "val"]);
    assert_eq!(idle_s(&mut t, c, "k"), Frame::Integer(0));
    t.advance_ms(2_500);
    assert_eq!(idle_s(&mut t, c, "k"), Frame::Integer(2));
    t.advance_ms(600);
    // The LRU clock ticks in whole seconds of the wall clock.
    assert_eq!(
        idle_s(&mut t, c, "k"),
        Frame::Integer(3),
        "OBJECT does not touch"
    );
    t.cmd(c, &["GET", "k"]);
    assert_eq!(idle_s(&mut t, c, "k"), Frame::Integer(0));
    t.advance_ms(60_000);
    assert_eq!(idle_s(&mut t, c, "k"), Frame::Integer(60));
}

/// Which commands make a key recently used, from redis-server 7.0.15: each
/// key idled 3 s, then one command ran on it.
#[test]
fn reads_and_writes_touch_but_inspection_does_not() {
    let touching: &[&[&str]] = &[
        &["GET"],
        &["TOUCH"],
        &["STRLEN"],
        &["DUMP"],
        &["EXPIRE", "@", "1000"],
        &["PERSIST"],
        &["SET", "@", "val2"],
        &["APPEND", "@", "x"],
        &["GETRANGE", "@", "0", "1"],
        &["GETEX"],
        &["SETNX", "@", "1"],
        &["SETRANGE", "@", "0", "z"],
        &["BITCOUNT"],
    ];
    let inspecting: &[&[&str]] = &[
        &["TYPE"],
        &["EXISTS"],
        &["TTL"],
        &["PTTL"],
        &["EXPIRETIME"],
        &["MEMORY", "USAGE", "@"],
        &["OBJECT", "ENCODING", "@"],
        &["SCAN", "0", "MATCH", "@"],
        &["KEYS", "@"],
        &["RANDOMKEY"],
    ];
    let mut t = TestEngine::new();
    let c = t.connect();
    let all = touching
        .iter()
        .map(|cmd| (cmd, 0))
        .chain(inspecting.iter().map(|cmd| (cmd, 3)));
    let cases: Vec<(String, Vec<String>, i64)> = all
        .enumerate()
        .map(|(i, (cmd, idle))| {
            let key = format!("k{i}");
            let args: Vec<String> = match cmd.iter().position(|&a| a == "@") {
                Some(_) => cmd.iter().map(|a| a.replace('@', &key)).collect(),
                None if matches!(cmd[0], "RANDOMKEY") => vec![cmd[0].to_string()],
                None => vec![cmd[0].to_string(), key.clone()],
            };
            (key, args, idle)
        })
        .collect();
    for (key, _, _) in &cases {
        t.cmd(c, &["SET", key, "val"]);
    }
    t.advance_ms(3_100);
    for (_, args, _) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        t.cmd(c, &args);
    }
    for (key, args, idle) in &cases {
        assert_eq!(idle_s(&mut t, c, key), Frame::Integer(*idle), "{args:?}");
    }
}

#[test]
fn lfu_counter_starts_at_five_and_the_first_hit_always_counts() {
    let mut t = TestEngine::new();
    let c = t.connect();
    let ok = Frame::Simple(b"OK".to_vec());
    assert_eq!(
        t.cmd(c, &["CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"]),
        ok
    );
    t.cmd(c, &["SET", "f", "vf"]);
    assert_eq!(t.cmd(c, &["OBJECT", "FREQ", "f"]), Frame::Integer(5));
    // At LFU_INIT_VAL the increment's probability is 1.
    t.cmd(c, &["GET", "f"]);
    assert_eq!(t.cmd(c, &["OBJECT", "FREQ", "f"]), Frame::Integer(6));
    t.cmd(c, &["SET", "g", "vg"]);
    t.cmd(c, &["TYPE", "g"]);
    t.cmd(c, &["EXISTS", "g"]);
    assert_eq!(t.cmd(c, &["OBJECT", "FREQ", "g"]), Frame::Integer(5));
    // Overwriting looks the key up (a hit) and keeps its counter.
    t.cmd(c, &["SET", "g", "vg2"]);
    assert_eq!(t.cmd(c, &["OBJECT", "FREQ", "g"]), Frame::Integer(6));
    assert_eq!(
        t.cmd(c, &["OBJECT", "IDLETIME", "g"]),
        Frame::Error(LFU_SELECTED.as_bytes().to_vec())
    );
    // One decay period per lfu-decay-time minute (1 by default).
    t.advance_ms(3 * 60_000);
    assert_eq!(t.cmd(c, &["OBJECT", "FREQ", "g"]), Frame::Integer(3));
    assert_eq!(t.cmd(c, &["CONFIG", "SET", "lfu-decay-time", "0"]), ok);
    t.advance_ms(60 * 60_000);
    assert_eq!(t.cmd(c, &["OBJECT", "FREQ", "g"]), Frame::Integer(6));
}
