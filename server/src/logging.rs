//! Redis-style log lines on stderr: `pid:M 14 Nov 2023 22:13:20.000 * text`.

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

/// A `*` (notice) line.
pub fn notice(msg: &str) {
    line('*', msg);
}

/// A `#` (warning) line.
pub fn warn(msg: &str) {
    line('#', msg);
}

fn line(level: char, msg: &str) {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let stderr = std::io::stderr();
    let mut out = stderr.lock();
    // Logging must never take the server down: a closed stderr is ignored.
    let _ = writeln!(
        out,
        "{}:M {} {level} {msg}",
        std::process::id(),
        format_timestamp_ms(ms)
    );
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `14 Nov 2023 22:13:20.000` (UTC) for milliseconds since the epoch.
pub fn format_timestamp_ms(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let (year, month, day) = civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{day:02} {} {year} {:02}:{:02}:{:02}.{:03}",
        MONTHS[(month - 1) as usize],
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        unix_ms % 1000
    )
}

/// Days since 1970-01-01 to (year, month 1..=12, day 1..=31), after Howard
/// Hinnant's `civil_from_days`, which works in 400-year eras so that leap
/// years need no table.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_render_like_redis() {
        assert_eq!(format_timestamp_ms(0), "01 Jan 1970 00:00:00.000");
        assert_eq!(
            format_timestamp_ms(1_700_000_000_123),
            "14 Nov 2023 22:13:20.123"
        );
        assert_eq!(
            format_timestamp_ms(951_782_400_000),
            "29 Feb 2000 00:00:00.000"
        );
    }
}
