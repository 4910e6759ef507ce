//! The `redis` table and `math.random`, as Rust functions. They must be C
//! functions, as in Redis: a script's `return redis.call(...)` is a tail
//! call, and a tail call into a Lua function would erase the script's frame
//! that errors report (`on @user_script:LINE`).
//!
//! Errors they raise: Redis raises an error *table* (`{err="ERR ..."}`);
//! a Rust function can only raise an mlua error, so they raise a
//! [`ScriptError`] that the error handler and the sandbox's `pcall` turn
//! back into that table or its message.

use mlua::{Function, Lua, MultiValue, Table, Value};

use super::convert;

/// The functions of the run in progress, kept in the Lua state's app data
/// while a task's body runs (see [`super::task`]): `host` serves the
/// `redis.*` calls that need the server, `slice` suspends the run at the
/// end of a slice (the count hook calls it). App data, not the registry:
/// a named registry value is found by a Lua string made per lookup.
pub struct RunFunctions {
    pub host: Function,
    pub slice: Function,
}

/// An error table's message (`ERR ...`), raised by a Redis API function.
#[derive(Debug, Clone)]
pub struct ScriptError(pub Vec<u8>);

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.0))
    }
}

impl std::error::Error for ScriptError {}

/// Raises Redis's error table `{err = "ERR msg"}` (luaPushError + luaError).
fn raise(msg: &str) -> mlua::Error {
    mlua::Error::external(ScriptError(format!("ERR {msg}").into_bytes()))
}

/// A luaL_error-style error: the message after the calling Lua frame's
/// position (`user_script:1: `).
pub fn error_at_caller(lua: &Lua, msg: &str) -> mlua::Error {
    let position = lua.inspect_stack(1).and_then(|d| {
        let line = d.curr_line();
        let short = d.source().short_src.map(|s| s.into_owned())?;
        (line > 0).then(|| format!("{short}:{line}: "))
    });
    mlua::Error::RuntimeError(format!("{}{msg}", position.unwrap_or_default()))
}

/// The message an mlua error carries: a [`ScriptError`]'s text, or a Rust
/// function's runtime error.
pub fn error_message(e: &mlua::Error) -> (Vec<u8>, bool) {
    match e {
        mlua::Error::CallbackError { cause, .. } => error_message(cause),
        mlua::Error::ExternalError(inner) => match inner.downcast_ref::<ScriptError>() {
            Some(ScriptError(msg)) => (msg.clone(), true),
            None => (inner.to_string().into_bytes(), false),
        },
        mlua::Error::RuntimeError(msg) | mlua::Error::MemoryError(msg) => {
            (msg.clone().into_bytes(), false)
        }
        other => (other.to_string().into_bytes(), false),
    }
}

fn host(lua: &Lua) -> mlua::Result<Function> {
    match lua.app_data_ref::<RunFunctions>() {
        Some(run) => Ok(run.host.clone()),
        None => Err(mlua::Error::runtime("no script is running")),
    }
}

