//! `redis.call` / `redis.pcall`: a script's command runs through the
//! engine's command pipeline (see `crate::pipeline`) for the calling
//! client, with Redis's checks in `scriptCall` order (unknown command,
//! arity, NOSCRIPT, read-only), never blocking, counted in INFO
//! commandstats, touching watched keys, and recorded as an execution of the
//! script's group (`Executed::in_exec` = the EVAL's request).

use mlua::{Lua, MultiValue, Value};

use super::convert;
use super::Run;
use crate::cmd::{flags, Ctx};
use crate::pipeline::{Found, Resolved};
use crate::resp::{FrameDecoder, Protocol};

/// Redis's errors for a command a script may not run.
const UNKNOWN_COMMAND: &str = "Unknown Redis command called from script";
const WRONG_ARITY: &str = "Wrong number of args calling Redis command from script";
const NOT_ALLOWED: &str = "This Redis command is not allowed from script";
const READ_ONLY: &str = "Write commands are not allowed from read-only scripts.";
const NO_ARGUMENTS: &str = "Please specify at least one argument for this redis lib call";
const BAD_ARGUMENT: &str = "Lua redis lib command arguments must be strings or integers";

/// The per-run host function behind the prelude's `host(op, ...)`.
pub fn host(lua: &Lua, ctx: &mut Ctx, run: &mut Run, args: MultiValue) -> mlua::Result<MultiValue> {
    let mut args = args.into_iter();
    let op = match args.next() {
        Some(Value::Integer(n)) => n,
        Some(Value::Number(n)) => n as i64,
        _ => 0,
    };
    match op {
        1 => {
            let raise = matches!(args.next(), Some(Value::Boolean(true)));
            let (value, failed) = call(lua, ctx, run, args.collect())?;
            let failed = Value::Boolean(raise && failed);
            Ok(MultiValue::from_iter([value, failed]))
        }
        2 => Ok(MultiValue::from_iter([Value::Number(run.rng.next_unit())])),
        3 => {
            let seed = match args.next() {
                Some(Value::Integer(n)) => n as i32,
                Some(Value::Number(n)) => n as i64 as i32,
                _ => 0,
            };
            run.rng = super::rand48::Rand48::new(seed);
            Ok(MultiValue::new())
        }
        5 => {
            // redis.acl_check_cmd: whether the command exists (no ACLs).
            let argv: Vec<Value> = args.collect();
            let known = to_argv(lua, &argv)
                .is_ok_and(|argv| ctx.server.commands.lookup(&argv[0]).is_some());
            Ok(MultiValue::from_iter([Value::Nil, Value::Boolean(!known)]))
        }
        4 => {
            run.resp = match args.next() {
                Some(Value::Integer(3)) => Protocol::Resp3,
                Some(Value::Number(3.0)) => Protocol::Resp3,
                _ => Protocol::Resp2,
            };
            Ok(MultiValue::new())
        }
        6 => {
            // redis.set_repl: the stream is the AOF's, so its bit decides
            // (REPL_AOF and REPL_ALL propagate; REPL_REPLICA and REPL_NONE
            // do not).
            run.propagate = match args.next() {
                Some(Value::Integer(n)) => n & 1 != 0,
                Some(Value::Number(n)) => (n as i64) & 1 != 0,
                _ => true,
            };
            Ok(MultiValue::new())
        }
        _ => Ok(MultiValue::new()),
    }
}

/// Runs one command for the script: its reply as a Lua value, and whether
/// it is an error (which `redis.call` raises).
fn call(lua: &Lua, ctx: &mut Ctx, run: &mut Run, args: Vec<Value>) -> mlua::Result<(Value, bool)> {
    let argv = match to_argv(lua, &args) {
        Ok(argv) => argv,
        Err(msg) => return Ok((rejected(lua, msg)?, true)),
    };
    let spec = match resolve(ctx, &argv) {
        Ok(spec) => spec,
        Err(msg) => return Ok((rejected(lua, msg)?, true)),
    };
    if let Err(msg) = permitted(ctx, run, spec, &argv) {
        return Ok((rejected(lua, msg)?, true));
    }
    if run.read_only && spec.1.flags & (flags::WRITE | flags::MAY_REPLICATE) != 0 {
        return Ok((rejected(lua, READ_ONLY)?, true));
    }
    let role = ctx.client().repl_role;
    if spec.1.has(flags::WRITE) && crate::repl::replica::refuses_writes(ctx.server, role) {
        return Ok((error_table(lua, crate::repl::replica::READONLY)?, true));
    }
    if spec.1.has(flags::WRITE) {
        if crate::planted::defers_script_write(ctx, run.wrote) {
            crate::planted::defer_script_write(ctx, argv, run.request_seq);
            let t = lua.create_table()?;
            t.raw_set("ok", "OK")?;
            return Ok((Value::Table(t), false));
        }
        run.wrote = true;
    }
    let reply = execute(ctx, run, spec, argv);
    let mut decoder = FrameDecoder::new();
    decoder.feed(&reply);
    let frame = match decoder.next_frame() {
        Ok(Some(frame)) => frame,
        _ => return Ok((Value::Nil, false)),
    };
    let failed = matches!(frame, crate::resp::Frame::Error(_));
    Ok((convert::frame_to_lua(lua, &frame, run.resp)?, failed))
}

