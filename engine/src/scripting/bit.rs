//! The `bit` library (LuaBitOp 1.0, as Redis bundles it): 32-bit bitwise
//! operations on Lua numbers. Arguments are normalised as LuaBitOp's
//! `barg` does: the number plus 2^52 + 2^51, whose low 32 mantissa bits
//! are the argument rounded to an integer modulo 2^32.

use mlua::{Lua, MultiValue, Result, Table, Value};

/// LuaBitOp's normalisation of an argument to 32 bits.
fn to_bits(lua: &Lua, v: &Value, arg: usize, name: &str) -> Result<u32> {
    let n = match v {
        Value::Integer(i) => *i as f64,
        Value::Number(n) => *n,
        Value::String(s) => lua
            .coerce_number(Value::String(s.clone()))?
            .ok_or_else(|| bad_argument(lua, arg, name, "string"))?,
        other => return Err(bad_argument(lua, arg, name, other.type_name())),
    };
    Ok((n + 6_755_399_441_055_744.0).to_bits() as u32)
}

fn bad_argument(lua: &Lua, arg: usize, name: &str, got: &str) -> mlua::Error {
    super::api::error_at_caller(
        lua,
        &format!("bad argument #{arg} to '{name}' (number expected, got {got})"),
    )
}

fn arg(lua: &Lua, args: &MultiValue, i: usize, name: &str) -> Result<u32> {
    match args.get(i) {
        Some(v) => to_bits(lua, v, i + 1, name),
        None => Err(bad_argument(lua, i + 1, name, "no value")),
    }
}

fn fold(lua: &Lua, args: &MultiValue, name: &str, f: fn(u32, u32) -> u32) -> Result<f64> {
    let mut acc = arg(lua, args, 0, name)?;
    for i in 1..args.len() {
        acc = f(acc, arg(lua, args, i, name)?);
    }
    Ok(f64::from(acc as i32))
}

fn shift(lua: &Lua, args: &MultiValue, name: &str, f: fn(u32, u32) -> u32) -> Result<f64> {
    let x = arg(lua, args, 0, name)?;
    let n = arg(lua, args, 1, name)? & 31;
    Ok(f64::from(f(x, n) as i32))
}

/// `bit.tohex(x [, n])`: `n` hex digits (default 8), uppercase when `n < 0`.
fn tohex(lua: &Lua, args: &MultiValue) -> Result<String> {
    let x = arg(lua, args, 0, "tohex")?;
    let n = match args.get(1) {
        None | Some(Value::Nil) => 8,
        Some(_) => arg(lua, args, 1, "tohex")? as i32,
    };
    let (upper, digits) = if n < 0 {
        (true, n.unsigned_abs())
    } else {
        (false, n as u32)
    };
    let digits = digits.min(8);
    let masked = if digits == 8 {
        x
    } else {
        x & ((1u32 << (4 * digits)) - 1)
    };
    let s = format!("{:0width$x}", masked, width = digits as usize);
    Ok(if upper { s.to_uppercase() } else { s })
}

/// Builds the `bit` table.
pub fn library(lua: &Lua) -> Result<Table> {
    let t = lua.create_table()?;
    t.set(
        "tobit",
        lua.create_function(|lua, a: MultiValue| fold(lua, &a, "tobit", |x, _| x))?,
    )?;
    t.set(
        "bnot",
        lua.create_function(|lua, a: MultiValue| Ok(f64::from(!arg(lua, &a, 0, "bnot")? as i32)))?,
    )?;
    t.set(
        "band",
        lua.create_function(|lua, a: MultiValue| fold(lua, &a, "band", |x, y| x & y))?,
    )?;
    t.set(
        "bor",
        lua.create_function(|lua, a: MultiValue| fold(lua, &a, "bor", |x, y| x | y))?,
    )?;
    t.set(
        "bxor",
        lua.create_function(|lua, a: MultiValue| fold(lua, &a, "bxor", |x, y| x ^ y))?,
    )?;
    t.set(
        "lshift",
        lua.create_function(|lua, a: MultiValue| shift(lua, &a, "lshift", |x, n| x << n))?,
    )?;
    t.set(
        "rshift",
        lua.create_function(|lua, a: MultiValue| shift(lua, &a, "rshift", |x, n| x >> n))?,
    )?;
    t.set(
        "arshift",
        lua.create_function(|lua, a: MultiValue| {
            shift(lua, &a, "arshift", |x, n| ((x as i32) >> n) as u32)
        })?,
    )?;
    t.set(
        "rol",
        lua.create_function(|lua, a: MultiValue| shift(lua, &a, "rol", u32::rotate_left))?,
    )?;
    t.set(
        "ror",
        lua.create_function(|lua, a: MultiValue| shift(lua, &a, "ror", u32::rotate_right))?,
    )?;
    t.set(
        "bswap",
        lua.create_function(|lua, a: MultiValue| {
            Ok(f64::from(arg(lua, &a, 0, "bswap")?.swap_bytes() as i32))
        })?,
    )?;
    t.set(
        "tohex",
        lua.create_function(|lua, a: MultiValue| tohex(lua, &a))?,
    )?;
    Ok(t)
}
