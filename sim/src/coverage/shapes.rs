//! Shape detectors: patterns that cross features, found in a run's history
//! by walking the execution order (what the engine did, with each
//! request's arguments and, outside EXEC and scripts, its reply).
//!
//! - **TTL life cycles** (`ttl-removed-by:<path>`, `ttl-recreated-by:<path>`):
//!   a key given a TTL (SET EX/PX/EXAT/PXAT, SETEX, PSETEX, GETEX, EXPIRE*
//!   answered 1) and then removed: directly (DEL, UNLINK, GETDEL, SET over
//!   it, RENAME away or over it, MOVE, FLUSHDB, FLUSHALL, SWAPDB), or
//!   seen absent afterwards (EXISTS 0, TTL -2, TYPE none, GET nil), the
//!   path then being the last write to it since the TTL (a pop of its last
//!   element...) or, with none, expiry. A removed key written again by a
//!   command that creates keys counts as recreated by that command.
//! - **Databases** (`db:move`, `db:copy-db`, `db:swapdb`): a key moved or
//!   copied to another database, two databases swapped.
//! - **Contention**: several requests parked on one key when a push of one
//!   element executes (`History::received` tells where each parked);
//!   several connections watching one key at a WATCH, and such a key
//!   written; a connection subscribed to a channel by name and by a
//!   pattern that matches it when it unsubscribes from either.

use std::collections::{BTreeMap, BTreeSet};

use seedkv_engine::cmd::flags;
use seedkv_engine::resp::Frame;

use crate::fxhash::FxHashMap;
use crate::history::{ConnId, Execution, History, Op};

/// Every shape the report lists (a zero shows).
pub const SHAPES: &[&str] = &[
    "ttl-removed-by:del",
    "ttl-removed-by:unlink",
    "ttl-removed-by:getdel",
    "ttl-removed-by:expiry",
    "ttl-removed-by:set",
    "ttl-removed-by:rename",
    "ttl-removed-by:rename-over",
    "ttl-removed-by:move",
    "ttl-removed-by:flushdb",
    "ttl-removed-by:flushall",
    "ttl-removed-by:swapdb",
    "ttl-removed-by:lpop",
    "ttl-removed-by:rpop",
    "ttl-removed-by:lmove",
    "ttl-removed-by:spop",
    "ttl-removed-by:srem",
    "ttl-removed-by:hdel",
    "ttl-removed-by:zpopmin",
    "ttl-removed-by:zrem",
    "ttl-removed-by:ltrim",
    "ttl-recreated-by:set",
    "ttl-recreated-by:setnx",
    "ttl-recreated-by:incr",
    "ttl-recreated-by:incrbyfloat",
    "ttl-recreated-by:append",
    "ttl-recreated-by:setrange",
    "ttl-recreated-by:mset",
    "ttl-recreated-by:lpush",
    "ttl-recreated-by:rpush",
    "ttl-recreated-by:lmove",
    "ttl-recreated-by:sadd",
    "ttl-recreated-by:smove",
    "ttl-recreated-by:hset",
    "ttl-recreated-by:hincrby",
    "ttl-recreated-by:zadd",
    "ttl-recreated-by:zincrby",
    "ttl-recreated-by:copy",
    "ttl-recreated-by:rename",
    "ttl-recreated-by:move",
    "ttl-recreated-by:sunionstore",
    "ttl-recreated-by:zrangestore",
    "ttl-recreated-by:sort",
    "db:move",
    "db:copy-db",
    "db:swapdb",
    "contention:several-parked-on-one-key-one-element-pushed",
    "contention:several-watching-one-key",
    "contention:several-watching-one-key-written",
    "contention:sub-by-name-and-pattern-then-unsubscribe",
    "contention:sub-by-name-and-pattern-then-punsubscribe",
];

/// Databases (Redis's default 16).
const DB_COUNT: usize = seedkv_engine::db::DATABASES_COUNT;

type Key = (usize, Vec<u8>);

