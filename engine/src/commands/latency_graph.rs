//! The text reports of LATENCY: GRAPH's ASCII sparkline (Redis's
//! sparkline.c) and DOCTOR's analysis and advice (Redis's
//! `createLatencyReport`), kept apart from the command handlers because
//! they are long and only about formatting.

use crate::commands::latency::{
    LatencyMonitor, TimeSeries, EVENT_COMMAND, EVENT_FAST_COMMAND, SAMPLES_MAX,
};
use crate::config::Config;

/// Characters of a filled sparkline, lowest first; a column taller than a
/// row is drawn with `|`.
const FILL_CHARS: &[u8] = b"_o#";
/// Blank lines between the graph and its labels.
const LABEL_MARGIN_TOP: usize = 1;

/// Appends the sparkline of `points` (value, label), `columns` points per
/// block of `rows` rows, each block followed by its labels written
/// vertically, as Redis's `sparklineRender` with SPARKLINE_FILL does.
pub fn render_sparkline(out: &mut String, points: &[(f64, String)], columns: usize, rows: usize) {
    debug_assert!(columns > 0 && rows > 0);
    let min = points.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let max = points.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    let labels = points.iter().filter(|p| !p.1.is_empty()).count();
    for (block, chunk) in points.chunks(columns).enumerate() {
        if block > 0 {
            out.push('\n');
        }
        render_range(out, chunk, (min, max), labels > 0, rows);
    }
}

/// One block of the sparkline: `rows` rows of bars, then the labels.
fn render_range(
    out: &mut String,
    points: &[(f64, String)],
    (min, max): (f64, f64),
    has_labels: bool,
    rows: usize,
) {
    let relmax = if max - min == 0.0 { 1.0 } else { max - min };
    let steps = (FILL_CHARS.len() * rows) as i64;
    let label_len_max = points.iter().map(|p| p.1.len()).max().unwrap_or(0);
    // Bars, the margin, then one row per label character: every row past
    // that would be blank, which is where Redis's loop stops.
    let rows_total = rows + if has_labels { LABEL_MARGIN_TOP } else { 0 } + label_len_max;
    let mut chars = vec![b' '; points.len()];
    for row in 0..rows_total {
        chars.fill(b' ');
        let mut any = false;
        for (j, (value, label)) in points.iter().enumerate() {
            if row < rows {
                // Redis truncates relval × steps to an int before dividing.
                let step = (((value - min) * steps as f64).trunc() / relmax) as i64;
                let step = step.clamp(0, steps - 1);
                let charidx = step - ((rows - row - 1) * FILL_CHARS.len()) as i64;
                any = true;
                if (0..FILL_CHARS.len() as i64).contains(&charidx) {
                    chars[j] = FILL_CHARS[charidx as usize];
                } else if charidx >= FILL_CHARS.len() as i64 {
                    chars[j] = b'|';
                }
            } else if has_labels && row - rows < LABEL_MARGIN_TOP {
                any = true;
                break;
            } else if let Some(&c) = label
                .as_bytes()
                .get(row - rows - usize::from(has_labels) * LABEL_MARGIN_TOP)
            {
                any = true;
                chars[j] = c;
            }
        }
        if !any {
            break;
        }
        out.push_str(&String::from_utf8_lossy(&chars));
        out.push('\n');
    }
}

/// What LATENCY DOCTOR reports of one event (Redis's `latencyStats`).
#[derive(Debug, Default, PartialEq, Eq)]
struct EventStats {
    samples: u64,
    avg_ms: u64,
    mad_ms: u64,
    /// Seconds from the oldest sample to now, at least 1.
    period_s: u64,
}

fn analyze(ts: &TimeSeries, now_s: u64) -> EventStats {
    let samples: Vec<_> = ts.samples().collect();
    debug_assert!(samples.len() <= SAMPLES_MAX);
    if samples.is_empty() {
        return EventStats::default();
    }
    let n = samples.len() as u64;
    let sum: u64 = samples.iter().map(|s| s.latency_ms).sum();
    let avg_ms = sum / n;
    let oldest_s = samples.iter().map(|s| s.unix_s).min().unwrap_or(now_s);
    let deviation: u64 = samples.iter().map(|s| avg_ms.abs_diff(s.latency_ms)).sum();
    EventStats {
        samples: n,
        avg_ms,
        mad_ms: deviation / n,
        period_s: now_s.saturating_sub(oldest_s).max(1),
    }
}

