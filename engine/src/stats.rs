//! Counters reported by INFO (stats, commandstats, errorstats,
//! latencystats), and the two logs that CONFIG RESETSTAT leaves alone: the
//! slow log (SLOWLOG) and the latency monitor's events (LATENCY).
//!
//! Every executed command ends in [`Stats::record_call`] with the duration
//! the host's [`crate::stopwatch::Stopwatch`] measured; rejected requests
//! (unknown command, wrong arity, NOAUTH) and every error reply are counted
//! by [`Stats::record_rejected`] and [`Stats::record_error_reply`], as
//! Redis's `rejectCommand` and `afterErrorReply` do.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use hdrhistogram::Histogram;

use crate::client::Client;
use crate::cmd::flags::SKIP_SLOWLOG;
use crate::commands::latency::LatencyMonitor;
use crate::commands::slowlog::{Origin, SlowLog};
use crate::server::Server;
use crate::time::Now;

/// Smallest duration a latency histogram tells apart, in nanoseconds
/// (Redis's LATENCY_HISTOGRAM_MIN_VALUE).
pub const HISTOGRAM_MIN_NS: u64 = 1;
/// Largest duration a latency histogram records; longer ones count as this
/// (Redis's LATENCY_HISTOGRAM_MAX_VALUE, one second).
pub const HISTOGRAM_MAX_NS: u64 = 1_000_000_000;
/// Significant figures kept by a latency histogram (Redis's
/// LATENCY_HISTOGRAM_PRECISION): about 1% error, 24 KiB per command.
pub const HISTOGRAM_SIGNIFICANT_FIGURES: u8 = 2;

/// Distinct error codes INFO errorstats tracks; further codes are counted in
/// `total_error_replies` only. Error codes come from the engine's own
/// messages, so this bound is never reached in practice; it keeps the table
/// bounded whatever happens (Redis 7.2 adds the same limit).
pub const ERROR_CODES_MAX: usize = 128;

/// Error codes are looked for in the first this many bytes of a message
/// (Redis's afterErrorReply).
const ERROR_CODE_SCAN_BYTES: usize = 32;

/// A command's name as stats report it: `get`, or `config|get` for a
/// subcommand. Subcommand specs may be named either `get` or `config|get`;
/// this joins them without allocating on the request path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommandName {
    /// The container's name, or "" for a top-level command or a spec whose
    /// name is already a full `parent|sub` name.
    pub parent: &'static str,
    pub name: &'static str,
}

impl CommandName {
    /// The name of `spec`, a subcommand of `parent` if given.
    #[inline]
    pub fn of(
        parent: Option<&'static crate::cmd::CommandSpec>,
        spec: &'static crate::cmd::CommandSpec,
    ) -> CommandName {
        match parent {
            Some(p) if !spec.name.contains('|') => CommandName {
                parent: p.name,
                name: spec.name,
            },
            _ => CommandName {
                parent: "",
                name: spec.name,
            },
        }
    }

    /// A top-level command.
    pub fn top(name: &'static str) -> CommandName {
        CommandName { parent: "", name }
    }

    /// The full name's bytes, `parent|name`.
    fn bytes(&self) -> impl Iterator<Item = u8> + '_ {
        let sep: &[u8] = if self.parent.is_empty() { b"" } else { b"|" };
        self.parent
            .bytes()
            .chain(sep.iter().copied())
            .chain(self.name.bytes())
    }

    /// The full name, `config|get`.
    pub fn full(&self) -> String {
        if self.parent.is_empty() {
            self.name.to_string()
        } else {
            format!("{}|{}", self.parent, self.name)
        }
    }
}

/// Ordered by the full name's bytes, as if the names were stored joined.
impl Ord for CommandName {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.bytes().cmp(other.bytes())
    }
}

