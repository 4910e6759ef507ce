//! The point commands: ZADD ZINCRBY ZREM ZCARD ZSCORE ZMSCORE ZRANK
//! ZREVRANK ZRANDMEMBER ZSCAN.

use crate::notify::{class, notify};
use rand::Rng;

use super::parse::parse_score;
use super::{
    new_zset_seed, notify_and_delete_if_empty, write_elements, zset_and_writer, NOT_AN_INTEGER,
    SYNTAX_ERROR,
};
use crate::cmd::{Ctx, Lookup};
use crate::commands::scan::{parse_scan_args, parse_scan_cursor, scan_dict, write_scan_reply};
use crate::resp::encode::format_double;
use crate::resp::ReplyWriter;
use crate::types::zset::{AddFlags, AddResult, NotANumber, ZSet};
use crate::util::parse_i64_strict;
use crate::value::{Value, WRONGTYPE};

const NOT_A_FLOAT: &str = "ERR value is not a valid float";

/// ZRANDMEMBER with a negative count repeats members, so its reply is not
/// bounded by the set. Redis builds a reply of any size (and stalls every
/// other client meanwhile); past this many elements seedkv replies "value
/// is out of range" instead.
const RANDMEMBER_REPEATS_MAX: u64 = 1 << 24;

/// ZRANDMEMBER picks by removing random elements from a full copy when the
/// request is more than a third of the set (Redis's
/// `ZRANDMEMBER_SUB_STRATEGY_MUL`), and by drawing distinct ones otherwise.
const RANDMEMBER_SUB_STRATEGY_MUL: u64 = 3;

/// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]
/// Work units per member ZADD parses and inserts.
const ZADD_MEMBER_UNITS: u64 = 3;

pub(crate) fn zadd(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    zadd_generic(ctx, args, false);
}

/// ZINCRBY key increment member: ZADD's code with INCR set, including its
/// option parsing (so `ZINCRBY k nx m` is a syntax error, as in Redis).
pub(super) fn zincrby(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    zadd_generic(ctx, args, true);
}

fn zadd_generic(ctx: &mut Ctx, args: &mut [Vec<u8>], incr_command: bool) {
    let mut flags = AddFlags {
        incr: incr_command,
        ..AddFlags::default()
    };
    let mut ch = false;
    let mut first = 2;
    while first < args.len() {
        let option = args[first].to_ascii_lowercase();
        match option.as_slice() {
            b"nx" => flags.nx = true,
            b"xx" => flags.xx = true,
            b"ch" => ch = true,
            b"incr" => flags.incr = true,
            b"gt" => flags.gt = true,
            b"lt" => flags.lt = true,
            _ => break,
        }
        first += 1;
    }
    let pairs_args = args.len() - first;
    if pairs_args == 0 || !pairs_args.is_multiple_of(2) {
        return ctx.error(SYNTAX_ERROR);
    }
    let pairs = pairs_args / 2;
    if flags.nx && flags.xx {
        return ctx.error("ERR XX and NX options at the same time are not compatible");
    }
    if (flags.nx && (flags.gt || flags.lt)) || (flags.gt && flags.lt) {
        return ctx.error("ERR GT, LT, and/or NX options at the same time are not compatible");
    }
    if flags.incr && pairs > 1 {
        return ctx.error("ERR INCR option supports a single increment-element pair");
    }
    // Every score is checked before anything changes: the command applies
    // fully or not at all.
    let mut scores = Vec::with_capacity(pairs);
    for j in 0..pairs {
        match parse_score(&args[first + 2 * j]) {
            Some(score) => scores.push(score),
            None => return ctx.error(NOT_A_FLOAT),
        }
    }
    // A member costs a score parse, a dict insert and a skiplist node (the
    // cost audit measures ~340 ns, three units).
    ctx.work(ZADD_MEMBER_UNITS * pairs as u64);

    let key = &args[1];
    let limits = ctx.limits();
    let pairs = || {
        scores
            .iter()
            .enumerate()
            .map(|(j, &score)| (args[first + 2 * j + 1].as_slice(), score))
    };
    let exists = match ctx.lookup_as(key, Value::as_zset_mut) {
        Err(_) => return ctx.error(WRONGTYPE),
        Ok(z) => z.is_some(),
    };
    let (tally, failed) = if exists {
        let Ok(Some(zset)) = ctx.lookup_as(key, Value::as_zset_mut) else {
            return;
        };
        let outcome = add_pairs(zset, pairs(), flags, &limits);
        ctx.work(outcome.0.walk_units);
        if outcome.0.added + outcome.0.updated > 0 {
            ctx.signal_key_ready(key);
        }
        outcome
    } else if flags.xx {
        return reply_zadd(ctx, flags.incr, ch, &Tally::default());
    } else {
        // Redis 7.0 picks the encoding from the limits and the first member
        // alone; later members convert it as they are added.
        let skiplist = limits.zset_max_listpack_entries == 0
            || args[first + 1].len() > limits.zset_max_listpack_value_bytes;
        let mut zset = ZSet::new(new_zset_seed(ctx), skiplist);
        let outcome = add_pairs(&mut zset, pairs(), flags, &limits);
        ctx.work(outcome.0.walk_units);
        // A new key always gets its first member (NaN needs an existing
        // score to add to), so it is never stored empty.
        if !zset.is_empty() {
            ctx.store(key, Value::ZSet(Box::new(zset)), false);
            ctx.server.dirty = ctx.server.dirty.saturating_sub(1);
        }
        outcome
    };
    ctx.server.dirty += tally.added + tally.updated;
    if tally.added + tally.updated > 0 {
        let event = if flags.incr { "zincr" } else { "zadd" };
        notify(ctx, class::ZSET, event, key);
    }
    if failed {
        return ctx.error("ERR resulting score is not a number (NaN)");
    }
    reply_zadd(ctx, flags.incr, ch, &tally);
}

