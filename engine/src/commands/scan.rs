//! The keyspace iterators: SCAN (incremental, O(COUNT) per call), KEYS
//! (the whole database in one call: the O(N) command that blocks every
//! other client) and RANDOMKEY.

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::glob::{self, glob_match};
use crate::resp::ReplyWriter;
use crate::util::parse_i64_strict;

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
        tips: &["nondeterministic_output", "request_policy:special"],
        arity: -2,
        summary: "Incrementally iterate the keys space",
        since: "2.8.0",
        complexity: "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.",
        handler: Some(scan),
        ..ITERATOR
    },
    CommandSpec {
        name: "keys",
        tips: &["request_policy:all_shards", "nondeterministic_output_order"],
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
        tips: &["request_policy:all_shards", "nondeterministic_output"],
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

/// The options of SCAN, HSCAN, SSCAN and ZSCAN after the cursor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanArgs<'a> {
    /// COUNT: a hint of how many elements one call takes (at least 1).
    pub count: u64,
    /// MATCH, or None when absent or `*` (which matches everything).
    pub pattern: Option<&'a [u8]>,
    /// TYPE (SCAN only).
    pub type_name: Option<&'a [u8]>,
}

impl ScanArgs<'_> {
    /// Whether `element` passes MATCH, adding the matcher's steps to
    /// `glob_steps` (charge them with [`glob::work_units`]).
    pub fn matches(&self, element: &[u8], glob_steps: &mut u64) -> bool {
        match self.pattern {
            None => true,
            Some(p) => glob_match(p, element, false, glob_steps),
        }
    }
}

/// Parses `[MATCH pattern] [COUNT count] [TYPE type]` from `args[first..]`
/// as Redis 7.0's `scanGenericCommand` does; `TYPE` is accepted only when
/// `allow_type` (the keyspace SCAN). The error is the reply text.
///
/// HSCAN, SSCAN and ZSCAN follow Redis's order: parse the cursor
/// ([`parse_scan_cursor`], "ERR invalid cursor"), then look the key up (a
/// missing key replies [`write_scan_reply`] with cursor 0 and nothing,
/// whatever the options), then the type (WRONGTYPE), and only then these
/// options.
pub fn parse_scan_args(
    args: &[Vec<u8>],
    first: usize,
    allow_type: bool,
) -> Result<ScanArgs<'_>, &'static str> {
    let mut parsed = ScanArgs {
        count: SCAN_COUNT_DEFAULT,
        pattern: None,
        type_name: None,
    };
    let mut j = first;
    while j < args.len() {
        if j + 1 >= args.len() {
            return Err("ERR syntax error");
        }
        let (option, value) = (&args[j], &args[j + 1]);
        if option.eq_ignore_ascii_case(b"count") {
            match parse_i64_strict(value) {
                None => return Err("ERR value is not an integer or out of range"),
                Some(n) if n < 1 => return Err("ERR syntax error"),
                Some(n) => parsed.count = n as u64,
            }
        } else if option.eq_ignore_ascii_case(b"match") {
            // "*" matches everything: skip the per-element glob.
            parsed.pattern = Some(value.as_slice()).filter(|p| *p != b"*");
        } else if allow_type && option.eq_ignore_ascii_case(b"type") {
            parsed.type_name = Some(value.as_slice());
        } else {
            return Err("ERR syntax error");
        }
        j += 2;
    }
    Ok(parsed)
}

/// One call's worth of a collection scan: the next cursor, the reply's
/// elements (already filtered by MATCH) and the work done.
#[derive(Debug, Default)]
pub struct CollectionScan {
    pub cursor: u64,
    pub items: Vec<Vec<u8>>,
    pub work_units: u64,
}

