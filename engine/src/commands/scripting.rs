//! EVAL EVALSHA EVAL_RO EVALSHA_RO and SCRIPT LOAD | EXISTS | FLUSH | KILL
//! | DEBUG | HELP, as Redis 7.0.15 (eval.c). The scripting machinery itself
//! is in [`crate::scripting`].

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::commands::config::help_reply;
use crate::scripting::{eval, EvalKind};

const SCRIPTING: &[&str] = &["slow", "scripting"];

/// Keys follow `numkeys` (Redis's movablekeys), so no fixed range; a
/// script's cost depends on the script, hence O_N.
const EVAL: CommandSpec = CommandSpec {
    arity: -3,
    flags: NOSCRIPT | STALE | SKIP_MONITOR | O_N,
    acl_categories: SCRIPTING,
    group: "scripting",
    summary: "Execute a Lua script server side",
    since: "2.6.0",
    complexity: "Depends on the script that is executed.",
    ..CommandSpec::DEFAULT
};

const SCRIPT_SUB: CommandSpec = CommandSpec {
    arity: 2,
    flags: NOSCRIPT,
    acl_categories: SCRIPTING,
    group: "scripting",
    since: "2.6.0",
    ..CommandSpec::DEFAULT
};

const SCRIPT_SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "script|load",
        arity: 3,
        flags: NOSCRIPT | STALE,
        summary: "Load the specified Lua script into the script cache.",
        complexity: "O(N) with N being the length in bytes of the script body.",
        tips: &["request_policy:all_nodes", "response_policy:all_succeeded"],
        handler: Some(script_load),
        ..SCRIPT_SUB
    },
    CommandSpec {
        name: "script|exists",
        arity: -3,
        summary: "Check existence of scripts in the script cache.",
        complexity: "O(N) with N being the number of scripts to check (so checking a single script is an O(1) operation).",
        tips: &["request_policy:all_shards", "response_policy:agg_logical_and"],
        handler: Some(script_exists),
        ..SCRIPT_SUB
    },
    CommandSpec {
        name: "script|kill",
        flags: NOSCRIPT | ALLOW_BUSY,
        summary: "Kill the script currently in execution.",
        tips: &["request_policy:all_shards", "response_policy:one_succeeded"],
        handler: Some(script_kill),
        ..SCRIPT_SUB
    },
    CommandSpec {
        name: "script|flush",
        arity: -2,
        summary: "Remove all the scripts from the script cache.",
        complexity: "O(N) with N being the number of scripts in cache",
        tips: &["request_policy:all_nodes", "response_policy:all_succeeded"],
        handler: Some(script_flush),
        ..SCRIPT_SUB
    },
    CommandSpec {
        name: "script|debug",
        arity: 3,
        summary: "Set the debug mode for executed scripts.",
        since: "3.2.0",
        handler: Some(script_debug),
        ..SCRIPT_SUB
    },
    CommandSpec {
        name: "script|help",
        flags: LOADING | STALE,
        summary: "Show helpful text about the different subcommands",
        since: "5.0.0",
        handler: Some(script_help),
        ..SCRIPT_SUB
    },
];

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "eval",
        handler: Some(eval_command),
        ..EVAL
    },
    CommandSpec {
        name: "evalsha",
        handler: Some(evalsha_command),
        ..EVAL
    },
    CommandSpec {
        name: "eval_ro",
        flags: READONLY | NOSCRIPT | STALE | SKIP_MONITOR | O_N,
        summary: "Execute a read-only Lua script server side",
        since: "7.0.0",
        handler: Some(eval_ro_command),
        ..EVAL
    },
    CommandSpec {
        name: "evalsha_ro",
        flags: READONLY | NOSCRIPT | STALE | SKIP_MONITOR | O_N,
        summary: "Execute a read-only Lua script server side",
        since: "7.0.0",
        handler: Some(evalsha_ro_command),
        ..EVAL
    },
    CommandSpec {
        name: "script",
        arity: -2,
        acl_categories: &["slow"],
        group: "scripting",
        summary: "A container for Lua scripts management commands",
        since: "2.6.0",
        complexity: "Depends on subcommand.",
        subcommands: SCRIPT_SUBCOMMANDS,
        ..CommandSpec::DEFAULT
    },
];

