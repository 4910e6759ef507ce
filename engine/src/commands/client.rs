//! CLIENT: ID SETNAME GETNAME LIST INFO KILL UNBLOCK PAUSE UNPAUSE NO-EVICT
//! REPLY SETINFO HELP, and client-side caching's TRACKING CACHING GETREDIR
//! TRACKINGINFO (in `client/tracking.rs`).
//!
//! CLIENT LIST and CLIENT INFO print Redis 7.0.15's fields in its order.
//! Memory fields are estimates from the buffers the engine holds; `multi=`
//! and the `x` flag show a MULTI being queued and an EXEC running it (Redis
//! keeps both until EXEC ends), and a command EXEC runs is shown as EXEC
//! with EXEC's `argv-mem`, as Redis's `cmd=` and `argv-mem` are those of the
//! request it read. `CLIENT SETINFO` (Redis 7.2) is accepted because client
//! libraries send it on connect, but, as in 7.0, `lib-name`/`lib-ver` are
//! not printed.

use std::fmt::Write as _;

use crate::client::{Client, ClientId, CloseReason};
use crate::clients::close_client;
use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::commands::config::help_reply;
use crate::commands::connection::super_validate_name;
use crate::pause::PauseMode;
use crate::time::Now;
use crate::util::parse_i64_strict;

/// What CLIENT LIST reports as `rbs`: Redis's initial reply buffer size
/// (PROTO_REPLY_CHUNK_BYTES); seedkv's output buffer is one growable vector.
const REPLY_BUFFER_BYTES: usize = 16 * 1024;

const CLIENT: CommandSpec = CommandSpec {
    group: "connection",
    flags: NOSCRIPT | LOADING | STALE,
    acl_categories: &["slow", "connection"],
    ..CommandSpec::DEFAULT
};

const CLIENT_ADMIN: CommandSpec = CommandSpec {
    flags: ADMIN | NOSCRIPT | LOADING | STALE,
    acl_categories: &["admin", "slow", "dangerous", "connection"],
    ..CLIENT
};

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    name: "client",
    arity: -2,
    flags: 0,
    acl_categories: &["slow"],
    since: "2.4.0",
    summary: "A container for client connection commands",
    complexity: "Depends on subcommand.",
    subcommands: &[
        CommandSpec {
            name: "client|id",
            arity: 2,
            since: "5.0.0",
            summary: "Returns the client ID for the current connection",
            handler: Some(client_id),
            ..CLIENT
        },
        CommandSpec {
            name: "client|setname",
            arity: 3,
            since: "2.6.9",
            summary: "Set the current connection name",
            handler: Some(client_setname),
            ..CLIENT
        },
        CommandSpec {
            name: "client|getname",
            arity: 2,
            since: "2.6.9",
            summary: "Get the current connection name",
            handler: Some(client_getname),
            ..CLIENT
        },
        CommandSpec {
            name: "client|list",
            arity: -2,
            since: "2.4.0",
            summary: "Get the list of client connections",
            complexity: "O(N) where N is the number of client connections",
            tips: &["nondeterministic_output"],
            handler: Some(client_list),
            ..CLIENT_ADMIN
        },
        CommandSpec {
            name: "client|info",
            arity: 2,
            since: "6.2.0",
            summary: "Returns information about the current client connection.",
            tips: &["nondeterministic_output"],
            handler: Some(client_info),
            ..CLIENT
        },
        CommandSpec {
            name: "client|kill",
            arity: -3,
            since: "2.4.0",
            summary: "Kill the connection of a client",
            complexity: "O(N) where N is the number of client connections",
            handler: Some(client_kill),
            ..CLIENT_ADMIN
        },
        CommandSpec {
            name: "client|unblock",
            arity: -3,
            since: "5.0.0",
            summary: "Unblock a client blocked in a blocking command from a different connection",
            complexity: "O(log N) where N is the number of client connections",
            handler: Some(client_unblock),
            ..CLIENT_ADMIN
        },
        CommandSpec {
            name: "client|pause",
            arity: -3,
            since: "2.9.50",
            summary: "Stop processing commands from clients for some time",
            handler: Some(client_pause),
            ..CLIENT_ADMIN
        },
        CommandSpec {
            name: "client|unpause",
            arity: 2,
            since: "6.2.0",
            summary: "Resume processing of clients that were paused",
            complexity: "O(N) Where N is the number of paused clients",
            handler: Some(client_unpause),
            ..CLIENT_ADMIN
        },
        CommandSpec {
            name: "client|no-evict",
            arity: 3,
            since: "7.0.0",
            summary: "Set client eviction mode for the current connection",
            handler: Some(client_no_evict),
            ..CLIENT_ADMIN
        },
        CommandSpec {
            name: "client|reply",
            arity: 3,
            since: "3.2.0",
            summary: "Instruct the server whether to reply to commands",
            handler: Some(client_reply),
            ..CLIENT
        },
        CommandSpec {
            name: "client|tracking",
            arity: -3,
            since: "6.0.0",
            summary: "Enable or disable server assisted client side caching support",
            complexity: "O(1). Some options may introduce additional complexity.",
            handler: Some(tracking::client_tracking),
            ..CLIENT
        },
        CommandSpec {
            name: "client|caching",
            arity: 3,
            since: "6.0.0",
            summary: "Instruct the server about tracking or not keys in the next request",
            handler: Some(tracking::client_caching),
            ..CLIENT
        },
        CommandSpec {
            name: "client|getredir",
            arity: 2,
            since: "6.0.0",
            summary: "Get tracking notifications redirection client ID if any",
            handler: Some(tracking::client_getredir),
            ..CLIENT
        },
        CommandSpec {
            name: "client|trackinginfo",
            arity: 2,
            since: "6.2.0",
            summary: "Return information about server assisted client side caching for the \
                      current connection",
            handler: Some(tracking::client_trackinginfo),
            ..CLIENT
        },
        CommandSpec {
            name: "client|setinfo",
            arity: 4,
            since: "7.2.0",
            summary: "Set client or connection specific info",
            handler: Some(client_setinfo),
            ..CLIENT
        },
        CommandSpec {
            name: "client|help",
            arity: 2,
            since: "5.0.0",
            flags: LOADING | STALE,
            summary: "Show helpful text about the different subcommands",
            handler: Some(client_help),
            ..CLIENT
        },
    ],
    ..CLIENT
}];

