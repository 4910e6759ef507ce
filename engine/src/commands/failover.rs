//! FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms], as Redis 7.0.15's
//! `failoverCommand`: the arguments, the refusals in Redis's order, and the
//! start of a coordinated failover (the rest is [`crate::repl::failover`]).

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::event::{Event, LogLevel};
use crate::repl::failover::{self, Failover, FailoverState};
use crate::repl::replica::Parts;
use crate::util::parse_i64_strict as parse_i64;

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    name: "failover",
    arity: -1,
    flags: ADMIN | NOSCRIPT | STALE,
    acl_categories: &["admin", "slow", "dangerous"],
    group: "server",
    summary: "Start a coordinated failover between this server and one of its replicas.",
    since: "6.2.0",
    complexity: "O(1)",
    handler: Some(failover_command),
    ..CommandSpec::DEFAULT
}];

const NOT_INTEGER: &str = "ERR value is not an integer or out of range";

/// FAILOVER's options as parsed.
#[derive(Default)]
struct Options {
    timeout_ms: i64,
    force: bool,
    target: Option<(String, i64)>,
}

fn failover_command(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if args.len() == 2 && args[1].eq_ignore_ascii_case(b"abort") {
        if ctx.server.repl.failover.is_none() {
            return ctx.error("ERR No failover in progress.");
        }
        failover::abort(&mut parts(ctx), "Failover manually aborted");
        return ctx.ok();
    }
    let Some(options) = parse(ctx, args) else {
        return;
    };
    let target = options.target.as_ref().map(|(h, p)| (h.as_str(), *p));
    if let Some(refusal) = failover::refusal(ctx.server, target, options.force, options.timeout_ms)
    {
        return ctx.error(refusal);
    }
    let text = match &options.target {
        Some((host, port)) => format!("FAILOVER requested to {host}:{port}."),
        None => "FAILOVER requested to any replica.".to_string(),
    };
    ctx.events.push_back(Event::Log {
        level: LogLevel::Notice,
        text,
    });
    let end_ns = (options.timeout_ms > 0).then(|| {
        let ms = options.timeout_ms as u64;
        ctx.now.mono_ns.saturating_add(ms.saturating_mul(1_000_000))
    });
    // `refusal` found the target among the replicas: its port fits.
    let target = options
        .target
        .map(|(host, port)| (host, u16::try_from(port).unwrap_or(0)));
    ctx.server.repl.failover = Some(Failover {
        state: FailoverState::WaitForSync,
        target,
        end_ns,
        force: options.force,
    });
    ctx.server.pause.begin_failover();
    ctx.ok();
}

/// Redis's option loop: each option once, TIMEOUT's value positive, TO's
/// port an integer; anything else is a syntax error. Answers the error and
/// returns `None` on bad input.
fn parse(ctx: &mut Ctx, args: &[Vec<u8>]) -> Option<Options> {
    let mut o = Options::default();
    let mut j = 1;
    while j < args.len() {
        let word = &args[j];
        if word.eq_ignore_ascii_case(b"timeout") && j + 1 < args.len() && o.timeout_ms == 0 {
            let Some(ms) = parse_i64(&args[j + 1]) else {
                ctx.error(NOT_INTEGER);
                return None;
            };
            if ms <= 0 {
                ctx.error("ERR FAILOVER timeout must be greater than 0");
                return None;
            }
            o.timeout_ms = ms;
            j += 2;
        } else if word.eq_ignore_ascii_case(b"to") && j + 2 < args.len() && o.target.is_none() {
            let Some(port) = parse_i64(&args[j + 2]) else {
                ctx.error(NOT_INTEGER);
                return None;
            };
            let host = String::from_utf8_lossy(&args[j + 1]).into_owned();
            o.target = Some((host, port));
            j += 3;
        } else if word.eq_ignore_ascii_case(b"force") && !o.force {
            o.force = true;
            j += 1;
        } else {
            ctx.error("ERR syntax error");
            return None;
        }
    }
    Some(o)
}

fn parts<'c>(ctx: &'c mut Ctx) -> Parts<'c> {
    Parts {
        server: ctx.server,
        clients: ctx.clients,
        events: ctx.events,
    }
}
