//! A latency probe: one PING every 1–2 ms, like `redis-cli --latency`. Its
//! latencies next to O(N) commands are what the tail-latency checker and
//! the seed 002 report read.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{request, Request, Workload, WorkloadKind};

/// Pause between PINGs: this range.
pub const PING_THINK_NS_MIN: u64 = 1_000_000;
pub const PING_THINK_NS_MAX: u64 = 2_000_000;

pub struct Ping;

impl Ping {
    pub fn new() -> Ping {
        Ping
    }
}

impl Default for Ping {
    fn default() -> Self {
        Ping::new()
    }
}

impl Workload for Ping {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Ping
    }

    fn next_batch(&mut self, _rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        batch.push(request(&[b"PING"]));
    }

    fn think_ns(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        rng.gen_range(PING_THINK_NS_MIN..=PING_THINK_NS_MAX)
    }
}
