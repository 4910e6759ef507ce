//! Parsing and validating parameter values, as CONFIG SET and redis.conf
//! loading share them: each value is checked against its parameter's type,
//! with Redis's error text, before anything is stored.

use super::params::{config_get, find_param, yes_no, Param, Store, Type};
use crate::config::Config;
use crate::db::DATABASES_COUNT;
use crate::util::parse_i64_strict;

/// A validated value, handed to a field's setter.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Parsed {
    Bool(bool),
    Int(i64),
    Memory(u64),
    Text(String),
}

impl Parsed {
    pub(super) fn as_bool(&self) -> bool {
        matches!(self, Parsed::Bool(true))
    }
    pub(super) fn as_i64(&self) -> i64 {
        match self {
            Parsed::Int(v) => *v,
            Parsed::Memory(v) => (*v).min(i64::MAX as u64) as i64,
            Parsed::Bool(b) => *b as i64,
            Parsed::Text(_) => 0,
        }
    }
    pub(super) fn as_u64(&self) -> u64 {
        match self {
            Parsed::Memory(v) => *v,
            other => other.as_i64().max(0) as u64,
        }
    }
    pub(super) fn text(&self) -> String {
        match self {
            Parsed::Bool(b) => yes_no(*b).to_string(),
            Parsed::Int(v) => v.to_string(),
            Parsed::Memory(v) => v.to_string(),
            Parsed::Text(s) => s.clone(),
        }
    }
}

/// Redis's `memtoull`: digits with an optional unit `b`, `k`, `kb`, `m`,
/// `mb`, `g`, `gb` (case-insensitive; `k` is 1000, `kb` is 1024).
pub fn parse_memory(s: &str) -> Option<u64> {
    let digits_end = s
        .bytes()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(s.len());
    let (digits, unit) = s.split_at(digits_end);
    let mul: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1024,
        "m" => 1000 * 1000,
        "mb" => 1024 * 1024,
        "g" => 1000 * 1000 * 1000,
        "gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    if digits.is_empty() {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(mul)
}

/// Validates `value` against `p`'s type, giving Redis's error text on failure.
pub(super) fn parse_value(p: &Param, value: &str) -> Result<Parsed, String> {
    match p.ty {
        Type::Bool => {
            if value.eq_ignore_ascii_case("yes") {
                Ok(Parsed::Bool(true))
            } else if value.eq_ignore_ascii_case("no") {
                Ok(Parsed::Bool(false))
            } else {
                Err("argument must be 'yes' or 'no'".into())
            }
        }
        Type::Int { min, max } => {
            let v = parse_i64_strict(value.as_bytes())
                .ok_or_else(|| "argument couldn't be parsed into an integer".to_string())?;
            if v < min || v > max {
                return Err(format!(
                    "argument must be between {min} and {max} inclusive"
                ));
            }
            Ok(Parsed::Int(v))
        }
        Type::Memory { min, max } => {
            let v =
                parse_memory(value).ok_or_else(|| "argument must be a memory value".to_string())?;
            if v < min || v > max {
                return Err(format!(
                    "argument must be between {min} and {max} inclusive"
                ));
            }
            Ok(Parsed::Memory(v))
        }
        Type::MemoryOrPercent => {
            const NOT: &str = "argument must be a memory or percent value";
            if let Some(digits) = value.strip_suffix('%') {
                let pct = parse_i64_strict(digits.as_bytes())
                    .filter(|v| *v >= 0)
                    .ok_or_else(|| NOT.to_string())?;
                if pct > 100 {
                    return Err("percentage argument must be less or equal to 100".into());
                }
                return Ok(Parsed::Int(-pct));
            }
            let v = parse_memory(value).ok_or_else(|| NOT.to_string())?;
            i64::try_from(v)
                .map(Parsed::Int)
                .map_err(|_| NOT.to_string())
        }
        Type::Enum(names) => names
            .iter()
            .find(|n| n.eq_ignore_ascii_case(value))
            .map(|n| Parsed::Text(n.to_string()))
            .ok_or_else(|| {
                format!(
                    "argument(s) must be one of the following: {}",
                    names.join(", ")
                )
            }),
        Type::Str => Ok(Parsed::Text(value.to_string())),
        Type::List => Ok(Parsed::Text(
            value.split_ascii_whitespace().collect::<Vec<_>>().join(" "),
        )),
        Type::Save => parse_save(value).map(Parsed::Text),
        Type::KeyspaceEvents => crate::notify::parse_flags(value.as_bytes())
            .map(|_| Parsed::Text(value.to_string()))
            .ok_or_else(|| crate::notify::INVALID_CLASS_ERROR.to_string()),
        Type::OutputBufferLimit => {
            // Validated against a scratch copy; the setter applies it.
            let mut scratch = crate::config::OutputBufferLimits::default();
            scratch.apply(value)?;
            Ok(Parsed::Text(value.to_string()))
        }
    }
}

/// `save`: an even number of integers, seconds >= 1 and changes >= 0.
/// Returns the canonical text (numbers re-rendered, single spaces).
fn parse_save(value: &str) -> Result<String, String> {
    const INVALID: &str = "Invalid save parameters";
    let parts: Vec<&str> = value.split_ascii_whitespace().collect();
    if parts.len() % 2 == 1 {
        return Err(INVALID.into());
    }
    let mut out = Vec::with_capacity(parts.len());
    for (i, part) in parts.iter().enumerate() {
        let v: i64 = part.parse().map_err(|_| INVALID.to_string())?;
        if (i % 2 == 0 && v < 1) || (i % 2 == 1 && v < 0) {
            return Err(INVALID.into());
        }
        out.push(v.to_string());
    }
    Ok(out.join(" "))
}