impl PartialOrd for CommandName {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Per-command counters (INFO commandstats) and latency histogram (INFO
/// latencystats, LATENCY HISTOGRAM).
#[derive(Debug, Default, Clone)]
pub struct CommandStats {
    pub calls: u64,
    /// Sum of the stopwatch's durations.
    pub duration_ns: u64,
    pub work_units: u64,
    pub rejected_calls: u64,
    pub failed_calls: u64,
    /// Durations in nanoseconds, created on the first call timed while
    /// `latency-tracking` is on (as Redis allocates it lazily).
    pub histogram: Option<Box<Histogram<u64>>>,
}

impl CommandStats {
    /// Records one duration in the histogram, creating it if needed.
    fn track_latency(&mut self, duration_ns: u64) {
        let h = self.histogram.get_or_insert_with(|| {
            Box::new(
                Histogram::new_with_bounds(
                    HISTOGRAM_MIN_NS,
                    HISTOGRAM_MAX_NS,
                    HISTOGRAM_SIGNIFICANT_FIGURES,
                )
                .expect("constant bounds are valid"),
            )
        });
        h.saturating_record(duration_ns.clamp(HISTOGRAM_MIN_NS, HISTOGRAM_MAX_NS));
    }
}

/// One finished command, as [`Stats::record_call`] needs it.
#[derive(Clone, Copy, Debug)]
pub struct Call {
    pub name: CommandName,
    pub work_units: u64,
    pub duration_ns: u64,
    /// The reply was an error (INFO commandstats `failed_calls`).
    pub failed: bool,
    /// `latency-tracking` is on.
    pub track_latency: bool,
}

/// Server-wide counters.
#[derive(Debug, Default)]
pub struct Stats {
    pub total_connections_received: u64,
    /// Connections closed by `maxmemory-clients` (INFO `evicted_clients`).
    pub evicted_clients: u64,
    pub rejected_connections: u64,
    pub total_commands_processed: u64,
    /// Requests rejected before execution (unknown command, arity, NOAUTH).
    pub rejected_calls: u64,
    /// Every error reply, rejected requests included (INFO stats
    /// `total_error_replies`).
    pub total_error_replies: u64,
    pub net_input_bytes: u64,
    pub net_output_bytes: u64,
    pub keyspace_hits: u64,
    pub keyspace_misses: u64,
    pub commands: crate::stats_table::CommandStatsTable,
    /// Error replies by code (`ERR`, `WRONGTYPE`...), at most
    /// [`ERROR_CODES_MAX`] codes.
    pub errors: BTreeMap<String, u64>,
    /// Values (or, for a flushed database, keys) handed to the host to
    /// free in the background (INFO memory `lazyfreed_objects`).
    pub lazyfreed_objects: u64,
    /// Highest `used_memory` INFO has reported (INFO memory `used_memory_peak`).
    pub used_memory_peak_bytes: u64,
    /// SLOWLOG's entries; kept by CONFIG RESETSTAT.
    pub slowlog: SlowLog,
    /// LATENCY's events; kept by CONFIG RESETSTAT.
    pub latency: LatencyMonitor,
    /// The `now` of the input being processed, for the times of slow log
    /// entries and latency samples recorded where no command context is at
    /// hand (a blocked client unblocked by a timeout or CLIENT UNBLOCK).
    pub now: Now,
}

/// A command that finished, as [`command_finished`] records it.
#[derive(Clone, Copy, Debug)]
pub struct Finished<'a> {
    pub name: CommandName,
    /// The spec's flags (FAST picks the latency event; SKIP_SLOWLOG).
    pub flags: u32,
    pub work_units: u64,
    pub duration_ns: u64,
    /// The reply was an error.
    pub failed: bool,
    /// The request's arguments, for a command whose arguments were not
    /// captured before it ran (a blocked command's saved copy); `None` when
    /// [`SlowLog::capture`] has them.
    pub args: Option<&'a [Vec<u8>]>,
}

/// Records a finished command everywhere it is reported: INFO
/// commandstats and latencystats, the slow log and the latency monitor, as
/// Redis's `call()` (or `updateStatsOnUnblock`) does.
pub fn command_finished(server: &mut Server, client: &Client, f: Finished) {
    let config = &server.config;
    let stats = &mut server.stats;
    stats.record_call(Call {
        name: f.name,
        work_units: f.work_units,
        duration_ns: f.duration_ns,
        failed: f.failed,
        track_latency: config.latency_tracking,
    });
    let unix_s = stats.now.unix_us / 1_000_000;
    let duration_us = f.duration_ns / 1000;
    if f.flags & SKIP_SLOWLOG != 0 {
        return;
    }
    stats.latency.add_if_needed(
        config.latency_monitor_threshold_ms,
        LatencyMonitor::event_of(f.flags),
        unix_s,
        f.duration_ns / 1_000_000,
    );
    let threshold_us = config.slowlog_log_slower_than_us;
    if threshold_us < 0 || duration_us < threshold_us as u64 {
        return;
    }
    if let Some(args) = f.args {
        stats.slowlog.capture(args);
    }
    let origin = Origin {
        unix_s,
        addr: &client.info.addr,
        name: client.name.as_deref().unwrap_or(b""),
    };
    stats
        .slowlog
        .push(config.slowlog_max_len, f.name, duration_us, origin);
}

impl Stats {
    /// Counts one executed command (for a blocked command, once, when it is
    /// unblocked).
    pub fn record_call(&mut self, call: Call) {
        self.total_commands_processed += 1;
        let s = self.commands.entry(call.name);
        s.calls += 1;
        s.work_units = s.work_units.saturating_add(call.work_units);
        s.duration_ns = s.duration_ns.saturating_add(call.duration_ns);
        if call.failed {
            s.failed_calls += 1;
        }
        if call.track_latency {
            s.track_latency(call.duration_ns);
        }
    }

