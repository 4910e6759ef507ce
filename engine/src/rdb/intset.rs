//! Redis's intset (`intset.c`) as a byte blob: how a small set of integers
//! travels in an RDB. Layout: element width in bytes (u32 LE: 2, 4 or 8),
//! count (u32 LE), then the values ascending, little-endian, all of the
//! narrowest width that holds every one.

use super::{Corrupt, Result};

const HEADER_BYTES: usize = 8;

/// Encodes ascending, distinct `values` in the narrowest width.
pub fn encode(values: &[i64]) -> Vec<u8> {
    debug_assert!(values.windows(2).all(|w| w[0] < w[1]));
    let width = values.iter().map(|&v| width_of(v)).max().unwrap_or(2);
    let mut buf = Vec::with_capacity(HEADER_BYTES + width * values.len());
    buf.extend_from_slice(&(width as u32).to_le_bytes());
    buf.extend_from_slice(&(values.len() as u32).to_le_bytes());
    for &v in values {
        buf.extend_from_slice(&v.to_le_bytes()[..width]);
    }
    buf
}

fn width_of(v: i64) -> usize {
    if i16::try_from(v).is_ok() {
        2
    } else if i32::try_from(v).is_ok() {
        4
    } else {
        8
    }
}

/// Decodes an intset, checking it as `intsetValidateIntegrity` does deeply:
/// a known width, a size that matches the count, and values strictly
/// ascending (so, no duplicates).
pub fn decode(blob: &[u8]) -> Result<Vec<i64>> {
    if blob.len() < HEADER_BYTES {
        return Err(Corrupt("intset shorter than its header"));
    }
    let width = u32::from_le_bytes(blob[..4].try_into().expect("4 bytes")) as usize;
    if !matches!(width, 2 | 4 | 8) {
        return Err(Corrupt("intset with an unknown width"));
    }
    let count = u32::from_le_bytes(blob[4..8].try_into().expect("4 bytes")) as usize;
    let body = &blob[HEADER_BYTES..];
    if count.checked_mul(width) != Some(body.len()) {
        return Err(Corrupt("intset size does not match its count"));
    }
    let mut values = Vec::with_capacity(count);
    for chunk in body.chunks_exact(width) {
        let v = match width {
            2 => i64::from(i16::from_le_bytes(chunk.try_into().expect("2 bytes"))),
            4 => i64::from(i32::from_le_bytes(chunk.try_into().expect("4 bytes"))),
            _ => i64::from_le_bytes(chunk.try_into().expect("8 bytes")),
        };
        if values.last().is_some_and(|&last| last >= v) {
            return Err(Corrupt("intset not strictly ascending"));
        }
        values.push(v);
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn width_follows_the_widest_member() {
        assert_eq!(
            encode(&[1, 2, 3]),
            vec![2, 0, 0, 0, 3, 0, 0, 0, 1, 0, 2, 0, 3, 0]
        );
        assert_eq!(encode(&[-1, 70000])[0], 4);
        assert_eq!(encode(&[i64::MIN, 0])[0], 8);
        for values in [vec![], vec![5], vec![-40000, -1, 0, 1 << 40]] {
            assert_eq!(decode(&encode(&values)).unwrap(), values);
        }
    }

    #[test]
    fn corruption_is_refused() {
        let blob = encode(&[1, 2, 3]);
        for cut in 0..blob.len() {
            assert!(decode(&blob[..cut]).is_err());
        }
        let mut dup = blob.clone();
        dup[10] = 1; // 1, 1, 3
        assert!(decode(&dup).is_err());
        let mut width = blob;
        width[0] = 3;
        assert!(decode(&width).is_err());
    }
}
