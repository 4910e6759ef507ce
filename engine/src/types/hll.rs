//! HyperLogLog, byte for byte as Redis 7.0 stores it (`hyperloglog.c`), so
//! that a value written by one server (SET, RESTORE, replication) is read by
//! the other and PFCOUNT gives the same number for the same inputs.
//!
//! # The value
//!
//! An HLL is a plain string value. It starts with a 16-byte header:
//!
//! ```text
//! +------+---+-----+----------+
//! | HYLL | E | N/U | Cardin.  |      E: 0 dense, 1 sparse; N/U: 3 zero bytes
//! +------+---+-----+----------+      Cardin.: u64 little endian
//! ```
//!
//! The cached cardinality is valid while the top bit of its last byte is
//! clear; every change to the registers sets that bit, and PFCOUNT writes a
//! fresh value back (so even PFCOUNT modifies the string).
//!
//! # Registers
//!
//! 16384 registers (P = 14) of 6 bits each. An element is hashed with
//! MurmurHash64A (seed `0xadc83b19`): the low 14 bits pick the register,
//! and the register keeps the longest "000..1" run seen in the remaining
//! 50 bits, counted from their least significant bit and including the 1
//! (so 1..=51). Two encodings hold them:
//!
//! - **dense**: 12288 bytes after the header, register `i` at bit `6*i`,
//!   packed from each byte's least significant bit up:
//!   `|11000000|22221111|33333322|` (register 0 is the low 6 bits of byte
//!   0, register 1 its top 2 bits and the low 4 of byte 1, ...).
//! - **sparse**: a run-length code of three opcodes, purely positional:
//!   `00xxxxxx` ZERO (1..=64 zero registers), `01xxxxxx yyyyyyyy` XZERO
//!   (1..=16384 zero registers, 14-bit length), `1vvvvvxx` VAL (value
//!   1..=32 repeated 1..=4 times). Lengths and values are stored minus
//!   one. An empty HLL is `XZERO:16384`. For example registers 1000, 1020
//!   and 1021 set to 2, 3 and 3 read `XZERO:1000 VAL:2,1 ZERO:19 VAL:3,2
//!   XZERO:15362`.
//!
//! PFADD creates sparse HLLs. One is promoted to dense when a register
//! needs a value above 32, or when an update would grow the string past
//! `hll-sparse-max-bytes` (header included). Redis's in-place sparse update
//! (split the opcode covering the register, then merge equal neighbouring
//! VALs within five opcodes) is reproduced exactly, because the resulting
//! bytes are visible to GET and DUMP.
//!
//! # The estimate
//!
//! Redis 7.0 uses Otmar Ertl's estimator ("New cardinality estimation
//! algorithms for HyperLogLog sketches", arXiv:1702.01284) over the
//! histogram of register values; see [`count`]. Registers above 51 (only
//! possible in a hand-made dense string) are ignored, as in Redis.

/// Header bytes before the registers.
pub const HDR_BYTES: usize = 16;
/// log2 of the number of registers.
const P: u32 = 14;
/// Hash bits left for the run of zeros.
const Q: usize = 64 - P as usize;
/// Number of registers.
pub const REGISTERS: usize = 1 << P;
const BITS: usize = 6;
const REGISTER_MAX: u8 = (1 << BITS) - 1;
/// The length of a dense HLL string.
pub const DENSE_BYTES: usize = HDR_BYTES + (REGISTERS * BITS).div_ceil(8);
const DENSE: u8 = 0;
const SPARSE: u8 = 1;
const ENCODING_MAX: u8 = SPARSE;
/// Byte offset of the encoding in the header.
const ENCODING_AT: usize = 4;
/// Byte offset of the cached cardinality in the header.
const CARD_AT: usize = 8;

const SPARSE_VAL_MAX_VALUE: u8 = 32;
const SPARSE_VAL_MAX_LEN: usize = 4;
const SPARSE_ZERO_MAX_LEN: usize = 64;
const SPARSE_XZERO_MAX_LEN: usize = 16384;

