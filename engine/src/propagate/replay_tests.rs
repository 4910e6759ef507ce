//! The property that makes propagation right: replaying the stream builds
//! the same dataset. Random write workloads (every family, relative TTLs,
//! SPOP, INCRBYFLOAT, MULTI/EXEC, scripts with several writes, blocked
//! pops served later, time passing with lazy and active expiry, eviction)
//! run on engine A with propagation on; after every step, what A
//! propagated is fed as one client's input into engine B, half a second
//! later (see [`OFFSET_MS`]). Every 20 steps, and at the end after both
//! clocks jump ahead, every key of every database must read the same on
//! both, with the same absolute expiry; no replayed command may fail.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::resp::encode::encode_request;
use crate::resp::{Frame, FrameDecoder};
use crate::testing::TestEngine;
use crate::{ClientId, Config};

const SEEDS: u64 = 40;
const STEPS_PER_SEED: usize = 300;
const BLOCKERS: usize = 3;
const COMPARE_EVERY_STEPS: usize = 20;

/// How much later than A engine B replays. A's clock moves in whole
/// seconds and every expiry the workload sets falls on one, so a key is
/// expired at B's time exactly when it is at A's (B runs no command A did
/// not), while a relative TTL replayed verbatim would land half a second
/// off and show in PEXPIRETIME.
const OFFSET_MS: u64 = 500;

struct Pair {
    a: TestEngine,
    b: TestEngine,
    writer: ClientId,
    dumper: ClientId,
    blockers: Vec<ClientId>,
    replay: ClientId,
}

impl Pair {
    fn new(seed: u64, config: Config) -> Pair {
        let mut a = TestEngine::with_config(Config {
            seed,
            ..config.clone()
        });
        a.engine.propagation_mut().set_enabled(true);
        let writer = a.connect();
        let dumper = a.connect();
        let blockers = (0..BLOCKERS).map(|_| a.connect()).collect();
        let mut b = TestEngine::with_config(Config {
            seed: seed ^ 0xb,
            ..config
        });
        let replay = b.connect();
        Pair {
            a,
            b,
            writer,
            dumper,
            blockers,
            replay,
        }
    }

    /// Feeds what A propagated into B, at A's time; nothing replayed may
    /// fail.
    fn sync(&mut self) {
        let bytes = self.a.engine.propagation_mut().take();
        if bytes.is_empty() {
            return;
        }
        self.b.now = later(self.a.now, OFFSET_MS);
        let out = self.b.raw(self.replay, &bytes);
        let mut d = FrameDecoder::new();
        d.feed(&out);
        while let Some(frame) = d.next_frame().expect("valid RESP") {
            assert_no_error(&frame, &bytes);
        }
    }

    fn compare(&mut self, seed: u64) {
        let (a_reader, b_reader) = (self.a.connect(), self.b.connect());
        // Reading must not evict (each request may), or A's snapshot would
        // see deletions B has not replayed yet.
        let Frame::Array(limit) = self.a.cmd(a_reader, &["CONFIG", "GET", "maxmemory"]) else {
            panic!("CONFIG GET replies an array")
        };
        let Some(Frame::Bulk(limit)) = limit.get(1).cloned() else {
            panic!("maxmemory has a value")
        };
        self.a.cmd(a_reader, &["CONFIG", "SET", "maxmemory", "0"]);
        self.sync();
        let a = snapshot(&mut self.a, a_reader);
        let b = snapshot(&mut self.b, b_reader);
        assert_eq!(a, b, "seed {seed}: the replayed dataset differs");
        let limit = String::from_utf8(limit).expect("utf-8");
        self.a
            .cmd(a_reader, &["CONFIG", "SET", "maxmemory", &limit]);
        self.a.engine.disconnect(self.a.now, a_reader);
        self.b.engine.disconnect(self.b.now, b_reader);
    }

    /// Brings A to B's time, to read both at the same instant.
    fn catch_up(&mut self) {
        self.a.advance_ms(OFFSET_MS);
        assert_eq!(self.a.now, self.b.now);
        let bytes = self.a.engine.propagation_mut().take();
        self.b.raw(self.replay, &bytes);
    }

    fn advance_ms(&mut self, ms: u64) {
        self.a.advance_ms(ms);
        self.sync();
        self.b.now = later(self.a.now, OFFSET_MS);
        self.b.advance_ms(0);
    }
}

fn later(now: crate::Now, ms: u64) -> crate::Now {
    crate::Now {
        mono_ns: now.mono_ns + ms * 1_000_000,
        unix_us: now.unix_us + ms * 1000,
    }
}

