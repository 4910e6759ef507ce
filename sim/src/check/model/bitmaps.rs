//! The reference model's bitmap commands, written from Redis 7.0's
//! `bitops.c`: SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD BITFIELD_RO on
//! the model's string bytes. Bit 0 is the most significant bit of the first
//! byte; reads past the end see zeros, writes zero-pad the string.
//!
//! Redis 7.0 checks arguments in an order that differs per command (and
//! from later versions): BITCOUNT looks the key up before it parses its
//! range (a missing key answers 0 whatever follows), BITPOS parses its bit,
//! then looks the key up, then parses its range. Offsets are bounded by
//! `proto-max-bulk-len` (512 MiB of bytes): the model predicts those errors
//! from the numbers alone, and a write that would grow a string past
//! [`MODEL_STRING_MAX_BYTES`] is not followed (the key becomes unknown) so
//! the model never allocates what a huge offset asks for.

use seedkv_engine::resp::Frame;

use super::commands::Call;
use super::redis_c::{parse_i64_strict, NOT_AN_INTEGER, SYNTAX_ERROR, WRONGTYPE};
use super::string_edges::PROTO_MAX_BULK_LEN;
use super::{Entry, Expected, KeyspaceModel, Typed, Value};

const BIT_OFFSET_ERROR: &str = "ERR bit offset is not an integer or out of range";
const BIT_VALUE_ERROR: &str = "ERR bit is not an integer or out of range";
const BITPOS_BIT_ERROR: &str = "ERR The bit argument must be 1 or 0.";
const BITOP_NOT_ERROR: &str = "ERR BITOP NOT must be called with a single source key.";
const BITFIELD_TYPE_ERROR: &str =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";
const OVERFLOW_TYPE_ERROR: &str = "ERR Invalid OVERFLOW type specified";
const BITFIELD_RO_ERROR: &str = "ERR BITFIELD_RO only supports the GET subcommand";

/// The longest string the model grows: a write needing more makes the key
/// unknown instead (Redis itself goes up to 512 MiB).
pub(crate) const MODEL_STRING_MAX_BYTES: u64 = 1 << 20;

/// Redis 7.0 arities of the bitmap commands.
pub(crate) fn arity(name: &str) -> Option<i64> {
    Some(match name {
        "setbit" => 4,
        "getbit" => 3,
        "bitcount" | "bitfield" | "bitfield_ro" => -2,
        "bitpos" => -3,
        "bitop" => -4,
        _ => return None,
    })
}

/// The keys a bitmap command names, and whether it may write them. BITOP's
/// sources count as written with its destination (callers only use the flag
/// to forget keys, which is sound).
pub(crate) fn keys<'a>(name: &str, args: &'a [Vec<u8>]) -> Option<(Vec<&'a [u8]>, bool)> {
    let first: Vec<&[u8]> = args.get(1).map(Vec::as_slice).into_iter().collect();
    Some(match name {
        "setbit" | "bitfield" => (first, true),
        "getbit" | "bitcount" | "bitpos" | "bitfield_ro" => (first, false),
        "bitop" => (args.iter().skip(2).map(Vec::as_slice).collect(), true),
        _ => return None,
    })
}

