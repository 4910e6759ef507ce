//! Keyspace commands: DEL UNLINK EXISTS TOUCH TYPE DBSIZE RENAME RENAMENX
//! COPY MOVE SWAPDB FLUSHDB FLUSHALL OBJECT.
//!
//! The iterating commands (SCAN, KEYS, RANDOMKEY) live in `scan.rs` and the
//! TTL commands in `expire.rs`.
//!
//! Freeing is where these commands differ in cost: `DEL` frees a value
//! inline and pays one work unit per element, which is how a big `DEL`
//! blocks every other client; `UNLINK`, `FLUSHDB ASYNC` and `FLUSHALL ASYNC`
//! hand the value (or the whole database) to the host as an
//! [`Event::Free`], and pay O(1).

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::config::MaxmemoryPolicy;
use crate::db::DATABASES_COUNT;
use crate::engine::{Event, Garbage};
use crate::util::parse_i64_strict;
use crate::value::Value;

/// Redis's OBJ_SHARED_REFCOUNT: the refcount `OBJECT REFCOUNT` reports for
/// the shared small integers.
const SHARED_REFCOUNT: i64 = i32::MAX as i64;

/// Redis shares the integers `0..OBJ_SHARED_INTEGERS` between keys.
const SHARED_INTEGERS: i64 = 10_000;

/// Redis's LFU_INIT_VAL: the counter a new key starts with under an LFU
/// policy. seedkv does not track access frequency yet, so `OBJECT FREQ`
/// reports this.
const LFU_INIT_VAL: i64 = 5;

const KEYSPACE: CommandSpec = CommandSpec {
    group: "generic",
    first_key: 1,
    last_key: 1,
    key_step: 1,
    ..CommandSpec::DEFAULT
};

/// OBJECT's key-reading subcommands.
const OBJECT_SUB: CommandSpec = CommandSpec {
    arity: 3,
    flags: READONLY,
    first_key: 2,
    last_key: 2,
    key_step: 1,
    acl_categories: &["keyspace", "read", "slow"],
    since: "2.2.3",
    tips: &["nondeterministic_output"],
    key_spec_flags: &["RO"],
    ..CommandSpec::DEFAULT
};

