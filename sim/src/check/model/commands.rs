//! The reference model's command semantics, written from Redis 7.0's
//! `t_string.c`, `db.c` and `expire.c`: what each command does to the model
//! and the reply it predicts. Each command first settles the errors that do
//! not depend on the data (syntax, integer arguments), in Redis's order,
//! then reads the keys; a reply that depends on an unknown key is
//! [`Expected::Unpredictable`]. The collection families live in
//! `model_{lists,hashes,sets,zsets}.rs`; this file dispatches to them.

use seedkv_engine::resp::Frame;

use super::redis_c::{glob_match, parse_i64_strict, NOT_AN_INTEGER, SYNTAX_ERROR, WRONGTYPE};
use super::{bitmaps, geo, hashes, hll, lists, sets, zsets};
use super::{Entry, Expected, KeyState, KeyspaceModel, Typed, Value, DB_COUNT};
use crate::history::Execution;

const OVERFLOW: &str = "ERR increment or decrement would overflow";

/// One command as a family sees it: where it runs and what it was sent.
pub(crate) struct Call<'a> {
    pub db: usize,
    /// The engine's lower-case name.
    pub name: &'a str,
    pub args: &'a [Vec<u8>],
    /// Wall-clock time of the execution (unix ms).
    pub now: u64,
    /// The reply the client recorded, if any: commands with random or
    /// ambiguous outcomes (SPOP, a blocked pop) learn what happened from it.
    pub reply: Option<&'a Frame>,
    /// The connection's protocol (2 or 3); `None` when unknown.
    pub resp: Option<u8>,
}

impl Call<'_> {
    /// The first key (every family command has one).
    pub(crate) fn key(&self) -> &[u8] {
        self.args.get(1).map_or(&[][..], Vec::as_slice)
    }
}

/// The keys a modelled command names, and whether it may write them.
/// `None` for commands the model does not know. FLUSHDB and FLUSHALL name no
/// keys but write: callers handle them.
pub(crate) fn modelled_keys<'a>(name: &str, args: &'a [Vec<u8>]) -> Option<(Vec<&'a [u8]>, bool)> {
    let from = |first: usize, step: usize| -> Vec<&'a [u8]> {
        args.iter()
            .skip(first)
            .step_by(step)
            .map(Vec::as_slice)
            .collect()
    };
    let first = || -> Vec<&'a [u8]> { args.get(1).map(Vec::as_slice).into_iter().collect() };
    Some(match name {
        "ping" | "echo" | "dbsize" | "keys" | "scan" | "select" => (Vec::new(), false),
        "flushdb" | "flushall" => (Vec::new(), true),
        "get" | "strlen" | "ttl" | "pttl" | "type" => (first(), false),
        "exists" | "mget" => (from(1, 1), false),
        "set" | "setnx" | "getset" | "incr" | "decr" | "incrby" | "decrby" | "append"
        | "getdel" | "expire" | "pexpire" | "expireat" | "pexpireat" | "persist" => (first(), true),
        "del" | "unlink" => (from(1, 1), true),
        "getrange" | "substr" => (first(), false),
        "setrange" | "incrbyfloat" => (first(), true),
        "mset" | "msetnx" => (from(1, 2), true),
        "rename" | "renamenx" => (
            args.iter().skip(1).take(2).map(Vec::as_slice).collect(),
            true,
        ),
        _ => {
            return lists::keys(name, args)
                .or_else(|| hashes::keys(name, args))
                .or_else(|| sets::keys(name, args))
                .or_else(|| zsets::keys(name, args))
                .or_else(|| bitmaps::keys(name, args))
                .or_else(|| geo::keys(name, args))
                .or_else(|| hll::keys(name, args))
        }
    })
}

/// Redis 7.0 arities: N means exactly N arguments, -N at least N.
fn arity(name: &str) -> Option<i64> {
    Some(match name {
        "ping" | "flushdb" | "flushall" => -1,
        "echo" | "get" | "incr" | "decr" | "strlen" | "getdel" | "ttl" | "pttl" | "persist"
        | "select" | "keys" | "type" => 2,
        "setnx" | "getset" | "incrby" | "decrby" | "append" => 3,
        "set" | "mset" | "msetnx" | "expire" | "pexpire" | "expireat" | "pexpireat" => -3,
        "mget" | "del" | "unlink" | "exists" | "scan" => -2,
        "rename" | "renamenx" => 3,
        "dbsize" => 1,
        _ => return super::string_edges::arity(name),
    })
}

