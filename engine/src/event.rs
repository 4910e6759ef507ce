//! What the engine asks of its host: the events [`crate::Engine::poll_event`]
//! returns, and the values it hands over to free in the background.
//!
//! Every effect the host must perform, beyond writing a client's pending
//! output and arming the timer of `poll_timeout`, is an [`Event`]: the engine
//! has no other side door to its host. Persistence's requests (append these
//! bytes to the AOF, fsync it, fork a child to write a snapshot) are events
//! too, the host reporting their completion back as an input (see
//! [`crate::persist`]), so the engine stays free of I/O.

use crate::client::{ClientId, CloseReason};
use crate::dict::Dict;
use crate::persist::{ForkRequest, StorageRequest};
use crate::value::Value;

/// Values cheaper to free than this are always freed inline (Redis's
/// LAZYFREE_THRESHOLD is 64 elements).
pub const LAZYFREE_THRESHOLD_UNITS: u64 = 64;

/// Something for the host to act on.
#[derive(Debug)]
pub enum Event {
    /// Close this connection. If `reason.flush_first()`, write its pending
    /// output first. Then call [`Engine::disconnect`].
    Close {
        client: ClientId,
        reason: CloseReason,
    },
    /// Drop this off the command thread (UNLINK, FLUSHALL ASYNC, lazy free).
    Free(Garbage),
    /// A command ran (only when `Config::record_executions`).
    Executed(Executed),
    /// A key left the keyspace without a command asking for it: it expired
    /// (on access or in the cron) or was evicted (only when
    /// `Config::record_executions`). A lazy expiry comes before the
    /// `Executed` of the command that met it. The simulator demands the
    /// keyspace notification each one owes.
    KeyRemoved(KeyRemoved),
    /// Serve nobody for `duration_ns` (DEBUG SLEEP): Redis blocks its one
    /// command thread that long. The real server sleeps its command thread
    /// before writing this input's replies; the simulator keeps its virtual
    /// CPU busy for it. Several stalls in one input add up.
    Stall { duration_ns: u64 },
    /// A slice of a long script ran and the script is suspended (see
    /// [`crate::scripting::busy`]): the CPU was busy for `work_units`.
    /// The script's EVAL, recorded as [`Event::Executed`] when it ends,
    /// carries the work of every slice, these included: a host that
    /// charges slices charges the EVAL only what is left.
    ScriptSlice {
        client: ClientId,
        request_seq: u64,
        work_units: u64,
    },
    /// A slice of a snapshot read ran (see [`crate::snapshot_read`]): the
    /// CPU was busy for `work_units` and produced `reply_bytes` of the
    /// reply of `client`'s request `request_seq`, which executed (and was
    /// recorded as [`Event::Executed`]) when the read opened. The reply
    /// leaves with the last slice.
    ReplySlice {
        client: ClientId,
        request_seq: u64,
        work_units: u64,
        reply_bytes: u64,
        /// Elements the slice visited or emitted (at most
        /// [`crate::Config::snapshot_slice_elements`]).
        elements: u64,
        /// The read's last slice: the reply is now in the output.
        last: bool,
    },
    /// Stop the server (SHUTDOWN, only when `Config::shutdown_command`):
    /// the host stops accepting, closes every connection and exits. The
    /// client that asked gets no reply, as in Redis.
    Shutdown(Shutdown),
    /// A line for the server's log, where Redis's `serverLog` writes one
    /// (the engine writes no log of its own). A host without a log drops it.
    Log { level: LogLevel, text: String },
    /// Do this to the disk and report it with [`Engine::storage_done`]; an
    /// [`IoMode::Inline`] request before anything else (see
    /// [`crate::persist::storage`]).
    ///
    /// [`Engine::storage_done`]: crate::Engine::storage_done
    /// [`IoMode::Inline`]: crate::persist::IoMode::Inline
    Storage(StorageRequest),
    /// Fork a child for BGSAVE or BGREWRITEAOF (see
    /// [`crate::persist::ForkRequest`]).
    Fork(ForkRequest),
    /// Open a TCP connection to the primary at `host:port` for the
    /// replication link `client` (REPLICAOF, `replicaof`): the host resolves
    /// the name, connects and then calls [`Engine::primary_link_up`], or
    /// [`Engine::disconnect`] if it cannot. From then on `client` is a
    /// connection like any other: its bytes go to `handle_input`, its
    /// output is drained with `poll_transmit`, and [`Event::Close`] ends it
    /// (see [`crate::repl::replica`]).
    ///
    /// [`Engine::primary_link_up`]: crate::Engine::primary_link_up
    /// [`Engine::disconnect`]: crate::Engine::disconnect
    ConnectPrimary {
        client: ClientId,
        host: String,
        port: u16,
    },
    /// The replica loaded its primary's RDB (a full resync) on the command
    /// thread: the CPU was busy for `work_units`, as for a command.
    SyncLoaded { client: ClientId, work_units: u64 },
    /// Stop at once with exit status `status`, without saving: a fatal
    /// error, as Redis's `exit(1)` after a file it cannot load. The log
    /// line saying why comes first.
    Exit { status: i32 },
}

