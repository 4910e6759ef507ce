//! Redis 7.0's HyperLogLog string layout, written from `hyperloglog.c`: the
//! 16-byte header, the dense 6-bit registers, the sparse run-length opcodes
//! (ZERO `00xxxxxx`, XZERO `01xxxxxx yyyyyyyy`, VAL `1vvvvvxx`), and the
//! in-place update of a sparse value (`hllSparseSet`: split the opcode that
//! covers the register, then merge adjacent VAL opcodes) with its promotion
//! to dense. Everything works on the value's bytes, so the model's string
//! value *is* the HLL, byte for byte.
//!
//! Redis reads one byte past the value where a truncated XZERO ends it (the
//! sds terminator, 0); the readers here do the same. The one write that
//! would go further than that ([`SetOutcome::Undetermined`]) is left
//! unpredicted.

/// `HLL_P`: the register index bits.
const P_BITS: u32 = 14;
/// `HLL_Q`: the hash bits left for the run of zeroes.
pub(crate) const Q_BITS: u32 = 64 - P_BITS;
pub(crate) const REGISTERS_COUNT: usize = 1 << P_BITS;
const REGISTER_MAX: u8 = 63;
/// "HYLL", encoding, 3 unused bytes, 8 bytes of cached cardinality.
pub(crate) const HEADER_BYTES: usize = 16;
pub(crate) const DENSE_BYTES: usize = HEADER_BYTES + (REGISTERS_COUNT * 6).div_ceil(8);
/// `hll-sparse-max-bytes` (Redis's default).
pub(crate) const SPARSE_MAX_BYTES: usize = 3_000;
const MAGIC: &[u8; 4] = b"HYLL";
const ENCODING_AT: usize = 4;
const CARD_AT: usize = 8;
/// The cached cardinality's last byte; its MSB marks the cache stale.
const CARD_LAST_AT: usize = 15;
const ENCODING_DENSE: u8 = 0;
const ENCODING_SPARSE: u8 = 1;
const VAL_VALUE_MAX: u8 = 32;
const VAL_LEN_MAX: usize = 4;
const ZERO_LEN_MAX: usize = 64;
const XZERO_LEN_MAX: usize = 16_384;
const MURMUR_SEED: u64 = 0xadc8_3b19;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    Dense,
    Sparse,
}

/// `isHLLObjectOrReply`'s test of a string: its encoding, or `None` when it
/// is not a valid HLL.
pub(crate) fn validate(bytes: &[u8]) -> Option<Encoding> {
    if bytes.len() < HEADER_BYTES || &bytes[..4] != MAGIC {
        return None;
    }
    match bytes[ENCODING_AT] {
        ENCODING_DENSE if bytes.len() == DENSE_BYTES => Some(Encoding::Dense),
        ENCODING_SPARSE => Some(Encoding::Sparse),
        _ => None,
    }
}

/// `createHLLObject`: an empty sparse HLL (one XZERO of 16384), its cached
/// cardinality 0 and valid.
pub(crate) fn new_sparse() -> Vec<u8> {
    let mut bytes = Vec::with_capacity(HEADER_BYTES + 2);
    bytes.extend_from_slice(MAGIC);
    bytes.push(ENCODING_SPARSE);
    bytes.resize(HEADER_BYTES, 0);
    push_xzero(&mut bytes, XZERO_LEN_MAX);
    bytes
}

/// The cached cardinality, if valid (its MSB clear).
pub(crate) fn cached_cardinality(bytes: &[u8]) -> Option<u64> {
    if bytes[CARD_LAST_AT] & 0x80 != 0 {
        return None;
    }
    let card: [u8; 8] = bytes[CARD_AT..CARD_AT + 8].try_into().expect("8 bytes");
    Some(u64::from_le_bytes(card))
}

pub(crate) fn store_cardinality(bytes: &mut [u8], card: u64) {
    bytes[CARD_AT..CARD_AT + 8].copy_from_slice(&card.to_le_bytes());
}

/// `HLL_INVALIDATE_CACHE`.
pub(crate) fn invalidate_cache(bytes: &mut [u8]) {
    bytes[CARD_LAST_AT] |= 0x80;
}