fn client_id(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    ctx.int(ctx.client_id.0 as i64);
}

fn client_setname(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if let Err(e) = super_validate_name(&args[2]) {
        return ctx.error(e);
    }
    let name = std::mem::take(&mut args[2]);
    ctx.client().name = if name.is_empty() { None } else { Some(name) };
    ctx.ok();
}

fn client_getname(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    match ctx.client().name.clone() {
        Some(name) => ctx.bulk(&name),
        None => ctx.null(),
    }
}

fn client_no_evict(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let on = if args[2].eq_ignore_ascii_case(b"on") {
        true
    } else if args[2].eq_ignore_ascii_case(b"off") {
        false
    } else {
        return ctx.error("ERR syntax error");
    };
    ctx.client().no_evict = on;
    ctx.ok();
}

/// CLIENT REPLY ON|OFF|SKIP. OFF and SKIP have no reply of their own; the
/// pipeline drops the replies they suppress (see [`crate::reply_mode`]).
fn client_reply(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let mode = &mut ctx.client().reply_mode;
    if args[2].eq_ignore_ascii_case(b"on") {
        mode.on();
        ctx.ok();
    } else if args[2].eq_ignore_ascii_case(b"off") {
        mode.off = true;
    } else if args[2].eq_ignore_ascii_case(b"skip") {
        mode.skip_next_command();
    } else {
        ctx.error("ERR syntax error");
    }
}

/// Redis 7.2's CLIENT SETINFO LIB-NAME / LIB-VER.
fn client_setinfo(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let attr = String::from_utf8_lossy(&args[2]).to_ascii_lowercase();
    let value = std::mem::take(&mut args[3]);
    if attr != "lib-name" && attr != "lib-ver" {
        return ctx.error(&format!(
            "ERR Unrecognized option '{}'",
            crate::util::sanitize(&args[2], 128)
        ));
    }
    if value.iter().any(|&c| !(b'!'..=b'~').contains(&c)) {
        return ctx.error(&format!(
            "ERR {attr} cannot contain spaces, newlines or special characters."
        ));
    }
    let value = if value.is_empty() { None } else { Some(value) };
    let c = ctx.client();
    if attr == "lib-name" {
        c.lib_name = value;
    } else {
        c.lib_ver = value;
    }
    ctx.ok();
}

/// The calling command, which CLIENT LIST describes as in flight.
struct Current {
    id: ClientId,
    cmd: &'static str,
    argv_bytes: usize,
}

