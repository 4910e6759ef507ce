//! RDB primitives: length prefixes, strings with their special encodings,
//! binary doubles and the CRC64 (Jones polynomial, as `crc64.c`).

use super::{Corrupt, Result};
use crate::util::parse_i64_strict;

/// `RDB_ENCVAL`: the top two bits of a length byte that mark a special
/// string encoding; the low six bits say which.
const ENCVAL: u8 = 3;
/// Special string encodings (`RDB_ENC_*`).
const ENC_INT8: u8 = 0;
const ENC_INT16: u8 = 1;
const ENC_INT32: u8 = 2;
const ENC_LZF: u8 = 3;
/// `RDB_32BITLEN` and `RDB_64BITLEN` length bytes.
const LEN_32BIT: u8 = 0x80;
const LEN_64BIT: u8 = 0x81;

/// Strings this long or shorter are tried as integers (`rdbSaveRawString`).
const INTEGER_TRY_MAX_BYTES: usize = 11;
/// Strings longer than this are tried with LZF when compression is on.
const LZF_MIN_BYTES: usize = 20;
/// LZF expands at most ~88x (a 3-byte back reference yields 264 bytes); a
/// header claiming more than this per compressed byte is a lie, refused
/// before anything is allocated for it.
const LZF_EXPANSION_MAX: usize = 90;

/// The CRC64 Redis appends to RDB files and DUMP payloads.
pub const CRC64: crc::Crc<u64, crc::Table<16>> =
    crc::Crc::<u64, crc::Table<16>>::new(&crc::CRC_64_REDIS);

/// Appends `len` in RDB's length encoding (`rdbSaveLen`).
pub fn put_len(out: &mut Vec<u8>, len: u64) {
    if len < 1 << 6 {
        out.push(len as u8);
    } else if len < 1 << 14 {
        out.extend_from_slice(&[0x40 | (len >> 8) as u8, len as u8]);
    } else if len <= u64::from(u32::MAX) {
        out.push(LEN_32BIT);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    } else {
        out.push(LEN_64BIT);
        out.extend_from_slice(&len.to_be_bytes());
    }
}

/// Appends a string as `rdbSaveRawString` does: small canonical integers
/// in 1, 2 or 4 bytes, long strings LZF-compressed when `compress` and
/// when that saves at least 4 bytes, the rest as length and bytes.
pub fn put_string(out: &mut Vec<u8>, s: &[u8], compress: bool) {
    if s.len() <= INTEGER_TRY_MAX_BYTES {
        if let Some(v) = parse_i64_strict(s) {
            if put_int_encoded(out, v) {
                return;
            }
        }
    }
    if compress && s.len() > LZF_MIN_BYTES && put_lzf(out, s) {
        return;
    }
    put_len(out, s.len() as u64);
    out.extend_from_slice(s);
}

/// `rdbEncodeInteger`: whether `v` fit a 8, 16 or 32-bit special encoding
/// (and was appended).
fn put_int_encoded(out: &mut Vec<u8>, v: i64) -> bool {
    let tag = |enc: u8| (ENCVAL << 6) | enc;
    if let Ok(v) = i8::try_from(v) {
        out.extend_from_slice(&[tag(ENC_INT8), v as u8]);
    } else if let Ok(v) = i16::try_from(v) {
        out.push(tag(ENC_INT16));
        out.extend_from_slice(&v.to_le_bytes());
    } else if let Ok(v) = i32::try_from(v) {
        out.push(tag(ENC_INT32));
        out.extend_from_slice(&v.to_le_bytes());
    } else {
        return false;
    }
    true
}

/// `rdbSaveLzfStringObject`: compressed only when the result is at most
/// `len - 4` bytes (Redis gives liblzf that much room and no more).
fn put_lzf(out: &mut Vec<u8>, s: &[u8]) -> bool {
    let Ok(packed) = lzf::compress(s) else {
        return false;
    };
    if packed.is_empty() || packed.len() > s.len() - 4 {
        return false;
    }
    out.push((ENCVAL << 6) | ENC_LZF);
    put_len(out, packed.len() as u64);
    put_len(out, s.len() as u64);
    out.extend_from_slice(&packed);
    true
}

/// Appends a double as 8 little-endian bytes (`rdbSaveBinaryDoubleValue`).
pub fn put_double(out: &mut Vec<u8>, v: f64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// A length as read: a plain count, or the tag of a special encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Len {
    Plain(u64),
    Encoded(u8),
}