/// Which collection family models `name`, with its arity.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Family {
    Lists,
    Hashes,
    Sets,
    ZSets,
    Bitmaps,
    Geo,
    Hll,
}

/// What [`family_arity`] and [`arity`] say of one command name.
pub(crate) type Arity = (Option<(Family, i64)>, Option<i64>);

impl KeyspaceModel {
    /// The name's family and arity. Asked for every execution, and a
    /// walk of the families' name matches each time was a tenth of the
    /// model; remembered by the name's address, which the engine's
    /// `&'static` names keep (a pure function of the text, so two
    /// addresses of one name agree).
    fn arity_of(&mut self, name: &'static str) -> Arity {
        let key = (name.as_ptr() as usize, name.len());
        *self.arities.entry(key).or_insert_with(|| {
            let family = family_arity(name);
            (family, arity(name).or(family.map(|(_, n)| n)))
        })
    }
}

fn family_arity(name: &str) -> Option<(Family, i64)> {
    lists::arity(name)
        .map(|n| (Family::Lists, n))
        .or_else(|| hashes::arity(name).map(|n| (Family::Hashes, n)))
        .or_else(|| sets::arity(name).map(|n| (Family::Sets, n)))
        .or_else(|| zsets::arity(name).map(|n| (Family::ZSets, n)))
        .or_else(|| bitmaps::arity(name).map(|n| (Family::Bitmaps, n)))
        .or_else(|| geo::arity(name).map(|n| (Family::Geo, n)))
        .or_else(|| hll::arity(name).map(|n| (Family::Hll, n)))
}

/// SET's expiry option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ExpireOption {
    Ex,
    Px,
    ExAt,
    PxAt,
}

#[derive(Default)]
struct SetOptions<'a> {
    nx: bool,
    xx: bool,
    get: bool,
    keep_ttl: bool,
    expire: Option<(ExpireOption, &'a [u8])>,
}

/// `parseExtendedStringArgumentsOrReply` for SET: options after the value.
fn parse_set_options(args: &[Vec<u8>]) -> Option<SetOptions<'_>> {
    let mut o = SetOptions::default();
    let mut j = 3;
    while j < args.len() {
        let opt = args[j].to_ascii_lowercase();
        let next = args.get(j + 1).map(Vec::as_slice);
        let kind = o.expire.map(|(k, _)| k);
        let expire_may_be = |wanted: ExpireOption| !o.keep_ttl && kind.is_none_or(|k| k == wanted);
        match opt.as_slice() {
            b"nx" if !o.xx => o.nx = true,
            b"xx" if !o.nx => o.xx = true,
            b"get" => o.get = true,
            b"keepttl" if kind.is_none() => o.keep_ttl = true,
            b"ex" if expire_may_be(ExpireOption::Ex) && next.is_some() => {
                o.expire = Some((ExpireOption::Ex, next.expect("checked")));
                j += 1;
            }
            b"px" if expire_may_be(ExpireOption::Px) && next.is_some() => {
                o.expire = Some((ExpireOption::Px, next.expect("checked")));
                j += 1;
            }
            b"exat" if expire_may_be(ExpireOption::ExAt) && next.is_some() => {
                o.expire = Some((ExpireOption::ExAt, next.expect("checked")));
                j += 1;
            }
            b"pxat" if expire_may_be(ExpireOption::PxAt) && next.is_some() => {
                o.expire = Some((ExpireOption::PxAt, next.expect("checked")));
                j += 1;
            }
            _ => return None,
        }
        j += 1;
    }
    Some(o)
}

