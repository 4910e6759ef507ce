//! The SCAN cursor: Redis's reverse-binary cursor, which stays valid across
//! any number of grows, shrinks and rehashes.

use super::{Dict, NIL};

impl<V> Dict<V> {
    /// Calls `visit` for every entry in the bucket that `cursor` names (and,
    /// while the dict rehashes, in every bucket of the larger table that it
    /// expands to) and returns the next cursor, 0 when the iteration is
    /// complete. Start with cursor 0.
    ///
    /// # The guarantee
    ///
    /// An entry present from the call with cursor 0 until the call that
    /// returns 0 is visited at least once, however the table grows, shrinks
    /// or rehashes between calls. An entry may be visited more than once
    /// (after a shrink, or when it sits in both tables' scanned buckets
    /// across calls). Entries added or removed during the iteration may or
    /// may not be visited. The iteration ends after at most as many calls
    /// as there are buckets in the largest table that exists during it.
    /// The cursor carries all the state: nothing is stored in the dict, so
    /// any number of iterations may run at once and an abandoned one costs
    /// nothing.
    ///
    /// # How the cursor works (Pieter Noordhuis's algorithm, as in Redis)
    ///
    /// With a table of `2^k` buckets, a key lives in bucket `hash & mask`
    /// where `mask = 2^k - 1`: its *low* k bits pick the bucket. If the
    /// cursor counted 0, 1, 2, ... a resize would break it: after growing,
    /// bucket 1 of the old table has become buckets 1 and 1+2^k of the new
    /// one, scattered across the range already scanned and the range still
    /// ahead.
    ///
    /// So the cursor counts with its bits *reversed*: it increments the
    /// highest bit of the mask first and carries towards bit 0. For 8
    /// buckets (mask `111`) the visiting order is
    ///
    /// ```text
    /// 000 100 010 110 001 101 011 111      (0 4 2 6 1 5 3 7), then 0: done
    /// ```
    ///
    /// Read each cursor backwards and it counts 0, 1, 2, ..., 7. Reading
    /// hashes backwards the same way, every bucket covers one contiguous
    /// range of the "reversed hash" space, and the cursor sweeps that space
    /// from left to right. A bigger table only splits each range into
    /// finer ranges, a smaller one merges neighbours; neither moves a range.
    /// So after any call, every hash whose reversed value is below the
    /// reversed cursor has been covered, whatever the table size was at the
    /// time. Worked examples:
    ///
    /// - **Growing.** With 8 buckets we have visited `000 100 010` and hold
    ///   cursor `110`. The table grows to 16 buckets (mask `1111`). The
    ///   keys we visited now live in `0000 1000 0100 1100 0010 1010`, the
    ///   two expansions (`?000`, `?100`, `?010`) of each visited bucket.
    ///   The 16-bucket order is
    ///   `0000 1000 0100 1100 0010 1010 | 0110 1110 0001 1001 ...`: those
    ///   six are exactly the ones before our cursor `0110`, so we continue
    ///   at `0110` and miss nothing, repeat nothing.
    /// - **Shrinking.** With 16 buckets we have visited
    ///   `0000 1000 0100 1100 0010 1010 0110` and hold cursor `1110`. The
    ///   table shrinks to 8 (mask `111`). Cursor `1110` masks to bucket `110`,
    ///   which now holds the hashes ending `0110` (already visited: they
    ///   will be returned again) and `1110` (not yet visited). The next
    ///   cursor, computed with the small mask, is `001`, and the iteration
    ///   goes on with `001 101 011 111`. Nothing is missed; some entries are
    ///   returned twice.
    /// - **Two tables during a rehash.** Any entry is in one of the two
    ///   tables, and which one changes as the rehash progresses. So each
    ///   call visits the cursor's bucket in the *smaller* table and then
    ///   every expansion of it in the larger table, advancing the cursor
    ///   through the larger table's extra bits until they wrap. With
    ///   tables of 8 and 16 and cursor `110`: visit small bucket `110`,
    ///   then large buckets `0110` and `1110`, and return `001`. Seen from
    ///   the cursor, this is exactly one bucket of the small table, so the
    ///   single-table reasoning above still holds.
    ///
    /// The increment itself: set every bit above the mask (so that the
    /// carry runs through them and out of the word), reverse the bits, add
    /// one, reverse back. Bits above the mask come out as zero, so the
    /// returned cursor is always a bucket index of the table it was computed
    /// for, and its reversed value strictly increases from call to call
    /// until it wraps to 0, which bounds the number of calls.
    ///
    /// The cost of one call is one bucket of the smaller table plus its
    /// expansions in the larger one; callers that want COUNT semantics call
    /// it repeatedly until they have enough entries.
    pub fn scan(&self, cursor: u64, mut visit: impl FnMut(&[u8], &V)) -> u64 {
        self.scan_buckets(cursor, |bucket| self.visit_bucket(bucket, &mut visit))
    }

    /// The buckets one [`Dict::scan`] call visits, in order, each handed to
    /// `each` (which visits it with [`Dict::visit_bucket`], or not); returns
    /// the next cursor, 0 when the iteration is complete.
    pub(crate) fn scan_buckets(&self, cursor: u64, mut each: impl FnMut(ScanBucket)) -> u64 {
        if self.is_empty() {
            return 0;
        }
        let mut cursor = cursor;
        if !self.is_rehashing() {
            let mask = (self.tables[0].len() - 1) as u64;
            each(ScanBucket {
                table: 0,
                index: (cursor & mask) as usize,
                expansion: None,
            });
            cursor = next_cursor(cursor, mask);
        } else {
            let (small, large) = if self.tables[0].len() < self.tables[1].len() {
                (0, 1)
            } else {
                (1, 0)
            };
            let mask_small = (self.tables[small].len() - 1) as u64;
            let mask_large = (self.tables[large].len() - 1) as u64;
            each(ScanBucket {
                table: small,
                index: (cursor & mask_small) as usize,
                expansion: None,
            });
            // Runs (large size / small size) times: the bits of the larger
            // mask that the smaller one lacks count up until they wrap.
            let mut expansion = 0;
            loop {
                each(ScanBucket {
                    table: large,
                    index: (cursor & mask_large) as usize,
                    expansion: Some(expansion),
                });
                expansion += 1;
                cursor = next_cursor(cursor, mask_large);
                if cursor & (mask_small ^ mask_large) == 0 {
                    break;
                }
            }
        }
        cursor
    }

    /// Calls `visit` for every entry of `bucket`, in chain order.
    pub(crate) fn visit_bucket(&self, bucket: ScanBucket, visit: &mut impl FnMut(&[u8], &V)) {
        let mut index = self.tables[bucket.table][bucket.index];
        while index != NIL {
            let entry = self.entries.get(index);
            visit(&entry.key, &entry.value);
            index = entry.next;
        }
    }
}

/// One bucket a SCAN call visits (see [`Dict::scan_buckets`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ScanBucket {
    table: usize,
    index: usize,
    /// `None` for the cursor's bucket in the (smaller) table; while the
    /// dict rehashes, `Some(i)` for the `i`th of its expansions in the
    /// larger table.
    pub(crate) expansion: Option<usize>,
}

/// The SCAN cursor after `cursor` for a table with `mask`: increments the
/// bit-reversed cursor within the mask's bits.
#[inline]
pub(super) fn next_cursor(cursor: u64, mask: u64) -> u64 {
    (cursor | !mask)
        .reverse_bits()
        .wrapping_add(1)
        .reverse_bits()
}