    /// Takes back the failure [`Stats::record_call`] counted for `name`:
    /// a blocked command ended because the server became a replica counts
    /// its error reply but is not a failed call in Redis (the error is
    /// added outside `call()`).
    pub fn forgive_failure(&mut self, name: CommandName) {
        let s = self.commands.entry(name);
        s.failed_calls = s.failed_calls.saturating_sub(1);
    }

    /// Counts a request rejected before execution; `name` is the command it
    /// named, if it exists (its INFO commandstats `rejected_calls`).
    pub fn record_rejected(&mut self, name: Option<CommandName>) {
        self.rejected_calls += 1;
        if let Some(name) = name {
            self.commands.entry(name).rejected_calls += 1;
        }
    }

    /// Counts the error in `reply` (one encoded reply) if it is one: INFO
    /// stats `total_error_replies` and errorstats by the error's code, the
    /// message's first word (`-WRONGTYPE Operation...` counts as
    /// `WRONGTYPE`; a message with no space in its first 32 bytes as `ERR`).
    /// Returns whether it was an error.
    pub fn record_error_reply(&mut self, reply: &[u8]) -> bool {
        let Some(message) = reply.strip_prefix(b"-") else {
            return false;
        };
        self.total_error_replies += 1;
        let scan = &message[..message.len().min(ERROR_CODE_SCAN_BYTES)];
        let code = match scan.iter().position(|&b| b == b' ' || b == b'\r') {
            Some(end) if end > 0 && scan[end] == b' ' => &message[..end],
            _ => b"ERR".as_slice(),
        };
        let code = String::from_utf8_lossy(code);
        if let Some(count) = self.errors.get_mut(code.as_ref()) {
            *count += 1;
        } else if self.errors.len() < ERROR_CODES_MAX {
            self.errors.insert(code.into_owned(), 1);
        }
        true
    }

    /// CONFIG RESETSTAT: every counter and histogram; the slow log and the
    /// latency events stay, as in Redis.
    pub fn reset(&mut self) {
        let slowlog = std::mem::take(&mut self.slowlog);
        let latency = std::mem::take(&mut self.latency);
        *self = Stats {
            slowlog,
            latency,
            ..Stats::default()
        };
    }

    /// INFO commandstats: one line per command called or rejected.
    pub fn write_commandstats(&self, out: &mut String) {
        out.push_str("# Commandstats\r\n");
        for (name, s) in &self.commands {
            if s.calls == 0 && s.rejected_calls == 0 && s.failed_calls == 0 {
                continue;
            }
            let usec = s.duration_ns / 1000;
            let per_call = if s.calls == 0 {
                0.0
            } else {
                usec as f64 / s.calls as f64
            };
            let _ = write!(out, "cmdstat_");
            push_name(out, name);
            let _ = write!(
                out,
                ":calls={},usec={usec},usec_per_call={per_call:.2},rejected_calls={},failed_calls={}\r\n",
                s.calls, s.rejected_calls, s.failed_calls
            );
        }
    }

    /// INFO errorstats: one line per error code, in code order.
    pub fn write_errorstats(&self, out: &mut String) {
        out.push_str("# Errorstats\r\n");
        for (code, count) in &self.errors {
            let _ = write!(out, "errorstat_{code}:count={count}\r\n");
        }
    }

    /// INFO latencystats: the configured percentiles of each command's
    /// histogram, in microseconds (`percentiles` from
    /// `latency-tracking-info-percentiles`).
    pub fn write_latencystats(&self, out: &mut String, percentiles: &[f64]) {
        out.push_str("# Latencystats\r\n");
        for (name, s) in &self.commands {
            let Some(h) = s.histogram.as_deref() else {
                continue;
            };
            out.push_str("latency_percentiles_usec_");
            push_name(out, name);
            out.push(':');
            for (i, &p) in percentiles.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let _ = write!(
                    out,
                    "p{}={:.3}",
                    trim_double(p),
                    value_at_percentile(h, p) as f64 / 1000.0
                );
            }
            out.push_str("\r\n");
        }
    }
}

