//! Argument checks of the Rust libraries (cjson, cmsgpack, struct) with
//! the texts of Lua 5.1's auxiliary library (`luaL_argerror`,
//! `luaL_checknumber`, ...), which the C libraries Redis bundles use.

use mlua::{Lua, MultiValue, Value};

use super::api::error_at_caller;

/// `luaL_error`: the message after the calling script line's position.
pub fn error(lua: &Lua, msg: &str) -> mlua::Error {
    error_at_caller(lua, msg)
}

/// `luaL_argerror`: `bad argument #n to 'f' (msg)`.
pub fn arg_error(lua: &Lua, n: usize, function: &str, msg: &str) -> mlua::Error {
    error(lua, &format!("bad argument #{n} to '{function}' ({msg})"))
}

/// The type name Lua reports for argument `i` (0-based): "no value" past
/// the last one.
pub fn type_name(args: &MultiValue, i: usize) -> &'static str {
    match args.get(i) {
        None => "no value",
        Some(Value::LightUserData(_)) => "userdata",
        Some(Value::Integer(_)) => "number",
        Some(v) => v.type_name(),
    }
}

fn type_error(
    lua: &Lua,
    args: &MultiValue,
    i: usize,
    function: &str,
    expected: &str,
) -> mlua::Error {
    let got = type_name(args, i);
    arg_error(
        lua,
        i + 1,
        function,
        &format!("{expected} expected, got {got}"),
    )
}

/// `luaL_checknumber` of argument `i` (0-based): numbers and numeric
/// strings.
pub fn check_number(lua: &Lua, args: &MultiValue, i: usize, function: &str) -> mlua::Result<f64> {
    let number = match args.get(i) {
        Some(Value::Number(n)) => Some(*n),
        Some(Value::Integer(n)) => Some(*n as f64),
        Some(v @ Value::String(_)) => lua.coerce_number(v.clone())?,
        _ => None,
    };
    number.ok_or_else(|| type_error(lua, args, i, function, "number"))
}

/// `luaL_checkinteger`, as C's `int` (Lua 5.1 truncates the number; the
/// libraries keep it in an `int`).
pub fn check_int(lua: &Lua, args: &MultiValue, i: usize, function: &str) -> mlua::Result<i32> {
    Ok(c_i64(check_number(lua, args, i, function)?) as i32)
}

/// `luaL_optinteger` as an `int`: `default` for a missing or nil argument.
pub fn opt_int(
    lua: &Lua,
    args: &MultiValue,
    i: usize,
    function: &str,
    default: i32,
) -> mlua::Result<i32> {
    match args.get(i) {
        None | Some(Value::Nil) => Ok(default),
        Some(_) => check_int(lua, args, i, function),
    }
}

/// `luaL_checklstring`: strings, and numbers as Lua prints them.
pub fn check_bytes(
    lua: &Lua,
    args: &MultiValue,
    i: usize,
    function: &str,
) -> mlua::Result<Vec<u8>> {
    match args.get(i) {
        Some(Value::String(s)) => Ok(s.as_bytes().to_vec()),
        Some(v @ (Value::Number(_) | Value::Integer(_))) => match lua.coerce_string(v.clone())? {
            Some(s) => Ok(s.as_bytes().to_vec()),
            None => Err(type_error(lua, args, i, function, "string")),
        },
        _ => Err(type_error(lua, args, i, function, "string")),
    }
}

/// C's conversion of a double to `int64_t` on x86-64 (`cvttsd2si`):
/// truncation, and `INT64_MIN` for NaN and values out of range.
pub fn c_i64(d: f64) -> i64 {
    if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&d) {
        i64::MIN
    } else {
        d as i64
    }
}

/// C's conversion of a double to `uint64_t` on x86-64 (as GCC compiles
/// it: values from 2^63 up go through a subtraction of 2^63).
pub fn c_u64(d: f64) -> u64 {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if d >= TWO_63 {
        (c_i64(d - TWO_63) as u64) ^ (1 << 63)
    } else {
        c_i64(d) as u64
    }
}

/// C's conversion of a double to `int` (`cvttsd2si` 32-bit): `INT_MIN`
/// for NaN and values out of range.
pub fn c_i32(d: f64) -> i32 {
    if d.is_nan() || d >= 2_147_483_648.0 || d <= -2_147_483_649.0 {
        i32::MIN
    } else {
        d as i32
    }
}
