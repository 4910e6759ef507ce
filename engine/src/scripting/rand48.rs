//! Redis's `math.random`: the 48-bit linear congruential generator of
//! `rand.c` (`redisLrand48`), the same on every platform. Redis 7.0.15 does
//! not reseed it per script (6.x did); `math.randomseed(n)` gives the same
//! sequence as on Redis.

/// drand48's multiplier and increment.
const MULTIPLIER: u64 = 0x5_DEEC_E66D;
const INCREMENT: u64 = 0xB;
const STATE_MASK: u64 = (1 << 48) - 1;

/// Redis's `REDIS_LRAND48_MAX` (`INT32_MAX`).
pub const LRAND48_MAX: i64 = i32::MAX as i64;

/// The generator's 48-bit state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rand48 {
    state: u64,
}

impl Rand48 {
    /// `redisSrand48(seed)`: the seed's low 32 bits above drand48's fixed
    /// low word `0x330E`.
    pub fn new(seed: i32) -> Rand48 {
        Rand48 {
            state: ((u64::from(seed as u32)) << 16 | 0x330E) & STATE_MASK,
        }
    }

    /// `redisLrand48()`: the next 31-bit value.
    pub fn next_i32(&mut self) -> i32 {
        self.state = (self.state.wrapping_mul(MULTIPLIER).wrapping_add(INCREMENT)) & STATE_MASK;
        (self.state >> 17) as i32
    }

    /// Lua's `math.random` base value in [0, 1), as Redis computes it.
    pub fn next_unit(&mut self) -> f64 {
        let r = i64::from(self.next_i32()) % LRAND48_MAX;
        r as f64 / LRAND48_MAX as f64
    }
}

impl Default for Rand48 {
    fn default() -> Self {
        Rand48::new(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_redis_first_values() {
        // `EVAL "math.randomseed(0); return {math.random(10),
        // math.random(10), math.random(5,8)}" 0` on redis-server 7.0.15
        // replies 2, 8, 5.
        let mut r = Rand48::new(0);
        let a = (r.next_unit() * 10.0).floor() + 1.0;
        let b = (r.next_unit() * 10.0).floor() + 1.0;
        let c = (r.next_unit() * 4.0).floor() + 5.0;
        assert_eq!((a, b, c), (2.0, 8.0, 5.0));
    }
}
