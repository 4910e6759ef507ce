//! The head-of-line table: for each measured window, the PINGs in flight
//! during it and their p50, p99 (hdrhistogram, three significant digits)
//! and exact max. The layout is the one `seedkv-sim report latency` prints,
//! so the real and the virtual tables can be read side by side.

use std::fmt::Write as _;

use hdrhistogram::Histogram;

use super::prober::Sample;

/// One measured operation (or the idle window, with no duration).
#[derive(Clone, Debug)]
pub struct Span {
    pub operation: String,
    pub duration_ns: Option<u64>,
    pub window_start_ns: u64,
    pub window_end_ns: u64,
}

#[derive(Clone, Debug)]
pub struct Row {
    pub span: Span,
    pub pings_count: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

/// The PINGs whose flight overlaps `span`'s window, summarised.
pub fn row_of(span: Span, samples: &[Sample]) -> Row {
    // Latencies up to an hour, three significant digits.
    let mut histogram =
        Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds");
    let mut max_ns = 0;
    for s in samples {
        if s.sent_ns < span.window_end_ns && s.sent_ns + s.latency_ns > span.window_start_ns {
            histogram.saturating_record(s.latency_ns.max(1));
            max_ns = max_ns.max(s.latency_ns);
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
