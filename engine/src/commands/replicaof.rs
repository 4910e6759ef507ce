//! REPLICAOF and SLAVEOF, as Redis 7.0.15's `replicaofCommand`: make this
//! server a replica of `host port`, or a primary again with `NO ONE`. The
//! link itself is the engine's (see [`crate::repl::replica`]).

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::event::{Event, LogLevel};
use crate::repl::replica::{self, Parts};
use crate::repl::ClientRole;

const SPEC: CommandSpec = CommandSpec {
    name: "replicaof",
    arity: 3,
    flags: ADMIN | NOSCRIPT | STALE,
    acl_categories: &["admin", "slow", "dangerous"],
    group: "server",
    summary: "Make the server a replica of another instance, or promote it as master.",
    complexity: "O(1)",
    handler: Some(replicaof),
    ..CommandSpec::DEFAULT
};

pub const COMMANDS: &[CommandSpec] = &[
    SPEC,
    CommandSpec {
        name: "slaveof",
        ..SPEC
    },
];

fn replicaof(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if ctx.server.repl.failover.is_some() {
        return ctx.error("ERR REPLICAOF not allowed while failing over.");
    }
    if args[1].eq_ignore_ascii_case(b"no") && args[2].eq_ignore_ascii_case(b"one") {
        if ctx.server.repl.is_replica() {
            replica::unset_master(&mut parts(ctx));
            let line = format!(
                "MASTER MODE enabled (user request from 'id={}')",
                ctx.client_id.0
            );
            ctx.events.push_back(Event::Log {
                level: LogLevel::Notice,
                text: line,
            });
        }
        return ctx.ok();
    }
    if ctx.client().repl_role == ClientRole::Replica {
        return ctx.error("ERR Command is not valid when client is a replica.");
    }
    let port = crate::util::parse_i64_strict(&args[2]).filter(|p| (0..=65535).contains(p));
    let Some(port) = port else {
        return ctx.error("ERR Invalid master port");
    };
    let host = String::from_utf8_lossy(&args[1]).into_owned();
    if let Some(link) = ctx.server.repl.master.as_deref() {
        if link.host.eq_ignore_ascii_case(&host) && link.port as i64 == port {
            ctx.reply
                .extend_from_slice(b"+OK Already connected to specified master\r\n");
            return;
        }
    }
    let now = ctx.now;
    replica::set_master(&mut parts(ctx), now, host.clone(), port as u16);
    let line = format!(
        "REPLICAOF {host}:{port} enabled (user request from 'id={}')",
        ctx.client_id.0
    );
    ctx.events.push_back(Event::Log {
        level: LogLevel::Notice,
        text: line,
    });
    ctx.ok();
}

fn parts<'c>(ctx: &'c mut Ctx) -> Parts<'c> {
    Parts {
        server: ctx.server,
        clients: ctx.clients,
        events: ctx.events,
    }
}
