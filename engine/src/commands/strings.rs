//! String commands (Redis 7.0's `t_string.c`), with its replies, error
//! messages and the order in which it detects errors.
//!
//! This file holds what every string family shares (the spec defaults, the
//! lookups that tell a missing key from a WRONGTYPE one, and SET's option
//! and expire-time parsers, which GETEX reuses) and the plain get/set
//! family: GET SET SETNX SETEX PSETEX. The other families, one file and one
//! command table each (all listed in [`crate::commands::FAMILIES`]):
//!
//! - [`getex`] (`strings/getex.rs`): GETSET GETDEL GETEX, reads that also write;
//! - [`multi`] (`strings/multi.rs`): MGET MSET MSETNX;
//! - [`ranges`] (`strings/ranges.rs`): APPEND STRLEN GETRANGE SUBSTR SETRANGE;
//! - [`counters`] (`strings/counters.rs`): INCR DECR INCRBY DECRBY INCRBYFLOAT;
//! - [`lcs`] (`strings/lcs.rs`): LCS.

use crate::cmd::{flags::*, CommandSpec, Ctx, Lookup};
use crate::notify::{class, notify};
use crate::util::parse_i64_strict;
use crate::value::{RString, Value, WRONGTYPE};

/// INCRBYFLOAT's x87 `long double` arithmetic.
pub(crate) mod long_double;

pub mod counters;
pub mod getex;
pub mod lcs;
pub mod multi;
pub mod ranges;
#[cfg(test)]
mod spec_tests;
#[cfg(test)]
mod tests;

const SYNTAX_ERROR: &str = "ERR syntax error";
const NOT_AN_INTEGER: &str = "ERR value is not an integer or out of range";

const STRING: CommandSpec = CommandSpec {
    group: "string",
    first_key: 1,
    last_key: 1,
    key_step: 1,
    ..CommandSpec::DEFAULT
};

const READ_FAST: &[&str] = &["read", "string", "fast"];
const READ_SLOW: &[&str] = &["read", "string", "slow"];
const WRITE_FAST: &[&str] = &["write", "string", "fast"];
const WRITE_SLOW: &[&str] = &["write", "string", "slow"];

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "get",
        arity: 2,
        flags: READONLY | FAST,
        acl_categories: READ_FAST,
        summary: "Get the value of a key",
        handler: Some(get),
        ..STRING
    },
    CommandSpec {
        name: "set",
        arity: -3,
        flags: WRITE | DENYOOM,
        acl_categories: WRITE_SLOW,
        summary: "Set the string value of a key",
        handler: Some(set),
        ..STRING
    },
    CommandSpec {
        name: "setnx",
        arity: 3,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Set the value of a key, only if the key does not exist",
        handler: Some(setnx),
        ..STRING
    },
    CommandSpec {
        name: "setex",
        arity: 4,
        flags: WRITE | DENYOOM,
        acl_categories: WRITE_SLOW,
        summary: "Set the value and expiration of a key",
        since: "2.0.0",
        handler: Some(setex),
        ..STRING
    },
    CommandSpec {
        name: "psetex",
        arity: 4,
        flags: WRITE | DENYOOM,
        acl_categories: WRITE_SLOW,
        summary: "Set the value and expiration in milliseconds of a key",
        since: "2.6.0",
        handler: Some(psetex),
        ..STRING
    },
];

/// The key holds a value of another type (the reply is `WRONGTYPE`).
pub(crate) struct WrongType;

/// The string at `key` after lazy expiry: `Ok(None)` when the key is
/// missing (which a [`Lookup::Read`] reports as `keymiss`).
pub(crate) fn string_at<'c>(
    ctx: &'c mut Ctx,
    key: &[u8],
    mode: Lookup,
) -> Result<Option<&'c mut RString>, WrongType> {
    match ctx.lookup_for(key, mode) {
        None => Ok(None),
        Some(Value::Str(s)) => Ok(Some(s)),
        #[allow(unreachable_patterns)]
        Some(_) => Err(WrongType),
    }
}

