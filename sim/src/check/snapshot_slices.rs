//! Snapshot reads answer in slices (see `seedkv_engine::snapshot_read`):
//! the point is that no other client waits for more than one of them.
//!
//! - every slice produces at most the engine's slice bound of elements
//!   ([`crate::world::snapshot_slice_elements`] for the seed): a slice
//!   without a bound is the stall the feature removes;
//! - a connection whose input was ready at the server is read (its
//!   commands run) after at most one slice: between two slices the event
//!   loop serves every connection that was ready, as Redis's does between
//!   two timer events.
//!
//! That the reply is the collection at the command's execution point is
//! the reference model's and the linearizability checker's: the command's
//! execution is recorded where the read opened.

use super::{Checker, RunFacts, Violation};
use crate::history::History;

pub struct SnapshotSlices;

const NAME: &str = "snapshot-slices";

impl Checker for SnapshotSlices {
    fn name(&self) -> &'static str {
        NAME
    }

    fn check(&self, history: &History, facts: &RunFacts) -> Result<(), Violation> {
        let bound = crate::world::snapshot_slice_elements(facts.seed) as u64;
        let slices = &history.reply_slices;
        if let Some(s) = slices.iter().find(|s| s.elements > bound) {
            return Err(Violation {
                checker: NAME,
                message: format!(
                    "a slice of conn {}'s request #{} produced {} elements at {} ns, over the bound of {bound}",
                    s.conn, s.seq_in_conn, s.elements, s.start_ns
                ),
            });
        }
        for wait in &history.slice_waits {
            // Slices are in time order: those wholly inside the wait.
            let from = slices.partition_point(|s| s.start_ns < wait.ready_ns);
            let waited = slices[from..]
                .iter()
                .take_while(|s| s.end_ns <= wait.read_ns)
                .filter(|s| s.conn != wait.conn)
                .count();
            if waited > 1 {
                return Err(Violation {
                    checker: NAME,
                    message: format!(
                        "conn {}'s input, ready at {} ns, was read at {} ns after {waited} slices of a snapshot read",
                        wait.conn, wait.ready_ns, wait.read_ns
                    ),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{ReplySlice, SliceWait};

    fn slice(start_ns: u64, elements: u64) -> ReplySlice {
        ReplySlice {
            conn: 1,
            seq_in_conn: 0,
            start_ns,
            end_ns: start_ns + 10,
            work_units: elements,
            elements,
            last: false,
        }
    }

    fn facts() -> RunFacts {
        RunFacts::default()
    }

    #[test]
    fn one_slice_of_waiting_passes_two_fail() {
        let bound = crate::world::snapshot_slice_elements(0) as u64;
        let mut h = History {
            reply_slices: vec![slice(100, bound), slice(200, 1), slice(300, 1)],
            slice_waits: vec![SliceWait {
                conn: 2,
                ready_ns: 150,
                read_ns: 250,
            }],
            ..History::default()
        };
        assert_eq!(SnapshotSlices.check(&h, &facts()), Ok(()));
        h.slice_waits[0].read_ns = 350;
        assert!(SnapshotSlices.check(&h, &facts()).is_err());
        h.slice_waits[0].read_ns = 250;
        h.reply_slices[1].elements = bound + 1;
        assert!(SnapshotSlices.check(&h, &facts()).is_err());
    }
}
