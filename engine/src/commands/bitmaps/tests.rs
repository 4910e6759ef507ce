//! The bitmap commands against a bit-by-bit reference of Redis 7.0.15's
//! rules (the differential script `tests/scripts/bitmaps.txt` checks the
//! replies against redis-server itself), their work charges and their
//! change counting.

use crate::resp::Frame;
use crate::testing::{bulk, err, int, TestEngine};
use crate::{ClientId, Config};

fn setup() -> (TestEngine, ClientId) {
    let mut t = TestEngine::with_config(Config {
        record_executions: true,
        ..Config::default()
    });
    let c = t.connect();
    (t, c)
}

fn set_bytes(t: &mut TestEngine, c: ClientId, key: &str, bytes: &[u8]) {
    t.cmd_bytes(c, &[b"SET", key.as_bytes(), bytes]);
}

/// Bit `i` of `s`, most significant first.
fn bit_at(s: &[u8], i: i64) -> bool {
    s[(i / 8) as usize] & (0x80 >> (i % 8)) != 0
}

/// Redis's range rules, written plainly: the inclusive range in `unit`s
/// (bits or bytes) over `len` bytes, or None when empty.
fn plain_range(len: usize, start: i64, end: i64, in_bits: bool) -> Option<(i64, i64)> {
    let total = len as i64 * if in_bits { 8 } else { 1 };
    let start = if start < 0 { total + start } else { start }.max(0);
    let end = if end < 0 { total + end } else { end }
        .max(0)
        .min(total - 1);
    (start <= end).then_some((start, end))
}

/// The bits of the range, as bit positions.
fn plain_bits(len: usize, start: i64, end: i64, in_bits: bool) -> Option<(i64, i64)> {
    let (start, end) = plain_range(len, start, end, in_bits)?;
    Some(match in_bits {
        true => (start, end),
        false => (start * 8, end * 8 + 7),
    })
}

/// BITCOUNT; two negative indexes in the wrong order count nothing even
/// where clamping would make them a range (BITPOS has no such rule).
fn plain_bitcount(s: &[u8], start: i64, end: i64, in_bits: bool) -> i64 {
    if start < 0 && end < 0 && start > end {
        return 0;
    }
    match plain_bits(s.len(), start, end, in_bits) {
        None => 0,
        Some((from, to)) => (from..=to).filter(|&i| bit_at(s, i)).count() as i64,
    }
}

/// BITPOS: a 0 not found without an explicit end is the bit past the
/// range (the string is zero-padded), with one it is -1.
fn plain_bitpos(s: &[u8], bit: bool, start: i64, end: Option<i64>, in_bits: bool) -> i64 {
    let Some((from, to)) = plain_bits(s.len(), start, end.unwrap_or(-1), in_bits) else {
        return -1;
    };
    match (from..=to).find(|&i| bit_at(s, i) == bit) {
        Some(i) => i,
        None if bit || end.is_some() => -1,
        None => to + 1,
    }
}

const SAMPLES: &[&[u8]] = &[
    b"",
    b"\x00",
    b"\xff",
    b"\x80\x01",
    b"\xff\xf0\x00",
    b"\x00\x00\x0f\xff",
    b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xfe",
    b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x20",
    b"foobar",
];

