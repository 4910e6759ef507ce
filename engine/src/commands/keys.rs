//! Keyspace commands on single keys: DEL UNLINK EXISTS TOUCH TYPE DBSIZE
//! RENAME RENAMENX.
//!
//! Related families: `databases.rs` (COPY MOVE SWAPDB FLUSHDB FLUSHALL),
//! `object.rs` (OBJECT), `scan.rs` (SCAN KEYS RANDOMKEY) and `expire.rs`
//! (the TTL commands).
//!
//! Freeing is where DEL and UNLINK differ in cost: `DEL` frees a value
//! inline and pays one work unit per element, which is how a big `DEL`
//! blocks every other client; `UNLINK` hands a big value to the host as an
//! [`crate::Event::Free`] and pays O(1).

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::notify::{class, notify};

pub(crate) const KEYSPACE: CommandSpec = CommandSpec {
    group: "generic",
    first_key: 1,
    last_key: 1,
    key_step: 1,
    ..CommandSpec::DEFAULT
};

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
];

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
            notify(ctx, class::GENERIC, "del", key);
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
        if ctx.lookup_read(key).is_some() {
            found += 1;
        }
    }
    ctx.int(found);
}

fn type_(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let name = ctx.lookup_read(&args[1]).map_or("none", |v| v.type_name());
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
    let dst_existed = ctx.exists(dst);
    if dst_existed && nx {
        return ctx.int(0);
    }
    let db = ctx.db();
    let expire = db.get_expire(src);
    let value = db.remove(src).expect("looked up");
    let i = ctx.db_index();
    ctx.server.blocking.signal(i, src);
    ctx.store(dst, value, false);
    if dst_existed {
        // Redis deletes the destination and adds the key anew, so `new`
        // comes whether or not something was overwritten.
        notify(ctx, class::NEW, "new", dst);
    }
    if let Some(when) = expire {
        let db = ctx.db_index();
        ctx.set_expire_in(db, dst, when);
    }
    notify(ctx, class::GENERIC, "rename_from", src);
    notify(ctx, class::GENERIC, "rename_to", dst);
    if nx {
        ctx.int(1);
    } else {
        ctx.ok();
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{bulk, err, int, simple, TestEngine};
    use crate::Config;

    /// A string big enough (4 MiB + 64 KiB) to cost more than the lazy-free
    /// threshold.
    fn big_value() -> Vec<u8> {
        vec![b'x'; 65 << 16]
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
        assert!(t.executed_work("del") > 64, "DEL pays for the free");
        assert_eq!(t.frees(), 0);
        assert_eq!(t.cmd(c, &["UNLINK", "big2"]), int(1));
        assert!(t.executed_work("unlink") < 8, "UNLINK is O(1)");
        assert_eq!(t.frees(), 1);
        // Small values are freed inline even by UNLINK.
        t.cmd(c, &["SET", "small", "v"]);
        assert_eq!(t.cmd(c, &["UNLINK", "small"]), int(1));
        assert_eq!(t.frees(), 1);
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
        assert_eq!(t.frees(), 1);
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
}
