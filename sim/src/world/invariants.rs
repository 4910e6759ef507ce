//! Pacing of the engine's invariant checks (`Engine::check_invariants`):
//! the world runs them after the engine's inputs (a connect, bytes read, a
//! timer, a disconnect: each is followed by `drain_engine`, which calls
//! [`InvariantPacing::after_input`]) in debug builds (`cargo test`), never
//! in release builds (the sweep), so a broken structure fails the seed at
//! the input that broke it, as a `panic` failure with the check's message.
//!
//! A check is O(size of the engine's state), so the rule keeps its cost
//! per input bounded: after a check that visited `v` items (keys, TTLs,
//! clients, blocked and watched pairs), the next runs
//! `max(1, v / INVARIANTS_ITEMS_PER_INPUT)` inputs later. A small keyspace
//! (under 2 × [`INVARIANTS_ITEMS_PER_INPUT`] items) is checked after every
//! input; a big one every Nth, for an amortised
//! [`INVARIANTS_ITEMS_PER_INPUT`] items per input.
//!
//! Checks only read the engine, so the trace hash is the same with and
//! without them.

use seedkv_engine::Engine;

/// Items a check may visit per input, amortised (see the module docs).
pub const INVARIANTS_ITEMS_PER_INPUT: usize = 256;

/// When the next check is due.
#[derive(Debug)]
pub(super) struct InvariantPacing {
    /// Checks run in this build (debug assertions on).
    enabled: bool,
    /// Inputs left before the next check.
    inputs_left: usize,
    /// Inputs seen and checks run so far.
    pub(super) inputs_count: u64,
    pub(super) checks_count: u64,
}

impl Default for InvariantPacing {
    fn default() -> Self {
        InvariantPacing {
            enabled: cfg!(debug_assertions),
            inputs_left: 0,
            inputs_count: 0,
            checks_count: 0,
        }
    }
}

impl InvariantPacing {
    /// Called after every input: checks `engine` if a check is due.
    pub(super) fn after_input(&mut self, engine: &Engine) {
        if !self.enabled {
            return;
        }
        self.inputs_count += 1;
        if self.inputs_left > 0 {
            self.inputs_left -= 1;
            return;
        }
        let visited = engine.check_invariants();
        self.checks_count += 1;
        self.inputs_left = (visited / INVARIANTS_ITEMS_PER_INPUT).saturating_sub(1);
    }
}

#[cfg(test)]
mod tests {
    use crate::knobs::{Knobs, Overrides};
    use crate::workload::WorkloadKind;
    use crate::world::World;

    /// In a test build every input of a small run is followed by a check.
    #[test]
    fn a_small_run_is_checked_after_every_event() {
        let overrides = Overrides {
            clients: Some(4),
            ops: Some(300),
            no_faults: false,
            workloads: Some(vec![
                WorkloadKind::Kv,
                WorkloadKind::Ttl,
                WorkloadKind::Blocking,
                WorkloadKind::Transfer,
            ]),
            ..Default::default()
        };
        let mut world = World::new(3, Knobs::draw(3, &overrides), None, false, false);
        world.run();
        assert!(world.invariants.inputs_count > 300);
        assert_eq!(world.invariants.checks_count, world.invariants.inputs_count);
    }
}