fn call(lua: &Lua, raise_errors: bool, args: MultiValue) -> mlua::Result<Value> {
    let mut full = MultiValue::from_iter([Value::Integer(1), Value::Boolean(raise_errors)]);
    full.extend(args);
    let (value, failed): (Value, bool) = host(lua)?.call(full)?;
    if !failed {
        return Ok(value);
    }
    let msg = match &value {
        Value::Table(t) => match t.raw_get::<Value>("err")? {
            Value::String(s) => s.as_bytes().to_vec(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    Err(mlua::Error::external(ScriptError(msg)))
}

fn single_string_arg(args: &MultiValue) -> Option<mlua::String> {
    match (args.len(), args.front()) {
        (1, Some(Value::String(s))) => Some(s.clone()),
        _ => None,
    }
}

/// `{err = "ERR msg"}` for a bare message (luaPushError).
fn error_table(lua: &Lua, msg: &[u8]) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    let mut text = b"ERR ".to_vec();
    text.extend_from_slice(msg);
    t.raw_set("err", lua.create_string(text)?)?;
    Ok(t)
}

/// Fills `redis` with its functions and constants.
pub fn fill_redis(lua: &Lua, redis: &Table) -> mlua::Result<()> {
    redis.set(
        "call",
        lua.create_function(|lua, a: MultiValue| call(lua, true, a))?,
    )?;
    redis.set(
        "pcall",
        lua.create_function(|lua, a: MultiValue| call(lua, false, a))?,
    )?;
    redis.set(
        "sha1hex",
        lua.create_function(|lua, a: MultiValue| {
            if a.len() != 1 {
                return Err(raise("wrong number of arguments"));
            }
            let bytes = match a.front() {
                Some(v @ (Value::String(_) | Value::Integer(_) | Value::Number(_))) => lua
                    .coerce_string(v.clone())?
                    .map(|s| s.as_bytes().to_vec())
                    .unwrap_or_default(),
                _ => Vec::new(),
            };
            Ok(super::sha1_hex(&bytes))
        })?,
    )?;
    redis.set(
        "error_reply",
        lua.create_function(|lua, a: MultiValue| {
            let Some(s) = single_string_arg(&a) else {
                return error_table(lua, b"wrong number or type of arguments");
            };
            let s = s.as_bytes();
            let mut msg = Vec::with_capacity(s.len() + 1);
            if s.first() == Some(&b'-') {
                msg.extend_from_slice(&s[1..]);
            } else {
                msg.extend_from_slice(&s);
            }
            let t = lua.create_table()?;
            t.raw_set("err", lua.create_string(convert::normalize_error(&msg))?)?;
            Ok(t)
        })?,
    )?;
    redis.set(
        "status_reply",
        lua.create_function(|lua, a: MultiValue| {
            let Some(s) = single_string_arg(&a) else {
                return error_table(lua, b"wrong number or type of arguments");
            };
            let t = lua.create_table()?;
            t.raw_set("ok", s)?;
            Ok(t)
        })?,
    )?;
    redis.set(
        "log",
        lua.create_function(|lua, a: MultiValue| {
            if a.len() < 2 {
                return Err(raise("redis.log() requires two arguments or more."));
            }
            let level = a
                .front()
                .cloned()
                .and_then(|v| lua.coerce_number(v).ok().flatten());
            let Some(level) = level else {
                return Err(raise("First argument must be a number (log level)."));
            };
            if !(0.0..4.0).contains(&level.trunc()) {
                return Err(raise("Invalid debug level."));
            }
            // The engine keeps no log: checked, then dropped.
            Ok(())
        })?,
    )?;
    redis.set(
        "setresp",
        lua.create_function(|lua, a: MultiValue| {
            if a.len() != 1 {
                return Err(raise("redis.setresp() requires one argument."));
            }
            let v = a
                .front()
                .cloned()
                .and_then(|v| lua.coerce_number(v).ok().flatten());
            let v = v.unwrap_or(0.0).trunc();
            if v != 2.0 && v != 3.0 {
                return Err(raise("RESP version must be 2 or 3."));
            }
            host(lua)?.call::<()>((4, v))
        })?,
    )?;
    redis.set(
        "set_repl",
        lua.create_function(|lua, a: MultiValue| {
            if a.len() != 1 {
                return Err(raise("redis.set_repl() requires two arguments."));
            }
            let v = a
                .front()
                .cloned()
                .and_then(|v| lua.coerce_number(v).ok().flatten());
            let v = v.unwrap_or(0.0).trunc() as i64;
            if !(0..=3).contains(&v) {
                return Err(raise(
                    "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.",
                ));
            }
            host(lua)?.call::<()>((6, v))
        })?,
    )?;
    redis.set(
        "replicate_commands",
        lua.create_function(|_, _: MultiValue| Ok(true))?,
    )?;
    redis.set(
        "breakpoint",
        lua.create_function(|_, _: MultiValue| Ok(false))?,
    )?;
    redis.set("debug", lua.create_function(|_, _: MultiValue| Ok(()))?)?;
    redis.set(
        "acl_check_cmd",
        lua.create_function(|lua, a: MultiValue| {
            if a.is_empty() {
                return Err(raise(
                    "Please specify at least one argument for this redis lib call",
                ));
            }
            // No ACLs: every existing command is permitted.
            let mut full = MultiValue::from_iter([Value::Integer(5)]);
            full.extend(a);
            let (_, failed): (Value, bool) = host(lua)?.call(full)?;
            if failed {
                return Err(raise("Invalid command passed to redis.acl_check_cmd()"));
            }
            Ok(true)
        })?,
    )?;
    for (name, value) in [
        ("LOG_DEBUG", 0),
        ("LOG_VERBOSE", 1),
        ("LOG_NOTICE", 2),
        ("LOG_WARNING", 3),
        ("REPL_NONE", 0),
        ("REPL_AOF", 1),
        ("REPL_SLAVE", 2),
        ("REPL_REPLICA", 2),
        ("REPL_ALL", 3),
        ("REDIS_VERSION_NUM", 0x07_00_0f),
    ] {
        redis.set(name, value)?;
    }
    redis.set("REDIS_VERSION", "7.0.15")?;
    Ok(())
}

/// luaL_checkint of argument `i` (1-based) for `name`.
fn check_int(lua: &Lua, v: Option<&Value>, i: usize, name: &str) -> mlua::Result<i64> {
    let n = v.cloned().and_then(|v| lua.coerce_number(v).ok().flatten());
    match n {
        Some(n) => Ok(n.trunc() as i64),
        None => {
            let got = v.map_or("no value", Value::type_name);
            Err(error_at_caller(
                lua,
                &format!("bad argument #{i} to '{name}' (number expected, got {got})"),
            ))
        }
    }
}

/// Replaces `math.random` and `math.randomseed` with Redis's.
pub fn fill_math(lua: &Lua, math: &Table) -> mlua::Result<()> {
    math.set(
        "random",
        lua.create_function(|lua, a: MultiValue| {
            let r: f64 = host(lua)?.call(2)?;
            match a.len() {
                0 => Ok(r),
                1 => {
                    let u = check_int(lua, a.front(), 1, "random")?;
                    if u < 1 {
                        return Err(error_at_caller(
                            lua,
                            "bad argument #1 to 'random' (interval is empty)",
                        ));
                    }
                    Ok((r * u as f64).floor() + 1.0)
                }
                2 => {
                    let l = check_int(lua, a.front(), 1, "random")?;
                    let u = check_int(lua, a.get(1), 2, "random")?;
                    if l > u {
                        return Err(error_at_caller(
                            lua,
                            "bad argument #2 to 'random' (interval is empty)",
                        ));
                    }
                    Ok((r * (u - l + 1) as f64).floor() + l as f64)
                }
                _ => Err(error_at_caller(lua, "wrong number of arguments")),
            }
        })?,
    )?;
    math.set(
        "randomseed",
        lua.create_function(|lua, a: MultiValue| {
            let seed = check_int(lua, a.front(), 1, "randomseed")?;
            host(lua)?.call::<()>((3, seed))
        })?,
    )?;
    Ok(())
}
