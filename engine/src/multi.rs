//! Transactions: the MULTI queue of a client and the keys clients WATCH
//! (Redis's multi.c).
//!
//! A client in MULTI has its commands queued instead of run; EXEC runs the
//! queue back to back inside one call of the engine, so no other client's
//! command can fall between them (the engine is one thread, as Redis is).
//! The engine does the queueing and the running (see `crate::pipeline`);
//! this module keeps the state and decides what EXEC must do.
//!
//! WATCH is optimistic locking: a watched key that is modified before EXEC
//! makes EXEC reply a null array and run nothing. Modifications are reported
//! by [`touch_key`] (from `Ctx::store`/`Ctx::delete` and, after every write
//! command that changed data, for each of its key positions) and
//! [`touch_db`] (FLUSHDB, FLUSHALL, SWAPDB). Expiry needs no hook: as in
//! Redis 7.0, a watched key that was alive at WATCH and is logically expired
//! at EXEC fails the EXEC, whether or not anyone deleted it meanwhile; so
//! WATCH records the key's expiry time and EXEC compares it with `now`.

use std::collections::BTreeMap;

use std::collections::VecDeque;

use crate::client::{Client, ClientId, Clients};
use crate::cmd::{flags, CommandSpec};
use crate::commands::monitor;
use crate::db::{Keyspace, DATABASES_COUNT};
use crate::resp::{Protocol, ReplyWriter};
use crate::server::Server;
use crate::time::Now;

/// One command waiting for EXEC.
#[derive(Debug)]
pub struct Queued {
    pub args: Vec<Vec<u8>>,
    /// Its index on the connection; EXEC records its execution under it.
    pub request_seq: u64,
}

/// A client's MULTI block.
#[derive(Debug, Default)]
pub struct MultiState {
    /// Redis bounds the queue only by the client's memory (the query buffer
    /// limit bounds each request), and so do we.
    pub queue: Vec<Queued>,
    /// A command was rejected while queueing (Redis's CLIENT_DIRTY_EXEC):
    /// EXEC replies EXECABORT.
    pub aborted: bool,
    /// CLIENT LIST's `multi-mem`: what Redis 7.0.15's
    /// `multiStateMemOverhead` counts, the queued commands' argument
    /// bytes plus a pointer (8 bytes) per argument (`argv_len_sums`;
    /// 7.0.15 counts neither watched keys nor the queue's own array, as
    /// measured on redis-server). Kept as a sum, so CLIENT LIST need not
    /// walk the queue.
    pub mem_bytes: usize,
}

/// Bytes Redis counts per queued argument besides its own: the `robj *`
/// of the command's argv.
pub const QUEUED_ARG_POINTER_BYTES: usize = 8;

/// A key a client watches.
#[derive(Debug)]
pub struct WatchedKey {
    pub db: usize,
    pub key: Box<[u8]>,
    /// The key's expiry (unix ms) when it was watched, if it had one and was
    /// alive then. EXEC fails once `now` reaches it (Redis 7.0's
    /// `isWatchedKeyExpired`): the key expired after WATCH.
    pub expires_at_ms: Option<u64>,
}

/// A client's transaction state.
#[derive(Debug, Default)]
pub struct ClientTx {
    /// Set between MULTI and EXEC/DISCARD.
    pub multi: Option<MultiState>,
    /// Keys watched, in WATCH order, without duplicates.
    pub watched: Vec<WatchedKey>,
    /// A watched key was modified (Redis's CLIENT_DIRTY_CAS).
    pub dirty_cas: bool,
    /// The queue EXEC's handler hands to the engine to run, right after it
    /// replied the array header (see [`take_exec_queue`]).
    pub exec_queue: Option<Vec<Queued>>,
    /// While EXEC runs its queue, how many commands were queued: Redis
    /// keeps the client's MULTI flag and queue until EXEC ends, so CLIENT
    /// LIST (and an ACL LOG entry taken meanwhile) shows `x` and `multi=`.
    pub exec_running: Option<usize>,
}

