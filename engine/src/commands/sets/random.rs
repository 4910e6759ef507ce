//! SPOP, SRANDMEMBER and SSCAN: the set commands that sample or iterate.

use crate::notify::{class, notify};
use std::collections::BTreeSet;

use rand::RngCore;

use super::set_at;
use crate::cmd::{Ctx, Lookup, WrongType};
use crate::commands::hashes::{check_random_count, parse_random_count, sample_indices};
use crate::commands::scan::{
    parse_scan_args, parse_scan_cursor, scan_dict, write_scan_reply, CollectionScan,
};
use crate::resp::ReplyWriter;
use crate::types::set::Member;
use crate::types::Set;
use crate::value::WRONGTYPE;

/// Redis's SPOP_MOVE_STRATEGY_MUL: when the members left would be fewer
/// than the count times this, SPOP builds a new set from the survivors
/// instead of removing the popped members one by one.
const SPOP_MOVE_STRATEGY_MUL: u64 = 5;

/// See `hashes/random.rs`: sampling draws at most this many times per
/// wanted member before it falls back to a shuffle.
const DRAWS_PER_SAMPLE_ELEMENT_MAX: u64 = 16;

/// SPOP key [count]
///
/// Without a count: one random member (null when missing). With one (a
/// non-negative integer, checked before the key): a set reply of up to that
/// many distinct members, all of them when the count covers the set.
pub(super) fn spop(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if args.len() > 3 {
        return ctx.error("ERR syntax error");
    }
    if args.len() == 2 {
        return spop_one(ctx, &args[1]);
    }
    let count = match crate::util::parse_i64_strict(&args[2]) {
        Some(n) if n >= 0 => n as u64,
        _ => return ctx.error("ERR value is out of range, must be positive"),
    };
    let key = &args[1];
    let size = match set_at(ctx, key, Lookup::Write) {
        Err(WrongType) => return ctx.error(WRONGTYPE),
        Ok(None) => return ctx.w().set_len(0),
        Ok(Some(set)) => set.len() as u64,
    };
    if count == 0 {
        return ctx.w().set_len(0);
    }
    if count >= size {
        // The whole set, replied as SUNION of it would (the copy is built
        // from an intset, so all-integer members come out sorted), then the
        // key is gone.
        let seed = ctx.collection_hash_seed();
        let limits = ctx.limits();
        let Ok(Some(set)) = set_at(ctx, key, Lookup::Write) else {
            return ctx.error(WRONGTYPE);
        };
        let mut copy = Set::new(seed);
        for m in set.iter() {
            copy.insert(m.as_bytes(&mut [0u8; 20]), &limits);
        }
        notify(ctx, class::SET, "spop", key);
        ctx.delete(key, false);
        notify(ctx, class::GENERIC, "del", key);
        ctx.work(2 * size);
        ctx.server.dirty += 1;
        // Redis 7.0 replays the whole set's pop as a DEL (not UNLINK, even
        // under lazyfree-lazy-server-del).
        ctx.propagate(&[b"DEL", key.as_slice()]);
        let mut w = ctx.w();
        w.set_len(copy.len());
        for m in copy.iter() {
            w.bulk(m.as_bytes(&mut [0u8; 20]));
        }
        return;
    }
    let popped = if count.saturating_mul(SPOP_MOVE_STRATEGY_MUL) > size {
        spop_keep_survivors(ctx, key, size - count)
    } else {
        spop_draw(ctx, key, count)
    };
    ctx.server.dirty += 1;
    // One SREM per member, in reply order (Redis 7.0 does not batch them);
    // the request's unit wraps them in MULTI/EXEC.
    for m in &popped {
        ctx.propagate(&[b"SREM", key.as_slice(), m]);
    }
    let mut w = ctx.w();
    w.set_len(popped.len());
    for m in &popped {
        w.bulk(m);
    }
}

fn spop_one(ctx: &mut Ctx, key: &[u8]) {
    match set_at(ctx, key, Lookup::Write) {
        Err(WrongType) => return ctx.error(WRONGTYPE),
        Ok(None) => return ctx.null(),
        Ok(Some(_)) => {}
    }
    let popped = spop_draw(ctx, key, 1);
    ctx.server.dirty += 1;
    match popped.first() {
        Some(m) => {
            ctx.propagate(&[b"SREM", key, m]);
            ctx.bulk(m)
        }
        None => ctx.null(),
    }
}

/// Pops `count` random members one at a time (`count` below the set's
/// size); deletes the key if that empties it.
fn spop_draw(ctx: &mut Ctx, key: &[u8], count: u64) -> Vec<Vec<u8>> {
    let i = ctx.db_index();
    let server = &mut *ctx.server;
    let Some(set) = server.keyspace.dbs[i]
        .get_mut(key)
        .and_then(|v| v.as_set_mut())
    else {
        return Vec::new();
    };
    let mut popped = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let Some(m) = set.random_member(&mut server.rng).map(|m| m.to_vec()) else {
            break;
        };
        set.remove(&m);
        popped.push(m);
    }
    let now_empty = set.is_empty();
    ctx.work(popped.len() as u64);
    notify(ctx, class::SET, "spop", key);
    if now_empty {
        ctx.delete(key, false);
        notify(ctx, class::GENERIC, "del", key);
    }
    popped
}

