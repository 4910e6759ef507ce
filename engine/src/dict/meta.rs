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

    /// [`Dict::get_mut_with_meta`] then, on a miss, [`Dict::insert_with_meta`],
    /// hashing `key` once: the keyspace's SET of a key that may be new.
    /// A hit replaces the value and hands `touch` the entry's meta word; a
    /// miss adds `key` with `new_meta`. The snapshot barriers and the
    /// incremental rehash steps are those of the two calls, in their order
    /// (a key missing before a rehash step is missing after it, and a
    /// step never changes a hash), so the table ends as they leave it.
    pub fn upsert_with_meta(
        &mut self,
        key: &[u8],
        value: V,
        new_meta: u32,
        touch: impl FnOnce(&mut u32),
    ) -> Option<V> {
        if self.is_empty() {
            return self.insert_with_meta(key.into(), value, new_meta);
        }
        self.snapshot_before_change(key);
        self.rehash_step_if_rehashing();
        let hash = self.hash_key(key);
        if let Some(index) = self.find(key, hash) {
            let entry = self.entries.get_mut(index);
            touch(&mut entry.meta);
            return Some(std::mem::replace(&mut entry.value, value));
        }
        self.snapshot_before_change(key);
        self.rehash_step_if_rehashing();
        debug_assert!(self.find(key, hash).is_none());
        self.push_new(key.into(), value, new_meta, hash);
        None
    }

    /// The entry's meta word (see [`Dict::insert_with_meta`]).
    pub fn meta(&self, key: &[u8]) -> Option<u32> {
        self.find_key(key).map(|index| self.entries.get(index).meta)
    }
}
