//! `busy`: the busy window of long scripts (Redis's
//! `busy-reply-threshold`), drawn as the run's only workload because
//! every other client would get `-BUSY` replies its own checks do not
//! expect.
//!
//! Client 0 is the scripter: it lowers the threshold to a few
//! milliseconds, loads a library, then, one batch in [`SCRIPT_ONE_IN`]
//! (small commands otherwise), runs scripts and functions that loop up to
//! a couple of virtual milliseconds past the threshold, some after a
//! write (those cannot be killed and run to their end). The other clients send small
//! commands on `busy:` keys and FUNCTION STATS; a `-BUSY` reply makes
//! them send the kill its text names (SCRIPT KILL for a script, FUNCTION
//! KILL for a function), and now and then the other one, which Redis
//! refuses.
//!
//! Every loop is bounded, so a script nobody kills (its killers
//! disconnected by a fault) still ends and every request is answered. The
//! busy-window checker judges when the others' commands ran and every
//! `-BUSY`; the reference model declines the scripts (it forgets the keys
//! they declare, so a killed script that wrote nothing is no
//! misprediction).

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use seedkv_engine::resp::Frame;

use super::{request, Request, Workload, WorkloadKind};

/// Clients of a `busy` run: the scripter and two others.
pub const BUSY_CLIENTS: u32 = 3;

/// `busy-reply-threshold` the scripter sets, in this range. A slice (the
/// engine's `SLICE_INSTRUCTIONS`) is about 0.94 virtual ms, so even the
/// lowest threshold leaves a script one slice before others get `-BUSY`,
/// and every long loop crosses its run's threshold by
/// [`PAST_THRESHOLD_MS`].
pub const BUSY_THRESHOLD_MS_MIN: u64 = 1;
pub const BUSY_THRESHOLD_MS_MAX: u64 = 4;

/// Loop iterations in about a virtual millisecond: a loop turn is two VM
/// instructions (FORLOOP, ADD), a slice's 100k instructions are about
/// 0.94 virtual ms (the engine's `SLICE_INSTRUCTIONS` at the cost model's
/// rate).
const ITERATIONS_PER_MS: u64 = 50_000;

/// A short loop: it ends inside its first slice, before any threshold.
const SHORT_ITERATIONS: u64 = 1_000;

/// Virtual milliseconds a long loop runs past the threshold: long enough
/// that the others' think time (at most 1 ms) lands a command, and after
/// its `-BUSY` the kill, in the busy window; no longer, since a loop's real cost is its
/// VM instructions (400k-turn loops every 0.1-1 ms once made one seed in
/// 32 a sixth of the default sweep's CPU).
const PAST_THRESHOLD_MS: u64 = 3;

/// One scripter batch in this many runs a script; the others are the
/// small commands the other clients send. Scripts are then a small share
/// of the run's commands (each costs up to ~300k VM instructions), and
/// the others' commands still land before, inside and past the window.
const SCRIPT_ONE_IN: u32 = 6;

/// Loop iterations for a run whose threshold is `threshold_ms`: a quarter
/// end in their first slice, a quarter at half the threshold (before
/// it), half [`PAST_THRESHOLD_MS`] past it.
fn loop_iterations(rng: &mut ChaCha8Rng, threshold_ms: u64) -> u64 {
    match rng.gen_range(0..4) {
        0 => SHORT_ITERATIONS,
        1 => threshold_ms * ITERATIONS_PER_MS / 2,
        _ => (threshold_ms + PAST_THRESHOLD_MS) * ITERATIONS_PER_MS,
    }
}

/// Pause between batches, scripter and others: short beside the loops,
/// so that the others' commands land inside a run, before and past its
/// threshold.
pub const BUSY_THINK_NS_MIN: u64 = 100_000;
pub const BUSY_THINK_NS_MAX: u64 = 1_000_000;

/// A loop that writes nothing: SCRIPT KILL stops it.
pub const LOOP_SCRIPT: &str = "local n = 0 for i = 1, tonumber(ARGV[1]) do n = n + 1 end return n";

/// The same after an INCR: it cannot be killed.
pub const WRITE_LOOP_SCRIPT: &str = "redis.call('INCR', KEYS[1]) \
     local n = 0 for i = 1, tonumber(ARGV[1]) do n = n + 1 end return n";

/// The library's code: the two loops as functions.
pub const LIBRARY: &str = "#!lua name=busylib\n\
     redis.register_function('busy_loop', function(keys, args) \
     local n = 0 for i = 1, tonumber(args[1]) do n = n + 1 end return n end)\n\
     redis.register_function('busy_write_loop', function(keys, args) \
     redis.call('INCR', keys[1]) \
     local n = 0 for i = 1, tonumber(args[1]) do n = n + 1 end return n end)";

/// The key the writing loops increment.
const COUNTER_KEY: &[u8] = b"busy:ctr";

/// What a client does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Scripter,
    Other,
}

pub struct Busy {
    role: Role,
    threshold_ms: u64,
    /// The scripter has set the threshold and loaded the library.
    started: bool,
    /// The kill the last `-BUSY` named, to send next.
    kill_next: Option<&'static [u8]>,
}

impl Busy {
    pub fn new(client: u32, rng: &mut ChaCha8Rng) -> Busy {
        Busy {
            role: if client == 0 {
                Role::Scripter
            } else {
                Role::Other
            },
            threshold_ms: rng.gen_range(BUSY_THRESHOLD_MS_MIN..=BUSY_THRESHOLD_MS_MAX),
            started: false,
            kill_next: None,
        }
    }

