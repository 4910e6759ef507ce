//! A host for integration tests that need more than one reply stream: every
//! client's output is decoded into frames of its own, a "slow" client's
//! output is never taken (its socket is full), and close requests are
//! carried out at once and recorded. Limits, eviction and pub/sub tests all
//! drive the engine this way; one copy keeps their event handling alike.

use std::collections::{BTreeMap, BTreeSet};

use super::UNIX_ORIGIN_US;
use crate::resp::encode::encode_request;
use crate::resp::{Frame, FrameDecoder};
use crate::{ClientId, CloseReason, Config, ConnectInfo, Engine, Event, Now};

pub struct TestHost {
    pub engine: Engine,
    pub now: Now,
    decoders: BTreeMap<ClientId, FrameDecoder>,
    /// Clients whose output the host never takes.
    pub slow: BTreeSet<ClientId>,
    /// Every close the engine asked for, in order.
    pub closed: Vec<(ClientId, CloseReason)>,
    /// Values handed out for background freeing so far.
    pub frees: usize,
    /// When set, a close that asks for its output to be flushed first fails
    /// the test, QUIT excepted: this host never flushes a slow client, so a
    /// test that expects no protocol error or refusal says so here and a
    /// stray one cannot pass unnoticed.
    pub forbid_flush_first_closes: bool,
}

impl TestHost {
    pub fn new(config: Config) -> TestHost {
        let now = Now::from_ns(0, UNIX_ORIGIN_US);
        TestHost {
            engine: Engine::new(config, now),
            now,
            decoders: BTreeMap::new(),
            slow: BTreeSet::new(),
            closed: Vec::new(),
            frees: 0,
            forbid_flush_first_closes: false,
        }
    }

    pub fn connect(&mut self) -> ClientId {
        let id = self.engine.connect(self.now, ConnectInfo::default());
        self.decoders.insert(id, FrameDecoder::new());
        self.drain();
        id
    }

    /// Drains events (closing as asked) and takes every fast client's
    /// output. The output is taken before the closes are carried out, so a
    /// fast client's last reply (a protocol error) is still read.
    fn drain(&mut self) {
        let mut closing = Vec::new();
        while let Some(event) = self.engine.poll_event() {
            match event {
                Event::Close { client, reason } => closing.push((client, reason)),
                Event::Free(_) => self.frees += 1,
                Event::Executed(_) => {}
            }
        }
        while let Some(id) = self.engine.poll_transmit() {
            if self.slow.contains(&id) {
                continue;
            }
            let bytes = self.engine.pending_output(id).to_vec();
            self.engine.consume_output(id, bytes.len());
            if let Some(d) = self.decoders.get_mut(&id) {
                d.feed(&bytes);
            }
        }
        for (id, reason) in closing {
            if self.forbid_flush_first_closes {
                assert!(!reason.flush_first() || reason == CloseReason::Quit);
            }
            self.engine.disconnect(self.now, id);
            self.closed.push((id, reason));
        }
    }

    pub fn send_raw(&mut self, id: ClientId, bytes: &[u8]) {
        self.engine.handle_input(self.now, id, bytes);
        self.drain();
    }

    pub fn send(&mut self, id: ClientId, args: &[&str]) {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.send_raw(id, &encode_request(&args));
    }

    /// Every complete frame `id` received since the last call.
    pub fn frames(&mut self, id: ClientId) -> Vec<Frame> {
        let d = self.decoders.get_mut(&id).expect("known client");
        let mut out = Vec::new();
        while let Some(f) = d.next_frame().expect("valid RESP") {
            out.push(f);
        }
        out
    }

    /// Sends one command and returns what `id` received for it.
    pub fn call(&mut self, id: ClientId, args: &[&str]) -> Vec<Frame> {
        self.send(id, args);
        self.frames(id)
    }

    /// One command, one reply.
    pub fn cmd(&mut self, id: ClientId, args: &[&str]) -> Frame {
        let mut frames = self.call(id, args);
        assert_eq!(frames.len(), 1, "{args:?} gave {frames:?}");
        frames.remove(0)
    }

    /// Advances both clocks by `ms` and runs timers.
    pub fn advance_ms(&mut self, ms: u64) {
        self.now.mono_ns += ms * 1_000_000;
        self.now.unix_us += ms * 1000;
        self.engine.handle_timeout(self.now);
        self.drain();
    }

    /// The close the engine asked for `id`, if any.
    pub fn is_closed(&self, id: ClientId) -> Option<CloseReason> {
        self.closed.iter().find(|(c, _)| *c == id).map(|(_, r)| *r)
    }

    /// The text of `INFO section`.
    pub fn info_text(&mut self, id: ClientId, section: &str) -> String {
        let Frame::Bulk(text) = self.cmd(id, &["INFO", section]) else {
            panic!("INFO is a bulk string");
        };
        String::from_utf8(text).expect("INFO is text")
    }

    /// One numeric field of `INFO section`.
    pub fn info_field(&mut self, id: ClientId, section: &str, field: &str) -> u64 {
        let text = self.info_text(id, section);
        let prefix = format!("{field}:");
        text.lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no {field} in INFO {section}"))
            .parse()
            .expect("a number")
    }
}