/// MurmurHash2, 64-bit (`MurmurHash64A`), reading 8-byte words little
/// endian as Redis does on every architecture.
pub(crate) fn murmur64a(key: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (key.len() as u64).wrapping_mul(M);
    let mut words = key.chunks_exact(8);
    for word in &mut words {
        let mut k = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        for (i, b) in tail.iter().enumerate() {
            h ^= u64::from(*b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// `hllPatLen`: the register an element lands in and the length of the
/// `0..01` run that follows the index bits (1 ..= Q + 1).
pub(crate) fn pattern(element: &[u8]) -> (usize, u8) {
    let hash = murmur64a(element, MURMUR_SEED);
    let index = (hash as usize) & (REGISTERS_COUNT - 1);
    let run = (hash >> P_BITS) | (1u64 << Q_BITS);
    (index, run.trailing_zeros() as u8 + 1)
}

/// The byte at `at`, or the sds terminator (0) past the end.
fn byte_at(bytes: &[u8], at: usize) -> u8 {
    bytes.get(at).copied().unwrap_or(0)
}

/// `HLL_DENSE_GET_REGISTER` on the registers (the bytes after the header).
pub(crate) fn dense_get(registers: &[u8], index: usize) -> u8 {
    let at = index * 6 / 8;
    let shift = (index * 6) & 7;
    let b0 = u16::from(byte_at(registers, at));
    let b1 = u16::from(byte_at(registers, at + 1));
    (((b0 >> shift) | (b1 << (8 - shift))) & u16::from(REGISTER_MAX)) as u8
}

/// `HLL_DENSE_SET_REGISTER`.
fn dense_put(registers: &mut [u8], index: usize, value: u8) {
    let at = index * 6 / 8;
    let shift = (index * 6) & 7;
    let v = u16::from(value);
    let max = u16::from(REGISTER_MAX);
    registers[at] = ((u16::from(registers[at]) & !(max << shift)) | (v << shift)) as u8;
    if let Some(next) = registers.get_mut(at + 1) {
        let kept = u16::from(*next) & !(max >> (8 - shift));
        *next = (kept | (v >> (8 - shift))) as u8;
    }
}

/// `hllDenseSet` on a whole dense value: raises the register to `count`.
pub(crate) fn dense_raise(bytes: &mut [u8], index: usize, count: u8) -> bool {
    let registers = &mut bytes[HEADER_BYTES..];
    if count > dense_get(registers, index) {
        dense_put(registers, index, count);
        return true;
    }
    false
}

/// One sparse opcode, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Zero(usize),
    XZero(usize),
    /// Value, run length.
    Val(u8, usize),
}

impl Op {
    pub(crate) fn span(self) -> usize {
        match self {
            Op::Zero(n) | Op::XZero(n) | Op::Val(_, n) => n,
        }
    }

    pub(crate) fn bytes_count(self) -> usize {
        match self {
            Op::XZero(_) => 2,
            _ => 1,
        }
    }
}

/// The opcode at `at` (an XZERO at the very end reads the terminator).
pub(crate) fn op_at(bytes: &[u8], at: usize) -> Op {
    let b = bytes[at];
    if b & 0x80 != 0 {
        Op::Val(((b >> 2) & 0x1f) + 1, usize::from(b & 0x3) + 1)
    } else if b & 0xc0 == 0x40 {
        Op::XZero(((usize::from(b & 0x3f) << 8) | usize::from(byte_at(bytes, at + 1))) + 1)
    } else {
        Op::Zero(usize::from(b & 0x3f) + 1)
    }
}

fn push_xzero(out: &mut Vec<u8>, len: usize) {
    let l = len - 1;
    out.push((l >> 8) as u8 | 0x40);
    out.push((l & 0xff) as u8);
}

/// A run of zeroes: ZERO up to 64, XZERO beyond.
fn push_zeroes(out: &mut Vec<u8>, len: usize) {
    if len > ZERO_LEN_MAX {
        push_xzero(out, len);
    } else {
        out.push((len - 1) as u8);
    }
}

fn val_byte(value: u8, len: usize) -> u8 {
    ((value - 1) << 2) | (len - 1) as u8 | 0x80
}

/// Walks the sparse opcodes after the header as `hllSparseToDense` and
/// `hllMerge` do. `Ok` when the runs cover exactly every register; a run
/// that would pass the last register makes the value corrupt (the
/// installed redis-server 7.0.15 carries the CVE-2025-32023 fix, which
/// checks every opcode, not only VAL, so trailing bytes are never ignored).
pub(crate) fn sparse_walk(bytes: &[u8], mut on_val: impl FnMut(usize, u8)) -> Result<(), Corrupt> {
    let mut at = HEADER_BYTES;
    let mut index = 0usize;
    while at < bytes.len() {
        let op = op_at(bytes, at);
        if index + op.span() > REGISTERS_COUNT {
            return Err(Corrupt);
        }
        if let Op::Val(value, len) = op {
            (index..index + len).for_each(|i| on_val(i, value));
        }
        index += op.span();
        at += op.bytes_count();
    }
    match index == REGISTERS_COUNT {
        true => Ok(()),
        false => Err(Corrupt),
    }
}

/// The sparse representation is not a valid one (`INVALIDOBJ`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Corrupt;

/// `hllSparseToDense`: the dense value (header copied, cache included), or
/// the value itself when it is dense already.
pub(crate) fn to_dense(bytes: &[u8]) -> Result<Vec<u8>, Corrupt> {
    if bytes[ENCODING_AT] == ENCODING_DENSE {
        return Ok(bytes.to_vec());
    }
    let mut dense = vec![0u8; DENSE_BYTES];
    dense[..HEADER_BYTES].copy_from_slice(&bytes[..HEADER_BYTES]);
    dense[ENCODING_AT] = ENCODING_DENSE;
    sparse_walk(bytes, |i, v| dense_put(&mut dense[HEADER_BYTES..], i, v))?;
    Ok(dense)
}

/// What [`sparse_set`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SetOutcome {
    Unchanged,
    /// A register grew (the value may have turned dense).
    Raised,
    Corrupt,
    /// An XZERO cut by the end of the value: Redis writes past the string
    /// there; the model does not follow.
    Undetermined,
}

/// `hllSparseSet`: raises register `index` to `count` in a sparse value,
/// in place, promoting it to dense when `count` exceeds what VAL holds or
/// the value would pass [`SPARSE_MAX_BYTES`].
pub(crate) fn sparse_set(bytes: &mut Vec<u8>, index: usize, count: u8) -> SetOutcome {
    if count > VAL_VALUE_MAX {
        return promote(bytes, index, count);
    }
    // Step 1: the opcode covering the register.
    let mut at = HEADER_BYTES;
    let mut first = 0usize;
    let mut prev = None;
    let mut op = None;
    while at < bytes.len() {
        let here = op_at(bytes, at);
        op = Some(here);
        if index < first + here.span() {
            break;
        }
        prev = Some(at);
        at += here.bytes_count();
        first += here.span();
    }
    let Some(op) = op.filter(|_| at < bytes.len()) else {
        return SetOutcome::Corrupt;
    };
    if at + op.bytes_count() > bytes.len() {
        return SetOutcome::Undetermined;
    }
    // Step 2: the trivial updates in place, else the split sequence.
    let last = first + op.span() - 1;
    match op {
        Op::Val(old, _) if old >= count => return SetOutcome::Unchanged,
        Op::Val(_, 1) | Op::Zero(1) => {
            bytes[at] = val_byte(count, 1);
            merge_adjacent_vals(bytes, prev.unwrap_or(HEADER_BYTES));
            invalidate_cache(bytes);
            return SetOutcome::Raised;
        }
        _ => {}
    }
    let mut seq = Vec::with_capacity(5);
    match op {
        Op::Zero(_) | Op::XZero(_) => {
            if index != first {
                push_zeroes(&mut seq, index - first);
            }
            seq.push(val_byte(count, 1));
            if index != last {
                push_zeroes(&mut seq, last - index);
            }
        }
        Op::Val(old, _) => {
            if index != first {
                seq.push(val_byte(old, index - first));
            }
            seq.push(val_byte(count, 1));
            if index != last {
                seq.push(val_byte(old, last - index));
            }
        }
    }
    // Step 3: splice it in, unless the value would grow too large.
    let grows = seq.len() > op.bytes_count();
    if grows && bytes.len() + seq.len() - op.bytes_count() > SPARSE_MAX_BYTES {
        return promote(bytes, index, count);
    }
    bytes.splice(at..at + op.bytes_count(), seq);
    // Step 4.
    merge_adjacent_vals(bytes, prev.unwrap_or(HEADER_BYTES));
    invalidate_cache(bytes);
    SetOutcome::Raised
}

/// `hllSparseSet`'s step 4: from `from`, up to 5 opcodes, merges each VAL
/// with a VAL of the same value right after it while the run fits.
fn merge_adjacent_vals(bytes: &mut Vec<u8>, from: usize) {
    let mut at = from;
    let mut scans_left = 5u32;
    while at < bytes.len() && scans_left > 0 {
        scans_left -= 1;
        match op_at(bytes, at) {
            Op::XZero(_) => at += 2,
            Op::Zero(_) => at += 1,
            Op::Val(v1, len1) => {
                if at + 1 < bytes.len() {
                    if let Op::Val(v2, len2) = op_at(bytes, at + 1) {
                        if v1 == v2 && len1 + len2 <= VAL_LEN_MAX {
                            bytes[at + 1] = val_byte(v1, len1 + len2);
                            bytes.remove(at);
                            continue;
                        }
                    }
                }
                at += 1;
            }
        }
    }
}

/// `hllSparseSet`'s promote: to dense, then the dense update (the cache
/// is left as it was: the caller invalidates it).
fn promote(bytes: &mut Vec<u8>, index: usize, count: u8) -> SetOutcome {
    match to_dense(bytes) {
        Err(Corrupt) => SetOutcome::Corrupt,
        Ok(mut dense) => {
            let raised = dense_raise(&mut dense, index, count);
            debug_assert!(raised, "a promotion raises the register");
            *bytes = dense;
            SetOutcome::Raised
        }
    }
}

/// `hllAdd` on a valid HLL value.
pub(crate) fn add(bytes: &mut Vec<u8>, element: &[u8]) -> SetOutcome {
    let (index, count) = pattern(element);
    match validate(bytes) {
        Some(Encoding::Dense) => match dense_raise(bytes, index, count) {
            true => SetOutcome::Raised,
            false => SetOutcome::Unchanged,
        },
        Some(Encoding::Sparse) => sparse_set(bytes, index, count),
        None => SetOutcome::Corrupt,
    }
}

/// `hllMerge`: raises `max` to the value's registers.
pub(crate) fn merge_into(max: &mut [u8; REGISTERS_COUNT], bytes: &[u8]) -> Result<(), Corrupt> {
    if bytes[ENCODING_AT] == ENCODING_DENSE {
        let registers = &bytes[HEADER_BYTES..];
        for (i, m) in max.iter_mut().enumerate() {
            *m = (*m).max(dense_get(registers, i));
        }
        return Ok(());
    }
    sparse_walk(bytes, |i, v| max[i] = max[i].max(v))
}

/// The register histogram of a value (`hllDenseRegHisto` or
/// `hllSparseRegHisto`); `Err` for a sparse value whose runs do not add up
/// to exactly every register.
pub(crate) fn histogram(bytes: &[u8]) -> Result<[u64; 64], Corrupt> {
    let mut histo = [0u64; 64];
    if bytes[ENCODING_AT] == ENCODING_DENSE {
        let registers = &bytes[HEADER_BYTES..];
        (0..REGISTERS_COUNT).for_each(|i| histo[usize::from(dense_get(registers, i))] += 1);
        return Ok(histo);
    }
    let mut at = HEADER_BYTES;
    let mut index = 0usize;
    while at < bytes.len() {
        let op = op_at(bytes, at);
        let value = match op {
            Op::Val(v, _) => usize::from(v),
            _ => 0,
        };
        histo[value] += op.span() as u64;
        index += op.span();
        at += op.bytes_count();
    }
    match index == REGISTERS_COUNT {
        true => Ok(histo),
        false => Err(Corrupt),
    }
}

/// PFDEBUG DECODE's text of a sparse value.
pub(crate) fn decode(bytes: &[u8]) -> String {
    let mut words = Vec::new();
    let mut at = HEADER_BYTES;
    while at < bytes.len() {
        let op = op_at(bytes, at);
        words.push(match op {
            Op::Zero(n) => format!("z:{n}"),
            Op::XZero(n) => format!("Z:{n}"),
            Op::Val(v, n) => format!("v:{v},{n}"),
        });
        at += op.bytes_count();
    }
    words.join(" ")
}
