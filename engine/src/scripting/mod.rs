//! Lua scripting: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT, with Redis
//! 7.0's semantics (eval.c, script.c, script_lua.c).
//!
//! A script is atomic for the same reason a command is: it runs to the end
//! inside one command's execution, and its `redis.call`s go straight to the
//! command handlers on the calling client's context, with nothing else
//! running in between. The simulator sees that group in the execution
//! records: each call is recorded (`Executed::in_exec` = the EVAL's
//! request) back to back, before the EVAL itself.
//!
//! Determinism: the Lua state is created from nothing but the script
//! sources; `math.random` is Redis's own generator (rand48), whose state
//! is part of the server's; a script's cost is counted in VM instructions by a count hook
//! and charged as work units (see [`lua::INSTRUCTIONS_PER_WORK_UNIT`]).
//! The Lua is patched (third_party/lua-src/PATCHES.md) to hash tables,
//! functions, userdata and coroutines by creation number, not address: a
//! table's layout, `pairs` order and `tostring`, the collector's schedule
//! and with it how deep a recursion gets before "stack overflow" (so the
//! instruction count) are then a function of what ran in the state.
//!
//! Files: `lua` (the state, compile, error handler), `sandbox` (the Lua
//! prelude: read-only globals, the `redis` table, math.random), `call`
//! (redis.call), `convert` (reply <-> Lua), `rand48`, `shebang`; the
//! libraries Redis loads besides Lua's own: `bit`, `cjson`, `cmsgpack`,
//! `lstruct` (struct), with `libarg` (their argument checks), `meter`
//! (their work, charged as VM instructions) and `sandbox_base` (the
//! builtins that see through the sandbox's read-only proxies).

mod api;
mod bit;
pub mod busy;
mod call;
mod cjson;
mod cmsgpack;
mod libarg;
#[cfg(test)]
mod libs_tests;
mod lstruct;
mod meter;
mod sandbox_base;

pub(crate) use call::run_write;
mod convert;
pub mod functions;
mod lua;
mod rand48;
mod sandbox;
mod shebang;
mod task;

use std::collections::BTreeMap;

use mlua::Value;

use crate::cmd::Ctx;
use crate::resp::{Protocol, ReplyWriter};
pub use lua::BUSY_REPLY_THRESHOLD_MS;
pub use shebang::ScriptFlags;

/// Per-server scripting state (Redis's `lctx`).
#[derive(Default)]
pub struct Scripting {
    /// The Lua state, created by the first script, dropped by SCRIPT FLUSH.
    vm: Option<lua::Vm>,
    /// Script bodies by lowercase SHA-1 hex (SCRIPT EXISTS, EVALSHA).
    scripts: BTreeMap<String, Script>,
    /// Bytes of the cached bodies (INFO `used_memory_scripts_eval`).
    scripts_bytes: usize,
    /// `math.random`'s generator. As in Redis 7.0.15 it is not reseeded per
    /// script (a script that wants a reproducible sequence calls
    /// `math.randomseed`); it is part of the server's deterministic state.
    rng: rand48::Rand48,
    /// The request being executed, set by the engine before each command:
    /// a script's calls are recorded under it (see [`call`]).
    pub request_seq: u64,
    /// The script suspended between two slices, if any (see [`busy`]).
    running: Option<Box<busy::Running>>,
    /// The stack scripts run on, kept between runs (see [`task`]).
    spare_stack: Option<corosensei::stack::DefaultStack>,
}

/// A cached script.
struct Script {
    flags: ScriptFlags,
}

/// State of one script run, shared with the host function.
pub struct Run {
    /// The protocol `redis.call` replies are read in (`redis.setresp`).
    resp: Protocol,
    /// EVAL_RO, or a `no-writes` shebang: write commands are refused.
    read_only: bool,
    /// A write command ran (SCRIPT KILL is then refused).
    wrote: bool,
    rng: rand48::Rand48,
    request_seq: u64,
    /// `redis.set_repl`'s AOF bit: while off, the script's calls propagate
    /// nothing (see [`crate::propagate`]).
    propagate: bool,
    /// Bytes of the EVAL's or FCALL's arguments: an ACL LOG entry of a
    /// denied call shows the calling client running it (`argv-mem`).
    caller_argv_bytes: usize,
}

/// Which of the four EVAL forms runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvalKind {
    pub by_sha: bool,
    pub read_only: bool,
}

