//! XLEN XRANGE XREVRANGE, and the reply of entries every read shares: an
//! array per entry of its ID and its fields and values (an array in RESP3
//! too).

use super::{is_word, lookup_stream, parse_i64, wrongtype, SYNTAX_ERROR};
use crate::cmd::{Ctx, Lookup};
use crate::resp::ReplyWriter;
use crate::types::stream::{Item, Node, Stream, StreamId};

/// Writes one entry: `[id, [field, value, ...]]`.
pub(super) fn write_entry(w: &mut ReplyWriter<'_>, node: &Node, item: &Item) {
    w.array_len(2);
    w.bulk(item.id.to_string().as_bytes());
    w.array_len(item.pairs_count() * 2);
    for (f, v) in node.pairs(item) {
        w.bulk(f);
        w.bulk(v);
    }
}

/// Writes the entries from `start` to `end` (at most `count`, 0: all) as
/// an array; returns the work done (entries looked at and written).
pub(super) fn write_range(
    w: &mut ReplyWriter<'_>,
    s: &Stream,
    (start, end): (StreamId, StreamId),
    count: usize,
    rev: bool,
) -> u64 {
    let mut n = 0usize;
    let mut body = Vec::new();
    let mut inner = ReplyWriter::new(&mut body, w.protocol());
    let seen = s.walk(start, end, rev, |node, item| {
        write_entry(&mut inner, node, item);
        n += 1;
        count == 0 || n < count
    });
    w.array_len(n);
    w.raw(&body);
    seen + n as u64
}

/// `streamParseIntervalIDOrReply`: an ID, or `(ID` for an exclusive bound.
fn parse_interval(arg: &[u8], missing_seq: u64) -> Result<(StreamId, bool), &'static str> {
    if arg.len() > 1 && arg[0] == b'(' {
        let id = super::parse_strict_id(&arg[1..], missing_seq)?;
        Ok((id, true))
    } else {
        Ok((super::parse_id(arg, missing_seq)?, false))
    }
}

pub(super) fn xlen(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match lookup_stream(ctx, &args[1], Lookup::Read) {
        Err(()) => wrongtype(ctx),
        Ok(s) => {
            let n = s.map_or(0, |s| s.len());
            ctx.int(n as i64)
        }
    }
}

fn range_generic(ctx: &mut Ctx, args: &[Vec<u8>], rev: bool) {
    let (start_arg, end_arg) = if rev {
        (&args[3], &args[2])
    } else {
        (&args[2], &args[3])
    };
    let start = match parse_interval(start_arg, 0) {
        Err(e) => return ctx.error(e),
        Ok((id, false)) => id,
        Ok((id, true)) => match id.next() {
            Some(id) => id,
            None => return ctx.error("ERR invalid start ID for the interval"),
        },
    };
    let end = match parse_interval(end_arg, u64::MAX) {
        Err(e) => return ctx.error(e),
        Ok((id, false)) => id,
        Ok((id, true)) => match id.prev() {
            Some(id) => id,
            None => return ctx.error("ERR invalid end ID for the interval"),
        },
    };
    let mut count: i64 = -1;
    let mut j = 4;
    while j < args.len() {
        if is_word(&args[j], "count") && j + 1 < args.len() {
            count = match parse_i64(&args[j + 1]) {
                Ok(n) => n.max(0),
                Err(e) => return ctx.error(e),
            };
            j += 2;
        } else {
            return ctx.error(SYNTAX_ERROR);
        }
    }
    let (found, mut w) = ctx.lookup_read_and_writer(&args[1]);
    let work = match found.map(|v| v.as_stream_mut()) {
        None => {
            w.array_len(0);
            1
        }
        Some(None) => return wrongtype(ctx),
        Some(Some(_)) if count == 0 => {
            w.null_array();
            1
        }
        Some(Some(s)) => {
            // -1 (no COUNT) reads everything.
            let count = count.max(0) as usize;
            write_range(&mut w, s, (start, end), count, rev)
        }
    };
    ctx.work(work);
}

pub(super) fn xrange(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    range_generic(ctx, args, false);
}

pub(super) fn xrevrange(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    range_generic(ctx, args, true);
}