fn assert_no_error(frame: &Frame, stream: &[u8]) {
    match frame {
        Frame::Error(e) => panic!(
            "replayed command failed: {}\nstream: {}",
            String::from_utf8_lossy(e),
            String::from_utf8_lossy(stream)
        ),
        Frame::Array(items) => items.iter().for_each(|f| assert_no_error(f, stream)),
        _ => {}
    }
}

/// Everything a client can read of the dataset, database by database:
/// each key's type, contents (members sorted where the order is the
/// encoding's) and absolute expiry.
fn snapshot(t: &mut TestEngine, c: ClientId) -> Vec<String> {
    let mut out = Vec::new();
    for db in 0..crate::db::DATABASES_COUNT {
        t.cmd(c, &["SELECT", &db.to_string()]);
        let Frame::Array(keys) = t.cmd(c, &["KEYS", "*"]) else {
            panic!("KEYS replies an array")
        };
        let mut keys: Vec<Vec<u8>> = keys
            .into_iter()
            .map(|k| match k {
                Frame::Bulk(b) => b,
                _ => panic!("a key is a bulk"),
            })
            .collect();
        keys.sort();
        for key in keys {
            let k = key.as_slice();
            let Frame::Simple(kind) = t.cmd_bytes(c, &[b"TYPE", k]) else {
                panic!("TYPE replies a status")
            };
            let contents = match kind.as_slice() {
                b"string" => format!("{:?}", t.cmd_bytes(c, &[b"GET", k])),
                b"list" => format!("{:?}", t.cmd_bytes(c, &[b"LRANGE", k, b"0", b"-1"])),
                b"zset" => format!(
                    "{:?}",
                    t.cmd_bytes(c, &[b"ZRANGE", k, b"0", b"-1", b"WITHSCORES"])
                ),
                b"set" => sorted(t.cmd_bytes(c, &[b"SMEMBERS", k]), 1),
                b"hash" => sorted(t.cmd_bytes(c, &[b"HGETALL", k]), 2),
                other => panic!("type {}", String::from_utf8_lossy(other)),
            };
            let when = t.cmd_bytes(c, &[b"PEXPIRETIME", k]);
            out.push(format!(
                "db{db} {} {} {contents} {when:?}",
                String::from_utf8_lossy(k),
                String::from_utf8_lossy(&kind)
            ));
        }
    }
    out
}

/// A flat array reply's items in groups of `group`, sorted.
fn sorted(reply: Frame, group: usize) -> String {
    let Frame::Array(items) = reply else {
        panic!("an array reply")
    };
    let mut groups: Vec<String> = items
        .chunks(group)
        .map(|chunk| format!("{chunk:?}"))
        .collect();
    groups.sort();
    groups.join(",")
}

