//! The bookkeeping persistence shares: request ids and what each request
//! in flight is for, and the options it reads from the configuration.

use std::collections::{BTreeMap, VecDeque};

use super::storage::{ChildId, IoMode, StorageId, StorageOp, StorageRequest};
use crate::commands::config::config_get;
use crate::config::Config;
use crate::event::Event;

/// The persistence options, read from the configuration when needed (not
/// on the command path: the AOF keeps its own `enabled` flag).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PersistConfig {
    pub dbfilename: String,
    /// `save` as `(seconds, changes)` pairs; empty: no save points.
    pub save_points: Vec<(u64, u64)>,
    pub rdbcompression: bool,
    pub rdbchecksum: bool,
    pub stop_writes_on_bgsave_error: bool,
    pub appendonly: bool,
    pub appendfilename: String,
    pub appenddirname: String,
    pub appendfsync: Fsync,
    pub aof_use_rdb_preamble: bool,
    pub aof_load_truncated: bool,
    pub no_appendfsync_on_rewrite: bool,
}

/// `appendfsync`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fsync {
    Always,
    EverySec,
    No,
}

impl PersistConfig {
    pub fn of(config: &Config) -> PersistConfig {
        let get = |name: &str| config_get(config, name).unwrap_or_default();
        let yes = |name: &str| get(name).eq_ignore_ascii_case("yes");
        PersistConfig {
            dbfilename: get("dbfilename"),
            save_points: save_points(&get("save")),
            rdbcompression: yes("rdbcompression"),
            rdbchecksum: yes("rdbchecksum"),
            stop_writes_on_bgsave_error: yes("stop-writes-on-bgsave-error"),
            appendonly: yes("appendonly"),
            appendfilename: get("appendfilename"),
            appenddirname: get("appenddirname"),
            appendfsync: match get("appendfsync").to_ascii_lowercase().as_str() {
                "always" => Fsync::Always,
                "no" => Fsync::No,
                _ => Fsync::EverySec,
            },
            aof_use_rdb_preamble: yes("aof-use-rdb-preamble"),
            aof_load_truncated: yes("aof-load-truncated"),
            no_appendfsync_on_rewrite: yes("no-appendfsync-on-rewrite"),
        }
    }
}

/// `save`'s text as `(seconds, changes)` pairs.
fn save_points(text: &str) -> Vec<(u64, u64)> {
    let numbers: Vec<u64> = text
        .split_ascii_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    numbers.chunks_exact(2).map(|p| (p[0], p[1])).collect()
}

/// [`PersistConfig`]'s `stop_writes_on_bgsave_error && !save_points.is_empty()`,
/// reading those two parameters alone: every write asks it while the last
/// background save failed, and building the whole [`PersistConfig`] looks
/// up and copies a dozen parameters.
pub(crate) fn stops_writes_after_failed_save(config: &Config) -> bool {
    let yes = config_get(config, "stop-writes-on-bgsave-error")
        .is_some_and(|v| v.eq_ignore_ascii_case("yes"));
    yes && !save_points(&config_get(config, "save").unwrap_or_default()).is_empty()
}

/// What a request in flight is for: its completion is routed by this.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// A step of a foreground save (SAVE, SHUTDOWN's save, FLUSHALL's).
    Save,
    /// Reading `dbfilename` or an AOF file at start.
    Load,
    /// The AOF (see `aof`).
    Aof(super::aof::AofOp),
    /// Loading the AOF at start.
    AofLoad,
    /// Reading or writing the `aclfile` (see `aclfile`).
    AclFile,
    /// Tidying up (removing a failed child's temp file): the outcome only
    /// matters to the log.
    Cleanup,
}

/// Request ids, the requests in flight, and forks.
#[derive(Debug, Default)]
pub(crate) struct Requests {
    next_id: u64,
    next_child: u64,
    pub(crate) in_flight: BTreeMap<StorageId, Purpose>,
}

impl Requests {
    /// Queues `op` as an event and remembers what it is for.
    pub(crate) fn issue(
        &mut self,
        events: &mut VecDeque<Event>,
        mode: IoMode,
        op: StorageOp,
        purpose: Purpose,
    ) -> StorageId {
        let id = StorageId(self.next_id);
        self.next_id += 1;
        self.in_flight.insert(id, purpose);
        events.push_back(Event::Storage(StorageRequest { id, mode, op }));
        id
    }

    pub(crate) fn next_child(&mut self) -> ChildId {
        self.next_child += 1;
        ChildId(self.next_child)
    }
}

/// All persistence state (a field of [`crate::server::Server`]).
#[derive(Debug, Default)]
pub struct Persist {
    pub(crate) requests: Requests,
    pub(crate) rdb: super::rdb::RdbState,
    pub(crate) load: Option<super::rdb::Load>,
    pub(crate) aof: super::aof::Aof,
    pub(crate) aof_load: Option<super::aof::load::AofLoad>,
    pub(crate) acl_file: Option<super::aclfile::AclFileOp>,
}
