//! FCALL, FCALL_RO and FUNCTION LOAD | DELETE | FLUSH | LIST | DUMP |
//! RESTORE | STATS | KILL | HELP, as Redis 7.0.15 (functions.c). The
//! library store and the Lua side are in [`crate::scripting::functions`].

use crate::cmd::{flags::*, CommandSpec, Ctx, REPLY_BYTES_PER_WORK_UNIT};
use crate::commands::config::help_reply;
use crate::scripting::busy::ScriptKind;
use crate::scripting::functions::{payload, run, Library, LoadCost, Policy, ENGINE_NAME};

const SCRIPTING: &[&str] = &["slow", "scripting"];
const WRITE_SCRIPTING: &[&str] = &["write", "slow", "scripting"];

/// A function's cost depends on the function, hence O_N; its keys follow
/// `numkeys`, as EVAL's.
const FCALL: CommandSpec = CommandSpec {
    arity: -3,
    flags: NOSCRIPT | STALE | SKIP_MONITOR | O_N,
    acl_categories: SCRIPTING,
    group: "scripting",
    summary: "Invoke a function",
    since: "7.0.0",
    complexity: "Depends on the function that is executed.",
    ..CommandSpec::DEFAULT
};

const FUNCTION_SUB: CommandSpec = CommandSpec {
    arity: 2,
    flags: NOSCRIPT,
    acl_categories: SCRIPTING,
    group: "scripting",
    since: "7.0.0",
    ..CommandSpec::DEFAULT
};

const FUNCTION_SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "function|load",
        arity: -3,
        flags: WRITE | DENYOOM | NOSCRIPT,
        acl_categories: WRITE_SCRIPTING,
        summary: "Create a function with the given arguments (name, code, description)",
        complexity: "O(1) (considering compilation time is redundant)",
        tips: &["request_policy:all_shards", "response_policy:all_succeeded"],
        handler: Some(function_load),
        ..FUNCTION_SUB
    },
    CommandSpec {
        name: "function|delete",
        arity: 3,
        flags: WRITE | NOSCRIPT,
        acl_categories: WRITE_SCRIPTING,
        summary: "Delete a function by name",
        tips: &["request_policy:all_shards", "response_policy:all_succeeded"],
        handler: Some(function_delete),
        ..FUNCTION_SUB
    },
    CommandSpec {
        name: "function|flush",
        arity: -2,
        flags: WRITE | NOSCRIPT,
        acl_categories: WRITE_SCRIPTING,
        summary: "Deleting all functions",
        complexity: "O(N) where N is the number of functions deleted",
        tips: &["request_policy:all_shards", "response_policy:all_succeeded"],
        handler: Some(function_flush),
        ..FUNCTION_SUB
    },
    CommandSpec {
        name: "function|list",
        arity: -2,
        summary: "List information about all the functions",
        complexity: "O(N) where N is the number of functions",
        tips: &["nondeterministic_output_order"],
        handler: Some(function_list),
        ..FUNCTION_SUB
    },
    CommandSpec {
        name: "function|dump",
        summary: "Dump all functions into a serialized binary payload",
        complexity: "O(N) where N is the number of functions",
        handler: Some(function_dump),
        ..FUNCTION_SUB
    },
    CommandSpec {
        name: "function|restore",
        arity: -3,
        flags: WRITE | DENYOOM | NOSCRIPT,
        acl_categories: WRITE_SCRIPTING,
        summary: "Restore all the functions on the given payload",
        complexity: "O(N) where N is the number of functions on the payload",
        tips: &["request_policy:all_shards", "response_policy:all_succeeded"],
        handler: Some(function_restore),
        ..FUNCTION_SUB
    },
    CommandSpec {
        name: "function|stats",
        flags: NOSCRIPT | ALLOW_BUSY,
        summary:
            "Return information about the function currently running (name, description, duration)",
        tips: &[
            "nondeterministic_output",
            "request_policy:all_shards",
            "response_policy:special",
        ],
        handler: Some(function_stats),
        ..FUNCTION_SUB
    },
    CommandSpec {
        name: "function|kill",
        flags: NOSCRIPT | ALLOW_BUSY,
        summary: "Kill the function currently in execution.",
        tips: &["request_policy:all_shards", "response_policy:one_succeeded"],
        handler: Some(function_kill),
        ..FUNCTION_SUB
    },
    CommandSpec {
        name: "function|help",
        flags: LOADING | STALE,
        summary: "Show helpful text about the different subcommands",
        handler: Some(function_help),
        ..FUNCTION_SUB
    },
];

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "fcall",
        handler: Some(fcall_command),
        ..FCALL
    },
    CommandSpec {
        name: "fcall_ro",
        flags: READONLY | NOSCRIPT | STALE | SKIP_MONITOR | O_N,
        summary: "Invoke a read-only function",
        handler: Some(fcall_ro_command),
        ..FCALL
    },
    CommandSpec {
        name: "function",
        arity: -2,
        acl_categories: &["slow"],
        group: "scripting",
        summary: "A container for function commands",
        since: "7.0.0",
        complexity: "Depends on subcommand.",
        subcommands: FUNCTION_SUBCOMMANDS,
        ..CommandSpec::DEFAULT
    },
];

