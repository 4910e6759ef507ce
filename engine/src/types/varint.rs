//! LEB128 varints: the length prefixes (and the sorted set's integer
//! scores) of the packed small encodings. Seven bits a byte, low groups
//! first, the high bit set on every byte but the last, so a length below
//! 128 costs one byte.

/// Bytes of a varint, at most (64 bits in 7-bit groups).
pub const BYTES_MAX: usize = 10;

/// Bytes `n` takes encoded.
pub fn len(n: u64) -> usize {
    let bits = u64::BITS - n.leading_zeros();
    (bits.max(1) as usize).div_ceil(7)
}

/// Appends `n` to `buf`.
pub fn put(buf: &mut Vec<u8>, mut n: u64) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            buf.push(byte);
            return;
        }
        buf.push(byte | 0x80);
    }
}

/// Reads the varint at `*at` and moves `*at` past it. The buffers that
/// call this hold only what [`put`] wrote, so the varint is whole.
pub fn get(buf: &[u8], at: &mut usize) -> u64 {
    let mut n: u64 = 0;
    let mut shift = 0;
    loop {
        let byte = buf[*at];
        *at += 1;
        n |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return n;
        }
        shift += 7;
        debug_assert!(shift < 7 * BYTES_MAX as u32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_lengths() {
        for n in [
            0,
            1,
            127,
            128,
            16_383,
            16_384,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            let mut buf = Vec::new();
            put(&mut buf, n);
            assert_eq!(buf.len(), len(n), "{n}");
            let mut at = 0;
            assert_eq!(get(&buf, &mut at), n);
            assert_eq!(at, buf.len());
        }
    }
}
