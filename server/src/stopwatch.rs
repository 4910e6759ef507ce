//! The real server's command stopwatch: the monotonic clock, read right
//! before and right after each command, as Redis's `call()` does with
//! `ustime()`. This is what SLOWLOG, LATENCY and INFO commandstats /
//! latencystats report on the real server (the engine reads no clock).
//!
//! Two readings per command are a fixed cost of every request: under
//! redis-benchmark -P16 the vDSO's `clock_gettime` was 6% of the server's
//! CPU time (Redis pays the same in `gettimeofday`). Where the kernel
//! itself keeps time with the CPU's time-stamp counter (its clocksource is
//! `tsc`, so the counter is invariant and synchronised across CPUs), the
//! stopwatch reads the counter directly and converts ticks to nanoseconds
//! with a rate it measures against `CLOCK_MONOTONIC` as it goes: a
//! reading of the monotonic clock every [`CALIBRATE_EVERY_STOPS`] stops,
//! over a window that only grows, so the rate only gets more exact. Until
//! the first window of [`CALIBRATION_WINDOW_MIN_NS`] has passed (and
//! elsewhere) it reads `CLOCK_MONOTONIC`.

use seedkv_engine::stopwatch::Stopwatch;

/// Stops between two readings of the monotonic clock that refine the
/// counter's rate.
const CALIBRATE_EVERY_STOPS: u32 = 4096;

/// The shortest window the counter's rate is measured over: a paired
/// reading is off by at most [`PAIRED_READING_SPREAD_MAX_NS`], a part in
/// 500 of this, and the window only grows.
const CALIBRATION_WINDOW_MIN_NS: u64 = 10_000_000;

/// A paired reading of both clocks whose monotonic readings on either
/// side of the counter's are further apart than this (the thread was
/// preempted in between) is not used.
const PAIRED_READING_SPREAD_MAX_NS: u64 = 20_000;

/// Elapsed time between `start` and `stop`, in nanoseconds.
#[derive(Debug)]
pub struct MonotonicStopwatch {
    started: Option<Reading>,
    /// The counter's rate, when the counter is usable.
    tsc: Option<TscRate>,
}

/// A start reading, on whichever clock was in use when it was taken.
#[derive(Clone, Copy, Debug)]
enum Reading {
    MonotonicNs(u64),
    Ticks(u64),
}

/// The time-stamp counter's rate against `CLOCK_MONOTONIC`.
#[derive(Debug)]
struct TscRate {
    /// Both clocks read at the same moment, where the window starts
    /// (`None` until a paired reading succeeded).
    origin: Option<(u64, u64)>,
    /// Nanoseconds per tick in 32.32 fixed point; 0 until measured.
    ns_per_tick_q32: u64,
    stops_until_calibration: u32,
}

impl Default for MonotonicStopwatch {
    fn default() -> Self {
        MonotonicStopwatch {
            started: None,
            tsc: tsc::usable().then(|| TscRate {
                origin: paired_reading(),
                ns_per_tick_q32: 0,
                stops_until_calibration: CALIBRATE_EVERY_STOPS,
            }),
        }
    }
}

/// `CLOCK_MONOTONIC` in nanoseconds. Read directly rather than through
/// `std::time::Instant` (not tokio's, which a paused or simulated runtime
/// would freeze: a command's duration is CPU time spent now, whatever the
/// runtime's clock); `Instant`'s checked `timespec` arithmetic cost as
/// much again as the vDSO call.
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid place for clock_gettime to write; the
    // monotonic clock always exists on Linux, so the call cannot fail.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// The counter and the monotonic clock read at the same moment: `None`
/// when the thread lost the CPU between the readings.
fn paired_reading() -> Option<(u64, u64)> {
    let before_ns = monotonic_ns();
    let ticks = tsc::ticks();
    let after_ns = monotonic_ns();
    let spread_ns = after_ns.saturating_sub(before_ns);
    (spread_ns <= PAIRED_READING_SPREAD_MAX_NS).then_some((ticks, before_ns + spread_ns / 2))
}

