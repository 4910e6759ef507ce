//! Deep pipelines: batches of 1 ..= 1000 requests sent in one write, mixing
//! `PING <token>` (whose reply must be exactly the token), SET, GET and
//! INCR on the client's own keys. Depth is drawn log-uniformly so shallow
//! and very deep pipelines are both common.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{prefixed_value, request, Request, Workload, WorkloadKind, BATCH_REQUESTS_MAX};

/// Keys per pipeline client.
pub const PIPE_KEYS_COUNT: usize = 16;
/// Longest pause between pipelines.
pub const PIPE_THINK_NS_MAX: u64 = 1_000_000;

pub struct Pipeline {
    client: u32,
    token_next: u64,
    keys: Vec<Vec<u8>>,
    counter_key: Vec<u8>,
}

impl Pipeline {
    pub fn new(client: u32) -> Pipeline {
        Pipeline {
            client,
            token_next: 0,
            keys: (0..PIPE_KEYS_COUNT)
                .map(|i| format!("pipe:{client}:{i}").into_bytes())
                .collect(),
            counter_key: format!("pipe:{client}:ctr").into_bytes(),
        }
    }
}

impl Workload for Pipeline {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Pipeline
    }

    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        // Log-uniform depth in 1 ..= 1000.
        let exp = rng.gen_range(0.0..(BATCH_REQUESTS_MAX as f64).ln());
        let depth = (exp.exp() as usize).clamp(1, BATCH_REQUESTS_MAX);
        for _ in 0..depth {
            self.token_next += 1;
            let key = &self.keys[rng.gen_range(0..PIPE_KEYS_COUNT)][..];
            match rng.gen_range(0..4) {
                0 => {
                    let token = format!("p{}.{}", self.client, self.token_next);
                    batch.push(request(&[b"PING", token.as_bytes()]));
                }
                1 => {
                    let v = prefixed_value(key, &self.token_next.to_string());
                    batch.push(request(&[b"SET", key, &v]));
                }
                2 => batch.push(request(&[b"GET", key])),
                _ => batch.push(request(&[b"INCR", &self.counter_key])),
            }
        }
    }

    fn think_ns(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        rng.gen_range(0..=PIPE_THINK_NS_MAX)
    }
}
