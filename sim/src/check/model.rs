//! The reference model: replays the engine's execution order through a
//! deliberately simple model of the keyspace and checks that every reply a
//! client received is the reply the model predicts.
//!
//! # How it works
//!
//! The engine records every request it executed, in order
//! ([`History::executions`]). Each record names its request by
//! `(connection, index on the connection)`, which finds the client's [`Op`]:
//! its arguments and the reply it received. The model walks the executions
//! in order, and for each one:
//!
//! 1. applies the command to its own state, a
//!    map per database `key -> (value, expire_unix_ms)` (strings only), using the
//!    execution's wall-clock time ([`Execution::unix_ms`]) for expiry: a key
//!    whose expiry time is `<= now` is absent;
//! 2. computes the reply Redis 7.0 would send, and compares it with the reply
//!    the client recorded (when the client received one).
//!
//! The model tracks each connection's selected database (SELECT, RESET), so
//! a command runs against the right database.
//!
//! # Knowing what it does not know
//!
//! The model covers the string and generic commands that the workloads use
//! (see `model_commands.rs`). Anything else (other data types, scripts,
//! MULTI/EXEC, SWAPDB, DEBUG...) it does not guess at. Instead it marks
//! what the command may have changed as **unknown**:
//!
//! - a command with known key positions (from the engine's command table)
//!   makes those keys unknown; cross-database commands (MOVE, COPY) make
//!   the key unknown in every database;
//! - a write command without key positions, or a command that is neither
//!   read-only nor on a short list of harmless ones, makes every database
//!   unknown;
//! - a connection inside MULTI, or in a mode the model does not follow
//!   (SUBSCRIBE, MONITOR, CLIENT REPLY), has its replies skipped and the
//!   keys it names made unknown; EXEC makes the queued keys unknown again
//!   at the moment they really change.
//!
//! A reply that depends on anything unknown is not compared. A key becomes
//! known again when a command determines it completely whatever it held
//! before (SET without NX/XX/KEEPTTL, MSET, DEL, GETDEL); a database becomes
//! known again after FLUSHDB or FLUSHALL. This keeps the checker sound: it
//! never reports a mismatch it cannot justify.
//!
//! DBSIZE is checked as a range: Redis counts logically expired keys that
//! active expiry has not yet reclaimed, so the model accepts any count
//! between the live keys and the live keys plus those that expired without
//! being touched since.
//!
//! The model assumes nothing evicts keys (no `maxmemory` eviction).

use std::collections::BTreeSet;

use seedkv_engine::cmd::{flags, lookup_subcommand, CommandTable};
use seedkv_engine::resp::Frame;

use crate::check::{Checker, RunFacts, Violation};
use crate::fxhash::{FxHashMap, FxHashSet};
use crate::history::{ConnId, Execution, History, Op};

#[path = "model_commands.rs"]
mod commands;
#[path = "model_util.rs"]
pub(crate) mod util;

use util::render_args;

/// Databases per server (Redis's default `databases 16`).
pub(crate) const DB_COUNT: usize = seedkv_engine::db::DATABASES_COUNT;

/// Replies longer than this are cut in violation messages.
const REPLY_SHOWN_MAX_CHARS: usize = 400;

/// The checker: every recorded reply equals the model's prediction.
pub struct ReferenceModel;

impl Checker for ReferenceModel {
    fn name(&self) -> &'static str {
        "reference-model"
    }

    fn check(&self, history: &History, _facts: &RunFacts) -> Result<(), Violation> {
        let ops = index_ops(history);
        let mut model = KeyspaceModel::without_touched_keys();
        for (index, exec) in history.executions.iter().enumerate() {
            let op = ops.get(&(exec.conn, exec.seq_in_conn)).copied();
            let expected = model.apply(exec, op);
            let Some(op) = op else { continue };
            let Some((_, reply)) = &op.complete else {
                continue;
            };
            if let Err(why) = expected.check(reply) {
                return Err(Violation {
                    checker: self.name(),
                    message: format!(
                        "execution #{index} (conn {} request {}, unix_ms {}): `{}`: {why}",
                        exec.conn,
                        exec.seq_in_conn,
                        exec.unix_ms,
                        render_args(&op.args)
                    ),
                });
            }
        }
        Ok(())
    }
}