/// What the TTL detector knows of one key.
#[derive(Clone, Debug, Default)]
struct Life {
    /// It was given a TTL and not seen removed since.
    ttl: bool,
    /// The last write to it since the TTL, if any.
    pending: Option<&'static str>,
    /// It was removed while it had a TTL and not written since.
    removed: bool,
}

/// Counts per shape in `history` (`ops` indexes its requests).
pub fn detect(
    history: &History,
    ops: &crate::history::OpIndex<'_>,
    resolved: &[Option<super::Resolved<'_>>],
) -> BTreeMap<&'static str, u64> {
    debug_assert_eq!(resolved.len(), history.executions.len());
    let mut d = Detector {
        counts: BTreeMap::new(),
        db_of: FxHashMap::default(),
        lives: (0..DB_COUNT).map(|_| FxHashMap::default()).collect(),
        watched: BTreeMap::new(),
        channels: FxHashMap::default(),
        patterns: FxHashMap::default(),
    };
    let parked = parked_intervals(history, ops);
    let mut active: Vec<usize> = Vec::new();
    let mut next_parked = 0;
    for (index, exec) in history.executions.iter().enumerate() {
        while next_parked < parked.len() && parked[next_parked].0 <= index {
            active.push(next_parked);
            next_parked += 1;
        }
        active.retain(|&p| parked[p].1 > index);
        let Some(super::Resolved { op, spec, name }) = &resolved[index] else {
            continue;
        };
        let (op, spec) = (*op, Some(*spec));
        if name.as_ref() != exec.name {
            // A subcommand or a script's call: no life-cycle effect we follow.
            d.connection_state(exec, name, op);
            continue;
        }
        let reply = if exec.in_exec.is_some() {
            None
        } else {
            op.complete.as_ref().map(|(_, f)| f)
        };
        if matches!(reply, Some(Frame::Error(_))) {
            continue;
        }
        d.connection_state(exec, name, op);
        if let Some(key) = pushed_one_element(name, &op.args) {
            let waiting = active
                .iter()
                .filter(|&&p| parked[p].2.iter().any(|k| k == key))
                .count();
            if waiting >= 2 {
                d.count("contention:several-parked-on-one-key-one-element-pushed");
            }
        }
        let is_write = spec.is_some_and(|s| s.has(flags::WRITE));
        d.ttl_life(exec, spec, name, &op.args, reply);
        if is_write {
            d.written(spec, &op.args);
        }
    }
    d.counts
}

/// Parked blocking requests: (first execution index while parked, index
/// of its own execution or `usize::MAX`, the keys it waits on), by start.
fn parked_intervals(
    history: &History,
    ops: &crate::history::OpIndex<'_>,
) -> Vec<(usize, usize, Vec<Vec<u8>>)> {
    // Nothing received that may block: nothing parked (and no table of
    // every execution to build).
    if history.received.is_empty() {
        return Vec::new();
    }
    let executed: FxHashMap<(ConnId, u64), usize> = history
        .executions
        .iter()
        .enumerate()
        .filter(|(_, e)| e.in_exec.is_none())
        .map(|(i, e)| ((e.conn, e.seq_in_conn), i))
        .collect();
    let mut out = Vec::new();
    for r in &history.received {
        let end = executed
            .get(&(r.conn, r.seq_in_conn))
            .copied()
            .unwrap_or(usize::MAX);
        if end < r.executions_after {
            continue;
        }
        let Some(op) = ops.get(&(r.conn, r.seq_in_conn)) else {
            continue;
        };
        out.push((r.executions_after, end, blocking_keys(&op.args)));
    }
    out.sort_by_key(|p| p.0);
    out
}

/// The keys a blocking request waits on.
fn blocking_keys(args: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let name = args[0].to_ascii_lowercase();
    match name.as_slice() {
        b"blmove" | b"brpoplpush" => args.get(1).cloned().into_iter().collect(),
        b"blmpop" | b"bzmpop" => {
            let n = parse_usize(args.get(2)).unwrap_or(0);
            args.iter().skip(3).take(n).cloned().collect()
        }
        _ if args.len() >= 3 => args[1..args.len() - 1].to_vec(),
        _ => Vec::new(),
    }
}

