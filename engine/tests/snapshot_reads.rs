//! Snapshot reads (`snapshot-reads yes`): KEYS, SMEMBERS, HGETALL, HKEYS
//! and HVALS over a big collection execute at once, answer in bounded
//! slices, and the answer is the collection at the execution point
//! whatever other clients write between the slices.
//!
//! The truth to compare with: a second client runs the same command right
//! after the read opened. One read is open at a time, so the second one
//! runs whole, at once, at the same point of the history (nothing ran in
//! between).

use std::collections::BTreeMap;

use seedkv_engine::resp::Frame;
use seedkv_engine::testing::{bulk, int, simple, TestHost};
use seedkv_engine::{ClientId, Config, PlantedBug};

const SLICE_ELEMENTS: usize = 16;

fn host(bug: Option<PlantedBug>) -> TestHost {
    let mut h = TestHost::new(Config {
        record_executions: true,
        snapshot_slice_elements: SLICE_ELEMENTS,
        planted_bug: bug,
        ..Config::default()
    });
    h.forbid_flush_first_closes = true;
    h
}

/// SplitMix64: the test's own seeded draws.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }
}

/// A reply as an order-free multiset of its elements (pairs for a map).
fn canonical(frame: &Frame) -> BTreeMap<String, usize> {
    let items: Vec<String> = match frame {
        Frame::Array(items) | Frame::Set(items) => items.iter().map(|f| format!("{f:?}")).collect(),
        Frame::Map(pairs) => pairs.iter().map(|p| format!("{p:?}")).collect(),
        other => vec![format!("{other:?}")],
    };
    let mut counts = BTreeMap::new();
    for item in items {
        *counts.entry(item).or_insert(0) += 1;
    }
    counts
}

fn fill(h: &mut TestHost, c: ClientId, n: usize) {
    // Small enough for a hashtable at the sizes here.
    h.cmd(c, &["CONFIG", "SET", "hash-max-listpack-entries", "32"]);
    for i in 0..n {
        let (k, f, m) = (format!("k:{i}"), format!("f:{i}"), format!("m:{i}"));
        h.cmd(c, &["SET", &k, "v"]);
        h.cmd(c, &["HSET", "big:h", &f, &format!("val{i}")]);
        h.cmd(c, &["SADD", "big:s", &m]);
        if i % 7 == 0 {
            h.cmd(c, &["PEXPIRE", &k, "100000"]);
        }
    }
}

/// One random write by `w` between slices.
fn write(h: &mut TestHost, w: ClientId, rng: &mut Rng, n: u64) {
    let i = rng.below(n + n / 4);
    let (k, f, m) = (format!("k:{i}"), format!("f:{i}"), format!("m:{i}"));
    let args: Vec<String> = match rng.below(16) {
        0 => vec!["DEL".into(), k],
        1 => vec!["SET".into(), k, "new".into()],
        2 => vec!["PEXPIRE".into(), k, "1".into()],
        3 => vec!["PERSIST".into(), k],
        4 => vec!["HSET".into(), "big:h".into(), f, "changed".into()],
        5 => vec!["HDEL".into(), "big:h".into(), f],
        6 => vec!["HINCRBY".into(), "big:h".into(), f, "1".into()],
        7 => vec!["SREM".into(), "big:s".into(), m],
        8 => vec!["SADD".into(), "big:s".into(), m],
        9 => vec!["SPOP".into(), "big:s".into()],
        10 => vec!["UNLINK".into(), k],
        11 => vec![
            "HSET".into(),
            "big:h".into(),
            format!("new:{i}"),
            "x".into(),
        ],
        12 if rng.below(8) == 0 => vec!["DEL".into(), "big:h".into()],
        13 if rng.below(8) == 0 => vec!["RENAME".into(), "big:s".into(), "other".into()],
        14 if rng.below(20) == 0 => vec!["FLUSHALL".into()],
        15 if rng.below(10) == 0 => vec!["SWAPDB".into(), "0".into(), "1".into()],
        _ => vec!["SET".into(), format!("fresh:{i}"), "x".into()],
    };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    h.call(w, &args);
}

