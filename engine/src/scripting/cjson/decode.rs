//! `cjson.decode`: lua-cjson's tokenizer and recursive parser. The text
//! is read as a C string: a NUL byte ends it.

use mlua::{Lua, MultiValue, Table, Value};

use super::number::strtod;
use super::{null, Config, NESTING_MAX};
use crate::scripting::libarg::{arg_error, check_bytes, error};
use crate::scripting::meter::{Work, VALUE_INSTRUCTIONS};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    ObjBegin,
    ObjEnd,
    ArrBegin,
    ArrEnd,
    String,
    Number,
    Boolean,
    Null,
    Colon,
    Comma,
    End,
    Error,
}

impl Kind {
    /// `json_token_type_name`.
    fn name(self) -> &'static str {
        match self {
            Kind::ObjBegin => "T_OBJ_BEGIN",
            Kind::ObjEnd => "T_OBJ_END",
            Kind::ArrBegin => "T_ARR_BEGIN",
            Kind::ArrEnd => "T_ARR_END",
            Kind::String => "T_STRING",
            Kind::Number => "T_NUMBER",
            Kind::Boolean => "T_BOOLEAN",
            Kind::Null => "T_NULL",
            Kind::Colon => "T_COLON",
            Kind::Comma => "T_COMMA",
            Kind::End => "T_END",
            Kind::Error => "T_ERROR",
        }
    }
}

/// Bytes of a string scanned between two charges (a power of two).
const CHUNK_BYTES: usize = 64 * 1024;

struct Token {
    kind: Kind,
    /// Where the token (or the error) is, 0-based.
    index: usize,
    number: f64,
    boolean: bool,
    /// A string token's bytes, or the error's description.
    text: Vec<u8>,
    error: &'static str,
}

struct Parser<'a> {
    lua: &'a Lua,
    cfg: &'a Config,
    data: &'a [u8],
    ptr: usize,
    depth: usize,
    work: Work<'a>,
}

/// `cjson.decode(text)`.
pub fn decode(lua: &Lua, cfg: &Config, args: MultiValue) -> mlua::Result<Value> {
    if args.len() != 1 {
        return Err(arg_error(lua, 1, "decode", "expected 1 argument"));
    }
    let data = check_bytes(lua, &args, 0, "decode")?;
    if data.len() >= 2 && (data[0] == 0 || data[1] == 0) {
        return Err(error(lua, "JSON parser does not support UTF-16 or UTF-32"));
    }
    let mut p = Parser {
        lua,
        cfg,
        data: &data,
        ptr: 0,
        depth: 0,
        work: Work::new(lua),
    };
    let token = p.next_token()?;
    let value = p.value(token)?;
    let token = p.next_token()?;
    if token.kind != Kind::End {
        return Err(p.parse_error("the end", &token));
    }
    p.work.flush()?;
    Ok(value)
}

