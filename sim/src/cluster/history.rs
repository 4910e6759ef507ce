//! What a multi-node run recorded for its checkers: the primary's stream
//! as a witness read it, every replication link's session (its PSYNC,
//! the answer, the stream bytes the replica was handed and the acks the
//! primary was handed), the clients' operations, writes a replica made on
//! its own, and the datasets at the end.

use std::collections::BTreeMap;

use seedkv_engine::resp::Frame;

use crate::persistence::record::ObservedKey;

/// The primary's stream under one replication id, from `base` on: byte
/// `i` of `bytes` has offset `base + 1 + i`.
#[derive(Clone, Debug, Default)]
pub struct WitnessStream {
    pub incarnation: u32,
    pub replid: String,
    pub base: u64,
    pub bytes: Vec<u8>,
}

impl WitnessStream {
    /// The offset of the last byte.
    pub fn end(&self) -> u64 {
        self.base + self.bytes.len() as u64
    }
}

/// One replication link from a replica to the primary.
#[derive(Clone, Debug, Default)]
pub struct Session {
    pub replica: u32,
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
}
