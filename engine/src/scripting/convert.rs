//! Redis's conversions between command replies and Lua values, both ways
//! (script_lua.c `redisProtocolToLuaType` and `luaReplyToRedisReply`).
//!
//! Reply to Lua: integer -> number, bulk -> string, null bulk / null array
//! (RESP2) -> false, RESP3 null -> nil, array -> table, status -> {ok=s},
//! error -> {err=s}, and under `redis.setresp(3)` map -> {map={...}}, set
//! -> {set={member=true}}, double -> {double=n}, boolean -> boolean, big
//! number -> {big_number=s}, verbatim -> {verbatim_string={format, string}}.
//!
//! Lua to reply: string -> bulk, number -> integer (truncated), true -> 1
//! (RESP2 script) or #t, false -> null (RESP2 script) or #f, nil -> null,
//! {err=} -> error, {ok=} -> status, {double=}, {big_number=},
//! {verbatim_string=}, {map=}, {set=}, else an array up to the first nil.

use mlua::{AppDataRef, Lua, Table, Value};

use crate::resp::{Frame, Protocol, ReplyWriter};

/// Nesting beyond this replies Redis's "reached lua stack limit" (a table
/// that contains itself would otherwise recurse forever).
pub const REPLY_DEPTH_MAX: usize = 1000;

/// The field names the conversions read and write (`err`, `ok`,
/// `double`...), created once per Lua state and kept in its app data. Why:
/// a `&str` key makes a new Lua string per lookup, and under the state's
/// memory limit mlua protects each such allocation with a C closure and a
/// `pcall` of its own, seven times per table of a script's reply.
pub struct FieldNames {
    pub err: mlua::String,
    pub ok: mlua::String,
    double: mlua::String,
    big_number: mlua::String,
    verbatim_string: mlua::String,
    map: mlua::String,
    set: mlua::String,
    format: mlua::String,
    string: mlua::String,
    ignore_error_stats_update: mlua::String,
}

impl FieldNames {
    /// Creates the names in `lua` and keeps them in its app data.
    pub fn install(lua: &Lua) -> mlua::Result<()> {
        let name = |s: &str| lua.create_string(s);
        let names = FieldNames {
            err: name("err")?,
            ok: name("ok")?,
            double: name("double")?,
            big_number: name("big_number")?,
            verbatim_string: name("verbatim_string")?,
            map: name("map")?,
            set: name("set")?,
            format: name("format")?,
            string: name("string")?,
            ignore_error_stats_update: name("ignore_error_stats_update")?,
        };
        lua.set_app_data(names);
        Ok(())
    }

    /// The names of `lua` (every state the engine creates installs them).
    pub fn of(lua: &Lua) -> mlua::Result<AppDataRef<'_, FieldNames>> {
        lua.app_data_ref::<FieldNames>()
            .ok_or_else(|| mlua::Error::runtime("the Lua state has no field names"))
    }
}

/// Runs `f`, which converts values of a bounded size between Rust and Lua,
/// with the state's memory limit lifted. Why: under a limit mlua protects
/// every string, table and field it creates with a `pcall` through a new
/// C closure, which costs more than the conversion itself. The memory is
/// counted all the same: the limit is back before the script runs on, and
/// its next allocation fails if the conversion took the state past it
/// (Redis has no limit at all).
pub fn unlimited<R>(lua: &Lua, f: impl FnOnce() -> mlua::Result<R>) -> mlua::Result<R> {
    let limit = lua.set_memory_limit(0)?;
    let result = f();
    lua.set_memory_limit(limit)?;
    result
}

/// A command's reply (one frame) as the Lua value `redis.call` returns.
pub fn frame_to_lua(lua: &Lua, frame: &Frame, resp: Protocol) -> mlua::Result<Value> {
    let names = FieldNames::of(lua)?;
    unlimited(lua, || to_lua(lua, &names, frame, resp))
}

