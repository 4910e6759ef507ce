//! Argument parsing for the sorted-set commands, with Redis 7.0's exact
//! rules: scores as `getDoubleFromObject` reads them (C `strtod`, so hex
//! floats and `inf` are accepted; overflow, underflow to zero and NaN are
//! not), score intervals as `zslParseRange` reads them (a `(` prefix makes
//! an end exclusive; `strtod` skips leading spaces there), lex intervals as
//! `zslParseLexRange` does.

use crate::types::zset::{LexBound, LexRange, ScoreRange};

/// What C's `strtod` makes of the start of `s`.
struct Strtod {
    value: f64,
    /// Bytes consumed (0 when nothing could be converted).
    consumed: usize,
    /// `errno == ERANGE`: the value overflowed to infinity or a non-zero
    /// mantissa underflowed to zero.
    out_of_range: bool,
}

fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// C's `strtod` (glibc) over bytes: leading white space, a sign, then
/// `inf`/`infinity`, `nan`/`nan(chars)`, a `0x` hex float, or a decimal
/// with optional fraction and exponent.
fn strtod(s: &[u8]) -> Strtod {
    let none = Strtod {
        value: 0.0,
        consumed: 0,
        out_of_range: false,
    };
    let mut i = 0;
    while i < s.len() && is_c_space(s[i]) {
        i += 1;
    }
    let start = i;
    let negative = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let sign = if negative { -1.0 } else { 1.0 };
    let rest = &s[i..];
    let starts_with =
        |word: &[u8]| rest.len() >= word.len() && rest[..word.len()].eq_ignore_ascii_case(word);
    if starts_with(b"infinity") {
        return Strtod {
            value: sign * f64::INFINITY,
            consumed: i + 8,
            out_of_range: false,
        };
    }
    if starts_with(b"inf") {
        return Strtod {
            value: sign * f64::INFINITY,
            consumed: i + 3,
            out_of_range: false,
        };
    }
    if starts_with(b"nan") {
        let mut end = i + 3;
        if s.get(end) == Some(&b'(') {
            let close = s[end + 1..]
                .iter()
                .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_'));
            if let Some(n) = close {
                if s[end + 1 + n] == b')' {
                    end += n + 2;
                }
            }
        }
        return Strtod {
            value: f64::NAN,
            consumed: end,
            out_of_range: false,
        };
    }
    if (starts_with(b"0x")) && hex_digits_follow(&rest[2..]) {
        let (value, used) = hex_float(&rest[2..]);
        let value = sign * value;
        return Strtod {
            value,
            consumed: i + 2 + used,
            out_of_range: value.is_infinite(),
        };
    }
    // Decimal: digits [. digits] [e [sign] digits], at least one digit.
    let mut j = i;
    let mut digits = 0;
    let mut nonzero = false;
    while j < s.len() && s[j].is_ascii_digit() {
        nonzero |= s[j] != b'0';
        j += 1;
        digits += 1;
    }
    if j < s.len() && s[j] == b'.' {
        j += 1;
        while j < s.len() && s[j].is_ascii_digit() {
            nonzero |= s[j] != b'0';
            j += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return none;
    }
    if j < s.len() && (s[j] == b'e' || s[j] == b'E') {
        let mut k = j + 1;
        if k < s.len() && (s[k] == b'+' || s[k] == b'-') {
            k += 1;
        }
        if k < s.len() && s[k].is_ascii_digit() {
            while k < s.len() && s[k].is_ascii_digit() {
                k += 1;
            }
            j = k;
        }
    }
    // The text is ASCII digits, sign, '.', 'e': Rust's parser accepts it
    // and rounds correctly, as glibc does.
    let text = std::str::from_utf8(&s[start..j]).unwrap_or("0");
    let value: f64 = text.parse().unwrap_or(0.0);
    Strtod {
        value,
        consumed: j,
        out_of_range: value.is_infinite() || (value == 0.0 && nonzero),
    }
}

fn hex_digits_follow(s: &[u8]) -> bool {
    match s.first() {
        Some(c) if c.is_ascii_hexdigit() => true,
        Some(b'.') => s.get(1).is_some_and(u8::is_ascii_hexdigit),
        _ => false,
    }
}

/// The value and length of `hh.hh[p[+-]dd]` (after `0x`).
fn hex_float(s: &[u8]) -> (f64, usize) {
    let mut j = 0;
    let mut mantissa = 0.0f64;
    let mut exponent: i64 = 0;
    while j < s.len() && s[j].is_ascii_hexdigit() {
        mantissa = mantissa * 16.0 + f64::from(hex_value(s[j]));
        j += 1;
    }
    if j < s.len() && s[j] == b'.' {
        j += 1;
        while j < s.len() && s[j].is_ascii_hexdigit() {
            mantissa = mantissa * 16.0 + f64::from(hex_value(s[j]));
            exponent -= 4;
            j += 1;
        }
    }
    if j < s.len() && (s[j] == b'p' || s[j] == b'P') {
        let mut k = j + 1;
        let negative = match s.get(k) {
            Some(b'-') => {
                k += 1;
                true
            }
            Some(b'+') => {
                k += 1;
                false
            }
            _ => false,
        };
        if k < s.len() && s[k].is_ascii_digit() {
            let mut e: i64 = 0;
            while k < s.len() && s[k].is_ascii_digit() {
                e = (e * 10 + i64::from(s[k] - b'0')).min(1 << 20);
                k += 1;
            }
            exponent += if negative { -e } else { e };
            j = k;
        }
    }
    let exponent = exponent.clamp(-4000, 4000) as i32;
    // Two steps so that a large mantissa with a small exponent does not
    // overflow or underflow in between.
    let half = exponent / 2;
    (mantissa * 2f64.powi(half) * 2f64.powi(exponent - half), j)
}

fn hex_value(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => c - b'A' + 10,
    }
}

