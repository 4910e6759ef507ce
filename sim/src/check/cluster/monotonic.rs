//! Reads on one replica connection never go back: a list read again is
//! the earlier read or an extension of it (the lists only grow), and a
//! register never returns a value the primary wrote before the one the
//! connection saw last. A replica may be stale; it may not un-apply. A
//! primary crash in between excuses a step back (what the restarted
//! primary lost, its replicas drop at their next full resync), and so
//! does a FAILOVER that handed over by FORCE; one without FORCE does not
//! (the new primary's history continues the old one's).

use std::collections::BTreeMap;

use seedkv_engine::resp::Frame;

use super::{fail, stream, ClusterChecker};
use crate::check::Violation;
use crate::cluster::history::ClusterHistory;

pub struct MonotonicReads;

/// Per (connection, key): the last read's time and items.
type ListReads = BTreeMap<(u64, Vec<u8>), (u64, Vec<Vec<u8>>)>;
/// Per (connection, key): the last read's time, history, offset, value.
type RegisterReads = BTreeMap<(u64, Vec<u8>), (u64, usize, u64, Vec<u8>)>;

impl ClusterChecker for MonotonicReads {
    fn name(&self) -> &'static str {
        "repl-monotonic-reads"
    }

    fn check(&self, h: &ClusterHistory) -> Result<(), Violation> {
        let sets = stream::set_offsets(h);
        let mut lists = ListReads::new();
        let mut regs = RegisterReads::new();
        for op in h.ops.iter().filter(|op| op.node != 0) {
            let crashed_since = |t: u64| {
                h.primary_crashes_ns
                    .iter()
                    .copied()
                    .chain(h.forced_failovers_ns())
                    .any(|c| c >= t && c <= op.complete_ns)
            };
            match (op.args[0].as_slice(), &op.reply) {
                (b"LRANGE", Some(Frame::Array(items))) => {
                    let items: Vec<Vec<u8>> = items
                        .iter()
                        .filter_map(|f| match f {
                            Frame::Bulk(b) => Some(b.clone()),
                            _ => None,
                        })
                        .collect();
                    let key = (op.conn, op.args[1].clone());
                    if let Some((t, before)) = lists.get(&key) {
                        let extends =
                            items.len() >= before.len() && items[..before.len()] == before[..];
                        if !extends && !crashed_since(*t) {
                            return fail(
                                self.name(),
                                format!(
                                    "client {} on node{}: {} read {} items at {} ns, then {} items at {} ns that do not extend them",
                                    op.client, op.node, String::from_utf8_lossy(&op.args[1]), before.len(), t, items.len(), op.complete_ns
                                ),
                            );
                        }
                    }
                    lists.insert(key, (op.complete_ns, items));
                }
                (b"GET", Some(Frame::Bulk(value))) if op.args[1].starts_with(b"reg:") => {
                    let key = (op.conn, op.args[1].clone());
                    let found = sets
                        .iter()
                        .find(|((_, k, v), _)| *k == op.args[1] && v == value);
                    let Some(((incarnation, _, _), &offset)) = found else {
                        continue; // written before a crash the witness did not see whole
                    };
                    if let Some((t, inc, before, seen)) = regs.get(&key) {
                        if *inc == *incarnation && offset < *before && !crashed_since(*t) {
                            return fail(
                                self.name(),
                                format!(
                                    "client {} on node{}: {} read {:?} (offset {before}) at {t} ns, then the older {:?} (offset {offset}) at {} ns",
                                    op.client, op.node, String::from_utf8_lossy(&op.args[1]),
                                    String::from_utf8_lossy(seen), String::from_utf8_lossy(value), op.complete_ns
                                ),
                            );
                        }
                    }
                    regs.insert(key, (op.complete_ns, *incarnation, offset, value.clone()));
                }
                _ => {}
            }
        }
        Ok(())
    }
}