/// A random write (or a few, as one MULTI or one script), as lines of
/// words.
fn random_request(rng: &mut ChaCha8Rng, now_ms: u64) -> Vec<Vec<String>> {
    let key = |rng: &mut ChaCha8Rng, prefix: &str| format!("{prefix}{}", rng.gen_range(0..4));
    let s = key(rng, "s");
    let l = key(rng, "l");
    let l2 = key(rng, "l");
    let h = key(rng, "h");
    let st = key(rng, "set");
    let st2 = key(rng, "set");
    let z = key(rng, "z");
    let z2 = key(rng, "z");
    let any = match rng.gen_range(0..5) {
        0 => s.clone(),
        1 => l.clone(),
        2 => h.clone(),
        3 => st.clone(),
        _ => z.clone(),
    };
    let small = rng.gen_range(1..60u64);
    // Every expiry falls on a whole second (see OFFSET_MS).
    let secs = rng.gen_range(1..4u64);
    let member = format!("m{}", rng.gen_range(0..12));
    let line = match rng.gen_range(0..64) {
        0 => format!("SET {s} v{small}"),
        1 => format!("SET {s} v EX {}", rng.gen_range(1..3)),
        2 => format!("SET {s} v PX {} NX", secs * 1000),
        3 => format!("SET {s} v{small} PXAT {} GET", now_ms + secs * 1000),
        4 => format!("SETEX {s} {} v", rng.gen_range(1..3)),
        5 => format!("PSETEX {s} {} v", secs * 1000),
        6 => format!("SET {s} k{small} KEEPTTL XX"),
        7 => format!("GETEX {s} PX {}", secs * 1000),
        8 => format!("GETEX {s} PERSIST"),
        9 => format!("GETEX {s} PXAT {}", now_ms - secs * 1000),
        10 => format!("GETDEL {s}"),
        11 => format!("INCRBYFLOAT {s} 1.{small}"),
        12 => format!("INCR {s}"),
        13 => format!("APPEND {s} x{small}"),
        14 => format!("EXPIRE {any} {}", rng.gen_range(-1..3)),
        15 => format!("PEXPIRE {any} {} GT", secs * 1000),
        16 => format!("PEXPIREAT {any} {}", now_ms + secs * 1000),
        17 => format!("EXPIREAT {any} {} NX", now_ms / 1000 + 2),
        18 => format!("PERSIST {any}"),
        19 => format!("DEL {any} {s}"),
        20 => format!("UNLINK {any}"),
        21 => format!("RENAME {any} {}", key(rng, &any[..1])),
        22 => format!("COPY {any} {any} DB {} REPLACE", rng.gen_range(0..3)),
        23 => format!("MOVE {any} {}", rng.gen_range(1..3)),
        24 => format!("SELECT {}", rng.gen_range(0..3)),
        25 => format!("RPUSH {l} a{small} b c"),
        26 => format!("LPOP {l} {}", rng.gen_range(1..3)),
        27 => format!("LMPOP 2 {l} {l2} RIGHT COUNT {}", rng.gen_range(1..4)),
        28 => format!("LMOVE {l} {l2} LEFT RIGHT"),
        29 => format!("BLPOP {l} {l2} 0.01"),
        30 => format!("BLMOVE {l} {l2} RIGHT left 0.01"),
        31 => format!("LTRIM {l} 1 -1"),
        32 => format!("HSET {h} f{small} v {member} w"),
        33 => format!("HINCRBYFLOAT {h} f 0.{small}"),
        34 => format!("HDEL {h} {member}"),
        35 => format!("SADD {st} {member} {small} m{small}"),
        36 => format!("SPOP {st}"),
        37 => format!("SPOP {st} {}", rng.gen_range(1..8)),
        38 => format!("SMOVE {st} {st2} {member}"),
        39 => format!("SUNIONSTORE {st} {st2} {st}"),
        40 => format!("ZADD {z} {small} {member} 1.5 x"),
        41 => format!("ZINCRBY {z} 0.3 {member}"),
        42 => format!("ZPOPMIN {z} {}", rng.gen_range(1..3)),
        43 => format!("ZMPOP 2 {z} {z2} MAX COUNT {}", rng.gen_range(1..3)),
        44 => format!("BZPOPMAX {z} 0.01"),
        45 => format!("ZUNIONSTORE {z2} 2 {z} {z2}"),
        46 => format!("SORT {l} ALPHA STORE {l2}"),
        47 => format!("SWAPDB 0 {}", rng.gen_range(1..3)),
        48 => {
            // A transaction of single commands (a RESTORE needs its DUMP
            // first, outside).
            let mut lines = vec![vec!["MULTI".to_string()]];
            for _ in 0..rng.gen_range(1..4) {
                let inner = random_request(rng, now_ms);
                if inner.len() == 1 && inner[0][0] != "RESTORE" {
                    lines.extend(inner);
                }
            }
            lines.push(vec!["EXEC".to_string()]);
            return lines;
        }
        49 => {
            let script = format!(
                "redis.call('spop','{st}'); redis.call('incrbyfloat','{s}','0.5'); \
                 redis.call('expire','{s}','{}'); redis.call('sadd','{st}','{member}')",
                rng.gen_range(1..3)
            );
            return vec![vec!["EVAL".into(), script, "0".into()]];
        }
        50 => "FLUSHDB".to_string(),
        51 => format!("GETSET {s} g{small}"),
        52 => format!("SETRANGE {s} 2 r{small}"),
        53 => format!("MSET {s} m{small} {} x", key(rng, "s")),
        54 => format!("HSETNX {h} {member} n"),
        55 => format!("SINTERSTORE {st2} {st} {st2}"),
        56 => format!("ZREMRANGEBYSCORE {z} 0 {}", small % 5),
        57 => format!("ZRANGESTORE {z2} {z} 0 1"),
        58 => format!("LINSERT {l} BEFORE b i{small}"),
        59 => format!("RENAMENX {any} {}", key(rng, &any[..1])),
        // Reads that delete the expired keys they meet.
        60 => "RANDOMKEY".to_string(),
        61 => format!("SCAN 0 COUNT {small}"),
        62 => format!("EXISTS {s} {l} {h} {st} {z}"),
        _ => format!("RESTORE {s} {} payload", secs * 1000),
    };
    vec![line.split(' ').map(str::to_string).collect()]
}

