//! Growing, shrinking and the incremental rehash between two tables, with
//! budgets counted in buckets so that the table's shape is a pure function
//! of the seed and the operations.

use std::mem;

use super::{Dict, NIL, TABLE_SIZE_MIN};

/// A table below this fill, in percent, is shrunk (Redis's
/// `HASHTABLE_MIN_FILL`).
const FILL_PERCENT_MIN: usize = 10;

/// A rehash step that finds only empty buckets gives up after this many per
/// bucket of budget, so one step's work stays bounded even in a sparse table
/// (Redis's `empty_visits = n * 10`).
pub(super) const EMPTY_VISITS_PER_BUCKET: usize = 10;

impl<V> Dict<V> {
    /// Moves up to `max_buckets` buckets from the old table to the new one.
    /// Returns the work done (buckets visited + entries moved).
    ///
    /// Empty buckets count as visited; at most `10 * max_buckets` of them are
    /// skipped per call, so the work is bounded even in a sparse table.
    pub fn rehash_steps(&mut self, max_buckets: usize) -> usize {
        if !self.is_rehashing() {
            return 0;
        }
        let mut work = 0;
        let mut buckets_left = max_buckets;
        let mut empty_visits_left = max_buckets.saturating_mul(EMPTY_VISITS_PER_BUCKET);
        let mask_new = self.tables[1].len() - 1;
        while buckets_left > 0 && self.used[0] > 0 {
            // Some bucket at or after rehash_index is non-empty because
            // used[0] > 0, so this stays inside the table.
            while self.tables[0][self.rehash_index] == NIL {
                self.rehash_index += 1;
                work += 1;
                empty_visits_left -= 1;
                if empty_visits_left == 0 {
                    return work;
                }
            }
            let mut index = mem::replace(&mut self.tables[0][self.rehash_index], NIL);
            while index != NIL {
                let entry = self.entries.get_mut(index);
                let next = entry.next;
                let bucket = entry.hash as usize & mask_new;
                entry.next = self.tables[1][bucket];
                self.tables[1][bucket] = index;
                self.used[0] -= 1;
                self.used[1] += 1;
                work += 1;
                index = next;
            }
            self.rehash_index += 1;
            work += 1;
            buckets_left -= 1;
        }
        if self.used[0] == 0 {
            self.finish_rehash();
        }
        work
    }

    /// Starts shrinking when the table is under 10% full (Redis's
    /// HASHTABLE_MIN_FILL). Returns whether a resize started.
    ///
    /// The new size is the smallest power of two holding every entry (at
    /// least 4). Nothing happens while a rehash is already running.
    pub fn shrink_if_needed(&mut self) -> bool {
        if self.is_rehashing() {
            return false;
        }
        let size = self.tables[0].len();
        if size > TABLE_SIZE_MIN && self.len().saturating_mul(100) / size < FILL_PERCENT_MIN {
            return self.start_resize(table_size_for(self.len()));
        }
        false
    }

    pub fn is_rehashing(&self) -> bool {
        !self.tables[1].is_empty()
    }

    pub(super) fn rehash_step_if_rehashing(&mut self) {
        if self.is_rehashing() {
            self.rehash_steps(1);
        }
    }

    /// Starts a grow when the main table holds one entry per bucket; creates
    /// the first table on the first insert.
    pub(super) fn expand_if_needed(&mut self) {
        if self.is_rehashing() {
            return;
        }
        let size = self.tables[0].len();
        if size == 0 {
            self.tables[0] = vec![NIL; TABLE_SIZE_MIN];
        } else if self.used[0] >= size {
            self.start_resize(table_size_for(self.len() + 1));
        }
    }

    /// Allocates the rehash target of `size` buckets. Returns whether a
    /// resize started.
    fn start_resize(&mut self, size: usize) -> bool {
        debug_assert!(!self.is_rehashing());
        debug_assert!(size.is_power_of_two() && size >= TABLE_SIZE_MIN);
        if size == self.tables[0].len() {
            return false;
        }
        let table = vec![NIL; size];
        if self.used[0] == 0 {
            // Nothing to move: swap the table in at once.
            self.tables[0] = table;
        } else {
            self.tables[1] = table;
            self.rehash_index = 0;
        }
        true
    }

    pub(super) fn finish_rehash(&mut self) {
        debug_assert!(self.is_rehashing() && self.used[0] == 0);
        self.tables[0] = mem::take(&mut self.tables[1]);
        self.used = [self.used[1], 0];
        self.rehash_index = 0;
    }
}

/// The table size for `len` entries: the smallest power of two holding them,
/// at least [`TABLE_SIZE_MIN`].
fn table_size_for(len: usize) -> usize {
    len.max(TABLE_SIZE_MIN).next_power_of_two()
}
