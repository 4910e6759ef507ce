//! The hashes command family: HSET HSETNX HMSET HGET HMGET HDEL HLEN
//! HEXISTS HSTRLEN HKEYS HVALS HGETALL HINCRBY HINCRBYFLOAT HRANDFIELD
//! HSCAN, with Redis 7.0's replies and errors (t_hash.c), including the
//! order in which errors are detected (an argument error before WRONGTYPE
//! where Redis parses first).
//!
//! A hash emptied by HDEL is deleted, as Redis never keeps empty hashes.

use crate::cmd::{flags::*, CommandSpec, Ctx, Lookup, WrongType};
use crate::notify::{class, notify};
use crate::snapshot_read::Shape;
use crate::types::{Hash, Limits};
use crate::util::parse_i64_strict;
use crate::value::{Value, WRONGTYPE};

/// HINCRBYFLOAT's x87 `long double` arithmetic, shared with INCRBYFLOAT.
use crate::commands::strings::long_double;

/// HRANDFIELD and HSCAN.
mod random;

pub(crate) use random::{check_random_count, parse_random_count, sample_indices};

const NOT_AN_INTEGER: &str = "ERR value is not an integer or out of range";

const HASH: CommandSpec = CommandSpec {
    group: "hash",
    since: "2.0.0",
    first_key: 1,
    last_key: 1,
    key_step: 1,
    ..CommandSpec::DEFAULT
};

const READ_FAST: &[&str] = &["read", "hash", "fast"];
const READ_SLOW: &[&str] = &["read", "hash", "slow"];
const WRITE_FAST: &[&str] = &["write", "hash", "fast"];
const WHOLE_HASH: &str = "O(N) where N is the size of the hash.";

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "hset",
        arity: -4,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Set the string value of a hash field",
        complexity: "O(1) for each field/value pair added, so O(N) to add N field/value pairs when the command is called with multiple field/value pairs.",
        handler: Some(hset),
        key_spec_flags: &["RW", "update"],
        ..HASH
    },
    CommandSpec {
        name: "hsetnx",
        arity: 4,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Set the value of a hash field, only if the field does not exist",
        handler: Some(hsetnx),
        key_spec_flags: &["RW", "insert"],
        ..HASH
    },
    CommandSpec {
        name: "hmset",
        arity: -4,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Set multiple hash fields to multiple values",
        complexity: "O(N) where N is the number of fields being set.",
        handler: Some(hset),
        key_spec_flags: &["RW", "update"],
        ..HASH
    },
    CommandSpec {
        name: "hget",
        arity: 3,
        flags: READONLY | FAST,
        acl_categories: READ_FAST,
        summary: "Get the value of a hash field",
        handler: Some(hget),
        key_spec_flags: &["RO", "access"],
        ..HASH
    },
    CommandSpec {
        name: "hmget",
        arity: -3,
        flags: READONLY | FAST,
        acl_categories: READ_FAST,
        summary: "Get the values of all the given hash fields",
        complexity: "O(N) where N is the number of fields being requested.",
        handler: Some(hmget),
        key_spec_flags: &["RO", "access"],
        ..HASH
    },
    CommandSpec {
        name: "hdel",
        arity: -3,
        flags: WRITE | FAST,
        acl_categories: WRITE_FAST,
        summary: "Delete one or more hash fields",
        complexity: "O(N) where N is the number of fields to be removed.",
        handler: Some(hdel),
        key_spec_flags: &["RW", "delete"],
        ..HASH
    },
    CommandSpec {
        name: "hlen",
        arity: 2,
        flags: READONLY | FAST,
        acl_categories: READ_FAST,
        summary: "Get the number of fields in a hash",
        handler: Some(hlen),
        key_spec_flags: &["RO"],
        ..HASH
    },
    CommandSpec {
        name: "hexists",
        arity: 3,
        flags: READONLY | FAST,
        acl_categories: READ_FAST,
        summary: "Determine if a hash field exists",
        handler: Some(hexists),
        key_spec_flags: &["RO"],
        ..HASH
    },
    CommandSpec {
        name: "hstrlen",
        arity: 3,
        flags: READONLY | FAST,
        acl_categories: READ_FAST,
        summary: "Get the length of the value of a hash field",
        since: "3.2.0",
        handler: Some(hstrlen),
        key_spec_flags: &["RO"],
        ..HASH
    },
    CommandSpec {
        name: "hkeys",
        arity: 2,
        flags: READONLY | O_N,
        acl_categories: READ_SLOW,
        summary: "Get all the fields in a hash",
        complexity: WHOLE_HASH,
        handler: Some(hkeys),
        tips: &["nondeterministic_output_order"],
        key_spec_flags: &["RO", "access"],
        ..HASH
    },
    CommandSpec {
        name: "hvals",
        arity: 2,
        flags: READONLY | O_N,
        acl_categories: READ_SLOW,
        summary: "Get all the values in a hash",
        complexity: WHOLE_HASH,
        handler: Some(hvals),
        tips: &["nondeterministic_output_order"],
        key_spec_flags: &["RO", "access"],
        ..HASH
    },
    CommandSpec {
        name: "hgetall",
        arity: 2,
        flags: READONLY | O_N,
        acl_categories: READ_SLOW,
        summary: "Get all the fields and values in a hash",
        complexity: WHOLE_HASH,
        handler: Some(hgetall),
        tips: &["nondeterministic_output_order"],
        key_spec_flags: &["RO", "access"],
        ..HASH
    },
    CommandSpec {
        name: "hincrby",
        arity: 4,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Increment the integer value of a hash field by the given number",
        handler: Some(hincrby),
        key_spec_flags: &["RW", "access", "update"],
        ..HASH
    },
    CommandSpec {
        name: "hincrbyfloat",
        arity: 4,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Increment the float value of a hash field by the given amount",
        since: "2.6.0",
        handler: Some(hincrbyfloat),
        key_spec_flags: &["RW", "access", "update"],
        ..HASH
    },
    CommandSpec {
        name: "hrandfield",
        arity: -2,
        flags: READONLY | O_N,
        acl_categories: READ_SLOW,
        summary: "Get one or multiple random fields from a hash",
        since: "6.2.0",
        complexity: "O(N) where N is the number of fields returned",
        handler: Some(random::hrandfield),
        tips: &["nondeterministic_output"],
        key_spec_flags: &["RO", "access"],
        ..HASH
    },
    CommandSpec {
        name: "hscan",
        arity: -3,
        flags: READONLY,
        acl_categories: READ_SLOW,
        summary: "Incrementally iterate hash fields and associated values",
        since: "2.8.0",
        complexity: "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..",
        handler: Some(random::hscan),
        tips: &["nondeterministic_output"],
        key_spec_flags: &["RO", "access"],
        ..HASH
    },
];

