//! `cmsgpack`: lua-cmsgpack 0.4.0 as Redis 7.0 bundles it (deps/lua/src/
//! lua_cmsgpack.c), written in Rust: `pack`, `unpack`, `unpack_one`,
//! `unpack_limit`, with its type choices and error texts.
//!
//! Lua stack limits: the C library checks the Lua stack as it decodes
//! (`luaL_checkstack`), so a stream of more than ~8000 values, or nesting
//! deeper than ~4000, fails with "stack overflow (...)". That use of the
//! stack is modelled here ([`Slots`]) so that the same inputs fail the
//! same way. Past [`NESTING_MAX`] levels, or more than
//! [`REF_VALUES_MAX`] strings and tables returned at once, this
//! implementation fails the same way earlier than Redis (each level and
//! each such value holds a slot of mlua's reference stack, and the Rust
//! recursion runs on the script's stack).

use mlua::{Lua, MultiValue, Table, Value};

use super::libarg::{arg_error, c_i64, check_bytes, check_int, error, opt_int};
use super::meter::{Work, VALUE_INSTRUCTIONS};

/// Tables nested deeper than this are packed as nil (LUACMSGPACK_MAX_NESTING).
const PACK_NESTING_MAX: usize = 16;

/// The deepest decoding follows (see the module doc).
const NESTING_MAX: usize = 1000;

/// The most strings and tables one unpack returns (see the module doc).
const REF_VALUES_MAX: usize = 4000;

/// Lua 5.1's LUAI_MAXCSTACK: the most stack slots a C function may use.
const LUA_C_STACK_SLOTS: usize = 8000;

/// The most values an mlua callback returns (its stack check needs one
/// slot more than Lua's C API).
const MLUA_RESULTS_MAX: usize = LUA_C_STACK_SLOTS - 2;

const TOO_MANY: &str = "too many return values at once; use unpack_one or unpack_limit instead.";

/// Builds the `cmsgpack` table.
pub fn library(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set("pack", lua.create_function(pack)?)?;
    t.set(
        "unpack",
        lua.create_function(|lua, args: MultiValue| unpack(lua, &args, "unpack", 0, 0))?,
    )?;
    t.set(
        "unpack_one",
        lua.create_function(|lua, args: MultiValue| {
            let offset = opt_int(lua, &args, 1, "unpack_one", 0)?;
            unpack(lua, &args, "unpack_one", 1, offset)
        })?,
    )?;
    t.set(
        "unpack_limit",
        lua.create_function(|lua, args: MultiValue| {
            let limit = check_int(lua, &args, 1, "unpack_limit")?;
            let offset = opt_int(lua, &args, 2, "unpack_limit", 0)?;
            unpack(lua, &args, "unpack_limit", limit, offset)
        })?,
    )?;
    t.set("_NAME", "cmsgpack")?;
    t.set("_VERSION", "lua-cmsgpack 0.4.0")?;
    t.set("_COPYRIGHT", "Copyright (C) 2012, Salvatore Sanfilippo")?;
    t.set("_DESCRIPTION", "MessagePack C implementation for Lua")?;
    Ok(t)
}

// ---------------------------------------------------------------- packing

fn pack(lua: &Lua, args: MultiValue) -> mlua::Result<mlua::String> {
    if args.is_empty() {
        return Err(arg_error(lua, 0, "pack", "MessagePack pack needs input."));
    }
    let mut p = Packer {
        out: Vec::new(),
        work: Work::new(lua),
        out_max_bytes: super::lua::LUA_MEMORY_MAX_BYTES.saturating_sub(lua.used_memory()),
    };
    for v in args.iter() {
        p.value(v, 0)?;
    }
    p.work.flush()?;
    lua.create_string(&p.out)
}

struct Packer<'a> {
    out: Vec<u8>,
    work: Work<'a>,
    out_max_bytes: usize,
}

