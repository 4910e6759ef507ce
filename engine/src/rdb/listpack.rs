//! Redis's listpack (`listpack.c`) as a byte blob: how small hashes, small
//! sorted sets and list nodes travel in an RDB.
//!
//! Layout: total bytes (u32 LE), element count (u16 LE, 65535 = "count
//! them"), the entries, and an end byte 0xFF. Each entry is an encoding
//! byte (with the length or integer packed in), the data, and a backlen
//! (the entry's size so far, 1-5 bytes, readable right to left).
//! A string that is a canonical integer is stored as an integer in the
//! narrowest of six widths, as `lpAppend` does; reading gives its text back.

use super::codec::itoa;
use super::{Corrupt, Result};
use crate::util::parse_i64_strict;

const HEADER_BYTES: usize = 6;
const EOF: u8 = 0xFF;
/// The count field's "unknown, walk the entries" value.
const COUNT_UNKNOWN: u16 = u16::MAX;

/// Encodes `entries` as one listpack.
pub fn encode<'a>(entries: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut buf = vec![0u8; HEADER_BYTES];
    let mut count = 0usize;
    for e in entries {
        push(&mut buf, e);
        count += 1;
    }
    buf.push(EOF);
    let total = u32::try_from(buf.len()).unwrap_or(u32::MAX);
    buf[..4].copy_from_slice(&total.to_le_bytes());
    let count = u16::try_from(count).unwrap_or(COUNT_UNKNOWN);
    buf[4..6].copy_from_slice(&count.to_le_bytes());
    buf
}

/// Bytes `entry` takes in a listpack, backlen included.
pub fn entry_size_bytes(entry: &[u8]) -> usize {
    let head = match parse_i64_strict(entry) {
        Some(v) => int_encoding(v).1,
        None => string_header_bytes(entry.len()) + entry.len(),
    };
    head + backlen_bytes(head)
}

/// Bytes of an empty listpack (header and end byte).
pub const EMPTY_BYTES: usize = HEADER_BYTES + 1;

fn push(buf: &mut Vec<u8>, entry: &[u8]) {
    let start = buf.len();
    match parse_i64_strict(entry) {
        Some(v) => {
            let (bytes, n) = int_encoding(v);
            buf.extend_from_slice(&bytes[..n]);
        }
        None => {
            let len = entry.len();
            if len < 64 {
                buf.push(0x80 | len as u8);
            } else if len < 4096 {
                buf.extend_from_slice(&[0xE0 | (len >> 8) as u8, len as u8]);
            } else {
                buf.push(0xF0);
                buf.extend_from_slice(&(len as u32).to_le_bytes());
            }
            buf.extend_from_slice(entry);
        }
    }
    let l = (buf.len() - start) as u64;
    push_backlen(buf, l);
}

fn string_header_bytes(len: usize) -> usize {
    match len {
        0..64 => 1,
        64..4096 => 2,
        _ => 5,
    }
}

/// `lpEncodeIntegerGetType`: the narrowest encoding of `v`, and its size.
fn int_encoding(v: i64) -> ([u8; 9], usize) {
    let mut b = [0u8; 9];
    let n = if (0..=127).contains(&v) {
        b[0] = v as u8;
        1
    } else if (-4096..=4095).contains(&v) {
        let u = if v < 0 { (1 << 13) + v } else { v } as u64;
        b[0] = 0xC0 | (u >> 8) as u8;
        b[1] = u as u8;
        2
    } else if (-32768..=32767).contains(&v) {
        b[0] = 0xF1;
        b[1..3].copy_from_slice(&(v as i16).to_le_bytes());
        3
    } else if (-8_388_608..=8_388_607).contains(&v) {
        b[0] = 0xF2;
        b[1..4].copy_from_slice(&(v as i32).to_le_bytes()[..3]);
        4
    } else if let Ok(v) = i32::try_from(v) {
        b[0] = 0xF3;
        b[1..5].copy_from_slice(&v.to_le_bytes());
        5
    } else {
        b[0] = 0xF4;
        b[1..9].copy_from_slice(&v.to_le_bytes());
        9
    };
    (b, n)
}

fn backlen_bytes(l: usize) -> usize {
    match l {
        0..=127 => 1,
        128..16383 => 2,
        16383..2_097_151 => 3,
        2_097_151..268_435_455 => 4,
        _ => 5,
    }
}

/// `lpEncodeBacklen`: most significant group first, every byte but the
/// first with its high bit set.
fn push_backlen(buf: &mut Vec<u8>, l: u64) {
    let n = backlen_bytes(l as usize);
    for i in (0..n).rev() {
        let group = ((l >> (7 * i)) & 127) as u8;
        buf.push(if i == n - 1 { group } else { group | 128 });
    }
}

