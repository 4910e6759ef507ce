//! Sorted sets: ZADD (plain, NX, XX, GT, LT, CH, INCR), ZINCRBY, ZREM,
//! ZRANGE (by rank, BYSCORE, REV, LIMIT, WITHSCORES), ZRANGEBYSCORE, ZRANK,
//! ZSCORE, ZCARD, ZPOPMIN, ZUNIONSTORE on shared `zset:` keys, growing past
//! `zset-max-listpack-entries` (128) and shrinking in phases, with the odd
//! member longer than `zset-max-listpack-value` (64). `zset:4` is the
//! ZUNIONSTORE destination. ZSCAN iterations run all along.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use seedkv_engine::resp::Frame;

use super::cscan::CollectionScan;
use super::{Request, Workload, WorkloadKind};

/// Source keys `zset:0 ..`; `zset:<this>` is the store destination.
pub const ZSET_KEYS_COUNT: u32 = 4;
/// Members are `m0 .. m<this>` (plus rare long ones).
pub const ZSET_MEMBERS_MAX: u32 = 300;
/// Requests per batch at most.
pub const ZSET_BATCH_MAX: u32 = 4;
/// Longest pause between batches.
pub const ZSET_THINK_NS_MAX: u64 = 400_000;

pub struct ZSets {
    growing: bool,
    scan: CollectionScan,
}

fn key(n: u32) -> Vec<u8> {
    format!("zset:{n}").into_bytes()
}

fn member(rng: &mut ChaCha8Rng) -> Vec<u8> {
    let i = rng.gen_range(0..ZSET_MEMBERS_MAX);
    if rng.gen_bool(0.01) {
        format!("m{i}-{}", "x".repeat(70)).into_bytes()
    } else {
        format!("m{i}").into_bytes()
    }
}

fn score(rng: &mut ChaCha8Rng) -> Vec<u8> {
    match rng.gen_range(0..10) {
        0 => format!("{}.5", rng.gen_range(-20..20)).into_bytes(),
        _ => rng.gen_range(-100..=100).to_string().into_bytes(),
    }
}

fn bound(rng: &mut ChaCha8Rng) -> Vec<u8> {
    match rng.gen_range(0..6) {
        0 => b"-inf".to_vec(),
        1 => b"+inf".to_vec(),
        2 => format!("({}", rng.gen_range(-100..=100)).into_bytes(),
        _ => rng.gen_range(-100..=100).to_string().into_bytes(),
    }
}

impl ZSets {
    pub fn new(rng: &mut ChaCha8Rng) -> ZSets {
        ZSets {
            growing: rng.gen_bool(0.7),
            scan: CollectionScan::new(b"ZSCAN"),
        }
    }

    fn zadd(&mut self, rng: &mut ChaCha8Rng, k: Vec<u8>) -> Request {
        let mut r = vec![b"ZADD".to_vec(), k];
        // One of Redis's valid option combinations.
        let options: &[&[u8]] = match rng.gen_range(0..10) {
            0 => &[b"NX"],
            1 => &[b"XX"],
            2 => &[b"GT", b"CH"],
            3 => &[b"LT"],
            4 => &[b"XX", b"GT"],
            5 => &[b"CH"],
            _ => &[],
        };
        r.extend(options.iter().map(|o| o.to_vec()));
        if rng.gen_bool(0.1) {
            r.push(b"INCR".to_vec());
            r.push(score(rng));
            r.push(member(rng));
            return r;
        }
        let pairs = if self.growing {
            rng.gen_range(1..=10)
        } else {
            1
        };
        for _ in 0..pairs {
            r.push(score(rng));
            r.push(member(rng));
        }
        r
    }

    fn one(&mut self, rng: &mut ChaCha8Rng) -> Request {
        let k = key(rng.gen_range(0..ZSET_KEYS_COUNT));
        match rng.gen_range(0..100) {
            0..=29 => self.zadd(rng, k),
            30..=36 => vec![b"ZINCRBY".to_vec(), k, score(rng), member(rng)],
            37..=49 => {
                let mut r = vec![b"ZREM".to_vec(), k];
                for _ in 0..rng.gen_range(1..=if self.growing { 2 } else { 12 }) {
                    r.push(member(rng));
                }
                r
            }
            50..=55 => {
                let mut r = vec![b"ZRANGE".to_vec(), k, b"0".to_vec(), b"-1".to_vec()];
                if rng.gen_bool(0.5) {
                    r.push(b"WITHSCORES".to_vec());
                }
                r
            }
            56..=61 => {
                let (lo, hi) = (bound(rng), bound(rng));
                let mut r = vec![b"ZRANGE".to_vec(), k];
                if rng.gen_bool(0.5) {
                    r.extend([hi, lo, b"BYSCORE".to_vec(), b"REV".to_vec()]);
                } else {
                    r.extend([lo, hi, b"BYSCORE".to_vec()]);
                }
                if rng.gen_bool(0.5) {
                    r.extend([b"LIMIT".to_vec(), b"1".to_vec(), b"5".to_vec()]);
                }
                r
            }
            62..=66 => vec![b"ZRANGEBYSCORE".to_vec(), k, bound(rng), bound(rng)],
            67..=72 => vec![b"ZRANK".to_vec(), k, member(rng)],
            73..=77 => vec![b"ZSCORE".to_vec(), k, member(rng)],
            78..=81 => vec![b"ZCARD".to_vec(), k],
            82..=86 => vec![
                b"ZPOPMIN".to_vec(),
                k,
                rng.gen_range(1..=3u32).to_string().into_bytes(),
            ],
            87..=91 => {
                let other = key(rng.gen_range(0..ZSET_KEYS_COUNT));
                let mut r = vec![
                    b"ZUNIONSTORE".to_vec(),
                    key(ZSET_KEYS_COUNT),
                    b"2".to_vec(),
                    k,
                    other,
                ];
                if rng.gen_bool(0.3) {
                    r.extend([b"WEIGHTS".to_vec(), b"1".to_vec(), b"2".to_vec()]);
                }
                if rng.gen_bool(0.3) {
                    r.extend([b"AGGREGATE".to_vec(), b"MAX".to_vec()]);
                }
                r
            }
            92 => vec![b"DEL".to_vec(), k],
            _ => vec![
                b"ZRANGE".to_vec(),
                k,
                b"-3".to_vec(),
                b"-1".to_vec(),
                b"REV".to_vec(),
            ],
        }
    }
}

impl Workload for ZSets {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::ZSets
    }

    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        if rng.gen_bool(0.02) {
            self.growing = !self.growing;
        }
        for _ in 0..rng.gen_range(1..=ZSET_BATCH_MAX) {
            let r = self.one(rng);
            batch.push(r);
        }
        if rng.gen_bool(0.4) {
            let fresh = key(rng.gen_range(0..=ZSET_KEYS_COUNT));
            if let Some(step) = self.scan.step(rng, &fresh, &[b"m1*", b"*0"]) {
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
        rng.gen_range(0..=ZSET_THINK_NS_MAX)
    }
}
