//! O(N) commands: fill a large key set with MSET, list it with KEYS, delete
//! it with DEL (or UNLINK) of many keys at once — each of those blocks
//! every other client for its whole duration, which the PING workload next
//! to it measures. After each delete, one big value (grown with SETRANGE
//! past the lazy-free threshold) is removed with UNLINK or DEL, alternately,
//! and probed with EXISTS: a freed value must be gone at once, even while
//! the background free is still running. Only `big:<client>:` keys are
//! touched (never FLUSHDB, which would wipe the other workloads' keys).

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{prefixed_value, Request, Workload, WorkloadKind};

/// Keys per MSET at most.
pub const BIG_MSET_KEYS_MAX: u64 = 500;
/// Keys per DEL at most.
pub const BIG_DEL_KEYS_MAX: u64 = 5_000;
/// The key set grows to a size drawn in this range.
pub const BIG_KEYS_MIN: u64 = 2_000;
pub const BIG_KEYS_MAX: u64 = 20_000;
/// PINGs sent between two O(N) cycles, so that a big client spends most of
/// its request budget on cheap requests (and a sweep stays fast).
pub const BIG_REST_BATCHES: u32 = 300;
/// Length of the big value: above the engine's lazy-free threshold (64
/// work units of 64 KiB), so UNLINK hands it to the background free.
pub const BIG_VALUE_BYTES: u64 = 4_300_000;
/// Pauses between batches: this range.
pub const BIG_THINK_NS_MIN: u64 = 1_000_000;
pub const BIG_THINK_NS_MAX: u64 = 10_000_000;

enum Phase {
    Fill,
    List,
    Delete,
    BigValue,
    Rest(u32),
}

pub struct Big {
    client: u32,
    target: u64,
    /// Live keys are `big:<client>:<n>` for n in low..high.
    low: u64,
    high: u64,
    phase: Phase,
    /// Whether the next big value is removed with UNLINK (else DEL).
    unlink_next: bool,
}

impl Big {
    pub fn new(client: u32, rng: &mut ChaCha8Rng) -> Big {
        Big {
            client,
            target: rng.gen_range(BIG_KEYS_MIN..=BIG_KEYS_MAX),
            low: 0,
            high: 0,
            phase: Phase::Fill,
            unlink_next: true,
        }
    }

    /// `big:<client>:<n>`, written digit by digit: a fill cycle names up
    /// to 20,000 keys and `format!` was ~60% of this workload's cost.
    fn key(&self, n: u64) -> Vec<u8> {
        let mut key = Vec::with_capacity(b"big::".len() + 2 * DECIMAL_U64_BYTES_MAX);
        key.extend_from_slice(b"big:");
        push_decimal(&mut key, u64::from(self.client));
        key.push(b':');
        push_decimal(&mut key, n);
        key
    }
}

/// The most digits a `u64` has.
const DECIMAL_U64_BYTES_MAX: usize = 20;

/// Appends `n` in decimal (as `format!("{n}")` writes it).
fn push_decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; DECIMAL_U64_BYTES_MAX];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

impl Workload for Big {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Big
    }

    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        match self.phase {
            Phase::Fill => {
                let n = BIG_MSET_KEYS_MAX
                    .min(self.target - (self.high - self.low))
                    .max(1);
                let mut r = Vec::with_capacity(1 + 2 * n as usize);
                r.push(b"MSET".to_vec());
                for _ in 0..n {
                    let k = self.key(self.high);
                    let v = prefixed_value(&k, "big");
                    self.high += 1;
                    r.push(k);
                    r.push(v);
                }
                batch.push(r);
                if self.high - self.low >= self.target {
                    self.phase = Phase::List;
                }
            }
            Phase::List => {
                let pattern = format!("big:{}:*", self.client).into_bytes();
                batch.push(vec![b"KEYS".to_vec(), pattern]);
                if rng.gen_bool(0.5) {
                    batch.push(vec![b"DBSIZE".to_vec()]);
                }
                self.phase = Phase::Delete;
            }
            Phase::Delete => {
                let n = rng
                    .gen_range(1..=BIG_DEL_KEYS_MAX)
                    .min(self.high - self.low);
                let name: &[u8] = if rng.gen_bool(0.3) { b"UNLINK" } else { b"DEL" };
                let mut r = Vec::with_capacity(1 + n as usize);
                r.push(name.to_vec());
                for _ in 0..n {
                    r.push(self.key(self.low));
                    self.low += 1;
                }
                batch.push(r);
                if self.low == self.high {
                    self.target = rng.gen_range(BIG_KEYS_MIN..=BIG_KEYS_MAX);
                    self.phase = Phase::BigValue;
                }
            }
            Phase::BigValue => {
                let key = format!("big:{}:value", self.client).into_bytes();
                let offset = (BIG_VALUE_BYTES - 1).to_string().into_bytes();
                let name: &[u8] = if self.unlink_next { b"UNLINK" } else { b"DEL" };
                self.unlink_next = !self.unlink_next;
                batch.push(vec![
                    b"SETRANGE".to_vec(),
                    key.clone(),
                    offset,
                    b"|".to_vec(),
                ]);
                batch.push(vec![name.to_vec(), key.clone()]);
                batch.push(vec![b"EXISTS".to_vec(), key]);
                self.phase = Phase::Rest(BIG_REST_BATCHES);
            }
            Phase::Rest(left) => {
                batch.push(vec![b"PING".to_vec()]);
                self.phase = if left > 1 {
                    Phase::Rest(left - 1)
                } else {
                    Phase::Fill
                };
            }
        }
    }

    fn think_ns(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        rng.gen_range(BIG_THINK_NS_MIN..=BIG_THINK_NS_MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::push_decimal;

    #[test]
    fn decimals_are_what_format_writes() {
        for n in [0, 7, 10, 99, 1_000, 20_000, u64::from(u32::MAX), u64::MAX] {
            let mut out = b"x".to_vec();
            push_decimal(&mut out, n);
            assert_eq!(out, format!("x{n}").into_bytes());
        }
    }
}
