//! Whole RDB files against redis-server 7.0.15, both ways: every type in
//! every encoding (the fixtures DUMP/RESTORE uses), in databases 0, 3 and
//! 15, with TTLs far in the future and one key already expired when the
//! file is written, with `rdbcompression` yes and no.
//!
//! - redis -> seedkv: redis-server SAVEs into its own directory; the file
//!   loads into an engine (`Engine::load_rdb_file`) whose keys then match
//!   redis's (TYPE, contents, OBJECT ENCODING, PTTL within a tolerance), and
//!   the expired key is dropped and counted.
//! - seedkv -> redis: an engine's file (`Engine::rdb_file_bytes`) passes
//!   redis-check-rdb, and redis-server started on it holds the engine's
//!   keys, having dropped the expired one.
//! - Byte identity: with one key per database, the order of keys (which is
//!   each server's dict order) cannot differ, and a file written with
//!   redis's `ctime` and `used-mem` is redis's file byte for byte, CRC64
//!   included, for every fixture whose value both servers lay out alike.
//!
//! Skipped, with a printed reason, when redis-server is not installed
//! (and failing instead under `SEEDKV_REQUIRE_TOOLS=1`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use seedkv_engine::resp::Frame;
use seedkv_engine::testing::TestEngine;
use seedkv_engine::{ClientId, Config, Engine, Now};
use seedkv_tests::fixtures::{values, THRESHOLDS};
use seedkv_tests::{find_in_path, redis_server_with, run_tool, RespClient};

/// The databases the fixtures are written to.
const DBS: [usize; 3] = [0, 3, 15];
/// Every third fixture key gets this TTL.
const FAR_TTL_MS: i64 = 30 * 86_400_000;
/// How far the two servers' PTTLs may be apart: they are read at
/// different moments of a test that starts servers in between.
const TTL_TOLERANCE_MS: i64 = 20_000;

/// A connection to either server.
trait Conn {
    fn call(&mut self, args: &[&[u8]]) -> Frame;

    fn ok(&mut self, args: &[&[u8]]) {
        let reply = self.call(args);
        assert!(
            !matches!(reply, Frame::Error(_)),
            "{:?}: {reply:?}",
            args.iter()
                .map(|a| String::from_utf8_lossy(a))
                .collect::<Vec<_>>()
        );
    }
}

impl Conn for RespClient {
    fn call(&mut self, args: &[&[u8]]) -> Frame {
        self.command(args)
    }
}

/// An engine driven in-process, its clock the wall clock.
struct Ours {
    t: TestEngine,
    client: ClientId,
}

impl Ours {
    fn new() -> Ours {
        let now = wall_now();
        let mut t = TestEngine {
            engine: Engine::new(Config::default(), now),
            now,
            events: Vec::new(),
        };
        let client = t.connect();
        Ours { t, client }
    }

    fn tick(&mut self) {
        self.t.now = wall_now();
    }
}

impl Conn for Ours {
    fn call(&mut self, args: &[&[u8]]) -> Frame {
        self.t.cmd_bytes(self.client, args)
    }
}

/// The wall clock as the engine takes it (a test may read clocks; the
/// engine may not).
fn wall_now() -> Now {
    let unix_us = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_micros() as u64;
    Now {
        mono_ns: unix_us * 1000,
        unix_us,
    }
}