/// A request CLIENT PAUSE holds. Redis blocks a postponed client after
/// looking its command up, so CLIENT LIST shows it with the `b` flag, its
/// command as `cmd=` and its arguments in `argv-mem`.
struct Held {
    cmd: &'static str,
    argv_bytes: usize,
}

/// The request of `id` that CLIENT PAUSE holds, if any.
fn held(ctx: &Ctx, id: ClientId) -> Option<Held> {
    let args = ctx.server.pause.held_args(id)?;
    let cmd = match crate::pipeline::lookup(&ctx.server.commands, args) {
        Some(crate::pipeline::Found::Runs((_, spec))) => spec.name,
        _ => ctx.clients.get(&id).map_or("NULL", |c| c.last_command),
    };
    let argv_bytes = args.iter().map(Vec::len).sum();
    Some(Held { cmd, argv_bytes })
}

/// One CLIENT LIST line (without the trailing newline), Redis 7.0.15 fields.
/// Bytes: the user name is printed as it is, as Redis does (the other
/// fields are ASCII; CLIENT SETNAME refuses anything else).
fn info_line(c: &Client, now: Now, current: &Current, held: Option<Held>) -> Vec<u8> {
    let is_current = c.id == current.id;
    let age_s = now.mono_ns.saturating_sub(c.created.mono_ns) / 1_000_000_000;
    let idle_s = if is_current {
        0
    } else {
        now.mono_ns.saturating_sub(c.last_interaction.mono_ns) / 1_000_000_000
    };
    let mut flags = String::new();
    match c.repl_role {
        crate::repl::ClientRole::Replica => flags.push('S'),
        crate::repl::ClientRole::Master => flags.push('M'),
        crate::repl::ClientRole::Normal => {}
    }
    if !c.subscriptions.is_empty() {
        flags.push('P');
    }
    if c.tx.queued_count().is_some() {
        flags.push('x');
    }
    if c.blocked.is_some() || c.waiting_acks || held.is_some() {
        flags.push('b');
    }
    if c.tracking.on {
        flags.push('t');
    }
    if c.tracking.broken_redirect {
        flags.push('R');
    }
    if c.tracking.bcast {
        flags.push('B');
    }
    if c.tx.dirty_cas {
        flags.push('d');
    }
    match c.closing {
        Some(CloseReason::Quit) => flags.push('c'),
        Some(_) => flags.push('A'),
        None => {}
    }
    if c.no_evict {
        flags.push('e');
    }
    if flags.is_empty() {
        flags.push('N');
    }
    let qbuf = c.parser.buffered_bytes();
    // A blocked client still holds its command's arguments, as in Redis.
    let (cmd, argv_mem) = match (&c.blocked, held) {
        _ if is_current => (current.cmd, current.argv_bytes),
        (Some(blocked), _) => (c.last_command, blocked.args_bytes()),
        (None, Some(held)) => (held.cmd, held.argv_bytes),
        (None, None) => (c.last_command, 0),
    };
    let obl = c.pending_output_bytes();
    let name = c
        .name
        .as_deref()
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .unwrap_or_default();
    let multi_mem = c.tx.multi.as_ref().map_or(0, |m| m.mem_bytes);
    let tot_mem = crate::client::CLIENT_STRUCT_BYTES
        + qbuf
        + argv_mem
        + multi_mem
        + c.output_capacity_bytes();
    let mut line = String::with_capacity(256);
    let _ = write!(
        line,
        "id={} addr={} laddr={} fd={} name={} age={} idle={} flags={} db={} \
         sub={} psub={} ssub={} multi={} qbuf={} qbuf-free=0 argv-mem={} multi-mem={} \
         rbs={} rbp=0 obl={} oll=0 omem={} tot-mem={} events={} cmd={} user=",
        c.id.0,
        c.info.addr,
        c.info.laddr,
        c.info.fd,
        name,
        age_s,
        idle_s,
        flags,
        c.db,
        c.subscriptions.channels.len(),
        c.subscriptions.patterns.len(),
        c.subscriptions.shard_count(),
        c.tx.queued_count().map_or(-1, |n| n as i64),
        qbuf,
        argv_mem,
        multi_mem,
        REPLY_BUFFER_BYTES,
        obl,
        obl,
        tot_mem,
        if obl > 0 { "rw" } else { "r" },
        cmd,
    );
    let mut line = line.into_bytes();
    line.extend_from_slice(&c.user);
    let redirect = match c.tracking.on {
        true => c.tracking.redirect as i64,
        false => -1,
    };
    let tail = format!(" redir={redirect} resp={}", c.protocol.version());
    line.extend_from_slice(tail.as_bytes());
    line
}