fn to_lua(lua: &Lua, names: &FieldNames, frame: &Frame, resp: Protocol) -> mlua::Result<Value> {
    Ok(match frame {
        Frame::Integer(n) => Value::Number(*n as f64),
        Frame::Bulk(b) => Value::String(lua.create_string(b)?),
        Frame::Null => match resp {
            Protocol::Resp2 => Value::Boolean(false),
            Protocol::Resp3 => Value::Nil,
        },
        Frame::Simple(s) => single_field(lua, &names.ok, Value::String(lua.create_string(s)?))?,
        Frame::Error(e) => Value::Table(error_table_with(lua, names, e)?),
        Frame::Array(items) | Frame::Push(items) => {
            let t = lua.create_table_with_capacity(items.len(), 0)?;
            for (i, item) in items.iter().enumerate() {
                t.raw_set(i + 1, to_lua(lua, names, item, resp)?)?;
            }
            Value::Table(t)
        }
        Frame::Map(pairs) => {
            let inner = lua.create_table()?;
            for (k, v) in pairs {
                let key = to_lua(lua, names, k, resp)?;
                if key != Value::Nil {
                    inner.raw_set(key, to_lua(lua, names, v, resp)?)?;
                }
            }
            single_field(lua, &names.map, Value::Table(inner))?
        }
        Frame::Set(items) => {
            let inner = lua.create_table()?;
            for item in items {
                let key = to_lua(lua, names, item, resp)?;
                if key != Value::Nil {
                    inner.raw_set(key, true)?;
                }
            }
            single_field(lua, &names.set, Value::Table(inner))?
        }
        Frame::Double(d) => single_field(lua, &names.double, Value::Number(*d))?,
        Frame::Boolean(b) => Value::Boolean(*b),
        Frame::BigNumber(s) => {
            single_field(lua, &names.big_number, Value::String(lua.create_string(s)?))?
        }
        Frame::Verbatim { format, data } => {
            let inner = lua.create_table()?;
            inner.raw_set(&names.string, lua.create_string(data)?)?;
            inner.raw_set(&names.format, lua.create_string(format)?)?;
            single_field(lua, &names.verbatim_string, Value::Table(inner))?
        }
    })
}

fn single_field(lua: &Lua, name: &mlua::String, v: Value) -> mlua::Result<Value> {
    let t = lua.create_table()?;
    t.raw_set(name, v)?;
    Ok(Value::Table(t))
}

/// Redis's `luaPushErrorBuff` for an error reply (without its `-`): the
/// code up to the first space stays, a message without one gets `ERR`;
/// marked so that error stats do not count it twice.
fn error_table_with(lua: &Lua, names: &FieldNames, reply: &[u8]) -> mlua::Result<Table> {
    marked_error_table(lua, names, &normalize_error(reply))
}

/// `{err = msg, ignore_error_stats_update = true}` for a message that
/// already has its code (a script call's own refusals).
pub fn marked_error_table(lua: &Lua, names: &FieldNames, msg: &[u8]) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set(&names.err, lua.create_string(msg)?)?;
    t.raw_set(&names.ignore_error_stats_update, true)?;
    Ok(t)
}

/// `CODE msg` from an error text without its `-` (see [`error_table`]).
pub fn normalize_error(reply: &[u8]) -> Vec<u8> {
    let (code, msg): (&[u8], &[u8]) = match reply.iter().position(|&b| b == b' ') {
        Some(i) => (&reply[..i], &reply[i + 1..]),
        None => (b"ERR", reply),
    };
    let is_newline = |b: &u8| *b == b'\r' || *b == b'\n';
    let start = msg.iter().position(|b| !is_newline(b)).unwrap_or(msg.len());
    let end = msg
        .iter()
        .rposition(|b| !is_newline(b))
        .map_or(start, |i| i + 1);
    let mut out = code.to_vec();
    out.push(b' ');
    out.extend_from_slice(&msg[start..end.max(start)]);
    out
}

/// Writes a script's return value as the reply. `script_resp` is the
/// version the script chose with `redis.setresp` (it decides how booleans
/// reply); `w` speaks the caller's protocol. Returns the elements written,
/// for work accounting.
pub fn write_lua_reply(
    w: &mut ReplyWriter,
    names: &FieldNames,
    script_resp: Protocol,
    v: &Value,
) -> u64 {
    let mut out = Out {
        w,
        names,
        script_resp,
        elements: 0,
    };
    write_value(&mut out, v, 0);
    out.elements
}

/// Where a reply is written and what writing it needs.
struct Out<'a, 'w> {
    w: &'a mut ReplyWriter<'w>,
    names: &'a FieldNames,
    /// The version the script chose (it decides how booleans reply).
    script_resp: Protocol,
    /// Elements written, for work accounting.
    elements: u64,
}

fn write_value(out: &mut Out, v: &Value, depth: usize) {
    let (w, script_resp) = (&mut *out.w, out.script_resp);
    out.elements += 1;
    if depth > REPLY_DEPTH_MAX {
        w.error("ERR reached lua stack limit");
        return;
    }
    match v {
        Value::String(s) => w.bulk(&s.as_bytes()),
        Value::Boolean(b) => match script_resp {
            Protocol::Resp2 if *b => w.int(1),
            Protocol::Resp2 => w.null(),
            Protocol::Resp3 => w.bool(*b),
        },
        Value::Integer(n) => w.int(*n),
        Value::Number(n) => w.int(truncate(*n)),
        Value::Table(t) => write_table(out, t, depth),
        _ => w.null(),
    }
}