/// Every op by `(connection, index on the connection)`, built once per
/// check so that each execution finds its op in O(1).
pub(crate) fn index_ops(history: &History) -> FxHashMap<(ConnId, u64), &Op> {
    let mut ops = FxHashMap::default();
    ops.reserve(history.ops.len());
    for op in &history.ops {
        let previous = ops.insert((op.conn, op.seq_in_conn), op);
        debug_assert!(
            previous.is_none(),
            "two ops named conn {} request {}",
            op.conn,
            op.seq_in_conn
        );
    }
    ops
}

/// What the model predicts for a reply.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Expected {
    /// The model cannot predict this reply; it is not compared.
    Unpredictable,
    /// Exactly this frame.
    Exactly(Frame),
    /// Some error (a request the engine rejected before running it).
    AnyError,
    /// An array of bulk strings that, sorted, equals this (KEYS).
    SortedBulks(Vec<Vec<u8>>),
    /// An integer in `low..=high` (DBSIZE).
    IntegerIn(i64, i64),
}

impl Expected {
    pub(crate) fn ok() -> Expected {
        Expected::Exactly(Frame::Simple(b"OK".to_vec()))
    }

    pub(crate) fn error(message: &str) -> Expected {
        Expected::Exactly(Frame::Error(message.as_bytes().to_vec()))
    }

    pub(crate) fn integer(n: i64) -> Expected {
        Expected::Exactly(Frame::Integer(n))
    }

    pub(crate) fn bulk_or_null(value: Option<&[u8]>) -> Expected {
        Expected::Exactly(match value {
            Some(v) => Frame::Bulk(v.to_vec()),
            None => Frame::Null,
        })
    }

    /// `Err` says how `reply` differs from the prediction.
    pub(crate) fn check(&self, reply: &Frame) -> Result<(), String> {
        let matches = match self {
            Expected::Unpredictable => true,
            Expected::Exactly(frame) => frame == reply,
            Expected::AnyError => matches!(reply, Frame::Error(_)),
            Expected::SortedBulks(keys) => match reply {
                Frame::Array(items) => {
                    let mut got: Vec<&[u8]> = Vec::with_capacity(items.len());
                    let mut all_bulks = true;
                    for item in items {
                        match item {
                            Frame::Bulk(b) => got.push(b),
                            _ => all_bulks = false,
                        }
                    }
                    got.sort_unstable();
                    all_bulks
                        && got.len() == keys.len()
                        && got.iter().zip(keys).all(|(a, b)| *a == b.as_slice())
                }
                _ => false,
            },
            Expected::IntegerIn(low, high) => {
                matches!(reply, Frame::Integer(n) if (*low..=*high).contains(n))
            }
        };
        if matches {
            return Ok(());
        }
        let mut got = reply.render();
        if got.len() > REPLY_SHOWN_MAX_CHARS {
            let cut = (0..=REPLY_SHOWN_MAX_CHARS)
                .rev()
                .find(|&i| got.is_char_boundary(i))
                .unwrap_or(0);
            got.truncate(cut);
            got.push_str("...");
        }
        Err(format!("expected {}, got {got}", self.describe()))
    }

    fn describe(&self) -> String {
        match self {
            Expected::Unpredictable => "anything".into(),
            Expected::Exactly(frame) => frame.render(),
            Expected::AnyError => "an error".into(),
            Expected::SortedBulks(keys) => format!(
                "the {} keys {:?}",
                keys.len(),
                keys.iter()
                    .take(16)
                    .map(|k| String::from_utf8_lossy(k))
                    .collect::<Vec<_>>()
            ),
            Expected::IntegerIn(low, high) => format!("an integer in {low}..={high}"),
        }
    }
}

/// A string key's value and expiry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub value: Vec<u8>,
    pub expire_unix_ms: Option<u64>,
}

impl Entry {
    pub(crate) fn live_at(&self, now_ms: u64) -> bool {
        self.expire_unix_ms.is_none_or(|when| when > now_ms)
    }
}

/// What the model knows about one key at one moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum KeyState {
    Unknown,
    Absent,
    Present(Entry),
}

/// What a connection is doing, as far as the model can tell.
#[derive(Clone, Debug)]
pub(crate) enum ConnMode {
    Normal,
    /// Inside MULTI: commands are queued and run at EXEC. The keys they name
    /// (and whether one of them may touch anything) are remembered.
    Multi {
        pending_keys: BTreeSet<Vec<u8>>,
        pending_world: bool,
    },
    /// A mode the model does not follow (pub/sub, MONITOR, CLIENT REPLY).
    Opaque,
}

