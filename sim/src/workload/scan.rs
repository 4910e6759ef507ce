//! SCAN under churn: each scan client grows its own key set to a few
//! thousand keys and shrinks it back, in MSET/DEL batches big enough to
//! force the keyspace dict through incremental rehash in both directions,
//! while running SCAN iterations (COUNT and MATCH varied) that other scan
//! clients' churn — and its own — interleave with.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use seedkv_engine::resp::Frame;

use super::{prefixed_value, request, Request, Workload, WorkloadKind};

/// Keys inserted or deleted per churn request at most.
pub const SCAN_CHURN_KEYS_MAX: u64 = 128;
/// The key set grows to a size drawn in this range, then shrinks.
pub const SCAN_KEYS_HIGH_MIN: u64 = 1_000;
pub const SCAN_KEYS_HIGH_MAX: u64 = 5_000;
/// The key set shrinks down to this size, then grows again.
pub const SCAN_KEYS_LOW: u64 = 32;
/// SCAN COUNT at most.
pub const SCAN_COUNT_MAX: u64 = 100;
/// Longest pause between batches.
pub const SCAN_THINK_NS_MAX: u64 = 500_000;

pub struct Scan {
    client: u32,
    /// Live keys are `scan:<client>:<n>` for n in low..high.
    low: u64,
    high: u64,
    high_target: u64,
    growing: bool,
    /// The cursor to continue from, if an iteration is under way and its
    /// last step was answered.
    cursor: Option<Vec<u8>>,
}

impl Scan {
    pub fn new(client: u32, rng: &mut ChaCha8Rng) -> Scan {
        Scan {
            client,
            low: 0,
            high: 0,
            high_target: rng.gen_range(SCAN_KEYS_HIGH_MIN..=SCAN_KEYS_HIGH_MAX),
            growing: true,
            cursor: None,
        }
    }

    fn key(&self, n: u64) -> Vec<u8> {
        format!("scan:{}:{}", self.client, n).into_bytes()
    }

    fn churn(&mut self, rng: &mut ChaCha8Rng) -> Request {
        let live = self.high - self.low;
        if self.growing && live >= self.high_target {
            self.growing = false;
        } else if !self.growing && live <= SCAN_KEYS_LOW {
            self.growing = true;
            self.high_target = rng.gen_range(SCAN_KEYS_HIGH_MIN..=SCAN_KEYS_HIGH_MAX);
        }
        let n = rng.gen_range(1..=SCAN_CHURN_KEYS_MAX);
        if self.growing {
            let mut r = Vec::with_capacity(1 + 2 * n as usize);
            r.push(b"MSET".to_vec());
            for _ in 0..n {
                let k = self.key(self.high);
                let v = prefixed_value(&k, "v");
                self.high += 1;
                r.push(k);
                r.push(v);
            }
            r
        } else {
            let n = n.min(live).max(1);
            let mut r = Vec::with_capacity(1 + n as usize);
            r.push(b"DEL".to_vec());
            for _ in 0..n {
                r.push(self.key(self.low));
                self.low += 1;
            }
            r
        }
    }

    fn scan_step(&mut self, rng: &mut ChaCha8Rng, cursor: &[u8]) -> Request {
        let mut r = request(&[b"SCAN", cursor]);
        if rng.gen_bool(0.7) {
            r.push(b"COUNT".to_vec());
            r.push(rng.gen_range(1..=SCAN_COUNT_MAX).to_string().into_bytes());
        }
        if rng.gen_bool(0.3) {
            r.push(b"MATCH".to_vec());
            r.push(b"scan:*".to_vec());
        }
        r
    }
}

impl Workload for Scan {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Scan
    }

    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        if rng.gen_bool(0.5) || (self.cursor.is_none() && rng.gen_bool(0.5)) {
            let r = self.churn(rng);
            batch.push(r);
        }
        let cursor = self.cursor.take();
        match cursor {
            Some(c) => {
                let r = self.scan_step(rng, &c);
                batch.push(r);
            }
            None if batch.is_empty() || rng.gen_bool(0.3) => {
                let r = self.scan_step(rng, b"0");
                batch.push(r);
            }
            None => {}
        }
    }

    fn on_reply(&mut self, request: &Request, reply: Option<&Frame>) {
        if request[0] != b"SCAN" {
            return;
        }
        self.cursor = match reply {
            Some(Frame::Array(items)) if items.len() == 2 => match &items[0] {
                Frame::Bulk(c) if c != b"0" => Some(c.clone()),
                _ => None,
            },
            _ => None,
        };
    }

    fn think_ns(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        rng.gen_range(0..=SCAN_THINK_NS_MAX)
    }
}
