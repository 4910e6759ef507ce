//! How long a storage request takes: a base per kind of request, a cost
//! per byte moved, and a seeded tail (a rare request takes many times
//! longer, as a real disk's queue or a journal commit makes it).

use rand::Rng;
use seedkv_engine::persist::StorageOp;

/// The longest a single request may take (bounds the tail).
pub const LATENCY_NS_MAX: u64 = 2_000_000_000;

/// The latency model's knobs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LatencyKnobs {
    /// Base of a read, append, truncate or size (page cache work).
    pub cached_ns: u64,
    /// Base of an fsync (a flush to the device).
    pub fsync_ns: u64,
    /// Base of a create, rename, remove, mkdir or directory sync.
    pub metadata_ns: u64,
    /// Per KiB moved by a read or an append; per KiB flushed by an fsync is
    /// not modelled (the base stands for it).
    pub per_kib_ns: u64,
    /// Chance of a slow request, per mille, and how many times slower.
    pub tail_per_mille: u32,
    pub tail_factor: u64,
}

impl Default for LatencyKnobs {
    fn default() -> LatencyKnobs {
        LatencyKnobs {
            cached_ns: 2_000,
            fsync_ns: 500_000,
            metadata_ns: 20_000,
            per_kib_ns: 250,
            tail_per_mille: 5,
            tail_factor: 40,
        }
    }
}

impl LatencyKnobs {
    pub fn draw(rng: &mut impl Rng) -> LatencyKnobs {
        LatencyKnobs {
            cached_ns: rng.gen_range(1_000..=5_000),
            fsync_ns: rng.gen_range(50_000..=5_000_000),
            metadata_ns: rng.gen_range(5_000..=100_000),
            per_kib_ns: rng.gen_range(100..=1_000),
            tail_per_mille: rng.gen_range(0..=20),
            tail_factor: rng.gen_range(2..=100),
        }
    }

    /// A draw for `op` (uniform ±50% around its base, times the tail); a
    /// read moves `read_bytes`.
    pub fn draw_ns(&self, rng: &mut impl Rng, op: &StorageOp, read_bytes: u64) -> u64 {
        let (base_ns, bytes) = match op {
            StorageOp::Read { .. } => (self.cached_ns, read_bytes),
            StorageOp::Append { bytes, .. } => (self.cached_ns, bytes.len() as u64),
            StorageOp::Truncate { .. } | StorageOp::Size { .. } => (self.cached_ns, 0),
            StorageOp::Fsync { .. } => (self.fsync_ns, 0),
            StorageOp::Create { .. }
            | StorageOp::Rename { .. }
            | StorageOp::Remove { .. }
            | StorageOp::MakeDir { .. }
            | StorageOp::SyncDir { .. } => (self.metadata_ns, 0),
        };
        let base_ns = base_ns / 2 + rng.gen_range(0..=base_ns);
        let mut ns = base_ns.saturating_add((bytes / 1024).saturating_mul(self.per_kib_ns));
        if self.tail_per_mille > 0 && rng.gen_range(0..1000) < self.tail_per_mille {
            ns = ns.saturating_mul(self.tail_factor);
        }
        ns.clamp(1, LATENCY_NS_MAX)
    }
}
