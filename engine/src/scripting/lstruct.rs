//! `struct`: Roberto Ierusalimschy's lua-struct as Redis 7.0 bundles it
//! (deps/lua/src/lua_struct.c), written in Rust: `pack`, `unpack` and
//! `size` over formats of `<>!xbBhHlLjJTiIfdsc` with C's sizes on
//! x86-64 (`long` and `size_t` of 8 bytes) and its alignment rules.
//!
//! Work: the loops run once per format character and per byte of data,
//! both bounded by the arguments; they are charged per character.

use mlua::{Lua, MultiValue, Table, Value};

use super::libarg::{arg_error, c_i64, c_u64, check_bytes, check_number, error, type_name};
use super::meter::Work;

/// The largest integer size (MAXINTSIZE).
const INT_SIZE_MAX: i64 = 32;

/// The default maximum alignment (MAXALIGN: that of a double or a long).
const ALIGN_MAX: i64 = 8;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Endian {
    Little,
    Big,
}

/// lua-struct's `Header`.
struct Header {
    endian: Endian,
    align: i64,
}

impl Header {
    fn new() -> Header {
        Header {
            endian: Endian::Little,
            align: 1,
        }
    }
}

/// Builds the `struct` table.
pub fn library(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set("pack", lua.create_function(pack)?)?;
    t.set("unpack", lua.create_function(unpack)?)?;
    t.set("size", lua.create_function(size)?)?;
    Ok(t)
}

/// A format being read, as a C string (a NUL ends it).
struct Format<'a> {
    bytes: &'a [u8],
    i: usize,
}

impl Format<'_> {
    fn peek(&self) -> u8 {
        self.bytes.get(self.i).copied().unwrap_or(0)
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek();
        if c == 0 {
            return None;
        }
        self.i += 1;
        Some(c)
    }

    /// `getnum`: a decimal number, `default` when none follows.
    fn number(&mut self, lua: &Lua, default: i64) -> mlua::Result<i64> {
        if !self.peek().is_ascii_digit() {
            return Ok(default);
        }
        let mut a: i64 = 0;
        while self.peek().is_ascii_digit() {
            let d = i64::from(self.peek() - b'0');
            if a > i64::from(i32::MAX) / 10 || a * 10 > i64::from(i32::MAX) - d {
                return Err(error(lua, "integral size overflow"));
            }
            a = a * 10 + d;
            self.i += 1;
        }
        Ok(a)
    }
}

/// `optsize`: the size of option `opt`.
fn option_size(lua: &Lua, opt: u8, fmt: &mut Format) -> mlua::Result<i64> {
    Ok(match opt {
        b'B' | b'b' => 1,
        b'H' | b'h' => 2,
        b'L' | b'l' | b'T' | b'd' => 8,
        b'f' | b'x' => i64::from(opt == b'f') * 3 + 1,
        b'c' => fmt.number(lua, 1)?,
        b'i' | b'I' => {
            let size = fmt.number(lua, 4)?;
            if size > INT_SIZE_MAX {
                return Err(error(
                    lua,
                    &format!("integral size {size} is larger than limit of {INT_SIZE_MAX}"),
                ));
            }
            size
        }
        _ => 0,
    })
}

/// `gettoalign`: padding before an option of `size` at `len`.
fn to_align(len: i64, h: &Header, opt: u8, size: i64) -> i64 {
    if size == 0 || opt == b'c' {
        return 0;
    }
    let size = size.min(h.align);
    (size - (len & (size - 1))) & (size - 1)
}

/// `controloptions`: endianness, alignment, spaces; anything else is an
/// invalid option.
fn control(
    lua: &Lua,
    opt: u8,
    fmt: &mut Format,
    h: &mut Header,
    function: &str,
) -> mlua::Result<()> {
    match opt {
        b' ' => {}
        b'>' => h.endian = Endian::Big,
        b'<' => h.endian = Endian::Little,
        b'!' => {
            let a = fmt.number(lua, ALIGN_MAX)?;
            if a == 0 || a & (a - 1) != 0 {
                return Err(error(lua, &format!("alignment {a} is not a power of 2")));
            }
            h.align = a;
        }
        _ => {
            let msg = format!("invalid format option '{}'", opt as char);
            return Err(arg_error(lua, 1, function, &msg));
        }
    }
    Ok(())
}

fn format_arg(lua: &Lua, args: &MultiValue, function: &str) -> mlua::Result<Vec<u8>> {
    check_bytes(lua, args, 0, function)
}

/// `b_pack`. lua-struct pushes a nil after the arguments, so a missing
/// argument right after the last one reads as nil, not "no value".
fn arg_value(args: &MultiValue, i: usize) -> Option<&Value> {
    args.get(i)
}

