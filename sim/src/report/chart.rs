//! The latency report's SVG: PING latency over virtual time, log scale,
//! with each operation's window shaded and named.
//!
//! Back-to-back PINGs are tens of thousands per second, far more than a
//! chart has pixels, so the time axis is cut into [`BUCKETS_COUNT`] equal
//! buckets and each bucket draws the highest and the median latency of the
//! PINGs sent in it: the maximum is what head-of-line blocking raises, the
//! median shows that most requests never notice.

use plotters::prelude::*;

use super::latency::{LatencyReport, PingSample};
use super::script::GAP_NS;

/// Buckets on the time axis.
pub const BUCKETS_COUNT: usize = 1_200;
/// Picture size in pixels.
const WIDTH_PX: u32 = 1_400;
const HEIGHT_PX: u32 = 700;

/// Writes the chart of `report` to `path`.
pub fn write_svg(report: &LatencyReport, path: &std::path::Path) -> Result<(), String> {
    let first = report.rows.first().ok_or("no rows")?;
    let last = report.rows.last().ok_or("no rows")?;
    let start_ns = first.span.window_start_ns.saturating_sub(GAP_NS);
    let end_ns = last.span.window_end_ns + GAP_NS;
    let (max_line, median_line) = buckets(&report.pings, start_ns, end_ns);
    let secs = |ns: u64| ns as f64 / 1e9;
    let top_ms = report
        .rows
        .iter()
        .map(|r| r.max_ns as f64 / 1e6)
        .fold(1.0, f64::max)
        * 3.0;
    let bottom_ms = 0.05;

    let root = SVGBackend::new(path, (WIDTH_PX, HEIGHT_PX)).into_drawing_area();
    let err = |e: DrawingAreaErrorKind<_>| format!("drawing {}: {e:?}", path.display());
    root.fill(&WHITE).map_err(err)?;
    let caption = format!(
        "PING latency while one client runs O(N) commands (virtual time, seed {}, {} keys, {}-field hash)",
        report.config.seed, report.config.keys_count, report.config.hash_fields_count
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(
            secs(start_ns)..secs(end_ns),
            (bottom_ms..top_ms).log_scale(),
        )
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("virtual time (s)")
        .y_desc("PING latency (ms)")
        .y_label_formatter(&|v| format!("{v}"))
        .draw()
        .map_err(err)?;

    let shades = [&BLUE, &RED, &MAGENTA, &GREEN, &CYAN, &YELLOW];
    for (i, row) in report.rows.iter().enumerate() {
        let shade = shades[i % shades.len()];
        let x0 = secs(row.span.window_start_ns);
        let x1 = secs(row.span.window_end_ns);
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(x0, bottom_ms), (x1, top_ms)],
                shade.mix(0.12).filled(),
            )))
            .map_err(err)?;
        let label = format!(
            "{}: max {:.1} ms",
            short_name(&row.span.operation),
            row.max_ns as f64 / 1e6
        );
        // Labels alternate between two heights so that neighbours do not
        // overlap.
        let label_ms = if i % 2 == 0 {
            top_ms / 1.6
        } else {
            top_ms / 3.2
        };
        chart
            .draw_series(std::iter::once(Text::new(
                label,
                (x0, label_ms),
                ("sans-serif", 13).into_font().color(&BLACK),
            )))
            .map_err(err)?;
    }
    chart
        .draw_series(LineSeries::new(max_line, RED.stroke_width(1)))
        .map_err(err)?
        .label("max per bucket")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED));
    chart
        .draw_series(LineSeries::new(median_line, BLUE.stroke_width(1)))
        .map_err(err)?
        .label("median per bucket")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}

/// (seconds, ms) points of the highest and the median latency of the PINGs
/// sent in each bucket of `[start_ns, end_ns)`; empty buckets are skipped.
fn buckets(pings: &[PingSample], start_ns: u64, end_ns: u64) -> (Vec<(f64, f64)>, Vec<(f64, f64)>) {
    let span_ns = end_ns.saturating_sub(start_ns).max(1);
    let mut per_bucket: Vec<Vec<u64>> = vec![Vec::new(); BUCKETS_COUNT];
    for p in pings {
        if p.sent_ns < start_ns || p.sent_ns >= end_ns {
            continue;
        }
        let i = ((p.sent_ns - start_ns) as u128 * BUCKETS_COUNT as u128 / span_ns as u128) as usize;
        per_bucket[i.min(BUCKETS_COUNT - 1)].push(p.latency_ns);
    }
    let mut max_line = Vec::new();
    let mut median_line = Vec::new();
    for (i, latencies) in per_bucket.iter_mut().enumerate() {
        if latencies.is_empty() {
            continue;
        }
        latencies.sort_unstable();
        let at_s = (start_ns + span_ns * i as u64 / BUCKETS_COUNT as u64) as f64 / 1e9;
        let max = latencies[latencies.len() - 1];
        let median = latencies[latencies.len() / 2];
        max_line.push((at_s, max as f64 / 1e6));
        median_line.push((at_s, median as f64 / 1e6));
    }
    (max_line, median_line)
}

/// An operation's name without its details ("DEL of the ...-field hash"
/// is "DEL"), so that labels fit their window.
fn short_name(operation: &str) -> &str {
    let cut = [" of the ", " ("]
        .iter()
        .filter_map(|sep| operation.find(sep))
        .min()
        .unwrap_or(operation.len());
    &operation[..cut]
}
