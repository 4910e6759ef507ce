//! A replica changes its dataset only as its primary's stream says: a
//! key it removed by itself (a replica leaves expiry to its primary's
//! DEL, as Redis's replicas do) or a client's write it accepted (a
//! read-only replica answers `-READONLY`) is a write nobody made on the
//! primary. Loading its own AOF at a restart is not one.

use super::{fail, ClusterChecker};
use crate::check::Violation;
use crate::cluster::history::ClusterHistory;

pub struct ReplicaOwnWrites;

impl ClusterChecker for ReplicaOwnWrites {
    fn name(&self) -> &'static str {
        "repl-replica-writes"
    }

    fn check(&self, h: &ClusterHistory) -> Result<(), Violation> {
        if let Some((node, at_ns, what)) = h.invented.first() {
            return fail(
                self.name(),
                format!("replica node{node} {what} at {at_ns} ns (a replica only applies its primary's stream)"),
            );
        }
        Ok(())
    }
}
