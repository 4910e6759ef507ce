//! Plain key/value operations over a handful of keys, so that clients
//! conflict constantly: GET, SET (plain and NX), DEL, EXISTS, APPEND, MSET,
//! MGET.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{prefixed_value, request, Request, Workload, WorkloadKind};

/// Keys shared by every kv client.
pub const KV_KEYS_COUNT: usize = 5;
/// Requests per kv batch at most.
pub const KV_BATCH_MAX: usize = 3;
/// Longest pause between batches.
pub const KV_THINK_NS_MAX: u64 = 200_000;

pub struct Kv {
    client: u32,
    written_count: u64,
    keys: Vec<Vec<u8>>,
}

impl Kv {
    pub fn new(client: u32) -> Kv {
        Kv {
            client,
            written_count: 0,
            keys: (0..KV_KEYS_COUNT)
                .map(|i| format!("kv:{i}").into_bytes())
                .collect(),
        }
    }

    fn key(&self, rng: &mut ChaCha8Rng) -> Vec<u8> {
        self.keys[rng.gen_range(0..KV_KEYS_COUNT)].clone()
    }

    fn value(&mut self, key: &[u8], what: char) -> Vec<u8> {
        self.written_count += 1;
        prefixed_value(
            key,
            &format!("{}{}.{}", what, self.client, self.written_count),
        )
    }

    fn one(&mut self, rng: &mut ChaCha8Rng) -> Request {
        let key = self.key(rng);
        match rng.gen_range(0..100) {
            0..=29 => request(&[b"GET", &key]),
            30..=49 => {
                let v = self.value(&key, 's');
                request(&[b"SET", &key, &v])
            }
            50..=54 => {
                let v = self.value(&key, 'n');
                request(&[b"SET", &key, &v, b"NX"])
            }
            55..=62 => {
                let k2 = self.key(rng);
                request(&[b"DEL", &key, &k2])
            }
            63..=70 => {
                let k2 = self.key(rng);
                request(&[b"EXISTS", &key, &k2])
            }
            71..=78 => {
                let v = self.value(&key, 'a');
                request(&[b"APPEND", &key, &v])
            }
            79..=88 => {
                let mut r = vec![b"MSET".to_vec()];
                for _ in 0..rng.gen_range(1..=3) {
                    let k = self.key(rng);
                    let v = self.value(&k, 'm');
                    r.push(k);
                    r.push(v);
                }
                r
            }
            _ => {
                let mut r = vec![b"MGET".to_vec()];
                for _ in 0..rng.gen_range(1..=4) {
                    r.push(self.key(rng));
                }
                r
            }
        }
    }
}

impl Workload for Kv {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Kv
    }

    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        for _ in 0..rng.gen_range(1..=KV_BATCH_MAX) {
            let r = self.one(rng);
            batch.push(r);
        }
    }

    fn think_ns(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        rng.gen_range(0..=KV_THINK_NS_MAX)
    }
}
