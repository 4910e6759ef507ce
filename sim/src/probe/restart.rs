//! The crash-restart fault: the server under test is killed and started
//! again, on the same port and files, by a command given on the probe's
//! command line (`--restart-cmd`), while the clients keep working.
//!
//! The probe knows nothing of the server's process: the command does the
//! killing (SIGKILL, for a crash) and the starting, and returns; the probe
//! then waits until the server answers PING with PONG (a loading server
//! answers -LOADING). Requests in flight at the crash lose their
//! connection and have an unknown outcome, as after any disconnect; every
//! acknowledged request must still be visible afterwards, so the history
//! checkers judge durability: a server whose `appendfsync always` loses an
//! acknowledged write fails them, one under `everysec` may.
//!
//! Restarts happen only while faults are on, at intervals drawn from the
//! seed (`probe-restarts` stream), up to [`RESTARTS_MAX`].

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rand::Rng;
use seedkv_engine::resp::Frame;

use super::client::Shared;
use super::conn::ProbeConn;
use crate::rng::stream_rng;

/// Restarts in one probe at most.
pub const RESTARTS_MAX: u64 = 1_000;
/// How long the command and the server's start may take together.
pub const RESTART_READY_MS: u64 = 30_000;
/// Pause between readiness checks.
const READY_POLL_MS: u64 = 5;

/// A crash-restart fault's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RestartFault {
    /// Run with `sh -c`: kills the server and starts it again.
    pub command: String,
    /// Mean time between restarts (drawn uniformly in `1..=2 * every_ms`).
    pub every_ms: u64,
}

/// What the restarts did.
#[derive(Debug, Default)]
pub struct RestartRecord {
    pub restarts: u64,
    /// Why a restart failed (the command failed, or the server never came
    /// back); the probe reports it as an error.
    pub failure: Option<String>,
}

/// Restarts the server at drawn moments until faults stop, the clients are
/// done (`clients_done`) or a restart fails.
pub fn run_restarts(
    shared: &Shared,
    fault: &RestartFault,
    clients_done: &AtomicBool,
) -> RestartRecord {
    let mut rng = stream_rng(shared.seed, "probe-restarts", 0);
    let mut record = RestartRecord::default();
    while record.restarts < RESTARTS_MAX {
        let wait = Duration::from_millis(rng.gen_range(1..=2 * fault.every_ms.max(1)));
        let at = Instant::now() + wait;
        // Bounded by `at`; checks every few ms whether to stop instead.
        while Instant::now() < at {
            if clients_done.load(Ordering::Relaxed) {
                return record;
            }
            std::thread::sleep(Duration::from_millis(READY_POLL_MS));
        }
        if clients_done.load(Ordering::Relaxed) || !shared.faults_active() {
            return record;
        }
        shared.restarting.store(true, Ordering::Relaxed);
        let outcome = restart(shared, &fault.command);
        shared.restarting.store(false, Ordering::Relaxed);
        match outcome {
            Ok(()) => record.restarts += 1,
            Err(why) => {
                record.failure = Some(why);
                return record;
            }
        }
    }
    record
}

/// Runs the command, then waits for PONG.
fn restart(shared: &Shared, command: &str) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_millis(RESTART_READY_MS);
    let mut child = Command::new("sh")
        .args(["-c", command])
        .stdin(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run the restart command: {e}"))?;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "the restart command ran past {RESTART_READY_MS} ms"
            ));
        }
        std::thread::sleep(Duration::from_millis(READY_POLL_MS));
    };
    if !status.success() {
        return Err(format!("the restart command failed: {status}"));
    }
    while Instant::now() < deadline {
        if let Ok(mut conn) = ProbeConn::connect(shared.addr) {
            let ping_deadline = Instant::now() + Duration::from_millis(1_000);
            if let Ok(Frame::Simple(s)) = conn.call(&[b"PING"], ping_deadline) {
                if s == b"PONG" {
                    return Ok(());
                }
            }
        }
        std::thread::sleep(Duration::from_millis(READY_POLL_MS));
    }
    Err(format!(
        "the server did not answer PING within {RESTART_READY_MS} ms of a restart"
    ))
}
