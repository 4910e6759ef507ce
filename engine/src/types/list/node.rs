//! One quicklist node: a packed byte buffer of list entries, modelled on
//! Redis's listpack.
//!
//! Each entry is `[len][bytes][backlen]`: `len` is the payload length as a
//! LEB128 varint (read left to right), `backlen` is the size of
//! `[len][bytes]` written so that it can be read right to left (the byte
//! nearest the payload's end holds the lowest seven bits, and a set high bit
//! means "more bits to the left"). That makes both ends reachable in O(1)
//! and every entry walkable in either direction, as a listpack is, while a
//! whole node stays one allocation. Unlike a listpack, integers are kept as
//! their decimal text: entries are handed out as borrowed byte slices, and
//! Redis only ever stores integers whose text round-trips exactly.
//!
//! Offsets are byte offsets of an entry's first byte; `buf.len()` is the
//! offset one past the last entry.

/// A packed run of list entries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Node {
    buf: Vec<u8>,
    count: usize,
}

/// Bytes of a varint (forward or backward) holding `v`.
pub(super) fn varint_size_bytes(v: usize) -> usize {
    let bits = usize::BITS - (v | 1).leading_zeros();
    bits.div_ceil(7) as usize
}

/// Bytes an entry with a payload of `len` bytes takes in a node.
pub(super) fn entry_size_bytes(len: usize) -> usize {
    let head = varint_size_bytes(len) + len;
    head + varint_size_bytes(head)
}

/// Appends one encoded entry to `out`.
fn encode_entry(out: &mut Vec<u8>, data: &[u8]) {
    let mut v = data.len();
    let start = out.len();
    loop {
        let low = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(low);
            break;
        }
        out.push(low | 0x80);
    }
    out.extend_from_slice(data);
    let head = out.len() - start;
    // Backlen: most significant group first, every group but the leftmost
    // flagged, so a reader from the right knows when to stop.
    let groups = varint_size_bytes(head);
    for g in (0..groups).rev() {
        let low = ((head >> (7 * g)) & 0x7f) as u8;
        out.push(if g + 1 == groups { low } else { low | 0x80 });
    }
    debug_assert_eq!(out.len() - start, entry_size_bytes(data.len()));
}

/// Bytes a buffer grows by, at least, when it must grow.
const GROW_STEP_BYTES_MIN: usize = 16;

/// Makes room for `extra` more bytes in `buf`, growing it to the next
/// multiple of an eighth of its power-of-two size (at most 1/8 unused,
/// about what jemalloc's size classes leave in Redis's exactly-reallocated
/// listpacks) instead of doubling it, which would leave up to half of a
/// small list's only node unused. Growth stays amortized O(1) per byte: a
/// buffer is copied once per eighth of its size it grows by.
fn reserve(buf: &mut Vec<u8>, extra: usize) {
    let needed = buf.len() + extra;
    if needed <= buf.capacity() {
        return;
    }
    let step = (needed.next_power_of_two() / 8).max(GROW_STEP_BYTES_MIN);
    let target = needed.div_ceil(step) * step;
    buf.reserve_exact(target - buf.len());
}

/// The encoded form of one entry.
fn encoded(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(entry_size_bytes(data.len()));
    encode_entry(&mut out, data);
    out
}

impl Node {
    pub(super) fn new() -> Node {
        Node::default()
    }

    /// Entries held.
    pub(super) fn count(&self) -> usize {
        self.count
    }

    /// Bytes of packed entries.
    pub(super) fn len_bytes(&self) -> usize {
        self.buf.len()
    }

    /// Bytes allocated for the buffer.
    pub(super) fn capacity_bytes(&self) -> usize {
        self.buf.capacity()
    }

