//! Per-key access metadata: Redis's LRU clock and LFU counter (`robj.lru`,
//! evict.c), kept in the keyspace dict entry's meta word.
//!
//! Under an LRU policy (and every non-LFU policy, as in Redis) the word is
//! the 24-bit LRU clock, in seconds, of the key's last access. Under an LFU
//! policy it is 16 bits of "last decrement time" in minutes and an 8-bit
//! logarithmic access counter. Switching policies at run time reinterprets
//! the same bits, as Redis does, which is why OBJECT FREQ and IDLETIME warn
//! that "LRU and LFU data will take some time to adjust".
//!
//! Time is the host's `now` (wall clock, as Redis's `mstime()`), never a
//! clock read here; the LFU's probabilistic increment draws from a seeded
//! ChaCha RNG owned by each database.

use rand::Rng;

use crate::config::{Config, MaxmemoryPolicy};
use crate::time::Now;

/// Redis's LRU_CLOCK_MAX: the LRU clock is 24 bits and wraps.
pub const LRU_CLOCK_MAX: u32 = (1 << 24) - 1;
/// Redis's LRU_CLOCK_RESOLUTION: one tick of the LRU clock.
pub const LRU_CLOCK_RESOLUTION_MS: u64 = 1000;
/// Redis's LFU_INIT_VAL: the counter of a new key, so that a new key is not
/// evicted before it had a chance to be used.
pub const LFU_INIT_VAL: u8 = 5;
/// The LFU's minutes clock is 16 bits and wraps.
const LFU_MINUTES_MAX: u32 = 65_535;

/// How lookups stamp keys, refreshed before every command (see
/// [`crate::evict::admit`]) and copied into each database.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// The LRU clock now: unix seconds, 24 bits.
    pub lru_clock: u32,
    /// The LFU clock now: unix minutes, 16 bits.
    pub lfu_minutes: u32,
    /// An LFU policy is in force: the meta word holds an LFU counter.
    pub lfu: bool,
    /// Lookups update the meta word (false for TYPE, EXISTS, TTL, OBJECT...,
    /// which Redis 7.0 runs with LOOKUP_NOTOUCH).
    pub touch: bool,
    pub lfu_log_factor: u32,
    pub lfu_decay_time_min: u32,
}

impl Default for Access {
    fn default() -> Self {
        Access {
            lru_clock: 0,
            lfu_minutes: 0,
            lfu: false,
            touch: true,
            lfu_log_factor: 10,
            lfu_decay_time_min: 1,
        }
    }
}

/// Whether `policy` keeps LFU counters (Redis's MAXMEMORY_FLAG_LFU).
pub fn is_lfu(policy: MaxmemoryPolicy) -> bool {
    matches!(
        policy,
        MaxmemoryPolicy::AllkeysLfu | MaxmemoryPolicy::VolatileLfu
    )
}

impl Access {
    /// The access state at `now` under `config`.
    pub fn at(now: Now, config: &Config, touch: bool) -> Access {
        let unix_s = now.unix_ms() / LRU_CLOCK_RESOLUTION_MS;
        Access {
            lru_clock: (unix_s & u64::from(LRU_CLOCK_MAX)) as u32,
            lfu_minutes: ((unix_s / 60) & u64::from(LFU_MINUTES_MAX)) as u32,
            lfu: is_lfu(config.maxmemory_policy),
            touch,
            lfu_log_factor: config.lfu_log_factor,
            lfu_decay_time_min: config.lfu_decay_time_min,
        }
    }

    /// The meta word of a key created now (Redis's `createObject`).
    pub fn new_key_meta(&self) -> u32 {
        if self.lfu {
            (self.lfu_minutes << 8) | u32::from(LFU_INIT_VAL)
        } else {
            self.lru_clock
        }
    }

    /// The meta word after an access (Redis's `lookupKey`: `updateLFU`, or
    /// the LRU clock).
    pub fn touched(&self, meta: u32, rng: &mut impl Rng) -> u32 {
        if !self.lfu {
            return self.lru_clock;
        }
        let counter = self.lfu_log_incr(self.lfu_counter(meta), rng);
        (self.lfu_minutes << 8) | u32::from(counter)
    }