/// Adds (member, score) pairs in order, stopping at a NaN increment.
fn add_pairs<'p>(
    zset: &mut ZSet,
    pairs: impl Iterator<Item = (&'p [u8], f64)>,
    flags: AddFlags,
    limits: &crate::types::Limits,
) -> (Tally, bool) {
    let mut tally = Tally::default();
    for (member, score) in pairs {
        // A listpack is walked to find the member, then to place it (and
        // to find it again when its score moves).
        tally.walk_units += 3 * zset.walk_units();
        match zset.add(member, score, flags, limits) {
            Ok(result) => tally.count(&result),
            Err(NotANumber) => return (tally, true),
        }
    }
    (tally, false)
}

/// What ZADD did over all its pairs.
#[derive(Default)]
struct Tally {
    added: u64,
    updated: u64,
    processed: u64,
    score: f64,
    /// Listpack walks ([`ZSet::walk_units`]).
    walk_units: u64,
}

impl Tally {
    fn count(&mut self, r: &AddResult) {
        self.added += u64::from(r.added);
        self.updated += u64::from(r.updated);
        if !r.skipped {
            self.processed += 1;
            self.score = r.score;
        }
    }
}

fn reply_zadd(ctx: &mut Ctx, incr: bool, ch: bool, tally: &Tally) {
    if incr {
        if tally.processed > 0 {
            ctx.w().double(tally.score);
        } else {
            ctx.null();
        }
    } else {
        let n = if ch {
            tally.added + tally.updated
        } else {
            tally.added
        };
        ctx.int(n as i64);
    }
}

/// ZREM key member [member ...]
pub(super) fn zrem(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let key = &args[1];
    let zset = match ctx.lookup_as(key, Value::as_zset_mut) {
        Err(_) => return ctx.error(WRONGTYPE),
        Ok(None) => return ctx.int(0),
        Ok(Some(z)) => z,
    };
    let mut deleted = 0u64;
    let mut visited = 0u64;
    for member in &args[2..] {
        visited += 1 + zset.walk_units();
        if zset.remove(member) {
            deleted += 1;
        }
        if zset.is_empty() {
            break;
        }
    }
    ctx.work(visited);
    ctx.server.dirty += deleted;
    notify_and_delete_if_empty(ctx, key, "zrem", deleted);
    ctx.int(deleted as i64);
}

