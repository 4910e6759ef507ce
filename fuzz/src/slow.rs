//! The deterministic slow-input bound of engine_commands and client_stream:
//! no single execution may be charged more work than a generous multiple of
//! the bytes the engine has been given so far.
//!
//! Everything an execution can touch was built by earlier requests, so an
//! honest command linear in the sizes of its arguments and of the values it
//! reads is charged at most a constant times the input so far. A charged
//! loop that goes super-linear (a backtracking matcher, a quadratic scan)
//! crosses the bound on a small input and fails the target, here and in
//! `cargo test`, without any clock. Work the engine does not charge is
//! invisible to this bound; libFuzzer's `-timeout` (wall clock, fuzzing only)
//! is what catches that, and the crash input then replays here.

use seedkv_engine::Executed;

/// Work units one execution may be charged per byte of engine input so far.
pub const WORK_UNITS_PER_INPUT_BYTE_MAX: u64 = 64;

/// Work units any execution may be charged regardless of the input (fixed
/// costs: a reply of the config table, COMMAND LIST, INFO).
pub const WORK_UNITS_BASE_MAX: u64 = 65_536;

/// Counts the bytes given to the engine and checks each execution's charge.
#[derive(Debug, Default)]
pub struct WorkBound {
    input_bytes: u64,
    /// The highest charge seen, and the input size when it was seen.
    pub worst_units: u64,
    pub worst_input_bytes: u64,
}

impl WorkBound {
    /// `bytes` more went to the engine (any client).
    pub fn input(&mut self, bytes: usize) {
        self.input_bytes += bytes as u64;
    }

    /// The most one execution may be charged now.
    pub fn limit_units(&self) -> u64 {
        let per_byte = self
            .input_bytes
            .saturating_mul(WORK_UNITS_PER_INPUT_BYTE_MAX);
        WORK_UNITS_BASE_MAX.saturating_add(per_byte)
    }

    /// Panics when `executed` was charged past [`WorkBound::limit_units`].
    pub fn check(&mut self, executed: &Executed) {
        if executed.work_units > self.worst_units {
            self.worst_units = executed.work_units;
            self.worst_input_bytes = self.input_bytes;
        }
        assert!(
            executed.work_units <= self.limit_units(),
            "slow input: `{}` was charged {} work units after {} bytes of input \
             (bound {} = {} + {} per byte)",
            executed.name,
            executed.work_units,
            self.input_bytes,
            self.limit_units(),
            WORK_UNITS_BASE_MAX,
            WORK_UNITS_PER_INPUT_BYTE_MAX,
        );
    }
}
