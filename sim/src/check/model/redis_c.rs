//! Small, independent re-implementations of Redis's C helpers that the
//! checkers need to predict replies: glob matching (`stringmatchlen`),
//! strict integer parsing (`string2ll`), float parsing (`string2d`, `strtod`
//! in ranges, timeouts) and Redis's shared error texts.
//!
//! They are written from Redis's C sources, not shared with the engine, so
//! that a bug in the engine's version shows up as a disagreement instead of
//! being copied into the oracle.

/// Redis's shared error replies.
pub(crate) const NOT_AN_INTEGER: &str = "ERR value is not an integer or out of range";
pub(crate) const SYNTAX_ERROR: &str = "ERR syntax error";
pub(crate) const WRONGTYPE: &str =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
pub(crate) const NOT_A_FLOAT: &str = "ERR value is not a valid float";
pub(crate) const OUT_OF_RANGE_POSITIVE: &str = "ERR value is out of range, must be positive";

/// Redis refuses to recurse deeper than this on `*` (abusive patterns).
const GLOB_NESTING_MAX: usize = 1000;

/// The longest decimal integer `string2ll` accepts, in bytes
/// (`LONG_STR_SIZE - 1`: 20 characters, e.g. "-9223372036854775808").
const INTEGER_TEXT_MAX_BYTES: usize = 20;

/// Redis's `stringmatchlen(pattern, string, nocase = 0)`: `*`, `?`, `[...]`
/// classes (with `^` negation, `a-z` ranges and `\` escapes) and `\`
/// escapes, case-sensitive.
///
/// A lone `*` matches every string, the empty one included: KEYS and SCAN
/// test for it before calling `stringmatchlen` (which would refuse "").
pub(crate) fn glob_match(pattern: &[u8], string: &[u8]) -> bool {
    pattern == b"*" || stringmatchlen(pattern, string)
}

/// `stringmatchlen` itself, as PUBLISH applies it to PSUBSCRIBE patterns:
/// there a lone `*` does not match the empty channel.
pub(crate) fn stringmatchlen(pattern: &[u8], string: &[u8]) -> bool {
    let mut skip_longer_matches = false;
    glob_match_nested(pattern, string, &mut skip_longer_matches, 0)
}

fn glob_match_nested(
    mut p: &[u8],
    mut s: &[u8],
    skip_longer_matches: &mut bool,
    nesting: usize,
) -> bool {
    if nesting > GLOB_NESTING_MAX {
        return false;
    }
    while !p.is_empty() && !s.is_empty() {
        match p[0] {
            b'*' => {
                while p.len() >= 2 && p[1] == b'*' {
                    p = &p[1..];
                }
                if p.len() == 1 {
                    return true;
                }
                while !s.is_empty() {
                    if glob_match_nested(&p[1..], s, skip_longer_matches, nesting + 1) {
                        return true;
                    }
                    if *skip_longer_matches {
                        return false;
                    }
                    s = &s[1..];
                }
                // No match for the rest of the pattern anywhere in the rest
                // of the string: a longer match for an earlier `*` cannot
                // help either, so every caller may stop.
                *skip_longer_matches = true;
                return false;
            }
            b'?' => {
                s = &s[1..];
                p = &p[1..];
            }
            b'[' => {
                p = &p[1..];
                let negate = p.first() == Some(&b'^');
                if negate {
                    p = &p[1..];
                }
                let mut matched = false;
                loop {
                    if p.first() == Some(&b'\\') && p.len() >= 2 {
                        p = &p[1..];
                        matched |= p[0] == s[0];
                    } else if p.first() == Some(&b']') {
                        p = &p[1..];
                        break;
                    } else if p.is_empty() {
                        // An unterminated class ends the pattern.
                        break;
                    } else if p.len() >= 3 && p[1] == b'-' {
                        // C's `char` is signed on x86-64: `[a-\xff]` is -1..=97.
                        let signed = |c: u8| c as i8;
                        let (low, high) = (
                            signed(p[0]).min(signed(p[2])),
                            signed(p[0]).max(signed(p[2])),
                        );
                        matched |= (low..=high).contains(&signed(s[0]));
                        p = &p[2..];
                    } else {
                        matched |= p[0] == s[0];
                    }
                    p = &p[1..];
                }
                if matched == negate {
                    return false;
                }
                s = &s[1..];
            }
            _ => {
                if p[0] == b'\\' && p.len() >= 2 {
                    p = &p[1..];
                }
                if p[0] != s[0] {
                    return false;
                }
                s = &s[1..];
                p = &p[1..];
            }
        }
        if s.is_empty() {
            while p.first() == Some(&b'*') {
                p = &p[1..];
            }
            break;
        }
    }
    p.is_empty() && s.is_empty()
}

