//! CONFIG GET / SET / RESETSTAT / REWRITE / HELP, and the parameter table
//! they share with redis.conf loading ([`apply_config_line`],
//! [`load_config_str`]).
//!
//! Every parameter is one row of [`params::PARAMS`]: its redis.conf name, its type
//! (which fixes the parser, the bounds and the exact Redis error text), and
//! where it lives: a typed field of [`Config`] that the engine enforces, or
//! `Config::extra`, where parameters the engine accepts but does not act on
//! are kept in canonical form (the host may read them, e.g. `appendonly`,
//! through [`config_get`]).
//!
//! Deviations from Redis 7.0: `port` and `bind` are immutable at run time
//! because the host owns the sockets and there is no event to rebind;
//! `databases` is fixed at 16.
//!
//! The parameter table lives in `config/params.rs`, the parsing and
//! validation of values (and of redis.conf text) in `config/parse.rs`; this
//! file holds the CONFIG command and its handlers.

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::glob::{self, glob_match};

mod params;
mod parse;
#[cfg(test)]
mod tests;

pub use params::config_get;
pub use parse::{apply_config_line, load_config_str, parse_memory};

use params::{current_value, find_param, Param, IMMUTABLE, PARAMS, PROTECTED};
use parse::{parse_value, store_value};

const CONFIG: CommandSpec = CommandSpec {
    group: "server",
    since: "2.0.0",
    flags: ADMIN | NOSCRIPT | LOADING | STALE,
    acl_categories: &["admin", "slow", "dangerous"],
    ..CommandSpec::DEFAULT
};

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    name: "config",
    arity: -2,
    flags: 0,
    acl_categories: &["slow"],
    summary: "A container for server configuration commands",
    complexity: "Depends on subcommand.",
    subcommands: &[
        CommandSpec {
            name: "config|get",
            arity: -3,
            summary: "Get the values of configuration parameters",
            complexity: "O(N) when N is the number of configuration parameters provided",
            handler: Some(config_get_cmd),
            ..CONFIG
        },
        CommandSpec {
            name: "config|set",
            arity: -4,
            summary: "Set configuration parameters to the given values",
            complexity: "O(N) when N is the number of configuration parameters provided",
            tips: &["request_policy:all_nodes", "response_policy:all_succeeded"],
            handler: Some(config_set_cmd),
            ..CONFIG
        },
        CommandSpec {
            name: "config|resetstat",
            arity: 2,
            summary: "Reset the stats returned by INFO",
            handler: Some(config_resetstat),
            ..CONFIG
        },
        CommandSpec {
            name: "config|rewrite",
            arity: 2,
            since: "2.8.0",
            summary: "Rewrite the configuration file with the in memory configuration",
            handler: Some(config_rewrite),
            ..CONFIG
        },
        CommandSpec {
            name: "config|help",
            arity: 2,
            since: "5.0.0",
            flags: LOADING | STALE,
            acl_categories: &["slow"],
            summary: "Show helpful text about the different subcommands",
            handler: Some(config_help),
            ..CONFIG
        },
    ],
    ..CONFIG
}];