impl ClientTx {
    pub fn in_multi(&self) -> bool {
        self.multi.is_some()
    }

    /// CLIENT LIST's `multi=`: the commands queued, in MULTI or while EXEC
    /// runs them; -1 otherwise.
    pub fn queued_count(&self) -> Option<usize> {
        match (&self.multi, self.exec_running) {
            (Some(m), _) => Some(m.queue.len()),
            (None, running) => running,
        }
    }
}

/// Who watches which key, per database (Redis's `db->watched_keys`).
#[derive(Debug)]
pub struct Watches {
    by_db: Vec<BTreeMap<Box<[u8]>, Vec<ClientId>>>,
    /// Watched (client, key) pairs in all databases: lets every write skip
    /// the hooks while nobody watches anything.
    count: usize,
}

impl Default for Watches {
    fn default() -> Watches {
        Watches {
            by_db: (0..DATABASES_COUNT).map(|_| BTreeMap::new()).collect(),
            count: 0,
        }
    }
}

impl Watches {
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Watched (client, key) pairs in all databases.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Per database, each watched key's watchers (for
    /// [`crate::invariants`]).
    pub(crate) fn by_db(&self) -> &[BTreeMap<Box<[u8]>, Vec<ClientId>>] {
        &self.by_db
    }

    /// A key's watchers, created if missing: lets invariant tests corrupt
    /// them.
    #[cfg(test)]
    pub(crate) fn watchers_mut(&mut self, db: usize, key: &[u8]) -> &mut Vec<ClientId> {
        self.by_db[db].entry(key.into()).or_default()
    }

    /// Clients watching `key` in `db`.
    pub fn watchers(&self, db: usize, key: &[u8]) -> &[ClientId] {
        self.by_db
            .get(db)
            .and_then(|m| m.get(key))
            .map_or(&[], Vec::as_slice)
    }
}

/// WATCH: `client` watches `key` in `db` (once, however often it asks).
/// Returns the work done: the key's watchers scanned for `client`.
///
/// The duplicate check looks `client` up among the key's watchers rather
/// than scanning every key the client watches (as Redis's `watchForKey`
/// does): WATCH of N keys was quadratic in N (8192 keys: 57 ms), which the
/// cost audit found.
pub fn watch(
    watches: &mut Watches,
    keyspace: &Keyspace,
    client: &mut Client,
    db: usize,
    key: &[u8],
    now_ms: u64,
) -> u64 {
    debug_assert!(db < DATABASES_COUNT);
    let watchers = watches.by_db[db].get(key).map_or(&[][..], Vec::as_slice);
    let scanned = watchers.len() as u64;
    if watchers.contains(&client.id) {
        debug_assert!(client
            .tx
            .watched
            .iter()
            .any(|w| w.db == db && *w.key == *key));
        return scanned;
    }
    let d = &keyspace.dbs[db];
    let alive = d.contains(key) && !d.is_expired(key, now_ms);
    let expires_at_ms = if alive { d.get_expire(key) } else { None };
    client.tx.watched.push(WatchedKey {
        db,
        key: key.into(),
        expires_at_ms,
    });
    watches.by_db[db]
        .entry(key.into())
        .or_default()
        .push(client.id);
    watches.count += 1;
    scanned
}

/// UNWATCH (and EXEC, DISCARD, RESET, disconnect): forgets every key
/// `client` watches and its dirty flag.
pub fn unwatch_all(watches: &mut Watches, client: &mut Client) {
    for w in client.tx.watched.drain(..) {
        let map = &mut watches.by_db[w.db];
        if let Some(ids) = map.get_mut(&w.key) {
            let before = ids.len();
            ids.retain(|&id| id != client.id);
            debug_assert_eq!(before, ids.len() + 1, "watch table out of sync");
            watches.count -= before - ids.len();
            if ids.is_empty() {
                map.remove(&w.key);
            }
        }
    }
    client.tx.dirty_cas = false;
}

