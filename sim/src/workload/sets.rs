//! Sets: SADD/SREM/SMEMBERS/SISMEMBER/SMISMEMBER/SCARD/SPOP/SINTER/
//! SUNIONSTORE on shared `set:` keys. `set:0` and `set:1` hold integers, so
//! they start as intsets and convert to hashtables past
//! `set-max-intset-entries` (512) or when the odd string member lands in
//! them; `set:2` and `set:3` hold strings; `set:4` is the SUNIONSTORE
//! destination. SSCAN iterations run all along.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use seedkv_engine::resp::Frame;

use super::cscan::CollectionScan;
use super::{Request, Workload, WorkloadKind};

/// Source keys `set:0 ..`; `set:<this>` is the store destination.
pub const SET_KEYS_COUNT: u32 = 4;
/// Members are drawn below this.
pub const SET_MEMBERS_MAX: u32 = 1_000;
/// Requests per batch at most.
pub const SET_BATCH_MAX: u32 = 4;
/// Longest pause between batches.
pub const SET_THINK_NS_MAX: u64 = 400_000;

pub struct Sets {
    growing: bool,
    scan: CollectionScan,
}

fn key(n: u32) -> Vec<u8> {
    format!("set:{n}").into_bytes()
}

/// A member for key `n`: integers for the intset keys, mostly.
fn member(rng: &mut ChaCha8Rng, n: u32) -> Vec<u8> {
    let i = rng.gen_range(0..SET_MEMBERS_MAX);
    if n < 2 && !rng.gen_bool(0.003) {
        i.to_string().into_bytes()
    } else {
        format!("m{i}").into_bytes()
    }
}

impl Sets {
    pub fn new(rng: &mut ChaCha8Rng) -> Sets {
        Sets {
            growing: rng.gen_bool(0.7),
            scan: CollectionScan::new(b"SSCAN"),
        }
    }

    fn one(&mut self, rng: &mut ChaCha8Rng) -> Request {
        let n = rng.gen_range(0..SET_KEYS_COUNT);
        let k = key(n);
        let other = key(rng.gen_range(0..SET_KEYS_COUNT));
        let members = |r: &mut Request, max: u32, rng: &mut ChaCha8Rng| {
            for _ in 0..rng.gen_range(1..=max) {
                r.push(member(rng, n));
            }
        };
        let add_max = if self.growing { 24 } else { 4 };
        let rem_max = if self.growing { 4 } else { 24 };
        match rng.gen_range(0..100) {
            0..=34 => {
                let mut r = vec![b"SADD".to_vec(), k];
                members(&mut r, add_max, rng);
                r
            }
            35..=49 => {
                let mut r = vec![b"SREM".to_vec(), k];
                members(&mut r, rem_max, rng);
                r
            }
            50..=53 => vec![b"SMEMBERS".to_vec(), k],
            54..=63 => vec![b"SISMEMBER".to_vec(), k, member(rng, n)],
            64..=67 => {
                let mut r = vec![b"SMISMEMBER".to_vec(), k];
                members(&mut r, 5, rng);
                r
            }
            68..=73 => vec![b"SCARD".to_vec(), k],
            74..=79 if rng.gen_bool(0.5) => vec![b"SPOP".to_vec(), k],
            74..=79 => vec![
                b"SPOP".to_vec(),
                k,
                rng.gen_range(0..=4u32).to_string().into_bytes(),
            ],
            80..=86 => vec![b"SINTER".to_vec(), k, other],
            87..=91 => vec![b"SUNIONSTORE".to_vec(), key(SET_KEYS_COUNT), k, other],
            92 => vec![b"DEL".to_vec(), k],
            _ => vec![b"SCARD".to_vec(), key(SET_KEYS_COUNT)],
        }
    }
}

impl Workload for Sets {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Sets
    }

    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        if rng.gen_bool(0.02) {
            self.growing = !self.growing;
        }
        for _ in 0..rng.gen_range(1..=SET_BATCH_MAX) {
            let r = self.one(rng);
            batch.push(r);
        }
        if rng.gen_bool(0.4) {
            let fresh = key(rng.gen_range(0..=SET_KEYS_COUNT));
            if let Some(step) = self.scan.step(rng, &fresh, &[b"1*", b"m2*", b"*5"]) {
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
        rng.gen_range(0..=SET_THINK_NS_MAX)
    }
}
