//! LATENCY LATEST | HISTORY | RESET | DOCTOR | GRAPH | HISTOGRAM | HELP,
//! and the latency monitor they read.
//!
//! With `latency-monitor-threshold` at N > 0 milliseconds, every command
//! that ran for at least N ms (as the host's stopwatch measured it, see
//! [`crate::stopwatch`]) adds a sample to an event's time series:
//! `fast-command` for commands flagged FAST, `command` for the others, and
//! `command-unblocking` for the run that serves a blocked client. A series
//! keeps one sample per second (the worst of that second) and its last
//! [`SAMPLES_MAX`] seconds, plus its all-time maximum, as Redis's
//! `latencyAddSample` does. Times are the host's wall clock in seconds:
//! the engine reads no clock of its own.
//!
//! LATENCY HISTOGRAM reads the per-command histograms that INFO
//! latencystats also reports (see [`crate::stats`]).

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::commands::config::help_reply;
use crate::resp::ReplyWriter;
use crate::stats::CommandName;

/// Samples a time series keeps (Redis's LATENCY_TS_LEN).
pub const SAMPLES_MAX: usize = 160;
/// Width of LATENCY GRAPH (Redis's LATENCY_GRAPH_COLS).
const GRAPH_COLUMNS: usize = 80;
/// Rows of LATENCY GRAPH's sparkline.
const GRAPH_ROWS: usize = 4;
/// The smallest histogram bucket LATENCY HISTOGRAM reports, in
/// nanoseconds; each next bucket doubles it.
const HISTOGRAM_FIRST_BUCKET_NS: u64 = 1024;

/// The events this engine reports.
pub const EVENT_COMMAND: &str = "command";
pub const EVENT_FAST_COMMAND: &str = "fast-command";
pub const EVENT_COMMAND_UNBLOCKING: &str = "command-unblocking";

/// One second's worst latency.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    /// Unix seconds; 0 marks an empty slot.
    pub unix_s: u64,
    pub latency_ms: u64,
}

/// An event's samples, a ring of [`SAMPLES_MAX`] slots.
#[derive(Clone, Debug)]
pub struct TimeSeries {
    /// The slot the next new second goes to.
    next: usize,
    pub max_ms: u64,
    samples: [Sample; SAMPLES_MAX],
}

impl Default for TimeSeries {
    fn default() -> Self {
        TimeSeries {
            next: 0,
            max_ms: 0,
            samples: [Sample::default(); SAMPLES_MAX],
        }
    }
}

impl TimeSeries {
    /// Adds a sample; within the same second as the last one, keeps the
    /// worse of the two.
    fn add(&mut self, unix_s: u64, latency_ms: u64) {
        // 0 marks an empty slot, so a clock at the epoch counts as 1.
        let unix_s = unix_s.max(1);
        self.max_ms = self.max_ms.max(latency_ms);
        let last = (self.next + SAMPLES_MAX - 1) % SAMPLES_MAX;
        if self.samples[last].unix_s == unix_s {
            let s = &mut self.samples[last];
            s.latency_ms = s.latency_ms.max(latency_ms);
            return;
        }
        self.samples[self.next] = Sample { unix_s, latency_ms };
        self.next = (self.next + 1) % SAMPLES_MAX;
    }

    /// The samples, oldest first.
    pub fn samples(&self) -> impl Iterator<Item = Sample> + '_ {
        (0..SAMPLES_MAX)
            .map(move |j| self.samples[(self.next + j) % SAMPLES_MAX])
            .filter(|s| s.unix_s != 0)
    }

    /// The latest sample (the slot before `next`).
    pub fn latest(&self) -> Sample {
        self.samples[(self.next + SAMPLES_MAX - 1) % SAMPLES_MAX]
    }
}

/// The latency monitor: one time series per event that had a sample.
#[derive(Debug, Default)]
pub struct LatencyMonitor {
    pub events: BTreeMap<&'static str, TimeSeries>,
}

impl LatencyMonitor {
    /// Adds a sample for `event` if `latency-monitor-threshold` is on and
    /// `latency_ms` reaches it (Redis's `latencyAddSampleIfNeeded`).
    /// Inline: every command calls it, and it rarely does anything.
    #[inline]
    pub fn add_if_needed(
        &mut self,
        threshold_ms: u64,
        event: &'static str,
        unix_s: u64,
        latency_ms: u64,
    ) {
        if threshold_ms > 0 && latency_ms >= threshold_ms {
            self.events
                .entry(event)
                .or_default()
                .add(unix_s, latency_ms);
        }
    }

    /// The event of a command with `flags`.
    #[inline]
    pub fn event_of(flags: u32) -> &'static str {
        if flags & FAST != 0 {
            EVENT_FAST_COMMAND
        } else {
            EVENT_COMMAND
        }
    }
}

const LATENCY_SUB: CommandSpec = CommandSpec {
    arity: 2,
    flags: ADMIN | NOSCRIPT | LOADING | STALE,
    acl_categories: &["admin", "slow", "dangerous"],
    group: "server",
    since: "2.8.13",
    tips: &[
        "nondeterministic_output",
        "request_policy:all_nodes",
        "response_policy:special",
    ],
    ..CommandSpec::DEFAULT
};