/// `key` in `db` was modified: every client watching it will fail its EXEC
/// (Redis's `touchWatchedKey`).
pub fn touch_key(watches: &Watches, clients: &mut Clients, db: usize, key: &[u8]) {
    if watches.is_empty() {
        return;
    }
    for id in watches.watchers(db, key) {
        if let Some(c) = clients.get_mut(id) {
            c.tx.dirty_cas = true;
        }
    }
}

/// `db` is flushed, or swapped with `other`: every watched key of `db` that
/// exists in it, or in `other`, is modified (Redis's
/// `touchAllWatchedKeysInDb`). For a flush, call it before the flush.
pub fn touch_db(
    watches: &Watches,
    clients: &mut Clients,
    keyspace: &Keyspace,
    db: usize,
    other: Option<usize>,
) {
    if watches.is_empty() {
        return;
    }
    for (key, ids) in &watches.by_db[db] {
        let exists =
            keyspace.dbs[db].contains(key) || other.is_some_and(|o| keyspace.dbs[o].contains(key));
        if !exists {
            continue;
        }
        for id in ids {
            if let Some(c) = clients.get_mut(id) {
                c.tx.dirty_cas = true;
            }
        }
    }
}

/// What EXEC must do for a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecOutcome {
    /// `-ERR EXEC without MULTI`.
    NotInMulti,
    /// A command was rejected while queueing: `-EXECABORT ...`.
    Abort,
    /// A watched key was modified or expired: a null array.
    WatchFailed,
    /// Run the queue.
    Run,
}

/// Decides EXEC's outcome without changing anything: a watched key that
/// expired by `now_ms` fails it.
pub fn exec_outcome(client: &Client, now_ms: u64) -> ExecOutcome {
    let Some(multi) = &client.tx.multi else {
        return ExecOutcome::NotInMulti;
    };
    if multi.aborted {
        return ExecOutcome::Abort;
    }
    if client.tx.dirty_cas || watched_key_expired(client, now_ms) {
        return ExecOutcome::WatchFailed;
    }
    ExecOutcome::Run
}

/// Whether a key alive at WATCH has expired since, deleted or not.
fn watched_key_expired(client: &Client, now_ms: u64) -> bool {
    client
        .tx
        .watched
        .iter()
        .any(|w| w.expires_at_ms.is_some_and(|when_ms| when_ms <= now_ms))
}

/// Ends the client's MULTI block and forgets its watched keys (EXEC,
/// DISCARD, RESET, disconnect). Returns the queue.
pub fn discard(watches: &mut Watches, client: &mut Client) -> Vec<Queued> {
    unwatch_all(watches, client);
    client.tx.multi.take().map(|m| m.queue).unwrap_or_default()
}

/// Whether `spec` runs at once inside MULTI instead of being queued (Redis
/// exempts exactly these).
pub fn runs_inside_multi(spec: &CommandSpec) -> bool {
    matches!(
        spec.name,
        "exec" | "discard" | "multi" | "watch" | "quit" | "reset"
    )
}

