//! INCRBYFLOAT's arithmetic: an exact software model of the x87 80-bit
//! `long double` that Redis 7.0 computes with on x86-64.
//!
//! Redis parses both operands with `strtold`, adds them in extended
//! precision (64-bit mantissa, 15-bit exponent) and prints the sum with
//! `%.17Lf`, trimming trailing zeros. An `f64` model would print
//! `10.5 + 0.1` as `10.59999999999999964`; the 64-bit mantissa rounds it to
//! `10.6`, which is what clients see from Redis. So this module reproduces,
//! bit for bit, the three steps: correctly rounded decimal (and hex) parsing,
//! round-to-nearest-even addition, and exact `%.17Lf` formatting. A tiny
//! arbitrary-precision integer ([`Big`]) makes parsing and printing exact.

use std::cmp::Ordering;

/// Redis's MAX_LONG_DOUBLE_CHARS: an operand this long or longer is not a
/// valid float (it would not fit `string2ld`'s buffer).
pub const MAX_LONG_DOUBLE_CHARS: usize = 5 * 1024;

/// Exponent of the least significant bit of the smallest subnormal, 2^-16445.
const LSB_EXP_MIN: i64 = -16445;
/// Exponent of the most significant bit of the largest finite value.
const MSB_EXP_MAX: i64 = 16383;
/// Inputs whose decimal magnitude is above this overflow (max is ~1.19e4932).
const DECIMAL_MAGNITUDE_MAX: i64 = 4933;
/// Inputs whose decimal magnitude is at or below this round to zero (the
/// smallest subnormal is ~3.65e-4951).
const DECIMAL_MAGNITUDE_MIN: i64 = -4951;
/// Decimal exponents are saturated here while parsing; anything this large
/// is far outside the representable range anyway.
const EXPONENT_SATURATION: i64 = 1 << 40;

const OVERFLOW_OR_NAN: &str = "ERR increment would produce NaN or Infinity";
const NOT_A_FLOAT: &str = "ERR value is not a valid float";

/// INCRBYFLOAT: `current` (None for a missing key, i.e. 0) plus `incr`,
/// formatted as Redis stores and replies it, or Redis's error message.
pub fn incr_by_float(current: Option<&[u8]>, incr: &[u8]) -> Result<String, &'static str> {
    let value = match current {
        None => Some(Ld::ZERO),
        Some(s) => parse(s).ok_or(NOT_A_FLOAT)?,
    };
    let incr = parse(incr).ok_or(NOT_A_FLOAT)?;
    // `None` is an infinite operand; inf + anything is inf or NaN.
    let (Some(value), Some(incr)) = (value, incr) else {
        return Err(OVERFLOW_OR_NAN);
    };
    let sum = add(value, incr).ok_or(OVERFLOW_OR_NAN)?;
    Ok(format_human(sum))
}

/// A finite extended-precision value: (-1)^neg × mant × 2^exp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ld {
    neg: bool,
    mant: u64,
    exp: i64,
}

impl Ld {
    const ZERO: Ld = Ld {
        neg: false,
        mant: 0,
        exp: 0,
    };

    /// The same value with the mantissa's top bit set (zero stays zero).
    fn normalized(self) -> Ld {
        if self.mant == 0 {
            return self;
        }
        let lz = self.mant.leading_zeros();
        Ld {
            neg: self.neg,
            mant: self.mant << lz,
            exp: self.exp - lz as i64,
        }
    }
}

/// The outcome of rounding: a finite value, or an overflow to infinity.
type Rounded = Option<Ld>;

