//! LMPOP, and the argument parsing and serving BLMPOP shares with it
//! (Redis's `lmpopGenericCommand` and `mpopGenericCommand`).

use super::{
    as_list, c_str, notify_and_delete_if_empty, parse_end, pop_event, pop_range_reply, SYNTAX_ERROR,
};
use crate::cmd::{Ctx, WrongType};
use crate::types::list::Direction;
use crate::util::parse_i64_strict;
use crate::value::WRONGTYPE;

const NUMKEYS_NOT_POSITIVE: &str = "ERR numkeys should be greater than 0";
const COUNT_NOT_POSITIVE: &str = "ERR count should be greater than 0";

/// LMPOP and BLMPOP arguments after the command name (and BLMPOP's
/// timeout): `numkeys key... LEFT|RIGHT [COUNT count]`.
pub(crate) struct MpopArgs {
    /// Indices of the keys in `args`.
    pub keys: std::ops::Range<usize>,
    pub from: Direction,
    pub count: usize,
}

/// Redis's `lmpopGenericCommand` parsing, from `numkeys` at `numkeys_at`.
pub(crate) fn parse_mpop(args: &[Vec<u8>], numkeys_at: usize) -> Result<MpopArgs, &'static str> {
    let numkeys = parse_i64_strict(&args[numkeys_at])
        .filter(|&n| n > 0)
        .ok_or(NUMKEYS_NOT_POSITIVE)?;
    let first_key = numkeys_at + 1;
    let where_at = usize::try_from(numkeys)
        .ok()
        .and_then(|n| first_key.checked_add(n))
        .filter(|&i| i < args.len())
        .ok_or(SYNTAX_ERROR)?;
    let from = parse_end(&args[where_at]).ok_or(SYNTAX_ERROR)?;
    let mut count = None;
    let mut j = where_at + 1;
    while j < args.len() {
        let more = j + 1 < args.len();
        if count.is_none() && more && c_str(&args[j]).eq_ignore_ascii_case(b"count") {
            let n = parse_i64_strict(&args[j + 1])
                .filter(|&n| n > 0)
                .ok_or(COUNT_NOT_POSITIVE)?;
            count = Some(usize::try_from(n).unwrap_or(usize::MAX));
            j += 2;
        } else {
            return Err(SYNTAX_ERROR);
        }
    }
    Ok(MpopArgs {
        keys: first_key..where_at,
        from,
        count: count.unwrap_or(1),
    })
}

/// Pops from the first non-empty list among `m.keys`, replying
/// `[key, [elements...]]`. Returns Ok(false) when every key was missing
/// (nothing replied), Err after replying WRONGTYPE.
pub(crate) fn mpop_serve(ctx: &mut Ctx, args: &[Vec<u8>], m: &MpopArgs) -> Result<bool, WrongType> {
    for i in m.keys.clone() {
        ctx.work(1);
        let key = &args[i];
        let (value, mut w) = ctx.lookup_and_writer(key);
        let list = match as_list(value) {
            Err(WrongType) => {
                w.error(WRONGTYPE);
                return Err(WrongType);
            }
            Ok(None) => continue,
            Ok(Some(list)) => list,
        };
        if list.is_empty() {
            continue;
        }
        w.array_len(2);
        w.bulk(key);
        let popped = pop_range_reply(&mut w, list, m.from, m.count);
        let empty = list.is_empty();
        ctx.work(popped as u64);
        ctx.server.dirty += popped as u64;
        notify_and_delete_if_empty(ctx, key, pop_event(m.from), empty);
        // Replays as a plain pop of as many as it took.
        let name: &[u8] = match m.from {
            Direction::Forward => b"LPOP",
            Direction::Backward => b"RPOP",
        };
        ctx.propagate(&[name, key, popped.to_string().as_bytes()]);
        return Ok(true);
    }
    Ok(false)
}

pub(super) fn lmpop(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let m = match parse_mpop(args, 1) {
        Ok(m) => m,
        Err(e) => return ctx.error(e),
    };
    if let Ok(false) = mpop_serve(ctx, args, &m) {
        ctx.w().null_array();
    }
}