/// The key a push of exactly one element lands on.
fn pushed_one_element<'a>(name: &str, args: &'a [Vec<u8>]) -> Option<&'a Vec<u8>> {
    match name {
        "lpush" | "rpush" | "lpushx" | "rpushx" if args.len() == 3 => args.get(1),
        "zadd" if args.len() == 4 => args.get(1),
        "lmove" | "rpoplpush" => args.get(2),
        _ => None,
    }
}

fn parse_usize(arg: Option<&Vec<u8>>) -> Option<usize> {
    std::str::from_utf8(arg?).ok()?.parse().ok()
}

fn parse_int(reply: Option<&Frame>) -> Option<i64> {
    match reply? {
        Frame::Integer(n) => Some(*n),
        _ => None,
    }
}

fn has_token(args: &[Vec<u8>], tokens: &[&str]) -> bool {
    args.iter()
        .skip(1)
        .any(|a| tokens.iter().any(|t| t.as_bytes().eq_ignore_ascii_case(a)))
}

struct Detector {
    counts: BTreeMap<&'static str, u64>,
    db_of: FxHashMap<ConnId, usize>,
    /// Per database, the life of each key that was ever given a TTL. A key
    /// without an entry has the default [`Life`] (no TTL, nothing pending,
    /// not removed), and every transition out of the default starts with a
    /// TTL: so a write to one of the many keys that never had one costs a
    /// lookup in this small map and no insert (inserting every key a run
    /// writes was 7% of a sweep's CPU).
    lives: Vec<FxHashMap<Vec<u8>, Life>>,
    /// Key (db 0 names; WATCH is rare elsewhere) -> watching connections.
    watched: BTreeMap<Vec<u8>, BTreeSet<ConnId>>,
    channels: FxHashMap<ConnId, BTreeSet<Vec<u8>>>,
    patterns: FxHashMap<ConnId, BTreeSet<Vec<u8>>>,
}

impl Detector {
    fn count(&mut self, shape: &'static str) {
        *self.counts.entry(shape).or_default() += 1;
    }

    /// Counts `ttl-removed-by:` or `ttl-recreated-by:` with a name that is
    /// not in [`SHAPES`] under the listed one when there is one.
    fn count_path(&mut self, prefix: &str, path: &str) {
        if let Some(shape) = SHAPES.iter().find(|s| s.strip_prefix(prefix) == Some(path)) {
            self.count(shape);
        }
    }

    fn db(&self, conn: ConnId) -> usize {
        self.db_of.get(&conn).copied().unwrap_or(0)
    }

    /// SELECT, RESET, WATCH and the subscriptions of each connection.
    fn connection_state(&mut self, exec: &Execution, name: &str, op: &Op) {
        let args = &op.args;
        let conn = exec.conn;
        match name {
            "select" => {
                if let Some(db) = parse_usize(args.get(1)).filter(|&db| db < DB_COUNT) {
                    self.db_of.insert(conn, db);
                }
            }
            "reset" => {
                self.db_of.insert(conn, 0);
                self.unwatch(conn);
                self.channels.remove(&conn);
                self.patterns.remove(&conn);
            }
            "watch" => {
                for key in &args[1..] {
                    let set = self.watched.entry(key.clone()).or_default();
                    set.insert(conn);
                    if set.len() >= 2 {
                        self.count("contention:several-watching-one-key");
                    }
                }
            }
            "exec" | "discard" | "unwatch" => self.unwatch(conn),
            "subscribe" => {
                let set = self.channels.entry(conn).or_default();
                set.extend(args[1..].iter().cloned());
            }
            "psubscribe" => {
                let set = self.patterns.entry(conn).or_default();
                set.extend(args[1..].iter().cloned());
            }
            "unsubscribe" | "punsubscribe" => {
                if self.name_and_pattern(conn) {
                    self.count(if name == "unsubscribe" {
                        "contention:sub-by-name-and-pattern-then-unsubscribe"
                    } else {
                        "contention:sub-by-name-and-pattern-then-punsubscribe"
                    });
                }
                let map = if name == "unsubscribe" {
                    &mut self.channels
                } else {
                    &mut self.patterns
                };
                if args.len() == 1 {
                    map.remove(&conn);
                } else if let Some(set) = map.get_mut(&conn) {
                    for a in &args[1..] {
                        set.remove(a);
                    }
                }
            }
            _ => {}
        }
    }