/// The CLIENT LIST line of client `c` while it runs `cmd` with arguments
/// of `argv_bytes` bytes, as the ACL log records it.
pub(crate) fn info_line_running(
    c: &Client,
    now: Now,
    cmd: &'static str,
    argv_bytes: usize,
) -> Vec<u8> {
    let current = Current {
        id: c.id,
        cmd,
        argv_bytes,
    };
    info_line(c, now, &current, None)
}

fn current(ctx: &Ctx, args: &[Vec<u8>]) -> Current {
    let (cmd, argv_bytes) = match ctx.in_exec {
        true => ("exec", crate::pipeline::permit::EXEC_ARGV_BYTES),
        false => (ctx.spec.name, args.iter().map(Vec::len).sum()),
    };
    Current {
        id: ctx.client_id,
        cmd,
        argv_bytes,
    }
}

fn client_info(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let cur = current(ctx, args);
    let mut text = info_line(&ctx.clients[&ctx.client_id], ctx.now, &cur, None);
    text.push(b'\n');
    ctx.w().verbatim("txt", &text);
}

/// CLIENT LIST [TYPE NORMAL|MASTER|REPLICA|PUBSUB] [ID id [id ...]].
fn client_list(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let mut ids: Option<Vec<u64>> = None;
    let mut only_type = None;
    match args.len() {
        2 => {}
        4 if args[2].eq_ignore_ascii_case(b"type") => {
            match parse_client_type(&args[3]) {
                Some(t) => only_type = Some(t),
                None => {
                    return ctx.error(&format!(
                        "ERR Unknown client type '{}'",
                        crate::util::sanitize(&args[3], 128)
                    ))
                }
            };
        }
        n if n >= 4 && args[2].eq_ignore_ascii_case(b"id") => {
            let mut list = Vec::with_capacity(n - 3);
            for a in &args[3..] {
                match parse_i64_strict(a) {
                    Some(v) => list.push(v.max(0) as u64),
                    None => return ctx.error("ERR Invalid client ID"),
                }
            }
            ids = Some(list);
        }
        _ => return ctx.error("ERR syntax error"),
    }
    let cur = current(ctx, args);
    let mut text = Vec::new();
    for c in ctx.clients.values() {
        // Clients killed earlier are gone in Redis; here they wait for
        // the host to disconnect them.
        if c.closing == Some(CloseReason::Killed) {
            continue;
        }
        if ids.as_ref().is_some_and(|ids| !ids.contains(&c.id.0)) {
            continue;
        }
        if only_type.is_some_and(|t| t != client_type(c)) {
            continue;
        }
        if !crate::repl::replica::is_listed(ctx.server, c) {
            continue;
        }
        text.extend_from_slice(&info_line(c, ctx.now, &cur, held(ctx, c.id)));
        text.push(b'\n');
    }
    ctx.work(ctx.clients.len() as u64);
    ctx.w().verbatim("txt", &text);
}

