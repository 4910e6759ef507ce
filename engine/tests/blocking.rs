//! The engine side of blocking commands, driven in virtual time: FIFO
//! serving, exact deadlines, disconnects and kills while blocked, pipelined
//! requests held behind a blocked one, CLIENT UNBLOCK, and a poll_timeout
//! that is the cron's alone while nobody is blocked.
//!
//! The tests block with `TBPOP`, a command of their own (registered with
//! `Engine::with_commands`) that pops a *string* key: so they exercise the
//! engine's parking and serving without depending on any collection type,
//! and any write (SET, MOVE, RENAME...) can serve them.

use std::collections::BTreeMap;

use seedkv_engine::blocking::TimeoutReply;
use seedkv_engine::cmd::{flags, CommandSpec, Ctx};
use seedkv_engine::resp::encode::encode_request;
use seedkv_engine::resp::{Frame, FrameDecoder};
use seedkv_engine::value::Value;
use seedkv_engine::{ClientId, Config, ConnectInfo, Engine, Event, Executed, Now};

/// TBPOP key [key ...] timeout-ms: deletes the first of the keys that holds
/// a string and replies `[key, value]`; with none, blocks (or replies `*-1`
/// where it may not block).
fn tbpop(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let last = args.len() - 1;
    let Some(timeout_ms) = std::str::from_utf8(&args[last])
        .ok()
        .and_then(|t| t.parse::<u64>().ok())
    else {
        return ctx.error("ERR timeout is not an integer or out of range");
    };
    for key in &args[1..last] {
        let value = match ctx.lookup(key) {
            Some(Value::Str(s)) => s.as_bytes().to_vec(),
            Some(_) => return ctx.error(seedkv_engine::value::WRONGTYPE),
            None => continue,
        };
        ctx.delete(key, false);
        let mut w = ctx.w();
        w.array_len(2);
        w.bulk(key);
        w.bulk(&value);
        return;
    }
    if ctx.may_block() {
        ctx.block_on_keys(args[1..last].to_vec(), timeout_ms, TimeoutReply::NullArray);
    } else {
        ctx.w().null_array();
    }
}

static TEST_COMMANDS: &[CommandSpec] = &[CommandSpec {
    name: "tbpop",
    arity: -3,
    flags: flags::WRITE | flags::BLOCKING,
    first_key: 1,
    last_key: -2,
    key_step: 1,
    acl_categories: &["write", "slow", "blocking"],
    handler: Some(tbpop),
    ..CommandSpec::DEFAULT
}];

const MS: u64 = 1_000_000;

/// One engine, its clients' received bytes, and a virtual clock.
struct World {
    engine: Engine,
    now: Now,
    received: BTreeMap<ClientId, Vec<u8>>,
    executed: Vec<Executed>,
    closed: Vec<ClientId>,
}

impl World {
    fn new() -> World {
        World::with_config(Config {
            record_executions: true,
            ..Config::default()
        })
    }

    fn with_config(config: Config) -> World {
        let now = Now::from_ns(1_000 * MS, 1_700_000_000_000_000);
        World {
            engine: Engine::with_commands(config, now, &[TEST_COMMANDS]),
            now,
            received: BTreeMap::new(),
            executed: Vec::new(),
            closed: Vec::new(),
        }
    }

    fn connect(&mut self) -> ClientId {
        let id = self.engine.connect(self.now, ConnectInfo::default());
        self.drain();
        id
    }

    /// The drive/drain contract: events, then every client's output.
    fn drain(&mut self) {
        while let Some(e) = self.engine.poll_event() {
            match e {
                Event::Executed(x) => self.executed.push(x),
                Event::Close { client, .. } => self.closed.push(client),
                Event::Free(_)
                | Event::Stall { .. }
                | Event::Log { .. }
                | Event::KeyRemoved(_)
                | Event::ScriptSlice { .. }
                | Event::ReplySlice { .. } => {}
                Event::ConnectPrimary { .. } | Event::SyncLoaded { .. } => {
                    unreachable!("no REPLICAOF here")
                }
                Event::Storage(_) | Event::Fork(_) | Event::Exit { .. } => {
                    unreachable!("storage is off")
                }
                Event::Shutdown(_) => unreachable!("SHUTDOWN is off"),
            }
        }
        while let Some(c) = self.engine.poll_transmit() {
            let bytes = self.engine.pending_output(c).to_vec();
            self.engine.consume_output(c, bytes.len());
            self.received
                .entry(c)
                .or_default()
                .extend_from_slice(&bytes);
        }
    }

