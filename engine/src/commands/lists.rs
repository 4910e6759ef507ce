//! List commands: LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LLEN LRANGE LINDEX
//! LSET LINSERT LREM LTRIM LPOS LMOVE RPOPLPUSH LMPOP, and the blocking
//! BLPOP BRPOP BLMOVE BRPOPLPUSH BLMPOP (in `lists/blocking.rs`), with Redis
//! 7.0's replies and errors (t_list.c), including the order in which
//! arguments, keys and types are checked.
//!
//! A list that becomes empty is deleted. A push into a list that already
//! exists signals the key ready for blocked clients (a new key is signalled
//! by `Ctx::store`).

use crate::cmd::{flags::*, CommandSpec, Ctx, Lookup, WrongType};
use crate::notify::{class, notify};
use crate::resp::ReplyWriter;
use crate::types::list::{Direction, List};
use crate::util::parse_i64_strict;
use crate::value::{Value, WRONGTYPE};

mod blocking;
mod lpos;
mod mpop;

use lpos::lpos;
use mpop::{lmpop, mpop_serve, parse_mpop};

pub(crate) const SYNTAX_ERROR: &str = "ERR syntax error";
pub(crate) const NOT_AN_INTEGER: &str = "ERR value is not an integer or out of range";
const NOT_POSITIVE: &str = "ERR value is out of range, must be positive";
const NO_SUCH_KEY: &str = "ERR no such key";
const INDEX_OUT_OF_RANGE: &str = "ERR index out of range";

const LIST: CommandSpec = CommandSpec {
    group: "list",
    first_key: 1,
    last_key: 1,
    key_step: 1,
    ..CommandSpec::DEFAULT
};

const READ_FAST: &[&str] = &["read", "list", "fast"];
const READ_SLOW: &[&str] = &["read", "list", "slow"];
const WRITE_FAST: &[&str] = &["write", "list", "fast"];
const WRITE_SLOW: &[&str] = &["write", "list", "slow"];
const WRITE_BLOCKING: &[&str] = &["write", "list", "slow", "blocking"];

const PUSH_COMPLEXITY: &str = "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.";
const POP_COMPLEXITY: &str = "O(N) where N is the number of elements returned";
const MPOP_COMPLEXITY: &str =
    "O(N+M) where N is the number of provided keys and M is the number of elements returned.";
const BPOP_COMPLEXITY: &str = "O(N) where N is the number of provided keys.";