/// Redis's `getClientType`: our primary's link is `master`, a replica of
/// ours `replica`; else a client holding a subscription (Redis's
/// CLIENT_PUBSUB flag, set by any SUBSCRIBE and cleared when the last one
/// goes) is a pub/sub client, any other normal.
fn client_type(c: &Client) -> ClientType {
    match c.repl_role {
        crate::repl::ClientRole::Master => return ClientType::Master,
        crate::repl::ClientRole::Replica => return ClientType::Replica,
        crate::repl::ClientRole::Normal => {}
    }
    if c.subscriptions.is_empty() {
        ClientType::Normal
    } else {
        ClientType::Pubsub
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ClientType {
    Normal,
    Master,
    Replica,
    Pubsub,
}

fn parse_client_type(name: &[u8]) -> Option<ClientType> {
    let name = String::from_utf8_lossy(name).to_ascii_lowercase();
    match name.as_str() {
        "normal" => Some(ClientType::Normal),
        "master" => Some(ClientType::Master),
        "replica" | "slave" => Some(ClientType::Replica),
        "pubsub" => Some(ClientType::Pubsub),
        _ => None,
    }
}

/// CLIENT KILL ip:port (old form: may kill the caller; replies OK or an
/// error) or CLIENT KILL <filter> <value> ... (replies the count killed).
fn client_kill(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let old_form = args.len() == 3;
    let mut addr: Option<&[u8]> = None;
    let mut laddr: Option<&[u8]> = None;
    let mut id: Option<u64> = None;
    let mut client_type_filter: Option<ClientType> = None;
    let mut skipme = true;
    let mut user: Option<&[u8]> = None;
    if old_form {
        addr = Some(&args[2]);
        skipme = false;
    } else {
        let mut i = 2;
        while i < args.len() {
            let Some(value) = args.get(i + 1) else {
                return ctx.error("ERR syntax error");
            };
            let option = args[i].to_ascii_lowercase();
            match option.as_slice() {
                b"id" => match parse_i64_strict(value) {
                    Some(v) if v >= 1 => id = Some(v as u64),
                    _ => return ctx.error("ERR client-id should be greater than 0"),
                },
                b"type" => match parse_client_type(value) {
                    Some(t) => client_type_filter = Some(t),
                    None => {
                        return ctx.error(&format!(
                            "ERR Unknown client type '{}'",
                            crate::util::sanitize(value, 128)
                        ))
                    }
                },
                b"addr" => addr = Some(value),
                b"laddr" => laddr = Some(value),
                b"user" => {
                    if ctx.server.acl.user(value).is_none() {
                        return ctx.error(&format!(
                            "ERR No such user '{}'",
                            crate::util::sanitize(value, 128)
                        ));
                    }
                    user = Some(value);
                }
                b"skipme" => {
                    if value.eq_ignore_ascii_case(b"yes") {
                        skipme = true;
                    } else if value.eq_ignore_ascii_case(b"no") {
                        skipme = false;
                    } else {
                        return ctx.error("ERR syntax error");
                    }
                }
                _ => return ctx.error("ERR syntax error"),
            }
            i += 2;
        }
    }
    // A connection is a normal one or, while subscribed, a pub/sub one
    // (there is no replication).
    let victims: Vec<ClientId> = ctx
        .clients
        .values()
        .filter(|c| c.closing.is_none())
        .filter(|c| addr.is_none_or(|a| c.info.addr.as_bytes() == a))
        .filter(|c| laddr.is_none_or(|a| c.info.laddr.as_bytes() == a))
        .filter(|c| id.is_none_or(|id| c.id.0 == id))
        .filter(|c| client_type_filter.is_none_or(|t| t == client_type(c)))
        .filter(|c| user.is_none_or(|u| c.user == u))
        .filter(|c| !(skipme && c.id == ctx.client_id))
        .map(|c| c.id)
        .collect();
    ctx.work(ctx.clients.len() as u64);
    let mut kill_self = false;
    for &victim in &victims {
        if victim == ctx.client_id {
            kill_self = true;
        } else {
            close_client(ctx.clients, ctx.events, victim, CloseReason::Killed);
            // Redis frees a killed client at once, taking it off the keys
            // it was blocked on; here it waits for the host's disconnect,
            // and must not be served meanwhile.
            if let Some(c) = ctx.clients.get_mut(&victim) {
                drop(ctx.server.blocking.unpark(c));
            }
        }
    }
    if old_form {
        if victims.is_empty() {
            ctx.error("ERR No such client");
        } else {
            ctx.ok();
        }
    } else {
        ctx.int(victims.len() as i64);
    }
    if kill_self {
        // Like Redis's CLIENT_CLOSE_AFTER_REPLY: the reply goes out first.
        close_client(ctx.clients, ctx.events, ctx.client_id, CloseReason::Quit);
    }
}

/// CLIENT UNBLOCK id [TIMEOUT|ERROR]: ends a client's blocking command
/// with its timeout reply, or with an `-UNBLOCKED` error. Replies 1 if the
/// client was blocked, else 0. Redis checks the reason before the id.
fn client_unblock(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if args.len() > 4 {
        return ctx.error(&format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try CLIENT HELP.",
            crate::util::sanitize(&args[1], 128)
        ));
    }
    let mut with_error = false;
    if let Some(reason) = args.get(3) {
        if reason.eq_ignore_ascii_case(b"error") {
            with_error = true;
        } else if !reason.eq_ignore_ascii_case(b"timeout") {
            return ctx.error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
        }
    }
    let Some(id) = parse_i64_strict(&args[2]) else {
        return ctx.error("ERR value is not an integer or out of range");
    };
    let target = ClientId(id.max(0) as u64);
    let Some(c) = ctx.clients.get_mut(&target) else {
        return ctx.int(0);
    };
    if c.closing.is_some() {
        return ctx.int(0);
    }
    let Some(blocked) = ctx.server.blocking.unpark(c) else {
        return ctx.int(0);
    };
    let reply: &[u8] = if with_error {
        b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
    } else {
        blocked.on_timeout.encoded(c.protocol)
    };
    let now = ctx.now;
    crate::pipeline::nested(ctx, |p| p.finish_unserved(now, target, &blocked, reply));
    ctx.int(1);
}

/// CLIENT PAUSE timeout [WRITE|ALL]: holds the requests that must wait
/// under the mode (ALL by default) for `timeout` milliseconds, or extends
/// the pause in force (see [`crate::pause`]). As Redis 7.0.15
/// checks: the argument count, then the mode, then the timeout.
fn client_pause(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if args.len() > 4 {
        return ctx.error(&format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try CLIENT HELP.",
            crate::util::sanitize(&args[1], 128)
        ));
    }
    let mode = match args.get(3) {
        None => PauseMode::All,
        Some(m) if m.eq_ignore_ascii_case(b"write") => PauseMode::Write,
        Some(m) if m.eq_ignore_ascii_case(b"all") => PauseMode::All,
        Some(_) => return ctx.error("ERR CLIENT PAUSE mode must be WRITE or ALL"),
    };
    let Some(timeout_ms) = parse_i64_strict(&args[2]) else {
        return ctx.error("ERR timeout is not an integer or out of range");
    };
    if timeout_ms < 0 {
        return ctx.error("ERR timeout is negative");
    }
    // Redis adds the timeout to its clock in a signed 64-bit sum; one that
    // overflows wraps into the past and pauses nothing. A zero timeout
    // ends now, which pauses nothing either.
    let now = ctx.now;
    let overflows = (now.unix_ms() as i64).checked_add(timeout_ms).is_none();
    if timeout_ms > 0 && !overflows {
        let end_ns = now
            .mono_ns
            .saturating_add((timeout_ms as u64).saturating_mul(1_000_000));
        ctx.server.pause.pause(now, mode, end_ns);
    }
    ctx.ok();
}

