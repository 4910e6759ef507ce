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
//!    map per database `key -> (value, expire_unix_ms)`, using the
//!    execution's wall-clock time ([`Execution::unix_ms`]) for expiry: a key
//!    whose expiry time is `<= now` is absent. A value is typed ([`Value`]):
//!    a string, a list (`VecDeque`), a hash (`BTreeMap`), a set (`BTreeSet`)
//!    or a sorted set (a member map plus a `(score, member)` order). The
//!    containers are the plainest ones with Redis's semantics, since this is
//!    the oracle; a collection that becomes empty is deleted, as Redis does,
//!    and every cross-type access replies WRONGTYPE;
//! 2. computes the reply Redis 7.0 would send, and compares it with the reply
//!    the client recorded (when the client received one). Replies whose
//!    order Redis leaves unspecified (HGETALL, SMEMBERS, SINTER...) are
//!    compared as multisets; random ones (SPOP, SRANDMEMBER, HRANDFIELD) are
//!    judged against the modelled members, and SPOP then removes exactly
//!    what it replied.
//!
//! The model tracks each connection's selected database (SELECT, RESET) and
//! protocol (HELLO 2/3, RESET), so a command runs against the right database
//! and its reply is predicted in the right shape (RESP3 maps, sets and
//! doubles).
//!
//! A blocking pop (BLPOP, BLMOVE, BZPOPMIN...) is recorded when it is served
//! or times out. In execution order it therefore behaves like its
//! non-blocking pop, or finds every key empty (a timeout: a null reply). One
//! corner is ambiguous: a client blocked on several keys is served from the
//! key that became ready, which need not be the first non-empty one, and a
//! key that turned into another type while it waited no longer gives
//! WRONGTYPE. There the recorded reply picks among the possible outcomes.
//!
//! # Knowing what it does not know
//!
//! The model covers the string, generic and collection commands that the
//! workloads use (see `model/commands.rs` and `model/{lists,hashes,sets,
//! zsets}.rs`). Anything else (scripts, MULTI/EXEC, SWAPDB, SORT, ZUNION,
//! DEBUG...) it does not guess at. Instead it marks what the command may have
//! changed as **unknown**:
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

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use seedkv_engine::cmd::{flags, lookup_subcommand, CommandTable};
use seedkv_engine::resp::Frame;

use crate::check::{CheckCounts, Checker, RunFacts, Violation};
use crate::fxhash::{FxHashMap, FxHashSet};
use crate::history::{ConnId, Execution, History, Op};

mod bitmaps;
mod commands;
pub(crate) mod expected;
mod geo;
mod hashes;
mod hll;
mod lists;
pub(crate) mod redis_c;
mod sets;
mod string_edges;
mod zsets;

use expected::render_args;
pub(crate) use expected::{Expected, Shape};
pub(crate) use zsets::ZSet;

/// Databases per server (Redis's default `databases 16`).
pub(crate) const DB_COUNT: usize = seedkv_engine::db::DATABASES_COUNT;

/// The checker: every recorded reply equals the model's prediction.
pub struct ReferenceModel;

impl Checker for ReferenceModel {
    fn name(&self) -> &'static str {
        "reference-model"
    }

    fn check(&self, history: &History, facts: &RunFacts) -> Result<(), Violation> {
        self.check_counted(history, facts, &mut CheckCounts::default())
    }

    /// Counts every received reply: compared when the model predicted it,
    /// declined when it could not ([`Expected::Unpredictable`]).
    fn check_counted(
        &self,
        history: &History,
        _facts: &RunFacts,
        counts: &mut CheckCounts,
    ) -> Result<(), Violation> {
        let ops = index_ops(history);
        let mut model = KeyspaceModel::without_touched_keys();
        for (index, exec) in history.executions.iter().enumerate() {
            let op = ops.of_execution(index, exec);
            let expected = model.apply(exec, op);
            let Some(op) = op else { continue };
            let Some((_, reply)) = &op.complete else {
                continue;
            };
            if matches!(expected, Expected::Unpredictable) {
                counts.declined += 1;
            } else {
                counts.compared += 1;
            }
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

/// [`History::op_index`], by the name the checkers use.
pub(crate) fn index_ops(history: &History) -> crate::history::OpIndex<'_> {
    history.op_index()
}

/// A key's value, by type. Collections are never empty in the model.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Str(Vec<u8>),
    List(VecDeque<Vec<u8>>),
    Hash(BTreeMap<Vec<u8>, Vec<u8>>),
    Set(BTreeSet<Vec<u8>>),
    ZSet(ZSet),
}

