//! Work a planted bug holds back: INCR write-backs
//! ([`PlantedBug::IncrNotAtomic`]) and EXEC tails
//! ([`PlantedBug::ExecInterleaved`]) until the end of the next input, and
//! values handed to the background free that stay in place
//! ([`PlantedBug::LazyFreeStillReachable`]) until the next cron tick.

use super::PlantedBug;
use crate::client::ClientId;
use crate::multi::Queued;
use crate::server::Server;
use crate::value::{RString, Value};

/// Work held back by a planted bug; empty (and free) on a clean engine.
#[derive(Debug, Default)]
pub(crate) struct Held {
    /// INCR results not yet written back, as `(db, key, new value)`.
    pub(super) incr_writes: Vec<(usize, Vec<u8>, Vec<u8>)>,
    /// The commands of each EXEC held back after its first, as `(client,
    /// EXEC's request_seq, queue)`.
    pub(super) exec_tails: Vec<(ClientId, u64, Vec<Queued>)>,
}

impl Held {
    /// The EXEC tails, for the engine to run as EXEC would have (each
    /// command under its own queued `request_seq`, with the EXEC's in
    /// `in_exec`); a tail of several commands is split again, so it
    /// trickles out one command per input.
    pub(crate) fn take_exec_tails(&mut self) -> Vec<(ClientId, u64, Vec<Queued>)> {
        std::mem::take(&mut self.exec_tails)
    }
}

/// Planted bug (PlantedBug::IncrNotAtomic): holds back INCR's write-back of
/// `text` to `key` of database `db` until the end of the next input.
pub(super) fn hold_incr_write(server: &mut Server, db: usize, key: &[u8], text: Vec<u8>) {
    if let Some(p) = server.planted.planted(PlantedBug::IncrNotAtomic) {
        p.held.incr_writes.push((db, key.to_vec(), text));
    }
}

/// Planted bug (PlantedBug::IncrNotAtomic): INCR replied with `old + 1`
/// but left the write-back for later, as if read and write were two steps
/// of an event loop. Writing back now overwrites whatever other INCRs of
/// the same counter did in between: their updates are lost.
pub(super) fn run_incr_writes(server: &mut Server, writes: Vec<(usize, Vec<u8>, Vec<u8>)>) {
    debug_assert!(server.planted.is(PlantedBug::IncrNotAtomic));
    for (db, key, text) in writes {
        let value = Value::Str(RString::new(text));
        drop(server.keyspace.dbs[db].set(&key, value, true));
        server.dirty += 1;
    }
}

/// Planted bug (PlantedBug::LazyFreeStillReachable): a big value handed to
/// the background free is also left where it was, without its TTL, so
/// lookups still find it until the cron's next tick drops it. The host
/// frees the original; the key keeps a copy.
pub(super) fn lazily_freed(server: &mut Server, db: usize, key: &[u8], value: &Value) {
    if value.free_cost_units() <= crate::event::LAZYFREE_THRESHOLD_UNITS {
        return;
    }
    let Some(p) = server.planted.planted(PlantedBug::LazyFreeStillReachable) else {
        return;
    };
    p.ghosts.push((db, key.into(), value.clone()));
    drop(server.keyspace.dbs[db].set(key, value.clone(), false));
}

/// A cron tick: the background free of lazily freed values "finishes"
/// (each leaves its key, unless the key was written since); returns the
/// held INCR write-backs, to apply after the tick.
pub(super) fn cron_tick(server: &mut Server) -> Held {
    let Some(p) = server.planted.planted.as_deref_mut() else {
        return Held::default();
    };
    let ghosts = std::mem::take(&mut p.ghosts);
    let held = Held {
        incr_writes: std::mem::take(&mut p.held.incr_writes),
        ..Held::default()
    };
    for (db, key, value) in ghosts {
        let db = &mut server.keyspace.dbs[db];
        if db.get(&key) == Some(&value) {
            drop(db.remove(&key));
        }
    }
    held
}
