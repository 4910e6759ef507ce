//! SMEMBERS and the set algebra: SINTER SUNION SDIFF, their STORE forms,
//! and SINTERCARD. Every one of them reads whole sets in one call, so each
//! charges one unit of work per member visited and per member produced.
//!
//! Reply order follows Redis 7.0: SINTER (and SMEMBERS, which is SINTER of
//! one key) walks the smallest set; SUNION and SDIFF build their result as
//! a new set that starts as an intset, so all-integer results come out
//! sorted exactly as Redis sends them.

use crate::cmd::{Ctx, WrongType};
use crate::notify::{class, notify};
use crate::resp::ReplyWriter;
use crate::types::Set;
use crate::util::parse_i64_strict;
use crate::value::{Value, WRONGTYPE};

/// Looks every key up (expiring it lazily; a miss raises `keymiss`, even
/// for the STORE forms); WRONGTYPE if any holds something other than a
/// set. Redis checks every key before it computes anything, so a missing
/// key does not excuse a later wrong one.
fn check_all_sets(ctx: &mut Ctx, keys: &[Vec<u8>]) -> Result<(), WrongType> {
    for key in keys {
        if ctx.lookup_read(key).is_some_and(|v| v.as_set().is_none()) {
            return Err(WrongType);
        }
    }
    Ok(())
}

/// The sets at `keys` (None for a missing key), after [`check_all_sets`].
fn sets_at<'d>(db: &'d crate::db::Db, keys: &[Vec<u8>]) -> Vec<Option<&'d Set>> {
    keys.iter()
        .map(|k| db.get(k).and_then(Value::as_set))
        .collect()
}

/// Where an intersection goes.
#[derive(Clone, Copy)]
enum InterTarget<'a> {
    Reply,
    Store(&'a [u8]),
    /// SINTERCARD: only count, stopping at the limit (0: no limit).
    Cardinality(u64),
}

/// SMEMBERS key, SINTER key [key ...]
pub(super) fn sinter(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    intersect(ctx, &args[1..], InterTarget::Reply);
}

/// SINTERSTORE destination key [key ...]
pub(super) fn sinterstore(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    intersect(ctx, &args[2..], InterTarget::Store(&args[1]));
}

/// SINTERCARD numkeys key [key ...] [LIMIT limit]
pub(super) fn sintercard(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let numkeys = match parse_i64_strict(&args[1]) {
        Some(n) if n >= 1 => n as u64,
        _ => return ctx.error("ERR numkeys should be greater than 0"),
    };
    if numkeys > (args.len() - 2) as u64 {
        return ctx.error("ERR Number of keys can't be greater than number of args");
    }
    let keys_end = 2 + numkeys as usize;
    let mut limit = 0u64;
    let mut j = keys_end;
    while j < args.len() {
        let more = j + 1 < args.len();
        if !(more && args[j].eq_ignore_ascii_case(b"limit")) {
            return ctx.error("ERR syntax error");
        }
        limit = match parse_i64_strict(&args[j + 1]) {
            Some(n) if n >= 0 => n as u64,
            _ => return ctx.error("ERR LIMIT can't be negative"),
        };
        j += 2;
    }
    intersect(ctx, &args[2..keys_end], InterTarget::Cardinality(limit));
}

/// The intersection of the sets at `keys`, walking the smallest one and
/// testing each member against the others (Redis's `sinterGenericCommand`).
fn intersect(ctx: &mut Ctx, keys: &[Vec<u8>], target: InterTarget) {
    debug_assert!(!keys.is_empty());
    if check_all_sets(ctx, keys).is_err() {
        return ctx.error(WRONGTYPE);
    }
    let seed = ctx.collection_hash_seed();
    let limits = ctx.limits();
    let protocol = ctx.protocol;
    let i = ctx.db_index();
    let db = &ctx.server.keyspace.dbs[i];
    let mut sets: Vec<&Set> = sets_at(db, keys).into_iter().flatten().collect();
    // An empty result: some key is missing.
    let any_missing = sets.len() < keys.len();
    sets.sort_by_key(|s| s.len());

    let mut body = Vec::new();
    let mut body_writer = ReplyWriter::new(&mut body, protocol);
    let mut stored = Set::new(seed);
    let mut cardinality = 0u64;
    let mut visited = 0u64;
    if !any_missing {
        let (smallest, others) = (sets[0], &sets[1..]);
        let mut buf = [0u8; 20];
        for member in smallest.iter() {
            visited += 1;
            let bytes = member.as_bytes(&mut buf);
            let in_all = others.iter().all(|other| {
                visited += 1;
                std::ptr::eq(*other, smallest) || other.contains(bytes)
            });
            if !in_all {
                continue;
            }
            cardinality += 1;
            match target {
                InterTarget::Reply => body_writer.bulk(bytes),
                InterTarget::Store(_) => {
                    stored.insert(bytes, &limits);
                }
                InterTarget::Cardinality(limit) => {
                    if limit != 0 && cardinality >= limit {
                        break;
                    }
                }
            }
        }
    }
    ctx.work(visited + cardinality);
    match target {
        InterTarget::Reply => {
            let mut w = ctx.w();
            w.set_len(cardinality as usize);
            w.raw(&body);
        }
        InterTarget::Cardinality(_) => ctx.int(cardinality as i64),
        InterTarget::Store(dst) => store_result(ctx, dst, stored),
    }
}

