//! An intset: the sorted array of integers Redis keeps a small set of
//! integers in (`intset.c`).
//!
//! Why sorted: membership is a binary search, the array has no per-member
//! allocation, and iteration (SMEMBERS, SINTER over an intset) comes out in
//! ascending order, exactly as Redis replies.
//!
//! Why packed: as Redis's, every member takes the width of the widest one
//! (2, 4 or 8 bytes, little-endian), upgraded when a wider member arrives
//! and never narrowed, and the array is exactly as long as its members (it
//! grows by one member per insert, as `intsetResize` does; the insert's
//! shift is O(N) anyway and the array is bounded by
//! `set-max-intset-entries`). A set of small integers costs 2 bytes a
//! member, as in Redis.

/// The widths a member may take, in bytes (`INTSET_ENC_INT16/32/64`).
const WIDTHS_BYTES: [usize; 3] = [2, 4, 8];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Intset {
    /// Bytes per member: 2, 4 or 8.
    width_bytes: usize,
    /// `len * width_bytes` bytes, members ascending.
    packed: Vec<u8>,
}

impl Default for Intset {
    fn default() -> Self {
        Intset {
            width_bytes: WIDTHS_BYTES[0],
            packed: Vec::new(),
        }
    }
}

/// The narrowest width that holds `v` (Redis's `_intsetValueEncoding`).
fn width_of(v: i64) -> usize {
    if i16::try_from(v).is_ok() {
        2
    } else if i32::try_from(v).is_ok() {
        4
    } else {
        8
    }
}

impl Intset {
    pub fn new() -> Self {
        Intset::default()
    }

    pub fn len(&self) -> usize {
        self.packed.len() / self.width_bytes
    }

    pub fn is_empty(&self) -> bool {
        self.packed.is_empty()
    }

    /// The member at `index` (which must be below `len`).
    fn at(&self, index: usize) -> i64 {
        let w = self.width_bytes;
        let b = &self.packed[index * w..index * w + w];
        match w {
            2 => i16::from_le_bytes([b[0], b[1]]) as i64,
            4 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as i64,
            _ => i64::from_le_bytes(b.try_into().expect("8 bytes")),
        }
    }

    /// Where `v` is, or where it would go (`intsetSearch`).
    fn search(&self, v: i64) -> Result<usize, usize> {
        if width_of(v) > self.width_bytes {
            // Wider than every member: it is past one end.
            return Err(if v < 0 { 0 } else { self.len() });
        }
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.at(mid).cmp(&v) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    pub fn contains(&self, v: i64) -> bool {
        self.search(v).is_ok()
    }

    /// Inserts `v`; returns whether it was new. O(N) for the shift (and an
    /// upgrade rewrites every member), as in Redis.
    pub fn insert(&mut self, v: i64) -> bool {
        let at = match self.search(v) {
            Ok(_) => return false,
            Err(at) => at,
        };
        let width = width_of(v).max(self.width_bytes);
        if width > self.width_bytes {
            self.upgrade(width);
        }
        let mut bytes = [0u8; 8];
        match width {
            2 => bytes[..2].copy_from_slice(&(v as i16).to_le_bytes()),
            4 => bytes[..4].copy_from_slice(&(v as i32).to_le_bytes()),
            _ => bytes.copy_from_slice(&v.to_le_bytes()),
        }
        self.packed.reserve_exact(width);
        let offset = at * width;
        self.packed
            .splice(offset..offset, bytes[..width].iter().copied());
        debug_assert_eq!(self.packed.len() % self.width_bytes, 0);
        true
    }

    /// Rewrites every member at `width_bytes` (`intsetUpgradeAndAdd`).
    fn upgrade(&mut self, width_bytes: usize) {
        debug_assert!(WIDTHS_BYTES.contains(&width_bytes) && width_bytes > self.width_bytes);
        let mut packed = Vec::with_capacity(self.len() * width_bytes + width_bytes);
        for i in 0..self.len() {
            let v = self.at(i);
            packed.extend_from_slice(&v.to_le_bytes()[..width_bytes]);
        }
        self.packed = packed;
        self.width_bytes = width_bytes;
    }

    pub fn remove(&mut self, v: i64) -> bool {
        match self.search(v) {
            Ok(at) => {
                let w = self.width_bytes;
                self.packed.drain(at * w..at * w + w);
                self.packed.shrink_to_fit();
                true
            }
            Err(_) => false,
        }
    }

    /// The member at `index` in ascending order.
    pub fn get(&self, index: usize) -> Option<i64> {
        (index < self.len()).then(|| self.at(index))
    }

    /// Members in ascending order.
    pub fn iter(&self) -> Iter<'_> {
        Iter { set: self, next: 0 }
    }

    /// Heap bytes allocated for the array.
    pub fn capacity_bytes(&self) -> usize {
        self.packed.capacity()
    }
}

/// Members of an [`Intset`] in ascending order.
#[derive(Clone)]
pub struct Iter<'a> {
    set: &'a Intset,
    next: usize,
}

impl Iterator for Iter<'_> {
    type Item = i64;

    fn next(&mut self) -> Option<i64> {
        let v = self.set.get(self.next)?;
        self.next += 1;
        Some(v)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.set.len() - self.next;
        (left, Some(left))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sorted_unique() {
        let mut s = Intset::new();
        for v in [5, -3, 9, 5, i64::MIN, i64::MAX] {
            s.insert(v);
        }
        assert_eq!(s.iter().collect::<Vec<_>>(), [i64::MIN, -3, 5, 9, i64::MAX]);
        assert!(s.remove(5));
        assert!(!s.remove(5));
        assert!(s.contains(-3));
        assert!(!s.contains(5));
        assert_eq!(s.get(1), Some(-3));
    }

    #[test]
    fn small_members_take_two_bytes_and_widen_once() {
        let mut s = Intset::new();
        for v in 0..100 {
            s.insert(v);
        }
        assert_eq!(s.capacity_bytes(), 200);
        assert!(s.insert(-40_000));
        assert_eq!(s.capacity_bytes(), 101 * 4);
        assert_eq!(s.get(0), Some(-40_000));
        assert!(s.insert(1 << 40));
        assert_eq!(s.capacity_bytes(), 102 * 8);
        assert_eq!(s.get(101), Some(1 << 40));
        // Width is never narrowed, as in Redis.
        assert!(s.remove(1 << 40) && s.remove(-40_000));
        assert_eq!(s.capacity_bytes(), 100 * 8);
        assert!(!s.contains(i64::MAX) && !s.contains(i64::MIN) && s.contains(99));
    }

    proptest! {
        #[test]
        fn behaves_as_a_sorted_set(ops in proptest::collection::vec(
            (any::<bool>(), prop_oneof![any::<i16>().prop_map(i64::from),
                any::<i32>().prop_map(i64::from), any::<i64>(), -3i64..3]), 0..200)) {
            let mut s = Intset::new();
            let mut model = std::collections::BTreeSet::new();
            for (add, v) in ops {
                if add {
                    prop_assert_eq!(s.insert(v), model.insert(v));
                } else {
                    prop_assert_eq!(s.remove(v), model.remove(&v));
                }
                prop_assert_eq!(s.len(), model.len());
                prop_assert!(model.iter().copied().eq(s.iter()));
                prop_assert!(model.iter().all(|&m| s.contains(m)));
            }
        }
    }
}
