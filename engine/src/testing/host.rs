//! A host for integration tests that need more than one reply stream: every
//! client's output is decoded into frames of its own, a "slow" client's
//! output is never taken (its socket is full), and close requests are
//! carried out at once and recorded. Limits, eviction and pub/sub tests all
//! drive the engine this way; one copy keeps their event handling alike.

use std::collections::{BTreeMap, BTreeSet};

use super::UNIX_ORIGIN_US;
use crate::event::Shutdown;
use crate::resp::encode::encode_request;
use crate::resp::{Frame, FrameDecoder};
use crate::{ClientId, CloseReason, Config, ConnectInfo, Engine, Event, Executed, Now};

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
    /// Execution records (with `Config::record_executions`), in order.
    pub executed: Vec<Executed>,
    /// Time the engine asked to stall for (DEBUG SLEEP) so far; this host
    /// does not wait.
    pub stalled_ns: u64,
    /// Every shutdown the engine asked for (this host keeps running).
    pub shutdowns: Vec<Shutdown>,
    /// When set, a close that asks for its output to be flushed first fails
    /// the test, QUIT excepted: this host never flushes a slow client, so a
    /// test that expects no protocol error or refusal says so here and a
    /// stray one cannot pass unnoticed.
    pub forbid_flush_first_closes: bool,
    /// The disk storage requests go to (with `Config::storage`).
    pub disk: super::MemDisk,
    /// Exit statuses the engine asked for.
    pub exits: Vec<i32>,
    /// Slices of long scripts run so far (see `Event::ScriptSlice`).
    pub script_slices: usize,
    /// Slices of snapshot reads run so far (see `Event::ReplySlice`), and
    /// the most work one of them did.
    pub reply_slices: usize,
    pub reply_slice_work_units_max: u64,
}

impl TestHost {
    pub fn new(config: Config) -> TestHost {
        TestHost::with_disk(config, super::MemDisk::default())
    }

    /// A host whose engine starts over `disk` (loading what it holds).
    pub fn with_disk(config: Config, disk: super::MemDisk) -> TestHost {
        let now = Now::from_ns(0, UNIX_ORIGIN_US);
        let mut host = TestHost {
            engine: Engine::new(config, now),
            now,
            decoders: BTreeMap::new(),
            slow: BTreeSet::new(),
            closed: Vec::new(),
            frees: 0,
            executed: Vec::new(),
            stalled_ns: 0,
            shutdowns: Vec::new(),
            forbid_flush_first_closes: false,
            disk,
            exits: Vec::new(),
            script_slices: 0,
            reply_slices: 0,
            reply_slice_work_units_max: 0,
        };
        host.drain();
        host
    }

    /// A new client on a loopback address (`enable-debug-command local`
    /// and protected mode treat it as local, as a real host's would be).
    pub fn connect(&mut self) -> ClientId {
        let info = ConnectInfo {
            addr: format!("127.0.0.1:{}", 50_000 + self.decoders.len()),
            ..ConnectInfo::default()
        };
        let id = self.engine.connect(self.now, info);
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
                Event::Executed(x) => self.executed.push(x),
                Event::Stall { duration_ns } => {
                    self.stalled_ns = self.stalled_ns.saturating_add(duration_ns)
                }
                Event::Shutdown(shutdown) => self.shutdowns.push(shutdown),
                Event::Log { .. } | Event::KeyRemoved(_) => {}
                Event::Storage(request) => self.disk.serve(&mut self.engine, self.now, request),
                Event::Fork(fork) => self.disk.fork(&mut self.engine, self.now, &fork),
                Event::Exit { status } => self.exits.push(status),
                Event::ScriptSlice { .. } => self.script_slices += 1,
                Event::ReplySlice { work_units, .. } => {
                    self.reply_slices += 1;
                    self.reply_slice_work_units_max =
                        self.reply_slice_work_units_max.max(work_units);
                }
                // This host has no network: a link to a primary never
                // comes up (the engine's own tests drive one by hand).
                Event::ConnectPrimary { .. } | Event::SyncLoaded { .. } => {}
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

    /// The end of an event-loop turn ([`Engine::before_sleep`]), drained.
    pub fn before_sleep(&mut self) {
        self.engine.before_sleep(self.now);
        self.drain();
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

    /// Sends commands as one pipelined input.
    pub fn pipeline(&mut self, id: ClientId, commands: &[&[&str]]) {
        let mut bytes = Vec::new();
        for args in commands {
            let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
            bytes.extend_from_slice(&encode_request(&args));
        }
        self.send_raw(id, &bytes);
    }

    /// Executed commands' names, in execution order, since the last call.
    pub fn take_executed(&mut self) -> Vec<&'static str> {
        self.executed.drain(..).map(|e| e.name).collect()
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
        self.set_time(self.now.mono_ns + ms * 1_000_000);
    }

    /// Moves both clocks to `mono_ns` (as a host does when the deadline
    /// from `poll_timeout` passes) and runs timers.
    pub fn set_time(&mut self, mono_ns: u64) {
        assert!(mono_ns >= self.now.mono_ns, "time goes forward");
        self.now.unix_us += (mono_ns - self.now.mono_ns) / 1000;
        self.now.mono_ns = mono_ns;
        self.engine.handle_timeout(self.now);
        self.drain();
    }

    /// Runs `n` slices of the suspended script at the current time (the
    /// engine's deadline is then due at once), drained.
    pub fn run_slices(&mut self, n: usize) {
        for _ in 0..n {
            self.engine.handle_timeout(self.now);
            self.drain();
        }
    }

    /// Runs the suspended script's slices at the current time until it
    /// ends, at most `max` of them; returns how many ran.
    pub fn finish_script(&mut self, max: usize) -> usize {
        let mut ran = 0;
        while self.engine.script_running() && ran < max {
            self.run_slices(1);
            ran += 1;
        }
        ran
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