fn config_get_cmd(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let mut matched: Vec<(&'static str, String)> = Vec::new();
    let mut glob_steps = 0;
    for pattern in &args[2..] {
        // As Redis: a pattern with no `[`, `*` or `?` (read as a C string,
        // so up to a NUL) names one parameter exactly; any other is matched
        // with the C-string `stringmatch`, which ends it at its first NUL.
        let c_string = match pattern.iter().position(|&b| b == 0) {
            Some(end) => &pattern[..end],
            None => &pattern[..],
        };
        let exact = !c_string.iter().any(|b| b"[*?".contains(b));
        ctx.work(PARAMS.len() as u64);
        for p in PARAMS {
            let names = std::iter::once(p.name).chain(p.alias);
            for name in names {
                let hit = if exact {
                    name.as_bytes().eq_ignore_ascii_case(pattern)
                } else {
                    glob_match(c_string, name.as_bytes(), true, &mut glob_steps)
                };
                if hit && !matched.iter().any(|(n, _)| *n == name) {
                    matched.push((name, current_value(&ctx.server.config, p)));
                }
            }
        }
    }
    ctx.work(glob::work_units(glob_steps));
    let mut w = ctx.w();
    w.map_len(matched.len());
    for (name, value) in &matched {
        w.bulk_str(name);
        w.bulk_str(value);
    }
}

fn config_set_cmd(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if args.len() % 2 == 1 {
        return ctx.error("ERR syntax error");
    }
    let pairs: Vec<(String, String)> = args[2..]
        .chunks(2)
        .map(|kv| {
            (
                String::from_utf8_lossy(&kv[0]).into_owned(),
                String::from_utf8_lossy(&kv[1]).into_owned(),
            )
        })
        .collect();
    ctx.work(pairs.len() as u64);
    // First pass, as in Redis: unknown names win over every other error;
    // then immutability and duplicates, reported with the name as typed.
    if let Some((name, _)) = pairs.iter().find(|(n, _)| find_param(n).is_none()) {
        return ctx.error(&format!(
            "ERR Unknown option or number of arguments for CONFIG SET - '{name}'"
        ));
    }
    let mut chosen: Vec<&'static Param> = Vec::with_capacity(pairs.len());
    for (name, _) in &pairs {
        let p = find_param(name).expect("checked above");
        let problem = if p.flags & IMMUTABLE != 0 {
            Some("can't set immutable config")
        } else if p.flags & PROTECTED != 0 {
            Some("can't set protected config")
        } else if chosen.iter().any(|c| std::ptr::eq(*c, p)) {
            Some("duplicate parameter")
        } else {
            None
        };
        if let Some(problem) = problem {
            return ctx.error(&format!(
                "ERR CONFIG SET failed (possibly related to argument '{name}') - {problem}"
            ));
        }
        chosen.push(p);
    }
    // Validate everything before storing anything, so a failed CONFIG SET
    // changes nothing.
    let mut parsed = Vec::with_capacity(pairs.len());
    for (p, (_, value)) in chosen.iter().zip(&pairs) {
        match parse_value(p, value) {
            Ok(v) => parsed.push(v),
            Err(e) => {
                return ctx.error(&format!(
                    "ERR CONFIG SET failed (possibly related to argument '{}') - {e}",
                    p.name
                ))
            }
        }
    }
    for (p, v) in chosen.iter().zip(&parsed) {
        store_value(&mut ctx.server.config, p, v);
    }
    // `requirepass` is the default user's password (Redis's
    // `ACLUpdateDefaultUserPassword`), set again whenever it is set.
    if chosen.iter().any(|p| p.name == "requirepass") {
        let password = ctx.server.config.requirepass.clone();
        ctx.server.acl.set_requirepass(password.as_deref());
    }
    ctx.server.acl.pubsub_default_all = crate::acl::pubsub_default_all(&ctx.server.config);
    crate::persist::config_changed(ctx.server, ctx.events, ctx.now);
    ctx.ok();
}

fn config_resetstat(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    ctx.server.stats.reset();
    ctx.server.keyspace.expired_keys = 0;
    ctx.server.evict.reset_stats(ctx.now);
    ctx.ok();
}

fn config_rewrite(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    // The engine owns no file; a host that loaded one may handle REWRITE itself.
    ctx.error("ERR The server is running without a config file");
}

/// Writes Redis's HELP reply: a status header line, then status lines.
pub(crate) fn help_reply(ctx: &mut Ctx, command: &str, lines: &[&str]) {
    let mut w = ctx.w();
    w.array_len(lines.len() + 3);
    w.simple(&format!(
        "{command} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    ));
    for line in lines {
        w.simple(line);
    }
    w.simple("HELP");
    w.simple("    Prints this help.");
}

fn config_help(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    help_reply(
        ctx,
        "CONFIG",
        &[
            "GET <pattern>",
            "    Return parameters matching the glob-like <pattern> and their values.",
            "SET <directive> <value>",
            "    Set the configuration <directive> to <value>.",
            "RESETSTAT",
            "    Reset statistics reported by the INFO command.",
            "REWRITE",
            "    Rewrite the configuration file.",
        ],
    );
}