/// Key-spec flags, as COMMAND INFO shows them (for two-key commands, the
/// source's).
const INSERT: &[&str] = &["RW", "insert"];
const ACCESS_DELETE: &[&str] = &["RW", "access", "delete"];
const READ_ACCESS: &[&str] = &["RO", "access"];

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "lpush",
        arity: -3,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Prepend one or multiple elements to a list",
        complexity: PUSH_COMPLEXITY,
        key_spec_flags: INSERT,
        handler: Some(lpush),
        ..LIST
    },
    CommandSpec {
        name: "rpush",
        arity: -3,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Append one or multiple elements to a list",
        complexity: PUSH_COMPLEXITY,
        key_spec_flags: INSERT,
        handler: Some(rpush),
        ..LIST
    },
    CommandSpec {
        name: "lpushx",
        arity: -3,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Prepend an element to a list, only if the list exists",
        since: "2.2.0",
        complexity: PUSH_COMPLEXITY,
        key_spec_flags: INSERT,
        handler: Some(lpushx),
        ..LIST
    },
    CommandSpec {
        name: "rpushx",
        arity: -3,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Append an element to a list, only if the list exists",
        since: "2.2.0",
        complexity: PUSH_COMPLEXITY,
        key_spec_flags: INSERT,
        handler: Some(rpushx),
        ..LIST
    },
    CommandSpec {
        name: "lpop",
        arity: -2,
        // O_N: the COUNT form pops and replies with any number of elements.
        flags: WRITE | FAST | O_N,
        acl_categories: WRITE_FAST,
        summary: "Remove and get the first elements in a list",
        complexity: POP_COMPLEXITY,
        key_spec_flags: ACCESS_DELETE,
        handler: Some(lpop),
        ..LIST
    },
    CommandSpec {
        name: "rpop",
        arity: -2,
        flags: WRITE | FAST | O_N,
        acl_categories: WRITE_FAST,
        summary: "Remove and get the last elements in a list",
        complexity: POP_COMPLEXITY,
        key_spec_flags: ACCESS_DELETE,
        handler: Some(rpop),
        ..LIST
    },
    CommandSpec {
        name: "llen",
        arity: 2,
        flags: READONLY | FAST,
        acl_categories: READ_FAST,
        summary: "Get the length of a list",
        key_spec_flags: &["RO"],
        handler: Some(llen),
        ..LIST
    },
    CommandSpec {
        name: "lrange",
        arity: 4,
        flags: READONLY | O_N,
        acl_categories: READ_SLOW,
        summary: "Get a range of elements from a list",
        complexity: "O(S+N) where S is the distance of start offset from HEAD for small lists, from nearest end (HEAD or TAIL) for large lists; and N is the number of elements in the specified range.",
        key_spec_flags: READ_ACCESS,
        handler: Some(lrange),
        ..LIST
    },
    CommandSpec {
        name: "lindex",
        arity: 3,
        flags: READONLY | O_N,
        acl_categories: READ_SLOW,
        summary: "Get an element from a list by its index",
        complexity: "O(N) where N is the number of elements to traverse to get to the element at index. This makes asking for the first or the last element of the list O(1).",
        key_spec_flags: READ_ACCESS,
        handler: Some(lindex),
        ..LIST
    },
    CommandSpec {
        name: "lset",
        arity: 4,
        flags: WRITE | DENYOOM | O_N,
        acl_categories: WRITE_SLOW,
        summary: "Set the value of an element in a list by its index",
        complexity: "O(N) where N is the length of the list. Setting either the first or the last element of the list is O(1).",
        key_spec_flags: &["RW", "update"],
        handler: Some(lset),
        ..LIST
    },
    CommandSpec {
        name: "linsert",
        arity: 5,
        flags: WRITE | DENYOOM | O_N,
        acl_categories: WRITE_SLOW,
        summary: "Insert an element before or after another element in a list",
        since: "2.2.0",
        complexity: "O(N) where N is the number of elements to traverse before seeing the value pivot. This means that inserting somewhere on the left end on the list (head) can be considered O(1) and inserting somewhere on the right end (tail) is O(N).",
        key_spec_flags: INSERT,
        handler: Some(linsert),
        ..LIST
    },
    CommandSpec {
        name: "lrem",
        arity: 4,
        flags: WRITE | O_N,
        acl_categories: WRITE_SLOW,
        summary: "Remove elements from a list",
        complexity: "O(N+M) where N is the length of the list and M is the number of elements removed.",
        key_spec_flags: &["RW", "delete"],
        handler: Some(lrem),
        ..LIST
    },
    CommandSpec {
        name: "ltrim",
        arity: 4,
        flags: WRITE | O_N,
        acl_categories: WRITE_SLOW,
        summary: "Trim a list to the specified range",
        complexity: "O(N) where N is the number of elements to be removed by the operation.",
        key_spec_flags: &["RW", "delete"],
        handler: Some(ltrim),
        ..LIST
    },
    CommandSpec {
        name: "lpos",
        arity: -3,
        flags: READONLY | O_N,
        acl_categories: READ_SLOW,
        summary: "Return the index of matching elements on a list",
        since: "6.0.6",
        complexity: "O(N) where N is the number of elements in the list, for the average case. When searching for elements near the head or the tail of the list, or when the MAXLEN option is provided, the command may run in constant time.",
        key_spec_flags: READ_ACCESS,
        handler: Some(lpos),
        ..LIST
    },
    CommandSpec {
        name: "lmove",
        arity: 5,
        flags: WRITE | DENYOOM,
        last_key: 2,
        acl_categories: WRITE_SLOW,
        summary: "Pop an element from a list, push it to another list and return it",
        since: "6.2.0",
        key_spec_flags: ACCESS_DELETE,
        handler: Some(lmove),
        ..LIST
    },
    CommandSpec {
        name: "rpoplpush",
        arity: 3,
        flags: WRITE | DENYOOM,
        last_key: 2,
        acl_categories: WRITE_SLOW,
        summary: "Remove the last element in a list, prepend it to another list and return it",
        since: "1.2.0",
        key_spec_flags: ACCESS_DELETE,
        handler: Some(rpoplpush),
        ..LIST
    },
    CommandSpec {
        name: "lmpop",
        arity: -4,
        // The keys follow `numkeys` (Redis's movablekeys): no fixed range.
        flags: WRITE | O_N,
        first_key: 0,
        last_key: 0,
        key_step: 0,
        acl_categories: WRITE_SLOW,
        summary: "Pop elements from a list",
        since: "7.0.0",
        complexity: MPOP_COMPLEXITY,
        key_spec_flags: ACCESS_DELETE,
        handler: Some(lmpop),
        ..LIST
    },
    CommandSpec {
        name: "blpop",
        arity: -3,
        flags: WRITE | NOSCRIPT | BLOCKING,
        last_key: -2,
        acl_categories: WRITE_BLOCKING,
        summary: "Remove and get the first element in a list, or block until one is available",
        since: "2.0.0",
        complexity: BPOP_COMPLEXITY,
        key_spec_flags: ACCESS_DELETE,
        handler: Some(blocking::blpop),
        ..LIST
    },
    CommandSpec {
        name: "brpop",
        arity: -3,
        flags: WRITE | NOSCRIPT | BLOCKING,
        last_key: -2,
        acl_categories: WRITE_BLOCKING,
        summary: "Remove and get the last element in a list, or block until one is available",
        since: "2.0.0",
        complexity: BPOP_COMPLEXITY,
        key_spec_flags: ACCESS_DELETE,
        handler: Some(blocking::brpop),
        ..LIST
    },
    CommandSpec {
        name: "blmove",
        arity: 6,
        flags: WRITE | DENYOOM | NOSCRIPT | BLOCKING,
        last_key: 2,
        acl_categories: WRITE_BLOCKING,
        summary: "Pop an element from a list, push it to another list and return it; or block until one is available",
        since: "6.2.0",
        key_spec_flags: ACCESS_DELETE,
        handler: Some(blocking::blmove),
        ..LIST
    },
    CommandSpec {
        name: "brpoplpush",
        arity: 4,
        flags: WRITE | DENYOOM | NOSCRIPT | BLOCKING,
        last_key: 2,
        acl_categories: WRITE_BLOCKING,
        summary: "Pop an element from a list, push it to another list and return it; or block until one is available",
        since: "2.2.0",
        key_spec_flags: ACCESS_DELETE,
        handler: Some(blocking::brpoplpush),
        ..LIST
    },
    CommandSpec {
        name: "blmpop",
        arity: -5,
        flags: WRITE | BLOCKING | O_N,
        first_key: 0,
        last_key: 0,
        key_step: 0,
        acl_categories: WRITE_BLOCKING,
        summary: "Pop elements from a list, or block until one is available",
        since: "7.0.0",
        complexity: MPOP_COMPLEXITY,
        key_spec_flags: ACCESS_DELETE,
        handler: Some(blocking::blmpop),
        ..LIST
    },
];

