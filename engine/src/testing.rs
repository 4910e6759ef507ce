//! A test driver for unit tests of command families: one engine, clients
//! that send commands and read decoded replies, and a settable clock.
//! [`TestHost`] is the multi-client variant for integration tests that need
//! each client's replies apart, slow readers and closes.

mod host;
mod mem_disk;

pub use host::TestHost;
pub use mem_disk::MemDisk;

use crate::client::ClientId;
use crate::resp::encode::encode_request;
use crate::resp::{Frame, FrameDecoder};
use crate::{Config, ConnectInfo, Engine, Event, Now};

/// The most slices [`TestEngine`] runs a script for (about 10^9 VM
/// instructions): a test script that runs longer is a bug in the test.
pub const SCRIPT_SLICES_MAX: u64 = 10_000;

/// Wall clock origin for tests: 2023-11-14T22:13:20Z.
pub const UNIX_ORIGIN_US: u64 = 1_700_000_000_000_000;

pub struct TestEngine {
    pub engine: Engine,
    pub now: Now,
    pub events: Vec<Event>,
}

impl TestEngine {
    pub fn new() -> Self {
        Self::with_config(Config::default())
    }

    pub fn with_config(config: Config) -> Self {
        let now = Now::from_ns(0, UNIX_ORIGIN_US);
        TestEngine {
            engine: Engine::new(config, now),
            now,
            events: Vec::new(),
        }
    }

    pub fn connect(&mut self) -> ClientId {
        let id = self.engine.connect(self.now, ConnectInfo::default());
        self.drain();
        id
    }

    /// Advances both clocks by `ms` and runs timers.
    pub fn advance_ms(&mut self, ms: u64) {
        self.now.mono_ns += ms * 1_000_000;
        self.now.unix_us += ms * 1000;
        self.engine.handle_timeout(self.now);
        self.drain();
    }

    fn drain(&mut self) {
        while let Some(e) = self.engine.poll_event() {
            self.events.push(e);
        }
    }

    /// Work units of the last recorded execution of `name` (needs
    /// `Config::record_executions`).
    pub fn executed_work(&self, name: &str) -> u64 {
        self.events
            .iter()
            .rev()
            .find_map(|e| match e {
                Event::Executed(x) if x.name == name => Some(x.work_units),
                _ => None,
            })
            .expect("command recorded")
    }

    /// Values handed out for background freeing so far.
    pub fn frees(&self) -> usize {
        self.events
            .iter()
            .filter(|e| matches!(e, Event::Free(_)))
            .count()
    }

    /// Sends raw bytes and returns every byte of output produced. A long
    /// script runs to its end at the same `now` (its slices back to back,
    /// as a host resumes it), so it never reaches the busy threshold here;
    /// [`TestHost`] steps slices one by one.
    pub fn raw(&mut self, client: ClientId, bytes: &[u8]) -> Vec<u8> {
        self.engine.handle_input(self.now, client, bytes);
        self.drain();
        let mut slices = 0;
        while self.engine.script_running() {
            assert!(slices < SCRIPT_SLICES_MAX, "a test script runs forever");
            slices += 1;
            self.engine.handle_timeout(self.now);
            self.drain();
        }
        let mut out = Vec::new();
        while let Some(c) = self.engine.poll_transmit() {
            let bytes = self.engine.pending_output(c).to_vec();
            self.engine.consume_output(c, bytes.len());
            if c == client {
                out.extend_from_slice(&bytes);
            }
        }
        out
    }

    /// Sends one command and returns its single decoded reply.
    pub fn cmd(&mut self, client: ClientId, args: &[&str]) -> Frame {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.cmd_bytes(client, &args)
    }

    pub fn cmd_bytes(&mut self, client: ClientId, args: &[&[u8]]) -> Frame {
        let out = self.raw(client, &encode_request(args));
        let mut d = FrameDecoder::new();
        d.feed(&out);
        let f = d
            .next_frame()
            .expect("valid RESP")
            .expect("one complete reply");
        assert!(
            d.next_frame().expect("valid RESP").is_none(),
            "exactly one reply"
        );
        f
    }
}

impl Default for TestEngine {
    fn default() -> Self {
        Self::new()
    }
}

/// Shorthands for expected frames.
pub fn bulk(s: &str) -> Frame {
    Frame::Bulk(s.as_bytes().to_vec())
}
pub fn simple(s: &str) -> Frame {
    Frame::Simple(s.as_bytes().to_vec())
}
pub fn err(s: &str) -> Frame {
    Frame::Error(s.as_bytes().to_vec())
}
pub fn int(n: i64) -> Frame {
    Frame::Integer(n)
}
