//! Shared counters: many clients INCR the same few keys, and now and then
//! read them. The atomicity checker counts increments against the values
//! read. Nothing else ever writes a `ctr:` key.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{request, Request, Workload, WorkloadKind};

/// Counters shared by every counter client.
pub const COUNTER_KEYS_COUNT: usize = 3;
/// Requests per counter batch at most.
pub const COUNTER_BATCH_MAX: usize = 4;
/// Longest pause between batches.
pub const COUNTER_THINK_NS_MAX: u64 = 100_000;

pub struct Counter {
    keys: Vec<Vec<u8>>,
}

impl Counter {
    pub fn new() -> Counter {
        Counter {
            keys: (0..COUNTER_KEYS_COUNT)
                .map(|i| format!("ctr:{i}").into_bytes())
                .collect(),
        }
    }
}

impl Default for Counter {
    fn default() -> Self {
        Counter::new()
    }
}

/// Whether `key` is one of the counters.
pub fn is_counter_key(key: &[u8]) -> bool {
    key.starts_with(b"ctr:")
}

impl Workload for Counter {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Counter
    }

    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        for _ in 0..rng.gen_range(1..=COUNTER_BATCH_MAX) {
            let key = &self.keys[rng.gen_range(0..COUNTER_KEYS_COUNT)];
            if rng.gen_range(0..10) == 0 {
                batch.push(request(&[b"GET", key]));
            } else {
                batch.push(request(&[b"INCR", key]));
            }
        }
    }

    fn think_ns(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        rng.gen_range(0..=COUNTER_THINK_NS_MAX)
    }
}
