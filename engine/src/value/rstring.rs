//! A string value in as few bytes as its content allows.
//!
//! Most values in a keyspace are short (counters, flags, ids), and a string
//! value sits in every dict entry, so its size is paid once per key. An
//! [`RString`] is 24 bytes and has three shapes:
//!
//! - up to [`INLINE_MAX_BYTES`] bytes live inside it (no allocation at all,
//!   like Redis's embstr keeping the bytes next to the object header);
//! - longer strings are one exactly-sized boxed slice;
//! - a string modified in place (`APPEND`, `SETRANGE`, `SETBIT`, `BITFIELD`,
//!   `PFADD`) is a boxed `Vec`, whose spare capacity keeps repeated appends
//!   amortised O(1) as Redis's sds greedy growth does.
//!
//! The shape is an implementation detail: callers read [`RString::as_bytes`]
//! and edit through [`RString::bytes_mut`]. What `OBJECT ENCODING` reports
//! follows Redis's rules from the content and the raw flag alone: `raw` once
//! modified in place, else `int` for integers up to 20 characters, `embstr`
//! up to 44 bytes, `raw` beyond.

use std::fmt;

/// Redis's OBJ_ENCODING_EMBSTR_SIZE_LIMIT.
pub const EMBSTR_SIZE_LIMIT_BYTES: usize = 44;

/// The longest string kept inline: what fits beside the length byte and the
/// shape's tag in 24 bytes. Every integer's text (at most 20 bytes) fits.
pub const INLINE_MAX_BYTES: usize = 22;

/// A string value. Redis picks an encoding from the content (`int` for
/// integers up to 20 characters, `embstr` up to 44 bytes, otherwise `raw`)
/// and a string modified in place (`APPEND`, `SETRANGE`) is always `raw`.
#[derive(Clone)]
pub struct RString(Repr);

#[derive(Clone)]
enum Repr {
    /// Not raw, at most [`INLINE_MAX_BYTES`]: `buf[..len]`.
    Inline {
        len: u8,
        buf: [u8; INLINE_MAX_BYTES],
    },
    /// Not raw, longer than [`INLINE_MAX_BYTES`], exactly sized.
    Boxed(Box<[u8]>),
    /// Modified in place: any length, with spare capacity for growth.
    /// Boxed so that the variant is one pointer and the string stays 24
    /// bytes (a bare `Vec` would make every string 32).
    #[allow(clippy::box_collection)]
    Raw(Box<Vec<u8>>),
}

const _: () = assert!(std::mem::size_of::<RString>() == 24);

impl Default for RString {
    fn default() -> Self {
        RString::from_slice(b"")
    }
}

impl RString {
    /// A string set whole (`SET`, `INCR`, a loaded value): not raw.
    pub fn new(bytes: Vec<u8>) -> Self {
        if bytes.len() <= INLINE_MAX_BYTES {
            RString::from_slice(&bytes)
        } else {
            RString(Repr::Boxed(bytes.into_boxed_slice()))
        }
    }

    /// [`RString::new`] of a request argument: a string too long to be
    /// inline takes the argument's buffer (no copy); a short one is
    /// copied and leaves the buffer with its request, whose parser reuses
    /// it for the next request's arguments (taking it cost a free here
    /// and an allocation in the parser: one pair per SET, ten per MSET of
    /// ten pairs). The command's arguments were captured (slowlog,
    /// propagation) before it ran, and nothing reads them after.
    pub fn from_arg(arg: &mut Vec<u8>) -> Self {
        if arg.len() <= INLINE_MAX_BYTES {
            RString::from_slice(arg)
        } else {
            RString::new(std::mem::take(arg))
        }
    }

    /// Like [`RString::new`], copying.
    pub fn from_slice(bytes: &[u8]) -> Self {
        if bytes.len() <= INLINE_MAX_BYTES {
            let mut buf = [0u8; INLINE_MAX_BYTES];
            buf[..bytes.len()].copy_from_slice(bytes);
            RString(Repr::Inline {
                len: bytes.len() as u8,
                buf,
            })
        } else {
            RString(Repr::Boxed(bytes.into()))
        }
    }

