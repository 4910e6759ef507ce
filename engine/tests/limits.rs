//! Redis's limits through the engine's host API, in virtual time: maxmemory
//! with every eviction policy (what each evicts, and never evicts), the OOM
//! refusal, LRU/LFU metadata as OBJECT IDLETIME/FREQ report it, the idle
//! `timeout`, the normal class's output buffer limits, the query buffer
//! limit and proto-max-bulk-len. Every test checks that another client is
//! still served and that the data it did not evict reads back intact.

use seedkv_engine::cmd::flags;
use seedkv_engine::config::MaxmemoryPolicy;
use seedkv_engine::resp::Frame;
use seedkv_engine::testing::{bulk, err, int, simple, TestHost};
use seedkv_engine::{ClientId, CloseReason, Config};

const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";

fn used_memory(h: &mut TestHost, id: ClientId) -> u64 {
    h.info_field(id, "memory", "used_memory")
}

fn evicted_keys(h: &mut TestHost, id: ClientId) -> u64 {
    h.info_field(id, "stats", "evicted_keys")
}

fn ok() -> Frame {
    simple("OK")
}

fn value_of(key: &str) -> String {
    format!("{key}:{}", "v".repeat(200))
}

/// Stores `count` keys `{prefix}{i}`, each with a value derived from its
/// name; with `ttl_s`, key i expires in `ttl_s + i` seconds.
fn fill(
    h: &mut TestHost,
    c: ClientId,
    prefix: &str,
    count: usize,
    ttl_s: Option<u64>,
) -> Vec<String> {
    let mut keys = Vec::new();
    for i in 0..count {
        let key = format!("{prefix}{i}");
        let value = value_of(&key);
        let reply = match ttl_s {
            Some(ttl) => h.cmd(
                c,
                &["SET", &key, &value, "EX", &(ttl + i as u64).to_string()],
            ),
            None => h.cmd(c, &["SET", &key, &value]),
        };
        assert_eq!(reply, ok());
        keys.push(key);
    }
    keys
}

/// Which of `keys` are gone; asserts the others read back intact.
fn gone(h: &mut TestHost, c: ClientId, keys: &[String]) -> Vec<String> {
    let mut missing = Vec::new();
    for key in keys {
        match h.cmd(c, &["GET", key]) {
            Frame::Null => missing.push(key.clone()),
            reply => assert_eq!(reply, bulk(&value_of(key)), "{key} changed"),
        }
    }
    missing
}

/// Lowers maxmemory to `excess_bytes` under what is used now, under
/// `policy`, so that the next command evicts about that much.
fn squeeze(h: &mut TestHost, c: ClientId, policy: MaxmemoryPolicy, excess_bytes: u64) -> u64 {
    assert_eq!(
        h.cmd(c, &["CONFIG", "SET", "maxmemory-policy", policy.name()]),
        ok()
    );
    let limit = used_memory(h, c) - excess_bytes;
    assert_eq!(
        h.cmd(c, &["CONFIG", "SET", "maxmemory", &limit.to_string()]),
        ok()
    );
    limit
}

/// [`squeeze`], one command to evict, then no limit, so that reading
/// the survivors back evicts nothing more.
fn squeeze_once(h: &mut TestHost, c: ClientId, policy: MaxmemoryPolicy, excess_bytes: u64) {
    let limit = squeeze(h, c, policy, excess_bytes);
    assert_eq!(h.cmd(c, &["PING"]), simple("PONG"));
    assert!(used_memory(h, c) <= limit, "{policy:?} still over");
    assert_eq!(h.cmd(c, &["CONFIG", "SET", "maxmemory", "0"]), ok());
}

/// [`squeeze_once`] over `keys` (named by [`fill`]: a one-letter prefix and
/// an index), then asserts that something went and that every index that
/// went is one `may_go` allows; `kept_for` says why the others must stay.
fn evicts_only(
    h: &mut TestHost,
    c: ClientId,
    keys: &[String],
    policy: MaxmemoryPolicy,
    excess_bytes: u64,
    may_go: impl Fn(usize) -> bool,
    kept_for: &str,
) {
    squeeze_once(h, c, policy, excess_bytes);
    let evicted = gone(h, c, keys);
    assert!(!evicted.is_empty(), "{policy:?} evicted nothing");
    for key in &evicted {
        let i: usize = key[1..].parse().expect("a prefix letter, then an index");
        assert!(may_go(i), "evicted {key}, {kept_for} ({evicted:?})");
    }
}

