//! client_stream: arbitrary bytes as one client's stream, through the
//! whole engine API (connect, input in any pieces, slow reading,
//! disconnect, timers), beside a well-behaved client whose replies must
//! stay exactly correct.
//!
//! The well-behaved client B sends `SET wb:N vK`, `GET wb:N`, `ECHO eK` as
//! one pipeline after every step. The engine runs a client's complete
//! requests in order before it takes another input, so whatever the
//! fuzzed client A did before (FLUSHALL, SWAPDB, RENAME, CONFIG SET...),
//! B's reply bytes are fully determined. The one thing A may do to B is
//! `CLIENT KILL` it; then B must be closed as killed, and is not checked
//! further. A may also `CLIENT PAUSE`: B sends nothing while it lasts.
//!
//! Besides raw bytes, A sends adversarial commands built from templates
//! (`adversarial.rs`: long and binary keys, integer and float edges,
//! pathological glob patterns through every matcher, pattern
//! subscriptions and publishes), and every execution's charged work stays
//! within the slow-input bound (`slow.rs`).

use seedkv_engine::resp::encode::encode_request;
use seedkv_engine::resp::FrameDecoder;
use seedkv_engine::{ClientId, CloseReason, Config, ConnectInfo, Engine, Event, Now};

use super::adversarial;
use super::slow::WorkBound;
use super::templates::expand_template;

/// Wall-clock origin of a run (2023-11-14T22:13:20Z).
const UNIX_ORIGIN_US: u64 = 1_700_000_000_000_000;

/// Clock advances a step can choose, in milliseconds.
const ADVANCE_MS: [u64; 8] = [0, 1, 10, 100, 999, 1000, 60_000, 3_600_000];

/// Well-behaved keys, so that B also overwrites its own earlier values.
const WB_KEYS_COUNT: u64 = 4;

/// Input bytes an adversarial command reads to fill its slots.
const TEMPLATE_PICKS_MAX: usize = 12;

/// Adversarial commands only A can send: engine_commands' driver does not
/// follow subscriptions, this one only needs A's output to be valid RESP.
const STREAM_TEMPLATES: &[&str] = &[
    "PSUBSCRIBE g",
    "PSUBSCRIBE g g",
    "PUNSUBSCRIBE g",
    "SUBSCRIBE K",
    "PUBLISH K v",
    "PUBSUB NUMPAT",
    "CLIENT LIST",
];

struct Run {
    now: Now,
    engine: Engine,
    /// The fuzzed client, and whether it currently reads only part of its
    /// output per step (a slow reader).
    a: ClientId,
    a_slow: bool,
    /// A's output must always be valid RESP (RESP2 or RESP3).
    a_decoder: FrameDecoder,
    /// A was asked to close; its later input is not sent.
    a_closing: bool,
    /// The well-behaved client, while it is alive.
    b: Option<ClientId>,
    b_round: u64,
    /// Every execution's charged work is checked against the input so far.
    bound: WorkBound,
}

/// Input layout: a sequence of one-byte headers, each followed by what it
/// needs. `h & 3`: 0 = the next `h >> 2` bytes go to A; 1 = advance the
/// clock by `ADVANCE_MS[(h >> 2) & 7]`; 2 = with `h >> 2` zero, toggle A's
/// slow reading, else A sends adversarial template `h >> 2` (counted from
/// 1 over `adversarial::TEMPLATES` then `STREAM_TEMPLATES`) with its slots
/// filled from the next `TEMPLATE_PICKS_MAX` bytes; 3 = A disconnects and
/// a new A connects.
pub fn run(data: &[u8]) {
    let mut now = Now::from_ns(0, UNIX_ORIGIN_US);
    let config = Config {
        record_executions: true,
        ..Config::default()
    };
    let mut engine = Engine::new(config, now);
    let a = engine.connect(now, ConnectInfo::default());
    let b = engine.connect(now, ConnectInfo::default());
    now.mono_ns += 1;
    let mut run = Run {
        now,
        engine,
        a,
        a_slow: false,
        a_decoder: FrameDecoder::new(),
        a_closing: false,
        b: Some(b),
        b_round: 0,
        bound: WorkBound::default(),
    };
    run.drain();
    let mut rest = data;
    while let Some((&header, tail)) = rest.split_first() {
        rest = tail;
        match header & 3 {
            0 => {
                let len = ((header >> 2) as usize).min(rest.len());
                let (chunk, tail) = rest.split_at(len);
                rest = tail;
                run.send_a(chunk);
            }
            1 => {
                let ms = ADVANCE_MS[((header >> 2) & 7) as usize];
                run.now.mono_ns += ms * 1_000_000;
                run.now.unix_us += ms * 1000;
                run.engine.handle_timeout(run.now);
            }
            2 if header >> 2 == 0 => run.a_slow = !run.a_slow,
            2 => {
                let len = TEMPLATE_PICKS_MAX.min(rest.len());
                let (picks, tail) = rest.split_at(len);
                rest = tail;
                let args = adversarial_command(usize::from(header >> 2) - 1, picks);
                let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
                run.send_a(&encode_request(&refs));
            }
            _ => run.reconnect_a(),
        }
        run.drain();
        run.check_b();
    }
    // Finally A reads everything; the stream it got must be whole frames
    // unless A was cut off mid-reply.
    run.a_slow = false;
    run.drain();
    run.check_b();
}

