//! Counters reported by INFO.

use std::collections::BTreeMap;

/// Per-command counters (INFO commandstats).
#[derive(Debug, Default, Clone)]
pub struct CommandStats {
    pub calls: u64,
    pub work_units: u64,
    pub rejected_calls: u64,
    pub failed_calls: u64,
}

/// Server-wide counters.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    pub total_connections_received: u64,
    pub rejected_connections: u64,
    pub total_commands_processed: u64,
    pub rejected_calls: u64,
    pub net_input_bytes: u64,
    pub net_output_bytes: u64,
    pub keyspace_hits: u64,
    pub keyspace_misses: u64,
    pub commands: BTreeMap<&'static str, CommandStats>,
    /// Highest `used_memory` INFO has reported (INFO memory `used_memory_peak`).
    pub used_memory_peak_bytes: u64,
}

impl Stats {
    pub fn record_call(&mut self, name: &'static str, work_units: u64) {
        self.total_commands_processed += 1;
        let s = self.commands.entry(name).or_default();
        s.calls += 1;
        s.work_units += work_units;
    }

    /// CONFIG RESETSTAT.
    pub fn reset(&mut self) {
        *self = Stats::default();
    }
}
