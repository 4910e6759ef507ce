//! In-process throughput of the engine's request path: pipelined SET, GET
//! and INCR from 50 clients served round-robin, driven through the public
//! drive/drain API exactly as a host would (input, events, transmits,
//! consume). No sockets, so the figure is the engine's own cost per command.
//!
//! Every reply is walked and counted; an error reply, a missing reply or a
//! wrong DBSIZE/read-back aborts the run, because a benchmark that does not
//! check its replies measures the speed of failure.
//!
//! Run: `cargo bench -p seedkv-engine --bench pipeline`
//! Env: `BENCH_COMMANDS` (commands per test and depth, default 1_000_000),
//! `BENCH_DEPTHS` (default "1 16"), `BENCH_PROPAGATE=1` (propagation on,
//! the stream drained after every input as an AOF host does). Under
//! callgrind use a small count.

use std::time::Instant;

use seedkv_engine::{ClientId, Config, ConnectInfo, Engine, Event, Now};

/// Concurrent clients, as in `redis-benchmark -c 50`.
const CLIENTS_COUNT: usize = 50;

/// Distinct keys per test, so that the keyspace stays small and warm.
const KEYSPACE_KEYS: usize = 10_000;

/// The value SET stores (redis-benchmark's default is 3 bytes).
const VALUE: &[u8] = b"xxx";

struct Bench {
    engine: Engine,
    clients: Vec<ClientId>,
    now_ns: u64,
    input: Vec<u8>,
    replies_count: u64,
    errors_count: u64,
    last_reply: Vec<u8>,
    /// The propagated stream, drained after every input (its bytes are
    /// only counted).
    propagated: Vec<u8>,
    propagated_bytes: u64,
}

impl Bench {
    fn new() -> Bench {
        let now = Now::from_ns(1, 1_700_000_000_000_000);
        let mut engine = Engine::new(Config::default(), now);
        let propagate = std::env::var("BENCH_PROPAGATE").is_ok_and(|v| v == "1");
        engine.propagation_mut().set_enabled(propagate);
        let clients = (0..CLIENTS_COUNT)
            .map(|_| engine.connect(now, ConnectInfo::default()))
            .collect();
        let mut bench = Bench {
            engine,
            clients,
            now_ns: 1,
            input: Vec::new(),
            replies_count: 0,
            errors_count: 0,
            last_reply: Vec::new(),
            propagated: Vec::new(),
            propagated_bytes: 0,
        };
        bench.drain();
        bench
    }

    fn now(&self) -> Now {
        Now::from_ns(self.now_ns, 1_700_000_000_000_000)
    }

    /// Sends `self.input` from client `c` and takes every reply it caused.
    fn send(&mut self, c: usize) {
        self.now_ns += 1_000;
        let now = self.now();
        self.engine.handle_timeout(now);
        self.engine.handle_input(now, self.clients[c], &self.input);
        self.input.clear();
        self.drain();
    }

    fn drain(&mut self) {
        self.engine
            .propagation_mut()
            .drain_into(&mut self.propagated);
        self.propagated_bytes += self.propagated.len() as u64;
        self.propagated.clear();
        while let Some(event) = self.engine.poll_event() {
            if let Event::Close { client, reason } = event {
                panic!("client {client:?} closed: {reason:?}");
            }
        }
        while let Some(client) = self.engine.poll_transmit() {
            let out = self.engine.pending_output(client);
            let (replies, errors, last) = walk_replies(out);
            self.replies_count += replies;
            self.errors_count += errors;
            self.last_reply.clear();
            self.last_reply.extend_from_slice(&out[last..]);
            let n = out.len();
            self.engine.consume_output(client, n);
        }
    }

    fn push_command(&mut self, args: &[&[u8]]) {
        push_multibulk(&mut self.input, args);
    }

