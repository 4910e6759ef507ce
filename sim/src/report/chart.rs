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
    let bottom_ms = 0.02;

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
    for (line, color, name) in [
        (&max_line, &RED, "max per bucket"),
        (&median_line, &BLUE, "median per bucket"),
    ] {
        // One polyline per run of non-empty buckets: no PING is sent while
        // the server is stalled, and a line across the gap would invent
        // latencies nobody saw. A bucket alone between gaps (the PING that
        // waited out a stall) is a dot.
        let runs: Vec<Vec<(f64, f64)>> = line
            .split(|p| p.is_none())
            .filter(|run| !run.is_empty())
            .map(|run| run.iter().flatten().copied().collect())
            .collect();
        chart
            .draw_series(
                runs.iter()
                    .map(|run| PathElement::new(run.clone(), color.stroke_width(1))),
            )
            .map_err(err)?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        chart
            .draw_series(
                runs.iter()
                    .filter(|run| run.len() == 1)
                    .map(|run| Circle::new(run[0], 2, color.filled())),
            )
            .map_err(err)?;
    }
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

/// Per bucket of `[start_ns, end_ns)`, the (seconds, ms) point of the
/// highest and of the median latency of the PINGs sent in it; `None` for a
/// bucket in which no PING was sent.
type Line = Vec<Option<(f64, f64)>>;

fn buckets(pings: &[PingSample], start_ns: u64, end_ns: u64) -> (Line, Line) {
    let span_ns = end_ns.saturating_sub(start_ns).max(1);
    let mut per_bucket: Vec<Vec<u64>> = vec![Vec::new(); BUCKETS_COUNT];
    for p in pings {
        if p.sent_ns < start_ns || p.sent_ns >= end_ns {
            continue;
        }
        let i = ((p.sent_ns - start_ns) as u128 * BUCKETS_COUNT as u128 / span_ns as u128) as usize;
        per_bucket[i.min(BUCKETS_COUNT - 1)].push(p.latency_ns);
    }
    let mut max_line = Vec::with_capacity(BUCKETS_COUNT);
    let mut median_line = Vec::with_capacity(BUCKETS_COUNT);
    for (i, latencies) in per_bucket.iter_mut().enumerate() {
        if latencies.is_empty() {
            max_line.push(None);
            median_line.push(None);
            continue;
        }
        latencies.sort_unstable();
        let at_s = (start_ns + span_ns * i as u64 / BUCKETS_COUNT as u64) as f64 / 1e9;
        let max = latencies[latencies.len() - 1];
        let median = latencies[latencies.len() / 2];
        max_line.push(Some((at_s, max as f64 / 1e6)));
        median_line.push(Some((at_s, median as f64 / 1e6)));
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