/// Decodes a listpack, checking it as `lpValidateIntegrity` does deeply:
/// the header's size, every entry's bounds and backlen, the end byte, and
/// the count. Integers come back as their decimal text.
pub fn decode(blob: &[u8]) -> Result<Vec<Vec<u8>>> {
    if blob.len() < EMPTY_BYTES {
        return Err(Corrupt("listpack shorter than its header"));
    }
    let total = u32::from_le_bytes(blob[..4].try_into().expect("4 bytes")) as usize;
    if total != blob.len() {
        return Err(Corrupt("listpack size does not match"));
    }
    if blob[blob.len() - 1] != EOF {
        return Err(Corrupt("listpack without its end byte"));
    }
    let count = u16::from_le_bytes(blob[4..6].try_into().expect("2 bytes"));
    let body = &blob[HEADER_BYTES..blob.len() - 1];
    let mut entries = Vec::new();
    let mut at = 0;
    while at < body.len() {
        let (entry, size) = entry_at(&body[at..])?;
        let backlen = &body[at + size..];
        let n = backlen_bytes(size);
        if backlen.len() < n || decode_backlen(&backlen[..n]) != Some(size as u64) {
            return Err(Corrupt("listpack entry with a wrong backlen"));
        }
        entries.push(entry);
        at += size + n;
    }
    if count != COUNT_UNKNOWN && usize::from(count) != entries.len() {
        return Err(Corrupt("listpack count does not match"));
    }
    Ok(entries)
}

/// The entry at the start of `p` and the bytes of its encoding and data.
fn entry_at(p: &[u8]) -> Result<(Vec<u8>, usize)> {
    let short = || Corrupt("listpack entry past the end");
    let b0 = *p.first().ok_or_else(short)?;
    let int = |n: usize, bits: u32| -> Result<(Vec<u8>, usize)> {
        let bytes = p.get(1..n).ok_or_else(short)?;
        let mut u: u64 = 0;
        for (i, &b) in bytes.iter().enumerate() {
            u |= u64::from(b) << (8 * i);
        }
        Ok((itoa(sign_extend(u, bits)), n))
    };
    let string = |header: usize, len: usize| -> Result<(Vec<u8>, usize)> {
        let data = p.get(header..header + len).ok_or_else(short)?;
        Ok((data.to_vec(), header + len))
    };
    match b0 {
        0x00..=0x7F => Ok((itoa(i64::from(b0)), 1)),
        0x80..=0xBF => string(1, usize::from(b0 & 0x3F)),
        0xC0..=0xDF => {
            let b1 = *p.get(1).ok_or_else(short)?;
            let u = u64::from(b0 & 0x1F) << 8 | u64::from(b1);
            Ok((itoa(sign_extend(u, 13)), 2))
        }
        0xE0..=0xEF => {
            let b1 = *p.get(1).ok_or_else(short)?;
            string(2, usize::from(b0 & 0x0F) << 8 | usize::from(b1))
        }
        0xF0 => {
            let len = p.get(1..5).ok_or_else(short)?;
            string(
                5,
                u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize,
            )
        }
        0xF1 => int(3, 16),
        0xF2 => int(4, 24),
        0xF3 => int(5, 32),
        0xF4 => int(9, 64),
        _ => Err(Corrupt("unknown listpack encoding")),
    }
}

fn sign_extend(u: u64, bits: u32) -> i64 {
    let shift = 64 - bits;
    ((u << shift) as i64) >> shift
}

/// `lpDecodeBacklen`, reading `b` right to left.
fn decode_backlen(b: &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for (i, &byte) in b.iter().rev().enumerate() {
        v |= u64::from(byte & 127) << (7 * i);
        let last = i + 1 == b.len();
        if (byte & 128 == 0) != last {
            return None;
        }
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_take_the_narrowest_encoding() {
        for (v, size) in [
            (0i64, 1),
            (127, 1),
            (128, 2),
            (-1, 2),
            (-4096, 2),
            (4096, 3),
            (-32768, 3),
            (32768, 4),
            (8_388_607, 4),
            (8_388_608, 5),
            (i64::from(i32::MIN), 5),
            (i64::MAX, 9),
            (i64::MIN, 9),
        ] {
            assert_eq!(int_encoding(v).1, size, "{v}");
            let text = itoa(v);
            let lp = encode([text.as_slice()]);
            assert_eq!(decode(&lp).unwrap(), vec![text], "{v}");
        }
    }

    #[test]
    fn the_empty_listpack_and_a_known_blob() {
        assert_eq!(encode([]), vec![7, 0, 0, 0, 0, 0, 0xFF]);
        // "a" is a 6-bit string (0x81 'a', backlen 2), "1" a 7-bit uint
        // (0x01, backlen 1).
        let lp = encode([&b"a"[..], b"1"]);
        assert_eq!(lp, vec![0x0C, 0, 0, 0, 2, 0, 0x81, b'a', 2, 1, 1, 0xFF]);
    }

    #[test]
    fn strings_of_every_header_size_roundtrip() {
        let big = vec![b'z'; 5000];
        let mid = vec![b'y'; 300];
        let entries: Vec<&[u8]> = vec![b"", b"hello", &mid, &big, b"-0", b"01", b"+5", b"1.5"];
        let lp = encode(entries.iter().copied());
        assert_eq!(decode(&lp).unwrap(), entries);
        let sizes: usize = entries.iter().map(|e| entry_size_bytes(e)).sum();
        assert_eq!(lp.len(), EMPTY_BYTES + sizes);
    }

    #[test]
    fn corruption_is_refused() {
        let lp = encode([&b"abc"[..], b"12345"]);
        for cut in 0..lp.len() {
            assert!(decode(&lp[..cut]).is_err(), "cut at {cut}");
        }
        let mut bad = lp.clone();
        bad[4] = 3; // count
        assert!(decode(&bad).is_err());
        let mut bad = lp.clone();
        bad[10] ^= 0x01; // backlen of the first entry
        assert!(decode(&bad).is_err());
        let mut bad = lp;
        bad[6] = 0xF5; // unknown encoding
        assert!(decode(&bad).is_err());
    }
}
