//! Small parsing helpers with Redis's exact rules.

/// Parses a decimal i64 the way Redis's `string2ll` does: no leading `+`,
/// no leading zeros (except "0"), no spaces, no overflow.
pub fn parse_i64_strict(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (neg, digits) = match s[0] {
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || digits[0] == b'0' {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    if neg {
        if v > i64::MAX as u64 + 1 {
            None
        } else {
            Some((v as i64).wrapping_neg())
        }
    } else if v > i64::MAX as u64 {
        None
    } else {
        Some(v as i64)
    }
}

/// Parses a double the way Redis's `string2ld`/`getDoubleFromObject` does:
/// no leading or trailing spaces, no NaN; `inf`/`-inf` accepted.
pub fn parse_f64(s: &[u8]) -> Option<f64> {
    if s.is_empty() || s[0].is_ascii_whitespace() || s[s.len() - 1].is_ascii_whitespace() {
        return None;
    }
    let text = std::str::from_utf8(s).ok()?;
    let lower = text.to_ascii_lowercase();
    let v = match lower.as_str() {
        "inf" | "+inf" | "infinity" | "+infinity" => f64::INFINITY,
        "-inf" | "-infinity" => f64::NEG_INFINITY,
        _ => {
            if lower.contains("inf") || lower.contains("nan") {
                return None;
            }
            text.parse::<f64>().ok()?
        }
    };
    if v.is_nan() {
        None
    } else {
        Some(v)
    }
}

/// A blocking command's timeout argument, in seconds with a fraction
/// (Redis's `getTimeoutFromObjectOrReply` with `UNIT_SECONDS`). Returns the
/// timeout in milliseconds, 0 meaning "block forever", or the error reply.
pub fn parse_timeout_ms(arg: &[u8]) -> Result<u64, &'static str> {
    let seconds = parse_f64(arg).ok_or("ERR timeout is not a float or out of range")?;
    // (long long)(ftval * 1000.0): truncation toward zero; infinities and
    // values past i64 saturate like the C cast does on x86-64 (to i64::MIN).
    let ms = seconds * 1000.0;
    let ms = if ms.is_finite() && ms > i64::MIN as f64 && ms < i64::MAX as f64 {
        ms as i64
    } else {
        i64::MIN
    };
    if ms < 0 {
        return Err("ERR timeout is negative");
    }
    Ok(ms as u64)
}

/// Redis's `stringmatchlen`: glob matching with `*`, `?`, `[...]` (ranges,
/// `^` negation) and `\` escapes, optionally case-insensitive.
pub fn glob_match(pattern: &[u8], string: &[u8], nocase: bool) -> bool {
    glob_match_bounded(pattern, string, nocase, 0)
}

fn eq(a: u8, b: u8, nocase: bool) -> bool {
    if nocase {
        a.eq_ignore_ascii_case(&b)
    } else {
        a == b
    }
}

/// Recursion is bounded like Redis 7.0.x bounds it (nesting of `*`).
fn glob_match_bounded(mut p: &[u8], mut s: &[u8], nocase: bool, depth: u32) -> bool {
    const MAX_DEPTH: u32 = 1000;
    if depth > MAX_DEPTH {
        return false;
    }
    while !p.is_empty() && !s.is_empty() {
        match p[0] {
            b'*' => {
                while p.len() > 1 && p[1] == b'*' {
                    p = &p[1..];
                }
                if p.len() == 1 {
                    return true;
                }
                while !s.is_empty() {
                    if glob_match_bounded(&p[1..], s, nocase, depth + 1) {
                        return true;
                    }
                    s = &s[1..];
                }
                return false;
            }
            b'?' => {
                s = &s[1..];
            }
            b'[' => {
                p = &p[1..];
                let not = !p.is_empty() && p[0] == b'^';
                if not {
                    p = &p[1..];
                }
                let mut matched = false;
                loop {
                    if p.is_empty() {
                        break;
                    }
                    if p[0] == b'\\' && p.len() >= 2 {
                        p = &p[1..];
                        if p[0] == s[0] {
                            matched = true;
                        }
                    } else if p[0] == b']' {
                        break;
                    } else if p.len() >= 3 && p[1] == b'-' {
                        let (mut start, mut end) = (p[0], p[2]);
                        if start > end {
                            std::mem::swap(&mut start, &mut end);
                        }
                        let c = if nocase {
                            s[0].to_ascii_lowercase()
                        } else {
                            s[0]
                        };
                        let (start, end) = if nocase {
                            (start.to_ascii_lowercase(), end.to_ascii_lowercase())
                        } else {
                            (start, end)
                        };
                        p = &p[2..];
                        if c >= start && c <= end {
                            matched = true;
                        }
                    } else if eq(p[0], s[0], nocase) {
                        matched = true;
                    }
                    p = &p[1..];
                }
                if p.is_empty() {
                    // Unterminated class: Redis treats the `]` as implied.
                    if not {
                        matched = !matched;
                    }
                    if !matched {
                        return false;
                    }
                    s = &s[1..];
                    return s.is_empty() && p.is_empty();
                }
                if not {
                    matched = !matched;
                }
                if !matched {
                    return false;
                }
                s = &s[1..];
            }
            b'\\' if p.len() >= 2 => {
                p = &p[1..];
                if !eq(p[0], s[0], nocase) {
                    return false;
                }
                s = &s[1..];
            }
            c => {
                if !eq(c, s[0], nocase) {
                    return false;
                }
                s = &s[1..];
            }
        }
        p = &p[1..];
        if s.is_empty() {
            while !p.is_empty() && p[0] == b'*' {
                p = &p[1..];
            }
            break;
        }
    }
    p.is_empty() && s.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_integers() {
        assert_eq!(parse_i64_strict(b"123"), Some(123));
        assert_eq!(parse_i64_strict(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64_strict(b"9223372036854775808"), None);
        assert_eq!(parse_i64_strict(b"012"), None);
        assert_eq!(parse_i64_strict(b"+1"), None);
        assert_eq!(parse_i64_strict(b" 1"), None);
        assert_eq!(parse_i64_strict(b"-0"), None);
    }

    #[test]
    fn globs() {
        assert!(glob_match(b"*", b"anything", false));
        assert!(glob_match(b"h?llo", b"hello", false));
        assert!(glob_match(b"h[ae]llo", b"hallo", false));
        assert!(!glob_match(b"h[^e]llo", b"hello", false));
        assert!(glob_match(b"h[a-b]llo", b"hbllo", false));
        assert!(glob_match(b"key:*:x", b"key:12:x", false));
        assert!(!glob_match(b"key:*:x", b"key:12:y", false));
        assert!(glob_match(b"a\\*b", b"a*b", false));
        assert!(glob_match(b"HELLO", b"hello", true));
        assert!(glob_match(b"", b"", false));
        assert!(!glob_match(b"", b"a", false));
        assert!(glob_match(b"a*", b"a", false));
    }
}
