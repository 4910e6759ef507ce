//! HyperLogLog commands (Redis 7.0's `hyperloglog.c`): PFADD PFCOUNT
//! PFMERGE PFDEBUG PFSELFTEST, over string values in Redis's own HLL
//! representation ([`crate::types::hll`]), with its replies, errors and
//! the order in which it detects them.
//!
//! Work: one unit per element added, and one per 64 registers decoded or
//! 64 bytes of sparse opcodes scanned ([`hll::DENSE_SCAN_UNITS`] for a whole
//! dense HLL).

use crate::cmd::{flags::*, CommandSpec, Ctx, Lookup};
use crate::notify::{class, notify};
use crate::types::hll::{self, Corrupt, Encoding, REGISTERS};
use crate::value::{RString, Value, WRONGTYPE};

mod selftest;

const NOT_HLL: &str = "WRONGTYPE Key is not a valid HyperLogLog string value.";
const INVALIDOBJ: &str = "INVALIDOBJ Corrupted HLL object detected";

const HLL: CommandSpec = CommandSpec {
    group: "hyperloglog",
    since: "2.8.9",
    first_key: 1,
    last_key: 1,
    key_step: 1,
    ..CommandSpec::DEFAULT
};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "pfadd",
        arity: -2,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: &["write", "hyperloglog", "fast"],
        key_spec_flags: &["RW", "insert"],
        summary: "Adds the specified elements to the specified HyperLogLog.",
        complexity: "O(1) to add every element.",
        handler: Some(pfadd),
        ..HLL
    },
    CommandSpec {
        name: "pfcount",
        arity: -2,
        flags: READONLY | O_N,
        last_key: -1,
        acl_categories: &["read", "hyperloglog", "slow"],
        key_spec_flags: &["RW", "access"],
        summary: "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).",
        complexity: "O(1) with a very small average constant time when called with a single key. O(N) with N being the number of keys, and much bigger constant times, when called with multiple keys.",
        handler: Some(pfcount),
        ..HLL
    },
    CommandSpec {
        name: "pfdebug",
        arity: 3,
        flags: WRITE | DENYOOM | ADMIN | O_N,
        first_key: 2,
        last_key: 2,
        acl_categories: &["write", "hyperloglog", "admin", "slow", "dangerous"],
        key_spec_flags: &["RW", "access"],
        summary: "Internal commands for debugging HyperLogLog values",
        complexity: "N/A",
        handler: Some(pfdebug),
        ..HLL
    },
    CommandSpec {
        name: "pfmerge",
        arity: -2,
        flags: WRITE | DENYOOM | O_N,
        last_key: -1,
        acl_categories: &["write", "hyperloglog", "slow"],
        key_spec_flags: &["RW", "access", "insert"],
        summary: "Merge N different HyperLogLogs into a single one.",
        complexity: "O(N) to merge N HyperLogLogs, but with high constant times.",
        handler: Some(pfmerge),
        ..HLL
    },
    CommandSpec {
        name: "pfselftest",
        arity: 1,
        flags: ADMIN | O_N,
        first_key: 0,
        last_key: 0,
        key_step: 0,
        acl_categories: &["hyperloglog", "admin", "slow", "dangerous"],
        summary: "An internal command for testing HyperLogLog values",
        complexity: "N/A",
        handler: Some(selftest::pfselftest),
        ..HLL
    },
];

/// The HLL at `key` after lazy expiry: `Ok(None)` when missing, `Err` with
/// the reply when the key holds another type or a string that is no HLL.
/// PFCOUNT and PFMERGE's sources (the destination included) are reads: a
/// miss raises `keymiss`.
fn hll_at<'c>(
    ctx: &'c mut Ctx,
    key: &[u8],
    mode: Lookup,
) -> Result<Option<&'c mut RString>, &'static str> {
    match ctx.lookup_for(key, mode) {
        None => Ok(None),
        Some(Value::Str(s)) => match hll::validate(s.as_bytes()) {
            Ok(_) => Ok(Some(s)),
            Err(hll::NotHll) => Err(NOT_HLL),
        },
        #[allow(unreachable_patterns)]
        Some(_) => Err(WRONGTYPE),
    }
}

