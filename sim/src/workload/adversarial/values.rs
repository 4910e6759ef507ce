//! The edge values the adversarial families draw from.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// Integer texts: at and past the i64 edges, and forms Redis refuses.
pub const INT_EDGES: &[&str] = &[
    "0",
    "1",
    "-1",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775806",
    "-9223372036854775807",
    "4611686018427387904",
    "9223372036854775808",
    "-9223372036854775809",
    "99999999999999999999",
    "  12",
    "12 ",
    "+5",
    "0x10",
    "007",
    "-0",
    "",
    "1.5",
    "1e3",
    "abc",
];

/// Float texts: specials, the double's edges, and forms Redis refuses.
pub const FLOAT_EDGES: &[&str] = &[
    "0",
    "1",
    "-1",
    "1.5",
    "-2.25",
    "0.1",
    "inf",
    "-inf",
    "+inf",
    "Infinity",
    "-Infinity",
    "nan",
    "-nan",
    "-0",
    "-0.0",
    "1e308",
    "-1e308",
    "1.7976931348623157e308",
    "1e400",
    "1e-400",
    "5e-324",
    "2.2250738585072014e-308",
    "9223372036854775808",
    "1e16",
    "  12",
    "12 ",
    "+5",
    "0x10",
    "",
    "1.5.5",
    "abc",
];

/// Index and count texts: small, negative, i64 edges, past i64.
pub const INDEX_EDGES: &[&str] = &[
    "0",
    "1",
    "2",
    "-1",
    "-2",
    "5",
    "-5",
    "100",
    "-100",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775806",
    "-9223372036854775807",
    "9223372036854775808",
    "+1",
    " 1",
    "0x1",
    "",
];

/// Counts that are safe as SRANDMEMBER/SPOP counts: no huge negative
/// ones (a count of -2^63 asks Redis for 2^63 random members).
pub const COUNT_EDGES: &[&str] = &[
    "0",
    "1",
    "2",
    "-1",
    "-3",
    "-100",
    "100",
    "9223372036854775807",
    "9223372036854775808",
    "+1",
    "0x1",
    "",
];

pub fn pick<'a>(rng: &mut ChaCha8Rng, values: &[&'a str]) -> &'a str {
    values[rng.gen_range(0..values.len())]
}

/// One of `values` as bytes.
pub fn pick_bytes(rng: &mut ChaCha8Rng, values: &[&str]) -> Vec<u8> {
    pick(rng, values).as_bytes().to_vec()
}

/// A byte string of an adversarial shape: empty, NUL, CR LF, non-UTF-8,
/// around the listpack value threshold (64), or long (4 KiB).
pub fn binary_value(rng: &mut ChaCha8Rng) -> Vec<u8> {
    match rng.gen_range(0..10) {
        0 => Vec::new(),
        1 => b"\0".to_vec(),
        2 => b"a\0b\0".to_vec(),
        3 => b"\r\n".to_vec(),
        4 => b"x\r\n$3\r\nfoo\r\n".to_vec(),
        5 => vec![0xff, 0xfe, 0x80, 0xc3],
        6 => vec![b'v'; rng.gen_range(63..=65)],
        7 => vec![0x7f; 4096],
        8 => (0..=255u8).collect(),
        _ => format!("v{}", rng.gen_range(0..10)).into_bytes(),
    }
}

/// A request from text parts and byte parts.
pub fn req(parts: &[&[u8]]) -> Vec<Vec<u8>> {
    parts.iter().map(|p| p.to_vec()).collect()
}
