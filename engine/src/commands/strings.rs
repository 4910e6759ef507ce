//! String commands: GET SET SETNX SETEX PSETEX MGET MSET MSETNX GETSET
//! GETDEL GETEX APPEND STRLEN GETRANGE SUBSTR SETRANGE INCR DECR INCRBY
//! DECRBY INCRBYFLOAT LCS, with Redis 7.0's replies and error messages
//! (t_string.c), including the order in which errors are detected.

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::planted::PlantedBug;
use crate::util::parse_i64_strict;
use crate::value::{RString, Value, WRONGTYPE};

/// INCRBYFLOAT's x87 `long double` arithmetic.
#[path = "string_util.rs"]
pub(crate) mod string_util;

const SYNTAX_ERROR: &str = "ERR syntax error";
const NOT_AN_INTEGER: &str = "ERR value is not an integer or out of range";
const INCR_OVERFLOW: &str = "ERR increment or decrement would overflow";
const TOO_LONG: &str = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";

/// Bytes copied (APPEND, SETRANGE) per unit of work.
const BYTES_PER_WORK_UNIT: u64 = 64;
/// LCS table cells per unit of work: a cell is a compare and a max, about a
/// sixteenth of the cost of visiting a key.
const LCS_CELLS_PER_WORK_UNIT: u64 = 16;

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

const GETRANGE_COMPLEXITY: &str = "O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings.";

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
    CommandSpec {
        name: "mget",
        arity: -2,
        flags: READONLY | FAST,
        last_key: -1,
        acl_categories: READ_FAST,
        summary: "Get the values of all the given keys",
        complexity: "O(N) where N is the number of keys to retrieve.",
        handler: Some(mget),
        ..STRING
    },
    CommandSpec {
        name: "mset",
        arity: -3,
        flags: WRITE | DENYOOM,
        last_key: -1,
        key_step: 2,
        acl_categories: WRITE_SLOW,
        summary: "Set multiple keys to multiple values",
        since: "1.0.1",
        complexity: "O(N) where N is the number of keys to set.",
        handler: Some(mset),
        ..STRING
    },
    CommandSpec {
        name: "msetnx",
        arity: -3,
        flags: WRITE | DENYOOM,
        last_key: -1,
        key_step: 2,
        acl_categories: WRITE_SLOW,
        summary: "Set multiple keys to multiple values, only if none of the keys exist",
        since: "1.0.1",
        complexity: "O(N) where N is the number of keys to set.",
        handler: Some(msetnx),
        ..STRING
    },
    CommandSpec {
        name: "getset",
        arity: 3,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Set the string value of a key and return its old value",
        handler: Some(getset),
        ..STRING
    },
    CommandSpec {
        name: "getdel",
        arity: 2,
        flags: WRITE | FAST,
        acl_categories: WRITE_FAST,
        summary: "Get the value of a key and delete the key",
        since: "6.2.0",
        handler: Some(getdel),
        ..STRING
    },
    CommandSpec {
        name: "getex",
        arity: -2,
        flags: WRITE | FAST,
        acl_categories: WRITE_FAST,
        summary: "Get the value of a key and optionally set its expiration",
        since: "6.2.0",
        handler: Some(getex),
        ..STRING
    },
    CommandSpec {
        name: "append",
        arity: 3,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Append a value to a key",
        since: "2.0.0",
        complexity: "O(1). The amortized time complexity is O(1) assuming the appended value is small and the already present value is of any size, since the dynamic string library used by Redis will double the free space available on every reallocation.",
        handler: Some(append),
        ..STRING
    },
    CommandSpec {
        name: "strlen",
        arity: 2,
        flags: READONLY | FAST,
        acl_categories: READ_FAST,
        summary: "Get the length of the value stored in a key",
        since: "2.2.0",
        handler: Some(strlen),
        ..STRING
    },
    CommandSpec {
        name: "getrange",
        arity: 4,
        flags: READONLY,
        acl_categories: READ_SLOW,
        summary: "Get a substring of the string stored at a key",
        since: "2.4.0",
        complexity: GETRANGE_COMPLEXITY,
        handler: Some(getrange),
        ..STRING
    },
    CommandSpec {
        name: "substr",
        arity: 4,
        flags: READONLY,
        acl_categories: READ_SLOW,
        summary: "Get a substring of the string stored at a key",
        since: "1.0.0",
        complexity: GETRANGE_COMPLEXITY,
        handler: Some(getrange),
        ..STRING
    },
    CommandSpec {
        name: "setrange",
        arity: 4,
        flags: WRITE | DENYOOM,
        acl_categories: WRITE_SLOW,
        summary: "Overwrite part of a string at key starting at the specified offset",
        since: "2.2.0",
        complexity: "O(1), not counting the time taken to copy the new string in place. Usually, this string is very small so the amortized complexity is O(1). Otherwise, complexity is O(M) with M being the length of the value argument.",
        handler: Some(setrange),
        ..STRING
    },
    CommandSpec {
        name: "incr",
        arity: 2,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Increment the integer value of a key by one",
        handler: Some(incr),
        ..STRING
    },
    CommandSpec {
        name: "decr",
        arity: 2,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Decrement the integer value of a key by one",
        handler: Some(decr),
        ..STRING
    },
    CommandSpec {
        name: "incrby",
        arity: 3,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Increment the integer value of a key by the given amount",
        handler: Some(incrby),
        ..STRING
    },
    CommandSpec {
        name: "decrby",
        arity: 3,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Decrement the integer value of a key by the given number",
        handler: Some(decrby),
        ..STRING
    },
    CommandSpec {
        name: "incrbyfloat",
        arity: 3,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Increment the float value of a key by the given amount",
        since: "2.6.0",
        handler: Some(incrbyfloat),
        ..STRING
    },
    CommandSpec {
        name: "lcs",
        arity: -3,
        // O_N: the table is quadratic in the inputs (up to proto-max-bulk-len bytes).
        flags: READONLY | O_N,
        last_key: 2,
        acl_categories: READ_SLOW,
        summary: "Find longest common substring",
        since: "7.0.0",
        complexity: "O(N*M) where N and M are the lengths of s1 and s2, respectively",
        handler: Some(lcs),
        ..STRING
    },
];

/// The key holds a value of another type (the reply is `WRONGTYPE`).
struct WrongType;

/// The string at `key` after lazy expiry: `Ok(None)` when the key is missing.
fn string_at<'c>(ctx: &'c mut Ctx, key: &[u8]) -> Result<Option<&'c mut RString>, WrongType> {
    match ctx.lookup(key) {
        None => Ok(None),
        Some(Value::Str(s)) => Ok(Some(s)),
        #[allow(unreachable_patterns)]
        Some(_) => Err(WrongType),
    }
}

