//! FCALL and FCALL_RO (fcallCommandGeneric): the function runs in the
//! functions' Lua state with `(KEYS, ARGV)` as arguments, its
//! `redis.call`s go through the same host as a script's (see
//! `scripting::call`), and its reply and errors convert as EVAL's do, with
//! the function's name where EVAL names the script's SHA.

use std::rc::Rc;

use mlua::{MultiValue, Table, Value};

use crate::cmd::Ctx;
use crate::resp::{Protocol, ReplyWriter};
use crate::scripting::{api, call, convert, lua, string_array, write_script_error, Run};

/// Redis's errors before a function runs.
const NOT_FOUND: &str = "ERR Function not found";
const BAD_NUMKEYS: &str = "ERR Bad number of keys provided";
const RO_WRITE: &str = "ERR Can not execute a script with write flag using *_ro command.";

/// `FCALL function numkeys key... arg...` (`read_only`: FCALL_RO).
pub fn fcall(ctx: &mut Ctx, args: &mut [Vec<u8>], read_only: bool) {
    crate::planted::script_starts(ctx);
    let Some(flags) = ctx.server.functions.flags_of(&args[1]) else {
        return ctx.error(NOT_FOUND);
    };
    let Some(numkeys) = crate::util::parse_i64_strict(&args[2]) else {
        return ctx.error(BAD_NUMKEYS);
    };
    if numkeys > (args.len() - 3) as i64 {
        return ctx.error("ERR Number of keys can't be greater than number of args");
    }
    if numkeys < 0 {
        return ctx.error("ERR Number of keys can't be negative");
    }
    if read_only && !flags.no_writes {
        return ctx.error(RO_WRITE);
    }
    if !flags.no_writes && !flags.allow_oom && over_maxmemory(ctx) {
        return ctx.error(crate::evict::OOM_ERROR);
    }
    let keys_end = 3 + numkeys as usize;
    let mut run = Run {
        resp: Protocol::Resp2,
        read_only: read_only || flags.no_writes,
        wrote: false,
        rng: ctx.server.scripting.rng,
        request_seq: ctx.server.scripting.request_seq,
        propagate: true,
        caller_argv_bytes: args.iter().map(Vec::len).sum(),
    };
    let caller_db = ctx.client().db;
    let outcome = run_function(
        ctx,
        &mut run,
        &args[1],
        &args[3..keys_end],
        &args[keys_end..],
    );
    // A function's SELECT stays inside the function.
    ctx.client().db = caller_db;
    ctx.server.scripting.rng = run.rng;
    match outcome {
        Ok((reply, elements)) => {
            ctx.work(elements);
            ctx.w().raw(&reply);
        }
        Err(e) => ctx.error(&e),
    }
}

/// Whether used memory is over `maxmemory` after the evictions that
/// admitted the command: Redis refuses a function that may write then
/// (`fcallGetCommandFlags` gives it `denyoom` unless it declares
/// `allow-oom` or `no-writes`).
fn over_maxmemory(ctx: &mut Ctx) -> bool {
    let maxmemory_bytes = ctx.server.config.maxmemory_bytes;
    maxmemory_bytes > 0
        && crate::evict::used_memory_bytes(ctx.server, ctx.clients) > maxmemory_bytes
}

/// Runs function `name`; returns its encoded reply (in the caller's
/// protocol) and the number of reply elements.
fn run_function(
    ctx: &mut Ctx,
    run: &mut Run,
    name: &[u8],
    keys: &[Vec<u8>],
    argv: &[Vec<u8>],
) -> Result<(Vec<u8>, u64), String> {
    let functions = &mut ctx.server.functions;
    let lua = functions.vm()?.vm.lua.clone();
    let (callback, function_name) = {
        let (_, function) = functions.function(name).ok_or(NOT_FOUND)?;
        let callback: mlua::Function = lua
            .registry_value(&function.callback)
            .map_err(|e| format!("ERR {e}"))?;
        (callback, function.name.clone())
    };
    let vm = ctx.server.functions.vm()?;
    let call_fn = vm.call.clone();
    let instructions = Rc::clone(&vm.vm.instructions);
    let instructions_before = instructions.get();
    let kill_at = Rc::clone(&vm.vm.kill_at);
    kill_at.set(instructions_before.saturating_add(lua::BUSY_INSTRUCTIONS));
    let protocol = ctx.protocol;
    let result = lua.scope(|scope| {
        let host =
            scope.create_function_mut(|lua, args: MultiValue| call::host(lua, ctx, run, args))?;
        lua.set_named_registry_value(api::HOST_REGISTRY_KEY, host)?;
        let (keys, argv): (Table, Table) = (string_array(&lua, keys)?, string_array(&lua, argv)?);
        let (ok, value): (bool, Value) = call_fn.call((callback, keys, argv))?;
        lua.unset_named_registry_value(api::HOST_REGISTRY_KEY)?;
        Ok((ok, value))
    });
    kill_at.set(u64::MAX);
    let instructions_run = instructions.get().wrapping_sub(instructions_before);
    ctx.work(instructions_run / lua::INSTRUCTIONS_PER_WORK_UNIT);
    let (ok, value) =
        result.map_err(|e| format!("ERR Error running function {function_name}: {e}"))?;
    let mut reply = Vec::new();
    let mut w = ReplyWriter::new(&mut reply, protocol);
    let elements = if ok {
        convert::write_lua_reply(&mut w, run.resp, &value)
    } else {
        write_script_error(&mut w, &value, &function_name);
        1
    };
    Ok((reply, elements))
}