    fn scripter_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        if !self.started {
            self.started = true;
            let threshold = self.threshold_ms.to_string();
            batch.push(request(&[
                b"CONFIG",
                b"SET",
                b"busy-reply-threshold",
                threshold.as_bytes(),
            ]));
            batch.push(request(&[
                b"FUNCTION",
                b"LOAD",
                b"REPLACE",
                LIBRARY.as_bytes(),
            ]));
            return;
        }
        if !rng.gen_ratio(1, SCRIPT_ONE_IN) {
            batch.push(small_request(rng));
            return;
        }
        let n = loop_iterations(rng, self.threshold_ms).to_string();
        let n = n.as_bytes();
        batch.push(match rng.gen_range(0..4) {
            0 => request(&[b"EVAL", LOOP_SCRIPT.as_bytes(), b"0", n]),
            1 => request(&[b"EVAL", WRITE_LOOP_SCRIPT.as_bytes(), b"1", COUNTER_KEY, n]),
            2 => request(&[b"FCALL", b"busy_loop", b"0", n]),
            _ => request(&[b"FCALL", b"busy_write_loop", b"1", COUNTER_KEY, n]),
        });
    }

    fn other_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        if let Some(kill) = self.kill_next.take() {
            batch.push(request(&[kill, b"KILL"]));
            return;
        }
        batch.push(match rng.gen_range(0..6) {
            0 => request(&[b"PING"]),
            1 => request(&[b"GET", COUNTER_KEY]),
            2 => request(&[b"INCR", b"busy:other"]),
            3 => request(&[b"FUNCTION", b"STATS"]),
            // The kill of the wrong kind, or with nothing running.
            4 => request(&[b"SCRIPT", b"KILL"]),
            _ => request(&[b"FUNCTION", b"KILL"]),
        });
    }
}

/// The scripter's batch between scripts: one of the others' reads and
/// writes (never a kill: its own script is over when it sends).
fn small_request(rng: &mut ChaCha8Rng) -> Request {
    match rng.gen_range(0..3) {
        0 => request(&[b"PING"]),
        1 => request(&[b"GET", COUNTER_KEY]),
        _ => request(&[b"INCR", b"busy:other"]),
    }
}

impl Workload for Busy {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Busy
    }

    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        match self.role {
            Role::Scripter => self.scripter_batch(rng, batch),
            Role::Other => self.other_batch(rng, batch),
        }
    }

    fn on_reply(&mut self, _request: &Request, reply: Option<&Frame>) {
        let Some(Frame::Error(e)) = reply else {
            return;
        };
        // The -BUSY text names the kill that stops what runs.
        if e.starts_with(b"BUSY ") {
            self.kill_next = Some(if contains(e, b"FUNCTION KILL") {
                b"FUNCTION"
            } else {
                b"SCRIPT"
            });
        }
    }

    fn think_ns(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        rng.gen_range(BUSY_THINK_NS_MIN..=BUSY_THINK_NS_MAX)
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use seedkv_engine::resp::Frame;

    use crate::knobs::Overrides;
    use crate::run::{run, RunConfig, RunOptions};
    use crate::workload::WorkloadKind;

    /// The loops are short in real instructions but must still open the
    /// window they exist for: in a fault-free busy run, scripts run past
    /// their threshold, others are answered `-BUSY`, a kill stops a loop
    /// (`+OK`), a written one is refused (`-UNKILLABLE`), and the
    /// busy-window checker passes.
    #[test]
    fn a_busy_run_opens_the_window_and_kills_loops() {
        let config = RunConfig {
            seed: 7,
            bug: None,
            overrides: Overrides {
                // A busy seed's three clients; one scripter batch in six
                // is a script: enough of them to see every kind of kill.
                clients: Some(super::super::busy::BUSY_CLIENTS),
                ops: Some(1200),
                no_faults: true,
                workloads: Some(vec![WorkloadKind::Busy]),
                ..Overrides::default()
            },
        };
        let options = RunOptions {
            keep_history: true,
            ..RunOptions::default()
        };
        let report = run(&config, options);
        assert!(!report.failed(), "{:?}", report.violations);
        let history = report.history.expect("kept");
        let replies_to = |name: &[u8], prefix: &[u8]| {
            history
                .ops
                .iter()
                .filter(|op| op.args[0].eq_ignore_ascii_case(name))
                .filter(|op| match &op.complete {
                    Some((_, Frame::Error(e))) => e.starts_with(prefix),
                    Some((_, Frame::Simple(s))) => s.starts_with(prefix),
                    _ => false,
                })
                .count()
        };
        let busy = history
            .ops
            .iter()
            .filter(|op| {
                matches!(&op.complete, Some((_, reply)) if crate::check::busy::is_busy_reply(reply))
            })
            .count();
        assert!(busy > 0, "no -BUSY reply");
        assert!(replies_to(b"SCRIPT", b"OK") > 0, "no script killed");
        assert!(replies_to(b"FUNCTION", b"OK") > 0, "no function killed");
        assert!(
            replies_to(b"SCRIPT", b"UNKILLABLE") > 0,
            "no script unkillable"
        );
        let killed = history
            .ops
            .iter()
            .filter(|op| matches!(&op.complete, Some((_, Frame::Error(e))) if e.starts_with(b"ERR Script killed")))
            .count();
        assert!(killed > 0, "no loop ended killed");
        assert!(
            history.script_runs.len() > 10,
            "{} script runs",
            history.script_runs.len()
        );
    }
}
