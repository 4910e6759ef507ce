//! The shipped server's network code under turmoil's simulated TCP.
//!
//! The server host runs `seedkv_server::serve` — the binary's accept, read
//! and write loop, not a copy — over turmoil's listener and streams, with a
//! [`VirtualClock`] so that every `now` the engine sees is simulated time.
//! Several client hosts run a seeded mix of SETs, GETs, INCRs, pipelines and
//! abandoned connections while the test injects holds and releases,
//! partitions and repairs between each client and the server. Every reply is
//! checked as it arrives, and at the end a fresh connection per client reads
//! every key back:
//!
//! - no acknowledged write is lost: a key reads as its last acknowledged
//!   value, or a value that was never acknowledged (sent later, or sent on a
//!   connection the client gave up on, which may still land) — never an
//!   older acknowledged one;
//! - INCR counters only move forward past every acknowledged value and
//!   never beyond the number of INCRs sent;
//! - a pipeline's replies come back complete and in order.
//!
//! The whole run is traced (simulated time, client, request, reply), and the
//! same turmoil seed must give the same trace.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use seedkv_engine::commands::config::apply_config_line;
use seedkv_engine::Config;
use seedkv_server::net::{Listener, Stream};
use seedkv_server::{serve, Host, VirtualClock};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};

const PORT: u16 = 6379;
/// 2026-01-01T00:00:00Z: the simulated wall clock's start.
const EPOCH_UNIX_US: u64 = 1_767_225_600_000_000;
/// How long a client waits for a reply before it gives the connection up.
const REPLY_TIMEOUT: Duration = Duration::from_millis(400);
const CLIENTS: usize = 4;
const OPS_PER_CLIENT: usize = 120;
const KEYS_PER_CLIENT: u64 = 6;

// ---- turmoil's sockets as the server's Listener/Stream ----

struct SimListener(turmoil::net::TcpListener);
struct SimStream(turmoil::net::TcpStream);

impl Listener for SimListener {
    type Stream = SimStream;

    fn accept(&mut self) -> impl Future<Output = io::Result<(SimStream, SocketAddr)>> {
        let accept = self.0.accept();
        async move {
            let (stream, peer) = accept.await?;
            Ok((SimStream(stream), peer))
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr()
    }
}

impl AsyncRead for SimStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for SimStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

impl Stream for SimStream {
    fn set_nodelay(&self) -> io::Result<()> {
        self.0.set_nodelay(true)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr()
    }
}

/// Registers the server host: the real event loop over turmoil's TCP.
fn add_server(sim: &mut turmoil::Sim<'_>, config: Config) {
    sim.host("server", move || {
        let config = config.clone();
        async move {
            let listener =
                turmoil::net::TcpListener::bind((IpAddr::V4(Ipv4Addr::UNSPECIFIED), PORT)).await?;
            let host = Host::new(config, VirtualClock::new(EPOCH_UNIX_US));
            serve(host, vec![SimListener(listener)]).await;
            Ok(())
        }
    });
}

fn open_config() -> Config {
    let mut config = Config {
        seed: 7,
        ..Config::default()
    };
    // The simulated clients are not on loopback.
    apply_config_line(&mut config, "protected-mode", "no").unwrap();
    config
}

// ---- a minimal RESP client ----

/// A reply rendered as text: `+OK`, `-ERR ...`, `:5`, `$hello`, `$nil`,
/// `*[a,b]`.
type Reply = String;

struct Conn {
    stream: turmoil::net::TcpStream,
    buf: Vec<u8>,
}

fn encode(args: &[&str]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n{a}\r\n", a.len()).as_bytes());
    }
    out
}

