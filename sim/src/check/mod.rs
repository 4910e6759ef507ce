//! Checkers: each reads a run's [`History`] and says whether a property
//! held. Adding a checker is a new file here plus one line in [`all`].

use crate::client::SlowReader;
use crate::history::History;

pub mod adversarial;
pub mod atomicity;
pub mod blocking;
pub mod collection_scan;
pub mod conservation;
pub mod liveness;
pub mod pipeline;
pub mod pubsub;

pub mod latency;
pub mod linearizability;
pub mod model;
pub mod pop_model;
pub mod scan;
pub mod transfer;

/// What a checker knows about the run besides the history.
#[derive(Clone, Debug, Default)]
pub struct RunFacts {
    pub seed: u64,
    /// Upper bound on a fast command's latency when no O(N) command ran,
    /// derived from the cost and network models (nanoseconds).
    pub fast_latency_bound_ns: u64,
    /// Bound on how long after faults stop every request must be answered.
    pub liveness_bound_ns: u64,
    /// Per client index: whether it reads its socket slowly (a reply then
    /// waits up to one read interval per read it needs). Empty: none does.
    pub slow_readers: Vec<Option<SlowReader>>,
}

/// A violated property: which checker, and a human-readable account.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub checker: &'static str,
    pub message: String,
}

pub trait Checker {
    fn name(&self) -> &'static str;
    fn check(&self, history: &History, facts: &RunFacts) -> Result<(), Violation>;
}

/// Every checker, run on every seed, in this order.
pub fn all() -> Vec<Box<dyn Checker>> {
    vec![
        Box::new(pipeline::PipelineOrder),
        Box::new(liveness::Liveness),
        Box::new(atomicity::IncrAtomicity),
        Box::new(atomicity::GroupAtomicity),
        Box::new(transfer::TransferCheck),
        Box::new(model::ReferenceModel),
        Box::new(linearizability::Linearizability),
        Box::new(scan::ScanCompleteness),
        Box::new(latency::TailLatency),
        Box::new(collection_scan::CollectionScan),
        Box::new(blocking::Blocking),
        Box::new(conservation::Conservation),
        Box::new(pubsub::PubSubDelivery),
        Box::new(adversarial::AdversarialScripts),
    ]
}