impl Packer<'_> {
    fn put(&mut self, bytes: &[u8]) -> mlua::Result<()> {
        if self.out.len().saturating_add(bytes.len()) > self.out_max_bytes {
            return Err(mlua::Error::MemoryError("not enough memory".into()));
        }
        self.out.extend_from_slice(bytes);
        Ok(())
    }

    fn value(&mut self, v: &Value, level: usize) -> mlua::Result<()> {
        self.work.add(VALUE_INSTRUCTIONS)?;
        match v {
            Value::String(s) => self.bytes(&s.as_bytes()),
            Value::Boolean(b) => self.put(&[if *b { 0xc3 } else { 0xc2 }]),
            Value::Number(n) => self.number(*n),
            Value::Integer(n) => self.number(*n as f64),
            Value::Table(t) if level < PACK_NESTING_MAX => self.table(t, level),
            _ => self.put(&[0xc0]),
        }
    }

    fn bytes(&mut self, s: &[u8]) -> mlua::Result<()> {
        let len = s.len();
        if len < 32 {
            self.put(&[0xa0 | len as u8])?;
        } else if len <= 0xff {
            self.put(&[0xd9, len as u8])?;
        } else if len <= 0xffff {
            self.put(&[0xda, (len >> 8) as u8, len as u8])?;
        } else {
            let l = len as u32;
            self.put(&[0xdb])?;
            self.put(&l.to_be_bytes())?;
        }
        // Charged as it goes, so that a long string is sliced and killable.
        for chunk in s.chunks(64 * 1024) {
            self.work.bytes(chunk.len())?;
            self.put(chunk)?;
        }
        Ok(())
    }

    /// A number is an integer when it converts to `int64_t` and back
    /// unchanged (`IS_INT64_EQUIVALENT`), else a float when a `float`
    /// holds it exactly, else a double.
    fn number(&mut self, n: f64) -> mlua::Result<()> {
        if n.is_finite() && c_i64(n) as f64 == n {
            return self.int(c_i64(n));
        }
        let f = n as f32;
        if f64::from(f) == n {
            self.put(&[0xca])?;
            self.put(&f.to_be_bytes())
        } else {
            self.put(&[0xcb])?;
            self.put(&n.to_be_bytes())
        }
    }

    fn int(&mut self, n: i64) -> mlua::Result<()> {
        if n >= 0 {
            if n <= 127 {
                self.put(&[n as u8])
            } else if n <= 0xff {
                self.put(&[0xcc, n as u8])
            } else if n <= 0xffff {
                self.put(&[0xcd, (n >> 8) as u8, n as u8])
            } else if n <= 0xffff_ffff {
                self.put(&[0xce])?;
                self.put(&(n as u32).to_be_bytes())
            } else {
                self.put(&[0xcf])?;
                self.put(&(n as u64).to_be_bytes())
            }
        } else if n >= -32 {
            self.put(&[n as i8 as u8])
        } else if n >= -128 {
            self.put(&[0xd0, n as u8])
        } else if n >= -32768 {
            self.put(&[0xd1])?;
            self.put(&(n as i16).to_be_bytes())
        } else if n >= -2_147_483_648 {
            self.put(&[0xd2])?;
            self.put(&(n as i32).to_be_bytes())
        } else {
            self.put(&[0xd3])?;
            self.put(&n.to_be_bytes())
        }
    }

    fn header(&mut self, n: u64, fix: u8, b16: u8, b32: u8) -> mlua::Result<()> {
        if n <= 15 {
            self.put(&[fix | n as u8])
        } else if n <= 65535 {
            self.put(&[b16, (n >> 8) as u8, n as u8])
        } else {
            self.put(&[b32])?;
            self.put(&(n as u32).to_be_bytes())
        }
    }

    /// `table_is_an_array`: keys exactly 1..N (as C `int`s).
    fn is_array(&mut self, t: &Table) -> mlua::Result<bool> {
        let (mut count, mut max) = (0i64, 0i64);
        for pair in t.clone().pairs::<Value, Value>() {
            let (k, _) = pair?;
            self.work.add(VALUE_INSTRUCTIONS)?;
            let n = match k {
                Value::Number(n) => n,
                Value::Integer(n) => n as f64,
                _ => return Ok(false),
            };
            // IS_INT_EQUIVALENT: converts to `int` and back unchanged.
            let i = super::libarg::c_i32(n);
            if n <= 0.0 || f64::from(i) != n {
                return Ok(false);
            }
            max = max.max(i64::from(i));
            count += 1;
        }
        Ok(max == count)
    }

    fn table(&mut self, t: &Table, level: usize) -> mlua::Result<()> {
        if self.is_array(t)? {
            let len = t.raw_len() as u64;
            self.header(len, 0x90, 0xdc, 0xdd)?;
            for j in 1..=len {
                let v: Value = t.get(j as i64)?;
                self.value(&v, level + 1)?;
            }
            return Ok(());
        }
        let mut len = 0u64;
        for pair in t.clone().pairs::<Value, Value>() {
            pair?;
            self.work.add(1)?;
            len += 1;
        }
        self.header(len, 0x80, 0xde, 0xdf)?;
        for pair in t.clone().pairs::<Value, Value>() {
            let (k, v) = pair?;
            self.value(&k, level + 1)?;
            self.value(&v, level + 1)?;
        }
        Ok(())
    }
}

// -------------------------------------------------------------- unpacking

/// The Lua stack slots the C decoder would be using, to fail where it
/// fails.
struct Slots(usize);

