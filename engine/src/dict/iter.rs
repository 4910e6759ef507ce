//! Iteration over every entry in table order, which is deterministic
//! given the seed and the operations.

use super::{Dict, NIL};

impl<V> Dict<V> {
    /// All entries in a deterministic order (table order).
    ///
    /// Buckets of the main table in index order, each chain from its head,
    /// then the rehash target's buckets the same way.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &V)> + '_ {
        Iter {
            dict: self,
            table: 0,
            bucket: 0,
            entry: NIL,
            remaining: self.len(),
        }
    }
}

/// The iterator behind [`Dict::iter`].
struct Iter<'a, V> {
    dict: &'a Dict<V>,
    table: usize,
    /// The next bucket of `table` to start.
    bucket: usize,
    /// The next entry of the current chain, or [`NIL`].
    entry: u32,
    remaining: usize,
}

impl<'a, V> Iterator for Iter<'a, V> {
    type Item = (&'a [u8], &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        // Each pass either yields or advances one bucket, so this ends after
        // at most every bucket of both tables.
        loop {
            if self.entry != NIL {
                let entry = self.dict.entries.get(self.entry);
                self.entry = entry.next;
                self.remaining -= 1;
                return Some((&entry.key, &entry.value));
            }
            if self.remaining == 0 {
                return None;
            }
            let table = &self.dict.tables[self.table];
            if self.bucket < table.len() {
                self.entry = table[self.bucket];
                self.bucket += 1;
            } else if self.table == 0 {
                self.table = 1;
                self.bucket = 0;
            } else {
                debug_assert!(false, "dict: fewer entries in the tables than len");
                return None;
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}
