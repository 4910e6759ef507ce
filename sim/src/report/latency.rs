//! `seedkv-sim report latency`: seed 002's head-of-line experiment in
//! virtual time.
//!
//! Two clients share the one server CPU of the simulator's world: a prober
//! sends PING back to back, and an operator fills `keys_count` keys and a
//! `hash_fields_count`-field hash, then in turn does nothing for a second,
//! runs `KEYS k:1*`, `KEYS *`, a full `SCAN` with `COUNT 1000`, `DEL` of the
//! hash, and (after a refill) `UNLINK` of it (see `script.rs`). Every PING
//! whose flight overlaps an operation's window is that operation's sample;
//! the table gives the window's PING count, p50, p99 (hdrhistogram) and
//! exact max.
//!
//! Nothing here is measured on the host: durations come from the cost model
//! (`cost.rs`: 300 ns per engine work unit, 180 ns per element freed on the
//! background CPU) and the network model (`net.rs`, with the loopback knobs
//! below), so the same seed prints the same table, byte for byte, on any
//! machine.

use std::fmt::Write as _;

use seedkv_engine::resp::Frame;

use super::script::{Operator, Prober};
use super::table::{format_checked_table, row_of};
pub use super::table::{format_table, ms, PingSample, Row};
use super::verify::{verify, Checked};
use crate::history::{History, TimeNs};
use crate::knobs::{Knobs, Overrides, OPS_MAX};
use crate::net::NetKnobs;
use crate::workload::WorkloadKind;
use crate::world::World;

/// The seed article's database: 2M keys.
pub const KEYS_COUNT_DEFAULT: u64 = 2_000_000;
/// The seed article's big hash: 3M fields.
pub const HASH_FIELDS_COUNT_DEFAULT: u64 = 3_000_000;
/// Bounds on the flags, so that a typo cannot ask for a terabyte.
pub const KEYS_COUNT_MAX: u64 = 50_000_000;
pub const HASH_FIELDS_COUNT_MAX: u64 = 50_000_000;

/// Client indices in the world.
const PROBER: u32 = 0;
const OPERATOR: u32 = 1;

/// What to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LatencyConfig {
    pub seed: u64,
    pub keys_count: u64,
    pub hash_fields_count: u64,
    /// The engine's `snapshot-reads`: off reproduces Redis (KEYS stalls
    /// everyone); on, KEYS answers in slices.
    pub snapshot_reads: bool,
}

impl Default for LatencyConfig {
    fn default() -> Self {
        LatencyConfig {
            seed: 0,
            keys_count: KEYS_COUNT_DEFAULT,
            hash_fields_count: HASH_FIELDS_COUNT_DEFAULT,
            snapshot_reads: false,
        }
    }
}

/// The outcome of a run: the table's rows, what was checked, and every PING
/// (for the chart).
#[derive(Clone, Debug)]
pub struct LatencyReport {
    pub config: LatencyConfig,
    pub rows: Vec<Row>,
    pub checked: Checked,
    pub pings: Vec<PingSample>,
    /// Virtual CPU time of the background (lazy free) thread.
    pub background_busy_ns: u64,
    pub end_ns: TimeNs,
}

/// A loopback link as in the seed article (PING p50 ≈ 0.1 ms, p99 ≈ 0.3
/// ms, max ≈ 1 ms with nothing else running): ≈ 50 µs one way, jitter, a
/// rare scheduling spike of up to 0.9 ms, 3 GB/s, no fragmentation.
pub fn loopback_net() -> NetKnobs {
    NetKnobs {
        latency_ns: 35_000,
        jitter_ns_max: 30_000,
        spike_per_million: 5_000,
        spike_ns_max: 900_000,
        bandwidth_bytes_per_ms: 3_000_000,
        fragment_per_mille: 0,
        coalesce_grid_ns: 0,
        socket_buffer_bytes: 1 << 18,
        slow_reader_per_mille: 0,
    }
}

/// The flags' bounds, shared with `seedkv-load`.
pub fn check_sizes(keys_count: u64, hash_fields_count: u64) -> Result<(), String> {
    if keys_count == 0 || keys_count > KEYS_COUNT_MAX {
        return Err(format!("--keys must be in 1..={KEYS_COUNT_MAX}"));
    }
    if hash_fields_count == 0 || hash_fields_count > HASH_FIELDS_COUNT_MAX {
        return Err(format!(
            "--hash-fields must be in 1..={HASH_FIELDS_COUNT_MAX}"
        ));
    }
    Ok(())
}

/// Runs the experiment. An error means the data or a reply was not what the
/// script asked for; no figure is worth printing then.
pub fn run_latency(config: &LatencyConfig) -> Result<LatencyReport, String> {
    check_sizes(config.keys_count, config.hash_fields_count)?;
    let overrides = Overrides {
        clients: Some(2),
        ops: Some(OPS_MAX),
        no_faults: true,
        workloads: Some(vec![WorkloadKind::Ping, WorkloadKind::Big]),
        ..Default::default()
    };
    let mut knobs = Knobs::draw(config.seed, &overrides);
    knobs.net = loopback_net();
    let snapshot_reads = config.snapshot_reads;
    let mut world = World::new_configured(config.seed, knobs, None, (false, false), |c| {
        c.snapshot_reads = snapshot_reads;
        c.snapshot_slice_elements = seedkv_engine::snapshot_read::SLICE_ELEMENTS;
    });
    let (operator, done) = Operator::new(config.keys_count, config.hash_fields_count);
    world.set_workload(OPERATOR, Box::new(operator));
    world.set_workload(PROBER, Box::new(Prober::new(done)));
    world.run();
    if world.stats.bound_hit {
        return Err("the run hit the simulator's event or time bound".into());
    }
    let history = &world.history;
    let (spans, checked) = verify(
        history,
        OPERATOR,
        config.keys_count,
        config.hash_fields_count,
    )?;
    let pings = ping_samples(history)?;
    let rows = spans.into_iter().map(|span| row_of(span, &pings)).collect();
    Ok(LatencyReport {
        config: *config,
        rows,
        checked,
        pings,
        background_busy_ns: world.stats.bg_busy_ns,
        end_ns: history.end_ns,
    })
}

/// Every PING of the prober, each answered with PONG.
fn ping_samples(history: &History) -> Result<Vec<PingSample>, String> {
    let mut pings = Vec::new();
    for op in history.ops.iter().filter(|o| o.client == PROBER) {
        match &op.complete {
            Some((at, Frame::Simple(s))) if s == b"PONG" => pings.push(PingSample {
                sent_ns: op.invoke_ns,
                latency_ns: at - op.invoke_ns,
            }),
            _ => return Err("a PING was not answered with PONG".into()),
        }
    }
    Ok(pings)
}

impl LatencyReport {
    /// Title, table and what was checked: the whole printed report.
    pub fn text(&self) -> String {
        let mut out = format!(
            "head-of-line latency in virtual time: seed {}, {} keys, {}-field hash\n\n",
            self.config.seed, self.config.keys_count, self.config.hash_fields_count
        );
        out.push_str(&format_checked_table(&self.rows, &self.checked));
        let _ = writeln!(
            out,
            "virtual time {:.3} s; background (lazy free) CPU busy {} ms",
            self.end_ns as f64 / 1e9,
            ms(self.background_busy_ns)
        );
        out
    }

    /// The row whose operation starts with `prefix`.
    pub fn row(&self, prefix: &str) -> Option<&Row> {
        self.rows
            .iter()
            .find(|r| r.span.operation.starts_with(prefix))
    }
}
