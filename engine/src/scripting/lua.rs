//! One Lua 5.1 state per server (Redis's `lctx.lua`), created on first use
//! and dropped by SCRIPT FLUSH: the libraries Redis opens, the sandbox
//! prelude, the error handler, the instruction-count hook that charges a
//! script's work, and the compiled scripts by SHA.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;

use mlua::{Function, HookTriggers, Lua, LuaOptions, StdLib, Table, Value, VmState};

use super::sandbox::{PRELUDE, PRELUDE_CHUNK_NAME};

/// The chunk name scripts compile under, so that positions read
/// `user_script:LINE:` and sources `@user_script`, as in Redis.
pub const SCRIPT_CHUNK_NAME: &str = "@user_script";

/// VM instructions between two calls of the count hook. Redis checks for a
/// busy script every 100000 instructions; work is charged at the same
/// points, so a finer step costs hook calls without changing totals much.
pub const HOOK_INSTRUCTIONS: u32 = 1000;

/// VM instructions in a slice: a script that may be suspended gives
/// control back to the host after each (Redis checks for a busy script
/// every 100000 instructions too). A multiple of [`HOOK_INSTRUCTIONS`].
pub const SLICE_INSTRUCTIONS: u64 = 100_000;

/// Lua VM instructions per work unit. A unit is the cost of visiting a key
/// (about 300 ns on the reference machine, `stopwatch::WORK_UNIT_NS`); Lua
/// 5.1 runs an instruction in roughly 5 to 10 ns, so about 32 of them.
pub const INSTRUCTIONS_PER_WORK_UNIT: u64 = 32;

/// The most memory a Lua state may allocate: past it allocations fail with
/// Lua's "not enough memory" error inside the script, instead of taking
/// the host's memory down (Redis has no such bound and would be OOM-killed).
pub const LUA_MEMORY_MAX_BYTES: usize = 512 << 20;

/// The prelude's entry points (see [`super::sandbox`]).
pub struct Api {
    /// The environment every script runs in (read-only; see
    /// [`super::sandbox`]).
    pub env: Table,
    /// `run(function, KEYS, ARGV)`: the protected call of a script.
    pub run: Function,
}

/// The server's Lua state.
pub struct Vm {
    pub lua: Lua,
    pub api: Api,
    /// Compiled scripts by lowercase SHA-1 hex (Redis's `f_<sha>`), kept in
    /// the Lua registry: a `Function` handle holds one slot of mlua's
    /// auxiliary stack, which has room for only ~8000, so caching more
    /// scripts than that as handles panicked (found by the cost audit).
    pub functions: BTreeMap<String, mlua::RegistryKey>,
    /// VM instructions counted by the hook since the state was created.
    pub instructions: Rc<Cell<u64>>,
    /// The count past which the running script is stopped (see
    /// [`BUSY_INSTRUCTIONS`], and SCRIPT KILL, which sets it to 0);
    /// `u64::MAX` between runs.
    pub kill_at: Rc<Cell<u64>>,
    /// The count at which the running script's slice ends (see
    /// [`super::task`]).
    pub slice_at: Rc<Cell<u64>>,
}

/// Redis's `busy-reply-threshold` (`lua-time-limit`) default. Redis starts
/// answering other clients `-BUSY` past it and lets SCRIPT KILL stop the
/// script (see [`super::busy`]).
pub const BUSY_REPLY_THRESHOLD_MS: u64 = 5000;

/// A script that cannot give control back (one inside EXEC, whose
/// commands run back to back inside one request) runs inside one command,
/// so no other client can be served meanwhile: one still running past
/// this many instructions is stopped as SCRIPT KILL would stop it
/// (Redis's "Script killed by user" error). Without that, such a script
/// that never ends would stop the engine for good. The default threshold
/// in VM instructions, deterministically: milliseconds to work units
/// through the engine's stopwatch rate (`WORK_UNIT_NS` per unit), then to
/// instructions.
pub const BUSY_INSTRUCTIONS: u64 = BUSY_REPLY_THRESHOLD_MS * 1_000_000
    / crate::stopwatch::WORK_UNIT_NS
    * INSTRUCTIONS_PER_WORK_UNIT;