/// A score argument (ZADD, ZINCRBY, WEIGHTS), as Redis's
/// `getDoubleFromObject`: the whole argument, no leading space, no NaN, no
/// overflow or underflow to zero.
pub fn parse_score(arg: &[u8]) -> Option<f64> {
    if arg.is_empty() || is_c_space(arg[0]) {
        return None;
    }
    let r = strtod(arg);
    let overflow_or_zero = r.value.is_infinite() || r.value == 0.0;
    if r.consumed != arg.len() || (r.out_of_range && overflow_or_zero) || r.value.is_nan() {
        return None;
    }
    Some(r.value)
}

/// One end of a score interval: `(` makes it exclusive; the rest goes
/// through `strtod`, which must stop at the end of the C string (the first
/// NUL byte, or the end).
fn parse_score_bound(arg: &[u8]) -> Option<(f64, bool)> {
    let c_string = match arg.iter().position(|&c| c == 0) {
        Some(n) => &arg[..n],
        None => arg,
    };
    let (text, exclusive) = match c_string.first() {
        Some(b'(') => (&c_string[1..], true),
        _ => (c_string, false),
    };
    let r = strtod(text);
    if r.consumed != text.len() || r.value.is_nan() {
        return None;
    }
    Some((r.value, exclusive))
}

/// `min max` of ZRANGEBYSCORE and friends; the error is Redis's reply.
pub fn parse_score_range(min: &[u8], max: &[u8]) -> Result<ScoreRange, &'static str> {
    const ERR: &str = "ERR min or max is not a float";
    let (min, min_exclusive) = parse_score_bound(min).ok_or(ERR)?;
    let (max, max_exclusive) = parse_score_bound(max).ok_or(ERR)?;
    Ok(ScoreRange {
        min,
        max,
        min_exclusive,
        max_exclusive,
    })
}

fn parse_lex_bound(arg: &[u8]) -> Option<LexBound> {
    match arg.first()? {
        // Redis tests only the next C character, so "+\0..." is "+" too.
        b'+' if arg.get(1).is_none_or(|&c| c == 0) => Some(LexBound::Max),
        b'-' if arg.get(1).is_none_or(|&c| c == 0) => Some(LexBound::Min),
        b'(' => Some(LexBound::Exclusive(arg[1..].to_vec())),
        b'[' => Some(LexBound::Inclusive(arg[1..].to_vec())),
        _ => None,
    }
}

/// `min max` of ZRANGEBYLEX and friends; the error is Redis's reply.
pub fn parse_lex_range(min: &[u8], max: &[u8]) -> Result<LexRange, &'static str> {
    const ERR: &str = "ERR min or max not valid string range item";
    Ok(LexRange {
        min: parse_lex_bound(min).ok_or(ERR)?,
        max: parse_lex_bound(max).ok_or(ERR)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_parse_like_get_double_from_object() {
        assert_eq!(parse_score(b"1.5"), Some(1.5));
        assert_eq!(parse_score(b"0x10"), Some(16.0));
        assert_eq!(parse_score(b"0x1p3"), Some(8.0));
        assert_eq!(parse_score(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_score(b"+Infinity"), Some(f64::INFINITY));
        assert_eq!(parse_score(b"1e-310"), Some(1e-310));
        assert_eq!(parse_score(b".5"), Some(0.5));
        assert_eq!(parse_score(b"5."), Some(5.0));
        for bad in [
            &b""[..],
            b" 1",
            b"1 ",
            b"nan",
            b"1e400",
            b"1e-400",
            b"abc",
            b"1e",
            b"0x",
            b"--1",
            b"1\x002",
        ] {
            assert_eq!(parse_score(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn score_ranges_parse_like_zsl_parse_range() {
        let r = parse_score_range(b"(1", b" 2").unwrap();
        assert_eq!(
            (r.min, r.min_exclusive, r.max, r.max_exclusive),
            (1.0, true, 2.0, false)
        );
        let r = parse_score_range(b"", b"(").unwrap();
        assert_eq!((r.min, r.max, r.max_exclusive), (0.0, 0.0, true));
        let r = parse_score_range(b"-inf", b"1e400").unwrap();
        assert_eq!(r.max, f64::INFINITY);
        assert!(parse_score_range(b"nan", b"1").is_err());
        assert!(parse_score_range(b"1", b"x").is_err());
        assert!(parse_score_range(b"((1", b"2").is_err());
    }

    #[test]
    fn lex_ranges_parse_like_zsl_parse_lex_range() {
        let r = parse_lex_range(b"-", b"+").unwrap();
        assert_eq!((r.min, r.max), (LexBound::Min, LexBound::Max));
        let r = parse_lex_range(b"[a", b"(b").unwrap();
        assert_eq!(r.min, LexBound::Inclusive(b"a".to_vec()));
        assert_eq!(r.max, LexBound::Exclusive(b"b".to_vec()));
        assert!(parse_lex_range(b"a", b"+").is_err());
        assert!(parse_lex_range(b"", b"+").is_err());
        assert!(parse_lex_range(b"-a", b"+").is_err());
    }
}
