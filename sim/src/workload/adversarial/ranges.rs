//! Huge and negative indices, counts and offsets, on small, empty and
//! absent collections and strings.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::values::{pick, pick_bytes, req, COUNT_EDGES, INDEX_EDGES};
use crate::workload::Request;

/// SETRANGE offsets: small, at the 512 MiB proto limit, negative, past it.
const OFFSET_EDGES: &[&str] = &[
    "0",
    "1",
    "3",
    "64",
    "-1",
    "536870911",
    "536870912",
    "9223372036854775807",
    "9223372036854775808",
    "+1",
];

fn index(rng: &mut ChaCha8Rng) -> Vec<u8> {
    pick_bytes(rng, INDEX_EDGES)
}

pub fn request(rng: &mut ChaCha8Rng) -> Request {
    match rng.gen_range(0..4) {
        0 => list_request(rng),
        1 => set_request(rng),
        2 => zset_request(rng),
        _ => string_request(rng),
    }
}

fn list_request(rng: &mut ChaCha8Rng) -> Request {
    let key: &[u8] = match rng.gen_bool(0.9) {
        true => b"adv:list",
        false => b"adv:absent",
    };
    let (a, b) = (index(rng), index(rng));
    let element = format!("e{}", rng.gen_range(0..3)).into_bytes();
    match rng.gen_range(0..10) {
        0 | 1 => req(&[b"RPUSH", key, &element, b"e1", b"e2"]),
        2 | 3 => req(&[b"LRANGE", key, &a, &b]),
        4 => req(&[b"LINDEX", key, &a]),
        5 => req(&[b"LPOS", key, &element, b"RANK", &a]),
        6 => req(&[b"LPOS", key, &element, b"COUNT", &a, b"MAXLEN", &b]),
        7 => match rng.gen_bool(0.2) {
            true => req(&[b"LTRIM", key, &a, &b]),
            false => req(&[b"LSET", key, &a, &element]),
        },
        8 => req(&[b"LPOP", key, pick(rng, COUNT_EDGES).as_bytes()]),
        _ => req(&[b"LLEN", key]),
    }
}

fn set_request(rng: &mut ChaCha8Rng) -> Request {
    let key: &[u8] = match rng.gen_bool(0.9) {
        true => b"adv:set",
        false => b"adv:absent",
    };
    let count = pick_bytes(rng, COUNT_EDGES);
    match rng.gen_range(0..5) {
        0 | 1 => req(&[b"SADD", key, b"1", b"2", b"a", b""]),
        2 | 3 => req(&[b"SRANDMEMBER", key, &count]),
        _ => req(&[b"SPOP", key, &count]),
    }
}

fn zset_request(rng: &mut ChaCha8Rng) -> Request {
    let key: &[u8] = match rng.gen_bool(0.9) {
        true => b"adv:zset",
        false => b"adv:absent",
    };
    let (a, b) = (index(rng), index(rng));
    let (offset, count) = (index(rng), index(rng));
    match rng.gen_range(0..7) {
        0 => req(&[
            b"ZADD", key, b"1", b"a", b"2", b"b", b"-inf", b"c", b"3", b"",
        ]),
        1 => req(&[b"ZRANGE", key, &a, &b]),
        2 => req(&[b"ZRANGE", key, &a, &b, b"REV", b"WITHSCORES"]),
        3 => req(&[
            b"ZRANGE", key, b"-inf", b"+inf", b"BYSCORE", b"LIMIT", &offset, &count,
        ]),
        4 => req(&[
            b"ZRANGE", key, b"+", b"-", b"BYLEX", b"REV", b"LIMIT", &offset, &count,
        ]),
        5 => req(&[
            b"ZRANGEBYSCORE",
            key,
            b"-inf",
            b"inf",
            b"LIMIT",
            &offset,
            &count,
        ]),
        _ => match rng.gen_bool(0.2) {
            true => req(&[b"ZREMRANGEBYRANK", key, &a, &b]),
            false => req(&[b"ZPOPMIN", key, pick(rng, COUNT_EDGES).as_bytes()]),
        },
    }
}

fn string_request(rng: &mut ChaCha8Rng) -> Request {
    let key: &[u8] = match rng.gen_range(0..10) {
        0 => b"adv:absent",
        1 => b"adv:empty",
        _ => b"adv:str",
    };
    let (a, b) = (index(rng), index(rng));
    let offset = pick_bytes(rng, OFFSET_EDGES);
    match rng.gen_range(0..8) {
        0 => req(&[b"SET", key, b"hello"]),
        1 => req(&[b"SET", b"adv:empty", b""]),
        2..=4 => req(&[b"GETRANGE", key, &a, &b]),
        5 => {
            let patch: &[u8] = match rng.gen_range(0..3) {
                0 => b"",
                // One byte at offset 2^29 - 1 would make a 512 MiB string.
                1 if offset != b"536870911" => b"x",
                _ => b"\0\r\n",
            };
            req(&[b"SETRANGE", key, &offset, patch])
        }
        6 => req(&[b"STRLEN", key]),
        _ => req(&[b"SUBSTR", key, &a, &b]),
    }
}
