//! Planted bugs inside one command, swapped into the command table when
//! the engine is built (seam "the command table is built"): the clean
//! handlers carry no trace of them. Each buggy spec is the clean one with
//! another handler, so COMMAND INFO and the stats see the same command.

use std::sync::OnceLock;

use super::{held, PlantedBug};
use crate::cmd::{CommandSpec, CommandTable, Ctx, Handler, WrongType};
use crate::commands::lists::{notify_and_delete_if_empty, NOT_AN_INTEGER};
use crate::commands::strings::{string_at, WrongType as NotAString};
use crate::resp::encode::fmt_i64;
use crate::types::list::Direction;
use crate::util::parse_i64_strict;
use crate::value::{Value, WRONGTYPE};

/// The buggy handlers, by command.
const BUGGY: &[(PlantedBug, &str, Handler)] = &[
    (PlantedBug::IncrNotAtomic, "incr", incr),
    (PlantedBug::IncrNotAtomic, "decr", decr),
    (PlantedBug::IncrNotAtomic, "incrby", incrby),
    (PlantedBug::IncrNotAtomic, "decrby", decrby),
    (PlantedBug::LindexPanics, "lindex", lindex),
    (PlantedBug::LremQuadratic, "lrem", lrem),
];

/// Swaps `bug`'s handlers into `table`.
pub(super) fn patch(bug: PlantedBug, table: &mut CommandTable) {
    // The buggy specs, made once from the clean ones: the table holds
    // `&'static` specs, and every engine's clean specs are the same.
    static SPECS: OnceLock<Vec<CommandSpec>> = OnceLock::new();
    let specs = SPECS.get_or_init(|| {
        BUGGY
            .iter()
            .map(|&(_, name, handler)| {
                let clean = table.lookup(name.as_bytes()).expect("a Redis command");
                CommandSpec {
                    handler: Some(handler),
                    ..*clean
                }
            })
            .collect()
    });
    for (spec, &(planted, ..)) in specs.iter().zip(BUGGY) {
        if planted == bug {
            table.replace(spec);
        }
    }
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

/// Planted bug (PlantedBug::IncrNotAtomic): the read-modify-write is split
/// in two: the reply goes out now, the write-back only after the engine's
/// next input (see [`held::run_incr_writes`]). INCRs in between read the
/// stale value and their updates are lost.
fn incr_decr(ctx: &mut Ctx, key: &[u8], delta: i64) {
    let current = match string_at(ctx, key, crate::cmd::Lookup::Write) {
        Err(NotAString) => return ctx.error(WRONGTYPE),
        Ok(None) => 0,
        Ok(Some(s)) => match parse_i64_strict(s.as_bytes()) {
            Some(v) => v,
            None => return ctx.error(NOT_AN_INTEGER),
        },
    };
    let Some(next) = current.checked_add(delta) else {
        return ctx.error("ERR increment or decrement would overflow");
    };
    let text = fmt_i64(&mut [0u8; 20], next).to_vec();
    let db = ctx.db_index();
    held::hold_incr_write(ctx.server, db, key, text);
    ctx.int(next);
}

/// Planted bug (PlantedBug::LindexPanics): LINDEX with a negative index
/// past the head of the list reads out of bounds, as a C engine would, and
/// panics; otherwise it is LINDEX.
fn lindex(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if let Some(index) = parse_i64_strict(&args[2]).filter(|&i| i < 0) {
        let now_ms = ctx.expiry_now_ms();
        let db = ctx.db();
        let list = db
            .get(&args[1])
            .filter(|_| !db.is_expired(&args[1], now_ms));
        if let Some(list) = list.and_then(Value::as_list) {
            if index.unsigned_abs() > list.len() as u64 {
                let entries: Vec<u8> = Vec::new();
                let _ = entries[(list.len() as i64 + index) as usize];
            }
        }
    }
    crate::commands::lists::lindex(ctx, args);
}

/// Planted bug (PlantedBug::LremQuadratic): LREM charged N² work units for
/// the N elements it visited (an O(N) command whose work grows
/// quadratically: the no-freeze invariant's target; a real quadratic loop
/// would be charged the same). Otherwise it is LREM.
fn lrem(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let Some(count) = parse_i64_strict(&args[2]) else {
        return ctx.error(NOT_AN_INTEGER);
    };
    let key = &args[1];
    let list = match ctx.lookup_as(key, Value::as_list_mut) {
        Err(WrongType) => return ctx.error(WRONGTYPE),
        Ok(None) => return ctx.int(0),
        Ok(Some(list)) => list,
    };
    let direction = if count < 0 {
        Direction::Backward
    } else {
        Direction::Forward
    };
    let limit = (count != 0).then(|| usize::try_from(count.unsigned_abs()).unwrap_or(usize::MAX));
    let (removed, visited) = list.remove_matching(&args[3], limit, direction);
    let empty = list.is_empty();
    ctx.work((visited * visited) as u64);
    ctx.server.dirty += removed as u64;
    if removed > 0 {
        notify_and_delete_if_empty(ctx, key, "lrem", empty);
    }
    ctx.int(removed as i64);
}
