//! Sorted-set commands (Redis 7.0's `t_zset.c`), with its replies, errors
//! and the order in which it detects them, in RESP2 and RESP3.
//!
//! This file holds the command table and the helpers the families share
//! (typed lookup, element replies, the collection seed, deleting an emptied
//! key). The point commands (ZADD ZINCRBY ZREM ZCARD ZSCORE ZMSCORE ZRANK
//! ZREVRANK ZRANDMEMBER ZSCAN) live in `zsets/basic.rs`, ranges in
//! `zsets/range.rs`, the set algebra in `zsets/store.rs`, pops (blocking or
//! not) in `zsets/pop.rs`, argument parsing in `zsets/parse.rs`.
//!
//! Work: one unit per element added, removed, visited or replied; a seek
//! (rank or range lookup, O(log N)) counts as one.

use crate::cmd::{flags::*, CommandSpec, Ctx, WrongType};
use crate::notify::{class, notify};
use crate::resp::{Protocol, ReplyWriter};
use crate::types::zset::ZSet;
use crate::value::Value;

mod basic;
mod parse;
mod pop;
mod range;
mod store;
/// GEOADD adds through ZADD, as Redis does; geo parses its coordinates
/// and distances as ZADD parses scores (`getDoubleFromObject`).
pub(crate) use basic::zadd;
pub(crate) use parse::parse_score as parse_double;

#[cfg(test)]
mod tests;

const SYNTAX_ERROR: &str = "ERR syntax error";
const NOT_AN_INTEGER: &str = "ERR value is not an integer or out of range";

