//! Bitmap commands (Redis 7.0's `bitops.c`): strings read and written as
//! arrays of bits, bit 0 being the most significant bit of the first byte.
//!
//! This file holds what the family shares (the bit-offset parser with its
//! `proto-max-bulk-len` limit, the write lookup that creates or zero-pads
//! the string, popcount) and the single-bit commands SETBIT and GETBIT.
//! The other commands, one file and one command table each (all listed in
//! [`crate::commands::FAMILIES`]):
//!
//! - [`count`] (`bitmaps/count.rs`): BITCOUNT and BITPOS, with their
//!   `BYTE|BIT` ranges;
//! - [`bitop`] (`bitmaps/bitop.rs`): BITOP AND OR XOR NOT;
//! - [`bitfield`] (`bitmaps/bitfield.rs`): BITFIELD and BITFIELD_RO.
//!
//! A read treats a missing key as an empty string and the bits past a
//! string's end as zeros. A write that addresses a bit past the end pads
//! the string with zero bytes first (charged as work: up to 512 MB), and
//! counts as a change only when it grew the string or changed a bit, as
//! 7.0.15 does: such a write neither propagates nor touches WATCHed keys.

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::notify::{class, notify};
use crate::util::parse_i64_strict;
use crate::value::{RString, Value, WRONGTYPE};

pub mod bitfield;
pub mod bitop;
pub mod count;
#[cfg(test)]
mod tests;

const BAD_OFFSET: &str = "ERR bit offset is not an integer or out of range";
const NOT_AN_INTEGER: &str = "ERR value is not an integer or out of range";
const SYNTAX_ERROR: &str = "ERR syntax error";

/// Bytes scanned, copied or zero-filled per unit of work.
const BYTES_PER_WORK_UNIT: u64 = 64;

const BITMAP: CommandSpec = CommandSpec {
    group: "bitmap",
    first_key: 1,
    last_key: 1,
    key_step: 1,
    ..CommandSpec::DEFAULT
};

const READ_FAST: &[&str] = &["read", "bitmap", "fast"];
const READ_SLOW: &[&str] = &["read", "bitmap", "slow"];
const WRITE_SLOW: &[&str] = &["write", "bitmap", "slow"];

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "setbit",
        arity: 4,
        flags: WRITE | DENYOOM,
        acl_categories: WRITE_SLOW,
        summary: "Sets or clears the bit at offset in the string value stored at key",
        since: "2.2.0",
        handler: Some(setbit),
        key_spec_flags: &["RW", "access", "update"],
        ..BITMAP
    },
    CommandSpec {
        name: "getbit",
        arity: 3,
        flags: READONLY | FAST,
        acl_categories: READ_FAST,
        summary: "Returns the bit value at offset in the string value stored at key",
        since: "2.2.0",
        handler: Some(getbit),
        ..BITMAP
    },
];

/// Redis compares keywords as C strings (`strcasecmp`): an embedded NUL
/// ends them.
fn c_str(arg: &[u8]) -> &[u8] {
    &arg[..arg.iter().position(|&c| c == 0).unwrap_or(arg.len())]
}

/// Whether `arg` is the keyword `word` (ASCII case-insensitively, as C).
fn is_keyword(arg: &[u8], word: &str) -> bool {
    c_str(arg).eq_ignore_ascii_case(word.as_bytes())
}

/// Redis's `getBitOffsetFromArgument`: a bit offset, limited so that its
/// byte is below `proto-max-bulk-len`. With `hash_bits` (BITFIELD), the
/// form `#N` means `N × bits`; the product wraps as C's does before the
/// range check catches it. `None` is [`BAD_OFFSET`].
fn parse_bit_offset(arg: &[u8], hash_bits: Option<u32>, limit_bytes: usize) -> Option<u64> {
    let (digits, multiplier) = match (arg.first(), hash_bits) {
        (Some(b'#'), Some(bits)) => (&arg[1..], i64::from(bits)),
        _ => (arg, 1),
    };
    let offset = parse_i64_strict(digits)?.wrapping_mul(multiplier);
    if offset < 0 || (offset >> 3) as u64 >= limit_bytes as u64 {
        return None;
    }
    Some(offset as u64)
}