/// Redis compares option words as C strings, so an embedded NUL ends them.
pub(crate) fn c_str(arg: &[u8]) -> &[u8] {
    &arg[..arg.iter().position(|&c| c == 0).unwrap_or(arg.len())]
}

/// `LEFT` or `RIGHT` (Redis's `getListPositionFromObjectOrReply`): the end
/// of the list, as the direction a pop from it walks.
pub(crate) fn parse_end(arg: &[u8]) -> Option<Direction> {
    let word = c_str(arg);
    if word.eq_ignore_ascii_case(b"left") {
        Some(Direction::Forward)
    } else if word.eq_ignore_ascii_case(b"right") {
        Some(Direction::Backward)
    } else {
        None
    }
}

/// The list in `value`: `Ok(None)` for a missing key.
pub(crate) fn as_list(value: Option<&mut Value>) -> Result<Option<&mut List>, WrongType> {
    match value {
        None => Ok(None),
        Some(v) => v.as_list_mut().map(Some).ok_or(WrongType),
    }
}

/// A Redis list index (negative counts from the tail) as a position in a
/// list of `len` entries, if in range.
fn resolve_index(len: usize, index: i64) -> Option<usize> {
    let len = len as i64;
    let index = if index < 0 { len + index } else { index };
    (0..len).contains(&index).then_some(index as usize)
}

/// Redis's range arithmetic (LRANGE, LTRIM): the inclusive range `start..=end`
/// within `len` entries, or None when empty.
pub(crate) fn resolve_range(len: usize, start: i64, end: i64) -> Option<(usize, usize)> {
    let len = len as i64;
    let start = if start < 0 { len + start } else { start }.max(0);
    let end = if end < 0 { len + end } else { end };
    if start > end || start >= len {
        return None;
    }
    Some((start as usize, end.min(len - 1) as usize))
}