impl Slots {
    fn check(&self, lua: &Lua, n: usize, what: &str) -> mlua::Result<()> {
        if self.0 + n > LUA_C_STACK_SLOTS {
            return Err(error(lua, &format!("stack overflow ({what})")));
        }
        Ok(())
    }
}

#[derive(Debug)]
enum Fail {
    Eof,
    BadFormat,
}

struct Unpacker<'a> {
    lua: &'a Lua,
    data: &'a [u8],
    pos: usize,
    slots: Slots,
    depth: usize,
    work: Work<'a>,
}

enum Step {
    Value(Value),
    Fail(Fail),
}

fn unpack(
    lua: &Lua,
    args: &MultiValue,
    name: &str,
    limit: i32,
    offset: i32,
) -> mlua::Result<MultiValue> {
    let data = check_bytes(lua, args, 0, name)?;
    let len = data.len();
    let decode_all = limit == 0 && offset == 0;
    if offset < 0 || limit < 0 {
        return Err(error(
            lua,
            &format!(
                "Invalid request to unpack with offset of {offset} and limit of {}.",
                len as i32
            ),
        ));
    }
    if offset as usize > len {
        return Err(error(
            lua,
            &format!(
                "Start offset {offset} greater than input length {}.",
                len as i32
            ),
        ));
    }
    let limit = if decode_all { i32::MAX } else { limit };
    let mut u = Unpacker {
        lua,
        data: &data,
        pos: offset as usize,
        slots: Slots(1),
        depth: 0,
        work: Work::new(lua),
    };
    let mut out = MultiValue::new();
    let mut refs = 0usize;
    let mut count = 0;
    while u.pos < len && count < limit {
        match u.value()? {
            Step::Value(v) => {
                if matches!(v, Value::String(_) | Value::Table(_)) {
                    refs += 1;
                    if refs > REF_VALUES_MAX {
                        return Err(error(lua, &format!("stack overflow ({TOO_MANY})")));
                    }
                }
                out.push_back(v);
            }
            Step::Fail(Fail::Eof) => return Err(error(lua, "Missing bytes in input.")),
            Step::Fail(Fail::BadFormat) => return Err(error(lua, "Bad data format in input.")),
        }
        count += 1;
    }
    u.work.flush()?;
    // mlua returns at most this many values from a callback, one fewer
    // than the C library can.
    if out.len() + usize::from(!decode_all) > MLUA_RESULTS_MAX {
        return Err(error(lua, &format!("stack overflow ({TOO_MANY})")));
    }
    if !decode_all {
        u.slots.check(lua, 1, "in function mp_unpack_full")?;
        let next = if u.pos == len { -1 } else { u.pos as i64 };
        out.push_front(Value::Integer(next));
    }
    Ok(out)
}

macro_rules! need {
    ($self:ident, $n:expr) => {
        if $self.data.len() - $self.pos < $n {
            return Ok(Step::Fail(Fail::Eof));
        }
    };
}

