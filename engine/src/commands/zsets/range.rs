//! Ranges: ZRANGE (BYSCORE BYLEX REV LIMIT WITHSCORES) and its older
//! spellings ZREVRANGE ZRANGEBYSCORE ZREVRANGEBYSCORE ZRANGEBYLEX
//! ZREVRANGEBYLEX, ZRANGESTORE, ZCOUNT ZLEXCOUNT, and ZREMRANGEBYRANK
//! ZREMRANGEBYSCORE ZREMRANGEBYLEX.
//!
//! Every range becomes a rank interval of the set (see
//! [`ZSet::range_ranks`]), so the reply is encoded straight from the set.

use super::parse::{parse_lex_range, parse_score_range};
use super::{
    new_zset_seed, notify_and_delete_if_empty, store_or_delete, write_elements, zset_and_writer,
    NOT_AN_INTEGER, SYNTAX_ERROR,
};
use crate::cmd::{Ctx, Lookup};
use crate::types::zset::{LexRange, RangeSpec, ScoreRange, ZSet};
use crate::util::parse_i64_strict;
use crate::value::{Value, WRONGTYPE};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// ZRANGE and ZRANGESTORE: BYSCORE or BYLEX may pick another kind.
    Auto,
    Rank,
    Score,
    Lex,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    /// ZRANGE and ZRANGESTORE: REV may reverse.
    Auto,
    Forward,
    Reverse,
}

/// A parsed interval of one of the three kinds.
enum Interval {
    Rank(i64, i64),
    Score(ScoreRange),
    Lex(LexRange),
}

/// The parsed request of a ZRANGE-like command.
struct Request {
    interval: Interval,
    reverse: bool,
    withscores: bool,
    /// LIMIT offset count (count < 0: no limit).
    offset: i64,
    count: i64,
}

/// Redis's `zrangeGenericCommand` steps 1 and 2: the options after
/// `<src> <min> <max>` (at `src + 3`), their conflicts, then the interval.
fn parse_request(
    args: &[Vec<u8>],
    src: usize,
    store: bool,
    mut kind: Kind,
    mut direction: Direction,
) -> Result<Request, &'static str> {
    let mut withscores = false;
    let (mut offset, mut count) = (0i64, -1i64);
    let mut j = src + 3;
    while j < args.len() {
        let arg = &args[j];
        let left = args.len() - j - 1;
        if !store && arg.eq_ignore_ascii_case(b"withscores") {
            withscores = true;
        } else if arg.eq_ignore_ascii_case(b"limit") && left >= 2 {
            offset = parse_i64_strict(&args[j + 1]).ok_or(NOT_AN_INTEGER)?;
            count = parse_i64_strict(&args[j + 2]).ok_or(NOT_AN_INTEGER)?;
            j += 2;
        } else if direction == Direction::Auto && arg.eq_ignore_ascii_case(b"rev") {
            direction = Direction::Reverse;
        } else if kind == Kind::Auto && arg.eq_ignore_ascii_case(b"bylex") {
            kind = Kind::Lex;
        } else if kind == Kind::Auto && arg.eq_ignore_ascii_case(b"byscore") {
            kind = Kind::Score;
        } else {
            return Err(SYNTAX_ERROR);
        }
        j += 1;
    }
    let reverse = direction == Direction::Reverse;
    if kind == Kind::Auto {
        kind = Kind::Rank;
    }
    // Redis tests the parsed count, so `LIMIT 0 -1` passes with a rank range.
    if count != -1 && kind == Kind::Rank {
        return Err(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
        );
    }
    if withscores && kind == Kind::Lex {
        return Err("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
    }
    // Score and lex ranges are given as max, min when reversed.
    let (min, max) = if reverse && kind != Kind::Rank {
        (&args[src + 2], &args[src + 1])
    } else {
        (&args[src + 1], &args[src + 2])
    };
    let interval = match kind {
        Kind::Score => Interval::Score(parse_score_range(min, max)?),
        Kind::Lex => Interval::Lex(parse_lex_range(min, max)?),
        Kind::Rank | Kind::Auto => Interval::Rank(
            parse_i64_strict(min).ok_or(NOT_AN_INTEGER)?,
            parse_i64_strict(max).ok_or(NOT_AN_INTEGER)?,
        ),
    };
    Ok(Request {
        interval,
        reverse,
        withscores,
        offset,
        count,
    })
}