/// Parses one reply from `buf`: the reply and the bytes it used, or `None`
/// if incomplete.
fn parse(buf: &[u8]) -> Option<(Reply, usize)> {
    let end = buf.windows(2).position(|w| w == b"\r\n")?;
    let line = std::str::from_utf8(&buf[1..end]).expect("utf-8 reply line");
    let rest = end + 2;
    match buf.first()? {
        b'+' | b'-' | b':' => Some((format!("{}{line}", buf[0] as char), rest)),
        b'$' => {
            let n: i64 = line.parse().expect("bulk length");
            if n < 0 {
                return Some(("$nil".into(), rest));
            }
            let n = n as usize;
            if buf.len() < rest + n + 2 {
                return None;
            }
            let body = String::from_utf8_lossy(&buf[rest..rest + n]);
            Some((format!("${body}"), rest + n + 2))
        }
        b'*' => {
            let n: usize = line.parse().expect("array length");
            let mut used = rest;
            let mut items = Vec::new();
            for _ in 0..n {
                let (item, len) = parse(&buf[used..])?;
                items.push(item);
                used += len;
            }
            Some((format!("*[{}]", items.join(",")), used))
        }
        other => panic!("unexpected reply type byte {other:?}"),
    }
}

impl Conn {
    /// Connects, or `None` if the server cannot be reached in time.
    async fn open() -> Option<Conn> {
        let connect = turmoil::net::TcpStream::connect(("server", PORT));
        match tokio::time::timeout(REPLY_TIMEOUT, connect).await {
            Ok(Ok(stream)) => Some(Conn {
                stream,
                buf: Vec::new(),
            }),
            _ => None,
        }
    }

    async fn send(&mut self, requests: &[Vec<u8>]) -> bool {
        let bytes: Vec<u8> = requests.concat();
        self.stream.write_all(&bytes).await.is_ok()
    }

    /// The next `n` replies, or `None` on timeout or a closed connection.
    async fn replies(&mut self, n: usize) -> Option<Vec<Reply>> {
        let mut out = Vec::new();
        let read = async {
            while out.len() < n {
                if let Some((reply, used)) = parse(&self.buf) {
                    self.buf.drain(..used);
                    out.push(reply);
                    continue;
                }
                let mut chunk = [0u8; 4096];
                match self.stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => return false,
                    Ok(k) => self.buf.extend_from_slice(&chunk[..k]),
                }
            }
            true
        };
        match tokio::time::timeout(REPLY_TIMEOUT, read).await {
            Ok(true) => Some(out),
            _ => None,
        }
    }

    /// Sends `requests` as one write and reads their replies.
    async fn call(&mut self, requests: &[Vec<u8>]) -> Option<Vec<Reply>> {
        if !self.send(requests).await {
            return None;
        }
        self.replies(requests.len()).await
    }
}

// ---- the workload and its checks ----

/// splitmix64: the clients' and the fault schedule's deterministic choices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What one client knows about its own keys (no other client writes them).
#[derive(Default)]
struct KeyState {
    /// The last write acknowledged with +OK.
    acked_seq: Option<u64>,
    /// Every acknowledged write.
    acked_all: Vec<u64>,
    /// The highest write sent.
    sent_seq: Option<u64>,
}

impl KeyState {
    /// Whether a read of `reply` is allowed: nothing was ever acknowledged
    /// and nothing or nil was written, or the value is the last acknowledged
    /// one, or a value that was sent but never acknowledged.
    fn check_read(&self, key: &str, reply: &str) -> Result<(), String> {
        if reply == "$nil" {
            return match self.acked_seq {
                None => Ok(()),
                Some(s) => Err(format!("{key} lost its acknowledged write {s}: read nil")),
            };
        }
        let seq: u64 = reply
            .strip_prefix(&format!("${key}="))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("{key}: unexpected value {reply}"))?;
        if self.sent_seq.is_none_or(|sent| seq > sent) {
            return Err(format!("{key}: read {seq}, which was never sent"));
        }
        match self.acked_seq {
            Some(acked) if seq != acked && self.acked_all.contains(&seq) => Err(format!(
                "{key}: read {seq}, overwritten by acknowledged {acked}: an acknowledged write was lost"
            )),
            _ => Ok(()),
        }
    }
}

#[derive(Default)]
struct ClientState {
    keys: BTreeMap<String, KeyState>,
    incr_sent: i64,
    incr_acked_max: i64,
    next_seq: u64,
}

