//! `cjson`: lua-cjson 2.1.0 as Redis 7.0 bundles it (deps/lua/src/
//! lua_cjson.c), written in Rust: `encode`, `decode`, `null`, `new` and
//! the configuration functions, with lua-cjson's texts, number formats
//! and limits.
//!
//! Settings live with the library table, as lua-cjson keeps them in its
//! module's upvalue: they last as long as the Lua state (until SCRIPT
//! FLUSH), and `cjson.new()` makes a table with settings of its own.
//!
//! Nesting: lua-cjson stops at `encode_max_depth` / `decode_max_depth`
//! (1000 by default) or when the Lua stack is full (about 4000 levels).
//! Here the Rust recursion runs on the script's stack, so nesting also
//! stops at [`NESTING_MAX`] levels, with the same error a full stack
//! gives; only a script that raises the limits past it sees a difference.

mod decode;
mod encode;
pub mod number;

use std::cell::RefCell;
use std::rc::Rc;

use mlua::{LightUserData, Lua, MultiValue, Table, Value};

use super::libarg::{arg_error, c_i64, check_number};

/// The deepest nesting encode and decode follow (see the module doc).
pub const NESTING_MAX: usize = 1000;

/// lua-cjson's settings (`json_config_t`), with its defaults.
#[derive(Clone, Debug)]
pub struct Config {
    pub encode_sparse_convert: bool,
    pub encode_sparse_ratio: i32,
    pub encode_sparse_safe: i32,
    pub encode_max_depth: i32,
    pub decode_max_depth: i32,
    /// 0 refuses NaN and Inf, 1 writes them (`inf`, `nan`), 2 as `null`.
    pub encode_invalid_numbers: u8,
    pub decode_invalid_numbers: bool,
    pub encode_keep_buffer: bool,
    pub encode_number_precision: i32,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            encode_sparse_convert: false,
            encode_sparse_ratio: 2,
            encode_sparse_safe: 10,
            encode_max_depth: 1000,
            decode_max_depth: 1000,
            encode_invalid_numbers: 0,
            decode_invalid_numbers: true,
            encode_keep_buffer: true,
            encode_number_precision: 14,
        }
    }
}

type Shared = Rc<RefCell<Config>>;

/// `cjson.null`: the NULL light userdata.
pub fn null() -> Value {
    Value::LightUserData(LightUserData(std::ptr::null_mut()))
}

/// Builds a `cjson` table with fresh settings.
pub fn library(lua: &Lua) -> mlua::Result<Table> {
    let cfg: Shared = Rc::new(RefCell::new(Config::default()));
    let t = lua.create_table()?;
    let c = Rc::clone(&cfg);
    t.set(
        "encode",
        lua.create_function(move |lua, args: MultiValue| {
            let config = c.borrow().clone();
            encode::encode(lua, &config, args)
        })?,
    )?;
    let c = Rc::clone(&cfg);
    t.set(
        "decode",
        lua.create_function(move |lua, args: MultiValue| {
            let config = c.borrow().clone();
            decode::decode(lua, &config, args)
        })?,
    )?;
    let c = Rc::clone(&cfg);
    t.set(
        "encode_sparse_array",
        lua.create_function(move |lua, args: MultiValue| sparse_array(lua, &c, &args))?,
    )?;
    int_option(lua, &t, &cfg, "encode_max_depth", 1, i32::MAX, |c| {
        &mut c.encode_max_depth
    })?;
    int_option(lua, &t, &cfg, "decode_max_depth", 1, i32::MAX, |c| {
        &mut c.decode_max_depth
    })?;
    int_option(lua, &t, &cfg, "encode_number_precision", 1, 14, |c| {
        &mut c.encode_number_precision
    })?;
    bool_option(lua, &t, &cfg, "encode_keep_buffer", |c| {
        &mut c.encode_keep_buffer
    })?;
    bool_option(lua, &t, &cfg, "decode_invalid_numbers", |c| {
        &mut c.decode_invalid_numbers
    })?;
    let c = Rc::clone(&cfg);
    t.set(
        "encode_invalid_numbers",
        lua.create_function(move |lua, args: MultiValue| {
            let name = "encode_invalid_numbers";
            arg_count(lua, &args, 1, name)?;
            let mut config = c.borrow_mut();
            if let Some(v) = present(&args, 0) {
                config.encode_invalid_numbers = match v {
                    Value::Boolean(b) => u8::from(*b),
                    _ => enum_option(lua, &args, 0, name, &["off", "on", "null"])? as u8,
                };
            }
            Ok(match config.encode_invalid_numbers {
                0 => Value::Boolean(false),
                1 => Value::Boolean(true),
                _ => Value::String(lua.create_string("null")?),
            })
        })?,
    )?;
    t.set(
        "new",
        lua.create_function(|lua, _: MultiValue| library(lua))?,
    )?;
    t.set("null", null())?;
    t.set("_NAME", "cjson")?;
    t.set("_VERSION", "2.1.0")?;
    Ok(t)
}