    /// Runs `commands_count` commands made by `make` at pipeline `depth`,
    /// clients taking turns, and returns nanoseconds per command.
    fn run(
        &mut self,
        commands_count: usize,
        depth: usize,
        make: impl Fn(usize, &mut Vec<u8>),
    ) -> f64 {
        // The requests are encoded before the clock starts, so that only the
        // engine and the reply walk are timed.
        let mut batches = Vec::with_capacity(commands_count / depth + 1);
        let mut sent = 0;
        while sent < commands_count {
            let mut batch = Vec::new();
            for _ in 0..depth.min(commands_count - sent) {
                make(sent, &mut batch);
                sent += 1;
            }
            batches.push(batch);
        }
        let replies_before = self.replies_count;
        let start = Instant::now();
        for (i, batch) in batches.iter().enumerate() {
            self.now_ns += 1_000;
            let now = self.now();
            self.engine.handle_timeout(now);
            self.engine
                .handle_input(now, self.clients[i % CLIENTS_COUNT], batch);
            self.drain();
        }
        let elapsed = start.elapsed();
        assert_eq!(
            self.replies_count - replies_before,
            commands_count as u64,
            "every command gets exactly one reply"
        );
        assert_eq!(self.errors_count, 0, "error replies");
        elapsed.as_nanos() as f64 / commands_count as f64
    }

    /// Runs one command from client 0 and returns its reply.
    fn query(&mut self, args: &[&[u8]]) -> Vec<u8> {
        self.push_command(args);
        self.send(0);
        self.last_reply.clone()
    }
}

fn push_multibulk(out: &mut Vec<u8>, args: &[&[u8]]) {
    out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
}

/// Counts the top-level RESP2 replies in `out` and the errors among them;
/// also returns where the last reply starts.
fn walk_replies(out: &[u8]) -> (u64, u64, usize) {
    let line_end = |from: usize| from + out[from..].windows(2).position(|w| w == b"\r\n").unwrap();
    let (mut replies, mut errors, mut last, mut i) = (0, 0, 0, 0);
    while i < out.len() {
        last = i;
        let end = line_end(i);
        match out[i] {
            b'+' | b':' => i = end + 2,
            b'-' => {
                errors += 1;
                i = end + 2;
            }
            b'$' => {
                i = match &out[i + 1..end] {
                    b"-1" => end + 2,
                    digits => {
                        let len = digits.iter().fold(0, |n, d| n * 10 + usize::from(d - b'0'));
                        end + 2 + len + 2
                    }
                };
            }
            other => panic!("unexpected reply type {:?}", other as char),
        }
        replies += 1;
    }
    (replies, errors, last)
}

fn key(prefix: &str, i: usize) -> Vec<u8> {
    format!("{prefix}:{:012}", i % KEYSPACE_KEYS).into_bytes()
}

fn main() {
    // `cargo bench` passes `--bench`; filters are not supported.
    let commands_count: usize = std::env::var("BENCH_COMMANDS")
        .ok()
        .map(|s| s.parse().expect("BENCH_COMMANDS is a number"))
        .unwrap_or(1_000_000);
    let depths: Vec<usize> = std::env::var("BENCH_DEPTHS")
        .unwrap_or_else(|_| "1 16".into())
        .split_whitespace()
        .map(|s| s.parse().expect("BENCH_DEPTHS holds numbers"))
        .collect();
    let keys = commands_count.min(KEYSPACE_KEYS);
    for &depth in &depths {
        let mut b = Bench::new();
        let set = b.run(commands_count, depth, |i, out| {
            push_multibulk(out, &[b"SET", &key("key", i), VALUE])
        });
        let get = b.run(commands_count, depth, |i, out| {
            push_multibulk(out, &[b"GET", &key("key", i)])
        });
        let incr = b.run(commands_count, depth, |i, out| {
            push_multibulk(out, &[b"INCR", &key("counter", i)])
        });
        // The keyspace holds exactly what the tests wrote.
        let dbsize = b.query(&[b"DBSIZE"]);
        assert_eq!(dbsize, format!(":{}\r\n", 2 * keys).into_bytes(), "DBSIZE");
        let value = b.query(&[b"GET", &key("key", 7)]);
        assert_eq!(value, b"$3\r\nxxx\r\n", "read-back of a SET key");
        let counter = b.query(&[b"GET", &key("counter", 7)]);
        let incrs =
            commands_count / KEYSPACE_KEYS + usize::from(7 < commands_count % KEYSPACE_KEYS);
        let want = format!("${}\r\n{incrs}\r\n", incrs.to_string().len());
        assert_eq!(counter, want.into_bytes(), "read-back of an INCR counter");
        println!(
            "depth {depth:>2}: SET {set:6.1} ns/cmd  GET {get:6.1} ns/cmd  INCR {incr:6.1} ns/cmd  ({commands_count} each, {CLIENTS_COUNT} clients, 0 errors, DBSIZE {}, {} bytes propagated)",
            2 * keys,
            b.propagated_bytes
        );
    }
}