#[derive(Clone, Debug)]
pub(crate) struct ConnState {
    /// The selected database; `None` when the model cannot tell.
    pub db: Option<usize>,
    pub mode: ConnMode,
}

/// What the last [`KeyspaceModel::apply`] may have changed.
#[derive(Clone, Debug, Default)]
pub(crate) struct Touched {
    pub keys: Vec<(usize, Vec<u8>)>,
    /// Databases changed as a whole (flushed, or made unknown).
    pub dbs: [bool; DB_COUNT],
}

/// The simple model of the keyspace, and each connection's state.
///
/// Keys live in one hash table per database: every command looks keys up
/// by name, and nothing needs them in order (KEYS sorts its reply, the
/// other whole-database users only count or collect).
pub(crate) struct KeyspaceModel {
    /// Indexed by database.
    keys: Vec<FxHashMap<Vec<u8>, Entry>>,
    /// Keys whose state is unknown (they may hold anything, or nothing),
    /// indexed by database.
    unknown_keys: Vec<FxHashSet<Vec<u8>>>,
    /// Databases whose every key is unknown.
    unknown_dbs: [bool; DB_COUNT],
    conns: FxHashMap<ConnId, ConnState>,
    table: CommandTable,
    touched: Touched,
    /// Record `touched` keys (the SCAN checker reads them; the reference
    /// model does not, and MSETs of thousands of keys would copy each name).
    track_touched: bool,
}

impl Default for KeyspaceModel {
    fn default() -> Self {
        Self::new()
    }
}

impl KeyspaceModel {
    pub(crate) fn new() -> KeyspaceModel {
        KeyspaceModel {
            keys: (0..DB_COUNT).map(|_| FxHashMap::default()).collect(),
            unknown_keys: (0..DB_COUNT).map(|_| FxHashSet::default()).collect(),
            unknown_dbs: [false; DB_COUNT],
            conns: FxHashMap::default(),
            table: CommandTable::new(seedkv_engine::commands::FAMILIES),
            touched: Touched::default(),
            track_touched: true,
        }
    }

    /// A model that does not record which keys each command touched
    /// ([`KeyspaceModel::touched`] then lists whole databases only).
    pub(crate) fn without_touched_keys() -> KeyspaceModel {
        KeyspaceModel {
            track_touched: false,
            ..KeyspaceModel::new()
        }
    }

    fn note_touched(&mut self, db: usize, key: &[u8]) {
        if self.track_touched {
            self.touched.keys.push((db, key.to_vec()));
        }
    }

    /// Applies one execution (and its op, if the client recorded it) and
    /// returns the predicted reply.
    pub(crate) fn apply(&mut self, exec: &Execution, op: Option<&Op>) -> Expected {
        self.touched.keys.clear();
        self.touched.dbs = [false; DB_COUNT];
        self.conns.entry(exec.conn).or_insert(ConnState {
            db: Some(0),
            mode: ConnMode::Normal,
        });
        let Some(op) = op else {
            return self.apply_unrecorded(exec);
        };
        if exec.name.is_empty() {
            // Rejected before running (unknown command, arity, NOAUTH): no
            // effect, and the reply is an error.
            return Expected::AnyError;
        }
        let top_name = exec.name.split('|').next().unwrap_or(exec.name);
        let name_matches = op
            .args
            .first()
            .is_some_and(|a| a.eq_ignore_ascii_case(top_name.as_bytes()));
        let mode = self.conns[&exec.conn].mode.clone();
        if !name_matches {
            // Not the request the op describes: e.g. commands EXEC runs,
            // recorded under EXEC's index. Outside a transaction the model
            // has lost track of what ran.
            if matches!(mode, ConnMode::Normal) {
                self.forget_everything();
            }
            return Expected::Unpredictable;
        }
        if exec.name == "reset" {
            let conn = self.conns.get_mut(&exec.conn).expect("conn state exists");
            conn.db = Some(0);
            conn.mode = ConnMode::Normal;
            return Expected::Exactly(Frame::Simple(b"RESET".to_vec()));
        }
        match mode {
            ConnMode::Normal => self.execute(exec, &op.args),
            ConnMode::Multi { .. } => self.apply_in_multi(exec, &op.args),
            ConnMode::Opaque => {
                if exec.name == "select" {
                    self.conn_mut(exec.conn).db = None;
                }
                self.forget_keys_of(exec, &op.args);
                Expected::Unpredictable
            }
        }
    }

