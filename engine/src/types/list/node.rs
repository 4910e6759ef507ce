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
//! Offsets are byte offsets of an entry's first byte counted from the first
//! entry; `len_bytes()` is the offset one past the last entry.
//!
//! The entries sit at the end of `buf`, after a gap of `head` unused bytes.
//! The gap is what makes a push at the front as cheap as one at the back:
//! `LPUSH` writes its entry into the gap (growing the buffer, with the new
//! room in front, only when the gap is too small) and `LPOP` widens it,
//! where a buffer without one would move every entry of the node on each.
//! A list only ever pushed at the back never has a gap.

/// A packed run of list entries.
#[derive(Clone, Debug, Default)]
pub(super) struct Node {
    /// `head` unused bytes, then the entries.
    buf: Vec<u8>,
    /// Bytes before the first entry.
    head: u32,
    /// Entries held (a node holds at most 64 KB of entries of at least two
    /// bytes each, or one entry).
    count: u32,
}

/// Nodes are equal when they hold the same entries, whatever their gap.
impl PartialEq for Node {
    fn eq(&self, other: &Self) -> bool {
        self.count == other.count && self.live() == other.live()
    }
}

impl Eq for Node {}

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

/// Writes one encoded entry over `out`, which is exactly
/// `entry_size_bytes(data.len())` long.
fn encode_entry_into(out: &mut [u8], data: &[u8]) {
    debug_assert_eq!(out.len(), entry_size_bytes(data.len()));
    let mut v = data.len();
    let mut p = 0;
    loop {
        let low = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out[p] = low;
            p += 1;
            break;
        }
        out[p] = low | 0x80;
        p += 1;
    }
    out[p..p + data.len()].copy_from_slice(data);
    p += data.len();
    let head = p;
    let groups = varint_size_bytes(head);
    for g in (0..groups).rev() {
        let low = ((head >> (7 * g)) & 0x7f) as u8;
        out[p] = if g + 1 == groups { low } else { low | 0x80 };
        p += 1;
    }
    debug_assert_eq!(p, out.len());
}

/// The largest gap `head` holds.
const GAP_MAX_BYTES: usize = u32::MAX as usize;

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
    buf.reserve_exact(grown_capacity(needed) - buf.len());
}