    fn unwatch(&mut self, conn: ConnId) {
        for set in self.watched.values_mut() {
            set.remove(&conn);
        }
        self.watched.retain(|_, s| !s.is_empty());
    }

    /// Whether `conn` has a channel subscribed by name that one of its
    /// patterns matches too.
    fn name_and_pattern(&self, conn: ConnId) -> bool {
        let (Some(channels), Some(patterns)) = (self.channels.get(&conn), self.patterns.get(&conn))
        else {
            return false;
        };
        channels.iter().any(|c| {
            patterns
                .iter()
                .any(|p| seedkv_engine::glob::glob_match(p, c, false, &mut 0))
        })
    }

    /// A write: keys watched by several connections.
    fn written(
        &mut self,
        spec: Option<&'static seedkv_engine::cmd::CommandSpec>,
        args: &[Vec<u8>],
    ) {
        let Some(spec) = spec else { return };
        // Nothing watched (most runs): no key of this write can be.
        if self.watched.is_empty() {
            return;
        }
        let several = key_positions(spec, args.len())
            .any(|i| self.watched.get(&args[i]).is_some_and(|s| s.len() >= 2));
        if several {
            self.count("contention:several-watching-one-key-written");
        }
    }

    /// The key's life, `None` for the default one (see [`Detector::lives`]).
    fn life_mut(&mut self, db: usize, key: &[u8]) -> Option<&mut Life> {
        self.lives[db].get_mut(key)
    }

    /// Whether the key has a TTL.
    fn has_ttl(&self, db: usize, key: &[u8]) -> bool {
        self.lives[db].get(key).is_some_and(|life| life.ttl)
    }

    /// Gives the key a TTL or takes it away (`ttl`); nothing else changes.
    fn set_ttl(&mut self, db: usize, key: &[u8], ttl: bool) {
        if let Some(life) = self.life_mut(db, key) {
            life.ttl = ttl;
        } else if ttl {
            let life = Life {
                ttl,
                ..Life::default()
            };
            self.lives[db].insert(key.to_vec(), life);
        }
    }

    /// The keys with a TTL in the databases `dbs` selects.
    fn keys_with_ttl(&self, dbs: impl Fn(usize) -> bool) -> Vec<Key> {
        let mut keys = Vec::new();
        for (d, lives) in self.lives.iter().enumerate().filter(|(d, _)| dbs(*d)) {
            keys.extend(
                lives
                    .iter()
                    .filter(|(_, life)| life.ttl)
                    .map(|(k, _)| (d, k.clone())),
            );
        }
        keys
    }

    /// Removes `(db, key)` by `path` if it had a TTL.
    fn remove(&mut self, db: usize, key: &[u8], path: &str) {
        let Some(life) = self.life_mut(db, key).filter(|life| life.ttl) else {
            return;
        };
        *life = Life {
            removed: true,
            ..Life::default()
        };
        self.count_path("ttl-removed-by:", path);
    }

    /// `(db, key)` seen absent.
    fn seen_absent(&mut self, db: usize, key: &[u8]) {
        if let Some(life) = self.life_mut(db, key).filter(|life| life.ttl) {
            let path = life.pending.unwrap_or("expiry");
            self.remove(db, key, path);
        }
    }