/// The error for a value `pack` needs past the last argument: the first
/// one reads as nil (lua-struct pushes one), later ones as Lua's "no value".
fn missing_pack_arg(lua: &Lua, args: &MultiValue, i: usize, expected: &str) -> mlua::Error {
    let got = if i == args.len() {
        "nil"
    } else {
        type_name(args, i)
    };
    arg_error(
        lua,
        i + 1,
        "pack",
        &format!("{expected} expected, got {got}"),
    )
}

fn pack_number(lua: &Lua, args: &MultiValue, i: usize) -> mlua::Result<f64> {
    if i >= args.len() {
        return Err(missing_pack_arg(lua, args, i, "number"));
    }
    check_number(lua, args, i, "pack")
}

fn pack_string(lua: &Lua, args: &MultiValue, i: usize) -> mlua::Result<Vec<u8>> {
    if i >= args.len() {
        return Err(missing_pack_arg(lua, args, i, "string"));
    }
    check_bytes(lua, args, i, "pack")
}

fn pack(lua: &Lua, args: MultiValue) -> mlua::Result<mlua::String> {
    let fmt_bytes = format_arg(lua, &args, "pack")?;
    let mut fmt = Format {
        bytes: &fmt_bytes,
        i: 0,
    };
    let mut h = Header::new();
    let mut arg = 1usize;
    let mut out: Vec<u8> = Vec::new();
    let mut work = Work::new(lua);
    let out_max_bytes = super::lua::LUA_MEMORY_MAX_BYTES.saturating_sub(lua.used_memory());
    while let Some(opt) = fmt.next() {
        work.add(1)?;
        let mut size = option_size(lua, opt, &mut fmt)?;
        let pad = to_align(out.len() as i64, &h, opt, size);
        out.resize(out.len() + pad as usize, 0);
        match opt {
            b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                let n = pack_number(lua, &args, arg)?;
                arg += 1;
                let value = if n < 0.0 { c_i64(n) as u64 } else { c_u64(n) };
                let mut bytes = [0u8; INT_SIZE_MAX as usize];
                let size = size as usize;
                let mut v = value;
                for b in bytes.iter_mut().take(size) {
                    *b = v as u8;
                    v = v.checked_shr(8).unwrap_or(0);
                }
                if h.endian == Endian::Big {
                    bytes[..size].reverse();
                }
                out.extend_from_slice(&bytes[..size]);
            }
            b'x' => out.push(0),
            b'f' => {
                let f = pack_number(lua, &args, arg)? as f32;
                arg += 1;
                out.extend_from_slice(&match h.endian {
                    Endian::Little => f.to_le_bytes(),
                    Endian::Big => f.to_be_bytes(),
                });
            }
            b'd' => {
                let d = pack_number(lua, &args, arg)?;
                arg += 1;
                out.extend_from_slice(&match h.endian {
                    Endian::Little => d.to_le_bytes(),
                    Endian::Big => d.to_be_bytes(),
                });
            }
            b'c' | b's' => {
                let s = pack_string(lua, &args, arg)?;
                arg += 1;
                if size == 0 {
                    size = s.len() as i64;
                }
                if (s.len() as i64) < size {
                    // lua-struct checks after moving to the next argument.
                    return Err(arg_error(lua, arg + 1, "pack", "string too short"));
                }
                work.bytes(size as usize)?;
                if out.len().saturating_add(size as usize) > out_max_bytes {
                    return Err(mlua::Error::MemoryError("not enough memory".into()));
                }
                out.extend_from_slice(&s[..size as usize]);
                if opt == b's' {
                    out.push(0);
                }
            }
            _ => control(lua, opt, &mut fmt, &mut h, "pack")?,
        }
    }
    work.flush()?;
    lua.create_string(&out)
}

/// `getinteger`: `size` bytes as an integer, sign-extended for the
/// signed options (the mask is computed as x86-64 shifts, modulo 64).
fn get_integer(bytes: &[u8], endian: Endian, signed: bool) -> f64 {
    let mut l: u64 = 0;
    let mut push = |b: u8| l = l.checked_shl(8).unwrap_or(0) | u64::from(b);
    match endian {
        Endian::Big => bytes.iter().for_each(|&b| push(b)),
        Endian::Little => bytes.iter().rev().for_each(|&b| push(b)),
    }
    if !signed {
        return l as f64;
    }
    let shift = (bytes.len() as u32 * 8).wrapping_sub(1);
    let mask = (!0u64).wrapping_shl(shift);
    if l & mask != 0 {
        l |= mask;
    }
    l as i64 as f64
}

