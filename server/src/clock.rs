//! The OS clocks. This crate is the only place in seedkv that reads them; the
//! engine receives their readings as [`Now`] with every input.

use std::time::{SystemTime, UNIX_EPOCH};

use seedkv_engine::Now;
use tokio::time::Instant;

/// Where the event loop gets `now`. The binary uses [`OsClock`]; a simulated
/// network (turmoil) can supply its own virtual clock.
pub trait Clock: 'static {
    /// Both clocks, now.
    fn now(&self) -> Now;
    /// The tokio instant at which the engine's monotonic clock reads `mono_ns`.
    fn instant_at(&self, mono_ns: u64) -> Instant;
}

/// Reads the monotonic clock (relative to the server's start) and the wall
/// clock. The monotonic clock is tokio's, so a simulated runtime (turmoil,
/// paused time) controls it too.
#[derive(Clone, Copy, Debug)]
pub struct OsClock {
    start: Instant,
}

impl OsClock {
    pub fn new() -> OsClock {
        OsClock {
            start: Instant::now(),
        }
    }

    /// The instant the engine's monotonic time counts from.
    pub fn start(&self) -> Instant {
        self.start
    }
}

impl Clock for OsClock {
    fn now(&self) -> Now {
        let mono_ns = self.start.elapsed().as_nanos() as u64;
        // A wall clock set before 1970 reads as the epoch rather than panicking.
        let unix_us = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_micros() as u64)
            .unwrap_or(0);
        Now { mono_ns, unix_us }
    }

    fn instant_at(&self, mono_ns: u64) -> Instant {
        // Deadlines centuries away (or "never") saturate instead of overflowing.
        let far = std::time::Duration::from_secs(100 * 365 * 86_400);
        let after = std::time::Duration::from_nanos(mono_ns).min(far);
        self.start + after
    }
}

impl Default for OsClock {
    fn default() -> Self {
        OsClock::new()
    }
}

/// A clock that reads only tokio's (possibly simulated) monotonic time: the
/// wall clock is a fixed epoch plus the elapsed time. Under turmoil or
/// tokio's paused time it makes every `Now` the host hands the engine a
/// function of the simulation, so a run replays bit for bit.
#[derive(Clone, Copy, Debug)]
pub struct VirtualClock {
    start: Instant,
    epoch_unix_us: u64,
}

impl VirtualClock {
    /// A clock whose wall time reads `epoch_unix_us` now.
    pub fn new(epoch_unix_us: u64) -> VirtualClock {
        VirtualClock {
            start: Instant::now(),
            epoch_unix_us,
        }
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Now {
        let elapsed = self.start.elapsed();
        let mono_ns = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        let unix_us = self
            .epoch_unix_us
            .saturating_add(u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX));
        Now { mono_ns, unix_us }
    }

    fn instant_at(&self, mono_ns: u64) -> Instant {
        OsClock { start: self.start }.instant_at(mono_ns)
    }
}