    /// `(db, key)` written by `name` (which may have created it).
    fn created(&mut self, db: usize, key: &[u8], name: &str) {
        let Some(life) = self.life_mut(db, key).filter(|life| life.removed) else {
            return;
        };
        life.removed = false;
        self.count_path("ttl-recreated-by:", name);
    }

    fn ttl_life(
        &mut self,
        exec: &Execution,
        spec: Option<&'static seedkv_engine::cmd::CommandSpec>,
        name: &str,
        args: &[Vec<u8>],
        reply: Option<&Frame>,
    ) {
        let db = self.db(exec.conn);
        let key = |i: usize| args.get(i).map(|k| k.as_slice());
        let int = parse_int(reply);
        match name {
            "del" | "unlink" => {
                if int == Some(args.len() as i64 - 1) {
                    for k in &args[1..] {
                        self.remove(db, k, name);
                    }
                }
                return;
            }
            "getdel" if matches!(reply, Some(Frame::Bulk(_))) => {
                self.remove(db, &args[1], "getdel");
                return;
            }
            "exists" if args.len() == 2 => {
                match int {
                    Some(0) => self.seen_absent(db, &args[1]),
                    Some(_) => {
                        if let Some(life) = self.life_mut(db, &args[1]) {
                            life.pending = None;
                        }
                    }
                    None => {}
                }
                return;
            }
            "ttl" | "pttl" => {
                if int == Some(-2) {
                    self.seen_absent(db, &args[1]);
                }
                return;
            }
            "type" => {
                if matches!(reply, Some(Frame::Simple(s)) if s.as_slice() == b"none") {
                    self.seen_absent(db, &args[1]);
                }
                return;
            }
            "get" => {
                if matches!(reply, Some(Frame::Null)) {
                    self.seen_absent(db, &args[1]);
                }
                return;
            }
            "flushdb" | "flushall" => {
                let keys = self.keys_with_ttl(|d| name == "flushall" || d == db);
                for (d, k) in keys {
                    self.remove(d, &k, name);
                }
                return;
            }
            "swapdb" => {
                let (Some(a), Some(b)) = (parse_usize(args.get(1)), parse_usize(args.get(2)))
                else {
                    return;
                };
                if reply.is_none() {
                    return;
                }
                self.count("db:swapdb");
                let keys = self.keys_with_ttl(|d| d == a || d == b);
                for (d, k) in keys {
                    self.remove(d, &k, "swapdb");
                }
                return;
            }
            "move" if int == Some(1) => {
                self.count("db:move");
                let had_ttl = self.has_ttl(db, &args[1]);
                self.remove(db, &args[1], "move");
                if let Some(to) = parse_usize(args.get(2)).filter(|&t| t < DB_COUNT) {
                    self.created(to, &args[1], "move");
                    self.set_ttl(to, &args[1], had_ttl);
                }
                return;
            }
            "copy" if int == Some(1) => {
                let to = args
                    .iter()
                    .position(|a| a.eq_ignore_ascii_case(b"db"))
                    .and_then(|i| parse_usize(args.get(i + 1)));
                if to.is_some_and(|t| t != db) {
                    self.count("db:copy-db");
                }
                let to = to.filter(|&t| t < DB_COUNT).unwrap_or(db);
                self.created(to, &args[2], "copy");
                return;
            }
            "rename" | "renamenx" if reply.is_some() && int != Some(0) => {
                let had_ttl = self.has_ttl(db, &args[1]);
                self.remove(db, &args[1], "rename");
                self.remove(db, &args[2], "rename-over");
                self.created(db, &args[2], "rename");
                self.set_ttl(db, &args[2], had_ttl);
                return;
            }
            _ => {}
        }
        let gives_ttl = match name {
            "set" => has_token(args, &["EX", "PX", "EXAT", "PXAT"]),
            "setex" | "psetex" => true,
            "getex" => has_token(args, &["EX", "PX", "EXAT", "PXAT"]),
            "expire" | "pexpire" | "expireat" | "pexpireat" => int == Some(1),
            _ => false,
        };
        let Some(spec) = spec.filter(|s| s.has(flags::WRITE)) else {
            return;
        };
        if name == "persist" && int == Some(1) {
            self.set_ttl(db, &args[1], false);
            return;
        }
        // A SET without KEEPTTL (and not refused by NX/XX) replaces the value.
        let set_over = matches!(name, "set" | "setex" | "psetex")
            && !has_token(args, &["KEEPTTL"])
            && !matches!(reply, Some(Frame::Null) | None);
        if set_over && self.has_ttl(db, &args[1]) {
            self.remove(db, &args[1], "set");
            // The same SET is not also the key's re-creation.
            if let Some(life) = self.life_mut(db, &args[1]) {
                life.removed = false;
            }
        }
        let created_nothing = matches!(reply, Some(Frame::Null) | None) || int == Some(0);
        for i in creation_targets(name, spec, args) {
            let Some(k) = key(i) else { continue };
            let creates = !created_nothing || matches!(name, "set" | "mset") && reply.is_some();
            let Some(life) = self.life_mut(db, k) else {
                continue;
            };
            if life.ttl {
                life.pending = Some(spec.name);
            }
            if creates && life.removed {
                life.removed = false;
                self.count_path("ttl-recreated-by:", name);
            }
        }
        if gives_ttl && reply.is_some() {
            self.set_ttl(db, &args[1], true);
            let life = self
                .life_mut(db, &args[1])
                .expect("a key given a TTL has a life");
            life.pending = None;
            life.removed = false;
        }
    }
}