/// The capacity [`reserve`] grows to for `needed` bytes: the next multiple
/// of an eighth of `needed`'s power-of-two size.
fn grown_capacity(needed: usize) -> usize {
    let step = (needed.next_power_of_two() / 8).max(GROW_STEP_BYTES_MIN);
    needed.div_ceil(step) * step
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
        self.count as usize
    }

    /// Bytes of packed entries.
    pub(super) fn len_bytes(&self) -> usize {
        self.buf.len() - self.head as usize
    }

    /// The packed entries.
    fn live(&self) -> &[u8] {
        &self.buf[self.head as usize..]
    }

    /// Where the entries start in `buf`.
    fn start(&self) -> usize {
        self.head as usize
    }

    /// Forgets the gap once the node is empty, so that a node emptied from
    /// the front and refilled from the back reuses its whole buffer.
    fn reset_if_empty(&mut self) {
        if self.count == 0 {
            self.buf.clear();
            self.head = 0;
        }
    }

    /// Whether a gap of up to the whole buffer fits `head`'s 32 bits (a
    /// node past 4 GB, one giant entry, simply keeps no gap).
    fn gap_fits(&self, extra: usize) -> bool {
        self.buf.len().saturating_add(extra) <= GAP_MAX_BYTES
    }

    /// Moves the entries to the start of the buffer (O(bytes held)).
    fn close_gap(&mut self) {
        if self.head > 0 {
            self.buf.drain(..self.start());
            self.head = 0;
        }
    }

    /// Bytes allocated for the buffer.
    pub(super) fn capacity_bytes(&self) -> usize {
        self.buf.capacity()
    }

    /// The payload range (`start..end`) of the entry at `offset`, and the
    /// offset of the next entry.
    pub(super) fn entry_at(&self, offset: usize) -> (usize, usize, usize) {
        let live = self.live();
        debug_assert!(offset < live.len());
        let mut len = 0usize;
        let mut shift = 0;
        let mut p = offset;
        loop {
            let b = live[p];
            p += 1;
            len |= usize::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        let end = p + len;
        let next = offset + entry_size_bytes(len);
        debug_assert!(next <= live.len());
        (p, end, next)
    }

    /// The payload of the entry at `offset`.
    pub(super) fn data_at(&self, offset: usize) -> &[u8] {
        let (start, end, _) = self.entry_at(offset);
        &self.live()[start..end]
    }

    /// The offset of the entry that ends at `end` (an entry's offset, or
    /// `len_bytes()`), or None at the first entry.
    pub(super) fn prev_offset(&self, end: usize) -> Option<usize> {
        if end == 0 {
            return None;
        }
        let live = self.live();
        debug_assert!(end <= live.len());
        let mut head = 0usize;
        let mut shift = 0;
        let mut p = end;
        loop {
            p -= 1;
            let b = live[p];
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
        self.prev_offset(self.len_bytes())
    }

    /// The offset of the entry at `index` (`index <= count`; `count` gives
    /// the end), walking from the nearer end.
    pub(super) fn offset_of(&self, index: usize) -> usize {
        let count = self.count();
        debug_assert!(index <= count);
        if index <= count / 2 {
            let mut offset = 0;
            for _ in 0..index {
                offset = self.entry_at(offset).2;
            }
            offset
        } else {
            let mut offset = self.len_bytes();
            for _ in index..count {
                offset = self.prev_offset(offset).unwrap_or(0);
            }
            offset
        }
    }

    /// Inserts `data` as a new entry at byte offset `offset` (an entry
    /// boundary).
    pub(super) fn insert_at(&mut self, offset: usize, data: &[u8]) {
        debug_assert!(offset <= self.len_bytes());
        if offset == 0 {
            return self.push_front(data);
        }
        let size = entry_size_bytes(data.len());
        if self.buf.len() + size > self.buf.capacity() {
            // Growing copies the entries anyway: drop the gap with them.
            self.close_gap();
        }
        reserve(&mut self.buf, size);
        let at = self.start() + offset;
        if at == self.buf.len() {
            encode_entry(&mut self.buf, data);
        } else {
            let e = encoded(data);
            self.buf.splice(at..at, e);
        }
        self.count += 1;
    }

    pub(super) fn push_back(&mut self, data: &[u8]) {
        self.insert_at(self.len_bytes(), data);
    }

    /// Writes the entry into the gap, first growing the buffer with the
    /// new room in front when the gap is too small (by the same eighths
    /// [`reserve`] grows by, so pushes at the front are amortised O(1) per
    /// byte, as at the back).
    pub(super) fn push_front(&mut self, data: &[u8]) {
        let size = entry_size_bytes(data.len());
        let live = self.len_bytes();
        if !self.gap_fits(grown_capacity(live + size)) {
            self.close_gap();
            reserve(&mut self.buf, size);
            self.buf.splice(0..0, encoded(data));
            self.count += 1;
            return;
        }
        if self.start() < size {
            let capacity = grown_capacity(live + size);
            let mut buf = Vec::with_capacity(capacity);
            buf.resize(capacity - live, 0);
            buf.extend_from_slice(self.live());
            self.buf = buf;
            self.head = (capacity - live) as u32;
        }
        let at = self.start() - size;
        encode_entry_into(&mut self.buf[at..at + size], data);
        self.head = at as u32;
        self.count += 1;
    }

    /// Removes the entry at `offset`; the first entry's bytes join the gap.
    pub(super) fn remove_at(&mut self, offset: usize) {
        let (_, _, next) = self.entry_at(offset);
        if offset == 0 && self.gap_fits(0) {
            self.head += next as u32;
        } else {
            let start = self.start();
            self.buf.drain(start + offset..start + next);
        }
        self.count -= 1;
        self.reset_if_empty();
    }

    /// Replaces the payload of the entry at `offset`.
    pub(super) fn replace_at(&mut self, offset: usize, data: &[u8]) {
        let (_, _, next) = self.entry_at(offset);
        let size = entry_size_bytes(data.len());
        let start = self.start();
        reserve(&mut self.buf, size.saturating_sub(next - offset));
        self.buf.splice(start + offset..start + next, encoded(data));
    }

    /// Removes the first `n` entries (`n <= count`); their bytes join the
    /// gap.
    pub(super) fn drain_front(&mut self, n: usize) {
        debug_assert!(n <= self.count());
        let offset = self.offset_of(n);
        if self.gap_fits(0) {
            self.head += offset as u32;
        } else {
            let start = self.start();
            self.buf.drain(start..start + offset);
        }
        self.count -= n as u32;
        self.reset_if_empty();
    }

    /// Removes the last `n` entries (`n <= count`).
    pub(super) fn drain_back(&mut self, n: usize) {
        debug_assert!(n <= self.count());
        let offset = self.offset_of(self.count() - n);
        self.buf.truncate(self.start() + offset);
        self.count -= n as u32;
        self.reset_if_empty();
    }

    /// Splits off the entries from `index` on into a new node.
    pub(super) fn split_off(&mut self, index: usize) -> Node {
        let offset = self.offset_of(index);
        let tail = self.buf.split_off(self.start() + offset);
        let moved = self.count - index as u32;
        self.count = index as u32;
        self.reset_if_empty();
        Node {
            buf: tail,
            head: 0,
            count: moved,
        }
    }

    /// Moves every entry of `other` after this node's entries.
    pub(super) fn append(&mut self, other: Node) {
        self.buf.extend_from_slice(other.live());
        self.count += other.count;
    }

    /// Keeps only the entries for which `keep(data)` is true; returns how
    /// many were removed. `visit` order is front to back.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(&[u8]) -> bool) -> usize {
        let live = self.live();
        let mut out = Vec::with_capacity(live.len());
        let mut offset = 0;
        let mut removed = 0;
        while offset < live.len() {
            let (start, end, next) = self.entry_at(offset);
            if keep(&live[start..end]) {
                out.extend_from_slice(&live[offset..next]);
            } else {
                removed += 1;
            }
            offset = next;
        }
        if removed > 0 {
            self.buf = out;
            self.head = 0;
            self.count -= removed as u32;
        }
        removed
    }

    /// Gives back spare capacity past what the entries need, after a bulk
    /// removal left much of the buffer unused.
    pub(super) fn shrink_if_sparse(&mut self) {
        if self.buf.capacity() > 2 * self.len_bytes() + 64 {
            self.close_gap();
            self.buf.shrink_to_fit();
        }
    }

    /// Every entry, front to back (for tests and invariant checks).
    #[cfg(test)]
    pub(super) fn entries(&self) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut offset = 0;
        while offset < self.len_bytes() {
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

    /// Every edit, from either end and in the middle, against a VecDeque
    /// model: the front gap never shows in the entries or offsets.
    #[test]
    fn front_gap_is_invisible() {
        use std::collections::VecDeque;
        let mut n = Node::new();
        let mut model: VecDeque<Vec<u8>> = VecDeque::new();
        let mut x = 7u64;
        for step in 0..4000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = (x >> 33) as usize;
            let data =
                vec![b'a' + (step % 26) as u8; r % 40 + if r.is_multiple_of(97) { 200 } else { 0 }];
            match r % 11 {
                0..=3 => {
                    n.push_front(&data);
                    model.push_front(data);
                }
                4 | 5 => {
                    n.push_back(&data);
                    model.push_back(data);
                }
                6 if !model.is_empty() => {
                    n.remove_at(0);
                    model.pop_front();
                }
                7 if !model.is_empty() => {
                    let i = r % model.len();
                    n.remove_at(n.offset_of(i));
                    model.remove(i);
                }
                8 => {
                    let i = r % (model.len() + 1);
                    n.insert_at(n.offset_of(i), &data);
                    model.insert(i, data);
                }
                9 if !model.is_empty() => {
                    let i = r % model.len();
                    n.replace_at(n.offset_of(i), &data);
                    model[i] = data;
                }
                10 if model.len() > 2 => {
                    let k = r % 3;
                    n.drain_front(k);
                    model.drain(..k);
                    n.shrink_if_sparse();
                }
                _ => {}
            }
            assert_eq!(n.count(), model.len());
            if step % 97 == 0 {
                assert_eq!(n.entries(), Vec::from(model.clone()));
                let m = model.len() / 2;
                let mut tail = n.split_off(m);
                assert_eq!(tail.count() + n.count(), model.len());
                tail.push_front(b"t");
                tail.remove_at(0);
                n.append(tail);
                assert_eq!(n.entries(), Vec::from(model.clone()));
            }
        }
        assert_eq!(n.entries(), Vec::from(model));
    }

    /// Pushes at the front reuse the gap: the buffer is reallocated only
    /// once per eighth of its size it grows by, as pushes at the back are.
    #[test]
    fn front_pushes_grow_like_back_pushes() {
        let (mut front, mut back) = (Node::new(), Node::new());
        let (mut front_grows, mut back_grows) = (0, 0);
        for _ in 0..1000 {
            let (f, b) = (front.capacity_bytes(), back.capacity_bytes());
            front.push_front(b"member:0000");
            back.push_back(b"member:0000");
            front_grows += usize::from(front.capacity_bytes() != f);
            back_grows += usize::from(back.capacity_bytes() != b);
        }
        assert_eq!(front.live(), back.live());
        assert!(
            front_grows <= back_grows + 1,
            "{front_grows} vs {back_grows}"
        );
        assert!(front.capacity_bytes() <= back.len_bytes() * 9 / 8 + 16);
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