/// Touches the keys a write command changed (called after it ran, when it
/// increased `server.dirty`): its key positions in `db`, and the keys it
/// changed elsewhere (MOVE's and COPY's destination database, SWAPDB's two
/// databases). `reply` is its reply, to tell success from failure.
pub fn touch_after_write(
    watches: &Watches,
    clients: &mut Clients,
    keyspace: &Keyspace,
    spec: &CommandSpec,
    args: &[Vec<u8>],
    db: usize,
) {
    if watches.is_empty() {
        return;
    }
    let db_arg = |i: usize| -> Option<usize> {
        let n = crate::util::parse_i64_strict(args.get(i)?)?;
        usize::try_from(n).ok().filter(|&n| n < DATABASES_COUNT)
    };
    match spec.name {
        "swapdb" => {
            if let (Some(a), Some(b)) = (db_arg(1), db_arg(2)) {
                touch_db(watches, clients, keyspace, a, Some(b));
                touch_db(watches, clients, keyspace, b, Some(a));
            }
            return;
        }
        "move" => {
            if let (Some(key), Some(to)) = (args.get(1), db_arg(2)) {
                touch_key(watches, clients, to, key);
            }
        }
        "copy" => {
            // COPY src dst [DB n] [REPLACE]: only the destination changed.
            let mut to = db;
            let mut i = 3;
            while i + 1 < args.len() {
                if args[i].eq_ignore_ascii_case(b"db") {
                    to = db_arg(i + 1).unwrap_or(db);
                }
                i += 1;
            }
            if let Some(dst) = args.get(2) {
                touch_key(watches, clients, to, dst);
            }
            return;
        }
        "sort" => {
            // SORT ... STORE dst: the destination is not a key position.
            let store = args.iter().rposition(|a| a.eq_ignore_ascii_case(b"store"));
            if let Some(dst) = store.and_then(|i| args.get(i + 1)) {
                touch_key(watches, clients, db, dst);
            }
        }
        _ => {}
    }
    for i in spec.key_indices(args.len()) {
        touch_key(watches, clients, db, &args[i]);
    }
}

/// The watched keys FLUSHDB/FLUSHALL are about to modify, collected before
/// the command runs (after, the keys are gone): every watched key that
/// exists in a database the command empties.
pub fn before_flush(
    watches: &Watches,
    keyspace: &Keyspace,
    spec: &CommandSpec,
    db: usize,
) -> Vec<(usize, Box<[u8]>)> {
    if watches.is_empty() {
        return Vec::new();
    }
    let dbs = match spec.name {
        "flushdb" => db..db + 1,
        "flushall" => 0..DATABASES_COUNT,
        _ => return Vec::new(),
    };
    let mut keys = Vec::new();
    for d in dbs {
        for key in watches.by_db[d].keys() {
            if keyspace.dbs[d].contains(key) {
                keys.push((d, key.clone()));
            }
        }
    }
    keys
}

/// What the engine does with a request, before running it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intercepted {
    /// Run it as usual.
    No,
    /// Queued inside MULTI; `+QUEUED` was written. Nothing else happens.
    Queued,
    /// Rejected (a command Redis refuses inside MULTI, or a keyspace command
    /// from a monitor); the error was written. Count it as rejected.
    Rejected,
}

/// The MULTI/MONITOR gate in front of every request that resolved to
/// `spec` (not for the commands EXEC runs): queues it inside MULTI, or
/// rejects it, writing the reply into `reply`.
pub fn intercept(
    client: &mut Client,
    spec: &CommandSpec,
    args: &[Vec<u8>],
    request_seq: u64,
    reply: &mut Vec<u8>,
    protocol: Protocol,
) -> Intercepted {
    let mut w = ReplyWriter::new(reply, protocol);
    if client.monitor && spec.has(flags::WRITE | flags::READONLY | flags::MAY_REPLICATE) {
        w.error(monitor::REPLICA_KEYSPACE_ERROR);
        flag_aborted(client);
        return Intercepted::Rejected;
    }
    let Some(multi) = client.tx.multi.as_mut() else {
        return Intercepted::No;
    };
    if runs_inside_multi(spec) {
        return Intercepted::No;
    }
    if spec.has(flags::NO_MULTI) {
        w.error("ERR Command not allowed inside a transaction");
        multi.aborted = true;
        return Intercepted::Rejected;
    }
    // Redis's `queueMultiCommand`: a transaction already doomed (a refused
    // command, a touched watched key) answers +QUEUED but keeps nothing,
    // which CLIENT LIST's `multi` and `multi-mem` show.
    if multi.aborted || client.tx.dirty_cas {
        w.simple("QUEUED");
        return Intercepted::Queued;
    }
    multi.mem_bytes += args
        .iter()
        .map(|a| a.len() + QUEUED_ARG_POINTER_BYTES)
        .sum::<usize>();
    multi.queue.push(Queued {
        args: args.to_vec(),
        request_seq,
    });
    w.simple("QUEUED");
    Intercepted::Queued
}