/// HSCAN/SSCAN/ZSCAN over a `hashtable`/`skiplist` encoding: takes whole
/// buckets from `dict` until COUNT reply elements were produced (a hash or
/// zset entry produces two, member and value, exactly as Redis counts), or
/// the bucket budget runs out, or the iteration ends. `emit` pushes the
/// reply elements of one entry; MATCH is then applied to the entry's key
/// and drops everything it pushed when it does not match.
///
/// The guarantee is [`Dict::scan`]'s: an element present for the whole
/// iteration is returned at least once, across any grow or shrink.
///
/// [`Dict::scan`]: crate::dict::Dict::scan
pub fn scan_dict<V>(
    dict: &crate::dict::Dict<V>,
    cursor: u64,
    args: &ScanArgs,
    mut emit: impl FnMut(&[u8], &V, &mut Vec<Vec<u8>>),
) -> CollectionScan {
    let mut out = CollectionScan {
        cursor,
        ..CollectionScan::default()
    };
    let mut produced = 0u64;
    let mut glob_steps = 0;
    let mut buckets_left = args.count.saturating_mul(SCAN_BUCKETS_PER_COUNT);
    loop {
        out.cursor = dict.scan(out.cursor, |key, value| {
            let before = out.items.len();
            emit(key, value, &mut out.items);
            produced += (out.items.len() - before) as u64;
            if !args.matches(key, &mut glob_steps) {
                out.items.truncate(before);
            }
        });
        out.work_units += 1;
        if out.cursor == 0 || buckets_left == 0 || produced >= args.count {
            break;
        }
        buckets_left -= 1;
    }
    out.work_units += produced + glob::work_units(glob_steps);
    out
}

/// Writes a scan reply: `[cursor, [items...]]` (the same in RESP2 and
/// RESP3). Compact encodings (listpack, intset) reply everything at once
/// with cursor 0, as Redis does.
pub fn write_scan_reply(ctx: &mut Ctx, cursor: u64, items: &[Vec<u8>]) {
    let mut w = ctx.w();
    w.array_len(2);
    w.bulk(cursor.to_string().as_bytes());
    w.array_len(items.len());
    for item in items {
        w.bulk(item);
    }
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
    let (count, pattern, type_name) = match parse_scan_args(args, 2, true) {
        Ok(a) => (a.count, a.pattern, a.type_name),
        Err(e) => return ctx.error(e),
    };

    let i = ctx.db_index();
    let (dict, planted) = (&ctx.server.keyspace.dbs[i].keys, &ctx.server.planted);
    let mut batch: Vec<Vec<u8>> = Vec::new();
    let mut buckets_left = count.saturating_mul(SCAN_BUCKETS_PER_COUNT);
    let mut buckets_visited = 0u64;
    loop {
        cursor = planted.scan(dict, cursor, |key, _| batch.push(key.to_vec()));
        buckets_visited += 1;
        if cursor == 0 || buckets_left == 0 || batch.len() as u64 >= count {
            break;
        }
        buckets_left -= 1;
    }
    ctx.work(buckets_visited + batch.len() as u64);

    let mut glob_steps = 0;
    batch.retain(|key| {
        if let Some(p) = pattern {
            if !glob_match(p, key, false, &mut glob_steps) {
                return false;
            }
        }
        // The lookup deletes an expired key.
        match ctx.lookup(key) {
            None => false,
            Some(v) => match type_name {
                None => true,
                Some(t) => t.eq_ignore_ascii_case(v.type_name().as_bytes()),
            },
        }
    });

    ctx.work(glob::work_units(glob_steps));
    write_scan_reply(ctx, cursor, &batch);
}

