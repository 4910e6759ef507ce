//! The ceiling of `server/benches/compare.sh` on this machine: a RESP
//! responder that stores nothing and answers every request with a canned
//! reply of the right shape (SET → `+OK`, GET → a 3-byte bulk, INCR/LPUSH →
//! an integer, LRANGE a b → b−a+1 three-byte bulks, CONFIG GET name → the
//! name and an empty value, anything else `+OK`).
//!
//! It is not a server: it exists to measure what redis-benchmark itself can
//! drive through the loopback on these cores. One epoll loop on one thread,
//! level-triggered, a read of up to 64 KiB per wake-up and one write of all
//! the replies it produced: no allocation per request, no parsing beyond
//! what finding the command name needs. Whatever requests/s redis-benchmark
//! reaches against it is the most any server could show in compare.sh, so
//! `CEILING=1 server/benches/compare.sh` prints the largest ratio to
//! redis-server this machine allows.
//!
//! Usage: canned_replies --port N (other options of seedkv-server, such as
//! `--seed`, are accepted and ignored so the bench scripts can start either).

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;

const READ_BYTES: usize = 64 * 1024;
const EVENTS_MAX: usize = 256;
/// An LRANGE reply is bounded so that a stray `LRANGE k 0 -1` stays small.
const LRANGE_ELEMENTS_MAX: i64 = 1000;

/// Only the first arguments matter for choosing a reply.
const ARGS_KEPT: usize = 4;

struct Conn {
    stream: TcpStream,
    input: Vec<u8>,
    output: Vec<u8>,
    /// Whether EPOLLOUT is registered (changed only when output appears or drains).
    writing: bool,
}

fn main() -> io::Result<()> {
    let port = port_argument()?;
    let listener = TcpListener::bind(("127.0.0.1", port))?;
    listener.set_nonblocking(true)?;
    let epoll = Epoll::new()?;
    let listener_token = u64::MAX;
    epoll.add(listener.as_raw_fd(), listener_token, libc::EPOLLIN)?;
    let mut conns: BTreeMap<u64, Conn> = BTreeMap::new();
    let mut next_token = 0u64;
    let mut scratch = vec![0u8; READ_BYTES];
    let mut events = [libc::epoll_event { events: 0, u64: 0 }; EVENTS_MAX];
    loop {
        let ready = epoll.wait(&mut events)?;
        for event in &events[..ready] {
            let token = event.u64;
            if token == listener_token {
                accept_all(&listener, &epoll, &mut conns, &mut next_token)?;
                continue;
            }
            let open = match conns.get_mut(&token) {
                Some(conn) => serve(conn, &mut scratch, event.events),
                None => continue,
            };
            if !open {
                if let Some(conn) = conns.remove(&token) {
                    epoll.delete(conn.stream.as_raw_fd())?;
                }
            } else if let Some(conn) = conns.get_mut(&token) {
                let writing = !conn.output.is_empty();
                if writing != conn.writing {
                    conn.writing = writing;
                    let out = if writing { libc::EPOLLOUT } else { 0 };
                    epoll.modify(conn.stream.as_raw_fd(), token, libc::EPOLLIN | out)?;
                }
            }
        }
    }
}

fn port_argument() -> io::Result<u16> {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == "--port");
    let port = at
        .and_then(|i| args.get(i + 1))
        .and_then(|p| p.parse().ok());
    port.ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "usage: canned_replies --port N",
        )
    })
}

fn accept_all(
    listener: &TcpListener,
    epoll: &Epoll,
    conns: &mut BTreeMap<u64, Conn>,
    next_token: &mut u64,
) -> io::Result<()> {
    loop {
        let stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) => return Err(e),
        };
        stream.set_nonblocking(true)?;
        stream.set_nodelay(true)?;
        let token = *next_token;
        *next_token += 1;
        epoll.add(stream.as_raw_fd(), token, libc::EPOLLIN)?;
        let conn = Conn {
            stream,
            input: Vec::new(),
            output: Vec::new(),
            writing: false,
        };
        conns.insert(token, conn);
    }
}

