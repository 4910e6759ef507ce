//! The head-of-line table both experiments print: `seedkv-sim report
//! latency` in virtual time and `seedkv-load` over real sockets. For each
//! measured window, the PINGs in flight during it and their p50, p99
//! (hdrhistogram, three significant digits) and exact max, then the line
//! saying what the figures were checked against. One layout, so that the
//! real and the virtual tables read side by side.

use std::fmt::Write as _;

use hdrhistogram::Histogram;

use super::verify::{Checked, Span};
use crate::history::TimeNs;

/// One line of the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub span: Span,
    pub pings_count: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

/// One PING as the prober saw it: when it was sent (since the
/// experiment's origin) and its round trip.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PingSample {
    pub sent_ns: TimeNs,
    pub latency_ns: u64,
}

/// The PINGs in flight at some point of `span`'s window, summarised.
pub fn row_of(span: Span, pings: &[PingSample]) -> Row {
    // Latencies up to an hour, three significant digits.
    let mut histogram =
        Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds");
    let mut max_ns = 0;
    for p in pings {
        let overlaps =
            p.sent_ns < span.window_end_ns && p.sent_ns + p.latency_ns > span.window_start_ns;
        if overlaps {
            histogram.saturating_record(p.latency_ns.max(1));
            max_ns = max_ns.max(p.latency_ns);
        }
    }
    Row {
        span,
        pings_count: histogram.len(),
        p50_ns: histogram.value_at_quantile(0.50),
        p99_ns: histogram.value_at_quantile(0.99),
        max_ns,
    }
}

/// Milliseconds with three decimals.
pub fn ms(ns: u64) -> String {
    format!("{}.{:03}", ns / 1_000_000, ns % 1_000_000 / 1_000)
}

/// The table, as the seed article prints it (plus the PING count), one
/// row per operation, in milliseconds.
pub fn format_table(rows: &[Row]) -> String {
    let mut out = String::new();
    let width = rows
        .iter()
        .map(|r| r.span.operation.len())
        .max()
        .unwrap_or(0)
        .max("operation".len());
    let _ = writeln!(
        out,
        "{:<width$}  {:>12}  {:>7}  {:>9}  {:>9}  {:>9}",
        "operation", "duration ms", "PINGs", "p50 ms", "p99 ms", "max ms"
    );
    for r in rows {
        let duration = r.span.duration_ns.map_or("-".to_string(), ms);
        let _ = writeln!(
            out,
            "{:<width$}  {:>12}  {:>7}  {:>9}  {:>9}  {:>9}",
            r.span.operation,
            duration,
            r.pings_count,
            ms(r.p50_ns),
            ms(r.p99_ns),
            ms(r.max_ns)
        );
    }
    out
}

/// The table, a blank line, and the `checked:` line: the body of either
/// report, between its title and its closing line.
pub fn format_checked_table(rows: &[Row], c: &Checked) -> String {
    let mut out = format_table(rows);
    let _ = writeln!(
        out,
        "\nchecked: {} replies, {} errors; DBSIZE {} and HLEN {} after the fill, HLEN {} after \
         the refill, DBSIZE {} at the end; KEYS * {} keys, KEYS k:1* {} keys; SCAN {} calls, {} \
         distinct keys",
        c.replies_count,
        c.errors_count,
        c.dbsize_filled,
        c.hlen_filled,
        c.hlen_refilled,
        c.dbsize_end,
        c.keys_all_count,
        c.keys_prefix_count,
        c.scan_calls,
        c.scan_distinct_keys
    );
    out
}