    fn send_raw(&mut self, c: ClientId, bytes: &[u8]) {
        self.engine.handle_input(self.now, c, bytes);
        self.drain();
    }

    fn send(&mut self, c: ClientId, args: &[&str]) {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.send_raw(c, &encode_request(&args));
    }

    /// Bytes `c` received since the last call.
    fn take(&mut self, c: ClientId) -> Vec<u8> {
        self.received.remove(&c).unwrap_or_default()
    }

    fn take_frames(&mut self, c: ClientId) -> Vec<Frame> {
        let mut d = FrameDecoder::new();
        d.feed(&self.take(c));
        let mut frames = Vec::new();
        while let Some(f) = d.next_frame().expect("valid RESP") {
            frames.push(f);
        }
        frames
    }

    /// Sends one command expected to reply at once, and returns the reply.
    fn call(&mut self, c: ClientId, args: &[&str]) -> Frame {
        self.send(c, args);
        let mut frames = self.take_frames(c);
        assert_eq!(frames.len(), 1, "{args:?}: {frames:?}");
        frames.pop().expect("one reply")
    }

    fn set_time(&mut self, mono_ns: u64) {
        assert!(mono_ns >= self.now.mono_ns, "time goes forward");
        self.now = Now::from_ns(mono_ns, 1_700_000_000_000_000);
        self.engine.handle_timeout(self.now);
        self.drain();
    }

    fn info_field(&mut self, c: ClientId, field: &str) -> String {
        let Frame::Bulk(text) = self.call(c, &["INFO", "clients"]) else {
            panic!("INFO is a bulk string");
        };
        let text = String::from_utf8(text).expect("INFO is text");
        let prefix = format!("{field}:");
        text.lines()
            .find_map(|l| l.strip_prefix(&prefix).map(str::to_owned))
            .unwrap_or_else(|| panic!("no {field} in {text}"))
    }
}

fn pair(key: &str, value: &str) -> Frame {
    Frame::Array(vec![
        Frame::Bulk(key.as_bytes().to_vec()),
        Frame::Bulk(value.as_bytes().to_vec()),
    ])
}

#[test]
fn three_blocked_clients_are_woken_in_fifo_order() {
    let mut w = World::new();
    let producer = w.connect();
    let blocked: Vec<ClientId> = (0..3).map(|_| w.connect()).collect();
    for &c in &blocked {
        w.send(c, &["TBPOP", "k", "0"]);
        assert_eq!(w.take(c), b"", "blocks without a reply");
        assert!(w.engine.is_blocked(c));
    }
    assert_eq!(w.info_field(producer, "blocked_clients"), "3");
    for (i, &c) in blocked.iter().enumerate() {
        let value = format!("v{i}");
        w.send(producer, &["SET", "k", &value]);
        assert_eq!(w.take_frames(producer), [Frame::Simple(b"OK".to_vec())]);
        // The one value goes to the client that blocked first, only.
        assert_eq!(w.take_frames(c), [pair("k", &value)]);
        for &other in &blocked[i + 1..] {
            assert_eq!(w.take(other), b"", "client {other:?} still waits");
            assert!(w.engine.is_blocked(other));
        }
        assert_eq!(w.call(producer, &["EXISTS", "k"]), Frame::Integer(0));
    }
    assert_eq!(w.info_field(producer, "blocked_clients"), "0");
    // Each blocked request is recorded once, when served, right after the
    // SET that served it.
    let order: Vec<(ClientId, &str)> = w
        .executed
        .iter()
        .filter(|e| e.name == "set" || e.name == "tbpop")
        .map(|e| (e.client, e.name))
        .collect();
    assert_eq!(
        order,
        [
            (producer, "set"),
            (blocked[0], "tbpop"),
            (producer, "set"),
            (blocked[1], "tbpop"),
            (producer, "set"),
            (blocked[2], "tbpop"),
        ]
    );
    assert!(w
        .executed
        .iter()
        .filter(|e| e.name == "tbpop")
        .all(|e| e.request_seq == 0));
}

