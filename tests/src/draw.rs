//! SplitMix64: a small seeded generator for tests that draw their inputs,
//! so the draws are the same on every run and every machine.

pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// One of `from`, uniformly (modulo bias is irrelevant at test sizes).
    pub fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        assert!(!from.is_empty(), "pick from an empty list");
        from[(self.next_u64() % from.len() as u64) as usize]
    }

    /// Uniform in `[lo, hi)`, printed with six decimals as clients send.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> String {
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        format!("{:.6}", lo + unit * (hi - lo))
    }
}
