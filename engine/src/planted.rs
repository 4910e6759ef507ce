//! Planted bugs: deliberate defects the simulator must find, selected at run
//! time through [`crate::Config::planted_bug`] so that one build runs the
//! clean engine and each planted one side by side. (A cargo feature would
//! leak into every crate of a workspace build.) When `None` — the default —
//! each check is one predictable branch on a field already in cache.

/// A deliberate defect, for proving the simulator's checkers work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PlantedBug {
    /// SCAN forgets to visit the larger table's expansions during rehash.
    ScanSkipsRehashBuckets,
    /// Output consumed in part loses the rest of a pipelined reply.
    PartialWriteDropsReply,
    /// INCR reads, then writes back in a later step, losing concurrent updates.
    IncrNotAtomic,
    /// Keys are treated as expired one millisecond late.
    ExpiryOffByOneMs,
    /// A value handed to the background free stays reachable.
    LazyFreeStillReachable,
    /// A reply is appended to the wrong connection's output.
    ReplyToWrongConnection,
}

impl PlantedBug {
    pub const ALL: &'static [PlantedBug] = &[
        PlantedBug::ScanSkipsRehashBuckets,
        PlantedBug::PartialWriteDropsReply,
        PlantedBug::IncrNotAtomic,
        PlantedBug::ExpiryOffByOneMs,
        PlantedBug::LazyFreeStillReachable,
        PlantedBug::ReplyToWrongConnection,
    ];

    /// The name used on the command line (`--bug scan-skips-rehash-buckets`).
    pub fn name(self) -> &'static str {
        match self {
            PlantedBug::ScanSkipsRehashBuckets => "scan-skips-rehash-buckets",
            PlantedBug::PartialWriteDropsReply => "partial-write-drops-reply",
            PlantedBug::IncrNotAtomic => "incr-not-atomic",
            PlantedBug::ExpiryOffByOneMs => "expiry-off-by-one-ms",
            PlantedBug::LazyFreeStillReachable => "lazy-free-still-reachable",
            PlantedBug::ReplyToWrongConnection => "reply-to-wrong-connection",
        }
    }

    pub fn from_name(name: &str) -> Option<PlantedBug> {
        PlantedBug::ALL.iter().copied().find(|b| b.name() == name)
    }
}
