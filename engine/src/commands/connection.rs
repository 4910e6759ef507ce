//! Connection commands: PING ECHO QUIT SELECT HELLO AUTH RESET.

use crate::client::CloseReason;
use crate::clients::close_client;
use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::db::DATABASES_COUNT;
use crate::resp::Protocol;
use crate::util::parse_i64_strict;

/// The Redis version seedkv is compatible with (INFO, HELLO).
pub const REDIS_VERSION: &str = "7.0.15";

const CONN: CommandSpec = CommandSpec {
    group: "connection",
    acl_categories: &["fast", "connection"],
    ..CommandSpec::DEFAULT
};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "ping",
        arity: -1,
        flags: FAST | SENTINEL,
        summary: "Ping the server",
        handler: Some(ping),
        ..CONN
    },
    CommandSpec {
        name: "echo",
        arity: 2,
        // Like PING, ECHO answers while loading and on a stale replica.
        flags: FAST | LOADING | STALE,
        summary: "Echo the given string",
        handler: Some(echo),
        ..CONN
    },
    CommandSpec {
        name: "quit",
        arity: -1,
        flags: ALLOW_BUSY | NO_AUTH | FAST | LOADING | STALE | NOSCRIPT,
        summary: "Close the connection",
        handler: Some(quit),
        ..CONN
    },
    CommandSpec {
        name: "select",
        arity: 2,
        flags: LOADING | STALE | FAST,
        summary: "Change the selected database for the current connection",
        since: "1.0.0",
        handler: Some(select),
        ..CONN
    },
    CommandSpec {
        name: "hello",
        arity: -1,
        flags: NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | SENTINEL | ALLOW_BUSY,
        summary: "Handshake with Redis",
        since: "6.0.0",
        handler: Some(hello),
        ..CONN
    },
    CommandSpec {
        name: "auth",
        arity: -2,
        flags: NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | SENTINEL | ALLOW_BUSY,
        summary: "Authenticate to the server",
        handler: Some(auth),
        ..CONN
    },
    CommandSpec {
        name: "reset",
        arity: 1,
        flags: NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY,
        summary: "Reset the connection",
        since: "6.2.0",
        handler: Some(reset),
        ..CONN
    },
];

fn ping(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    // A subscribed RESP2 connection reads only push-shaped arrays, so PING
    // answers with one there: ["pong", message or ""].
    if args.len() <= 2 && ctx.protocol == Protocol::Resp2 && !ctx.client().subscriptions.is_empty()
    {
        let mut w = ctx.w();
        w.array_len(2);
        w.bulk_str("pong");
        return w.bulk(args.get(1).map_or(&b""[..], Vec::as_slice));
    }
    match args.len() {
        1 => ctx.w().simple("PONG"),
        2 => ctx.bulk(&args[1]),
        _ => ctx.error("ERR wrong number of arguments for 'ping' command"),
    }
}

fn echo(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    ctx.bulk(&args[1]);
}

fn quit(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    ctx.ok();
    close_client(ctx.clients, ctx.events, ctx.client_id, CloseReason::Quit);
}

/// SELECT's reply to an integer outside `int` (Redis's
/// getRangeLongFromObjectOrReply with INT_MIN..INT_MAX).
pub const SELECT_OUT_OF_INT_RANGE: &str =
    "ERR value is out of range, value must between -2147483648 and 2147483647";

fn select(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    // getIntFromObjectOrReply: a long that must also fit an int, with
    // Redis's own message when it does not (checked against Redis 7.0.15).
    match parse_i64_strict(&args[1]) {
        None => ctx.error("ERR value is not an integer or out of range"),
        Some(i) if i32::try_from(i).is_err() => ctx.error(SELECT_OUT_OF_INT_RANGE),
        Some(i) if i < 0 || i >= DATABASES_COUNT as i64 => {
            ctx.error("ERR DB index is out of range")
        }
        Some(i) => {
            ctx.client().db = i as usize;
            ctx.ok();
        }
    }
}

/// The reply to a failed login.
const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";

/// Redis's `ACLAuthenticateUser`: on success the connection runs as
/// `user` from now on; a failure is logged in the ACL log under the
/// command's name as sent (`args[0]`), with the request's arguments
/// counted in the client's `argv-mem`.
fn authenticate(
    ctx: &mut Ctx,
    args: &[Vec<u8>],
    user: &[u8],
    pass: &[u8],
) -> Result<(), &'static str> {
    // One unit for the password's hash.
    ctx.work(1 + pass.len() as u64 / 64);
    if ctx.server.acl.credentials_ok(user, pass) {
        let c = ctx.client();
        c.authenticated = true;
        c.user = user.to_vec();
        return Ok(());
    }
    ctx.work(args.len() as u64);
    let argv_bytes = match ctx.in_exec {
        true => crate::pipeline::permit::EXEC_ARGV_BYTES,
        false => args.iter().map(Vec::len).sum(),
    };
    let c = &ctx.clients[&ctx.client_id];
    let running = match ctx.in_exec {
        true => "exec",
        false => ctx.spec.name,
    };
    let entry = crate::acl::log::Entry {
        count: 1,
        reason: crate::acl::log::Reason::Auth,
        // Run from EXEC's queue, Redis's client is still in MULTI, and its
        // CLIENT LIST line shows it running EXEC.
        context: match ctx.in_exec || c.tx.in_multi() {
            true => crate::acl::log::Context::Multi,
            false => crate::acl::log::Context::Toplevel,
        },
        object: args[0].clone(),
        username: user.to_vec(),
        created_ms: ctx.now.unix_ms(),
        client_info: crate::commands::client::info_line_running(c, ctx.now, running, argv_bytes),
    };
    let entries_max = ctx.server.config.acllog_max_len;
    let compared = ctx.server.acl.log.add(entry, entries_max);
    ctx.work(compared);
    Err(WRONGPASS)
}