/// The hash at `key`: `Ok(None)` when missing (a `keymiss` for a
/// [`Lookup::Read`]).
fn hash_at<'c>(
    ctx: &'c mut Ctx,
    key: &[u8],
    mode: Lookup,
) -> Result<Option<&'c mut Hash>, WrongType> {
    ctx.lookup_as_for(key, Value::as_hash_mut, mode)
}

/// Runs `update` on the hash at `key`, creating an empty one when missing
/// (stored only if `update` left something in it, so an error never leaves
/// an empty hash behind). WRONGTYPE when the key holds another type.
fn update_hash<R>(
    ctx: &mut Ctx,
    key: &[u8],
    update: impl FnOnce(&mut Hash, &Limits) -> R,
) -> Result<R, WrongType> {
    let limits = ctx.limits();
    if let Some(hash) = hash_at(ctx, key, Lookup::Write)? {
        return Ok(update(hash, &limits));
    }
    let mut hash = Hash::new(ctx.collection_hash_seed());
    let result = update(&mut hash, &limits);
    if !hash.is_empty() {
        ctx.store(key, Value::Hash(Box::new(hash)), false);
    }
    Ok(result)
}

/// HSET key field value [field value ...] (replies the fields added) and
/// HMSET (replies OK).
fn hset(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if args.len() % 2 == 1 {
        let msg = format!(
            "ERR wrong number of arguments for '{}' command",
            ctx.spec.name
        );
        return ctx.error(&msg);
    }
    let pairs = &args[2..];
    let added = update_hash(ctx, &args[1], |hash, limits| {
        let mut lookup_units = 0;
        let added = pairs
            .chunks_exact(2)
            .filter(|pair| {
                let (added, units) = hash.insert_counted(&pair[0], &pair[1], limits);
                lookup_units += units;
                added
            })
            .count();
        (added, lookup_units)
    });
    let Ok((added, lookup_units)) = added else {
        return ctx.error(WRONGTYPE);
    };
    let pair_count = pairs.len() / 2;
    ctx.work(pair_count as u64 + lookup_units);
    ctx.server.dirty += pair_count as u64;
    notify(ctx, class::HASH, "hset", &args[1]);
    if ctx.spec.name == "hmset" {
        ctx.ok();
    } else {
        ctx.int(added as i64);
    }
}

