//! Checkers: each reads a run's [`History`] and says whether a property
//! held. Adding a checker is a new file here plus one line in [`all`].

use crate::client::SlowReader;
use crate::history::History;

pub mod access;
pub mod adversarial;
pub mod atomicity;
pub mod blocking;
pub mod busy;
pub mod cluster;
pub mod collection_scan;
pub mod conservation;
pub mod liveness;
pub mod notify;
pub mod pipeline;
pub mod pubsub;
pub mod rare;

pub mod complexity;
pub mod latency;
pub mod linearizability;
pub mod model;
pub mod name_buffer;
pub mod no_freeze;
pub mod persistence;
pub mod pop_model;
pub mod scan;
pub mod snapshot_slices;
pub mod streams;
pub mod tracking;
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

/// What a checker counted while it checked: how many replies it compared
/// with a prediction, and how many it declined to predict (the reference
/// model does not guess at what it cannot know; a checker that declines
/// everything passes everything, so the share compared is watched).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CheckCounts {
    pub compared: u64,
    pub declined: u64,
}

impl CheckCounts {
    pub fn add(&mut self, other: CheckCounts) {
        self.compared += other.compared;
        self.declined += other.declined;
    }

    /// The share of replies compared, in percent (100 when there were none).
    pub fn compared_percent(&self) -> f64 {
        let total = self.compared + self.declined;
        if total == 0 {
            return 100.0;
        }
        self.compared as f64 * 100.0 / total as f64
    }
}

pub trait Checker {
    fn name(&self) -> &'static str;
    fn check(&self, history: &History, facts: &RunFacts) -> Result<(), Violation>;

    /// [`Checker::check`], also counting what was compared and declined;
    /// checkers that predict replies override it.
    fn check_counted(
        &self,
        history: &History,
        facts: &RunFacts,
        _counts: &mut CheckCounts,
    ) -> Result<(), Violation> {
        self.check(history, facts)
    }
}

/// Every checker, run on every seed, in this order.
pub fn all() -> Vec<Box<dyn Checker>> {
    vec![
        Box::new(pipeline::PipelineOrder),
        Box::new(liveness::Liveness),
        Box::new(atomicity::IncrAtomicity),
        Box::new(atomicity::GroupAtomicity),
        Box::new(busy::BusyWindow),
        Box::new(transfer::TransferCheck),
        Box::new(model::ReferenceModel),
        Box::new(linearizability::Linearizability),
        Box::new(scan::ScanCompleteness),
        Box::new(latency::TailLatency),
        Box::new(collection_scan::CollectionScan),
        Box::new(blocking::Blocking),
        Box::new(conservation::Conservation),
        Box::new(pubsub::PubSubDelivery),
        Box::new(rare::RareReplies),
        Box::new(no_freeze::NoFreeze),
        Box::new(adversarial::AdversarialScripts),
        Box::new(persistence::Recovery),
        Box::new(streams::StreamDelivery),
        Box::new(tracking::TrackingCheck),
        Box::new(notify::NotifyEvents),
        Box::new(access::AccessCheck),
        Box::new(snapshot_slices::SnapshotSlices),
    ]
}
