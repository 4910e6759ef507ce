//! Persistence through the real binary: SAVE/BGSAVE and a restart on the
//! same `--dir`, RDB files crossing between seedkv-server and redis-server
//! 7.0 in both directions, and the SIGKILL test (every write acknowledged
//! under `appendfsync always` survives a crash at a random moment).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use seedkv_engine::resp::reply::encode_request;
use seedkv_engine::resp::{Frame, FrameDecoder};
use seedkv_tests::{redis_server, RespClient, ServerProcess};

/// How long a save may take before the test gives up on it (a hang fails
/// the test; nothing asserts how fast it is).
const SAVE_TIMEOUT: Duration = Duration::from_secs(30);

fn call(c: &mut RespClient, args: &[&str]) -> Frame {
    let refs: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    c.command(&refs)
}

fn ok(c: &mut RespClient, args: &[&str]) {
    let reply = call(c, args);
    assert!(
        !matches!(reply, Frame::Error(_)),
        "{args:?} failed: {reply:?}"
    );
}

/// A key of each type and encoding, some with a TTL.
fn write_fixtures(c: &mut RespClient) {
    ok(c, &["SET", "str", "hello world"]);
    ok(c, &["SET", "int", "12345"]);
    ok(c, &["SET", "ttl", "soon", "EX", "100000"]);
    ok(c, &["RPUSH", "list", "a", "b", "c", "1", "2"]);
    ok(c, &["HSET", "hash", "f1", "v1", "f2", "2"]);
    ok(c, &["SADD", "intset", "1", "2", "3", "-7"]);
    ok(c, &["SADD", "set", "x", "y", "z"]);
    ok(c, &["ZADD", "zset", "1.5", "a", "-2", "b", "3", "c"]);
    for i in 0..300 {
        let (n, v) = (i.to_string(), format!("value-{i}-{}", "x".repeat(i % 50)));
        ok(c, &["RPUSH", "biglist", &v]);
        ok(c, &["HSET", "bighash", &n, &v]);
        ok(c, &["SADD", "bigset", &v]);
        ok(c, &["ZADD", "bigzset", &n, &v]);
    }
    ok(c, &["PEXPIRE", "bighash", "90000000"]);
}

const FIXTURE_KEYS: &[&str] = &[
    "str", "int", "ttl", "list", "hash", "intset", "set", "zset", "biglist", "bighash", "bigset",
    "bigzset",
];

/// A key's type and contents, collections sorted where the order is free.
fn contents(c: &mut RespClient, key: &str) -> (Frame, Frame) {
    let kind = call(c, &["TYPE", key]);
    let read: &[&str] = match &kind {
        Frame::Simple(t) if t == b"string" => &["GET", key],
        Frame::Simple(t) if t == b"list" => &["LRANGE", key, "0", "-1"],
        Frame::Simple(t) if t == b"hash" => &["HGETALL", key],
        Frame::Simple(t) if t == b"set" => &["SMEMBERS", key],
        Frame::Simple(t) if t == b"zset" => &["ZRANGE", key, "0", "-1", "WITHSCORES"],
        other => return (other.clone(), Frame::Null),
    };
    let mut value = call(c, read);
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
    (kind, value)
}

/// Every fixture's contents and whether it has a TTL.
fn snapshot(c: &mut RespClient) -> Vec<(String, (Frame, Frame), bool)> {
    FIXTURE_KEYS
        .iter()
        .map(|&k| {
            let ttl = match call(c, &["PTTL", k]) {
                Frame::Integer(ms) => ms > 0,
                other => panic!("PTTL {k}: {other:?}"),
            };
            (k.to_string(), contents(c, k), ttl)
        })
        .collect()
}

fn assert_same(from: &[(String, (Frame, Frame), bool)], to: &[(String, (Frame, Frame), bool)]) {
    assert_eq!(from.len(), to.len());
    for (want, got) in from.iter().zip(to) {
        assert_eq!(want, got, "key {} differs after loading", want.0);
    }
    assert!(
        from.iter().any(|(_, _, ttl)| *ttl),
        "some fixture has a TTL"
    );
}

fn dir_arg(dir: &Path) -> String {
    dir.to_string_lossy().into_owned()
}

