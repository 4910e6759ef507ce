//! BITFIELD and BITFIELD_RO: integers of 1 to 64 bits (signed `i1`..`i64`,
//! unsigned `u1`..`u63`) read and written at any bit offset of a string,
//! most significant bit first.
//!
//! The whole request is parsed before anything runs (so a bad argument
//! anywhere fails it all), then the string is created or padded to the
//! farthest bit any SET or INCRBY writes, then the operations run in order.
//! `OVERFLOW WRAP|SAT|FAIL` applies to the SETs and INCRBYs after it:
//! wrapping (two's complement), saturating at the type's limits, or
//! refusing the write, whose reply is then nil.

use super::{
    bit_position, c_str, is_keyword, parse_bit_offset, string_for_write, WrongType, BAD_OFFSET,
    BITMAP, NOT_AN_INTEGER, READ_FAST, SYNTAX_ERROR,
};
use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::notify::{class, notify};
use crate::util::parse_i64_strict;
use crate::value::{Value, WRONGTYPE};

const COMPLEXITY: &str = "O(1) for each subcommand specified";

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "bitfield",
        arity: -2,
        flags: WRITE | DENYOOM,
        acl_categories: &["write", "bitmap", "slow"],
        summary: "Perform arbitrary bitfield integer operations on strings",
        since: "3.2.0",
        complexity: COMPLEXITY,
        handler: Some(bitfield),
        key_spec_flags: &["RW", "access", "update", "variable_flags"],
        ..BITMAP
    },
    CommandSpec {
        name: "bitfield_ro",
        arity: -2,
        flags: READONLY | FAST,
        acl_categories: READ_FAST,
        summary: "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD",
        since: "6.0.0",
        complexity: COMPLEXITY,
        handler: Some(bitfield_ro),
        ..BITMAP
    },
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Overflow {
    Wrap,
    Sat,
    Fail,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OpKind {
    Get,
    Set,
    IncrBy,
}

/// An integer type: its width and signedness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Field {
    signed: bool,
    bits: u32,
}

/// One parsed operation.
#[derive(Clone, Copy, Debug)]
struct Op {
    kind: OpKind,
    field: Field,
    offset: u64,
    /// The value of a SET, the increment of an INCRBY.
    value: i64,
    overflow: Overflow,
}

fn bitfield(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    run(ctx, args, false);
}

fn bitfield_ro(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    run(ctx, args, true);
}

/// Redis's `getBitfieldTypeFromArgument`; Redis reads the width as a C
/// string, so an embedded NUL ends it.
fn parse_field(arg: &[u8]) -> Option<Field> {
    let signed = match arg.first()? {
        b'i' => true,
        b'u' => false,
        _ => return None,
    };
    let bits = parse_i64_strict(c_str(&arg[1..]))?;
    let max = if signed { 64 } else { 63 };
    (1..=max).contains(&bits).then_some(Field {
        signed,
        bits: bits as u32,
    })
}

/// Parses the operations, in Redis's order of checks; `Err` is the reply.
fn parse(args: &[Vec<u8>], limit_bytes: usize) -> Result<Vec<Op>, &'static str> {
    let mut ops = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut j = 2;
    while j < args.len() {
        let remaining = args.len() - j - 1;
        let name = &args[j];
        let kind = if is_keyword(name, "get") && remaining >= 2 {
            OpKind::Get
        } else if is_keyword(name, "set") && remaining >= 3 {
            OpKind::Set
        } else if is_keyword(name, "incrby") && remaining >= 3 {
            OpKind::IncrBy
        } else if is_keyword(name, "overflow") && remaining >= 1 {
            let mode = &args[j + 1];
            overflow = if is_keyword(mode, "wrap") {
                Overflow::Wrap
            } else if is_keyword(mode, "sat") {
                Overflow::Sat
            } else if is_keyword(mode, "fail") {
                Overflow::Fail
            } else {
                return Err("ERR Invalid OVERFLOW type specified");
            };
            j += 2;
            continue;
        } else {
            return Err(SYNTAX_ERROR);
        };
        let field = parse_field(&args[j + 1]).ok_or(
            "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.",
        )?;
        let offset =
            parse_bit_offset(&args[j + 2], Some(field.bits), limit_bytes).ok_or(BAD_OFFSET)?;
        let value = match kind {
            OpKind::Get => 0,
            _ => parse_i64_strict(&args[j + 3]).ok_or(NOT_AN_INTEGER)?,
        };
        ops.push(Op {
            kind,
            field,
            offset,
            value,
            overflow,
        });
        j += if kind == OpKind::Get { 3 } else { 4 };
    }
    Ok(ops)
}