/// An argument as Redis reads it: a value, an error reply, or a corner the
/// model does not judge (C's undefined overflow).
enum Arg<T> {
    Ok(T),
    Error(&'static str),
    Unsure,
}

/// `getBitOffsetFromArgument`: a bit offset below 2^32 (512 MiB of bytes);
/// with `hash_bits`, BITFIELD's `#N` form (N fields of that width).
fn bit_offset(text: &[u8], hash_bits: Option<u32>) -> Arg<u64> {
    let (digits, multiplier) = match (text.first(), hash_bits) {
        (Some(b'#'), Some(bits)) => (&text[1..], i64::from(bits)),
        _ => (text, 1),
    };
    let Some(offset) = parse_i64_strict(digits) else {
        return Arg::Error(BIT_OFFSET_ERROR);
    };
    // Redis multiplies in C without a check: an overflow is not judged.
    let Some(offset) = offset.checked_mul(multiplier) else {
        return Arg::Unsure;
    };
    if offset < 0 || (offset >> 3) >= PROTO_MAX_BULK_LEN {
        return Arg::Error(BIT_OFFSET_ERROR);
    }
    Arg::Ok(offset as u64)
}

/// The bit at `offset` (MSB first), zero past the end.
fn bit_at(bytes: &[u8], offset: u64) -> u8 {
    let byte = usize::try_from(offset >> 3).ok().and_then(|i| bytes.get(i));
    byte.map_or(0, |b| (b >> (7 - (offset & 7))) & 1)
}

/// Sets the bit at `offset` of a string already long enough.
fn set_bit(bytes: &mut [u8], offset: u64, on: bool) {
    let mask = 1u8 << (7 - (offset & 7));
    let byte = &mut bytes[(offset >> 3) as usize];
    match on {
        true => *byte |= mask,
        false => *byte &= !mask,
    }
}

/// `bits` bits from `offset` as an unsigned number, zero past the end.
fn read_field(bytes: &[u8], offset: u64, bits: u32) -> u64 {
    debug_assert!((1..=64).contains(&bits));
    (0..u64::from(bits)).fold(0u64, |acc, j| {
        (acc << 1) | u64::from(bit_at(bytes, offset + j))
    })
}

/// Writes the low `bits` bits of `value` at `offset` (string long enough).
fn write_field(bytes: &mut [u8], offset: u64, bits: u32, value: u64) {
    for j in 0..bits {
        let on = (value >> (bits - 1 - j)) & 1 == 1;
        set_bit(bytes, offset + u64::from(j), on);
    }
}

/// Zero-pads `bytes` so that bit `max_bit` exists.
fn grow_for_bit(bytes: &mut Vec<u8>, max_bit: u64) {
    let len = (max_bit >> 3) as usize + 1;
    if bytes.len() < len {
        bytes.resize(len, 0);
    }
}

/// Whether writing bit `max_bit` of a string of `len` bytes stays within
/// what the model follows.
fn growth_followed(len: usize, max_bit: u64) -> bool {
    (max_bit >> 3) < MODEL_STRING_MAX_BYTES.max(len as u64)
}

/// Set bits among bits `first..=last` (MSB-first numbering).
fn count_ones(bytes: &[u8], first: u64, last: u64) -> i64 {
    debug_assert!(first <= last && (last >> 3) < bytes.len() as u64);
    let (first_byte, last_byte) = ((first >> 3) as usize, (last >> 3) as usize);
    let whole: u32 = bytes[first_byte..=last_byte]
        .iter()
        .map(|b| b.count_ones())
        .sum();
    let before = (first_byte as u64 * 8..first)
        .filter(|&i| bit_at(bytes, i) == 1)
        .count();
    let after = (last + 1..(last_byte as u64 + 1) * 8)
        .filter(|&i| bit_at(bytes, i) == 1)
        .count();
    i64::from(whole) - before as i64 - after as i64
}

/// BIT or BYTE (any case): whether the range counts bits.
fn range_unit(text: &[u8]) -> Option<bool> {
    match text.to_ascii_lowercase().as_slice() {
        b"bit" => Some(true),
        b"byte" => Some(false),
        _ => None,
    }
}

/// A range over `total` units (bytes or bits) with Redis's negative
/// indices: `None` when empty.
fn clamp_range(total: i64, start: i64, end: i64) -> Option<(i64, i64)> {
    let start = if start < 0 { total + start } else { start }.max(0);
    let end = if end < 0 { total + end } else { end }.max(0);
    let end = end.min(total - 1);
    (start <= end).then_some((start, end))
}

/// BITFIELD's overflow behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Overflow {
    Wrap,
    Sat,
    Fail,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FieldOp {
    Get,
    Set(i64),
    IncrBy(i64),
}

/// One parsed BITFIELD operation.
#[derive(Clone, Copy, Debug)]
struct Field {
    op: FieldOp,
    signed: bool,
    bits: u32,
    offset: u64,
    overflow: Overflow,
}

impl Field {
    fn min(&self) -> i128 {
        match self.signed {
            true => -(1i128 << (self.bits - 1)),
            false => 0,
        }
    }

    fn max(&self) -> i128 {
        match self.signed {
            true => (1i128 << (self.bits - 1)) - 1,
            false => (1i128 << self.bits) - 1,
        }
    }

