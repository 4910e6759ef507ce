//! An intset: the sorted array of integers Redis keeps a small set of
//! integers in (`intset.c`).
//!
//! Why sorted: membership is a binary search, the array holds 8 bytes per
//! member with no per-member allocation, and iteration (SMEMBERS, SINTER
//! over an intset) comes out in ascending order, exactly as Redis replies.
//! Redis also narrows the element width (2, 4 or 8 bytes) while every
//! member fits; that only changes the memory figure, so this keeps i64s.

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Intset {
    values: Vec<i64>,
}

impl Intset {
    pub fn new() -> Self {
        Intset::default()
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    pub fn contains(&self, v: i64) -> bool {
        self.values.binary_search(&v).is_ok()
    }

    /// Inserts `v`; returns whether it was new. O(N) for the shift, as in
    /// Redis (the array is bounded by `set-max-intset-entries`).
    pub fn insert(&mut self, v: i64) -> bool {
        match self.values.binary_search(&v) {
            Ok(_) => false,
            Err(at) => {
                self.values.insert(at, v);
                true
            }
        }
    }

    pub fn remove(&mut self, v: i64) -> bool {
        match self.values.binary_search(&v) {
            Ok(at) => {
                self.values.remove(at);
                if self.values.capacity() > 2 * self.values.len() + 16 {
                    self.values.shrink_to_fit();
                }
                true
            }
            Err(_) => false,
        }
    }

    /// The member at `index` in ascending order.
    pub fn get(&self, index: usize) -> Option<i64> {
        self.values.get(index).copied()
    }

    /// Members in ascending order.
    pub fn as_slice(&self) -> &[i64] {
        &self.values
    }

    /// Heap bytes allocated for the array.
    pub fn capacity_bytes(&self) -> usize {
        self.values.capacity() * std::mem::size_of::<i64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_unique() {
        let mut s = Intset::new();
        for v in [5, -3, 9, 5, i64::MIN, i64::MAX] {
            s.insert(v);
        }
        assert_eq!(s.as_slice(), &[i64::MIN, -3, 5, 9, i64::MAX]);
        assert!(s.remove(5));
        assert!(!s.remove(5));
        assert!(s.contains(-3));
        assert!(!s.contains(5));
        assert_eq!(s.get(1), Some(-3));
    }
}