fn run(ctx: &mut Ctx, args: &[Vec<u8>], read_only: bool) {
    let limit = ctx.server.config.proto_max_bulk_len_bytes;
    let ops = match parse(args, limit) {
        Ok(ops) => ops,
        Err(e) => return ctx.error(e),
    };
    ctx.work(ops.len() as u64);
    let key = &args[1];
    // The last bit any SET or INCRBY reaches; without one, only reads.
    let last_bit = ops
        .iter()
        .filter(|op| op.kind != OpKind::Get)
        .map(|op| op.offset + u64::from(op.field.bits) - 1)
        .max();
    let Some(last_bit) = last_bit else {
        return run_reads(ctx, key, &ops);
    };
    if read_only {
        return ctx.error("ERR BITFIELD_RO only supports the GET subcommand");
    }
    let (byte, _) = bit_position(last_bit);
    // The string is taken out while the reply is written, and put back.
    let (mut bytes, grown) = match string_for_write(ctx, key, byte + 1) {
        Ok((s, grown)) => (s.take_bytes(), grown),
        Err(WrongType) => return ctx.error(WRONGTYPE),
    };
    let mut w = ctx.w();
    w.array_len(ops.len());
    let mut changes = 0u64;
    for op in &ops {
        match execute(&mut bytes, op) {
            Reply::Value(v) => w.int(v),
            Reply::Written { reply, changed } => {
                w.int(reply);
                if changed || grown > 0 {
                    changes += 1;
                }
            }
            Reply::Failed => w.null(),
        }
    }
    if let Some(Value::Str(s)) = ctx.db().get_mut(key) {
        *s.bytes_mut() = bytes;
    }
    if changes > 0 {
        ctx.modified_in_place(key);
        ctx.server.dirty += changes - 1;
        notify(ctx, class::STRING, "setbit", key);
    }
}

/// Only GETs (or nothing): a missing key reads as zeros (and raises
/// `keymiss`, as Redis's read-only BITFIELD looks it up for a read).
fn run_reads(ctx: &mut Ctx, key: &[u8], ops: &[Op]) {
    let (value, mut w) = ctx.lookup_read_and_writer(key);
    let bytes: &[u8] = match value {
        None => &[],
        Some(Value::Str(s)) => s.as_bytes(),
        #[allow(unreachable_patterns)]
        Some(_) => return w.error(WRONGTYPE),
    };
    w.array_len(ops.len());
    for op in ops {
        w.int(read(bytes, op.field, op.offset));
    }
}

/// What one operation answers.
enum Reply {
    /// A GET's value.
    Value(i64),
    /// A SET's previous value or an INCRBY's new one, and whether the
    /// bits changed.
    Written { reply: i64, changed: bool },
    /// The write would overflow under `OVERFLOW FAIL`: nil, nothing written.
    Failed,
}

/// Runs one operation over `bytes`, long enough for every write.
fn execute(bytes: &mut [u8], op: &Op) -> Reply {
    if op.kind == OpKind::Get {
        return Reply::Value(read(bytes, op.field, op.offset));
    }
    let Field { signed, bits } = op.field;
    let old = get_bits(bytes, op.offset, bits);
    let (new, overflowed, reply) = if signed {
        let old = sign_extend(old, bits);
        let (base, incr) = match op.kind {
            OpKind::IncrBy => (old, op.value),
            _ => (op.value, 0),
        };
        let (new, overflowed) = match signed_overflow(base, incr, bits, op.overflow) {
            Some(limited) => (limited, true),
            None => (base.wrapping_add(incr), false),
        };
        let reply = if op.kind == OpKind::IncrBy { new } else { old };
        (new as u64, overflowed, reply)
    } else {
        let (base, incr) = match op.kind {
            OpKind::IncrBy => (old, op.value),
            _ => (op.value as u64, 0),
        };
        let (new, overflowed) = match unsigned_overflow(base, incr, bits, op.overflow) {
            Some(limited) => (limited, true),
            None => (base.wrapping_add(incr as u64), false),
        };
        let reply = if op.kind == OpKind::IncrBy { new } else { old };
        (new, overflowed, reply as i64)
    };
    if overflowed && op.overflow == Overflow::Fail {
        return Reply::Failed;
    }
    set_bits(bytes, op.offset, bits, new);
    let changed = get_bits(bytes, op.offset, bits) != old;
    Reply::Written { reply, changed }
}