    /// The connection's state (created on first use).
    pub(crate) fn conn_mut(&mut self, conn: ConnId) -> &mut ConnState {
        self.conns.entry(conn).or_insert(ConnState {
            db: Some(0),
            mode: ConnMode::Normal,
        })
    }

    /// The database the connection has selected, if the model knows it and
    /// the connection is in its normal mode.
    pub(crate) fn conn_db(&self, conn: ConnId) -> Option<usize> {
        match self.conns.get(&conn) {
            None => Some(0),
            Some(ConnState {
                db,
                mode: ConnMode::Normal,
            }) => *db,
            Some(_) => None,
        }
    }

    /// What the last `apply` may have changed.
    pub(crate) fn touched(&self) -> &Touched {
        &self.touched
    }

    pub(crate) fn db_is_unknown(&self, db: usize) -> bool {
        self.unknown_dbs[db]
    }

    /// The key's state at `now_ms`, without the lazy expiry a command does.
    pub(crate) fn peek(&self, db: usize, key: &[u8], now_ms: u64) -> KeyState {
        debug_assert!(db < DB_COUNT);
        if self.unknown_dbs[db] || self.unknown_keys[db].contains(key) {
            return KeyState::Unknown;
        }
        match self.keys[db].get(key) {
            Some(entry) if entry.live_at(now_ms) => KeyState::Present(entry.clone()),
            _ => KeyState::Absent,
        }
    }

    /// Keys of `db` the model knows to be live at `now_ms`.
    pub(crate) fn live_keys(&self, db: usize, now_ms: u64) -> impl Iterator<Item = &Vec<u8>> {
        self.keys_in(db)
            .filter(move |(_, entry)| entry.live_at(now_ms))
            .map(|(key, _)| key)
    }

    /// Keys of `db` whose state is unknown (not counting a wholly unknown db).
    pub(crate) fn unknown_keys_in(&self, db: usize) -> impl Iterator<Item = &Vec<u8>> {
        self.unknown_keys[db].iter()
    }

    fn keys_in(&self, db: usize) -> impl Iterator<Item = (&Vec<u8>, &Entry)> {
        self.keys[db].iter()
    }

    /// The key's state, deleting it if it expired (as every Redis lookup does).
    pub(crate) fn lookup(&mut self, db: usize, key: &[u8], now_ms: u64) -> KeyState {
        let state = self.peek(db, key, now_ms);
        if state == KeyState::Absent {
            self.keys[db].remove(key);
        }
        state
    }

    pub(crate) fn store(&mut self, db: usize, key: &[u8], entry: Entry) {
        self.unknown_keys[db].remove(key);
        match self.keys[db].get_mut(key) {
            Some(old) => *old = entry,
            None => {
                self.keys[db].insert(key.to_vec(), entry);
            }
        }
        self.note_touched(db, key);
    }

    pub(crate) fn remove(&mut self, db: usize, key: &[u8]) {
        self.unknown_keys[db].remove(key);
        self.keys[db].remove(key);
        self.note_touched(db, key);
    }

    pub(crate) fn forget_key(&mut self, db: usize, key: &[u8]) {
        self.keys[db].remove(key);
        if !self.unknown_dbs[db] && !self.unknown_keys[db].contains(key) {
            self.unknown_keys[db].insert(key.to_vec());
        }
        self.note_touched(db, key);
    }

    /// Forgets `key` in the connection's database, or in every database if
    /// the model does not know which one is selected.
    fn forget_key_somewhere(&mut self, db: Option<usize>, key: &[u8]) {
        match db {
            Some(db) => self.forget_key(db, key),
            None => (0..DB_COUNT).for_each(|db| self.forget_key(db, key)),
        }
    }

    pub(crate) fn flush_db(&mut self, db: usize) {
        self.keys[db].clear();
        self.unknown_keys[db].clear();
        self.unknown_dbs[db] = false;
        self.touched.dbs[db] = true;
    }

