//! The functions' own Lua state (Redis 7.0 keeps one apart from EVAL's, so
//! that a library's globals and upvalues never meet a script's), and
//! `redis.register_function`, which collects what a library's code
//! registers while FUNCTION LOAD runs it.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use mlua::{Function, Lua, MultiValue, RegistryKey, Table, Value};

use super::metadata::{valid_name, BAD_NAME};
use super::prelude::FUNCTIONS_PRELUDE;
use crate::scripting::api::ScriptError;
use crate::scripting::lua::{self, Vm};
use crate::scripting::sandbox::PRELUDE_CHUNK_NAME;
use crate::scripting::ScriptFlags;

/// The chunk name library code compiles under: positions read
/// `user_function:LINE:` and sources `@user_function`, as in Redis.
pub const FUNCTION_CHUNK_NAME: &str = "@user_function";

/// Redis stops a library's load after 500 ms (`LOAD_TIMEOUT_MS`), with
/// "FUNCTION LOAD timeout". Here the bound is counted in VM instructions
/// at the engine's stopwatch rate, so that it is a function of the code,
/// not of the machine.
pub const LOAD_TIMEOUT_MS: u64 = 500;
pub const LOAD_TIMEOUT_INSTRUCTIONS: u64 =
    LOAD_TIMEOUT_MS * 1_000_000 / crate::stopwatch::WORK_UNIT_NS * lua::INSTRUCTIONS_PER_WORK_UNIT;

/// One function a library's code registered.
pub struct Registered {
    pub name: String,
    pub description: Option<Vec<u8>>,
    pub flags: ScriptFlags,
    pub callback: RegistryKey,
}

/// What `redis.register_function` appends to while a load runs; `None`
/// outside FUNCTION LOAD.
type Collector = Rc<RefCell<Option<Vec<Registered>>>>;

/// The functions' Lua state.
pub struct FunctionsVm {
    pub vm: Vm,
    set_loading: Function,
    load: Function,
    pub call: Function,
    collector: Collector,
    loading: Rc<Cell<bool>>,
}

impl FunctionsVm {
    pub fn new() -> mlua::Result<FunctionsVm> {
        let vm = Vm::new()?;
        let collector: Collector = Rc::new(RefCell::new(None));
        let register = {
            let collector = Rc::clone(&collector);
            vm.lua.create_function(move |lua, args: MultiValue| {
                register_function(lua, &collector, args)
            })?
        };
        let api: Table = vm
            .lua
            .load(FUNCTIONS_PRELUDE)
            .set_name(PRELUDE_CHUNK_NAME)
            .call((vm.api.env.clone(), register))?;
        let loading = Rc::new(Cell::new(false));
        lua::install_count_hook(&vm, Some(Rc::clone(&loading)));
        Ok(FunctionsVm {
            set_loading: api.get("set_loading")?,
            load: api.get("load")?,
            call: api.get("call")?,
            vm,
            collector,
            loading,
        })
    }

    /// Compiles and runs a library's Lua source, returning the functions
    /// it registered and the VM instructions it ran; the error is the
    /// reply text (`ERR Error compiling function: ...`, `ERR Error
    /// registering functions: ...`).
    pub fn run_library(&mut self, body: &[u8]) -> (Result<Vec<Registered>, String>, u64) {
        let chunk = match self
            .vm
            .lua
            .load(body)
            .set_name(FUNCTION_CHUNK_NAME)
            .into_function()
        {
            Ok(chunk) => chunk,
            Err(e) => {
                let msg = match e {
                    mlua::Error::SyntaxError { message, .. } => message,
                    other => other.to_string(),
                };
                return (Err(format!("ERR Error compiling function: {msg}")), 0);
            }
        };
        let before = self.vm.instructions.get();
        self.vm
            .kill_at
            .set(before.saturating_add(LOAD_TIMEOUT_INSTRUCTIONS));
        self.loading.set(true);
        *self.collector.borrow_mut() = Some(Vec::new());
        let outcome = self.set_loading.call::<()>(true).and_then(|()| {
            let (ok, err): (bool, Value) = self.load.call(chunk)?;
            Ok((ok, err))
        });
        self.vm.kill_at.set(u64::MAX);
        self.loading.set(false);
        let reset = self.set_loading.call::<()>(false);
        let registered = self.collector.borrow_mut().take().unwrap_or_default();
        let instructions = self.vm.instructions.get().wrapping_sub(before);
        let result = match (outcome, reset) {
            (Ok((true, _)), Ok(())) => Ok(registered),
            (Ok((false, err)), _) => Err(format!(
                "ERR Error registering functions: {}",
                String::from_utf8_lossy(&error_text(&err))
            )),
            (Err(e), _) | (_, Err(e)) => Err(format!("ERR Error registering functions: {e}")),
        };
        (result, instructions)
    }
}

/// The message of what a library's code raised (Redis's
/// `luaExtractErrorInformation`): a string gets `ERR ` in front, an error
/// table gives its `err`, an error of a Rust function its text.
fn error_text(err: &Value) -> Vec<u8> {
    match err {
        Value::String(s) => [b"ERR ".as_slice(), &s.as_bytes()].concat(),
        Value::Table(t) => match t.raw_get::<Value>("err") {
            Ok(Value::String(s)) => s.as_bytes().to_vec(),
            _ => b"ERR unknown error".to_vec(),
        },
        Value::Error(e) => {
            let (msg, is_table) = crate::scripting::api::error_message(e);
            if is_table {
                msg
            } else {
                [b"ERR ".as_slice(), &msg].concat()
            }
        }
        other => format!("ERR {}", other.type_name()).into_bytes(),
    }
}