/// The byte holding bit `offset`, and that bit's mask within it.
fn bit_position(offset: u64) -> (usize, u8) {
    ((offset >> 3) as usize, 0x80 >> (offset & 7))
}

/// The set bits of `bytes`, eight bytes at a time.
fn popcount(bytes: &[u8]) -> u64 {
    let mut words = bytes.chunks_exact(8);
    let mut count: u64 = words
        .by_ref()
        .map(|w| u64::from(u64::from_ne_bytes(w.try_into().unwrap_or_default()).count_ones()))
        .sum();
    for b in words.remainder() {
        count += u64::from(b.count_ones());
    }
    count
}

/// The charge for scanning, copying or zero-filling `bytes` bytes.
fn byte_work(bytes: usize) -> u64 {
    bytes as u64 / BYTES_PER_WORK_UNIT
}

/// The key holds a value of another type.
struct WrongType;

/// Redis's `lookupStringForBitCommand`: the string at `key`, created (of
/// zero bytes) or zero-padded so that it has at least `len_bytes` bytes,
/// and by how many bytes it grew (all of them for a created key). The
/// growth is charged here; the caller counts the change
/// ([`Ctx::modified_in_place`]) only when something changed, as Redis does,
/// which adds a key without counting it when nothing else did (BITFIELD
/// whose every write failed with OVERFLOW FAIL). The string becomes raw,
/// as Redis's `dbUnshareStringValue` makes it, whether or not it changes.
fn string_for_write<'c>(
    ctx: &'c mut Ctx,
    key: &[u8],
    len_bytes: usize,
) -> Result<(&'c mut RString, usize), WrongType> {
    let grown = match ctx.lookup(key) {
        None => {
            let value = Value::Str(RString::new_raw(vec![0; len_bytes]));
            ctx.db().set(key, value, false);
            // Redis's `dbAdd` raises `new` as the key is created.
            notify(ctx, class::NEW, "new", key);
            len_bytes
        }
        Some(Value::Str(s)) => {
            let grown = len_bytes.saturating_sub(s.len());
            let bytes = s.bytes_mut();
            if grown > 0 {
                bytes.resize(len_bytes, 0);
            }
            grown
        }
        #[allow(unreachable_patterns)]
        Some(_) => return Err(WrongType),
    };
    ctx.work(byte_work(grown));
    match ctx.db().get_mut(key) {
        Some(Value::Str(s)) => Ok((s, grown)),
        // The key was found or stored as a string just above.
        _ => Err(WrongType),
    }
}

/// SETBIT key offset value: the bit's previous value.
fn setbit(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    const BAD_BIT: &str = "ERR bit is not an integer or out of range";
    let limit = ctx.server.config.proto_max_bulk_len_bytes;
    let Some(offset) = parse_bit_offset(&args[2], None, limit) else {
        return ctx.error(BAD_OFFSET);
    };
    let on = match parse_i64_strict(&args[3]) {
        Some(0) => false,
        Some(1) => true,
        _ => return ctx.error(BAD_BIT),
    };
    let key = &args[1];
    let (byte, mask) = bit_position(offset);
    let (was_on, changed) = match string_for_write(ctx, key, byte + 1) {
        Err(WrongType) => return ctx.error(WRONGTYPE),
        Ok((s, grown)) => {
            let bytes = s.bytes_mut();
            let was_on = bytes[byte] & mask != 0;
            if on {
                bytes[byte] |= mask;
            } else {
                bytes[byte] &= !mask;
            }
            (was_on, grown > 0 || was_on != on)
        }
    };
    if changed {
        ctx.modified_in_place(key);
        notify(ctx, class::STRING, "setbit", key);
    }
    ctx.int(i64::from(was_on));
}

/// GETBIT key offset: 0 past the end of the string or for a missing key.
fn getbit(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let limit = ctx.server.config.proto_max_bulk_len_bytes;
    let Some(offset) = parse_bit_offset(&args[2], None, limit) else {
        return ctx.error(BAD_OFFSET);
    };
    let (byte, mask) = bit_position(offset);
    let bit = match ctx.lookup_read(&args[1]) {
        None => false,
        Some(Value::Str(s)) => s.as_bytes().get(byte).is_some_and(|b| b & mask != 0),
        #[allow(unreachable_patterns)]
        Some(_) => return ctx.error(WRONGTYPE),
    };
    ctx.int(i64::from(bit));
}