/// Redis's index sanitising for rank ranges: negative indices count from
/// the end; the result is the inclusive interval, or None when empty.
fn clamp_ranks(start: i64, end: i64, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    let start = if start < 0 { start + len } else { start }.max(0);
    let end = if end < 0 { end + len } else { end };
    if start > end || start >= len {
        return None;
    }
    Some((start as usize, end.min(len - 1) as usize))
}

/// The ranks `[lo, hi)` a request selects, walked downwards from `hi - 1`
/// when reversed.
fn selected_ranks(zset: &ZSet, req: &Request) -> Option<(usize, usize)> {
    let block = match &req.interval {
        Interval::Rank(start, end) => {
            let (first, last) = clamp_ranks(*start, *end, zset.len())?;
            // In a reversed rank range, rank 0 is the highest element.
            return Some(if req.reverse {
                (zset.len() - 1 - last, zset.len() - first)
            } else {
                (first, last + 1)
            });
        }
        Interval::Score(r) => zset.range_ranks(r, req.reverse),
        Interval::Lex(r) => zset.range_ranks(r, req.reverse),
    };
    let (lo, hi) = block?;
    // LIMIT: a negative offset walks off the end; a negative count is
    // unlimited.
    if req.offset < 0 {
        return None;
    }
    let offset = usize::try_from(req.offset).unwrap_or(usize::MAX);
    let len = hi - lo;
    if offset >= len {
        return None;
    }
    let take = match usize::try_from(req.count) {
        Ok(count) => count.min(len - offset),
        Err(_) => len - offset,
    };
    if take == 0 {
        return None;
    }
    Some(if req.reverse {
        (hi - offset - take, hi - offset)
    } else {
        (lo + offset, lo + offset + take)
    })
}

/// ZRANGE, ZREVRANGE, ZRANGEBYSCORE... replying to the client.
fn range_reply(ctx: &mut Ctx, args: &mut [Vec<u8>], kind: Kind, direction: Direction) {
    let req = match parse_request(args, 1, false, kind, direction) {
        Ok(r) => r,
        Err(e) => return ctx.error(e),
    };
    let (zset, mut w) = zset_and_writer(ctx, &args[1]);
    let zset = match zset {
        Err(_) => return w.error(WRONGTYPE),
        Ok(None) => return w.array_len(0),
        Ok(Some(z)) => &*z,
    };
    let (lo, hi) = selected_ranks(zset, &req).unwrap_or((0, 0));
    let n = hi - lo;
    // A listpack is walked for the interval, then again to its first rank.
    let walk_units = 2 * zset.walk_units();
    write_elements(
        &mut w,
        n,
        zset.iter_ranks(lo, hi, req.reverse),
        req.withscores,
    );
    ctx.work(1 + n as u64 + walk_units);
}

/// ZRANGE key min max [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]
pub(super) fn zrange(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    range_reply(ctx, args, Kind::Auto, Direction::Auto);
}

/// ZREVRANGE key start stop [WITHSCORES]
pub(super) fn zrevrange(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    range_reply(ctx, args, Kind::Rank, Direction::Reverse);
}

/// ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count]
pub(super) fn zrangebyscore(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    range_reply(ctx, args, Kind::Score, Direction::Forward);
}

/// ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT offset count]
pub(super) fn zrevrangebyscore(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    range_reply(ctx, args, Kind::Score, Direction::Reverse);
}

/// ZRANGEBYLEX key min max [LIMIT offset count]
pub(super) fn zrangebylex(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    range_reply(ctx, args, Kind::Lex, Direction::Forward);
}

/// ZREVRANGEBYLEX key max min [LIMIT offset count]
pub(super) fn zrevrangebylex(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    range_reply(ctx, args, Kind::Lex, Direction::Reverse);
}

/// ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]
///
/// An empty result deletes `dst`; a source of the wrong type leaves it.
pub(super) fn zrangestore(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let req = match parse_request(args, 2, true, Kind::Auto, Direction::Auto) {
        Ok(r) => r,
        Err(e) => return ctx.error(e),
    };
    let source = ctx.lookup_as_for(&args[2], Value::as_zset_mut, Lookup::Read);
    let mut walk_units = 0;
    let elements: Vec<(Box<[u8]>, f64)> = match source {
        Err(_) => return ctx.error(WRONGTYPE),
        Ok(None) => Vec::new(),
        Ok(Some(z)) => {
            walk_units = 2 * z.walk_units();
            let (lo, hi) = selected_ranks(z, &req).unwrap_or((0, 0));
            // Ascending order whatever REV says: the stored set is sorted.
            z.iter_ranks(lo, hi, false)
                .map(|(m, s)| (Box::from(m), s))
                .collect()
        }
    };
    let n = elements.len();
    ctx.work(1 + 2 * n as u64 + walk_units);
    let limits = ctx.limits();
    let zset = (n > 0).then(|| ZSet::from_sorted(elements, &limits, new_zset_seed(ctx)));
    store_or_delete(ctx, &args[1], zset);
}

/// The number of elements of `key` in `range` (ZCOUNT, ZLEXCOUNT).
fn count_in<R: RangeSpec>(ctx: &mut Ctx, key: &[u8], range: &R) {
    let (n, walk_units) = match ctx.lookup_as_for(key, Value::as_zset_mut, Lookup::Read) {
        Err(_) => return ctx.error(WRONGTYPE),
        Ok(None) => (0, 0),
        Ok(Some(z)) => (
            z.range_ranks(range, false).map_or(0, |(lo, hi)| hi - lo),
            z.walk_units(),
        ),
    };
    ctx.work(walk_units);
    ctx.int(n as i64);
}

/// ZCOUNT key min max
pub(super) fn zcount(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match parse_score_range(&args[2], &args[3]) {
        Err(e) => ctx.error(e),
        Ok(range) => count_in(ctx, &args[1], &range),
    }
}

/// ZLEXCOUNT key min max
pub(super) fn zlexcount(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match parse_lex_range(&args[2], &args[3]) {
        Err(e) => ctx.error(e),
        Ok(range) => count_in(ctx, &args[1], &range),
    }
}

/// ZREMRANGEBYRANK, ZREMRANGEBYSCORE and ZREMRANGEBYLEX once the interval
/// is parsed (Redis parses it before looking the key up).
fn remove_interval(ctx: &mut Ctx, key: &[u8], interval: &Interval) {
    let zset = match ctx.lookup_as(key, Value::as_zset_mut) {
        Err(_) => return ctx.error(WRONGTYPE),
        Ok(None) => return ctx.int(0),
        Ok(Some(z)) => z,
    };
    let block = match interval {
        Interval::Rank(start, end) => {
            clamp_ranks(*start, *end, zset.len()).map(|(first, last)| (first, last + 1))
        }
        Interval::Score(r) => zset.range_ranks(r, false),
        Interval::Lex(r) => zset.range_ranks(r, false),
    };
    let (lo, hi) = block.unwrap_or((0, 0));
    let walk_units = 2 * zset.walk_units();
    zset.remove_ranks(lo, hi, |_, _| {});
    let deleted = (hi - lo) as u64;
    ctx.work(1 + deleted + walk_units);
    ctx.server.dirty += deleted;
    let event = ctx.spec.name;
    notify_and_delete_if_empty(ctx, key, event, deleted);
    ctx.int(deleted as i64);
}

/// ZREMRANGEBYRANK key start stop
pub(super) fn zremrangebyrank(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let (Some(start), Some(end)) = (parse_i64_strict(&args[2]), parse_i64_strict(&args[3])) else {
        return ctx.error(NOT_AN_INTEGER);
    };
    remove_interval(ctx, &args[1], &Interval::Rank(start, end));
}

/// ZREMRANGEBYSCORE key min max
pub(super) fn zremrangebyscore(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match parse_score_range(&args[2], &args[3]) {
        Err(e) => ctx.error(e),
        Ok(range) => remove_interval(ctx, &args[1], &Interval::Score(range)),
    }
}

/// ZREMRANGEBYLEX key min max
pub(super) fn zremrangebylex(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match parse_lex_range(&args[2], &args[3]) {
        Err(e) => ctx.error(e),
        Ok(range) => remove_interval(ctx, &args[1], &Interval::Lex(range)),
    }
}
