//! Lazy free, checked through the engine's work accounting: a big list,
//! hash, set or sorted set freed by UNLINK (or by DEL with
//! `lazyfree-lazy-user-del`, FLUSHALL ASYNC, an overwrite with
//! `lazyfree-lazy-server-del`, an expiry with `lazyfree-lazy-expire`) costs
//! the command O(1) work and is handed to the host as `Event::Free`, while
//! DEL frees it inline at O(N) work. INFO memory `lazyfreed_objects` counts
//! what was handed out.
//!
//! The big values are built by `TBIG`, a command of the test's own, through
//! the collection types' APIs, so that the test does not depend on any
//! collection command family.

use seedkv_engine::cmd::{flags, CommandSpec, Ctx};
use seedkv_engine::resp::Frame;
use seedkv_engine::testing::TestEngine;
use seedkv_engine::types::{Hash, List, Set, ZSet};
use seedkv_engine::value::Value;
use seedkv_engine::{Config, Engine, Event};

/// Elements in a "big" value: far above the lazy-free threshold (64).
const BIG: usize = 5_000;

/// TBIG type key n: stores a list/hash/set/zset of n elements at key.
fn tbig(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let n: usize = std::str::from_utf8(&args[3])
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(0);
    let limits = ctx.limits();
    let seed = 7;
    let value = match args[1].as_slice() {
        b"list" => {
            let mut l = List::new(-2);
            (0..n).for_each(|i| l.push_back(i.to_string().as_bytes()));
            Value::List(Box::new(l))
        }
        b"hash" => {
            let mut h = Hash::new(seed);
            (0..n).for_each(|i| {
                h.insert(format!("f{i}").as_bytes(), b"v", &limits);
            });
            Value::Hash(Box::new(h))
        }
        b"set" => {
            let mut s = Set::new(seed);
            (0..n).for_each(|i| {
                s.insert(format!("m{i}").as_bytes(), &limits);
            });
            Value::Set(Box::new(s))
        }
        _ => {
            let mut members: Vec<(Box<[u8]>, f64)> = (0..n)
                .map(|i| (format!("m{i:06}").into_bytes().into_boxed_slice(), i as f64))
                .collect();
            members.sort_by(|a, b| a.1.total_cmp(&b.1));
            Value::ZSet(Box::new(ZSet::from_sorted(members, &limits, seed)))
        }
    };
    ctx.work(n as u64);
    let key = args[2].clone();
    ctx.store(&key, value, false);
    ctx.ok();
}

static TEST_COMMANDS: &[CommandSpec] = &[CommandSpec {
    name: "tbig",
    arity: 4,
    flags: flags::WRITE | flags::O_N,
    first_key: 2,
    last_key: 2,
    key_step: 1,
    acl_categories: &["write", "slow"],
    handler: Some(tbig),
    ..CommandSpec::DEFAULT
}];

const TYPES: [&str; 4] = ["list", "hash", "set", "zset"];

fn engine(config: Config) -> TestEngine {
    let mut t = TestEngine::with_config(Config {
        record_executions: true,
        ..config
    });
    t.engine = Engine::with_commands(t.engine.config().clone(), t.now, &[TEST_COMMANDS]);
    t
}

fn big(t: &mut TestEngine, c: seedkv_engine::ClientId, ty: &str, key: &str) {
    let n = BIG.to_string();
    assert_eq!(
        t.cmd(c, &["tbig", ty, key, &n]),
        Frame::Simple(b"OK".to_vec())
    );
    assert_eq!(
        t.cmd(c, &["type", key]),
        Frame::Simple(ty.as_bytes().to_vec())
    );
}

/// The work units charged to a freed value in the background.
fn freed_units(t: &TestEngine) -> Vec<u64> {
    t.events
        .iter()
        .filter_map(|e| match e {
            Event::Free(g) => Some(g.work_units()),
            _ => None,
        })
        .collect()
}

fn info_field(t: &mut TestEngine, c: seedkv_engine::ClientId, field: &str) -> String {
    let Frame::Bulk(text) = t.cmd(c, &["info", "memory"]) else {
        panic!("INFO is a bulk string in RESP2")
    };
    let text = String::from_utf8(text).expect("utf-8");
    let prefix = format!("{field}:");
    text.lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .expect("field present")
        .to_string()
}

