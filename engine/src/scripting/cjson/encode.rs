//! `cjson.encode`: lua-cjson's `json_append_data` and friends.

use mlua::{Lua, MultiValue, Table, Value};

use super::number::format_g;
use super::{Config, NESTING_MAX};
use crate::scripting::libarg::{arg_error, c_i32, error};
use crate::scripting::meter::{Work, VALUE_INSTRUCTIONS};

/// lua-cjson's `char2escape`: what each byte is written as inside a
/// string (`None`: itself).
fn escape(c: u8) -> Option<&'static [u8]> {
    const CONTROL: [&[u8]; 32] = [
        b"\\u0000", b"\\u0001", b"\\u0002", b"\\u0003", b"\\u0004", b"\\u0005", b"\\u0006",
        b"\\u0007", b"\\b", b"\\t", b"\\n", b"\\u000b", b"\\f", b"\\r", b"\\u000e", b"\\u000f",
        b"\\u0010", b"\\u0011", b"\\u0012", b"\\u0013", b"\\u0014", b"\\u0015", b"\\u0016",
        b"\\u0017", b"\\u0018", b"\\u0019", b"\\u001a", b"\\u001b", b"\\u001c", b"\\u001d",
        b"\\u001e", b"\\u001f",
    ];
    match c {
        0..=31 => Some(CONTROL[c as usize]),
        b'"' => Some(b"\\\""),
        b'/' => Some(b"\\/"),
        b'\\' => Some(b"\\\\"),
        127 => Some(b"\\u007f"),
        _ => None,
    }
}

/// Bytes of a string copied between two charges.
const CHUNK_BYTES: usize = 64 * 1024;

struct Encoder<'a> {
    lua: &'a Lua,
    cfg: &'a Config,
    out: Vec<u8>,
    work: Work<'a>,
    /// The most bytes `out` may hold: what the Lua state may still
    /// allocate (the result becomes a Lua string).
    out_max_bytes: usize,
}

/// `cjson.encode(value)`.
pub fn encode(lua: &Lua, cfg: &Config, args: MultiValue) -> mlua::Result<mlua::String> {
    if args.len() != 1 {
        return Err(arg_error(lua, 1, "encode", "expected 1 argument"));
    }
    let limit = crate::scripting::lua::LUA_MEMORY_MAX_BYTES;
    let mut e = Encoder {
        lua,
        cfg,
        out: Vec::new(),
        work: Work::new(lua),
        out_max_bytes: limit.saturating_sub(lua.used_memory()),
    };
    e.value(&args[0], 0)?;
    e.work.flush()?;
    lua.create_string(&e.out)
}