    pub(crate) fn forget_db(&mut self, db: usize) {
        self.flush_db(db);
        self.unknown_dbs[db] = true;
    }

    pub(crate) fn forget_everything(&mut self) {
        (0..DB_COUNT).for_each(|db| self.forget_db(db));
    }

    /// DBSIZE's possible replies: live keys, up to live plus expired keys
    /// that nothing has touched since (active expiry may or may not have
    /// reclaimed them). `None` if the database holds unknown keys.
    pub(crate) fn dbsize_range(&self, db: usize, now_ms: u64) -> Option<(i64, i64)> {
        if self.unknown_dbs[db] || self.unknown_keys_in(db).next().is_some() {
            return None;
        }
        let (mut live, mut stale) = (0i64, 0i64);
        for (_, entry) in self.keys_in(db) {
            if entry.live_at(now_ms) {
                live += 1;
            } else {
                stale += 1;
            }
        }
        Some((live, live + stale))
    }

    /// A request the engine ran but no client recorded: the model cannot
    /// tell what it did unless the command is read-only.
    fn apply_unrecorded(&mut self, exec: &Execution) -> Expected {
        if exec.name.is_empty() || exec.flags & flags::READONLY != 0 || is_harmless(exec.name) {
            return Expected::Unpredictable;
        }
        self.forget_everything();
        if exec.name == "select" || exec.name == "reset" || exec.name == "multi" {
            self.conn_mut(exec.conn).db = None;
        }
        Expected::Unpredictable
    }

    fn apply_in_multi(&mut self, exec: &Execution, args: &[Vec<u8>]) -> Expected {
        let conn = self.conns.get_mut(&exec.conn).expect("conn state exists");
        let ConnMode::Multi {
            pending_keys,
            pending_world,
        } = &mut conn.mode
        else {
            unreachable!("apply_in_multi outside MULTI");
        };
        match exec.name {
            "exec" => {
                let keys = std::mem::take(pending_keys);
                let world = *pending_world;
                conn.mode = ConnMode::Normal;
                if world {
                    // A queued SELECT, FLUSHDB or unknown command: anything
                    // may have changed, including the selected database.
                    conn.db = None;
                    self.forget_everything();
                } else {
                    let db = conn.db;
                    for key in keys {
                        self.forget_key_somewhere(db, &key);
                    }
                }
                Expected::Unpredictable
            }
            "discard" => {
                conn.mode = ConnMode::Normal;
                Expected::ok()
            }
            "multi" | "watch" => Expected::AnyError,
            _ => {
                match modelled_keys(exec.name, args) {
                    Some((keys, writes)) => {
                        if writes {
                            pending_keys.extend(keys.into_iter().map(<[u8]>::to_vec));
                        }
                        if matches!(exec.name, "select" | "flushdb" | "flushall") {
                            *pending_world = true;
                        }
                    }
                    None => match unmodelled_effect(&self.table, exec, args) {
                        Effect::None => {}
                        Effect::Keys(keys, false) => pending_keys.extend(keys),
                        Effect::Keys(_, true) => *pending_world = true,
                        Effect::World => *pending_world = true,
                    },
                }
                Expected::Unpredictable
            }
        }
    }

    /// Makes unknown whatever a command the model does not follow may have
    /// changed.
    pub(crate) fn forget_keys_of(&mut self, exec: &Execution, args: &[Vec<u8>]) {
        let db = self.conns.get(&exec.conn).and_then(|c| c.db);
        match modelled_keys(exec.name, args) {
            Some((keys, writes)) => {
                if matches!(exec.name, "flushdb" | "flushall") {
                    self.forget_everything();
                } else if writes {
                    let keys: Vec<Vec<u8>> = keys.into_iter().map(<[u8]>::to_vec).collect();
                    for key in keys {
                        self.forget_key_somewhere(db, &key);
                    }
                }
            }
            None => {
                self.apply_unmodelled(exec, args, db);
            }
        }
    }