/// Redis's `getGenericCommand`: replies with the string at `key` (or null,
/// or WRONGTYPE, which is the `Err`).
fn get_generic(ctx: &mut Ctx, key: &[u8]) -> Result<(), WrongType> {
    let (value, mut w) = ctx.lookup_and_writer(key);
    match value {
        None => w.null(),
        Some(Value::Str(s)) => w.bulk(&s.bytes),
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
    let found = ctx.exists(key);
    if (opts.nx && found) || (opts.xx && !found) {
        if !opts.get {
            send(ctx, abort);
        }
        return;
    }
    let value = std::mem::take(&mut args[value_index]);
    let key = &args[1];
    ctx.store(key, Value::Str(RString::new(value)), opts.keep_ttl);
    if let Some(ms) = when_ms {
        // A time already past is stored as is, as Redis 7.0 does: the key
        // stays until lazy or active expiry removes it (and counts it).
        ctx.db().set_expire(key, ms);
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

fn mget(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    ctx.w().array_len(args.len() - 1);
    for key in &args[1..] {
        // Like Redis, a key of another type reads as null, not WRONGTYPE.
        let (value, mut w) = ctx.lookup_and_writer(key);
        match value {
            Some(Value::Str(s)) => w.bulk(&s.bytes),
            #[allow(unreachable_patterns)]
            _ => w.null(),
        }
        ctx.work(1);
    }
}

/// MSET and MSETNX. Every pair is stored with its TTL cleared; a key given
/// twice ends with its last value.
fn mset_generic(ctx: &mut Ctx, args: &mut [Vec<u8>], nx: bool) {
    // The name and then key/value pairs: an odd count.
    if args.len() % 2 != 1 {
        let msg = format!(
            "ERR wrong number of arguments for '{}' command",
            ctx.spec.name
        );
        return ctx.error(&msg);
    }
    if nx {
        for key in args[1..].iter().step_by(2) {
            ctx.work(1);
            if ctx.exists(key) {
                return ctx.int(0);
            }
        }
    }
    for pair in args[1..].chunks_exact_mut(2) {
        let value = std::mem::take(&mut pair[1]);
        ctx.store(&pair[0], Value::Str(RString::new(value)), false);
        ctx.work(1);
    }
    if nx {
        ctx.int(1);
    } else {
        ctx.ok();
    }
}

fn mset(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    mset_generic(ctx, args, false);
}

fn msetnx(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    mset_generic(ctx, args, true);
}

fn getset(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if get_generic(ctx, &args[1]).is_err() {
        return;
    }
    let value = std::mem::take(&mut args[2]);
    ctx.store(&args[1], Value::Str(RString::new(value)), false);
}

fn getdel(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if get_generic(ctx, &args[1]).is_err() {
        return;
    }
    let lazy = ctx.server.config.lazyfree_lazy_user_del;
    ctx.delete(&args[1], lazy);
}

fn getex(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let Some(opts) = parse_extended_options(args, 2, false) else {
        return ctx.error(SYNTAX_ERROR);
    };
    let key = &args[1];
    // A missing key is null even when the expire argument is invalid.
    match string_at(ctx, key) {
        Ok(None) => return ctx.null(),
        Err(WrongType) => return ctx.error(WRONGTYPE),
        Ok(Some(_)) => {}
    }
    let when_ms = match opts.expire {
        None => None,
        Some((kind, i)) => match expire_at_ms(ctx, &args[i], kind) {
            Ok(ms) => Some((kind, ms)),
            Err(e) => return ctx.error(&e),
        },
    };
    let _ = get_generic(ctx, key);
    if let Some((kind, ms)) = when_ms {
        if !kind.relative() && ms <= ctx.now_ms() {
            // An absolute time already past deletes the key after replying
            // (and, unlike expiry, is not counted in `expired_keys`).
            let lazy = ctx.server.config.lazyfree_lazy_expire;
            ctx.delete(key, lazy);
        } else {
            ctx.db().set_expire(key, ms);
            ctx.server.dirty += 1;
        }
    } else if opts.persist && ctx.db().persist(key) {
        ctx.server.dirty += 1;
    }
}

fn append(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let suffix = std::mem::take(&mut args[2]);
    let key = &args[1];
    let limit = ctx.server.config.proto_max_bulk_len_bytes as u128;
    let bytes = match string_at(ctx, key) {
        Err(WrongType) => return ctx.error(WRONGTYPE),
        Ok(None) => {
            // A new key takes the argument as it is (not raw-encoded).
            let len = suffix.len();
            ctx.store(key, Value::Str(RString::new(suffix)), false);
            return ctx.int(len as i64);
        }
        Ok(Some(s)) => {
            if s.bytes.len() as u128 + suffix.len() as u128 > limit {
                return ctx.error(TOO_LONG);
            }
            let mut bytes = std::mem::take(&mut s.bytes);
            bytes.extend_from_slice(&suffix);
            bytes
        }
    };
    ctx.work(suffix.len() as u64 / BYTES_PER_WORK_UNIT);
    let len = bytes.len();
    // Storing (rather than editing in place) keeps every write on one path.
    ctx.store(key, Value::Str(RString { bytes, raw: true }), true);
    ctx.int(len as i64);
}

fn strlen(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match string_at(ctx, &args[1]) {
        Err(WrongType) => ctx.error(WRONGTYPE),
        Ok(s) => {
            let len = s.map_or(0, |s| s.bytes.len());
            ctx.int(len as i64);
        }
    }
}

/// GETRANGE and SUBSTR, with Redis's index arithmetic (`getrangeCommand`).
fn getrange(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let (Some(start), Some(end)) = (parse_i64_strict(&args[2]), parse_i64_strict(&args[3])) else {
        return ctx.error(NOT_AN_INTEGER);
    };
    let (value, mut w) = ctx.lookup_and_writer(&args[1]);
    let s = match value {
        None => return w.bulk(b""),
        Some(Value::Str(s)) => &s.bytes,
        #[allow(unreachable_patterns)]
        Some(_) => return w.error(WRONGTYPE),
    };
    match byte_range(s.len(), start, end) {
        Some((from, to)) => w.bulk(&s[from..=to]),
        None => w.bulk(b""),
    }
}

/// The inclusive byte range GETRANGE returns for a string of `len` bytes,
/// computed as Redis does (negative indexes count from the end, then both
/// are clamped), or None for an empty reply.
fn byte_range(len: usize, start: i64, end: i64) -> Option<(usize, usize)> {
    let len = len as i64;
    if start < 0 && end < 0 && start > end {
        return None;
    }
    // Redis adds a size_t and a long long: the sum wraps rather than traps.
    let start = if start < 0 {
        len.wrapping_add(start)
    } else {
        start
    }
    .max(0);
    let end = if end < 0 { len.wrapping_add(end) } else { end }.max(0);
    let end = end.min(len - 1);
    if start > end || len == 0 {
        None
    } else {
        Some((start as usize, end as usize))
    }
}

fn setrange(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let Some(offset) = parse_i64_strict(&args[2]) else {
        return ctx.error(NOT_AN_INTEGER);
    };
    if offset < 0 {
        return ctx.error("ERR offset is out of range");
    }
    let patch = std::mem::take(&mut args[3]);
    let key = &args[1];
    let new_len = offset as u128 + patch.len() as u128;
    let limit = ctx.server.config.proto_max_bulk_len_bytes as u128;
    let mut bytes = match string_at(ctx, key) {
        Err(WrongType) => return ctx.error(WRONGTYPE),
        // Setting nothing on a missing key creates nothing.
        Ok(None) if patch.is_empty() => return ctx.int(0),
        Ok(Some(s)) if patch.is_empty() => {
            let len = s.bytes.len();
            return ctx.int(len as i64);
        }
        _ if new_len > limit => return ctx.error(TOO_LONG),
        Ok(None) => Vec::new(),
        Ok(Some(s)) => std::mem::take(&mut s.bytes),
    };
    let offset = offset as usize;
    let end = offset + patch.len();
    let grown = end.saturating_sub(bytes.len());
    if bytes.len() < end {
        bytes.resize(end, 0);
    }
    bytes[offset..end].copy_from_slice(&patch);
    ctx.work((grown + patch.len()) as u64 / BYTES_PER_WORK_UNIT);
    let len = bytes.len();
    ctx.store(key, Value::Str(RString { bytes, raw: true }), true);
    ctx.int(len as i64);
}

/// INCR, DECR, INCRBY, DECRBY: the stored integer plus `delta`. The key keeps
/// its TTL; a missing key counts as 0.
fn incr_decr(ctx: &mut Ctx, key: &[u8], delta: i64) {
    let current = match string_at(ctx, key) {
        Err(WrongType) => return ctx.error(WRONGTYPE),
        Ok(None) => 0,
        Ok(Some(s)) => match parse_i64_strict(&s.bytes) {
            Some(v) => v,
            None => return ctx.error(NOT_AN_INTEGER),
        },
    };
    let Some(next) = current.checked_add(delta) else {
        return ctx.error(INCR_OVERFLOW);
    };
    let text = next.to_string().into_bytes();
    if ctx.server.config.planted_bug == Some(PlantedBug::IncrNotAtomic) {
        // Planted bug (PlantedBug::IncrNotAtomic): the read-modify-write is
        // split in two: the reply goes out now, the write-back only after
        // the engine's next input (`Engine::apply_deferred_incr_writes`).
        // INCRs in between read the stale value and their updates are lost.
        let db = ctx.db_index();
        ctx.server
            .planted
            .incr_writes
            .push((db, key.to_vec(), text));
        return ctx.int(next);
    }
    ctx.store(key, Value::Str(RString::new(text)), true);
    ctx.int(next);
}

fn incr(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    incr_decr(ctx, &args[1], 1);
}

fn decr(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    incr_decr(ctx, &args[1], -1);
}

fn incrby(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match parse_i64_strict(&args[2]) {
        Some(delta) => incr_decr(ctx, &args[1], delta),
        None => ctx.error(NOT_AN_INTEGER),
    }
}

fn decrby(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match parse_i64_strict(&args[2]) {
        None => ctx.error(NOT_AN_INTEGER),
        Some(i64::MIN) => ctx.error("ERR decrement would overflow"),
        Some(delta) => incr_decr(ctx, &args[1], -delta),
    }
}

fn incrbyfloat(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let key = &args[1];
    let result = match string_at(ctx, key) {
        Err(WrongType) => return ctx.error(WRONGTYPE),
        Ok(current) => string_util::incr_by_float(current.map(|s| s.bytes.as_slice()), &args[2]),
    };
    match result {
        Ok(text) => {
            ctx.store(
                key,
                Value::Str(RString::new(text.clone().into_bytes())),
                true,
            );
            ctx.bulk(text.as_bytes());
        }
        Err(e) => ctx.error(e),
    }
}

/// LCS options.
#[derive(Clone, Copy, Debug, Default)]
struct LcsOptions {
    idx: bool,
    len: bool,
    with_match_len: bool,
    min_match_len: u64,
}

/// One matched range: `(a_start, a_end)`, `(b_start, b_end)`, inclusive.
type LcsMatch = ((u32, u32), (u32, u32));

fn lcs(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    // The type check comes before the options, as in Redis.
    let mut strings: [Vec<u8>; 2] = Default::default();
    for (slot, key) in strings.iter_mut().zip(&args[1..3]) {
        match string_at(ctx, key) {
            Err(WrongType) => {
                return ctx.error("ERR The specified keys must contain string values")
            }
            Ok(s) => *slot = s.map(|s| s.bytes.clone()).unwrap_or_default(),
        }
    }
    let [a, b] = strings;
    let mut opts = LcsOptions::default();
    let mut j = 3;
    while j < args.len() {
        let opt = c_str(&args[j]);
        let more = j + 1 < args.len();
        if opt.eq_ignore_ascii_case(b"idx") {
            opts.idx = true;
        } else if opt.eq_ignore_ascii_case(b"len") {
            opts.len = true;
        } else if opt.eq_ignore_ascii_case(b"withmatchlen") {
            opts.with_match_len = true;
        } else if opt.eq_ignore_ascii_case(b"minmatchlen") && more {
            let Some(v) = parse_i64_strict(&args[j + 1]) else {
                return ctx.error(NOT_AN_INTEGER);
            };
            opts.min_match_len = v.max(0) as u64;
            j += 1;
        } else {
            return ctx.error(SYNTAX_ERROR);
        }
        j += 1;
    }
    if opts.idx && opts.len {
        return ctx.error("ERR If you want both the length and indexes, please just use IDX.");
    }
    if a.len() as u64 >= u32::MAX as u64 - 1 || b.len() as u64 >= u32::MAX as u64 - 1 {
        return ctx.error("ERR String too long for LCS");
    }
    let cells = (a.len() as u64 + 1) * (b.len() as u64 + 1);
    if cells * 4 > ctx.server.config.proto_max_bulk_len_bytes as u64 {
        return ctx
            .error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
    }
    ctx.work(cells / LCS_CELLS_PER_WORK_UNIT);
    let table = LcsTable::build(&a, &b);
    let (common, matches) = table.walk(&a, &b, opts);
    let mut w = ctx.w();
    if opts.idx {
        w.map_len(2);
        w.bulk_str("matches");
        w.array_len(matches.len());
        for ((a_start, a_end), (b_start, b_end)) in matches {
            w.array_len(2 + opts.with_match_len as usize);
            w.array_len(2);
            w.int(a_start as i64);
            w.int(a_end as i64);
            w.array_len(2);
            w.int(b_start as i64);
            w.int(b_end as i64);
            if opts.with_match_len {
                w.int((a_end - a_start + 1) as i64);
            }
        }
        w.bulk_str("len");
        w.int(table.at(a.len(), b.len()) as i64);
    } else if opts.len {
        w.int(table.at(a.len(), b.len()) as i64);
    } else {
        w.bulk(&common);
    }
}

/// The dynamic-programming table of LCS lengths: cell (i, j) holds the LCS
/// length of `a[..i]` and `b[..j]`.
struct LcsTable {
    cells: Vec<u32>,
    width: usize,
}

impl LcsTable {
    fn build(a: &[u8], b: &[u8]) -> LcsTable {
        let width = b.len() + 1;
        let mut cells = vec![0u32; (a.len() + 1) * width];
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                cells[i * width + j] = if a[i - 1] == b[j - 1] {
                    cells[(i - 1) * width + j - 1] + 1
                } else {
                    cells[(i - 1) * width + j].max(cells[i * width + j - 1])
                };
            }
        }
        LcsTable { cells, width }
    }

    fn at(&self, i: usize, j: usize) -> u32 {
        self.cells[i * self.width + j]
    }

    /// Walks back from the end as Redis does, producing the common
    /// subsequence and the matched ranges (last ones first) that are at
    /// least `min_match_len` long.
    fn walk(&self, a: &[u8], b: &[u8], opts: LcsOptions) -> (Vec<u8>, Vec<LcsMatch>) {
        let total = self.at(a.len(), b.len()) as usize;
        let mut common = vec![0u8; total];
        let mut matches = Vec::new();
        let compute = opts.idx || !opts.len;
        let (mut i, mut j, mut idx) = (a.len(), b.len(), total);
        // The range being grown backwards: (a_start, a_end, b_start, b_end).
        let mut range: Option<(usize, usize, usize, usize)> = None;
        while compute && i > 0 && j > 0 {
            let mut emit = false;
            if a[i - 1] == b[j - 1] {
                common[idx - 1] = a[i - 1];
                match &mut range {
                    None => range = Some((i - 1, i - 1, j - 1, j - 1)),
                    Some((a_start, _, b_start, _)) if *a_start == i && *b_start == j => {
                        *a_start -= 1;
                        *b_start -= 1;
                    }
                    Some(_) => emit = true,
                }
                if range.is_some_and(|(a_start, _, b_start, _)| a_start == 0 || b_start == 0) {
                    emit = true;
                }
                idx -= 1;
                i -= 1;
                j -= 1;
            } else {
                if self.at(i - 1, j) > self.at(i, j - 1) {
                    i -= 1;
                } else {
                    j -= 1;
                }
                emit = range.is_some();
            }
            if emit {
                if let Some((a_start, a_end, b_start, b_end)) = range.take() {
                    let len = (a_end - a_start + 1) as u64;
                    if opts.idx && (opts.min_match_len == 0 || len >= opts.min_match_len) {
                        matches.push((
                            (a_start as u32, a_end as u32),
                            (b_start as u32, b_end as u32),
                        ));
                    }
                }
            }
        }
        (common, matches)
    }
}

#[cfg(test)]
mod tests {
    use super::COMMANDS;
    use crate::cmd::flags::*;
    use crate::resp::Frame;
    use crate::testing::{bulk, err, int, simple, TestEngine, UNIX_ORIGIN_US};
    use crate::value::RString;
    use crate::{ClientId, Config};

    const NOW_MS: u64 = UNIX_ORIGIN_US / 1000;
    const SYNTAX: &str = "ERR syntax error";
    const NOT_INT: &str = "ERR value is not an integer or out of range";
    const NOT_FLOAT: &str = "ERR value is not a valid float";

    fn setup() -> (TestEngine, ClientId) {
        let mut t = TestEngine::new();
        let c = t.connect();
        (t, c)
    }

    fn ok() -> Frame {
        simple("OK")
    }

    fn nil() -> Frame {
        Frame::Null
    }

    fn arr(items: Vec<Frame>) -> Frame {
        Frame::Array(items)
    }

    /// The stored string, read straight from the keyspace (no lazy expiry).
    fn stored(t: &TestEngine, key: &str) -> Option<RString> {
        let v = t.engine.server().keyspace.dbs[0].get(key.as_bytes())?;
        Some(v.as_str().expect("a string").clone())
    }

    fn expire_of(t: &TestEngine, key: &str) -> Option<u64> {
        t.engine.server().keyspace.dbs[0].get_expire(key.as_bytes())
    }

    #[test]
    fn get_and_set() {
        let (mut t, c) = setup();
        assert_eq!(t.cmd(c, &["GET", "k"]), nil());
        assert_eq!(t.cmd(c, &["SET", "k", "v"]), ok());
        assert_eq!(t.cmd(c, &["get", "k"]), bulk("v"));
        assert_eq!(t.cmd(c, &["SET", "k", ""]), ok());
        assert_eq!(t.cmd(c, &["GET", "k"]), bulk(""));
        assert_eq!(
            t.cmd(c, &["GET"]),
            err("ERR wrong number of arguments for 'get' command")
        );
        assert_eq!(
            t.cmd(c, &["SET", "k"]),
            err("ERR wrong number of arguments for 'set' command")
        );
        let binary: &[u8] = b"a\0b\r\nc";
        assert_eq!(t.cmd_bytes(c, &[b"SET", b"bin", binary]), ok());
        assert_eq!(t.cmd(c, &["GET", "bin"]), Frame::Bulk(binary.to_vec()));
    }

    #[test]
    fn set_nx_xx_get() {
        let (mut t, c) = setup();
        assert_eq!(t.cmd(c, &["SET", "k", "1", "XX"]), nil());
        assert_eq!(t.cmd(c, &["SET", "k", "1", "nx"]), ok());
        assert_eq!(t.cmd(c, &["SET", "k", "2", "NX"]), nil());
        assert_eq!(t.cmd(c, &["SET", "k", "3", "XX"]), ok());
        assert_eq!(t.cmd(c, &["GET", "k"]), bulk("3"));
        assert_eq!(t.cmd(c, &["SET", "k", "4", "GET"]), bulk("3"));
        assert_eq!(t.cmd(c, &["SET", "new", "x", "GET"]), nil());
        assert_eq!(t.cmd(c, &["GET", "new"]), bulk("x"));
        // NX with GET: the old value comes back and nothing is written.
        assert_eq!(t.cmd(c, &["SET", "k", "5", "NX", "GET"]), bulk("4"));
        assert_eq!(t.cmd(c, &["GET", "k"]), bulk("4"));
        assert_eq!(t.cmd(c, &["SET", "missing", "5", "XX", "GET"]), nil());
        assert_eq!(t.cmd(c, &["GET", "missing"]), nil());
        // Repeated options are fine.
        assert_eq!(t.cmd(c, &["SET", "k", "6", "NX", "NX"]), nil());
        assert_eq!(t.cmd(c, &["SET", "k", "6", "GET", "GET"]), bulk("4"));
    }

    #[test]
    fn set_option_conflicts_are_syntax_errors() {
        let (mut t, c) = setup();
        for opts in [
            &["NX", "XX"][..],
            &["XX", "NX"],
            &["EX", "10", "PX", "10"],
            &["PX", "10", "EX", "10"],
            &["EX", "10", "EXAT", "10"],
            &["PXAT", "10", "PX", "10"],
            &["EX", "10", "KEEPTTL"],
            &["KEEPTTL", "EX", "10"],
            &["KEEPTTL", "PXAT", "10"],
            &["EX"],
            &["PX"],
            &["PERSIST"],
            &["FOO"],
            &["NXX"],
            &["E"],
        ] {
            let mut args = vec!["SET", "k", "v"];
            args.extend_from_slice(opts);
            assert_eq!(t.cmd(c, &args), err(SYNTAX), "{opts:?}");
        }
        assert_eq!(t.cmd(c, &["GET", "k"]), nil());
        // Options are C strings to Redis: an embedded NUL ends them.
        assert_eq!(t.cmd_bytes(c, &[b"SET", b"k", b"v", b"nx\0junk"]), ok());
    }

    #[test]
    fn set_expire_options() {
        let (mut t, c) = setup();
        assert_eq!(t.cmd(c, &["SET", "k", "v", "EX", "10"]), ok());
        assert_eq!(expire_of(&t, "k"), Some(NOW_MS + 10_000));
        assert_eq!(t.cmd(c, &["SET", "k", "v", "px", "1500"]), ok());
        assert_eq!(expire_of(&t, "k"), Some(NOW_MS + 1500));
        assert_eq!(t.cmd(c, &["SET", "k", "v", "EXAT", "1800000000"]), ok());
        assert_eq!(expire_of(&t, "k"), Some(1_800_000_000_000));
        assert_eq!(t.cmd(c, &["SET", "k", "v", "PXAT", "1800000000123"]), ok());
        assert_eq!(expire_of(&t, "k"), Some(1_800_000_000_123));
        // The last of a repeated option wins.
        assert_eq!(t.cmd(c, &["SET", "k", "v", "EX", "10", "EX", "20"]), ok());
        assert_eq!(expire_of(&t, "k"), Some(NOW_MS + 20_000));
        assert_eq!(t.cmd(c, &["SET", "k", "w", "KEEPTTL"]), ok());
        assert_eq!(expire_of(&t, "k"), Some(NOW_MS + 20_000));
        assert_eq!(t.cmd(c, &["SET", "k", "x"]), ok());
        assert_eq!(expire_of(&t, "k"), None);
        // The key disappears once its time comes.
        assert_eq!(t.cmd(c, &["SET", "k", "v", "PX", "100"]), ok());
        t.advance_ms(99);
        assert_eq!(t.cmd(c, &["GET", "k"]), bulk("v"));
        t.advance_ms(1);
        assert_eq!(t.cmd(c, &["GET", "k"]), nil());
    }

    #[test]
    fn set_expire_errors() {
        let (mut t, c) = setup();
        let invalid = err("ERR invalid expire time in 'set' command");
        for (opt, v) in [
            ("EX", "0"),
            ("EX", "-1"),
            ("PX", "0"),
            ("EXAT", "0"),
            ("PXAT", "-5"),
            ("EX", "9999999999999999"),
            ("EX", "9223372036854776"),
            ("PX", "9223372036854775807"),
            ("EXAT", "9223372036854776"),
        ] {
            assert_eq!(t.cmd(c, &["SET", "k", "v", opt, v]), invalid, "{opt} {v}");
        }
        for v in ["abc", "1.5", " 1", "01", "9223372036854775808", ""] {
            assert_eq!(t.cmd(c, &["SET", "k", "v", "EX", v]), err(NOT_INT), "{v:?}");
        }
        assert_eq!(t.cmd(c, &["GET", "k"]), nil());
        // The largest absolute times are valid.
        assert_eq!(
            t.cmd(c, &["SET", "k", "v", "EXAT", "9223372036854775"]),
            ok()
        );
        assert_eq!(expire_of(&t, "k"), Some(9_223_372_036_854_775_000));
        assert_eq!(
            t.cmd(c, &["SET", "k", "v", "PXAT", "9223372036854775807"]),
            ok()
        );
        // An expire error comes before GET's reply.
        assert_eq!(t.cmd(c, &["SET", "k", "v", "GET", "EX", "0"]), invalid);
    }

    #[test]
    fn set_with_a_past_time_keeps_the_key_until_expiry() {
        let (mut t, c) = setup();
        assert_eq!(t.cmd(c, &["SET", "k", "v", "PXAT", "1"]), ok());
        // Like Redis 7.0, the key is stored with its past deadline and is
        // removed (and counted as expired) on the next access.
        assert_eq!(expire_of(&t, "k"), Some(1));
        assert_eq!(t.cmd(c, &["GET", "k"]), nil());
        assert!(stored(&t, "k").is_none());
        assert_eq!(t.engine.server().keyspace.expired_keys, 1);
    }

    #[test]
    fn setnx_setex_psetex() {
        let (mut t, c) = setup();
        assert_eq!(t.cmd(c, &["SETNX", "k", "1"]), int(1));
        assert_eq!(t.cmd(c, &["SETNX", "k", "2"]), int(0));
        assert_eq!(t.cmd(c, &["GET", "k"]), bulk("1"));
        assert_eq!(t.cmd(c, &["SETEX", "k", "10", "v"]), ok());
        assert_eq!(t.cmd(c, &["GET", "k"]), bulk("v"));
        assert_eq!(expire_of(&t, "k"), Some(NOW_MS + 10_000));
        assert_eq!(t.cmd(c, &["PSETEX", "k", "10", "w"]), ok());
        assert_eq!(expire_of(&t, "k"), Some(NOW_MS + 10));
        assert_eq!(
            t.cmd(c, &["SETEX", "k", "0", "v"]),
            err("ERR invalid expire time in 'setex' command")
        );
        assert_eq!(
            t.cmd(c, &["PSETEX", "k", "-5", "v"]),
            err("ERR invalid expire time in 'psetex' command")
        );
        assert_eq!(
            t.cmd(c, &["SETEX", "k", "9223372036854775", "v"]),
            err("ERR invalid expire time in 'setex' command")
        );
        assert_eq!(t.cmd(c, &["SETEX", "k", "abc", "v"]), err(NOT_INT));
        assert_eq!(t.cmd(c, &["GET", "k"]), bulk("w"));
        t.advance_ms(10);
        assert_eq!(t.cmd(c, &["GET", "k"]), nil());
        assert_eq!(
            t.cmd(c, &["SETEX", "k", "10"]),
            err("ERR wrong number of arguments for 'setex' command")
        );
    }

    #[test]
    fn mget_mset_msetnx() {
        let (mut t, c) = setup();
        assert_eq!(t.cmd(c, &["MSET", "a", "1", "b", "2", "a", "3"]), ok());
        assert_eq!(
            t.cmd(c, &["MGET", "a", "b", "c"]),
            arr(vec![bulk("3"), bulk("2"), nil()])
        );
        assert_eq!(
            t.cmd(c, &["MSET", "a"]),
            err("ERR wrong number of arguments for 'mset' command")
        );
        assert_eq!(
            t.cmd(c, &["MSET", "a", "1", "b"]),
            err("ERR wrong number of arguments for 'mset' command")
        );
        assert_eq!(
            t.cmd(c, &["MSETNX", "x", "1", "y"]),
            err("ERR wrong number of arguments for 'msetnx' command")
        );
        assert_eq!(t.cmd(c, &["MSETNX", "b", "9", "c", "9"]), int(0));
        assert_eq!(t.cmd(c, &["GET", "c"]), nil());
        assert_eq!(t.cmd(c, &["MSETNX", "c", "1", "c", "2", "d", "3"]), int(1));
        assert_eq!(
            t.cmd(c, &["MGET", "c", "d"]),
            arr(vec![bulk("2"), bulk("3")])
        );
        // MSET clears TTLs.
        assert_eq!(t.cmd(c, &["SET", "e", "v", "EX", "100"]), ok());
        assert_eq!(t.cmd(c, &["MSET", "e", "w"]), ok());
        assert_eq!(expire_of(&t, "e"), None);
        assert_eq!(
            t.cmd(c, &["MGET"]),
            err("ERR wrong number of arguments for 'mget' command")
        );
    }

    #[test]
    fn getset_getdel() {
        let (mut t, c) = setup();
        assert_eq!(t.cmd(c, &["GETSET", "k", "1"]), nil());
        assert_eq!(t.cmd(c, &["SET", "k", "1", "EX", "100"]), ok());
        assert_eq!(t.cmd(c, &["GETSET", "k", "2"]), bulk("1"));
        assert_eq!(t.cmd(c, &["GET", "k"]), bulk("2"));
        // GETSET clears the TTL.
        assert_eq!(expire_of(&t, "k"), None);
        assert_eq!(t.cmd(c, &["GETDEL", "k"]), bulk("2"));
        assert_eq!(t.cmd(c, &["GETDEL", "k"]), nil());
        assert!(stored(&t, "k").is_none());
    }

    #[test]
    fn getex_options() {
        let (mut t, c) = setup();
        assert_eq!(t.cmd(c, &["GETEX", "k"]), nil());
        // A missing key is null even with an invalid time.
        assert_eq!(t.cmd(c, &["GETEX", "k", "EX", "abc"]), nil());
        assert_eq!(t.cmd(c, &["GETEX", "k", "EX", "0"]), nil());
        assert_eq!(t.cmd(c, &["SET", "k", "v"]), ok());
        assert_eq!(t.cmd(c, &["GETEX", "k"]), bulk("v"));
        assert_eq!(expire_of(&t, "k"), None);
        assert_eq!(t.cmd(c, &["GETEX", "k", "EX", "10"]), bulk("v"));
        assert_eq!(expire_of(&t, "k"), Some(NOW_MS + 10_000));
        assert_eq!(t.cmd(c, &["GETEX", "k", "PX", "10"]), bulk("v"));
        assert_eq!(expire_of(&t, "k"), Some(NOW_MS + 10));
        assert_eq!(t.cmd(c, &["GETEX", "k", "EXAT", "1800000000"]), bulk("v"));
        assert_eq!(expire_of(&t, "k"), Some(1_800_000_000_000));
        assert_eq!(
            t.cmd(c, &["GETEX", "k", "PXAT", "1800000000001"]),
            bulk("v")
        );
        assert_eq!(expire_of(&t, "k"), Some(1_800_000_000_001));
        assert_eq!(t.cmd(c, &["GETEX", "k", "PERSIST"]), bulk("v"));
        assert_eq!(expire_of(&t, "k"), None);
        assert_eq!(t.cmd(c, &["GETEX", "k", "PERSIST"]), bulk("v"));
        assert_eq!(t.cmd(c, &["GETEX", "k", "EX", "abc"]), err(NOT_INT));
        assert_eq!(
            t.cmd(c, &["GETEX", "k", "EX", "0"]),
            err("ERR invalid expire time in 'getex' command")
        );
        for opts in [
            &["NX"][..],
            &["XX"],
            &["GET"],
            &["KEEPTTL"],
            &["PERSIST", "EX", "1"],
            &["EX", "1", "PERSIST"],
            &["EX", "1", "PX", "1"],
            &["EX"],
        ] {
            let mut args = vec!["GETEX", "k"];
            args.extend_from_slice(opts);
            assert_eq!(t.cmd(c, &args), err(SYNTAX), "{opts:?}");
        }
        // A syntax error is reported even for a missing key.
        assert_eq!(t.cmd(c, &["GETEX", "nokey", "NX"]), err(SYNTAX));
        // An absolute time in the past deletes the key after replying, and
        // does not count as an expiry.
        assert_eq!(t.cmd(c, &["GETEX", "k", "PXAT", "1"]), bulk("v"));
        assert!(stored(&t, "k").is_none());
        assert_eq!(t.engine.server().keyspace.expired_keys, 0);
    }

    #[test]
    fn append_and_strlen() {
        let (mut t, c) = setup();
        assert_eq!(t.cmd(c, &["STRLEN", "k"]), int(0));
        assert_eq!(t.cmd(c, &["APPEND", "k", "abc"]), int(3));
        assert!(!stored(&t, "k").unwrap().raw);
        assert_eq!(t.cmd(c, &["APPEND", "k", ""]), int(3));
        assert!(stored(&t, "k").unwrap().raw);
        assert_eq!(t.cmd(c, &["APPEND", "k", "def"]), int(6));
        assert_eq!(t.cmd(c, &["GET", "k"]), bulk("abcdef"));
        assert_eq!(t.cmd(c, &["STRLEN", "k"]), int(6));
        // APPEND keeps the TTL.
        assert_eq!(t.cmd(c, &["SET", "e", "x", "EX", "100"]), ok());
        assert_eq!(t.cmd(c, &["APPEND", "e", "y"]), int(2));
        assert_eq!(expire_of(&t, "e"), Some(NOW_MS + 100_000));
    }

    #[test]
    fn append_and_setrange_obey_proto_max_bulk_len() {
        let mut t = TestEngine::with_config(Config {
            proto_max_bulk_len_bytes: 20,
            ..Config::default()
        });
        let c = t.connect();
        let too_long = err("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
        assert_eq!(t.cmd(c, &["SET", "k", "123456789012345678"]), ok());
        assert_eq!(t.cmd(c, &["APPEND", "k", "90"]), int(20));
        assert_eq!(t.cmd(c, &["APPEND", "k", "x"]), too_long);
        assert_eq!(t.cmd(c, &["SETRANGE", "k", "20", "x"]), too_long);
        assert_eq!(t.cmd(c, &["SETRANGE", "k", "19", "x"]), int(20));
        assert_eq!(t.cmd(c, &["SETRANGE", "new", "20", "x"]), too_long);
        assert_eq!(t.cmd(c, &["SETRANGE", "new", "19", "x"]), int(20));
        assert_eq!(
            t.cmd(c, &["SETRANGE", "new", "9223372036854775807", "x"]),
            too_long
        );
        // Setting nothing is never too long.
        assert_eq!(t.cmd(c, &["SETRANGE", "none", "100", ""]), int(0));
        assert_eq!(t.cmd(c, &["SETRANGE", "k", "100", ""]), int(20));
        assert_eq!(t.cmd(c, &["GET", "k"]), bulk("1234567890123456789x"));
    }

    #[test]
    fn getrange_and_substr() {
        let (mut t, c) = setup();
        assert_eq!(t.cmd(c, &["SET", "s", "hello"]), ok());
        for (start, end, want) in [
            ("0", "-1", "hello"),
            ("-3", "-1", "llo"),
            ("-1", "-3", ""),
            ("10", "20", ""),
            ("2", "100", "llo"),
            ("-100", "1", "he"),
            ("0", "0", "h"),
            ("4", "4", "o"),
            ("3", "1", ""),
            ("-9223372036854775808", "-1", "hello"),
            ("0", "9223372036854775807", "hello"),
            ("-1", "-1", "o"),
            ("0", "-100", "h"),
        ] {
            assert_eq!(
                t.cmd(c, &["GETRANGE", "s", start, end]),
                bulk(want),
                "{start} {end}"
            );
        }
        assert_eq!(t.cmd(c, &["SUBSTR", "s", "1", "2"]), bulk("el"));
        assert_eq!(t.cmd(c, &["GETRANGE", "missing", "0", "1"]), bulk(""));
        assert_eq!(t.cmd(c, &["GETRANGE", "s", "a", "1"]), err(NOT_INT));
        assert_eq!(
            t.cmd(c, &["GETRANGE", "s", "0", "9223372036854775808"]),
            err(NOT_INT)
        );
        assert_eq!(t.cmd(c, &["GETRANGE", "missing", "x", "1"]), err(NOT_INT));
        assert_eq!(t.cmd(c, &["SET", "e", ""]), ok());
        assert_eq!(t.cmd(c, &["GETRANGE", "e", "0", "-1"]), bulk(""));
        assert_eq!(t.cmd(c, &["GETRANGE", "e", "-1", "0"]), bulk(""));
        assert_eq!(t.cmd(c, &["SET", "i", "123"]), ok());
        assert_eq!(t.cmd(c, &["GETRANGE", "i", "1", "1"]), bulk("2"));
        assert_eq!(
            t.cmd(c, &["GETRANGE", "s", "0"]),
            err("ERR wrong number of arguments for 'getrange' command")
        );
    }

    #[test]
    fn setrange() {
        let (mut t, c) = setup();
        assert_eq!(t.cmd(c, &["SETRANGE", "k", "0", ""]), int(0));
        assert!(stored(&t, "k").is_none());
        assert_eq!(t.cmd(c, &["SETRANGE", "k", "3", "ab"]), int(5));
        assert_eq!(t.cmd(c, &["GET", "k"]), Frame::Bulk(b"\0\0\0ab".to_vec()));
        assert!(stored(&t, "k").unwrap().raw);
        assert_eq!(t.cmd(c, &["SETRANGE", "k", "1", "XY"]), int(5));
        assert_eq!(t.cmd(c, &["GET", "k"]), Frame::Bulk(b"\0XYab".to_vec()));
        assert_eq!(t.cmd(c, &["SETRANGE", "k", "1", ""]), int(5));
        assert_eq!(t.cmd(c, &["SET", "h", "Hello World", "EX", "100"]), ok());
        assert_eq!(t.cmd(c, &["SETRANGE", "h", "6", "Redis"]), int(11));
        assert_eq!(t.cmd(c, &["GET", "h"]), bulk("Hello Redis"));
        assert_eq!(expire_of(&t, "h"), Some(NOW_MS + 100_000));
        assert_eq!(
            t.cmd(c, &["SETRANGE", "h", "-1", "x"]),
            err("ERR offset is out of range")
        );
        assert_eq!(t.cmd(c, &["SETRANGE", "h", "x", "x"]), err(NOT_INT));
    }

    #[test]
    fn incr_decr_family() {
        let (mut t, c) = setup();
        assert_eq!(t.cmd(c, &["INCR", "n"]), int(1));
        assert_eq!(t.cmd(c, &["INCRBY", "n", "10"]), int(11));
        assert_eq!(t.cmd(c, &["DECR", "n"]), int(10));
        assert_eq!(t.cmd(c, &["DECRBY", "n", "-5"]), int(15));
        assert_eq!(t.cmd(c, &["GET", "n"]), bulk("15"));
        assert_eq!(t.cmd(c, &["DECR", "m"]), int(-1));
        assert_eq!(
            t.cmd(c, &["INCRBY", "x", "-9223372036854775808"]),
            int(i64::MIN)
        );
        // TTLs survive.
        assert_eq!(t.cmd(c, &["SET", "e", "5", "EX", "100"]), ok());
        assert_eq!(t.cmd(c, &["INCR", "e"]), int(6));
        assert_eq!(expire_of(&t, "e"), Some(NOW_MS + 100_000));
        // A fresh value: no raw encoding left over from APPEND.
        assert_eq!(t.cmd(c, &["APPEND", "e", "0"]), int(2));
        assert_eq!(t.cmd(c, &["INCR", "e"]), int(61));
        assert!(!stored(&t, "e").unwrap().raw);
    }

    #[test]
    fn incr_decr_errors() {
        let (mut t, c) = setup();
        let overflow = err("ERR increment or decrement would overflow");
        assert_eq!(t.cmd(c, &["SET", "max", "9223372036854775807"]), ok());
        assert_eq!(t.cmd(c, &["INCR", "max"]), overflow);
        assert_eq!(t.cmd(c, &["INCRBY", "max", "1"]), overflow);
        assert_eq!(t.cmd(c, &["INCRBY", "max", "-1"]), int(i64::MAX - 1));
        assert_eq!(t.cmd(c, &["SET", "min", "-9223372036854775808"]), ok());
        assert_eq!(t.cmd(c, &["DECR", "min"]), overflow);
        assert_eq!(t.cmd(c, &["DECRBY", "min", "1"]), overflow);
        assert_eq!(
            t.cmd(c, &["DECRBY", "n", "-9223372036854775808"]),
            err("ERR decrement would overflow")
        );
        assert_eq!(t.cmd(c, &["INCRBY", "n", "abc"]), err(NOT_INT));
        assert_eq!(t.cmd(c, &["DECRBY", "n", "1.5"]), err(NOT_INT));
        for bad in [
            " 1",
            "01",
            "1.0",
            "abc",
            "",
            "-0",
            "+1",
            "99999999999999999999",
        ] {
            assert_eq!(t.cmd(c, &["SET", "s", bad]), ok());
            assert_eq!(t.cmd(c, &["INCR", "s"]), err(NOT_INT), "{bad:?}");
        }
        assert_eq!(t.cmd(c, &["GET", "n"]), nil());
    }

    #[test]
    fn incrbyfloat() {
        let (mut t, c) = setup();
        assert_eq!(t.cmd(c, &["SET", "f", "10.50"]), ok());
        assert_eq!(t.cmd(c, &["INCRBYFLOAT", "f", "0.1"]), bulk("10.6"));
        assert_eq!(t.cmd(c, &["INCRBYFLOAT", "f", "-5"]), bulk("5.6"));
        assert_eq!(t.cmd(c, &["SET", "f", "5.0e3"]), ok());
        assert_eq!(t.cmd(c, &["INCRBYFLOAT", "f", "2.0e2"]), bulk("5200"));
        assert_eq!(t.cmd(c, &["GET", "f"]), bulk("5200"));
        assert_eq!(t.cmd(c, &["INCRBYFLOAT", "new", "0.1"]), bulk("0.1"));
        assert_eq!(t.cmd(c, &["INCRBYFLOAT", "new", "-0.1"]), bulk("0"));
        assert_eq!(t.cmd(c, &["INCRBYFLOAT", "hex", "0x10"]), bulk("16"));
        // TTLs survive.
        assert_eq!(t.cmd(c, &["SET", "e", "1", "EX", "100"]), ok());
        assert_eq!(t.cmd(c, &["INCRBYFLOAT", "e", "1.5"]), bulk("2.5"));
        assert_eq!(expire_of(&t, "e"), Some(NOW_MS + 100_000));
        // Errors: the stored value, then the increment, then the result.
        let nan_or_inf = err("ERR increment would produce NaN or Infinity");
        assert_eq!(t.cmd(c, &["INCRBYFLOAT", "e", "abc"]), err(NOT_FLOAT));
        assert_eq!(t.cmd(c, &["INCRBYFLOAT", "e", " 1"]), err(NOT_FLOAT));
        assert_eq!(t.cmd(c, &["INCRBYFLOAT", "e", "nan"]), err(NOT_FLOAT));
        assert_eq!(t.cmd(c, &["INCRBYFLOAT", "e", "1e5000"]), err(NOT_FLOAT));
        assert_eq!(t.cmd(c, &["INCRBYFLOAT", "e", "inf"]), nan_or_inf);
        assert_eq!(t.cmd(c, &["SET", "big", "1e4932"]), ok());
        assert_eq!(t.cmd(c, &["INCRBYFLOAT", "big", "1e4932"]), nan_or_inf);
        assert_eq!(t.cmd(c, &["SET", "s", "text"]), ok());
        assert_eq!(t.cmd(c, &["INCRBYFLOAT", "s", "1"]), err(NOT_FLOAT));
        assert_eq!(t.cmd(c, &["SET", "s", "inf"]), ok());
        assert_eq!(t.cmd(c, &["INCRBYFLOAT", "s", "x"]), err(NOT_FLOAT));
        assert_eq!(t.cmd(c, &["INCRBYFLOAT", "s", "1"]), nan_or_inf);
        assert_eq!(t.cmd(c, &["GET", "e"]), bulk("2.5"));
    }

    #[test]
    fn lcs() {
        let (mut t, c) = setup();
        assert_eq!(t.cmd(c, &["LCS", "a", "b"]), bulk(""));
        assert_eq!(t.cmd(c, &["MSET", "a", "ohmytext", "b", "mynewtext"]), ok());
        assert_eq!(t.cmd(c, &["LCS", "a", "b"]), bulk("mytext"));
        assert_eq!(t.cmd(c, &["LCS", "a", "b", "LEN"]), int(6));
        let range = |a: i64, b: i64| arr(vec![int(a), int(b)]);
        assert_eq!(
            t.cmd(c, &["LCS", "a", "b", "IDX"]),
            arr(vec![
                bulk("matches"),
                arr(vec![
                    arr(vec![range(4, 7), range(5, 8)]),
                    arr(vec![range(2, 3), range(0, 1)]),
                ]),
                bulk("len"),
                int(6),
            ])
        );
        assert_eq!(
            t.cmd(
                c,
                &["LCS", "a", "b", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN"]
            ),
            arr(vec![
                bulk("matches"),
                arr(vec![arr(vec![range(4, 7), range(5, 8), int(4)])]),
                bulk("len"),
                int(6),
            ])
        );
        assert_eq!(
            t.cmd(c, &["LCS", "a", "b", "MINMATCHLEN", "-5", "IDX"]),
            t.cmd(c, &["LCS", "a", "b", "IDX"])
        );
        assert_eq!(
            t.cmd(c, &["LCS", "a", "b", "LEN", "IDX"]),
            err("ERR If you want both the length and indexes, please just use IDX.")
        );
        assert_eq!(t.cmd(c, &["LCS", "a", "b", "FOO"]), err(SYNTAX));
        assert_eq!(t.cmd(c, &["LCS", "a", "b", "MINMATCHLEN"]), err(SYNTAX));
        assert_eq!(
            t.cmd(c, &["LCS", "a", "b", "MINMATCHLEN", "x"]),
            err(NOT_INT)
        );
        assert_eq!(
            t.cmd(c, &["LCS", "a"]),
            err("ERR wrong number of arguments for 'lcs' command")
        );
    }

    #[test]
    fn lcs_respects_the_transient_memory_limit() {
        let mut t = TestEngine::with_config(Config {
            proto_max_bulk_len_bytes: 100,
            ..Config::default()
        });
        let c = t.connect();
        assert_eq!(t.cmd(c, &["MSET", "a", "1234", "b", "1234"]), ok());
        assert_eq!(t.cmd(c, &["LCS", "a", "b"]), bulk("1234"));
        assert_eq!(t.cmd(c, &["SET", "b", "12345"]), ok());
        assert_eq!(
            t.cmd(c, &["LCS", "a", "b"]),
            err("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
        );
    }

    #[test]
    fn resp3_nulls() {
        let (mut t, c) = setup();
        assert_eq!(t.cmd(c, &["HELLO", "3"]).clone(), t.cmd(c, &["HELLO", "3"]));
        assert_eq!(t.raw(c, b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"), b"_\r\n");
        assert_eq!(
            t.raw(c, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"),
            b"+OK\r\n"
        );
    }

    #[test]
    fn specs_match_redis_command_info() {
        let spec = |name: &str| COMMANDS.iter().find(|s| s.name == name).expect(name);
        // (name, arity, flags, first, last, step, acl categories, since)
        type Row = (
            &'static str,
            i32,
            u32,
            i32,
            i32,
            i32,
            &'static [&'static str],
            &'static str,
        );
        let expected: &[Row] = &[
            (
                "get",
                2,
                READONLY | FAST,
                1,
                1,
                1,
                &["read", "string", "fast"],
                "1.0.0",
            ),
            (
                "set",
                -3,
                WRITE | DENYOOM,
                1,
                1,
                1,
                &["write", "string", "slow"],
                "1.0.0",
            ),
            (
                "setnx",
                3,
                WRITE | DENYOOM | FAST,
                1,
                1,
                1,
                &["write", "string", "fast"],
                "1.0.0",
            ),
            (
                "setex",
                4,
                WRITE | DENYOOM,
                1,
                1,
                1,
                &["write", "string", "slow"],
                "2.0.0",
            ),
            (
                "psetex",
                4,
                WRITE | DENYOOM,
                1,
                1,
                1,
                &["write", "string", "slow"],
                "2.6.0",
            ),
            (
                "mget",
                -2,
                READONLY | FAST,
                1,
                -1,
                1,
                &["read", "string", "fast"],
                "1.0.0",
            ),
            (
                "mset",
                -3,
                WRITE | DENYOOM,
                1,
                -1,
                2,
                &["write", "string", "slow"],
                "1.0.1",
            ),
            (
                "msetnx",
                -3,
                WRITE | DENYOOM,
                1,
                -1,
                2,
                &["write", "string", "slow"],
                "1.0.1",
            ),
            (
                "getset",
                3,
                WRITE | DENYOOM | FAST,
                1,
                1,
                1,
                &["write", "string", "fast"],
                "1.0.0",
            ),
            (
                "getdel",
                2,
                WRITE | FAST,
                1,
                1,
                1,
                &["write", "string", "fast"],
                "6.2.0",
            ),
            (
                "getex",
                -2,
                WRITE | FAST,
                1,
                1,
                1,
                &["write", "string", "fast"],
                "6.2.0",
            ),
            (
                "append",
                3,
                WRITE | DENYOOM | FAST,
                1,
                1,
                1,
                &["write", "string", "fast"],
                "2.0.0",
            ),
            (
                "strlen",
                2,
                READONLY | FAST,
                1,
                1,
                1,
                &["read", "string", "fast"],
                "2.2.0",
            ),
            (
                "getrange",
                4,
                READONLY,
                1,
                1,
                1,
                &["read", "string", "slow"],
                "2.4.0",
            ),
            (
                "substr",
                4,
                READONLY,
                1,
                1,
                1,
                &["read", "string", "slow"],
                "1.0.0",
            ),
            (
                "setrange",
                4,
                WRITE | DENYOOM,
                1,
                1,
                1,
                &["write", "string", "slow"],
                "2.2.0",
            ),
            (
                "incr",
                2,
                WRITE | DENYOOM | FAST,
                1,
                1,
                1,
                &["write", "string", "fast"],
                "1.0.0",
            ),
            (
                "decr",
                2,
                WRITE | DENYOOM | FAST,
                1,
                1,
                1,
                &["write", "string", "fast"],
                "1.0.0",
            ),
            (
                "incrby",
                3,
                WRITE | DENYOOM | FAST,
                1,
                1,
                1,
                &["write", "string", "fast"],
                "1.0.0",
            ),
            (
                "decrby",
                3,
                WRITE | DENYOOM | FAST,
                1,
                1,
                1,
                &["write", "string", "fast"],
                "1.0.0",
            ),
            (
                "incrbyfloat",
                3,
                WRITE | DENYOOM | FAST,
                1,
                1,
                1,
                &["write", "string", "fast"],
                "2.6.0",
            ),
            (
                "lcs",
                -3,
                READONLY,
                1,
                2,
                1,
                &["read", "string", "slow"],
                "7.0.0",
            ),
        ];
        assert_eq!(COMMANDS.len(), expected.len());
        for &(name, arity, flags, first, last, step, acl, since) in expected {
            let s = spec(name);
            assert_eq!(s.arity, arity, "{name}");
            assert_eq!(s.flags & !O_N, flags, "{name}");
            assert_eq!(
                (s.first_key, s.last_key, s.key_step),
                (first, last, step),
                "{name}"
            );
            assert_eq!(s.acl_categories, acl, "{name}");
            assert_eq!(s.since, since, "{name}");
            assert_eq!(s.group, "string", "{name}");
            assert!(!s.summary.is_empty() && s.handler.is_some(), "{name}");
        }
    }

    #[test]
    fn work_grows_with_keys_and_bytes() {
        let mut t = TestEngine::with_config(Config {
            record_executions: true,
            ..Config::default()
        });
        let c = t.connect();
        let work_of = |t: &mut TestEngine, args: &[&str]| {
            t.events.clear();
            t.cmd(c, args);
            t.events
                .iter()
                .find_map(|e| match e {
                    crate::Event::Executed(x) => Some(x.work_units),
                    _ => None,
                })
                .expect("an execution record")
        };
        let one = work_of(&mut t, &["MGET", "a"]);
        let ten = work_of(
            &mut t,
            &["MGET", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"],
        );
        assert_eq!(ten - one, 9);
        let small = work_of(&mut t, &["SETRANGE", "s", "0", "x"]);
        let big = work_of(&mut t, &["SETRANGE", "s", "6400", "x"]);
        assert!(big >= small + 100, "{small} {big}");
    }
}
