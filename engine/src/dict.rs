//! PLACEHOLDER — being replaced by the real incrementally rehashed dict with
//! the reverse-binary SCAN cursor (helper "dict"). The interface is fixed.

use std::collections::BTreeMap;

use rand::RngCore;

/// A hash table keyed by byte strings.
#[derive(Debug, Clone)]
pub struct Dict<V> {
    map: BTreeMap<Box<[u8]>, V>,
}

impl<V> Dict<V> {
    /// An empty dict whose hash function is keyed by `seed`.
    pub fn new(seed: u64) -> Self {
        let _ = seed;
        Dict {
            map: BTreeMap::new(),
        }
    }
    pub fn len(&self) -> usize {
        self.map.len()
    }
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
    pub fn get(&self, key: &[u8]) -> Option<&V> {
        self.map.get(key)
    }
    pub fn get_key_value(&self, key: &[u8]) -> Option<(&[u8], &V)> {
        self.map.get_key_value(key).map(|(k, v)| (&**k, v))
    }
    pub fn contains_key(&self, key: &[u8]) -> bool {
        self.map.contains_key(key)
    }
    /// Also performs one incremental rehash step.
    pub fn get_mut(&mut self, key: &[u8]) -> Option<&mut V> {
        self.map.get_mut(key)
    }
    /// Inserts or replaces; returns the previous value.
    pub fn insert(&mut self, key: Box<[u8]>, value: V) -> Option<V> {
        self.map.insert(key, value)
    }
    pub fn remove(&mut self, key: &[u8]) -> Option<(Box<[u8]>, V)> {
        self.map.remove_entry(key)
    }
    /// Visits the entries of the bucket(s) at `cursor` and returns the next
    /// cursor (0 when the iteration is complete).
    pub fn scan(&self, cursor: u64, mut visit: impl FnMut(&[u8], &V)) -> u64 {
        let _ = cursor;
        for (k, v) in &self.map {
            visit(k, v);
        }
        0
    }
    /// Moves up to `max_buckets` buckets from the old table to the new one.
    /// Returns the work done (buckets visited + entries moved).
    pub fn rehash_steps(&mut self, max_buckets: usize) -> usize {
        let _ = max_buckets;
        0
    }
    /// Starts shrinking when the table is under 10% full (Redis's
    /// HASHTABLE_MIN_FILL). Returns whether a resize started.
    pub fn shrink_if_needed(&mut self) -> bool {
        false
    }
    pub fn is_rehashing(&self) -> bool {
        false
    }
    /// Bucket counts of the main and the rehash-target table (0 when idle).
    pub fn table_sizes(&self) -> (usize, usize) {
        (self.map.len().next_power_of_two(), 0)
    }
    /// A random key, drawn with `rng` (RANDOMKEY, eviction, active expiry).
    pub fn random_key(&self, rng: &mut dyn RngCore) -> Option<&[u8]> {
        if self.map.is_empty() {
            return None;
        }
        let i = (rng.next_u64() % self.map.len() as u64) as usize;
        self.map.keys().nth(i).map(|k| &**k)
    }
    /// All entries in a deterministic order (table order).
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &V)> + '_ {
        self.map.iter().map(|(k, v)| (&**k, v))
    }
    /// Removes every entry, returning them as a dict (to be freed elsewhere).
    pub fn take(&mut self) -> Dict<V> {
        Dict {
            map: std::mem::take(&mut self.map),
        }
    }
}
