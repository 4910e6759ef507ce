//! Bitmaps: SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD BITFIELD_RO on a
//! few shared `bit:` keys, interleaved with the string commands that share
//! their bytes (GET SET APPEND SETRANGE STRLEN), DEL and short PEXPIREs so
//! keys come and go, and the odd list under a `bit:` key (WRONGTYPE).
//! `bit:<BIT_KEYS_COUNT>` is BITOP's destination. Offsets stay mostly
//! below [`BIT_OFFSET_SMALL_MAX`] bits, now and then up to
//! [`BIT_OFFSET_LARGE_MAX`], so strings stay small and seeds fast.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{Request, Workload, WorkloadKind};

/// Source keys `bit:0 ..`; `bit:<this>` is the BITOP destination.
pub const BIT_KEYS_COUNT: u32 = 4;
/// Most bit offsets are below this.
pub const BIT_OFFSET_SMALL_MAX: u64 = 256;
/// Rare bit offsets go up to this (a 512-byte string).
pub const BIT_OFFSET_LARGE_MAX: u64 = 4096;
/// Requests per batch at most.
pub const BIT_BATCH_MAX: u32 = 4;
/// Longest pause between batches.
pub const BIT_THINK_NS_MAX: u64 = 400_000;
/// BITFIELD operations per request at most.
pub const BITFIELD_OPS_MAX: u32 = 4;

pub struct Bits;

fn key(n: u32) -> Vec<u8> {
    format!("bit:{n}").into_bytes()
}

fn text(n: impl ToString) -> Vec<u8> {
    n.to_string().into_bytes()
}

fn offset(rng: &mut ChaCha8Rng) -> u64 {
    match rng.gen_range(0..20) {
        0 => rng.gen_range(0..BIT_OFFSET_LARGE_MAX),
        _ => rng.gen_range(0..BIT_OFFSET_SMALL_MAX),
    }
}

/// A range index for BITCOUNT/BITPOS: small, often negative.
fn index(rng: &mut ChaCha8Rng) -> Vec<u8> {
    text(rng.gen_range(-40i64..40))
}

/// A BITFIELD type: common widths, now and then any.
fn field_type(rng: &mut ChaCha8Rng) -> (bool, u32, Vec<u8>) {
    let signed = rng.gen_bool(0.5);
    let bits = match rng.gen_range(0..4) {
        0 => rng.gen_range(1..=if signed { 64 } else { 63 }),
        _ => [1, 3, 4, 8, 12, 16, 32][rng.gen_range(0..7)],
    };
    let name = format!("{}{bits}", if signed { 'i' } else { 'u' });
    (signed, bits, name.into_bytes())
}

/// A BITFIELD offset: plain bits, or `#N` (N fields of the type's width).
fn field_offset(rng: &mut ChaCha8Rng, bits: u32) -> Vec<u8> {
    match rng.gen_range(0..4) {
        0 => format!(
            "#{}",
            rng.gen_range(0..BIT_OFFSET_SMALL_MAX / u64::from(bits) + 1)
        )
        .into_bytes(),
        _ => text(offset(rng)),
    }
}

/// A SET value or INCRBY increment: small, or near the type's bounds so
/// that OVERFLOW matters.
fn field_value(rng: &mut ChaCha8Rng, signed: bool, bits: u32) -> Vec<u8> {
    let max = match signed {
        true => (1i128 << (bits - 1)) - 1,
        false => (1i128 << bits) - 1,
    };
    let v: i128 = match rng.gen_range(0..4) {
        0 => max + rng.gen_range(-2..=2),
        1 => -max + rng.gen_range(-3..=1),
        _ => rng.gen_range(-20..=20),
    };
    text(v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)))
}

fn bitfield(rng: &mut ChaCha8Rng, k: Vec<u8>, read_only: bool) -> Request {
    let name: &[u8] = if read_only {
        b"BITFIELD_RO"
    } else {
        b"BITFIELD"
    };
    let mut r = vec![name.to_vec(), k];
    for _ in 0..rng.gen_range(1..=BITFIELD_OPS_MAX) {
        let (signed, bits, ty) = field_type(rng);
        let at = field_offset(rng, bits);
        match rng.gen_range(0..10) {
            _ if read_only => r.extend([b"GET".to_vec(), ty, at]),
            0..=2 => r.extend([b"GET".to_vec(), ty, at]),
            3..=5 => r.extend([b"SET".to_vec(), ty, at, field_value(rng, signed, bits)]),
            6..=8 => r.extend([b"INCRBY".to_vec(), ty, at, field_value(rng, signed, bits)]),
            _ => {
                let mode: &[u8] = [&b"WRAP"[..], b"SAT", b"FAIL"][rng.gen_range(0..3)];
                r.extend([b"OVERFLOW".to_vec(), mode.to_vec()]);
            }
        }
    }
    r
}

