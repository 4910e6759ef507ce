//! The trace: a rolling hash over every event the world processes and every
//! byte that crosses the network, so that two runs of one seed can be
//! compared in one number; a bounded log of per-event hashes to name the
//! first event where two runs diverge; and an optional human-readable event
//! trace (`replay --trace`).

use std::io::Write;

/// Per-event hashes kept for divergence reports. Past this, only the rolling
/// hash is kept (a divergence is then reported as "after event N").
pub const EVENT_HASH_LOG_MAX: usize = 1 << 21;

/// Lines of text trace printed at most, so that a runaway replay cannot
/// fill a disk.
pub const TRACE_LINES_MAX: u64 = 10_000_000;

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a over 64-bit words (bytes are folded 8 at a time): fixed keys, no
/// random state, so the hash is the same on every machine and every run.
#[derive(Clone, Debug)]
pub struct TraceHash {
    hash: u64,
    events_count: u64,
    /// The rolling hash after each event (when recording).
    log: Option<Vec<u64>>,
    /// (virtual time, event tag) of each logged event, to name it.
    log_events: Vec<(u64, u64)>,
    current_event: (u64, u64),
    text: Option<TextTrace>,
}

#[derive(Clone, Debug)]
struct TextTrace {
    lines_count: u64,
}

impl TraceHash {
    pub fn new(record_log: bool, print_text: bool) -> TraceHash {
        TraceHash {
            hash: FNV_OFFSET,
            events_count: 0,
            log: record_log.then(Vec::new),
            log_events: Vec::new(),
            current_event: (0, 0),
            text: print_text.then_some(TextTrace { lines_count: 0 }),
        }
    }

    #[inline]
    pub fn word(&mut self, w: u64) {
        self.hash = (self.hash ^ w).wrapping_mul(FNV_PRIME);
    }

    /// Folds bytes into the hash, 8 at a time, then their length.
    pub fn bytes(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.word(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let mut tail = [0u8; 8];
        let rest = chunks.remainder();
        tail[..rest.len()].copy_from_slice(rest);
        self.word(u64::from_le_bytes(tail));
        self.word(bytes.len() as u64);
    }

    /// Marks the start of one event: its time and a tag naming it.
    #[inline]
    pub fn begin_event(&mut self, at_ns: u64, tag: u64) {
        self.word(at_ns);
        self.word(tag);
        self.current_event = (at_ns, tag);
    }

    /// Marks the end of one event: logs the rolling hash.
    pub fn end_event(&mut self) {
        self.events_count += 1;
        if let Some(log) = &mut self.log {
            if log.len() < EVENT_HASH_LOG_MAX {
                log.push(self.hash);
                self.log_events.push(self.current_event);
            }
        }
    }

    /// (virtual time, tag) of logged event `index`.
    pub fn logged_event(&self, index: usize) -> Option<(u64, u64)> {
        self.log_events.get(index).copied()
    }

    pub fn value(&self) -> u64 {
        self.hash
    }

    pub fn events_count(&self) -> u64 {
        self.events_count
    }

    pub fn take_log(&mut self) -> Vec<u64> {
        self.log.take().unwrap_or_default()
    }

    pub fn printing(&self) -> bool {
        self.text.is_some()
    }

    /// Prints one trace line (only when printing).
    pub fn line(&mut self, now_ns: u64, args: std::fmt::Arguments) {
        if let Some(t) = &mut self.text {
            if t.lines_count < TRACE_LINES_MAX {
                t.lines_count += 1;
                let mut out = std::io::stdout().lock();
                let _ = writeln!(
                    out,
                    "{:>6} {:>10}.{:06} ms  {}",
                    self.events_count + 1,
                    now_ns / 1_000_000,
                    now_ns % 1_000_000,
                    args
                );
            }
        }
    }
}

/// The first index at which two per-event hash logs differ.
pub fn first_divergence(a: &[u64], b: &[u64]) -> Option<usize> {
    let n = a.len().min(b.len());
    (0..n)
        .find(|&i| a[i] != b[i])
        .or((a.len() != b.len()).then_some(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn divergence_is_the_first_differing_event() {
        assert_eq!(first_divergence(&[1, 2, 3], &[1, 2, 3]), None);
        assert_eq!(first_divergence(&[1, 2, 3], &[1, 9, 3]), Some(1));
        assert_eq!(first_divergence(&[1, 2], &[1, 2, 3]), Some(2));
    }

    #[test]
    fn the_hash_depends_on_every_byte_and_on_event_boundaries() {
        let mut a = TraceHash::new(true, false);
        let mut b = TraceHash::new(true, false);
        a.begin_event(5, 1);
        a.bytes(b"hello world, this is a reply");
        a.end_event();
        b.begin_event(5, 1);
        b.bytes(b"hello world, this is a replY");
        b.end_event();
        assert_ne!(a.value(), b.value());
        assert_eq!(a.take_log().len(), 1);
    }
}