const ZSET: CommandSpec = CommandSpec {
    group: "sorted_set",
    ..CommandSpec::DEFAULT
};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "bzmpop",
        arity: -5,
        flags: WRITE | BLOCKING | O_N,
        first_key: 0,
        last_key: 0,
        key_step: 0,
        acl_categories: &["write", "sortedset", "slow", "blocking"],
        key_spec_flags: &["RW", "access", "delete"],
        summary: "Remove and return members with scores in a sorted set or block until one is available",
        since: "7.0.0",
        complexity: "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.",
        handler: Some(pop::bzmpop),
        ..ZSET
    },
    CommandSpec {
        name: "bzpopmax",
        arity: -3,
        flags: WRITE | NOSCRIPT | BLOCKING | FAST,
        first_key: 1,
        last_key: -2,
        key_step: 1,
        acl_categories: &["write", "sortedset", "fast", "blocking"],
        key_spec_flags: &["RW", "access", "delete"],
        summary: "Remove and return the member with the highest score from one or more sorted sets, or block until one is available",
        since: "5.0.0",
        complexity: "O(log(N)) with N being the number of elements in the sorted set.",
        handler: Some(pop::bzpopmax),
        ..ZSET
    },
    CommandSpec {
        name: "bzpopmin",
        arity: -3,
        flags: WRITE | NOSCRIPT | BLOCKING | FAST,
        first_key: 1,
        last_key: -2,
        key_step: 1,
        acl_categories: &["write", "sortedset", "fast", "blocking"],
        key_spec_flags: &["RW", "access", "delete"],
        summary: "Remove and return the member with the lowest score from one or more sorted sets, or block until one is available",
        since: "5.0.0",
        complexity: "O(log(N)) with N being the number of elements in the sorted set.",
        handler: Some(pop::bzpopmin),
        ..ZSET
    },
    CommandSpec {
        name: "zadd",
        arity: -4,
        flags: WRITE | DENYOOM | FAST,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["write", "sortedset", "fast"],
        summary: "Add one or more members to a sorted set, or update its score if it already exists",
        since: "1.2.0",
        complexity: "O(log(N)) for each item added, where N is the number of elements in the sorted set.",
        handler: Some(basic::zadd),
        ..ZSET
    },
    CommandSpec {
        name: "zcard",
        arity: 2,
        flags: READONLY | FAST,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["read", "sortedset", "fast"],
        key_spec_flags: &["RO"],
        summary: "Get the number of members in a sorted set",
        since: "1.2.0",
        complexity: "O(1)",
        handler: Some(basic::zcard),
        ..ZSET
    },
    CommandSpec {
        name: "zcount",
        arity: 4,
        flags: READONLY | FAST,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["read", "sortedset", "fast"],
        summary: "Count the members in a sorted set with scores within the given values",
        since: "2.0.0",
        complexity: "O(log(N)) with N being the number of elements in the sorted set.",
        handler: Some(range::zcount),
        ..ZSET
    },
    CommandSpec {
        name: "zdiff",
        arity: -3,
        flags: READONLY | O_N,
        first_key: 0,
        last_key: 0,
        key_step: 0,
        acl_categories: &["read", "sortedset", "slow"],
        summary: "Subtract multiple sorted sets",
        since: "6.2.0",
        complexity: "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.",
        handler: Some(store::zdiff),
        ..ZSET
    },
    CommandSpec {
        name: "zdiffstore",
        arity: -4,
        flags: WRITE | DENYOOM | O_N,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["write", "sortedset", "slow"],
        key_spec_flags: &["OW", "update"],
        summary: "Subtract multiple sorted sets and store the resulting sorted set in a new key",
        since: "6.2.0",
        complexity: "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.",
        handler: Some(store::zdiffstore),
        ..ZSET
    },
    CommandSpec {
        name: "zincrby",
        arity: 4,
        flags: WRITE | DENYOOM | FAST,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["write", "sortedset", "fast"],
        key_spec_flags: &["RW", "access", "update"],
        summary: "Increment the score of a member in a sorted set",
        since: "1.2.0",
        complexity: "O(log(N)) where N is the number of elements in the sorted set.",
        handler: Some(basic::zincrby),
        ..ZSET
    },
    CommandSpec {
        name: "zinter",
        arity: -3,
        flags: READONLY | O_N,
        first_key: 0,
        last_key: 0,
        key_step: 0,
        acl_categories: &["read", "sortedset", "slow"],
        summary: "Intersect multiple sorted sets",
        since: "6.2.0",
        complexity: "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.",
        handler: Some(store::zinter),
        ..ZSET
    },
    CommandSpec {
        name: "zintercard",
        arity: -3,
        flags: READONLY | O_N,
        first_key: 0,
        last_key: 0,
        key_step: 0,
        acl_categories: &["read", "sortedset", "slow"],
        summary: "Intersect multiple sorted sets and return the cardinality of the result",
        since: "7.0.0",
        complexity: "O(N*K) worst case with N being the smallest input sorted set, K being the number of input sorted sets.",
        handler: Some(store::zintercard),
        ..ZSET
    },
    CommandSpec {
        name: "zinterstore",
        arity: -4,
        flags: WRITE | DENYOOM | O_N,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["write", "sortedset", "slow"],
        key_spec_flags: &["OW", "update"],
        summary: "Intersect multiple sorted sets and store the resulting sorted set in a new key",
        since: "2.0.0",
        complexity: "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.",
        handler: Some(store::zinterstore),
        ..ZSET
    },
    CommandSpec {
        name: "zlexcount",
        arity: 4,
        flags: READONLY | FAST,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["read", "sortedset", "fast"],
        summary: "Count the number of members in a sorted set between a given lexicographical range",
        since: "2.8.9",
        complexity: "O(log(N)) with N being the number of elements in the sorted set.",
        handler: Some(range::zlexcount),
        ..ZSET
    },
    CommandSpec {
        name: "zmpop",
        arity: -4,
        flags: WRITE | O_N,
        first_key: 0,
        last_key: 0,
        key_step: 0,
        acl_categories: &["write", "sortedset", "slow"],
        key_spec_flags: &["RW", "access", "delete"],
        summary: "Remove and return members with scores in a sorted set",
        since: "7.0.0",
        complexity: "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.",
        handler: Some(pop::zmpop),
        ..ZSET
    },
    CommandSpec {
        name: "zmscore",
        arity: -3,
        flags: READONLY | FAST,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["read", "sortedset", "fast"],
        summary: "Get the score associated with the given members in a sorted set",
        since: "6.2.0",
        complexity: "O(N) where N is the number of members being requested.",
        handler: Some(basic::zmscore),
        ..ZSET
    },
    CommandSpec {
        name: "zpopmax",
        arity: -2,
        flags: WRITE | FAST | O_N,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["write", "sortedset", "fast"],
        key_spec_flags: &["RW", "access", "delete"],
        summary: "Remove and return members with the highest scores in a sorted set",
        since: "5.0.0",
        complexity: "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.",
        handler: Some(pop::zpopmax),
        ..ZSET
    },
    CommandSpec {
        name: "zpopmin",
        arity: -2,
        flags: WRITE | FAST | O_N,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["write", "sortedset", "fast"],
        key_spec_flags: &["RW", "access", "delete"],
        summary: "Remove and return members with the lowest scores in a sorted set",
        since: "5.0.0",
        complexity: "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.",
        handler: Some(pop::zpopmin),
        ..ZSET
    },
    CommandSpec {
        name: "zrandmember",
        arity: -2,
        flags: READONLY | O_N,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["read", "sortedset", "slow"],
        tips: &["nondeterministic_output"],
        summary: "Get one or multiple random elements from a sorted set",
        since: "6.2.0",
        complexity: "O(N) where N is the number of elements returned",
        handler: Some(basic::zrandmember),
        ..ZSET
    },
    CommandSpec {
        name: "zrange",
        arity: -4,
        flags: READONLY | O_N,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["read", "sortedset", "slow"],
        summary: "Return a range of members in a sorted set",
        since: "1.2.0",
        complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.",
        handler: Some(range::zrange),
        ..ZSET
    },
    CommandSpec {
        name: "zrangebylex",
        arity: -4,
        flags: READONLY | O_N,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["read", "sortedset", "slow"],
        summary: "Return a range of members in a sorted set, by lexicographical range",
        since: "2.8.9",
        complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).",
        handler: Some(range::zrangebylex),
        ..ZSET
    },
    CommandSpec {
        name: "zrangebyscore",
        arity: -4,
        flags: READONLY | O_N,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["read", "sortedset", "slow"],
        summary: "Return a range of members in a sorted set, by score",
        since: "1.0.5",
        complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).",
        handler: Some(range::zrangebyscore),
        ..ZSET
    },
    CommandSpec {
        name: "zrangestore",
        arity: -5,
        flags: WRITE | DENYOOM | O_N,
        first_key: 1,
        last_key: 2,
        key_step: 1,
        acl_categories: &["write", "sortedset", "slow"],
        key_spec_flags: &["OW", "update"],
        summary: "Store a range of members from sorted set into another key",
        since: "6.2.0",
        complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements stored into the destination key.",
        handler: Some(range::zrangestore),
        ..ZSET
    },
    CommandSpec {
        name: "zrank",
        arity: 3,
        flags: READONLY | FAST,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["read", "sortedset", "fast"],
        summary: "Determine the index of a member in a sorted set",
        since: "2.0.0",
        complexity: "O(log(N))",
        handler: Some(basic::zrank),
        ..ZSET
    },
    CommandSpec {
        name: "zrem",
        arity: -3,
        flags: WRITE | FAST,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["write", "sortedset", "fast"],
        key_spec_flags: &["RW", "delete"],
        summary: "Remove one or more members from a sorted set",
        since: "1.2.0",
        complexity: "O(M*log(N)) with N being the number of elements in the sorted set and M the number of elements to be removed.",
        handler: Some(basic::zrem),
        ..ZSET
    },
    CommandSpec {
        name: "zremrangebylex",
        arity: 4,
        flags: WRITE | O_N,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["write", "sortedset", "slow"],
        key_spec_flags: &["RW", "delete"],
        summary: "Remove all members in a sorted set between the given lexicographical range",
        since: "2.8.9",
        complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.",
        handler: Some(range::zremrangebylex),
        ..ZSET
    },
    CommandSpec {
        name: "zremrangebyrank",
        arity: 4,
        flags: WRITE | O_N,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["write", "sortedset", "slow"],
        key_spec_flags: &["RW", "delete"],
        summary: "Remove all members in a sorted set within the given indexes",
        since: "2.0.0",
        complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.",
        handler: Some(range::zremrangebyrank),
        ..ZSET
    },
    CommandSpec {
        name: "zremrangebyscore",
        arity: 4,
        flags: WRITE | O_N,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["write", "sortedset", "slow"],
        key_spec_flags: &["RW", "delete"],
        summary: "Remove all members in a sorted set within the given scores",
        since: "1.2.0",
        complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.",
        handler: Some(range::zremrangebyscore),
        ..ZSET
    },
    CommandSpec {
        name: "zrevrange",
        arity: -4,
        flags: READONLY | O_N,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["read", "sortedset", "slow"],
        summary: "Return a range of members in a sorted set, by index, with scores ordered from high to low",
        since: "1.2.0",
        complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.",
        handler: Some(range::zrevrange),
        ..ZSET
    },
    CommandSpec {
        name: "zrevrangebylex",
        arity: -4,
        flags: READONLY | O_N,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["read", "sortedset", "slow"],
        summary: "Return a range of members in a sorted set, by lexicographical range, ordered from higher to lower strings.",
        since: "2.8.9",
        complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).",
        handler: Some(range::zrevrangebylex),
        ..ZSET
    },
    CommandSpec {
        name: "zrevrangebyscore",
        arity: -4,
        flags: READONLY | O_N,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["read", "sortedset", "slow"],
        summary: "Return a range of members in a sorted set, by score, with scores ordered from high to low",
        since: "2.2.0",
        complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).",
        handler: Some(range::zrevrangebyscore),
        ..ZSET
    },
    CommandSpec {
        name: "zrevrank",
        arity: 3,
        flags: READONLY | FAST,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["read", "sortedset", "fast"],
        summary: "Determine the index of a member in a sorted set, with scores ordered from high to low",
        since: "2.0.0",
        complexity: "O(log(N))",
        handler: Some(basic::zrevrank),
        ..ZSET
    },
    CommandSpec {
        name: "zscan",
        arity: -3,
        flags: READONLY,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["read", "sortedset", "slow"],
        tips: &["nondeterministic_output"],
        summary: "Incrementally iterate sorted sets elements and associated scores",
        since: "2.8.0",
        complexity: "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..",
        handler: Some(basic::zscan),
        ..ZSET
    },
    CommandSpec {
        name: "zscore",
        arity: 3,
        flags: READONLY | FAST,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["read", "sortedset", "fast"],
        summary: "Get the score associated with the given member in a sorted set",
        since: "1.2.0",
        complexity: "O(1)",
        handler: Some(basic::zscore),
        ..ZSET
    },
    CommandSpec {
        name: "zunion",
        arity: -3,
        flags: READONLY | O_N,
        first_key: 0,
        last_key: 0,
        key_step: 0,
        acl_categories: &["read", "sortedset", "slow"],
        summary: "Add multiple sorted sets",
        since: "6.2.0",
        complexity: "O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.",
        handler: Some(store::zunion),
        ..ZSET
    },
    CommandSpec {
        name: "zunionstore",
        arity: -4,
        flags: WRITE | DENYOOM | O_N,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: &["write", "sortedset", "slow"],
        key_spec_flags: &["OW", "update"],
        summary: "Add multiple sorted sets and store the resulting sorted set in a new key",
        since: "2.0.0",
        complexity: "O(N)+O(M log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.",
        handler: Some(store::zunionstore),
        ..ZSET
    },
];