fn fcall_command(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    run::fcall(ctx, args, false);
}

fn fcall_ro_command(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    run::fcall(ctx, args, true);
}

/// Redis's reply to a subcommand given too many arguments.
fn syntax_error(ctx: &mut Ctx, args: &[Vec<u8>]) {
    let sub = String::from_utf8_lossy(&args[1]);
    ctx.error(&format!(
        "ERR unknown subcommand or wrong number of arguments for '{sub}'. Try FUNCTION HELP."
    ));
}

/// `FUNCTION LOAD [REPLACE] code`: replies the library's name.
fn function_load(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let code_at = args.len() - 1;
    let mut replace = false;
    for option in &args[2..code_at] {
        if !option.eq_ignore_ascii_case(b"replace") {
            let option = String::from_utf8_lossy(option);
            return ctx.error(&format!("ERR Unknown option given: {option}"));
        }
        replace = true;
    }
    let mut cost = LoadCost::default();
    let outcome = ctx
        .server
        .functions
        .load(&args[code_at], replace, &mut cost);
    ctx.work(cost.work_units());
    match outcome {
        Ok(name) => {
            ctx.server.dirty += 1;
            ctx.bulk(name.as_bytes());
        }
        Err(e) => ctx.error(&e),
    }
}

/// `FUNCTION DELETE library`.
fn function_delete(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if !ctx.server.functions.delete(&args[2]) {
        return ctx.error("ERR Library not found");
    }
    ctx.work(1);
    ctx.server.dirty += 1;
    ctx.ok();
}

/// Work units to free one function: its callback closure, prototype and
/// constants in the Lua state, as a cached script's (see SCRIPT FLUSH).
const FUNCTION_FREE_UNITS: u64 = 8;

/// `FUNCTION FLUSH [ASYNC|SYNC]`: the libraries are small, so ASYNC frees
/// them inline too.
fn function_flush(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if args.len() > 3 {
        return syntax_error(ctx, args);
    }
    if let Some(mode) = args.get(2) {
        if !mode.eq_ignore_ascii_case(b"sync") && !mode.eq_ignore_ascii_case(b"async") {
            return ctx.error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
        }
    }
    let functions = ctx.server.functions.functions_count() as u64;
    ctx.work(functions.saturating_mul(FUNCTION_FREE_UNITS));
    ctx.server.functions.flush();
    ctx.server.dirty += 1;
    ctx.ok();
}

/// `FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE]`, each option once.
fn function_list(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let (mut pattern, mut with_code) = (None, false);
    let mut i = 2;
    while i < args.len() {
        let arg = &args[i];
        if arg.eq_ignore_ascii_case(b"withcode") && !with_code {
            with_code = true;
        } else if arg.eq_ignore_ascii_case(b"libraryname") && pattern.is_none() {
            let Some(p) = args.get(i + 1) else {
                return ctx.error("ERR library name argument was not given");
            };
            pattern = Some(p.clone());
            i += 1;
        } else {
            let arg = String::from_utf8_lossy(arg);
            return ctx.error(&format!("ERR Unknown argument {arg}"));
        }
        i += 1;
    }
    let mut steps = 0u64;
    let matching: Vec<&Library> = ctx
        .server
        .functions
        .libraries()
        .filter(|library| match &pattern {
            None => true,
            Some(p) => crate::glob::glob_match(p, library.name.as_bytes(), true, &mut steps),
        })
        .collect();
    let mut out = Vec::new();
    let mut w = crate::resp::ReplyWriter::new(&mut out, ctx.protocol);
    let mut units = crate::glob::work_units(steps);
    w.array_len(matching.len());
    for library in &matching {
        units += write_library(&mut w, library, with_code);
    }
    ctx.work(units + out.len() as u64 / REPLY_BYTES_PER_WORK_UNIT);
    ctx.w().raw(&out);
}

/// One library's FUNCTION LIST entry; returns the work units (one per
/// library and per function).
fn write_library(w: &mut crate::resp::ReplyWriter, library: &Library, with_code: bool) -> u64 {
    w.map_len(if with_code { 4 } else { 3 });
    w.bulk(b"library_name");
    w.bulk(library.name.as_bytes());
    w.bulk(b"engine");
    w.bulk(ENGINE_NAME.as_bytes());
    w.bulk(b"functions");
    w.array_len(library.functions.len());
    for function in library.functions.values() {
        w.map_len(3);
        w.bulk(b"name");
        w.bulk(function.name.as_bytes());
        w.bulk(b"description");
        match &function.description {
            Some(d) => w.bulk(d),
            None => w.null(),
        }
        w.bulk(b"flags");
        let f = function.flags;
        let names = [
            (f.no_writes, "no-writes"),
            (f.allow_oom, "allow-oom"),
            (f.allow_stale, "allow-stale"),
            (f.no_cluster, "no-cluster"),
            (f.allow_cross_slot_keys, "allow-cross-slot-keys"),
        ];
        w.set_len(names.iter().filter(|(on, _)| *on).count());
        for (_, name) in names.iter().filter(|(on, _)| *on) {
            w.simple(name);
        }
    }
    if with_code {
        w.bulk(b"library_code");
        w.bulk(&library.code);
    }
    1 + library.functions.len() as u64
}

