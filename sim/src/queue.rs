//! The event queue: a min-heap on (virtual time, sequence number). The
//! sequence number breaks ties in scheduling order, so two events at the
//! same nanosecond always run in the same order and a run is a function of
//! its seed.
//!
//! The heap is 4-ary over one `Vec`, keyed by a single `u128` (time in
//! the high half, sequence in the low half): every event of a run passes
//! through here (about four per simulated command), and a 4-ary heap is
//! half as deep as a binary one and compares one integer, not a tuple. The
//! order is the same total order as before, so a run pops the same events
//! in the same order whatever the heap's shape.

/// Events the queue may hold at once. A run that needs more is a bug in the
/// simulator (every source of events is bounded per client or per
/// connection), so exceeding it panics.
pub const QUEUE_EVENTS_MAX: usize = 1 << 22;

/// Children per heap node.
const ARITY: usize = 4;

/// A deterministic priority queue of events.
pub struct EventQueue<E> {
    /// `(at_ns << 64 | seq, event)`: keys are unique, since `seq` is.
    heap: Vec<(u128, E)>,
    seq_next: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: Vec::with_capacity(1024),
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
        self.heap
            .push(((u128::from(at_ns) << 64) | u128::from(seq), event));
        self.sift_up(self.heap.len() - 1);
    }

    /// The earliest event and its time.
    pub fn pop(&mut self) -> Option<(u64, E)> {
        if self.heap.is_empty() {
            return None;
        }
        let (key, event) = self.heap.swap_remove(0);
        self.sift_down();
        Some(((key >> 64) as u64, event))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.heap[parent].0 <= self.heap[i].0 {
                break;
            }
            self.heap.swap(i, parent);
            i = parent;
        }
    }

    /// Moves the entry at the root down to its place.
    fn sift_down(&mut self) {
        let len = self.heap.len();
        let mut i = 0;
        loop {
            let first = i * ARITY + 1;
            if first >= len {
                break;
            }
            let end = (first + ARITY).min(len);
            let mut min = first;
            for c in first + 1..end {
                if self.heap[c].0 < self.heap[min].0 {
                    min = c;
                }
            }
            if self.heap[min].0 >= self.heap[i].0 {
                break;
            }
            self.heap.swap(i, min);
            i = min;
        }
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

    /// Against a sort on (time, insertion), over interleaved pushes and
    /// pops with many equal times: the heap's shape never shows.
    #[test]
    fn matches_a_stable_sort_under_interleaving() {
        let mut q = EventQueue::default();
        let mut model: Vec<(u64, u64)> = Vec::new();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for i in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if !x.is_multiple_of(3) || model.is_empty() {
                let at = (x >> 8) % 64;
                q.push(at, i);
                model.push((at, i));
            } else {
                model.sort();
                let want = model.remove(0);
                assert_eq!(q.pop(), Some(want));
            }
            assert_eq!(q.len(), model.len());
        }
        model.sort();
        for want in model {
            assert_eq!(q.pop(), Some(want));
        }
        assert!(q.is_empty() && q.pop().is_none());
    }
}