    /// The field's value as stored (sign-extended when signed).
    fn read(&self, bytes: &[u8]) -> i128 {
        let raw = read_field(bytes, self.offset, self.bits);
        match self.signed && self.bits < 64 && raw >> (self.bits - 1) & 1 == 1 {
            true => i128::from(raw) - (1i128 << self.bits),
            false if self.signed => i128::from(raw as i64),
            false => i128::from(raw),
        }
    }

    /// `value` made to fit the field under its overflow mode; `None` when
    /// FAIL refuses it.
    fn fit(&self, value: i128) -> Option<i128> {
        if (self.min()..=self.max()).contains(&value) {
            return Some(value);
        }
        match self.overflow {
            Overflow::Fail => None,
            Overflow::Sat => Some(value.clamp(self.min(), self.max())),
            Overflow::Wrap => {
                let modulus = 1i128 << self.bits;
                let low = value.rem_euclid(modulus);
                Some(if low > self.max() { low - modulus } else { low })
            }
        }
    }

    /// A signed SET's value made to fit. Redis tests it with
    /// `checkSignedBitfieldOverflow(v, 0)`, whose `max - v` wraps in 64
    /// bits for a `v` far below the range: that reads as an overflow
    /// upwards, so SAT stores the maximum (i63 below -2^62, i8 below
    /// -2^63+128). Confirmed on redis-server 7.0.15.
    fn fit_signed_set(&self, v: i64) -> Option<i128> {
        let max_minus_v = self.max() - i128::from(v);
        // For i64 Redis skips that test (nothing overflows).
        if self.overflow == Overflow::Sat && self.bits < 64 && max_minus_v > i128::from(i64::MAX) {
            return Some(self.max());
        }
        self.fit(i128::from(v))
    }

    /// Runs the operation on a string grown for it: its reply.
    fn apply(&self, bytes: &mut [u8]) -> Frame {
        let old = self.read(bytes);
        let (new, reply) = match self.op {
            FieldOp::Get => return Frame::Integer(old as i64),
            // An unsigned SET takes the value's 64-bit pattern: -1 is
            // 2^64-1, which saturates to the maximum.
            FieldOp::Set(v) if !self.signed => (self.fit(i128::from(v as u64)), old),
            FieldOp::Set(v) => (self.fit_signed_set(v), old),
            FieldOp::IncrBy(by) => {
                let new = self.fit(old + i128::from(by));
                (new, new.unwrap_or(0))
            }
        };
        let Some(new) = new else {
            return Frame::Null;
        };
        write_field(bytes, self.offset, self.bits, new as u64);
        Frame::Integer(reply as i64)
    }
}

/// `getBitfieldTypeFromArgument`: `i1..i64` or `u1..u63` (lower case); the
/// width is read as a C string (up to a NUL).
fn field_type(text: &[u8]) -> Option<(bool, u32)> {
    let signed = match text.first() {
        Some(b'i') => true,
        Some(b'u') => false,
        _ => return None,
    };
    let width = &text[1..];
    let width = &width[..width.iter().position(|&b| b == 0).unwrap_or(width.len())];
    let bits = parse_i64_strict(width)?;
    let max = if signed { 64 } else { 63 };
    (1..=max).contains(&bits).then_some((signed, bits as u32))
}

/// BITFIELD's operations in order, parsed as `bitfieldGeneric` does (the
/// first bad argument's error wins).
fn parse_fields(args: &[Vec<u8>]) -> Arg<Vec<Field>> {
    let mut fields = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut j = 2;
    while j < args.len() {
        let remaining = args.len() - j - 1;
        let sub = args[j].to_ascii_lowercase();
        let (wanted, op) = match sub.as_slice() {
            b"get" => (2, FieldOp::Get),
            b"set" => (3, FieldOp::Set(0)),
            b"incrby" => (3, FieldOp::IncrBy(0)),
            b"overflow" if remaining >= 1 => {
                overflow = match args[j + 1].to_ascii_lowercase().as_slice() {
                    b"wrap" => Overflow::Wrap,
                    b"sat" => Overflow::Sat,
                    b"fail" => Overflow::Fail,
                    _ => return Arg::Error(OVERFLOW_TYPE_ERROR),
                };
                j += 2;
                continue;
            }
            _ => return Arg::Error(SYNTAX_ERROR),
        };
        if remaining < wanted {
            return Arg::Error(SYNTAX_ERROR);
        }
        let Some((signed, bits)) = field_type(&args[j + 1]) else {
            return Arg::Error(BITFIELD_TYPE_ERROR);
        };
        let offset = match bit_offset(&args[j + 2], Some(bits)) {
            Arg::Ok(offset) => offset,
            Arg::Error(e) => return Arg::Error(e),
            Arg::Unsure => return Arg::Unsure,
        };
        let op = match op {
            FieldOp::Get => FieldOp::Get,
            _ => {
                let Some(v) = parse_i64_strict(&args[j + 3]) else {
                    return Arg::Error(NOT_AN_INTEGER);
                };
                match op {
                    FieldOp::Set(_) => FieldOp::Set(v),
                    _ => FieldOp::IncrBy(v),
                }
            }
        };
        fields.push(Field {
            op,
            signed,
            bits,
            offset,
            overflow,
        });
        j += 1 + wanted;
    }
    Arg::Ok(fields)
}

impl KeyspaceModel {
    pub(crate) fn bitmap_command(&mut self, c: &Call) -> Expected {
        match c.name {
            "setbit" => self.setbit(c),
            "getbit" => self.getbit(c),
            "bitcount" => self.bitcount(c),
            "bitpos" => self.bitpos(c),
            "bitop" => self.bitop(c),
            "bitfield" | "bitfield_ro" => self.bitfield(c),
            _ => unreachable!("not a bitmap command: {}", c.name),
        }
    }