/// Redis's SPOP "case 2": draws the `keep` members that stay into a new
/// set (created as `setTypeCreate` would, so survivors that are all
/// integers become an intset again), replies everything else, and puts the
/// new set in place of the old one (the key keeps its TTL).
fn spop_keep_survivors(ctx: &mut Ctx, key: &[u8], keep: u64) -> Vec<Vec<u8>> {
    let limits = ctx.limits();
    let seed = ctx.collection_hash_seed();
    let i = ctx.db_index();
    let server = &mut *ctx.server;
    let Some(set) = server.keyspace.dbs[i]
        .get_mut(key)
        .and_then(|v| v.as_set_mut())
    else {
        return Vec::new();
    };
    debug_assert!(keep > 0 && keep < set.len() as u64);
    let mut survivors: Option<Set> = None;
    for _ in 0..keep {
        let Some(m) = set.random_member(&mut server.rng).map(|m| m.to_vec()) else {
            break;
        };
        set.remove(&m);
        survivors
            .get_or_insert_with(|| Set::for_first_member(&m, seed))
            .insert(&m, &limits);
    }
    let popped: Vec<Vec<u8>> = set.iter().map(|m| m.to_vec()).collect();
    if let Some(survivors) = survivors {
        *set = survivors;
    }
    ctx.work(keep + popped.len() as u64);
    notify(ctx, class::SET, "spop", key);
    popped
}

/// SRANDMEMBER key [count]
///
/// Without a count: one random member, or null. A positive count: that
/// many distinct members (the whole set, in its order, when it has no
/// more); a negative one: that many independent draws. The count is
/// checked before the key.
pub(super) fn srandmember(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if args.len() > 3 {
        return ctx.error("ERR syntax error");
    }
    let count = match args.get(2).map(|a| parse_random_count(a)) {
        None => None,
        Some(Ok(n)) => Some(n),
        Some(Err(e)) => return ctx.error(e),
    };
    if let Some(Err(e)) = count.map(check_random_count) {
        return ctx.error(e);
    }
    if ctx.lookup_read(&args[1]).is_none() {
        return match count {
            None => ctx.null(),
            Some(_) => ctx.w().array_len(0),
        };
    }
    let i = ctx.db_index();
    let server = &mut *ctx.server;
    let Some(set) = server.keyspace.dbs[i]
        .get_mut(&args[1])
        .and_then(|v| v.as_set())
    else {
        return ctx.error(WRONGTYPE);
    };
    let mut w = ReplyWriter::new(&mut ctx.reply, ctx.protocol);
    let Some(count) = count else {
        match set.random_member(&mut server.rng) {
            Some(m) => w.bulk(m.as_bytes(&mut [0u8; 20])),
            None => w.null(),
        }
        ctx.work_units += 1;
        return;
    };
    let picked = pick_members(set, &mut server.rng, count);
    w.array_len(picked.len());
    for m in &picked {
        w.bulk(m.as_bytes(&mut [0u8; 20]));
    }
    let walked = if count > 0 && (count as u64).saturating_mul(3) > set.len() as u64 {
        set.len()
    } else {
        0
    };
    ctx.work_units += (picked.len() + walked) as u64;
}

/// The members SRANDMEMBER replies, in reply order.
fn pick_members<'s>(set: &'s Set, rng: &mut dyn RngCore, count: i64) -> Vec<Member<'s>> {
    let size = set.len();
    let wanted = count.unsigned_abs() as usize;
    if count < 0 {
        // Independent draws; check_random_count bounded a negative count.
        return (0..wanted).filter_map(|_| set.random_member(rng)).collect();
    }
    if wanted >= size {
        return set.iter().collect();
    }
    if wanted.saturating_mul(3) > size {
        let all: Vec<Member> = set.iter().collect();
        return sample_indices(rng, size, wanted)
            .into_iter()
            .map(|i| all[i])
            .collect();
    }
    // A small sample of a big set: draw until enough distinct members.
    let mut seen: BTreeSet<Member> = BTreeSet::new();
    let mut picked = Vec::with_capacity(wanted);
    let draws_max = (wanted as u64).saturating_mul(DRAWS_PER_SAMPLE_ELEMENT_MAX);
    for _ in 0..draws_max {
        if picked.len() == wanted {
            return picked;
        }
        if let Some(m) = set.random_member(rng) {
            if seen.insert(m) {
                picked.push(m);
            }
        }
    }
    let all: Vec<Member> = set.iter().collect();
    sample_indices(rng, size, wanted)
        .into_iter()
        .map(|i| all[i])
        .collect()
}

/// SSCAN key cursor [MATCH pattern] [COUNT count]
///
/// The order of checks and the cursor are HSCAN's; an intset is returned
/// whole with cursor 0.
pub(super) fn sscan(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let Some(cursor) = parse_scan_cursor(&args[2]) else {
        return ctx.error("ERR invalid cursor");
    };
    let scanned = match set_at(ctx, &args[1], Lookup::Read) {
        Err(WrongType) => return ctx.error(WRONGTYPE),
        Ok(None) => return write_scan_reply(ctx, 0, &[]),
        Ok(Some(set)) => parse_scan_args(args, 3, false).map(|options| match set.dict() {
            Some(dict) => scan_dict(dict, cursor, &options, |member, _, out| {
                out.push(member.to_vec())
            }),
            None => {
                let mut all = CollectionScan::default();
                let mut glob_steps = 0;
                for m in set.iter() {
                    all.work_units += 1;
                    let m = m.to_vec();
                    if options.matches(&m, &mut glob_steps) {
                        all.items.push(m);
                    }
                }
                all.work_units += crate::glob::work_units(glob_steps);
                all
            }
        }),
    };
    match scanned {
        Err(e) => ctx.error(e),
        Ok(scan) => {
            ctx.work(scan.work_units);
            write_scan_reply(ctx, scan.cursor, &scan.items);
        }
    }
}