/// The keys a test left cold: the odd ones.
fn odd(i: usize) -> bool {
    i % 2 == 1
}

/// Redis 7.0.15's `denyoom` commands (COMMAND INFO), the ones the OOM
/// check refuses.
const REDIS_DENYOOM: &[&str] = &[
    "append",
    "bitfield",
    "bitop",
    "blmove",
    "brpoplpush",
    "copy",
    "decr",
    "decrby",
    "function|load",
    "function|restore",
    "geoadd",
    "georadius",
    "georadiusbymember",
    "geosearchstore",
    "getset",
    "hincrby",
    "hincrbyfloat",
    "hmset",
    "hset",
    "hsetnx",
    "incr",
    "incrby",
    "incrbyfloat",
    "linsert",
    "lmove",
    "lpush",
    "lpushx",
    "lset",
    "mset",
    "msetnx",
    "pfadd",
    "pfdebug",
    "pfmerge",
    "psetex",
    "restore",
    "restore-asking",
    "rpoplpush",
    "rpush",
    "rpushx",
    "sadd",
    "sdiffstore",
    "set",
    "setbit",
    "setex",
    "setnx",
    "setrange",
    "sinterstore",
    "sort",
    "sunionstore",
    "xadd",
    "xgroup|create",
    "xgroup|createconsumer",
    "xsetid",
    "zadd",
    "zdiffstore",
    "zincrby",
    "zinterstore",
    "zrangestore",
    "zunionstore",
];

#[test]
fn denyoom_flags_match_redis() {
    let table = seedkv_engine::cmd::CommandTable::new(seedkv_engine::commands::FAMILIES);
    let mut wrong = Vec::new();
    for spec in table.iter() {
        let mut names = vec![(spec.name.to_string(), spec.flags)];
        for sub in spec.subcommands {
            let full = if sub.name.contains('|') {
                sub.name.to_string()
            } else {
                format!("{}|{}", spec.name, sub.name)
            };
            names.push((full, sub.flags));
        }
        for (name, f) in names {
            let ours = f & flags::DENYOOM != 0;
            if ours != REDIS_DENYOOM.contains(&name.as_str()) {
                wrong.push(name);
            }
        }
    }
    assert!(wrong.is_empty(), "denyoom differs from Redis for {wrong:?}");
}

#[test]
fn noeviction_refuses_writes_but_serves_reads_and_deletes() {
    let mut h = TestHost::new(Config::default());
    let c = h.connect();
    let other = h.connect();
    let keys = fill(&mut h, c, "k", 20, None);
    assert_eq!(h.cmd(c, &["CONFIG", "SET", "maxmemory", "1"]), ok());
    assert_eq!(h.cmd(c, &["SET", "new", "v"]), err(OOM));
    assert_eq!(h.cmd(c, &["INCR", "counter"]), err(OOM));
    assert_eq!(h.cmd(c, &["LPUSH", "list", "a"]), err(OOM));
    // Reads, deletes and commands that do not grow memory still run.
    assert_eq!(h.cmd(c, &["GET", "k0"]), bulk(&value_of("k0")));
    assert_eq!(h.cmd(c, &["DEL", "k1"]), int(1));
    assert_eq!(h.cmd(c, &["EXPIRE", "k2", "100"]), int(1));
    assert_eq!(h.cmd(other, &["PING"]), simple("PONG"));
    assert_eq!(h.cmd(other, &["DBSIZE"]), int(19));
    // Inside MULTI every command but EXEC/DISCARD is refused, which
    // aborts the transaction (as redis-server 7.0.15 replies).
    assert_eq!(h.cmd(c, &["MULTI"]), ok());
    assert_eq!(h.cmd(c, &["GET", "k0"]), err(OOM));
    assert_eq!(
        h.cmd(c, &["EXEC"]),
        err("EXECABORT Transaction discarded because of previous errors.")
    );
    assert_eq!(h.cmd(c, &["MULTI"]), ok());
    assert_eq!(h.cmd(c, &["DISCARD"]), ok());
    assert_eq!(evicted_keys(&mut h, c), 0);
    assert!(h
        .info_text(c, "errorstats")
        .contains("errorstat_OOM:count=4\r\n"));
    // Nothing was evicted or changed but what the client deleted.
    assert_eq!(gone(&mut h, other, &keys), vec!["k1".to_string()]);
    // Raising the limit lets writes in again.
    assert_eq!(h.cmd(c, &["CONFIG", "SET", "maxmemory", "0"]), ok());
    assert_eq!(h.cmd(c, &["SET", "new", "v"]), ok());
    assert!(h.closed.is_empty());
}

