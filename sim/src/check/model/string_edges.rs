//! The reference model's GETRANGE, SETRANGE and INCRBYFLOAT, written from
//! Redis 7.0's `t_string.c` (`getrangeCommand`, `setrangeCommand`,
//! `incrbyfloatCommand`): the commands whose edges (i64 indices, offsets at
//! the proto limit, float specials) the adversarial workload drives.
//!
//! INCRBYFLOAT adds in x87 `long double` and prints with `%.17Lf`; the
//! model predicts its errors exactly and judges a sum loosely (within a
//! relative 1e-9 of its double sum, as HINCRBYFLOAT), then keeps the text
//! the engine replied. An operand that only a long double holds (1e400, a
//! C hexadecimal float) is not judged: the key becomes unknown.

use seedkv_engine::resp::Frame;

use super::redis_c::{
    parse_f64_lenient, parse_f64_strict, parse_i64_strict, FloatError, NOT_AN_INTEGER, NOT_A_FLOAT,
    WRONGTYPE,
};
use super::{Entry, Expected, KeyspaceModel, Typed, Value};

/// Redis's default `proto-max-bulk-len`: 512 MiB.
pub(crate) const PROTO_MAX_BULK_LEN: i64 = 512 * 1024 * 1024;
const OFFSET_OUT_OF_RANGE: &str = "ERR offset is out of range";
const STRING_TOO_LONG: &str = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
const NAN_OR_INFINITY: &str = "ERR increment would produce NaN or Infinity";
/// Sums beyond this are not judged (a long double may hold what a double
/// cannot).
const JUDGED_SUM_MAX: f64 = 1e300;
/// INCRBYFLOAT prints 17 decimals: what it rounds away, at most.
const FIXED_DECIMALS_ULP: f64 = 1e-17;

/// Arities of the commands in this file.
pub(crate) fn arity(name: &str) -> Option<i64> {
    match name {
        "getrange" | "setrange" | "substr" => Some(4),
        "incrbyfloat" => Some(3),
        _ => None,
    }
}

/// GETRANGE's bounds over a string of `len` bytes (`getrangeCommand`):
/// the byte range replied, empty when `None`.
pub(crate) fn getrange_bounds(len: usize, start: i64, end: i64) -> Option<(usize, usize)> {
    let len_i = len as i64;
    if start < 0 && end < 0 && start > end {
        return None;
    }
    let start = if start < 0 { len_i + start } else { start }.max(0);
    let mut end = if end < 0 { len_i + end } else { end }.max(0);
    if end >= len_i {
        end = len_i - 1;
    }
    if start > end || len == 0 {
        return None;
    }
    Some((start as usize, end as usize))
}

/// A float operand of INCRBYFLOAT as `string2ld` takes it: `Ok(None)` when
/// only a long double could tell (the model then does not judge).
fn long_double_operand(text: &[u8]) -> Result<Option<f64>, ()> {
    /// `MAX_LONG_DOUBLE_CHARS`: longer texts are refused.
    const LONG_DOUBLE_TEXT_MAX_BYTES: usize = 5 * 1024 - 1;
    if text.len() > LONG_DOUBLE_TEXT_MAX_BYTES {
        return Err(());
    }
    // `strtold` reads a C string: "-2\0\01.5" (SETRANGE past the end pads
    // with NULs) is -2 to Redis. A text that starts with NUL is left unjudged.
    let text = match text.iter().position(|&b| b == 0) {
        Some(0) => return Ok(None),
        Some(end) => &text[..end],
        None => text,
    };
    match parse_f64_strict(text) {
        Ok(v) => Ok(Some(v)),
        Err(FloatError::Unsure) => Ok(None),
        Err(FloatError::Invalid) => {
            // Out of a double's range but valid text for strtold (1e400,
            // 1e-400): a long double may take it.
            let spaced = text.first().is_none_or(|b| b.is_ascii_whitespace());
            match !spaced && parse_f64_lenient(text).is_ok() {
                true => Ok(None),
                false => Err(()),
            }
        }
    }
}

impl KeyspaceModel {
    pub(crate) fn string_edge_command(
        &mut self,
        db: usize,
        name: &str,
        args: &[Vec<u8>],
        now: u64,
        reply: Option<&Frame>,
    ) -> Expected {
        match name {
            "getrange" | "substr" => self.getrange(db, args, now),
            "setrange" => self.setrange(db, args, now),
            "incrbyfloat" => self.incrbyfloat(db, args, now, reply),
            _ => unreachable!("not a string edge command: {name}"),
        }
    }

