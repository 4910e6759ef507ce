//! The sets command family: SADD SREM SISMEMBER SMISMEMBER SCARD SMOVE
//! here; SPOP SRANDMEMBER SSCAN in `sets/random.rs`; SMEMBERS and the set
//! algebra (SINTER SUNION SDIFF, their STORE forms, SINTERCARD) in
//! `sets/algebra.rs`. Replies and errors are Redis 7.0's (t_set.c),
//! including the order in which errors are detected.
//!
//! A set emptied by SREM, SPOP or SMOVE is deleted, as Redis never keeps
//! empty sets.

use crate::cmd::{flags::*, CommandSpec, Ctx, Lookup, WrongType};
use crate::notify::{class, notify};
use crate::snapshot_read::Shape;
use crate::types::{Limits, Set};
use crate::value::{Value, WRONGTYPE};

mod algebra;
mod random;

const SET: CommandSpec = CommandSpec {
    group: "set",
    first_key: 1,
    last_key: 1,
    key_step: 1,
    ..CommandSpec::DEFAULT
};

const READ_FAST: &[&str] = &["read", "set", "fast"];
const READ_SLOW: &[&str] = &["read", "set", "slow"];
const WRITE_FAST: &[&str] = &["write", "set", "fast"];
const WRITE_SLOW: &[&str] = &["write", "set", "slow"];
const INTER_COMPLEXITY: &str =
    "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.";