/// HSETNX key field value
fn hsetnx(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let (field, value) = (&args[2], &args[3]);
    let added = update_hash(ctx, &args[1], |hash, limits| {
        !hash.contains(field) && hash.insert(field, value, limits)
    });
    match added {
        Err(WrongType) => ctx.error(WRONGTYPE),
        Ok(added) => {
            ctx.server.dirty += u64::from(added);
            if added {
                notify(ctx, class::HASH, "hset", &args[1]);
            }
            ctx.int(i64::from(added));
        }
    }
}

/// HGET key field
fn hget(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let (value, mut w) = ctx.lookup_read_and_writer(&args[1]);
    match value {
        None => w.null(),
        Some(Value::Hash(hash)) => match hash.get(&args[2]) {
            Some(v) => w.bulk(v),
            None => w.null(),
        },
        Some(_) => w.error(WRONGTYPE),
    }
}

/// HMGET key field [field ...]: a null for each missing field (all of them
/// for a missing key).
fn hmget(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let fields = &args[2..];
    ctx.work_units += fields.len() as u64;
    let (value, mut w) = ctx.lookup_read_and_writer(&args[1]);
    let hash = match value {
        None => None,
        Some(Value::Hash(hash)) => Some(hash),
        Some(_) => return w.error(WRONGTYPE),
    };
    let mut lookup_units = 0;
    w.array_len(fields.len());
    for field in fields {
        let (value, units) = hash.as_ref().map_or((None, 0), |h| h.get_counted(field));
        lookup_units += units;
        match value {
            Some(v) => w.bulk(v),
            None => w.null(),
        }
    }
    ctx.work_units += lookup_units;
}

/// HDEL key field [field ...]: deletes the key once its last field goes.
fn hdel(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let key = &args[1];
    let fields = &args[2..];
    ctx.work(fields.len() as u64);
    let (deleted, now_empty, lookup_units) = match hash_at(ctx, key, Lookup::Write) {
        Err(WrongType) => return ctx.error(WRONGTYPE),
        Ok(None) => return ctx.int(0),
        Ok(Some(hash)) => {
            let mut deleted = 0;
            let mut lookup_units = 0;
            for field in fields {
                let (removed, units) = hash.remove_counted(field);
                lookup_units += units;
                deleted += i64::from(removed);
                if hash.is_empty() {
                    break;
                }
            }
            (deleted, hash.is_empty(), lookup_units)
        }
    };
    ctx.work(lookup_units);
    if deleted > 0 {
        notify(ctx, class::HASH, "hdel", key);
    }
    if now_empty {
        ctx.delete(key, false);
        notify(ctx, class::GENERIC, "del", key);
    }
    ctx.server.dirty += deleted as u64;
    ctx.int(deleted);
}

/// HLEN key
fn hlen(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match hash_at(ctx, &args[1], Lookup::Read) {
        Err(WrongType) => ctx.error(WRONGTYPE),
        Ok(hash) => {
            let len = hash.map_or(0, |h| h.len());
            ctx.int(len as i64);
        }
    }
}

/// HEXISTS key field
fn hexists(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match hash_at(ctx, &args[1], Lookup::Read) {
        Err(WrongType) => ctx.error(WRONGTYPE),
        Ok(hash) => {
            let found = hash.is_some_and(|h| h.contains(&args[2]));
            ctx.int(i64::from(found));
        }
    }
}

/// HSTRLEN key field: 0 for a missing field or key.
fn hstrlen(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match hash_at(ctx, &args[1], Lookup::Read) {
        Err(WrongType) => ctx.error(WRONGTYPE),
        Ok(hash) => {
            let len = hash.and_then(|h| h.get(&args[2])).map_or(0, <[u8]>::len);
            ctx.int(len as i64);
        }
    }
}