/// `0.5 / ln 2`, the estimator's alpha for an infinite number of registers.
const ALPHA_INF: f64 = 0.721_347_520_444_481_7;

/// Work units: one per 64 registers decoded or 64 bytes of opcodes
/// scanned (as strings count one element per 64 bytes), so reading a
/// whole dense HLL costs [`DENSE_SCAN_UNITS`].
const REGISTERS_PER_UNIT: usize = 64;
pub const DENSE_SCAN_UNITS: u64 = (REGISTERS / REGISTERS_PER_UNIT) as u64;
/// A histogram of plain byte registers (PFCOUNT's union) is a byte loop.
pub const RAW_SCAN_UNITS: u64 = (REGISTERS / 1024) as u64;

/// Bound on the estimator's series loops; they converge in well under 100
/// steps for every histogram, the bound only guards against a NaN.
const SERIES_STEPS_MAX: usize = 4096;

/// The value is a string that is not an HLL (Redis's `isHLLObjectOrReply`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotHll;

/// The sparse representation does not describe exactly 16384 registers
/// (Redis's INVALIDOBJ).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Corrupt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Dense,
    Sparse,
}

/// Checks the header as Redis does: the magic, a known encoding, and the
/// exact length of a dense HLL. A sparse body is only checked when read.
pub fn validate(bytes: &[u8]) -> Result<Encoding, NotHll> {
    if bytes.len() < HDR_BYTES || &bytes[..4] != b"HYLL" || bytes[ENCODING_AT] > ENCODING_MAX {
        return Err(NotHll);
    }
    if bytes[ENCODING_AT] == DENSE {
        if bytes.len() != DENSE_BYTES {
            return Err(NotHll);
        }
        return Ok(Encoding::Dense);
    }
    Ok(Encoding::Sparse)
}

/// A new, empty HLL: sparse, `XZERO:16384`, cached cardinality 0.
pub fn new_sparse() -> Vec<u8> {
    let mut s = vec![0u8; HDR_BYTES];
    s[..4].copy_from_slice(b"HYLL");
    s[ENCODING_AT] = SPARSE;
    push_xzero(&mut s, REGISTERS);
    s
}

/// The cached cardinality, if valid.
pub fn cached_card(bytes: &[u8]) -> Option<u64> {
    let card = u64::from_le_bytes(bytes[CARD_AT..CARD_AT + 8].try_into().expect("8 bytes"));
    (card >> 63 == 0).then_some(card)
}

pub fn set_cached_card(bytes: &mut [u8], card: u64) {
    bytes[CARD_AT..CARD_AT + 8].copy_from_slice(&card.to_le_bytes());
}

pub fn invalidate_cache(bytes: &mut [u8]) {
    bytes[CARD_AT + 7] |= 1 << 7;
}

// ---------------------------------------------------------------- hashing