/// STORE forms: a non-empty result replaces `dst` (clearing its TTL); an
/// empty one deletes it. Replies the result's size.
fn store_result(ctx: &mut Ctx, dst: &[u8], result: Set) {
    let len = result.len();
    if len > 0 {
        ctx.store(dst, Value::Set(Box::new(result)), false);
        let event = ctx.spec.name;
        notify(ctx, class::SET, event, dst);
    } else if ctx.delete(dst, false) {
        notify(ctx, class::GENERIC, "del", dst);
    }
    ctx.int(len as i64);
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Union,
    Diff,
}

/// SUNION key [key ...]
pub(super) fn sunion(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    union_diff(ctx, &args[1..], Op::Union, None);
}

/// SDIFF key [key ...]
pub(super) fn sdiff(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    union_diff(ctx, &args[1..], Op::Diff, None);
}

/// SUNIONSTORE destination key [key ...]
pub(super) fn sunionstore(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    union_diff(ctx, &args[2..], Op::Union, Some(&args[1]));
}

/// SDIFFSTORE destination key [key ...]
pub(super) fn sdiffstore(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    union_diff(ctx, &args[2..], Op::Diff, Some(&args[1]));
}

/// Redis's `sunionDiffGenericCommand`: the result is built as a new set
/// (starting as an intset), then replied in its own order or stored.
fn union_diff(ctx: &mut Ctx, keys: &[Vec<u8>], op: Op, dst: Option<&[u8]>) {
    debug_assert!(!keys.is_empty());
    if check_all_sets(ctx, keys).is_err() {
        return ctx.error(WRONGTYPE);
    }
    let mut result = Set::new(ctx.collection_hash_seed());
    let limits = ctx.limits();
    let i = ctx.db_index();
    let sets = sets_at(&ctx.server.keyspace.dbs[i], keys);
    let mut visited = 0u64;
    let mut buf = [0u8; 20];
    match (op, sets[0]) {
        (Op::Union, _) => {
            for set in sets.iter().flatten() {
                for m in set.iter() {
                    visited += 1;
                    result.insert(m.as_bytes(&mut buf), &limits);
                }
            }
        }
        (Op::Diff, None) => {}
        (Op::Diff, Some(first)) => {
            let others: Vec<&Set> = sets[1..].iter().flatten().copied().collect();
            // The same key given again: the difference is empty.
            if !others.iter().any(|s| std::ptr::eq(*s, first)) {
                visited = diff_into(&mut result, first, &others, &limits);
            }
        }
    }
    ctx.work(visited + result.len() as u64);
    match dst {
        Some(dst) => store_result(ctx, dst, result),
        None => {
            let mut w = ctx.w();
            w.set_len(result.len());
            for m in result.iter() {
                w.bulk(m.as_bytes(&mut buf));
            }
        }
    }
}

/// `first` minus every set of `others` into `result`, with the cheaper of
/// Redis's two algorithms by its own estimate: test each member of `first`
/// against the others, or copy `first` and remove the others' members.
/// Both give the same set; they differ in the work, which is returned.
fn diff_into(result: &mut Set, first: &Set, others: &[&Set], limits: &crate::types::Limits) -> u64 {
    let mut visited = 0u64;
    let mut buf = [0u8; 20];
    let sets_count = 1 + others.len() as u64;
    let test_each_work = first.len() as u64 * sets_count / 2;
    let remove_all_work = first.len() as u64 + others.iter().map(|s| s.len() as u64).sum::<u64>();
    if test_each_work <= remove_all_work {
        for m in first.iter() {
            let bytes = m.as_bytes(&mut buf);
            visited += 1;
            let elsewhere = others.iter().any(|s| {
                visited += 1;
                s.contains(bytes)
            });
            if !elsewhere {
                result.insert(bytes, limits);
            }
        }
    } else {
        for m in first.iter() {
            visited += 1;
            result.insert(m.as_bytes(&mut buf), limits);
        }
        for set in others {
            if result.is_empty() {
                break;
            }
            for m in set.iter() {
                visited += 1;
                result.remove(m.as_bytes(&mut buf));
            }
        }
    }
    visited
}