#[test]
fn a_timeout_fires_at_its_exact_deadline_in_virtual_time() {
    let mut w = World::new();
    let c = w.connect();
    let observer = w.connect();
    let cron_ns = w.engine.poll_timeout();
    let start_ns = w.now.mono_ns;
    w.send(c, &["TBPOP", "k", "37"]);
    let deadline_ns = start_ns + 37 * MS;
    assert!(deadline_ns < cron_ns, "the test needs the deadline first");
    assert_eq!(w.engine.poll_timeout(), deadline_ns);
    assert_eq!(w.info_field(observer, "clients_in_timeout_table"), "1");
    w.set_time(deadline_ns - 1);
    assert_eq!(w.take(c), b"", "not a nanosecond early");
    w.set_time(deadline_ns);
    assert_eq!(w.take(c), b"*-1\r\n");
    assert!(!w.engine.is_blocked(c));
    assert_eq!(w.engine.poll_timeout(), cron_ns);
    let e = w.executed.last().expect("recorded at the timeout");
    assert_eq!((e.client, e.name, e.request_seq), (c, "tbpop", 0));
    // RESP3 times out with a null, and a later deadline than the cron's
    // leaves the cron first.
    w.call(c, &["HELLO", "3"]);
    w.send(c, &["TBPOP", "k", "250"]);
    let deadline_ns = w.now.mono_ns + 250 * MS;
    assert!(w.engine.poll_timeout() < deadline_ns);
    w.set_time(deadline_ns);
    assert_eq!(w.take(c), b"_\r\n");
}

#[test]
fn a_disconnected_client_leaves_its_queues() {
    let mut w = World::new();
    let producer = w.connect();
    let first = w.connect();
    let second = w.connect();
    let cron_ns = w.engine.poll_timeout();
    w.send(first, &["TBPOP", "k", "other", "5000"]);
    w.send(second, &["TBPOP", "k", "0"]);
    w.engine.disconnect(w.now, first);
    assert_eq!(w.info_field(producer, "blocked_clients"), "1");
    assert_eq!(w.info_field(producer, "clients_in_timeout_table"), "0");
    w.call(producer, &["SET", "k", "v"]);
    assert_eq!(w.take_frames(second), [pair("k", "v")]);
    assert_eq!(w.info_field(producer, "blocked_clients"), "0");
    // Its deadline is gone with it.
    assert_eq!(w.engine.poll_timeout(), cron_ns);
}

#[test]
fn a_killed_client_is_not_served() {
    let mut w = World::new();
    let producer = w.connect();
    let victim = w.connect();
    let next = w.connect();
    w.send(victim, &["TBPOP", "k", "0"]);
    w.send(next, &["TBPOP", "k", "0"]);
    let id = victim.0.to_string();
    assert_eq!(
        w.call(producer, &["CLIENT", "KILL", "ID", &id]),
        Frame::Integer(1)
    );
    assert!(w.closed.contains(&victim));
    assert_eq!(w.info_field(producer, "blocked_clients"), "1");
    // The host has not disconnected it yet; the value still goes to the
    // next live waiter.
    w.send(producer, &["SET", "k", "v"]);
    assert_eq!(w.take(victim), b"");
    assert_eq!(w.take_frames(next), [pair("k", "v")]);
}