#[test]
fn save_then_restart_on_the_same_dir_keeps_the_data() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir_arg(dir.path());
    let mut server = ServerProcess::seedkv(&["--dir", &d, "--save", ""]);
    let mut c = RespClient::connect(server.port);
    write_fixtures(&mut c);
    let before = snapshot(&mut c);
    assert_eq!(call(&mut c, &["SAVE"]), Frame::Simple(b"OK".to_vec()));
    server.signal("KILL");
    server.wait_exit();

    let server = ServerProcess::seedkv(&["--dir", &d, "--save", ""]);
    let mut c = RespClient::connect(server.port);
    assert_same(&before, &snapshot(&mut c));
    assert_eq!(
        call(&mut c, &["DBSIZE"]),
        Frame::Integer(FIXTURE_KEYS.len() as i64)
    );
}

#[test]
fn sigterm_saves_when_save_points_are_configured_and_the_data_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir_arg(dir.path());
    let mut server = ServerProcess::seedkv(&["--dir", &d, "--save", "3600 1"]);
    let mut c = RespClient::connect(server.port);
    write_fixtures(&mut c);
    let before = snapshot(&mut c);
    server.signal("TERM");
    assert!(server.wait_exit().success());
    let log = server.log();
    assert!(
        log.contains("Saving the final RDB snapshot before exiting."),
        "{log}"
    );

    let server = ServerProcess::seedkv(&["--dir", &d, "--save", ""]);
    let mut c = RespClient::connect(server.port);
    assert_same(&before, &snapshot(&mut c));
}

#[test]
fn shutdown_save_saves_without_save_points_and_exits_zero() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir_arg(dir.path());
    let mut server = ServerProcess::seedkv(&["--dir", &d, "--save", ""]);
    let mut c = RespClient::connect(server.port);
    write_fixtures(&mut c);
    let before = snapshot(&mut c);
    let mut s = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    s.write_all(&encode_request(&[b"SHUTDOWN", b"SAVE"]))
        .unwrap();
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    assert_eq!(rest, b"", "SHUTDOWN replies nothing when it stops");
    assert!(server.wait_exit().success(), "{}", server.log());

    let server = ServerProcess::seedkv(&["--dir", &d, "--save", ""]);
    let mut c = RespClient::connect(server.port);
    assert_same(&before, &snapshot(&mut c));
}

#[test]
fn sigterm_without_save_points_saves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir_arg(dir.path());
    let mut server = ServerProcess::seedkv(&["--dir", &d, "--save", ""]);
    ok(&mut RespClient::connect(server.port), &["SET", "k", "v"]);
    server.signal("TERM");
    assert!(server.wait_exit().success());
    assert!(!dir.path().join("dump.rdb").exists());
}

fn lastsave(c: &mut RespClient) -> i64 {
    match call(c, &["LASTSAVE"]) {
        Frame::Integer(t) => t,
        other => panic!("LASTSAVE: {other:?}"),
    }
}

fn unix_now_s() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

#[test]
fn bgsave_writes_the_file_and_lastsave_advances() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir_arg(dir.path());
    let mut server = ServerProcess::seedkv(&["--dir", &d, "--save", ""]);
    let mut c = RespClient::connect(server.port);
    write_fixtures(&mut c);
    let before = lastsave(&mut c);
    // LASTSAVE counts seconds: start the save in a later second than the
    // last one, so that a save that happened shows.
    while unix_now_s() <= before {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        call(&mut c, &["BGSAVE"]),
        Frame::Simple(b"Background saving started".to_vec())
    );
    let deadline = Instant::now() + SAVE_TIMEOUT;
    while lastsave(&mut c) <= before {
        assert!(
            Instant::now() < deadline,
            "BGSAVE did not finish; log:\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(server
        .log()
        .contains("Background saving terminated with success"));
    let want = snapshot(&mut c);
    server.signal("KILL");
    server.wait_exit();
    let server = ServerProcess::seedkv(&["--dir", &d, "--save", ""]);
    let mut c = RespClient::connect(server.port);
    assert_same(&want, &snapshot(&mut c));
}

