//! HRANDFIELD and HSCAN: the hash commands that sample or iterate rather
//! than address fields by name.

use std::collections::BTreeSet;

use rand::{Rng, RngCore};

use super::hash_at;
use crate::cmd::{Ctx, Lookup, WrongType};
use crate::commands::scan::{
    parse_scan_args, parse_scan_cursor, scan_dict, write_scan_reply, CollectionScan,
};
use crate::resp::ReplyWriter;
use crate::types::Hash;
use crate::util::parse_i64_strict;
use crate::value::WRONGTYPE;

/// The most elements a negative count may ask for. Redis would try to build
/// a reply of up to 2^63 elements and be killed for its memory; seedkv
/// refuses with Redis's own out-of-range error instead, so that no request
/// can make the engine allocate without bound.
pub const RANDOM_COUNT_MAX: u64 = 1 << 24;

/// Draws of a distinct-elements sample before it falls back to a full
/// shuffle. Sampling runs only when the sample is at most a third of the
/// collection, where a draw is new with probability at least 2/3, so this
/// bound is never reached in practice; it only keeps the loop finite.
const DRAWS_PER_SAMPLE_ELEMENT_MAX: u64 = 16;

/// Parses a random-sampling count as Redis's `getRangeLongFromObjectOrReply`
/// with the range `-LONG_MAX..=LONG_MAX` (HRANDFIELD, SRANDMEMBER).
pub fn parse_random_count(arg: &[u8]) -> Result<i64, &'static str> {
    match parse_i64_strict(arg) {
        None => Err("ERR value is not an integer or out of range"),
        Some(i64::MIN) => Err(
            "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
        ),
        Some(n) => Ok(n),
    }
}

/// Refuses a negative count past [`RANDOM_COUNT_MAX`] (checked after the
/// command's other arguments, where Redis would start replying).
pub fn check_random_count(count: i64) -> Result<(), &'static str> {
    if count < 0 && count.unsigned_abs() > RANDOM_COUNT_MAX {
        return Err("ERR value is out of range");
    }
    Ok(())
}

/// `count` distinct indices of `0..size` (`count < size`), drawn with a
/// partial Fisher-Yates shuffle: O(size).
pub fn sample_indices(rng: &mut dyn RngCore, size: usize, count: usize) -> Vec<usize> {
    debug_assert!(count <= size);
    let mut indices: Vec<usize> = (0..size).collect();
    for i in 0..count {
        let j = rng.gen_range(i as u64..size as u64) as usize;
        indices.swap(i, j);
    }
    indices.truncate(count);
    indices
}

/// HRANDFIELD key [count [WITHVALUES]]
///
/// Without a count: one random field, or null. A positive count: that many
/// distinct fields (the whole hash when it has no more); a negative one:
/// that many independent draws. WITHVALUES adds each value (RESP3: each
/// pair as a two-element array). The count is checked before the key.
pub(super) fn hrandfield(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if args.len() == 2 {
        return hrandfield_one(ctx, &args[1]);
    }
    let count = match parse_random_count(&args[2]) {
        Ok(n) => n,
        Err(e) => return ctx.error(e),
    };
    let with_values = args.len() == 4;
    if args.len() > 4 || (with_values && !args[3].eq_ignore_ascii_case(b"withvalues")) {
        return ctx.error("ERR syntax error");
    }
    if with_values && count.unsigned_abs() > i64::MAX as u64 / 2 {
        return ctx.error("ERR value is out of range");
    }
    if let Err(e) = check_random_count(count) {
        return ctx.error(e);
    }
    if ctx.lookup_read(&args[1]).is_none() {
        return ctx.w().array_len(0);
    }
    let i = ctx.db_index();
    let server = &mut *ctx.server;
    let Some(hash) = server.keyspace.dbs[i]
        .get_mut(&args[1])
        .and_then(|v| v.as_hash())
    else {
        return ctx.error(WRONGTYPE);
    };
    let picked = pick_pairs(hash, &mut server.rng, count);
    let mut w = ReplyWriter::new(&mut ctx.reply, ctx.protocol);
    write_pairs(&mut w, &picked, with_values);
    ctx.work_units += picked.len() as u64 + hash_visit_cost(hash, count, picked.len());
}

fn hrandfield_one(ctx: &mut Ctx, key: &[u8]) {
    if ctx.lookup_read(key).is_none() {
        return ctx.null();
    }
    let i = ctx.db_index();
    let server = &mut *ctx.server;
    let Some(hash) = server.keyspace.dbs[i]
        .get_mut(key)
        .and_then(|v| v.as_hash())
    else {
        return ctx.error(WRONGTYPE);
    };
    let field = hash.random_pair(&mut server.rng).map(|(f, _)| f);
    let mut w = ReplyWriter::new(&mut ctx.reply, ctx.protocol);
    match field {
        Some(f) => w.bulk(f),
        None => w.null(),
    }
    ctx.work_units += 1;
}