/// Redis's `string2ll`: an optional `-`, then digits without leading zeros
/// (except "0" itself), no spaces or `+`, within `i64`.
pub(crate) fn parse_i64_strict(text: &[u8]) -> Option<i64> {
    if text.is_empty() || text.len() > INTEGER_TEXT_MAX_BYTES {
        return None;
    }
    if text == b"0" {
        return Some(0);
    }
    let (negative, digits) = match text[0] {
        b'-' => (true, &text[1..]),
        _ => (false, text),
    };
    match digits.first() {
        Some(b'1'..=b'9') => {}
        _ => return None,
    }
    let mut magnitude: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        magnitude = magnitude
            .checked_mul(10)?
            .checked_add(u64::from(d - b'0'))?;
    }
    if negative {
        if magnitude > i64::MAX as u64 + 1 {
            return None;
        }
        Some((magnitude as i64).wrapping_neg())
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Why a float argument was not taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FloatError {
    /// Redis rejects it.
    Invalid,
    /// A form this re-implementation does not parse (C's hexadecimal
    /// floats): the caller treats the command as unmodelled.
    Unsure,
}

/// C's `isspace`.
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// `strtod` on the whole text, for the decimal and inf forms: `None` if it
/// does not all parse. Overflow gives an infinity, underflow zero, as
/// `strtod` does.
fn strtod_all(text: &[u8]) -> Result<f64, FloatError> {
    let unsigned = text
        .strip_prefix(b"-")
        .or(text.strip_prefix(b"+"))
        .unwrap_or(text);
    if unsigned.len() >= 2 && unsigned[0] == b'0' && (unsigned[1] | 0x20) == b'x' {
        return Err(FloatError::Unsure);
    }
    let text = std::str::from_utf8(text).map_err(|_| FloatError::Invalid)?;
    let value: f64 = text.parse().map_err(|_| FloatError::Invalid)?;
    if value.is_nan() {
        return Err(FloatError::Invalid);
    }
    Ok(value)
}

/// Redis's `string2d` (scores, increments): no leading space, the whole
/// text, no NaN, and no overflow or underflow to zero (`ERANGE`).
pub(crate) fn parse_f64_strict(text: &[u8]) -> Result<f64, FloatError> {
    if text.first().is_none_or(|&b| is_c_space(b)) {
        return Err(FloatError::Invalid);
    }
    let value = strtod_all(text)?;
    let mantissa = text
        .split(|&b| b == b'e' || b == b'E')
        .next()
        .unwrap_or(text);
    let spelled_infinite = mantissa.iter().any(|b| b.is_ascii_alphabetic());
    if value.is_infinite() && !spelled_infinite {
        return Err(FloatError::Invalid);
    }
    if value == 0.0 && mantissa.iter().any(|b| (b'1'..=b'9').contains(b)) {
        return Err(FloatError::Invalid);
    }
    Ok(value)
}

/// `strtod` as `zslParseRange` calls it: leading space allowed, overflow
/// and underflow accepted, and an empty text is 0.
pub(crate) fn parse_f64_lenient(text: &[u8]) -> Result<f64, FloatError> {
    if text.is_empty() {
        return Ok(0.0);
    }
    let start = text
        .iter()
        .position(|&b| !is_c_space(b))
        .unwrap_or(text.len());
    if start == text.len() {
        return Err(FloatError::Invalid);
    }
    strtod_all(&text[start..])
}

/// A blocking command's timeout (`getTimeoutFromObjectOrReply`, seconds as
/// a long double, times 1000 into a long long): only its errors matter to
/// the model.
pub(crate) fn parse_timeout(text: &[u8]) -> Result<(), super::Expected> {
    let not_a_float = || super::Expected::error("ERR timeout is not a float or out of range");
    let seconds = match parse_f64_strict(text) {
        Ok(seconds) => seconds,
        // Out of a double's range is still within a long double's.
        Err(FloatError::Invalid) if parse_f64_lenient(text).is_ok() && !is_c_space(text[0]) => {
            parse_f64_lenient(text).unwrap_or(0.0)
        }
        Err(FloatError::Invalid) => return Err(not_a_float()),
        Err(FloatError::Unsure) => return Err(super::Expected::Unpredictable),
    };
    /// 2^63: from here a conversion to long long is out of range.
    const LLONG_LIMIT: f64 = 9_223_372_036_854_775_808.0;
    let ms = seconds * 1000.0;
    // x86 turns an out-of-range conversion into LLONG_MIN: "negative".
    if !(0.0..LLONG_LIMIT).contains(&ms) {
        return Err(super::Expected::error("ERR timeout is negative"));
    }
    Ok(())
}

/// The keys after a `numkeys` argument at `at`; if `numkeys` is not valid
/// (the command then fails), every argument after it, to stay on the safe
/// side.
pub(crate) fn numkeys_keys(args: &[Vec<u8>], at: usize) -> Vec<&[u8]> {
    let rest = args.get(at + 1..).unwrap_or_default();
    let n = args
        .get(at)
        .and_then(|a| parse_i64_strict(a))
        .and_then(|n| usize::try_from(n).ok())
        .filter(|&n| n <= rest.len())
        .unwrap_or(rest.len());
    rest[..n].iter().map(Vec::as_slice).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matches_like_redis() {
        let cases: &[(&str, &str, bool)] = &[
            ("*", "anything", true),
            ("*", "", true),
            ("", "", true),
            ("", "a", false),
            ("k:1*", "k:12", true),
            ("k:1*", "k:21", false),
            ("h?llo", "hello", true),
            ("h?llo", "hllo", false),
            ("h[ae]llo", "hallo", true),
            ("h[ae]llo", "hillo", false),
            ("h[^e]llo", "hallo", true),
            ("h[^e]llo", "hello", false),
            ("h[a-b]llo", "hbllo", true),
            ("h[b-a]llo", "hbllo", true),
            ("h[a-b]llo", "hcllo", false),
            ("h\\*llo", "h*llo", true),
            ("h\\*llo", "hello", false),
            ("a*b*c", "axxbyyc", true),
            ("a*b*c", "axxbyy", false),
            ("a**", "a", true),
            ("[abc", "a", true),
            ("[\\]]", "]", true),
            ("[a-]", "]", true),
            ("[abc", "ab", false),
        ];
        for &(pattern, string, expected) in cases {
            assert_eq!(
                glob_match(pattern.as_bytes(), string.as_bytes()),
                expected,
                "{pattern:?} vs {string:?}"
            );
        }
    }

    #[test]
    fn strict_integers_like_string2ll() {
        assert_eq!(parse_i64_strict(b"0"), Some(0));
        assert_eq!(parse_i64_strict(b"-12"), Some(-12));
        assert_eq!(parse_i64_strict(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64_strict(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            "",
            "-0",
            "007",
            "+1",
            " 1",
            "1 ",
            "9223372036854775808",
            "1a",
            "-",
        ] {
            assert_eq!(parse_i64_strict(bad.as_bytes()), None, "{bad:?}");
        }
    }
}