    fn getbit(&mut self, c: &Call) -> Expected {
        let offset = match bit_offset(&c.args[2], None) {
            Arg::Ok(offset) => offset,
            Arg::Error(e) => return Expected::error(e),
            Arg::Unsure => unreachable!("no # form"),
        };
        match self.read_as(c.db, c.key(), c.now, Value::as_str) {
            Typed::Unknown => Expected::Unpredictable,
            Typed::WrongType => Expected::error(WRONGTYPE),
            Typed::Absent => Expected::integer(0),
            Typed::Found(bytes) => Expected::integer(i64::from(bit_at(bytes, offset))),
        }
    }

    /// Replies the old bit; the TTL survives.
    fn setbit(&mut self, c: &Call) -> Expected {
        let offset = match bit_offset(&c.args[2], None) {
            Arg::Ok(offset) => offset,
            Arg::Error(e) => return Expected::error(e),
            Arg::Unsure => unreachable!("no # form"),
        };
        let on = match parse_i64_strict(&c.args[3]) {
            Some(0) => false,
            Some(1) => true,
            _ => return Expected::error(BIT_VALUE_ERROR),
        };
        let (db, key) = (c.db, c.key());
        let bytes = match self.write_as(db, key, c.now, Value::as_str_mut) {
            Typed::Unknown => {
                self.forget_key(db, key);
                return Expected::Unpredictable;
            }
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Absent => None,
            Typed::Found(bytes) => Some(bytes),
        };
        let len = bytes.as_ref().map_or(0, |b| b.len());
        let old = bytes.as_ref().map_or(0, |b| bit_at(b, offset));
        if !growth_followed(len, offset) {
            self.forget_key(db, key);
            return Expected::integer(i64::from(old));
        }
        match bytes {
            Some(bytes) => {
                grow_for_bit(bytes, offset);
                set_bit(bytes, offset, on);
            }
            None => {
                let mut bytes = Vec::new();
                grow_for_bit(&mut bytes, offset);
                set_bit(&mut bytes, offset, on);
                self.store(db, key, Entry::string(bytes));
            }
        }
        Expected::integer(i64::from(old))
    }