impl TscRate {
    /// Measures the rate over the window so far, once it is long enough.
    fn calibrate(&mut self) {
        let Some((ticks, ns)) = paired_reading() else {
            return;
        };
        let Some((origin_ticks, origin_ns)) = self.origin else {
            self.origin = Some((ticks, ns));
            return;
        };
        let window_ns = ns.saturating_sub(origin_ns);
        let window_ticks = ticks.saturating_sub(origin_ticks);
        if window_ns < CALIBRATION_WINDOW_MIN_NS || window_ticks == 0 {
            return;
        }
        let q32 = ((window_ns as u128) << 32) / window_ticks as u128;
        self.ns_per_tick_q32 = u64::try_from(q32).unwrap_or(0);
    }

    fn to_ns(&self, ticks: u64) -> u64 {
        ((ticks as u128 * self.ns_per_tick_q32 as u128) >> 32) as u64
    }
}

impl MonotonicStopwatch {
    /// Refines the counter's rate now (tests; `stop` does it periodically).
    #[cfg(test)]
    fn calibrate_now(&mut self) {
        if let Some(rate) = self.tsc.as_mut() {
            rate.calibrate();
        }
    }
}

impl Stopwatch for MonotonicStopwatch {
    fn start(&mut self) {
        debug_assert!(self.started.is_none(), "start without stop");
        self.started = Some(match &self.tsc {
            Some(rate) if rate.ns_per_tick_q32 != 0 => Reading::Ticks(tsc::ticks()),
            _ => Reading::MonotonicNs(monotonic_ns()),
        });
    }

    fn stop(&mut self, _work_units: u64, _reply_bytes: u64) -> u64 {
        // A stop without a start (never done by the engine) reads as 0.
        let elapsed_ns = match self.started.take() {
            None => return 0,
            Some(Reading::MonotonicNs(t)) => monotonic_ns().saturating_sub(t),
            Some(Reading::Ticks(t)) => match &self.tsc {
                Some(rate) => rate.to_ns(tsc::ticks().saturating_sub(t)),
                None => 0,
            },
        };
        if let Some(rate) = self.tsc.as_mut() {
            rate.stops_until_calibration -= 1;
            if rate.stops_until_calibration == 0 {
                rate.stops_until_calibration = CALIBRATE_EVERY_STOPS;
                rate.calibrate();
            }
        }
        elapsed_ns
    }
}

/// The CPU's time-stamp counter, where the kernel vouches for it.
#[cfg(target_arch = "x86_64")]
mod tsc {
    /// Whether the kernel keeps time with the counter: it checked that
    /// the counter is invariant and synchronised across CPUs (or it would
    /// have marked it unstable and switched to another clocksource).
    pub fn usable() -> bool {
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .is_ok_and(|s| s.trim() == "tsc")
    }

    #[inline]
    pub fn ticks() -> u64 {
        // SAFETY: RDTSC exists on every x86_64 CPU and has no preconditions.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
}

/// Elsewhere the monotonic clock serves alone.
#[cfg(not(target_arch = "x86_64"))]
mod tsc {
    pub fn usable() -> bool {
        false
    }

    pub fn ticks() -> u64 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_the_time_between_start_and_stop() {
        let mut s = MonotonicStopwatch::default();
        assert_eq!(s.stop(0, 0), 0);
        s.start();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let ns = s.stop(1, 1);
        assert!(ns >= 2_000_000, "{ns}");
        assert_eq!(s.stop(0, 0), 0, "a stop consumes its start");
    }

    /// Once its rate is measured, a counter-timed interval reads what the
    /// monotonic clock says it lasted, give or take the rate's error over
    /// a short first window (at most a part in 500; 2% allowed).
    #[test]
    fn the_counter_agrees_with_the_monotonic_clock() {
        let mut s = MonotonicStopwatch::default();
        std::thread::sleep(std::time::Duration::from_nanos(
            CALIBRATION_WINDOW_MIN_NS + 1_000_000,
        ));
        // A paired reading fails only when the thread is preempted
        // inside it; a few tries make a busy machine's misses harmless.
        for _ in 0..100 {
            s.calibrate_now();
            match &s.tsc {
                Some(rate) if rate.ns_per_tick_q32 == 0 => {
                    std::thread::sleep(std::time::Duration::from_millis(1))
                }
                _ => break,
            }
        }
        let before_ns = monotonic_ns();
        s.start();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let ns = s.stop(1, 1);
        let outer_ns = monotonic_ns() - before_ns;
        assert!(ns >= 5_000_000 - 100_000, "{ns}");
        assert!(ns <= outer_ns + outer_ns / 50, "{ns} > {outer_ns}");
    }
}