impl ClientState {
    fn check_incr(&mut self, reply: &str) -> Result<(), String> {
        let v: i64 = reply
            .strip_prefix(':')
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("INCR replied {reply}"))?;
        if v <= self.incr_acked_max || v > self.incr_sent {
            return Err(format!(
                "INCR replied {v}: acknowledged max {}, sent {}",
                self.incr_acked_max, self.incr_sent
            ));
        }
        self.incr_acked_max = v;
        Ok(())
    }
}

type Trace = Rc<RefCell<Vec<String>>>;

fn log(trace: &Trace, who: usize, what: String) {
    let ms = turmoil::elapsed().as_millis();
    trace.borrow_mut().push(format!("{ms:>6} c{who} {what}"));
}

/// One client's run: `OPS_PER_CLIENT` operations, reconnecting after every
/// timeout, then a final read-back of every key over a fresh connection.
async fn client(who: usize, seed: u64, trace: Trace) -> Result<(), String> {
    let mut rng = Rng(seed ^ (who as u64 + 1).wrapping_mul(0x5851_f42d_4c95_7f2d));
    let mut st = ClientState::default();
    let ctr = format!("c{who}:ctr");
    let mut conn: Option<Conn> = None;
    for op in 0..OPS_PER_CLIENT {
        // Think time spreads the run over the fault window.
        tokio::time::sleep(Duration::from_millis(rng.below(40))).await;
        if conn.is_none() {
            conn = Conn::open().await;
            if conn.is_none() {
                log(&trace, who, format!("#{op} connect timed out"));
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        }
        let c = conn.as_mut().expect("connected above");
        let key = format!("c{who}:k{}", rng.below(KEYS_PER_CLIENT));
        let kind = rng.below(10);
        let seq = st.next_seq;
        st.next_seq += 1;
        let value = format!("{key}={seq}");
        let (requests, what): (Vec<Vec<u8>>, &str) = match kind {
            0..=3 => (vec![encode(&["SET", &key, &value])], "set"),
            4..=5 => (vec![encode(&["GET", &key])], "get"),
            6 => (vec![encode(&["INCR", &ctr])], "incr"),
            7..=8 => (
                vec![
                    encode(&["SET", &key, &value]),
                    encode(&["GET", &key]),
                    encode(&["INCR", &ctr]),
                    encode(&["PING"]),
                ],
                "pipeline",
            ),
            _ => (vec![encode(&["SET", &key, &value])], "set-and-drop"),
        };
        let writes = matches!(what, "set" | "pipeline" | "set-and-drop");
        if writes {
            st.keys.entry(key.clone()).or_default().sent_seq = Some(seq);
        }
        if matches!(what, "incr" | "pipeline") {
            st.incr_sent += 1;
        }
        if what == "set-and-drop" {
            // The connection goes away before the reply: the write may or
            // may not have happened, and the server must cope.
            let sent = c.send(&requests).await;
            log(
                &trace,
                who,
                format!("#{op} SET {key} {seq} then drop (sent {sent})"),
            );
            conn = None;
            continue;
        }
        let Some(replies) = c.call(&requests).await else {
            log(
                &trace,
                who,
                format!("#{op} {what} {key} {seq}: no reply, reconnect"),
            );
            conn = None;
            continue;
        };
        log(
            &trace,
            who,
            format!("#{op} {what} {key} {seq} -> {replies:?}"),
        );
        let ks = st.keys.entry(key.clone()).or_default();
        let check = match what {
            "set" => expect_ok(&replies[0]).map(|()| ack(ks, seq)),
            "get" => ks.check_read(&key, &replies[0]),
            "incr" => st.check_incr(&replies[0]),
            _ => {
                // A pipeline: in order, and the GET sees the SET just before
                // it on the same connection.
                let r = expect_ok(&replies[0]).map(|()| ack(ks, seq));
                let want = format!("${value}");
                let r = r.and_then(|()| {
                    if replies[1] == want {
                        Ok(())
                    } else {
                        Err(format!("pipeline GET {key} read {} not {want}", replies[1]))
                    }
                });
                let r = r.and_then(|()| st.check_incr(&replies[2]));
                r.and_then(|()| match replies[3].as_str() {
                    "+PONG" => Ok(()),
                    other => Err(format!("pipeline PING replied {other}")),
                })
            }
        };
        check.map_err(|e| format!("client {who} op {op}: {e}"))?;
    }
    drop(conn);
    // Read every key back over a fresh connection, retrying through the
    // faults still running for other clients' sake (they stop by 10 s).
    let mut names: Vec<&String> = st.keys.keys().collect();
    names.push(&ctr);
    let requests: Vec<Vec<u8>> = names.iter().map(|k| encode(&["GET", k])).collect();
    let mut finals = None;
    for _ in 0..READ_BACK_ATTEMPTS {
        if let Some(mut c) = Conn::open().await {
            if let Some(replies) = c.call(&requests).await {
                finals = Some(replies);
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let finals = finals.ok_or_else(|| format!("client {who}: the read-back never got through"))?;
    for ((key, ks), reply) in st.keys.iter().zip(&finals) {
        log(&trace, who, format!("final {key} -> {reply}"));
        ks.check_read(key, reply)
            .map_err(|e| format!("client {who} final read: {e}"))?;
    }
    let final_ctr: i64 = finals[finals.len() - 1]
        .strip_prefix('$')
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    log(&trace, who, format!("final {ctr} -> {final_ctr}"));
    if final_ctr < st.incr_acked_max || final_ctr > st.incr_sent {
        return Err(format!(
            "client {who}: counter {final_ctr}, acknowledged {}, sent {}",
            st.incr_acked_max, st.incr_sent
        ));
    }
    Ok(())
}

/// Tries of the final read-back, 500 ms apart: enough to outlast the faults.
const READ_BACK_ATTEMPTS: usize = 40;

fn expect_ok(reply: &str) -> Result<(), String> {
    match reply {
        "+OK" => Ok(()),
        other => Err(format!("SET replied {other}")),
    }
}

fn ack(ks: &mut KeyState, seq: u64) {
    ks.acked_seq = Some(seq);
    ks.acked_all.push(seq);
}

/// A run: the server, `CLIENTS` clients and a seeded fault schedule. Returns
/// the trace (client events, then the faults), or the first failure.
fn run(seed: u64) -> Result<Vec<String>, String> {
    let mut sim = turmoil::Builder::new()
        .rng_seed(seed)
        .simulation_duration(Duration::from_secs(120))
        .min_message_latency(Duration::from_millis(1))
        .max_message_latency(Duration::from_millis(20))
        .build();
    add_server(&mut sim, open_config());
    let trace: Trace = Rc::new(RefCell::new(Vec::new()));
    let failures: Rc<RefCell<Vec<String>>> = Rc::new(RefCell::new(Vec::new()));
    for who in 0..CLIENTS {
        let trace = trace.clone();
        let failures = failures.clone();
        sim.client(format!("c{who}"), async move {
            if let Err(e) = client(who, seed, trace).await {
                failures.borrow_mut().push(e);
            }
            Ok(())
        });
    }
    // Faults: every ~150 ms of simulated time, maybe start one on a random
    // client's link; each lasts 100-600 ms. No fault starts after 5 s, so
    // the end of the run (the read-backs) is healthy.
    let mut rng = Rng(seed);
    let mut faults: Vec<String> = Vec::new();
    let mut active: Option<(String, bool, Duration)> = None;
    let mut next_fault = Duration::from_millis(150);
    loop {
        let done = sim.step().map_err(|e| e.to_string())?;
        if done {
            break;
        }
        let now = sim.elapsed();
        if let Some((who, is_hold, until)) = &active {
            if now >= *until {
                if *is_hold {
                    sim.release("server", who.as_str());
                } else {
                    sim.repair("server", who.as_str());
                }
                faults.push(format!("{:>6} end fault {who}", now.as_millis()));
                active = None;
            }
        }
        if active.is_none() && now >= next_fault && now < Duration::from_secs(5) {
            next_fault = now + Duration::from_millis(150);
            if rng.below(3) > 0 {
                let who = format!("c{}", rng.below(CLIENTS as u64));
                let is_hold = rng.below(2) == 0;
                let len = Duration::from_millis(100 + rng.below(500));
                if is_hold {
                    sim.hold("server", who.as_str());
                } else {
                    sim.partition("server", who.as_str());
                }
                let what = if is_hold { "hold" } else { "partition" };
                faults.push(format!("{:>6} {what} {who} for {len:?}", now.as_millis()));
                active = Some((who, is_hold, now + len));
            }
        }
    }
    if let Some(e) = failures.borrow().first() {
        return Err(format!("seed {seed}: {e}"));
    }
    let mut all = trace.borrow().clone();
    all.extend(faults);
    Ok(all)
}

fn digest(lines: &[String]) -> u64 {
    // FNV-1a over the trace: stable across runs and platforms.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in lines.iter().flat_map(|l| l.bytes().chain([b'\n'])) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[test]
fn acknowledged_writes_survive_holds_partitions_and_drops() {
    for seed in 1..=8 {
        let trace = run(seed).unwrap_or_else(|e| panic!("{e}"));
        let timeouts = trace.iter().filter(|l| l.contains("no reply")).count();
        let faults = trace
            .iter()
            .filter(|l| l.contains("hold") || l.contains("partition"))
            .count();
        let finals = trace.iter().filter(|l| l.contains("final")).count();
        eprintln!(
            "seed {seed}: {} events, {faults} faults, {timeouts} timed-out requests, digest {:016x}",
            trace.len(),
            digest(&trace)
        );
        assert!(faults > 0, "seed {seed} injected no fault");
        assert!(finals >= CLIENTS, "seed {seed}: not every client read back");
    }
}

#[test]
fn same_seed_same_trace() {
    let a = run(11).unwrap_or_else(|e| panic!("{e}"));
    let b = run(11).unwrap_or_else(|e| panic!("{e}"));
    if a != b {
        let i = a
            .iter()
            .zip(&b)
            .position(|(x, y)| x != y)
            .unwrap_or(a.len().min(b.len()));
        panic!(
            "seed 11 diverged at event {i}: {:?} vs {:?}",
            a.get(i),
            b.get(i)
        );
    }
    let c = run(12).unwrap_or_else(|e| panic!("{e}"));
    assert_ne!(
        digest(&a),
        digest(&c),
        "a different seed should change the run"
    );
}

// ---- access control under turmoil, where peers are not loopback ----

/// Reads everything until the server closes the connection.
async fn read_to_close(stream: &mut turmoil::net::TcpStream) -> String {
    let mut all = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut all)).await;
    String::from_utf8_lossy(&all).into_owned()
}

/// turmoil's network latencies come from its seed: a handful of seeds covers
/// the orders in which the denial, the client's command and the closes meet.
#[test]
fn protected_mode_denies_remote_clients_and_serves_loopback() {
    for seed in 1..=16 {
        protected_mode_run(seed);
    }
}

fn protected_mode_run(seed: u64) {
    let mut sim = turmoil::Builder::new().rng_seed(seed).build();
    let local_reply: Rc<RefCell<Option<Vec<Reply>>>> = Rc::default();
    let seen = local_reply.clone();
    // The server host also runs a loopback client of its own.
    sim.host("server", move || {
        let seen = seen.clone();
        async move {
            let listener =
                turmoil::net::TcpListener::bind((IpAddr::V4(Ipv4Addr::UNSPECIFIED), PORT)).await?;
            let config = Config {
                seed: 1,
                ..Config::default()
            };
            tokio::task::spawn_local(async move {
                tokio::time::sleep(Duration::from_millis(50)).await;
                let stream = turmoil::net::TcpStream::connect(("127.0.0.1", PORT))
                    .await
                    .expect("loopback connect");
                let mut c = Conn {
                    stream,
                    buf: Vec::new(),
                };
                let replies = c
                    .call(&[encode(&["SET", "k", "v"]), encode(&["GET", "k"])])
                    .await;
                *seen.borrow_mut() = replies;
            });
            let host = Host::new(config, VirtualClock::new(EPOCH_UNIX_US));
            serve(host, vec![SimListener(listener)]).await;
            Ok(())
        }
    });
    sim.client("remote", async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let mut stream = turmoil::net::TcpStream::connect(("server", PORT)).await?;
        // Whatever the client sends, it gets the denial and a closed socket.
        stream.write_all(&encode(&["PING"])).await?;
        let got = read_to_close(&mut stream).await;
        assert_eq!(
            got,
            seedkv_server::access::DENIED_PROTECTED_MODE,
            "turmoil seed {seed}"
        );
        Ok(())
    });
    sim.run().unwrap();
    assert_eq!(
        local_reply.borrow().clone(),
        Some(vec!["+OK".to_string(), "$v".to_string()]),
        "a loopback client is served in protected mode (turmoil seed {seed})"
    );
}

#[test]
fn remote_clients_with_requirepass_must_auth() {
    let mut sim = turmoil::Builder::new().rng_seed(1).build();
    let mut config = Config {
        seed: 1,
        ..Config::default()
    };
    apply_config_line(&mut config, "requirepass", "s3cret").unwrap();
    add_server(&mut sim, config);
    sim.client("remote", async {
        let mut c = Conn::open().await.expect("connect");
        let r = c.call(&[encode(&["GET", "k"])]).await.expect("reply");
        assert_eq!(r, ["-NOAUTH Authentication required."]);
        let r = c.call(&[encode(&["AUTH", "nope"])]).await.expect("reply");
        assert_eq!(
            r,
            ["-WRONGPASS invalid username-password pair or user is disabled."]
        );
        let r = c
            .call(&[encode(&["AUTH", "s3cret"]), encode(&["SET", "k", "1"])])
            .await
            .expect("reply");
        assert_eq!(r, ["+OK", "+OK"]);
        Ok(())
    });
    sim.run().unwrap();
}

#[test]
fn shutdown_command_closes_every_connection() {
    let mut sim = turmoil::Builder::new().rng_seed(1).build();
    let stopped: Rc<RefCell<Option<seedkv_server::ShutdownCause>>> = Rc::default();
    let seen = stopped.clone();
    sim.host("server", move || {
        let seen = seen.clone();
        async move {
            let listener =
                turmoil::net::TcpListener::bind((IpAddr::V4(Ipv4Addr::UNSPECIFIED), PORT)).await?;
            let host = Host::new(open_config(), VirtualClock::new(EPOCH_UNIX_US));
            let cause = serve(host.clone(), vec![SimListener(listener)]).await;
            assert_eq!(host.connections_count(), 0, "every connection closed");
            *seen.borrow_mut() = Some(cause);
            // Stay up (without serving) so turmoil does not restart the host.
            std::future::pending::<()>().await;
            Ok(())
        }
    });
    sim.client("idle", async {
        let mut idle = Conn::open().await.expect("connect");
        assert_eq!(idle.call(&[encode(&["PING"])]).await.unwrap(), ["+PONG"]);
        let got = read_to_close(&mut idle.stream).await;
        assert_eq!(got, "", "an idle client sees its connection close");
        Ok(())
    });
    sim.client("admin", async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut c = Conn::open().await.expect("connect");
        assert_eq!(
            c.call(&[encode(&["SHUTDOWN", "ABORT"])]).await.unwrap(),
            ["-ERR No shutdown in progress."]
        );
        assert_eq!(
            c.call(&[encode(&["SHUTDOWN", "SAVE"])]).await.unwrap(),
            ["-ERR Errors trying to SHUTDOWN. Check logs."]
        );
        c.send(&[encode(&["SHUTDOWN", "NOSAVE"])]).await;
        let got = read_to_close(&mut c.stream).await;
        assert_eq!(got, "", "SHUTDOWN replies nothing: the connection closes");
        Ok(())
    });
    sim.run().unwrap();
    assert_eq!(
        *stopped.borrow(),
        Some(seedkv_server::ShutdownCause::Command)
    );
}