#[test]
fn an_rdb_written_by_redis_loads_into_seedkv() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir_arg(dir.path());
    let Some(redis) = redis_server_in(&d) else {
        return;
    };
    let mut theirs = RespClient::connect(redis.port);
    write_fixtures(&mut theirs);
    let want = snapshot(&mut theirs);
    assert_eq!(call(&mut theirs, &["SAVE"]), Frame::Simple(b"OK".to_vec()));
    drop(redis);

    let seedkv = ServerProcess::seedkv(&["--dir", &d, "--save", ""]);
    let mut ours = RespClient::connect(seedkv.port);
    assert_same(&want, &snapshot(&mut ours));
}

#[test]
fn an_rdb_written_by_seedkv_loads_into_redis() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir_arg(dir.path());
    let mut seedkv = ServerProcess::seedkv(&["--dir", &d, "--save", ""]);
    let mut ours = RespClient::connect(seedkv.port);
    write_fixtures(&mut ours);
    let want = snapshot(&mut ours);
    assert_eq!(call(&mut ours, &["SAVE"]), Frame::Simple(b"OK".to_vec()));
    seedkv.signal("KILL");
    seedkv.wait_exit();

    let Some(redis) = redis_server_in(&d) else {
        return;
    };
    assert!(
        redis.log().contains("DB loaded from disk"),
        "{}",
        redis.log()
    );
    let mut theirs = RespClient::connect(redis.port);
    assert_same(&want, &snapshot(&mut theirs));
}

/// redis-server with its files in `dir` (loading `dump.rdb` from it).
fn redis_server_in(dir: &str) -> Option<ServerProcess> {
    redis_server()?;
    ServerProcess::redis_with(&["--dir", dir, "--save", ""])
}

// ---------------------------------------------------------------------------
// The SIGKILL test.

/// Rounds of the SIGKILL test; `SEEDKV_SIGKILL_ROUNDS` overrides.
const SIGKILL_ROUNDS_DEFAULT: usize = 20;

/// Client threads writing at once.
const WRITERS: usize = 4;

/// A client that reports a dead connection instead of panicking.
struct Writer {
    stream: TcpStream,
    decoder: FrameDecoder,
}

impl Writer {
    fn connect(port: u16) -> Writer {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        stream.set_nodelay(true).unwrap();
        Writer {
            stream,
            decoder: FrameDecoder::new(),
        }
    }

    /// The reply, or `None` once the server is gone.
    fn command(&mut self, args: &[&str]) -> Option<Frame> {
        let refs: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.stream.write_all(&encode_request(&refs)).ok()?;
        loop {
            if let Some(frame) = self.decoder.next_frame().ok()? {
                return Some(frame);
            }
            let mut chunk = [0u8; 4096];
            match self.stream.read(&mut chunk) {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.decoder.feed(&chunk[..n]),
            }
        }
    }
}

/// What one writer had acknowledged when the server died.
#[derive(Debug, Default)]
struct Acked {
    /// The highest INCR reply.
    counter: i64,
    /// Elements pushed (0, 1, 2...) whose RPUSH was acknowledged.
    pushed: u64,
    /// SETs acknowledged (keys `w{t}:0..sets`).
    sets: u64,
    /// Requests sent (the INCRs among them bound the counter).
    incrs_sent: i64,
}

/// Writes INCR, RPUSH and SET in turn until the connection dies.
fn write_until_killed(port: u16, t: usize, stop: &AtomicBool) -> Acked {
    let mut w = Writer::connect(port);
    let mut acked = Acked::default();
    let (counter, list) = (format!("c{t}"), format!("l{t}"));
    let mut i: u64 = 0;
    while !stop.load(Ordering::Relaxed) {
        acked.incrs_sent += 1;
        match w.command(&["INCR", &counter]) {
            Some(Frame::Integer(n)) => acked.counter = n,
            Some(other) => panic!("INCR: {other:?}"),
            None => break,
        }
        match w.command(&["RPUSH", &list, &i.to_string()]) {
            Some(Frame::Integer(_)) => acked.pushed = i + 1,
            Some(other) => panic!("RPUSH: {other:?}"),
            None => break,
        }
        match w.command(&["SET", &format!("w{t}:{i}"), &i.to_string()]) {
            Some(Frame::Simple(_)) => acked.sets = i + 1,
            Some(other) => panic!("SET: {other:?}"),
            None => break,
        }
        i += 1;
    }
    acked
}

