//! The end of a multi-node run: once the clients are done and the faults
//! are over, the world runs on until every replica holds the primary's
//! whole stream (or the convergence bound passes), then every node's
//! dataset is read for the convergence checker.

use std::collections::BTreeMap;

use seedkv_engine::resp::Frame;
use seedkv_engine::Now;

use super::clients::KEYS_PER_FAMILY;
use super::world::{ClusterWorld, Ev, SETTLE_POLL_NS};
use crate::world::inspect::{read_dataset, Inspector};

impl ClusterWorld {
    /// Whether the run is over.
    pub(super) fn settled(&mut self) -> bool {
        let Some(started_ns) = self.settle_started_ns else {
            return false;
        };
        if self.history.converged_ns.is_some() {
            return true;
        }
        let from_ns = started_ns.max(self.history.faults_end_ns);
        self.now_ns > from_ns + self.history.convergence_bound_ns
    }

    /// A settle poll: notes convergence, polls again.
    pub(super) fn settle_poll(&mut self) {
        if self.now_ns >= self.history.faults_end_ns && self.converged() {
            self.history.converged_ns = Some(self.now_ns);
            return;
        }
        self.schedule(self.now_ns + SETTLE_POLL_NS, Ev::Settle);
    }

    /// Every node is up, and every other node was handed the primary's
    /// stream up to its end on a link to the primary's current life (a
    /// node still chained to the old primary after a failover is not).
    fn converged(&self) -> bool {
        if self.nodes.iter().any(|n| !n.up) || self.witness.is_none() {
            return false;
        }
        let Some(w) = self.history.witness.last() else {
            return false;
        };
        let primary = self.primary;
        let mut replicas = (0..self.nodes.len() as u32).filter(|&n| n != primary);
        replicas.all(|replica| {
            self.history
                .sessions
                .iter()
                .rev()
                .find(|s| s.replica == replica)
                .is_some_and(|s| {
                    s.primary == primary
                        && s.incarnation == w.incarnation
                        && s.answer_replid.as_deref().is_none_or(|r| r == w.replid)
                        && s.stream_base.map(|b| b + s.stream.len() as u64) == Some(w.end())
                })
        })
    }

    /// Reads every node's dataset through commands, at one clock (the
    /// primary's), so that a key's logical expiry is judged alike.
    pub(super) fn read_datasets(&mut self) {
        let now = self.nodes[self.primary as usize].now(self.now_ns);
        self.history.final_primary = self.primary;
        self.history.final_lists = self.read_lists(now);
        for n in &mut self.nodes {
            if !n.up {
                self.history.datasets.push(Err("down".into()));
                continue;
            }
            let mut inspector = Inspector::new(&mut n.engine, &mut n.disk, now);
            self.history
                .datasets
                .push(read_dataset(&mut inspector, now.unix_ms()));
        }
    }

    /// The primary's `log:*` lists, element by element (for the count of
    /// lost writes); `None` if it is down or a read failed.
    fn read_lists(&mut self, now: Now) -> Option<BTreeMap<Vec<u8>, Vec<Vec<u8>>>> {
        let n = &mut self.nodes[self.primary as usize];
        if !n.up {
            return None;
        }
        let mut inspector = Inspector::new(&mut n.engine, &mut n.disk, now);
        let mut lists = BTreeMap::new();
        for k in 0..KEYS_PER_FAMILY {
            let key = format!("log:{k}").into_bytes();
            let Ok(Frame::Array(items)) = inspector.call(&[b"LRANGE", &key, b"0", b"-1"]) else {
                return None;
            };
            let items = items
                .into_iter()
                .filter_map(|f| match f {
                    Frame::Bulk(b) => Some(b),
                    _ => None,
                })
                .collect();
            lists.insert(key, items);
        }
        Some(lists)
    }
}
