//! The owner's per-entry word: the keyspace keeps each key's LRU clock or
//! LFU counter in it, as Redis keeps it in `robj.lru`, so that eviction
//! needs no second map. [`Dict::insert_with_meta`] sets it on a new entry.

use super::Dict;

impl<V> Dict<V> {
    /// Like [`Dict::get_mut`], with the entry's meta word.
    pub fn get_mut_with_meta(&mut self, key: &[u8]) -> Option<(&mut V, &mut u32)> {
        if self.is_empty() {
            return None;
        }
        self.snapshot_before_change(key);
        self.rehash_step_if_rehashing();
        let index = self.find_key(key)?;
        let entry = self.entries.get_mut(index);
        Some((&mut entry.value, &mut entry.meta))
    }

    /// The entry's meta word (see [`Dict::insert_with_meta`]).
    pub fn meta(&self, key: &[u8]) -> Option<u32> {
        self.find_key(key).map(|index| self.entries.get(index).meta)
    }
}