/// Looks `key` up as a sorted set for a read (a miss raises `keymiss`)
/// and hands out the reply writer too, so that a reply can be encoded
/// straight from the stored set.
fn zset_and_writer<'c>(
    ctx: &'c mut Ctx,
    key: &[u8],
) -> (Result<Option<&'c mut ZSet>, WrongType>, ReplyWriter<'c>) {
    let (value, w) = ctx.lookup_read_and_writer(key);
    let zset = match value {
        None => Ok(None),
        Some(v) => v.as_zset_mut().map(Some).ok_or(WrongType),
    };
    (zset, w)
}

/// Writes `n` elements as ZRANGE does: members only; or with WITHSCORES a
/// flat member, score, member, score... array in RESP2 and an array of
/// [member, score] pairs in RESP3 (scores as RESP3 doubles).
fn write_elements<'a>(
    w: &mut ReplyWriter,
    n: usize,
    items: impl Iterator<Item = (&'a [u8], f64)>,
    withscores: bool,
) {
    let resp3 = w.protocol() == Protocol::Resp3;
    w.array_len(if withscores && !resp3 { n * 2 } else { n });
    let mut written = 0;
    for (member, score) in items.take(n) {
        if withscores && resp3 {
            w.array_len(2);
        }
        w.bulk(member);
        if withscores {
            w.double(score);
        }
        written += 1;
    }
    debug_assert_eq!(written, n, "the announced length was written");
}