/// A GET: the field at `offset`, the bits past the end of `bytes` zeros.
fn read(bytes: &[u8], field: Field, offset: u64) -> i64 {
    let raw = get_bits(bytes, offset, field.bits);
    if field.signed {
        sign_extend(raw, field.bits)
    } else {
        raw as i64
    }
}

/// The `bits`-bit unsigned integer at bit `offset`, most significant bit
/// first; bits past the end of `bytes` read as zeros.
fn get_bits(bytes: &[u8], offset: u64, bits: u32) -> u64 {
    (0..u64::from(bits)).fold(0, |value, i| {
        let (byte, mask) = bit_position(offset + i);
        let bit = bytes.get(byte).is_some_and(|b| b & mask != 0);
        (value << 1) | u64::from(bit)
    })
}

/// Writes the low `bits` bits of `value` at bit `offset` (within `bytes`).
fn set_bits(bytes: &mut [u8], offset: u64, bits: u32, value: u64) {
    for i in 0..u64::from(bits) {
        let (byte, mask) = bit_position(offset + i);
        let on = value >> (u64::from(bits) - 1 - i) & 1 == 1;
        if let Some(b) = bytes.get_mut(byte) {
            if on {
                *b |= mask;
            } else {
                *b &= !mask;
            }
        }
    }
}

/// Two's complement: the `bits`-bit pattern as an i64.
fn sign_extend(raw: u64, bits: u32) -> i64 {
    let shift = 64 - bits;
    ((raw << shift) as i64) >> shift
}

/// Redis's `checkUnsignedBitfieldOverflow`: `None` when `value + incr`
/// fits in `bits` bits, else the value to store under `overflow` (FAIL's
/// is never stored). `value` may exceed the type (a SET's argument).
fn unsigned_overflow(value: u64, incr: i64, bits: u32, overflow: Overflow) -> Option<u64> {
    let max = (1u64 << bits) - 1;
    let max_incr = max.wrapping_sub(value) as i64;
    let min_incr = value.wrapping_neg() as i64;
    let wrapped = value.wrapping_add(incr as u64) & max;
    if value > max || (incr > 0 && incr > max_incr) {
        Some(if overflow == Overflow::Sat {
            max
        } else {
            wrapped
        })
    } else if incr < 0 && incr < min_incr {
        Some(if overflow == Overflow::Sat {
            0
        } else {
            wrapped
        })
    } else {
        None
    }
}

/// Redis's `checkSignedBitfieldOverflow`, with the same wrap-around
/// arithmetic: `None` when `value + incr` fits in a `bits`-bit signed
/// integer, else the value to store under `overflow`.
fn signed_overflow(value: i64, incr: i64, bits: u32, overflow: Overflow) -> Option<i64> {
    let max = if bits == 64 {
        i64::MAX
    } else {
        (1i64 << (bits - 1)) - 1
    };
    let min = -max - 1;
    let max_incr = (max as u64).wrapping_sub(value as u64) as i64;
    let min_incr = min.wrapping_sub(value);
    let wrapped = sign_extend((value as u64).wrapping_add(incr as u64), bits);
    let wide = bits != 64;
    if value > max || (wide && incr > max_incr) || (value >= 0 && incr > 0 && incr > max_incr) {
        Some(if overflow == Overflow::Sat {
            max
        } else {
            wrapped
        })
    } else if value < min || (wide && incr < min_incr) || (value < 0 && incr < 0 && incr < min_incr)
    {
        Some(if overflow == Overflow::Sat {
            min
        } else {
            wrapped
        })
    } else {
        None
    }
}