/// Raises the list write's `event` on `key`, then deletes the key if its
/// list was emptied (Redis never keeps an empty list), raising `del` after
/// it, in Redis's order.
pub(crate) fn notify_and_delete_if_empty(ctx: &mut Ctx, key: &[u8], event: &str, empty: bool) {
    notify(ctx, class::LIST, event, key);
    if empty {
        ctx.delete(key, false);
        notify(ctx, class::GENERIC, "del", key);
    }
}

/// The event a push at `to` raises.
pub(crate) fn push_event(to: Direction) -> &'static str {
    match to {
        Direction::Forward => "lpush",
        Direction::Backward => "rpush",
    }
}

/// The event a pop at `from` raises.
pub(crate) fn pop_event(from: Direction) -> &'static str {
    match from {
        Direction::Forward => "lpop",
        Direction::Backward => "rpop",
    }
}

/// Writes the `count` entries at the `from` end (in pop order) as an array
/// and removes them; returns how many. Redis's `listPopRangeAndReplyWithKey`
/// without the key.
pub(crate) fn pop_range_reply(
    w: &mut ReplyWriter,
    list: &mut List,
    from: Direction,
    count: usize,
) -> usize {
    let n = count.min(list.len());
    w.array_len(n);
    let start = match from {
        Direction::Forward => 0,
        Direction::Backward => list.len().saturating_sub(1),
    };
    for entry in list.iter_from(start, from).take(n) {
        w.bulk(entry);
    }
    match from {
        Direction::Forward => list.drain_front(n),
        Direction::Backward => list.drain_back(n),
    }
    n
}

fn wrong_arity(ctx: &mut Ctx) {
    let msg = format!(
        "ERR wrong number of arguments for '{}' command",
        ctx.spec.name
    );
    ctx.error(&msg);
}

/// LPUSH RPUSH LPUSHX RPUSHX (Redis's `pushGenericCommand`); `existing_only`
/// for the X forms.
fn push_generic(ctx: &mut Ctx, args: &mut [Vec<u8>], to: Direction, existing_only: bool) {
    let Some((key, elements)) = args[1..].split_first() else {
        return wrong_arity(ctx);
    };
    let pushed = elements.len();
    let fill = ctx.limits().list_max_listpack_size;
    match ctx.lookup_as(key, Value::as_list_mut) {
        Err(WrongType) => return ctx.error(WRONGTYPE),
        Ok(Some(list)) => {
            for e in elements {
                list.push(to, e);
            }
            let len = list.len();
            ctx.server.dirty += pushed as u64;
            ctx.signal_key_ready(key);
            // Redis replies before it raises the event, which a RESP3
            // client subscribed to its own keys sees in that order.
            ctx.int(len as i64);
            notify(ctx, class::LIST, push_event(to), key);
        }
        Ok(None) if existing_only => return ctx.int(0),
        Ok(None) => {
            let mut list = List::new(fill);
            for e in elements {
                list.push(to, e);
            }
            let len = list.len();
            ctx.store(key, Value::List(Box::new(list)), false);
            ctx.server.dirty += pushed as u64 - 1;
            ctx.int(len as i64);
            notify(ctx, class::LIST, push_event(to), key);
        }
    }
    ctx.work(pushed as u64);
}

fn lpush(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    push_generic(ctx, args, Direction::Forward, false);
}

fn rpush(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    push_generic(ctx, args, Direction::Backward, false);
}

fn lpushx(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    push_generic(ctx, args, Direction::Forward, true);
}

fn rpushx(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    push_generic(ctx, args, Direction::Backward, true);
}