/// LATENCY DOCTOR's text. Of Redis's advice, only what applies to the
/// events this engine records (command, fast-command, command-unblocking)
/// can appear; it has no fork, AOF, eviction or THP to advise on.
pub fn doctor_report(monitor: &LatencyMonitor, config: &Config, now_s: u64) -> String {
    let threshold_ms = config.latency_monitor_threshold_ms;
    if monitor.events.is_empty() && threshold_ms == 0 {
        return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n".to_string();
    }
    let mut out = String::new();
    let mut advices = 0;
    let (mut slowlog_enabled, mut slowlog_tuning, mut slowlog_inspect) = (false, false, false);
    let (mut scheduler, mut large_objects) = (false, false);
    for (i, (event, ts)) in monitor.events.iter().enumerate() {
        if i == 0 {
            out.push_str("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n");
        }
        let ls = analyze(ts, now_s);
        let per_sample_s = ls.period_s as f64 / ls.samples.max(1) as f64;
        out.push_str(&format!(
            "{}. {event}: {} latency spikes (average {}ms, mean deviation {}ms, period {per_sample_s:.2} sec). Worst all time event {}ms.",
            i + 1,
            ls.samples,
            ls.avg_ms,
            ls.mad_ms,
            ts.max_ms
        ));
        if *event == EVENT_COMMAND {
            if config.slowlog_log_slower_than_us < 0 {
                slowlog_enabled = true;
                advices += 1;
            } else if config.slowlog_log_slower_than_us as u64 / 1000 > threshold_ms {
                slowlog_tuning = true;
                advices += 1;
            }
            slowlog_inspect = true;
            large_objects = true;
            advices += 2;
        }
        if *event == EVENT_FAST_COMMAND {
            scheduler = true;
            advices += 1;
        }
        out.push('\n');
    }
    if monitor.events.is_empty() && advices == 0 {
        out.push_str("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n");
        return out;
    }
    if advices == 0 {
        out.push_str("\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis community to get some help, providing this report in your help request.\n");
        return out;
    }
    out.push_str("\nI have a few advices for you:\n\n");
    let suggested_us = threshold_ms.saturating_mul(1000);
    if slowlog_enabled {
        out.push_str(&format!("- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than {suggested_us}'. If the Slow log is disabled Redis is not able to log slow commands execution for you.\n"));
    }
    if slowlog_tuning {
        out.push_str(&format!("- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than {suggested_us}'.\n"));
    }
    if slowlog_inspect {
        out.push_str("- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n");
    }
    if scheduler {
        out.push_str("- The system is slow to execute Redis code paths not containing system calls. This usually means the system does not provide Redis CPU time to run for long periods. You should try to:\n  1) Lower the system load.\n  2) Use a computer / VM just for Redis if you are running other software in the same system.\n  3) Check if you have a \"noisy neighbour\" problem.\n  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your system.\n  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if you are using Jemalloc. However this may create fragmentation problems.\n");
    }
    if large_objects {
        out.push_str("- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sample_graph_like_redis() {
        // redis-server 7.0.15 drew this for one 1 ms sample 0 s ago.
        let mut out = String::new();
        render_sparkline(&mut out, &[(1.0, "0s".into())], 80, 4);
        assert_eq!(out, " \n \n \n_\n \n0\ns\n");
    }

    #[test]
    fn rising_samples_fill_upwards() {
        let points: Vec<(f64, String)> = (0..4).map(|v| (v as f64, format!("{v}s"))).collect();
        let mut out = String::new();
        render_sparkline(&mut out, &points, 80, 2);
        // steps = 6: values 0..3 map to steps 0, 2, 4, 5.
        assert_eq!(out, "  o#\n_#||\n    \n0123\nssss\n");
    }

    #[test]
    fn long_sequences_wrap_into_blocks() {
        let points: Vec<(f64, String)> = (0..3).map(|v| (v as f64, String::new())).collect();
        let mut out = String::new();
        render_sparkline(&mut out, &points, 2, 1);
        assert_eq!(out, "_o\n\n#\n");
    }
}