/// Opens `command` on a reader, takes the truth on a second client, runs
/// `writes` random writes between slices, and returns (sliced, truth).
fn race(h: &mut TestHost, command: &[&str], seed: u64, writes: usize) -> (Frame, Frame) {
    let n = 300;
    let (r, q, w) = (h.connect(), h.connect(), h.connect());
    fill(h, w, n);
    h.advance_ms(2); // PEXPIRE 1 must expire within the run
    h.send(r, command);
    assert!(
        h.engine.snapshot_read_running(),
        "{command:?} opened a read"
    );
    assert_eq!(h.frames(r), vec![], "no reply before the last slice");
    let truth = h.cmd(q, command);
    let mut rng = Rng(seed);
    for _ in 0..writes {
        write(h, w, &mut rng, n as u64);
        if rng.below(3) == 0 {
            h.advance_ms(1);
        }
        h.run_slices(1);
    }
    for _ in 0..10 * n {
        if !h.engine.snapshot_read_running() {
            break;
        }
        h.run_slices(1);
    }
    assert!(!h.engine.snapshot_read_running(), "the read ended");
    let mut frames = h.frames(r);
    assert_eq!(frames.len(), 1, "one reply: {frames:?}");
    assert!(h.engine.check_invariants() > 0);
    (frames.remove(0), truth)
}

const COMMANDS: &[&[&str]] = &[
    &["KEYS", "*"],
    &["KEYS", "k:1*"],
    &["SMEMBERS", "big:s"],
    &["HGETALL", "big:h"],
    &["HKEYS", "big:h"],
    &["HVALS", "big:h"],
];

#[test]
fn a_sliced_read_is_the_collection_at_its_execution_point() {
    for seed in 0..12 {
        for command in COMMANDS {
            let mut h = host(None);
            let (sliced, truth) = race(&mut h, command, seed, 120);
            assert_eq!(
                canonical(&sliced),
                canonical(&truth),
                "seed {seed} {command:?}"
            );
            assert!(h.reply_slices > 1, "{command:?} ran in slices");
            // A slice visits at most its budget (KEYS's glob steps besides).
            if command[1] == "*" || command[0] != "KEYS" {
                assert!(h.reply_slice_work_units_max <= SLICE_ELEMENTS as u64);
            }
        }
    }
}

#[test]
fn the_planted_side_list_skip_is_caught() {
    let mut caught = 0;
    for seed in 0..12 {
        let mut h = host(Some(PlantedBug::SnapshotSkipsSaved));
        let (sliced, truth) = race(&mut h, &["HGETALL", "big:h"], seed, 120);
        caught += usize::from(canonical(&sliced) != canonical(&truth));
    }
    assert!(caught > 0, "the comparison finds the dropped side list");
}

#[test]
fn other_clients_are_served_between_slices_and_the_readers_pipeline_waits() {
    let mut h = host(None);
    let (r, o) = (h.connect(), h.connect());
    fill(&mut h, o, 100);
    h.pipeline(r, &[&["KEYS", "*"], &["PING"]]);
    assert!(h.engine.snapshot_read_running());
    assert_eq!(h.engine.poll_timeout(), 0, "the next slice is due at once");
    assert_eq!(h.frames(r), vec![], "PING waits behind KEYS");
    assert_eq!(
        h.cmd(o, &["PING"]),
        simple("PONG"),
        "others are served at once"
    );
    assert_eq!(h.cmd(o, &["DEL", "k:3"]), int(1));
    while h.engine.snapshot_read_running() {
        h.run_slices(1);
    }
    let frames = h.frames(r);
    assert_eq!(frames.len(), 2);
    let Frame::Array(keys) = &frames[0] else {
        panic!("{frames:?}")
    };
    assert_eq!(keys.len(), 102, "k:0..99, big:h, big:s as of KEYS");
    assert!(
        keys.contains(&bulk("k:3")),
        "deleted after the execution point"
    );
    assert_eq!(frames[1], simple("PONG"));
}

