//! The hash table behind the keyspace and the hash, set and zset values:
//! Redis's dict (`src/dict.c`) in safe Rust.
//!
//! What it keeps from Redis:
//!
//! - Power-of-two bucket tables with chaining. A key lives in bucket
//!   `hash & (size - 1)`.
//! - Two tables during a resize. Growing or shrinking allocates a second table
//!   and moves the first one over *incrementally*, one bucket per insert,
//!   remove or `get_mut`, plus whatever the host grants through
//!   [`Dict::rehash_steps`]. No single operation pays for a whole resize,
//!   which is what keeps a big keyspace from blocking every other client.
//! - The reverse-binary SCAN cursor ([`Dict::scan`]), which stays valid
//!   across any number of resizes.
//!
//! What differs, and why:
//!
//! - Budgets are counted in buckets, never in wall time (Redis rehashes "for
//!   up to 1 ms"), so the table's shape is a pure function of the seed and
//!   the operations.
//! - The hash is SipHash-1-3 keyed from the seed given to [`Dict::new`]: the
//!   same seed and the same operations give the same bucket layout, SCAN
//!   order and iteration order on every machine.
//! - Entries live in a dense slab addressed by `u32` indices instead of
//!   individually allocated nodes. Chains are `next` indices; a table is a
//!   `Vec<u32>` of chain heads. Removing an entry moves the slab's last entry
//!   into the hole (and re-points the one link that referred to it), so the
//!   slab never has holes: memory follows the live size, and
//!   [`Dict::random_key`] is a uniform O(1) draw. The slab is split into
//!   fixed-size chunks so that growing it never copies the whole table at
//!   once. Each entry stores its hash, so a rehash never re-hashes keys.
//!
//! The code is split by concern: entry storage in `slab`, growing,
//! shrinking and incremental rehashing in `rehash`, the SCAN cursor in
//! `scan`, table-order iteration in `iter` and the owner's per-entry word
//! (LRU clock or LFU counter) in `meta`. This file keeps the tables, the
//! hashing and the lookups, inserts and removes that every concern shares.

use std::mem;

use rand::{Rng, RngCore};
use siphasher::sip::SipHasher13;

mod invariants;
mod iter;
mod meta;
mod rehash;
mod scan;
mod slab;
mod snapshot;
#[cfg(test)]
mod snapshot_tests;
#[cfg(test)]
mod tests;

use slab::{Entry, Slab};
pub use snapshot::{CopyValue, Released, Saved};

/// Marks an empty bucket and the end of a chain.
const NIL: u32 = u32::MAX;

/// The size of a table when the first key arrives, and the smallest size a
/// shrink goes to (Redis's `DICT_HT_INITIAL_SIZE`).
const TABLE_SIZE_MIN: usize = 4;

/// The most entries a dict can hold: slab indices are `u32` and [`NIL`] is
/// reserved.
const LEN_MAX: usize = NIL as usize;

/// A hash table keyed by byte strings.
///
/// Deterministic: given the seed and the sequence of calls, bucket layout,
/// [`Dict::scan`] cursors, [`Dict::iter`] order and [`Dict::random_key`]
/// (given the rng) are identical on every machine.
#[derive(Debug, Clone)]
pub struct Dict<V> {
    seed: u64,
    hasher: SipHasher13,
    entries: Slab<V>,
    /// `tables[0]` is the main table (empty only before the first insert);
    /// `tables[1]` is the rehash target, empty when no rehash is running.
    tables: [Vec<u32>; 2],
    /// Entries chained in each table.
    used: [usize; 2],
    /// While rehashing: every bucket of `tables[0]` below this index has
    /// already been moved (and is empty).
    rehash_index: usize,
    /// Total bytes of all keys, for [`Dict::memory_estimate_bytes`].
    key_bytes: usize,
    /// The open point-in-time read, if any (see `snapshot`).
    snapshot: snapshot::Slot<V>,
}

