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

/// Lossy text of `bytes`, cut at `max` bytes, with newlines made spaces.
pub(crate) fn sanitize(bytes: &[u8], max: usize) -> String {
    let cut = &bytes[..bytes.len().min(max)];
    String::from_utf8_lossy(cut).replace(['\r', '\n'], " ")
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
}
