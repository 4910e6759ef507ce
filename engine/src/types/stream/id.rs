//! Stream entry IDs: `ms-seq`, two unsigned 64-bit halves compared as one
//! 128-bit number, and their textual forms.

use std::fmt;

/// An entry ID. Ordered by `ms`, then `seq`, like Redis's `streamCompareID`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId {
    pub ms: u64,
    pub seq: u64,
}

/// Longest ID argument Redis accepts (`streamGenericParseIDOrReply` copies
/// it into a 128-byte buffer).
const ID_ARG_MAX_BYTES: usize = 127;

/// The parts of a parsed ID argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParsedId {
    pub id: StreamId,
    /// False for `ms-*` (the sequence is to be generated).
    pub seq_given: bool,
}

impl StreamId {
    pub const MIN: StreamId = StreamId { ms: 0, seq: 0 };
    pub const MAX: StreamId = StreamId {
        ms: u64::MAX,
        seq: u64::MAX,
    };

    pub const fn new(ms: u64, seq: u64) -> StreamId {
        StreamId { ms, seq }
    }

    pub fn is_zero(self) -> bool {
        self == StreamId::MIN
    }

    /// The next ID (`streamIncrID`), or `None` past the last possible one.
    pub fn next(self) -> Option<StreamId> {
        if self.seq == u64::MAX {
            if self.ms == u64::MAX {
                return None;
            }
            Some(StreamId::new(self.ms + 1, 0))
        } else {
            Some(StreamId::new(self.ms, self.seq + 1))
        }
    }

    /// The previous ID (`streamDecrID`), or `None` before 0-0.
    pub fn prev(self) -> Option<StreamId> {
        if self.seq == 0 {
            if self.ms == 0 {
                return None;
            }
            Some(StreamId::new(self.ms - 1, u64::MAX))
        } else {
            Some(StreamId::new(self.ms, self.seq - 1))
        }
    }

    /// The ID as `ms-seq` text.
    pub fn to_bytes(self) -> Vec<u8> {
        self.to_string().into_bytes()
    }

    /// The 16-byte big-endian form Redis uses as rax keys and in RDB.
    pub fn to_be_bytes(self) -> [u8; 16] {
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&self.ms.to_be_bytes());
        out[8..].copy_from_slice(&self.seq.to_be_bytes());
        out
    }

    pub fn from_be_bytes(b: &[u8]) -> Option<StreamId> {
        let b: &[u8; 16] = b.try_into().ok()?;
        let ms = u64::from_be_bytes(b[..8].try_into().ok()?);
        let seq = u64::from_be_bytes(b[8..].try_into().ok()?);
        Some(StreamId::new(ms, seq))
    }

    /// Parses an ID argument as Redis's `streamGenericParseIDOrReply` does:
    /// `-` and `+` (unless `strict`), `ms` (the sequence is `missing_seq`),
    /// `ms-seq`, and `ms-*` when `allow_star_seq`. `None` is Redis's
    /// "Invalid stream ID" error.
    pub fn parse(
        arg: &[u8],
        missing_seq: u64,
        strict: bool,
        allow_star_seq: bool,
    ) -> Option<ParsedId> {
        if arg.len() > ID_ARG_MAX_BYTES {
            return None;
        }
        // Redis works on a C string: an embedded NUL ends it.
        let arg = &arg[..arg.iter().position(|&c| c == 0).unwrap_or(arg.len())];
        let given = |id| {
            Some(ParsedId {
                id,
                seq_given: true,
            })
        };
        if strict && (arg == b"-" || arg == b"+") {
            return None;
        }
        match arg {
            b"-" => return given(StreamId::MIN),
            b"+" => return given(StreamId::MAX),
            _ => {}
        }
        match arg.iter().position(|&c| c == b'-') {
            None => given(StreamId::new(string_to_u64(arg)?, missing_seq)),
            Some(dash) => {
                let ms = string_to_u64(&arg[..dash])?;
                let seq = &arg[dash + 1..];
                if allow_star_seq && seq == b"*" {
                    return Some(ParsedId {
                        id: StreamId::new(ms, 0),
                        seq_given: false,
                    });
                }
                given(StreamId::new(ms, string_to_u64(seq)?))
            }
        }
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

/// Redis's `string2ull`: a strict decimal `long long` that is not
/// negative, or else what C's `strtoull` accepts when it consumes the
/// whole (non-empty) string: leading white space, a sign (a minus negates
/// modulo 2^64), then digits, without overflow.
pub fn string_to_u64(s: &[u8]) -> Option<u64> {
    if let Some(v) = crate::util::parse_i64_strict(s) {
        return u64::try_from(v).ok();
    }
    let mut i = 0;
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        i += 1;
    }
    let negative = match s.get(i) {
        Some(b'+') => {
            i += 1;
            false
        }
        Some(b'-') => {
            i += 1;
            true
        }
        _ => false,
    };
    let digits = &s[i..];
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: u64 = 0;
    for &d in digits {
        v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some(if negative { v.wrapping_neg() } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Option<(u64, u64, bool)> {
        StreamId::parse(s.as_bytes(), 0, true, true).map(|p| (p.id.ms, p.id.seq, p.seq_given))
    }

    #[test]
    fn parses_like_redis() {
        assert_eq!(p("1-2"), Some((1, 2, true)));
        assert_eq!(p("5"), Some((5, 0, true)));
        assert_eq!(p("5-*"), Some((5, 0, false)));
        assert_eq!(p(" 2-0"), Some((2, 0, true)));
        assert_eq!(p("+3-0"), Some((3, 0, true)));
        assert_eq!(p("1- 2"), Some((1, 2, true)));
        assert_eq!(p("010-0"), Some((10, 0, true)));
        assert_eq!(p("1a-0"), None);
        assert_eq!(p("1 -0"), None);
        assert_eq!(p("-1"), None);
        assert_eq!(p("-"), None);
        assert_eq!(p(""), None);
        assert_eq!(p("1-18446744073709551616"), None);
        assert_eq!(
            p("18446744073709551615-18446744073709551615"),
            Some((u64::MAX, u64::MAX, true))
        );
        assert_eq!(
            StreamId::parse(b"-", 0, false, false).map(|p| p.id),
            Some(StreamId::MIN)
        );
        assert_eq!(
            StreamId::parse(b"7", u64::MAX, false, false).map(|p| p.id),
            Some(StreamId::new(7, u64::MAX))
        );
    }

    #[test]
    fn next_and_prev_saturate() {
        assert_eq!(StreamId::MAX.next(), None);
        assert_eq!(StreamId::MIN.prev(), None);
        assert_eq!(StreamId::new(1, u64::MAX).next(), Some(StreamId::new(2, 0)));
        assert_eq!(StreamId::new(2, 0).prev(), Some(StreamId::new(1, u64::MAX)));
    }
}
