//! Faults the probe causes from the client side, drawn from the seed.
//!
//! A client draws at most one fault per batch from its own stream
//! (`probe-faults`, instance = client index), so the same seed injects the
//! same kinds of fault at the same points of each client's request stream
//! (when they land on the server is up to real time).
//!
//! - `DisconnectMidPipeline`: the batch is sent, some of its replies are
//!   read, then the socket is shut down with the rest in flight: those
//!   requests have an unknown outcome, as after a reset in the simulator.
//! - `SlowRead`: the client stops reading for a while after sending, so
//!   replies back up into the server's output buffer.
//! - `KillOther`: `CLIENT KILL ID <id>` of another probe client's current
//!   connection (its requests in flight get an unknown outcome).
//! - `Pause`: `CLIENT PAUSE <ms> WRITE`: writes stall, reads go on.
//! - `DebugSleep`: `DEBUG SLEEP <s>`: the whole server stalls. Redis refuses
//!   DEBUG unless `enable-debug-command` allows it, and a server may not
//!   have it: the first error reply switches the fault off for the run and
//!   is counted, never ignored.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::workload::{request, Request};

/// Chance per batch that a client injects a fault, per mille.
pub const FAULT_PER_MILLE_DEFAULT: u32 = 15;
/// Longest slow-read stall.
pub const SLOW_READ_MS_MAX: u64 = 50;
/// Longest CLIENT PAUSE.
pub const PAUSE_MS_MAX: u64 = 50;
/// Longest DEBUG SLEEP.
pub const DEBUG_SLEEP_MS_MAX: u64 = 30;
/// Faults stop once this share of the op budget or of the duration is used
/// (per mille), so that liveness can be judged on the rest.
pub const FAULTS_STOP_PER_MILLE: u64 = 800;

/// The kinds of fault, for counting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FaultKind {
    DisconnectMidPipeline,
    SlowRead,
    KillOther,
    Pause,
    DebugSleep,
}

impl FaultKind {
    pub const ALL: &'static [FaultKind] = &[
        FaultKind::DisconnectMidPipeline,
        FaultKind::SlowRead,
        FaultKind::KillOther,
        FaultKind::Pause,
        FaultKind::DebugSleep,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FaultKind::DisconnectMidPipeline => "disconnect mid-pipeline",
            FaultKind::SlowRead => "slow read",
            FaultKind::KillOther => "CLIENT KILL of another client",
            FaultKind::Pause => "CLIENT PAUSE WRITE",
            FaultKind::DebugSleep => "DEBUG SLEEP",
        }
    }

    pub fn index(self) -> usize {
        FaultKind::ALL
            .iter()
            .position(|&k| k == self)
            .unwrap_or_default()
    }
}

/// One drawn fault, with its parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Read `keep_per_mille` of the batch's replies, then drop the socket.
    DisconnectMidPipeline {
        keep_per_mille: u32,
    },
    SlowRead {
        stall_ms: u64,
    },
    /// Kill the connection of client `victim_pick % clients` (another one).
    KillOther {
        victim_pick: u32,
    },
    Pause {
        ms: u64,
    },
    DebugSleep {
        ms: u64,
    },
}

impl Fault {
    pub fn kind(&self) -> FaultKind {
        match self {
            Fault::DisconnectMidPipeline { .. } => FaultKind::DisconnectMidPipeline,
            Fault::SlowRead { .. } => FaultKind::SlowRead,
            Fault::KillOther { .. } => FaultKind::KillOther,
            Fault::Pause { .. } => FaultKind::Pause,
            Fault::DebugSleep { .. } => FaultKind::DebugSleep,
        }
    }

    /// Draws whether this batch gets a fault, and which. Every draw takes
    /// the same number of values from `rng` whatever the outcome, so the
    /// client's later draws do not depend on real-time decisions.
    pub fn draw(rng: &mut ChaCha8Rng, per_mille: u32) -> Option<Fault> {
        let roll = rng.gen_range(0..1000u32);
        let which = rng.gen_range(0..FaultKind::ALL.len());
        let a = rng.gen_range(0..1000u32);
        let b = rng.gen_range(1..=1000u64);
        if roll >= per_mille {
            return None;
        }
        Some(match FaultKind::ALL[which] {
            FaultKind::DisconnectMidPipeline => Fault::DisconnectMidPipeline { keep_per_mille: a },
            FaultKind::SlowRead => Fault::SlowRead {
                stall_ms: 1 + b * SLOW_READ_MS_MAX / 1000,
            },
            FaultKind::KillOther => Fault::KillOther { victim_pick: a },
            FaultKind::Pause => Fault::Pause {
                ms: 1 + b * PAUSE_MS_MAX / 1000,
            },
            FaultKind::DebugSleep => Fault::DebugSleep {
                ms: 1 + b * DEBUG_SLEEP_MS_MAX / 1000,
            },
        })
    }