impl Encoder<'_> {
    fn room(&mut self, more: usize) -> mlua::Result<()> {
        if self.out.len().saturating_add(more) > self.out_max_bytes {
            return Err(mlua::Error::MemoryError("not enough memory".into()));
        }
        Ok(())
    }

    fn exception(&self, v: &Value, reason: &str) -> mlua::Error {
        let type_name = match v {
            Value::LightUserData(_) => "userdata",
            Value::Integer(_) => "number",
            other => other.type_name(),
        };
        error(self.lua, &format!("Cannot serialise {type_name}: {reason}"))
    }

    fn value(&mut self, v: &Value, depth: usize) -> mlua::Result<()> {
        self.work.add(VALUE_INSTRUCTIONS)?;
        match v {
            Value::String(s) => self.string(&s.as_bytes()),
            Value::Number(n) => self.number(v, *n),
            Value::Integer(n) => self.number(v, *n as f64),
            Value::Boolean(b) => {
                self.room(5)?;
                self.out
                    .extend_from_slice(if *b { b"true" } else { b"false" });
                Ok(())
            }
            Value::Nil => {
                self.room(4)?;
                self.out.extend_from_slice(b"null");
                Ok(())
            }
            Value::LightUserData(ud) if ud.0.is_null() => {
                self.room(4)?;
                self.out.extend_from_slice(b"null");
                Ok(())
            }
            Value::Table(t) => self.table(t, depth + 1),
            other => Err(self.exception(other, "type not supported")),
        }
    }

    fn string(&mut self, s: &[u8]) -> mlua::Result<()> {
        self.room(s.len().saturating_mul(6).saturating_add(2))?;
        self.out.push(b'"');
        // Charged as it goes, so that a long string is sliced and killable.
        for chunk in s.chunks(CHUNK_BYTES) {
            self.work.bytes(chunk.len())?;
            for &c in chunk {
                match escape(c) {
                    Some(e) => self.out.extend_from_slice(e),
                    None => self.out.push(c),
                }
            }
        }
        self.out.push(b'"');
        Ok(())
    }

    fn number(&mut self, v: &Value, n: f64) -> mlua::Result<()> {
        self.room(32)?;
        match self.cfg.encode_invalid_numbers {
            0 if !n.is_finite() => return Err(self.exception(v, "must not be NaN or Inf")),
            1 if n.is_nan() => {
                self.out.extend_from_slice(b"nan");
                return Ok(());
            }
            2 if !n.is_finite() => {
                self.out.extend_from_slice(b"null");
                return Ok(());
            }
            _ => {}
        }
        let precision = self.cfg.encode_number_precision.clamp(1, 14) as usize;
        self.out
            .extend_from_slice(format_g(n, precision).as_bytes());
        Ok(())
    }

    fn table(&mut self, t: &Table, depth: usize) -> mlua::Result<()> {
        if depth > self.cfg.encode_max_depth.max(0) as usize || depth > NESTING_MAX {
            return Err(error(
                self.lua,
                &format!("Cannot serialise, excessive nesting ({depth})"),
            ));
        }
        match self.array_length(t)? {
            Some(len) if len > 0 => self.array(t, len, depth),
            _ => self.object(t, depth),
        }
    }

    /// lua-cjson's `lua_array_length`: `Some(max index)` for a table
    /// whose keys are all integers >= 1 and not too sparse, `None` for an
    /// object. `max` is a C `int`, as there.
    fn array_length(&mut self, t: &Table) -> mlua::Result<Option<i32>> {
        let mut max: i32 = 0;
        let mut items: i32 = 0;
        for pair in t.clone().pairs::<Value, Value>() {
            let (k, _) = pair?;
            self.work.add(VALUE_INSTRUCTIONS)?;
            let k = match k {
                Value::Number(n) => n,
                Value::Integer(n) => n as f64,
                _ => return Ok(None),
            };
            if k == 0.0 || k.floor() != k || k < 1.0 {
                return Ok(None);
            }
            if k > f64::from(max) {
                max = c_i32(k);
            }
            items = items.wrapping_add(1);
        }
        let cfg = self.cfg;
        if cfg.encode_sparse_ratio > 0
            && i64::from(max) > i64::from(items.wrapping_mul(cfg.encode_sparse_ratio))
            && max > cfg.encode_sparse_safe
        {
            if !cfg.encode_sparse_convert {
                return Err(error(
                    self.lua,
                    "Cannot serialise table: excessively sparse array",
                ));
            }
            return Ok(None);
        }
        Ok(Some(max))
    }

    fn array(&mut self, t: &Table, len: i32, depth: usize) -> mlua::Result<()> {
        self.room(1)?;
        self.out.push(b'[');
        for i in 1..=i64::from(len) {
            if i > 1 {
                self.room(1)?;
                self.out.push(b',');
            }
            let v: Value = t.raw_get(i)?;
            self.value(&v, depth)?;
        }
        self.room(1)?;
        self.out.push(b']');
        Ok(())
    }

    fn object(&mut self, t: &Table, depth: usize) -> mlua::Result<()> {
        self.room(1)?;
        self.out.push(b'{');
        let mut first = true;
        for pair in t.clone().pairs::<Value, Value>() {
            let (k, v) = pair?;
            if !first {
                self.room(1)?;
                self.out.push(b',');
            }
            first = false;
            match &k {
                Value::Number(_) | Value::Integer(_) => {
                    let n = match k {
                        Value::Number(n) => n,
                        Value::Integer(n) => n as f64,
                        _ => 0.0,
                    };
                    self.room(3)?;
                    self.out.push(b'"');
                    self.number(&k, n)?;
                    self.out.extend_from_slice(b"\":");
                }
                Value::String(s) => {
                    self.string(&s.as_bytes())?;
                    self.room(1)?;
                    self.out.push(b':');
                }
                other => return Err(self.exception(other, "table key must be a number or string")),
            }
            self.value(&v, depth)?;
        }
        self.room(1)?;
        self.out.push(b'}');
        Ok(())
    }
}
