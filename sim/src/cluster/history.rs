//! What a multi-node run recorded for its checkers: the primary's stream
//! as a witness read it, every replication link's session (its PSYNC,
//! the answer, the stream bytes the replica was handed and the acks the
//! primary was handed), the clients' operations, writes a replica made on
//! its own, and the datasets at the end.

use std::collections::{BTreeMap, BTreeSet};

use seedkv_engine::resp::Frame;

use crate::persistence::record::ObservedKey;

/// The primary's stream under one replication id, from `base` on: byte
/// `i` of `bytes` has offset `base + 1 + i`.
///
/// Across a failover the primary's history goes on under another id on
/// another node, as Redis keeps it: the promoted replica's stream
/// continues the old primary's at the same offsets (its `master_replid2`
/// is the old id, `second_replid_offset` where it took over). The witness
/// then asks the new primary for `PSYNC <old id> <old end + 1>`; a
/// `+CONTINUE` makes the new stream a child of the old one (`parent`),
/// and the chain from a root to a tip is one history: bytes up to a
/// child's `base` are its parent's. A `+FULLRESYNC` starts a new root.
#[derive(Clone, Debug, Default)]
pub struct WitnessStream {
    /// The node that wrote it, and its life.
    pub node: u32,
    pub incarnation: u32,
    pub replid: String,
    pub base: u64,
    pub bytes: Vec<u8>,
    /// The stream this one continues (see above).
    pub parent: Option<usize>,
}

impl WitnessStream {
    /// The offset of the last byte.
    pub fn end(&self) -> u64 {
        self.base + self.bytes.len() as u64
    }
}

/// One replication link from a replica to its primary (a chained
/// replica's primary is itself a replica).
#[derive(Clone, Debug, Default)]
pub struct Session {
    pub replica: u32,
    /// The node the link reached.
    pub primary: u32,
    /// The replica's incarnation (a restarted replica has no cached
    /// primary to resume from).
    pub replica_incarnation: u32,
    /// The sync completed: `+CONTINUE`, or a full resync's whole RDB.
    pub synced: bool,
    /// The primary's incarnation the link reached.
    pub incarnation: u32,
    pub opened_ns: u64,
    /// The PSYNC the primary was handed, when, and the primary's stream
    /// end (witnessed) at that moment.
    pub psync: Option<(String, i64)>,
    pub psync_ns: u64,
    pub primary_end_at_psync: u64,
    pub primary_replid_at_psync: String,
    /// How the primary answered.
    pub full: Option<bool>,
    pub answer_replid: Option<String>,
    /// The stream handed to the replica: byte `i` has offset
    /// `stream_base + 1 + i`.
    pub stream_base: Option<u64>,
    pub stream: Vec<u8>,
    /// Acks handed to the primary: (when, offset).
    pub acks: Vec<(u64, u64)>,
    pub garbled: bool,
}

/// One client operation on one node.
#[derive(Clone, Debug)]
pub struct ClusterOp {
    pub client: u32,
    pub node: u32,
    /// The client's connection number (each reconnect is a new one).
    pub conn: u64,
    pub args: Vec<Vec<u8>>,
    pub invoke_ns: u64,
    /// The reply, or `None`: the connection was lost first (unknown).
    pub reply: Option<Frame>,
    pub complete_ns: u64,
    /// For WAIT: the connection's write offset (the primary's stream end
    /// after its last write) and when the primary produced the reply.
    pub wait_woff: u64,
    pub wait_answered_ns: u64,
}

/// One FAILOVER the admin sent, and what became of it.
#[derive(Clone, Debug, Default)]
pub struct FailoverRecord {
    /// The primary it was sent to, and when.
    pub node: u32,
    pub at_ns: u64,
    pub args: Vec<String>,
    /// Whether it answered `+OK` (else its error).
    pub accepted: bool,
    pub reply: String,
    pub force: bool,
    /// The witness stream current when it began.
    pub witness_before: Option<usize>,
    /// When the primary became a replica of the target.
    pub handed_over_ns: Option<u64>,
    /// When a replica promoted itself, which, and the witness stream the
    /// world then read from it.
    pub completed: Option<(u64, u32)>,
    pub witness_after: Option<usize>,
    /// When the admin sent `FAILOVER ABORT`, and its reply.
    pub abort: Option<(u64, String)>,
}

