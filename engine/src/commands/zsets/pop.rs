//! Pops: ZPOPMIN ZPOPMAX ZMPOP and the blocking BZPOPMIN BZPOPMAX BZMPOP
//! (Redis's `genericZpopCommand` and `blockingGenericZpopCommand`).
//!
//! A blocking pop that finds every key missing or empty parks its client
//! (see [`crate::blocking`]) when it may, and otherwise replies a null
//! array, which is also what tells the engine that a re-run found nothing.

use super::{notify_and_delete_if_empty, SYNTAX_ERROR};
use crate::blocking::TimeoutReply;
use crate::cmd::Ctx;
use crate::resp::Protocol;
use crate::util::{parse_i64_strict, parse_timeout_ms};
use crate::value::{Value, WRONGTYPE};

const NOT_POSITIVE: &str = "ERR value is out of range, must be positive";
const NUMKEYS_NOT_POSITIVE: &str = "ERR numkeys should be greater than 0";
const COUNT_NOT_POSITIVE: &str = "ERR count should be greater than 0";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Min,
    Max,
}

/// How the popped elements are laid out in the reply.
#[derive(Clone, Copy, Debug)]
struct Shape {
    /// Name the key the elements came from (BZPOP*, ZMPOP, BZMPOP).
    emit_key: bool,
    /// [member, score] pairs instead of a flat list.
    nested: bool,
    /// Reply a null array rather than an empty one when nothing is there.
    null_when_empty: bool,
}

/// Pops up to `count` elements (`None`: one, the plain form) from the first
/// of `keys` that exists and replies. Only that key's type is checked, as
/// in Redis. Returns whether anything was popped.
fn pop_generic(
    ctx: &mut Ctx,
    keys: &[Vec<u8>],
    end: End,
    count: Option<u64>,
    shape: Shape,
) -> bool {
    let mut found = None;
    for key in keys {
        match ctx.lookup(key) {
            None => continue,
            Some(Value::ZSet(_)) => {
                found = Some(key);
                break;
            }
            Some(_) => {
                ctx.error(WRONGTYPE);
                return false;
            }
        }
    }
    ctx.work(keys.len() as u64);
    let Some(key) = found else {
        let mut w = ctx.w();
        if shape.null_when_empty {
            w.null_array();
        } else {
            w.array_len(0);
        }
        return false;
    };
    if count == Some(0) {
        ctx.w().array_len(0);
        return false;
    }
    let Ok(Some(zset)) = ctx.lookup_as(key, Value::as_zset_mut) else {
        return false;
    };
    let len = zset.len();
    let walk_units = zset.walk_units();
    let n = usize::try_from(count.unwrap_or(1)).map_or(len, |c| c.min(len));
    let mut popped = Vec::with_capacity(n);
    match end {
        End::Min => zset.remove_ranks(0, n, |m, s| popped.push((m, s))),
        End::Max => {
            zset.remove_ranks(len - n, len, |m, s| popped.push((m, s)));
            popped.reverse();
        }
    }
    ctx.work(n as u64 + walk_units);
    ctx.server.dirty += n as u64;
    let event = match end {
        End::Min => "zpopmin",
        End::Max => "zpopmax",
    };
    notify_and_delete_if_empty(ctx, key, event, n as u64);
    propagate_pop(ctx, key, end, n);

    let mut w = ctx.w();
    match (shape.emit_key, shape.nested) {
        (false, false) => w.array_len(n * 2),
        (false, true) => w.array_len(n),
        (true, false) => {
            w.array_len(n * 2 + 1);
            w.bulk(key);
        }
        (true, true) => {
            w.array_len(2);
            w.bulk(key);
            w.array_len(n);
        }
    }
    for (member, score) in &popped {
        if shape.nested {
            w.array_len(2);
        }
        w.bulk(member);
        w.double(*score);
    }
    true
}

/// ZPOPMIN key [count]
/// BZPOPMIN/BZPOPMAX replay as ZPOPMIN/ZPOPMAX of the key served, ZMPOP
/// and BZMPOP as the same with the number popped; ZPOPMIN and ZPOPMAX as
/// they were sent.
fn propagate_pop(ctx: &mut Ctx, key: &[u8], end: End, popped: usize) {
    if !ctx.propagating() {
        return;
    }
    let name: &[u8] = match end {
        End::Min => b"ZPOPMIN",
        End::Max => b"ZPOPMAX",
    };
    match ctx.spec.name {
        "bzpopmin" | "bzpopmax" => ctx.propagate(&[name, key]),
        "zmpop" | "bzmpop" => ctx.propagate(&[name, key, popped.to_string().as_bytes()]),
        _ => {}
    }
}

pub(super) fn zpopmin(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    zpop(ctx, args, End::Min);
}

/// ZPOPMAX key [count]
pub(super) fn zpopmax(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    zpop(ctx, args, End::Max);
}