/// LPOP and RPOP, with Redis's `popGenericCommand` quirks: a missing key
/// is a null array with COUNT (even COUNT 0) and a null bulk without;
/// COUNT 0 on a list is an empty array.
fn pop_generic(ctx: &mut Ctx, args: &mut [Vec<u8>], from: Direction) {
    if args.len() > 3 {
        return wrong_arity(ctx);
    }
    let count = match args.get(2) {
        None => None,
        Some(arg) => match parse_i64_strict(arg) {
            Some(n) if n >= 0 => Some(n as u64),
            _ => return ctx.error(NOT_POSITIVE),
        },
    };
    let key = &args[1];
    let (value, mut w) = ctx.lookup_and_writer(key);
    let list = match as_list(value) {
        Err(WrongType) => return w.error(WRONGTYPE),
        Ok(None) if count.is_some() => return w.null_array(),
        Ok(None) => return w.null(),
        Ok(Some(list)) => list,
    };
    let popped = match count {
        Some(0) => {
            w.array_len(0);
            return;
        }
        None => match list.pop(from) {
            Some(v) => {
                w.bulk(&v);
                1
            }
            None => return w.null(),
        },
        Some(n) => pop_range_reply(&mut w, list, from, usize::try_from(n).unwrap_or(usize::MAX)),
    };
    let empty = list.is_empty();
    ctx.work(popped as u64);
    ctx.server.dirty += popped as u64;
    notify_and_delete_if_empty(ctx, key, pop_event(from), empty);
}

fn lpop(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    pop_generic(ctx, args, Direction::Forward);
}

fn rpop(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    pop_generic(ctx, args, Direction::Backward);
}

fn llen(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match ctx.lookup_as_for(&args[1], Value::as_list_mut, Lookup::Read) {
        Err(WrongType) => ctx.error(WRONGTYPE),
        Ok(list) => {
            let len = list.map_or(0, |l| l.len());
            ctx.int(len as i64);
        }
    }
}

fn lrange(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let (Some(start), Some(end)) = (parse_i64_strict(&args[2]), parse_i64_strict(&args[3])) else {
        return ctx.error(NOT_AN_INTEGER);
    };
    if crate::snapshot_read::open_list(ctx, &args[1], start, end) {
        return; // answered in slices, as of now
    }
    let (value, mut w) = ctx.lookup_read_and_writer(&args[1]);
    let list = match as_list(value) {
        Err(WrongType) => return w.error(WRONGTYPE),
        Ok(None) => return w.array_len(0),
        Ok(Some(list)) => list,
    };
    let Some((from, to)) = resolve_range(list.len(), start, end) else {
        return w.array_len(0);
    };
    let n = to - from + 1;
    w.array_len(n);
    let (entries, steps) = list.iter_from_with_steps(from, Direction::Forward);
    for entry in entries.take(n) {
        w.bulk(entry);
    }
    ctx.work((steps + n) as u64);
}

pub(crate) fn lindex(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    // Unlike LRANGE, the key is looked up before the index is parsed.
    let (value, mut w) = ctx.lookup_read_and_writer(&args[1]);
    let list = match as_list(value) {
        Err(WrongType) => return w.error(WRONGTYPE),
        Ok(None) => return w.null(),
        Ok(Some(list)) => list,
    };
    let Some(index) = parse_i64_strict(&args[2]) else {
        return w.error(NOT_AN_INTEGER);
    };
    let steps = match resolve_index(list.len(), index).and_then(|i| list.get(i)) {
        Some((entry, steps)) => {
            w.bulk(entry);
            steps
        }
        None => {
            w.null();
            0
        }
    };
    ctx.work(steps as u64);
}

fn lset(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let list = match ctx.lookup_as(&args[1], Value::as_list_mut) {
        Err(WrongType) => return ctx.error(WRONGTYPE),
        Ok(None) => return ctx.error(NO_SUCH_KEY),
        Ok(Some(list)) => list,
    };
    let Some(index) = parse_i64_strict(&args[2]) else {
        return ctx.error(NOT_AN_INTEGER);
    };
    match resolve_index(list.len(), index).and_then(|i| list.set(i, &args[3])) {
        None => ctx.error(INDEX_OUT_OF_RANGE),
        Some(steps) => {
            ctx.work(steps as u64);
            ctx.server.dirty += 1;
            notify(ctx, class::LIST, "lset", &args[1]);
            ctx.ok();
        }
    }
}

