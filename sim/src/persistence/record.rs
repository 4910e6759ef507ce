//! What a run with persistence records for the checkers: the snapshots
//! that reached `dbfilename`, the crash, and the dataset the restarted
//! server holds, as the harness read it through commands.

use std::collections::BTreeMap;

use super::PersistMode;
use crate::history::TimeNs;

/// A snapshot that was renamed over `dbfilename`: it holds the dataset
/// after some prefix of the executions in `prefix_lo..=prefix_hi` (the
/// world knows the instant of the fork only up to the input it was in).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub prefix_lo: usize,
    pub prefix_hi: usize,
    pub renamed_ns: TimeNs,
    /// The rename is durable: a sync of the server's directory completed
    /// after it, or the file system's journal committed.
    pub dir_synced: bool,
}

/// One key of the restarted dataset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObservedKey {
    pub type_name: String,
    /// The value's digest (see `check::persistence::digest`).
    pub digest: u64,
    /// Absolute expiry (restart time plus PTTL), if it has one.
    pub expire_unix_ms: Option<u64>,
    /// The value, shortened, for messages.
    pub shown: String,
}

/// The crash and what the restarted server held.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CrashRecord {
    pub at_ns: TimeNs,
    /// `History::executions.len()` at the crash.
    pub executions_count: usize,
    /// Injected disk faults (errors, short writes) before the crash.
    pub disk_faults_count: u64,
    pub restart_unix_ms: u64,
    /// The restarted server exited or failed to load: why.
    pub restart_error: Option<String>,
    /// The disk injected a fault while the server restarted, or the crash
    /// tore a sector (an exit then is legitimate: Redis 7.0 also refuses a
    /// torn AOF tail of garbage or zeros).
    pub restart_fault_injected: bool,
    /// Keys by (database, name); empty if `restart_error`.
    pub observed: BTreeMap<(usize, Vec<u8>), ObservedKey>,
    /// Reading the dataset went wrong (an unexpected reply).
    pub inspect_error: Option<String>,
}

/// Everything a persistence run recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PersistRecord {
    pub mode: PersistMode,
    /// The worst fsync latency the disk can take (bounds everysec's window).
    pub fsync_latency_max_ns: u64,
    pub snapshots: Vec<Snapshot>,
    pub crash: Option<CrashRecord>,
    /// The server exited (Event::Exit): when, its status, and whether a
    /// disk fault had been injected by then (a legitimate exit).
    pub exit: Option<(TimeNs, i32, bool, String)>,
}

impl PersistRecord {
    pub fn new(mode: PersistMode, fsync_latency_max_ns: u64) -> PersistRecord {
        PersistRecord {
            mode,
            fsync_latency_max_ns,
            snapshots: Vec::new(),
            crash: None,
            exit: None,
        }
    }
}