/// A small xorshift for the kill moments (seeded from the clock, printed
/// so a failing round can be told apart; the property does not depend on
/// the moment).
fn next_random(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn check_after_restart(c: &mut RespClient, t: usize, acked: &Acked, round: usize) {
    let counter = match call(c, &["GET", &format!("c{t}")]) {
        Frame::Bulk(v) => String::from_utf8(v).unwrap().parse::<i64>().unwrap(),
        Frame::Null => 0,
        other => panic!("GET: {other:?}"),
    };
    assert!(
        counter >= acked.counter && counter <= acked.incrs_sent,
        "round {round} writer {t}: counter {counter}, acknowledged {}, sent {}",
        acked.counter,
        acked.incrs_sent
    );
    let list = match call(c, &["LRANGE", &format!("l{t}"), "0", "-1"]) {
        Frame::Array(items) => items,
        other => panic!("LRANGE: {other:?}"),
    };
    assert!(
        list.len() as u64 >= acked.pushed,
        "round {round} writer {t}: {} elements, {} acknowledged",
        list.len(),
        acked.pushed
    );
    for (i, item) in list.iter().enumerate() {
        assert_eq!(
            item,
            &Frame::Bulk(i.to_string().into_bytes()),
            "round {round} writer {t}: element {i}"
        );
    }
    for i in 0..acked.sets {
        let key = format!("w{t}:{i}");
        assert_eq!(
            call(c, &["GET", &key]),
            Frame::Bulk(i.to_string().into_bytes()),
            "round {round}: acknowledged SET {key} lost"
        );
    }
}

#[test]
fn sigkill_loses_no_write_acknowledged_under_appendfsync_always() {
    let rounds = std::env::var("SEEDKV_SIGKILL_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(SIGKILL_ROUNDS_DEFAULT);
    let dir = tempfile::tempdir().unwrap();
    let d = dir_arg(dir.path());
    let args = [
        "--dir",
        &d,
        "--save",
        "",
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
    ];
    let mut seed = unix_now_s() as u64 | 1;
    eprintln!("sigkill test: seed {seed}, {rounds} rounds");
    let mut totals = Acked::default();
    for round in 0..rounds {
        // Each round starts from the files the last one left: the AOF
        // grows across crashes, as a real server's would.
        let mut server = ServerProcess::seedkv(&args);
        let port = server.port;
        // Clear the previous round's keys (through the AOF too).
        ok(&mut RespClient::connect(port), &["FLUSHALL"]);
        let stop = Arc::new(AtomicBool::new(false));
        let writers: Vec<_> = (0..WRITERS)
            .map(|t| {
                let stop = stop.clone();
                std::thread::spawn(move || write_until_killed(port, t, &stop))
            })
            .collect();
        let kill_after = Duration::from_millis(100 + next_random(&mut seed) % 500);
        std::thread::sleep(kill_after);
        server.signal("KILL");
        server.wait_exit();
        stop.store(true, Ordering::Relaxed);
        let acked: Vec<Acked> = writers.into_iter().map(|w| w.join().unwrap()).collect();

        let server = ServerProcess::seedkv(&args);
        let mut c = RespClient::connect(server.port);
        for (t, a) in acked.iter().enumerate() {
            check_after_restart(&mut c, t, a, round);
            totals.counter += a.counter;
            totals.sets += a.sets;
        }
        drop(server);
    }
    eprintln!(
        "sigkill test: {rounds} rounds, {} INCRs and {} SETs acknowledged, none lost",
        totals.counter, totals.sets
    );
    assert!(totals.sets > 0, "the writers wrote something");
}

#[test]
fn a_dump_it_cannot_load_stops_the_start_with_status_1() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("dump.rdb"), b"REDIS0010 not really").unwrap();
    let out = std::process::Command::new(seedkv_tests::server_binary())
        .args(["--port", "0", "--seed", "1", "--save", ""])
        .arg("--dir")
        .arg(dir.path())
        .output()
        .expect("run seedkv-server");
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(!log.contains("Ready to accept connections"), "{log}");
}