/// Adds every element; the registers changed and the work, or the first
/// corruption found (what was added before it stays, as in Redis).
fn add_all(
    s: &mut Vec<u8>,
    elements: &[Vec<u8>],
    sparse_max_bytes: usize,
) -> (usize, u64, Result<(), Corrupt>) {
    let (mut updated, mut work) = (0, 0);
    for element in elements {
        match hll::add(s, element, sparse_max_bytes) {
            Ok((changed, units)) => {
                updated += usize::from(changed);
                work += units;
            }
            Err(Corrupt) => return (updated, work, Err(Corrupt)),
        }
    }
    (updated, work, Ok(()))
}

fn pfadd(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let sparse_max_bytes = ctx.server.config.hll_sparse_max_bytes;
    let (key, elements) = (&args[1], &args[2..]);
    match hll_at(ctx, key, Lookup::Write) {
        Err(e) => ctx.error(e),
        Ok(None) => {
            // A new key counts as an update even without elements.
            let mut s = hll::new_sparse();
            let (_, work, result) = add_all(&mut s, elements, sparse_max_bytes);
            debug_assert!(result.is_ok(), "a new HLL is valid");
            hll::invalidate_cache(&mut s);
            ctx.work(work);
            ctx.store(key, Value::Str(RString::new_raw(s)), false);
            notify(ctx, class::STRING, "pfadd", key);
            ctx.int(1);
        }
        Ok(Some(s)) => {
            s.make_raw();
            let (updated, work, result) = add_all(s.bytes_mut(), elements, sparse_max_bytes);
            // Redis's sparse updates invalidate the cache as they go, so
            // the elements added before a corruption leave it invalid.
            if updated > 0 {
                hll::invalidate_cache(s.bytes_mut());
            }
            ctx.work(work);
            if result.is_err() {
                return ctx.error(INVALIDOBJ);
            }
            if updated > 0 {
                ctx.modified_in_place(key);
                notify(ctx, class::STRING, "pfadd", key);
            }
            ctx.int(i64::from(updated > 0));
        }
    }
}

fn pfcount(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if args.len() > 2 {
        return pfcount_union(ctx, &args[1..]);
    }
    let key = &args[1];
    let s = match hll_at(ctx, key, Lookup::Read) {
        Err(e) => return ctx.error(e),
        Ok(None) => return ctx.int(0),
        Ok(Some(s)) => s,
    };
    s.make_raw();
    if let Some(card) = hll::cached_card(s.as_bytes()) {
        return ctx.int(card as i64);
    }
    let work = hll::scan_units(s.as_bytes());
    let counted = hll::count(s.as_bytes());
    if let Ok(card) = counted {
        hll::set_cached_card(s.bytes_mut(), card);
    }
    ctx.work(work);
    match counted {
        Err(Corrupt) => ctx.error(INVALIDOBJ),
        Ok(card) => {
            // Writing the cache modifies the string: Redis signals the key
            // and counts a change, so this read propagates.
            ctx.modified_in_place(key);
            ctx.int(card as i64);
        }
    }
}

/// PFCOUNT over several keys: the estimate of their union, written nowhere.
fn pfcount_union(ctx: &mut Ctx, keys: &[Vec<u8>]) {
    let mut max = Box::new([0u8; REGISTERS]);
    for key in keys {
        match merge_key(ctx, key, &mut max) {
            Ok(_) => {}
            Err(e) => return ctx.error(e),
        }
    }
    ctx.work(hll::RAW_SCAN_UNITS);
    ctx.int(hll::estimate(&hll::raw_histogram(&max)) as i64);
}

/// Merges the HLL at `key` (if any) into `max`; whether it was dense, or
/// the error reply.
fn merge_key(ctx: &mut Ctx, key: &[u8], max: &mut [u8; REGISTERS]) -> Result<bool, &'static str> {
    let Some(s) = hll_at(ctx, key, Lookup::Read)? else {
        return Ok(false);
    };
    let dense = hll::validate(s.as_bytes()) == Ok(Encoding::Dense);
    let work = hll::scan_units(s.as_bytes());
    let merged = hll::merge_into(max, s.as_bytes());
    ctx.work(work);
    merged.map_err(|Corrupt| INVALIDOBJ)?;
    Ok(dense)
}