/// Adversarial template `index` (over `adversarial::TEMPLATES`, then
/// `STREAM_TEMPLATES`, modulo their count) filled from `picks`.
fn adversarial_command(index: usize, picks: &[u8]) -> Vec<Vec<u8>> {
    let shared = adversarial::TEMPLATES;
    let index = index % (shared.len() + STREAM_TEMPLATES.len());
    let template = match shared.get(index) {
        Some(template) => template,
        None => STREAM_TEMPLATES[index - shared.len()],
    };
    expand_template(template, picks)
}

impl Run {
    /// A sends `bytes`, unless it is closing.
    fn send_a(&mut self, bytes: &[u8]) {
        if !self.a_closing {
            self.bound.input(bytes.len());
            self.engine.handle_input(self.now, self.a, bytes);
        }
    }

    fn reconnect_a(&mut self) {
        self.engine.disconnect(self.now, self.a);
        self.a = self.engine.connect(self.now, ConnectInfo::default());
        self.a_decoder = FrameDecoder::new();
        self.a_closing = false;
    }

    /// Drains events and output per the engine's contract.
    fn drain(&mut self) {
        while let Some(event) = self.engine.poll_event() {
            match event {
                Event::Close { client, reason } if client == self.a => {
                    if reason.flush_first() {
                        self.take_output(client, usize::MAX);
                    }
                    self.engine.disconnect(self.now, client);
                    self.a_closing = true;
                }
                Event::Close { client, reason } if Some(client) == self.b => {
                    assert_eq!(
                        reason,
                        CloseReason::Killed,
                        "the well-behaved client was closed"
                    );
                    self.engine.disconnect(self.now, client);
                    self.b = None;
                }
                Event::Close { client, .. } => {
                    // An earlier A, already disconnected.
                    self.engine.disconnect(self.now, client);
                }
                Event::Executed(executed) => self.bound.check(&executed),
                Event::Free(_)
                | Event::Stall { .. }
                | Event::Log { .. }
                | Event::KeyRemoved(_)
                | Event::ScriptSlice { .. }
                | Event::ReplySlice { .. }
                // No network: a link to a primary never comes up.
                | Event::ConnectPrimary { .. }
                | Event::SyncLoaded { .. } => {}
                Event::Storage(_) | Event::Fork(_) | Event::Exit { .. } => {
                    unreachable!("storage is off")
                }
                Event::Shutdown(_) => unreachable!("the fuzzed engine has no SHUTDOWN"),
            }
        }
        while let Some(client) = self.engine.poll_transmit() {
            if client == self.a && self.a_slow {
                // A slow reader takes at most a few bytes per step, so
                // output backs up in the engine.
                self.take_output(client, 7);
            } else if Some(client) == self.b {
                // B's output is read by `check_b` right after its request.
                let pending = self.engine.pending_output(client);
                assert!(pending.is_empty(), "B got unsolicited output {pending:?}");
            } else {
                self.take_output(client, usize::MAX);
            }
        }
        let _ = self.engine.poll_timeout();
    }

    /// Takes up to `max` bytes of `client`'s output; A's must decode.
    fn take_output(&mut self, client: ClientId, max: usize) {
        let out = self.engine.pending_output(client);
        let n = out.len().min(max);
        if client == self.a {
            self.a_decoder.feed(&out[..n]);
            while let Some(_frame) = self
                .a_decoder
                .next_frame()
                .unwrap_or_else(|e| panic!("A got invalid RESP: {e}"))
            {}
        }
        self.engine.consume_output(client, n);
    }

    /// B's round trip: its replies must be exactly right.
    fn check_b(&mut self) {
        let Some(b) = self.b else { return };
        // A may CLIENT PAUSE the server: B's requests would wait for the
        // pause to end, so B sits this round out.
        if self.engine.is_paused(self.now) {
            return;
        }
        let round = self.b_round;
        self.b_round += 1;
        let key = format!("wb:{}", round % WB_KEYS_COUNT);
        let value = format!("v{round}");
        let echo = format!("e{round}");
        let mut request = encode_request(&[b"SET", key.as_bytes(), value.as_bytes()]);
        request.extend(encode_request(&[b"GET", key.as_bytes()]));
        request.extend(encode_request(&[b"ECHO", echo.as_bytes()]));
        self.bound.input(request.len());
        self.engine.handle_input(self.now, b, &request);
        let got = self.engine.pending_output(b).to_vec();
        self.engine.consume_output(b, got.len());
        let expected = format!(
            "+OK\r\n${}\r\n{value}\r\n${}\r\n{echo}\r\n",
            value.len(),
            echo.len()
        );
        assert_eq!(
            String::from_utf8_lossy(&got),
            expected,
            "the well-behaved client's round trip {round} went wrong"
        );
        self.drain();
    }
}
