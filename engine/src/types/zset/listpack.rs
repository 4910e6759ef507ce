//! The `listpack` encoding of a small sorted set: (member, score) elements
//! packed in score order into one byte buffer.
//!
//! Why one buffer: a vector of (score, boxed member) costs 24 bytes of
//! bookkeeping plus an allocation per member, more than the member itself
//! for the short members small sets hold. Packed, an element costs its
//! member bytes plus two to three bytes, about what Redis's listpack spends.
//! The price is that nothing is indexed: finding a member, a rank or a
//! range walks the buffer from the start, which is why the set converts to
//! the skiplist past `zset-max-listpack-entries` / `-value`, and why the
//! callers charge a walk as work ([`Listpack::walk_units`]).
//!
//! An element is the member's length as a LEB128 varint, the member, then
//! the score. An integral score of magnitude below 2^53 (every integer a
//! double holds exactly) is stored as a varint of its zigzag encoding
//! shifted left by one, so small integer scores take one or two bytes;
//! any other score is the varint 1 followed by its eight IEEE-754 bytes.
//! Both read back as the same `f64`, bit for bit (-0 is stored as 0, as
//! Redis's listpack stores integral scores as integers).
//!
//! There is no back-length (Redis's listpack has one per entry): a reverse
//! walk first collects the offsets going forwards, which costs the same
//! O(N) walk a lookup costs and a byte less per element.

use std::cmp::Ordering;

use super::skiplist::cmp_elements;
use crate::types::varint;

/// Elements walked per work unit: decoding an element and comparing it
/// costs about what a hash listpack pair does (see
/// `hash::LISTPACK_PAIRS_PER_UNIT`).
pub const ELEMENTS_PER_WORK_UNIT: usize = 8;

/// The score marker of a non-integral (or huge) score: the varint 1, then
/// eight bytes. Integral scores are even varints, so the two never collide.
const SCORE_RAW_MARKER: u64 = 1;

/// Integral scores below this magnitude are stored as integers.
const SCORE_INT_LIMIT: f64 = 9_007_199_254_740_992.0; // 2^53

/// The packed elements. See the module docs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listpack {
    buf: Vec<u8>,
    /// Elements in `buf`.
    len: usize,
}

/// One decoded element and the bytes `start..end` it occupies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Element<'a> {
    pub member: &'a [u8],
    pub score: f64,
    pub start: usize,
    pub end: usize,
}

impl Listpack {
    /// Elements held.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Heap bytes allocated for the buffer.
    pub fn capacity_bytes(&self) -> usize {
        self.buf.capacity()
    }

    /// The work units of one walk over the whole buffer: the most any
    /// single lookup, rank, range or insert position search costs.
    pub fn walk_units(&self) -> u64 {
        self.len.div_ceil(ELEMENTS_PER_WORK_UNIT) as u64
    }

    /// Every element in order, from the first.
    pub fn iter(&self) -> Iter<'_> {
        self.iter_from(0, self.len)
    }

    /// `remaining` elements from the one that starts at byte `offset`.
    fn iter_from(&self, offset: usize, remaining: usize) -> Iter<'_> {
        Iter {
            buf: &self.buf,
            at: offset,
            remaining,
        }
    }

    /// The elements of ranks `lo..` (`lo` <= len), walking to `lo` first.
    pub fn iter_at(&self, lo: usize) -> Iter<'_> {
        debug_assert!(lo <= self.len);
        let offset = self.iter().nth(lo).map_or(self.buf.len(), |e| e.start);
        self.iter_from(offset, self.len - lo)
    }

    /// The member's element and its rank.
    pub fn find(&self, member: &[u8]) -> Option<(usize, Element<'_>)> {
        self.iter().enumerate().find(|(_, e)| e.member == member)
    }

    /// Appends an element that orders after every element held (building
    /// from a sorted sequence).
    pub fn push(&mut self, member: &[u8], score: f64) {
        debug_assert!(self
            .iter()
            .last()
            .is_none_or(|e| { cmp_elements(e.score, e.member, score, member) == Ordering::Less }));
        let at = self.buf.len();
        self.insert_at(at, member, score);
    }

    /// Inserts an element that is not held, at its place in the order.
    pub fn insert(&mut self, member: &[u8], score: f64) {
        let at = self
            .iter()
            .find(|e| cmp_elements(e.score, e.member, score, member) != Ordering::Less)
            .map_or(self.buf.len(), |e| e.start);
        self.insert_at(at, member, score);
    }

    /// Writes an element at byte `at`. The buffer grows to exactly what it
    /// holds, as Redis's `lpInsert` reallocates it: doubling would leave up
    /// to half of every small set unused (the copy this costs is bounded by
    /// the listpack limits, as in Redis).
    fn insert_at(&mut self, at: usize, member: &[u8], score: f64) {
        let mut encoded = Vec::with_capacity(member.len() + 2 * varint::BYTES_MAX);
        encode_element(&mut encoded, member, score);
        self.buf.reserve_exact(encoded.len());
        self.buf.splice(at..at, encoded);
        self.len += 1;
    }

    /// Removes the bytes `start..end`, which must cover exactly `count`
    /// whole elements.
    pub fn remove_bytes(&mut self, start: usize, end: usize, count: usize) {
        debug_assert!(start <= end && end <= self.buf.len() && count <= self.len);
        self.buf.drain(start..end);
        self.len -= count;
        if self.buf.capacity() > 2 * self.buf.len() + 64 {
            self.buf.shrink_to_fit();
        }
    }

    /// Byte offsets of the elements of ranks `lo..hi`, for walking them
    /// backwards.
    pub fn offsets(&self, lo: usize, hi: usize) -> Vec<u32> {
        debug_assert!(lo <= hi && hi <= self.len);
        self.iter()
            .take(hi)
            .skip(lo)
            .map(|e| e.start as u32)
            .collect()
    }

    /// The element starting at byte `offset` (one of [`Listpack::offsets`]).
    pub fn element_at(&self, offset: usize) -> Element<'_> {
        decode_element(&self.buf, offset)
    }

    /// Checks the invariants (for tests): the elements are in order, no
    /// score is -0, and `len` whole elements fill the buffer exactly.
    #[cfg(test)]
    pub fn check(&self) {
        let elements: Vec<Element> = self.iter().collect();
        assert!(elements.windows(2).all(|w| cmp_elements(
            w[0].score,
            w[0].member,
            w[1].score,
            w[1].member
        ) == Ordering::Less));
        assert!(elements
            .iter()
            .all(|e| e.score.to_bits() != (-0.0f64).to_bits()));
        assert_eq!(elements.last().map_or(0, |e| e.end), self.buf.len());
    }
}