/// A cursor over an RDB byte string. Every read checks the bytes are there.
pub struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
    /// Elements and 64-byte blocks loaded so far: the work a load did.
    pub work_units: u64,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader {
            buf,
            at: 0,
            work_units: 0,
        }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.at
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(Corrupt("unexpected end of payload"));
        }
        let s = &self.buf[self.at..self.at + n];
        self.at += n;
        self.work_units += n as u64 / 64;
        Ok(s)
    }

    pub fn byte(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    /// `rdbLoadLenByRef`.
    pub fn len_or_encoding(&mut self) -> Result<Len> {
        let b = self.byte()?;
        match b >> 6 {
            0 => Ok(Len::Plain(u64::from(b & 0x3F))),
            1 => Ok(Len::Plain(
                u64::from(b & 0x3F) << 8 | u64::from(self.byte()?),
            )),
            ENCVAL => Ok(Len::Encoded(b & 0x3F)),
            _ if b == LEN_32BIT => {
                let b4: [u8; 4] = self.take(4)?.try_into().expect("4 bytes");
                Ok(Len::Plain(u64::from(u32::from_be_bytes(b4))))
            }
            _ if b == LEN_64BIT => {
                let b8: [u8; 8] = self.take(8)?.try_into().expect("8 bytes");
                Ok(Len::Plain(u64::from_be_bytes(b8)))
            }
            _ => Err(Corrupt("unknown length encoding")),
        }
    }

    /// A plain length (a special encoding here is corrupt).
    pub fn length(&mut self) -> Result<u64> {
        match self.len_or_encoding()? {
            Len::Plain(n) => Ok(n),
            Len::Encoded(_) => Err(Corrupt("encoded value where a length belongs")),
        }
    }

    /// A count of things that each take at least `min_bytes` of payload:
    /// refused when the payload cannot hold that many, so that no caller
    /// reserves room for a lie.
    pub fn count(&mut self, min_bytes: usize) -> Result<usize> {
        let n = self.length()?;
        match usize::try_from(n) {
            Ok(n) if n.saturating_mul(min_bytes.max(1)) <= self.remaining() => Ok(n),
            _ => Err(Corrupt("count larger than the payload")),
        }
    }

    /// A string in any of its encodings (`rdbGenericLoadStringObject`).
    pub fn string(&mut self) -> Result<Vec<u8>> {
        let n = match self.len_or_encoding()? {
            Len::Plain(n) => n,
            Len::Encoded(ENC_INT8) => return Ok(itoa(i64::from(self.byte()? as i8))),
            Len::Encoded(ENC_INT16) => {
                let b: [u8; 2] = self.take(2)?.try_into().expect("2 bytes");
                return Ok(itoa(i64::from(i16::from_le_bytes(b))));
            }
            Len::Encoded(ENC_INT32) => {
                let b: [u8; 4] = self.take(4)?.try_into().expect("4 bytes");
                return Ok(itoa(i64::from(i32::from_le_bytes(b))));
            }
            Len::Encoded(ENC_LZF) => return self.lzf(),
            Len::Encoded(_) => return Err(Corrupt("unknown string encoding")),
        };
        let n = usize::try_from(n).map_err(|_| Corrupt("string longer than the payload"))?;
        Ok(self.take(n)?.to_vec())
    }

    fn lzf(&mut self) -> Result<Vec<u8>> {
        let packed_len = self.length()?;
        let len = self.length()?;
        let packed_len = usize::try_from(packed_len)
            .map_err(|_| Corrupt("LZF length larger than the payload"))?;
        let packed = self.take(packed_len)?;
        let len = usize::try_from(len).map_err(|_| Corrupt("LZF length too large"))?;
        if len == 0 || len > packed_len.saturating_mul(LZF_EXPANSION_MAX) {
            return Err(Corrupt("LZF lengths do not agree"));
        }
        self.work_units += len as u64 / 64;
        match lzf::decompress(packed, len) {
            Ok(s) if s.len() == len => Ok(s),
            _ => Err(Corrupt("invalid LZF compressed string")),
        }
    }

    /// A double as 8 little-endian bytes.
    pub fn binary_double(&mut self) -> Result<f64> {
        let b: [u8; 8] = self.take(8)?.try_into().expect("8 bytes");
        Ok(f64::from_le_bytes(b))
    }

    /// A double as text with a one-byte length (`rdbLoadDoubleValue`, the
    /// old ZSET type): 253 is nan, 254 +inf, 255 -inf.
    pub fn text_double(&mut self) -> Result<f64> {
        match self.byte()? {
            253 => Ok(f64::NAN),
            254 => Ok(f64::INFINITY),
            255 => Ok(f64::NEG_INFINITY),
            n => {
                let text = self.take(usize::from(n))?;
                parse_double(text).ok_or(Corrupt("invalid double"))
            }
        }
    }
}