const TOTAL_COMPLEXITY: &str = "O(N) where N is the total number of elements in all given sets.";

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "sadd",
        arity: -3,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Add one or more members to a set",
        complexity: "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.",
        handler: Some(sadd),
        key_spec_flags: &["RW", "insert"],
        ..SET
    },
    CommandSpec {
        name: "srem",
        arity: -3,
        flags: WRITE | FAST,
        acl_categories: WRITE_FAST,
        summary: "Remove one or more members from a set",
        complexity: "O(N) where N is the number of members to be removed.",
        handler: Some(srem),
        key_spec_flags: &["RW", "delete"],
        ..SET
    },
    CommandSpec {
        name: "sismember",
        arity: 3,
        flags: READONLY | FAST,
        acl_categories: READ_FAST,
        summary: "Determine if a given value is a member of a set",
        handler: Some(sismember),
        key_spec_flags: &["RO"],
        ..SET
    },
    CommandSpec {
        name: "smismember",
        arity: -3,
        flags: READONLY | FAST,
        acl_categories: READ_FAST,
        summary: "Returns the membership associated with the given elements for a set",
        since: "6.2.0",
        complexity: "O(N) where N is the number of elements being checked for membership",
        handler: Some(smismember),
        key_spec_flags: &["RO", "access"],
        ..SET
    },
    CommandSpec {
        name: "scard",
        arity: 2,
        flags: READONLY | FAST,
        acl_categories: READ_FAST,
        summary: "Get the number of members in a set",
        handler: Some(scard),
        key_spec_flags: &["RO"],
        ..SET
    },
    CommandSpec {
        name: "smove",
        arity: 4,
        flags: WRITE | FAST,
        last_key: 2,
        acl_categories: WRITE_FAST,
        summary: "Move a member from one set to another",
        handler: Some(smove),
        key_spec_flags: &["RW", "access", "delete"],
        ..SET
    },
    CommandSpec {
        name: "spop",
        arity: -2,
        flags: WRITE | FAST | O_N,
        acl_categories: WRITE_FAST,
        summary: "Remove and return one or multiple random members from a set",
        complexity: "Without the count argument O(1), otherwise O(N) where N is the value of the passed count.",
        handler: Some(random::spop),
        tips: &["nondeterministic_output"],
        key_spec_flags: &["RW", "access", "delete"],
        ..SET
    },
    CommandSpec {
        name: "srandmember",
        arity: -2,
        flags: READONLY | O_N,
        acl_categories: READ_SLOW,
        summary: "Get one or multiple random members from a set",
        complexity: "Without the count argument O(1), otherwise O(N) where N is the absolute value of the passed count.",
        handler: Some(random::srandmember),
        tips: &["nondeterministic_output"],
        key_spec_flags: &["RO", "access"],
        ..SET
    },
    CommandSpec {
        name: "sscan",
        arity: -3,
        flags: READONLY,
        acl_categories: READ_SLOW,
        summary: "Incrementally iterate Set elements",
        since: "2.8.0",
        complexity: "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..",
        handler: Some(random::sscan),
        tips: &["nondeterministic_output"],
        key_spec_flags: &["RO", "access"],
        ..SET
    },
    CommandSpec {
        name: "smembers",
        arity: 2,
        flags: READONLY | O_N,
        acl_categories: READ_SLOW,
        summary: "Get all the members in a set",
        complexity: "O(N) where N is the set cardinality.",
        handler: Some(smembers),
        tips: &["nondeterministic_output_order"],
        key_spec_flags: &["RO", "access"],
        ..SET
    },
    CommandSpec {
        name: "sinter",
        arity: -2,
        flags: READONLY | O_N,
        last_key: -1,
        acl_categories: READ_SLOW,
        summary: "Intersect multiple sets",
        complexity: INTER_COMPLEXITY,
        handler: Some(algebra::sinter),
        tips: &["nondeterministic_output_order"],
        key_spec_flags: &["RO", "access"],
        ..SET
    },
    CommandSpec {
        name: "sunion",
        arity: -2,
        flags: READONLY | O_N,
        last_key: -1,
        acl_categories: READ_SLOW,
        summary: "Add multiple sets",
        complexity: TOTAL_COMPLEXITY,
        handler: Some(algebra::sunion),
        tips: &["nondeterministic_output_order"],
        key_spec_flags: &["RO", "access"],
        ..SET
    },
    CommandSpec {
        name: "sdiff",
        arity: -2,
        flags: READONLY | O_N,
        last_key: -1,
        acl_categories: READ_SLOW,
        summary: "Subtract multiple sets",
        complexity: TOTAL_COMPLEXITY,
        handler: Some(algebra::sdiff),
        tips: &["nondeterministic_output_order"],
        key_spec_flags: &["RO", "access"],
        ..SET
    },
    CommandSpec {
        name: "sinterstore",
        arity: -3,
        flags: WRITE | DENYOOM | O_N,
        last_key: -1,
        acl_categories: WRITE_SLOW,
        summary: "Intersect multiple sets and store the resulting set in a key",
        complexity: INTER_COMPLEXITY,
        handler: Some(algebra::sinterstore),
        key_spec_flags: &["RW", "update"],
        ..SET
    },
    CommandSpec {
        name: "sunionstore",
        arity: -3,
        flags: WRITE | DENYOOM | O_N,
        last_key: -1,
        acl_categories: WRITE_SLOW,
        summary: "Add multiple sets and store the resulting set in a key",
        complexity: TOTAL_COMPLEXITY,
        handler: Some(algebra::sunionstore),
        key_spec_flags: &["OW", "update"],
        ..SET
    },
    CommandSpec {
        name: "sdiffstore",
        arity: -3,
        flags: WRITE | DENYOOM | O_N,
        last_key: -1,
        acl_categories: WRITE_SLOW,
        summary: "Subtract multiple sets and store the resulting set in a key",
        complexity: TOTAL_COMPLEXITY,
        handler: Some(algebra::sdiffstore),
        key_spec_flags: &["OW", "update"],
        ..SET
    },
    CommandSpec {
        name: "sintercard",
        arity: -3,
        flags: READONLY | O_N,
        first_key: 0,
        last_key: 0,
        key_step: 0,
        acl_categories: READ_SLOW,
        summary: "Intersect multiple sets and return the cardinality of the result",
        since: "7.0.0",
        complexity: INTER_COMPLEXITY,
        handler: Some(algebra::sintercard),
        key_spec_flags: &["RO", "access"],
        ..SET
    },
];

/// The set at `key`: `Ok(None)` when missing (a `keymiss` for a
/// [`Lookup::Read`]).
fn set_at<'c>(
    ctx: &'c mut Ctx,
    key: &[u8],
    mode: Lookup,
) -> Result<Option<&'c mut Set>, WrongType> {
    ctx.lookup_as_for(key, Value::as_set_mut, mode)
}

/// Adds `members` to the set at `key`, creating it when missing in the
/// encoding Redis's `setTypeCreate` picks from the first member. Returns the
/// members added.
fn add_members(ctx: &mut Ctx, key: &[u8], members: &[Vec<u8>]) -> Result<usize, WrongType> {
    debug_assert!(!members.is_empty());
    let limits: Limits = ctx.limits();
    if let Some(set) = set_at(ctx, key, Lookup::Write)? {
        return Ok(members.iter().filter(|m| set.insert(m, &limits)).count());
    }
    let mut set = Set::for_first_member(&members[0], ctx.collection_hash_seed());
    let added = members.iter().filter(|m| set.insert(m, &limits)).count();
    ctx.store(key, Value::Set(Box::new(set)), false);
    Ok(added)
}

