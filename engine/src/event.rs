//! What the engine asks of its host: the events [`crate::Engine::poll_event`]
//! returns, and the values it hands over to free in the background.

use crate::client::{ClientId, CloseReason};
use crate::dict::Dict;
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
