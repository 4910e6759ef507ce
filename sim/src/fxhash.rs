//! A small, fixed-key hasher for the checkers' hash tables (the FxHash
//! mixing step used by rustc). Checkers hash millions of short keys per
//! run; SipHash with per-process random keys costs several times more and
//! buys nothing here: the inputs come from our own seeded runs, not from an
//! adversary. Fixed keys also keep every table's behaviour a function of
//! the seed, which determinism wants anyway.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// FxHash's multiplier (from Firefox, also used by rustc).
const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// One word at a time: rotate, xor, multiply.
#[derive(Clone, Copy, Debug, Default)]
pub struct FxHasher {
    hash: u64,
}

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        // Eight bytes per step; the tail is padded with zeros (the length
        // is hashed separately by `Hash for [u8]`).
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let tail = chunks.remainder();
        if !tail.is_empty() {
            let mut word = [0u8; 8];
            word[..tail.len()].copy_from_slice(tail);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.add(n as u64);
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.add(n as u64);
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // A multiply carries entropy only upwards, and hashbrown picks the
        // bucket from the low bits: bring the well-mixed high bits down
        // (as rustc-hash 2 does), or small integer keys cluster.
        self.hash.rotate_left(26)
    }
}

pub type FxBuildHasher = BuildHasherDefault<FxHasher>;
pub type FxHashMap<K, V> = HashMap<K, V, FxBuildHasher>;
pub type FxHashSet<T> = HashSet<T, FxBuildHasher>;

#[cfg(test)]
mod tests {
    use std::hash::{BuildHasher, Hash};

    use super::FxBuildHasher;

    #[test]
    fn hashes_are_fixed_and_separate_short_keys() {
        let h = |v: &[u8]| FxBuildHasher::default().hash_one(v);
        assert_eq!(h(b"key:1"), h(b"key:1"));
        assert_ne!(h(b"key:1"), h(b"key:2"));
        assert_ne!(h(b"a"), h(b"a\0"), "the length is part of the hash");
        let pair = |d: usize, k: &[u8]| {
            let mut s = FxBuildHasher::default().build_hasher();
            (d, k).hash(&mut s);
            std::hash::Hasher::finish(&s)
        };
        assert_ne!(pair(0, b"k"), pair(1, b"k"));
    }
}