    /// The payload range (`start..end`) of the entry at `offset`, and the
    /// offset of the next entry.
    pub(super) fn entry_at(&self, offset: usize) -> (usize, usize, usize) {
        debug_assert!(offset < self.buf.len());
        let mut len = 0usize;
        let mut shift = 0;
        let mut p = offset;
        loop {
            let b = self.buf[p];
            p += 1;
            len |= usize::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        let end = p + len;
        let next = offset + entry_size_bytes(len);
        debug_assert!(next <= self.buf.len());
        (p, end, next)
    }

    /// The payload of the entry at `offset`.
    pub(super) fn data_at(&self, offset: usize) -> &[u8] {
        let (start, end, _) = self.entry_at(offset);
        &self.buf[start..end]
    }

    /// The offset of the entry that ends at `end` (an entry's offset, or
    /// `len_bytes()`), or None at the first entry.
    pub(super) fn prev_offset(&self, end: usize) -> Option<usize> {
        if end == 0 {
            return None;
        }
        debug_assert!(end <= self.buf.len());
        let mut head = 0usize;
        let mut shift = 0;
        let mut p = end;
        loop {
            p -= 1;
            let b = self.buf[p];
            head |= usize::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        debug_assert!(head <= p);
        Some(p - head)
    }

    /// The offset of the last entry.
    pub(super) fn last_offset(&self) -> Option<usize> {
        self.prev_offset(self.buf.len())
    }

    /// The offset of the entry at `index` (`index <= count`; `count` gives
    /// the end), walking from the nearer end.
    pub(super) fn offset_of(&self, index: usize) -> usize {
        debug_assert!(index <= self.count);
        if index <= self.count / 2 {
            let mut offset = 0;
            for _ in 0..index {
                offset = self.entry_at(offset).2;
            }
            offset
        } else {
            let mut offset = self.buf.len();
            for _ in index..self.count {
                offset = self.prev_offset(offset).unwrap_or(0);
            }
            offset
        }
    }

    /// Inserts `data` as a new entry at byte offset `offset` (an entry
    /// boundary).
    pub(super) fn insert_at(&mut self, offset: usize, data: &[u8]) {
        debug_assert!(offset <= self.buf.len());
        reserve(&mut self.buf, entry_size_bytes(data.len()));
        if offset == self.buf.len() {
            encode_entry(&mut self.buf, data);
        } else {
            let e = encoded(data);
            self.buf.splice(offset..offset, e);
        }
        self.count += 1;
    }

    pub(super) fn push_back(&mut self, data: &[u8]) {
        self.insert_at(self.buf.len(), data);
    }

    pub(super) fn push_front(&mut self, data: &[u8]) {
        self.insert_at(0, data);
    }

    /// Removes the entry at `offset`.
    pub(super) fn remove_at(&mut self, offset: usize) {
        let (_, _, next) = self.entry_at(offset);
        self.buf.drain(offset..next);
        self.count -= 1;
    }

    /// Replaces the payload of the entry at `offset`.
    pub(super) fn replace_at(&mut self, offset: usize, data: &[u8]) {
        let (_, _, next) = self.entry_at(offset);
        let size = entry_size_bytes(data.len());
        reserve(&mut self.buf, size.saturating_sub(next - offset));
        self.buf.splice(offset..next, encoded(data));
    }

    /// Removes the first `n` entries (`n <= count`).
    pub(super) fn drain_front(&mut self, n: usize) {
        debug_assert!(n <= self.count);
        let offset = self.offset_of(n);
        self.buf.drain(..offset);
        self.count -= n;
    }

    /// Removes the last `n` entries (`n <= count`).
    pub(super) fn drain_back(&mut self, n: usize) {
        debug_assert!(n <= self.count);
        let offset = self.offset_of(self.count - n);
        self.buf.truncate(offset);
        self.count -= n;
    }

    /// Splits off the entries from `index` on into a new node.
    pub(super) fn split_off(&mut self, index: usize) -> Node {
        let offset = self.offset_of(index);
        let tail = self.buf.split_off(offset);
        let moved = self.count - index;
        self.count = index;
        Node {
            buf: tail,
            count: moved,
        }
    }

    /// Moves every entry of `other` after this node's entries.
    pub(super) fn append(&mut self, other: Node) {
        self.buf.extend_from_slice(&other.buf);
        self.count += other.count;
    }

    /// Keeps only the entries for which `keep(data)` is true; returns how
    /// many were removed. `visit` order is front to back.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(&[u8]) -> bool) -> usize {
        let mut out = Vec::with_capacity(self.buf.len());
        let mut offset = 0;
        let mut removed = 0;
        while offset < self.buf.len() {
            let (start, end, next) = self.entry_at(offset);
            if keep(&self.buf[start..end]) {
                out.extend_from_slice(&self.buf[offset..next]);
            } else {
                removed += 1;
            }
            offset = next;
        }
        if removed > 0 {
            self.buf = out;
            self.count -= removed;
        }
        removed
    }

    /// Gives back spare capacity past what the entries need, after a bulk
    /// removal left much of the buffer unused.
    pub(super) fn shrink_if_sparse(&mut self) {
        if self.buf.capacity() > 2 * self.buf.len() + 64 {
            self.buf.shrink_to_fit();
        }
    }

    /// Every entry, front to back (for tests and invariant checks).
    #[cfg(test)]
    pub(super) fn entries(&self) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut offset = 0;
        while offset < self.buf.len() {
            out.push(self.data_at(offset).to_vec());
            offset = self.entry_at(offset).2;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_sizes() {
        assert_eq!(varint_size_bytes(0), 1);
        assert_eq!(varint_size_bytes(127), 1);
        assert_eq!(varint_size_bytes(128), 2);
        assert_eq!(varint_size_bytes(16383), 2);
        assert_eq!(varint_size_bytes(16384), 3);
        assert_eq!(entry_size_bytes(0), 2);
        assert_eq!(entry_size_bytes(125), 127);
        assert_eq!(entry_size_bytes(126), 128);
    }

    #[test]
    fn walks_both_ways_across_entry_sizes() {
        let sizes = [0usize, 1, 125, 126, 127, 128, 300, 16381, 16383, 20000];
        let mut n = Node::new();
        for &s in &sizes {
            n.push_back(&vec![b'x'; s]);
        }
        assert_eq!(n.count(), sizes.len());
        let mut offset = n.len_bytes();
        for &s in sizes.iter().rev() {
            offset = n.prev_offset(offset).expect("entry");
            assert_eq!(n.data_at(offset).len(), s);
        }
        assert_eq!(offset, 0);
        assert_eq!(n.prev_offset(0), None);
        for (i, &s) in sizes.iter().enumerate() {
            assert_eq!(n.data_at(n.offset_of(i)).len(), s);
        }
    }

    #[test]
    fn edits_keep_entries() {
        let mut n = Node::new();
        for v in ["b", "c", "d"] {
            n.push_back(v.as_bytes());
        }
        n.push_front(b"a");
        n.replace_at(n.offset_of(2), &[b'C'; 200]);
        n.remove_at(n.offset_of(1));
        let tail = n.split_off(1);
        assert_eq!(n.entries(), vec![b"a".to_vec()]);
        assert_eq!(tail.entries(), vec![vec![b'C'; 200], b"d".to_vec()]);
        n.append(tail);
        assert_eq!(n.count(), 3);
        assert_eq!(n.retain(|d| d != b"d"), 1);
        n.drain_front(1);
        assert_eq!(n.entries(), vec![vec![b'C'; 200]]);
        n.drain_back(1);
        assert_eq!(n.count(), 0);
        assert_eq!(n.len_bytes(), 0);
    }
}