    /// Redis's `estimateObjectIdleTime`: milliseconds since the LRU clock
    /// in `meta`, at the clock's one-second resolution, across a wrap.
    pub fn idle_ms(&self, meta: u32) -> u64 {
        let meta = meta & LRU_CLOCK_MAX;
        let ticks = if self.lru_clock >= meta {
            self.lru_clock - meta
        } else {
            self.lru_clock + (LRU_CLOCK_MAX - meta)
        };
        u64::from(ticks) * LRU_CLOCK_RESOLUTION_MS
    }

    /// Redis's `LFUDecrAndReturn`: the counter in `meta`, less one per
    /// `lfu-decay-time` minutes since it was last decremented.
    pub fn lfu_counter(&self, meta: u32) -> u8 {
        let ldt = meta >> 8;
        let counter = (meta & 0xff) as u8;
        let elapsed_min = if self.lfu_minutes >= ldt {
            self.lfu_minutes - ldt
        } else {
            LFU_MINUTES_MAX - ldt + self.lfu_minutes
        };
        let periods = elapsed_min
            .checked_div(self.lfu_decay_time_min)
            .unwrap_or(0);
        counter.saturating_sub(periods.min(255) as u8)
    }

    /// Redis's `LFULogIncr`: increments with probability
    /// `1 / ((counter - LFU_INIT_VAL) * lfu_log_factor + 1)`, so a counter
    /// of 255 takes about a million accesses at the default factor of 10.
    fn lfu_log_incr(&self, counter: u8, rng: &mut impl Rng) -> u8 {
        if counter == u8::MAX {
            return counter;
        }
        let base = f64::from(counter.saturating_sub(LFU_INIT_VAL));
        let p = 1.0 / (base * f64::from(self.lfu_log_factor) + 1.0);
        if rng.gen::<f64>() < p {
            counter + 1
        } else {
            counter
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn access_at(unix_s: u64, policy: MaxmemoryPolicy) -> Access {
        let config = Config {
            maxmemory_policy: policy,
            ..Config::default()
        };
        let now = Now {
            mono_ns: 0,
            unix_us: unix_s * 1_000_000,
        };
        Access::at(now, &config, true)
    }

    #[test]
    fn idle_time_counts_seconds_across_the_clock_wrap() {
        let a = access_at(100, MaxmemoryPolicy::AllkeysLru);
        let key = a.new_key_meta();
        assert_eq!(
            access_at(107, MaxmemoryPolicy::AllkeysLru).idle_ms(key),
            7000
        );
        // Stamped just before the 24-bit clock wrapped: Redis's formula
        // counts the wrap one tick short (4 s read as 3), and so do we.
        let late = access_at(u64::from(LRU_CLOCK_MAX) - 1, MaxmemoryPolicy::AllkeysLru);
        let after_wrap = access_at(u64::from(LRU_CLOCK_MAX) + 3, MaxmemoryPolicy::AllkeysLru);
        assert_eq!(after_wrap.idle_ms(late.new_key_meta()), 3000);
    }

    #[test]
    fn lfu_counter_starts_at_init_grows_logarithmically_and_decays() {
        let a = access_at(600, MaxmemoryPolicy::AllkeysLfu);
        let mut meta = a.new_key_meta();
        assert_eq!(a.lfu_counter(meta), LFU_INIT_VAL);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for _ in 0..1000 {
            meta = a.touched(meta, &mut rng);
        }
        let counter = a.lfu_counter(meta);
        // log-factor 10: a thousand hits land well under 255 but far above 5.
        assert!((15..60).contains(&counter), "{counter}");
        // Three minutes later, three decay periods (lfu-decay-time 1).
        let later = access_at(600 + 180, MaxmemoryPolicy::AllkeysLfu);
        assert_eq!(later.lfu_counter(meta), counter - 3);
        let mut saturated = (a.lfu_minutes << 8) | 255;
        saturated = a.touched(saturated, &mut rng);
        assert_eq!(a.lfu_counter(saturated), 255);
    }

    #[test]
    fn decay_time_zero_never_decays() {
        let mut a = access_at(0, MaxmemoryPolicy::AllkeysLfu);
        a.lfu_decay_time_min = 0;
        let meta = (a.lfu_minutes << 8) | 40;
        let mut later = access_at(60 * 1000, MaxmemoryPolicy::AllkeysLfu);
        later.lfu_decay_time_min = 0;
        assert_eq!(later.lfu_counter(meta), 40);
    }
}