/// Rounds `(q + f) × 2^e`, where `0 <= f < 1` and `f > 0` exactly when
/// `sticky`, to the nearest long double, ties to even, with subnormals.
/// `None` means the result overflowed to infinity. When `sticky`, `q` must
/// carry at least 66 significant bits so that the guard bits are exact.
fn round(neg: bool, q: u128, e: i64, sticky: bool) -> Rounded {
    if q == 0 {
        debug_assert!(!sticky, "a sticky remainder needs guard bits");
        return Some(Ld {
            neg,
            mant: 0,
            exp: 0,
        });
    }
    let top = 127 - q.leading_zeros() as i64;
    let lsb_exp = (e + top - 63).max(LSB_EXP_MIN);
    let shift = lsb_exp - e;
    let mut mant: u128 = if shift <= 0 {
        debug_assert!(!sticky, "a sticky remainder needs guard bits");
        q << (-shift)
    } else if shift >= 129 {
        // The value is below 2^(lsb_exp - 1): less than half the smallest step.
        0
    } else {
        let (kept, rem) = if shift == 128 {
            (0, q)
        } else {
            (q >> shift, q & ((1u128 << shift) - 1))
        };
        let half = 1u128 << (shift - 1);
        let up = rem > half || (rem == half && (sticky || kept & 1 == 1));
        kept + up as u128
    };
    let mut lsb_exp = lsb_exp;
    if mant >> 64 != 0 {
        // Rounding carried into a 65th bit; the low bit is zero.
        mant >>= 1;
        lsb_exp += 1;
    }
    let mant = mant as u64;
    if mant != 0 && lsb_exp + 63 - mant.leading_zeros() as i64 > MSB_EXP_MAX {
        return None;
    }
    Some(Ld {
        neg,
        mant,
        exp: lsb_exp,
    })
}

/// `a + b` in round-to-nearest; `None` on overflow to infinity.
fn add(a: Ld, b: Ld) -> Rounded {
    if b.mant == 0 {
        return Some(if a.mant == 0 {
            Ld {
                neg: a.neg && b.neg,
                ..Ld::ZERO
            }
        } else {
            a
        });
    }
    if a.mant == 0 {
        return Some(b);
    }
    let (mut a, mut b) = (a.normalized(), b.normalized());
    if (b.exp, b.mant) > (a.exp, a.mant) {
        std::mem::swap(&mut a, &mut b);
    }
    // |a| >= |b|. Both mantissas get 63 guard bits below them; bits of b
    // shifted past those are jammed into the lowest bit, which keeps the
    // rounding decision exact (the rounding point is always far above it).
    let distance = a.exp - b.exp;
    let wide_a = (a.mant as u128) << 63;
    let wide_b = (b.mant as u128) << 63;
    let (mut shifted_b, lost) = if distance >= 127 {
        (0, true)
    } else if distance == 0 {
        (wide_b, false)
    } else {
        (wide_b >> distance, wide_b & ((1u128 << distance) - 1) != 0)
    };
    shifted_b |= lost as u128;
    let sum = if a.neg == b.neg {
        wide_a + shifted_b
    } else {
        wide_a - shifted_b
    };
    if sum == 0 {
        return Some(Ld::ZERO);
    }
    round(a.neg, sum, a.exp - 63, false)
}