/// Raises Redis's error table for `msg` (luaPushError + luaError).
fn raise(msg: &str) -> mlua::Error {
    mlua::Error::external(ScriptError(format!("ERR {msg}").into_bytes()))
}

/// `redis.register_function(name, callback)` or
/// `redis.register_function{function_name=..., callback=..., flags={...},
/// description=...}` (luaRegisterFunction), with Redis's errors.
fn register_function(lua: &Lua, collector: &Collector, args: MultiValue) -> mlua::Result<()> {
    if collector.borrow().is_none() {
        return Err(raise(
            "redis.register_function can only be called on FUNCTION LOAD command",
        ));
    }
    let registered = match args.len() {
        1 => named_args(lua, args.front().cloned().unwrap_or(Value::Nil))?,
        2 => positional_args(lua, &args)?,
        _ => {
            return Err(raise(
                "wrong number of arguments to redis.register_function",
            ))
        }
    };
    let mut collected = collector.borrow_mut();
    let list = collected.as_mut().expect("checked above");
    if !valid_name(registered.name.as_bytes()) {
        return Err(raise(BAD_NAME));
    }
    if list
        .iter()
        .any(|r| r.name.eq_ignore_ascii_case(&registered.name))
    {
        return Err(raise("Function already exists in the library"));
    }
    list.push(registered);
    Ok(())
}

/// A string argument as `lua_isstring` accepts it: a string, or a number
/// in Lua's `%.14g` form.
fn lua_string(lua: &Lua, v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::String(s) => Some(s.as_bytes().to_vec()),
        Value::Integer(_) | Value::Number(_) => lua
            .coerce_string(v.clone())
            .ok()
            .flatten()
            .map(|s| s.as_bytes().to_vec()),
        _ => None,
    }
}

fn positional_args(lua: &Lua, args: &MultiValue) -> mlua::Result<Registered> {
    let Some(name) = args.front().and_then(|v| lua_string(lua, v)) else {
        return Err(raise(
            "first argument to redis.register_function must be a string",
        ));
    };
    let Some(Value::Function(callback)) = args.get(1) else {
        return Err(raise(
            "second argument to redis.register_function must be a function",
        ));
    };
    Ok(Registered {
        name: String::from_utf8_lossy(&name).into_owned(),
        description: None,
        flags: declared(),
        callback: lua.create_registry_value(callback.clone())?,
    })
}

/// The flags of every function: declared (functions have no
/// compatibility mode), none set.
fn declared() -> ScriptFlags {
    ScriptFlags {
        declared: true,
        ..ScriptFlags::default()
    }
}

fn named_args(lua: &Lua, table: Value) -> mlua::Result<Registered> {
    let Value::Table(table) = table else {
        return Err(raise("calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments)."));
    };
    let (mut name, mut description, mut callback) = (None, None, None);
    let mut flags = declared();
    for pair in table.pairs::<Value, Value>() {
        let (key, value) = pair?;
        let Some(key) = lua_string(lua, &key) else {
            return Err(raise(
                "named argument key given to redis.register_function is not a string",
            ));
        };
        match key.to_ascii_lowercase().as_slice() {
            b"function_name" => match lua_string(lua, &value) {
                Some(s) => name = Some(s),
                None => {
                    return Err(raise(
                        "function_name argument given to redis.register_function must be a string",
                    ))
                }
            },
            b"description" => match lua_string(lua, &value) {
                Some(s) => description = Some(s),
                None => {
                    return Err(raise(
                        "description argument given to redis.register_function must be a string",
                    ))
                }
            },
            b"callback" => match value {
                Value::Function(f) => callback = Some(f),
                _ => {
                    return Err(raise(
                        "callback argument given to redis.register_function must be a function",
                    ))
                }
            },
            b"flags" => match value {
                Value::Table(t) => flags = read_flags(lua, &t)?,
                _ => return Err(raise("flags argument to redis.register_function must be a table representing function flags")),
            },
            _ => return Err(raise("unknown argument given to redis.register_function")),
        }
    }
    let Some(name) = name else {
        return Err(raise(
            "redis.register_function must get a function name argument",
        ));
    };
    let Some(callback) = callback else {
        return Err(raise(
            "redis.register_function must get a callback argument",
        ));
    };
    Ok(Registered {
        name: String::from_utf8_lossy(&name).into_owned(),
        description,
        flags,
        callback: lua.create_registry_value(callback)?,
    })
}

/// Reads `flags[1]`, `flags[2]`, ... up to the first nil
/// (luaRegisterFunctionReadFlags); names compare without case.
fn read_flags(lua: &Lua, t: &Table) -> mlua::Result<ScriptFlags> {
    let mut flags = declared();
    // A flags table can hold at most a few entries that mean anything;
    // the bound only stops a pathological table (a million repeats of
    // "no-writes") from being walked for nothing: Lua's own array limit
    // applies anyway.
    for i in 1..=FLAGS_MAX {
        let v: Value = t.raw_get(i)?;
        if v.is_nil() {
            return Ok(flags);
        }
        let Some(name) = lua_string(lua, &v) else {
            return Err(raise("unknown flag given"));
        };
        match name.to_ascii_lowercase().as_slice() {
            b"no-writes" => flags.no_writes = true,
            b"allow-oom" => flags.allow_oom = true,
            b"allow-stale" => flags.allow_stale = true,
            b"no-cluster" => flags.no_cluster = true,
            b"allow-cross-slot-keys" => flags.allow_cross_slot_keys = true,
            _ => return Err(raise("unknown flag given")),
        }
    }
    Err(raise("unknown flag given"))
}

/// The most entries a flags table is read for.
const FLAGS_MAX: usize = 64;
