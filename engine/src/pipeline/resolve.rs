//! Resolving a command before it runs: the command table lookup with
//! subcommands (the only one: requests, scripts, CLIENT PAUSE, the OOM
//! check of a queued EXEC and COMMAND GETKEYS all use [`lookup`]; COMMAND
//! INFO and LATENCY HISTOGRAM name commands `parent|sub`, see
//! [`lookup_full_name`]), and a request's checks (auth, subcommand, arity)
//! with Redis's error replies.

use super::Resolved;
use crate::client::Client;
use crate::cmd::{lookup_subcommand, CommandSpec, CommandTable};
use crate::resp::ReplyWriter;
use crate::stats::CommandName;
use crate::util::sanitize;

/// What a request's name (and subcommand) find in the command table.
#[derive(Clone, Copy, Debug)]
pub enum Found {
    /// The spec that runs: the command, or a container's subcommand.
    Runs(Resolved),
    /// A container without a handler of its own, called without a
    /// subcommand.
    NoSubcommand(&'static CommandSpec),
    /// A container called with a subcommand it does not have.
    UnknownSubcommand(&'static CommandSpec),
}

impl Found {
    /// The top-level command.
    pub fn top(self) -> &'static CommandSpec {
        match self {
            Found::Runs((parent, spec)) => parent.unwrap_or(spec),
            Found::NoSubcommand(top) | Found::UnknownSubcommand(top) => top,
        }
    }
}

/// Redis's `lookupCommand`: the command `args` names, `None` if there is
/// none. A container dispatches on its subcommand; one with a handler of
/// its own (COMMAND) runs that handler when called without a subcommand.
pub fn lookup(table: &CommandTable, args: &[Vec<u8>]) -> Option<Found> {
    let top = table.lookup(args.first()?)?;
    if top.handler.is_some() && (top.subcommands.is_empty() || args.len() < 2) {
        return Some(Found::Runs((None, top)));
    }
    let Some(name) = args.get(1) else {
        return Some(Found::NoSubcommand(top));
    };
    Some(match lookup_subcommand(top, name) {
        Some(sub) => Found::Runs((Some(top), sub)),
        None => Found::UnknownSubcommand(top),
    })
}

/// Redis's `lookupCommandBySds`: `name` or `parent|sub`,
/// case-insensitively, as COMMAND INFO/DOCS and LATENCY HISTOGRAM name a
/// command.
pub fn lookup_full_name(table: &CommandTable, name: &[u8]) -> Option<Resolved> {
    match name.iter().position(|&b| b == b'|') {
        None => Some((None, table.lookup(name)?)),
        Some(bar) => {
            let parent = table.lookup(&name[..bar])?;
            let sub = lookup_subcommand(parent, &name[bar + 1..])?;
            Some((Some(parent), sub))
        }
    }
}

/// Finds the spec a request of client `c` runs, or writes the rejection
/// (unknown command, NOAUTH while `auth_required`, unknown subcommand,
/// wrong arity) and returns the command it is charged to (INFO
/// commandstats `rejected_calls`), if the command exists.
pub(super) fn request(
    table: &CommandTable,
    args: &[Vec<u8>],
    (c, auth_required): (&Client, bool),
    reply: &mut Vec<u8>,
) -> Result<Resolved, Option<CommandName>> {
    let mut w = ReplyWriter::new(reply, c.protocol);
    let Some(found) = lookup(table, args) else {
        w.error(&unknown_command_message(args));
        return Err(None);
    };
    let top = found.top();
    if auth_required && !top.has(crate::cmd::flags::NO_AUTH) {
        w.error("NOAUTH Authentication required.");
        return Err(Some(CommandName::of(None, top)));
    }
    let (parent, spec) = match found {
        Found::Runs(resolved) => resolved,
        Found::NoSubcommand(top) => {
            w.error(&format!(
                "ERR wrong number of arguments for '{}' command",
                top.name
            ));
            return Err(Some(CommandName::of(None, top)));
        }
        Found::UnknownSubcommand(top) => {
            w.error(&format!(
                "ERR unknown subcommand '{}'. Try {} HELP.",
                sanitize(&args[1], 128),
                top.name.to_ascii_uppercase()
            ));
            return Err(None);
        }
    };
    if !spec.arity_ok(args.len()) {
        let full = match parent {
            Some(p) if !spec.name.contains('|') => format!("{}|{}", p.name, spec.name),
            _ => spec.name.to_string(),
        };
        w.error(&format!(
            "ERR wrong number of arguments for '{full}' command"
        ));
        return Err(Some(CommandName::of(parent, spec)));
    }
    Ok((parent, spec))
}

/// In RESP2 subscribed mode, turns a resolved command other than the
/// subscribe family, PING, QUIT and RESET into Redis's rejection.
pub(super) fn reject_while_subscribed(
    resolved: Result<Resolved, Option<CommandName>>,
    reply: &mut Vec<u8>,
) -> Result<Resolved, Option<CommandName>> {
    let Ok((parent, spec)) = resolved else {
        return resolved;
    };
    let top = parent.unwrap_or(spec);
    if crate::commands::pubsub::allowed_while_subscribed(top.name) {
        return resolved;
    }
    let full = match parent {
        Some(p) if !spec.name.contains('|') => format!("{}|{}", p.name, spec.name),
        _ => spec.name.to_string(),
    };
    ReplyWriter::new(reply, crate::resp::Protocol::Resp2).error(
        &crate::commands::pubsub::not_allowed_while_subscribed(&full),
    );
    Err(Some(CommandName::of(parent, spec)))
}

/// A request while a script runs past `busy-reply-threshold`: refused
/// with the `-BUSY` text `busy` unless its command (or container) is
/// flagged allow-busy. Unknown commands and bad arity keep their own
/// errors, as in Redis, where those checks come first.
pub(super) fn reject_while_busy(
    resolved: Result<Resolved, Option<CommandName>>,
    busy: &str,
    reply: &mut Vec<u8>,
) -> Result<Resolved, Option<CommandName>> {
    let Ok((parent, spec)) = resolved else {
        return resolved;
    };
    if spec.has(crate::cmd::flags::ALLOW_BUSY) {
        return resolved;
    }
    ReplyWriter::new(reply, crate::resp::Protocol::Resp2).error(busy);
    Err(Some(CommandName::of(parent, spec)))
}

/// Redis's "unknown command" text: the name and up to 128 bytes of arguments.
fn unknown_command_message(args: &[Vec<u8>]) -> String {
    let mut rest = String::new();
    for a in &args[1..] {
        if rest.len() >= 128 {
            break;
        }
        let room = 128 - rest.len();
        rest.push_str(&format!("'{}' ", sanitize(a, room)));
    }
    format!(
        "ERR unknown command '{}', with args beginning with: {}",
        sanitize(&args[0], 128),
        rest
    )
}
