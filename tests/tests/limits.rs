//! Redis's limits on the real seedkv-server over TCP (issue 8): maxclients,
//! client-query-buffer-limit, proto-max-bulk-len, client-output-buffer-limit
//! for normal and pubsub clients (hard, and soft with time), the idle
//! `timeout`, and maxmemory with every eviction policy and the OOM error.
//!
//! Each test trips its limit, then checks that another client is still
//! served and that the stored data it did not evict reads back. Limits are
//! small and timeouts short; time is only ever awaited ("within N seconds",
//! with a generous N), never asserted.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use seedkv_engine::resp::reply::encode_request;
use seedkv_engine::resp::{Frame, FrameDecoder};
use seedkv_tests::ServerProcess;

/// How long anything may take before the test fails.
const EVENTUALLY: Duration = Duration::from_secs(30);

const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";

/// A blocking RESP connection that can also stop reading, or tell whether
/// the server closed it.
struct Conn {
    stream: TcpStream,
    decoder: FrameDecoder,
}

impl Conn {
    fn open(server: &ServerProcess) -> Conn {
        let stream = TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
        stream.set_read_timeout(Some(EVENTUALLY)).expect("timeout");
        stream.set_nodelay(true).expect("nodelay");
        Conn {
            stream,
            decoder: FrameDecoder::new(),
        }
    }

    fn send(&mut self, args: &[&str]) {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.stream
            .write_all(&encode_request(&args))
            .expect("send a request");
    }

    /// The next reply; `None` if the server closed the connection first.
    fn reply(&mut self) -> Option<Frame> {
        loop {
            if let Some(frame) = self.decoder.next_frame().expect("valid RESP") {
                return Some(frame);
            }
            let mut chunk = [0u8; 64 * 1024];
            match self.stream.read(&mut chunk) {
                Ok(0) => return None,
                Ok(n) => self.decoder.feed(&chunk[..n]),
                Err(e) if e.kind() == ErrorKind::ConnectionReset => return None,
                Err(e) => panic!("read failed: {e}"),
            }
        }
    }

    fn cmd(&mut self, args: &[&str]) -> Frame {
        self.send(args);
        self.reply()
            .unwrap_or_else(|| panic!("the server closed the connection on {args:?}"))
    }

    /// Reads (and drops) everything until the server closes the
    /// connection; panics if it is still open after [`EVENTUALLY`].
    fn expect_closed(&mut self) {
        let deadline = Instant::now() + EVENTUALLY;
        let mut chunk = vec![0u8; 256 * 1024];
        loop {
            assert!(Instant::now() < deadline, "the server never closed it");
            match self.stream.read(&mut chunk) {
                Ok(0) => return,
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::ConnectionReset => return,
                Err(e) => panic!("read failed: {e}"),
            }
        }
    }
}

fn ok() -> Frame {
    Frame::Simple(b"OK".to_vec())
}

fn bulk(s: &str) -> Frame {
    Frame::Bulk(s.as_bytes().to_vec())
}

fn set_config(c: &mut Conn, name: &str, value: &str) {
    assert_eq!(
        c.cmd(&["CONFIG", "SET", name, value]),
        ok(),
        "{name} {value}"
    );
}

fn info_field(c: &mut Conn, section: &str, field: &str) -> u64 {
    let Frame::Bulk(text) = c.cmd(&["INFO", section]) else {
        panic!("INFO is a bulk string");
    };
    let text = String::from_utf8(text).expect("INFO is text");
    let prefix = format!("{field}:");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no {field} in INFO {section}"))
        .trim()
        .parse()
        .expect("a number")
}