/// AUTH password (the default user's) or AUTH user password.
fn auth(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let result = match args.len() {
        2 if ctx.server.acl.user(crate::acl::DEFAULT_USER).is_some_and(|u| u.nopass) => {
            Err("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
        }
        2 => authenticate(ctx, args, crate::acl::DEFAULT_USER, &args[1]),
        3 => authenticate(ctx, args, &args[1], &args[2]),
        _ => Err("ERR syntax error"),
    };
    match result {
        Ok(()) => ctx.ok(),
        Err(e) => ctx.error(e),
    }
}

fn hello(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let mut protocol = None;
    if args.len() >= 2 {
        match parse_i64_strict(&args[1]) {
            Some(v) if v == 2 || v == 3 => {
                protocol = Some(if v == 2 {
                    Protocol::Resp2
                } else {
                    Protocol::Resp3
                })
            }
            Some(_) => return ctx.error("NOPROTO unsupported protocol version"),
            None => return ctx.error("ERR Protocol version is not an integer or out of range"),
        }
    }
    let mut name = None;
    let mut i = 2;
    while i < args.len() {
        let more = args.len() - i - 1;
        if args[i].eq_ignore_ascii_case(b"AUTH") && more >= 2 {
            let (user, pass) = (args[i + 1].clone(), args[i + 2].clone());
            if let Err(e) = authenticate(ctx, args, &user, &pass) {
                return ctx.error(e);
            }
            i += 3;
        } else if args[i].eq_ignore_ascii_case(b"SETNAME") && more >= 1 {
            if let Err(e) = super_validate_name(&args[i + 1]) {
                return ctx.error(e);
            }
            name = Some(args[i + 1].clone());
            i += 2;
        } else {
            return ctx.error(&format!(
                "ERR Syntax error in HELLO option '{}'",
                crate::util::sanitize(&args[i], 128)
            ));
        }
    }
    if ctx.server.auth_required(&ctx.clients[&ctx.client_id]) {
        return ctx.error("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time");
    }
    if let Some(n) = name {
        ctx.client().name = Some(n);
    }
    if let Some(p) = protocol {
        ctx.client().protocol = p;
        ctx.protocol = p;
    }
    let id = ctx.client_id.0 as i64;
    let proto = ctx.protocol.version();
    let mut w = ctx.w();
    w.map_len(7);
    w.bulk_str("server");
    w.bulk_str("redis");
    w.bulk_str("version");
    w.bulk_str(REDIS_VERSION);
    w.bulk_str("proto");
    w.int(proto);
    w.bulk_str("id");
    w.int(id);
    w.bulk_str("mode");
    w.bulk_str("standalone");
    w.bulk_str("role");
    w.bulk_str("master");
    w.bulk_str("modules");
    w.array_len(0);
}

/// CLIENT SETNAME's rule: no spaces, newlines or other special characters.
pub fn super_validate_name(name: &[u8]) -> Result<(), &'static str> {
    if name.iter().any(|&c| !(b'!'..=b'~').contains(&c)) {
        Err("ERR Client names cannot contain spaces, newlines or special characters.")
    } else {
        Ok(())
    }
}

fn reset(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    // Redis's `clearClientConnectionState`: back to the default user,
    // authenticated only if that user needs no password.
    let authenticated = ctx.server.acl.default_user_needs_no_auth();
    let id = ctx.client_id;
    let mut subscriptions = std::mem::take(&mut ctx.client().subscriptions);
    ctx.server.pubsub.remove_client(id, &mut subscriptions);
    let c = ctx.client();
    c.db = 0;
    c.protocol = Protocol::Resp2;
    c.name = None;
    c.authenticated = authenticated;
    c.user = crate::acl::DEFAULT_USER.to_vec();
    // CLIENT REPLY OFF ends, but a RESET that was itself skipped stays
    // unanswered; CLIENT NO-EVICT survives RESET in Redis 7.0.
    c.reply_mode.reset();
    // RESET also discards MULTI, forgets watched keys and ends MONITOR.
    let c = ctx
        .clients
        .get_mut(&ctx.client_id)
        .expect("calling client exists");
    crate::multi::client_gone(ctx.server, c);
    reset_tracking(ctx);
    ctx.protocol = Protocol::Resp2;
    ctx.w().simple("RESET");
}

/// RESET turns client-side caching off (Redis's `disableTracking` in
/// `clearClientConnectionState`): the client leaves the tracking table's
/// counts and its BCAST prefixes, and forgets its redirect and OPTIN/OPTOUT
/// modes, so a later CLIENT TRACKING ON starts from nothing.
fn reset_tracking(ctx: &mut Ctx) {
    let c = ctx
        .clients
        .get_mut(&ctx.client_id)
        .expect("calling client exists");
    crate::tracking::reset_client(&mut ctx.server.tracking, c);
}
