//! Adversarial arguments for the template steps of engine_commands and
//! client_stream: the edges of the input space that friendly alphabets
//! never reach — integers at and past the i64 edges, padded, signed and hex
//! forms, float specials, empty and binary strings, long keys and values,
//! and glob patterns whose naive matching is exponential.
//!
//! Lengths are bounded so that one input stays fast on a correct engine:
//! the longest word is [`LONG_VALUE_LEN`] bytes, and the pathological
//! patterns run against keys of [`LONG_KEY_LEN`] bytes (enough for a
//! backtracking matcher to take hours, a polynomial one microseconds).

/// Bytes of the long key (`a` repeated): the subject of the nested-star
/// patterns. With 20 `a*` groups and a final `b`, a backtracking matcher
/// tries about C(40, 20) ≈ 1.4 × 10¹¹ splits.
pub const LONG_KEY_LEN: usize = 40;

/// Bytes of the long value. Bounded so that LCS over two of them (O(N·M))
/// and replies that repeat them stay in the milliseconds.
pub const LONG_VALUE_LEN: usize = 512;

/// The long key, spelled out so that patterns and tests can name it.
pub const LONG_KEY: &[u8; LONG_KEY_LEN] = b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

/// Slot `K`: keys. The friendly three (so that adversarial steps meet the
/// others' values), the long key, the empty key, binary keys, a key made of
/// glob metacharacters, and one that matches the nested patterns early.
const KEYS: &[&[u8]] = &[
    b"a",
    b"b",
    b"c",
    LONG_KEY,
    b"",
    b"\x00\r\n",
    b"\xff\xfe",
    b"a*[b\\",
    b"ab",
];

/// Slot `v`: values. `None` stands for the long value.
const VALUES: &[Option<&[u8]>] = &[
    Some(b""),
    Some(b"\x00"),
    Some(b"a\r\nb"),
    Some(b"\r\n"),
    Some(b"\xff\xfe\xfd"),
    Some(b"9223372036854775807"),
    Some(b"-9223372036854775808"),
    Some(b"9223372036854775808"),
    Some(b"1e308"),
    Some(b"inf"),
    Some(b" 1"),
    Some(b"*"),
    Some(b"a*a*a*a*b"),
    Some(LONG_KEY),
    None,
];

/// Slot `i`: integers, for increments, indices, ranks and TTLs.
const INTEGERS: &[&[u8]] = &[
    b"9223372036854775807",
    b"-9223372036854775808",
    b"9223372036854775808",
    b"-9223372036854775809",
    b"99999999999999999999999",
    b"9223372036854775806",
    b"-9223372036854775807",
    b"4611686018427387904",
    b"2147483648",
    b"-2147483649",
    b"  12",
    b"12 ",
    b"0x10",
    b"+5",
    b"-0",
    b"007",
    b"1e3",
    b"",
    b"0",
    b"-1",
    b"1",
    b"3",
];

/// Slot `f`: floats, for INCRBYFLOAT, HINCRBYFLOAT, ZADD and ZINCRBY.
const FLOATS: &[&[u8]] = &[
    b"inf",
    b"-inf",
    b"+inf",
    b"Infinity",
    b"nan",
    b"-nan",
    b"-0",
    b"1e308",
    b"-1e308",
    b"1.7976931348623157e308",
    b"1.8e308",
    b"5e-324",
    b"1e-320",
    b"0x10",
    b" 1.5",
    b"1.5 ",
    b"+5",
    b"",
    b"1e",
    b".5",
    b"5.",
    b"9223372036854775807",
    b"1",
];

/// Slot `o`: SETRANGE offsets. Near the 512 MB limit only where the result
/// is an error (a valid offset there would allocate half a gigabyte).
const OFFSETS: &[&[u8]] = &[
    b"0",
    b"1",
    b"100",
    b"-1",
    b"536870912",
    b"536870911000",
    b"9223372036854775807",
    b"-9223372036854775808",
    b"0x10",
    b" 1",
];

