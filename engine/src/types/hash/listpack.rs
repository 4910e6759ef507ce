//! A listpack: byte strings packed one after another in a single buffer,
//! Redis's compact encoding for small hashes (and sorted sets).
//!
//! Why one buffer: a small hash costs one allocation instead of two per
//! field, and a lookup is a linear scan over memory that sits in a few cache
//! lines. That only pays while the collection is small, which is why the
//! owners convert to a hash table past `hash-max-listpack-entries` /
//! `hash-max-listpack-value`.
//!
//! Each entry is its length as a LEB128 varint followed by its bytes. Unlike
//! Redis's listpack there is no back-length (nothing here walks backwards)
//! and no integer encoding (values are kept as the bytes the client sent,
//! which is what every reply needs anyway).

use crate::types::varint;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listpack {
    buf: Vec<u8>,
    /// Entries in `buf`.
    len: usize,
}

/// Where an entry sits in the buffer: `start..end` covers the length prefix
/// and the bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntrySpan {
    pub start: usize,
    pub end: usize,
}

impl Listpack {
    pub fn new() -> Self {
        Listpack::default()
    }

    /// Entries held.
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

    /// Appends an entry. The buffer grows to exactly what it holds, as
    /// Redis's `lpInsert` reallocates it: doubling would leave up to half
    /// of every small hash unused (the copy this costs is bounded by
    /// `hash-max-listpack-entries` and `-value`, as in Redis).
    pub fn push(&mut self, entry: &[u8]) {
        self.buf.reserve_exact(encoded_len(entry));
        encode_entry(&mut self.buf, entry);
        self.len += 1;
    }

    /// Every entry in order, with its span.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            buf: &self.buf,
            at: 0,
            remaining: self.len,
        }
    }

    /// Replaces the entry at `span` (from [`Listpack::iter`]) with `entry`.
    pub fn replace(&mut self, span: EntrySpan, entry: &[u8]) {
        debug_assert!(span.start < span.end && span.end <= self.buf.len());
        let mut encoded = Vec::with_capacity(entry.len() + varint::BYTES_MAX);
        encode_entry(&mut encoded, entry);
        let grows_by = encoded.len().saturating_sub(span.end - span.start);
        self.buf.reserve_exact(grows_by);
        self.buf.splice(span.start..span.end, encoded);
    }

    /// Removes the bytes `start..end`, which must cover exactly `entries`
    /// whole entries.
    pub fn remove_range(&mut self, start: usize, end: usize, entries: usize) {
        debug_assert!(start <= end && end <= self.buf.len());
        debug_assert!(entries <= self.len);
        self.buf.drain(start..end);
        self.len -= entries;
        if self.buf.capacity() > 2 * self.buf.len() + 64 {
            self.buf.shrink_to_fit();
        }
    }
}

/// Bytes `entry` takes encoded: its varint length, then itself.
fn encoded_len(entry: &[u8]) -> usize {
    varint::len(entry.len() as u64) + entry.len()
}

/// Appends one encoded entry to `buf`.
fn encode_entry(buf: &mut Vec<u8>, entry: &[u8]) {
    varint::put(buf, entry.len() as u64);
    buf.extend_from_slice(entry);
}

/// The iterator behind [`Listpack::iter`].
pub struct Iter<'a> {
    buf: &'a [u8],
    at: usize,
    remaining: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = (EntrySpan, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        let start = self.at;
        let n = varint::get(self.buf, &mut self.at);
        let bytes = &self.buf[self.at..self.at + n as usize];
        self.at += n as usize;
        self.remaining -= 1;
        Some((
            EntrySpan {
                start,
                end: self.at,
            },
            bytes,
        ))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Iter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_iterate_replace_remove() {
        let mut lp = Listpack::new();
        let big = vec![b'x'; 300];
        lp.push(b"a");
        lp.push(&big);
        lp.push(b"");
        lp.push(b"ccc");
        let items: Vec<&[u8]> = lp.iter().map(|(_, b)| b).collect();
        assert_eq!(items, vec![&b"a"[..], &big[..], b"", b"ccc"]);
        let spans: Vec<EntrySpan> = lp.iter().map(|(s, _)| s).collect();
        lp.replace(spans[1], b"short");
        let items: Vec<&[u8]> = lp.iter().map(|(_, b)| b).collect();
        assert_eq!(items, vec![&b"a"[..], b"short", b"", b"ccc"]);
        let spans: Vec<EntrySpan> = lp.iter().map(|(s, _)| s).collect();
        lp.remove_range(spans[1].start, spans[2].end, 2);
        let items: Vec<&[u8]> = lp.iter().map(|(_, b)| b).collect();
        assert_eq!(items, vec![&b"a"[..], b"ccc"]);
        assert_eq!(lp.len(), 2);
    }

    #[test]
    fn the_buffer_holds_exactly_its_entries() {
        let mut lp = Listpack::new();
        let mut expected_bytes = 0;
        for len in [0, 1, 127, 128, 300, 16_383, 16_384] {
            let entry = vec![b'y'; len];
            lp.push(&entry);
            expected_bytes += encoded_len(&entry);
            let mut encoded = Vec::new();
            encode_entry(&mut encoded, &entry);
            assert_eq!(encoded.len(), encoded_len(&entry), "entry of {len} bytes");
        }
        assert_eq!(lp.capacity_bytes(), expected_bytes);
    }
}
