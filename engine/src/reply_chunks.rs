//! Replies too big to copy in one turn: built in chunks of
//! [`REPLY_CHUNK_BYTES`] and handed to the client's output as those chunks,
//! never as one buffer (Redis's reply list of 16 KiB blocks).
//!
//! Why: a snapshot read (see [`crate::snapshot_read`]) produces a reply of
//! tens of megabytes in slices, but one contiguous buffer would cost the
//! turns it was meant to spare. Growing a `Vec` by doubling copies half the
//! reply in the turn that crosses a power of two, and putting the whole
//! reply behind its `*<count>` header (known only at the end, once KEYS's
//! pattern has been tried on every key) and into the client's output would
//! copy it all in the read's last turn: 30 MB of `KEYS *` over 2M keys, tens
//! of milliseconds for every other client. Chunks make every step bounded:
//! a slice fills at most its own bytes, the last turn moves chunk pointers
//! (the header goes into the client's ordinary output, ahead of them), and
//! the host writes and frees a chunk at a time.

use std::collections::VecDeque;

/// Bytes a chunk holds before the next is started (an element is never
/// split: a chunk may end up to one element longer).
pub const REPLY_CHUNK_BYTES: usize = 64 * 1024;

/// A reply body being built: full chunks, then the one being filled.
#[derive(Debug, Default)]
pub struct ChunkedBody {
    chunks: Vec<Vec<u8>>,
    bytes: usize,
}

impl ChunkedBody {
    /// The chunk to append the next element to: a new one once the last
    /// is full. Call [`ChunkedBody::wrote`] after appending.
    pub fn tail(&mut self) -> &mut Vec<u8> {
        if self
            .chunks
            .last()
            .is_none_or(|c| c.len() >= REPLY_CHUNK_BYTES)
        {
            self.chunks.push(Vec::with_capacity(REPLY_CHUNK_BYTES));
        }
        self.chunks.last_mut().expect("pushed above")
    }

    /// Records `n` bytes appended to [`ChunkedBody::tail`].
    pub fn wrote(&mut self, n: usize) {
        self.bytes += n;
    }

    /// Bytes of the body so far.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    pub fn into_chunks(self) -> Vec<Vec<u8>> {
        self.chunks
    }
}

/// A client's output ahead of its ordinary buffer (`Client::output`): the
/// chunks of big replies, in order. The client's output stream is these
/// chunks, then `output`; `Client::output_sent` indexes the first piece of
/// that stream (the front chunk while there is one).
#[derive(Debug, Default)]
pub struct OutputQueue {
    chunks: VecDeque<Vec<u8>>,
    bytes: usize,
}

impl OutputQueue {
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    pub fn front(&self) -> Option<&Vec<u8>> {
        self.chunks.front()
    }

    /// Bytes held, the front chunk's sent part included.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Appends a piece; empty pieces are not kept (the front chunk always
    /// has bytes left to send).
    pub fn push(&mut self, chunk: Vec<u8>) {
        if !chunk.is_empty() {
            self.bytes += chunk.len();
            self.chunks.push_back(chunk);
        }
    }

    /// Drops the front chunk (all of it was sent).
    pub fn pop_front(&mut self) -> Option<Vec<u8>> {
        let chunk = self.chunks.pop_front()?;
        self.bytes -= chunk.len();
        Some(chunk)
    }

    pub fn clear(&mut self) {
        self.chunks.clear();
        self.bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_rotates_chunks_without_splitting_an_element() {
        let mut body = ChunkedBody::default();
        let element = vec![b'x'; 1000];
        for _ in 0..200 {
            body.tail().extend_from_slice(&element);
            body.wrote(element.len());
        }
        assert_eq!(body.bytes(), 200_000);
        let chunks = body.into_chunks();
        assert_eq!(
            chunks.len(),
            200_000_usize.div_ceil(REPLY_CHUNK_BYTES.next_multiple_of(1000))
        );
        assert!(chunks.iter().all(|c| c.len() % 1000 == 0));
        assert!(chunks[..chunks.len() - 1]
            .iter()
            .all(|c| c.len() >= REPLY_CHUNK_BYTES && c.len() < REPLY_CHUNK_BYTES + 1000));
        assert_eq!(chunks.iter().map(Vec::len).sum::<usize>(), 200_000);
    }

    #[test]
    fn the_queue_keeps_no_empty_piece_and_counts_its_bytes() {
        let mut q = OutputQueue::default();
        q.push(Vec::new());
        assert!(q.is_empty());
        q.push(b"abc".to_vec());
        q.push(b"de".to_vec());
        assert_eq!(q.bytes(), 5);
        assert_eq!(q.pop_front().as_deref(), Some(&b"abc"[..]));
        assert_eq!(q.bytes(), 2);
        q.clear();
        assert!(q.is_empty() && q.bytes() == 0);
    }
}