fn push_name(out: &mut String, name: &CommandName) {
    if !name.parent.is_empty() {
        out.push_str(name.parent);
        out.push('|');
    }
    out.push_str(name.name);
}

/// The value at `percentile` (0 to 100) as HdrHistogram_c's
/// `hdr_value_at_percentile` computes it: the lowest equivalent value for 0,
/// otherwise the highest equivalent value of the bucket where the
/// cumulative count reaches `round(percentile% × total)`.
pub fn value_at_percentile(h: &Histogram<u64>, percentile: f64) -> u64 {
    let total = h.len();
    if total == 0 {
        return 0;
    }
    let p = percentile.clamp(0.0, 100.0);
    let target = (((p / 100.0) * total as f64) + 0.5) as u64;
    let target = target.max(1);
    let mut seen = 0;
    for v in h.iter_recorded() {
        seen += v.count_at_value();
        if seen >= target {
            let value = v.value_iterated_to();
            return if p == 0.0 {
                h.lowest_equivalent(value)
            } else {
                h.highest_equivalent(value)
            };
        }
    }
    h.max()
}

/// `%f` then trailing zeros (and a trailing point) removed: `50`, `99.9`
/// (Redis's trimDoubleString on a `%f` rendering).
fn trim_double(p: f64) -> String {
    let s = format!("{p:.6}");
    let s = s.trim_end_matches('0');
    s.trim_end_matches('.').to_string()
}

/// Parses `latency-tracking-info-percentiles` ("50 99 99.9"), skipping
/// anything that is not a number between 0 and 100.
pub fn parse_percentiles(text: &str) -> Vec<f64> {
    text.split_ascii_whitespace()
        .filter_map(|w| w.parse::<f64>().ok())
        .filter(|p| (0.0..=100.0).contains(p))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_join_and_order_like_full_names() {
        let get = CommandName {
            parent: "config",
            name: "get",
        };
        assert_eq!(get.full(), "config|get");
        let mut names = [
            CommandName::top("configx"),
            get,
            CommandName::top("config|set"),
            CommandName::top("config"),
        ];
        names.sort();
        let full: Vec<String> = names.iter().map(CommandName::full).collect();
        assert_eq!(full, ["config", "configx", "config|get", "config|set"]);
    }

    #[test]
    fn error_codes_like_redis() {
        let mut s = Stats::default();
        assert!(!s.record_error_reply(b"+OK\r\n"));
        assert!(s.record_error_reply(b"-ERR syntax error\r\n"));
        assert!(s.record_error_reply(b"-WRONGTYPE Operation against a key\r\n"));
        assert!(s.record_error_reply(b"-NOSPACEINTHEFIRSTTHIRTYTWOBYTESATALL x\r\n"));
        assert!(s.record_error_reply(b"-NOAUTH\r\n"));
        assert_eq!(s.total_error_replies, 4);
        let mut out = String::new();
        s.write_errorstats(&mut out);
        assert_eq!(
            out,
            "# Errorstats\r\nerrorstat_ERR:count=3\r\nerrorstat_WRONGTYPE:count=1\r\n"
        );
    }

    #[test]
    fn error_codes_are_bounded() {
        let mut s = Stats::default();
        for i in 0..ERROR_CODES_MAX + 10 {
            s.record_error_reply(format!("-E{i} x\r\n").as_bytes());
        }
        assert_eq!(s.errors.len(), ERROR_CODES_MAX);
        assert_eq!(s.total_error_replies, ERROR_CODES_MAX as u64 + 10);
    }

    #[test]
    fn percentiles_render_like_redis() {
        assert_eq!(trim_double(50.0), "50");
        assert_eq!(trim_double(99.9), "99.9");
        assert_eq!(trim_double(0.0), "0");
        assert_eq!(parse_percentiles("50 abc 99.9 101"), [50.0, 99.9]);
        let mut s = CommandStats::default();
        // Redis reported p50=64.255,p0=64.000 for an INFO of about 64 µs.
        s.track_latency(64_100);
        let h = s.histogram.as_deref().expect("created");
        assert_eq!(value_at_percentile(h, 50.0), 64_255);
        assert_eq!(value_at_percentile(h, 0.0), 64_000);
    }

    #[test]
    fn resetstat_keeps_the_logs() {
        let mut s = Stats::default();
        s.record_call(Call {
            name: CommandName::top("get"),
            work_units: 1,
            duration_ns: 5_000,
            failed: true,
            track_latency: true,
        });
        s.slowlog.next_id = 7;
        s.reset();
        assert!(s.commands.is_empty());
        assert_eq!(s.total_commands_processed, 0);
        assert_eq!(s.slowlog.next_id, 7);
    }
}