/// `getExpireMillisecondsOrReply`: the absolute expiry time in unix ms.
fn set_expire_unix_ms(kind: ExpireOption, text: &[u8], now_ms: u64) -> Result<u64, Expected> {
    let invalid = || Expected::error("ERR invalid expire time in 'set' command");
    let mut ms = parse_i64_strict(text).ok_or_else(|| Expected::error(NOT_AN_INTEGER))?;
    let seconds = matches!(kind, ExpireOption::Ex | ExpireOption::ExAt);
    if ms <= 0 || (seconds && ms > i64::MAX / 1000) {
        return Err(invalid());
    }
    if seconds {
        ms *= 1000;
    }
    if matches!(kind, ExpireOption::Ex | ExpireOption::Px) {
        ms = ms.checked_add(now_ms as i64).ok_or_else(invalid)?;
    }
    Ok(ms as u64)
}

impl KeyspaceModel {
    /// Runs a command on a connection in its normal mode; `reply` is what the
    /// client recorded, if anything.
    pub(crate) fn execute(
        &mut self,
        exec: &Execution,
        args: &[Vec<u8>],
        reply: Option<&Frame>,
    ) -> Expected {
        let name = exec.name;
        let now = exec.unix_ms;
        if name == "hello" {
            return self.hello(exec, args, reply);
        }
        let (family, arity) = self.arity_of(name);
        match arity {
            None => {
                let db = self.conns[&exec.conn].db;
                return self.apply_unmodelled(exec, args, db);
            }
            Some(n) => {
                let argc = args.len() as i64;
                if (n >= 0 && argc != n) || (n < 0 && argc < -n) {
                    // Redis rejects this before running it: no effect.
                    return Expected::AnyError;
                }
            }
        }
        match name {
            "ping" => {
                return match args.len() {
                    1 => Expected::Exactly(Frame::Simple(b"PONG".to_vec())),
                    2 => Expected::bulk_or_null(Some(&args[1])),
                    _ => Expected::error("ERR wrong number of arguments for 'ping' command"),
                }
            }
            "echo" => return Expected::bulk_or_null(Some(&args[1])),
            "select" => return self.select(exec, args),
            "flushall" => {
                return match flush_arguments_ok(args) {
                    true => {
                        (0..DB_COUNT).for_each(|db| self.flush_db(db));
                        Expected::ok()
                    }
                    false => Expected::error(SYNTAX_ERROR),
                }
            }
            _ => {}
        }
        let Some(db) = self.conns[&exec.conn].db else {
            // The model lost track of this connection's database.
            self.forget_keys_of(exec, args);
            return Expected::Unpredictable;
        };
        if let Some((family, _)) = family {
            let call = Call {
                db,
                name,
                args,
                now,
                reply,
                resp: self.conn_resp(exec.conn),
            };
            return match family {
                Family::Lists => self.list_command(&call),
                Family::Hashes => self.hash_command(&call),
                Family::Sets => self.set_command(&call),
                Family::ZSets => self.zset_command(&call),
                Family::Bitmaps => self.bitmap_command(&call),
                Family::Geo => self.geo_command(&call),
                Family::Hll => self.hll_command(&call),
            };
        }
        let key = args.get(1).map_or(&[][..], Vec::as_slice);
        match name {
            "get" => value_reply(self.read_as(db, key, now, Value::as_str)),
            "set" => self.set(db, args, now),
            "getset" => {
                let old = owned(self.read_as(db, key, now, Value::as_str));
                match old {
                    Typed::WrongType => {}
                    // It may be another type (then untouched): still unknown.
                    Typed::Unknown => self.forget_key(db, key),
                    _ => self.store(db, key, Entry::string(args[2].clone())),
                }
                value_reply(as_ref(&old))
            }
            "setnx" => match self.lookup(db, key, now) {
                KeyState::Unknown => Expected::Unpredictable,
                KeyState::Present(_) => Expected::integer(0),
                KeyState::Absent => {
                    self.store(db, key, Entry::string(args[2].clone()));
                    Expected::integer(1)
                }
            },
            "mget" => {
                let mut items = Vec::with_capacity(args.len() - 1);
                let mut predictable = true;
                for key in &args[1..] {
                    match self.read_as(db, key, now, Value::as_str) {
                        Typed::Unknown => predictable = false,
                        // MGET answers nil for a key of another type.
                        Typed::Absent | Typed::WrongType => items.push(Frame::Null),
                        Typed::Found(v) => items.push(Frame::Bulk(v.clone())),
                    }
                }
                match predictable {
                    true => Expected::Exactly(Frame::Array(items)),
                    false => Expected::Unpredictable,
                }
            }
            "mset" | "msetnx" => self.mset(db, name, args, now),
            "del" | "unlink" => {
                let mut deleted = 0;
                let mut predictable = true;
                for key in &args[1..] {
                    match self.delete(db, key, now) {
                        None => predictable = false,
                        Some(false) => {}
                        Some(true) => deleted += 1,
                    }
                }
                match predictable {
                    true => Expected::integer(deleted),
                    false => Expected::Unpredictable,
                }
            }
            "exists" => {
                let mut count = 0;
                for key in &args[1..] {
                    match self.lookup(db, key, now) {
                        KeyState::Unknown => return Expected::Unpredictable,
                        KeyState::Absent => {}
                        KeyState::Present(_) => count += 1,
                    }
                }
                Expected::integer(count)
            }
            "incr" => self.incr_by(db, key, 1, now),
            "decr" => self.incr_by(db, key, -1, now),
            "incrby" => match parse_i64_strict(&args[2]) {
                None => Expected::error(NOT_AN_INTEGER),
                Some(by) => self.incr_by(db, key, by, now),
            },
            "decrby" => match parse_i64_strict(&args[2]) {
                None => Expected::error(NOT_AN_INTEGER),
                Some(i64::MIN) => Expected::error("ERR decrement would overflow"),
                Some(by) => self.incr_by(db, key, -by, now),
            },
            "append" => match self.write_as(db, key, now, Value::as_str_mut) {
                Typed::Unknown => Expected::Unpredictable,
                Typed::WrongType => Expected::error(WRONGTYPE),
                Typed::Absent => {
                    self.store(db, key, Entry::string(args[2].clone()));
                    Expected::integer(args[2].len() as i64)
                }
                Typed::Found(value) => {
                    value.extend_from_slice(&args[2]);
                    Expected::integer(value.len() as i64)
                }
            },
            "strlen" => match self.read_as(db, key, now, Value::as_str) {
                Typed::Unknown => Expected::Unpredictable,
                Typed::WrongType => Expected::error(WRONGTYPE),
                Typed::Absent => Expected::integer(0),
                Typed::Found(v) => Expected::integer(v.len() as i64),
            },
            "getdel" => {
                let old = owned(self.read_as(db, key, now, Value::as_str));
                match old {
                    Typed::WrongType => {}
                    // It may be another type (then kept): still unknown,
                    // not absent.
                    Typed::Unknown => self.forget_key(db, key),
                    _ => self.remove(db, key),
                }
                value_reply(as_ref(&old))
            }
            "expire" | "pexpire" | "expireat" | "pexpireat" => self.expire(db, name, args, now),
            "ttl" | "pttl" => match self.lookup(db, key, now) {
                KeyState::Unknown => Expected::Unpredictable,
                KeyState::Absent => Expected::integer(-2),
                KeyState::Present(Entry {
                    expire_unix_ms: None,
                    ..
                }) => Expected::integer(-1),
                KeyState::Present(&Entry {
                    expire_unix_ms: Some(when),
                    ..
                }) => {
                    debug_assert!(when > now, "a live key expires in the future");
                    let ttl_ms = (when - now) as i64;
                    Expected::integer(if name == "pttl" {
                        ttl_ms
                    } else {
                        (ttl_ms + 500) / 1000
                    })
                }
            },
            "persist" => match self.lookup(db, key, now) {
                KeyState::Unknown => Expected::Unpredictable,
                KeyState::Absent
                | KeyState::Present(Entry {
                    expire_unix_ms: None,
                    ..
                }) => Expected::integer(0),
                KeyState::Present(_) => {
                    if let Some(entry) = self.entry_mut(db, key) {
                        entry.expire_unix_ms = None;
                    }
                    Expected::integer(1)
                }
            },
            "dbsize" => match self.dbsize_range(db, now) {
                Some((low, high)) => Expected::IntegerIn(low, high),
                None => Expected::Unpredictable,
            },
            "flushdb" => match flush_arguments_ok(args) {
                true => {
                    self.flush_db(db);
                    Expected::ok()
                }
                false => Expected::error(SYNTAX_ERROR),
            },
            "keys" => {
                let pattern = &args[1];
                if self.db_is_unknown(db)
                    || self.unknown_keys_in(db).any(|k| glob_match(pattern, k))
                {
                    return Expected::Unpredictable;
                }
                let mut keys: Vec<Vec<u8>> = self
                    .live_keys(db, now)
                    .filter(|k| glob_match(pattern, k))
                    .cloned()
                    .collect();
                keys.sort_unstable();
                Expected::SortedBulks(keys)
            }
            // SCAN's reply depends on the engine's table layout; its
            // completeness has its own checker. It changes nothing.
            "scan" => Expected::Unpredictable,
            "type" => match self.lookup(db, key, now) {
                KeyState::Unknown => Expected::Unpredictable,
                KeyState::Absent => Expected::Exactly(Frame::Simple(b"none".to_vec())),
                KeyState::Present(e) => {
                    Expected::Exactly(Frame::Simple(e.value.type_name().as_bytes().to_vec()))
                }
            },
            "rename" | "renamenx" => self.rename(db, name == "renamenx", args, now),
            "getrange" | "substr" | "setrange" | "incrbyfloat" => {
                self.string_edge_command(db, name, args, now, reply)
            }
            _ => unreachable!("every command with an arity is modelled: {name}"),
        }
    }