/// Redis's `getGenericCommand`: replies with the string at `key` (or null,
/// or WRONGTYPE, which is the `Err`). A read: a miss raises `keymiss`, for
/// the writes built on it (GETSET, GETDEL, SET ... GET) too.
fn get_generic(ctx: &mut Ctx, key: &[u8]) -> Result<(), WrongType> {
    let (value, mut w) = ctx.lookup_read_and_writer(key);
    match value {
        None => w.null(),
        Some(Value::Str(s)) => w.bulk(s.as_bytes()),
        #[allow(unreachable_patterns)]
        Some(_) => {
            w.error(WRONGTYPE);
            return Err(WrongType);
        }
    }
    Ok(())
}

/// Redis compares options as C strings, so an embedded NUL ends them.
fn c_str(arg: &[u8]) -> &[u8] {
    &arg[..arg.iter().position(|&c| c == 0).unwrap_or(arg.len())]
}

/// How an expire argument is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ExpireKind {
    /// EX: seconds from now.
    Ex,
    /// PX: milliseconds from now.
    Px,
    /// EXAT: unix time in seconds.
    ExAt,
    /// PXAT: unix time in milliseconds.
    PxAt,
}

impl ExpireKind {
    fn in_seconds(self) -> bool {
        matches!(self, ExpireKind::Ex | ExpireKind::ExAt)
    }

    fn relative(self) -> bool {
        matches!(self, ExpireKind::Ex | ExpireKind::Px)
    }
}

/// Options of SET (NX XX GET KEEPTTL EX PX EXAT PXAT) and GETEX (EX PX EXAT
/// PXAT PERSIST).
#[derive(Clone, Copy, Debug, Default)]
struct ExtendedOptions {
    nx: bool,
    xx: bool,
    get: bool,
    keep_ttl: bool,
    persist: bool,
    /// The expire kind and the index of its argument.
    expire: Option<(ExpireKind, usize)>,
}

/// Redis's `parseExtendedStringArgumentsOrReply`, clause for clause: an
/// option conflicting with an earlier one is a syntax error, while a
/// repeated option (`EX 1 EX 2`) is accepted and the last value wins.
/// `None` means "ERR syntax error".
fn parse_extended_options(
    args: &[Vec<u8>],
    first: usize,
    for_set: bool,
) -> Option<ExtendedOptions> {
    let mut o = ExtendedOptions::default();
    let kind = |o: &ExtendedOptions| o.expire.map(|(k, _)| k);
    let mut j = first;
    while j < args.len() {
        let opt = c_str(&args[j]);
        let has_next = j + 1 < args.len();
        let other_expire = |o: &ExtendedOptions, allowed: ExpireKind| {
            kind(o).is_some_and(|k| k != allowed) || o.keep_ttl || o.persist
        };
        if opt.eq_ignore_ascii_case(b"nx") && !o.xx && for_set {
            o.nx = true;
        } else if opt.eq_ignore_ascii_case(b"xx") && !o.nx && for_set {
            o.xx = true;
        } else if opt.eq_ignore_ascii_case(b"get") && for_set {
            o.get = true;
        } else if opt.eq_ignore_ascii_case(b"keepttl")
            && !o.persist
            && kind(&o).is_none()
            && for_set
        {
            o.keep_ttl = true;
        } else if opt.eq_ignore_ascii_case(b"persist")
            && !for_set
            && kind(&o).is_none()
            && !o.keep_ttl
        {
            o.persist = true;
        } else if let Some(k) = [
            (&b"ex"[..], ExpireKind::Ex),
            (b"px", ExpireKind::Px),
            (b"exat", ExpireKind::ExAt),
            (b"pxat", ExpireKind::PxAt),
        ]
        .iter()
        .find(|(name, _)| opt.eq_ignore_ascii_case(name))
        .map(|&(_, k)| k)
        .filter(|&k| !other_expire(&o, k) && has_next)
        {
            o.expire = Some((k, j + 1));
            j += 1;
        } else {
            return None;
        }
        j += 1;
    }
    Some(o)
}