#[test]
fn bitcount_and_bitpos_follow_the_range_rules() {
    let (mut t, c) = setup();
    let indexes: Vec<i64> = (-150..150).step_by(7).collect();
    for &s in SAMPLES {
        set_bytes(&mut t, c, "s", s);
        for &start in &indexes {
            for &end in &indexes {
                for (unit, in_bits) in [("BYTE", false), ("BIT", true)] {
                    let (start, end) = match in_bits {
                        true => (start, end),
                        false => (start / 8, end / 8),
                    };
                    let (a, b) = (start.to_string(), end.to_string());
                    assert_eq!(
                        t.cmd(c, &["BITCOUNT", "s", &a, &b, unit]),
                        int(plain_bitcount(s, start, end, in_bits)),
                        "BITCOUNT {s:?} {a} {b} {unit}"
                    );
                    for (bit, word) in [(false, "0"), (true, "1")] {
                        assert_eq!(
                            t.cmd(c, &["BITPOS", "s", word, &a, &b, unit]),
                            int(plain_bitpos(s, bit, start, Some(end), in_bits)),
                            "BITPOS {s:?} {word} {a} {b} {unit}"
                        );
                        assert_eq!(
                            t.cmd(c, &["BITPOS", "s", word, &a, "-1", unit]),
                            int(plain_bitpos(s, bit, start, Some(-1), in_bits)),
                            "BITPOS {s:?} {word} {a} -1 {unit}"
                        );
                        if !in_bits {
                            assert_eq!(
                                t.cmd(c, &["BITPOS", "s", word, &a]),
                                int(plain_bitpos(s, bit, start, None, false)),
                                "BITPOS {s:?} {word} {a}"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn setbit_grows_and_getbit_reads_zeros_past_the_end() {
    let (mut t, c) = setup();
    assert_eq!(t.cmd(c, &["SETBIT", "k", "17", "1"]), int(0));
    assert_eq!(
        t.cmd(c, &["GET", "k"]),
        Frame::Bulk(b"\x00\x00\x40".to_vec())
    );
    assert_eq!(t.cmd(c, &["SETBIT", "k", "17", "0"]), int(1));
    assert_eq!(t.cmd(c, &["GETBIT", "k", "17"]), int(0));
    assert_eq!(t.cmd(c, &["GETBIT", "k", "4294967295"]), int(0));
    assert_eq!(
        t.cmd(c, &["GETBIT", "k", "4294967296"]),
        err("ERR bit offset is not an integer or out of range")
    );
    assert_eq!(t.cmd(c, &["SET", "n", "7"]), Frame::Simple("OK".into()));
    // "7" is 0x37: bits 2, 3, 5, 6 and 7 are set.
    assert_eq!(t.cmd(c, &["GETBIT", "n", "2"]), int(1));
    assert_eq!(t.cmd(c, &["GETBIT", "n", "4"]), int(0));
    assert_eq!(t.cmd(c, &["OBJECT", "ENCODING", "n"]), bulk("int"));
    assert_eq!(t.cmd(c, &["SETBIT", "n", "2", "1"]), int(1));
    assert_eq!(t.cmd(c, &["OBJECT", "ENCODING", "n"]), bulk("raw"));
}

#[test]
fn only_a_change_counts_as_one() {
    let (mut t, c) = setup();
    let dirty = |t: &TestEngine| t.engine.server().dirty;
    t.cmd(c, &["SETBIT", "k", "3", "1"]);
    let before = dirty(&t);
    t.cmd(c, &["SETBIT", "k", "3", "1"]);
    t.cmd(c, &["SETBIT", "k", "4", "0"]);
    t.cmd(c, &["BITFIELD", "k", "SET", "u4", "0", "1"]);
    t.cmd(
        c,
        &[
            "BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "9",
        ],
    );
    assert_eq!(dirty(&t), before);
    t.cmd(c, &["SETBIT", "k", "4", "1"]);
    assert_eq!(dirty(&t), before + 1);
    // Every changing write of a BITFIELD counts, as Redis's `changes`.
    t.cmd(
        c,
        &[
            "BITFIELD", "k", "INCRBY", "u2", "0", "1", "INCRBY", "u2", "0", "1",
        ],
    );
    assert_eq!(dirty(&t), before + 3);
    // Growing the string counts even when the bits written are zeros.
    t.cmd(c, &["BITFIELD", "k", "SET", "u8", "100", "0"]);
    assert_eq!(dirty(&t), before + 4);
}

#[test]
fn bitop_pads_shorter_sources_with_zeros() {
    let (mut t, c) = setup();
    set_bytes(&mut t, c, "a", b"\xff\xff\xff");
    set_bytes(&mut t, c, "b", b"\x0f");
    let get = |t: &mut TestEngine| t.cmd(c, &["GET", "d"]);
    assert_eq!(t.cmd(c, &["BITOP", "AND", "d", "a", "b", "a"]), int(3));
    assert_eq!(get(&mut t), Frame::Bulk(b"\x0f\x00\x00".to_vec()));
    assert_eq!(t.cmd(c, &["BITOP", "OR", "d", "b", "a"]), int(3));
    assert_eq!(get(&mut t), Frame::Bulk(b"\xff\xff\xff".to_vec()));
    assert_eq!(t.cmd(c, &["BITOP", "XOR", "d", "b", "a", "b"]), int(3));
    assert_eq!(get(&mut t), Frame::Bulk(b"\xff\xff\xff".to_vec()));
    assert_eq!(t.cmd(c, &["BITOP", "NOT", "d", "b"]), int(1));
    assert_eq!(get(&mut t), Frame::Bulk(b"\xf0".to_vec()));
    assert_eq!(t.cmd(c, &["BITOP", "AND", "d", "nope"]), int(0));
    assert_eq!(t.cmd(c, &["EXISTS", "d"]), int(0));
}

#[test]
fn bitfield_wraps_saturates_and_fails_at_every_width() {
    let (mut t, c) = setup();
    for bits in 1..=64u32 {
        let signed = format!("i{bits}");
        let (min, max) = match bits {
            64 => (i64::MIN, i64::MAX),
            _ => (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1),
        };
        let reply = |t: &mut TestEngine, args: &[&str]| match t.cmd(c, args) {
            Frame::Array(items) => items,
            other => panic!("{args:?}: {other:?}"),
        };
        let (min_s, max_s) = (min.to_string(), max.to_string());
        let wrap = reply(
            &mut t,
            &[
                "BITFIELD", "f", "SET", &signed, "3", &max_s, "INCRBY", &signed, "3", "1",
            ],
        );
        assert_eq!(wrap[1], int(min), "{signed} wraps");
        let sat = reply(
            &mut t,
            &[
                "BITFIELD", "f", "OVERFLOW", "SAT", "INCRBY", &signed, "3", "-1",
            ],
        );
        assert_eq!(sat[0], int(min), "{signed} saturates");
        let fail = reply(
            &mut t,
            &[
                "BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", &signed, "3", "-1", "GET", &signed,
                "3",
            ],
        );
        assert_eq!(fail, vec![Frame::Null, int(min)], "{signed} fails");
        let back = reply(&mut t, &["BITFIELD", "f", "SET", &signed, "3", &max_s]);
        assert_eq!(back[0], int(min), "{signed} min_s {min_s}");
        if bits < 64 {
            let unsigned = format!("u{bits}");
            let umax = ((1u64 << bits) - 1) as i64;
            let got = reply(
                &mut t,
                &[
                    "BITFIELD", "f", "SET", &unsigned, "5", "-1", "GET", &unsigned, "5",
                ],
            );
            assert_eq!(got[1], int(umax), "{unsigned} wraps -1");
            let sat = reply(
                &mut t,
                &[
                    "BITFIELD", "f", "OVERFLOW", "SAT", "INCRBY", &unsigned, "5", "7",
                ],
            );
            assert_eq!(sat[0], int(umax), "{unsigned} saturates");
        }
    }
}

#[test]
fn scans_are_charged_per_byte() {
    let (mut t, c) = setup();
    let size_bytes = 1 << 20;
    t.cmd(c, &["SETRANGE", "s", &(size_bytes - 1).to_string(), "x"]);
    let per_byte = |work: u64| {
        let expected = size_bytes as u64 / 64;
        assert!(
            (expected..=expected * 3).contains(&work),
            "{work} for {expected}"
        );
    };
    t.cmd(c, &["BITCOUNT", "s"]);
    per_byte(t.executed_work("bitcount"));
    t.cmd(c, &["BITPOS", "s", "1"]);
    per_byte(t.executed_work("bitpos"));
    t.cmd(c, &["BITOP", "NOT", "d", "s"]);
    per_byte(t.executed_work("bitop"));
    t.cmd(
        c,
        &["SETBIT", "grown", &(size_bytes * 8 - 1).to_string(), "1"],
    );
    per_byte(t.executed_work("setbit"));
    t.cmd(
        c,
        &[
            "BITFIELD",
            "grown2",
            "SET",
            "u8",
            &(size_bytes * 8 - 8).to_string(),
            "1",
        ],
    );
    per_byte(t.executed_work("bitfield"));
}