/// Lowercase SHA-1 hex of `bytes` (script names, `redis.sha1hex`).
pub fn sha1_hex(bytes: &[u8]) -> String {
    sha1_smol::Sha1::from(bytes).digest().to_string()
}

impl Scripting {
    /// Cached scripts (INFO `number_of_cached_scripts`).
    pub fn cached_scripts_count(&self) -> usize {
        self.scripts.len()
    }

    /// Bytes of the cached script bodies.
    pub fn scripts_bytes(&self) -> usize {
        self.scripts_bytes
    }

    /// Bytes the Lua state uses (INFO `used_memory_lua`); a state that does
    /// not exist yet counts as a fresh one.
    pub fn used_memory_lua_bytes(&self) -> usize {
        self.vm
            .as_ref()
            .map_or(FRESH_STATE_BYTES, lua::Vm::used_memory_bytes)
    }

    pub fn exists(&self, sha: &[u8]) -> bool {
        std::str::from_utf8(sha)
            .map(|s| self.scripts.contains_key(&s.to_ascii_lowercase()))
            .unwrap_or(false)
    }

    /// The flags `script` (a body, or a SHA with `by_sha`) declares, as
    /// Redis's `evalGetCommandFlags` finds them before it runs: the cached
    /// script's, else the body's shebang; `None` for an unknown SHA or an
    /// invalid shebang. CLIENT PAUSE WRITE holds a script that may write.
    pub fn declared_flags(&self, script: &[u8], by_sha: bool) -> Option<ScriptFlags> {
        let sha = if by_sha {
            String::from_utf8_lossy(script).to_ascii_lowercase()
        } else {
            sha1_hex(script)
        };
        if let Some(cached) = self.scripts.get(&sha) {
            return Some(cached.flags);
        }
        if by_sha {
            return None;
        }
        shebang::parse(script).ok().map(|(flags, _)| flags)
    }

    /// SCRIPT FLUSH: forgets every script and starts a new Lua state.
    pub fn flush(&mut self) {
        self.vm = None;
        self.scripts.clear();
        self.scripts_bytes = 0;
    }

    /// Compiles and caches `body` (EVAL, SCRIPT LOAD); returns its SHA or
    /// the error reply text.
    pub fn load(&mut self, body: &[u8]) -> Result<String, String> {
        let sha = sha1_hex(body);
        if self.scripts.contains_key(&sha) {
            return Ok(sha);
        }
        let (flags, lua_body) = shebang::parse(body)?;
        let vm = self.vm()?;
        vm.compile(&sha, &lua_body)?;
        self.scripts_bytes += body.len();
        self.scripts.insert(sha.clone(), Script { flags });
        Ok(sha)
    }

    /// The compiled script `sha`, ready to run.
    fn target(&mut self, sha: &str) -> Result<busy::Target, String> {
        let vm = self.vm()?;
        let function: mlua::Function = vm
            .functions
            .get(sha)
            .and_then(|key| vm.lua.registry_value(key).ok())
            .ok_or("ERR script not compiled")?;
        Ok(busy::Target {
            kind: busy::ScriptKind::Eval,
            name: sha.to_string(),
            lua: vm.lua.clone(),
            function,
            entry: busy::Entry::Eval {
                run: vm.api.run.clone(),
            },
            counters: vm.counters(),
        })
    }

    fn vm(&mut self) -> Result<&mut lua::Vm, String> {
        if self.vm.is_none() {
            let vm = lua::Vm::new().map_err(|e| format!("ERR Lua state: {e}"))?;
            self.vm = Some(vm);
        }
        Ok(self.vm.as_mut().expect("created above"))
    }
}

/// `used_memory_lua` of a state before any script, as Redis 7.0.15 reports
/// it (the engine's Lua allocates less, but nothing has run yet).
const FRESH_STATE_BYTES: usize = 32 * 1024;

