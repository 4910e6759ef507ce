//! BITOP AND|OR|XOR|NOT destkey key [key ...]: a bitwise operation over
//! strings, stored at the destination.

use super::{byte_work, is_keyword, BITMAP, SYNTAX_ERROR, WRITE_SLOW};
use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::db::Db;
use crate::notify::{class, notify};
use crate::value::{RString, Value, WRONGTYPE};

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    name: "bitop",
    arity: -4,
    flags: WRITE | DENYOOM | O_N,
    first_key: 2,
    last_key: -1,
    acl_categories: WRITE_SLOW,
    summary: "Perform bitwise operations between strings",
    since: "2.6.0",
    complexity: "O(N)",
    handler: Some(bitop),
    ..BITMAP
}];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    And,
    Or,
    Xor,
    Not,
}

impl Op {
    fn parse(arg: &[u8]) -> Option<Op> {
        [
            ("and", Op::And),
            ("or", Op::Or),
            ("xor", Op::Xor),
            ("not", Op::Not),
        ]
        .into_iter()
        .find(|(name, _)| is_keyword(arg, name))
        .map(|(_, op)| op)
    }

    /// Folds `bytes` into the first bytes of `acc`.
    fn apply(self, acc: &mut [u8], bytes: &[u8]) {
        let pairs = acc.iter_mut().zip(bytes);
        match self {
            Op::And => pairs.for_each(|(a, b)| *a &= b),
            Op::Or => pairs.for_each(|(a, b)| *a |= b),
            Op::Xor => pairs.for_each(|(a, b)| *a ^= b),
            Op::Not => {}
        }
    }
}

/// BITOP: the length of the result (the longest source); shorter sources
/// and missing keys count as zero-padded. An empty result deletes the
/// destination.
fn bitop(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let Some(op) = Op::parse(&args[1]) else {
        return ctx.error(SYNTAX_ERROR);
    };
    if op == Op::Not && args.len() != 4 {
        return ctx.error("ERR BITOP NOT must be called with a single source key.");
    }
    let Some(result) = compute(ctx, op, &args[3..]) else {
        return ctx.error(WRONGTYPE);
    };
    let len = result.len();
    let dest = &args[2];
    if len > 0 {
        // Redis stores the result as a raw string, however short.
        let value = Value::Str(RString::new_raw(result));
        ctx.store(dest, value, false);
        notify(ctx, class::STRING, "set", dest);
    } else {
        let lazy = ctx.server.config.lazyfree_lazy_server_del;
        if ctx.delete(dest, lazy) {
            notify(ctx, class::GENERIC, "del", dest);
        }
    }
    ctx.int(len as i64);
}

/// The result of `op` over the strings at `sources`, or `None` when one
/// holds another type. Charges the keys looked up and the bytes read and
/// written.
fn compute(ctx: &mut Ctx, op: Op, sources: &[Vec<u8>]) -> Option<Vec<u8>> {
    // The first pass checks the types and sizes the result, the second
    // reads the sources in place: none is copied.
    let (mut max_len, mut min_len, mut total_len) = (0, usize::MAX, 0usize);
    // Each source is a read: a miss raises `keymiss`.
    for key in sources {
        let len = match ctx.lookup_read(key) {
            None => 0,
            Some(Value::Str(s)) => s.len(),
            #[allow(unreachable_patterns)]
            Some(_) => return None,
        };
        max_len = max_len.max(len);
        min_len = min_len.min(len);
        total_len = total_len.saturating_add(len);
    }
    // A unit per source looked up, and the bytes read and written.
    let units = sources.len() as u64 + byte_work(total_len.saturating_add(max_len));
    ctx.work(units);
    let mut result = vec![0u8; max_len];
    if max_len == 0 {
        return Some(result);
    }
    let db: &Db = ctx.db();
    let bytes_of = |key: &[u8]| string_bytes(db, key);
    let first = bytes_of(&sources[0]);
    result[..first.len()].copy_from_slice(first);
    match op {
        Op::Not => result.iter_mut().for_each(|b| *b = !*b),
        // Past the end of a source its bytes are zeros: OR and XOR leave
        // the result's, AND clears them past the shortest source.
        Op::And | Op::Or | Op::Xor => {
            for key in &sources[1..] {
                op.apply(&mut result, bytes_of(key));
            }
            if op == Op::And {
                result[min_len..].fill(0);
            }
        }
    }
    Some(result)
}

/// The bytes of the string at `key`, already looked up (empty if missing).
fn string_bytes<'d>(db: &'d Db, key: &[u8]) -> &'d [u8] {
    match db.get(key) {
        Some(Value::Str(s)) => s.as_bytes(),
        _ => &[],
    }
}