/// The seed of a new sorted set's dict and skiplist: the server-wide
/// collection hash seed, so that ZSCAN survives a rebuilt value.
fn new_zset_seed(ctx: &mut Ctx) -> u64 {
    ctx.collection_hash_seed()
}

/// After a removal of `removed` members from `key`: raises `event` if any
/// went, then deletes the key once its sorted set is empty (Redis never
/// keeps one), raising `del` after it, in Redis's order.
fn notify_and_delete_if_empty(ctx: &mut Ctx, key: &[u8], event: &str, removed: u64) {
    if removed > 0 {
        notify(ctx, class::ZSET, event, key);
    }
    let empty = matches!(ctx.lookup(key), Some(Value::ZSet(z)) if z.is_empty());
    if empty {
        ctx.delete(key, false);
        notify(ctx, class::GENERIC, "del", key);
    }
}

/// The STORE forms' end: a non-empty result replaces `dst` and raises the
/// command's event; an empty one deletes `dst`, raising `del` if it was
/// there. Replies the result's size.
fn store_or_delete(ctx: &mut Ctx, dst: &[u8], zset: Option<ZSet>) {
    let Some(zset) = zset else {
        if ctx.delete(dst, false) {
            notify(ctx, class::GENERIC, "del", dst);
        }
        return ctx.int(0);
    };
    let n = zset.len();
    ctx.store(dst, Value::ZSet(Box::new(zset)), false);
    let event = ctx.spec.name;
    notify(ctx, class::ZSET, event, dst);
    ctx.int(n as i64);
}