/// Redis's `scriptVerifyACL`: the script's caller's user must be allowed
/// the command, its keys and channels; a denial is logged (context `lua`).
fn permitted(
    ctx: &mut Ctx,
    run: &Run,
    (_, spec): Resolved,
    argv: &[Vec<u8>],
) -> Result<(), &'static str> {
    use crate::pipeline::permit;
    if ctx.server.planted.script_skips_acl() {
        return Ok(());
    }
    let c = &ctx.clients[&ctx.client_id];
    let (result, work_units) = permit::check_client(ctx.server, c, spec, argv);
    ctx.work_units += work_units;
    let Err(denied) = result else {
        return Ok(());
    };
    let context = (crate::acl::log::Context::Lua, ctx.spec.name);
    let caller = (c, run.caller_argv_bytes);
    permit::log_denial(ctx.server, caller, ctx.now, context, (spec, denied), argv);
    Err(denied.script_message())
}

/// An error of the script's call itself (not of the command), as a Lua
/// error table.
fn rejected(lua: &Lua, msg: &str) -> mlua::Result<Value> {
    error_table(lua, &format!("ERR {msg}"))
}

/// [`rejected`] with the error code given in `msg`.
fn error_table(lua: &Lua, msg: &str) -> mlua::Result<Value> {
    let names = convert::FieldNames::of(lua)?;
    let t = convert::unlimited(lua, || {
        convert::marked_error_table(lua, &names, msg.as_bytes())
    })?;
    Ok(Value::Table(t))
}

/// The arguments as bytes: strings as they are, numbers as `%.17g`.
fn to_argv(lua: &Lua, args: &[Value]) -> Result<Vec<Vec<u8>>, &'static str> {
    if args.is_empty() {
        return Err(NO_ARGUMENTS);
    }
    let _ = lua;
    args.iter()
        .map(|v| match v {
            Value::String(s) => Ok(s.as_bytes().to_vec()),
            Value::Integer(n) => Ok(crate::resp::encode::format_g17(*n as f64).into_bytes()),
            Value::Number(n) => Ok(crate::resp::encode::format_g17(*n).into_bytes()),
            _ => Err(BAD_ARGUMENT),
        })
        .collect()
}

/// Redis's `lookupCommand` plus `scriptCall`'s arity and NOSCRIPT checks.
fn resolve(ctx: &Ctx, argv: &[Vec<u8>]) -> Result<Resolved, &'static str> {
    let resolved = match crate::pipeline::lookup(&ctx.server.commands, argv) {
        None | Some(Found::UnknownSubcommand(_)) => return Err(UNKNOWN_COMMAND),
        Some(Found::NoSubcommand(_)) => return Err(WRONG_ARITY),
        Some(Found::Runs(resolved)) => resolved,
    };
    if !resolved.1.arity_ok(argv.len()) || resolved.1.handler.is_none() {
        return Err(WRONG_ARITY);
    }
    if resolved.1.has(flags::NOSCRIPT) {
        return Err(NOT_ALLOWED);
    }
    Ok(resolved)
}

/// Runs the command through the engine's pipeline for the script's
/// client (see `crate::pipeline::Pipeline::run_script_call`), charging
/// its work to the script.
fn execute(ctx: &mut Ctx, run: &mut Run, command: Resolved, argv: Vec<Vec<u8>>) -> Vec<u8> {
    let (now, client) = (ctx.now, ctx.client_id);
    let unit_before = ctx.server.propagation.unit_mark();
    let (reply, work_units) = crate::pipeline::nested(ctx, |p| {
        p.run_script_call(now, client, run.request_seq, command, (argv, run.resp))
    });
    if !run.propagate {
        ctx.server.propagation.discard_since(unit_before);
    }
    ctx.work(work_units);
    // The messages the call published to the script's own caller join the
    // EVAL's reply now, ahead of it (unless CLIENT REPLY drops that reply:
    // then they stay held until it finishes).
    let c = ctx.client();
    if !c.reply_mode.suppressed() {
        let mut held = std::mem::take(&mut c.held_pushes);
        ctx.reply.append(&mut held);
    }
    reply
}

/// Runs `argv` as a write command of the script run of `request_seq`, for
/// the context's client in its selected database, its reply dropped (the
/// hook of planted bugs replays writes a script put off; see
/// [`crate::planted`]).
pub(crate) fn run_write(ctx: &mut Ctx, argv: Vec<Vec<u8>>, request_seq: u64) {
    let mut run = Run {
        resp: Protocol::Resp2,
        read_only: false,
        wrote: true,
        rng: ctx.server.scripting.rng,
        request_seq,
        propagate: true,
        caller_argv_bytes: 0,
    };
    if let Ok(spec) = resolve(ctx, &argv) {
        drop(execute(ctx, &mut run, spec, argv));
    }
}