/// Sends one line on `client` of A; a RESTORE takes the DUMP of a key of
/// the same name first (or is skipped when there is none).
fn send(p: &mut Pair, client: ClientId, words: &[String]) {
    if words[0] == "RESTORE" {
        // The writer may be blocked (a BLPOP waits 10 ms): another client
        // dumps, in database 0.
        let Frame::Bulk(payload) = p.a.cmd(p.dumper, &["DUMP", &words[1]]) else {
            return;
        };
        let args: Vec<&[u8]> = vec![
            b"RESTORE",
            words[1].as_bytes(),
            words[2].as_bytes(),
            &payload,
            b"REPLACE",
        ];
        p.a.raw(client, &encode_request(&args));
        return;
    }
    let args: Vec<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
    p.a.raw(client, &encode_request(&args));
}

/// Puts A (only: B just replays) under a `maxmemory` a few kilobytes
/// above what it uses empty, so that the workload's writes evict.
fn limit_memory(p: &mut Pair, headroom_bytes: u64) {
    let Frame::Bulk(info) = p.a.cmd(p.dumper, &["INFO", "memory"]) else {
        panic!("INFO replies a bulk")
    };
    let info = String::from_utf8(info).expect("utf-8");
    let used: u64 = info
        .lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.parse().ok())
        .expect("used_memory");
    let limit = (used + headroom_bytes).to_string();
    p.a.cmd(p.dumper, &["CONFIG", "SET", "maxmemory", &limit]);
    p.a.cmd(
        p.dumper,
        &["CONFIG", "SET", "maxmemory-policy", "allkeys-random"],
    );
}

/// Returns the keys A evicted.
fn run_seed(seed: u64, config: Config, evicting: bool) -> u64 {
    let mut p = Pair::new(seed, config);
    if evicting {
        limit_memory(&mut p, 4_000);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for step in 0..STEPS_PER_SEED {
        match rng.gen_range(0..10) {
            0 => p.advance_ms(rng.gen_range(1..3) * 1000),
            1 => {
                // A blocker parks on a key that a later push serves.
                let i = rng.gen_range(0..BLOCKERS);
                let c = p.blockers[i];
                if !p.a.engine.is_blocked(c) {
                    let (l, l2) = (rng.gen_range(0..4), rng.gen_range(0..4));
                    let z = rng.gen_range(0..4);
                    let line = match rng.gen_range(0..5) {
                        0 => format!("BLPOP l{l} 1"),
                        1 => format!("BRPOPLPUSH l{l} l{l2} 1"),
                        2 => format!("BLMPOP 1 1 l{l} LEFT COUNT 2"),
                        3 => format!("BZPOPMIN z{z} 1"),
                        _ => format!("BZMPOP 1 1 z{z} MIN COUNT 3"),
                    };
                    let words: Vec<String> = line.split(' ').map(str::to_string).collect();
                    send(&mut p, c, &words);
                }
            }
            _ => {
                let now_ms = p.a.now.unix_ms();
                let writer = p.writer;
                for words in random_request(&mut rng, now_ms) {
                    send(&mut p, writer, &words);
                }
            }
        }
        p.sync();
        if step % COMPARE_EVERY_STEPS == 0 {
            // A at t, B at t + 500 ms: nothing expires in between.
            p.compare(seed);
        }
    }
    // Let every blocker time out, then look from later on: what expired
    // in between must be gone from both.
    p.advance_ms(2_000);
    let later_ms = rng.gen_range(0..4) * 1000;
    p.advance_ms(later_ms);
    p.catch_up();
    p.compare(seed);
    let Frame::Bulk(info) = p.a.cmd(p.dumper, &["INFO", "stats"]) else {
        panic!("INFO replies a bulk")
    };
    let info = String::from_utf8(info).expect("utf-8");
    info.lines()
        .find_map(|l| l.strip_prefix("evicted_keys:"))
        .and_then(|v| v.parse().ok())
        .expect("evicted_keys")
}

#[test]
fn replaying_the_stream_builds_the_same_dataset() {
    for seed in 0..SEEDS {
        run_seed(seed, Config::default(), false);
    }
}

#[test]
fn replaying_the_stream_builds_the_same_dataset_with_lazyfree() {
    let config = Config {
        lazyfree_lazy_expire: true,
        lazyfree_lazy_user_del: true,
        lazyfree_lazy_server_del: true,
        ..Config::default()
    };
    for seed in 0..SEEDS / 4 {
        run_seed(1000 + seed, config.clone(), false);
    }
}

#[test]
fn replaying_the_stream_builds_the_same_dataset_under_eviction() {
    let evicted: u64 = (0..SEEDS / 4)
        .map(|seed| run_seed(2000 + seed, Config::default(), true))
        .sum();
    assert!(evicted > 50, "the workload evicts ({evicted} keys)");
}