pub(super) fn store_value(config: &mut Config, p: &Param, v: &Parsed) {
    match p.store {
        Store::Field { set, .. } => set(config, v),
        Store::Extra(_) => {
            config.extra.insert(p.name.to_string(), v.text());
        }
    }
}

/// Applies one redis.conf directive (`key` and the rest of the line as
/// `value`) through the same validation as CONFIG SET. Unlike CONFIG SET,
/// immutable and protected parameters may be set here (this is the startup
/// path), except `databases`, which must be 16.
pub fn apply_config_line(config: &mut Config, key: &str, value: &str) -> Result<(), String> {
    if key.eq_ignore_ascii_case("replicaof") || key.eq_ignore_ascii_case("slaveof") {
        return apply_replicaof(config, key, value);
    }
    let p = find_param(key)
        .ok_or_else(|| format!("Bad directive or wrong number of arguments: '{key}'"))?;
    let v = parse_value(p, value)?;
    if p.name == "databases" && v.as_i64() != DATABASES_COUNT as i64 {
        return Err(format!(
            "seedkv supports exactly {DATABASES_COUNT} databases"
        ));
    }
    store_value(config, p, &v);
    Ok(())
}

/// `replicaof <host> <port>`: not a parameter of CONFIG GET/SET in Redis
/// 7.0, a directive of its own (`loadServerConfigFromString`).
fn apply_replicaof(config: &mut Config, key: &str, value: &str) -> Result<(), String> {
    let words: Vec<&str> = value.split_whitespace().collect();
    let [host, port] = words[..] else {
        return Err(format!(
            "Bad directive or wrong number of arguments: '{key}'"
        ));
    };
    let port = port
        .parse::<u16>()
        .map_err(|_| "Invalid master port".to_string())?;
    config.replicaof = Some((host.to_string(), port));
    Ok(())
}

/// Loads redis.conf text: one directive per line, `#` comments, arguments
/// quoted as in Redis (`sdssplitargs`). As in Redis, the first `save` line
/// replaces the default and later ones append. Returns the first error as
/// `line N: message`.
pub fn load_config_str(config: &mut Config, text: &str) -> Result<(), String> {
    let mut save_seen = false;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fail = |msg: String| format!("line {}: {msg}", i + 1);
        let args = split_config_line(line.as_bytes())
            .ok_or_else(|| fail("Unbalanced quotes in configuration line".into()))?;
        let Some((key, rest)) = args.split_first() else {
            continue;
        };
        if key.eq_ignore_ascii_case(b"user") {
            // Redis's `ACLAppendUserForLoading`: kept for the start.
            if rest.is_empty() {
                return Err(fail("wrong number of arguments".into()));
            }
            config.acl_users.push(rest.to_vec());
            continue;
        }
        let key = String::from_utf8_lossy(key).into_owned();
        let value = rest
            .iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect::<Vec<_>>()
            .join(" ");
        if key.eq_ignore_ascii_case("save") {
            let old = if save_seen {
                config_get(config, "save").unwrap_or_default()
            } else {
                String::new()
            };
            save_seen = true;
            let joined = format!("{old} {value}");
            apply_config_line(config, "save", joined.trim()).map_err(fail)?;
            continue;
        }
        apply_config_line(config, &key, &value).map_err(fail)?;
    }
    Ok(())
}

/// Splits a redis.conf line into arguments like Redis's `sdssplitargs`:
/// whitespace separates, `"..."` takes `\n`, `\t`, `\r`, `\"`, `\\` and
/// `\xHH` escapes, `'...'` takes `\'`. `None` on unbalanced quotes or a
/// closing quote not followed by whitespace.
pub(super) fn split_config_line(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut args = Vec::new();
    let mut i = 0;
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    while i < line.len() {
        if line[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let mut arg = Vec::new();
        let quote = match line[i] {
            q @ (b'"' | b'\'') => {
                i += 1;
                Some(q)
            }
            _ => None,
        };
        loop {
            let Some(&c) = line.get(i) else {
                if quote.is_some() {
                    return None;
                }
                break;
            };
            match quote {
                None if c.is_ascii_whitespace() => break,
                None => arg.push(c),
                Some(q) if c == q => {
                    i += 1;
                    if line.get(i).is_some_and(|b| !b.is_ascii_whitespace()) {
                        return None;
                    }
                    break;
                }
                Some(b'"') if c == b'\\' && i + 1 < line.len() => {
                    i += 1;
                    let e = line[i];
                    let hex_pair = (
                        line.get(i + 1).copied().and_then(hex),
                        line.get(i + 2).copied().and_then(hex),
                    );
                    match (e, hex_pair) {
                        (b'x', (Some(hi), Some(lo))) => {
                            arg.push(hi * 16 + lo);
                            i += 2;
                        }
                        (b'n', _) => arg.push(b'\n'),
                        (b'r', _) => arg.push(b'\r'),
                        (b't', _) => arg.push(b'\t'),
                        (b'b', _) => arg.push(0x08),
                        (b'a', _) => arg.push(0x07),
                        (other, _) => arg.push(other),
                    }
                }
                Some(b'\'') if c == b'\\' && line.get(i + 1) == Some(&b'\'') => {
                    i += 1;
                    arg.push(b'\'');
                }
                Some(_) => arg.push(c),
            }
            i += 1;
        }
        args.push(arg);
    }
    Some(args)
}