/// What HKEYS, HVALS and HGETALL reply for each pair.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Fields,
    Values,
    Both,
}

/// HKEYS, HVALS and HGETALL: the whole hash in one reply, one unit of work
/// per pair (the O(N) read that blocks every other client on a big hash).
fn reply_whole_hash(ctx: &mut Ctx, key: &[u8], part: Part) {
    let shape = match part {
        Part::Fields => Shape::Fields,
        Part::Values => Shape::Values,
        Part::Both => Shape::Pairs,
    };
    if crate::snapshot_read::open_value(ctx, key, shape) {
        return; // answered in slices, as of now
    }
    let mut visited = 0u64;
    let (value, mut w) = ctx.lookup_read_and_writer(key);
    let hash = match value {
        None => None,
        Some(Value::Hash(hash)) => Some(hash),
        Some(_) => return w.error(WRONGTYPE),
    };
    let len = hash.as_ref().map_or(0, |h| h.len());
    match part {
        Part::Both => w.map_len(len),
        Part::Fields | Part::Values => w.array_len(len),
    }
    if let Some(hash) = hash {
        for (field, value) in hash.iter() {
            visited += 1;
            if part != Part::Values {
                w.bulk(field);
            }
            if part != Part::Fields {
                w.bulk(value);
            }
        }
    }
    debug_assert_eq!(visited, len as u64);
    ctx.work(visited);
}

fn hkeys(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    reply_whole_hash(ctx, &args[1], Part::Fields);
}

fn hvals(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    reply_whole_hash(ctx, &args[1], Part::Values);
}

fn hgetall(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    reply_whole_hash(ctx, &args[1], Part::Both);
}

/// HINCRBY key field increment: the increment is parsed before the key is
/// looked up; a stored value must be a strict integer.
fn hincrby(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let Some(incr) = parse_i64_strict(&args[3]) else {
        return ctx.error(NOT_AN_INTEGER);
    };
    let field = &args[2];
    let result = update_hash(ctx, &args[1], |hash, limits| {
        let current = match hash.get(field) {
            None => 0,
            Some(v) => parse_i64_strict(v).ok_or("ERR hash value is not an integer")?,
        };
        let next = current
            .checked_add(incr)
            .ok_or("ERR increment or decrement would overflow")?;
        hash.insert(field, next.to_string().as_bytes(), limits);
        Ok(next)
    });
    match result {
        Err(WrongType) => ctx.error(WRONGTYPE),
        Ok(Err(e)) => ctx.error(e),
        Ok(Ok(next)) => {
            ctx.server.dirty += 1;
            notify(ctx, class::HASH, "hincrby", &args[1]);
            ctx.int(next);
        }
    }
}

/// HINCRBYFLOAT key field increment, in x87 `long double` arithmetic like
/// INCRBYFLOAT. Redis checks the increment (a valid float, then not
/// infinite) before the key, then the stored value, then the sum.
fn hincrbyfloat(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let incr = &args[3];
    // Adding to nothing only validates the increment.
    if let Err(e) = long_double::incr_by_float(None, incr) {
        let msg = if e == "ERR value is not a valid float" {
            e
        } else {
            "ERR value is NaN or Infinity"
        };
        return ctx.error(msg);
    }
    let field = &args[2];
    let result = update_hash(ctx, &args[1], |hash, limits| {
        let sum = long_double::incr_by_float(hash.get(field), incr).map_err(|e| {
            if e == "ERR value is not a valid float" {
                "ERR hash value is not a float"
            } else {
                e
            }
        })?;
        hash.insert(field, sum.as_bytes(), limits);
        Ok(sum)
    });
    match result {
        Err(WrongType) => ctx.error(WRONGTYPE),
        Ok(Err(e)) => ctx.error(e),
        Ok(Ok(sum)) => {
            ctx.server.dirty += 1;
            ctx.propagate(&[b"HSET", args[1].as_slice(), &args[2], sum.as_bytes()]);
            notify(ctx, class::HASH, "hincrbyfloat", &args[1]);
            ctx.bulk(sum.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests;