/// `string2ld`: the value of `input` as `strtold` reads it, under Redis's
/// extra rules (no leading space, nothing left over, no NaN, no overflow,
/// no underflow to zero). `Some(None)` is an infinite value, which Redis
/// accepts here and rejects after the addition.
fn parse(input: &[u8]) -> Option<Option<Ld>> {
    if input.is_empty() || input.len() >= MAX_LONG_DOUBLE_CHARS {
        return None;
    }
    // Redis copies the bytes into a C string, so `strtold` stops at a NUL
    // and whatever follows it is ignored.
    let s = &input[..input.iter().position(|&c| c == 0).unwrap_or(input.len())];
    if s.is_empty() {
        // strtold("") converts nothing and leaves the end pointer on the NUL,
        // which string2ld takes as a complete parse of 0.
        return Some(Some(Ld::ZERO));
    }
    if is_c_space(s[0]) {
        return None;
    }
    let (neg, rest) = match s[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if rest.eq_ignore_ascii_case(b"inf") || rest.eq_ignore_ascii_case(b"infinity") {
        return Some(None);
    }
    let finite = if rest.len() > 2
        && rest[0] == b'0'
        && (rest[1] | 0x20) == b'x'
        && (rest[2].is_ascii_hexdigit()
            || (rest[2] == b'.' && rest.get(3).is_some_and(u8::is_ascii_hexdigit)))
    {
        parse_hex(neg, &rest[2..])?
    } else {
        parse_decimal(neg, rest)?
    };
    Some(Some(finite))
}

/// C's `isspace` in the C locale.
fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Parses `[digits][.digits][(e|E)[sign]digits]` with at least one mantissa
/// digit; returns the end of the mantissa digits, the digit bytes
/// (including the point) and the exponent, or None if text remains.
fn split_number(s: &[u8], is_digit: fn(&u8) -> bool, exp_marker: u8) -> Option<(&[u8], i64)> {
    let mut i = 0;
    let mut digits = 0;
    while i < s.len() && is_digit(&s[i]) {
        i += 1;
        digits += 1;
    }
    if i < s.len() && s[i] == b'.' {
        i += 1;
        while i < s.len() && is_digit(&s[i]) {
            i += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return None;
    }
    let mantissa = &s[..i];
    let mut exponent: i64 = 0;
    if i < s.len() && (s[i] | 0x20) == exp_marker {
        let mut j = i + 1;
        let exp_neg = match s.get(j) {
            Some(b'-') => {
                j += 1;
                true
            }
            Some(b'+') => {
                j += 1;
                false
            }
            _ => false,
        };
        // Without digits after it, the marker is not part of the number.
        if s.get(j).is_some_and(u8::is_ascii_digit) {
            while j < s.len() && s[j].is_ascii_digit() {
                exponent = (exponent * 10 + (s[j] - b'0') as i64).min(EXPONENT_SATURATION);
                j += 1;
            }
            if exp_neg {
                exponent = -exponent;
            }
            i = j;
        }
    }
    (i == s.len()).then_some((mantissa, exponent))
}

fn parse_decimal(neg: bool, s: &[u8]) -> Option<Ld> {
    let (mantissa, exponent) = split_number(s, u8::is_ascii_digit, b'e')?;
    // Significant digits, and the power of ten that scales them.
    let mut digits: Vec<u8> = Vec::with_capacity(mantissa.len());
    let mut exp10 = exponent;
    let mut after_point = false;
    for &c in mantissa {
        if c == b'.' {
            after_point = true;
            continue;
        }
        if after_point {
            exp10 -= 1;
        }
        if !(digits.is_empty() && c == b'0') {
            digits.push(c - b'0');
        }
    }
    while digits.last() == Some(&0) {
        digits.pop();
        exp10 += 1;
    }
    if digits.is_empty() {
        return Some(Ld { neg, ..Ld::ZERO });
    }
    let magnitude = digits.len() as i64 + exp10;
    if magnitude > DECIMAL_MAGNITUDE_MAX || magnitude <= DECIMAL_MAGNITUDE_MIN {
        return None;
    }
    let mut n = Big::zero();
    for chunk in digits.chunks(19) {
        let v = chunk.iter().fold(0u64, |v, &d| v * 10 + d as u64);
        n.mul_add_small(10u64.pow(chunk.len() as u32), v);
    }
    let rounded = if exp10 >= 0 {
        n.mul_pow10(exp10 as u64);
        let (q, e, sticky) = n.top_128();
        round(neg, q, e, sticky)
    } else {
        let mut den = Big::from_u64(1);
        den.mul_pow10((-exp10) as u64);
        // Scale so that the quotient has 68 or 69 bits: enough guard bits.
        const QUOTIENT_BITS: i64 = 68;
        let k = den.bits() as i64 - n.bits() as i64 + QUOTIENT_BITS;
        if k > 0 {
            n.shl(k as u64);
        } else {
            den.shl((-k) as u64);
        }
        let (q, sticky) = n.div_small_quotient(&den, QUOTIENT_BITS as u32 + 1);
        round(neg, q, -k, sticky)
    };
    // Overflow (HUGE_VAL) and underflow to zero are ERANGE: not a float.
    rounded.filter(|v| v.mant != 0)
}

fn parse_hex(neg: bool, s: &[u8]) -> Option<Ld> {
    let (mantissa, exponent) = split_number(s, u8::is_ascii_hexdigit, b'p')?;
    let mut q: u128 = 0;
    let mut e: i64 = exponent;
    let mut sticky = false;
    let mut after_point = false;
    for &c in mantissa {
        if c == b'.' {
            after_point = true;
            continue;
        }
        let d = (c as char).to_digit(16).expect("hex digit") as u128;
        if q >> 124 == 0 {
            q = q * 16 + d;
            if after_point {
                e -= 4;
            }
        } else {
            sticky |= d != 0;
            if !after_point {
                e += 4;
            }
        }
    }
    if q == 0 {
        return Some(Ld { neg, ..Ld::ZERO });
    }
    round(neg, q, e, sticky).filter(|v| v.mant != 0)
}

/// A double promoted to `long double` and printed as [`format_human`]
/// does: Redis's `addReplyHumanLongDouble` of GEOPOS and WITHCOORD.
pub(crate) fn format_f64_human(d: f64) -> String {
    debug_assert!(d.is_finite(), "coordinates are finite");
    let bits = d.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let fraction = bits & ((1 << 52) - 1);
    let (mant, exp) = match biased {
        0 => (fraction, -1074),
        _ => (fraction | (1 << 52), biased - 1075),
    };
    format_human(Ld {
        neg: bits >> 63 == 1,
        mant,
        exp,
    })
}

/// `%.17Lf` with Redis's LD_STR_HUMAN trimming: trailing zeros and a bare
/// point removed, and `-0` written `0`.
fn format_human(v: Ld) -> String {
    let text = if v.mant == 0 {
        "0".to_string()
    } else if v.exp >= 0 {
        let mut n = Big::from_u64(v.mant);
        n.shl(v.exp as u64);
        n.to_decimal()
    } else {
        // Seventeen decimals: round mant × 10^17 / 2^-exp to an integer,
        // ties to even as glibc's printf does in the default rounding mode.
        let scaled = v.mant as u128 * 10u128.pow(17);
        let shift = -v.exp;
        let units = if shift >= 128 {
            // scaled < 2^121, less than half of 2^shift.
            0
        } else {
            let kept = scaled >> shift;
            let rem = scaled & ((1u128 << shift) - 1);
            let half = 1u128 << (shift - 1);
            kept + (rem > half || (rem == half && kept & 1 == 1)) as u128
        };
        let digits = format!("{units:018}");
        let (int, frac) = digits.split_at(digits.len() - 17);
        let frac = frac.trim_end_matches('0');
        if frac.is_empty() {
            int.to_string()
        } else {
            format!("{int}.{frac}")
        }
    };
    if v.neg && text != "0" {
        format!("-{text}")
    } else {
        text
    }
}

/// A non-negative arbitrary-precision integer, little-endian 64-bit limbs,
/// without high zero limbs. Just what exact parsing and printing need.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Big(Vec<u64>);

impl Big {
    fn zero() -> Big {
        Big(Vec::new())
    }

    fn from_u64(v: u64) -> Big {
        let mut b = Big(vec![v]);
        b.trim();
        b
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn bits(&self) -> u64 {
        match self.0.last() {
            None => 0,
            Some(top) => self.0.len() as u64 * 64 - top.leading_zeros() as u64,
        }
    }

    /// self = self × m + a.
    fn mul_add_small(&mut self, m: u64, a: u64) {
        let mut carry = a as u128;
        for limb in &mut self.0 {
            let t = *limb as u128 * m as u128 + carry;
            *limb = t as u64;
            carry = t >> 64;
        }
        if carry != 0 {
            self.0.push(carry as u64);
        }
    }

    fn mul_pow10(&mut self, mut n: u64) {
        const TEN_19: u64 = 10_000_000_000_000_000_000;
        while n >= 19 {
            self.mul_add_small(TEN_19, 0);
            n -= 19;
        }
        if n > 0 {
            self.mul_add_small(10u64.pow(n as u32), 0);
        }
    }

    fn shl(&mut self, n: u64) {
        if self.is_zero() {
            return;
        }
        let bits = (n % 64) as u32;
        if bits > 0 {
            let mut carry = 0u64;
            for limb in &mut self.0 {
                let next = *limb >> (64 - bits);
                *limb = (*limb << bits) | carry;
                carry = next;
            }
            if carry != 0 {
                self.0.push(carry);
            }
        }
        let limbs = (n / 64) as usize;
        self.0.splice(0..0, vec![0u64; limbs]);
    }

    fn shr1(&mut self) {
        let mut carry = 0u64;
        for limb in self.0.iter_mut().rev() {
            let low = *limb & 1;
            *limb = (*limb >> 1) | (carry << 63);
            carry = low;
        }
        self.trim();
    }

    fn cmp_big(&self, other: &Big) -> Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }

    /// self -= other; requires self >= other.
    fn sub_assign(&mut self, other: &Big) {
        debug_assert!(self.cmp_big(other) != Ordering::Less);
        let mut borrow = false;
        for (i, limb) in self.0.iter_mut().enumerate() {
            let o = other.0.get(i).copied().unwrap_or(0);
            if o == 0 && !borrow && i >= other.0.len() {
                break;
            }
            let (d1, b1) = limb.overflowing_sub(o);
            let (d2, b2) = d1.overflowing_sub(borrow as u64);
            *limb = d2;
            borrow = b1 || b2;
        }
        debug_assert!(!borrow);
        self.trim();
    }

    /// The top 128 bits as `q × 2^e`, with `sticky` set if lower bits are
    /// nonzero.
    fn top_128(&self) -> (u128, i64, bool) {
        let bits = self.bits();
        let shift = bits.saturating_sub(128);
        let limb = (shift / 64) as usize;
        let offset = (shift % 64) as u32;
        let word = |i: usize| self.0.get(i).copied().unwrap_or(0) as u128;
        let mut q = (word(limb) >> offset) | (word(limb + 1) << (64 - offset));
        if offset > 0 {
            q |= word(limb + 2) << (128 - offset);
        }
        let sticky = self.0[..limb].iter().any(|&l| l != 0)
            || (offset > 0 && word(limb) & ((1u128 << offset) - 1) != 0);
        (q, shift as i64, sticky)
    }

    /// Restoring division that keeps only the quotient, known to be below
    /// 2^`quotient_bits`; returns it and whether a remainder is left. Only a
    /// few dozen quotient bits are needed, so this beats a general division.
    fn div_small_quotient(mut self, den: &Big, quotient_bits: u32) -> (u128, bool) {
        debug_assert!(quotient_bits <= 127);
        let mut d = den.clone();
        d.shl(quotient_bits as u64 - 1);
        let mut q: u128 = 0;
        for i in (0..quotient_bits).rev() {
            if self.cmp_big(&d) != Ordering::Less {
                self.sub_assign(&d);
                q |= 1u128 << i;
            }
            d.shr1();
        }
        (q, !self.is_zero())
    }

    /// self /= d, returning the remainder.
    fn div_rem_small(&mut self, d: u64) -> u64 {
        let mut rem: u128 = 0;
        for limb in self.0.iter_mut().rev() {
            let cur = (rem << 64) | *limb as u128;
            *limb = (cur / d as u128) as u64;
            rem = cur % d as u128;
        }
        self.trim();
        rem as u64
    }

    fn to_decimal(&self) -> String {
        const TEN_19: u64 = 10_000_000_000_000_000_000;
        if self.is_zero() {
            return "0".into();
        }
        let mut n = self.clone();
        let mut chunks = Vec::new();
        while !n.is_zero() {
            chunks.push(n.div_rem_small(TEN_19));
        }
        let mut out = chunks.pop().expect("nonzero").to_string();
        for c in chunks.iter().rev() {
            out.push_str(&format!("{c:019}"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn incr(current: Option<&str>, by: &str) -> Result<String, &'static str> {
        incr_by_float(current.map(str::as_bytes), by.as_bytes())
    }

    #[test]
    fn sums_match_redis_on_x86_64() {
        // Every expected value below was read from redis-server 7.0.15.
        assert_eq!(incr(Some("10.50"), "0.1").unwrap(), "10.6");
        assert_eq!(incr(None, "0.1").unwrap(), "0.1");
        assert_eq!(incr(Some("5000"), "2.0e2").unwrap(), "5200");
        assert_eq!(incr(None, "3.0e3").unwrap(), "3000");
        assert_eq!(
            incr(None, "1.23456789012345678901").unwrap(),
            "1.23456789012345679"
        );
        assert_eq!(incr(None, "1e20").unwrap(), "100000000000000000000");
        assert_eq!(incr(None, "1e-20").unwrap(), "0");
        assert_eq!(incr(None, "-1e-30").unwrap(), "0");
        assert_eq!(incr(None, "+.5").unwrap(), "0.5");
        assert_eq!(incr(Some("0.5"), "1.").unwrap(), "1.5");
        assert_eq!(incr(None, "0x10").unwrap(), "16");
        assert_eq!(incr(Some("1.5"), "0x1p-3").unwrap(), "1.625");
        assert_eq!(incr(Some("6"), "1").unwrap(), "7");
        assert_eq!(
            incr(Some("0.1"), "1e400").unwrap(),
            "10000000000000000000281880683947586514586453433629052038625910693539685534008629862039363994848324160522094053927317616200295822777259255734023828976593340661017797447434546173917862448116674971723778943824391593338047470675026246684401359237513603830343735485505244955964979021825038280091068414947402456898653040951017512658092615827588920183472511643316591362664138176309734806343732497430221946880"
        );
    }

    #[test]
    fn rejects_what_string2ld_rejects() {
        for bad in [
            "", " 1", "1 ", ".", "nan", "-nan", "1e", "1e+", "0x", "0x1p", "abc", "1e4933",
            "1e-5000", "--1", "1.2.3", "infinit",
        ] {
            assert_eq!(incr(None, bad), Err(NOT_A_FLOAT), "{bad:?}");
        }
        assert_eq!(incr(Some("abc"), "1"), Err(NOT_A_FLOAT));
        assert_eq!(incr(Some("1e5000"), "1"), Err(NOT_A_FLOAT));
        assert_eq!(
            incr(None, &"1".repeat(MAX_LONG_DOUBLE_CHARS)),
            Err(NOT_A_FLOAT)
        );
    }

    #[test]
    fn infinity_is_an_operand_but_not_a_result() {
        assert_eq!(incr(None, "inf"), Err(OVERFLOW_OR_NAN));
        assert_eq!(incr(Some("-Infinity"), "1"), Err(OVERFLOW_OR_NAN));
        assert_eq!(incr(Some("inf"), "x"), Err(NOT_A_FLOAT));
        assert_eq!(incr(Some("1e4932"), "1e4932"), Err(OVERFLOW_OR_NAN));
    }

    #[test]
    fn edge_values() {
        assert_eq!(incr(Some("1"), "-1").unwrap(), "0");
        assert_eq!(incr(Some("-0"), "-0").unwrap(), "0");
        assert_eq!(incr(None, "-2.5").unwrap(), "-2.5");
        assert_eq!(incr(None, "1\0garbage").unwrap(), "1");
        assert_eq!(incr(None, "\0").unwrap(), "0");
        // Subnormals parse (glibc reports ERANGE, but not a zero).
        assert_eq!(incr(None, "1e-4940").unwrap(), "0");
        // The largest finite long double prints in full.
        let max = incr(None, "1.18973149535723176502e4932").unwrap();
        assert_eq!(max.len(), 4933);
        assert!(max.starts_with("118973149535723176502"));
        // %.17Lf rounds at the 17th decimal; exact ties go to even.
        assert_eq!(
            incr(None, "0.000000000000000006").unwrap(),
            "0.00000000000000001"
        );
        assert_eq!(incr(None, "0.000000000000000004").unwrap(), "0");
        assert_eq!(incr(None, "0x1p-18").unwrap(), "0.00000381469726562");
        assert_eq!(incr(None, "0x3p-18").unwrap(), "0.00001144409179688");
        assert_eq!(incr(None, "-0x1p-18").unwrap(), "-0.00000381469726562");
        assert_eq!(incr(None, "0X1P+2").unwrap(), "4");
        assert_eq!(incr(None, "0x.8").unwrap(), "0.5");
        // 64-bit mantissa: 2^64 + 1 rounds to 2^64.
        assert_eq!(
            incr(None, "18446744073709551617").unwrap(),
            "18446744073709551616"
        );
    }

    #[test]
    fn range_limits_match_glibc() {
        // Expected values from glibc's strtold and printf on x86-64.
        assert_eq!(incr(None, "0x1p-16445").unwrap(), "0");
        assert_eq!(incr(None, "0x1.8p-16446").unwrap(), "0");
        assert_eq!(incr(None, "0x1p-16446"), Err(NOT_A_FLOAT));
        assert!(incr(None, "0x1p16383")
            .unwrap()
            .starts_with("594865747678615882542"));
        assert_eq!(incr(None, "0x1p16384"), Err(NOT_A_FLOAT));
        assert!(incr(None, "0xffffffffffffffffp16320")
            .unwrap()
            .starts_with("118973149535723176502"));
        assert_eq!(incr(None, "0x1ffffffffffffffffp16319"), Err(NOT_A_FLOAT));
        assert!(incr(None, "1.18973149535723176505e4932").is_ok());
    }
}
