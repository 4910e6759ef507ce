//! Logging through `tracing`, written as Redis writes its log on stderr:
//! `pid:M 14 Nov 2023 22:13:20.000 * text`.
//!
//! The server logs with `tracing` events (through [`notice`] and [`warn`]);
//! the binary installs [`RedisStyleLog`] as the global subscriber, which
//! renders each event as one Redis log line, with Redis's level marks
//! (`.` debug, `-` verbose, `*` notice, `#` warning). Embedders (tests,
//! turmoil) may install any other subscriber, or none.

use std::fmt::Write as _;
use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use tracing::field::{Field, Visit};
use tracing::{span, Event, Level, Metadata, Subscriber};

/// A notice (`*`) event.
pub fn notice(msg: &str) {
    tracing::info!(target: "seedkv", "{msg}");
}

/// A warning (`#`) event.
pub fn warn(msg: &str) {
    tracing::warn!(target: "seedkv", "{msg}");
}

/// A `tracing` subscriber that writes each event at `max_level` or more
/// severe as one Redis-style line on stderr. It keeps no spans: the server
/// has none worth a line.
pub struct RedisStyleLog {
    pub max_level: Level,
}

impl RedisStyleLog {
    /// Installs the subscriber for the whole process (once; later calls are
    /// ignored, as the first subscriber wins).
    pub fn install(max_level: Level) {
        let _ = tracing::subscriber::set_global_default(RedisStyleLog { max_level });
    }
}

impl Subscriber for RedisStyleLog {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        *metadata.level() <= self.max_level
    }

    fn new_span(&self, _span: &span::Attributes<'_>) -> span::Id {
        span::Id::from_u64(1)
    }

    fn record(&self, _span: &span::Id, _values: &span::Record<'_>) {}

    fn record_follows_from(&self, _span: &span::Id, _follows: &span::Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut text = MessageText(String::new());
        event.record(&mut text);
        let mark = match *event.metadata().level() {
            Level::ERROR | Level::WARN => '#',
            Level::INFO => '*',
            Level::DEBUG => '-',
            Level::TRACE => '.',
        };
        line(mark, &text.0);
    }

    fn enter(&self, _span: &span::Id) {}

    fn exit(&self, _span: &span::Id) {}
}

/// Collects an event's message, then its other fields as ` name=value`.
struct MessageText(String);

impl Visit for MessageText {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.insert_str(0, value);
        } else {
            let _ = write!(self.0, " {}={value}", field.name());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let message = format!("{value:?}");
            self.0.insert_str(0, &message);
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
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