/// Reads what is there, answers every complete request, writes what it can.
/// Returns false when the connection is over.
fn serve(conn: &mut Conn, scratch: &mut [u8], events: u32) -> bool {
    if events & (libc::EPOLLIN as u32 | libc::EPOLLHUP as u32 | libc::EPOLLERR as u32) != 0 {
        match conn.stream.read(scratch) {
            Ok(0) => return false,
            Ok(n) => conn.input.extend_from_slice(&scratch[..n]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(_) => return false,
        }
        let consumed = answer_all(&conn.input, &mut conn.output);
        conn.input.drain(..consumed);
    }
    while !conn.output.is_empty() {
        match conn.stream.write(&conn.output) {
            Ok(n) => {
                conn.output.drain(..n);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(_) => return false,
        }
    }
    true
}

/// Answers each complete request in `input`; returns the bytes consumed.
fn answer_all(input: &[u8], output: &mut Vec<u8>) -> usize {
    let mut at = 0;
    while let Some((args, next)) = parse_request(&input[at..]) {
        answer(&args, output);
        at += next;
    }
    at
}

/// One request's first arguments (missing ones empty) and the bytes it
/// spans, or None while incomplete. Inline requests are split on spaces.
fn parse_request(input: &[u8]) -> Option<([&[u8]; ARGS_KEPT], usize)> {
    let mut args: [&[u8]; ARGS_KEPT] = [&[]; ARGS_KEPT];
    let line_end = find_crlf(input, 0)?;
    if input.first() != Some(&b'*') {
        let words = input[..line_end]
            .split(|b| *b == b' ')
            .filter(|a| !a.is_empty());
        for (slot, word) in args.iter_mut().zip(words) {
            *slot = word;
        }
        return Some((args, line_end + 2));
    }
    let count = parse_int(&input[1..line_end])?;
    let mut at = line_end + 2;
    for i in 0..usize::try_from(count).unwrap_or(0) {
        let header_end = find_crlf(input, at)?;
        let len = usize::try_from(parse_int(input.get(at + 1..header_end)?)?).ok()?;
        let start = header_end + 2;
        let end = start.checked_add(len)?;
        if input.len() < end + 2 {
            return None;
        }
        if let Some(slot) = args.get_mut(i) {
            *slot = &input[start..end];
        }
        at = end + 2;
    }
    Some((args, at))
}

fn find_crlf(input: &[u8], from: usize) -> Option<usize> {
    let rest = input.get(from..)?;
    let newline = rest.iter().position(|&b| b == b'\n')?;
    (newline > 0 && rest[newline - 1] == b'\r').then_some(from + newline - 1)
}

fn parse_int(digits: &[u8]) -> Option<i64> {
    std::str::from_utf8(digits).ok()?.parse().ok()
}

fn answer(args: &[&[u8]; ARGS_KEPT], output: &mut Vec<u8>) {
    let mut name = [0u8; 8];
    let kept = args[0].len().min(name.len());
    name[..kept].copy_from_slice(&args[0][..kept]);
    name.make_ascii_uppercase();
    match &name[..args[0].len().min(name.len())] {
        b"PING" => output.extend_from_slice(b"+PONG\r\n"),
        b"GET" => output.extend_from_slice(b"$3\r\nxxx\r\n"),
        b"INCR" | b"LPUSH" | b"RPUSH" | b"SADD" | b"HSET" | b"ZADD" | b"DBSIZE" => {
            output.extend_from_slice(b":1\r\n")
        }
        b"LRANGE" => lrange(args, output),
        b"CONFIG" => {
            let param = args[2];
            write!(output, "*2\r\n${}\r\n", param.len()).expect("Vec write");
            output.extend_from_slice(param);
            output.extend_from_slice(b"\r\n$0\r\n\r\n");
        }
        _ => output.extend_from_slice(b"+OK\r\n"),
    }
}

fn lrange(args: &[&[u8]; ARGS_KEPT], output: &mut Vec<u8>) {
    let bound = |i: usize| parse_int(args[i]).unwrap_or(0);
    let count = (bound(3) - bound(2) + 1).clamp(0, LRANGE_ELEMENTS_MAX);
    write!(output, "*{count}\r\n").expect("Vec write");
    for _ in 0..count {
        output.extend_from_slice(b"$3\r\nxxx\r\n");
    }
}

struct Epoll(i32);

impl Epoll {
    fn new() -> io::Result<Self> {
        // SAFETY: epoll_create1 takes no pointers.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Epoll(fd))
    }

    fn ctl(&self, op: i32, fd: i32, token: u64, interest: i32) -> io::Result<()> {
        let mut event = libc::epoll_event {
            events: interest as u32,
            u64: token,
        };
        // SAFETY: `event` outlives the call; the kernel copies it.
        if unsafe { libc::epoll_ctl(self.0, op, fd, &mut event) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    fn add(&self, fd: i32, token: u64, interest: i32) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd, token, interest)
    }

    fn modify(&self, fd: i32, token: u64, interest: i32) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_MOD, fd, token, interest)
    }

    fn delete(&self, fd: i32) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_DEL, fd, 0, 0)
    }

    fn wait(&self, events: &mut [libc::epoll_event]) -> io::Result<usize> {
        loop {
            let max = i32::try_from(events.len()).expect("EVENTS_MAX fits i32");
            // SAFETY: the kernel writes at most `max` events into `events`.
            let n = unsafe { libc::epoll_wait(self.0, events.as_mut_ptr(), max, -1) };
            if n >= 0 {
                return Ok(n as usize);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}
