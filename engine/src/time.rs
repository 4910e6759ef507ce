//! Time as an input. The engine never reads a clock: every input carries a
//! [`Now`] supplied by the host (the simulator's virtual clock or the real
//! server's OS clock).

/// The host's notion of the current time, passed with every input.
///
/// Two clocks, because Redis uses two: a monotonic one for deadlines and
/// durations (`mono_ns`), and the wall clock for expiry, which is absolute
/// (`EXPIREAT`) and for `TIME` (`unix_us`). The simulator moves them
/// independently to inject clock jumps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Now {
    /// Monotonic time in nanoseconds since an arbitrary origin. Never goes back.
    pub mono_ns: u64,
    /// Wall-clock time in microseconds since the Unix epoch.
    pub unix_us: u64,
}

impl Now {
    /// Both clocks from one count: wall clock = `unix_origin_us` + monotonic.
    pub fn from_ns(mono_ns: u64, unix_origin_us: u64) -> Now {
        Now {
            mono_ns,
            unix_us: unix_origin_us + mono_ns / 1000,
        }
    }

    /// Wall-clock time in milliseconds, the unit of key expiry.
    pub fn unix_ms(&self) -> u64 {
        self.unix_us / 1000
    }
}