/// MurmurHash2, 64-bit version (Redis's endian-neutral variant).
pub fn murmur64a(key: &[u8], seed: u32) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    // Redis passes the length as an int and multiplies it as a u64.
    let mut h = u64::from(seed) ^ ((key.len() as i32 as i64 as u64).wrapping_mul(M));
    let mut chunks = key.chunks_exact(8);
    for chunk in &mut chunks {
        let mut k = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// The register an element maps to and the length of its "000..1" run.
pub fn pat_len(element: &[u8]) -> (usize, u8) {
    let hash = murmur64a(element, 0xadc8_3b19);
    let index = (hash & (REGISTERS as u64 - 1)) as usize;
    // The sentinel bit makes the run at most Q + 1 long.
    let rest = (hash >> P) | (1u64 << Q);
    (index, rest.trailing_zeros() as u8 + 1)
}

// ------------------------------------------------------------------ dense

/// Register `i` of a dense body (`regs` starts after the header). The
/// last register's "next byte" is the string's terminator in Redis: zero.
pub fn dense_get(regs: &[u8], i: usize) -> u8 {
    let byte = i * BITS / 8;
    let fb = (i * BITS) & 7;
    let b0 = u16::from(regs[byte]);
    let b1 = u16::from(regs.get(byte + 1).copied().unwrap_or(0));
    (((b0 >> fb) | (b1 << (8 - fb))) as u8) & REGISTER_MAX
}

pub fn dense_set(regs: &mut [u8], i: usize, value: u8) {
    let byte = i * BITS / 8;
    let fb = (i * BITS) & 7;
    let v = u16::from(value);
    regs[byte] &= !((u16::from(REGISTER_MAX) << fb) as u8);
    regs[byte] |= (v << fb) as u8;
    if let Some(next) = regs.get_mut(byte + 1) {
        *next &= !(u16::from(REGISTER_MAX) >> (8 - fb)) as u8;
        *next |= (v >> (8 - fb)) as u8;
    }
}

/// Raises register `i` to `count`; whether it changed.
fn dense_raise(regs: &mut [u8], i: usize, count: u8) -> bool {
    if count > dense_get(regs, i) {
        dense_set(regs, i, count);
        true
    } else {
        false
    }
}

// ----------------------------------------------------------------- sparse

fn is_zero(op: u8) -> bool {
    op & 0xc0 == 0
}
fn is_xzero(op: u8) -> bool {
    op & 0xc0 == 0x40
}
fn is_val(op: u8) -> bool {
    op & 0x80 != 0
}
fn zero_len(op: u8) -> usize {
    usize::from(op & 0x3f) + 1
}
/// XZERO's length; a truncated XZERO reads Redis's terminating zero byte.
fn xzero_len(op: u8, next: Option<u8>) -> usize {
    ((usize::from(op & 0x3f) << 8) | usize::from(next.unwrap_or(0))) + 1
}
fn val_value(op: u8) -> u8 {
    ((op >> 2) & 0x1f) + 1
}
fn val_len(op: u8) -> usize {
    usize::from(op & 0x3) + 1
}
fn val_op(value: u8, len: usize) -> u8 {
    debug_assert!((1..=SPARSE_VAL_MAX_VALUE).contains(&value));
    debug_assert!((1..=SPARSE_VAL_MAX_LEN).contains(&len));
    0x80 | ((value - 1) << 2) | (len as u8 - 1)
}
fn push_zeros(out: &mut Vec<u8>, len: usize) {
    if len > SPARSE_ZERO_MAX_LEN {
        push_xzero(out, len);
    } else {
        out.push(len as u8 - 1);
    }
}
fn push_xzero(out: &mut Vec<u8>, len: usize) {
    debug_assert!((1..=SPARSE_XZERO_MAX_LEN).contains(&len));
    let l = len - 1;
    out.push(0x40 | (l >> 8) as u8);
    out.push((l & 0xff) as u8);
}

/// One sparse opcode: the registers it covers (with their value) and its
/// length in bytes.
#[derive(Clone, Copy)]
struct Op {
    value: u8,
    span: usize,
    bytes: usize,
}

fn op_at(s: &[u8], at: usize) -> Op {
    let op = s[at];
    if is_zero(op) {
        Op {
            value: 0,
            span: zero_len(op),
            bytes: 1,
        }
    } else if is_xzero(op) {
        Op {
            value: 0,
            span: xzero_len(op, s.get(at + 1).copied()),
            bytes: 2,
        }
    } else {
        Op {
            value: val_value(op),
            span: val_len(op),
            bytes: 1,
        }
    }
}

/// Redis's `hllSparseToDense`: the dense string with the same header.
fn sparse_to_dense(s: &[u8]) -> Result<Vec<u8>, Corrupt> {
    let mut dense = vec![0u8; DENSE_BYTES];
    dense[..HDR_BYTES].copy_from_slice(&s[..HDR_BYTES]);
    dense[ENCODING_AT] = DENSE;
    let regs = &mut dense[HDR_BYTES..];
    let mut idx = 0usize;
    let mut at = HDR_BYTES;
    while at < s.len() {
        let op = op_at(s, at);
        // Any run past the last register is corruption (the
        // CVE-2025-32023 fix in redis-server 7.0.15 as shipped checks
        // zero runs too, and no longer accepts a VAL cut off at the end).
        if op.span + idx > REGISTERS {
            return Err(Corrupt);
        }
        if op.value > 0 {
            for r in idx..idx + op.span {
                dense_set(regs, r, op.value);
            }
        }
        idx += op.span;
        at += op.bytes;
    }
    if idx != REGISTERS {
        return Err(Corrupt);
    }
    Ok(dense)
}

/// Converts a sparse HLL to dense in place (PFDEBUG TODENSE, PFMERGE);
/// whether it was sparse.
pub fn make_dense(s: &mut Vec<u8>) -> Result<bool, Corrupt> {
    if s[ENCODING_AT] == DENSE {
        return Ok(false);
    }
    *s = sparse_to_dense(s)?;
    Ok(true)
}

/// Redis's `hllSparseSet`: raises register `index` to `count` in a sparse
/// HLL, promoting it to dense when needed. Returns whether it changed and
/// the work: the opcode bytes scanned, plus a promotion's.
fn sparse_raise(
    s: &mut Vec<u8>,
    index: usize,
    count: u8,
    max_bytes: usize,
) -> Result<(bool, u64), Corrupt> {
    if count > SPARSE_VAL_MAX_VALUE {
        let work = promotion_units(s);
        return promote(s, index, count).map(|changed| (changed, work));
    }
    // Step 1: find the opcode covering `index`.
    let mut first = 0usize;
    let mut prev = None;
    let mut at = HDR_BYTES;
    let mut found = None;
    while at < s.len() {
        let op = op_at(s, at);
        if index < first + op.span {
            found = Some(op);
            break;
        }
        prev = Some(at);
        at += op.bytes;
        first += op.span;
    }
    let scanned = ((at - HDR_BYTES) / REGISTERS_PER_UNIT) as u64;
    let Some(op) = found else {
        return Err(Corrupt);
    };
    let next = at + op.bytes;
    let next = (next < s.len()).then_some(next);
    // Step 2: the cases that update one byte in place.
    if op.value > 0 {
        if op.value >= count {
            return Ok((false, scanned));
        }
        if op.span == 1 {
            s[at] = val_op(count, 1);
            merge_vals(s, prev.unwrap_or(HDR_BYTES));
            return Ok((true, scanned));
        }
    }
    if op.bytes == 1 && op.value == 0 && op.span == 1 {
        s[at] = val_op(count, 1);
        merge_vals(s, prev.unwrap_or(HDR_BYTES));
        return Ok((true, scanned));
    }
    // The general case: split the opcode into up to three.
    let last = first + op.span - 1;
    let mut seq = Vec::with_capacity(5);
    if op.value == 0 {
        if index != first {
            push_zeros(&mut seq, index - first);
        }
        seq.push(val_op(count, 1));
        if index != last {
            push_zeros(&mut seq, last - index);
        }
    } else {
        if index != first {
            seq.push(val_op(op.value, index - first));
        }
        seq.push(val_op(count, 1));
        if index != last {
            seq.push(val_op(op.value, last - index));
        }
    }
    // Step 3: splice it in, unless that grows the string past the limit.
    let grown = seq.len() as isize - op.bytes as isize;
    if grown > 0 && s.len() + grown as usize > max_bytes {
        let work = scanned + promotion_units(s);
        return promote(s, index, count).map(|changed| (changed, work));
    }
    match next {
        Some(next) => {
            s.splice(at..next, seq);
        }
        None => {
            // The last opcode: Redis writes the sequence at its place and
            // sets the length to the old one plus the difference.
            let new_len = (s.len() as isize + grown) as usize;
            s.truncate(at);
            s.extend_from_slice(&seq);
            s.truncate(new_len);
        }
    }
    // Step 4: merge equal adjacent VALs around the change.
    merge_vals(s, prev.unwrap_or(HDR_BYTES));
    Ok((true, scanned))
}

/// Redis's step 4 of `hllSparseSet`: from `at`, over at most five opcodes,
/// merges adjacent VAL opcodes of the same value whose lengths fit one.
fn merge_vals(s: &mut Vec<u8>, mut at: usize) {
    let mut steps = 5;
    while at < s.len() && steps > 0 {
        steps -= 1;
        let op = s[at];
        if is_xzero(op) {
            at += 2;
            continue;
        }
        if is_zero(op) {
            at += 1;
            continue;
        }
        if at + 1 < s.len() && is_val(s[at + 1]) {
            let (a, b) = (op, s[at + 1]);
            let len = val_len(a) + val_len(b);
            if val_value(a) == val_value(b) && len <= SPARSE_VAL_MAX_LEN {
                s[at + 1] = val_op(val_value(a), len);
                s.remove(at);
                continue;
            }
        }
        at += 1;
    }
}

/// Work units of converting a sparse HLL to dense: its bytes, and every
/// register of the dense one.
pub fn promotion_units(s: &[u8]) -> u64 {
    (s.len() / REGISTERS_PER_UNIT) as u64 + DENSE_SCAN_UNITS
}

/// The promotion at the end of `hllSparseSet`: to dense, then the update.
fn promote(s: &mut Vec<u8>, index: usize, count: u8) -> Result<bool, Corrupt> {
    *s = sparse_to_dense(s)?;
    Ok(dense_raise(&mut s[HDR_BYTES..], index, count))
}

// ------------------------------------------------------------- the value

/// Raises register `index` to `count` in a valid HLL of either encoding;
/// whether it changed, and the work units (none for dense, the opcode
/// bytes scanned for sparse, and a promotion's).
pub fn raise(
    s: &mut Vec<u8>,
    index: usize,
    count: u8,
    sparse_max_bytes: usize,
) -> Result<(bool, u64), Corrupt> {
    if s[ENCODING_AT] == DENSE {
        return Ok((dense_raise(&mut s[HDR_BYTES..], index, count), 0));
    }
    sparse_raise(s, index, count, sparse_max_bytes)
}

/// Adds an element (PFADD); whether a register changed, and the work.
pub fn add(
    s: &mut Vec<u8>,
    element: &[u8],
    sparse_max_bytes: usize,
) -> Result<(bool, u64), Corrupt> {
    let (index, count) = pat_len(element);
    let (changed, units) = raise(s, index, count, sparse_max_bytes)?;
    Ok((changed, 1 + units))
}

/// Redis's `hllMerge`: `max[i] = max(max[i], register i)` over a valid HLL.
pub fn merge_into(max: &mut [u8; REGISTERS], s: &[u8]) -> Result<(), Corrupt> {
    if s[ENCODING_AT] == DENSE {
        let regs = &s[HDR_BYTES..];
        for (i, m) in max.iter_mut().enumerate() {
            *m = (*m).max(dense_get(regs, i));
        }
        return Ok(());
    }
    let mut i = 0usize;
    let mut at = HDR_BYTES;
    while at < s.len() {
        let op = op_at(s, at);
        // As in `sparse_to_dense`: a run past the last register is corrupt.
        if op.span + i > REGISTERS {
            return Err(Corrupt);
        }
        if op.value > 0 {
            for m in &mut max[i..i + op.span] {
                *m = (*m).max(op.value);
            }
        }
        i += op.span;
        at += op.bytes;
    }
    if i != REGISTERS {
        return Err(Corrupt);
    }
    Ok(())
}

/// The histogram of register values of a valid HLL; `Err` for a sparse
/// body that does not cover exactly 16384 registers.
fn histogram(s: &[u8]) -> Result<[u64; 64], Corrupt> {
    let mut h = [0u64; 64];
    if s[ENCODING_AT] == DENSE {
        let regs = &s[HDR_BYTES..];
        for i in 0..REGISTERS {
            h[usize::from(dense_get(regs, i))] += 1;
        }
        return Ok(h);
    }
    let mut idx = 0usize;
    let mut at = HDR_BYTES;
    while at < s.len() {
        let op = op_at(s, at);
        idx += op.span;
        h[usize::from(op.value)] += op.span as u64;
        at += op.bytes;
    }
    if idx != REGISTERS {
        return Err(Corrupt);
    }
    Ok(h)
}

/// The histogram of an array of registers (PFCOUNT over several keys).
pub fn raw_histogram(regs: &[u8; REGISTERS]) -> [u64; 64] {
    let mut h = [0u64; 64];
    for &r in regs {
        h[usize::from(r & 63)] += 1;
    }
    h
}

/// Work units of reading every register of `s` (count, merge).
pub fn scan_units(s: &[u8]) -> u64 {
    match s[ENCODING_AT] {
        DENSE => DENSE_SCAN_UNITS,
        _ => 1 + (s.len() / REGISTERS_PER_UNIT) as u64,
    }
}

/// The estimate of a valid HLL (not using the cache).
pub fn count(s: &[u8]) -> Result<u64, Corrupt> {
    Ok(estimate(&histogram(s)?))
}

/// Ertl's estimator as Redis 7.0's `hllCount` computes it, operation for
/// operation (the result must match to the last bit).
pub fn estimate(h: &[u64; 64]) -> u64 {
    let m = REGISTERS as f64;
    let mut z = m * tau((m - h[Q + 1] as f64) / m);
    for j in (1..=Q).rev() {
        z += h[j] as f64;
        z *= 0.5;
    }
    z += m * sigma(h[0] as f64 / m);
    let e = ALPHA_INF * m * m / z;
    // `llroundl`, then a cast to u64; out of range (an all-51 histogram
    // divides by zero) x86 gives the "integer indefinite" value.
    let rounded = e.round();
    if rounded.is_finite() && rounded >= i64::MIN as f64 && rounded < i64::MAX as f64 {
        rounded as i64 as u64
    } else {
        i64::MIN as u64
    }
}

fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    for _ in 0..SERIES_STEPS_MAX {
        x *= x;
        let z_prev = z;
        z += x * y;
        y += y;
        if z_prev == z {
            break;
        }
    }
    z
}

fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    for _ in 0..SERIES_STEPS_MAX {
        x = x.sqrt();
        let z_prev = z;
        y *= 0.5;
        // `pow(1 - x, 2)`, which compilers emit as this multiplication.
        z -= (1.0 - x) * (1.0 - x) * y;
        if z_prev == z {
            break;
        }
    }
    z / 3.0
}

/// PFDEBUG DECODE's text of a sparse body: `Z:n`, `z:n` and `v:value,len`.
pub fn decode_sparse(s: &[u8]) -> String {
    let mut out = Vec::new();
    let mut at = HDR_BYTES;
    while at < s.len() {
        let op = op_at(s, at);
        out.push(if op.value > 0 {
            format!("v:{},{}", op.value, op.span)
        } else if op.bytes == 2 {
            format!("Z:{}", op.span)
        } else {
            format!("z:{}", op.span)
        });
        at += op.bytes;
    }
    out.join(" ")
}

/// The 16384 registers of a dense HLL.
pub fn dense_registers(s: &[u8]) -> impl Iterator<Item = u8> + '_ {
    let regs = &s[HDR_BYTES..];
    (0..REGISTERS).map(move |i| dense_get(regs, i))
}

#[cfg(test)]
mod tests;