const OBJECT_SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "encoding",
        summary: "Inspect the internal encoding of a Redis object",
        handler: Some(object_encoding),
        ..OBJECT_SUB
    },
    CommandSpec {
        name: "freq",
        summary: "Get the logarithmic access frequency counter of a Redis object",
        since: "4.0.0",
        handler: Some(object_freq),
        ..OBJECT_SUB
    },
    CommandSpec {
        name: "help",
        arity: 2,
        flags: LOADING | STALE,
        acl_categories: &["keyspace", "slow"],
        summary: "Show helpful text about the different subcommands",
        since: "6.2.0",
        handler: Some(object_help),
        ..CommandSpec::DEFAULT
    },
    CommandSpec {
        name: "idletime",
        summary: "Get the time since a Redis object was last accessed",
        handler: Some(object_idletime),
        ..OBJECT_SUB
    },
    CommandSpec {
        name: "refcount",
        summary: "Get the number of references to the value of the key",
        handler: Some(object_refcount),
        ..OBJECT_SUB
    },
];

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "del",
        tips: &["request_policy:multi_shard", "response_policy:agg_sum"],
        key_spec_flags: &["RM", "delete"],
        arity: -2,
        flags: WRITE | O_N,
        last_key: -1,
        acl_categories: &["keyspace", "write", "slow"],
        summary: "Delete a key",
        complexity: "O(N) where N is the number of keys that will be removed. When a key to remove holds a value other than a string, the individual complexity for this key is O(M) where M is the number of elements in the list, set, sorted set or hash. Removing a single key that holds a string value is O(1).",
        handler: Some(del),
        ..KEYSPACE
    },
    CommandSpec {
        name: "unlink",
        tips: &["request_policy:multi_shard", "response_policy:agg_sum"],
        key_spec_flags: &["RM", "delete"],
        arity: -2,
        flags: WRITE | FAST | O_N,
        last_key: -1,
        acl_categories: &["keyspace", "write", "fast"],
        summary: "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non blocking.",
        since: "4.0.0",
        complexity: "O(1) for each key removed regardless of its size. Then the command does O(N) work in a different thread in order to reclaim memory, where N is the number of allocations the deleted objects where composed of.",
        handler: Some(unlink),
        ..KEYSPACE
    },
    CommandSpec {
        name: "exists",
        tips: &["request_policy:multi_shard", "response_policy:agg_sum"],
        key_spec_flags: &["RO"],
        arity: -2,
        flags: READONLY | FAST,
        last_key: -1,
        acl_categories: &["keyspace", "read", "fast"],
        summary: "Determine if a key exists",
        complexity: "O(N) where N is the number of keys to check.",
        handler: Some(exists),
        ..KEYSPACE
    },
    CommandSpec {
        name: "touch",
        tips: &["request_policy:multi_shard", "response_policy:agg_sum"],
        key_spec_flags: &["RO"],
        arity: -2,
        flags: READONLY | FAST,
        last_key: -1,
        acl_categories: &["keyspace", "read", "fast"],
        summary: "Alters the last access time of a key(s). Returns the number of existing keys specified.",
        since: "3.2.1",
        complexity: "O(N) where N is the number of keys that will be touched.",
        handler: Some(exists),
        ..KEYSPACE
    },
    CommandSpec {
        name: "type",
        key_spec_flags: &["RO"],
        arity: 2,
        flags: READONLY | FAST,
        acl_categories: &["keyspace", "read", "fast"],
        summary: "Determine the type stored at key",
        handler: Some(type_),
        ..KEYSPACE
    },
    CommandSpec {
        name: "dbsize",
        tips: &["request_policy:all_shards", "response_policy:agg_sum"],
        arity: 1,
        flags: READONLY | FAST,
        first_key: 0,
        last_key: 0,
        key_step: 0,
        acl_categories: &["keyspace", "read", "fast"],
        summary: "Return the number of keys in the selected database",
        handler: Some(dbsize),
        ..KEYSPACE
    },
    CommandSpec {
        name: "rename",
        // Redis has a second key spec for the destination (OW update).
        key_spec_flags: &["RW", "access", "delete"],
        arity: 3,
        flags: WRITE | O_N,
        last_key: 2,
        acl_categories: &["keyspace", "write", "slow"],
        summary: "Rename a key",
        handler: Some(rename),
        ..KEYSPACE
    },
    CommandSpec {
        name: "renamenx",
        // Redis has a second key spec for the destination (OW insert).
        key_spec_flags: &["RW", "access", "delete"],
        arity: 3,
        flags: WRITE | FAST,
        last_key: 2,
        acl_categories: &["keyspace", "write", "fast"],
        summary: "Rename a key, only if the new key does not exist",
        handler: Some(renamenx),
        ..KEYSPACE
    },
    CommandSpec {
        name: "copy",
        // Redis has a second key spec for the destination (OW update).
        key_spec_flags: &["RO", "access"],
        arity: -3,
        flags: WRITE | DENYOOM | O_N,
        last_key: 2,
        acl_categories: &["keyspace", "write", "slow"],
        summary: "Copy a key",
        since: "6.2.0",
        complexity: "O(N) worst case for collections, where N is the number of nested items. O(1) for string values.",
        handler: Some(copy),
        ..KEYSPACE
    },
    CommandSpec {
        name: "move",
        key_spec_flags: &["RW", "access", "update"],
        arity: 3,
        flags: WRITE | FAST,
        acl_categories: &["keyspace", "write", "fast"],
        summary: "Move a key to another database",
        handler: Some(move_),
        ..KEYSPACE
    },
    CommandSpec {
        name: "swapdb",
        arity: 3,
        flags: WRITE | FAST,
        first_key: 0,
        last_key: 0,
        key_step: 0,
        acl_categories: &["keyspace", "write", "fast", "dangerous"],
        summary: "Swaps two Redis databases",
        since: "4.0.0",
        complexity: "O(N) where N is the count of clients watching or blocking on keys from both databases.",
        handler: Some(swapdb),
        ..KEYSPACE
    },
    CommandSpec {
        name: "flushdb",
        tips: &["request_policy:all_shards", "response_policy:all_succeeded"],
        arity: -1,
        flags: WRITE | O_N,
        first_key: 0,
        last_key: 0,
        key_step: 0,
        acl_categories: &["keyspace", "write", "slow", "dangerous"],
        summary: "Remove all keys from the current database",
        complexity: "O(N) where N is the number of keys in the selected database",
        handler: Some(flushdb),
        ..KEYSPACE
    },
    CommandSpec {
        name: "flushall",
        tips: &["request_policy:all_shards", "response_policy:all_succeeded"],
        arity: -1,
        flags: WRITE | O_N,
        first_key: 0,
        last_key: 0,
        key_step: 0,
        acl_categories: &["keyspace", "write", "slow", "dangerous"],
        summary: "Remove all keys from all databases",
        complexity: "O(N) where N is the total number of keys in all databases",
        handler: Some(flushall),
        ..KEYSPACE
    },
    CommandSpec {
        name: "object",
        arity: -2,
        first_key: 0,
        last_key: 0,
        key_step: 0,
        acl_categories: &["slow"],
        summary: "A container for object introspection commands",
        since: "2.2.3",
        complexity: "Depends on subcommand.",
        subcommands: OBJECT_SUBCOMMANDS,
        ..KEYSPACE
    },
];

