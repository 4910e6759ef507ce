//! The collection types stored under keys: lists, hashes, sets and sorted
//! sets, each with a compact encoding for small collections and a full one
//! past the thresholds in [`Limits`] (set by CONFIG), and streams, kept in
//! nodes as Redis's radix tree of listpacks is (see [`stream`]).
//!
//! Every type exposes the same small surface used by the keyspace code:
//! `len()`, `encoding_name()` (what OBJECT ENCODING reports),
//! `free_cost_units()` (the elements a free visits) and `size_bytes()` (an
//! O(1) running estimate of the heap bytes held, for INFO memory and MEMORY
//! USAGE).

pub mod geohash;
pub mod hash;
pub mod hll;
pub mod list;
pub mod set;
pub mod stream;
pub mod varint;
pub mod zset;

pub use hash::Hash;
pub use list::List;
pub use set::Set;
pub use stream::Stream;
pub use zset::ZSet;

/// The encoding thresholds, copied from [`crate::Config`] at each command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `hash-max-listpack-entries`.
    pub hash_max_listpack_entries: usize,
    /// `hash-max-listpack-value`.
    pub hash_max_listpack_value_bytes: usize,
    /// `list-max-listpack-size`: positive = entries per node, -1..-5 = 4..64 KB per node.
    pub list_max_listpack_size: i64,
    /// `set-max-intset-entries`.
    pub set_max_intset_entries: usize,
    /// `zset-max-listpack-entries`.
    pub zset_max_listpack_entries: usize,
    /// `zset-max-listpack-value`.
    pub zset_max_listpack_value_bytes: usize,
    /// `stream-node-max-bytes` (0: no limit but the listpack's own).
    pub stream_node_max_bytes: usize,
    /// `stream-node-max-entries` (0: no limit).
    pub stream_node_max_entries: usize,
}

impl Default for Limits {
    /// Redis 7.0's defaults (`config.c`; note the hash threshold is 512,
    /// the sorted-set one 128).
    fn default() -> Self {
        Limits {
            hash_max_listpack_entries: 512,
            hash_max_listpack_value_bytes: 64,
            list_max_listpack_size: -2,
            set_max_intset_entries: 512,
            zset_max_listpack_entries: 128,
            zset_max_listpack_value_bytes: 64,
            stream_node_max_bytes: 4096,
            stream_node_max_entries: 100,
        }
    }
}