    fn select(&mut self, exec: &Execution, args: &[Vec<u8>]) -> Expected {
        // getIntFromObjectOrReply: a long long, then a range check to int
        // with its own message.
        match parse_i64_strict(&args[1]) {
            None => Expected::error(NOT_AN_INTEGER),
            Some(i) if i32::try_from(i).is_err() => Expected::error(
                "ERR value is out of range, value must between -2147483648 and 2147483647",
            ),
            Some(i) if i < 0 || i >= DB_COUNT as i64 => {
                Expected::error("ERR DB index is out of range")
            }
            Some(i) => {
                self.conn_mut(exec.conn).db = Some(i as usize);
                Expected::ok()
            }
        }
    }

    fn set(&mut self, db: usize, args: &[Vec<u8>], now: u64) -> Expected {
        let key = &args[1];
        let Some(options) = parse_set_options(args) else {
            return Expected::error(SYNTAX_ERROR);
        };
        let expire_unix_ms = match options.expire {
            None => None,
            Some((kind, text)) => match set_expire_unix_ms(kind, text, now) {
                Ok(when) => Some(when),
                Err(error) => return error,
            },
        };
        let (old, found, old_expire_unix_ms) = match self.lookup(db, key, now) {
            KeyState::Unknown => {
                if options.nx || options.xx || options.keep_ttl || options.get {
                    // Whether it was written (GET refuses another type), or
                    // with which TTL, depends on what it held.
                    self.forget_key(db, key);
                    return match options.get || options.nx || options.xx {
                        true => Expected::Unpredictable,
                        false => Expected::ok(),
                    };
                }
                self.store(
                    db,
                    key,
                    Entry {
                        value: Value::Str(args[2].clone()),
                        expire_unix_ms,
                    },
                );
                return Expected::ok();
            }
            KeyState::Absent => (Typed::Absent, false, None),
            KeyState::Present(e) => {
                // Only SET ... GET replies the old value: copy it then alone.
                let old = match &e.value {
                    Value::Str(v) if options.get => Typed::Found(v.clone()),
                    Value::Str(_) => Typed::Found(Vec::new()),
                    _ => Typed::WrongType,
                };
                (old, true, e.expire_unix_ms)
            }
        };
        // SET ... GET replies the old value first, and refuses another type.
        if options.get && matches!(old, Typed::WrongType) {
            return Expected::error(WRONGTYPE);
        }
        if (options.nx && found) || (options.xx && !found) {
            return match options.get {
                true => value_reply(as_ref(&old)),
                false => Expected::bulk_or_null(None),
            };
        }
        let expire_unix_ms = match options.keep_ttl && found {
            true => old_expire_unix_ms,
            false => expire_unix_ms,
        };
        self.store(
            db,
            key,
            Entry {
                value: Value::Str(args[2].clone()),
                expire_unix_ms,
            },
        );
        match options.get {
            true => value_reply(as_ref(&old)),
            false => Expected::ok(),
        }
    }