/// Waits until no client named `name` is connected.
fn wait_gone(c: &mut Conn, name: &str) {
    let deadline = Instant::now() + EVENTUALLY;
    loop {
        let Frame::Bulk(list) = c.cmd(&["CLIENT", "LIST"]) else {
            panic!("CLIENT LIST is a bulk string");
        };
        let needle = format!(" name={name} ");
        if !String::from_utf8_lossy(&list).contains(&needle) {
            return;
        }
        assert!(Instant::now() < deadline, "{name} still connected");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Stores `count` keys `{prefix}{i}` with values derived from their names.
fn fill(c: &mut Conn, prefix: &str, count: usize, value_len: usize, ttl_s: Option<u64>) {
    for i in 0..count {
        let key = format!("{prefix}{i}");
        let value = value_of(&key, value_len);
        match ttl_s {
            Some(ttl) => c.send(&["SET", &key, &value, "EX", &ttl.to_string()]),
            None => c.send(&["SET", &key, &value]),
        }
    }
    for _ in 0..count {
        assert_eq!(c.reply(), Some(ok()));
    }
}

fn value_of(key: &str, len: usize) -> String {
    let mut v = format!("{key}:");
    while v.len() < len {
        v.push('v');
    }
    v
}

/// How many of `{prefix}0..count` are gone; the others must read back
/// intact.
fn count_gone(c: &mut Conn, prefix: &str, count: usize, value_len: usize) -> usize {
    let mut gone = 0;
    for i in 0..count {
        let key = format!("{prefix}{i}");
        match c.cmd(&["GET", &key]) {
            Frame::Null => gone += 1,
            reply => assert_eq!(reply, bulk(&value_of(&key, value_len)), "{key}"),
        }
    }
    gone
}

#[test]
fn maxclients_refuses_the_extra_connection_and_serves_the_others() {
    let server = ServerProcess::seedkv(&[]);
    let mut a = Conn::open(&server);
    set_config(&mut a, "maxclients", "2");
    assert_eq!(a.cmd(&["SET", "k", "v"]), ok());
    let mut b = Conn::open(&server);
    assert_eq!(b.cmd(&["PING"]), Frame::Simple(b"PONG".to_vec()));
    let mut extra = Conn::open(&server);
    assert_eq!(
        extra.reply(),
        Some(Frame::Error(b"ERR max number of clients reached".to_vec()))
    );
    extra.expect_closed();
    assert_eq!(b.cmd(&["GET", "k"]), bulk("v"));
    assert_eq!(a.cmd(&["GET", "k"]), bulk("v"));
    assert_eq!(info_field(&mut a, "stats", "rejected_connections"), 1);
}

#[test]
fn client_query_buffer_limit_closes_the_client() {
    let server = ServerProcess::seedkv(&[]);
    let mut other = Conn::open(&server);
    set_config(&mut other, "client-query-buffer-limit", "1mb");
    assert_eq!(other.cmd(&["SET", "k", "v"]), ok());
    let mut big = Conn::open(&server);
    // A 3 MB bulk that never completes: the query buffer passes 1 MB.
    big.stream
        .write_all(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3000000\r\n")
        .expect("send");
    let chunk = vec![b'x'; 64 * 1024];
    for _ in 0..24 {
        if big.stream.write_all(&chunk).is_err() {
            break;
        }
    }
    big.expect_closed();
    assert_eq!(other.cmd(&["GET", "k"]), bulk("v"));
}

#[test]
fn proto_max_bulk_len_is_a_protocol_error() {
    let server = ServerProcess::seedkv(&[]);
    let mut other = Conn::open(&server);
    set_config(&mut other, "proto-max-bulk-len", "1mb");
    assert_eq!(other.cmd(&["SET", "k", "v"]), ok());
    let mut big = Conn::open(&server);
    big.stream
        .write_all(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n")
        .expect("send");
    assert_eq!(
        big.reply(),
        Some(Frame::Error(
            b"ERR Protocol error: invalid bulk length".to_vec()
        ))
    );
    big.expect_closed();
    assert_eq!(other.cmd(&["GET", "k"]), bulk("v"));
    // Exactly at the limit is accepted.
    let at_limit = "z".repeat(1024 * 1024);
    assert_eq!(other.cmd(&["SET", "k2", &at_limit]), ok());
    assert_eq!(other.cmd(&["STRLEN", "k2"]), Frame::Integer(1024 * 1024));
}

const BIG_LEN: usize = 256 * 1024;

/// A client named `slow` that pipelines `gets` GETs of a 256 KB value
/// and reads nothing.
fn flood_without_reading(server: &ServerProcess, gets: usize) -> Conn {
    let mut slow = Conn::open(server);
    assert_eq!(slow.cmd(&["CLIENT", "SETNAME", "slow"]), ok());
    for _ in 0..gets {
        // The server may close the connection (the limit this floods
        // toward) before every request is written: the rest then fail
        // with a broken pipe or a reset, which is the expected outcome.
        let request = encode_request(&[b"GET".as_slice(), b"big"]);
        match slow.stream.write_all(&request) {
            Ok(()) => {}
            Err(e) if matches!(e.kind(), ErrorKind::BrokenPipe | ErrorKind::ConnectionReset) => {
                break
            }
            Err(e) => panic!("send a request: {e}"),
        }
    }
    slow
}

#[test]
fn output_buffer_hard_limit_closes_a_normal_client_that_does_not_read() {
    let server = ServerProcess::seedkv(&[]);
    let mut fast = Conn::open(&server);
    set_config(&mut fast, "client-output-buffer-limit", "normal 1mb 0 0");
    let big = "b".repeat(BIG_LEN);
    assert_eq!(fast.cmd(&["SET", "big", &big]), ok());
    // 100 replies of 256 KB: far more than the socket buffers hold.
    let mut slow = flood_without_reading(&server, 100);
    wait_gone(&mut fast, "slow");
    slow.expect_closed();
    // A client that reads gets as much as it asks for.
    for _ in 0..20 {
        assert_eq!(fast.cmd(&["GET", "big"]), bulk(&big));
    }
}

#[test]
fn output_buffer_soft_limit_closes_a_normal_client_after_its_seconds() {
    let server = ServerProcess::seedkv(&[]);
    let mut fast = Conn::open(&server);
    set_config(&mut fast, "client-output-buffer-limit", "normal 0 512kb 1");
    let big = "b".repeat(BIG_LEN);
    assert_eq!(fast.cmd(&["SET", "big", &big]), ok());
    let mut slow = flood_without_reading(&server, 60);
    // Over the soft limit, the clock runs; the limit is checked when
    // output is added, so the slow client asks again after the second.
    std::thread::sleep(Duration::from_millis(1_500));
    slow.send(&["GET", "big"]);
    wait_gone(&mut fast, "slow");
    slow.expect_closed();
    assert_eq!(fast.cmd(&["GET", "big"]), bulk(&big));
}

/// A subscriber to `ch` named `name`.
fn subscriber(server: &ServerProcess, name: &str) -> Conn {
    let mut s = Conn::open(server);
    assert_eq!(s.cmd(&["CLIENT", "SETNAME", name]), ok());
    let reply = s.cmd(&["SUBSCRIBE", "ch"]);
    assert!(matches!(reply, Frame::Array(_)), "{reply:?}");
    s
}

fn expect_message(s: &mut Conn, payload: &str) {
    let Some(Frame::Array(parts)) = s.reply() else {
        panic!("a message");
    };
    assert_eq!(parts, vec![bulk("message"), bulk("ch"), bulk(payload)]);
}

#[test]
fn output_buffer_hard_limit_closes_a_slow_subscriber() {
    let server = ServerProcess::seedkv(&[]);
    let mut publisher = Conn::open(&server);
    set_config(
        &mut publisher,
        "client-output-buffer-limit",
        "pubsub 1mb 0 0",
    );
    assert_eq!(publisher.cmd(&["SET", "k", "v"]), ok());
    let mut slow = subscriber(&server, "slow");
    let mut fast = subscriber(&server, "fast");
    let payload = "m".repeat(BIG_LEN);
    let mut receivers = Vec::new();
    for _ in 0..60 {
        let Frame::Integer(n) = publisher.cmd(&["PUBLISH", "ch", &payload]) else {
            panic!("PUBLISH replies an integer");
        };
        receivers.push(n);
        expect_message(&mut fast, &payload);
    }
    // The slow subscriber was dropped along the way; the fast one got all.
    assert_eq!(receivers.first(), Some(&2));
    assert_eq!(receivers.last(), Some(&1));
    wait_gone(&mut publisher, "slow");
    slow.expect_closed();
    assert_eq!(publisher.cmd(&["GET", "k"]), bulk("v"));
}

#[test]
fn output_buffer_soft_limit_closes_a_slow_subscriber_after_its_seconds() {
    let server = ServerProcess::seedkv(&[]);
    let mut publisher = Conn::open(&server);
    set_config(
        &mut publisher,
        "client-output-buffer-limit",
        "pubsub 0 512kb 1",
    );
    let mut slow = subscriber(&server, "slow");
    let mut fast = subscriber(&server, "fast");
    let payload = "m".repeat(BIG_LEN);
    for _ in 0..40 {
        publisher.cmd(&["PUBLISH", "ch", &payload]);
        expect_message(&mut fast, &payload);
    }
    std::thread::sleep(Duration::from_millis(1_500));
    publisher.cmd(&["PUBLISH", "ch", &payload]);
    expect_message(&mut fast, &payload);
    wait_gone(&mut publisher, "slow");
    slow.expect_closed();
    assert_eq!(
        publisher.cmd(&["PUBLISH", "ch", "after"]),
        Frame::Integer(1)
    );
    expect_message(&mut fast, "after");
}

#[test]
fn timeout_closes_an_idle_client_but_not_an_active_one() {
    let server = ServerProcess::seedkv(&[]);
    let mut active = Conn::open(&server);
    set_config(&mut active, "timeout", "1");
    assert_eq!(active.cmd(&["SET", "k", "v"]), ok());
    let mut idle = Conn::open(&server);
    assert_eq!(idle.cmd(&["CLIENT", "SETNAME", "idle"]), ok());
    // The active client keeps talking more often than once a second.
    let deadline = Instant::now() + EVENTUALLY;
    loop {
        assert_eq!(active.cmd(&["GET", "k"]), bulk("v"));
        let Frame::Bulk(list) = active.cmd(&["CLIENT", "LIST"]) else {
            panic!("CLIENT LIST is a bulk string");
        };
        if !String::from_utf8_lossy(&list).contains(" name=idle ") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the idle client was never closed"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    idle.expect_closed();
    assert_eq!(active.cmd(&["GET", "k"]), bulk("v"));
}

/// Every policy on a server of its own: fill, lower maxmemory below what
/// is used, write more; the policy evicts (only keys with a TTL for the
/// volatile ones) or, for noeviction, refuses with OOM.
#[test]
fn maxmemory_evicts_per_policy_or_refuses_with_oom() {
    const KEYS: usize = 400;
    const VALUE_LEN: usize = 2048;
    for policy in [
        "noeviction",
        "allkeys-lru",
        "allkeys-lfu",
        "allkeys-random",
        "volatile-lru",
        "volatile-lfu",
        "volatile-random",
        "volatile-ttl",
    ] {
        let server = ServerProcess::seedkv(&[]);
        let mut c = Conn::open(&server);
        let mut other = Conn::open(&server);
        fill(&mut c, "p", KEYS, VALUE_LEN, None);
        fill(&mut c, "v", KEYS, VALUE_LEN, Some(3600));
        set_config(&mut c, "maxmemory-policy", policy);
        let used = info_field(&mut c, "memory", "used_memory");
        // A quarter of the dataset over the limit.
        let limit = used - (KEYS as u64 * VALUE_LEN as u64 / 2);
        set_config(&mut c, "maxmemory", &limit.to_string());
        let reply = c.cmd(&["SET", "new", "value"]);
        if policy == "noeviction" {
            assert_eq!(reply, Frame::Error(OOM.as_bytes().to_vec()));
            assert_eq!(other.cmd(&["GET", "p0"]), bulk(&value_of("p0", VALUE_LEN)));
            assert_eq!(other.cmd(&["DEL", "p1"]), Frame::Integer(1));
            assert_eq!(info_field(&mut other, "stats", "evicted_keys"), 0);
            set_config(&mut other, "maxmemory", "0");
            assert_eq!(count_gone(&mut other, "p", KEYS, VALUE_LEN), 1);
            assert_eq!(count_gone(&mut other, "v", KEYS, VALUE_LEN), 0);
            continue;
        }
        assert_eq!(reply, ok(), "{policy}");
        // Lift the limit first: every command evicts while over it.
        set_config(&mut other, "maxmemory", "0");
        let evicted = info_field(&mut other, "stats", "evicted_keys");
        assert!(evicted > 0, "{policy} evicted nothing");
        let gone_p = count_gone(&mut other, "p", KEYS, VALUE_LEN);
        let gone_v = count_gone(&mut other, "v", KEYS, VALUE_LEN);
        assert_eq!((gone_p + gone_v) as u64, evicted, "{policy}");
        if policy.starts_with("volatile") {
            assert_eq!(gone_p, 0, "{policy} evicted keys without a TTL");
        }
        assert!(gone_p + gone_v < 2 * KEYS, "{policy} evicted everything");
        assert_eq!(other.cmd(&["GET", "new"]), bulk("value"));
    }
}