// ---------------------------------------------------------------------------
// The probe's crash-restart fault.

/// A server started (and restarted) by `sim/scripts/restart-server.sh`,
/// killed when dropped.
struct Restartable {
    dir: tempfile::TempDir,
    port: u16,
    command: String,
}

impl Restartable {
    /// `server` is the server's command line without port and dir.
    fn start(server: &[&str], dir_flag: &[&str]) -> Restartable {
        let dir = tempfile::tempdir().unwrap();
        let port = seedkv_tests::free_port();
        let d = dir_arg(dir.path());
        let script = seedkv_tests::workspace_root().join("sim/scripts/restart-server.sh");
        let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
        let mut words = vec![
            quote(&script.to_string_lossy()),
            quote(&format!("{d}/pid")),
            quote(&format!("{d}/server.log")),
        ];
        words.extend(server.iter().map(|w| quote(w)));
        words.extend(["--port".to_string(), port.to_string()]);
        words.extend(dir_flag.iter().map(|w| quote(w)));
        words.push(quote(&d));
        let r = Restartable {
            dir,
            port,
            command: words.join(" "),
        };
        r.run_command();
        r
    }

    fn run_command(&self) {
        let ok = std::process::Command::new("sh")
            .args(["-c", &self.command])
            .status()
            .unwrap()
            .success();
        assert!(ok, "{}", self.command);
        let deadline = Instant::now() + SAVE_TIMEOUT;
        loop {
            let pong = Writer::try_connect(self.port).and_then(|mut w| w.command(&["PING"]));
            if pong == Some(Frame::Simple(b"PONG".to_vec())) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not start: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }
}

impl Drop for Restartable {
    fn drop(&mut self) {
        if let Ok(pid) = std::fs::read_to_string(self.dir.path().join("pid")) {
            let _ = std::process::Command::new("kill")
                .args(["-9", pid.trim()])
                .status();
        }
    }
}

impl Writer {
    fn try_connect(port: u16) -> Option<Writer> {
        let stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        Some(Writer {
            stream,
            decoder: FrameDecoder::new(),
        })
    }
}

/// A probe of every workload with the server crashed and restarted every
/// ~200 ms while faults are on.
fn restart_probe(server: &Restartable) -> seedkv_sim::probe::report::ProbeReport {
    use seedkv_sim::probe::restart::RestartFault;
    use seedkv_sim::probe::{probe, ProbeConfig};
    let config = ProbeConfig {
        ops: 60_000,
        duration: Duration::from_secs(60),
        seed: 5,
        restart: Some(RestartFault {
            command: server.command.clone(),
            every_ms: 200,
        }),
        ..ProbeConfig::new(&format!("127.0.0.1:{}", server.port))
    };
    probe(&config).expect("the probe runs")
}

const APPENDFSYNC_ALWAYS: &[&str] = &[
    "--save",
    "",
    "--appendonly",
    "yes",
    "--appendfsync",
    "always",
];

#[test]
fn the_probe_restarts_redis_under_appendfsync_always_and_every_checker_passes() {
    if redis_server().is_none() {
        return;
    }
    let mut args = vec!["redis-server", "--bind", "127.0.0.1", "--daemonize", "no"];
    args.extend_from_slice(APPENDFSYNC_ALWAYS);
    let server = Restartable::start(&args, &["--dir"]);
    let report = restart_probe(&server);
    let text = report.render();
    println!("{text}");
    assert!(report.restarts > 0, "{text}");
    assert!(report.passed(), "{text}\n{}", server.log());
}

#[test]
fn the_probe_restarts_seedkv_under_appendfsync_always_and_every_checker_passes() {
    let bin = seedkv_tests::server_binary();
    let mut args = vec![bin.to_str().unwrap()];
    args.extend_from_slice(APPENDFSYNC_ALWAYS);
    let server = Restartable::start(&args, &["--dir"]);
    let report = restart_probe(&server);
    let text = report.render();
    println!("{text}");
    assert!(report.restarts > 0, "{text}");
    assert!(report.passed(), "{text}\n{}", server.log());
}