    /// A command the model has no semantics for.
    pub(crate) fn apply_unmodelled(
        &mut self,
        exec: &Execution,
        args: &[Vec<u8>],
        db: Option<usize>,
    ) -> Expected {
        match exec.name {
            "multi" => {
                self.conn_mut(exec.conn).mode = ConnMode::Multi {
                    pending_keys: BTreeSet::new(),
                    pending_world: false,
                };
                return Expected::ok();
            }
            "subscribe" | "psubscribe" | "ssubscribe" | "monitor" | "client|reply" => {
                self.conn_mut(exec.conn).mode = ConnMode::Opaque;
                return Expected::Unpredictable;
            }
            _ => {}
        }
        match unmodelled_effect(&self.table, exec, args) {
            Effect::None => {}
            Effect::Keys(keys, every_db) => {
                for key in keys {
                    self.forget_key_somewhere(if every_db { None } else { db }, &key);
                }
            }
            Effect::World => self.forget_everything(),
        }
        Expected::Unpredictable
    }
}

/// What an unmodelled command may change.
enum Effect {
    None,
    /// These keys (in every database if the flag is set).
    Keys(Vec<Vec<u8>>, bool),
    World,
}

/// Commands with neither the `write` nor the `readonly` flag that cannot
/// change the keyspace or the connection's database.
pub(crate) fn is_harmless(name: &str) -> bool {
    let top = name.split('|').next().unwrap_or(name);
    if matches!(name, "config|set" | "client|reply" | "debug") {
        return false;
    }
    matches!(
        top,
        "ping"
            | "echo"
            | "hello"
            | "auth"
            | "info"
            | "command"
            | "slowlog"
            | "latency"
            | "time"
            | "lastsave"
            | "client"
            | "memory"
            | "object"
            | "watch"
            | "unwatch"
            | "wait"
            | "lolwut"
            | "config"
            | "publish"
            | "spublish"
            | "pubsub"
            | "unsubscribe"
            | "punsubscribe"
            | "sunsubscribe"
            | "discard"
            | "readonly"
            | "readwrite"
            | "role"
            | "dbsize"
            | "scan"
            | "keys"
            | "randomkey"
            | "acl"
    )
}

/// Redis 7.0 commands whose only key is their first argument, for when the
/// engine's table does not have them (yet).
pub(crate) fn is_single_key_command(name: &str) -> bool {
    matches!(
        name,
        "hset"
            | "hsetnx"
            | "hmset"
            | "hdel"
            | "hincrby"
            | "hincrbyfloat"
            | "lpush"
            | "rpush"
            | "lpushx"
            | "rpushx"
            | "lpop"
            | "rpop"
            | "lset"
            | "lrem"
            | "ltrim"
            | "linsert"
            | "sadd"
            | "srem"
            | "spop"
            | "zadd"
            | "zrem"
            | "zincrby"
            | "zpopmin"
            | "zpopmax"
            | "zremrangebyscore"
            | "zremrangebyrank"
            | "zremrangebylex"
            | "incrbyfloat"
            | "setrange"
            | "setex"
            | "psetex"
            | "getex"
            | "pfadd"
            | "xadd"
            | "xdel"
            | "xtrim"
    )
}

fn unmodelled_effect(table: &CommandTable, exec: &Execution, args: &[Vec<u8>]) -> Effect {
    if exec.flags & flags::READONLY != 0
        || (exec.flags & flags::WRITE == 0 && is_harmless(exec.name))
    {
        return Effect::None;
    }
    if exec.flags & flags::WRITE == 0 {
        return Effect::World;
    }
    let mut parts = exec.name.split('|');
    let top = parts.next().unwrap_or("");
    let spec = table
        .lookup(top.as_bytes())
        .and_then(|spec| match parts.next() {
            Some(sub) => lookup_subcommand(spec, sub.as_bytes()),
            None => Some(spec),
        });
    let keys: Vec<Vec<u8>> = match spec {
        Some(spec) => spec
            .key_indices(args.len())
            .into_iter()
            .map(|i| args[i].clone())
            .collect(),
        None if args.len() >= 2 && is_single_key_command(top) => vec![args[1].clone()],
        None => return Effect::World,
    };
    // Commands whose keys are not at fixed positions (scripts, numkeys
    // forms) or which reach other databases are treated as touching
    // everything, or every database.
    let movable = matches!(
        top,
        "eval"
            | "evalsha"
            | "fcall"
            | "sort"
            | "zunionstore"
            | "zinterstore"
            | "zdiffstore"
            | "migrate"
            | "swapdb"
            | "restore-asking"
    );
    if keys.is_empty() || movable {
        return Effect::World;
    }
    Effect::Keys(keys, matches!(top, "move" | "copy"))
}