/// A node's keys, by (database, key).
pub type Dataset = BTreeMap<(usize, Vec<u8>), ObservedKey>;

/// A multi-node run's record.
#[derive(Clone, Debug, Default)]
pub struct ClusterHistory {
    pub replicas_count: u32,
    pub witness: Vec<WitnessStream>,
    pub sessions: Vec<Session>,
    pub ops: Vec<ClusterOp>,
    /// A replica changed its dataset on its own: (node, when, what).
    pub invented: Vec<(u32, u64, String)>,
    /// `repl-backlog-size` of the primary.
    pub backlog_bytes: u64,
    /// When the last fault ended (partitions healed, nodes back up).
    pub faults_end_ns: u64,
    /// When every replica had the primary's whole stream, after the
    /// faults ended; `None` if that never happened within the bound.
    pub converged_ns: Option<u64>,
    pub convergence_bound_ns: u64,
    /// Every node's dataset at the end, read through commands at one
    /// common clock (`None`: the node was down or the read failed).
    pub datasets: Vec<Result<Dataset, String>>,
    pub end_ns: u64,
    /// When the primary crashed.
    pub primary_crashes_ns: Vec<u64>,
    /// The primary's lists (`log:*`) at the end, element by element.
    pub final_lists: Option<BTreeMap<Vec<u8>, Vec<Vec<u8>>>>,
    /// The FAILOVERs sent, and the primary at the end.
    pub failovers: Vec<FailoverRecord>,
    pub final_primary: u32,
}

impl ClusterHistory {
    /// Every (list, element) of the final primary's lists, if they were
    /// read at the end: what the loss checkers look acknowledged appends
    /// up in.
    pub fn final_elements(&self) -> Option<BTreeSet<(&[u8], &[u8])>> {
        let lists = self.final_lists.as_ref()?;
        Some(
            lists
                .iter()
                .flat_map(|(k, items)| items.iter().map(move |v| (k.as_slice(), v.as_slice())))
                .collect(),
        )
    }

    /// The chain of witness streams ending at `tip`, root first.
    pub fn lineage(&self, tip: usize) -> Vec<usize> {
        let mut chain = vec![tip];
        // Bounded: a parent is always an earlier stream.
        while let Some(p) = self.witness[*chain.last().expect("tip")].parent {
            debug_assert!(p < *chain.last().expect("tip"));
            chain.push(p);
        }
        chain.reverse();
        chain
    }

    /// The history's bytes at offsets `from + 1 ..= to` along the chain
    /// ending at `tip`; `None` if the chain does not hold them all.
    pub fn lineage_bytes(&self, tip: usize, from: u64, to: u64) -> Option<Vec<u8>> {
        let chain = self.lineage(tip);
        let root = &self.witness[chain[0]];
        if from < root.base || to > self.witness[tip].end() || from > to {
            return None;
        }
        let mut out = Vec::with_capacity((to - from) as usize);
        for (i, &c) in chain.iter().enumerate() {
            let w = &self.witness[c];
            // This stream holds the offsets up to where its child took over.
            let until = chain.get(i + 1).map_or(w.end(), |&n| self.witness[n].base);
            let (lo, hi) = (from.max(w.base), to.min(until).min(w.end()));
            if lo < hi {
                out.extend_from_slice(&w.bytes[(lo - w.base) as usize..(hi - w.base) as usize]);
            }
        }
        (out.len() as u64 == to - from).then_some(out)
    }

    /// The witness stream a session's bytes are compared with: the one
    /// under the id the primary answered, else the one of the node's life
    /// the link reached.
    pub fn witness_of(&self, s: &Session) -> Option<usize> {
        match &s.answer_replid {
            Some(r) => self.witness.iter().position(|w| w.replid == *r),
            None => self
                .witness
                .iter()
                .position(|w| w.node == s.primary && w.incarnation == s.incarnation),
        }
    }

    /// Completed failovers that handed over by FORCE, when they completed.
    pub fn forced_failovers_ns(&self) -> impl Iterator<Item = u64> + '_ {
        self.failovers
            .iter()
            .filter(|f| f.force)
            .filter_map(|f| f.completed.map(|(t, _)| t))
    }
}