/// Lazy expiry of `key` in database `db`, which need not be the client's
/// (COPY and MOVE look at two databases). Like [`Ctx::lookup`], it deletes
/// the key if it is logically expired.
pub(crate) fn expire_in_db(ctx: &mut Ctx, db: usize, key: &[u8]) {
    let now_ms = ctx.now_ms();
    if let Some(v) = ctx.server.keyspace.dbs[db].expire_if_needed(key, now_ms) {
        ctx.server.keyspace.expired_keys += 1;
        ctx.free(v, ctx.server.config.lazyfree_lazy_expire);
    }
}

/// Parses a database index the way COPY and MOVE do: an `int`, then a
/// range check. Returns the error to send on failure.
fn parse_db_index(arg: &[u8]) -> Result<usize, &'static str> {
    let Some(i) = parse_i64_strict(arg) else {
        return Err("ERR value is not an integer or out of range");
    };
    if i32::try_from(i).is_err() {
        return Err("ERR value is out of range, value must between -2147483648 and 2147483647");
    }
    usize::try_from(i)
        .ok()
        .filter(|&i| i < DATABASES_COUNT)
        .ok_or("ERR DB index is out of range")
}

fn del(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let lazy = ctx.server.config.lazyfree_lazy_user_del;
    delete_keys(ctx, args, lazy);
}

fn unlink(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    delete_keys(ctx, args, true);
}

/// DEL and UNLINK: `ctx.delete` frees inline (charging every element) or,
/// when `lazy` and the value is big, hands it to the host.
fn delete_keys(ctx: &mut Ctx, args: &[Vec<u8>], lazy: bool) {
    let mut deleted = 0;
    for key in &args[1..] {
        ctx.work(1);
        if ctx.delete(key, lazy) {
            deleted += 1;
        }
    }
    ctx.int(deleted);
}

/// EXISTS and TOUCH: a key named twice counts twice.
fn exists(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let mut found = 0;
    for key in &args[1..] {
        ctx.work(1);
        if ctx.exists(key) {
            found += 1;
        }
    }
    ctx.int(found);
}

fn type_(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let name = ctx.lookup(&args[1]).map_or("none", |v| v.type_name());
    ctx.w().simple(name);
}

/// Counts logically expired keys not yet removed, as Redis does.
fn dbsize(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let n = ctx.db().len();
    ctx.int(n as i64);
}

fn rename(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    rename_generic(ctx, args, false);
}

fn renamenx(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    rename_generic(ctx, args, true);
}

/// RENAME and RENAMENX. The TTL moves with the value; an overwritten
/// destination is freed per `lazyfree-lazy-server-del`.
fn rename_generic(ctx: &mut Ctx, args: &[Vec<u8>], nx: bool) {
    let (src, dst) = (&args[1], &args[2]);
    if ctx.lookup(src).is_none() {
        return ctx.error("ERR no such key");
    }
    if src == dst {
        return if nx { ctx.int(0) } else { ctx.ok() };
    }
    if ctx.exists(dst) && nx {
        return ctx.int(0);
    }
    let db = ctx.db();
    let expire = db.get_expire(src);
    let value = db.remove(src).expect("looked up");
    ctx.store(dst, value, false);
    if let Some(when) = expire {
        ctx.db().set_expire(dst, when);
    }
    if nx {
        ctx.int(1);
    } else {
        ctx.ok();
    }
}

/// COPY source destination [DB destination-db] [REPLACE]
fn copy(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let src_db = ctx.db_index();
    let mut dst_db = src_db;
    let mut replace = false;
    let mut j = 3;
    while j < args.len() {
        let more = args.len() - j - 1;
        if args[j].eq_ignore_ascii_case(b"replace") {
            replace = true;
        } else if args[j].eq_ignore_ascii_case(b"db") && more >= 1 {
            match parse_db_index(&args[j + 1]) {
                Ok(i) => dst_db = i,
                Err(e) => return ctx.error(e),
            }
            j += 1;
        } else {
            return ctx.error("ERR syntax error");
        }
        j += 1;
    }
    let (src, dst) = (&args[1], &args[2]);
    if src_db == dst_db && src == dst {
        return ctx.error("ERR source and destination objects are the same");
    }
    let Some(value) = ctx.lookup(src) else {
        return ctx.int(0);
    };
    let value = value.clone();
    let expire = ctx.db().get_expire(src);
    expire_in_db(ctx, dst_db, dst);
    if ctx.server.keyspace.dbs[dst_db].contains(dst) {
        if !replace {
            return ctx.int(0);
        }
        let old = ctx.server.keyspace.dbs[dst_db].remove(dst).expect("exists");
        ctx.free(old, ctx.server.config.lazyfree_lazy_server_del);
    }
    // Duplicating a value touches every element, like freeing it.
    ctx.work(value.free_cost_units());
    let db = &mut ctx.server.keyspace.dbs[dst_db];
    db.set(dst, value, false);
    if let Some(when) = expire {
        db.set_expire(dst, when);
    }
    ctx.server.dirty += 1;
    ctx.int(1);
}

