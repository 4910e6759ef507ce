//! How long a command ran, as the host measures it.
//!
//! SLOWLOG, LATENCY, INFO commandstats (`usec`) and INFO latencystats all
//! report durations. The engine reads no clock, so it asks a [`Stopwatch`]
//! supplied by the host: the engine calls [`Stopwatch::start`] right before
//! a command's handler runs and [`Stopwatch::stop`] right after its reply is
//! complete, and reports whatever `stop` returns.
//!
//! - The real server installs a monotonic-clock stopwatch, so its SLOWLOG
//!   shows wall time as Redis's does.
//! - The simulator installs one that returns its cost model's charge for the
//!   work the command reported, so SLOWLOG and LATENCY show the same virtual
//!   durations that its tail-latency checker observes.
//! - Without either, [`WorkUnitStopwatch`] makes durations a pure function
//!   of the work done ([`WORK_UNIT_NS`] per unit), which keeps snapshot
//!   tests and fuzzing deterministic.
//!
//! A blocked command is timed per attempt (the call that blocked it and
//! each re-run when one of its keys was signalled); the sum is reported once,
//! when it is unblocked, as Redis 7.0 does.

/// Times the execution of one command at a time. `start` and `stop` always
/// come in pairs, never nested.
pub trait Stopwatch: Send {
    /// A command's handler is about to run.
    fn start(&mut self);

    /// The command finished after doing `work_units` of work (see
    /// [`crate::engine`]) and producing `reply_bytes` of reply. Returns the
    /// elapsed time since `start`, in nanoseconds.
    fn stop(&mut self, work_units: u64, reply_bytes: u64) -> u64;
}

/// Nanoseconds [`WorkUnitStopwatch`] charges per work unit: one unit reads
/// as one microsecond, a round figure of the same order as a real server's
/// cost per element (the simulator's calibrated figure is 300 ns), so that a
/// `KEYS *` over 10 000 keys crosses the default `slowlog-log-slower-than`
/// of 10 ms just as it does on a real server.
pub const WORK_UNIT_NS: u64 = 1_000;

/// The deterministic default: elapsed time is `work_units × WORK_UNIT_NS`.
#[derive(Clone, Copy, Debug, Default)]
pub struct WorkUnitStopwatch;

impl Stopwatch for WorkUnitStopwatch {
    fn start(&mut self) {}

    fn stop(&mut self, work_units: u64, _reply_bytes: u64) -> u64 {
        work_units.saturating_mul(WORK_UNIT_NS)
    }
}

/// A stopwatch whose elapsed time is a function of the work reported,
/// `charge(work_units, reply_bytes)` in nanoseconds: how the simulator
/// installs its cost model, so that a command's recorded duration is
/// exactly the virtual CPU time the simulator charges for it.
pub struct CostStopwatch<F>(pub F);

impl<F: FnMut(u64, u64) -> u64 + Send> Stopwatch for CostStopwatch<F> {
    fn start(&mut self) {}

    fn stop(&mut self, work_units: u64, reply_bytes: u64) -> u64 {
        (self.0)(work_units, reply_bytes)
    }
}

/// A stopwatch that returns durations from a fixed script, for tests that
/// need a command to be slow (or fast) without doing the work.
#[derive(Clone, Debug, Default)]
pub struct ScriptedStopwatch {
    /// Durations returned by successive `stop` calls, in nanoseconds; once
    /// spent, `stop` returns `fallback_ns`.
    pub durations_ns: std::collections::VecDeque<u64>,
    pub fallback_ns: u64,
}

impl Stopwatch for ScriptedStopwatch {
    fn start(&mut self) {}

    fn stop(&mut self, _work_units: u64, _reply_bytes: u64) -> u64 {
        self.durations_ns.pop_front().unwrap_or(self.fallback_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_unit_stopwatch_is_a_function_of_work() {
        let mut s = WorkUnitStopwatch;
        s.start();
        assert_eq!(s.stop(3, 1_000_000), 3 * WORK_UNIT_NS);
        s.start();
        assert_eq!(s.stop(u64::MAX, 0), u64::MAX);
    }

    #[test]
    fn cost_stopwatch_charges_its_function() {
        let mut s = CostStopwatch(|w: u64, b: u64| 1_000 + w * 300 + b / 4);
        s.start();
        assert_eq!(s.stop(10, 400), 1_000 + 3_000 + 100);
    }

    #[test]
    fn scripted_stopwatch_replays_then_falls_back() {
        let mut s = ScriptedStopwatch {
            durations_ns: [5, 7].into(),
            fallback_ns: 1,
        };
        assert_eq!((0..3).map(|_| s.stop(0, 0)).collect::<Vec<_>>(), [5, 7, 1]);
    }
}