    fn getrange(&mut self, db: usize, args: &[Vec<u8>], now: u64) -> Expected {
        let (Some(start), Some(end)) = (parse_i64_strict(&args[2]), parse_i64_strict(&args[3]))
        else {
            return Expected::error(NOT_AN_INTEGER);
        };
        match self.read_as(db, &args[1], now, Value::as_str) {
            Typed::Unknown => Expected::Unpredictable,
            Typed::WrongType => Expected::error(WRONGTYPE),
            Typed::Absent => Expected::bulk_or_null(Some(b"")),
            Typed::Found(value) => match getrange_bounds(value.len(), start, end) {
                None => Expected::bulk_or_null(Some(b"")),
                Some((from, to)) => Expected::bulk_or_null(Some(&value[from..=to])),
            },
        }
    }

    /// The TTL survives; an empty value creates nothing.
    fn setrange(&mut self, db: usize, args: &[Vec<u8>], now: u64) -> Expected {
        let Some(offset) = parse_i64_strict(&args[2]) else {
            return Expected::error(NOT_AN_INTEGER);
        };
        if offset < 0 {
            return Expected::error(OFFSET_OUT_OF_RANGE);
        }
        let (key, patch) = (&args[1], &args[3]);
        let too_long = offset
            .checked_add(patch.len() as i64)
            .is_none_or(|total| total > PROTO_MAX_BULK_LEN);
        match self.write_as(db, key, now, Value::as_str_mut) {
            Typed::Unknown => {
                if !patch.is_empty() && !too_long {
                    self.forget_key(db, key);
                }
                Expected::Unpredictable
            }
            Typed::WrongType => Expected::error(WRONGTYPE),
            Typed::Absent if patch.is_empty() => Expected::integer(0),
            Typed::Found(value) if patch.is_empty() => Expected::integer(value.len() as i64),
            _ if too_long => Expected::error(STRING_TOO_LONG),
            Typed::Absent => {
                let mut value = vec![0u8; offset as usize];
                value.extend_from_slice(patch);
                let len = value.len() as i64;
                self.store(db, key, Entry::string(value));
                Expected::integer(len)
            }
            Typed::Found(value) => {
                let end = offset as usize + patch.len();
                if value.len() < end {
                    value.resize(end, 0);
                }
                value[offset as usize..end].copy_from_slice(patch);
                Expected::integer(value.len() as i64)
            }
        }
    }

    /// See the module docs; the TTL survives.
    fn incrbyfloat(
        &mut self,
        db: usize,
        args: &[Vec<u8>],
        now: u64,
        reply: Option<&Frame>,
    ) -> Expected {
        let key = &args[1];
        let old = match self.read_as(db, key, now, Value::as_str) {
            Typed::Unknown => return Expected::Unpredictable,
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Absent => Ok(Some(0.0)),
            Typed::Found(value) => long_double_operand(value),
        };
        let by = long_double_operand(&args[2]);
        let (old, by) = match (old, by) {
            (Err(()), _) | (_, Err(())) => return Expected::error(NOT_A_FLOAT),
            (Ok(Some(old)), Ok(Some(by))) => (old, by),
            _ => {
                self.forget_key(db, key);
                return Expected::Unpredictable;
            }
        };
        let sum = old + by;
        if sum.is_nan() || (sum.is_infinite() && (old.is_infinite() || by.is_infinite())) {
            return Expected::error(NAN_OR_INFINITY);
        }
        let replied = match reply {
            Some(Frame::Bulk(text)) => Some(text.clone()),
            _ => None,
        };
        let (true, Some(text)) = (sum.abs() < JUDGED_SUM_MAX, replied) else {
            self.forget_key(db, key);
            return Expected::Unpredictable;
        };
        // `%.17Lf`: 17 decimals, so a tiny sum prints as 0.
        let close = parse_f64_lenient(&text).is_ok_and(|got| {
            got == sum || (got - sum).abs() <= (1e-9 * sum.abs()).max(FIXED_DECIMALS_ULP)
        });
        let expire_unix_ms = match self.lookup(db, key, now) {
            super::KeyState::Present(e) => e.expire_unix_ms,
            _ => None,
        };
        self.store(
            db,
            key,
            Entry {
                value: Value::Str(text),
                expire_unix_ms,
            },
        );
        Expected::Verdict(match close {
            true => Ok(()),
            false => Err(format!("a bulk string close to {sum}")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::getrange_bounds;

    /// The bounds Redis 7.0.15 replied for "hello" (checked with redis-cli).
    #[test]
    fn getrange_bounds_like_redis() {
        let cases: &[(i64, i64, &str)] = &[
            (0, -1, "hello"),
            (i64::MIN, i64::MAX, "hello"),
            (i64::MAX, i64::MIN, ""),
            (-1, -100, ""),
            (3, 1, ""),
            (-100, -1, "hello"),
            (5, 5, ""),
            (-5, -3, "hel"),
        ];
        for &(start, end, want) in cases {
            let got = getrange_bounds(5, start, end)
                .map_or(String::new(), |(a, b)| "hello"[a..=b].to_string());
            assert_eq!(got, want, "GETRANGE {start} {end}");
        }
        assert_eq!(getrange_bounds(0, 0, -1), None);
    }
}
