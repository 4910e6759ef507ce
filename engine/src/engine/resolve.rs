//! Resolving a request to its command spec before it runs: lookup, auth,
//! subcommand and arity checks, with Redis's error replies.

use super::*;

/// Finds the spec to run, or writes the rejection (unknown command, wrong
/// arity, NOAUTH) and returns the command it is charged to (INFO
/// commandstats `rejected_calls`), if the command exists.
pub(super) fn resolve(
    table: &CommandTable,
    args: &[Vec<u8>],
    reply: &mut Vec<u8>,
    protocol: crate::resp::Protocol,
    authenticated: bool,
) -> Result<Resolved, Option<CommandName>> {
    let mut w = ReplyWriter::new(reply, protocol);
    let Some(spec) = table.lookup(&args[0]) else {
        w.error(&unknown_command_message(args));
        return Err(None);
    };
    if !authenticated && !spec.has(crate::cmd::flags::NO_AUTH) {
        w.error("NOAUTH Authentication required.");
        return Err(Some(CommandName::of(None, spec)));
    }
    // A container dispatches on its subcommand; one with a handler of its
    // own (COMMAND) runs that handler when called without a subcommand.
    if spec.handler.is_none() || (!spec.subcommands.is_empty() && args.len() >= 2) {
        if args.len() < 2 {
            w.error(&format!(
                "ERR wrong number of arguments for '{}' command",
                spec.name
            ));
            return Err(Some(CommandName::of(None, spec)));
        }
        let Some(sub) = lookup_subcommand(spec, &args[1]) else {
            w.error(&format!(
                "ERR unknown subcommand '{}'. Try {} HELP.",
                sanitize(&args[1], 128),
                spec.name.to_ascii_uppercase()
            ));
            return Err(None);
        };
        if !sub.arity_ok(args.len()) {
            let full = if sub.name.contains('|') {
                sub.name.to_string()
            } else {
                format!("{}|{}", spec.name, sub.name)
            };
            w.error(&format!(
                "ERR wrong number of arguments for '{full}' command"
            ));
            return Err(Some(CommandName::of(Some(spec), sub)));
        }
        return Ok((Some(spec), sub));
    }
    if !spec.arity_ok(args.len()) {
        w.error(&format!(
            "ERR wrong number of arguments for '{}' command",
            spec.name
        ));
        return Err(Some(CommandName::of(None, spec)));
    }
    Ok((None, spec))
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

/// Redis's "unknown command" text: the name and up to 128 bytes of arguments.
pub(super) fn unknown_command_message(args: &[Vec<u8>]) -> String {
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