#[test]
fn every_policy_evicts_under_the_limit_and_only_what_it_may() {
    let evicting = MaxmemoryPolicy::ALL
        .into_iter()
        .filter(|p| *p != MaxmemoryPolicy::NoEviction);
    for policy in evicting {
        let mut h = TestHost::new(Config {
            seed: 7,
            ..Config::default()
        });
        let c = h.connect();
        let other = h.connect();
        let persistent = fill(&mut h, c, "p", 100, None);
        let volatile = fill(&mut h, c, "v", 100, Some(1000));
        let limit = squeeze(&mut h, c, policy, 8 * 1024);
        // The next command (any command) evicts first.
        assert_eq!(h.cmd(other, &["PING"]), simple("PONG"));
        assert!(used_memory(&mut h, c) <= limit, "{policy:?} still over");
        assert_eq!(h.cmd(c, &["CONFIG", "SET", "maxmemory", "0"]), ok());
        let evicted = evicted_keys(&mut h, c);
        assert!(evicted > 0, "{policy:?} evicted nothing");
        // ~350 bytes a key: 8 KiB is some 25 keys, not the whole dataset.
        assert!(evicted < 60, "{policy:?} evicted {evicted}");
        assert_eq!(h.cmd(c, &["DBSIZE"]), int(200 - evicted as i64));
        let gone_persistent = gone(&mut h, other, &persistent);
        let gone_volatile = gone(&mut h, other, &volatile);
        assert_eq!(
            (gone_persistent.len() + gone_volatile.len()) as u64,
            evicted
        );
        if policy.name().starts_with("volatile") {
            assert!(
                gone_persistent.is_empty(),
                "{policy:?} evicted keys without a TTL: {gone_persistent:?}"
            );
        }
        // Writes go on, evicting as they need.
        squeeze(&mut h, c, policy, 0);
        for i in 0..20 {
            assert_eq!(h.cmd(c, &["SET", &format!("n{i}"), &"x".repeat(300)]), ok());
        }
        assert!(evicted_keys(&mut h, c) > evicted);
        assert!(h.closed.is_empty());
    }
}

#[test]
fn volatile_policies_refuse_writes_once_no_key_has_a_ttl() {
    for policy in [
        MaxmemoryPolicy::VolatileLru,
        MaxmemoryPolicy::VolatileLfu,
        MaxmemoryPolicy::VolatileRandom,
        MaxmemoryPolicy::VolatileTtl,
    ] {
        let mut h = TestHost::new(Config::default());
        let c = h.connect();
        let persistent = fill(&mut h, c, "p", 50, None);
        let volatile = fill(&mut h, c, "v", 3, Some(100));
        squeeze(&mut h, c, policy, 16 * 1024);
        assert_eq!(h.cmd(c, &["SET", "new", "v"]), err(OOM), "{policy:?}");
        assert_eq!(evicted_keys(&mut h, c), 3, "{policy:?}");
        assert_eq!(gone(&mut h, c, &volatile).len(), 3);
        assert!(gone(&mut h, c, &persistent).is_empty());
    }
}

#[test]
fn volatile_ttl_evicts_the_nearest_expiries() {
    let mut h = TestHost::new(Config::default());
    let c = h.connect();
    // Key v{i} expires in 1000 + i seconds.
    let volatile = fill(&mut h, c, "v", 100, Some(1000));
    // Sampling is approximate, but the pool keeps the best of every sample:
    // what goes is from the soonest-expiring third.
    let policy = MaxmemoryPolicy::VolatileTtl;
    evicts_only(
        &mut h,
        c,
        &volatile,
        policy,
        3 * 1024,
        |i| i < 33,
        "expiring late",
    );
}

