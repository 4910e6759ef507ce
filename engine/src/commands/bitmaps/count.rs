//! BITCOUNT and BITPOS: scans of a range of a string, in bytes (the
//! default) or in bits (`BIT`), with negative indexes counting from the end.
//!
//! Redis 7.0.15 looks the key up before it parses the range: a missing key
//! answers (0, or BITPOS's -1/0) and a key of another type WRONGTYPE,
//! whatever the range arguments hold. 7.2 moved the lookup after them.

use super::{byte_work, is_keyword, popcount, BITMAP, NOT_AN_INTEGER, READ_SLOW, SYNTAX_ERROR};
use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::util::parse_i64_strict;
use crate::value::{Value, WRONGTYPE};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "bitcount",
        arity: -2,
        flags: READONLY | O_N,
        acl_categories: READ_SLOW,
        summary: "Count set bits in a string",
        since: "2.6.0",
        complexity: "O(N)",
        handler: Some(bitcount),
        ..BITMAP
    },
    CommandSpec {
        name: "bitpos",
        arity: -3,
        flags: READONLY | O_N,
        acl_categories: READ_SLOW,
        summary: "Find first bit set or clear in a string",
        since: "2.8.7",
        complexity: "O(N)",
        handler: Some(bitpos),
        ..BITMAP
    },
];

/// A range resolved against a string: inclusive byte indexes, and for a
/// `BIT` range the masks of the bits of its first and last bytes that lie
/// outside it (Redis's `first_byte_neg_mask` and `last_byte_neg_mask`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Range {
    start: i64,
    end: i64,
    first_outside: u8,
    last_outside: u8,
}

/// Redis's range arithmetic shared by BITCOUNT and BITPOS: `start` and
/// `end` in bytes, or in bits when `in_bits`, over a string of `len` bytes.
/// Negative indexes count from the end, then both are clamped; an empty
/// range comes back with `start > end`.
fn resolve(len: usize, mut start: i64, mut end: i64, in_bits: bool) -> Range {
    let total = if in_bits {
        (len as i64) << 3
    } else {
        len as i64
    };
    if start < 0 {
        start += total;
    }
    if end < 0 {
        end += total;
    }
    start = start.max(0);
    end = end.max(0).min(total - 1);
    let mut range = Range {
        start,
        end,
        first_outside: 0,
        last_outside: 0,
    };
    if in_bits && start <= end {
        range.first_outside = !(0xffu8 >> (start & 7));
        range.last_outside = !(0xff80u16 >> (end & 7)) as u8;
        range.start = start >> 3;
        range.end = end >> 3;
    }
    range
}

/// `BYTE` or `BIT` (`None`: a syntax error).
fn parse_unit(arg: &[u8]) -> Option<bool> {
    if is_keyword(arg, "bit") {
        Some(true)
    } else if is_keyword(arg, "byte") {
        Some(false)
    } else {
        None
    }
}

/// BITCOUNT key [start end [BYTE|BIT]].
fn bitcount(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let (value, mut w) = ctx.lookup_read_and_writer(&args[1]);
    let s = match value {
        None => return w.int(0),
        Some(Value::Str(s)) => s.as_bytes(),
        #[allow(unreachable_patterns)]
        Some(_) => return w.error(WRONGTYPE),
    };
    let range = match args.len() {
        2 => resolve(s.len(), 0, -1, false),
        4 | 5 => {
            let Some(start) = parse_i64_strict(&args[2]) else {
                return w.error(NOT_AN_INTEGER);
            };
            let Some(end) = parse_i64_strict(&args[3]) else {
                return w.error(NOT_AN_INTEGER);
            };
            if start < 0 && end < 0 && start > end {
                return w.int(0);
            }
            let in_bits = match args.get(4) {
                None => false,
                Some(unit) => match parse_unit(unit) {
                    Some(in_bits) => in_bits,
                    None => return w.error(SYNTAX_ERROR),
                },
            };
            resolve(s.len(), start, end, in_bits)
        }
        _ => return w.error(SYNTAX_ERROR),
    };
    if range.start > range.end {
        return w.int(0);
    }
    let (from, to) = (range.start as usize, range.end as usize);
    let mut count = popcount(&s[from..=to]);
    count -= u64::from((s[from] & range.first_outside).count_ones());
    count -= u64::from((s[to] & range.last_outside).count_ones());
    w.int(count as i64);
    ctx.work(byte_work(to + 1 - from));
}