/// `FUNCTION DUMP`: the libraries as a RESTORE payload.
fn function_dump(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let compress = crate::commands::config::config_get(&ctx.server.config, "rdbcompression")
        .is_none_or(|v| v == "yes");
    let functions = &ctx.server.functions;
    let payload = payload::dump(functions.libraries(), compress);
    let units =
        functions.libraries_count() as u64 + payload.len() as u64 / REPLY_BYTES_PER_WORK_UNIT;
    ctx.work(units);
    ctx.bulk(&payload);
}

/// `FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE]`.
fn function_restore(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if args.len() > 4 {
        return syntax_error(ctx, args);
    }
    let policy = match args.get(3) {
        None => Policy::Append,
        Some(arg) => match Policy::parse(arg) {
            Some(policy) => policy,
            None => return ctx.error(
                "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.",
            ),
        },
    };
    ctx.work(args[2].len() as u64 / REPLY_BYTES_PER_WORK_UNIT);
    let codes = match payload::parse(&args[2]) {
        Ok(codes) => codes,
        Err(e) => return ctx.error(e),
    };
    let mut cost = LoadCost::default();
    let outcome = ctx.server.functions.restore(codes, policy, &mut cost);
    ctx.work(cost.work_units());
    match outcome {
        Ok(()) => {
            ctx.server.dirty += 1;
            ctx.ok();
        }
        Err(e) => ctx.error(&e),
    }
}

/// `FUNCTION STATS`: the function in progress (`running_script`: its
/// name, the command that called it, how long it has run), nil when none;
/// then the engine's counts. Redis refuses it while an EVAL script runs
/// (`functionStatsCommand` replies the EVAL busy error).
fn function_stats(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let libraries = ctx.server.functions.libraries_count() as i64;
    let functions = ctx.server.functions.functions_count() as i64;
    let now_ns = ctx.now.mono_ns;
    let running = ctx.server.scripting.running_info(now_ns);
    if let Some(info) = running.as_ref().filter(|i| i.kind == ScriptKind::Eval) {
        let busy = info.kind.busy_error();
        return ctx.error(busy);
    }
    let mut reply = Vec::new();
    let mut w = crate::resp::ReplyWriter::new(&mut reply, ctx.protocol);
    w.map_len(2);
    w.bulk(b"running_script");
    let mut units = 0;
    match running {
        None => w.null(),
        Some(info) => {
            w.map_len(3);
            w.bulk(b"name");
            w.bulk(info.name.as_bytes());
            w.bulk(b"command");
            w.array_len(info.command.len());
            for arg in info.command {
                w.bulk(arg);
            }
            w.bulk(b"duration_ms");
            w.int(info.duration_ms as i64);
            units = info.command.len() as u64;
        }
    }
    w.bulk(b"engines");
    w.map_len(1);
    w.bulk(ENGINE_NAME.as_bytes());
    w.map_len(2);
    w.bulk(b"libraries_count");
    w.int(libraries);
    w.bulk(b"functions_count");
    w.int(functions);
    ctx.work(units);
    ctx.w().raw(&reply);
}

/// `FUNCTION KILL`: stops the function running past the busy threshold
/// (see [`crate::scripting::busy::kill`]).
fn function_kill(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    crate::scripting::busy::kill(ctx, ScriptKind::Function);
}

fn function_help(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    help_reply(
        ctx,
        "FUNCTION",
        &[
            "LOAD [REPLACE] <FUNCTION CODE>",
            "    Create a new library with the given library name and code.",
            "DELETE <LIBRARY NAME>",
            "    Delete the given library.",
            "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
            "    Return general information on all the libraries:",
            "    * Library name",
            "    * The engine used to run the Library",
            "    * Library description",
            "    * Functions list",
            "    * Library code (if WITHCODE is given)",
            "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
            "STATS",
            "    Return information about the current function running:",
            "    * Function name",
            "    * Command used to run the function",
            "    * Duration in MS that the function is running",
            "    If no function is running, return nil",
            "    In addition, returns a list of available engines.",
            "KILL",
            "    Kill the current running function.",
            "FLUSH [ASYNC|SYNC]",
            "    Delete all the libraries.",
            "    When called without the optional mode argument, the behavior is determined by the",
            "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
            "    * ASYNC: Asynchronously flush the libraries.",
            "    * SYNC: Synchronously flush the libraries.",
            "DUMP",
            "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
            "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
            "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
            "    control how to handle existing libraries (default APPEND):",
            "    * FLUSH: delete all existing libraries.",
            "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
            "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
            "      libraries with the new libraries (notice that even on this option there is a chance of failure",
            "      in case of functions name collision with another library).",
        ],
    );
}