    /// Redis 7.0 looks the key up first: a missing key counts 0 whatever
    /// the arguments.
    fn bitcount(&mut self, c: &Call) -> Expected {
        let bytes = match self.read_as(c.db, c.key(), c.now, Value::as_str) {
            Typed::Unknown => return Expected::Unpredictable,
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Absent => return Expected::integer(0),
            Typed::Found(bytes) => bytes,
        };
        let len = bytes.len() as i64;
        let (start, end, in_bits) = match c.args.len() {
            2 => (0, len - 1, false),
            4 | 5 => {
                let (Some(start), Some(end)) =
                    (parse_i64_strict(&c.args[2]), parse_i64_strict(&c.args[3]))
                else {
                    return Expected::error(NOT_AN_INTEGER);
                };
                if start < 0 && end < 0 && start > end {
                    return Expected::integer(0);
                }
                let in_bits = match c.args.get(4).map(|u| range_unit(u)) {
                    None => false,
                    Some(Some(in_bits)) => in_bits,
                    Some(None) => return Expected::error(SYNTAX_ERROR),
                };
                (start, end, in_bits)
            }
            _ => return Expected::error(SYNTAX_ERROR),
        };
        let total = if in_bits { len * 8 } else { len };
        let Some((start, end)) = clamp_range(total, start, end) else {
            return Expected::integer(0);
        };
        let (first, last) = match in_bits {
            true => (start as u64, end as u64),
            false => (start as u64 * 8, end as u64 * 8 + 7),
        };
        Expected::integer(count_ones(bytes, first, last))
    }

    /// Redis 7.0 parses the bit, looks the key up, then parses the range.
    fn bitpos(&mut self, c: &Call) -> Expected {
        let bit = match parse_i64_strict(&c.args[2]) {
            None => return Expected::error(NOT_AN_INTEGER),
            Some(b @ (0 | 1)) => b as u8,
            Some(_) => return Expected::error(BITPOS_BIT_ERROR),
        };
        let bytes = match self.read_as(c.db, c.key(), c.now, Value::as_str) {
            Typed::Unknown => return Expected::Unpredictable,
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Absent => return Expected::integer(if bit == 1 { -1 } else { 0 }),
            Typed::Found(bytes) => bytes,
        };
        let len = bytes.len() as i64;
        let (start, end, in_bits, end_given) = match c.args.len() {
            3 => (0, len - 1, false, false),
            4..=6 => {
                let Some(start) = parse_i64_strict(&c.args[3]) else {
                    return Expected::error(NOT_AN_INTEGER);
                };
                let in_bits = match c.args.get(5).map(|u| range_unit(u)) {
                    None => false,
                    Some(Some(in_bits)) => in_bits,
                    Some(None) => return Expected::error(SYNTAX_ERROR),
                };
                match c.args.get(4).map(|e| parse_i64_strict(e)) {
                    Some(None) => return Expected::error(NOT_AN_INTEGER),
                    Some(Some(end)) => (start, end, in_bits, true),
                    // Without an end BIT cannot be given: BYTE to the end.
                    None => (start, len - 1, false, false),
                }
            }
            _ => return Expected::error(SYNTAX_ERROR),
        };
        let total = if in_bits { len * 8 } else { len };
        let Some((start, end)) = clamp_range(total, start, end) else {
            return Expected::integer(-1);
        };
        let (first, last) = match in_bits {
            true => (start as u64, end as u64),
            false => (start as u64 * 8, end as u64 * 8 + 7),
        };
        match (first..=last).find(|&i| bit_at(bytes, i) == bit) {
            Some(pos) => Expected::integer(pos as i64),
            // Looking for a clear bit without an end: the string is taken
            // as zero-padded, so the first bit past it.
            None if bit == 0 && !end_given => Expected::integer(last as i64 + 1),
            None => Expected::integer(-1),
        }
    }

