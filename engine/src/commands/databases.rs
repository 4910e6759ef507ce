//! Commands that work across databases or on whole databases: COPY MOVE
//! SWAPDB FLUSHDB FLUSHALL.
//!
//! `FLUSHDB ASYNC` and `FLUSHALL ASYNC` (or `lazyfree-lazy-user-flush`) hand
//! each whole database to the host as one [`Event::Free`] and pay O(1); the
//! SYNC forms free every element inline and pay for each, blocking every
//! other client for as long as real Redis does.

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::commands::keys::KEYSPACE;
use crate::db::DATABASES_COUNT;
use crate::event::{Event, Garbage};
use crate::notify::{class, notify_in_db};
use crate::util::parse_i64_strict;

pub const COMMANDS: &[CommandSpec] = &[
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
];

/// Lazy expiry of `key` in database `db`, which need not be the client's
/// (COPY and MOVE look at two databases). Like [`Ctx::lookup`], it deletes
/// the key if it is logically expired.
pub(crate) fn expire_in_db(ctx: &mut Ctx, db: usize, key: &[u8]) {
    if ctx.replica_keeps_expired().is_some() {
        return; // only the primary's DEL removes it
    }
    let now_ms = ctx.expiry_now_ms();
    if let Some(v) = ctx.server.keyspace.dbs[db].expire_if_needed(key, now_ms) {
        ctx.server.keyspace.expired_keys += 1;
        let lazy = ctx.server.config.lazyfree_lazy_expire;
        ctx.propagate_deletion(db, key, lazy);
        ctx.free(v, lazy);
        crate::notify::expired_on_access(ctx, db, key);
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
    let Some(value) = ctx.lookup_read(src) else {
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
    ctx.server.keyspace.dbs[dst_db].set(dst, value, false);
    if let Some(when) = expire {
        ctx.set_expire_in(dst_db, dst, when);
    }
    ctx.server.blocking.signal(dst_db, dst);
    ctx.server.dirty += 1;
    // Redis adds the copy anew (after deleting a replaced destination).
    notify_in_db(ctx, class::NEW, "new", dst, dst_db);
    notify_in_db(ctx, class::GENERIC, "copy_to", dst, dst_db);
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
    let src_db = ctx.db_index();
    ctx.server.blocking.signal(src_db, key);
    ctx.server.keyspace.dbs[dst_db].set(key, value, false);
    if let Some(when) = expire {
        ctx.set_expire_in(dst_db, key, when);
    }
    ctx.server.blocking.signal(dst_db, key);
    ctx.server.dirty += 1;
    notify_in_db(ctx, class::NEW, "new", key, dst_db);
    notify_in_db(ctx, class::GENERIC, "move_from", key, src_db);
    notify_in_db(ctx, class::GENERIC, "move_to", key, dst_db);
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
    // Clients blocked in either database now wait on the other's keys.
    ctx.server.blocking.signal_db(a);
    ctx.server.blocking.signal_db(b);
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
    invalidate_tracked_on_flush(ctx);
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
    invalidate_tracked_on_flush(ctx);
    ctx.server.dirty += 1;
    ctx.ok();
}

/// Every tracking client is told that everything it cached is invalid, and
/// the tracking table is emptied, whatever the flushed databases held
/// (Redis's `signalFlushedDb`).
fn invalidate_tracked_on_flush(ctx: &mut Ctx) {
    let tracking = &mut ctx.server.tracking;
    let work_units = crate::tracking::invalidate_on_flush(tracking, ctx.clients);
    ctx.work(work_units);
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
    // Blocked XREADGROUPs learn that their streams are gone.
    ctx.server.blocking.signal_db(i);
    let garbage = Garbage::Db(Box::new(crate::event::FreedDb { keys, expires }));
    if lazy {
        ctx.work(1);
        ctx.events.push_back(Event::Free(garbage));
    } else {
        ctx.work(garbage.work_units());
        drop(garbage);
    }
    ctx.server.dirty += removed;
}

#[cfg(test)]
mod tests {
    use crate::event::{Event, Garbage};
    use crate::testing::{bulk, err, int, simple, TestEngine};
    use crate::Config;

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
        assert!(t.executed_work("flushdb") >= 500);
        assert_eq!(t.cmd(c, &["DBSIZE"]), int(0));
        for i in 0..500 {
            t.cmd(c, &["SET", &format!("k{i}"), "v"]);
        }
        assert_eq!(t.cmd(c, &["FLUSHDB", "async"]), simple("OK"));
        assert!(t.executed_work("flushdb") < 8);
        assert!(t.events.iter().any(|e| matches!(
            e,
            Event::Free(Garbage::Db(db)) if db.keys.len() == 500
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
        assert_eq!(t.frees(), 1);
        t.cmd(c, &["SET", "a", "1"]);
        assert_eq!(t.cmd(c, &["FLUSHALL", "SYNC"]), simple("OK"));
        assert_eq!(t.frees(), 1);
    }
}