/// ZCARD key
pub(super) fn zcard(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match ctx.lookup_as_for(&args[1], Value::as_zset_mut, Lookup::Read) {
        Err(_) => ctx.error(WRONGTYPE),
        Ok(None) => ctx.int(0),
        Ok(Some(z)) => {
            let n = z.len();
            ctx.int(n as i64);
        }
    }
}

/// ZSCORE key member
pub(super) fn zscore(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let (zset, mut w) = zset_and_writer(ctx, &args[1]);
    let mut walk_units = 0;
    match zset {
        Err(_) => w.error(WRONGTYPE),
        Ok(z) => match z.and_then(|z| {
            walk_units = z.walk_units();
            z.score(&args[2])
        }) {
            Some(score) => w.double(score),
            None => w.null(),
        },
    }
    ctx.work(walk_units);
}

/// ZMSCORE key member [member ...]: a missing key is an empty set.
pub(super) fn zmscore(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let (zset, mut w) = zset_and_writer(ctx, &args[1]);
    let zset = match zset {
        Err(_) => return w.error(WRONGTYPE),
        Ok(z) => z,
    };
    let walk_units = zset.as_ref().map_or(0, |z| z.walk_units());
    w.array_len(args.len() - 2);
    for member in &args[2..] {
        match zset.as_ref().and_then(|z| z.score(member)) {
            Some(score) => w.double(score),
            None => w.null(),
        }
    }
    ctx.work((args.len() - 2) as u64 * (1 + walk_units));
}

/// ZRANK key member
pub(super) fn zrank(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    rank_generic(ctx, args, false);
}

/// ZREVRANK key member
pub(super) fn zrevrank(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    rank_generic(ctx, args, true);
}

fn rank_generic(ctx: &mut Ctx, args: &mut [Vec<u8>], reverse: bool) {
    let (zset, mut w) = zset_and_writer(ctx, &args[1]);
    let mut walk_units = 0;
    match zset {
        Err(_) => w.error(WRONGTYPE),
        Ok(None) => w.null(),
        Ok(Some(z)) => {
            walk_units = z.walk_units();
            match z.rank(&args[2]) {
                None => w.null(),
                Some(rank) if reverse => w.int((z.len() - 1 - rank) as i64),
                Some(rank) => w.int(rank as i64),
            }
        }
    }
    ctx.work(walk_units);
}

/// ZRANDMEMBER key [count [WITHSCORES]]
pub(super) fn zrandmember(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if args.len() >= 3 {
        let Some(count) = parse_i64_strict(&args[2]) else {
            return ctx.error(NOT_AN_INTEGER);
        };
        if count == i64::MIN {
            return ctx.error(
                "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
            );
        }
        if args.len() > 4 || (args.len() == 4 && !args[3].eq_ignore_ascii_case(b"withscores")) {
            return ctx.error(SYNTAX_ERROR);
        }
        let withscores = args.len() == 4;
        // Redis bounds the count so that count * 2 reply elements fit.
        if withscores && !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&count) {
            return ctx.error("ERR value is out of range");
        }
        return randmember_with_count(ctx, &args[1], count, withscores);
    }
    let i = ctx.db_index();
    let _ = ctx.lookup_read(&args[1]);
    let server = &mut *ctx.server;
    let mut w = ReplyWriter::new(&mut ctx.reply, ctx.protocol);
    let mut walk_units = 0;
    match server.keyspace.dbs[i].get(&args[1]) {
        None => w.null(),
        Some(Value::ZSet(z)) => {
            walk_units = z.walk_units();
            w.bulk(z.random_element(&mut server.rng).0)
        }
        Some(_) => w.error(WRONGTYPE),
    }
    ctx.work(walk_units);
}