/// Argument indices of the keys `name` writes. An iterator, not a
/// vector: every write of a run asks (an allocation each, and one more in
/// `CommandSpec::key_indices`, was a fifth of the detector's cost).
fn creation_targets(
    name: &str,
    spec: &'static seedkv_engine::cmd::CommandSpec,
    args: &[Vec<u8>],
) -> std::iter::StepBy<std::ops::Range<usize>> {
    // (first, end, step) of the indices.
    let (first, end, step) = match name {
        "lmove" | "rpoplpush" | "smove" => (1, 3, 1),
        "mset" | "msetnx" => (1, args.len(), 2),
        "sort" => match args.iter().position(|a| a.eq_ignore_ascii_case(b"store")) {
            Some(i) => (i + 1, i + 2, 1),
            None => (0, 0, 1),
        },
        _ if name.ends_with("store") => (1, 2, 1),
        _ => match key_positions(spec, args.len()).next() {
            Some(i) => (i, i + 1, 1),
            None => (0, 0, 1),
        },
    };
    (first..end.max(first)).step_by(step)
}

/// `CommandSpec::key_indices` without its vector: the positions of the
/// keys of a call with `argc` arguments, in order.
fn key_positions(
    spec: &'static seedkv_engine::cmd::CommandSpec,
    argc: usize,
) -> impl Iterator<Item = usize> {
    let (first, last) = match spec.first_key > 0 && argc > 0 {
        true if spec.last_key < 0 => (spec.first_key as i64, argc as i64 + spec.last_key as i64),
        true => (spec.first_key as i64, spec.last_key as i64),
        false => (1, 0),
    };
    let end = (last + 1).min(argc as i64).max(first);
    (first as usize..end as usize).step_by(spec.key_step.max(1) as usize)
}

#[cfg(test)]
mod tests {
    use seedkv_engine::cmd::CommandTable;

    /// The allocation-free key positions are the engine's, for every
    /// command of the table and every argument count up to twelve.
    #[test]
    fn key_positions_are_the_specs_key_indices() {
        let table = CommandTable::new(seedkv_engine::commands::FAMILIES);
        let mut checked = 0;
        for spec in table.iter() {
            for argc in 0..12 {
                let ours: Vec<usize> = super::key_positions(spec, argc).collect();
                assert_eq!(ours, spec.key_indices(argc), "{} argc {argc}", spec.name);
                checked += 1;
            }
        }
        assert!(checked > 1000, "{checked}");
    }
}
