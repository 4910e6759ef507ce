//! The event loop in-process over real loopback sockets: slow readers back
//! output up without blocking anyone, other clients' commands reach a
//! connection's task (CLIENT KILL), closing replies are flushed first.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use seedkv_engine::Config;
use seedkv_server::{serve, Host, OsClock};

/// Starts the event loop on its own thread and returns its address. The
/// thread lives until the test process exits.
fn start() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let local = tokio::task::LocalSet::new();
        local.block_on(&runtime, async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let config = Config {
                port: addr.port(),
                ..Config::default()
            };
            serve(Host::new(config, OsClock::new()), vec![listener]).await;
        });
    });
    addr
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s
}

fn request(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

fn read_exactly(s: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut buf = vec![0u8; n];
    s.read_exact(&mut buf).unwrap();
    buf
}

/// One reply line, through its CRLF.
fn read_line(s: &mut TcpStream) -> Vec<u8> {
    let mut line = Vec::new();
    while !line.ends_with(b"\r\n") {
        line.extend_from_slice(&read_exactly(s, 1));
    }
    line
}

#[test]
fn a_slow_reader_does_not_block_others() {
    let addr = start();
    let mut setup = connect(addr);
    let value = vec![b'x'; 100 * 1024];
    setup
        .write_all(&request(&[b"SET", b"big", &value]))
        .unwrap();
    assert_eq!(read_exactly(&mut setup, 5), b"+OK\r\n");

    // 300 GETs of 100 KB: ~30 MB of replies, far beyond the socket buffers.
    let gets = 300;
    let mut slow = connect(addr);
    let pipeline: Vec<u8> = (0..gets).flat_map(|_| request(&[b"GET", b"big"])).collect();
    slow.write_all(&pipeline).unwrap();

    // While those replies wait for the slow reader, others are served.
    let mut other = connect(addr);
    for _ in 0..100 {
        other.write_all(b"*1\r\n$4\r\nPING\r\n").unwrap();
        assert_eq!(read_exactly(&mut other, 7), b"+PONG\r\n");
    }

    // Then every reply arrives, complete and in order.
    let header = format!("${}\r\n", value.len()).into_bytes();
    for _ in 0..gets {
        let reply = read_exactly(&mut slow, header.len() + value.len() + 2);
        assert_eq!(&reply[..header.len()], &header[..]);
        assert!(reply[header.len()..header.len() + value.len()]
            .iter()
            .all(|&b| b == b'x'));
    }
}

#[test]
fn a_writer_that_reads_late_does_not_deadlock() {
    let addr = start();
    let mut client = connect(addr);
    // 20 MB of pipelined requests written before any reply is read: the
    // server must keep reading while its replies back up.
    let count = 200_000;
    let one = request(&[b"INCR", b"counter"]);
    let writer = {
        let mut w = client.try_clone().unwrap();
        std::thread::spawn(move || {
            let batch: Vec<u8> = (0..1000).flat_map(|_| one.clone()).collect();
            for _ in 0..count / 1000 {
                w.write_all(&batch).unwrap();
            }
        })
    };
    std::thread::sleep(Duration::from_millis(200));
    let mut replies = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    while replies.iter().filter(|&&b| b == b'\n').count() < count {
        let n = client.read(&mut buf).unwrap();
        assert!(n > 0, "connection closed early");
        replies.extend_from_slice(&buf[..n]);
    }
    writer.join().unwrap();
    let last = replies.split(|&b| b == b'\n').rev().nth(1).unwrap();
    assert_eq!(last, format!(":{count}\r").as_bytes());
}

#[test]
fn client_kill_closes_the_other_connection() {
    let addr = start();
    let mut victim = connect(addr);
    victim
        .write_all(b"*2\r\n$6\r\nCLIENT\r\n$2\r\nID\r\n")
        .unwrap();
    let id = read_line(&mut victim);
    let id = std::str::from_utf8(&id[1..id.len() - 2])
        .unwrap()
        .to_owned();

    let mut killer = connect(addr);
    killer
        .write_all(&request(&[b"CLIENT", b"KILL", b"ID", id.as_bytes()]))
        .unwrap();
    assert_eq!(read_exactly(&mut killer, 4), b":1\r\n");

    let mut rest = Vec::new();
    victim.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty(), "{rest:?}");
}

#[test]
fn protocol_errors_are_flushed_before_the_close() {
    let addr = start();
    let mut client = connect(addr);
    client.write_all(b"*1\r\n$4\r\nPING\r\n*x\r\n").unwrap();
    let mut all = Vec::new();
    client.read_to_end(&mut all).unwrap();
    let text = String::from_utf8_lossy(&all);
    assert!(text.starts_with("+PONG\r\n-ERR Protocol error"), "{text}");
}

#[test]
fn the_timer_runs_active_expiry() {
    let addr = start();
    let mut client = connect(addr);
    for i in 0..10 {
        let key = format!("k{i}");
        client
            .write_all(&request(&[b"SET", key.as_bytes(), b"v", b"PX", b"20"]))
            .unwrap();
        assert_eq!(read_exactly(&mut client, 5), b"+OK\r\n");
    }
    // No command touches the keys again: only the cron, driven by the
    // timer task at the engine's deadlines, can remove them. Bounded wait,
    // not a timing assertion.
    for _ in 0..500 {
        client.write_all(b"*1\r\n$6\r\nDBSIZE\r\n").unwrap();
        if read_line(&mut client) == b":0\r\n" {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("expired keys were never removed by the cron");
}
