//! Binary keys and values (`\0`, `\r\n`, non-UTF-8, empty, around the
//! listpack thresholds), and pathological glob patterns.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::values::{binary_value, req};
use crate::workload::Request;

/// Key suffixes after `adv:bin:`: binary, empty, long.
fn binary_key(rng: &mut ChaCha8Rng) -> Vec<u8> {
    let mut key = b"adv:bin:".to_vec();
    match rng.gen_range(0..6) {
        0 => {}
        1 => key.extend_from_slice(b"\0"),
        2 => key.extend_from_slice(b"\r\n*"),
        3 => key.extend_from_slice(&[0xff, 0xc0]),
        4 => key.extend_from_slice(&[b'k'; 200]),
        _ => key.extend_from_slice(b"plain"),
    }
    key
}

pub fn binary_request(rng: &mut ChaCha8Rng) -> Request {
    let key = binary_key(rng);
    let value = binary_value(rng);
    let other = binary_value(rng);
    match rng.gen_range(0..16) {
        0 | 1 => req(&[b"SET", &key, &value]),
        2 | 3 => req(&[b"GET", &key]),
        4 => req(&[b"APPEND", &key, &value]),
        5 => req(&[b"STRLEN", &key]),
        6 => req(&[b"HSET", b"adv:bhash", &value, &other]),
        7 => req(&[b"HGET", b"adv:bhash", &value]),
        8 => req(&[b"HGETALL", b"adv:bhash"]),
        9 => req(&[b"SADD", b"adv:bset", &value]),
        10 => req(&[b"SISMEMBER", b"adv:bset", &value]),
        11 => req(&[b"RPUSH", b"adv:blist", &value]),
        12 => req(&[b"LRANGE", b"adv:blist", b"0", b"-1"]),
        13 => req(&[b"ZADD", b"adv:bzset", b"1", &value]),
        14 => req(&[b"ZRANGE", b"adv:bzset", b"0", b"-1", b"WITHSCORES"]),
        _ => {
            // Empty collections: every one of these keys may be absent.
            match rng.gen_range(0..4) {
                0 => req(&[b"DEL", b"adv:bhash", b"adv:bset"]),
                1 => req(&[b"DEL", b"adv:blist", b"adv:bzset"]),
                2 => req(&[b"MGET", &key, b"adv:bin:", b"adv:bhash"]),
                _ => req(&[b"EXISTS", &key, b"adv:bin:\0"]),
            }
        }
    }
}

/// Patterns: many stars (bounded, so that an unbounded matcher stays
/// quick on these short keys), unterminated classes, trailing backslash,
/// reversed ranges, escapes, NUL, empty.
const GLOB_PATTERNS: &[&[u8]] = &[
    b"adv:*",
    b"adv:glob:*",
    b"adv:glob:a*a*a*a*b",
    b"*a*a*a*a*a*b",
    b"adv:glob:[",
    b"adv:glob:[a-",
    b"adv:glob:\\",
    b"adv:glob:a\\",
    b"adv:glob:[^a]*",
    b"adv:glob:[z-a]*",
    b"adv:glob:[\\]]*",
    b"adv:glob:\\*",
    b"adv:glob:?",
    b"adv:glob:??*",
    b"adv:bin:\0*",
    b"adv:bin:\r\n\\*",
    b"*\xff*",
    b"",
    b"adv:glob:[[]*",
    b"adv:glob:*[*",
];

/// Keys the glob family creates: long runs for the star patterns to chew.
const GLOB_KEYS: &[&[u8]] = &[
    b"adv:glob:aaaaaaaaaaaaaaaaaaaaaaaa",
    b"adv:glob:aaaaaaaaaaaaaaab",
    b"adv:glob:a",
    b"adv:glob:*",
    b"adv:glob:]",
    b"adv:glob:[",
    b"adv:glob:\\",
    b"adv:glob:b",
];

pub fn glob_request(rng: &mut ChaCha8Rng) -> Request {
    match rng.gen_range(0..3) {
        0 => {
            let key = GLOB_KEYS[rng.gen_range(0..GLOB_KEYS.len())];
            req(&[b"SET", key, b"g"])
        }
        _ => {
            let pattern = GLOB_PATTERNS[rng.gen_range(0..GLOB_PATTERNS.len())];
            req(&[b"KEYS", pattern])
        }
    }
}