/// How much a [`Event::Log`] line matters, as Redis's log levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Notice,
    Warning,
}

/// A SHUTDOWN the engine accepted, with what its caller chose about saving.
///
/// seedkv keeps nothing on disk yet, so today no host saves: the engine
/// refuses `SHUTDOWN SAVE` without FORCE (Redis's reply when the final save
/// fails) and hands over the rest. Once persistence exists, the host (or
/// the engine, through write/fsync events) saves first when `save` says
/// so, and `force` says whether a failed save still stops the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shutdown {
    pub save: ShutdownSave,
    /// FORCE: stop even if saving fails.
    pub force: bool,
}

/// SHUTDOWN's choice about saving the dataset before stopping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShutdownSave {
    /// Neither SAVE nor NOSAVE: save if save points are configured.
    Configured,
    /// SAVE: save even without save points.
    Save,
    /// NOSAVE: do not save.
    NoSave,
}

/// Values handed to the host to free in the background.
#[derive(Debug)]
pub enum Garbage {
    Value(Value),
    /// A whole database (FLUSHDB/FLUSHALL ASYNC), boxed so that the common
    /// events stay small.
    Db(Box<FreedDb>),
}

/// The contents of a flushed database.
#[derive(Debug)]
pub struct FreedDb {
    pub keys: Dict<Value>,
    pub expires: Dict<u64>,
}

impl Garbage {
    /// Objects this frees, as INFO memory `lazyfreed_objects` counts them:
    /// one per value, one per key of a flushed database.
    pub fn objects_count(&self) -> u64 {
        match self {
            Garbage::Value(_) => 1,
            Garbage::Db(db) => db.keys.len() as u64,
        }
    }

    /// Work the background thread spends freeing this.
    pub fn work_units(&self) -> u64 {
        match self {
            Garbage::Value(v) => v.free_cost_units(),
            Garbage::Db(db) => {
                let FreedDb { keys, expires } = &**db;
                keys.iter().map(|(_, v)| v.free_cost_units()).sum::<u64>() + expires.len() as u64
            }
        }
    }
}

/// Why a key left the keyspace on its own (see [`Event::KeyRemoved`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemovalCause {
    /// A command met the key past its TTL (lazy expiry).
    ExpiredOnAccess,
    /// The active-expire cron found it past its TTL.
    ExpiredInCron,
    /// `maxmemory` eviction chose it.
    Evicted,
}

/// A key removed by expiry or eviction, in database `db`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyRemoved {
    pub db: usize,
    pub key: Vec<u8>,
    pub cause: RemovalCause,
}

/// A record of one executed request, in execution order. Rejected requests
/// (unknown command, wrong arity, NOAUTH) are recorded too, with an empty
/// name, so that `(client, request_seq)` names every request.
#[derive(Debug, Clone)]
pub struct Executed {
    pub client: ClientId,
    /// Index of the request on its connection, from 0.
    pub request_seq: u64,
    /// Full lowercase name (`get`, `client|list`); empty when rejected.
    pub name: &'static str,
    pub flags: u32,
    pub work_units: u64,
    pub reply_bytes: usize,
    /// Set for a command run by EXEC: the `request_seq` of that EXEC. Its
    /// own `request_seq` is the one it was queued with (the request that got
    /// `+QUEUED`); all of one EXEC's commands are recorded back to back,
    /// before the EXEC itself. A queued command EXEC never ran (DISCARD,
    /// EXECABORT, a failed WATCH) is never recorded.
    pub in_exec: Option<u64>,
    /// What the command touched, measured around it by the generic
    /// execution code (only with `Config::record_sizes`; see
    /// [`crate::sizes`]). `None` for a rejected request.
    pub sizes: Option<Box<crate::sizes::Sizes>>,
}