impl Unpacker<'_> {
    fn be(&self, at: usize, n: usize) -> u64 {
        self.data[at..at + n]
            .iter()
            .fold(0u64, |acc, &b| acc << 8 | u64::from(b))
    }

    /// `mp_decode_to_lua_type`: one value; on success it holds one more
    /// stack slot.
    fn value(&mut self) -> mlua::Result<Step> {
        need!(self, 1);
        self.slots.check(self.lua, 1, TOO_MANY)?;
        self.work.add(VALUE_INSTRUCTIONS)?;
        let p = self.pos;
        let c = self.data[p];
        let number = |v: f64| Ok(Step::Value(Value::Number(v)));
        let result = match c {
            0xcc => {
                need!(self, 2);
                self.pos += 2;
                number(f64::from(self.data[p + 1]))
            }
            0xd0 => {
                need!(self, 2);
                self.pos += 2;
                number(f64::from(self.data[p + 1] as i8))
            }
            0xcd => {
                need!(self, 3);
                self.pos += 3;
                number(self.be(p + 1, 2) as f64)
            }
            0xd1 => {
                need!(self, 3);
                self.pos += 3;
                number(f64::from(self.be(p + 1, 2) as u16 as i16))
            }
            0xce => {
                need!(self, 5);
                self.pos += 5;
                number(self.be(p + 1, 4) as f64)
            }
            0xd2 => {
                need!(self, 5);
                self.pos += 5;
                number(f64::from(self.be(p + 1, 4) as u32 as i32))
            }
            0xcf => {
                need!(self, 9);
                self.pos += 9;
                number(self.be(p + 1, 8) as f64)
            }
            0xd3 => {
                need!(self, 9);
                self.pos += 9;
                number(self.be(p + 1, 8) as i64 as f64)
            }
            0xc0 => {
                self.pos += 1;
                Ok(Step::Value(Value::Nil))
            }
            0xc3 | 0xc2 => {
                self.pos += 1;
                Ok(Step::Value(Value::Boolean(c == 0xc3)))
            }
            0xca => {
                need!(self, 5);
                self.pos += 5;
                number(f64::from(f32::from_bits(self.be(p + 1, 4) as u32)))
            }
            0xcb => {
                need!(self, 9);
                self.pos += 9;
                number(f64::from_bits(self.be(p + 1, 8)))
            }
            0xd9 => {
                need!(self, 2);
                let l = self.data[p + 1] as usize;
                self.string(2, l)
            }
            0xda => {
                need!(self, 3);
                let l = self.be(p + 1, 2) as usize;
                self.string(3, l)
            }
            0xdb => {
                need!(self, 5);
                let l = self.be(p + 1, 4) as usize;
                self.string(5, l)
            }
            0xdc => {
                need!(self, 3);
                let l = self.be(p + 1, 2) as usize;
                self.pos += 3;
                self.array(l)
            }
            0xdd => {
                need!(self, 5);
                let l = self.be(p + 1, 4) as usize;
                self.pos += 5;
                self.array(l)
            }
            0xde => {
                need!(self, 3);
                let l = self.be(p + 1, 2) as usize;
                self.pos += 3;
                self.map(l)
            }
            0xdf => {
                need!(self, 5);
                let l = self.be(p + 1, 4) as usize;
                self.pos += 5;
                self.map(l)
            }
            _ if c & 0x80 == 0 => {
                self.pos += 1;
                number(f64::from(c))
            }
            _ if c & 0xe0 == 0xe0 => {
                self.pos += 1;
                number(f64::from(c as i8))
            }
            _ if c & 0xe0 == 0xa0 => self.string(1, usize::from(c & 0x1f)),
            _ if c & 0xf0 == 0x90 => {
                self.pos += 1;
                self.array(usize::from(c & 0xf))
            }
            _ if c & 0xf0 == 0x80 => {
                self.pos += 1;
                self.map(usize::from(c & 0xf))
            }
            _ => Ok(Step::Fail(Fail::BadFormat)),
        };
        if let Ok(Step::Value(_)) = &result {
            self.slots.0 += 1;
        }
        result
    }

    fn string(&mut self, header: usize, len: usize) -> mlua::Result<Step> {
        need!(self, header.saturating_add(len));
        let start = self.pos + header;
        self.work.bytes(len)?;
        let s = self.lua.create_string(&self.data[start..start + len])?;
        self.pos = start + len;
        Ok(Step::Value(Value::String(s)))
    }

    fn nest(&mut self) -> mlua::Result<()> {
        self.depth += 1;
        if self.depth > NESTING_MAX {
            return Err(error(
                self.lua,
                "stack overflow (in function mp_decode_to_lua_array)",
            ));
        }
        Ok(())
    }

    /// `mp_decode_to_lua_array`: the table and each index take a slot.
    fn array(&mut self, len: usize) -> mlua::Result<Step> {
        self.nest()?;
        let t = self.lua.create_table()?;
        self.slots.0 += 1;
        self.slots
            .check(self.lua, 1, "in function mp_decode_to_lua_array")?;
        for i in 1..=len {
            self.slots.0 += 1;
            let v = match self.value()? {
                Step::Value(v) => v,
                fail => return Ok(fail),
            };
            t.raw_set(i as i64, v)?;
            self.slots.0 -= 2;
        }
        self.slots.0 -= 1;
        self.depth -= 1;
        Ok(Step::Value(Value::Table(t)))
    }

    /// `mp_decode_to_lua_hash`: the table, the key and the value.
    fn map(&mut self, len: usize) -> mlua::Result<Step> {
        self.nest()?;
        let t = self.lua.create_table()?;
        self.slots.0 += 1;
        for _ in 0..len {
            let k = match self.value()? {
                Step::Value(v) => v,
                fail => return Ok(fail),
            };
            let v = match self.value()? {
                Step::Value(v) => v,
                fail => return Ok(fail),
            };
            // lua_settable: a nil or NaN key is Lua's error.
            match &k {
                // Raised inside the C function: Lua adds no position.
                Value::Nil => return Err(mlua::Error::runtime("table index is nil")),
                Value::Number(n) if n.is_nan() => {
                    return Err(mlua::Error::runtime("table index is NaN"))
                }
                _ => {}
            }
            t.raw_set(k, v)?;
            self.slots.0 -= 2;
        }
        self.slots.0 -= 1;
        self.depth -= 1;
        Ok(Step::Value(Value::Table(t)))
    }
}