/// MOVE key db
fn move_(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let src_db = ctx.db_index();
    let dst_db = match parse_db_index(&args[2]) {
        Ok(i) => i,
        Err(e) => return ctx.error(e),
    };
    if src_db == dst_db {
        return ctx.error("ERR source and destination objects are the same");
    }
    let key = &args[1];
    if ctx.lookup(key).is_none() {
        return ctx.int(0);
    }
    expire_in_db(ctx, dst_db, key);
    if ctx.server.keyspace.dbs[dst_db].contains(key) {
        return ctx.int(0);
    }
    let db = ctx.db();
    let expire = db.get_expire(key);
    let value = db.remove(key).expect("looked up");
    let db = &mut ctx.server.keyspace.dbs[dst_db];
    db.set(key, value, false);
    if let Some(when) = expire {
        db.set_expire(key, when);
    }
    ctx.server.dirty += 1;
    ctx.int(1);
}

/// SWAPDB index1 index2
fn swapdb(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let parse = |arg: &[u8]| parse_i64_strict(arg).filter(|&i| i32::try_from(i).is_ok());
    let Some(a) = parse(&args[1]) else {
        return ctx.error("ERR invalid first DB index");
    };
    let Some(b) = parse(&args[2]) else {
        return ctx.error("ERR invalid second DB index");
    };
    let in_range = |i: i64| usize::try_from(i).ok().filter(|&i| i < DATABASES_COUNT);
    let (Some(a), Some(b)) = (in_range(a), in_range(b)) else {
        return ctx.error("ERR DB index is out of range");
    };
    ctx.server.keyspace.swap_dbs(a, b);
    ctx.server.dirty += 1;
    ctx.ok();
}

/// FLUSHDB/FLUSHALL's `[SYNC|ASYNC]`: whether to free in the background,
/// or `None` after a syntax error.
fn parse_flush_mode(ctx: &Ctx, args: &[Vec<u8>]) -> Option<bool> {
    match args.len() {
        1 => Some(ctx.server.config.lazyfree_lazy_user_flush),
        2 if args[1].eq_ignore_ascii_case(b"sync") => Some(false),
        2 if args[1].eq_ignore_ascii_case(b"async") => Some(true),
        _ => None,
    }
}

fn flushdb(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let Some(lazy) = parse_flush_mode(ctx, args) else {
        return ctx.error("ERR syntax error");
    };
    let i = ctx.db_index();
    flush_db(ctx, i, lazy);
    ctx.server.dirty += 1;
    ctx.ok();
}

fn flushall(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let Some(lazy) = parse_flush_mode(ctx, args) else {
        return ctx.error("ERR syntax error");
    };
    for i in 0..DATABASES_COUNT {
        flush_db(ctx, i, lazy);
    }
    ctx.server.dirty += 1;
    ctx.ok();
}

/// Empties database `i`. When `lazy`, the whole database goes to the host
/// in O(1); otherwise every element is freed here and charged.
fn flush_db(ctx: &mut Ctx, i: usize, lazy: bool) {
    let db = &mut ctx.server.keyspace.dbs[i];
    if db.is_empty() {
        return;
    }
    let removed = db.len() as u64;
    let (keys, expires) = db.take();
    let garbage = Garbage::Db { keys, expires };
    if lazy {
        ctx.work(1);
        ctx.events.push_back(Event::Free(garbage));
    } else {
        ctx.work(garbage.work_units());
        drop(garbage);
    }
    ctx.server.dirty += removed;
}

/// The live value for OBJECT's subcommands, or a null reply.
fn object_lookup<'c>(ctx: &'c mut Ctx, key: &[u8]) -> Option<&'c mut Value> {
    if ctx.lookup(key).is_none() {
        ctx.null();
        return None;
    }
    ctx.lookup(key)
}