#[test]
fn allkeys_lru_prefers_idle_keys() {
    let mut h = TestHost::new(Config::default());
    let c = h.connect();
    let keys = fill(&mut h, c, "k", 100, None);
    h.advance_ms(60_000);
    // The even keys are used again; the odd ones stay idle.
    for key in keys.iter().step_by(2) {
        h.cmd(c, &["GET", key]);
    }
    h.advance_ms(5_000);
    assert_eq!(h.cmd(c, &["OBJECT", "IDLETIME", "k1"]), int(65));
    assert_eq!(h.cmd(c, &["OBJECT", "IDLETIME", "k0"]), int(5));
    let policy = MaxmemoryPolicy::AllkeysLru;
    evicts_only(&mut h, c, &keys, policy, 6 * 1024, odd, "recently used");
}

#[test]
fn allkeys_lfu_prefers_rarely_used_keys() {
    let mut h = TestHost::new(Config {
        maxmemory_policy: MaxmemoryPolicy::AllkeysLfu,
        ..Config::default()
    });
    let c = h.connect();
    let keys = fill(&mut h, c, "k", 100, None);
    for _ in 0..30 {
        for key in keys.iter().step_by(2) {
            h.cmd(c, &["GET", key]);
        }
    }
    let Frame::Integer(hot) = h.cmd(c, &["OBJECT", "FREQ", "k0"]) else {
        panic!("FREQ is an integer");
    };
    assert!(hot > 5, "30 hits lift the counter above LFU_INIT_VAL");
    assert_eq!(h.cmd(c, &["OBJECT", "FREQ", "k1"]), int(5));
    let policy = MaxmemoryPolicy::AllkeysLfu;
    evicts_only(&mut h, c, &keys, policy, 6 * 1024, odd, "often used");
}