fn eval_command(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    eval(
        ctx,
        args,
        EvalKind {
            by_sha: false,
            read_only: false,
        },
    );
}

fn evalsha_command(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    eval(
        ctx,
        args,
        EvalKind {
            by_sha: true,
            read_only: false,
        },
    );
}

fn eval_ro_command(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    eval(
        ctx,
        args,
        EvalKind {
            by_sha: false,
            read_only: true,
        },
    );
}

fn evalsha_ro_command(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    eval(
        ctx,
        args,
        EvalKind {
            by_sha: true,
            read_only: true,
        },
    );
}

/// `SCRIPT LOAD script`: compiles and caches it; replies its SHA-1.
fn script_load(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    ctx.work(args[2].len() as u64 / crate::cmd::REPLY_BYTES_PER_WORK_UNIT);
    match ctx.server.scripting.load(&args[2]) {
        Ok(sha) => ctx.w().bulk_str(&sha),
        Err(e) => ctx.error(&e),
    }
}

/// `SCRIPT EXISTS sha...`: 1 or 0 per SHA (case-insensitive).
fn script_exists(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    ctx.work(args.len() as u64);
    let found: Vec<bool> = args[2..]
        .iter()
        .map(|sha| ctx.server.scripting.exists(sha))
        .collect();
    let mut w = ctx.w();
    w.array_len(found.len());
    for f in found {
        w.int(i64::from(f));
    }
}

/// `SCRIPT FLUSH [ASYNC|SYNC]`: forgets every script and resets the Lua
/// state. The cache is small, so ASYNC frees it inline too.
/// Work units to free one cached script: a compiled script is several Lua
/// objects (closure, prototype, constants, body string) freed when the
/// state closes, ≈ 0.3–0.9 µs each on the development machine as the cost
/// audit measured it (`seedkv-sim audit cost --command 'script|flush'`),
/// where one unit of the model's KEYS is ≈ 60 ns.
const SCRIPT_FREE_UNITS: u64 = 8;

fn script_flush(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let ok = match args.get(2) {
        None => true,
        Some(mode) => {
            args.len() == 3
                && (mode.eq_ignore_ascii_case(b"sync") || mode.eq_ignore_ascii_case(b"async"))
        }
    };
    if !ok {
        return ctx.error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    }
    let scripts = ctx.server.scripting.cached_scripts_count() as u64;
    ctx.work(scripts.saturating_mul(SCRIPT_FREE_UNITS));
    ctx.server.scripting.flush();
    ctx.ok();
}

/// `SCRIPT KILL`: stops the EVAL script running past the busy threshold
/// (see [`crate::scripting::busy::kill`]).
fn script_kill(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    crate::scripting::busy::kill(ctx, crate::scripting::busy::ScriptKind::Eval);
}

/// `SCRIPT DEBUG YES|SYNC|NO`: there is no Lua debugger; NO is accepted.
fn script_debug(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let mode = &args[2];
    if mode.eq_ignore_ascii_case(b"no") {
        ctx.ok();
    } else if mode.eq_ignore_ascii_case(b"yes") || mode.eq_ignore_ascii_case(b"sync") {
        ctx.error("ERR SCRIPT DEBUG YES/SYNC is not supported: seedkv has no Lua debugger");
    } else {
        ctx.error("ERR Use SCRIPT DEBUG YES/SYNC/NO");
    }
}

fn script_help(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    help_reply(
        ctx,
        "SCRIPT",
        &[
            "DEBUG (YES|SYNC|NO)",
            "    Set the debug mode for subsequent scripts executed.",
            "EXISTS <sha1> [<sha1> ...]",
            "    Return information about the existence of the scripts in the script cache.",
            "FLUSH [ASYNC|SYNC]",
            "    Flush the Lua scripts cache. Very dangerous on replicas.",
            "    When called without the optional mode argument, the behavior is determined by the",
            "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
            "    * ASYNC: Asynchronously flush the scripts cache.",
            "    * SYNC: Synchronously flush the scripts cache.",
            "KILL",
            "    Kill the currently executing Lua script.",
            "LOAD <script>",
            "    Load a script into the scripts cache without executing it.",
        ],
    );
}