fn pfmerge(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let sparse_max_bytes = ctx.server.config.hll_sparse_max_bytes;
    let mut max = Box::new([0u8; REGISTERS]);
    let mut use_dense = false;
    // The destination is merged too: it is the first source.
    for key in &args[1..] {
        match merge_key(ctx, key, &mut max) {
            Ok(dense) => use_dense |= dense,
            Err(e) => return ctx.error(e),
        }
    }
    let key = &args[1];
    let mut created = None;
    let s = match hll_at(ctx, key, Lookup::Write) {
        Ok(Some(s)) => s.bytes_mut(),
        _ => created.insert(hll::new_sparse()),
    };
    let mut work = 0;
    if use_dense {
        work += hll::promotion_units(s);
        if hll::make_dense(s).is_err() {
            ctx.work(work);
            return ctx.error(INVALIDOBJ);
        }
    }
    for (i, &m) in max.iter().enumerate() {
        if m > 0 {
            // The destination was validated as a source: no corruption.
            work += hll::raise(s, i, m, sparse_max_bytes).map_or(0, |(_, units)| units);
        }
    }
    work += hll::DENSE_SCAN_UNITS;
    hll::invalidate_cache(s);
    ctx.work(work);
    match created {
        Some(bytes) => ctx.store(key, Value::Str(RString::new_raw(bytes)), false),
        None => {
            if let Some(Value::Str(s)) = ctx.lookup(key) {
                s.make_raw();
            }
            ctx.modified_in_place(key);
        }
    }
    // PFMERGE raises `pfadd` on its destination, as Redis does.
    notify(ctx, class::STRING, "pfadd", key);
    ctx.ok();
}

fn pfdebug(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let sub = args[1].to_ascii_lowercase();
    let key = &args[2];
    let s = match hll_at(ctx, key, Lookup::Write) {
        Err(e) => return ctx.error(e),
        Ok(None) => return ctx.error("ERR The specified key does not exist"),
        Ok(Some(s)) => s,
    };
    s.make_raw();
    match sub.as_slice() {
        b"getreg" => {
            let work = hll::promotion_units(s.as_bytes());
            match hll::make_dense(s.bytes_mut()) {
                Err(Corrupt) => {
                    ctx.work(work);
                    ctx.error(INVALIDOBJ)
                }
                Ok(converted) => {
                    let registers: Vec<u8> = hll::dense_registers(s.as_bytes()).collect();
                    ctx.work(work);
                    if converted {
                        // Redis forces propagation of the encoding change.
                        ctx.server.dirty += 1;
                    }
                    let mut w = ctx.w();
                    w.array_len(REGISTERS);
                    for r in registers {
                        w.int(i64::from(r));
                    }
                }
            }
        }
        b"decode" => {
            if hll::validate(s.as_bytes()) != Ok(Encoding::Sparse) {
                return ctx.error("ERR HLL encoding is not sparse");
            }
            let decoded = hll::decode_sparse(s.as_bytes());
            let work = hll::scan_units(s.as_bytes());
            ctx.work(work);
            ctx.bulk(decoded.as_bytes());
        }
        b"encoding" => {
            let name = match hll::validate(s.as_bytes()) {
                Ok(Encoding::Dense) => "dense",
                _ => "sparse",
            };
            ctx.w().simple(name);
        }
        b"todense" => {
            let work = hll::promotion_units(s.as_bytes());
            let converted = hll::make_dense(s.bytes_mut());
            ctx.work(work);
            match converted {
                Err(Corrupt) => ctx.error(INVALIDOBJ),
                Ok(converted) => {
                    if converted {
                        ctx.server.dirty += 1;
                    }
                    ctx.int(i64::from(converted));
                }
            }
        }
        _ => {
            let msg = format!(
                "ERR Unknown PFDEBUG subcommand '{}'",
                String::from_utf8_lossy(&args[1])
            );
            ctx.error(&msg);
        }
    }
}

#[cfg(test)]
mod tests;