/// `as_x`/`as_x_mut` for one variant: the typed view, or `None` (WRONGTYPE).
macro_rules! value_accessors {
    ($variant:ident, $ty:ty, $get:ident, $get_mut:ident) => {
        pub(crate) fn $get(&self) -> Option<&$ty> {
            match self {
                Value::$variant(v) => Some(v),
                _ => None,
            }
        }

        pub(crate) fn $get_mut(&mut self) -> Option<&mut $ty> {
            match self {
                Value::$variant(v) => Some(v),
                _ => None,
            }
        }
    };
}

impl Value {
    value_accessors!(Str, Vec<u8>, as_str, as_str_mut);
    value_accessors!(List, VecDeque<Vec<u8>>, as_list, as_list_mut);
    value_accessors!(Hash, BTreeMap<Vec<u8>, Vec<u8>>, as_hash, as_hash_mut);
    value_accessors!(Set, BTreeSet<Vec<u8>>, as_set, as_set_mut);
    value_accessors!(ZSet, ZSet, as_zset, as_zset_mut);

    pub(crate) fn empty_list() -> Value {
        Value::List(VecDeque::new())
    }

    pub(crate) fn empty_hash() -> Value {
        Value::Hash(BTreeMap::new())
    }

    pub(crate) fn empty_set() -> Value {
        Value::Set(BTreeSet::new())
    }

    pub(crate) fn empty_zset() -> Value {
        Value::ZSet(ZSet::default())
    }

    /// TYPE's reply.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
            Value::List(_) => "list",
            Value::Hash(_) => "hash",
            Value::Set(_) => "set",
            Value::ZSet(_) => "zset",
        }
    }

    /// An empty collection (which Redis deletes); a string never is.
    fn is_empty_collection(&self) -> bool {
        match self {
            Value::Str(_) => false,
            Value::List(l) => l.is_empty(),
            Value::Hash(h) => h.is_empty(),
            Value::Set(s) => s.is_empty(),
            Value::ZSet(z) => z.is_empty(),
        }
    }
}

/// A key's value and expiry.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Entry {
    pub value: Value,
    pub expire_unix_ms: Option<u64>,
}

impl Entry {
    /// A string without expiry.
    pub(crate) fn string(value: Vec<u8>) -> Entry {
        Entry {
            value: Value::Str(value),
            expire_unix_ms: None,
        }
    }

    pub(crate) fn live_at(&self, now_ms: u64) -> bool {
        self.expire_unix_ms.is_none_or(|when| when > now_ms)
    }
}

/// What the model knows about one key at one moment. `Present` borrows the
/// model's entry: commands read collections in place, never copy them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum KeyState<'a> {
    Unknown,
    Absent,
    Present(&'a Entry),
}

/// What the model knows about a key that a command wants as one type.
#[derive(Debug)]
pub(crate) enum Typed<T> {
    Unknown,
    Absent,
    WrongType,
    Found(T),
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
    /// The protocol (2 or 3, from HELLO); `None` when the model cannot tell.
    pub resp: Option<u8>,
}