#[test]
fn pipelined_requests_wait_behind_a_blocked_one() {
    let mut w = World::new();
    let producer = w.connect();
    let c = w.connect();
    let mut pipeline = encode_request(&[b"TBPOP", b"k", b"0"]);
    pipeline.extend_from_slice(&encode_request(&[b"SET", b"after", b"1"]));
    pipeline.extend_from_slice(&encode_request(&[b"PING"]));
    w.send_raw(c, &pipeline);
    assert_eq!(w.take(c), b"");
    // Not executed: the SET behind the blocked TBPOP has not run.
    assert_eq!(w.call(producer, &["EXISTS", "after"]), Frame::Integer(0));
    let (Frame::Verbatim { data, .. } | Frame::Bulk(data)) = w.call(producer, &["CLIENT", "LIST"])
    else {
        panic!("CLIENT LIST is text");
    };
    let list = String::from_utf8(data).expect("text");
    let line = list
        .lines()
        .find(|l| l.starts_with(&format!("id={} ", c.0)))
        .expect("listed");
    assert!(line.contains(" flags=b "), "{line}");
    assert!(line.contains(" cmd=tbpop "), "{line}");
    assert!(line.contains(" argv-mem=7 "), "{line}");
    assert!(
        !line.contains(" qbuf=0 "),
        "the pipeline waits in the buffer: {line}"
    );
    // More input while blocked waits too.
    w.send(c, &["PING", "again"]);
    assert_eq!(w.take(c), b"");
    w.call(producer, &["SET", "k", "v"]);
    assert_eq!(
        w.take(c),
        b"*2\r\n$1\r\nk\r\n$1\r\nv\r\n+OK\r\n+PONG\r\n$5\r\nagain\r\n"
    );
    assert_eq!(w.call(producer, &["EXISTS", "after"]), Frame::Integer(1));
    let seqs: Vec<u64> = w
        .executed
        .iter()
        .filter(|e| e.client == c)
        .map(|e| e.request_seq)
        .collect();
    assert_eq!(seqs, [0, 1, 2, 3], "in request order");
}

#[test]
fn a_blocked_client_can_block_again_from_its_pipeline() {
    let mut w = World::new();
    let producer = w.connect();
    let c = w.connect();
    let mut pipeline = encode_request(&[b"TBPOP", b"a", b"0"]);
    pipeline.extend_from_slice(&encode_request(&[b"TBPOP", b"b", b"0"]));
    pipeline.extend_from_slice(&encode_request(&[b"PING"]));
    w.send_raw(c, &pipeline);
    w.send(producer, &["SET", "a", "1"]);
    assert_eq!(w.take_frames(c), [pair("a", "1")]);
    assert!(w.engine.is_blocked(c), "blocked again on b");
    w.send(producer, &["SET", "b", "2"]);
    assert_eq!(
        w.take_frames(c),
        [pair("b", "2"), Frame::Simple(b"PONG".to_vec())]
    );
}

#[test]
fn serving_follows_writes_that_create_the_key() {
    let mut w = World::new();
    let producer = w.connect();
    let c = w.connect();
    // MOVE into the waiter's database.
    w.call(c, &["SELECT", "1"]);
    w.send(c, &["TBPOP", "k", "0"]);
    w.call(producer, &["SET", "k", "moved"]);
    assert_eq!(w.call(producer, &["MOVE", "k", "1"]), Frame::Integer(1));
    assert_eq!(w.take_frames(c), [pair("k", "moved")]);
    // COPY into it.
    w.send(c, &["TBPOP", "k", "0"]);
    w.call(producer, &["SET", "src", "copied"]);
    w.call(producer, &["COPY", "src", "k", "DB", "1"]);
    assert_eq!(w.take_frames(c), [pair("k", "copied")]);
    // RENAME within it.
    w.send(c, &["TBPOP", "k", "0"]);
    w.send(c, &["PING"]);
    w.call(producer, &["SELECT", "1"]);
    w.call(producer, &["SET", "tmp", "renamed"]);
    w.call(producer, &["RENAME", "tmp", "k"]);
    assert_eq!(
        w.take_frames(c),
        [pair("k", "renamed"), Frame::Simple(b"PONG".to_vec())]
    );
    // SWAPDB brings database 0's keys under the waiter in 1.
    w.send(c, &["TBPOP", "k", "0"]);
    w.call(producer, &["SELECT", "0"]);
    w.call(producer, &["SET", "k", "swapped"]);
    assert_eq!(w.take(c), b"", "another database");
    w.call(producer, &["SWAPDB", "0", "1"]);
    assert_eq!(w.take_frames(c), [pair("k", "swapped")]);
}

