//! The reference model's command semantics, written from Redis 7.0's
//! `t_string.c`, `db.c` and `expire.c`: what each command does to the model
//! and the reply it predicts. Each command first settles the errors that do
//! not depend on the data (syntax, integer arguments), in Redis's order,
//! then reads the keys; a reply that depends on an unknown key is
//! [`Expected::Unpredictable`].

use seedkv_engine::resp::Frame;

use super::util::{glob_match, parse_i64_strict};
use super::{Entry, Expected, KeyState, KeyspaceModel, DB_COUNT};
use crate::history::Execution;

const NOT_AN_INTEGER: &str = "ERR value is not an integer or out of range";
const SYNTAX_ERROR: &str = "ERR syntax error";
const OVERFLOW: &str = "ERR increment or decrement would overflow";

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
        "mset" | "msetnx" => (from(1, 2), true),
        _ => return None,
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
        "dbsize" => 1,
        _ => return None,
    })
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
    /// Runs a command on a connection in its normal mode.
    pub(crate) fn execute(&mut self, exec: &Execution, args: &[Vec<u8>]) -> Expected {
        let name = exec.name;
        let now = exec.unix_ms;
        match arity(name) {
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
        let key = args.get(1).map_or(&[][..], Vec::as_slice);
        match name {
            "get" => match self.lookup(db, key, now) {
                KeyState::Unknown => Expected::Unpredictable,
                KeyState::Absent => Expected::bulk_or_null(None),
                KeyState::Present(e) => Expected::bulk_or_null(Some(&e.value)),
            },
            "set" => self.set(db, args, now),
            "getset" => {
                let old = self.lookup(db, key, now);
                self.store(
                    db,
                    key,
                    Entry {
                        value: args[2].clone(),
                        expire_unix_ms: None,
                    },
                );
                value_reply(old)
            }
            "setnx" => match self.lookup(db, key, now) {
                KeyState::Unknown => Expected::Unpredictable,
                KeyState::Present(_) => Expected::integer(0),
                KeyState::Absent => {
                    self.store(
                        db,
                        key,
                        Entry {
                            value: args[2].clone(),
                            expire_unix_ms: None,
                        },
                    );
                    Expected::integer(1)
                }
            },
            "mget" => {
                let mut items = Vec::with_capacity(args.len() - 1);
                let mut predictable = true;
                for key in &args[1..] {
                    match self.lookup(db, key, now) {
                        KeyState::Unknown => predictable = false,
                        KeyState::Absent => items.push(Frame::Null),
                        KeyState::Present(e) => items.push(Frame::Bulk(e.value)),
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
                    match self.lookup(db, key, now) {
                        KeyState::Unknown => predictable = false,
                        KeyState::Absent => {}
                        KeyState::Present(_) => deleted += 1,
                    }
                    self.remove(db, key);
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
            "append" => match self.lookup(db, key, now) {
                KeyState::Unknown => Expected::Unpredictable,
                KeyState::Absent => {
                    self.store(
                        db,
                        key,
                        Entry {
                            value: args[2].clone(),
                            expire_unix_ms: None,
                        },
                    );
                    Expected::integer(args[2].len() as i64)
                }
                KeyState::Present(mut e) => {
                    e.value.extend_from_slice(&args[2]);
                    let len = e.value.len() as i64;
                    self.store(db, key, e);
                    Expected::integer(len)
                }
            },
            "strlen" => match self.lookup(db, key, now) {
                KeyState::Unknown => Expected::Unpredictable,
                KeyState::Absent => Expected::integer(0),
                KeyState::Present(e) => Expected::integer(e.value.len() as i64),
            },
            "getdel" => {
                let old = self.lookup(db, key, now);
                self.remove(db, key);
                value_reply(old)
            }
            "expire" | "pexpire" | "expireat" | "pexpireat" => self.expire(db, name, args, now),
            "ttl" | "pttl" => match self.lookup(db, key, now) {
                KeyState::Unknown => Expected::Unpredictable,
                KeyState::Absent => Expected::integer(-2),
                KeyState::Present(Entry {
                    expire_unix_ms: None,
                    ..
                }) => Expected::integer(-1),
                KeyState::Present(Entry {
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
                KeyState::Present(mut e) => {
                    e.expire_unix_ms = None;
                    self.store(db, key, e);
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
                KeyState::Present(_) => Expected::Exactly(Frame::Simple(b"string".to_vec())),
            },
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
        let old = self.lookup(db, key, now);
        let ok_reply = || {
            if options.get {
                value_reply(old.clone())
            } else {
                Expected::ok()
            }
        };
        let found = match &old {
            KeyState::Unknown => {
                if options.nx || options.xx || options.keep_ttl {
                    // Whether it was written, or with which TTL, depends on
                    // what it held.
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
                        value: args[2].clone(),
                        expire_unix_ms,
                    },
                );
                return ok_reply();
            }
            KeyState::Absent => false,
            KeyState::Present(_) => true,
        };
        if (options.nx && found) || (options.xx && !found) {
            return match options.get {
                true => value_reply(old),
                false => Expected::bulk_or_null(None),
            };
        }
        let expire_unix_ms = match (&old, options.keep_ttl) {
            (KeyState::Present(e), true) => e.expire_unix_ms,
            _ => expire_unix_ms,
        };
        self.store(
            db,
            key,
            Entry {
                value: args[2].clone(),
                expire_unix_ms,
            },
        );
        ok_reply()
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
            self.store(
                db,
                key,
                Entry {
                    value: value.clone(),
                    expire_unix_ms: None,
                },
            );
        }
        match name {
            "msetnx" => Expected::integer(1),
            _ => Expected::ok(),
        }
    }

    /// `incrDecrCommand`: the TTL survives.
    fn incr_by(&mut self, db: usize, key: &[u8], by: i64, now: u64) -> Expected {
        let (old, expire_unix_ms) = match self.lookup(db, key, now) {
            KeyState::Unknown => return Expected::Unpredictable,
            KeyState::Absent => (0, None),
            KeyState::Present(e) => match parse_i64_strict(&e.value) {
                None => return Expected::error(NOT_AN_INTEGER),
                Some(n) => (n, e.expire_unix_ms),
            },
        };
        let Some(new) = old.checked_add(by) else {
            return Expected::error(OVERFLOW);
        };
        self.store(
            db,
            key,
            Entry {
                value: new.to_string().into_bytes(),
                expire_unix_ms,
            },
        );
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
        let mut entry = match self.lookup(db, key, now) {
            KeyState::Unknown => return Expected::Unpredictable,
            KeyState::Absent => return Expected::integer(0),
            KeyState::Present(e) => e,
        };
        let current = entry.expire_unix_ms.map(|c| c as i64);
        let refused = (nx && current.is_some())
            || (xx && current.is_none())
            || (gt && current.is_none_or(|c| when <= c))
            || (lt && current.is_some_and(|c| when >= c));
        if refused {
            return Expected::integer(0);
        }
        if when <= now as i64 {
            self.remove(db, key);
        } else {
            entry.expire_unix_ms = Some(when as u64);
            self.store(db, key, entry);
        }
        Expected::integer(1)
    }
}

/// The reply of a command that returns the key's old value.
fn value_reply(old: KeyState) -> Expected {
    match old {
        KeyState::Unknown => Expected::Unpredictable,
        KeyState::Absent => Expected::bulk_or_null(None),
        KeyState::Present(e) => Expected::bulk_or_null(Some(&e.value)),
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