/// C's `(long long)` cast of a double as x86-64 performs it: truncation
/// toward zero, and the "integer indefinite" value for NaN or overflow.
pub fn truncate(n: f64) -> i64 {
    if n.is_nan() || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&n) {
        i64::MIN
    } else {
        n as i64
    }
}

fn string_field(t: &Table, name: &mlua::String) -> Option<mlua::String> {
    match t.raw_get::<Value>(name) {
        Ok(Value::String(s)) => Some(s),
        _ => None,
    }
}

fn write_table(out: &mut Out, t: &Table, depth: usize) {
    let (w, names) = (&mut *out.w, out.names);
    if let Some(err) = string_field(t, &names.err) {
        let mut msg = b"-".to_vec();
        msg.extend_from_slice(&err.as_bytes());
        write_error_bytes(w, &msg);
        return;
    }
    if let Some(ok) = string_field(t, &names.ok) {
        let mut line = b"+".to_vec();
        line.extend(
            ok.as_bytes()
                .iter()
                .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
        );
        line.extend_from_slice(b"\r\n");
        w.raw(&line);
        return;
    }
    match t.raw_get::<Value>(&names.double) {
        Ok(Value::Number(d)) => return w.double(d),
        Ok(Value::Integer(n)) => return w.double(n as f64),
        _ => {}
    }
    if let Some(big) = string_field(t, &names.big_number) {
        let text: Vec<u8> = big
            .as_bytes()
            .iter()
            .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b })
            .collect();
        match w.protocol() {
            Protocol::Resp2 => w.bulk(&text),
            Protocol::Resp3 => {
                let mut line = b"(".to_vec();
                line.extend_from_slice(&text);
                line.extend_from_slice(b"\r\n");
                w.raw(&line);
            }
        }
        return;
    }
    if let Ok(Value::Table(v)) = t.raw_get::<Value>(&names.verbatim_string) {
        let format = string_field(&v, &names.format);
        if let (Some(format), Some(s)) = (format, string_field(&v, &names.string)) {
            let format = format.as_bytes();
            if format.len() >= 3 {
                let fmt = String::from_utf8_lossy(&format[..3]).into_owned();
                if fmt.len() == 3 {
                    return w.verbatim(&fmt, &s.as_bytes());
                }
            }
        }
    }
    if let Ok(Value::Table(m)) = t.raw_get::<Value>(&names.map) {
        let pairs: Vec<(Value, Value)> = m.pairs::<Value, Value>().filter_map(Result::ok).collect();
        w.map_len(pairs.len());
        for (k, v) in &pairs {
            write_value(out, k, depth + 1);
            write_value(out, v, depth + 1);
        }
        return;
    }
    if let Ok(Value::Table(s)) = t.raw_get::<Value>(&names.set) {
        let members: Vec<Value> = s
            .pairs::<Value, Value>()
            .filter_map(|p| p.ok().map(|(k, _)| k))
            .collect();
        w.set_len(members.len());
        for k in &members {
            write_value(out, k, depth + 1);
        }
        return;
    }
    let items = sequence(t);
    w.array_len(items.len());
    for v in &items {
        write_value(out, v, depth + 1);
    }
}

/// t[1], t[2]... up to the first nil, as Redis walks a reply array
/// (`lua_rawgeti` until nil). Read with mlua's `for_each_value`, which
/// pushes the table once and reads `1..=#t` by `rawgeti` (its
/// `sequence_values` pushes the table and checks the stack per element:
/// three times the instructions). `#t` is a border, and every border is
/// at or past the first nil's predecessor, so stopping at the first nil
/// reads exactly Redis's elements.
fn sequence(t: &Table) -> Vec<Value> {
    let mut items = Vec::new();
    let _ = t.for_each_value(|v: Value| {
        if v == Value::Nil {
            // Stops the walk: the error goes nowhere.
            return Err(mlua::Error::runtime("first nil"));
        }
        items.push(v);
        Ok(())
    });
    items
}

/// An error reply from raw bytes: `-` included by the caller; CR/LF become
/// spaces, as Redis's `addReplyErrorLength` callers ensure.
pub fn write_error_bytes(w: &mut ReplyWriter, msg: &[u8]) {
    let mut line: Vec<u8> = msg
        .iter()
        .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b })
        .collect();
    if line.first() != Some(&b'-') {
        line.splice(0..0, b"-ERR ".iter().copied());
    }
    line.extend_from_slice(b"\r\n");
    w.raw(&line);
}