/// A request was rejected (unknown command, wrong arity...): inside MULTI,
/// EXEC will reply EXECABORT (Redis's `flagTransaction`).
pub fn flag_aborted(client: &mut Client) {
    if let Some(multi) = client.tx.multi.as_mut() {
        multi.aborted = true;
    }
}

/// The queue EXEC's handler accepted, for the engine to run now.
pub fn take_exec_queue(clients: &mut Clients, client: ClientId) -> Option<Vec<Queued>> {
    clients.get_mut(&client)?.tx.exec_queue.take()
}

/// What a command's WATCH and MONITOR bookkeeping needs from before it ran
/// (handlers may take their arguments apart, and FLUSHDB's keys are gone
/// after). Only built while someone watches or monitors.
pub struct Hook {
    args: Vec<Vec<u8>>,
    dirty_before: u64,
    flushed: Vec<(usize, Box<[u8]>)>,
}

impl Hook {
    pub fn before(
        server: &Server,
        db: usize,
        spec: &CommandSpec,
        args: &[Vec<u8>],
    ) -> Option<Hook> {
        let watching = !server.watches.is_empty() && spec.has(flags::WRITE);
        let monitoring = !server.monitors.is_empty() && monitor::is_fed(spec);
        if !watching && !monitoring {
            return None;
        }
        Some(Hook {
            args: args.to_vec(),
            dirty_before: server.dirty,
            flushed: before_flush(&server.watches, &server.keyspace, spec, db),
        })
    }

    /// After the command ran in `db` (the database selected before it):
    /// touches the watched keys it modified and feeds monitors.
    #[allow(clippy::too_many_arguments)]
    pub fn after(
        self,
        server: &Server,
        clients: &mut Clients,
        transmit: &mut VecDeque<ClientId>,
        now: Now,
        client: ClientId,
        db: usize,
        spec: &CommandSpec,
        failed: bool,
    ) {
        if server.dirty > self.dirty_before {
            touch_after_write(
                &server.watches,
                clients,
                &server.keyspace,
                spec,
                &self.args,
                db,
            );
        }
        if !failed {
            for (d, key) in &self.flushed {
                touch_key(&server.watches, clients, *d, key);
            }
        }
        if !server.monitors.is_empty() && monitor::is_fed(spec) {
            let Some(c) = clients.get(&client) else {
                return;
            };
            let line = monitor::line(now, c.db, &c.info.addr, &self.args);
            monitor::feed(&server.monitors, clients, transmit, &line);
        }
    }
}

/// The client is gone: it leaves the watch table and the monitors.
pub fn client_gone(server: &mut Server, client: &mut Client) {
    drop(discard(&mut server.watches, client));
    monitor::stop(&mut server.monitors, client);
}

/// A request was rejected before running (unknown command, wrong arity,
/// NOAUTH...), its error already in `reply` from `reply_start`: inside
/// MULTI, EXEC will reply EXECABORT (Redis's `flagTransaction`); a
/// rejected EXEC itself discards the transaction and says why, as Redis's
/// `execCommandAbort` does.
pub fn rejected(
    watches: &mut Watches,
    client: &mut Client,
    name: &[u8],
    reply: &mut Vec<u8>,
    reply_start: usize,
) {
    flag_aborted(client);
    if !name.eq_ignore_ascii_case(b"exec") || reply.get(reply_start) != Some(&b'-') {
        return;
    }
    drop(discard(watches, client));
    let error = reply[reply_start + 1..].to_vec();
    let error = error.strip_prefix(b"ERR ").unwrap_or(&error);
    reply.truncate(reply_start);
    reply.extend_from_slice(b"-EXECABORT Transaction discarded because of: ");
    reply.extend_from_slice(error);
}