#[test]
fn a_reader_that_disconnects_drops_its_read() {
    let mut h = host(None);
    let (r, o) = (h.connect(), h.connect());
    fill(&mut h, o, 100);
    h.send(r, &["HGETALL", "big:h"]);
    h.run_slices(2);
    assert!(h.engine.snapshot_read_running());
    h.engine.disconnect(h.now, r);
    assert!(!h.engine.snapshot_read_running());
    h.engine.check_invariants();
    // The hash is readable and writable as ever, and a new read opens.
    assert_eq!(h.cmd(o, &["HDEL", "big:h", "f:1"]), int(1));
    h.send(o, &["HKEYS", "big:h"]);
    assert!(h.engine.snapshot_read_running());
}

#[test]
fn inside_multi_a_script_or_with_the_switch_off_it_runs_whole() {
    let mut h = host(None);
    let c = h.connect();
    fill(&mut h, c, 100);
    h.cmd(c, &["MULTI"]);
    h.cmd(c, &["KEYS", "*"]);
    let exec = h.cmd(c, &["EXEC"]);
    assert!(!h.engine.snapshot_read_running());
    assert!(matches!(&exec, Frame::Array(r) if matches!(&r[0], Frame::Array(k) if k.len() == 102)));
    let eval = h.cmd(
        c,
        &[
            "EVAL",
            "return #redis.call('SMEMBERS', KEYS[1])",
            "1",
            "big:s",
        ],
    );
    assert_eq!(eval, int(100));
    assert_eq!(
        h.cmd(c, &["CONFIG", "SET", "snapshot-reads", "no"]),
        simple("OK")
    );
    assert!(matches!(h.cmd(c, &["HGETALL", "big:h"]), Frame::Array(p) if p.len() == 200));
    assert_eq!(
        h.cmd(c, &["CONFIG", "GET", "snapshot-reads"]),
        Frame::Array(vec![bulk("snapshot-reads"), bulk("no")])
    );
}

#[test]
fn resp3_gets_a_map_and_a_set() {
    let mut h = host(None);
    let c = h.connect();
    fill(&mut h, c, 50);
    h.call(c, &["HELLO", "3"]);
    h.send(c, &["HGETALL", "big:h"]);
    assert!(h.engine.snapshot_read_running());
    while h.engine.snapshot_read_running() {
        h.run_slices(1);
    }
    assert!(matches!(&h.frames(c)[..], [Frame::Map(p)] if p.len() == 50));
    h.send(c, &["SMEMBERS", "big:s"]);
    while h.engine.snapshot_read_running() {
        h.run_slices(1);
    }
    assert!(matches!(&h.frames(c)[..], [Frame::Set(m)] if m.len() == 50));
}

#[test]
fn a_staged_reply_over_the_hard_output_limit_closes_the_reader() {
    let mut h = host(None);
    let (r, o) = (h.connect(), h.connect());
    fill(&mut h, o, 200);
    h.cmd(
        o,
        &[
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "normal 500 0 0",
        ],
    );
    h.send(r, &["HVALS", "big:h"]);
    for _ in 0..100 {
        h.run_slices(1);
    }
    assert!(!h.engine.snapshot_read_running());
    assert_eq!(
        h.is_closed(r),
        Some(seedkv_engine::CloseReason::OutputBufferLimit)
    );
}