impl Vm {
    pub fn new() -> mlua::Result<Vm> {
        let libs = StdLib::TABLE | StdLib::STRING | StdLib::MATH;
        let lua = Lua::new_with(libs, LuaOptions::default())?;
        lua.set_memory_limit(LUA_MEMORY_MAX_BYTES)?;
        super::convert::FieldNames::install(&lua)?;
        let globals = lua.globals();
        for name in ["dofile", "loadfile", "print", "module", "require"] {
            globals.raw_set(name, Value::Nil)?;
        }
        let redis = lua.create_table()?;
        super::api::fill_redis(&lua, &redis)?;
        let math = lua.create_table()?;
        for pair in globals.get::<Table>("math")?.pairs::<Value, Value>() {
            let (k, v) = pair?;
            math.raw_set(k, v)?;
        }
        super::api::fill_math(&lua, &math)?;
        let libs = lua.create_table()?;
        libs.raw_set("bit", super::bit::library(&lua)?)?;
        libs.raw_set("cjson", super::cjson::library(&lua)?)?;
        libs.raw_set("cmsgpack", super::cmsgpack::library(&lua)?)?;
        libs.raw_set("struct", super::lstruct::library(&lua)?)?;
        let handler = lua.create_function(error_handler)?;
        let errmsg = lua.create_function(|lua, v: Value| match v {
            Value::Error(e) => {
                let (msg, _) = super::api::error_message(&e);
                Ok(Value::String(lua.create_string(msg)?))
            }
            other => Ok(other),
        })?;
        let api: Table = lua
            .load(PRELUDE)
            .set_name(PRELUDE_CHUNK_NAME)
            .call((redis, math, libs, handler, errmsg))?;
        let proxies = super::sandbox_base::Proxies {
            real: api.get("proxies")?,
            env: api.get("env")?,
            env_metatable: api.get("env_metatable")?,
            string_metatable: api.get("string_metatable")?,
        };
        super::sandbox_base::install(&lua, &proxies, &api.get("install")?)?;
        let api = Api {
            env: api.get("env")?,
            run: api.get("run")?,
        };
        let vm = Vm {
            lua,
            api,
            functions: BTreeMap::new(),
            instructions: Rc::new(Cell::new(0u64)),
            kill_at: Rc::new(Cell::new(u64::MAX)),
            slice_at: Rc::new(Cell::new(u64::MAX)),
        };
        install_count_hook(&vm, None);
        Ok(vm)
    }

    /// The counters a run reads and sets (see [`super::busy`]).
    pub fn counters(&self) -> super::busy::Counters {
        super::busy::Counters {
            instructions: Rc::clone(&self.instructions),
            kill_at: Rc::clone(&self.kill_at),
            slice_at: Rc::clone(&self.slice_at),
        }
    }

    /// Compiles `body` (its shebang line already blanked) as the script
    /// `sha`; the error is Redis's "Error compiling script" text.
    pub fn compile(&mut self, sha: &str, body: &[u8]) -> Result<(), String> {
        if self.functions.contains_key(sha) {
            return Ok(());
        }
        let f = self
            .lua
            .load(body)
            .set_name(SCRIPT_CHUNK_NAME)
            .into_function()
            .map_err(|e| {
                let msg = match e {
                    mlua::Error::SyntaxError { message, .. } => message,
                    other => other.to_string(),
                };
                format!("ERR Error compiling script (new function): {msg}")
            })?;
        let key = self
            .lua
            .create_registry_value(f)
            .map_err(|e| format!("ERR Error compiling script (new function): {e}"))?;
        self.functions.insert(sha.to_string(), key);
        Ok(())
    }

    /// Bytes the Lua state uses (INFO `used_memory_lua`).
    pub fn used_memory_bytes(&self) -> usize {
        self.lua.used_memory()
    }
}

