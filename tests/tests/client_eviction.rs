//! `maxmemory-clients` over real sockets, seedkv-server and redis-server
//! 7.0.15 side by side: a client whose query buffer passes the limit is
//! evicted (INFO `evicted_clients`), a `CLIENT NO-EVICT on` one is not, and
//! CONFIG takes a percentage.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use seedkv_tests::{RespClient, ServerProcess};

fn info_field(c: &mut RespClient, field: &str) -> String {
    let seedkv_engine::resp::Frame::Bulk(info) = c.command(&[b"INFO", b"stats"]) else {
        panic!("INFO is a bulk");
    };
    let info = String::from_utf8_lossy(&info).into_owned();
    let line = info.lines().find(|l| l.starts_with(field));
    line.unwrap_or_else(|| panic!("{field} in {info}"))
        .to_string()
}

/// Sends most of a 3 MB SET and reports whether the server closed the
/// connection (a read sees EOF or a reset).
fn big_partial_request_is_evicted(port: u16) -> bool {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_millis(500)))
        .expect("timeout");
    let mut request = b"*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$3000000\r\n".to_vec();
    request.extend(std::iter::repeat_n(b'x', 1_500_000));
    if s.write_all(&request).is_err() {
        return true;
    }
    let mut buf = [0u8; 64];
    match s.read(&mut buf) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => {
            e.kind() != std::io::ErrorKind::WouldBlock && e.kind() != std::io::ErrorKind::TimedOut
        }
    }
}

fn run(server: &ServerProcess) -> Vec<String> {
    let mut admin = RespClient::connect(server.port);
    let mut seen = Vec::new();
    for v in ["10%", "101%", "1.5%", "1mb"] {
        seen.push(format!(
            "{:?}",
            admin.command(&[b"CONFIG", b"SET", b"maxmemory-clients", v.as_bytes()])
        ));
    }
    seen.push(format!(
        "{:?}",
        admin.command(&[b"CONFIG", b"GET", b"maxmemory-clients"])
    ));
    seen.push(format!(
        "{:?}",
        admin.command(&[b"CLIENT", b"NO-EVICT", b"on"])
    ));
    seen.push(format!(
        "evicted: {}",
        big_partial_request_is_evicted(server.port)
    ));
    seen.push(info_field(&mut admin, "evicted_clients"));
    // Off again: the same request is served in full.
    seen.push(format!(
        "{:?}",
        admin.command(&[b"CONFIG", b"SET", b"maxmemory-clients", b"0"])
    ));
    seen.push(format!(
        "evicted: {}",
        big_partial_request_is_evicted(server.port)
    ));
    seen.push(info_field(&mut admin, "evicted_clients"));
    seen
}

#[test]
fn the_limit_evicts_a_big_query_buffer_as_redis_does() {
    let Some(redis) = ServerProcess::redis() else {
        seedkv_tests::missing_tool("redis-server", "apt-get install redis-server");
        return;
    };
    let seedkv = ServerProcess::seedkv(&[]);
    let want = run(&redis);
    assert_eq!(run(&seedkv), want);
    assert!(want.contains(&"evicted: true".to_string()), "{want:?}");
    assert!(want.contains(&"evicted_clients:1".to_string()), "{want:?}");
}