fn unpack(lua: &Lua, args: MultiValue) -> mlua::Result<MultiValue> {
    let fmt_bytes = format_arg(lua, &args, "unpack")?;
    let data = check_bytes(lua, &args, 1, "unpack")?;
    let mut fmt = Format {
        bytes: &fmt_bytes,
        i: 0,
    };
    let start = match arg_value(&args, 2) {
        None | Some(Value::Nil) => 1,
        Some(_) => c_i64(check_number(lua, &args, 2, "unpack")?),
    };
    // `size_t pos = luaL_optinteger(...)`: only 0 is caught here; a
    // negative start wraps around and is "data string too short".
    if start == 0 {
        return Err(arg_error(lua, 3, "unpack", "offset must be 1 or greater"));
    }
    let ld = data.len() as u64;
    let mut pos: u64 = (start as u64).wrapping_sub(1);
    let mut h = Header::new();
    let mut out = MultiValue::new();
    let mut work = Work::new(lua);
    let too_short = |lua: &Lua| arg_error(lua, 2, "unpack", "data string too short");
    while let Some(opt) = fmt.next() {
        work.add(1)?;
        let mut size = option_size(lua, opt, &mut fmt)? as u64;
        pos = pos.wrapping_add(to_align(pos as i64, &h, opt, size as i64) as u64);
        if !(size <= ld && pos <= ld - size) {
            return Err(too_short(lua));
        }
        let p = pos as usize;
        match opt {
            b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                let signed = opt.is_ascii_lowercase();
                let v = get_integer(&data[p..p + size as usize], h.endian, signed);
                out.push_back(Value::Number(v));
            }
            b'x' => {}
            b'f' => {
                let b: [u8; 4] = data[p..p + 4].try_into().unwrap_or_default();
                let f = match h.endian {
                    Endian::Little => f32::from_le_bytes(b),
                    Endian::Big => f32::from_be_bytes(b),
                };
                out.push_back(Value::Number(f64::from(f)));
            }
            b'd' => {
                let b: [u8; 8] = data[p..p + 8].try_into().unwrap_or_default();
                let d = match h.endian {
                    Endian::Little => f64::from_le_bytes(b),
                    Endian::Big => f64::from_be_bytes(b),
                };
                out.push_back(Value::Number(d));
            }
            b'c' => {
                if size == 0 {
                    let previous = match out.back() {
                        Some(Value::Number(n)) => Some(*n),
                        Some(Value::Integer(n)) => Some(*n as f64),
                        Some(v @ Value::String(_)) => lua.coerce_number(v.clone())?,
                        _ => None,
                    };
                    let Some(n) = previous else {
                        return Err(error(lua, "format 'c0' needs a previous size"));
                    };
                    out.pop_back();
                    size = c_u64(n);
                    if !(size <= ld && pos <= ld - size) {
                        return Err(too_short(lua));
                    }
                }
                work.bytes(size as usize)?;
                out.push_back(Value::String(
                    lua.create_string(&data[p..p + size as usize])?,
                ));
            }
            b's' => {
                let Some(len) = data[p..].iter().position(|&b| b == 0) else {
                    return Err(error(lua, "unfinished string in data"));
                };
                work.bytes(len)?;
                size = len as u64 + 1;
                out.push_back(Value::String(lua.create_string(&data[p..p + len])?));
            }
            _ => control(lua, opt, &mut fmt, &mut h, "unpack")?,
        }
        // luaL_checkstack(L, 2, "too many results") over the arguments
        // and results; strings are also bounded by mlua's reference stack.
        let strings = out.iter().filter(|v| v.is_string()).count();
        if out.len() + args.len() + 2 > 8000 || strings > 4000 {
            return Err(error(lua, "stack overflow (too many results)"));
        }
        pos = pos.wrapping_add(size);
    }
    work.flush()?;
    out.push_back(Value::Number(pos.wrapping_add(1) as f64));
    Ok(out)
}

fn size(lua: &Lua, args: MultiValue) -> mlua::Result<i64> {
    let fmt_bytes = format_arg(lua, &args, "size")?;
    let mut fmt = Format {
        bytes: &fmt_bytes,
        i: 0,
    };
    let mut h = Header::new();
    let mut pos: i64 = 0;
    let mut work = Work::new(lua);
    while let Some(opt) = fmt.next() {
        work.add(1)?;
        let size = option_size(lua, opt, &mut fmt)?;
        pos += to_align(pos, &h, opt, size);
        if opt == b's' {
            return Err(arg_error(lua, 1, "size", "option 's' has no fixed size"));
        }
        if opt == b'c' && size == 0 {
            return Err(arg_error(lua, 1, "size", "option 'c0' has no fixed size"));
        }
        if !opt.is_ascii_alphanumeric() {
            control(lua, opt, &mut fmt, &mut h, "size")?;
        }
        pos += size;
    }
    work.flush()?;
    Ok(pos)
}
