//! Dense entry storage: the slab that the bucket chains index into.

use std::mem;

use super::LEN_MAX;

/// Entries per slab chunk, as a power of two. Growing the slab past one
/// chunk allocates a new chunk instead of reallocating (and copying) the
/// whole slab.
pub(super) const CHUNK_SHIFT: u32 = 12;
pub(super) const CHUNK_LEN: usize = 1 << CHUNK_SHIFT;
pub(super) const CHUNK_MASK: u32 = (CHUNK_LEN as u32) - 1;

#[derive(Debug, Clone)]
pub(super) struct Entry<V> {
    /// The key's SipHash, kept so that rehashing never hashes again.
    pub(super) hash: u64,
    /// The next entry in the same bucket, or [`NIL`](super::NIL).
    pub(super) next: u32,
    /// The owner's per-entry word (the keyspace keeps each key's LRU clock
    /// or LFU counter here, as Redis keeps it in `robj.lru`). It sits in
    /// what was padding after `next`, so entries stay the same size.
    pub(super) meta: u32,
    pub(super) key: Box<[u8]>,
    pub(super) value: V,
}

/// Dense storage for entries: indices `0..len` are all live.
#[derive(Debug, Clone)]
pub(super) struct Slab<V> {
    /// Every chunk before the last non-empty one is full. At most one empty
    /// chunk is kept at the end as a spare, so that inserting and removing
    /// at a chunk boundary does not allocate and free a chunk each time.
    pub(super) chunks: Vec<Vec<Entry<V>>>,
    pub(super) len: usize,
}

impl<V> Slab<V> {
    pub(super) fn new() -> Self {
        Slab {
            chunks: Vec::new(),
            len: 0,
        }
    }

    #[inline]
    pub(super) fn get(&self, index: u32) -> &Entry<V> {
        &self.chunks[(index >> CHUNK_SHIFT) as usize][(index & CHUNK_MASK) as usize]
    }

    #[inline]
    pub(super) fn get_mut(&mut self, index: u32) -> &mut Entry<V> {
        &mut self.chunks[(index >> CHUNK_SHIFT) as usize][(index & CHUNK_MASK) as usize]
    }

    pub(super) fn push(&mut self, entry: Entry<V>) -> u32 {
        debug_assert!(self.len < LEN_MAX);
        let chunk = self.len >> CHUNK_SHIFT;
        if chunk == self.chunks.len() {
            // The first chunk grows like any Vec so that small dicts (most
            // hash and set values) stay small; later chunks are full-sized.
            self.chunks.push(if chunk == 0 {
                Vec::new()
            } else {
                Vec::with_capacity(CHUNK_LEN)
            });
        }
        self.chunks[chunk].push(entry);
        let index = self.len as u32;
        self.len += 1;
        index
    }

    /// Removes the entry at `index` and moves the last entry into its place.
    /// The caller must already have re-pointed every link to the last entry.
    pub(super) fn swap_remove(&mut self, index: u32) -> Entry<V> {
        debug_assert!((index as usize) < self.len);
        let last = self.len - 1;
        let chunk = last >> CHUNK_SHIFT;
        let tail = self.chunks[chunk]
            .pop()
            .expect("slab: the chunk of the last index holds it");
        self.len = last;
        if self.chunks[chunk].is_empty() {
            self.chunks.truncate(chunk + 1);
        }
        if chunk == 0 {
            // Give memory back when a small dict shrinks a lot; amortised
            // O(1) because it needs a 4x shrink since the last reallocation.
            let first = &mut self.chunks[0];
            if first.capacity() > 64 && first.len() * 4 < first.capacity() {
                first.shrink_to(first.len() * 2);
            }
        }
        if index as usize == last {
            tail
        } else {
            mem::replace(self.get_mut(index), tail)
        }
    }

    /// Exchanges the entries at `a` and `b` (links are the caller's).
    pub(super) fn swap(&mut self, a: u32, b: u32) {
        let (ca, ia) = ((a >> CHUNK_SHIFT) as usize, (a & CHUNK_MASK) as usize);
        let (cb, ib) = ((b >> CHUNK_SHIFT) as usize, (b & CHUNK_MASK) as usize);
        if ca == cb {
            self.chunks[ca].swap(ia, ib);
        } else {
            let (low, high) = (ca.min(cb), ca.max(cb));
            let (left, right) = self.chunks.split_at_mut(high);
            let (x, y) = (&mut left[low], &mut right[0]);
            let (xi, yi) = if ca < cb { (ia, ib) } else { (ib, ia) };
            mem::swap(&mut x[xi], &mut y[yi]);
        }
    }

    pub(super) fn capacity(&self) -> usize {
        self.chunks.iter().map(Vec::capacity).sum()
    }
}
