//! Hashes: HSET/HDEL/HGET/HMGET/HGETALL/HINCRBY/HLEN/HEXISTS on a few
//! shared `hash:` keys, growing past `hash-max-listpack-entries` (128) and
//! shrinking back in phases so that the hashtable encoding rehashes both
//! ways, with the odd value longer than `hash-max-listpack-value` (64) and
//! the odd DEL that starts a key over as a listpack; HSCAN iterations run
//! all along (checked by `check::collection_scan`).

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use seedkv_engine::resp::Frame;

use super::cscan::CollectionScan;
use super::{Request, Workload, WorkloadKind};

/// Shared keys `hash:0 ..`.
pub const HASH_KEYS_COUNT: u32 = 4;
/// String fields are `f0 .. f<this>`.
pub const HASH_FIELDS_MAX: u32 = 400;
/// Integer fields (the only ones HINCRBY touches) are `n0 .. n<this>`.
pub const HASH_COUNTERS_MAX: u32 = 8;
/// Requests per batch at most.
pub const HASH_BATCH_MAX: u32 = 4;
/// Longest pause between batches.
pub const HASH_THINK_NS_MAX: u64 = 400_000;

pub struct Hashes {
    growing: bool,
    scan: CollectionScan,
}

fn key(n: u32) -> Vec<u8> {
    format!("hash:{n}").into_bytes()
}

fn field(rng: &mut ChaCha8Rng) -> Vec<u8> {
    format!("f{}", rng.gen_range(0..HASH_FIELDS_MAX)).into_bytes()
}

fn value(rng: &mut ChaCha8Rng) -> Vec<u8> {
    if rng.gen_bool(0.03) {
        // Longer than hash-max-listpack-value: converts the encoding.
        let mut v = vec![b'L'; rng.gen_range(65..=120)];
        v.extend_from_slice(rng.gen::<u32>().to_string().as_bytes());
        v
    } else {
        format!("v{}", rng.gen_range(0..1000)).into_bytes()
    }
}

impl Hashes {
    pub fn new(rng: &mut ChaCha8Rng) -> Hashes {
        Hashes {
            growing: rng.gen_bool(0.7),
            scan: CollectionScan::new(b"HSCAN"),
        }
    }

    fn one(&mut self, rng: &mut ChaCha8Rng) -> Request {
        let k = key(rng.gen_range(0..HASH_KEYS_COUNT));
        let roll = rng.gen_range(0..100);
        let mut r = match roll {
            0..=29 if self.growing => vec![b"HSET".to_vec(), k],
            0..=29 => vec![b"HDEL".to_vec(), k],
            30..=39 if self.growing => vec![b"HDEL".to_vec(), k],
            30..=39 => vec![b"HSET".to_vec(), k],
            40..=51 => vec![b"HGET".to_vec(), k, field(rng)],
            52..=59 => vec![b"HMGET".to_vec(), k],
            60..=63 => vec![b"HGETALL".to_vec(), k],
            64..=75 => {
                let f = format!("n{}", rng.gen_range(0..HASH_COUNTERS_MAX));
                let by = rng.gen_range(-50i64..=50).to_string();
                vec![b"HINCRBY".to_vec(), k, f.into_bytes(), by.into_bytes()]
            }
            76..=83 => vec![b"HLEN".to_vec(), k],
            84..=90 => vec![b"HEXISTS".to_vec(), k, field(rng)],
            91..=92 => vec![b"HSETNX".to_vec(), k, field(rng), value(rng)],
            93 => vec![b"DEL".to_vec(), k],
            _ => vec![b"HSTRLEN".to_vec(), k, field(rng)],
        };
        match r[0].as_slice() {
            b"HSET" => {
                for _ in 0..rng.gen_range(1..=8) {
                    r.push(field(rng));
                    r.push(value(rng));
                }
            }
            b"HDEL" => {
                for _ in 0..rng.gen_range(1..=if self.growing { 3 } else { 16 }) {
                    r.push(field(rng));
                }
            }
            b"HMGET" => {
                for _ in 0..rng.gen_range(1..=6) {
                    r.push(field(rng));
                }
            }
            _ => {}
        }
        r
    }
}

impl Workload for Hashes {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Hashes
    }

    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        if rng.gen_bool(0.02) {
            self.growing = !self.growing;
        }
        for _ in 0..rng.gen_range(1..=HASH_BATCH_MAX) {
            let r = self.one(rng);
            batch.push(r);
        }
        if rng.gen_bool(0.4) {
            let fresh = key(rng.gen_range(0..HASH_KEYS_COUNT));
            if let Some(step) = self.scan.step(rng, &fresh, &[b"f1*", b"n*", b"*7"]) {
                batch.push(step);
            }
        }
    }

    fn on_reply(&mut self, request: &Request, reply: Option<&Frame>) {
        if self.scan.is_step(request) {
            self.scan.on_reply(reply);
        }
    }

    fn think_ns(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        rng.gen_range(0..=HASH_THINK_NS_MAX)
    }
}
