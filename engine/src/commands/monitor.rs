//! MONITOR: a client that streams every command executed by the server
//! (Redis's `monitorCommand` and `replicationFeedMonitors`).
//!
//! A command is fed after it ran, with the database its client has selected
//! then (so `SELECT 3` shows as `[3 ...]`), unless it is flagged ADMIN or
//! SKIP_MONITOR or was rejected before running. Commands queued in MULTI
//! are fed when EXEC runs them, so a monitor sees MULTI, the commands, then
//! EXEC. Passwords (AUTH, HELLO ... AUTH) are shown as `(redacted)`, as in
//! Redis 7. A monitoring client may still run commands that do not touch
//! the keyspace (PING, QUIT, RESET ends monitoring); keyspace commands are
//! rejected as for a replica.

use std::collections::VecDeque;

use crate::client::{ClientId, Clients};
use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::time::Now;

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    name: "monitor",
    arity: 1,
    flags: ADMIN | NOSCRIPT | LOADING | STALE,
    acl_categories: &["admin", "slow", "dangerous"],
    group: "server",
    summary: "Listen for all requests received by the server in real time",
    handler: Some(monitor),
    ..CommandSpec::DEFAULT
}];

/// The error a monitoring client gets for a command that touches keys.
pub const REPLICA_KEYSPACE_ERROR: &str = "ERR Replica can't interact with the keyspace";

/// Upper bound on the bytes of one argument shown in a MONITOR line; Redis
/// shows all, but a line per command must stay bounded, so longer arguments
/// are cut (Redis's own default proto-max-bulk-len is 512 MB; this bound is
/// far above anything the tests or the simulator send).
pub const ARG_SHOWN_BYTES_MAX: usize = 1 << 20;

fn monitor(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let c = ctx.client();
    if c.deny_blocking {
        // Inside MULTI: it expects one reply per command.
        ctx.error("ERR MONITOR isn't allowed for DENY BLOCKING client");
        return;
    }
    if c.monitor {
        // Redis replies nothing to a second MONITOR.
        return;
    }
    c.monitor = true;
    let id = c.id;
    ctx.server.monitors.push(id);
    ctx.ok();
}

/// Stops `client` monitoring (RESET, disconnect).
pub fn stop(monitors: &mut Vec<ClientId>, client: &mut crate::client::Client) {
    if client.monitor {
        client.monitor = false;
        monitors.retain(|&id| id != client.id);
    }
}

/// Whether the command `spec` is shown to monitors.
pub fn is_fed(spec: &CommandSpec) -> bool {
    !spec.has(ADMIN) && !spec.has(SKIP_MONITOR)
}

/// The line monitors get for `args` run by `caller` in `db`:
/// `+<seconds>.<micros> [<db> <addr>] "arg" ...` (without CRLF).
pub fn line(now: Now, db: usize, addr: &str, args: &[Vec<u8>]) -> Vec<u8> {
    let mut out = format!(
        "+{}.{:06} [{} {}]",
        now.unix_us / 1_000_000,
        now.unix_us % 1_000_000,
        db,
        addr
    )
    .into_bytes();
    let redacted = redacted_from(args);
    for (i, arg) in args.iter().enumerate() {
        out.push(b' ');
        if redacted.is_some_and(|from| i >= from) {
            out.extend_from_slice(b"\"(redacted)\"");
        } else {
            cat_repr(&mut out, &arg[..arg.len().min(ARG_SHOWN_BYTES_MAX)]);
        }
    }
    out
}

/// Index of the first argument shown as `(redacted)`: AUTH's arguments,
/// and HELLO's from AUTH's username on (Redis redacts the username and
/// password; SETNAME after them is shown, but `HELLO 3 AUTH u p SETNAME n`
/// is rare enough that we redact the rest of the line instead).
fn redacted_from(args: &[Vec<u8>]) -> Option<usize> {
    let name = args.first()?;
    if name.eq_ignore_ascii_case(b"auth") {
        return Some(1);
    }
    if name.eq_ignore_ascii_case(b"hello") {
        return args
            .iter()
            .position(|a| a.eq_ignore_ascii_case(b"auth"))
            .map(|i| i + 1);
    }
    None
}

/// Redis's `sdscatrepr`: a quoted string with C escapes.
pub fn cat_repr(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'"');
    for &b in bytes {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'"' => out.extend_from_slice(b"\\\""),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            7 => out.extend_from_slice(b"\\a"),
            8 => out.extend_from_slice(b"\\b"),
            0x20..=0x7e => out.push(b),
            _ => out.extend_from_slice(format!("\\x{b:02x}").as_bytes()),
        }
    }
    out.push(b'"');
}

/// Appends `line` (with CRLF) to every monitor's output, queueing for
/// transmit the monitors that had none.
pub fn feed(
    monitors: &[ClientId],
    clients: &mut Clients,
    transmit: &mut VecDeque<ClientId>,
    line: &[u8],
) {
    for id in monitors {
        let Some(m) = clients.get_mut(id) else {
            continue;
        };
        if m.closing.is_some() {
            continue;
        }
        let had_output = !m.pending_output().is_empty();
        m.output.extend_from_slice(line);
        m.output.extend_from_slice(b"\r\n");
        if !had_output && !transmit.contains(id) {
            transmit.push_back(*id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repr_escapes_like_sdscatrepr() {
        let mut out = Vec::new();
        cat_repr(&mut out, b"a\"b\\c\n\r\t\x07\x08\x01\xff ");
        assert_eq!(out, b"\"a\\\"b\\\\c\\n\\r\\t\\a\\b\\x01\\xff \"".to_vec());
    }

    #[test]
    fn auth_and_hello_auth_are_redacted() {
        let args = |s: &str| {
            s.split(' ')
                .map(|a| a.as_bytes().to_vec())
                .collect::<Vec<_>>()
        };
        let now = Now {
            mono_ns: 0,
            unix_us: 1_700_000_000_000_042,
        };
        let l = line(now, 0, "1.2.3.4:5", &args("AUTH u p"));
        assert_eq!(
            l,
            b"+1700000000.000042 [0 1.2.3.4:5] \"AUTH\" \"(redacted)\" \"(redacted)\"".to_vec()
        );
        let l = line(now, 2, "x", &args("HELLO 3 AUTH u p"));
        assert_eq!(
            l,
            b"+1700000000.000042 [2 x] \"HELLO\" \"3\" \"AUTH\" \"(redacted)\" \"(redacted)\""
                .to_vec()
        );
    }
}