fn linsert(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let place = c_str(&args[2]);
    let after = if place.eq_ignore_ascii_case(b"after") {
        true
    } else if place.eq_ignore_ascii_case(b"before") {
        false
    } else {
        return ctx.error(SYNTAX_ERROR);
    };
    let key = &args[1];
    let list = match ctx.lookup_as(key, Value::as_list_mut) {
        Err(WrongType) => return ctx.error(WRONGTYPE),
        Ok(None) => return ctx.int(0),
        Ok(Some(list)) => list,
    };
    let (inserted, visited) = list.insert_by_pivot(&args[3], after, &args[4]);
    let len = list.len();
    ctx.work(visited as u64);
    if !inserted {
        return ctx.int(-1);
    }
    ctx.server.dirty += 1;
    ctx.signal_key_ready(key);
    notify(ctx, class::LIST, "linsert", key);
    ctx.int(len as i64);
}

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
    // Redis negates a negative count; -LONG_MIN wraps and then never
    // matches the removed count, which removes every match, as this does.
    let limit = (count != 0).then(|| usize::try_from(count.unsigned_abs()).unwrap_or(usize::MAX));
    let (removed, visited) = list.remove_matching(&args[3], limit, direction);
    let empty = list.is_empty();
    ctx.work((visited + removed) as u64);
    ctx.server.dirty += removed as u64;
    if removed > 0 {
        notify_and_delete_if_empty(ctx, key, "lrem", empty);
    }
    ctx.int(removed as i64);
}

fn ltrim(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let (Some(start), Some(end)) = (parse_i64_strict(&args[2]), parse_i64_strict(&args[3])) else {
        return ctx.error(NOT_AN_INTEGER);
    };
    let key = &args[1];
    let list = match ctx.lookup_as(key, Value::as_list_mut) {
        Err(WrongType) => return ctx.error(WRONGTYPE),
        Ok(None) => return ctx.ok(),
        Ok(Some(list)) => list,
    };
    let len = list.len();
    let (head, tail) = match resolve_range(len, start, end) {
        None => (len, 0),
        Some((from, to)) => (from, len - to - 1),
    };
    list.drain_front(head);
    list.drain_back(tail);
    let empty = list.is_empty();
    ctx.work((head + tail) as u64);
    ctx.server.dirty += (head + tail) as u64;
    notify_and_delete_if_empty(ctx, key, "ltrim", empty);
    ctx.ok();
}

/// LMOVE's core (Redis's `lmoveGenericCommand`): pops from `src` at `from`,
/// pushes onto `dst` at `to`, replies with the element. A missing source is
/// a null reply; either key holding another type is WRONGTYPE, checked
/// before anything moves.
pub(crate) fn lmove_generic(ctx: &mut Ctx, src: &[u8], dst: &[u8], from: Direction, to: Direction) {
    match ctx.lookup_as(src, Value::as_list_mut) {
        Err(WrongType) => return ctx.error(WRONGTYPE),
        Ok(None) => return ctx.null(),
        Ok(Some(_)) => {}
    }
    let dst_exists = match ctx.lookup_as(dst, Value::as_list_mut) {
        Err(WrongType) => return ctx.error(WRONGTYPE),
        Ok(found) => found.is_some(),
    };
    let Ok(Some(list)) = ctx.lookup_as(src, Value::as_list_mut) else {
        return ctx.null();
    };
    let Some(value) = list.pop(from) else {
        return ctx.null();
    };
    // The destination may be the source itself: push before deleting an
    // emptied source, so that rotating a one-element list keeps it.
    if dst_exists {
        if let Ok(Some(dst_list)) = ctx.lookup_as(dst, Value::as_list_mut) {
            dst_list.push(to, &value);
        }
        ctx.signal_key_ready(dst);
    } else {
        let mut list = List::new(ctx.limits().list_max_listpack_size);
        list.push(to, &value);
        ctx.store(dst, Value::List(Box::new(list)), false);
    }
    // Redis raises the push before the pop (`lmoveHandlePush` runs first).
    notify(ctx, class::LIST, push_event(to), dst);
    let empty = matches!(ctx.lookup_as(src, Value::as_list_mut), Ok(Some(l)) if l.is_empty());
    notify_and_delete_if_empty(ctx, src, pop_event(from), empty);
    ctx.server.dirty += 2;
    ctx.work(2);
    ctx.bulk(&value);
}

fn lmove(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let (Some(from), Some(to)) = (parse_end(&args[3]), parse_end(&args[4])) else {
        return ctx.error(SYNTAX_ERROR);
    };
    lmove_generic(ctx, &args[1], &args[2], from, to);
}

fn rpoplpush(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    lmove_generic(
        ctx,
        &args[1],
        &args[2],
        Direction::Backward,
        Direction::Forward,
    );
}

#[cfg(test)]
mod tests;
