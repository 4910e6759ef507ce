//! Numbers as lua-cjson writes and reads them: C's `%.<precision>g` and
//! C's `strtod` (decimal, hexadecimal, `inf`/`infinity`, `nan`), both of
//! which Redis's cjson calls; exact texts matter, so they are reproduced
//! here rather than borrowed from Rust's formatting.

/// C's `printf("%.<precision>g", x)` for `precision` in 1..=17.
pub fn format_g(x: f64, precision: usize) -> String {
    if x.is_nan() {
        return if x.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    let p = precision.clamp(1, 17);
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    // `{:.Ne}` rounds to N+1 significant digits and gives the exponent
    // after rounding, the one %g chooses its style by.
    let sci = format!("{:.*e}", p - 1, x);
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let e: i32 = exponent.parse().unwrap_or(0);
    if e < -4 || e >= p as i32 {
        let mantissa = trim_zeros(mantissa);
        let sign = if e < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", e.unsigned_abs())
    } else {
        let decimals = (p as i32 - 1 - e).max(0) as usize;
        trim_zeros(&format!("{:.*}", decimals, x)).to_string()
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// C's `strtod` on `s` from `start`: the value and the index just past
/// the longest prefix that is a number, or `None` when there is none.
/// The bytes past the end read as NUL, as in a C string.
pub fn strtod(s: &[u8], start: usize) -> Option<(f64, usize)> {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let mut i = start;
    while matches!(at(i), b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        i += 1;
    }
    let negative = at(i) == b'-';
    if matches!(at(i), b'+' | b'-') {
        i += 1;
    }
    let sign = if negative { -1.0 } else { 1.0 };
    if at(i) == b'0' && at(i + 1) | 0x20 == b'x' {
        if let Some((v, end)) = hex(s, i + 2) {
            return Some((sign * v, end));
        }
        // "0x" without hex digits: the "0" alone.
        return Some((sign * 0.0, i + 1));
    }
    if starts_with_ci(s, i, b"inf") {
        let end = if starts_with_ci(s, i, b"infinity") {
            i + 8
        } else {
            i + 3
        };
        return Some((sign * f64::INFINITY, end));
    }
    if starts_with_ci(s, i, b"nan") {
        let mut end = i + 3;
        if at(end) == b'(' {
            let mut j = end + 1;
            while at(j).is_ascii_alphanumeric() || at(j) == b'_' {
                j += 1;
            }
            if at(j) == b')' {
                end = j + 1;
            }
        }
        return Some((sign * f64::NAN, end));
    }
    let digits_start = i;
    let mut j = i;
    let mut digits = 0;
    while at(j).is_ascii_digit() {
        j += 1;
        digits += 1;
    }
    if at(j) == b'.' {
        j += 1;
        while at(j).is_ascii_digit() {
            j += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return None;
    }
    if at(j) | 0x20 == b'e' {
        let mut k = j + 1;
        if matches!(at(k), b'+' | b'-') {
            k += 1;
        }
        if at(k).is_ascii_digit() {
            while at(k).is_ascii_digit() {
                k += 1;
            }
            j = k;
        }
    }
    let text = std::str::from_utf8(&s[digits_start..j]).ok()?;
    // Rust's parser is correctly rounded, as glibc's strtod is; it wants
    // a digit before an exponent, which a "1." prefix always has here,
    // and no "." without digits after: add one.
    let value: f64 = match text.parse() {
        Ok(v) => v,
        Err(_) => {
            let fixed = text.replacen('.', ".0", 1);
            fixed.parse().ok()?
        }
    };
    Some((sign * value, j))
}

fn starts_with_ci(s: &[u8], i: usize, word: &[u8]) -> bool {
    s.len() >= i + word.len() && s[i..i + word.len()].eq_ignore_ascii_case(word)
}

/// A hexadecimal significand from `i` (after "0x"), with an optional
/// binary exponent: `None` when no hex digit follows.
fn hex(s: &[u8], mut i: usize) -> Option<(f64, usize)> {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let mut mantissa: u64 = 0;
    let mut exponent: i64 = 0;
    let mut digits = 0;
    let mut seen_point = false;
    loop {
        let c = at(i);
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            b'.' if !seen_point => {
                seen_point = true;
                i += 1;
                continue;
            }
            _ => break,
        };
        digits += 1;
        if mantissa >> 60 == 0 {
            mantissa = mantissa << 4 | u64::from(d);
            if seen_point {
                exponent -= 4;
            }
        } else if !seen_point {
            exponent += 4;
        }
        i += 1;
    }
    if digits == 0 {
        return None;
    }
    if at(i) | 0x20 == b'p' {
        let mut k = i + 1;
        let negative = at(k) == b'-';
        if matches!(at(k), b'+' | b'-') {
            k += 1;
        }
        if at(k).is_ascii_digit() {
            let mut e: i64 = 0;
            while at(k).is_ascii_digit() {
                e = (e * 10 + i64::from(at(k) - b'0')).min(1 << 20);
                k += 1;
            }
            exponent += if negative { -e } else { e };
            i = k;
        }
    }
    let mut value = mantissa as f64;
    let mut e = exponent.clamp(-2200, 2200) as i32;
    while e > 0 {
        let step = e.min(1000);
        value *= 2f64.powi(step);
        e -= step;
    }
    while e < 0 {
        let step = (-e).min(1000);
        value /= 2f64.powi(step);
        e += step;
    }
    Some((value, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_g_is_printf() {
        assert_eq!(format_g(1.0 / 3.0, 14), "0.33333333333333");
        assert_eq!(format_g(1e300, 14), "1e+300");
        assert_eq!(format_g(123456789012345.0, 14), "1.2345678901234e+14");
        assert_eq!(format_g(12345678901234.0, 14), "12345678901234");
        assert_eq!(format_g(-1e-5, 14), "-1e-05");
        assert_eq!(format_g(0.1, 14), "0.1");
        assert_eq!(format_g(1.0 / 3.0, 3), "0.333");
        assert_eq!(format_g(1e15, 14), "1e+15");
        assert_eq!(format_g(-0.0, 14), "-0");
        assert_eq!(format_g(100.0, 1), "1e+02");
    }

    #[test]
    fn strtod_prefixes() {
        assert_eq!(strtod(b"1e5", 0), Some((100000.0, 3)));
        assert_eq!(strtod(b"1e", 0), Some((1.0, 1)));
        assert_eq!(strtod(b"0x10", 0), Some((16.0, 4)));
        assert_eq!(strtod(b"0x1p4", 0), Some((16.0, 5)));
        assert_eq!(strtod(b"0x", 0), Some((0.0, 1)));
        assert_eq!(strtod(b"-", 0), None);
        assert_eq!(strtod(b"- 1", 0), None);
        assert_eq!(strtod(b"-Infinity", 0), Some((f64::NEG_INFINITY, 9)));
        assert_eq!(strtod(b"1.", 0), Some((1.0, 2)));
        assert_eq!(strtod(b".5", 0), Some((0.5, 2)));
        assert!(strtod(b"nan(abc)x", 0).is_some_and(|(v, e)| v.is_nan() && e == 8));
    }
}
