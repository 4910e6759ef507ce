//! The keyspace iterators: SCAN (incremental, O(COUNT) per call), KEYS
//! (the whole database in one call: the O(N) command that blocks every
//! other client) and RANDOMKEY.

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::resp::ReplyWriter;
use crate::util::{glob_match, parse_i64_strict};

/// SCAN's default COUNT.
const SCAN_COUNT_DEFAULT: u64 = 10;

/// SCAN visits at most COUNT times this many buckets per call, so that a
/// sparse table cannot make one call unbounded (Redis's `maxiterations`).
const SCAN_BUCKETS_PER_COUNT: u64 = 10;

const ITERATOR: CommandSpec = CommandSpec {
    group: "generic",
    flags: READONLY,
    acl_categories: &["keyspace", "read", "slow"],
    ..CommandSpec::DEFAULT
};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "scan",
        arity: -2,
        summary: "Incrementally iterate the keys space",
        since: "2.8.0",
        complexity: "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.",
        handler: Some(scan),
        ..ITERATOR
    },
    CommandSpec {
        name: "keys",
        arity: 2,
        flags: READONLY | O_N,
        acl_categories: &["keyspace", "read", "slow", "dangerous"],
        summary: "Find all keys matching the given pattern",
        complexity: "O(N) with N being the number of keys in the database, under the assumption that the key names in the database and the given pattern have limited length.",
        handler: Some(keys),
        ..ITERATOR
    },
    CommandSpec {
        name: "randomkey",
        arity: 1,
        summary: "Return a random key from the keyspace",
        handler: Some(randomkey),
        ..ITERATOR
    },
];

/// Parses a SCAN cursor as Redis 7.0 does with `strtoull`: an optional sign
/// (a negative number wraps around, so `-1` is 2^64-1), decimal digits,
/// nothing else, no overflow. Leading whitespace is refused; the empty
/// string is cursor 0.
pub fn parse_scan_cursor(arg: &[u8]) -> Option<u64> {
    let (negative, digits) = match arg.first() {
        Some(b'-') => (true, &arg[1..]),
        Some(b'+') => (false, &arg[1..]),
        Some(_) => (false, arg),
        None => return Some(0),
    };
    if digits.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    Some(if negative { v.wrapping_neg() } else { v })
}

/// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]
///
/// Takes a batch of whole buckets from the dict (COUNT is only a hint:
/// a bucket's keys are taken together), then filters it: MATCH, then TYPE,
/// then expiry (an expired key is deleted here, as Redis does).
fn scan(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let Some(mut cursor) = parse_scan_cursor(&args[1]) else {
        return ctx.error("ERR invalid cursor");
    };
    let mut count = SCAN_COUNT_DEFAULT;
    let mut pattern: Option<&[u8]> = None;
    let mut type_name: Option<&[u8]> = None;
    let mut j = 2;
    while j < args.len() {
        let more = args.len() - j - 1;
        if more == 0 {
            return ctx.error("ERR syntax error");
        }
        let (option, value) = (&args[j], &args[j + 1]);
        if option.eq_ignore_ascii_case(b"count") {
            match parse_i64_strict(value) {
                None => return ctx.error("ERR value is not an integer or out of range"),
                Some(n) if n < 1 => return ctx.error("ERR syntax error"),
                Some(n) => count = n as u64,
            }
        } else if option.eq_ignore_ascii_case(b"match") {
            // "*" matches everything: skip the per-key glob.
            pattern = Some(value.as_slice()).filter(|p| *p != b"*");
        } else if option.eq_ignore_ascii_case(b"type") {
            type_name = Some(value.as_slice());
        } else {
            return ctx.error("ERR syntax error");
        }
        j += 2;
    }

    let i = ctx.db_index();
    let dict = &ctx.server.keyspace.dbs[i].keys;
    let mut batch: Vec<Vec<u8>> = Vec::new();
    let mut buckets_left = count.saturating_mul(SCAN_BUCKETS_PER_COUNT);
    let mut buckets_visited = 0u64;
    loop {
        cursor = dict.scan(cursor, |key, _| batch.push(key.to_vec()));
        buckets_visited += 1;
        if cursor == 0 || buckets_left == 0 || batch.len() as u64 >= count {
            break;
        }
        buckets_left -= 1;
    }
    ctx.work(buckets_visited + batch.len() as u64);

    batch.retain(|key| {
        if let Some(p) = pattern {
            if !glob_match(p, key, false) {
                return false;
            }
        }
        // The lookup deletes an expired key.
        match ctx.lookup(key) {
            None => false,
            Some(v) => type_name.map_or(true, |t| t.eq_ignore_ascii_case(v.type_name().as_bytes())),
        }
    });

    let mut w = ctx.w();
    w.array_len(2);
    w.bulk(cursor.to_string().as_bytes());
    w.array_len(batch.len());
    for key in &batch {
        w.bulk(key);
    }
}

/// KEYS pattern: tests every key of the database (one work unit each) in
/// one call. Expired keys are skipped, not deleted, as in Redis.
fn keys(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let pattern = &args[1];
    let all = pattern.as_slice() == b"*";
    let now_ms = ctx.now_ms();
    let i = ctx.db_index();
    let db = &ctx.server.keyspace.dbs[i];
    let mut visited = 0u64;
    let mut matched: Vec<&[u8]> = Vec::new();
    for (key, _) in db.keys.iter() {
        visited += 1;
        if (all || glob_match(pattern, key, false)) && !db.is_expired(key, now_ms) {
            matched.push(key);
        }
    }
    let mut w = ReplyWriter::new(&mut ctx.reply, ctx.protocol);
    w.array_len(matched.len());
    for key in matched {
        w.bulk(key);
    }
    ctx.work_units += visited;
}

/// RANDOMKEY: draws with the engine's seeded RNG. An expired key drawn is
/// deleted and another drawn; each such retry removes a key, so the loop
/// ends within the database's size.
fn randomkey(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let i = ctx.db_index();
    let tries_max = ctx.server.keyspace.dbs[i].len();
    for _ in 0..=tries_max {
        let server = &mut *ctx.server;
        let Some(key) = server.keyspace.dbs[i]
            .keys
            .random_key(&mut server.rng)
            .map(<[u8]>::to_vec)
        else {
            break;
        };
        ctx.work(1);
        if ctx.lookup(&key).is_some() {
            return ctx.bulk(&key);
        }
    }
    ctx.null();
}
