//! SLOWLOG GET | LEN | RESET | HELP, and the slow log they read.
//!
//! After each command (a blocked one when it is unblocked) whose duration,
//! as the host's stopwatch measured it (see [`crate::stopwatch`]), is at
//! least `slowlog-log-slower-than` microseconds, an entry is added at the
//! head: id, unix time in seconds, duration in microseconds, the arguments,
//! the client's address and name. The log keeps the newest
//! `slowlog-max-len` entries. Commands flagged SKIP_SLOWLOG (EXEC) are never
//! logged.
//!
//! As in Redis 7.0:
//!
//! - an entry keeps at most [`ENTRY_ARGS_MAX`] arguments, the last one
//!   replaced by `... (N more arguments)`, and at most
//!   [`ENTRY_ARG_BYTES_MAX`] bytes of each, followed by `... (N more
//!   bytes)`;
//! - secrets are redacted: AUTH's arguments, HELLO's AUTH username and
//!   password, and CONFIG SET values of `requirepass`, `masterauth` and
//!   `masteruser` read `(redacted)`;
//! - ids keep counting across SLOWLOG RESET and CONFIG RESETSTAT, and an
//!   entry gets an id even when `slowlog-max-len` is 0 and it is dropped at
//!   once;
//! - a shorter `slowlog-max-len` takes effect at the next entry.
//!
//! A handler may take its arguments apart (SET moves its value into the
//! keyspace), so the engine captures the truncated arguments before the
//! handler runs ([`SlowLog::capture`]), into reused buffers, whenever the
//! log is enabled.

use std::collections::VecDeque;

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::commands::config::help_reply;
use crate::stats::CommandName;
use crate::util::parse_i64_strict;

/// Arguments an entry keeps (Redis's SLOWLOG_ENTRY_MAX_ARGC).
pub const ENTRY_ARGS_MAX: usize = 32;
/// Bytes of one argument an entry keeps (Redis's SLOWLOG_ENTRY_MAX_STRING).
pub const ENTRY_ARG_BYTES_MAX: usize = 128;
/// Entries SLOWLOG GET returns without a count.
const GET_COUNT_DEFAULT: usize = 10;
/// What a redacted argument reads.
const REDACTED: &[u8] = b"(redacted)";
/// CONFIG SET parameters whose values are secrets (Redis's SENSITIVE_CONFIG).
const SENSITIVE_CONFIGS: &[&str] = &["masterauth", "masteruser", "requirepass"];

/// One slow command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlowLogEntry {
    pub id: u64,
    pub unix_s: u64,
    pub duration_us: u64,
    /// Truncated and redacted as described in the module docs.
    pub args: Vec<Vec<u8>>,
    /// The client's `ip:port`.
    pub addr: String,
    /// The client's name, empty if it has none.
    pub name: Vec<u8>,
}

/// Who ran the command, for an entry.
#[derive(Clone, Copy, Debug)]
pub struct Origin<'a> {
    pub unix_s: u64,
    pub addr: &'a str,
    pub name: &'a [u8],
}

/// The slow log, newest entry first.
#[derive(Debug, Default)]
pub struct SlowLog {
    pub entries: VecDeque<SlowLogEntry>,
    /// The id of the next entry.
    pub next_id: u64,
    /// The current request's arguments, truncated, captured before its
    /// handler ran, back to back in one reused buffer (one copy per
    /// argument on every request, no per-argument buffer): argument `i`
    /// ends at `captured_ends[i]`, for `i < captured_len`.
    /// `captured_argc` is the request's full argument count.
    captured_bytes: Vec<u8>,
    captured_ends: [usize; ENTRY_ARGS_MAX],
    captured_len: usize,
    captured_argc: usize,
}

impl SlowLog {
    /// Whether commands must be captured and may be logged.
    pub fn enabled(config: &crate::Config) -> bool {
        config.slowlog_log_slower_than_us >= 0 && config.slowlog_max_len > 0
    }

