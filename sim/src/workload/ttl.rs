//! Keys with time to live while the clock advances: SET with EX or PX,
//! EXPIRE, TTL, PTTL, GET and EXISTS, with pauses long enough for keys to
//! expire between requests (and the wall-clock jumps the fault model
//! injects). Now and then a probe aims at the expiry instant: a key set
//! with a PX of a few milliseconds, then read every fraction of a
//! millisecond until well past its expiry, so that some read lands in the
//! millisecond the key expires (an expiry one millisecond late shows).

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{prefixed_value, request, Request, Workload, WorkloadKind};

/// Keys shared by every ttl client.
pub const TTL_KEYS_COUNT: usize = 8;
/// Longest PX, in milliseconds; EX is 1 ..= 3 seconds.
pub const TTL_PX_MS_MAX: u64 = 3_000;
/// Pauses: usually up to the short bound, sometimes up to the long one.
pub const TTL_THINK_NS_SHORT_MAX: u64 = 5_000_000;
pub const TTL_THINK_NS_LONG_MAX: u64 = 2_000_000_000;
/// An expiry probe: its key's PX (ms), the reads that follow it, and the
/// pause between them (a few per millisecond).
pub const PROBE_PX_MS_MAX: u64 = 4;
pub const PROBE_READS_COUNT: u32 = 40;
pub const PROBE_THINK_NS_MAX: u64 = 300_000;

pub struct Ttl {
    client: u32,
    written_count: u64,
    /// Reads left of the expiry probe under way (0: none).
    probe_reads_left: u32,
}

impl Ttl {
    pub fn new(client: u32) -> Ttl {
        Ttl {
            client,
            written_count: 0,
            probe_reads_left: 0,
        }
    }
}

impl Workload for Ttl {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Ttl
    }

    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        let probe_key = format!("ttl:probe:{}", self.client).into_bytes();
        if self.probe_reads_left > 0 {
            self.probe_reads_left -= 1;
            let read: &[u8] = match rng.gen_range(0..3) {
                0 => b"GET",
                1 => b"PTTL",
                _ => b"EXISTS",
            };
            batch.push(request(&[read, &probe_key]));
            return;
        }
        if rng.gen_range(0..40) == 0 {
            self.probe_reads_left = PROBE_READS_COUNT;
            let ms = rng.gen_range(1..=PROBE_PX_MS_MAX).to_string();
            let value = prefixed_value(&probe_key, "probe");
            batch.push(request(&[b"SET", &probe_key, &value, b"PX", ms.as_bytes()]));
            return;
        }
        let key = format!("ttl:{}", rng.gen_range(0..TTL_KEYS_COUNT)).into_bytes();
        self.written_count += 1;
        let value = prefixed_value(&key, &format!("t{}.{}", self.client, self.written_count));
        let r = match rng.gen_range(0..100) {
            0..=19 => {
                let s = rng.gen_range(1..=3u64).to_string();
                request(&[b"SET", &key, &value, b"EX", s.as_bytes()])
            }
            20..=39 => {
                let ms = rng.gen_range(1..=TTL_PX_MS_MAX).to_string();
                request(&[b"SET", &key, &value, b"PX", ms.as_bytes()])
            }
            40..=44 => request(&[b"SET", &key, &value]),
            45..=54 => {
                let s = rng.gen_range(1..=3u64).to_string();
                request(&[b"EXPIRE", &key, s.as_bytes()])
            }
            55..=64 => request(&[b"TTL", &key]),
            65..=74 => request(&[b"PTTL", &key]),
            75..=89 => request(&[b"GET", &key]),
            _ => request(&[b"EXISTS", &key]),
        };
        batch.push(r);
    }

    fn think_ns(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        if self.probe_reads_left > 0 {
            return rng.gen_range(0..=PROBE_THINK_NS_MAX);
        }
        if rng.gen_range(0..50) == 0 {
            rng.gen_range(0..=TTL_THINK_NS_LONG_MAX)
        } else {
            rng.gen_range(0..=TTL_THINK_NS_SHORT_MAX)
        }
    }
}