/// An integer's decimal text.
pub fn itoa(v: i64) -> Vec<u8> {
    v.to_string().into_bytes()
}

/// Parses a double the way Redis reads one back from its own text (`%.17g`,
/// "inf", "-inf", "nan"): the whole string must be a number. Rust's parser
/// takes the infinities and NaN in any case, with a sign, as strtod does.
pub fn parse_double(text: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(text).ok()?;
    if s.starts_with(char::is_whitespace) {
        return None;
    }
    s.parse::<f64>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(s: &[u8], compress: bool) -> Vec<u8> {
        let mut out = Vec::new();
        put_string(&mut out, s, compress);
        let mut r = Reader::new(&out);
        let back = r.string().expect("loads");
        assert_eq!(r.remaining(), 0);
        back
    }

    #[test]
    fn lengths_use_the_shortest_form() {
        for (len, bytes) in [
            (0u64, vec![0x00]),
            (63, vec![0x3F]),
            (64, vec![0x40, 0x40]),
            (16383, vec![0x7F, 0xFF]),
            (16384, vec![0x80, 0, 0, 0x40, 0]),
            (1 << 32, vec![0x81, 0, 0, 0, 1, 0, 0, 0, 0]),
        ] {
            let mut out = Vec::new();
            put_len(&mut out, len);
            assert_eq!(out, bytes, "{len}");
            assert_eq!(Reader::new(&out).length(), Ok(len));
        }
    }

    #[test]
    fn small_integers_are_encoded_and_others_are_not() {
        let enc = |s: &[u8]| {
            let mut out = Vec::new();
            put_string(&mut out, s, true);
            out
        };
        assert_eq!(enc(b"-1"), vec![0xC0, 0xFF]);
        assert_eq!(enc(b"300"), vec![0xC1, 0x2C, 0x01]);
        assert_eq!(enc(b"-2147483648"), vec![0xC2, 0, 0, 0, 0x80]);
        // Not canonical, or wider than 32 bits: kept as text.
        assert_eq!(enc(b"007"), vec![3, b'0', b'0', b'7']);
        assert_eq!(enc(b"2147483648")[0], 10);
        for s in [
            &b"0"[..],
            b"-128",
            b"127",
            b"32767",
            b"-32769",
            b"+1",
            b" 1",
            b"",
        ] {
            assert_eq!(roundtrip(s, true), s);
        }
    }

    #[test]
    fn long_repetitive_strings_compress_and_load_back() {
        let s = vec![b'x'; 1000];
        let mut out = Vec::new();
        put_string(&mut out, &s, true);
        assert_eq!(out[0], 0xC3);
        assert!(out.len() < 100);
        assert_eq!(roundtrip(&s, true), s);
        let mut plain = Vec::new();
        put_string(&mut plain, &s, false);
        assert_eq!(plain.len(), 1000 + 2);
        // Incompressible text is stored as is.
        let noise: Vec<u8> = (0..200u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        assert_eq!(roundtrip(&noise, true), noise);
    }

    #[test]
    fn lies_are_refused_without_allocating() {
        // A 2^32 length with nothing behind it.
        assert!(Reader::new(&[0x80, 0xFF, 0xFF, 0xFF, 0xFF])
            .string()
            .is_err());
        // LZF claiming a terabyte from 3 bytes.
        let lie = [0xC3, 0x03, 0x81, 0, 0, 1, 0, 0, 0, 0, 0, 1, 2, 3];
        assert!(Reader::new(&lie).string().is_err());
        assert!(Reader::new(&[0xC4]).string().is_err());
        assert!(Reader::new(&[0x82]).length().is_err());
        assert!(Reader::new(&[0x90, 1]).count(1).is_err());
    }

    #[test]
    fn doubles_read_back_from_redis_text() {
        for (text, v) in [
            ("inf", f64::INFINITY),
            ("-inf", f64::NEG_INFINITY),
            ("+Infinity", f64::INFINITY),
            ("2.5", 2.5),
            ("1e100", 1e100),
        ] {
            assert_eq!(parse_double(text.as_bytes()), Some(v), "{text}");
        }
        assert!(parse_double(b"nan").is_some_and(f64::is_nan));
        for bad in [&b""[..], b" 1", b"1 ", b"abc", b"\xff"] {
            assert_eq!(parse_double(bad), None);
        }
    }

    #[test]
    fn crc64_is_redis_jones() {
        // crc64.c's self test: crc64(0, "123456789") == 0xe9c6d914c4b8d9ca.
        assert_eq!(CRC64.checksum(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    }
}