    /// The destination is replaced (its TTL dropped) by the result, or
    /// deleted when every source is empty; replies the result's length.
    fn bitop(&mut self, c: &Call) -> Expected {
        #[derive(Clone, Copy, PartialEq)]
        enum Op {
            And,
            Or,
            Xor,
            Not,
        }
        let op = match c.args[1].to_ascii_lowercase().as_slice() {
            b"and" => Op::And,
            b"or" => Op::Or,
            b"xor" => Op::Xor,
            b"not" => Op::Not,
            _ => return Expected::error(SYNTAX_ERROR),
        };
        if op == Op::Not && c.args.len() != 4 {
            return Expected::error(BITOP_NOT_ERROR);
        }
        let (db, dest) = (c.db, &c.args[2]);
        let mut sources: Vec<Vec<u8>> = Vec::with_capacity(c.args.len() - 3);
        for key in &c.args[3..] {
            match self.read_as(db, key, c.now, Value::as_str) {
                Typed::Unknown => {
                    // Maybe another type (an error), maybe a write.
                    self.forget_key(db, dest);
                    return Expected::Unpredictable;
                }
                Typed::WrongType => return Expected::error(WRONGTYPE),
                Typed::Absent => sources.push(Vec::new()),
                Typed::Found(bytes) => sources.push(bytes.clone()),
            }
        }
        let max_len = sources.iter().map(Vec::len).max().unwrap_or(0);
        if max_len == 0 {
            self.remove(db, dest);
            return Expected::integer(0);
        }
        let byte = |s: &Vec<u8>, j: usize| s.get(j).copied().unwrap_or(0);
        let result: Vec<u8> =
            (0..max_len)
                .map(|j| {
                    let first = byte(&sources[0], j);
                    sources[1..].iter().fold(
                        if op == Op::Not { !first } else { first },
                        |acc, s| match op {
                            Op::And => acc & byte(s, j),
                            Op::Or => acc | byte(s, j),
                            Op::Xor => acc ^ byte(s, j),
                            Op::Not => unreachable!("NOT has one source"),
                        },
                    )
                })
                .collect();
        self.store(db, dest, Entry::string(result));
        Expected::integer(max_len as i64)
    }

    /// BITFIELD and BITFIELD_RO: GETs only read; any SET or INCRBY grows
    /// (or creates) the string for its farthest bit first, even when every
    /// write then fails; the TTL survives.
    fn bitfield(&mut self, c: &Call) -> Expected {
        let (db, key) = (c.db, c.key());
        let fields = match parse_fields(c.args) {
            Arg::Ok(fields) => fields,
            Arg::Error(e) => return Expected::error(e),
            Arg::Unsure => {
                self.forget_key(db, key);
                return Expected::Unpredictable;
            }
        };
        let max_bit = fields
            .iter()
            .filter(|f| f.op != FieldOp::Get)
            .map(|f| f.offset + u64::from(f.bits) - 1)
            .max();
        let Some(max_bit) = max_bit else {
            return match self.read_as(db, key, c.now, Value::as_str) {
                Typed::Unknown => Expected::Unpredictable,
                Typed::WrongType => Expected::error(WRONGTYPE),
                Typed::Absent => read_replies(&fields, &[]),
                Typed::Found(bytes) => read_replies(&fields, bytes),
            };
        };
        if c.name == "bitfield_ro" {
            return Expected::error(BITFIELD_RO_ERROR);
        }
        let bytes = match self.write_as(db, key, c.now, Value::as_str_mut) {
            Typed::Unknown => {
                self.forget_key(db, key);
                return Expected::Unpredictable;
            }
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Absent => None,
            Typed::Found(bytes) => Some(bytes),
        };
        if !growth_followed(bytes.as_ref().map_or(0, |b| b.len()), max_bit) {
            self.forget_key(db, key);
            return Expected::Unpredictable;
        }
        match bytes {
            Some(bytes) => {
                grow_for_bit(bytes, max_bit);
                field_replies(&fields, bytes)
            }
            None => {
                let mut bytes = Vec::new();
                grow_for_bit(&mut bytes, max_bit);
                let expected = field_replies(&fields, &mut bytes);
                self.store(db, key, Entry::string(bytes));
                expected
            }
        }
    }
}

/// The replies of GETs only, which change nothing.
fn read_replies(fields: &[Field], bytes: &[u8]) -> Expected {
    debug_assert!(fields.iter().all(|f| f.op == FieldOp::Get));
    let read = |f: &Field| Frame::Integer(f.read(bytes) as i64);
    Expected::Exactly(Frame::Array(fields.iter().map(read).collect()))
}

/// Runs the operations in order on `bytes`: the array of their replies.
fn field_replies(fields: &[Field], bytes: &mut [u8]) -> Expected {
    Expected::Exactly(Frame::Array(
        fields.iter().map(|f| f.apply(bytes)).collect(),
    ))
}

#[cfg(test)]
mod tests;