pub(crate) use commands::modelled_keys;

#[cfg(test)]
pub(crate) mod testkit {
    //! Hand-built histories for checker tests.

    use seedkv_engine::cmd::CommandTable;
    use seedkv_engine::resp::Frame;

    use crate::history::{ConnId, Execution, History, Op, TimeNs};

    /// Wall-clock origin of test histories (unix ms).
    pub const UNIX_ORIGIN_MS: u64 = 1_700_000_000_000;

    /// Builds a history one request at a time. Each `run` is invoked,
    /// executed and completed in order; `invoke`/`complete` give explicit
    /// times for concurrency tests.
    pub struct Builder {
        pub history: History,
        table: CommandTable,
        pub unix_ms: u64,
        pub now_ns: TimeNs,
    }

    impl Default for Builder {
        fn default() -> Self {
            Self::new()
        }
    }

    pub fn args(text: &str) -> Vec<Vec<u8>> {
        text.split(' ').map(|a| a.as_bytes().to_vec()).collect()
    }

    pub fn bulk(text: &str) -> Frame {
        Frame::Bulk(text.as_bytes().to_vec())
    }

    pub fn simple(text: &str) -> Frame {
        Frame::Simple(text.as_bytes().to_vec())
    }

    pub fn error(text: &str) -> Frame {
        Frame::Error(text.as_bytes().to_vec())
    }

    impl Builder {
        pub fn new() -> Builder {
            Builder {
                history: History::default(),
                table: CommandTable::new(seedkv_engine::commands::FAMILIES),
                unix_ms: UNIX_ORIGIN_MS,
                now_ns: 1_000,
            }
        }

        fn next_seq(&self, conn: ConnId) -> u64 {
            self.history.ops.iter().filter(|o| o.conn == conn).count() as u64
        }

        /// Records an op invoked at `invoke_ns`, completed (if `reply`) at
        /// `complete_ns`; returns its index in `ops`.
        pub fn op(
            &mut self,
            conn: ConnId,
            text: &str,
            invoke_ns: TimeNs,
            reply: Option<(TimeNs, Frame)>,
        ) -> usize {
            let seq_in_conn = self.next_seq(conn);
            self.history.ops.push(Op {
                client: conn as u32,
                conn,
                seq_in_conn,
                args: args(text),
                workload: if text.to_ascii_lowercase().starts_with("scan ") {
                    "scan"
                } else {
                    "kv"
                },
                invoke_ns,
                complete: reply,
            });
            self.history.end_ns = self.history.end_ns.max(invoke_ns);
            self.history.ops.len() - 1
        }

        /// Records the engine executing op `index` now, for `duration_ns`.
        pub fn execute(&mut self, index: usize, duration_ns: u64) {
            let op = &self.history.ops[index];
            let name = self.name_of(&op.args);
            let flags = self.table.lookup(&op.args[0]).map_or(0, |s| s.flags);
            self.history.executions.push(Execution {
                conn: op.conn,
                seq_in_conn: op.seq_in_conn,
                start_ns: self.now_ns,
                end_ns: self.now_ns + duration_ns,
                unix_ms: self.unix_ms,
                name,
                flags,
                work_units: 1,
            });
            self.now_ns += duration_ns;
        }

        fn name_of(&self, args: &[Vec<u8>]) -> &'static str {
            match self.table.lookup(&args[0]) {
                Some(spec) => spec.name,
                // Commands the engine does not have yet: leak a name, as the
                // engine's names are `&'static str` too (tests only).
                None => Box::leak(
                    String::from_utf8_lossy(&args[0])
                        .to_ascii_lowercase()
                        .into_boxed_str(),
                ),
            }
        }

        /// Invokes, executes and completes one request with `reply`.
        pub fn run(&mut self, conn: ConnId, text: &str, reply: Frame) -> usize {
            let invoke = self.now_ns;
            self.now_ns += 10;
            let index = self.op(conn, text, invoke, None);
            self.execute(index, 10);
            self.now_ns += 10;
            self.history.ops[index].complete = Some((self.now_ns, reply));
            self.history.end_ns = self.now_ns;
            index
        }

        pub fn advance_ms(&mut self, ms: u64) {
            self.unix_ms += ms;
            self.now_ns += ms * 1_000_000;
        }
    }
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
