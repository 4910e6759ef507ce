//! Replication checkers: each reads a multi-node run's
//! [`ClusterHistory`] and says whether a property held, in Jepsen's
//! vocabulary (prefixes, convergence, acknowledged writes). Adding one is
//! a file here and a line in [`all`].

use crate::check::Violation;
use crate::cluster::history::ClusterHistory;

mod convergence;
mod failover;
mod loss;
mod monotonic;
mod own_writes;
mod prefix;
mod resync;
mod stream;
mod wait;

pub use failover::{failover_counts, FailoverCounts};
pub use loss::{loss, Loss};

pub trait ClusterChecker {
    fn name(&self) -> &'static str;
    fn check(&self, history: &ClusterHistory) -> Result<(), Violation>;
}

/// Every replication checker, in the order they run.
pub fn all() -> Vec<Box<dyn ClusterChecker>> {
    vec![
        Box::new(prefix::Prefix),
        Box::new(own_writes::ReplicaOwnWrites),
        Box::new(resync::PartialResync),
        Box::new(wait::Wait),
        Box::new(monotonic::MonotonicReads),
        Box::new(convergence::Convergence),
        Box::new(loss::LostWrites),
        Box::new(failover::FailoverKeepsConfirmed),
    ]
}

/// A violation of checker `name`.
fn fail(checker: &'static str, message: String) -> Result<(), Violation> {
    Err(Violation { checker, message })
}