const LATENCY_SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "latency|latest",
        summary: "Return the latest latency samples for all events.",
        handler: Some(latency_latest),
        ..LATENCY_SUB
    },
    CommandSpec {
        name: "latency|graph",
        arity: 3,
        summary: "Return a latency graph for the event.",
        handler: Some(latency_graph),
        ..LATENCY_SUB
    },
    CommandSpec {
        name: "latency|history",
        arity: 3,
        summary: "Return timestamp-latency samples for the event.",
        handler: Some(latency_history),
        ..LATENCY_SUB
    },
    CommandSpec {
        name: "latency|reset",
        arity: -2,
        summary: "Reset latency data for one or more events.",
        tips: &["request_policy:all_nodes", "response_policy:all_succeeded"],
        handler: Some(latency_reset),
        ..LATENCY_SUB
    },
    CommandSpec {
        name: "latency|doctor",
        summary: "Return a human readable latency analysis report.",
        handler: Some(latency_doctor),
        ..LATENCY_SUB
    },
    CommandSpec {
        name: "latency|help",
        flags: LOADING | STALE,
        acl_categories: &["slow"],
        summary: "Show helpful text about the different subcommands.",
        tips: &[],
        handler: Some(latency_help),
        ..LATENCY_SUB
    },
    CommandSpec {
        name: "latency|histogram",
        arity: -2,
        flags: ADMIN | NOSCRIPT | LOADING | STALE | O_N,
        summary: "Return the cumulative distribution of latencies of a subset of commands or all.",
        since: "7.0.0",
        complexity:
            "O(N) where N is the number of commands with latency information being retrieved.",
        handler: Some(latency_histogram),
        ..LATENCY_SUB
    },
];

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    name: "latency",
    arity: -2,
    acl_categories: &["slow"],
    group: "server",
    summary: "A container for latency diagnostics commands",
    since: "2.8.13",
    complexity: "Depends on subcommand.",
    subcommands: LATENCY_SUBCOMMANDS,
    ..CommandSpec::DEFAULT
}];

/// `LATENCY LATEST`: per event, its name, the time and latency of its
/// latest sample, and its all-time maximum.
fn latency_latest(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let events = &ctx.server.stats.latency.events;
    let mut w = ReplyWriter::new(&mut ctx.reply, ctx.protocol);
    w.array_len(events.len());
    for (name, ts) in events {
        let last = ts.latest();
        w.array_len(4);
        w.bulk_str(name);
        w.int(last.unix_s as i64);
        w.int(last.latency_ms.min(i64::MAX as u64) as i64);
        w.int(ts.max_ms.min(i64::MAX as u64) as i64);
    }
    let n = events.len() as u64;
    ctx.work(n);
}

/// `LATENCY HISTORY event`: `[time, latency]` pairs, oldest first; empty
/// for an unknown event (names are case-sensitive, as in Redis).
fn latency_history(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let series = std::str::from_utf8(&args[2])
        .ok()
        .and_then(|e| ctx.server.stats.latency.events.get(e));
    let samples: Vec<Sample> = series.map(|ts| ts.samples().collect()).unwrap_or_default();
    let mut w = ctx.w();
    w.array_len(samples.len());
    for s in &samples {
        w.array_len(2);
        w.int(s.unix_s as i64);
        w.int(s.latency_ms.min(i64::MAX as u64) as i64);
    }
    ctx.work(samples.len() as u64);
}

/// `LATENCY RESET [event ...]`: drops the named events (case-insensitive),
/// or all; replies how many were dropped.
fn latency_reset(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let events = &mut ctx.server.stats.latency.events;
    let before = events.len();
    if args.len() == 2 {
        events.clear();
    } else {
        events.retain(|name, _| {
            !args[2..]
                .iter()
                .any(|a| a.eq_ignore_ascii_case(name.as_bytes()))
        });
    }
    let resets = before - events.len();
    ctx.work(before as u64);
    ctx.int(resets as i64);
}

/// `LATENCY GRAPH event`: an ASCII sparkline of the event's samples.
fn latency_graph(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let now_s = ctx.now.unix_us / 1_000_000;
    let found = std::str::from_utf8(&args[2])
        .ok()
        .and_then(|e| ctx.server.stats.latency.events.get_key_value(e));
    let Some((name, ts)) = found else {
        return ctx.error(&format!(
            "ERR No samples available for event '{}'",
            crate::util::sanitize(&args[2], usize::MAX)
        ));
    };
    let graph = render_graph(name, ts, now_s);
    ctx.work(SAMPLES_MAX as u64);
    ctx.w().verbatim("txt", graph.as_bytes());
}