    fn mset(&mut self, db: usize, name: &str, args: &[Vec<u8>], now: u64) -> Expected {
        if args.len().is_multiple_of(2) {
            return Expected::error(&format!(
                "ERR wrong number of arguments for '{name}' command"
            ));
        }
        let pairs: Vec<(&Vec<u8>, &Vec<u8>)> =
            args[1..].chunks(2).map(|p| (&p[0], &p[1])).collect();
        if name == "msetnx" {
            let mut any_unknown = false;
            for (key, _) in &pairs {
                match self.lookup(db, key, now) {
                    KeyState::Present(_) => return Expected::integer(0),
                    KeyState::Unknown => any_unknown = true,
                    KeyState::Absent => {}
                }
            }
            if any_unknown {
                for (key, _) in &pairs {
                    self.forget_key(db, key);
                }
                return Expected::Unpredictable;
            }
        }
        for (key, value) in pairs {
            self.store(db, key, Entry::string(value.clone()));
        }
        match name {
            "msetnx" => Expected::integer(1),
            _ => Expected::ok(),
        }
    }

    /// `incrDecrCommand`: the TTL survives.
    fn incr_by(&mut self, db: usize, key: &[u8], by: i64, now: u64) -> Expected {
        let old = match self.write_as(db, key, now, Value::as_str_mut) {
            Typed::Unknown => return Expected::Unpredictable,
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Absent => 0,
            Typed::Found(value) => match parse_i64_strict(value) {
                None => return Expected::error(NOT_AN_INTEGER),
                Some(n) => n,
            },
        };
        let Some(new) = old.checked_add(by) else {
            return Expected::error(OVERFLOW);
        };
        match self.write_as(db, key, now, Value::as_str_mut) {
            Typed::Found(value) => *value = new.to_string().into_bytes(),
            _ => self.store(db, key, Entry::string(new.to_string().into_bytes())),
        }
        Expected::integer(new)
    }

