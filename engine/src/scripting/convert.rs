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

use mlua::{Lua, Table, Value};

use crate::resp::{Frame, Protocol, ReplyWriter};

/// Nesting beyond this replies Redis's "reached lua stack limit" (a table
/// that contains itself would otherwise recurse forever).
pub const REPLY_DEPTH_MAX: usize = 1000;

/// A command's reply (one frame) as the Lua value `redis.call` returns.
pub fn frame_to_lua(lua: &Lua, frame: &Frame, resp: Protocol) -> mlua::Result<Value> {
    Ok(match frame {
        Frame::Integer(n) => Value::Number(*n as f64),
        Frame::Bulk(b) => Value::String(lua.create_string(b)?),
        Frame::Null => match resp {
            Protocol::Resp2 => Value::Boolean(false),
            Protocol::Resp3 => Value::Nil,
        },
        Frame::Simple(s) => single_field(lua, "ok", Value::String(lua.create_string(s)?))?,
        Frame::Error(e) => Value::Table(error_table(lua, e)?),
        Frame::Array(items) | Frame::Push(items) => {
            let t = lua.create_table_with_capacity(items.len(), 0)?;
            for (i, item) in items.iter().enumerate() {
                t.raw_set(i + 1, frame_to_lua(lua, item, resp)?)?;
            }
            Value::Table(t)
        }
        Frame::Map(pairs) => {
            let inner = lua.create_table()?;
            for (k, v) in pairs {
                let key = frame_to_lua(lua, k, resp)?;
                if key != Value::Nil {
                    inner.raw_set(key, frame_to_lua(lua, v, resp)?)?;
                }
            }
            single_field(lua, "map", Value::Table(inner))?
        }
        Frame::Set(items) => {
            let inner = lua.create_table()?;
            for item in items {
                let key = frame_to_lua(lua, item, resp)?;
                if key != Value::Nil {
                    inner.raw_set(key, true)?;
                }
            }
            single_field(lua, "set", Value::Table(inner))?
        }
        Frame::Double(d) => single_field(lua, "double", Value::Number(*d))?,
        Frame::Boolean(b) => Value::Boolean(*b),
        Frame::BigNumber(s) => {
            single_field(lua, "big_number", Value::String(lua.create_string(s)?))?
        }
        Frame::Verbatim { format, data } => {
            let inner = lua.create_table()?;
            inner.raw_set("string", lua.create_string(data)?)?;
            inner.raw_set("format", lua.create_string(format)?)?;
            single_field(lua, "verbatim_string", Value::Table(inner))?
        }
    })
}

fn single_field(lua: &Lua, name: &str, v: Value) -> mlua::Result<Value> {
    let t = lua.create_table()?;
    t.raw_set(name, v)?;
    Ok(Value::Table(t))
}

/// Redis's `luaPushErrorBuff` for an error reply (without its `-`): the
/// code up to the first space stays, a message without one gets `ERR`;
/// marked so that error stats do not count it twice.
pub fn error_table(lua: &Lua, reply: &[u8]) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("err", lua.create_string(normalize_error(reply))?)?;
    t.raw_set("ignore_error_stats_update", true)?;
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
pub fn write_lua_reply(w: &mut ReplyWriter, script_resp: Protocol, v: &Value) -> u64 {
    let mut elements = 0;
    write_value(w, script_resp, v, 0, &mut elements);
    elements
}

fn write_value(
    w: &mut ReplyWriter,
    script_resp: Protocol,
    v: &Value,
    depth: usize,
    elements: &mut u64,
) {
    *elements += 1;
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
        Value::Table(t) => write_table(w, script_resp, t, depth, elements),
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

fn string_field(t: &Table, name: &str) -> Option<mlua::String> {
    match t.raw_get::<Value>(name) {
        Ok(Value::String(s)) => Some(s),
        _ => None,
    }
}

fn write_table(
    w: &mut ReplyWriter,
    script_resp: Protocol,
    t: &Table,
    depth: usize,
    elements: &mut u64,
) {
    if let Some(err) = string_field(t, "err") {
        let mut msg = b"-".to_vec();
        msg.extend_from_slice(&err.as_bytes());
        write_error_bytes(w, &msg);
        return;
    }
    if let Some(ok) = string_field(t, "ok") {
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
    match t.raw_get::<Value>("double") {
        Ok(Value::Number(d)) => return w.double(d),
        Ok(Value::Integer(n)) => return w.double(n as f64),
        _ => {}
    }
    if let Some(big) = string_field(t, "big_number") {
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
    if let Ok(Value::Table(v)) = t.raw_get::<Value>("verbatim_string") {
        if let (Some(format), Some(s)) = (string_field(&v, "format"), string_field(&v, "string")) {
            let format = format.as_bytes();
            if format.len() >= 3 {
                let fmt = String::from_utf8_lossy(&format[..3]).into_owned();
                if fmt.len() == 3 {
                    return w.verbatim(&fmt, &s.as_bytes());
                }
            }
        }
    }
    if let Ok(Value::Table(m)) = t.raw_get::<Value>("map") {
        let pairs: Vec<(Value, Value)> = m.pairs::<Value, Value>().filter_map(Result::ok).collect();
        w.map_len(pairs.len());
        for (k, v) in &pairs {
            write_value(w, script_resp, k, depth + 1, elements);
            write_value(w, script_resp, v, depth + 1, elements);
        }
        return;
    }
    if let Ok(Value::Table(s)) = t.raw_get::<Value>("set") {
        let members: Vec<Value> = s
            .pairs::<Value, Value>()
            .filter_map(|p| p.ok().map(|(k, _)| k))
            .collect();
        w.set_len(members.len());
        for k in &members {
            write_value(w, script_resp, k, depth + 1, elements);
        }
        return;
    }
    let mut items = Vec::new();
    loop {
        match t.raw_get::<Value>(items.len() + 1) {
            Ok(Value::Nil) | Err(_) => break,
            Ok(v) => items.push(v),
        }
    }
    w.array_len(items.len());
    for v in &items {
        write_value(w, script_resp, v, depth + 1, elements);
    }
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