/// The header, a rule and the sparkline, each sample labelled with how
/// long ago it was (`12s`, `3m`, `5h`, `2d`).
fn render_graph(event: &str, ts: &TimeSeries, now_s: u64) -> String {
    let samples: Vec<Sample> = ts.samples().collect();
    let min = samples.iter().map(|s| s.latency_ms).min().unwrap_or(0);
    let max = samples.iter().map(|s| s.latency_ms).max().unwrap_or(0);
    let mut out = format!(
        "{event} - high {max} ms, low {min} ms (all time high {} ms)\n",
        ts.max_ms
    );
    out.push_str(&"-".repeat(GRAPH_COLUMNS));
    out.push('\n');
    let points: Vec<(f64, String)> = samples
        .iter()
        .map(|s| {
            let ago = now_s.saturating_sub(s.unix_s);
            let label = match ago {
                0..=59 => format!("{ago}s"),
                60..=3599 => format!("{}m", ago / 60),
                3600..=86_399 => format!("{}h", ago / 3600),
                _ => format!("{}d", ago / 86_400),
            };
            (s.latency_ms as f64, label)
        })
        .collect();
    crate::commands::latency_graph::render_sparkline(&mut out, &points, GRAPH_COLUMNS, GRAPH_ROWS);
    out
}

/// `LATENCY HISTOGRAM [command ...]`: per command with a histogram, its
/// call count and cumulative counts at power-of-two microsecond bounds.
/// A container names its subcommands; unknown names are skipped.
fn latency_histogram(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let mut names: Vec<CommandName> = Vec::new();
    if args.len() == 2 {
        names.extend(
            ctx.server
                .stats
                .commands
                .iter()
                .filter(|(_, s)| s.histogram.is_some())
                .map(|(n, _)| *n),
        );
    } else {
        for arg in &args[2..] {
            let Some((parent, spec)) = crate::pipeline::lookup_full_name(&ctx.server.commands, arg)
            else {
                continue;
            };
            names.push(CommandName::of(parent, spec));
            if parent.is_none() {
                for sub in spec.subcommands {
                    names.push(CommandName::of(Some(spec), sub));
                }
            }
        }
    }
    let stats = &ctx.server.stats.commands;
    let found: Vec<(CommandName, &Histogram<u64>)> = names
        .into_iter()
        .filter_map(|n| Some((n, stats.get(&n)?.histogram.as_deref()?)))
        .collect();
    let mut units = 0;
    let mut w = ReplyWriter::new(&mut ctx.reply, ctx.protocol);
    w.map_len(found.len());
    for (name, h) in &found {
        w.bulk_str(&name.full());
        w.map_len(2);
        w.bulk_str("calls");
        w.int(h.len().min(i64::MAX as u64) as i64);
        w.bulk_str("histogram_usec");
        let buckets = cumulative_buckets(h);
        w.map_len(buckets.len());
        for (usec, count) in &buckets {
            w.int(*usec as i64);
            w.int(*count as i64);
        }
        units += 1 + buckets.len() as u64;
    }
    ctx.work(units);
}

/// `(bound µs, samples at or under it)` at bounds 1024 ns × 2^k, keeping
/// the bounds where the count grew, as Redis's `fillCommandCDF` walks
/// HdrHistogram_c's log iterator: the count at a bound includes every
/// bucket up to the one holding the bound, and the bound is reported as
/// that bucket's highest value in whole microseconds.
pub fn cumulative_buckets(h: &Histogram<u64>) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut bound_ns = HISTOGRAM_FIRST_BUCKET_NS;
    let mut cumulative = 0;
    let mut reported = 0;
    for v in h.iter_recorded() {
        // Buckets past the current bound close it (and maybe later ones).
        while h.highest_equivalent(bound_ns) < v.value_iterated_to() {
            if cumulative > reported {
                out.push((h.highest_equivalent(bound_ns) / 1000, cumulative));
                reported = cumulative;
            }
            bound_ns = bound_ns.saturating_mul(2);
        }
        cumulative += v.count_at_value();
    }
    if cumulative > reported {
        out.push((h.highest_equivalent(bound_ns) / 1000, cumulative));
    }
    out
}

/// `LATENCY DOCTOR`: Redis's report of the events and its advice.
fn latency_doctor(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let now_s = ctx.now.unix_us / 1_000_000;
    let report = crate::commands::latency_graph::doctor_report(
        &ctx.server.stats.latency,
        &ctx.server.config,
        now_s,
    );
    ctx.work(ctx.server.stats.latency.events.len() as u64 * SAMPLES_MAX as u64);
    ctx.w().verbatim("txt", report.as_bytes());
}

fn latency_help(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    help_reply(
        ctx,
        "LATENCY",
        &[
            "DOCTOR",
            "    Return a human readable latency analysis report.",
            "GRAPH <event>",
            "    Return an ASCII latency graph for the <event> class.",
            "HISTORY <event>",
            "    Return time-latency samples for the <event> class.",
            "LATEST",
            "    Return the latest latency samples for all events.",
            "RESET [<event> ...]",
            "    Reset latency data of one or more <event> classes.",
            "    (default: reset all data for all event classes)",
            "HISTOGRAM [COMMAND ...]",
            "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
            "    If no commands are specified then all histograms are replied.",
        ],
    );
}

#[cfg(test)]
mod tests;
