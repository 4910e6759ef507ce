//! INCR DECR INCRBY DECRBY INCRBYFLOAT: the counters, read-modify-writes of
//! a string holding a number. The key keeps its TTL; a missing key counts
//! as 0.

use super::{string_at, string_util, WrongType, NOT_AN_INTEGER, STRING, WRITE_FAST};
use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::planted::PlantedBug;
use crate::util::parse_i64_strict;
use crate::value::{RString, Value, WRONGTYPE};

const INCR_OVERFLOW: &str = "ERR increment or decrement would overflow";

pub const COMMANDS: &[CommandSpec] = &[
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
];

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
