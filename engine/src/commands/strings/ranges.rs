//! APPEND STRLEN GETRANGE SUBSTR SETRANGE: the commands that read or write
//! part of a string, bounded by `proto-max-bulk-len` when they grow it.

use super::{
    string_at, WrongType, NOT_AN_INTEGER, READ_FAST, READ_SLOW, STRING, WRITE_FAST, WRITE_SLOW,
};
use crate::cmd::{flags::*, CommandSpec, Ctx, Lookup};
use crate::notify::{class, notify};
use crate::util::parse_i64_strict;
use crate::value::{RString, Value, WRONGTYPE};

const TOO_LONG: &str = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";

/// Bytes copied (APPEND, SETRANGE) per unit of work.
const BYTES_PER_WORK_UNIT: u64 = 64;

const GETRANGE_COMPLEXITY: &str = "O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings.";

pub const COMMANDS: &[CommandSpec] = &[
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
];

fn append(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let suffix = std::mem::take(&mut args[2]);
    let key = &args[1];
    let limit = ctx.server.config.proto_max_bulk_len_bytes as u128;
    let bytes = match string_at(ctx, key, Lookup::Write) {
        Err(WrongType) => return ctx.error(WRONGTYPE),
        Ok(None) => {
            // A new key takes the argument as it is (not raw-encoded).
            let len = suffix.len();
            ctx.store(key, Value::Str(RString::new(suffix)), false);
            notify(ctx, class::STRING, "append", key);
            return ctx.int(len as i64);
        }
        Ok(Some(s)) => {
            if s.len() as u128 + suffix.len() as u128 > limit {
                return ctx.error(TOO_LONG);
            }
            let mut bytes = s.take_bytes();
            bytes.extend_from_slice(&suffix);
            bytes
        }
    };
    ctx.work(suffix.len() as u64 / BYTES_PER_WORK_UNIT);
    let len = bytes.len();
    // Storing (rather than editing in place) keeps every write on one path.
    ctx.store(key, Value::Str(RString::new_raw(bytes)), true);
    notify(ctx, class::STRING, "append", key);
    ctx.int(len as i64);
}

fn strlen(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match string_at(ctx, &args[1], Lookup::Read) {
        Err(WrongType) => ctx.error(WRONGTYPE),
        Ok(s) => {
            let len = s.map_or(0, |s| s.len());
            ctx.int(len as i64);
        }
    }
}

/// GETRANGE and SUBSTR, with Redis's index arithmetic (`getrangeCommand`).
fn getrange(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let (Some(start), Some(end)) = (parse_i64_strict(&args[2]), parse_i64_strict(&args[3])) else {
        return ctx.error(NOT_AN_INTEGER);
    };
    let (value, mut w) = ctx.lookup_read_and_writer(&args[1]);
    let s = match value {
        None => return w.bulk(b""),
        Some(Value::Str(s)) => s.as_bytes(),
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
    let mut bytes = match string_at(ctx, key, Lookup::Write) {
        Err(WrongType) => return ctx.error(WRONGTYPE),
        // Setting nothing on a missing key creates nothing.
        Ok(None) if patch.is_empty() => return ctx.int(0),
        Ok(Some(s)) if patch.is_empty() => {
            let len = s.len();
            return ctx.int(len as i64);
        }
        _ if new_len > limit => return ctx.error(TOO_LONG),
        Ok(None) => Vec::new(),
        Ok(Some(s)) => s.take_bytes(),
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
    ctx.store(key, Value::Str(RString::new_raw(bytes)), true);
    notify(ctx, class::STRING, "setrange", key);
    ctx.int(len as i64);
}