impl Parser<'_> {
    fn at(&self, i: usize) -> u8 {
        self.data.get(i).copied().unwrap_or(0)
    }

    fn token(&self, kind: Kind) -> Token {
        Token {
            kind,
            index: self.ptr,
            number: 0.0,
            boolean: false,
            text: Vec::new(),
            error: "",
        }
    }

    fn token_error(&self, error: &'static str) -> Token {
        let mut t = self.token(Kind::Error);
        t.error = error;
        t
    }

    fn parse_error(&self, expected: &str, token: &Token) -> mlua::Error {
        let found = if token.kind == Kind::Error {
            token.error
        } else {
            token.kind.name()
        };
        error(
            self.lua,
            &format!(
                "Expected {expected} but found {found} at character {}",
                token.index + 1
            ),
        )
    }

    fn next_token(&mut self) -> mlua::Result<Token> {
        self.work.add(1)?;
        while matches!(self.at(self.ptr), b' ' | b'\t' | b'\n' | b'\r') {
            self.ptr += 1;
            if self.ptr & 63 == 0 {
                self.work.add(1)?;
            }
        }
        let c = self.at(self.ptr);
        let single = match c {
            b'{' => Some(Kind::ObjBegin),
            b'}' => Some(Kind::ObjEnd),
            b'[' => Some(Kind::ArrBegin),
            b']' => Some(Kind::ArrEnd),
            b',' => Some(Kind::Comma),
            b':' => Some(Kind::Colon),
            0 => return Ok(self.token(Kind::End)),
            _ => None,
        };
        if let Some(kind) = single {
            let t = self.token(kind);
            self.ptr += 1;
            return Ok(t);
        }
        let rest = &self.data[self.ptr.min(self.data.len())..];
        Ok(match c {
            b'"' => self.string_token()?,
            b'-' | b'0'..=b'9' => {
                if !self.cfg.decode_invalid_numbers && self.is_invalid_number() {
                    self.token_error("invalid number")
                } else {
                    self.number_token()
                }
            }
            _ if rest.starts_with(b"true") => {
                let mut t = self.token(Kind::Boolean);
                t.boolean = true;
                self.ptr += 4;
                t
            }
            _ if rest.starts_with(b"false") => {
                let t = self.token(Kind::Boolean);
                self.ptr += 5;
                t
            }
            _ if rest.starts_with(b"null") => {
                let t = self.token(Kind::Null);
                self.ptr += 4;
                t
            }
            b'+' | b'i' | b'I' | b'n' | b'N'
                if self.cfg.decode_invalid_numbers && self.is_invalid_number() =>
            {
                self.number_token()
            }
            _ => self.token_error("invalid token"),
        })
    }

    /// lua-cjson's `json_is_invalid_number`: forms strtod reads that JSON
    /// does not allow.
    fn is_invalid_number(&self) -> bool {
        let mut p = self.ptr;
        if self.at(p) == b'+' {
            return true;
        }
        if self.at(p) == b'-' {
            p += 1;
        }
        let c = self.at(p);
        if c == b'0' {
            let c2 = self.at(p + 1);
            return c2 | 0x20 == b'x' || c2.is_ascii_digit();
        }
        // A C `char`: bytes from 0x80 are negative, so "ordinary".
        if c <= b'9' || c >= 0x80 {
            return false;
        }
        let rest = &self.data[p.min(self.data.len())..];
        let word = |w: &[u8]| rest.len() >= 3 && rest[..3].eq_ignore_ascii_case(w);
        word(b"inf") || word(b"nan")
    }

    fn number_token(&mut self) -> Token {
        // strtod stops at a NUL, as the C string ends there.
        let end = self.data[self.ptr..]
            .iter()
            .position(|&b| b == 0)
            .map_or(self.data.len(), |i| self.ptr + i);
        match strtod(&self.data[..end], self.ptr) {
            Some((n, next)) => {
                let mut t = self.token(Kind::Number);
                t.number = n;
                self.ptr = next;
                t
            }
            None => self.token_error("invalid number"),
        }
    }

    fn string_token(&mut self) -> mlua::Result<Token> {
        let start = self.ptr;
        self.ptr += 1;
        let mut text = Vec::new();
        loop {
            let c = self.at(self.ptr);
            if c == b'"' {
                break;
            }
            if c == 0 {
                return Ok(self.token_error("unexpected end of string"));
            }
            if c == b'\\' {
                let translated = match self.at(self.ptr + 1) {
                    b'"' => b'"',
                    b'\\' => b'\\',
                    b'/' => b'/',
                    b'b' => 8,
                    b't' => b'\t',
                    b'n' => b'\n',
                    b'f' => 12,
                    b'r' => b'\r',
                    b'u' => {
                        if self.unicode_escape(&mut text) {
                            continue;
                        }
                        return Ok(self.token_error("invalid unicode escape code"));
                    }
                    _ => return Ok(self.token_error("invalid escape code")),
                };
                text.push(translated);
                self.ptr += 2;
                continue;
            }
            text.push(c);
            self.ptr += 1;
            // Charged as it goes, so that a long string is sliced and
            // killable.
            if self.ptr & (CHUNK_BYTES - 1) == 0 {
                self.work.bytes(CHUNK_BYTES)?;
            }
        }
        self.ptr += 1;
        let mut t = self.token(Kind::String);
        t.index = start;
        t.text = text;
        Ok(t)
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let mut v = 0;
        for i in 0..4 {
            let d = (self.at(at + i) as char).to_digit(16)?;
            v = v << 4 | d;
        }
        Some(v)
    }

    /// `\uXXXX` (and a surrogate pair) at `ptr`, as UTF-8 into `out`;
    /// false for an invalid escape.
    fn unicode_escape(&mut self, out: &mut Vec<u8>) -> bool {
        let Some(mut cp) = self.hex4(self.ptr + 2) else {
            return false;
        };
        let mut len = 6;
        if cp & 0xF800 == 0xD800 {
            if cp & 0x400 != 0 {
                return false;
            }
            if self.at(self.ptr + 6) != b'\\' || self.at(self.ptr + 7) != b'u' {
                return false;
            }
            let Some(low) = self.hex4(self.ptr + 8) else {
                return false;
            };
            if low & 0xFC00 != 0xDC00 {
                return false;
            }
            cp = (((cp & 0x3FF) << 10) | (low & 0x3FF)) + 0x10000;
            len = 12;
        }
        match cp {
            0..=0x7F => out.push(cp as u8),
            0x80..=0x7FF => {
                out.extend_from_slice(&[(cp >> 6) as u8 | 0xC0, (cp & 0x3F) as u8 | 0x80])
            }
            0x800..=0xFFFF => out.extend_from_slice(&[
                (cp >> 12) as u8 | 0xE0,
                ((cp >> 6) & 0x3F) as u8 | 0x80,
                (cp & 0x3F) as u8 | 0x80,
            ]),
            _ => out.extend_from_slice(&[
                (cp >> 18) as u8 | 0xF0,
                ((cp >> 12) & 0x3F) as u8 | 0x80,
                ((cp >> 6) & 0x3F) as u8 | 0x80,
                (cp & 0x3F) as u8 | 0x80,
            ]),
        }
        self.ptr += len;
        true
    }

    fn value(&mut self, token: Token) -> mlua::Result<Value> {
        self.work.add(VALUE_INSTRUCTIONS)?;
        match token.kind {
            Kind::String => Ok(Value::String(self.lua.create_string(&token.text)?)),
            Kind::Number => Ok(Value::Number(token.number)),
            Kind::Boolean => Ok(Value::Boolean(token.boolean)),
            Kind::Null => Ok(null()),
            Kind::ObjBegin => self.object().map(Value::Table),
            Kind::ArrBegin => self.array().map(Value::Table),
            _ => Err(self.parse_error("value", &token)),
        }
    }

    /// `json_decode_descend`.
    fn descend(&mut self) -> mlua::Result<()> {
        self.depth += 1;
        if self.depth <= self.cfg.decode_max_depth.max(0) as usize && self.depth <= NESTING_MAX {
            return Ok(());
        }
        Err(error(
            self.lua,
            &format!(
                "Found too many nested data structures ({}) at character {}",
                self.depth, self.ptr
            ),
        ))
    }

    fn object(&mut self) -> mlua::Result<Table> {
        self.descend()?;
        let t = self.lua.create_table()?;
        let mut token = self.next_token()?;
        if token.kind == Kind::ObjEnd {
            self.depth -= 1;
            return Ok(t);
        }
        loop {
            if token.kind != Kind::String {
                return Err(self.parse_error("object key string", &token));
            }
            let key = self.lua.create_string(&token.text)?;
            token = self.next_token()?;
            if token.kind != Kind::Colon {
                return Err(self.parse_error("colon", &token));
            }
            token = self.next_token()?;
            let v = self.value(token)?;
            t.raw_set(key, v)?;
            token = self.next_token()?;
            if token.kind == Kind::ObjEnd {
                self.depth -= 1;
                return Ok(t);
            }
            if token.kind != Kind::Comma {
                return Err(self.parse_error("comma or object end", &token));
            }
            token = self.next_token()?;
        }
    }

    fn array(&mut self) -> mlua::Result<Table> {
        self.descend()?;
        let t = self.lua.create_table()?;
        let mut token = self.next_token()?;
        if token.kind == Kind::ArrEnd {
            self.depth -= 1;
            return Ok(t);
        }
        let mut i: i64 = 1;
        loop {
            let v = self.value(token)?;
            t.raw_set(i, v)?;
            i += 1;
            token = self.next_token()?;
            if token.kind == Kind::ArrEnd {
                self.depth -= 1;
                return Ok(t);
            }
            if token.kind != Kind::Comma {
                return Err(self.parse_error("comma or array end", &token));
            }
            token = self.next_token()?;
        }
    }
}