fn object_encoding(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if let Some(v) = object_lookup(ctx, &args[2]) {
        let name = v.encoding_name();
        ctx.w().bulk_str(name);
    }
}

fn object_refcount(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if let Some(v) = object_lookup(ctx, &args[2]) {
        let shared = match v {
            Value::Str(s) => {
                s.encoding_name() == "int"
                    && parse_i64_strict(&s.bytes).is_some_and(|n| (0..SHARED_INTEGERS).contains(&n))
            }
        };
        ctx.int(if shared { SHARED_REFCOUNT } else { 1 });
    }
}

/// Whether `maxmemory-policy` is one of the LFU policies.
fn lfu_policy(ctx: &Ctx) -> bool {
    matches!(
        ctx.server.config.maxmemory_policy,
        MaxmemoryPolicy::VolatileLfu | MaxmemoryPolicy::AllkeysLfu
    )
}

/// There is no LRU clock yet: every key reports an idle time of 0.
fn object_idletime(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if object_lookup(ctx, &args[2]).is_none() {
        return;
    }
    if lfu_policy(ctx) {
        return ctx.error("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.");
    }
    ctx.int(0);
}

fn object_freq(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if object_lookup(ctx, &args[2]).is_none() {
        return;
    }
    if !lfu_policy(ctx) {
        return ctx.error("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.");
    }
    ctx.int(LFU_INIT_VAL);
}

