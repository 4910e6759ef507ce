//! `contention`: several clients on one key at once, the shapes the other
//! workloads reach seldom or never (`coverage::shapes`). Drawn as three
//! clients; client `i % 3 == 0` is the producer, the others consumers.
//!
//! - Consumers send `BLPOP cont:q` alone in a batch with a 30-60 ms
//!   timeout on a list that is nearly always empty, so they park together;
//!   the producer pushes **one** element at a time every 5-15 ms: one of
//!   the parked clients is served (FIFO), the others keep waiting.
//! - Every client sometimes runs a WATCH round on `cont:w` split over two
//!   batches (WATCH and GET, then after its think time MULTI, SET, EXEC),
//!   so several clients watch the key at once and one write invalidates
//!   the others' transactions.
//!
//! Values are `cont|<client>|<n>`, unique in the run. The reference model
//! predicts every reply (it models these commands).

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{Request, Workload, WorkloadKind};

/// The list consumers wait on and the key they watch.
pub const CONTENTION_LIST: &str = "cont:q";
pub const CONTENTION_WATCHED: &str = "cont:w";
/// Consumers' BLPOP timeout range, in milliseconds.
pub const CONTENTION_TIMEOUT_MS: (u64, u64) = (30, 60);
/// The producer's pause between single-element pushes.
pub const CONTENTION_PUSH_NS: (u64, u64) = (5_000_000, 15_000_000);

pub struct Contention {
    client: u32,
    producer: bool,
    written_count: u64,
    /// A WATCH round waits for its second half.
    watching: bool,
}

impl Contention {
    pub fn new(client: u32) -> Contention {
        Contention {
            client,
            producer: client.is_multiple_of(3),
            written_count: 0,
            watching: false,
        }
    }

    fn value(&mut self) -> Vec<u8> {
        self.written_count += 1;
        format!("cont|{}|{}", self.client, self.written_count).into_bytes()
    }
}

fn req(parts: &[&[u8]]) -> Request {
    parts.iter().map(|p| p.to_vec()).collect()
}

impl Workload for Contention {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Contention
    }

    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        let watched = CONTENTION_WATCHED.as_bytes();
        if self.watching {
            self.watching = false;
            let v = self.value();
            batch.push(req(&[b"MULTI"]));
            batch.push(req(&[b"SET", watched, &v]));
            batch.push(req(&[b"EXEC"]));
            return;
        }
        if rng.gen_bool(0.25) {
            self.watching = true;
            batch.push(req(&[b"WATCH", watched]));
            batch.push(req(&[b"GET", watched]));
            return;
        }
        let list = CONTENTION_LIST.as_bytes();
        if self.producer {
            let v = self.value();
            batch.push(req(&[b"RPUSH", list, &v]));
        } else {
            let ms = rng.gen_range(CONTENTION_TIMEOUT_MS.0..=CONTENTION_TIMEOUT_MS.1);
            let timeout = format!("0.{ms:03}").into_bytes();
            batch.push(req(&[b"BLPOP", list, &timeout]));
        }
    }

    fn on_connect(&mut self) {
        // The new connection watches nothing: start the round over.
        self.watching = false;
    }

    fn think_ns(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        if self.producer {
            rng.gen_range(CONTENTION_PUSH_NS.0..=CONTENTION_PUSH_NS.1)
        } else {
            rng.gen_range(0..=1_000_000)
        }
    }
}