/// CLIENT UNPAUSE: ends the pause now; the held clients run once this
/// input is done.
fn client_unpause(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    ctx.server.pause.unpause();
    ctx.ok();
}

fn client_help(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    help_reply(
        ctx,
        "CLIENT",
        &[
            "CACHING (YES|NO)",
            "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
            "GETREDIR",
            "    Return the client ID we are redirecting to when tracking is enabled.",
            "GETNAME",
            "    Return the name of the current connection.",
            "ID",
            "    Return the ID of the current connection.",
            "INFO",
            "    Return information about the current client connection.",
            "KILL <ip:port>",
            "    Kill connection made from <ip:port>.",
            "KILL <option> <value> [<option> <value> [...]]",
            "    Kill connections. Options are:",
            "    * ADDR (<ip:port>|<unixsocket>:0)",
            "      Kill connections made from the specified address",
            "    * LADDR (<ip:port>|<unixsocket>:0)",
            "      Kill connections made to specified local address",
            "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
            "      Kill connections by type.",
            "    * USER <username>",
            "      Kill connections authenticated by <username>.",
            "    * SKIPME (YES|NO)",
            "      Skip killing current connection (default: yes).",
            "LIST [options ...]",
            "    Return information about client connections. Options:",
            "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
            "      Return clients of specified type.",
            "UNPAUSE",
            "    Stop the current client pause, resuming traffic.",
            "PAUSE <timeout> [WRITE|ALL]",
            "    Suspend all, or just write, clients for <timeout> milliseconds.",
            "REPLY (ON|OFF|SKIP)",
            "    Control the replies sent to the current connection.",
            "SETNAME <name>",
            "    Assign the name <name> to the current connection.",
            "UNBLOCK <clientid> [TIMEOUT|ERROR]",
            "    Unblock the specified blocked client.",
            "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
            "         [OPTIN] [OPTOUT] [NOLOOP]",
            "    Control server assisted client side caching.",
            "TRACKINGINFO",
            "    Report tracking status for the current connection.",
            "NO-EVICT (ON|OFF)",
            "    Protect current client connection from eviction.",
        ],
    );
}

#[cfg(test)]
mod tests;
mod tracking;