    /// The command a server-side fault sends, recorded in the history as a
    /// request of the `fault` workload. `None` for faults of the socket.
    pub fn command(&self, victim_id: Option<u64>) -> Option<Request> {
        match self {
            Fault::DisconnectMidPipeline { .. } | Fault::SlowRead { .. } => None,
            Fault::KillOther { .. } => {
                let id = victim_id?.to_string();
                Some(request(&[b"CLIENT", b"KILL", b"ID", id.as_bytes()]))
            }
            Fault::Pause { ms } => {
                let ms = ms.to_string();
                Some(request(&[b"CLIENT", b"PAUSE", ms.as_bytes(), b"WRITE"]))
            }
            Fault::DebugSleep { ms } => {
                let seconds = format!("{}.{:03}", ms / 1000, ms % 1000);
                Some(request(&[b"DEBUG", b"SLEEP", seconds.as_bytes()]))
            }
        }
    }
}

/// Fault state shared by every client thread of one probe.
#[derive(Debug, Default)]
pub struct SharedFaults {
    /// Per client: the server's id of its current connection (0: none).
    pub conn_ids: Vec<AtomicU64>,
    /// Set by the first refused DEBUG SLEEP: the server does not allow it.
    pub debug_refused: AtomicBool,
    /// Faults injected, per [`FaultKind::index`].
    pub injected: [AtomicU64; 5],
    /// Faults drawn but not injected (no other client connected, DEBUG
    /// refused), per kind.
    pub skipped: [AtomicU64; 5],
}

impl SharedFaults {
    pub fn new(clients: u32) -> SharedFaults {
        SharedFaults {
            conn_ids: (0..clients).map(|_| AtomicU64::new(0)).collect(),
            ..SharedFaults::default()
        }
    }

    /// The server id of client `pick`'s connection, or of the next client
    /// after it that has one, never `me`'s own.
    pub fn victim(&self, me: u32, pick: u32) -> Option<u64> {
        let n = self.conn_ids.len();
        (0..n)
            .map(|i| (pick as usize + i) % n)
            .filter(|&i| i != me as usize)
            .map(|i| self.conn_ids[i].load(Ordering::Relaxed))
            .find(|&id| id != 0)
    }

    pub fn count(&self, kind: FaultKind, injected: bool) {
        let slot = if injected {
            &self.injected
        } else {
            &self.skipped
        };
        slot[kind.index()].fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream_rng;

    #[test]
    fn draws_are_a_function_of_the_seed_and_take_fixed_values() {
        let draw_all = |per_mille| {
            let mut rng = stream_rng(5, "probe-faults", 0);
            (0..2000)
                .map(|_| Fault::draw(&mut rng, per_mille))
                .collect::<Vec<_>>()
        };
        assert_eq!(draw_all(15), draw_all(15));
        let drawn = draw_all(1000);
        for kind in FaultKind::ALL {
            assert!(
                drawn.iter().flatten().any(|f| f.kind() == *kind),
                "{kind:?}"
            );
        }
        // Whether a fault fires does not shift later draws.
        let none = draw_all(0);
        assert!(none.iter().all(Option::is_none));
    }

    #[test]
    fn commands_and_victims() {
        let f = Fault::DebugSleep { ms: 25 };
        assert_eq!(
            f.command(None),
            Some(request(&[b"DEBUG", b"SLEEP", b"0.025"]))
        );
        let shared = SharedFaults::new(3);
        assert_eq!(shared.victim(0, 0), None);
        shared.conn_ids[0].store(7, Ordering::Relaxed);
        assert_eq!(shared.victim(0, 0), None, "never itself");
        shared.conn_ids[2].store(9, Ordering::Relaxed);
        assert_eq!(shared.victim(0, 0), Some(9));
        assert_eq!(shared.victim(1, 1), Some(9));
        assert_eq!(Fault::KillOther { victim_pick: 0 }.command(None), None);
    }
}