/// Redis's `redisBitpos`: the position of the first bit equal to `bit` in
/// `bytes`; when there is none, -1 for a 1, and for a 0 the first bit past
/// the end (the string is taken as zero-padded on the right).
fn first_bit(bytes: &[u8], bit: bool) -> i64 {
    let skip = if bit { 0x00 } else { 0xff };
    let mut words = bytes.chunks_exact(8);
    let mut skipped = 0usize;
    for word in words.by_ref() {
        if word.iter().any(|&b| b != skip) {
            break;
        }
        skipped += 8;
    }
    match bytes[skipped..].iter().position(|&b| b != skip) {
        Some(i) => {
            let byte = if bit {
                bytes[skipped + i]
            } else {
                !bytes[skipped + i]
            };
            ((skipped + i) as i64) * 8 + i64::from(byte.leading_zeros())
        }
        None if bit => -1,
        None => bytes.len() as i64 * 8,
    }
}

/// BITPOS key bit [start [end [BYTE|BIT]]].
fn bitpos(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let bit = match parse_i64_strict(&args[2]) {
        Some(0) => false,
        Some(1) => true,
        Some(_) => return ctx.error("ERR The bit argument must be 1 or 0."),
        None => return ctx.error(NOT_AN_INTEGER),
    };
    let (value, mut w) = ctx.lookup_read_and_writer(&args[1]);
    let s = match value {
        // A missing key is an infinite run of zeros.
        None => return w.int(if bit { -1 } else { 0 }),
        Some(Value::Str(s)) => s.as_bytes(),
        #[allow(unreachable_patterns)]
        Some(_) => return w.error(WRONGTYPE),
    };
    let (range, end_given) = match args.len() {
        3 => (resolve(s.len(), 0, -1, false), false),
        4..=6 => {
            let Some(start) = parse_i64_strict(&args[3]) else {
                return w.error(NOT_AN_INTEGER);
            };
            let in_bits = match args.get(5) {
                None => false,
                Some(unit) => match parse_unit(unit) {
                    Some(in_bits) => in_bits,
                    None => return w.error(SYNTAX_ERROR),
                },
            };
            let end = match args.get(4) {
                // Without an end, the range runs to the end of the string.
                None => -1,
                Some(end) => match parse_i64_strict(end) {
                    Some(end) => end,
                    None => return w.error(NOT_AN_INTEGER),
                },
            };
            (resolve(s.len(), start, end, in_bits), args.len() > 4)
        }
        _ => return w.error(SYNTAX_ERROR),
    };
    if range.start > range.end {
        return w.int(-1);
    }
    let scanned = (range.end - range.start + 1) as usize;
    let pos = find_in_range(s, range, bit, end_given);
    w.int(pos);
    ctx.work(byte_work(scanned));
}

/// BITPOS over a resolved, non-empty range, as Redis's `bitposCommand`
/// does it: the partial first byte, the whole bytes, the partial last byte.
/// Looking for a 0 without an explicit end, the bits past the string count
/// as zeros; with one, a range of ones answers -1.
fn find_in_range(s: &[u8], range: Range, bit: bool, end_given: bool) -> i64 {
    // Sets the bits outside the range to the opposite of the one sought.
    let masked = |byte: u8, outside: u8| {
        if bit {
            byte & !outside
        } else {
            byte | outside
        }
    };
    let mut start = range.start as usize;
    let end = range.end as usize;
    let mut bytes = end + 1 - start;
    let mut pos;
    'found: {
        if range.first_outside != 0 {
            let mut first = masked(s[start], range.first_outside);
            if range.last_outside != 0 && bytes == 1 {
                first = masked(first, range.last_outside);
            }
            pos = first_bit(&[first], bit);
            if bytes == 1 || (pos != -1 && pos != 8) {
                break 'found;
            }
            start += 1;
            bytes -= 1;
        }
        // A last byte with bits outside the range is scanned on its own.
        let whole = bytes - usize::from(range.last_outside != 0);
        if whole > 0 {
            pos = first_bit(&s[start..start + whole], bit);
            if bytes == whole || (pos != -1 && pos != (whole as i64) << 3) {
                break 'found;
            }
            start += whole;
            bytes -= whole;
        }
        pos = first_bit(&[masked(s[end], range.last_outside)], bit);
    }
    if end_given && !bit && pos == (bytes as i64) << 3 {
        return -1;
    }
    if pos != -1 {
        pos += (start as i64) << 3;
    }
    pos
}