impl<V> Dict<V> {
    /// An empty dict whose hash function is keyed by `seed`.
    pub fn new(seed: u64) -> Self {
        let mut state = seed;
        let key0 = splitmix64(&mut state);
        let key1 = splitmix64(&mut state);
        Dict {
            seed,
            hasher: SipHasher13::new_with_keys(key0, key1),
            entries: Slab::new(),
            tables: [Vec::new(), Vec::new()],
            used: [0, 0],
            rehash_index: 0,
            key_bytes: 0,
            snapshot: snapshot::Slot(None),
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len
    }

    pub fn is_empty(&self) -> bool {
        self.entries.len == 0
    }

    pub fn get(&self, key: &[u8]) -> Option<&V> {
        self.find_key(key)
            .map(|index| &self.entries.get(index).value)
    }

    /// The hash `key` has in this dict (keyed by its seed), for
    /// [`Dict::get_hashed`]: a caller that looks one key up more than once
    /// (the sizes measured before and after a command) hashes it once.
    pub fn key_hash(&self, key: &[u8]) -> u64 {
        self.hash_key(key)
    }

    /// [`Dict::get`] with `key`'s hash from [`Dict::key_hash`] of a dict
    /// with the same seed.
    pub fn get_hashed(&self, key: &[u8], hash: u64) -> Option<&V> {
        debug_assert_eq!(hash, self.hash_key(key));
        self.find(key, hash)
            .map(|index| &self.entries.get(index).value)
    }

    pub fn get_key_value(&self, key: &[u8]) -> Option<(&[u8], &V)> {
        self.find_key(key).map(|index| {
            let entry = self.entries.get(index);
            (&*entry.key, &entry.value)
        })
    }

    pub fn contains_key(&self, key: &[u8]) -> bool {
        self.find_key(key).is_some()
    }

    /// Also performs one incremental rehash step.
    pub fn get_mut(&mut self, key: &[u8]) -> Option<&mut V> {
        if self.is_empty() {
            return None;
        }
        self.snapshot_before_change(key);
        self.rehash_step_if_rehashing();
        let index = self.find_key(key)?;
        Some(&mut self.entries.get_mut(index).value)
    }

    /// Inserts or replaces; returns the previous value. Also performs one
    /// incremental rehash step, and starts a grow when the table is full
    /// (one entry per bucket on average, as Redis `_dictExpandIfNeeded`).
    /// New entries go to the new table while a rehash runs.
    ///
    /// When the key is present, the stored key is kept and `key` dropped.
    ///
    /// # Panics
    ///
    /// When the dict already holds `u32::MAX` entries.
    pub fn insert(&mut self, key: Box<[u8]>, value: V) -> Option<V> {
        self.insert_with_meta(key, value, 0)
    }

    /// [`Dict::insert`] that also sets a new entry's meta word (a replaced
    /// entry keeps its own).
    pub fn insert_with_meta(&mut self, key: Box<[u8]>, value: V, meta: u32) -> Option<V> {
        self.snapshot_before_change(&key);
        self.rehash_step_if_rehashing();
        let hash = self.hash_key(&key);
        if let Some(index) = self.find(&key, hash) {
            return Some(mem::replace(&mut self.entries.get_mut(index).value, value));
        }
        self.push_new(key, value, meta, hash);
        None
    }

    /// Adds an entry for `key`, absent, whose hash is `hash`: the end of
    /// [`Dict::insert_with_meta`] once its lookup missed.
    fn push_new(&mut self, key: Box<[u8]>, value: V, meta: u32, hash: u64) {
        assert!(self.len() < LEN_MAX, "dict: more than {LEN_MAX} entries");
        self.expand_if_needed();
        let table = usize::from(self.is_rehashing());
        let bucket = bucket_of(hash, self.tables[table].len());
        self.key_bytes += key.len();
        let index = self.entries.push(Entry {
            hash,
            next: self.tables[table][bucket],
            meta,
            key,
            value,
        });
        self.tables[table][bucket] = index;
        self.used[table] += 1;
    }

    /// Removes the key, returning it with its value. Also performs one
    /// incremental rehash step and, as Redis 7.2+ does after a delete, the
    /// [`Dict::shrink_if_needed`] check.
    pub fn remove(&mut self, key: &[u8]) -> Option<(Box<[u8]>, V)> {
        if self.is_empty() {
            return None;
        }
        self.snapshot_before_remove(key);
        self.rehash_step_if_rehashing();
        let hash = self.hash_key(key);
        let found = self.locate(key, hash)?;
        let next = self.entries.get(found.index).next;
        match found.prev {
            None => self.tables[found.table][found.bucket] = next,
            Some(prev) => self.entries.get_mut(prev).next = next,
        }
        self.used[found.table] -= 1;
        let entry = self.slab_remove(found.index);
        self.key_bytes -= entry.key.len();
        if self.is_rehashing() && self.used[0] == 0 {
            self.finish_rehash();
        }
        self.shrink_if_needed();
        Some((entry.key, entry.value))
    }

    /// The SCAN primitive: visits every entry of the bucket(s) at `cursor`
    /// Bucket counts of the main and the rehash-target table (0 when idle).
    pub fn table_sizes(&self) -> (usize, usize) {
        (self.tables[0].len(), self.tables[1].len())
    }

    /// Buckets in both tables together.
    pub fn bucket_count(&self) -> usize {
        self.tables[0].len() + self.tables[1].len()
    }

    /// A random key, drawn with `rng` (RANDOMKEY, eviction, active expiry).
    ///
    /// Uniform over the entries and O(1): the slab is dense, so this draws
    /// an index in `0..len` (one `gen_range` on `rng`). Unlike Redis's
    /// bucket-then-chain draw, long chains do not bias it.
    pub fn random_key(&self, rng: &mut dyn RngCore) -> Option<&[u8]> {
        if self.is_empty() {
            return None;
        }
        // Drawn as u64 so that the draw is the same on 32-bit hosts.
        let index = rng.gen_range(0..self.len() as u64);
        Some(&self.entries.get(index as u32).key)
    }

    /// Removes every entry, returning them as a dict (to be freed elsewhere).
    ///
    /// O(1): the returned dict takes the tables as they are (including a
    /// rehash in progress); `self` becomes a fresh empty dict with the same
    /// seed.
    ///
    /// An open snapshot read stays with `self`, its unvisited entries saved
    /// first (a dict that saves removed entries saves them all; the
    /// keyspace's owner saves what it wants before).
    pub fn take(&mut self) -> Dict<V> {
        if self.snapshot.0.is_some() {
            self.snapshot_save_all(|_| true);
        }
        let snapshot = self.snapshot_detach();
        let taken = mem::replace(self, Dict::new(self.seed));
        if let Some(snapshot) = snapshot {
            self.snapshot_attach(snapshot);
        }
        taken
    }

    /// The seed this dict's hash function is keyed by.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Bytes held by the dict itself: the struct, both tables, the slab
    /// (entries include each key's pointer and length) and the key bytes.
    /// Memory the values own on the heap and allocator overhead are not
    /// counted.
    pub fn memory_estimate_bytes(&self) -> usize {
        mem::size_of::<Self>()
            + (self.tables[0].capacity() + self.tables[1].capacity()) * mem::size_of::<u32>()
            + self.entries.chunks.capacity() * mem::size_of::<Vec<Entry<V>>>()
            + self.entries.capacity() * mem::size_of::<Entry<V>>()
            + self.key_bytes
    }

    pub(super) fn hash_key(&self, key: &[u8]) -> u64 {
        self.hasher.hash(key)
    }

    /// The slab index of `key`, searching both tables during a rehash.
    /// Like `find`, without hashing when the dict is empty.
    pub(super) fn find_key(&self, key: &[u8]) -> Option<u32> {
        if self.is_empty() {
            return None;
        }
        self.find(key, self.hash_key(key))
    }

    fn find(&self, key: &[u8], hash: u64) -> Option<u32> {
        if self.is_empty() {
            return None;
        }
        let rehashing = self.is_rehashing();
        for table in 0..2 {
            let bucket = bucket_of(hash, self.tables[table].len());
            // Buckets below rehash_index have moved to the new table.
            if table == 1 || !rehashing || bucket >= self.rehash_index {
                let mut index = self.tables[table][bucket];
                while index != NIL {
                    let entry = self.entries.get(index);
                    if entry.hash == hash && *entry.key == *key {
                        return Some(index);
                    }
                    index = entry.next;
                }
            }
            if !rehashing {
                break;
            }
        }
        None
    }

    /// Like [`Dict::find`], but also says where the link to the entry is.
    fn locate(&self, key: &[u8], hash: u64) -> Option<Location> {
        let rehashing = self.is_rehashing();
        for table in 0..2 {
            let bucket = bucket_of(hash, self.tables[table].len());
            if table == 1 || !rehashing || bucket >= self.rehash_index {
                let mut prev = None;
                let mut index = self.tables[table][bucket];
                while index != NIL {
                    let entry = self.entries.get(index);
                    if entry.hash == hash && *entry.key == *key {
                        return Some(Location {
                            table,
                            bucket,
                            prev,
                            index,
                        });
                    }
                    prev = Some(index);
                    index = entry.next;
                }
            }
            if !rehashing {
                break;
            }
        }
        None
    }

    /// Removes the already unlinked entry at `index` from the slab. The
    /// slab's last entry moves into the hole, so the link that pointed to it
    /// (a bucket head or a predecessor's `next`) is re-pointed first.
    fn slab_remove(&mut self, index: u32) -> Entry<V> {
        let last = (self.len() - 1) as u32;
        if index != last {
            let hash = self.entries.get(last).hash;
            // A rehash may leave the last entry in either table: new entries
            // go to the new table whatever their old bucket, so look in both.
            let rehashing = self.is_rehashing();
            let mut repointed = false;
            for table in 0..2 {
                let bucket = bucket_of(hash, self.tables[table].len());
                if table == 0 && rehashing && bucket < self.rehash_index {
                    continue;
                }
                let mut link = self.tables[table][bucket];
                if link == last {
                    self.tables[table][bucket] = index;
                    repointed = true;
                    break;
                }
                while link != NIL {
                    let next = self.entries.get(link).next;
                    if next == last {
                        self.entries.get_mut(link).next = index;
                        repointed = true;
                        break;
                    }
                    link = next;
                }
                if repointed || !rehashing {
                    break;
                }
            }
            debug_assert!(repointed, "dict: the last slab entry is unreachable");
        }
        self.entries.swap_remove(index)
    }
}

/// Where [`Dict::locate`] found an entry.
struct Location {
    table: usize,
    bucket: usize,
    /// The entry before it in the chain; `None` when it is the bucket head.
    prev: Option<u32>,
    index: u32,
}

/// The bucket of `hash` in a table of `size` buckets (a power of two).
#[inline]
fn bucket_of(hash: u64, size: usize) -> usize {
    debug_assert!(size.is_power_of_two());
    hash as usize & (size - 1)
}

/// Derives the SipHash keys from the seed (SplitMix64, Steele et al.).
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
