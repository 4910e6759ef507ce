//! Blocking pops on shared keys: consumers send BLPOP, BRPOP, BLMPOP,
//! BZPOPMIN, BZPOPMAX or BZMPOP (alone in their batch, with timeouts of a
//! few virtual milliseconds) over one or two of the `blk:` lists or `bzs:`
//! sorted sets; producers push uniquely tagged elements (`b|<client>|<n>`)
//! into them at random intervals. Every client plays both roles, mostly
//! consumer, so clients block, get woken in FIFO order, time out, and —
//! with resets drawn while they wait — disconnect while blocked.
//! `check::blocking` judges the wake-ups, the order, the timeouts and that
//! no element is popped twice.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{Request, Workload, WorkloadKind};

/// Lists `blk:0 ..` and sorted sets `bzs:0 ..`.
pub const BLOCKING_LISTS_COUNT: u32 = 3;
pub const BLOCKING_ZSETS_COUNT: u32 = 2;
/// Timeouts are drawn in 1 ..= this many milliseconds.
pub const BLOCKING_TIMEOUT_MS_MAX: u64 = 40;
/// Elements per push at most.
pub const BLOCKING_PUSH_MAX: u32 = 3;
/// Longest pause between batches.
pub const BLOCKING_THINK_NS_MAX: u64 = 4_000_000;

pub struct Blocking {
    client: u32,
    /// Elements pushed so far (the tag's counter).
    pushed_count: u64,
}

fn timeout(rng: &mut ChaCha8Rng) -> Vec<u8> {
    let ms = rng.gen_range(1..=BLOCKING_TIMEOUT_MS_MAX);
    format!("0.{ms:03}").into_bytes()
}

/// One or two distinct keys named `<prefix><n>`, n below `count`.
fn keys(rng: &mut ChaCha8Rng, prefix: &str, count: u32) -> Vec<Vec<u8>> {
    let first = rng.gen_range(0..count);
    let mut out = vec![format!("{prefix}{first}").into_bytes()];
    if rng.gen_bool(0.4) {
        let second = (first + rng.gen_range(1..count)) % count;
        out.push(format!("{prefix}{second}").into_bytes());
    }
    out
}

impl Blocking {
    pub fn new(client: u32) -> Blocking {
        Blocking {
            client,
            pushed_count: 0,
        }
    }

    fn tag(&mut self) -> Vec<u8> {
        self.pushed_count += 1;
        format!("b|{}|{}", self.client, self.pushed_count).into_bytes()
    }

    fn consume(rng: &mut ChaCha8Rng) -> Request {
        let lists = keys(rng, "blk:", BLOCKING_LISTS_COUNT);
        let zsets = keys(rng, "bzs:", BLOCKING_ZSETS_COUNT);
        let simple = |name: &[u8], keys: Vec<Vec<u8>>, rng: &mut ChaCha8Rng| {
            let mut r = vec![name.to_vec()];
            r.extend(keys);
            r.push(timeout(rng));
            r
        };
        let mpop = |name: &[u8], keys: Vec<Vec<u8>>, ends: [&[u8]; 2], rng: &mut ChaCha8Rng| {
            let mut r = vec![
                name.to_vec(),
                timeout(rng),
                keys.len().to_string().into_bytes(),
            ];
            r.extend(keys);
            r.push(ends[rng.gen_range(0..2)].to_vec());
            if rng.gen_bool(0.5) {
                r.push(b"COUNT".to_vec());
                r.push(rng.gen_range(1..=3u32).to_string().into_bytes());
            }
            r
        };
        match rng.gen_range(0..100) {
            0..=29 => simple(b"BLPOP", lists, rng),
            30..=44 => simple(b"BRPOP", lists, rng),
            45..=59 => mpop(b"BLMPOP", lists, [b"LEFT", b"RIGHT"], rng),
            60..=74 => simple(b"BZPOPMIN", zsets, rng),
            75..=84 => simple(b"BZPOPMAX", zsets, rng),
            _ => mpop(b"BZMPOP", zsets, [b"MIN", b"MAX"], rng),
        }
    }

    fn produce(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        for _ in 0..rng.gen_range(1..=2) {
            let n = rng.gen_range(1..=BLOCKING_PUSH_MAX);
            if rng.gen_bool(0.65) {
                let name: &[u8] = if rng.gen_bool(0.6) {
                    b"RPUSH"
                } else {
                    b"LPUSH"
                };
                let k = format!("blk:{}", rng.gen_range(0..BLOCKING_LISTS_COUNT));
                let mut r = vec![name.to_vec(), k.into_bytes()];
                for _ in 0..n {
                    r.push(self.tag());
                }
                batch.push(r);
            } else {
                let k = format!("bzs:{}", rng.gen_range(0..BLOCKING_ZSETS_COUNT));
                let mut r = vec![b"ZADD".to_vec(), k.into_bytes()];
                for _ in 0..n {
                    r.push(rng.gen_range(-1000..=1000i32).to_string().into_bytes());
                    r.push(self.tag());
                }
                batch.push(r);
            }
        }
    }
}

impl Workload for Blocking {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Blocking
    }

    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        if rng.gen_bool(0.6) {
            // Alone in its batch: it parks with nothing of its own ahead.
            batch.push(Self::consume(rng));
        } else {
            self.produce(rng, batch);
        }
    }

    fn think_ns(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        rng.gen_range(0..=BLOCKING_THINK_NS_MAX)
    }
}
