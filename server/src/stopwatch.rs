//! The real server's command stopwatch: the monotonic clock, read right
//! before and right after each command, as Redis's `call()` does with
//! `ustime()`. This is what SLOWLOG, LATENCY and INFO commandstats /
//! latencystats report on the real server (the engine reads no clock).

use std::time::Instant;

use seedkv_engine::stopwatch::Stopwatch;

/// Elapsed wall time between `start` and `stop`, from `std::time::Instant`
/// (not tokio's, which a paused or simulated runtime would freeze: a
/// command's duration is CPU time spent now, whatever the runtime's clock).
#[derive(Debug, Default)]
pub struct MonotonicStopwatch {
    started: Option<Instant>,
}

impl Stopwatch for MonotonicStopwatch {
    fn start(&mut self) {
        debug_assert!(self.started.is_none(), "start without stop");
        self.started = Some(Instant::now());
    }

    fn stop(&mut self, _work_units: u64, _reply_bytes: u64) -> u64 {
        // A stop without a start (never done by the engine) reads as 0.
        self.started.take().map_or(0, |t| {
            u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX)
        })
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
