//! The dict's structural invariants, asserted by [`Dict::check_invariants`]
//! (the dict's unit tests after every operation, the engine's
//! `check_invariants` over the keyspace after every simulator input).

use super::slab::{CHUNK_LEN, CHUNK_MASK, CHUNK_SHIFT};
use super::{bucket_of, Dict, NIL, TABLE_SIZE_MIN};

impl<V> Dict<V> {
    /// Asserts every structural invariant, with a message naming what
    /// broke: both tables' sizes and counts, every entry in the bucket its
    /// stored hash names and that hash the key's, every slab entry chained
    /// exactly once, no entry left below the rehash index, the key-byte
    /// total and the slab's chunk layout. O(len + buckets); read-only.
    pub fn check_invariants(&self) {
        let len = self.len();
        if let Some(snap) = &self.snapshot.0 {
            snap.check(len);
        }
        let rehashing = self.is_rehashing();
        assert_eq!(
            len,
            self.used[0] + self.used[1],
            "dict: {len} slab entries but the tables count {} + {}",
            self.used[0],
            self.used[1]
        );
        if rehashing {
            assert!(
                self.rehash_index <= self.tables[0].len(),
                "dict: rehash index {} past the old table's {} buckets",
                self.rehash_index,
                self.tables[0].len()
            );
            assert!(
                self.used[0] > 0,
                "dict: rehashing with nothing left in the old table"
            );
        } else {
            assert_eq!(self.used[1], 0, "dict: entries counted in no table");
            assert_eq!(
                self.rehash_index, 0,
                "dict: rehash index {} while not rehashing",
                self.rehash_index
            );
        }
        let mut seen = vec![false; len];
        let mut key_bytes = 0;
        for table in 0..2 {
            key_bytes += self.check_table(table, &mut seen);
        }
        if let Some(lost) = seen.iter().position(|&s| !s) {
            panic!("dict: slab entry {lost} of {len} is in no chain");
        }
        assert_eq!(
            key_bytes, self.key_bytes,
            "dict: keys hold {key_bytes} bytes but the total says {}",
            self.key_bytes
        );
        self.check_slab();
    }

    /// One table's buckets and chains; returns the key bytes chained.
    fn check_table(&self, table: usize, seen: &mut [bool]) -> usize {
        let size = self.tables[table].len();
        assert!(
            size == 0 || (size.is_power_of_two() && size >= TABLE_SIZE_MIN),
            "dict: table {table} has {size} buckets, not a power of two from {TABLE_SIZE_MIN}"
        );
        let moved = if table == 0 && self.is_rehashing() {
            self.rehash_index
        } else {
            0
        };
        let (mut chained, mut key_bytes) = (0, 0);
        for (bucket, &head) in self.tables[table].iter().enumerate() {
            assert!(
                bucket >= moved || head == NIL,
                "dict: bucket {bucket} of the old table is below the rehash index {moved} \
                 but not empty"
            );
            let mut index = head;
            while index != NIL {
                assert!(
                    (index as usize) < seen.len(),
                    "dict: table {table} bucket {bucket} chains slab index {index} past the \
                     slab's {} entries",
                    seen.len()
                );
                assert!(
                    !seen[index as usize],
                    "dict: slab entry {index} is chained twice (a cycle or a shared tail)"
                );
                seen[index as usize] = true;
                let entry = self.entries.get(index);
                assert_eq!(
                    entry.hash,
                    self.hash_key(&entry.key),
                    "dict: slab entry {index} stores a hash that is not its key's"
                );
                assert_eq!(
                    bucket_of(entry.hash, size),
                    bucket,
                    "dict: slab entry {index} is in table {table} bucket {bucket}, but its hash \
                     names bucket {}",
                    bucket_of(entry.hash, size)
                );
                key_bytes += entry.key.len();
                chained += 1;
                index = entry.next;
            }
        }
        assert_eq!(
            chained, self.used[table],
            "dict: table {table} chains {chained} entries but counts {}",
            self.used[table]
        );
        key_bytes
    }

