//! Adversarial inputs, swarm-drawn per seed: each run enables a random
//! subset of the value families below, and every request draws its
//! arguments from the edges of the input space, on keys of its own (`adv:`).
//! The reference model predicts every reply (it knows the edges: overflow,
//! float specials, i64 indices, offsets at proto-max-bulk-len); the Lua
//! family's replies are judged by `check::adversarial`.
//!
//! - [`Family::Ints`]: INCR/DECR/INCRBY/DECRBY/HINCRBY at and past the i64
//!   edges, and integer texts Redis refuses ("  12", "+5", "0x10", "007").
//! - [`Family::Floats`]: INCRBYFLOAT, HINCRBYFLOAT, ZADD/ZINCRBY/ZSCORE and
//!   score ranges with inf, nan, -0, 1e308, 1e400, 5e-324.
//! - [`Family::Ranges`]: huge and negative indices and counts (LRANGE,
//!   LINDEX, LPOS RANK/COUNT/MAXLEN, LTRIM, SRANDMEMBER, SPOP, ZRANGE
//!   LIMIT, GETRANGE, SETRANGE offsets near proto-max-bulk-len), on empty
//!   and absent collections too.
//! - [`Family::Binary`]: keys, fields, members and values with `\0`,
//!   `\r\n`, non-UTF-8 bytes, empty strings, and lengths around the
//!   listpack thresholds (64 bytes) and beyond (4 KiB).
//! - [`Family::Globs`]: KEYS with pathological patterns (many stars,
//!   unterminated classes, trailing backslash, reversed ranges, NUL).
//! - [`Family::Lua`]: deep recursion (to "stack overflow"), deeply nested
//!   and huge tables returned as replies.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{Request, Workload, WorkloadKind};

mod bytes;
pub mod lua_scripts;
mod numbers;
mod ranges;
pub mod values;

pub use lua_scripts::{expected_script_reply, is_adversarial_script};

/// Requests per batch at most.
pub const ADV_BATCH_MAX: usize = 4;
/// Longest pause between batches.
pub const ADV_THINK_NS_MAX: u64 = 300_000;

/// The value families a seed may enable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Ints,
    Floats,
    Ranges,
    Binary,
    Globs,
    Lua,
}

impl Family {
    pub const ALL: &'static [Family] = &[
        Family::Ints,
        Family::Floats,
        Family::Ranges,
        Family::Binary,
        Family::Globs,
        Family::Lua,
    ];

    /// The families a seed draws from: all of them. ([`Family::Lua`] was
    /// left out while the engine's Lua hashed objects by address, which made
    /// a recursion's depth before "stack overflow", so its work, differ
    /// between two runs of a seed; see third_party/lua-src/PATCHES.md.)
    pub const DRAWN: &'static [Family] = Family::ALL;
}

pub struct Adversarial {
    /// The families this seed enabled (swarm testing: never empty).
    families: Vec<Family>,
}

impl Adversarial {
    pub fn new(rng: &mut ChaCha8Rng) -> Adversarial {
        let mut families: Vec<Family> = Family::DRAWN
            .iter()
            .copied()
            .filter(|_| rng.gen_bool(0.5))
            .collect();
        if families.is_empty() {
            families.push(Family::DRAWN[rng.gen_range(0..Family::DRAWN.len())]);
        }
        Adversarial { families }
    }

    /// A workload drawing from these families only (tests, experiments).
    pub fn with_families(families: Vec<Family>) -> Adversarial {
        assert!(!families.is_empty(), "at least one family");
        Adversarial { families }
    }

    pub fn families(&self) -> &[Family] {
        &self.families
    }

    fn one(&mut self, rng: &mut ChaCha8Rng) -> Request {
        match self.families[rng.gen_range(0..self.families.len())] {
            Family::Ints => numbers::int_request(rng),
            Family::Floats => numbers::float_request(rng),
            Family::Ranges => ranges::request(rng),
            Family::Binary => bytes::binary_request(rng),
            Family::Globs => bytes::glob_request(rng),
            Family::Lua => lua_scripts::request(rng),
        }
    }
}

impl Workload for Adversarial {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Adversarial
    }

    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        for _ in 0..rng.gen_range(1..=ADV_BATCH_MAX) {
            let r = self.one(rng);
            batch.push(r);
        }
    }

    fn think_ns(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        rng.gen_range(0..=ADV_THINK_NS_MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::argclass::ArgClass;
    use crate::knobs::Overrides;
    use crate::run::{run, RunConfig, RunOptions};
    use rand::SeedableRng;

    /// Every family draws edge classes the friendly workloads never send.
    #[test]
    fn families_reach_edge_classes() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut w = Adversarial::with_families(Family::ALL.to_vec());
        let mut classes = crate::argclass::ArgClasses::default();
        let mut batch = Vec::new();
        for _ in 0..2000 {
            w.next_batch(&mut rng, &mut batch);
        }
        for r in &batch {
            classes.add_request(r);
        }
        let reached: Vec<ArgClass> = classes
            .by_command()
            .flat_map(|(_, c)| c.into_iter())
            .collect();
        for wanted in [
            ArgClass::I64Max,
            ArgClass::PastI64,
            ArgClass::Inf,
            ArgClass::NaN,
            ArgClass::Nul,
            ArgClass::NonUtf8,
            ArgClass::GlobManyStars,
            ArgClass::GlobUnterminated,
            ArgClass::Empty,
        ] {
            assert!(reached.contains(&wanted), "{wanted:?} never sent");
        }
    }

    /// A short run of the workload alone passes every checker (the model
    /// predicts the edges), with and without faults.
    #[test]
    fn short_runs_pass_every_checker() {
        for (seed, no_faults) in [(1, true), (2, false)] {
            let config = RunConfig {
                seed,
                bug: None,
                overrides: Overrides {
                    clients: Some(3),
                    ops: Some(600),
                    no_faults,
                    workloads: Some(vec![WorkloadKind::Adversarial]),
                    ..Default::default()
                },
            };
            let report = run(&config, RunOptions::default());
            assert!(report.commands_count >= 300, "{}", report.commands_count);
            assert!(
                !report.failed(),
                "seed {seed}: {:?}",
                report.violations.first()
            );
        }
    }
}
