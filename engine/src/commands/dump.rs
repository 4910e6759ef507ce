//! DUMP and RESTORE: a key's value as Redis's serialized payload (see
//! [`crate::rdb::dump`]) and back, with RESTORE's options and errors in
//! the order Redis 7.0's `restoreCommand` checks them.

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::commands::config::config_get;
use crate::commands::keys::KEYSPACE;
use crate::lru::{LRU_CLOCK_MAX, LRU_CLOCK_RESOLUTION_MS};
use crate::notify::{class, notify};
use crate::rdb::dump::{self, Refused};
use crate::rdb::object::Build;
use crate::util::parse_i64_strict;

const NOT_AN_INTEGER: &str = "ERR value is not an integer or out of range";

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "dump",
        arity: 2,
        flags: READONLY,
        acl_categories: &["keyspace", "read", "slow"],
        summary: "Return a serialized version of the value stored at the specified key.",
        since: "2.6.0",
        complexity: "O(1) to access the key and additional O(N*M) to serialize it, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1).",
        tips: &["nondeterministic_output"],
        key_spec_flags: &["RO", "access"],
        handler: Some(dump_command),
        ..KEYSPACE
    },
    CommandSpec {
        name: "restore",
        arity: -4,
        flags: WRITE | DENYOOM,
        acl_categories: &["keyspace", "write", "slow", "dangerous"],
        summary: "Create a key using the provided serialized value, previously obtained using DUMP.",
        since: "2.6.0",
        complexity: "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N)).",
        key_spec_flags: &["OW", "update"],
        handler: Some(restore),
        ..KEYSPACE
    },
];

/// A yes/no parameter kept in the config's extras (`rdbcompression`...).
fn config_yes(ctx: &Ctx, name: &str) -> bool {
    config_get(&ctx.server.config, name).is_none_or(|v| v == "yes")
}

fn dump_command(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let compress = config_yes(ctx, "rdbcompression");
    let Some(value) = ctx.lookup_read(&args[1]) else {
        return ctx.null();
    };
    let (work_units, payload) = dump::create(value, compress);
    ctx.work(work_units);
    ctx.bulk(&payload);
}

/// RESTORE's options after the payload.
#[derive(Default)]
struct Options {
    replace: bool,
    absttl: bool,
    idle_s: Option<i64>,
    freq: Option<i64>,
}

/// Parses the options as `restoreCommand` does: IDLETIME and FREQ exclude
/// each other (the second is a syntax error), numbers are checked as met.
fn parse_options(args: &[Vec<u8>]) -> Result<Options, &'static str> {
    let mut o = Options::default();
    let mut j = 4;
    while j < args.len() {
        let has_value = j + 1 < args.len();
        let a = &args[j];
        if a.eq_ignore_ascii_case(b"replace") {
            o.replace = true;
        } else if a.eq_ignore_ascii_case(b"absttl") {
            o.absttl = true;
        } else if a.eq_ignore_ascii_case(b"idletime") && has_value && o.freq.is_none() {
            let v = parse_i64_strict(&args[j + 1]).ok_or(NOT_AN_INTEGER)?;
            if v < 0 {
                return Err("ERR Invalid IDLETIME value, must be >= 0");
            }
            o.idle_s = Some(v);
            j += 1;
        } else if a.eq_ignore_ascii_case(b"freq") && has_value && o.idle_s.is_none() {
            let v = parse_i64_strict(&args[j + 1]).ok_or(NOT_AN_INTEGER)?;
            if !(0..=255).contains(&v) {
                return Err("ERR Invalid FREQ value, must be >= 0 and <= 255");
            }
            o.freq = Some(v);
            j += 1;
        } else {
            return Err("ERR syntax error");
        }
        j += 1;
    }
    Ok(o)
}

fn restore(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let options = match parse_options(args) {
        Ok(o) => o,
        Err(e) => return ctx.error(e),
    };
    let key = &args[1];
    let existed = ctx.lookup(key).is_some();
    if existed && !options.replace {
        return ctx.error("BUSYKEY Target key name already exists.");
    }
    let ttl = match parse_i64_strict(&args[2]) {
        None => return ctx.error(NOT_AN_INTEGER),
        Some(t) if t < 0 => return ctx.error("ERR Invalid TTL value, must be >= 0"),
        Some(t) => t,
    };
    let build = Build {
        limits: ctx.limits(),
        seed: ctx.collection_hash_seed(),
    };
    let value = match dump::load(&args[3], build) {
        Ok((value, work_units)) => {
            ctx.work(work_units);
            value
        }
        Err(Refused::VersionOrChecksum) => {
            return ctx.error("ERR DUMP payload version or checksum are wrong")
        }
        Err(Refused::BadData(_)) => return ctx.error("ERR Bad data format"),
    };
    let lazy = ctx.server.config.lazyfree_lazy_server_del;
    if options.replace && existed {
        ctx.delete(key, lazy);
    }
    let now_ms = ctx.now_ms() as i64;
    let when_ms = match (ttl, options.absttl) {
        (0, _) => None,
        (t, true) => Some(t),
        // Redis adds in C and wraps; a wrapped deadline is in the past.
        (t, false) => Some(t.wrapping_add(now_ms)),
    };
    if when_ms.is_some_and(|w| w <= now_ms) {
        // Already expired: the old value (if REPLACE) is gone, nothing new.
        ctx.free(value, false);
        if options.replace && existed {
            crate::commands::expire::propagate_deletion(ctx, key, lazy);
            notify(ctx, class::GENERIC, "del", key);
        }
        return ctx.ok();
    }
    ctx.store(key, value, false);
    notify(ctx, class::GENERIC, "restore", key);
    if let (Some(w), false) = (when_ms, options.absttl) {
        // A relative TTL replays as the absolute time it meant.
        let w_text = w.to_string();
        let mut argv: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        argv[2] = w_text.as_bytes();
        argv.push(b"ABSTTL");
        ctx.propagate(&argv);
    }
    let i = ctx.db_index();
    if let Some(w) = when_ms {
        ctx.set_expire_in(i, key, w as u64);
    }
    let db = &mut ctx.server.keyspace.dbs[i];
    if let Some(meta) = access_meta(db.access(), &options) {
        db.set_access_meta(key, meta);
    }
    ctx.ok();
}

/// `objectSetLRUOrLFU(val, freq, idle, LRU_CLOCK(), 1000)`: the meta word
/// RESTORE's FREQ (under an LFU policy) or IDLETIME (otherwise) asks for.
fn access_meta(access: &crate::lru::Access, o: &Options) -> Option<u32> {
    if access.lfu {
        let freq = o.freq?;
        return Some((access.lfu_minutes << 8) | freq as u32);
    }
    let idle_s = o.idle_s?;
    let idle_ticks = idle_s.wrapping_mul(1000) / LRU_CLOCK_RESOLUTION_MS as i64;
    let mut at = i64::from(access.lru_clock).wrapping_sub(idle_ticks);
    if at < 0 {
        at = at.wrapping_add(i64::from(LRU_CLOCK_MAX));
    }
    // The object's lru field is 24 bits wide.
    Some(at as u32 & LRU_CLOCK_MAX)
}