/// SADD key member [member ...]
fn sadd(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let members = &args[2..];
    ctx.work(members.len() as u64);
    match add_members(ctx, &args[1], members) {
        Err(WrongType) => ctx.error(WRONGTYPE),
        Ok(added) => {
            ctx.server.dirty += added as u64;
            if added > 0 {
                notify(ctx, class::SET, "sadd", &args[1]);
            }
            ctx.int(added as i64);
        }
    }
}

/// SREM key member [member ...]: deletes the key once its last member goes.
fn srem(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let key = &args[1];
    let members = &args[2..];
    ctx.work(members.len() as u64);
    let (removed, now_empty) = match set_at(ctx, key, Lookup::Write) {
        Err(WrongType) => return ctx.error(WRONGTYPE),
        Ok(None) => return ctx.int(0),
        Ok(Some(set)) => {
            let mut removed = 0;
            for m in members {
                removed += i64::from(set.remove(m));
                if set.is_empty() {
                    break;
                }
            }
            (removed, set.is_empty())
        }
    };
    if removed > 0 {
        notify(ctx, class::SET, "srem", key);
    }
    if now_empty {
        ctx.delete(key, false);
        notify(ctx, class::GENERIC, "del", key);
    }
    ctx.server.dirty += removed as u64;
    ctx.int(removed);
}

/// SISMEMBER key member
/// SMEMBERS: SINTER of one set, or, for a big set with `snapshot-reads`,
/// a point-in-time read answered in slices (see [`crate::snapshot_read`]).
fn smembers(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if crate::snapshot_read::open_value(ctx, &args[1], Shape::Members) {
        return; // answered in slices, as of now
    }
    algebra::sinter(ctx, args);
}

fn sismember(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match set_at(ctx, &args[1], Lookup::Read) {
        Err(WrongType) => ctx.error(WRONGTYPE),
        Ok(set) => {
            let found = set.is_some_and(|s| s.contains(&args[2]));
            ctx.int(i64::from(found));
        }
    }
}

/// SMISMEMBER key member [member ...]: one 0/1 per member.
fn smismember(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let members = &args[2..];
    ctx.work_units += members.len() as u64;
    let (value, mut w) = ctx.lookup_read_and_writer(&args[1]);
    let set = match value {
        None => None,
        Some(Value::Set(set)) => Some(set),
        Some(_) => return w.error(WRONGTYPE),
    };
    w.array_len(members.len());
    for m in members {
        let found = set.as_ref().is_some_and(|s| s.contains(m));
        w.int(i64::from(found));
    }
}

/// SCARD key
fn scard(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match set_at(ctx, &args[1], Lookup::Read) {
        Err(WrongType) => ctx.error(WRONGTYPE),
        Ok(set) => {
            let len = set.map_or(0, |s| s.len());
            ctx.int(len as i64);
        }
    }
}

/// SMOVE source destination member
///
/// Redis's order: a missing source replies 0 whatever the destination
/// holds; then both types are checked; moving within one set only tests
/// membership.
fn smove(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let (src, dst, member) = (&args[1], &args[2], &args[3]);
    let src_is_set = match ctx.lookup(src) {
        None => return ctx.int(0),
        Some(v) => v.as_set().is_some(),
    };
    let dst_is_set_or_missing = ctx.lookup(dst).is_none_or(|v| v.as_set().is_some());
    if !src_is_set || !dst_is_set_or_missing {
        return ctx.error(WRONGTYPE);
    }
    let Ok(Some(src_set)) = set_at(ctx, src, Lookup::Write) else {
        return ctx.error(WRONGTYPE);
    };
    if src == dst {
        let found = src_set.contains(member);
        return ctx.int(i64::from(found));
    }
    if !src_set.remove(member) {
        return ctx.int(0);
    }
    let src_empty = src_set.is_empty();
    notify(ctx, class::SET, "srem", src);
    if src_empty {
        ctx.delete(src, false);
        notify(ctx, class::GENERIC, "del", src);
    }
    ctx.server.dirty += 1;
    match add_members(ctx, dst, std::slice::from_ref(member)) {
        Ok(0) => {}
        Ok(_) => notify(ctx, class::SET, "sadd", dst),
        Err(WrongType) => debug_assert!(false, "destination type checked above"),
    }
    ctx.int(1);
}

#[cfg(test)]
mod tests;