/// Slot `g`: glob patterns, for KEYS, SCAN MATCH, HSCAN/SSCAN/ZSCAN MATCH,
/// PUBSUB CHANNELS, PSUBSCRIBE, CONFIG GET and COMMAND LIST FILTERBY
/// PATTERN.
const PATTERNS: &[&[u8]] = &[
    // Nested stars over the long key: exponential when backtracking.
    b"a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b",
    b"*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b",
    b"?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*b",
    b"[a]*[a]*[a]*[a]*[a]*[a]*[a]*[a]*[a]*[a]*[a]*[a]*[a]*[a]*[a]*[a]*b",
    b"*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*",
    // The same over the (case-insensitive) config and command names.
    b"*E*E*E*E*E*E*E*E*E*E*E*E*E*E*E*E*E*E*E*E*x",
    b"*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-*-x",
    // Classes, escapes and unterminated forms.
    b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    b"[a",
    b"[^a",
    b"[",
    b"[^",
    b"\\",
    b"a\\",
    b"*\\",
    b"[\\",
    b"[a-",
    b"[z-a]*",
    b"[]]*",
    b"[^]]*",
    b"[\\]]*",
    b"\\*",
    b"\\a*",
    b"a*[b\\",
    b"*\x00*",
    b"*\r\n*",
    b"\xff*",
    b"",
    b"*",
    b"a*",
    b"*maxmemory*",
];

/// Whether `slot` is one of this module's slot letters.
pub fn is_slot(slot: &str) -> bool {
    matches!(slot, "K" | "v" | "i" | "f" | "o" | "g")
}

/// The word `pick` chooses for `slot` (one of [`is_slot`]'s letters).
pub fn word(slot: &str, pick: usize) -> Vec<u8> {
    let from = |alphabet: &[&[u8]]| alphabet[pick % alphabet.len()].to_vec();
    match slot {
        "K" => from(KEYS),
        "v" => match VALUES[pick % VALUES.len()] {
            Some(value) => value.to_vec(),
            None => long_value(),
        },
        "i" => from(INTEGERS),
        "f" => from(FLOATS),
        "o" => from(OFFSETS),
        "g" => from(PATTERNS),
        _ => unreachable!("not an adversarial slot: {slot}"),
    }
}

/// The long value: [`LONG_VALUE_LEN`] bytes cycling through every byte
/// value, so it holds `\0`, `\r\n`, glob metacharacters and non-UTF-8.
fn long_value() -> Vec<u8> {
    (0..LONG_VALUE_LEN).map(|i| (i % 256) as u8).collect()
}

/// Templates over the adversarial slots, for engine_commands (after the
/// friendly ones) and client_stream. Every command here gives exactly one
/// reply per request and keeps the default protocol.
pub const TEMPLATES: &[&str] = &[
    // Strings and keys with adversarial names and values.
    "SET K v",
    "SET K v EX|PX|EXAT|PXAT i",
    "GET K",
    "GETEX K EX|PX|EXAT|PXAT i",
    "MSET K v K v",
    "STRLEN K",
    "GETRANGE K i i",
    "SETRANGE K o v",
    "INCRBY K i",
    "DECRBY K i",
    "INCRBYFLOAT K f",
    "EXPIRE K i",
    "PEXPIRE K i",
    "EXPIREAT K i",
    "TYPE K",
    "DEL K",
    "EXISTS K K",
    "RENAME K K",
    // Patterns through every matcher entry point.
    "KEYS g",
    "SCAN 0 MATCH g",
    "SCAN 0 MATCH g COUNT i",
    "HSCAN k 0 MATCH g",
    "SSCAN k 0 MATCH g COUNT c",
    "ZSCAN k 0 MATCH g",
    "PUBSUB CHANNELS g",
    "PUBSUB SHARDCHANNELS g",
    "CONFIG GET g",
    "COMMAND LIST FILTERBY PATTERN g",
    // Collections with adversarial members, counts and indices.
    "RPUSH k v+",
    "LRANGE k i i",
    "LINDEX k i",
    "LSET k i v",
    "LTRIM k i i",
    "LPOS k v RANK i",
    "LPOS k v COUNT i MAXLEN i",
    "LINSERT k BEFORE|AFTER v v",
    "HSET k v v",
    "HINCRBY k v i",
    "HINCRBYFLOAT k v f",
    "HGET k v",
    "SADD k v+",
    "SISMEMBER k v",
    "ZADD k f v",
    "ZADD k INCR f v",
    "ZINCRBY k f v",
    "ZSCORE k v",
    "ZRANGE k i i",
    "ZRANGE k f f BYSCORE LIMIT i i",
    "ZRANGEBYSCORE k f f",
    "ZREMRANGEBYRANK k i i",
    "ZCOUNT k f f",
    "SORT k LIMIT i i",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_filled() {
        assert_eq!(word("K", 3), LONG_KEY.to_vec());
        assert_eq!(word("v", VALUES.len() - 1).len(), LONG_VALUE_LEN);
        for slot in ["K", "v", "i", "f", "o", "g"] {
            assert!(is_slot(slot));
            for pick in 0..=255 {
                assert!(word(slot, pick).len() <= LONG_VALUE_LEN);
            }
        }
    }
}