/// A reply bigger than a chunk (`reply_chunks::REPLY_CHUNK_BYTES`) joins
/// the reader's output as chunks, never copied whole: the host gets it a
/// piece at a time, byte for byte the unsliced reply, and the reader's
/// pipelined reply after it; the pending figures count every piece.
#[test]
fn a_reply_bigger_than_a_chunk_goes_out_in_chunks_in_order() {
    use seedkv_engine::reply_chunks::REPLY_CHUNK_BYTES;
    use seedkv_engine::resp::FrameDecoder;
    let mut h = host(None);
    let (r, o) = (h.connect(), h.connect());
    let long = "x".repeat(60);
    let keys_count = 3 * REPLY_CHUNK_BYTES / 64;
    for i in 0..keys_count {
        h.cmd(o, &["SET", &format!("{long}:{i:06}"), "v"]);
    }
    h.slow.insert(r);
    h.pipeline(r, &[&["KEYS", "*"], &["PING"]]);
    assert!(h.engine.snapshot_read_running());
    let truth = h.cmd(o, &["KEYS", "*"]);
    // A write after the execution point, between slices.
    h.cmd(o, &["DEL", &format!("{long}:000007")]);
    while h.engine.snapshot_read_running() {
        h.run_slices(1);
    }
    let first = h.engine.pending_output(r).len();
    let obl = h.info_field(o, "clients", "client_recent_max_output_buffer") as usize;
    assert!(
        first < obl,
        "a piece ({first}) of the pending output ({obl})"
    );
    // The host writes in odd sizes that straddle the chunks' ends.
    let mut decoder = FrameDecoder::default();
    let (mut taken, mut pieces) = (0, 0);
    for _ in 0..obl {
        let pending = h.engine.pending_output(r);
        if pending.is_empty() {
            break;
        }
        let n = pending.len().min(7_777);
        decoder.feed(&pending[..n]);
        pieces += usize::from(n == pending.len());
        h.engine.consume_output(r, n);
        taken += n;
    }
    assert_eq!(taken, obl, "every pending byte was counted");
    assert!(pieces >= 3, "the reply came in chunks ({pieces} pieces)");
    let keys = decoder.next_frame().expect("valid RESP").expect("KEYS");
    assert_eq!(canonical(&keys), canonical(&truth));
    assert!(matches!(&keys, Frame::Array(k) if k.len() == keys_count));
    assert_eq!(decoder.next_frame(), Ok(Some(simple("PONG"))));
    assert_eq!(decoder.next_frame(), Ok(None));
    h.engine.check_invariants();
}

/// A host that drains only what `poll_transmit` names still gets every
/// chunk: consuming a chunk with more behind it names the client again.
#[test]
fn every_chunk_reaches_a_host_that_follows_poll_transmit() {
    let mut h = host(None);
    let (r, o) = (h.connect(), h.connect());
    h.cmd(o, &["CONFIG", "SET", "hash-max-listpack-entries", "32"]);
    let long = "y".repeat(100);
    for i in 0..2_000 {
        h.cmd(o, &["HSET", "big:h", &format!("f:{i}"), &long]);
    }
    h.pipeline(r, &[&["HVALS", "big:h"], &["PING"]]);
    assert!(h.engine.snapshot_read_running());
    while h.engine.snapshot_read_running() {
        h.run_slices(1);
    }
    let frames = h.frames(r);
    assert_eq!(frames.len(), 2, "HVALS and PING");
    assert!(matches!(&frames[0], Frame::Array(v) if v.len() == 2_000));
    assert_eq!(frames[1], simple("PONG"));
}