    /// Copies what an entry would keep of `args` into reused buffers: at
    /// most `ENTRY_ARGS_MAX - 1` arguments when there are more (the last
    /// slot then counts the rest), each cut at `ENTRY_ARG_BYTES_MAX` bytes
    /// plus room for the length note.
    pub fn capture(&mut self, args: &[Vec<u8>]) {
        let kept = if args.len() > ENTRY_ARGS_MAX {
            ENTRY_ARGS_MAX - 1
        } else {
            args.len()
        };
        debug_assert!(kept <= ENTRY_ARGS_MAX);
        let bytes = &mut self.captured_bytes;
        bytes.clear();
        for (end, arg) in self.captured_ends.iter_mut().zip(&args[..kept]) {
            if arg.len() > ENTRY_ARG_BYTES_MAX {
                bytes.extend_from_slice(&arg[..ENTRY_ARG_BYTES_MAX]);
                let more = arg.len() - ENTRY_ARG_BYTES_MAX;
                bytes.extend_from_slice(format!("... ({more} more bytes)").as_bytes());
            } else {
                bytes.extend_from_slice(arg);
            }
            *end = bytes.len();
        }
        self.captured_len = kept;
        self.captured_argc = args.len();
    }

    /// Adds an entry for the captured request, `name` having run for
    /// `duration_us`, then drops the oldest entries beyond `max_len`.
    pub fn push(&mut self, max_len: usize, name: CommandName, duration_us: u64, origin: Origin) {
        let id = self.next_id;
        self.next_id += 1;
        if max_len > 0 {
            let mut args: Vec<Vec<u8>> = Vec::with_capacity(self.captured_len);
            let mut start = 0;
            for &end in &self.captured_ends[..self.captured_len] {
                args.push(self.captured_bytes[start..end].to_vec());
                start = end;
            }
            if self.captured_argc > self.captured_len {
                let more = self.captured_argc - self.captured_len;
                args.push(format!("... ({more} more arguments)").into_bytes());
            }
            debug_assert!(args.len() <= ENTRY_ARGS_MAX);
            redact(name, &mut args, self.captured_argc);
            self.entries.push_front(SlowLogEntry {
                id,
                unix_s: origin.unix_s,
                duration_us,
                args,
                addr: origin.addr.to_string(),
                name: origin.name.to_vec(),
            });
        }
        self.entries.truncate(max_len);
    }
}

/// Replaces secrets in `args` (an entry's arguments; `argc` is the
/// request's full count) by `(redacted)`, where Redis's commands call
/// `redactClientCommandArgument`.
fn redact(name: CommandName, args: &mut [Vec<u8>], argc: usize) {
    let hide = |i: usize, args: &mut [Vec<u8>]| {
        if let Some(a) = args.get_mut(i) {
            *a = REDACTED.to_vec();
        }
    };
    match (name.parent, name.name) {
        ("", "auth") => {
            for i in 1..args.len() {
                hide(i, args);
            }
        }
        ("", "hello") => {
            // HELLO protover [AUTH user pass] [SETNAME name]: redacted only
            // once the protocol version parsed and AUTH has both arguments.
            if args.len() < 2 || parse_i64_strict(&args[1]).is_none() {
                return;
            }
            let mut i = 2;
            while i < args.len() {
                let more = args.len() - i - 1;
                if args[i].eq_ignore_ascii_case(b"auth") && more >= 2 {
                    hide(i + 1, args);
                    hide(i + 2, args);
                    i += 3;
                } else if args[i].eq_ignore_ascii_case(b"setname") && more >= 1 {
                    i += 2;
                } else {
                    return;
                }
            }
        }
        // ACL SETUSER's rules may hold passwords: Redis redacts the user's
        // name and every rule, whether or not they parse.
        ("acl", "setuser") | ("", "acl|setuser") => {
            for i in 2..args.len() {
                hide(i, args);
            }
        }
        ("config", "set") | ("", "config|set") => {
            // An odd number of arguments is a syntax error, redacted nothing.
            if argc % 2 == 1 {
                return;
            }
            let mut i = 2;
            while i + 1 < args.len() {
                let param = String::from_utf8_lossy(&args[i]).to_ascii_lowercase();
                if SENSITIVE_CONFIGS.contains(&param.as_str()) {
                    hide(i + 1, args);
                }
                i += 2;
            }
        }
        _ => {}
    }
}