fn zpop(ctx: &mut Ctx, args: &mut [Vec<u8>], end: End) {
    if args.len() > 3 {
        return ctx.error(SYNTAX_ERROR);
    }
    let count = match args.get(2) {
        None => None,
        Some(arg) => match parse_i64_strict(arg) {
            Some(n) if n >= 0 => Some(n as u64),
            _ => return ctx.error(NOT_POSITIVE),
        },
    };
    // RESP3 nests pairs only for the COUNT form.
    let shape = Shape {
        emit_key: false,
        nested: ctx.protocol == Protocol::Resp3 && count.is_some(),
        null_when_empty: false,
    };
    pop_generic(ctx, &args[1..2], end, count, shape);
}

/// BZPOPMIN key [key ...] timeout
pub(super) fn bzpopmin(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    bzpop(ctx, args, End::Min);
}

/// BZPOPMAX key [key ...] timeout
pub(super) fn bzpopmax(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    bzpop(ctx, args, End::Max);
}

fn bzpop(ctx: &mut Ctx, args: &mut [Vec<u8>], end: End) {
    let keys = &args[1..args.len() - 1];
    let shape = Shape {
        emit_key: true,
        nested: false,
        null_when_empty: true,
    };
    blocking_pop(ctx, &args[args.len() - 1], keys, end, None, shape);
}

/// Redis's `blockingGenericZpopCommand`: the timeout, then the first
/// non-empty sorted set among `keys`, else block (or a null array).
fn blocking_pop(
    ctx: &mut Ctx,
    timeout: &[u8],
    keys: &[Vec<u8>],
    end: End,
    count: Option<u64>,
    shape: Shape,
) {
    let timeout_ms = match parse_timeout_ms(timeout) {
        Ok(ms) => ms,
        Err(e) => return ctx.error(e),
    };
    for (i, key) in keys.iter().enumerate() {
        match ctx.lookup(key) {
            None => continue,
            Some(Value::ZSet(z)) if z.is_empty() => continue,
            Some(Value::ZSet(_)) => {
                ctx.work(i as u64);
                pop_generic(ctx, std::slice::from_ref(key), end, count, shape);
                return;
            }
            Some(_) => return ctx.error(WRONGTYPE),
        }
    }
    ctx.work(keys.len() as u64);
    if !ctx.may_block() {
        return ctx.w().null_array();
    }
    ctx.block_on_keys(keys.to_vec(), timeout_ms, TimeoutReply::NullArray);
}

/// `numkeys key [key ...] MIN|MAX [COUNT count]` of ZMPOP and BZMPOP, from
/// `args[numkeys_at]`: the keys' range in `args`, the end and the count.
fn parse_mpop(
    args: &[Vec<u8>],
    numkeys_at: usize,
) -> Result<(std::ops::Range<usize>, End, u64), &'static str> {
    let numkeys = match parse_i64_strict(&args[numkeys_at]) {
        Some(n) if n >= 1 => n as u64,
        _ => return Err(NUMKEYS_NOT_POSITIVE),
    };
    let where_at = (numkeys_at as u64)
        .checked_add(numkeys)
        .and_then(|n| n.checked_add(1))
        .filter(|&n| n < args.len() as u64)
        .ok_or(SYNTAX_ERROR)? as usize;
    let end = if args[where_at].eq_ignore_ascii_case(b"min") {
        End::Min
    } else if args[where_at].eq_ignore_ascii_case(b"max") {
        End::Max
    } else {
        return Err(SYNTAX_ERROR);
    };
    let mut count = None;
    let mut j = where_at + 1;
    while j < args.len() {
        let more = j + 1 < args.len();
        if count.is_none() && more && args[j].eq_ignore_ascii_case(b"count") {
            match parse_i64_strict(&args[j + 1]) {
                Some(n) if n >= 1 => count = Some(n as u64),
                _ => return Err(COUNT_NOT_POSITIVE),
            }
            j += 2;
        } else {
            return Err(SYNTAX_ERROR);
        }
    }
    Ok((numkeys_at + 1..where_at, end, count.unwrap_or(1)))
}

const MPOP_SHAPE: Shape = Shape {
    emit_key: true,
    nested: true,
    null_when_empty: true,
};

/// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]
pub(super) fn zmpop(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match parse_mpop(args, 1) {
        Err(e) => ctx.error(e),
        Ok((keys, end, count)) => {
            pop_generic(ctx, &args[keys], end, Some(count), MPOP_SHAPE);
        }
    }
}

/// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]: the
/// timeout is checked after the rest, as in Redis.
pub(super) fn bzmpop(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match parse_mpop(args, 2) {
        Err(e) => ctx.error(e),
        Ok((keys, end, count)) => {
            blocking_pop(ctx, &args[1], &args[keys], end, Some(count), MPOP_SHAPE);
        }
    }
}
