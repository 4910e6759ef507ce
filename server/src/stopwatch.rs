//! The real server's command stopwatch: the monotonic clock, read right
//! before and right after each command, as Redis's `call()` does with
//! `ustime()`. This is what SLOWLOG, LATENCY and INFO commandstats /
//! latencystats report on the real server (the engine reads no clock).

use seedkv_engine::stopwatch::Stopwatch;

/// Elapsed time between `start` and `stop` on `CLOCK_MONOTONIC`, read
/// directly rather than through `std::time::Instant` (not tokio's, which a
/// paused or simulated runtime would freeze: a command's duration is CPU
/// time spent now, whatever the runtime's clock). Two readings per command
/// are a fixed cost of every request; `Instant`'s checked `timespec`
/// arithmetic cost as much again as the vDSO call.
#[derive(Debug, Default)]
pub struct MonotonicStopwatch {
    started_ns: Option<u64>,
}

/// `CLOCK_MONOTONIC` in nanoseconds.
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

impl Stopwatch for MonotonicStopwatch {
    fn start(&mut self) {
        debug_assert!(self.started_ns.is_none(), "start without stop");
        self.started_ns = Some(monotonic_ns());
    }

    fn stop(&mut self, _work_units: u64, _reply_bytes: u64) -> u64 {
        // A stop without a start (never done by the engine) reads as 0.
        self.started_ns
            .take()
            .map_or(0, |t| monotonic_ns().saturating_sub(t))
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
}
