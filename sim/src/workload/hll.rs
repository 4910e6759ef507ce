//! HyperLogLogs: PFADD/PFCOUNT/PFMERGE/PFDEBUG on a few shared `hll:` keys,
//! read and written as the strings they are. Small keys `hll:0 ..` take
//! elements from a small pool (so PFADD often replies 0); `hll:big` takes
//! batches of fresh elements from every client and, over a run, grows past
//! `hll-sparse-max-bytes` (3000), so its sparse value is promoted to dense.
//! `hll:dst` is PFMERGE's shared destination. GET of an HLL, SET of a
//! copied HLL value (`hll:copy`, from an earlier GET) and of strings that
//! are no HLL or a corrupt one (`hll:bad`), APPEND and SETRANGE onto an HLL
//! (its runs or its cached estimate), DEL and PEXPIRE make keys come and
//! go; `hll:list` is a list for WRONGTYPE.

use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use seedkv_engine::resp::Frame;

use super::{Request, Workload, WorkloadKind};

/// Small shared keys `hll:0 ..`.
pub const HLL_KEYS_COUNT: u32 = 4;
/// The small keys' elements are `m0 .. m<this>`.
pub const HLL_POOL_MAX: u32 = 300;
/// Elements per PFADD on a small key at most.
pub const HLL_SMALL_ADD_MAX: u32 = 6;
/// Fresh elements per PFADD on `hll:big` at most.
pub const HLL_BIG_ADD_MAX: u32 = 50;
/// Requests per batch at most.
pub const HLL_BATCH_MAX: u32 = 4;
/// Longest pause between batches.
pub const HLL_THINK_NS_MAX: u64 = 400_000;
/// Longest PEXPIRE (ms).
pub const HLL_EXPIRE_MS_MAX: u64 = 400;

const BIG: &[u8] = b"hll:big";
const DST: &[u8] = b"hll:dst";
const COPY: &[u8] = b"hll:copy";
const BAD: &[u8] = b"hll:bad";
const LIST: &[u8] = b"hll:list";

/// Bytes appended onto an HLL: a VAL opcode, or two bytes of runs (an
/// even length, so no XZERO is cut short), or the dense case's any byte.
const APPENDS: &[&[u8]] = &[b"\x80", b"ab", b"\x00\x01", b"\xc3\xbf"];

pub struct Hll {
    client: u32,
    /// Fresh elements sent to `hll:big` so far.
    fresh_count: u64,
    /// The last HLL value a GET returned, for SET elsewhere.
    copied: Option<Vec<u8>>,
}

fn small_key(n: u32) -> Vec<u8> {
    format!("hll:{n}").into_bytes()
}

/// Any key of the namespace that may hold an HLL (or a corrupt one).
fn any_key(rng: &mut ChaCha8Rng) -> Vec<u8> {
    match rng.gen_range(0..10) {
        0 => BIG.to_vec(),
        1 => DST.to_vec(),
        2 => COPY.to_vec(),
        3 => BAD.to_vec(),
        _ => small_key(rng.gen_range(0..HLL_KEYS_COUNT)),
    }
}

/// A string that is no valid HLL, or a corrupt one.
fn bad_value(rng: &mut ChaCha8Rng) -> Vec<u8> {
    let mut header = b"HYLL".to_vec();
    match rng.gen_range(0..5) {
        0 => b"not an hll".to_vec(),
        // Sparse with no runs: its cache (0, valid) answers PFCOUNT, but
        // every other use finds it corrupt.
        1 => {
            header.push(1);
            header.resize(16, 0);
            header
        }
        // Sparse whose runs stop short.
        2 => {
            header.push(1);
            header.resize(15, 0);
            header.extend_from_slice(&[0x80, 0x7f, 0x00]);
            header
        }
        // Dense of the wrong length, and an unknown encoding.
        3 => {
            header.push(0);
            header.resize(40, 0);
            header
        }
        _ => {
            header.push(2);
            header.resize(18, 0);
            header
        }
    }
}

impl Hll {
    pub fn new(client: u32) -> Hll {
        Hll {
            client,
            fresh_count: 0,
            copied: None,
        }
    }

    fn pfadd_small(rng: &mut ChaCha8Rng, key: Vec<u8>) -> Request {
        let mut r = vec![b"PFADD".to_vec(), key];
        for _ in 0..rng.gen_range(0..=HLL_SMALL_ADD_MAX) {
            r.push(format!("m{}", rng.gen_range(0..HLL_POOL_MAX)).into_bytes());
        }
        r
    }