#[test]
fn object_idletime_and_freq_follow_accesses_as_redis() {
    let mut h = TestHost::new(Config::default());
    let c = h.connect();
    h.cmd(c, &["SET", "a", "x"]);
    h.cmd(c, &["SET", "b", "x"]);
    h.advance_ms(3_000);
    assert_eq!(h.cmd(c, &["OBJECT", "IDLETIME", "a"]), int(3));
    // TYPE, EXISTS, TTL and OBJECT itself look without touching.
    h.cmd(c, &["TYPE", "a"]);
    h.cmd(c, &["EXISTS", "a"]);
    h.cmd(c, &["TTL", "a"]);
    assert_eq!(h.cmd(c, &["OBJECT", "IDLETIME", "a"]), int(3));
    // A read, or TOUCH, does.
    h.cmd(c, &["GET", "a"]);
    h.cmd(c, &["TOUCH", "b"]);
    assert_eq!(h.cmd(c, &["OBJECT", "IDLETIME", "a"]), int(0));
    assert_eq!(h.cmd(c, &["OBJECT", "IDLETIME", "b"]), int(0));
    assert_eq!(
        h.cmd(c, &["OBJECT", "FREQ", "a"]),
        err("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
    );
    // Under LFU: a new key starts at 5, each hit below 5 + 1 counts, and
    // the counter decays by one per lfu-decay-time minute.
    h.cmd(c, &["CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"]);
    h.cmd(c, &["SET", "f", "x"]);
    assert_eq!(h.cmd(c, &["OBJECT", "FREQ", "f"]), int(5));
    h.cmd(c, &["GET", "f"]);
    let Frame::Integer(after_hit) = h.cmd(c, &["OBJECT", "FREQ", "f"]) else {
        panic!("an integer");
    };
    assert!((5..=6).contains(&after_hit));
    h.advance_ms(3 * 60_000);
    assert_eq!(h.cmd(c, &["OBJECT", "FREQ", "f"]), int(after_hit - 3));
    assert_eq!(h.cmd(c, &["OBJECT", "FREQ", "nokey"]), Frame::Null);
    // An overwrite keeps the counter under LFU (Redis's dbOverwrite),
    // after SET's own lookup counted one more hit (certain below 5), as
    // redis-server 7.0.15 shows: FREQ 3, SET, FREQ 4.
    h.cmd(c, &["SET", "f", "y"]);
    assert_eq!(h.cmd(c, &["OBJECT", "FREQ", "f"]), int(after_hit - 2));
}

#[test]
fn config_set_maxmemory_below_usage_evicts_on_the_next_command() {
    let mut h = TestHost::new(Config::default());
    let c = h.connect();
    let keys = fill(&mut h, c, "k", 50, None);
    assert_eq!(
        h.cmd(c, &["CONFIG", "SET", "maxmemory-policy", "allkeys-random"]),
        ok()
    );
    let used = used_memory(&mut h, c);
    assert_eq!(
        h.cmd(
            c,
            &["CONFIG", "SET", "maxmemory", &(used - 4096).to_string()]
        ),
        ok()
    );
    // DBSIZE is no write, yet it runs after the eviction.
    let Frame::Integer(left) = h.cmd(c, &["DBSIZE"]) else {
        panic!("an integer");
    };
    assert!(left < 50);
    assert_eq!(gone(&mut h, c, &keys).len() as i64, 50 - left);
}

#[test]
fn eviction_fails_watchers_and_frees_big_values_lazily_when_asked() {
    let mut h = TestHost::new(Config {
        lazyfree_lazy_eviction: true,
        ..Config::default()
    });
    let c = h.connect();
    let watcher = h.connect();
    let mut push = vec!["RPUSH".to_string(), "big".to_string()];
    push.extend((0..500).map(|i| format!("element-{i}")));
    let push: Vec<&str> = push.iter().map(String::as_str).collect();
    assert_eq!(h.cmd(c, &push), int(500));
    assert_eq!(h.cmd(watcher, &["WATCH", "big"]), ok());
    assert_eq!(
        h.cmd(c, &["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"]),
        ok()
    );
    assert_eq!(h.cmd(c, &["CONFIG", "SET", "maxmemory", "1"]), ok());
    // Everything goes, and then nothing is left to evict: OOM.
    assert_eq!(h.cmd(c, &["SET", "x", "y"]), err(OOM));
    assert_eq!(h.cmd(c, &["EXISTS", "big"]), int(0));
    assert_eq!(
        h.frees, 1,
        "the 500-element list is freed in the background"
    );
    assert_eq!(h.cmd(c, &["CONFIG", "SET", "maxmemory", "0"]), ok());
    assert_eq!(h.cmd(watcher, &["MULTI"]), ok());
    assert_eq!(h.cmd(watcher, &["PING"]), simple("QUEUED"));
    // The eviction touched the watched key: EXEC fails.
    assert_eq!(h.cmd(watcher, &["EXEC"]), Frame::Null);
}

#[test]
fn eviction_is_deterministic_per_seed() {
    let run = |seed: u64| {
        let mut h = TestHost::new(Config {
            seed,
            ..Config::default()
        });
        let c = h.connect();
        let keys = fill(&mut h, c, "k", 100, None);
        squeeze_once(&mut h, c, MaxmemoryPolicy::AllkeysRandom, 8 * 1024);
        gone(&mut h, c, &keys)
    };
    assert_eq!(run(1), run(1));
    assert_ne!(run(1), run(2));
}

#[test]
fn timeout_closes_idle_clients_only() {
    let mut h = TestHost::new(Config::default());
    let idle = h.connect();
    let active = h.connect();
    let blocked = h.connect();
    let subscriber = h.connect();
    let monitor = h.connect();
    assert_eq!(h.cmd(active, &["CONFIG", "SET", "timeout", "1"]), ok());
    assert_eq!(h.cmd(active, &["SET", "k", "v"]), ok());
    assert_eq!(h.cmd(idle, &["PING"]), simple("PONG"));
    h.send(blocked, &["BLPOP", "queue", "0"]);
    h.send(subscriber, &["SUBSCRIBE", "ch"]);
    h.send(monitor, &["MONITOR"]);
    h.frames(subscriber);
    h.frames(monitor);
    // Redis closes after more than `timeout` whole seconds idle.
    for _ in 0..19 {
        h.advance_ms(100);
        if h.now.mono_ns.is_multiple_of(400_000_000) {
            h.cmd(active, &["PING"]);
        }
    }
    assert_eq!(h.is_closed(idle), None, "1.9 s idle is not more than 1 s");
    for _ in 0..11 {
        h.advance_ms(100);
        if h.now.mono_ns.is_multiple_of(400_000_000) {
            h.cmd(active, &["PING"]);
        }
    }
    assert_eq!(h.is_closed(idle), Some(CloseReason::IdleTimeout));
    assert_eq!(h.closed.len(), 1, "only the idle client: {:?}", h.closed);
    assert_eq!(h.cmd(active, &["GET", "k"]), bulk("v"));
    // The blocked client is still waiting, and is served.
    h.cmd(active, &["RPUSH", "queue", "job"]);
    assert_eq!(
        h.frames(blocked),
        vec![Frame::Array(vec![bulk("queue"), bulk("job")])]
    );
}

/// A fast and a slow (never reading) client under the normal class's output
/// buffer `limits`, and a 4 KiB value stored at "big" for them to GET.
fn slow_reader_under(limits: &str) -> (TestHost, ClientId, ClientId, String) {
    let mut h = TestHost::new(Config::default());
    let fast = h.connect();
    let slow = h.connect();
    h.slow.insert(slow);
    let big = "x".repeat(4096);
    assert_eq!(h.cmd(fast, &["SET", "big", &big]), ok());
    assert_eq!(
        h.cmd(
            fast,
            &["CONFIG", "SET", "client-output-buffer-limit", limits]
        ),
        ok()
    );
    (h, fast, slow, big)
}

#[test]
fn output_buffer_hard_limit_closes_a_client_that_does_not_read() {
    let (mut h, fast, slow, big) = slow_reader_under("normal 10kb 0 0");
    h.send(slow, &["GET", "big"]);
    h.send(slow, &["GET", "big"]);
    assert_eq!(h.is_closed(slow), None, "8 KiB pending is under 10 KiB");
    h.send(slow, &["GET", "big"]);
    assert_eq!(h.is_closed(slow), Some(CloseReason::OutputBufferLimit));
    assert_eq!(h.cmd(fast, &["GET", "big"]), bulk(&big));
    // A reading client fetches far more than the limit, one reply at a time.
    for _ in 0..10 {
        assert_eq!(h.cmd(fast, &["GET", "big"]), bulk(&big));
    }
    assert_eq!(h.closed.len(), 1);
}

#[test]
fn output_buffer_soft_limit_closes_after_its_seconds_over_it() {
    let (mut h, fast, slow, big) = slow_reader_under("normal 0 8kb 2");
    h.send(slow, &["GET", "big"]);
    h.send(slow, &["GET", "big"]);
    // Over the soft limit now: its clock starts.
    h.advance_ms(1_500);
    h.send(slow, &["GET", "big"]);
    assert_eq!(h.is_closed(slow), None, "1.5 s over is within 2 s");
    h.advance_ms(1_000);
    h.send(slow, &["GET", "big"]);
    assert_eq!(h.is_closed(slow), Some(CloseReason::OutputBufferLimit));
    assert_eq!(h.cmd(fast, &["GET", "big"]), bulk(&big));
}

#[test]
fn query_buffer_limit_closes_the_client_without_a_reply() {
    let mut h = TestHost::new(Config {
        client_query_buffer_limit_bytes: 16 * 1024,
        ..Config::default()
    });
    let c = h.connect();
    let other = h.connect();
    assert_eq!(h.cmd(c, &["SET", "k", "v"]), ok());
    // A bulk announced at 100 KB that never completes: the buffer grows
    // past the limit.
    h.send_raw(c, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000\r\n");
    h.send_raw(c, &[b'a'; 20 * 1024]);
    assert_eq!(h.is_closed(c), Some(CloseReason::QueryBufferLimit));
    assert!(h.frames(c).is_empty());
    assert_eq!(h.cmd(other, &["GET", "k"]), bulk("v"));
}

#[test]
fn proto_max_bulk_len_is_a_protocol_error() {
    let mut h = TestHost::new(Config {
        proto_max_bulk_len_bytes: 1000,
        ..Config::default()
    });
    let c = h.connect();
    let other = h.connect();
    assert_eq!(h.cmd(c, &["SET", "k", "v"]), ok());
    h.send_raw(c, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1001\r\n");
    // The host flushes the error before closing (flush_first); this host
    // reads it off the engine right before the close is handled.
    assert_eq!(h.is_closed(c), Some(CloseReason::ProtocolError));
    assert_eq!(
        h.frames(c),
        vec![err("ERR Protocol error: invalid bulk length")]
    );
    assert_eq!(h.cmd(other, &["GET", "k"]), bulk("v"));
    // A bulk at the limit is fine.
    let v = "y".repeat(1000);
    assert_eq!(h.cmd(other, &["SET", "k", &v]), ok());
    assert_eq!(h.cmd(other, &["GET", "k"]), bulk(&v));
}