/// The pairs HRANDFIELD replies, in reply order.
fn pick_pairs<'h>(hash: &'h Hash, rng: &mut dyn RngCore, count: i64) -> Vec<(&'h [u8], &'h [u8])> {
    let size = hash.len();
    let wanted = count.unsigned_abs().min(RANDOM_COUNT_MAX) as usize;
    if count < 0 && hash.is_listpack() {
        // Independent draws from one walk of the listpack (a draw from the
        // listpack itself would walk it every time).
        let all: Vec<(&[u8], &[u8])> = hash.iter().collect();
        return (0..wanted)
            .map(|_| all[rng.gen_range(0..size as u64) as usize])
            .collect();
    }
    if count < 0 {
        // Independent draws; the bound on a negative count was checked.
        return (0..wanted).filter_map(|_| hash.random_pair(rng)).collect();
    }
    if wanted >= size {
        return hash.iter().collect();
    }
    if hash.is_listpack() || wanted.saturating_mul(3) > size {
        let all: Vec<(&[u8], &[u8])> = hash.iter().collect();
        let mut chosen = sample_indices(rng, size, wanted);
        if hash.is_listpack() {
            // Redis's lpRandomPairsUnique keeps the listpack's order.
            chosen.sort_unstable();
        }
        return chosen.into_iter().map(|i| all[i]).collect();
    }
    // A small sample of a big table: draw until enough distinct fields.
    let mut seen: BTreeSet<&[u8]> = BTreeSet::new();
    let mut picked = Vec::with_capacity(wanted);
    let draws_max = (wanted as u64).saturating_mul(DRAWS_PER_SAMPLE_ELEMENT_MAX);
    for _ in 0..draws_max {
        if picked.len() == wanted {
            return picked;
        }
        if let Some((f, v)) = hash.random_pair(rng) {
            if seen.insert(f) {
                picked.push((f, v));
            }
        }
    }
    let all: Vec<(&[u8], &[u8])> = hash.iter().collect();
    sample_indices(rng, size, wanted)
        .into_iter()
        .map(|i| all[i])
        .collect()
}

/// Work beyond the pairs produced: the whole hash when the sample walks it
/// (a listpack draw walks it too).
fn hash_visit_cost(hash: &Hash, count: i64, produced: usize) -> u64 {
    let walks_all =
        hash.is_listpack() || (count > 0 && (count as u64).saturating_mul(3) > hash.len() as u64);
    if walks_all {
        hash.len() as u64
    } else {
        produced as u64
    }
}

fn write_pairs(w: &mut ReplyWriter, pairs: &[(&[u8], &[u8])], with_values: bool) {
    use crate::resp::Protocol;
    if !with_values {
        w.array_len(pairs.len());
        for (f, _) in pairs {
            w.bulk(f);
        }
        return;
    }
    let resp3 = w.protocol() == Protocol::Resp3;
    w.array_len(if resp3 { pairs.len() } else { 2 * pairs.len() });
    for (f, v) in pairs {
        if resp3 {
            w.array_len(2);
        }
        w.bulk(f);
        w.bulk(v);
    }
}

/// HSCAN key cursor [MATCH pattern] [COUNT count]
///
/// Redis's order: the cursor, then the key (missing: an empty scan, whatever
/// the options), then its type, then the options. A listpack is returned
/// whole with cursor 0; a table is scanned with the keyspace's
/// reverse-binary cursor, COUNT counting fields and values alike.
pub(super) fn hscan(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let Some(cursor) = parse_scan_cursor(&args[2]) else {
        return ctx.error("ERR invalid cursor");
    };
    let scanned = match hash_at(ctx, &args[1], Lookup::Read) {
        Err(WrongType) => return ctx.error(WRONGTYPE),
        Ok(None) => return write_scan_reply(ctx, 0, &[]),
        Ok(Some(hash)) => parse_scan_args(args, 3, false).map(|options| match hash.dict() {
            Some(dict) => scan_dict(dict, cursor, &options, |field, value, out| {
                out.push(field.to_vec());
                out.push(value.to_vec());
            }),
            None => {
                let mut all = CollectionScan::default();
                let mut glob_steps = 0;
                for (field, value) in hash.iter() {
                    all.work_units += 1;
                    if options.matches(field, &mut glob_steps) {
                        all.items.push(field.to_vec());
                        all.items.push(value.to_vec());
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