/// Appends one encoded element to `buf`.
fn encode_element(buf: &mut Vec<u8>, member: &[u8], score: f64) {
    varint::put(buf, member.len() as u64);
    buf.extend_from_slice(member);
    if score.fract() == 0.0 && score.abs() < SCORE_INT_LIMIT {
        let n = score as i64;
        let zigzag = ((n << 1) ^ (n >> 63)) as u64;
        varint::put(buf, zigzag << 1);
    } else {
        varint::put(buf, SCORE_RAW_MARKER);
        buf.extend_from_slice(&score.to_le_bytes());
    }
}

/// Decodes the element at `start` (the buffer only holds what
/// [`encode_element`] wrote).
fn decode_element(buf: &[u8], start: usize) -> Element<'_> {
    let mut at = start;
    let member_len = varint::get(buf, &mut at) as usize;
    let member = &buf[at..at + member_len];
    at += member_len;
    let tag = varint::get(buf, &mut at);
    let score = if tag == SCORE_RAW_MARKER {
        let mut raw = [0u8; 8];
        raw.copy_from_slice(&buf[at..at + 8]);
        at += 8;
        f64::from_le_bytes(raw)
    } else {
        let zigzag = tag >> 1;
        let n = ((zigzag >> 1) as i64) ^ -((zigzag & 1) as i64);
        n as f64
    };
    Element {
        member,
        score,
        start,
        end: at,
    }
}

/// A forward walk; see [`Listpack::iter`].
#[derive(Clone)]
pub struct Iter<'a> {
    buf: &'a [u8],
    at: usize,
    remaining: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = Element<'a>;

    fn next(&mut self) -> Option<Element<'a>> {
        if self.remaining == 0 {
            return None;
        }
        let e = decode_element(self.buf, self.at);
        self.at = e.end;
        self.remaining -= 1;
        Some(e)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Iter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn elements(lp: &Listpack) -> Vec<(Vec<u8>, f64)> {
        lp.iter().map(|e| (e.member.to_vec(), e.score)).collect()
    }

    #[test]
    fn scores_read_back_bit_for_bit() {
        let scores = [
            0.0,
            1.0,
            -1.0,
            31.0,
            32.0,
            -64.0,
            1e15,
            -(SCORE_INT_LIMIT - 1.0),
            SCORE_INT_LIMIT,
            -SCORE_INT_LIMIT,
            1e300,
            0.5,
            -2.25,
            f64::MIN_POSITIVE,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            f64::MIN,
        ];
        for score in scores {
            let mut lp = Listpack::default();
            lp.push(b"m", score);
            let got = lp.iter().next().map(|e| e.score);
            assert_eq!(got.map(f64::to_bits), Some(score.to_bits()), "{score}");
        }
    }

    #[test]
    fn small_integral_scores_take_one_or_two_bytes() {
        let mut lp = Listpack::default();
        lp.push(b"member:00000001", 31.0);
        assert_eq!(lp.capacity_bytes(), 1 + 15 + 1);
        lp.push(b"member:00000002", 99.0);
        assert_eq!(lp.capacity_bytes(), 2 * (1 + 15) + 1 + 2);
    }

    #[test]
    fn insert_keeps_the_order_and_remove_takes_whole_elements() {
        let mut lp = Listpack::default();
        for (m, s) in [
            (&b"b"[..], 2.0),
            (b"a", 2.0),
            (b"z", -1.5),
            (b"", 7.0),
            (b"c", 2.0),
        ] {
            lp.insert(m, s);
        }
        let want: Vec<(Vec<u8>, f64)> = vec![
            (b"z".to_vec(), -1.5),
            (b"a".to_vec(), 2.0),
            (b"b".to_vec(), 2.0),
            (b"c".to_vec(), 2.0),
            (b"".to_vec(), 7.0),
        ];
        assert_eq!(elements(&lp), want);
        let (rank, e) = lp.find(b"b").expect("b is held");
        assert_eq!(rank, 2);
        lp.remove_bytes(e.start, e.end, 1);
        assert_eq!(lp.len(), 4);
        assert!(lp.find(b"b").is_none());
        let at: Vec<&[u8]> = lp.iter_at(2).map(|e| e.member).collect();
        assert_eq!(at, vec![&b"c"[..], b""]);
        let offsets = lp.offsets(1, 3);
        let back: Vec<&[u8]> = offsets
            .iter()
            .rev()
            .map(|&o| lp.element_at(o as usize).member)
            .collect();
        assert_eq!(back, vec![&b"c"[..], b"a"]);
    }
}
