//! Integers at and past the i64 edges; floats with specials.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::values::{pick, pick_bytes, req, FLOAT_EDGES, INT_EDGES};
use crate::workload::Request;

/// Integer keys `adv:int:0 ..`.
const INT_KEYS_COUNT: u32 = 3;
/// Float keys `adv:flt:0 ..`.
const FLOAT_KEYS_COUNT: u32 = 3;

fn int_key(rng: &mut ChaCha8Rng) -> Vec<u8> {
    format!("adv:int:{}", rng.gen_range(0..INT_KEYS_COUNT)).into_bytes()
}

fn float_key(rng: &mut ChaCha8Rng) -> Vec<u8> {
    format!("adv:flt:{}", rng.gen_range(0..FLOAT_KEYS_COUNT)).into_bytes()
}

fn field(rng: &mut ChaCha8Rng) -> Vec<u8> {
    format!("f{}", rng.gen_range(0..3)).into_bytes()
}

pub fn int_request(rng: &mut ChaCha8Rng) -> Request {
    let key = int_key(rng);
    let edge = pick_bytes(rng, INT_EDGES);
    match rng.gen_range(0..10) {
        0 | 1 => req(&[b"SET", &key, &edge]),
        2 => req(&[b"INCR", &key]),
        3 => req(&[b"DECR", &key]),
        4 | 5 => req(&[b"INCRBY", &key, &edge]),
        6 => req(&[b"DECRBY", &key, &edge]),
        7 => req(&[b"GET", &key]),
        8 => {
            let f = field(rng);
            match rng.gen_bool(0.3) {
                true => req(&[b"HSET", b"adv:ihash", &f, &edge]),
                false => req(&[b"HINCRBY", b"adv:ihash", &f, &edge]),
            }
        }
        _ => {
            // SELECT, EXPIRE and SETEX take integers too.
            match rng.gen_range(0..3) {
                0 => req(&[b"EXPIRE", &key, &edge]),
                1 => req(&[b"PEXPIRE", &key, &edge, b"GT"]),
                _ => req(&[b"SET", &key, b"1", b"PX", &edge]),
            }
        }
    }
}

pub fn float_request(rng: &mut ChaCha8Rng) -> Request {
    let key = float_key(rng);
    let edge = pick_bytes(rng, FLOAT_EDGES);
    let member = format!("m{}", rng.gen_range(0..4)).into_bytes();
    match rng.gen_range(0..12) {
        0 => req(&[b"SET", &key, &edge]),
        1 | 2 => req(&[b"INCRBYFLOAT", &key, &edge]),
        3 => req(&[b"GET", &key]),
        4 => {
            let f = field(rng);
            req(&[b"HINCRBYFLOAT", b"adv:fhash", &f, &edge])
        }
        5 | 6 => req(&[b"ZADD", b"adv:zf", &edge, &member]),
        7 => req(&[b"ZINCRBY", b"adv:zf", &edge, &member]),
        8 => req(&[b"ZSCORE", b"adv:zf", &member]),
        9 => {
            let (low, high) = (pick(rng, SCORE_BOUNDS), pick(rng, SCORE_BOUNDS));
            req(&[b"ZCOUNT", b"adv:zf", low.as_bytes(), high.as_bytes()])
        }
        10 => {
            let (low, high) = (pick(rng, SCORE_BOUNDS), pick(rng, SCORE_BOUNDS));
            req(&[
                b"ZRANGEBYSCORE",
                b"adv:zf",
                low.as_bytes(),
                high.as_bytes(),
                b"WITHSCORES",
            ])
        }
        _ => req(&[b"ZRANGE", b"adv:zf", b"0", b"-1", b"WITHSCORES"]),
    }
}

/// Score range bounds: specials, exclusive forms, refused texts.
const SCORE_BOUNDS: &[&str] = &[
    "-inf", "+inf", "inf", "(inf", "(-inf", "0", "(0", "-0", "1e308", "(1e308", "-1e308", "1.5",
    "(1.5", "nan", "(nan", "", "(", " 1", "abc", "1e400",
];