/// Redis's `getExpireMillisecondsOrReply`: the absolute expiry in unix ms,
/// or the error to reply. Like Redis, a non-positive value and any overflow
/// (seconds to ms, or adding the current time) are invalid expire times.
fn expire_at_ms(ctx: &Ctx, arg: &[u8], kind: ExpireKind) -> Result<u64, String> {
    let invalid = || format!("ERR invalid expire time in '{}' command", ctx.spec.name);
    let v = parse_i64_strict(arg).ok_or_else(|| NOT_AN_INTEGER.to_string())?;
    if v <= 0 || (kind.in_seconds() && v > i64::MAX / 1000) {
        return Err(invalid());
    }
    let mut ms = if kind.in_seconds() { v * 1000 } else { v };
    if kind.relative() {
        // In C the sum wraps negative and fails the `<= 0` check.
        ms = i64::try_from(ctx.now_ms())
            .ok()
            .and_then(|now| ms.checked_add(now))
            .ok_or_else(invalid)?;
    }
    debug_assert!(ms > 0);
    Ok(ms as u64)
}

/// A fixed reply of the SET family.
#[derive(Clone, Copy, Debug)]
enum SetReply {
    Ok,
    Null,
    Int(i64),
}

fn send(ctx: &mut Ctx, reply: SetReply) {
    match reply {
        SetReply::Ok => ctx.ok(),
        SetReply::Null => ctx.null(),
        SetReply::Int(n) => ctx.int(n),
    }
}

/// Redis's `setGenericCommand`, shared by SET, SETNX, SETEX and PSETEX.
/// `ok` is the reply on success, `abort` when NX/XX prevent the write; with
/// GET the reply is the old value instead of either.
fn set_generic(
    ctx: &mut Ctx,
    args: &mut [Vec<u8>],
    value_index: usize,
    opts: ExtendedOptions,
    ok: SetReply,
    abort: SetReply,
) {
    let when_ms = match opts.expire {
        None => None,
        Some((kind, i)) => match expire_at_ms(ctx, &args[i], kind) {
            Ok(ms) => Some(ms),
            Err(e) => return ctx.error(&e),
        },
    };
    let key = &args[1];
    if opts.get && get_generic(ctx, key).is_err() {
        return;
    }
    let found = if opts.nx || opts.xx {
        ctx.exists(key)
    } else {
        // Whether it exists changes nothing for a plain SET.
        ctx.expire_before_overwrite(key);
        false
    };
    if (opts.nx && found) || (opts.xx && !found) {
        if !opts.get {
            send(ctx, abort);
        }
        return;
    }
    if let Some(ms) = when_ms {
        // Replays as `SET key value PXAT <ms>` whatever the form: the
        // time absolute, the conditions dropped (they held).
        let ms_text = ms.to_string();
        let argv: [&[u8]; 5] = [
            b"SET",
            &args[1],
            &args[value_index],
            b"PXAT",
            ms_text.as_bytes(),
        ];
        ctx.propagate(&argv);
    }
    let value = Value::Str(RString::from_arg(&mut args[value_index]));
    let key = &args[1];
    let Some(value) = crate::planted::tracked_store(ctx, key, value, opts.keep_ttl) else {
        if !opts.get {
            send(ctx, ok);
        }
        return;
    };
    ctx.store(key, value, opts.keep_ttl);
    if let Some(ms) = when_ms {
        // A time already past is stored as is, as Redis 7.0 does: the key
        // stays until lazy or active expiry removes it (and counts it).
        let db = ctx.db_index();
        ctx.set_expire_in(db, key, ms);
    }
    notify(ctx, class::STRING, "set", key);
    if when_ms.is_some() {
        notify(ctx, class::GENERIC, "expire", key);
    }
    if !opts.get {
        send(ctx, ok);
    }
}

fn get(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let _ = get_generic(ctx, &args[1]);
}

fn set(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let Some(opts) = parse_extended_options(args, 3, true) else {
        return ctx.error(SYNTAX_ERROR);
    };
    set_generic(ctx, args, 2, opts, SetReply::Ok, SetReply::Null);
}

fn setnx(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let opts = ExtendedOptions {
        nx: true,
        ..ExtendedOptions::default()
    };
    set_generic(ctx, args, 2, opts, SetReply::Int(1), SetReply::Int(0));
}

fn setex(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let opts = ExtendedOptions {
        expire: Some((ExpireKind::Ex, 2)),
        ..ExtendedOptions::default()
    };
    set_generic(ctx, args, 3, opts, SetReply::Ok, SetReply::Null);
}

fn psetex(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let opts = ExtendedOptions {
        expire: Some((ExpireKind::Px, 2)),
        ..ExtendedOptions::default()
    };
    set_generic(ctx, args, 3, opts, SetReply::Ok, SetReply::Null);
}
