//! The ACL step of admission: whether the client's user may run the
//! resolved command on its keys and channels (see [`crate::acl::check`]).
//! A request is checked where Redis's `processCommand` checks it (after
//! NOAUTH, before OOM and MULTI's queueing); a command of EXEC's queue is
//! checked again when EXEC runs it, since the user may have changed in
//! between; a script's `redis.call` is checked as its caller.

use super::Resolved;
use crate::acl::log::{Context, Entry, Reason};
use crate::acl::{check, Denied};
use crate::client::{Client, ClientId, Clients};
use crate::resp::ReplyWriter;
use crate::server::Server;
use crate::stats::CommandName;
use crate::time::Now;

/// The `argv-mem` of a client running EXEC, which has no arguments.
pub(crate) const EXEC_ARGV_BYTES: usize = b"exec".len();

/// Checks `resolved` for `client`; a denial is logged, answered with its
/// NOPERM error and turned into a rejection. `at_exec`: EXEC runs the
/// command from its queue. Returns the work done.
pub(super) fn request(
    (server, clients): (&mut Server, &Clients),
    (now, client, at_exec): (Now, ClientId, bool),
    resolved: &mut Result<Resolved, Option<CommandName>>,
    args: &[Vec<u8>],
    reply: &mut Vec<u8>,
) -> u64 {
    let Ok((parent, spec)) = *resolved else {
        return 0;
    };
    let c = &clients[&client];
    if c.repl_role == crate::repl::ClientRole::Master {
        // The primary's stream is not ACL-checked (Redis's master client
        // has no user).
        return 0;
    }
    let (result, work_units) = check_client(server, c, spec, args);
    let Err(denied) = result else {
        return work_units;
    };
    let context = match at_exec || c.tx.in_multi() {
        true => Context::Multi,
        false => Context::Toplevel,
    };
    // At EXEC, Redis's client is running EXEC, which its log line shows.
    let running = if at_exec { "exec" } else { spec.name };
    // EXEC takes no arguments: its own `argv-mem` is its name's length.
    let argv_bytes = match at_exec {
        true => EXEC_ARGV_BYTES,
        false => args.iter().map(Vec::len).sum(),
    };
    let caller = (c, argv_bytes);
    log_denial(
        server,
        caller,
        now,
        (context, running),
        (spec, denied),
        args,
    );
    let message = match at_exec {
        true => exec_message(denied),
        false => denied.noperm_message(&full_name(parent, spec)),
    };
    ReplyWriter::new(reply, c.protocol).error(&message);
    *resolved = Err(Some(CommandName::of(parent, spec)));
    work_units
}

/// Whether client `c`'s user may run `spec` with `args`, and the work the
/// check took. A user with every permission (the default user as it
/// starts) is not looked further into.
pub(crate) fn check_client(
    server: &Server,
    c: &Client,
    spec: &'static crate::cmd::CommandSpec,
    args: &[Vec<u8>],
) -> (Result<(), Denied>, u64) {
    let Some(user) = server.acl.user(&c.user) else {
        // A deleted user's clients are moved to the default user and
        // closed (see `acl::kill_clients_of`); nothing else lacks one.
        return (Err(Denied::Command), 1);
    };
    let root = user.root();
    if root.all_commands && root.all_keys && root.all_channels {
        return (Ok(()), 0);
    }
    let mut steps = 0;
    let args = server.planted.acl_checked_args(spec, args);
    let result = check::check(user, &server.acl.index, spec, &args, &mut steps);
    (result, crate::glob::work_units(steps))
}

/// Adds the denial to the ACL log: the command's full name, or the key or
/// channel refused. The entry shows client `c` running `running` with
/// arguments of `argv_bytes` bytes (a script's caller, its EVAL's).
pub(crate) fn log_denial(
    server: &mut Server,
    (c, argv_bytes): (&Client, usize),
    now: Now,
    (context, running): (Context, &'static str),
    (spec, denied): (&'static crate::cmd::CommandSpec, Denied),
    args: &[Vec<u8>],
) {
    let object = match denied {
        Denied::Command => {
            let id = server.acl.index.id_of(spec);
            id.map_or(spec.name.as_bytes().to_vec(), |id| {
                server.acl.index.commands[id].full_name.as_bytes().to_vec()
            })
        }
        Denied::Key(i) | Denied::Channel(i) => args[i].clone(),
    };
    let entry = Entry {
        count: 1,
        reason: Reason::of(denied),
        context,
        object,
        username: c.user.clone(),
        created_ms: now.unix_ms(),
        client_info: crate::commands::client::info_line_running(c, now, running, argv_bytes),
    };
    let entries_max = server.config.acllog_max_len;
    server.acl.log.add(entry, entries_max);
}

/// EXEC's message for a queued command the user may no longer run.
fn exec_message(denied: Denied) -> String {
    let reason = match denied {
        Denied::Command => "no permission to execute the command or subcommand",
        Denied::Key(_) => "no permission to touch the specified keys",
        Denied::Channel(_) => "no permission to access one of the channels used as arguments",
    };
    format!(
        "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: {reason}"
    )
}

fn full_name(parent: Option<&crate::cmd::CommandSpec>, spec: &crate::cmd::CommandSpec) -> String {
    match parent {
        Some(p) if !spec.name.contains('|') => format!("{}|{}", p.name, spec.name),
        _ => spec.name.to_string(),
    }
}