    fn pfadd_big(&mut self, rng: &mut ChaCha8Rng) -> Request {
        let mut r = vec![b"PFADD".to_vec(), BIG.to_vec()];
        for _ in 0..rng.gen_range(1..=HLL_BIG_ADD_MAX) {
            self.fresh_count += 1;
            r.push(format!("c{}e{}", self.client, self.fresh_count).into_bytes());
        }
        if rng.gen_bool(0.2) {
            r.push(format!("m{}", rng.gen_range(0..HLL_POOL_MAX)).into_bytes());
        }
        r
    }

    fn one(&mut self, rng: &mut ChaCha8Rng) -> Request {
        let small = small_key(rng.gen_range(0..HLL_KEYS_COUNT));
        match rng.gen_range(0..100) {
            0..=27 => Self::pfadd_small(rng, small),
            28..=39 => self.pfadd_big(rng),
            40..=52 => vec![b"PFCOUNT".to_vec(), any_key(rng)],
            53..=60 => {
                let mut r = vec![b"PFCOUNT".to_vec(), small, any_key(rng)];
                if rng.gen_bool(0.3) {
                    r.push(any_key(rng));
                }
                r
            }
            61..=67 => {
                let dest = if rng.gen_bool(0.8) {
                    DST.to_vec()
                } else {
                    small
                };
                let mut r = vec![b"PFMERGE".to_vec(), dest];
                for _ in 0..rng.gen_range(0..=2) {
                    r.push(any_key(rng));
                }
                r
            }
            68..=72 => vec![b"GET".to_vec(), any_key(rng)],
            73..=75 => match &self.copied {
                Some(value) => vec![b"SET".to_vec(), COPY.to_vec(), value.clone()],
                None => vec![b"GET".to_vec(), small],
            },
            76..=77 => vec![b"SET".to_vec(), BAD.to_vec(), bad_value(rng)],
            78..=79 => {
                let key = if rng.gen_bool(0.8) {
                    small
                } else {
                    any_key(rng)
                };
                let payload = APPENDS.choose(rng).expect("not empty");
                vec![b"APPEND".to_vec(), key, payload.to_vec()]
            }
            80..=81 => {
                // The cached estimate's bytes (8 ..= 15).
                let at = rng.gen_range(8..=15u32).to_string().into_bytes();
                let byte = vec![rng.gen_range(0..=0xffu8)];
                vec![b"SETRANGE".to_vec(), any_key(rng), at, byte]
            }
            82..=84 => {
                // `hll:big` rarely: it is meant to grow.
                let key = match rng.gen_range(0..50) {
                    0 => BIG.to_vec(),
                    1..=25 => small,
                    _ => match any_key(rng) {
                        k if k == BIG => small,
                        k => k,
                    },
                };
                vec![b"DEL".to_vec(), key]
            }
            85..=86 => {
                let ms = rng
                    .gen_range(1..=HLL_EXPIRE_MS_MAX)
                    .to_string()
                    .into_bytes();
                vec![b"PEXPIRE".to_vec(), small, ms]
            }
            87..=89 => {
                let sub: &[u8] = match rng.gen_range(0..20) {
                    0 => b"GETREG",
                    1..=6 => b"ENCODING",
                    7..=12 => b"DECODE",
                    13..=16 => b"TODENSE",
                    _ => b"nosuch",
                };
                vec![b"PFDEBUG".to_vec(), sub.to_vec(), any_key(rng)]
            }
            90..=91 => match rng.gen_range(0..4) {
                0 => vec![b"RPUSH".to_vec(), LIST.to_vec(), b"x".to_vec()],
                1 => vec![b"PFADD".to_vec(), LIST.to_vec(), b"x".to_vec()],
                2 => vec![b"PFCOUNT".to_vec(), small, LIST.to_vec()],
                _ => vec![b"PFMERGE".to_vec(), DST.to_vec(), LIST.to_vec()],
            },
            92..=95 => vec![b"STRLEN".to_vec(), any_key(rng)],
            _ => vec![b"PFCOUNT".to_vec(), b"hll:none".to_vec()],
        }
    }
}

impl Workload for Hll {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Hll
    }

    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        for _ in 0..rng.gen_range(1..=HLL_BATCH_MAX) {
            let r = self.one(rng);
            batch.push(r);
        }
    }

    fn on_reply(&mut self, request: &Request, reply: Option<&Frame>) {
        let is_get = request.first().is_some_and(|c| c == b"GET");
        if let (true, Some(Frame::Bulk(value))) = (is_get, reply) {
            if value.starts_with(b"HYLL") {
                self.copied = Some(value.clone());
            }
        }
    }

    fn think_ns(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        rng.gen_range(0..=HLL_THINK_NS_MAX)
    }
}
