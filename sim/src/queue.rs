//! The event queue: a min-heap on (virtual time, sequence number). The
//! sequence number breaks ties in scheduling order, so two events at the
//! same nanosecond always run in the same order and a run is a function of
//! its seed.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// Events the queue may hold at once. A run that needs more is a bug in the
/// simulator (every source of events is bounded per client or per
/// connection), so exceeding it panics.
pub const QUEUE_EVENTS_MAX: usize = 1 << 22;

struct Scheduled<E> {
    at_ns: u64,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Scheduled<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.at_ns, self.seq) == (other.at_ns, other.seq)
    }
}
impl<E> Eq for Scheduled<E> {}
impl<E> PartialOrd for Scheduled<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Scheduled<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at_ns, self.seq).cmp(&(other.at_ns, other.seq))
    }
}

/// A deterministic priority queue of events.
pub struct EventQueue<E> {
    heap: BinaryHeap<Reverse<Scheduled<E>>>,
    seq_next: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(1024),
            seq_next: 0,
        }
    }
}

impl<E> EventQueue<E> {
    /// Schedules `event` at `at_ns`.
    pub fn push(&mut self, at_ns: u64, event: E) {
        assert!(
            self.heap.len() < QUEUE_EVENTS_MAX,
            "event queue exceeded QUEUE_EVENTS_MAX"
        );
        let seq = self.seq_next;
        self.seq_next += 1;
        self.heap.push(Reverse(Scheduled { at_ns, seq, event }));
    }

    /// The earliest event and its time.
    pub fn pop(&mut self) -> Option<(u64, E)> {
        self.heap.pop().map(|Reverse(s)| (s.at_ns, s.event))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_insertion() {
        let mut q = EventQueue::default();
        q.push(5, 'a');
        q.push(3, 'b');
        q.push(5, 'c');
        q.push(3, 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
    }
}