#[test]
fn unlink_is_o1_and_hands_the_value_out_del_is_on() {
    for ty in TYPES {
        let mut t = engine(Config::default());
        let c = t.connect();
        big(&mut t, c, ty, "a");
        big(&mut t, c, ty, "b");
        assert_eq!(t.cmd(c, &["unlink", "a"]), Frame::Integer(1));
        assert!(t.executed_work("unlink") < 8, "{ty}: UNLINK is O(1)");
        assert_eq!(t.frees(), 1, "{ty}: handed to the host");
        assert!(freed_units(&t)[0] >= BIG as u64, "{ty}: the host pays O(N)");
        assert_eq!(t.cmd(c, &["del", "b"]), Frame::Integer(1));
        assert!(t.executed_work("del") >= BIG as u64, "{ty}: DEL is O(N)");
        assert_eq!(t.frees(), 1, "{ty}: DEL frees inline");
        assert_eq!(t.cmd(c, &["exists", "a", "b"]), Frame::Integer(0));
        assert_eq!(info_field(&mut t, c, "lazyfreed_objects"), "1");
        assert_eq!(info_field(&mut t, c, "lazyfree_pending_objects"), "0");
    }
}

#[test]
fn small_values_are_freed_inline_even_by_unlink() {
    let mut t = engine(Config::default());
    let c = t.connect();
    t.cmd(c, &["tbig", "hash", "h", "10"]);
    t.cmd(c, &["unlink", "h"]);
    assert_eq!(t.frees(), 0);
}

#[test]
fn lazyfree_lazy_user_del_makes_del_lazy() {
    let mut t = engine(Config {
        lazyfree_lazy_user_del: true,
        ..Config::default()
    });
    let c = t.connect();
    for ty in TYPES {
        big(&mut t, c, ty, ty);
        t.cmd(c, &["del", ty]);
        assert!(t.executed_work("del") < 8, "{ty}");
    }
    assert_eq!(t.frees(), TYPES.len());
}

#[test]
fn flush_async_hands_out_whole_databases() {
    let mut t = engine(Config::default());
    let c = t.connect();
    for ty in TYPES {
        big(&mut t, c, ty, ty);
    }
    assert_eq!(
        t.cmd(c, &["flushall", "async"]),
        Frame::Simple(b"OK".to_vec())
    );
    assert!(t.executed_work("flushall") < BIG as u64);
    assert_eq!(freed_units(&t).len(), 1);
    assert!(freed_units(&t)[0] >= 4 * BIG as u64);
    assert_eq!(info_field(&mut t, c, "lazyfreed_objects"), "4");
    // FLUSHALL (SYNC) pays for everything itself.
    for ty in TYPES {
        big(&mut t, c, ty, ty);
    }
    t.cmd(c, &["flushall"]);
    assert!(t.executed_work("flushall") >= 4 * BIG as u64);
    assert_eq!(t.frees(), 1);
}

#[test]
fn lazyfree_lazy_server_del_frees_overwritten_values_lazily() {
    for lazy in [false, true] {
        let mut t = engine(Config {
            lazyfree_lazy_server_del: lazy,
            ..Config::default()
        });
        let c = t.connect();
        big(&mut t, c, "set", "s");
        t.cmd(c, &["set", "s", "string now"]);
        let work = t.executed_work("set");
        if lazy {
            assert!(work < 8, "{work}");
            assert_eq!(t.frees(), 1);
        } else {
            assert!(work >= BIG as u64, "{work}");
            assert_eq!(t.frees(), 0);
        }
    }
}

#[test]
fn lazyfree_lazy_expire_frees_expired_values_lazily() {
    let mut t = engine(Config {
        lazyfree_lazy_expire: true,
        ..Config::default()
    });
    let c = t.connect();
    big(&mut t, c, "zset", "z");
    t.cmd(c, &["pexpire", "z", "10"]);
    t.advance_ms(20);
    // Expired either by the cron or by this lookup; either way, lazily.
    assert_eq!(t.cmd(c, &["exists", "z"]), Frame::Integer(0));
    assert_eq!(t.frees(), 1);
}

/// Without `lazyfree-lazy-expire`, a big value removed by active expiry is
/// freed inline; with it, a small one still is (found by cargo-mutants:
/// the cron's `lazy && big` was not checked either way).
#[test]
fn active_expiry_frees_lazily_only_big_values_and_only_when_configured() {
    for (lazy, ty_big) in [(false, true), (true, false)] {
        let mut t = engine(Config {
            lazyfree_lazy_expire: lazy,
            ..Config::default()
        });
        let c = t.connect();
        if ty_big {
            big(&mut t, c, "zset", "z");
        } else {
            t.cmd(c, &["zadd", "z", "1", "a"]);
        }
        t.cmd(c, &["pexpire", "z", "10"]);
        // Long enough for the cron's active expiry to find the one key.
        t.advance_ms(2_000);
        assert_eq!(t.frees(), 0, "lazy={lazy} big={ty_big}");
        assert_eq!(t.cmd(c, &["dbsize"]), Frame::Integer(0));
    }
}