fn randmember_with_count(ctx: &mut Ctx, key: &[u8], count: i64, withscores: bool) {
    let i = ctx.db_index();
    let _ = ctx.lookup_read(key);
    let server = &mut *ctx.server;
    let mut w = ReplyWriter::new(&mut ctx.reply, ctx.protocol);
    let zset = match server.keyspace.dbs[i].get(key) {
        None => return w.array_len(0),
        Some(Value::ZSet(z)) => z,
        Some(_) => return w.error(WRONGTYPE),
    };
    let rng = &mut server.rng;
    let size = zset.len() as u64;
    // Draws by rank or at random index a listpack once (one walk).
    let walk_units = zset.walk_units();
    let unique = count >= 0;
    let count = count.unsigned_abs();
    let produced;
    if count == 0 {
        w.array_len(0);
        produced = 0;
    } else if !unique || count == 1 {
        // Case 1: independent draws, repeats allowed, in draw order.
        if count > RANDMEMBER_REPEATS_MAX {
            return w.error("ERR value is out of range");
        }
        let n = count as usize;
        let sampler = zset.sampler();
        write_elements(
            &mut w,
            n,
            (0..n).map(|_| sampler.random_element(rng)),
            withscores,
        );
        produced = count;
    } else if count >= size {
        // Case 2: the whole set, in the order Redis's set-operation
        // iterator walks it (from the highest element down).
        write_elements(
            &mut w,
            size as usize,
            zset.iter_ranks(0, size as usize, true),
            withscores,
        );
        produced = size;
    } else {
        let ranks = distinct_random_ranks(rng, size as usize, count as usize);
        let sampler = zset.sampler();
        write_elements(
            &mut w,
            ranks.len(),
            ranks.iter().map(|&r| sampler.at_rank(r)),
            withscores,
        );
        // Case 3 copies the whole set; case 4 draws only what it returns.
        produced = if count * RANDMEMBER_SUB_STRATEGY_MUL > size {
            size
        } else {
            count
        };
    }
    ctx.work(produced + walk_units);
}

/// `count` distinct ranks below `size`, ascending (`count < size`).
fn distinct_random_ranks(rng: &mut impl Rng, size: usize, count: usize) -> Vec<usize> {
    debug_assert!(count < size);
    if (count as u64) * RANDMEMBER_SUB_STRATEGY_MUL > size as u64 {
        // Case 3: start from everything and drop random ranks.
        let mut ranks: Vec<usize> = (0..size).collect();
        while ranks.len() > count {
            let victim = rng.gen_range(0..ranks.len() as u64) as usize;
            ranks.swap_remove(victim);
        }
        ranks.sort_unstable();
        ranks
    } else {
        // Case 4: Floyd's sampling, `count` draws and no retries.
        let mut chosen = std::collections::BTreeSet::new();
        for top in (size - count)..size {
            let pick = rng.gen_range(0..=top as u64) as usize;
            if !chosen.insert(pick) {
                chosen.insert(top);
            }
        }
        chosen.into_iter().collect()
    }
}

/// ZSCAN key cursor [MATCH pattern] [COUNT count]
///
/// Redis's order: the cursor, then the key (a missing key replies an empty
/// scan), then the type, then the options.
pub(super) fn zscan(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let Some(cursor) = parse_scan_cursor(&args[2]) else {
        return ctx.error("ERR invalid cursor");
    };
    let zset = match ctx.lookup_as_for(&args[1], Value::as_zset_mut, Lookup::Read) {
        Err(_) => return ctx.error(WRONGTYPE),
        Ok(None) => return write_scan_reply(ctx, 0, &[]),
        Ok(Some(z)) => &*z,
    };
    let scan_args = match parse_scan_args(args, 3, false) {
        Ok(a) => a,
        Err(e) => return ctx.error(e),
    };
    let emit = |member: &[u8], score: f64, items: &mut Vec<Vec<u8>>| {
        items.push(member.to_vec());
        items.push(format_double(score).into_bytes());
    };
    let (cursor, items, work_units) = match zset.dict() {
        Some(dict) => {
            let scan = scan_dict(dict, cursor, &scan_args, |m, s, items| emit(m, *s, items));
            (scan.cursor, scan.items, scan.work_units)
        }
        None => {
            // A listpack is returned whole, with cursor 0.
            let mut items = Vec::new();
            let mut glob_steps = 0;
            for (member, score) in zset.iter_ranks(0, zset.len(), false) {
                if scan_args.matches(member, &mut glob_steps) {
                    emit(member, score, &mut items);
                }
            }
            let work_units = zset.len() as u64 + crate::glob::work_units(glob_steps);
            (0, items, work_units)
        }
    };
    ctx.work(work_units);
    write_scan_reply(ctx, cursor, &items);
}