    /// `expireGenericCommand`.
    fn expire(&mut self, db: usize, name: &str, args: &[Vec<u8>], now: u64) -> Expected {
        let (mut nx, mut xx, mut gt, mut lt) = (false, false, false, false);
        for opt in &args[3..] {
            match opt.to_ascii_lowercase().as_slice() {
                b"nx" => nx = true,
                b"xx" => xx = true,
                b"gt" => gt = true,
                b"lt" => lt = true,
                _ if opt.iter().all(|b| (b' '..=b'~').contains(b)) => {
                    return Expected::error(&format!(
                        "ERR Unsupported option {}",
                        String::from_utf8_lossy(opt)
                    ));
                }
                _ => return Expected::AnyError,
            }
        }
        if nx && (xx || gt || lt) {
            return Expected::error(
                "ERR NX and XX, GT or LT options at the same time are not compatible",
            );
        }
        if gt && lt {
            return Expected::error("ERR GT and LT options at the same time are not compatible");
        }
        let Some(mut when) = parse_i64_strict(&args[2]) else {
            return Expected::error(NOT_AN_INTEGER);
        };
        let invalid = Expected::error(&format!("ERR invalid expire time in '{name}' command"));
        if matches!(name, "expire" | "expireat") {
            if !(i64::MIN / 1000..=i64::MAX / 1000).contains(&when) {
                return invalid;
            }
            when *= 1000;
        }
        let base_ms = match name {
            "expire" | "pexpire" => now as i64,
            _ => 0,
        };
        if when > i64::MAX - base_ms {
            return invalid;
        }
        when += base_ms;
        let key = &args[1];
        let current = match self.lookup(db, key, now) {
            KeyState::Unknown => return Expected::Unpredictable,
            KeyState::Absent => return Expected::integer(0),
            KeyState::Present(e) => e.expire_unix_ms.map(|c| c as i64),
        };
        let refused = (nx && current.is_some())
            || (xx && current.is_none())
            || (gt && current.is_none_or(|c| when <= c))
            || (lt && current.is_some_and(|c| when >= c));
        if refused {
            return Expected::integer(0);
        }
        if when <= now as i64 {
            self.remove(db, key);
        } else if let Some(entry) = self.entry_mut(db, key) {
            entry.expire_unix_ms = Some(when as u64);
        }
        Expected::integer(1)
    }

