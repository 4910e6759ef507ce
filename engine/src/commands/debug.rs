//! DEBUG: SLEEP and HELP, as Redis 7.0.15's `debugCommand`.
//!
//! DEBUG is refused unless `enable-debug-command` allows it (`yes`, or
//! `local` for a client on 127.0.0.1 or ::1), with Redis's error text. Of
//! its many subcommands seedkv implements SLEEP, which the black-box probe
//! uses as a fault: the whole server stalls. The engine reads no clock, so
//! SLEEP hands its time to the host as an [`Event::Stall`], and the host
//! blocks its command thread for that long (the real server) or keeps its
//! CPU busy (the simulator).

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::commands::config::{config_get, help_reply};
use crate::event::Event;

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    name: "debug",
    arity: -2,
    flags: ADMIN | NOSCRIPT | LOADING | STALE,
    acl_categories: &["admin", "slow", "dangerous"],
    group: "server",
    summary: "A container for debugging commands",
    complexity: "Depends on subcommand.",
    handler: Some(debug),
    ..CommandSpec::DEFAULT
}];

/// Redis's refusal when `enable-debug-command` does not allow the client.
pub const NOT_ALLOWED: &str = "ERR DEBUG command not allowed. If the enable-debug-command \
    option is set to \"local\", you can run it from a local connection, otherwise you need \
    to set this option in the configuration file, and then restart the server.";

fn debug(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if !allowed(ctx) {
        return ctx.error(NOT_ALLOWED);
    }
    let sub = &args[1];
    if sub.eq_ignore_ascii_case(b"sleep") && args.len() == 3 {
        debug_sleep(ctx, &args[2]);
    } else if sub.eq_ignore_ascii_case(b"help") && args.len() == 2 {
        debug_help(ctx);
    } else {
        ctx.error(&format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try DEBUG HELP.",
            crate::util::sanitize(sub, 128)
        ));
    }
}

/// Redis's `allowProtectedAction(server.enable_debug_cmd, c)`: `local`
/// means a peer at exactly 127.0.0.1 or ::1 (`islocalClient`).
fn allowed(ctx: &mut Ctx) -> bool {
    match config_get(&ctx.server.config, "enable-debug-command").as_deref() {
        Some("yes") => true,
        Some("local") => is_local_addr(&ctx.client().info.addr),
        _ => false,
    }
}

/// Whether `addr` (`ip:port`, `[ip]:port` for IPv6) is 127.0.0.1 or ::1.
fn is_local_addr(addr: &str) -> bool {
    let ip = addr.rsplit_once(':').map_or(addr, |(ip, _port)| ip);
    let ip = ip.trim_start_matches('[').trim_end_matches(']');
    ip == "127.0.0.1" || ip == "::1"
}

/// DEBUG SLEEP seconds: replies OK and asks the host to serve nobody for
/// that long. Redis reads the seconds with `strtod` and checks nothing:
/// `abc` sleeps 0 s, a negative time does not sleep; it sleeps whole
/// microseconds.
fn debug_sleep(ctx: &mut Ctx, seconds: &[u8]) {
    let seconds = strtod(seconds);
    let sleep_us = if seconds.is_finite() && seconds > 0.0 {
        // `as` saturates, as a sleep this long would never end anyway.
        (seconds * 1_000_000.0) as u64
    } else {
        0
    };
    let duration_ns = sleep_us.saturating_mul(1_000);
    if duration_ns > 0 {
        ctx.events.push_back(Event::Stall { duration_ns });
    }
    ctx.ok();
}

/// C's `strtod` on the longest prefix that reads as a decimal number
/// (after leading spaces); 0 when there is none.
fn strtod(bytes: &[u8]) -> f64 {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_start();
    let b = text.as_bytes();
    let digits = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut end = if matches!(b.first(), Some(b'+' | b'-')) {
        1
    } else {
        0
    };
    let int_end = digits(end);
    let mut mantissa_digits = int_end - end;
    end = int_end;
    if b.get(end) == Some(&b'.') {
        let frac_end = digits(end + 1);
        mantissa_digits += frac_end - end - 1;
        end = frac_end;
    }
    if mantissa_digits == 0 {
        return 0.0;
    }
    if matches!(b.get(end), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(b.get(end + 1), Some(b'+' | b'-')));
        let exp_end = digits(end + 1 + sign);
        if exp_end > end + 1 + sign {
            end = exp_end;
        }
    }
    text[..end].parse().unwrap_or(0.0)
}

fn debug_help(ctx: &mut Ctx) {
    help_reply(
        ctx,
        "DEBUG",
        &[
            "SLEEP <seconds>",
            "    Stop the server for <seconds>. Decimals allowed.",
        ],
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtod_reads_the_longest_number_prefix() {
        for (text, value) in [
            ("1.5", 1.5),
            ("  2", 2.0),
            ("0.001", 0.001),
            ("1e-3x", 0.001),
            ("3e", 3.0),
            (".5", 0.5),
            ("5.", 5.0),
            ("-1", -1.0),
            ("+2.5s", 2.5),
            ("abc", 0.0),
            ("", 0.0),
            (".", 0.0),
            ("-", 0.0),
        ] {
            assert_eq!(strtod(text.as_bytes()), value, "{text:?}");
        }
    }

    #[test]
    fn local_means_exactly_127_0_0_1_or_ipv6_loopback() {
        assert!(is_local_addr("127.0.0.1:5000"));
        assert!(is_local_addr("[::1]:5000"));
        assert!(!is_local_addr("127.0.0.2:5000"));
        assert!(!is_local_addr("10.0.0.1:5000"));
        assert!(!is_local_addr(""));
    }
}