fn object_help(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    const HELP: &[&str] = &[
        "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to store the value",
        "    associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned integer is",
        "    proportional to the logarithm of the recent access frequency of the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with the specified",
        "    <key>.",
        "HELP",
        "    Prints this help.",
    ];
    let mut w = ctx.w();
    w.array_len(HELP.len());
    for line in HELP {
        w.simple(line);
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::{Event, Garbage};
    use crate::resp::Frame;
    use crate::testing::{bulk, err, int, simple, TestEngine};
    use crate::Config;

    /// A string big enough (4 MiB + 64 KiB) to cost more than the lazy-free
    /// threshold.
    fn big_value() -> Vec<u8> {
        vec![b'x'; 65 << 16]
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

    fn frees(t: &TestEngine) -> usize {
        t.events
            .iter()
            .filter(|e| matches!(e, Event::Free(_)))
            .count()
    }

    #[test]
    fn del_exists_touch_type_dbsize() {
        let mut t = TestEngine::new();
        let c = t.connect();
        t.cmd(c, &["SET", "a", "1"]);
        t.cmd(c, &["SET", "b", "2"]);
        assert_eq!(t.cmd(c, &["DBSIZE"]), int(2));
        assert_eq!(t.cmd(c, &["EXISTS", "a", "a", "nokey", "b"]), int(3));
        assert_eq!(t.cmd(c, &["TOUCH", "a", "nokey"]), int(1));
        assert_eq!(t.cmd(c, &["TYPE", "a"]), simple("string"));
        assert_eq!(t.cmd(c, &["TYPE", "nokey"]), simple("none"));
        assert_eq!(t.cmd(c, &["DEL", "a", "a", "nokey"]), int(1));
        assert_eq!(t.cmd(c, &["UNLINK", "b", "nokey"]), int(1));
        assert_eq!(t.cmd(c, &["DBSIZE"]), int(0));
        assert_eq!(
            t.cmd(c, &["DEL"]),
            err("ERR wrong number of arguments for 'del' command")
        );
        assert_eq!(
            t.cmd(c, &["TYPE", "a", "b"]),
            err("ERR wrong number of arguments for 'type' command")
        );
    }

    #[test]
    fn del_frees_inline_and_unlink_in_the_background() {
        let mut t = TestEngine::with_config(Config {
            record_executions: true,
            ..Config::default()
        });
        let c = t.connect();
        let big = big_value();
        t.cmd_bytes(c, &[b"SET", b"big1", &big]);
        t.cmd_bytes(c, &[b"SET", b"big2", &big]);
        assert_eq!(t.cmd(c, &["DEL", "big1"]), int(1));
        assert!(executed_work(&t, "del") > 64, "DEL pays for the free");
        assert_eq!(frees(&t), 0);
        assert_eq!(t.cmd(c, &["UNLINK", "big2"]), int(1));
        assert!(executed_work(&t, "unlink") < 8, "UNLINK is O(1)");
        assert_eq!(frees(&t), 1);
        // Small values are freed inline even by UNLINK.
        t.cmd(c, &["SET", "small", "v"]);
        assert_eq!(t.cmd(c, &["UNLINK", "small"]), int(1));
        assert_eq!(frees(&t), 1);
    }

    #[test]
    fn del_honours_lazyfree_lazy_user_del() {
        let mut t = TestEngine::with_config(Config {
            lazyfree_lazy_user_del: true,
            ..Config::default()
        });
        let c = t.connect();
        t.cmd_bytes(c, &[b"SET", b"big", &big_value()]);
        assert_eq!(t.cmd(c, &["DEL", "big"]), int(1));
        assert_eq!(frees(&t), 1);
    }

    #[test]
    fn rename_and_renamenx() {
        let mut t = TestEngine::new();
        let c = t.connect();
        assert_eq!(t.cmd(c, &["RENAME", "nokey", "x"]), err("ERR no such key"));
        assert_eq!(
            t.cmd(c, &["RENAME", "nokey", "nokey"]),
            err("ERR no such key")
        );
        assert_eq!(
            t.cmd(c, &["RENAMENX", "nokey", "x"]),
            err("ERR no such key")
        );
        t.cmd(c, &["SET", "a", "1"]);
        assert_eq!(t.cmd(c, &["RENAME", "a", "a"]), simple("OK"));
        assert_eq!(t.cmd(c, &["RENAMENX", "a", "a"]), int(0));
        t.cmd(c, &["EXPIRE", "a", "100"]);
        assert_eq!(t.cmd(c, &["RENAME", "a", "b"]), simple("OK"));
        assert_eq!(t.cmd(c, &["EXISTS", "a"]), int(0));
        assert_eq!(t.cmd(c, &["GET", "b"]), bulk("1"));
        assert_eq!(t.cmd(c, &["TTL", "b"]), int(100));
        // Overwriting drops the destination's TTL along with its value.
        t.cmd(c, &["SET", "c", "3"]);
        t.cmd(c, &["EXPIRE", "b", "5"]);
        t.cmd(c, &["PERSIST", "b"]);
        assert_eq!(t.cmd(c, &["RENAME", "c", "b"]), simple("OK"));
        assert_eq!(t.cmd(c, &["GET", "b"]), bulk("3"));
        assert_eq!(t.cmd(c, &["TTL", "b"]), int(-1));
        t.cmd(c, &["SET", "d", "4"]);
        assert_eq!(t.cmd(c, &["RENAMENX", "d", "b"]), int(0));
        assert_eq!(t.cmd(c, &["RENAMENX", "d", "e"]), int(1));
        assert_eq!(t.cmd(c, &["GET", "e"]), bulk("4"));
        assert_eq!(t.cmd(c, &["DBSIZE"]), int(2));
    }

    #[test]
    fn rename_of_an_expired_key_is_no_such_key() {
        let mut t = TestEngine::new();
        let c = t.connect();
        t.cmd(c, &["SET", "a", "1"]);
        t.cmd(c, &["PEXPIRE", "a", "10"]);
        t.advance_ms(10);
        assert_eq!(t.cmd(c, &["RENAME", "a", "b"]), err("ERR no such key"));
    }

    #[test]
    fn copy_within_and_across_databases() {
        let mut t = TestEngine::new();
        let c = t.connect();
        t.cmd(c, &["SET", "a", "1"]);
        t.cmd(c, &["EXPIRE", "a", "100"]);
        let out_of_range = err("ERR DB index is out of range");
        let not_int = err("ERR value is not an integer or out of range");
        assert_eq!(t.cmd(c, &["COPY", "a", "b", "DB", "16"]), out_of_range);
        assert_eq!(t.cmd(c, &["COPY", "a", "b", "db", "-1"]), out_of_range);
        assert_eq!(t.cmd(c, &["COPY", "a", "b", "db", "x"]), not_int);
        assert_eq!(
            t.cmd(c, &["COPY", "a", "b", "db", "4294967296"]),
            err("ERR value is out of range, value must between -2147483648 and 2147483647")
        );
        assert_eq!(
            t.cmd(c, &["MOVE", "a", "-4294967296"]),
            err("ERR value is out of range, value must between -2147483648 and 2147483647")
        );
        assert_eq!(t.cmd(c, &["COPY", "a", "b", "db"]), err("ERR syntax error"));
        assert_eq!(
            t.cmd(c, &["COPY", "a", "b", "foo"]),
            err("ERR syntax error")
        );
        let same = err("ERR source and destination objects are the same");
        assert_eq!(t.cmd(c, &["COPY", "a", "a"]), same);
        assert_eq!(t.cmd(c, &["COPY", "a", "a", "db", "0"]), same);
        assert_eq!(t.cmd(c, &["COPY", "nokey", "b"]), int(0));
        assert_eq!(t.cmd(c, &["COPY", "a", "b"]), int(1));
        assert_eq!(t.cmd(c, &["TTL", "b"]), int(100));
        assert_eq!(t.cmd(c, &["COPY", "a", "b"]), int(0));
        t.cmd(c, &["SET", "a", "2"]);
        assert_eq!(t.cmd(c, &["COPY", "a", "b", "REPLACE"]), int(1));
        assert_eq!(t.cmd(c, &["GET", "b"]), bulk("2"));
        assert_eq!(t.cmd(c, &["TTL", "b"]), int(-1));
        assert_eq!(t.cmd(c, &["COPY", "a", "a", "DB", "3"]), int(1));
        t.cmd(c, &["SELECT", "3"]);
        assert_eq!(t.cmd(c, &["GET", "a"]), bulk("2"));
        // The copy is independent of the original.
        t.cmd(c, &["SET", "a", "changed"]);
        t.cmd(c, &["SELECT", "0"]);
        assert_eq!(t.cmd(c, &["GET", "a"]), bulk("2"));
    }

    #[test]
    fn move_between_databases() {
        let mut t = TestEngine::new();
        let c = t.connect();
        t.cmd(c, &["SET", "a", "1"]);
        t.cmd(c, &["EXPIRE", "a", "100"]);
        assert_eq!(
            t.cmd(c, &["MOVE", "a", "0"]),
            err("ERR source and destination objects are the same")
        );
        assert_eq!(
            t.cmd(c, &["MOVE", "a", "16"]),
            err("ERR DB index is out of range")
        );
        assert_eq!(
            t.cmd(c, &["MOVE", "a", "x"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(t.cmd(c, &["MOVE", "nokey", "1"]), int(0));
        assert_eq!(t.cmd(c, &["MOVE", "a", "1"]), int(1));
        assert_eq!(t.cmd(c, &["EXISTS", "a"]), int(0));
        t.cmd(c, &["SET", "a", "0"]);
        assert_eq!(
            t.cmd(c, &["MOVE", "a", "1"]),
            int(0),
            "exists in the target"
        );
        t.cmd(c, &["SELECT", "1"]);
        assert_eq!(t.cmd(c, &["GET", "a"]), bulk("1"));
        assert_eq!(t.cmd(c, &["TTL", "a"]), int(100));
    }

    #[test]
    fn swapdb() {
        let mut t = TestEngine::new();
        let c = t.connect();
        t.cmd(c, &["SET", "a", "zero"]);
        t.cmd(c, &["EXPIRE", "a", "100"]);
        assert_eq!(
            t.cmd(c, &["SWAPDB", "x", "1"]),
            err("ERR invalid first DB index")
        );
        assert_eq!(
            t.cmd(c, &["SWAPDB", "1", "x"]),
            err("ERR invalid second DB index")
        );
        assert_eq!(
            t.cmd(c, &["SWAPDB", "0", "16"]),
            err("ERR DB index is out of range")
        );
        assert_eq!(
            t.cmd(c, &["SWAPDB", "-1", "0"]),
            err("ERR DB index is out of range")
        );
        assert_eq!(
            t.cmd(c, &["SWAPDB", "0", "4294967296"]),
            err("ERR invalid second DB index")
        );
        assert_eq!(t.cmd(c, &["SWAPDB", "0", "0"]), simple("OK"));
        assert_eq!(t.cmd(c, &["SWAPDB", "0", "5"]), simple("OK"));
        assert_eq!(t.cmd(c, &["DBSIZE"]), int(0));
        t.cmd(c, &["SELECT", "5"]);
        assert_eq!(t.cmd(c, &["GET", "a"]), bulk("zero"));
        assert_eq!(t.cmd(c, &["TTL", "a"]), int(100));
    }

    #[test]
    fn flush_sync_and_async() {
        let mut t = TestEngine::with_config(Config {
            record_executions: true,
            ..Config::default()
        });
        let c = t.connect();
        assert_eq!(t.cmd(c, &["FLUSHDB", "foo"]), err("ERR syntax error"));
        assert_eq!(
            t.cmd(c, &["FLUSHDB", "sync", "async"]),
            err("ERR syntax error")
        );
        assert_eq!(
            t.cmd(c, &["FLUSHALL", "foo", "bar"]),
            err("ERR syntax error")
        );
        for i in 0..500 {
            t.cmd(c, &["SET", &format!("k{i}"), "v"]);
        }
        assert_eq!(t.cmd(c, &["FLUSHDB", "SYNC"]), simple("OK"));
        assert!(executed_work(&t, "flushdb") >= 500);
        assert_eq!(t.cmd(c, &["DBSIZE"]), int(0));
        for i in 0..500 {
            t.cmd(c, &["SET", &format!("k{i}"), "v"]);
        }
        assert_eq!(t.cmd(c, &["FLUSHDB", "async"]), simple("OK"));
        assert!(executed_work(&t, "flushdb") < 8);
        assert!(t.events.iter().any(|e| matches!(
            e,
            Event::Free(Garbage::Db { keys, .. }) if keys.len() == 500
        )));
        assert_eq!(t.cmd(c, &["DBSIZE"]), int(0));

        t.cmd(c, &["SET", "a", "1"]);
        t.cmd(c, &["SELECT", "9"]);
        t.cmd(c, &["SET", "b", "1"]);
        assert_eq!(t.cmd(c, &["FLUSHALL"]), simple("OK"));
        assert_eq!(t.cmd(c, &["DBSIZE"]), int(0));
        t.cmd(c, &["SELECT", "0"]);
        assert_eq!(t.cmd(c, &["DBSIZE"]), int(0));
    }

    #[test]
    fn flush_honours_lazyfree_lazy_user_flush() {
        let mut t = TestEngine::with_config(Config {
            lazyfree_lazy_user_flush: true,
            ..Config::default()
        });
        let c = t.connect();
        t.cmd(c, &["SET", "a", "1"]);
        assert_eq!(t.cmd(c, &["FLUSHALL"]), simple("OK"));
        assert_eq!(frees(&t), 1);
        t.cmd(c, &["SET", "a", "1"]);
        assert_eq!(t.cmd(c, &["FLUSHALL", "SYNC"]), simple("OK"));
        assert_eq!(frees(&t), 1);
    }

    #[test]
    fn object_subcommands() {
        let mut t = TestEngine::new();
        let c = t.connect();
        t.cmd(c, &["SET", "i", "1"]);
        t.cmd(c, &["SET", "big", "10000"]);
        t.cmd(c, &["SET", "s", "hello"]);
        t.cmd(c, &["SET", "r", &"x".repeat(45)]);
        assert_eq!(t.cmd(c, &["OBJECT", "ENCODING", "i"]), bulk("int"));
        assert_eq!(t.cmd(c, &["object", "encoding", "s"]), bulk("embstr"));
        assert_eq!(t.cmd(c, &["OBJECT", "ENCODING", "r"]), bulk("raw"));
        assert_eq!(t.cmd(c, &["OBJECT", "ENCODING", "nokey"]), Frame::Null);
        assert_eq!(t.cmd(c, &["OBJECT", "REFCOUNT", "i"]), int(2147483647));
        assert_eq!(t.cmd(c, &["OBJECT", "REFCOUNT", "big"]), int(1));
        assert_eq!(t.cmd(c, &["OBJECT", "REFCOUNT", "s"]), int(1));
        assert_eq!(t.cmd(c, &["OBJECT", "IDLETIME", "s"]), int(0));
        assert_eq!(t.cmd(c, &["OBJECT", "IDLETIME", "nokey"]), Frame::Null);
        assert_eq!(
            t.cmd(c, &["OBJECT", "FREQ", "s"]),
            err("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
        );
        assert_eq!(
            t.cmd(c, &["OBJECT", "foo", "s"]),
            err("ERR unknown subcommand 'foo'. Try OBJECT HELP.")
        );
        assert_eq!(
            t.cmd(c, &["OBJECT", "ENCODING"]),
            err("ERR wrong number of arguments for 'object|encoding' command")
        );
        assert_eq!(
            t.cmd(c, &["OBJECT", "HELP", "x"]),
            err("ERR wrong number of arguments for 'object|help' command")
        );
        assert_eq!(
            t.cmd(c, &["OBJECT"]),
            err("ERR wrong number of arguments for 'object' command")
        );
        let Frame::Array(lines) = t.cmd(c, &["OBJECT", "HELP"]) else {
            panic!("help is an array");
        };
        assert_eq!(lines.len(), 15);
        assert_eq!(
            lines[0],
            simple("OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
        );
        assert_eq!(lines[14], simple("    Prints this help."));
    }

    #[test]
    fn object_freq_and_idletime_under_lfu() {
        let mut t = TestEngine::with_config(Config {
            maxmemory_policy: crate::config::MaxmemoryPolicy::AllkeysLfu,
            ..Config::default()
        });
        let c = t.connect();
        t.cmd(c, &["SET", "s", "v"]);
        assert_eq!(t.cmd(c, &["OBJECT", "FREQ", "s"]), int(super::LFU_INIT_VAL));
        assert_eq!(t.cmd(c, &["OBJECT", "FREQ", "nokey"]), Frame::Null);
        assert_eq!(
            t.cmd(c, &["OBJECT", "IDLETIME", "s"]),
            err("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
        );
    }
}