    /// `renameGenericCommand`: the value and its TTL move; RENAME replaces
    /// the destination, RENAMENX refuses an existing one.
    fn rename(&mut self, db: usize, nx: bool, args: &[Vec<u8>], now: u64) -> Expected {
        let (src, dst) = (&args[1], &args[2]);
        let src_found = match self.lookup(db, src, now) {
            KeyState::Unknown => None,
            KeyState::Absent => return Expected::error("ERR no such key"),
            KeyState::Present(_) => Some(()),
        };
        let dst_state = match self.lookup(db, dst, now) {
            KeyState::Unknown => None,
            KeyState::Absent => Some(false),
            KeyState::Present(_) => Some(true),
        };
        let reply = |done: bool| match (nx, done) {
            (true, done) => Expected::integer(i64::from(done)),
            (false, _) => Expected::ok(),
        };
        if src_found.is_some() && src == dst {
            return reply(false);
        }
        match (src_found, dst_state) {
            (Some(()), Some(true)) if nx => reply(false),
            (Some(()), Some(_)) | (Some(()), None) if !nx || dst_state.is_some() => {
                let Some(entry) = self.keys[db].remove(src.as_slice()) else {
                    return Expected::Unpredictable;
                };
                self.note_touched(db, src);
                self.store(db, dst, entry);
                reply(true)
            }
            _ => {
                // An unknown key: what moved where is unknown.
                self.forget_key(db, src);
                self.forget_key(db, dst);
                Expected::Unpredictable
            }
        }
    }

    /// HELLO [protover ...]: switches the protocol if it succeeds.
    fn hello(&mut self, exec: &Execution, args: &[Vec<u8>], reply: Option<&Frame>) -> Expected {
        let version = args.get(1).map(|v| parse_i64_strict(v));
        let resp = match (version, reply) {
            (None, _) => return Expected::Unpredictable,
            // A refused HELLO (bad version, failed AUTH, bad option)
            // changes nothing.
            (Some(_), Some(Frame::Error(_))) => return Expected::Unpredictable,
            (Some(Some(v @ (2 | 3))), Some(_)) => Some(v as u8),
            (Some(Some(v @ (2 | 3))), None) if args.len() == 2 => Some(v as u8),
            (Some(_), None) if args.len() == 2 => return Expected::Unpredictable,
            _ => None,
        };
        self.conn_mut(exec.conn).resp = resp;
        Expected::Unpredictable
    }
}

/// An owned copy of a string lookup (the old value a write replies).
fn owned(state: Typed<&Vec<u8>>) -> Typed<Vec<u8>> {
    match state {
        Typed::Unknown => Typed::Unknown,
        Typed::Absent => Typed::Absent,
        Typed::WrongType => Typed::WrongType,
        Typed::Found(v) => Typed::Found(v.clone()),
    }
}

fn as_ref(state: &Typed<Vec<u8>>) -> Typed<&Vec<u8>> {
    match state {
        Typed::Unknown => Typed::Unknown,
        Typed::Absent => Typed::Absent,
        Typed::WrongType => Typed::WrongType,
        Typed::Found(v) => Typed::Found(v),
    }
}

/// The reply of a command that returns a string key's (old) value.
fn value_reply(old: Typed<&Vec<u8>>) -> Expected {
    match old {
        Typed::Unknown => Expected::Unpredictable,
        Typed::Absent => Expected::bulk_or_null(None),
        Typed::WrongType => Expected::error(WRONGTYPE),
        Typed::Found(v) => Expected::bulk_or_null(Some(v)),
    }
}

/// FLUSHDB/FLUSHALL take nothing, ASYNC or SYNC.
fn flush_arguments_ok(args: &[Vec<u8>]) -> bool {
    match args.len() {
        1 => true,
        2 => args[1].eq_ignore_ascii_case(b"async") || args[1].eq_ignore_ascii_case(b"sync"),
        _ => false,
    }
}
