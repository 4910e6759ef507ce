//! The builtins that must see through the sandbox's read-only proxies
//! (see [`super::sandbox`]): `getmetatable`, `setmetatable`, `next`,
//! `pairs`, `ipairs`, `rawget` and `rawset`.
//!
//! Redis 7.0 marks its library tables and `_G` read-only in place; here a
//! script sees empty proxies, so these builtins answer as Redis's do for
//! the tables behind them: `pairs(cjson)` lists cjson's functions,
//! `getmetatable(_G)` is a read-only table, `getmetatable("")` one whose
//! `__index` is `string`, a library has no metatable, and
//! `setmetatable` on any of them is "Attempt to modify a readonly table".
//! They are Rust (C) functions, not Lua ones, so that a script's
//! `return f(...)` keeps the script's frame that errors point at, and a
//! real metatable never reaches a script.

use mlua::{Function, Lua, MultiValue, Table, Value};

use super::libarg::{arg_error, error, type_name};

const READONLY: &str = "Attempt to modify a readonly table";

/// What the builtins need from the prelude.
#[derive(Clone)]
pub struct Proxies {
    /// Proxy -> the table it shows (weak keys).
    pub real: Table,
    /// The environment (`_G`).
    pub env: Table,
    pub env_metatable: Table,
    pub string_metatable: Table,
}

impl Proxies {
    /// The table `t` shows, if it is a proxy.
    fn behind(&self, t: &Table) -> mlua::Result<Option<Table>> {
        self.real.raw_get::<Option<Table>>(t.clone())
    }

    /// `t` itself, or the table behind it.
    fn see_through(&self, t: Table) -> mlua::Result<Table> {
        Ok(self.behind(&t)?.unwrap_or(t))
    }
}

fn check_table(lua: &Lua, args: &MultiValue, i: usize, function: &str) -> mlua::Result<Table> {
    match args.get(i) {
        Some(Value::Table(t)) => Ok(t.clone()),
        _ => {
            let got = type_name(args, i);
            Err(arg_error(
                lua,
                i + 1,
                function,
                &format!("table expected, got {got}"),
            ))
        }
    }
}

fn getmetatable(lua: &Lua, p: &Proxies, args: MultiValue) -> mlua::Result<Value> {
    let Some(v) = args.front() else {
        return Err(arg_error(lua, 1, "getmetatable", "value expected"));
    };
    match v {
        Value::String(_) => Ok(Value::Table(p.string_metatable.clone())),
        Value::Table(t) if *t == p.env => Ok(Value::Table(p.env_metatable.clone())),
        Value::Table(t) if p.behind(t)?.is_some() => Ok(Value::Nil),
        Value::Table(t) => match t.metatable() {
            None => Ok(Value::Nil),
            Some(mt) => {
                let shown: Value = mt.raw_get("__metatable")?;
                Ok(if shown.is_nil() {
                    Value::Table(mt)
                } else {
                    shown
                })
            }
        },
        _ => Ok(Value::Nil),
    }
}

fn setmetatable(lua: &Lua, p: &Proxies, args: MultiValue) -> mlua::Result<Table> {
    let t = check_table(lua, &args, 0, "setmetatable")?;
    let mt = match args.get(1) {
        Some(Value::Nil) => None,
        Some(Value::Table(mt)) => Some(mt.clone()),
        _ => return Err(arg_error(lua, 2, "setmetatable", "nil or table expected")),
    };
    if p.behind(&t)?.is_some() {
        // Raised as Redis's read-only check raises it: no position.
        return Err(mlua::Error::runtime(READONLY));
    }
    if let Some(current) = t.metatable() {
        if !current.raw_get::<Value>("__metatable")?.is_nil() {
            return Err(error(lua, "cannot change a protected metatable"));
        }
    }
    t.set_metatable(mt);
    Ok(t)
}

/// `rawset`, refusing the proxies (and so `_G` and every library).
fn rawset(lua: &Lua, p: &Proxies, args: MultiValue) -> mlua::Result<Table> {
    let t = check_table(lua, &args, 0, "rawset")?;
    for i in 1..3 {
        if args.get(i).is_none() {
            return Err(arg_error(lua, i + 1, "rawset", "value expected"));
        }
    }
    if p.behind(&t)?.is_some() {
        return Err(mlua::Error::runtime(READONLY));
    }
    match &args[1] {
        // Raised inside the C function: Lua adds no position.
        Value::Nil => return Err(mlua::Error::runtime("table index is nil")),
        Value::Number(n) if n.is_nan() => return Err(mlua::Error::runtime("table index is NaN")),
        _ => {}
    }
    t.raw_set(args[1].clone(), args[2].clone())?;
    Ok(t)
}

/// Installs the builtins into the sandbox's globals.
pub fn install(lua: &Lua, p: &Proxies, install: &Function) -> mlua::Result<()> {
    let real_next: Function = lua.globals().raw_get("next")?;
    let q = p.clone();
    install.call::<()>((
        "rawset",
        lua.create_function(move |lua, args: MultiValue| rawset(lua, &q, args))?,
    ))?;
    let q = p.clone();
    install.call::<()>((
        "getmetatable",
        lua.create_function(move |lua, args: MultiValue| getmetatable(lua, &q, args))?,
    ))?;
    let q = p.clone();
    install.call::<()>((
        "setmetatable",
        lua.create_function(move |lua, args: MultiValue| setmetatable(lua, &q, args))?,
    ))?;
    let q = p.clone();
    let next = lua.create_function(move |lua, args: MultiValue| {
        let t = q.see_through(check_table(lua, &args, 0, "next")?)?;
        let key = args.get(1).cloned().unwrap_or(Value::Nil);
        real_next.call::<MultiValue>((t, key))
    })?;
    install.call::<()>(("next", next.clone()))?;
    install.call::<()>((
        "pairs",
        lua.create_function(move |lua, args: MultiValue| {
            let t = check_table(lua, &args, 0, "pairs")?;
            Ok((next.clone(), t, Value::Nil))
        })?,
    ))?;
    let q = p.clone();
    let ipairs_step = lua.create_function(move |lua, args: MultiValue| {
        let t = q.see_through(check_table(lua, &args, 0, "ipairs")?)?;
        let i = match args.get(1) {
            Some(Value::Integer(i)) => *i,
            Some(Value::Number(n)) => *n as i64,
            _ => 0,
        } + 1;
        let v: Value = t.raw_get(i)?;
        Ok(if v.is_nil() {
            MultiValue::new()
        } else {
            MultiValue::from_iter([Value::Integer(i), v])
        })
    })?;
    install.call::<()>((
        "ipairs",
        lua.create_function(move |lua, args: MultiValue| {
            if args.is_empty() {
                return Err(arg_error(lua, 1, "ipairs", "table expected, got no value"));
            }
            let t = check_table(lua, &args, 0, "ipairs")?;
            Ok((ipairs_step.clone(), t, 0))
        })?,
    ))?;
    let q = p.clone();
    install.call::<()>((
        "rawget",
        lua.create_function(move |lua, args: MultiValue| {
            let t = q.see_through(check_table(lua, &args, 0, "rawget")?)?;
            let key = args.get(1).cloned().unwrap_or(Value::Nil);
            t.raw_get::<Value>(key)
        })?,
    ))?;
    Ok(())
}