/// EVAL / EVALSHA / EVAL_RO / EVALSHA_RO `script-or-sha numkeys key... arg...`.
pub fn eval(ctx: &mut Ctx, args: &mut [Vec<u8>], kind: EvalKind) {
    crate::planted::script_starts(ctx);
    let Some(numkeys) = crate::util::parse_i64_strict(&args[2]) else {
        return ctx.error("ERR value is not an integer or out of range");
    };
    if numkeys > (args.len() - 3) as i64 {
        return ctx.error("ERR Number of keys can't be greater than number of args");
    }
    if numkeys < 0 {
        return ctx.error("ERR Number of keys can't be negative");
    }
    let sha = if kind.by_sha {
        let sha = String::from_utf8_lossy(&args[1]).to_ascii_lowercase();
        if args[1].len() != 40 || !ctx.server.scripting.scripts.contains_key(&sha) {
            return ctx.error("NOSCRIPT No matching script. Please use EVAL.");
        }
        sha
    } else {
        match ctx.server.scripting.load(&args[1]) {
            Ok(sha) => sha,
            Err(e) => return ctx.error(&e),
        }
    };
    let flags = ctx.server.scripting.scripts[&sha].flags;
    if kind.read_only && flags.declared && !flags.no_writes {
        return ctx.error("ERR Can not execute a script with write flag using *_ro command.");
    }
    let keys_end = 3 + numkeys as usize;
    let read_only = kind.read_only || (flags.declared && flags.no_writes);
    let run = Run {
        resp: Protocol::Resp2,
        read_only,
        wrote: false,
        rng: ctx.server.scripting.rng,
        request_seq: ctx.server.scripting.request_seq,
        propagate: true,
        caller_argv_bytes: args.iter().map(Vec::len).sum(),
    };
    let target = match ctx.server.scripting.target(&sha) {
        Ok(target) => target,
        Err(e) => return ctx.error(&e),
    };
    let keys = args[3..keys_end].to_vec();
    let argv = args[keys_end..].to_vec();
    // FUNCTION STATS refuses to show an EVAL script: no command is kept.
    match busy::start(ctx, run, target, (keys, argv), Vec::new()) {
        Ok(running) => busy::drive(ctx, running),
        Err(e) => ctx.error(&e),
    }
}

/// The end of a script's or function's run: its reply (or error) to the
/// caller, its SELECT undone, its generator kept. `name` is the script's
/// SHA or the function's name.
fn finish_run(
    ctx: &mut Ctx,
    (lua, run): (&mlua::Lua, Run),
    (kind, name, caller_db, protocol): (busy::ScriptKind, &str, usize, Protocol),
    outcome: task::Outcome,
) {
    // A script's SELECT stays inside the script.
    ctx.client().db = caller_db;
    ctx.server.scripting.rng = run.rng;
    let (ok, value) = match outcome {
        Ok(pair) => pair,
        Err(e) => return ctx.error(&kind.run_error(name, &e)),
    };
    let mut reply = Vec::new();
    let mut w = ReplyWriter::new(&mut reply, protocol);
    let elements = if ok {
        match convert::FieldNames::of(lua) {
            Ok(names) => convert::write_lua_reply(&mut w, &names, run.resp, &value),
            Err(e) => return ctx.error(&kind.run_error(name, &e)),
        }
    } else {
        // Reads three fields by name: without the per-key pcall.
        let _ = convert::unlimited(lua, || {
            write_script_error(&mut w, &value, name);
            Ok(())
        });
        1
    };
    ctx.work(elements);
    ctx.w().raw(&reply);
}

/// EVAL's reply to a script that raised: `-<err> script: <sha>, on
/// <source>:<line>.` (luaCallFunction).
fn write_script_error(w: &mut ReplyWriter, value: &Value, sha: &str) {
    let Value::Table(t) = value else {
        let msg = format!("ERR Error running script {sha}, execution failure");
        return w.error(&msg);
    };
    let text = |name: &str| -> Option<Vec<u8>> {
        match t.raw_get::<Value>(name) {
            Ok(Value::String(s)) => Some(s.as_bytes().to_vec()),
            Ok(Value::Integer(n)) => Some(n.to_string().into_bytes()),
            Ok(Value::Number(n)) => Some(crate::resp::encode::format_g17(n).into_bytes()),
            _ => None,
        }
    };
    let mut msg = b"-".to_vec();
    msg.extend_from_slice(&text("err").unwrap_or_default());
    if let (Some(source), Some(line)) = (text("source"), text("line")) {
        msg.extend_from_slice(format!(" script: {sha}, on ").as_bytes());
        msg.extend_from_slice(&source);
        msg.push(b':');
        msg.extend_from_slice(&line);
        msg.push(b'.');
    }
    convert::write_error_bytes(w, &msg);
}