    /// A string built or modified in place: `raw` whatever its content.
    pub fn new_raw(bytes: Vec<u8>) -> Self {
        RString(Repr::Raw(Box::new(bytes)))
    }

    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { len, buf } => &buf[..usize::from(*len)],
            Repr::Boxed(b) => b,
            Repr::Raw(v) => v,
        }
    }

    pub fn len(&self) -> usize {
        self.as_bytes().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the string was modified in place (reported as `raw`).
    pub fn is_raw(&self) -> bool {
        matches!(self.0, Repr::Raw(_))
    }

    /// Marks the string modified in place, as Redis's
    /// `dbUnshareStringValue` does before an in-place edit.
    pub fn make_raw(&mut self) {
        if !self.is_raw() {
            let bytes = self.as_bytes().to_vec();
            self.0 = Repr::Raw(Box::new(bytes));
        }
    }

    /// The bytes for an in-place edit; the string becomes raw.
    pub fn bytes_mut(&mut self) -> &mut Vec<u8> {
        self.make_raw();
        match &mut self.0 {
            Repr::Raw(v) => v,
            _ => unreachable!("make_raw leaves the raw shape"),
        }
    }

    /// Takes the bytes out (with their capacity when raw), leaving the
    /// string empty.
    pub fn take_bytes(&mut self) -> Vec<u8> {
        match std::mem::take(&mut self.0) {
            Repr::Inline { len, buf } => buf[..usize::from(len)].to_vec(),
            Repr::Boxed(b) => b.into_vec(),
            Repr::Raw(v) => *v,
        }
    }

    /// Bytes reserved for the content: its length, or the buffer's
    /// capacity once modified in place (what the memory estimates count).
    pub fn capacity_bytes(&self) -> usize {
        match &self.0 {
            Repr::Raw(v) => v.capacity(),
            _ => self.len(),
        }
    }

    pub fn encoding_name(&self) -> &'static str {
        if self.is_raw() {
            return "raw";
        }
        let bytes = self.as_bytes();
        if bytes.len() <= 20 && crate::util::parse_i64_strict(bytes).is_some() {
            "int"
        } else if bytes.len() <= EMBSTR_SIZE_LIMIT_BYTES {
            "embstr"
        } else {
            "raw"
        }
    }
}

impl Default for Repr {
    fn default() -> Self {
        Repr::Inline {
            len: 0,
            buf: [0; INLINE_MAX_BYTES],
        }
    }
}

/// Equal when the content and the raw flag are: the shape follows from
/// them.
impl PartialEq for RString {
    fn eq(&self, other: &Self) -> bool {
        self.is_raw() == other.is_raw() && self.as_bytes() == other.as_bytes()
    }
}

impl Eq for RString {}

impl fmt::Debug for RString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RString")
            .field("bytes", &String::from_utf8_lossy(self.as_bytes()))
            .field("raw", &self.is_raw())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    #[test]
    fn a_value_is_three_words() {
        assert_eq!(std::mem::size_of::<Value>(), 24);
    }

    #[test]
    fn shapes_follow_length_and_raw_flag() {
        for len in [0, 1, 20, 21, 22, 23, 44, 45, 1000] {
            let bytes: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            let s = RString::new(bytes.clone());
            assert_eq!(s.as_bytes(), bytes.as_slice());
            assert_eq!(s.len(), len);
            assert!(!s.is_raw());
            assert_eq!(matches!(s.0, Repr::Inline { .. }), len <= INLINE_MAX_BYTES);
            assert_eq!(s, RString::from_slice(&bytes));
            let expected = if len <= EMBSTR_SIZE_LIMIT_BYTES {
                "embstr"
            } else {
                "raw"
            };
            assert_eq!(s.encoding_name(), expected);
            let mut r = s.clone();
            r.bytes_mut().push(b'!');
            assert!(r.is_raw());
            assert_eq!(r.encoding_name(), "raw");
            assert_eq!(&r.as_bytes()[..len], bytes.as_slice());
            assert_ne!(r, RString::new([bytes.as_slice(), b"!"].concat()));
            assert_eq!(r, RString::new_raw([bytes.as_slice(), b"!"].concat()));
        }
    }

    #[test]
    fn integers_are_int_encoded_until_modified() {
        let mut s = RString::new(b"-9223372036854775808".to_vec());
        assert_eq!(s.encoding_name(), "int");
        assert_eq!(RString::new(b"012".to_vec()).encoding_name(), "embstr");
        s.make_raw();
        assert_eq!(s.encoding_name(), "raw");
        assert_eq!(s.as_bytes(), b"-9223372036854775808");
    }

    #[test]
    fn take_leaves_an_empty_string_and_keeps_raw_capacity() {
        let mut r = RString::new_raw(Vec::with_capacity(64));
        r.bytes_mut().extend_from_slice(b"abc");
        assert_eq!(r.capacity_bytes(), 64);
        let v = r.take_bytes();
        assert_eq!((v.as_slice(), v.capacity()), (&b"abc"[..], 64));
        assert!(r.is_empty() && !r.is_raw());
        let mut s = RString::new(vec![7; 30]);
        assert_eq!(s.take_bytes(), vec![7; 30]);
        assert_eq!(s.capacity_bytes(), 0);
    }

    /// A request argument becomes the string `new` would make of it; a
    /// short one stays in the request for the parser to reuse, a long one
    /// moves without a copy.
    #[test]
    fn from_arg_takes_only_buffers_too_long_to_inline() {
        for len in [0, 1, 3, 21, 22, 23, 100] {
            let bytes: Vec<u8> = (0..len).map(|i| b'0' + (i % 10) as u8).collect();
            let mut arg = bytes.clone();
            let r = RString::from_arg(&mut arg);
            assert_eq!(r, RString::new(bytes.clone()));
            assert_eq!(
                r.encoding_name(),
                RString::new(bytes.clone()).encoding_name()
            );
            assert_eq!(
                r.capacity_bytes(),
                RString::new(bytes.clone()).capacity_bytes()
            );
            if len <= INLINE_MAX_BYTES {
                assert_eq!(arg, bytes, "a short argument stays in place");
            } else {
                assert!(arg.is_empty() && arg.capacity() == 0, "a long one is taken");
            }
        }
    }
}