/// One random write by `w` between LRANGE's slices: mostly other keys (the
/// read walks the list itself), sometimes the list (the read then goes on
/// from a copy of what it still owes), now and then the key goes.
fn write_list(h: &mut TestHost, w: ClientId, rng: &mut Rng) {
    let i = rng.below(1000).to_string();
    let args: Vec<&str> = match rng.below(24) {
        0 => vec!["LPUSH", "big:l", &i],
        1 => vec!["RPUSH", "big:l", &i],
        2 => vec!["LPOP", "big:l"],
        3 => vec!["RPOP", "big:l", "3"],
        4 => vec!["LSET", "big:l", "5", "set"],
        5 => vec!["LREM", "big:l", "0", "e:7"],
        6 => vec!["LINSERT", "big:l", "BEFORE", "e:9", "ins"],
        7 => vec!["LTRIM", "big:l", "2", "-3"],
        8 => vec!["LMOVE", "big:l", "other", "LEFT", "RIGHT"],
        9 => vec!["LLEN", "big:l"],
        10 if rng.below(6) == 0 => vec!["DEL", "big:l"],
        11 if rng.below(6) == 0 => vec!["RENAME", "big:l", "moved"],
        12 if rng.below(10) == 0 => vec!["FLUSHALL"],
        13 if rng.below(6) == 0 => vec!["PEXPIRE", "big:l", "1"],
        14 if rng.below(6) == 0 => vec!["SWAPDB", "0", "1"],
        _ => vec!["SET", "fresh", &i],
    };
    h.call(w, &args);
}

/// LRANGE of a big list answers in slices, and the answer is the range at
/// the execution point whatever writers do to the list between slices.
/// The truth is taken inside MULTI (which never slices) just before: no
/// command runs between the two.
#[test]
fn a_sliced_lrange_is_the_range_at_its_execution_point() {
    let ranges: &[(&str, &str)] = &[("0", "-1"), ("10", "-20"), ("-150", "-1"), ("3", "100")];
    for seed in 0..16 {
        for &(start, end) in ranges {
            let mut h = host(None);
            let (r, q, w) = (h.connect(), h.connect(), h.connect());
            for i in 0..300 {
                h.cmd(w, &["RPUSH", "big:l", &format!("e:{}", i % 40)]);
            }
            h.cmd(q, &["MULTI"]);
            h.cmd(q, &["LRANGE", "big:l", start, end]);
            let Frame::Array(mut truth) = h.cmd(q, &["EXEC"]) else {
                panic!("EXEC")
            };
            let truth = truth.remove(0);
            h.send(r, &["LRANGE", "big:l", start, end]);
            assert!(
                h.engine.snapshot_read_running(),
                "LRANGE {start} {end} opened a read"
            );
            let mut rng = Rng(seed);
            for _ in 0..2_000 {
                if !h.engine.snapshot_read_running() {
                    break;
                }
                if rng.below(2) == 0 {
                    write_list(&mut h, w, &mut rng);
                }
                if rng.below(4) == 0 {
                    h.advance_ms(1);
                }
                h.run_slices(1);
            }
            assert!(!h.engine.snapshot_read_running(), "the read ended");
            let frames = h.frames(r);
            assert_eq!(
                frames,
                vec![truth],
                "seed {seed} LRANGE {start} {end}: in order, exactly"
            );
            assert!(h.reply_slices > 1, "LRANGE ran in slices");
            h.engine.check_invariants();
        }
    }
}

/// A small range, a range inside MULTI and a read while another is open
/// run whole, as before.
#[test]
fn a_short_lrange_runs_whole() {
    let mut h = host(None);
    let (r, o) = (h.connect(), h.connect());
    for i in 0..100 {
        h.cmd(o, &["RPUSH", "big:l", &i.to_string()]);
    }
    assert!(matches!(h.cmd(r, &["LRANGE", "big:l", "0", "9"]), Frame::Array(e) if e.len() == 10));
    assert!(!h.engine.snapshot_read_running());
    h.send(r, &["LRANGE", "big:l", "0", "-1"]);
    assert!(h.engine.snapshot_read_running());
    assert!(matches!(h.cmd(o, &["LRANGE", "big:l", "0", "-1"]), Frame::Array(e) if e.len() == 100));
    while h.engine.snapshot_read_running() {
        h.run_slices(1);
    }
    assert!(matches!(&h.frames(r)[..], [Frame::Array(e)] if e.len() == 100));
}
