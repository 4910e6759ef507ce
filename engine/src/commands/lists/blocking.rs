//! The blocking list commands: BLPOP BRPOP BLMOVE BRPOPLPUSH BLMPOP.
//!
//! Each first tries to serve like its non-blocking twin. When there is
//! nothing to pop it parks the client with `Ctx::block_on_keys` (and writes
//! no reply) if it may block, or replies what a timeout would (a null) if
//! it may not: inside MULTI, and when the engine re-runs it for a key that
//! was signalled ready. The argument checks and their order are Redis
//! 7.0's (`blockingPopGenericCommand`, `blmoveCommand`,
//! `lmpopGenericCommand`): BLPOP and BRPOPLPUSH check the timeout first,
//! BLMOVE the two ends first, BLMPOP numkeys, ends and COUNT first.

use super::{lmove_generic, mpop_serve, parse_end, parse_mpop, SYNTAX_ERROR};
use crate::blocking::TimeoutReply;
use crate::cmd::{Ctx, WrongType};
use crate::types::list::Direction;
use crate::util::parse_timeout_ms;
use crate::value::{Value, WRONGTYPE};

/// BLPOP and BRPOP: `key... timeout`. Keys are tried in order; a key of
/// another type is WRONGTYPE only if no earlier key could serve.
fn bpop_generic(ctx: &mut Ctx, args: &mut [Vec<u8>], from: Direction) {
    let Some((timeout, keys)) = args[1..].split_last() else {
        return;
    };
    let timeout_ms = match parse_timeout_ms(timeout) {
        Ok(ms) => ms,
        Err(e) => return ctx.error(e),
    };
    for key in keys {
        ctx.work(1);
        let list = match ctx.lookup_as(key, Value::as_list_mut) {
            Err(WrongType) => return ctx.error(WRONGTYPE),
            Ok(None) => continue,
            Ok(Some(list)) => list,
        };
        let Some(value) = list.pop(from) else {
            continue;
        };
        let empty = list.is_empty();
        ctx.server.dirty += 1;
        super::notify_and_delete_if_empty(ctx, key, super::pop_event(from), empty);
        let name: &[u8] = match from {
            Direction::Forward => b"LPOP",
            Direction::Backward => b"RPOP",
        };
        ctx.propagate(&[name, key]);
        let mut w = ctx.w();
        w.array_len(2);
        w.bulk(key);
        w.bulk(&value);
        return;
    }
    if !ctx.may_block() {
        return ctx.w().null_array();
    }
    ctx.block_on_keys(keys.to_vec(), timeout_ms, TimeoutReply::NullArray);
}

pub(super) fn blpop(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    bpop_generic(ctx, args, Direction::Forward);
}

pub(super) fn brpop(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    bpop_generic(ctx, args, Direction::Backward);
}

/// BLMOVE and BRPOPLPUSH once their arguments are parsed: blocks on the
/// source alone while it is missing.
fn blmove_generic(
    ctx: &mut Ctx,
    args: &[Vec<u8>],
    from: Direction,
    to: Direction,
    timeout_ms: u64,
) {
    let (src, dst) = (&args[1], &args[2]);
    let found = match ctx.lookup_as(src, Value::as_list_mut) {
        Err(WrongType) => return ctx.error(WRONGTYPE),
        Ok(found) => found.is_some(),
    };
    if found {
        let dirty_before = ctx.server.dirty;
        lmove_generic(ctx, src, dst, from, to);
        if ctx.server.dirty > dirty_before {
            // BLMOVE replays as LMOVE with its ends as sent, BRPOPLPUSH as
            // RPOPLPUSH.
            match ctx.spec.name {
                "blmove" => {
                    let argv = [b"LMOVE".as_slice(), src, dst, &args[3], &args[4]];
                    ctx.propagate(&argv);
                }
                _ => ctx.propagate(&[b"RPOPLPUSH".as_slice(), src, dst]),
            }
        }
    } else if !ctx.may_block() {
        ctx.null();
    } else {
        // Redis 7.0.15 times BLMOVE out with a null array too (while MULTI
        // gets the null bulk above).
        ctx.block_on_keys(vec![src.clone()], timeout_ms, TimeoutReply::NullArray);
    }
}

pub(super) fn blmove(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let (Some(from), Some(to)) = (parse_end(&args[3]), parse_end(&args[4])) else {
        return ctx.error(SYNTAX_ERROR);
    };
    match parse_timeout_ms(&args[5]) {
        Ok(ms) => blmove_generic(ctx, args, from, to, ms),
        Err(e) => ctx.error(e),
    }
}

pub(super) fn brpoplpush(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match parse_timeout_ms(&args[3]) {
        Ok(ms) => blmove_generic(ctx, args, Direction::Backward, Direction::Forward, ms),
        Err(e) => ctx.error(e),
    }
}

/// BLMPOP: `timeout numkeys key... LEFT|RIGHT [COUNT count]`.
pub(super) fn blmpop(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let m = match parse_mpop(args, 2) {
        Ok(m) => m,
        Err(e) => return ctx.error(e),
    };
    let timeout_ms = match parse_timeout_ms(&args[1]) {
        Ok(ms) => ms,
        Err(e) => return ctx.error(e),
    };
    match mpop_serve(ctx, args, &m) {
        Err(WrongType) | Ok(true) => {}
        Ok(false) if !ctx.may_block() => ctx.w().null_array(),
        Ok(false) => {
            let keys = args[m.keys.clone()].to_vec();
            ctx.block_on_keys(keys, timeout_ms, TimeoutReply::NullArray);
        }
    }
}