/// `json_arg_init`: at most `max` arguments.
fn arg_count(lua: &Lua, args: &MultiValue, max: usize, name: &str) -> mlua::Result<()> {
    if args.len() > max {
        return Err(arg_error(lua, max + 1, name, "found too many arguments"));
    }
    Ok(())
}

/// Argument `i` unless it is missing or nil (the option is then read only).
fn present(args: &MultiValue, i: usize) -> Option<&Value> {
    args.get(i).filter(|v| !v.is_nil())
}

/// `luaL_checkoption` without a default.
fn enum_option(
    lua: &Lua,
    args: &MultiValue,
    i: usize,
    name: &str,
    options: &[&str],
) -> mlua::Result<usize> {
    let text = super::libarg::check_bytes(lua, args, i, name)?;
    options
        .iter()
        .position(|o| o.as_bytes() == text.as_slice())
        .ok_or_else(|| {
            let shown = String::from_utf8_lossy(&text);
            arg_error(lua, i + 1, name, &format!("invalid option '{shown}'"))
        })
}

/// lua-cjson's `json_enum_option` with the on/off options: a boolean, or
/// "on"/"off".
fn read_bool(
    lua: &Lua,
    args: &MultiValue,
    i: usize,
    name: &str,
    setting: &mut bool,
) -> mlua::Result<()> {
    if let Some(v) = present(args, i) {
        *setting = match v {
            Value::Boolean(b) => *b,
            _ => enum_option(lua, args, i, name, &["off", "on"])? == 1,
        };
    }
    Ok(())
}

/// lua-cjson's `json_integer_option`.
fn read_int(
    lua: &Lua,
    args: &MultiValue,
    i: usize,
    name: &str,
    range: (i32, i32),
    setting: &mut i32,
) -> mlua::Result<()> {
    if present(args, i).is_some() {
        let value = c_i64(check_number(lua, args, i, name)?) as i32;
        if value < range.0 || value > range.1 {
            let msg = format!("expected integer between {} and {}", range.0, range.1);
            // lua-cjson names argument 1 whatever the option's position.
            return Err(arg_error(lua, 1, name, &msg));
        }
        *setting = value;
    }
    Ok(())
}

fn int_option(
    lua: &Lua,
    t: &Table,
    cfg: &Shared,
    name: &'static str,
    min: i32,
    max: i32,
    field: fn(&mut Config) -> &mut i32,
) -> mlua::Result<()> {
    let c = Rc::clone(cfg);
    let f = lua.create_function(move |lua, args: MultiValue| {
        arg_count(lua, &args, 1, name)?;
        let mut config = c.borrow_mut();
        read_int(lua, &args, 0, name, (min, max), field(&mut config))?;
        Ok(*field(&mut config))
    })?;
    t.set(name, f)
}

fn bool_option(
    lua: &Lua,
    t: &Table,
    cfg: &Shared,
    name: &'static str,
    field: fn(&mut Config) -> &mut bool,
) -> mlua::Result<()> {
    let c = Rc::clone(cfg);
    let f = lua.create_function(move |lua, args: MultiValue| {
        arg_count(lua, &args, 1, name)?;
        let mut config = c.borrow_mut();
        read_bool(lua, &args, 0, name, field(&mut config))?;
        Ok(*field(&mut config))
    })?;
    t.set(name, f)
}

/// `cjson.encode_sparse_array([convert[, ratio[, safe]]])`.
fn sparse_array(lua: &Lua, cfg: &Shared, args: &MultiValue) -> mlua::Result<(bool, i32, i32)> {
    let name = "encode_sparse_array";
    arg_count(lua, args, 3, name)?;
    let mut c = cfg.borrow_mut();
    read_bool(lua, args, 0, name, &mut c.encode_sparse_convert)?;
    read_int(
        lua,
        args,
        1,
        name,
        (0, i32::MAX),
        &mut c.encode_sparse_ratio,
    )?;
    read_int(lua, args, 2, name, (0, i32::MAX), &mut c.encode_sparse_safe)?;
    Ok((
        c.encode_sparse_convert,
        c.encode_sparse_ratio,
        c.encode_sparse_safe,
    ))
}