const SLOWLOG_SUB: CommandSpec = CommandSpec {
    arity: 2,
    flags: ADMIN | LOADING | STALE,
    acl_categories: &["admin", "slow", "dangerous"],
    group: "server",
    since: "2.2.12",
    tips: &["request_policy:all_nodes"],
    ..CommandSpec::DEFAULT
};

const SLOWLOG_SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "slowlog|reset",
        flags: ADMIN | LOADING | STALE | O_N,
        summary: "Clear all entries from the slow log",
        complexity: "O(N) where N is the number of entries in the slowlog",
        tips: &["request_policy:all_nodes", "response_policy:all_succeeded"],
        handler: Some(slowlog_reset),
        ..SLOWLOG_SUB
    },
    CommandSpec {
        name: "slowlog|get",
        arity: -2,
        flags: ADMIN | LOADING | STALE | O_N,
        summary: "Get the slow log's entries",
        complexity: "O(N) where N is the number of entries returned",
        tips: &["request_policy:all_nodes", "nondeterministic_output"],
        handler: Some(slowlog_get),
        ..SLOWLOG_SUB
    },
    CommandSpec {
        name: "slowlog|len",
        summary: "Get the slow log's length",
        tips: &[
            "request_policy:all_nodes",
            "response_policy:agg_sum",
            "nondeterministic_output",
        ],
        handler: Some(slowlog_len),
        ..SLOWLOG_SUB
    },
    CommandSpec {
        name: "slowlog|help",
        flags: LOADING | STALE,
        acl_categories: &["slow"],
        summary: "Show helpful text about the different subcommands",
        since: "6.2.0",
        tips: &[],
        handler: Some(slowlog_help),
        ..SLOWLOG_SUB
    },
];

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    name: "slowlog",
    arity: -2,
    acl_categories: &["slow"],
    group: "server",
    summary: "A container for slow log commands",
    since: "2.2.12",
    complexity: "Depends on subcommand.",
    subcommands: SLOWLOG_SUBCOMMANDS,
    ..CommandSpec::DEFAULT
}];

/// `SLOWLOG GET [count]`: the newest `count` entries (10 by default, -1
/// for all).
fn slowlog_get(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if args.len() > 3 {
        return ctx.error(&format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try {} HELP.",
            crate::util::sanitize(&args[1], 128),
            crate::util::sanitize(&args[0], 128).to_ascii_uppercase()
        ));
    }
    let log_len = ctx.server.stats.slowlog.entries.len();
    let count = match args.get(2) {
        None => GET_COUNT_DEFAULT.min(log_len),
        Some(arg) => match parse_i64_strict(arg) {
            Some(-1) => log_len,
            Some(n) if n >= 0 => (n as u64).min(log_len as u64) as usize,
            _ => return ctx.error("ERR count should be greater than or equal to -1"),
        },
    };
    let mut units = 0;
    let mut w = crate::resp::ReplyWriter::new(&mut ctx.reply, ctx.protocol);
    w.array_len(count);
    for e in ctx.server.stats.slowlog.entries.iter().take(count) {
        w.array_len(6);
        w.int(e.id as i64);
        w.int(e.unix_s as i64);
        w.int(e.duration_us.min(i64::MAX as u64) as i64);
        w.array_len(e.args.len());
        for a in &e.args {
            w.bulk(a);
        }
        w.bulk(e.addr.as_bytes());
        w.bulk(&e.name);
        units += 1 + e.args.len() as u64;
    }
    ctx.work(units);
}

fn slowlog_len(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let len = ctx.server.stats.slowlog.entries.len();
    ctx.int(len as i64);
}

fn slowlog_reset(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let freed = std::mem::take(&mut ctx.server.stats.slowlog.entries);
    ctx.work(freed.len() as u64);
    drop(freed);
    ctx.ok();
}

fn slowlog_help(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    help_reply(
        ctx,
        "SLOWLOG",
        &[
            "GET [<count>]",
            "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
            "    Entries are made of:",
            "    id, timestamp, time in microseconds, arguments array, client IP and port,",
            "    client name",
            "LEN",
            "    Return the length of the slowlog.",
            "RESET",
            "    Reset the slowlog.",
        ],
    );
}

#[cfg(test)]
mod tests;