fn bitcount(rng: &mut ChaCha8Rng, k: Vec<u8>) -> Request {
    let mut r = vec![b"BITCOUNT".to_vec(), k];
    match rng.gen_range(0..4) {
        0 => {}
        1 => r.extend([index(rng), index(rng)]),
        2 => r.extend([index(rng), index(rng), b"BYTE".to_vec()]),
        _ => r.extend([
            text(rng.gen_range(-300i64..300)),
            text(rng.gen_range(-300i64..300)),
            b"BIT".to_vec(),
        ]),
    }
    r
}

fn bitpos(rng: &mut ChaCha8Rng, k: Vec<u8>) -> Request {
    let mut r = vec![b"BITPOS".to_vec(), k, text(rng.gen_range(0..2))];
    match rng.gen_range(0..5) {
        0 => {}
        1 => r.push(index(rng)),
        2 => r.extend([index(rng), index(rng)]),
        3 => r.extend([index(rng), index(rng), b"BYTE".to_vec()]),
        _ => r.extend([
            text(rng.gen_range(-300i64..300)),
            text(rng.gen_range(-300i64..300)),
            b"BIT".to_vec(),
        ]),
    }
    r
}

fn bitop(rng: &mut ChaCha8Rng) -> Request {
    let op: &[u8] = [&b"AND"[..], b"OR", b"XOR", b"NOT"][rng.gen_range(0..4)];
    let sources = if op == b"NOT" {
        1
    } else {
        rng.gen_range(2..=4)
    };
    let mut r = vec![b"BITOP".to_vec(), op.to_vec(), key(BIT_KEYS_COUNT)];
    r.extend((0..sources).map(|_| key(rng.gen_range(0..=BIT_KEYS_COUNT))));
    r
}

/// A request with a bad argument, for the error paths.
fn malformed(rng: &mut ChaCha8Rng, k: Vec<u8>) -> Request {
    let parts: &[&[u8]] = match rng.gen_range(0..6) {
        0 => &[b"SETBIT", b"-", b"2", b"1"],
        1 => &[b"SETBIT", b"-", b"4294967296", b"1"],
        2 => &[b"BITFIELD", b"-", b"GET", b"u64", b"0"],
        3 => &[b"BITFIELD_RO", b"-", b"INCRBY", b"i8", b"0", b"1"],
        4 => &[b"BITPOS", b"-", b"2"],
        _ => &[b"BITOP", b"NOT", b"-", b"-", b"-"],
    };
    // "-" stands for the key.
    parts
        .iter()
        .map(|p| if *p == b"-" { k.clone() } else { p.to_vec() })
        .collect()
}

impl Bits {
    pub fn new() -> Bits {
        Bits
    }

    fn one(&mut self, rng: &mut ChaCha8Rng) -> Request {
        let k = key(rng.gen_range(0..BIT_KEYS_COUNT));
        match rng.gen_range(0..100) {
            0..=17 => vec![
                b"SETBIT".to_vec(),
                k,
                text(offset(rng)),
                text(rng.gen_range(0..2)),
            ],
            18..=25 => vec![b"GETBIT".to_vec(), k, text(offset(rng))],
            26..=35 => bitcount(rng, k),
            36..=45 => bitpos(rng, k),
            46..=53 => bitop(rng),
            54..=66 => bitfield(rng, k, false),
            67..=71 => bitfield(rng, k, true),
            72..=75 => vec![b"GET".to_vec(), k],
            76..=78 => {
                let v: &[u8] = [&b"foobar"[..], b"", b"12", b"\xff\x00\x0f"][rng.gen_range(0..4)];
                vec![b"SET".to_vec(), k, v.to_vec()]
            }
            79..=81 => vec![b"APPEND".to_vec(), k, b"\x80a".to_vec()],
            82..=84 => vec![
                b"SETRANGE".to_vec(),
                k,
                text(rng.gen_range(0..40)),
                b"\x01\xfe".to_vec(),
            ],
            85..=87 => vec![b"STRLEN".to_vec(), k],
            88..=90 => vec![b"DEL".to_vec(), k],
            91..=93 => vec![b"PEXPIRE".to_vec(), k, text(rng.gen_range(1..20))],
            94 => vec![b"LPUSH".to_vec(), k, b"not-bits".to_vec()],
            95..=96 => malformed(rng, k),
            _ => bitcount(rng, key(BIT_KEYS_COUNT)),
        }
    }
}

impl Default for Bits {
    fn default() -> Self {
        Self::new()
    }
}

impl Workload for Bits {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Bits
    }

    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        for _ in 0..rng.gen_range(1..=BIT_BATCH_MAX) {
            let r = self.one(rng);
            batch.push(r);
        }
    }

    fn think_ns(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        rng.gen_range(0..=BIT_THINK_NS_MAX)
    }
}
