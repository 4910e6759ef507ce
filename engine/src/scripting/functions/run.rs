//! FCALL and FCALL_RO (fcallCommandGeneric): the function runs in the
//! functions' Lua state with `(KEYS, ARGV)` as arguments, its
//! `redis.call`s go through the same host as a script's (see
//! `scripting::call`), it runs in slices and can be killed as a script
//! (see `scripting::busy`), and its reply and errors convert as EVAL's do,
//! with the function's name where EVAL names the script's SHA.

use crate::cmd::Ctx;
use crate::resp::Protocol;
use crate::scripting::{busy, Run};

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
    let run = Run {
        resp: Protocol::Resp2,
        read_only: read_only || flags.no_writes,
        wrote: false,
        rng: ctx.server.scripting.rng,
        request_seq: ctx.server.scripting.request_seq,
        propagate: true,
        caller_argv_bytes: args.iter().map(Vec::len).sum(),
    };
    let target = match ctx.server.functions.target(&args[1]) {
        Ok(target) => target,
        Err(e) => return ctx.error(&e),
    };
    let keys = args[3..keys_end].to_vec();
    let argv = args[keys_end..].to_vec();
    // The request as FUNCTION STATS shows it while the function runs.
    let command = args.to_vec();
    match busy::start(ctx, run, target, (keys, argv), command) {
        Ok(running) => busy::drive(ctx, running),
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

impl super::Functions {
    /// The function `name`, ready to run in the functions' Lua state.
    fn target(&mut self, name: &[u8]) -> Result<busy::Target, String> {
        let (callback, function_name) = {
            let (_, function) = self.function(name).ok_or(NOT_FOUND)?;
            (
                self.vm
                    .as_ref()
                    .ok_or(NOT_FOUND)?
                    .vm
                    .lua
                    .registry_value::<mlua::Function>(&function.callback)
                    .map_err(|e| format!("ERR {e}"))?,
                function.name.clone(),
            )
        };
        let vm = self.vm()?;
        Ok(busy::Target {
            kind: busy::ScriptKind::Function,
            name: function_name,
            lua: vm.vm.lua.clone(),
            function: callback,
            entry: busy::Entry::Function {
                call: vm.call.clone(),
            },
            counters: vm.vm.counters(),
        })
    }
}