impl ConnState {
    fn fresh() -> ConnState {
        ConnState {
            db: Some(0),
            mode: ConnMode::Normal,
            resp: Some(2),
        }
    }
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
    /// [`KeyspaceModel::arity_of`]'s answers, by name address and length.
    arities: FxHashMap<(usize, usize), commands::Arity>,
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
            arities: FxHashMap::default(),
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
        self.conns.entry(exec.conn).or_insert_with(ConnState::fresh);
        let Some(op) = op else {
            return self.apply_unrecorded(exec);
        };
        if exec.name.is_empty() {
            if exec.in_exec.is_some() {
                // Refused at EXEC (its user's ACL rules changed since it
                // was queued): no effect, and its own reply was +QUEUED.
                return Expected::Unpredictable;
            }
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
        if let (ConnMode::Normal, Some(keys)) = (&mode, super::transfer::script_keys(&op.args)) {
            // A script, or one of its calls (recorded under the script's
            // index): the model runs no Lua, and forgets the keys the
            // script declared (the workloads' scripts touch no others).
            let db = self.conns[&exec.conn].db;
            for key in keys {
                self.forget_key_somewhere(db, key);
            }
            return Expected::Unpredictable;
        }
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
            *conn = ConnState::fresh();
            return Expected::Exactly(Frame::Simple(b"RESET".to_vec()));
        }
        let reply = op.complete.as_ref().map(|(_, reply)| reply);
        match mode {
            ConnMode::Normal => self.execute(exec, &op.args, reply),
            ConnMode::Multi { .. } => self.apply_in_multi(exec, &op.args),
            ConnMode::Opaque => {
                if exec.name == "select" {
                    self.conn_mut(exec.conn).db = None;
                }
                if exec.name == "hello" {
                    self.conn_mut(exec.conn).resp = None;
                }
                self.forget_keys_of(exec, &op.args);
                Expected::Unpredictable
            }
        }
    }

    /// The connection's state (created on first use).
    pub(crate) fn conn_mut(&mut self, conn: ConnId) -> &mut ConnState {
        self.conns.entry(conn).or_insert_with(ConnState::fresh)
    }

    /// The database the connection has selected, if the model knows it and
    /// the connection is in its normal mode.
    pub(crate) fn conn_db(&self, conn: ConnId) -> Option<usize> {
        match self.conns.get(&conn) {
            None => Some(0),
            Some(ConnState {
                db,
                mode: ConnMode::Normal,
                ..
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
    pub(crate) fn peek(&self, db: usize, key: &[u8], now_ms: u64) -> KeyState<'_> {
        debug_assert!(db < DB_COUNT);
        if self.unknown_dbs[db] || self.unknown_keys[db].contains(key) {
            return KeyState::Unknown;
        }
        match self.keys[db].get(key) {
            Some(entry) if entry.live_at(now_ms) => KeyState::Present(entry),
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
    pub(crate) fn lookup(&mut self, db: usize, key: &[u8], now_ms: u64) -> KeyState<'_> {
        self.settle(db, key, now_ms);
        self.peek(db, key, now_ms)
    }

    /// Deletes the key if it expired, as every Redis lookup does.
    pub(crate) fn settle(&mut self, db: usize, key: &[u8], now_ms: u64) {
        if self.keys[db].get(key).is_some_and(|e| !e.live_at(now_ms)) {
            self.keys[db].remove(key);
        }
    }

    /// The key as one type, without the lazy expiry (see [`Self::settle`]).
    pub(crate) fn get_as<'a, T>(
        &'a self,
        db: usize,
        key: &[u8],
        now_ms: u64,
        cast: fn(&Value) -> Option<&T>,
    ) -> Typed<&'a T> {
        match self.peek(db, key, now_ms) {
            KeyState::Unknown => Typed::Unknown,
            KeyState::Absent => Typed::Absent,
            KeyState::Present(entry) => match cast(&entry.value) {
                Some(value) => Typed::Found(value),
                None => Typed::WrongType,
            },
        }
    }

    /// The key as one type, for reading.
    pub(crate) fn read_as<T>(
        &mut self,
        db: usize,
        key: &[u8],
        now_ms: u64,
        cast: fn(&Value) -> Option<&T>,
    ) -> Typed<&T> {
        self.settle(db, key, now_ms);
        self.get_as(db, key, now_ms, cast)
    }

    /// The key as one type, for writing in place (it counts as touched).
    /// The caller deletes it if it leaves it empty ([`Self::drop_if_empty`]).
    pub(crate) fn write_as<T>(
        &mut self,
        db: usize,
        key: &[u8],
        now_ms: u64,
        cast: fn(&mut Value) -> Option<&mut T>,
    ) -> Typed<&mut T> {
        match self.lookup(db, key, now_ms) {
            KeyState::Unknown => return Typed::Unknown,
            KeyState::Absent => return Typed::Absent,
            KeyState::Present(_) => {}
        }
        self.note_touched(db, key);
        match self.keys[db].get_mut(key).map(|e| cast(&mut e.value)) {
            Some(Some(value)) => Typed::Found(value),
            _ => Typed::WrongType,
        }
    }

    /// Like [`Self::write_as`], creating an empty value (without expiry) if
    /// the key is absent: never `Typed::Absent`.
    pub(crate) fn upsert_as<T>(
        &mut self,
        db: usize,
        key: &[u8],
        now_ms: u64,
        empty: fn() -> Value,
        cast: fn(&mut Value) -> Option<&mut T>,
    ) -> Typed<&mut T> {
        if matches!(self.lookup(db, key, now_ms), KeyState::Absent) {
            self.store(
                db,
                key,
                Entry {
                    value: empty(),
                    expire_unix_ms: None,
                },
            );
        }
        self.write_as(db, key, now_ms, cast)
    }

    /// Deletes the key if it holds an empty collection (Redis never keeps
    /// one).
    pub(crate) fn drop_if_empty(&mut self, db: usize, key: &[u8]) {
        if self.keys[db]
            .get(key)
            .is_some_and(|e| e.value.is_empty_collection())
        {
            self.remove(db, key);
        }
    }

    /// The live entry, for changing it in place (it counts as touched).
    pub(crate) fn entry_mut(&mut self, db: usize, key: &[u8]) -> Option<&mut Entry> {
        self.note_touched(db, key);
        self.keys[db].get_mut(key)
    }

    /// The connection's protocol, if the model knows it.
    pub(crate) fn conn_resp(&self, conn: ConnId) -> Option<u8> {
        self.conns.get(&conn).map_or(Some(2), |c| c.resp)
    }

    pub(crate) fn store(&mut self, db: usize, key: &[u8], entry: Entry) {
        self.know_key(db, key);
        match self.keys[db].get_mut(key) {
            Some(old) => *old = entry,
            None => {
                self.keys[db].insert(key.to_vec(), entry);
            }
        }
        self.note_touched(db, key);
    }

    /// Takes `key` off the unknown keys of `db`. Most runs have none: a
    /// set's removal hashes the key even then, and every store comes here.
    fn know_key(&mut self, db: usize, key: &[u8]) {
        if !self.unknown_keys[db].is_empty() {
            self.unknown_keys[db].remove(key);
        }
    }

    pub(crate) fn remove(&mut self, db: usize, key: &[u8]) {
        self.know_key(db, key);
        self.keys[db].remove(key);
        self.note_touched(db, key);
    }

    /// Deletes the key, as DEL does: whether it was live (`None`: the
    /// model did not know). One hash lookup where [`Self::lookup`] then
    /// [`Self::remove`] took three; DELs of thousands of keys come here.
    pub(crate) fn delete(&mut self, db: usize, key: &[u8], now_ms: u64) -> Option<bool> {
        let unknown = self.unknown_dbs[db] || self.unknown_keys[db].contains(key);
        let removed = self.keys[db].remove(key);
        self.know_key(db, key);
        self.note_touched(db, key);
        match unknown {
            true => None,
            false => Some(removed.is_some_and(|e| e.live_at(now_ms))),
        }
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
        if matches!(exec.name, "hello" | "reset") {
            self.conn_mut(exec.conn).resp = None;
        }
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
                if exec.name == "hello" {
                    // It runs at EXEC; from now on the protocol is unsure.
                    conn.resp = None;
                }
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
            | "replicaof"
            | "slaveof"
            // A single node has no replica: FAILOVER answers an error.
            | "failover"
            | "role"
            | "psync"
            | "sync"
            | "replconf"
            | "dbsize"
            | "scan"
            | "keys"
            | "randomkey"
            | "acl"
            // Libraries hold no keys: FUNCTION only changes what a later
            // FCALL runs, and FCALL is judged as a script.
            | "function"
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
    if exec.name.starts_with("function|") {
        // FUNCTION LOAD, DELETE, FLUSH and RESTORE change libraries, not
        // keys; what a function then does is a script's effect.
        return Effect::None;
    }
    let mut parts = exec.name.split('|');
    let top = parts.next().unwrap_or("");
    let spec = table
        .lookup(top.as_bytes())
        .and_then(|spec| match parts.next() {
            Some(sub) => lookup_subcommand(spec, sub.as_bytes()),
            None => Some(spec),
        });
    let mut keys: Vec<Vec<u8>> = match spec {
        // Its keys follow STREAMS (it writes the groups' PELs).
        Some(_) if top == "xreadgroup" => xreadgroup_keys(args),
        Some(spec) => spec
            .key_indices(args.len())
            .into_iter()
            .map(|i| args[i].clone())
            .collect(),
        None if args.len() >= 2 && is_single_key_command(top) => vec![args[1].clone()],
        None => return Effect::World,
    };
    // GEORADIUS's STORE/STOREDIST destination (written, or deleted when
    // nothing matched) is not in its one key spec.
    if matches!(top, "georadius" | "georadiusbymember") {
        let stores = args.windows(2).filter(|w| {
            w[0].eq_ignore_ascii_case(b"store") || w[0].eq_ignore_ascii_case(b"storedist")
        });
        keys.extend(stores.map(|w| w[1].clone()));
    }
    // Commands whose keys are not at fixed positions (scripts, numkeys
    // forms) or which reach other databases are treated as touching
    // everything, or every database.
    let movable = matches!(
        top,
        "eval"
            | "evalsha"
            | "fcall"
            | "fcall_ro"
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

/// XREADGROUP's keys: the first half of what follows STREAMS (none when
/// malformed, which leaves the command's effect on the whole world).
fn xreadgroup_keys(args: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut i = 1;
    while i < args.len() {
        let a = &args[i];
        if a.eq_ignore_ascii_case(b"group") {
            i += 3;
        } else if a.eq_ignore_ascii_case(b"count") || a.eq_ignore_ascii_case(b"block") {
            i += 2;
        } else if a.eq_ignore_ascii_case(b"noack") {
            i += 1;
        } else if a.eq_ignore_ascii_case(b"streams") {
            let rest = &args[i + 1..];
            if rest.is_empty() || !rest.len().is_multiple_of(2) {
                return Vec::new();
            }
            return rest[..rest.len() / 2].to_vec();
        } else {
            return Vec::new();
        }
    }
    Vec::new()
}

pub(crate) use commands::modelled_keys;

#[cfg(test)]
mod tests;

#[cfg(test)]
pub(crate) use tests::testkit;