fn unix_ms() -> i64 {
    (wall_now().unix_us / 1000) as i64
}

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("seedkv-rdb-file-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

fn redis_on(dir: &Path, debug: bool) -> Option<seedkv_tests::ServerProcess> {
    let dir = dir.to_str().expect("utf-8 path");
    let mut args = vec!["--dir", dir, "--dbfilename", "dump.rdb"];
    // Loading at start builds collections under these: the fixtures'
    // thresholds, not the installed build's defaults (its
    // hash-max-listpack-entries is 512).
    let flags: Vec<String> = THRESHOLDS.iter().map(|(n, _)| format!("--{n}")).collect();
    for ((_, value), flag) in THRESHOLDS.iter().zip(&flags) {
        args.extend([flag.as_str(), value]);
    }
    if debug {
        args.extend(["--enable-debug-command", "yes"]);
    }
    redis_server_with(&args)
}

fn setup(c: &mut dyn Conn, compression: &str) {
    c.ok(&[b"FLUSHALL"]);
    c.ok(&[b"CONFIG", b"SET", b"rdbcompression", compression.as_bytes()]);
    for (name, value) in THRESHOLDS {
        c.ok(&[b"CONFIG", b"SET", name.as_bytes(), value.as_bytes()]);
    }
}

/// Every fixture in each of [`DBS`], every third with a far TTL, and a
/// marker key naming its database.
fn populate(c: &mut dyn Conn) {
    let at_ms = (unix_ms() + FAR_TTL_MS * 2).to_string();
    for db in DBS {
        let db_text = db.to_string();
        c.ok(&[b"SELECT", db_text.as_bytes()]);
        for (i, (fixture, _)) in values().into_iter().enumerate() {
            let args: Vec<&[u8]> = fixture.iter().map(Vec::as_slice).collect();
            c.ok(&args);
            let ttl = FAR_TTL_MS.to_string();
            match i % 3 {
                0 => c.ok(&[b"PEXPIRE", &fixture[1], ttl.as_bytes()]),
                1 => c.ok(&[b"PEXPIREAT", &fixture[1], at_ms.as_bytes()]),
                _ => {}
            }
        }
        c.ok(&[b"SET", b"marker", db_text.as_bytes()]);
    }
    c.ok(&[b"SELECT", b"0"]);
}

/// One key as both servers are compared on it.
#[derive(Debug, PartialEq)]
struct KeyState {
    kind: Frame,
    value: Frame,
    encoding: Frame,
    pttl_ms: i64,
}

/// Every key of every database.
fn snapshot(c: &mut dyn Conn) -> BTreeMap<(usize, Vec<u8>), KeyState> {
    let mut all = BTreeMap::new();
    for db in 0..16 {
        c.ok(&[b"SELECT", db.to_string().as_bytes()]);
        let Frame::Array(keys) = c.call(&[b"KEYS", b"*"]) else {
            panic!("KEYS")
        };
        for key in keys {
            let Frame::Bulk(key) = key else {
                panic!("KEYS: {key:?}")
            };
            let state = key_state(c, &key);
            all.insert((db, key), state);
        }
    }
    c.ok(&[b"SELECT", b"0"]);
    all
}

fn key_state(c: &mut dyn Conn, key: &[u8]) -> KeyState {
    let kind = c.call(&[b"TYPE", key]);
    let read: &[&[u8]] = match &kind {
        Frame::Simple(t) if t == b"string" => &[b"GET", key],
        Frame::Simple(t) if t == b"list" => &[b"LRANGE", key, b"0", b"-1"],
        Frame::Simple(t) if t == b"hash" => &[b"HGETALL", key],
        Frame::Simple(t) if t == b"set" => &[b"SMEMBERS", key],
        Frame::Simple(t) if t == b"zset" => &[b"ZRANGE", key, b"0", b"-1", b"WITHSCORES"],
        other => panic!("{key:?}: TYPE {other:?}"),
    };
    let mut value = c.call(read);
    // Hashes and sets have no order a client may rely on.
    if let Frame::Array(items) = &mut value {
        if matches!(&kind, Frame::Simple(t) if t == b"hash") {
            let mut pairs: Vec<(Frame, Frame)> = items
                .chunks(2)
                .map(|p| (p[0].clone(), p[1].clone()))
                .collect();
            pairs.sort_by_key(|(f, _)| format!("{f:?}"));
            *items = pairs.into_iter().flat_map(|(f, v)| [f, v]).collect();
        } else if matches!(&kind, Frame::Simple(t) if t == b"set") {
            items.sort_by_key(|m| format!("{m:?}"));
        }
    }
    let encoding = c.call(&[b"OBJECT", b"ENCODING", key]);
    let Frame::Integer(pttl_ms) = c.call(&[b"PTTL", key]) else {
        panic!("PTTL")
    };
    KeyState {
        kind,
        value,
        encoding,
        pttl_ms,
    }
}

/// `Debug` text cut to a readable length for failure messages.
fn short(x: &impl std::fmt::Debug) -> String {
    let s = format!("{x:?}");
    match s.char_indices().nth(300) {
        Some((at, _)) => format!("{}...", &s[..at]),
        None => s,
    }
}

fn compare(
    want: &BTreeMap<(usize, Vec<u8>), KeyState>,
    got: &BTreeMap<(usize, Vec<u8>), KeyState>,
    what: &str,
) {
    let mut failures = Vec::new();
    for (at, w) in want {
        let name = format!("db {} {}", at.0, String::from_utf8_lossy(&at.1));
        let Some(g) = got.get(at) else {
            failures.push(format!("{what}: {name} missing"));
            continue;
        };
        if (&w.kind, &w.value, &w.encoding) != (&g.kind, &g.value, &g.encoding) {
            failures.push(format!(
                "{what}: {name} differs:\n  source {:?} {}\n  loaded {:?} {}",
                w.encoding,
                short(&w.value),
                g.encoding,
                short(&g.value)
            ));
        }
        let ttl_agrees = match (w.pttl_ms, g.pttl_ms) {
            (-1, -1) => true,
            (a, b) => a >= 0 && b >= 0 && (a - b).abs() <= TTL_TOLERANCE_MS,
        };
        if !ttl_agrees {
            failures.push(format!(
                "{what}: {name} PTTL {} vs {}",
                w.pttl_ms, g.pttl_ms
            ));
        }
    }
    for at in got.keys().filter(|at| !want.contains_key(*at)) {
        failures.push(format!(
            "{what}: db {} {} should not be there",
            at.0,
            String::from_utf8_lossy(&at.1)
        ));
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn a_redis_file_loads_into_seedkv_with_the_same_contents() {
    for compression in ["yes", "no"] {
        let dir = temp_dir(&format!("from-redis-{compression}"));
        let Some(redis) = redis_on(&dir, true) else {
            return;
        };
        let mut theirs = RespClient::connect(redis.port);
        setup(&mut theirs, compression);
        populate(&mut theirs);
        // A key that has expired when SAVE writes it: Redis writes it all
        // the same, and a master loading the file drops it.
        theirs.ok(&[b"DEBUG", b"SET-ACTIVE-EXPIRE", b"0"]);
        theirs.ok(&[b"SELECT", b"3"]);
        theirs.ok(&[b"SET", b"gone", b"v", b"PX", b"1"]);
        theirs.ok(&[b"SELECT", b"0"]);
        std::thread::sleep(Duration::from_millis(20));
        theirs.ok(&[b"SAVE"]);
        let bytes = std::fs::read(dir.join("dump.rdb")).expect("redis wrote dump.rdb");

        let mut ours = Ours::new();
        setup(&mut ours, compression);
        let report = ours
            .t
            .engine
            .load_rdb_file(wall_now(), &bytes)
            .unwrap_or_else(|e| panic!("rdbcompression {compression}: {e}"));
        assert_eq!(report.keys_expired, 1, "the expired key is dropped");
        assert_eq!(report.consumed_bytes, bytes.len());
        assert_eq!(report.aux.redis_ver.as_deref(), Some("7.0.15"));
        assert!(!report.aux.aof_base);
        assert!((report.aux.ctime_s.unwrap() - unix_ms() / 1000).abs() < 60);
        ours.tick();
        let want = snapshot(&mut theirs);
        assert_eq!(report.keys_loaded as usize, want.len());
        compare(
            &want,
            &snapshot(&mut ours),
            &format!("redis -> seedkv, rdbcompression {compression}"),
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn a_seedkv_file_loads_into_redis_with_the_same_contents() {
    let Some(check_rdb) = find_in_path("redis-check-rdb") else {
        seedkv_tests::missing_tool("redis-check-rdb", "apt-get install redis-tools");
        return;
    };
    for compression in ["yes", "no"] {
        let mut ours = Ours::new();
        setup(&mut ours, compression);
        populate(&mut ours);
        ours.ok(&[b"SELECT", b"3"]);
        ours.ok(&[b"SET", b"gone", b"v", b"PX", b"50"]);
        ours.ok(&[b"SELECT", b"0"]);
        let bytes = ours.t.engine.rdb_file_bytes(ours.t.now);
        let dir = temp_dir(&format!("from-seedkv-{compression}"));
        let path = dir.join("dump.rdb");
        std::fs::write(&path, &bytes).expect("write dump.rdb");

        let (ok, out, err) = run_tool(&check_rdb, &[path.to_str().unwrap()], b"");
        assert!(
            ok && out.contains("\\o/ RDB looks OK! \\o/"),
            "redis-check-rdb on our file (rdbcompression {compression}):\n{out}{err}"
        );
        assert!(out.contains("AUX FIELD redis-ver = '7.0.15'"), "{out}");

        // Let the key expire before redis-server loads the file.
        std::thread::sleep(Duration::from_millis(100));
        let Some(redis) = redis_on(&dir, false) else {
            return;
        };
        let mut theirs = RespClient::connect(redis.port);
        ours.tick();
        let want = snapshot(&mut ours);
        let loaded = format!(
            "Done loading RDB, keys loaded: {}, keys expired: 1.",
            want.len()
        );
        assert!(redis.log().contains(&loaded), "{loaded}\n{}", redis.log());
        compare(
            &want,
            &snapshot(&mut theirs),
            &format!("seedkv -> redis, rdbcompression {compression}"),
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn files_are_redis_bytes_where_layouts_agree() {
    for compression in ["yes", "no"] {
        let dir = temp_dir(&format!("bytes-{compression}"));
        let Some(redis) = redis_on(&dir, false) else {
            return;
        };
        let mut theirs = RespClient::connect(redis.port);
        let mut ours = Ours::new();
        let same: Vec<Vec<Vec<u8>>> = values()
            .into_iter()
            .filter(|(_, same_bytes)| *same_bytes)
            .map(|(f, _)| f)
            .collect();
        let at_ms = (unix_ms() + FAR_TTL_MS).to_string();
        // One key per database: sixteen fixtures a round.
        for (round, group) in same.chunks(16).enumerate() {
            for c in [&mut theirs as &mut dyn Conn, &mut ours] {
                setup(c, compression);
                for (db, fixture) in group.iter().enumerate() {
                    c.ok(&[b"SELECT", db.to_string().as_bytes()]);
                    let args: Vec<&[u8]> = fixture.iter().map(Vec::as_slice).collect();
                    c.ok(&args);
                    if db % 2 == 0 {
                        c.ok(&[b"PEXPIREAT", &fixture[1], at_ms.as_bytes()]);
                    }
                }
                c.ok(&[b"SELECT", b"0"]);
            }
            theirs.ok(&[b"SAVE"]);
            let redis_file = std::fs::read(dir.join("dump.rdb")).expect("redis wrote dump.rdb");
            // Redis's clock and memory figure, read back from its file.
            let mut scratch = Ours::new();
            let aux = scratch
                .t
                .engine
                .load_rdb_file(wall_now(), &redis_file)
                .expect("redis's file loads")
                .aux;
            let mut opts = ours.t.engine.rdb_save_options(ours.t.now);
            opts.now_ms = aux.ctime_s.unwrap() as u64 * 1000;
            opts.used_mem_bytes = aux.used_mem_bytes.unwrap() as u64;
            let mut our_file = Vec::new();
            ours.t
                .engine
                .write_rdb(&opts, &mut |chunk| our_file.extend_from_slice(chunk));
            if our_file != redis_file {
                let at = our_file
                    .iter()
                    .zip(&redis_file)
                    .position(|(a, b)| a != b)
                    .unwrap_or(our_file.len().min(redis_file.len()));
                let keys: Vec<String> = group
                    .iter()
                    .map(|f| String::from_utf8_lossy(&f[1]).into_owned())
                    .collect();
                panic!(
                    "rdbcompression {compression}, round {round} ({keys:?}): files differ \
                     from byte {at} (ours {} bytes, redis {}):\n  ours  {}\n  redis {}",
                    our_file.len(),
                    redis_file.len(),
                    short(&&our_file[at.saturating_sub(16)..]),
                    short(&&redis_file[at.saturating_sub(16)..])
                );
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A file made by hand: the magic, `body` (ending in EOF) and its CRC64.
fn file_of(body: &[u8]) -> Vec<u8> {
    let mut f = b"REDIS0010".to_vec();
    f.extend_from_slice(body);
    let crc = seedkv_engine::rdb::codec::CRC64.checksum(&f);
    f.extend_from_slice(&crc.to_le_bytes());
    f
}

/// Files both servers refuse, and the lines each must log: every line of
/// `LoadError::log_lines` appears in redis-server's log for the same file.
#[test]
fn refused_files_log_what_redis_logs() {
    let Some(server) = find_in_path("redis-server") else {
        seedkv_tests::missing_tool("redis-server", "apt-get install redis-server");
        return;
    };
    let mut ours = Ours::new();
    ours.ok(&[b"CONFIG", b"SET", b"rdbcompression", b"no"]);
    ours.ok(&[b"SET", b"key", &[b'v'; 100]]);
    ours.ok(&[b"SET", b"other", b"x"]);
    let good = ours.t.engine.rdb_file_bytes(ours.t.now);
    let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
    // Cut inside the 100-byte value.
    let value_at = good
        .windows(100)
        .position(|w| w == [b'v'; 100])
        .expect("the value");
    cases.push(("truncated", good[..value_at + 50].to_vec()));
    let mut bad_crc = good.clone();
    *bad_crc.last_mut().unwrap() ^= 0x5A;
    cases.push(("checksum", bad_crc));
    let mut v11 = good.clone();
    v11[5..9].copy_from_slice(b"0011");
    cases.push(("version 11", v11));
    let mut signature = good.clone();
    signature[..5].copy_from_slice(b"RADIS");
    cases.push(("signature", signature));
    cases.push((
        "duplicate",
        file_of(&[0, 1, b'k', 1, b'a', 0, 1, b'k', 1, b'b', 0xFF]),
    ));
    cases.push(("db 16", file_of(&[0xFE, 16, 0xFF])));
    cases.push(("empty", Vec::new()));
    for (what, bytes) in cases {
        let dir = temp_dir(&format!("refused-{}", what.replace(' ', "-")));
        std::fs::write(dir.join("dump.rdb"), &bytes).expect("write dump.rdb");
        let mut scratch = Ours::new();
        let err = scratch
            .t
            .engine
            .load_rdb_file(wall_now(), &bytes)
            .expect_err(what);
        let port = seedkv_tests::free_port().to_string();
        let (exited_ok, log, _) = run_tool(
            &server,
            &[
                "--port",
                &port,
                "--dir",
                dir.to_str().unwrap(),
                "--dbfilename",
                "dump.rdb",
                "--save",
                "",
                "--logfile",
                "",
            ],
            b"",
        );
        assert!(!exited_ok, "{what}: redis-server loaded it:\n{log}");
        for line in err.log_lines() {
            assert!(
                log.contains(&line),
                "{what}: redis-server did not log {line:?}:\n{log}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A key's LRU idle time (under an LRU policy) and LFU counter (under an
/// LFU policy) travel in the file as IDLE and FREQ, both ways; with one
/// key per database the files are byte for byte redis's.
#[test]
fn idle_and_freq_cross_load_both_ways() {
    for (policy, set_opt, read) in [
        ("allkeys-lru", &b"IDLETIME"[..], &b"IDLETIME"[..]),
        ("allkeys-lfu", b"FREQ", b"FREQ"),
    ] {
        let dir = temp_dir(&format!("access-{policy}"));
        let Some(redis) = redis_on(&dir, false) else {
            return;
        };
        let mut theirs = RespClient::connect(redis.port);
        let mut ours = Ours::new();
        let mut dumped = None;
        for c in [&mut theirs as &mut dyn Conn, &mut ours] {
            c.ok(&[b"FLUSHALL"]);
            c.ok(&[b"CONFIG", b"SET", b"maxmemory-policy", policy.as_bytes()]);
            c.ok(&[b"SET", b"src", b"hello"]);
            let payload = dumped.get_or_insert_with(|| match c.call(&[b"DUMP", b"src"]) {
                Frame::Bulk(p) => p,
                other => panic!("DUMP: {other:?}"),
            });
            c.ok(&[b"DEL", b"src"]);
            c.ok(&[b"RESTORE", b"k", b"0", payload, set_opt, b"77"]);
            c.ok(&[b"SELECT", b"9"]);
            c.ok(&[b"RESTORE", b"k9", b"0", payload, set_opt, b"200"]);
            c.ok(&[b"SELECT", b"0"]);
        }
        theirs.ok(&[b"SAVE"]);
        let redis_file = std::fs::read(dir.join("dump.rdb")).expect("redis wrote dump.rdb");
        let mut loaded = Ours::new();
        loaded.ok(&[b"CONFIG", b"SET", b"maxmemory-policy", policy.as_bytes()]);
        let aux = loaded
            .t
            .engine
            .load_rdb_file(wall_now(), &redis_file)
            .expect("redis's file loads")
            .aux;
        loaded.tick();
        for (db, key, want) in [(b"0", &b"k"[..], 77), (b"9", b"k9", 200)] {
            loaded.ok(&[b"SELECT", db]);
            let Frame::Integer(got) = loaded.call(&[b"OBJECT", read, key]) else {
                panic!("OBJECT {}", String::from_utf8_lossy(read))
            };
            // An idle time may have grown by a second or two meanwhile.
            assert!(
                (want..want + 3).contains(&got),
                "{policy}: OBJECT {} {} = {got}, want {want}",
                String::from_utf8_lossy(read),
                String::from_utf8_lossy(key)
            );
        }
        let mut opts = ours.t.engine.rdb_save_options(ours.t.now);
        opts.now_ms = aux.ctime_s.unwrap() as u64 * 1000;
        opts.used_mem_bytes = aux.used_mem_bytes.unwrap() as u64;
        let mut our_file = Vec::new();
        ours.t
            .engine
            .write_rdb(&opts, &mut |chunk| our_file.extend_from_slice(chunk));
        assert_eq!(our_file, redis_file, "{policy}: our file is redis's");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