/// Sets `vm`'s count hook: it counts instructions (work is charged from
/// the count), stops the run past `kill_at` (the threshold of a run that
/// cannot give control back, SCRIPT KILL, FUNCTION LOAD's timeout), and
/// suspends the run at the end of every slice. `loading` is set while
/// FUNCTION LOAD runs a library's code: its stop is the load timeout.
pub fn install_count_hook(vm: &Vm, loading: Option<Rc<Cell<bool>>>) {
    let meter = Rc::new(super::meter::Meter {
        instructions: Rc::clone(&vm.instructions),
        kill_at: Rc::clone(&vm.kill_at),
        slice_at: Rc::clone(&vm.slice_at),
        loading,
    });
    // The Rust libraries charge their loops to the same counters.
    vm.lua.set_app_data(Rc::clone(&meter));
    vm.lua.set_hook(
        HookTriggers::new().every_nth_instruction(HOOK_INSTRUCTIONS),
        move |lua, _| {
            meter.advance(lua, u64::from(HOOK_INSTRUCTIONS))?;
            Ok(VmState::Continue)
        },
    );
}

/// Redis's `__redis__err__handler`: turns what a script raised into the
/// table `{err=..., source=..., line=...}` EVAL replies from. The position
/// is the script's frame: the raising C function (`error`, `redis.call`)
/// and the prelude's own frames are skipped.
fn error_handler(lua: &Lua, err: Value) -> mlua::Result<Table> {
    let frame = script_frame(lua);
    let t = match err {
        Value::Table(t) => t,
        Value::Error(e) if super::api::error_message(&e).1 => {
            // A Redis API function's error table, raised as a Rust error.
            let t = lua.create_table()?;
            t.raw_set("err", lua.create_string(super::api::error_message(&e).0)?)?;
            t
        }
        other => {
            let t = lua.create_table()?;
            let msg = describe(lua, &other);
            t.raw_set("err", lua.create_string(&msg)?)?;
            t
        }
    };
    if let Some((source, _, line)) = frame {
        t.raw_set("source", source)?;
        t.raw_set("line", line)?;
    }
    Ok(t)
}

/// (source, short_src, current line) of the frame an error is reported at.
type Frame = (String, String, i32);

fn script_frame(lua: &Lua) -> Option<Frame> {
    // Level 0 is this handler; 1 the function that raised.
    let mut level = 1;
    let mut first = true;
    // A script cannot nest deeper than Lua's C stack allows (LUAI_MAXCCALLS
    // is 200), so this bound is never the reason the walk stops.
    while level < 256 {
        let debug = lua.inspect_stack(level)?;
        let source = debug.source();
        let what = source.what;
        let src = source.source.as_deref().unwrap_or("").to_string();
        let short = source.short_src.as_deref().unwrap_or("").to_string();
        level += 1;
        if first && what == "C" {
            first = false;
            continue;
        }
        first = false;
        if src == super::sandbox::PRELUDE_CHUNK_NAME {
            continue;
        }
        return Some((src, short, debug.curr_line()));
    }
    None
}

/// The message of a raised non-table value: Redis's `'ERR ' ..
/// tostring(err)`; an error raised by a Rust function gives its message
/// (which carries its position, see `api::error_at_caller`).
fn describe(lua: &Lua, v: &Value) -> Vec<u8> {
    let mut msg = b"ERR ".to_vec();
    match v {
        Value::String(s) => msg.extend_from_slice(&s.as_bytes()),
        Value::Integer(_) | Value::Number(_) => {
            if let Ok(Some(s)) = lua.coerce_string(v.clone()) {
                msg.extend_from_slice(&s.as_bytes());
            }
        }
        Value::Nil => msg.extend_from_slice(b"nil"),
        Value::Boolean(b) => msg.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Error(e) => msg.extend_from_slice(&super::api::error_message(e).0),
        other => msg.extend_from_slice(other.type_name().as_bytes()),
    }
    msg
}
