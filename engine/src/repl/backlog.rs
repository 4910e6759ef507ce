//! The replication backlog: the last `repl-backlog-size` bytes of the
//! replication stream, kept so that a replica that lost its link can ask
//! for what it missed (PSYNC) instead of a whole new dataset.
//!
//! # Offsets
//!
//! The stream is numbered from the primary's start: `master_repl_offset` is
//! how many bytes it has produced so far, so the next byte written has
//! offset `master_repl_offset + 1` (Redis numbers bytes from 1). When the
//! backlog is created it holds nothing and its first byte will be that next
//! byte (`repl_backlog_first_byte_offset = master_repl_offset + 1`). A
//! replica that has applied the stream up to offset `o` asks `PSYNC <replid>
//! <o + 1>`; the primary can serve it iff that byte is still in the backlog
//! or is the very next byte:
//!
//! ```text
//! first_byte_offset <= o + 1 <= first_byte_offset + histlen
//! ```
//!
//! Worked example with `repl-backlog-size 10`: the backlog is created at
//! offset 100 (first byte 101), and 25 bytes are written: offsets 101..=125.
//! Only the last 10 are kept: `first_byte_offset = 116, histlen = 10`. A
//! replica at 120 asks for 121: served from index 121 - 116 = 5, five bytes.
//! A replica at 125 asks for 126: served with nothing (it is up to date). A
//! replica at 110 asks for 111 < 116: its bytes are gone, a full resync.

use std::collections::VecDeque;

/// The backlog's bytes and where they sit in the stream.
#[derive(Debug)]
pub struct Backlog {
    bytes: VecDeque<u8>,
    /// The stream offset of `bytes[0]` (meaningful when `bytes` is not
    /// empty, and the offset the next byte gets when it is).
    first_byte_offset: u64,
    size_bytes: usize,
}

impl Backlog {
    /// An empty backlog whose first byte will be `next_offset`.
    pub fn new(next_offset: u64, size_bytes: usize) -> Backlog {
        Backlog {
            bytes: VecDeque::new(),
            first_byte_offset: next_offset,
            size_bytes: size_bytes.max(1),
        }
    }

    /// Appends stream bytes, dropping the oldest beyond the size. Returns
    /// the work it took (one unit per 64 bytes kept).
    pub fn append(&mut self, bytes: &[u8]) -> u64 {
        let kept = if bytes.len() > self.size_bytes {
            &bytes[bytes.len() - self.size_bytes..]
        } else {
            bytes
        };
        let dropped_outright = bytes.len() - kept.len();
        self.first_byte_offset += dropped_outright as u64;
        self.bytes.extend(kept.iter().copied());
        self.trim();
        kept.len() as u64 / 64 + 1
    }

    /// Keeps at most `size_bytes` (CONFIG SET repl-backlog-size).
    pub fn resize(&mut self, size_bytes: usize) {
        self.size_bytes = size_bytes.max(1);
        self.trim();
    }

    fn trim(&mut self) {
        let over = self.bytes.len().saturating_sub(self.size_bytes);
        if over > 0 {
            self.bytes.drain(..over);
            self.first_byte_offset += over as u64;
        }
    }

    pub fn first_byte_offset(&self) -> u64 {
        self.first_byte_offset
    }

    pub fn histlen(&self) -> u64 {
        self.bytes.len() as u64
    }

    pub fn size_bytes(&self) -> usize {
        self.size_bytes
    }

    /// The bytes from stream offset `from` to the end, if the backlog
    /// still covers `from` (see the module docs).
    pub fn since(&self, from: u64) -> Option<Vec<u8>> {
        let end = self.first_byte_offset + self.histlen();
        if from < self.first_byte_offset || from > end {
            return None;
        }
        let skip = (from - self.first_byte_offset) as usize;
        Some(self.bytes.range(skip..).copied().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::Backlog;

    #[test]
    fn the_worked_example_of_the_module_docs() {
        let mut b = Backlog::new(101, 10);
        b.append(&[b'x'; 25]);
        assert_eq!((b.first_byte_offset(), b.histlen()), (116, 10));
        assert_eq!(b.since(121).map(|v| v.len()), Some(5));
        assert_eq!(b.since(126).map(|v| v.len()), Some(0));
        assert_eq!(b.since(111), None);
        assert_eq!(b.since(127), None);
    }

    #[test]
    fn small_appends_keep_order_and_shrinking_drops_the_oldest() {
        let mut b = Backlog::new(1, 8);
        for chunk in [&b"abc"[..], b"defg", b"hij"] {
            b.append(chunk);
        }
        assert_eq!(b.since(3), Some(b"cdefghij".to_vec()));
        b.resize(4);
        assert_eq!(
            (b.first_byte_offset(), b.since(7)),
            (7, Some(b"ghij".to_vec()))
        );
    }
}