#[test]
fn client_unblock_with_timeout_or_error() {
    let mut w = World::new();
    let admin = w.connect();
    let c = w.connect();
    let id = c.0.to_string();
    assert_eq!(
        w.call(admin, &["CLIENT", "UNBLOCK", &id]),
        Frame::Integer(0),
        "not blocked"
    );
    let mut pipeline = encode_request(&[b"TBPOP", b"k", b"0"]);
    pipeline.extend_from_slice(&encode_request(&[b"PING"]));
    w.send_raw(c, &pipeline);
    assert_eq!(
        w.call(admin, &["CLIENT", "UNBLOCK", &id, "TIMEOUT"]),
        Frame::Integer(1)
    );
    assert_eq!(w.take(c), b"*-1\r\n+PONG\r\n");
    w.send(c, &["TBPOP", "k", "100"]);
    assert_eq!(
        w.call(admin, &["CLIENT", "UNBLOCK", &id, "error"]),
        Frame::Integer(1)
    );
    assert_eq!(
        w.take(c),
        b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n".as_slice()
    );
    assert_eq!(w.info_field(admin, "clients_in_timeout_table"), "0");
    assert_eq!(
        w.call(admin, &["CLIENT", "UNBLOCK", &id, "maybe"]),
        Frame::Error(b"ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR".to_vec())
    );
    assert_eq!(
        w.call(admin, &["CLIENT", "UNBLOCK", "x"]),
        Frame::Error(b"ERR value is not an integer or out of range".to_vec())
    );
    let recorded = w.executed.iter().filter(|e| e.name == "tbpop").count();
    assert_eq!(recorded, 2, "each unblocked command recorded once");
}

#[test]
fn a_client_that_may_not_block_replies_at_once() {
    let mut w = World::new();
    let c = w.connect();
    w.engine.set_may_block(c, false);
    assert_eq!(w.take(c), b"");
    w.send(c, &["TBPOP", "k", "0"]);
    assert_eq!(w.take(c), b"*-1\r\n");
    assert!(!w.engine.is_blocked(c));
    w.engine.set_may_block(c, true);
    w.send(c, &["TBPOP", "k", "0"]);
    assert!(w.engine.is_blocked(c));
}

#[test]
fn nobody_blocked_means_the_cron_deadline_alone() {
    let mut w = World::new();
    let c = w.connect();
    let before = w.engine.poll_timeout();
    let hz = u64::from(w.engine.config().hz);
    assert_eq!(before, w.now.mono_ns + 1_000_000_000 / hz, "the first tick");
    w.call(c, &["SET", "k", "v"]);
    assert_eq!(w.engine.poll_timeout(), before);
    // Blocking moves it; unblocking gives it back.
    w.call(c, &["DEL", "k"]);
    w.send(c, &["TBPOP", "k", "5"]);
    assert_eq!(w.engine.poll_timeout(), w.now.mono_ns + 5 * MS);
    w.set_time(w.now.mono_ns + 5 * MS);
    assert_eq!(w.take(c), b"*-1\r\n");
    assert_eq!(w.engine.poll_timeout(), before);
    // A spurious handle_timeout changes nothing.
    w.set_time(w.now.mono_ns);
    assert_eq!(w.engine.poll_timeout(), before);
    assert_eq!(w.info_field(c, "blocked_clients"), "0");
}

#[test]
fn a_blocked_client_over_its_query_buffer_limit_is_closed_and_unparked() {
    let mut w = World::with_config(Config {
        record_executions: true,
        client_query_buffer_limit_bytes: 1024,
        ..Config::default()
    });
    let producer = w.connect();
    let c = w.connect();
    w.send(c, &["TBPOP", "k", "0"]);
    let big = "x".repeat(2048);
    w.send(c, &["SET", "other", &big]);
    assert!(w.closed.contains(&c));
    assert!(!w.engine.is_blocked(c));
    assert_eq!(w.info_field(producer, "blocked_clients"), "0");
    w.call(producer, &["SET", "k", "v"]);
    assert_eq!(w.take(c), b"");
    assert_eq!(w.call(producer, &["EXISTS", "k"]), Frame::Integer(1));
}