/// KEYS pattern: tests every key of the database (one work unit each) in
/// one call. Expired keys are skipped, not deleted, as in Redis.
fn keys(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if crate::snapshot_read::open_keys(ctx, &args[1]) {
        return; // answered in slices, as of now
    }
    let pattern = &args[1];
    let all = pattern.as_slice() == b"*";
    let now_ms = ctx.expiry_now_ms();
    let i = ctx.db_index();
    let db = &ctx.server.keyspace.dbs[i];
    let mut visited = 0u64;
    let mut glob_steps = 0;
    let mut matched: Vec<&[u8]> = Vec::new();
    for (key, _) in db.keys.iter() {
        visited += 1;
        if (all || glob_match(pattern, key, false, &mut glob_steps)) && !db.is_expired(key, now_ms)
        {
            matched.push(key);
        }
    }
    let mut w = ReplyWriter::new(&mut ctx.reply, ctx.protocol);
    w.array_len(matched.len());
    for key in matched {
        w.bulk(key);
    }
    ctx.work(visited + glob::work_units(glob_steps));
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::parse_scan_cursor;
    use crate::client::ClientId;
    use crate::event::Event;
    use crate::resp::Frame;
    use crate::testing::{bulk, err, int, TestEngine};
    use crate::Config;

    /// Sends a SCAN and splits the reply into the next cursor and the keys.
    fn scan(t: &mut TestEngine, c: ClientId, args: &[&str]) -> (u64, Vec<String>) {
        let mut full = vec!["SCAN"];
        full.extend_from_slice(args);
        let Frame::Array(parts) = t.cmd(c, &full) else {
            panic!("SCAN replies with an array");
        };
        let [Frame::Bulk(cursor), Frame::Array(keys)] = &parts[..] else {
            panic!("SCAN replies [cursor, keys]: {parts:?}");
        };
        let cursor = std::str::from_utf8(cursor).unwrap().parse().unwrap();
        let keys = keys
            .iter()
            .map(|k| match k {
                Frame::Bulk(b) => String::from_utf8(b.clone()).unwrap(),
                other => panic!("key is a bulk string: {other:?}"),
            })
            .collect();
        (cursor, keys)
    }

    /// Every key of a full iteration with the given options.
    fn scan_all(t: &mut TestEngine, c: ClientId, options: &[&str]) -> Vec<String> {
        let mut cursor = 0u64;
        let mut all = Vec::new();
        for _ in 0..100_000 {
            let cursor_text = cursor.to_string();
            let mut args = vec![cursor_text.as_str()];
            args.extend_from_slice(options);
            let (next, keys) = scan(t, c, &args);
            all.extend(keys);
            cursor = next;
            if cursor == 0 {
                return all;
            }
        }
        panic!("SCAN did not finish");
    }

    fn sorted(mut v: Vec<String>) -> Vec<String> {
        v.sort();
        v.dedup();
        v
    }

    fn executed_work(t: &TestEngine, name: &str) -> u64 {
        t.events
            .iter()
            .rev()
            .find_map(|e| match e {
                Event::Executed(x) if x.name == name => Some(x.work_units),
                _ => None,
            })
            .expect("command recorded")
    }

    #[test]
    fn cursor_parsing_follows_strtoull() {
        assert_eq!(parse_scan_cursor(b"0"), Some(0));
        assert_eq!(parse_scan_cursor(b"00"), Some(0));
        assert_eq!(parse_scan_cursor(b""), Some(0));
        assert_eq!(parse_scan_cursor(b"+1"), Some(1));
        assert_eq!(parse_scan_cursor(b"-0"), Some(0));
        assert_eq!(parse_scan_cursor(b"-1"), Some(u64::MAX));
        assert_eq!(parse_scan_cursor(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_scan_cursor(b"18446744073709551616"), None);
        assert_eq!(parse_scan_cursor(b"-"), None);
        assert_eq!(parse_scan_cursor(b" 1"), None);
        assert_eq!(parse_scan_cursor(b"1 "), None);
        assert_eq!(parse_scan_cursor(b"1.5"), None);
        assert_eq!(parse_scan_cursor(b"0x10"), None);
    }

    #[test]
    fn scan_errors() {
        let mut t = TestEngine::new();
        let c = t.connect();
        assert_eq!(t.cmd(c, &["SCAN", "abc"]), err("ERR invalid cursor"));
        assert_eq!(
            t.cmd(c, &["SCAN", "abc", "COUNT", "0"]),
            err("ERR invalid cursor")
        );
        let syntax = err("ERR syntax error");
        assert_eq!(t.cmd(c, &["SCAN", "0", "COUNT", "0"]), syntax);
        assert_eq!(t.cmd(c, &["SCAN", "0", "count", "-1"]), syntax);
        assert_eq!(t.cmd(c, &["SCAN", "0", "MATCH"]), syntax);
        assert_eq!(t.cmd(c, &["SCAN", "0", "foo", "bar"]), syntax);
        assert_eq!(
            t.cmd(c, &["SCAN", "0", "COUNT", "abc"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(
            t.cmd(c, &["SCAN"]),
            err("ERR wrong number of arguments for 'scan' command")
        );
        assert_eq!(scan(&mut t, c, &["0"]), (0, vec![]));
        assert_eq!(scan(&mut t, c, &["-1", "TYPE", "nosuchtype"]), (0, vec![]));
    }

    #[test]
    fn scan_filters_match_type_and_expired() {
        let mut t = TestEngine::new();
        let c = t.connect();
        for i in 0..100 {
            t.cmd(c, &["SET", &format!("user:{i}"), "v"]);
            t.cmd(c, &["SET", &format!("item:{i}"), "v"]);
        }
        let users = sorted(scan_all(&mut t, c, &["MATCH", "user:*", "COUNT", "7"]));
        assert_eq!(users.len(), 100);
        assert!(users.iter().all(|k| k.starts_with("user:")));
        assert_eq!(sorted(scan_all(&mut t, c, &["TYPE", "STRING"])).len(), 200);
        assert_eq!(scan_all(&mut t, c, &["TYPE", "list"]).len(), 0);
        // MATCH filters after the batch is taken: a call may return nothing
        // and still not be done.
        let (cursor, keys) = scan(&mut t, c, &["0", "MATCH", "nothing*", "COUNT", "5"]);
        assert!(keys.is_empty());
        assert_ne!(cursor, 0);

        for i in 0..50 {
            t.cmd(c, &["PEXPIRE", &format!("item:{i}"), "10"]);
        }
        t.now.mono_ns += 10_000_000;
        t.now.unix_us += 10_000;
        // No cron ran: the keys are logically expired but still stored.
        assert_eq!(t.cmd(c, &["DBSIZE"]), int(200));
        let live = sorted(scan_all(&mut t, c, &["COUNT", "1000"]));
        assert_eq!(live.len(), 150);
        assert!(!live.contains(&"item:0".to_string()));
        // SCAN deleted them as it found them.
        assert_eq!(t.cmd(c, &["DBSIZE"]), int(150));
    }

    #[test]
    fn count_is_a_hint_bounded_by_buckets() {
        let mut t = TestEngine::with_config(Config {
            record_executions: true,
            ..Config::default()
        });
        let c = t.connect();
        for i in 0..1000 {
            t.cmd(c, &["SET", &format!("k{i}"), "v"]);
        }
        let (cursor, keys) = scan(&mut t, c, &["0", "COUNT", "100"]);
        assert!(keys.len() >= 100 && keys.len() < 130, "got {}", keys.len());
        assert_ne!(cursor, 0);
        let work = executed_work(&t, "scan");
        assert!((100..400).contains(&work), "work {work}");
        // One call can take everything.
        let (cursor, keys) = scan(&mut t, c, &["0", "COUNT", "100000"]);
        assert_eq!((cursor, keys.len()), (0, 1000));
        // COUNT's bucket budget stops a call early in a sparse table.
        for i in 0..990 {
            t.cmd(c, &["DEL", &format!("k{i}")]);
        }
        let (_, keys) = scan(&mut t, c, &["0", "COUNT", "1"]);
        assert!(keys.len() <= 10);
        assert!(executed_work(&t, "scan") <= 30);
    }

    /// The SCAN guarantee under churn: between calls, other writes insert
    /// and delete keys in bursts big enough to grow the table several times
    /// and shrink it again (the cron runs in between, rehashing and
    /// shrinking). Every key present for the whole iteration is returned.
    #[test]
    fn scan_returns_every_key_present_throughout_growth_and_shrink() {
        for seed in 0..4u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut t = TestEngine::with_config(Config {
                seed,
                ..Config::default()
            });
            let c = t.connect();
            let stable: Vec<String> = (0..150).map(|i| format!("stable:{i}")).collect();
            for k in &stable {
                t.cmd(c, &["SET", k, "v"]);
            }
            let mut churn: Vec<String> = Vec::new();
            let mut next = 0u64;
            let mut seen = BTreeSet::new();
            let mut cursor = 0u64;
            let mut calls = 0;
            let mut largest = 0;
            let mut smallest_after_peak = usize::MAX;
            loop {
                let cursor_text = cursor.to_string();
                let (c2, keys) = scan(&mut t, c, &[&cursor_text, "COUNT", "5"]);
                seen.extend(keys);
                cursor = c2;
                calls += 1;
                if cursor == 0 {
                    break;
                }
                assert!(calls < 10_000, "SCAN did not finish");
                match calls {
                    3 => {
                        for _ in 0..3000 {
                            let k = format!("churn:{next}");
                            next += 1;
                            t.cmd(c, &["SET", &k, "v"]);
                            churn.push(k);
                        }
                    }
                    12 => {
                        for k in churn.drain(..) {
                            t.cmd(c, &["DEL", &k]);
                        }
                    }
                    _ => {
                        for _ in 0..rng.gen_range(0..6) {
                            if rng.gen_bool(0.5) || churn.is_empty() {
                                let k = format!("churn:{next}");
                                next += 1;
                                t.cmd(c, &["SET", &k, "v"]);
                                churn.push(k);
                            } else {
                                let k = churn.swap_remove(rng.gen_range(0..churn.len()));
                                t.cmd(c, &["UNLINK", &k]);
                            }
                        }
                    }
                }
                t.advance_ms(rng.gen_range(0..200));
                let (a, b) = t.engine.server().keyspace.dbs[0].keys.table_sizes();
                largest = largest.max(a.max(b));
                if largest >= 4096 {
                    smallest_after_peak =
                        smallest_after_peak.min(if b == 0 { a } else { a.min(b) });
                }
            }
            for k in &stable {
                assert!(
                    seen.contains(k),
                    "{k} was present throughout but not returned (seed {seed})"
                );
            }
            assert!(largest >= 4096, "the burst grew the table");
            assert!(
                smallest_after_peak < 4096,
                "deleting the burst shrank the table"
            );
        }
    }

    #[test]
    fn keys_matches_and_skips_expired() {
        let mut t = TestEngine::with_config(Config {
            record_executions: true,
            ..Config::default()
        });
        let c = t.connect();
        assert_eq!(t.cmd(c, &["KEYS", "*"]), Frame::Array(vec![]));
        for i in 0..300 {
            t.cmd(c, &["SET", &format!("k{i}"), "v"]);
        }
        t.cmd(c, &["SET", "other", "v"]);
        t.cmd(c, &["PEXPIRE", "k7", "1"]);
        t.now.mono_ns += 1_000_000;
        t.now.unix_us += 1000;
        let Frame::Array(all) = t.cmd(c, &["KEYS", "*"]) else {
            panic!("array");
        };
        assert_eq!(all.len(), 300);
        assert!(executed_work(&t, "keys") >= 301, "KEYS pays for every key");
        let Frame::Array(some) = t.cmd(c, &["KEYS", "k1?"]) else {
            panic!("array");
        };
        assert_eq!(some.len(), 10);
        assert_eq!(
            t.cmd(c, &["KEYS", "oth[a-f]r"]),
            Frame::Array(vec![bulk("other")])
        );
        // KEYS does not delete the expired key.
        assert_eq!(t.cmd(c, &["DBSIZE"]), int(301));
    }

    #[test]
    fn randomkey_is_deterministic_and_skips_expired() {
        let run = |seed: u64| {
            let mut t = TestEngine::with_config(Config {
                seed,
                ..Config::default()
            });
            let c = t.connect();
            assert_eq!(t.cmd(c, &["RANDOMKEY"]), Frame::Null);
            for i in 0..100 {
                t.cmd(c, &["SET", &format!("k{i}"), "v"]);
            }
            (0..20)
                .map(|_| t.cmd(c, &["RANDOMKEY"]))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));

        let mut t = TestEngine::new();
        let c = t.connect();
        for i in 0..50 {
            let k = format!("gone{i}");
            t.cmd(c, &["SET", &k, "v"]);
            t.cmd(c, &["PEXPIRE", &k, "1"]);
        }
        t.cmd(c, &["SET", "live", "v"]);
        t.now.mono_ns += 1_000_000;
        t.now.unix_us += 1000;
        assert_eq!(t.cmd(c, &["RANDOMKEY"]), bulk("live"));
        t.cmd(c, &["DEL", "live"]);
        t.cmd(c, &["SET", "x", "v"]);
        t.cmd(c, &["PEXPIRE", "x", "1"]);
        t.now.mono_ns += 1_000_000;
        t.now.unix_us += 1000;
        assert_eq!(t.cmd(c, &["RANDOMKEY"]), Frame::Null);
        assert_eq!(t.cmd(c, &["DBSIZE"]), int(0));
    }
}