    /// Every chunk before the last non-empty one is full; at most one empty
    /// spare follows.
    fn check_slab(&self) {
        let len = self.len();
        let full = len >> CHUNK_SHIFT;
        for (c, chunk) in self.entries.chunks.iter().enumerate() {
            let want_ok = match c.cmp(&full) {
                std::cmp::Ordering::Less => chunk.len() == CHUNK_LEN,
                std::cmp::Ordering::Equal => chunk.len() == len & CHUNK_MASK as usize,
                std::cmp::Ordering::Greater => chunk.is_empty() && c == full + 1,
            };
            assert!(
                want_ok,
                "dict: slab chunk {c} holds {} entries, which does not fit {len} entries",
                chunk.len()
            );
        }
    }
}

#[cfg(test)]
impl<V> Dict<V> {
    /// Flips a bit of the first entry's stored hash: lets the engine's
    /// invariant tests corrupt a keyspace dict.
    pub(crate) fn corrupt_first_hash(&mut self) {
        self.entries.get_mut(0).hash ^= 1 << 40;
    }
}

#[cfg(test)]
mod tests {
    use super::super::slab::Entry;
    use super::*;

    fn filled(len: u64) -> Dict<u64> {
        let mut dict = Dict::new(7);
        for i in 0..len {
            dict.insert(format!("k:{i}").into_bytes().into(), i);
        }
        dict
    }

    /// A dict in the middle of a rehash.
    fn rehashing() -> Dict<u64> {
        let mut dict = filled(64);
        while !dict.is_rehashing() {
            dict.insert(b"grow".to_vec().into(), 0);
            dict.remove(b"grow");
            let n = dict.len() as u64;
            dict.insert(format!("more:{n}").into_bytes().into(), n);
        }
        dict.check_invariants();
        dict
    }

    #[test]
    #[should_panic(expected = "dict: 3 slab entries but the tables count 4 + 0")]
    fn a_wrong_total_is_caught() {
        let mut dict = filled(3);
        dict.used[0] += 1;
        dict.check_invariants();
    }

    #[test]
    #[should_panic(expected = "dict: table 0 chains")]
    fn a_count_in_the_wrong_table_is_caught() {
        let mut dict = rehashing();
        dict.used[0] -= 1;
        dict.used[1] += 1;
        dict.check_invariants();
    }

    #[test]
    #[should_panic(expected = "but its hash names bucket")]
    fn an_entry_in_the_wrong_bucket_is_caught() {
        let mut dict = filled(9);
        // Move one chain's head to the next bucket, with its hash unchanged.
        let size = dict.tables[0].len();
        let bucket = (0..size)
            .find(|&b| dict.tables[0][b] != NIL)
            .expect("a chain");
        let head = dict.tables[0][bucket];
        let entry: &mut Entry<u64> = dict.entries.get_mut(head);
        let next = entry.next;
        let target = (bucket + 1) % size;
        entry.next = dict.tables[0][target];
        dict.tables[0][target] = head;
        dict.tables[0][bucket] = next;
        dict.check_invariants();
    }

    #[test]
    #[should_panic(expected = "stores a hash that is not its key's")]
    fn a_stale_hash_is_caught() {
        let mut dict = filled(3);
        dict.entries.get_mut(0).hash ^= 1 << 40;
        dict.check_invariants();
    }

    #[test]
    #[should_panic(expected = "is below the rehash index")]
    fn an_entry_left_behind_by_the_rehash_is_caught() {
        let mut dict = rehashing();
        // Pretend the rehash already moved one more non-empty bucket.
        let first_full = (dict.rehash_index..dict.tables[0].len())
            .find(|&b| dict.tables[0][b] != NIL)
            .expect("the old table holds entries");
        dict.rehash_index = first_full + 1;
        dict.check_invariants();
    }

    #[test]
    #[should_panic(expected = "past the old table's")]
    fn a_rehash_index_out_of_bounds_is_caught() {
        let mut dict = rehashing();
        dict.rehash_index = dict.tables[0].len() + 1;
        dict.check_invariants();
    }

    #[test]
    #[should_panic(expected = "is chained twice")]
    fn a_cycle_is_caught() {
        let mut dict = filled(3);
        let size = dict.tables[0].len();
        let bucket = (0..size)
            .find(|&b| dict.tables[0][b] != NIL)
            .expect("a chain");
        let head = dict.tables[0][bucket];
        dict.entries.get_mut(head).next = head;
        dict.check_invariants();
    }

    #[test]
    fn a_dict_through_a_rehash_passes() {
        let mut dict = rehashing();
        while dict.is_rehashing() {
            dict.rehash_steps(1);
            dict.check_invariants();
        }
    }
}
