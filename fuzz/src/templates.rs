//! Command templates for engine_commands' collection, blocking, SORT,
//! transaction and encoding-threshold steps: a command name and argument
//! slots, each filled from a small alphabet by one fuzzer byte, so that
//! most generated commands are well formed and hit the same few keys and
//! members (WRONGTYPE, empty-collection deletion and encoding conversions
//! need collisions), while some are deliberately not.
//!
//! Template syntax, space separated tokens:
//! - `k` key, `e` element/member/field/value, `n` integer, `c` count,
//!   `s` score, `r` score bound, `l` lex bound, `t` blocking timeout,
//!   `w` LEFT|RIGHT, `m` MIN|MAX, `p` SORT pattern;
//! - `A|B|C`: one of these words; any other word: itself;
//! - adversarial slots (`adversarial.rs`): `K` key (long, empty, binary),
//!   `v` value (binary, `\r\n`, non-UTF-8, long), `i` integer (i64 edges
//!   and past them, padded, hex, signs), `f` float (inf, nan, -0, 1e308,
//!   subnormals), `o` SETRANGE offset (near the 512 MB limit), `g` glob
//!   pattern (nested stars over long keys, classes, unterminated `[`,
//!   trailing `\`);
//! - a suffix `?`: 0 or 1 times, `*`: 0 to 2 times, `+`: 1 to 3 times.

use super::adversarial;

/// Blocking timeouts: finite (the driver ends a run by advancing the clock
/// past the longest, so every request is answered) and invalid ones.
const TIMEOUTS: &[&str] = &["0.01", "0.1", "1", "2.5", "-1", "x", "0.001"];
const KEYS: &[&str] = &["a", "b", "c"];
/// Members: integers (intsets, SORT), short strings (listpacks), a key
/// name (SORT ... GET *), and a value longer than the small
/// `*-max-listpack-value` thresholds the templates set.
const ELEMENTS: &[&str] = &[
    "x",
    "y",
    "z",
    "1",
    "2",
    "-1",
    "10",
    "",
    "hello",
    "a",
    "1.5",
    "0",
    "3",
    "bb",
    "a-longer-value-over-small-thresholds",
];
const INTS: &[&str] = &[
    "0",
    "1",
    "2",
    "-1",
    "-2",
    "3",
    "100",
    "-100",
    "9223372036854775807",
    "x",
];
const COUNTS: &[&str] = &["0", "1", "2", "3", "5", "-1", "100"];
const SCORES: &[&str] = &[
    "1", "2", "-1", "0", "1.5", "inf", "-inf", "+inf", "nan", "x", "3e0",
];
const SCORE_BOUNDS: &[&str] = &["-inf", "+inf", "0", "1", "(1", "2", "(2", "-1", "x", "(inf"];
const LEX_BOUNDS: &[&str] = &["-", "+", "[a", "(x", "[1", "(z", "[", "x", "[hello"];
const PATTERNS: &[&str] = &["#", "*", "a", "nosort", "*->x", "b_*", "#->f"];

/// The templates. Several per command where options come in groups.
pub const TEMPLATES: &[&str] = &[
    // Lists.
    "LPUSH k e+",
    "RPUSH k e+",
    "LPUSHX k e+",
    "RPUSHX k e+",
    "LPOP k c?",
    "RPOP k c?",
    "LLEN k",
    "LRANGE k n n",
    "LINDEX k n",
    "LSET k n e",
    "LREM k n e",
    "LTRIM k n n",
    "LINSERT k BEFORE|AFTER e e",
    "LPOS k e",
    "LPOS k e RANK n COUNT c",
    "LPOS k e COUNT c MAXLEN c",
    "LMOVE k k w w",
    "RPOPLPUSH k k",
    "LMPOP 1 k w",
    "LMPOP 2 k k w COUNT c",
    // Blocking.
    "BLPOP k+ t",
    "BRPOP k+ t",
    "BLMOVE k k w w t",
    "BRPOPLPUSH k k t",
    "BLMPOP t 1 k w",
    "BLMPOP t 2 k k w COUNT c",
    "BZPOPMIN k+ t",
    "BZPOPMAX k+ t",
    "BZMPOP t 1 k m",
    "BZMPOP t 2 k k m COUNT c",
    // Bitmaps: strings read and written as bits, on the same keys as the
    // collections (WRONGTYPE both ways).
    "SETBIT k n 0|1",
    "GETBIT k n",
    "BITCOUNT k",
    "BITCOUNT k n n BYTE|BIT",
    "BITPOS k 0|1 n?",
    "BITPOS k 0|1 n n BYTE|BIT",
    "BITOP AND|OR|XOR|NOT k k k*",
    "BITFIELD k GET i8|u4|i64|u63 n SET u3|i1 #1 n",
    "BITFIELD k OVERFLOW WRAP|SAT|FAIL INCRBY i5|u7|i64 n n",
    "BITFIELD_RO k GET u8|i16 n",
    // Hashes.
    "HSET k e e",
    "HSET k e e e e",
    "HSETNX k e e",
    "HMSET k e e",
    "HGET k e",
    "HMGET k e+",
    "HDEL k e+",
    "HLEN k",
    "HSTRLEN k e",
    "HEXISTS k e",
    "HKEYS k",
    "HVALS k",
    "HGETALL k",
    "HINCRBY k e n",
    "HINCRBYFLOAT k e s",
    "HRANDFIELD k",
    "HRANDFIELD k c WITHVALUES?",
    "HSCAN k 0",
    "HSCAN k 0 MATCH * COUNT c",
    // Sets.
    "SADD k e+",
    "SREM k e+",
    "SCARD k",
    "SISMEMBER k e",
    "SMISMEMBER k e+",
    "SMEMBERS k",
    "SPOP k",
    "SPOP k c",
    "SRANDMEMBER k c?",
    "SMOVE k k e",
    "SINTER k+",
    "SUNION k+",
    "SDIFF k+",
    "SINTERSTORE k k+",
    "SUNIONSTORE k k+",
    "SDIFFSTORE k k+",
    "SINTERCARD 2 k k",
    "SINTERCARD 1 k LIMIT c",
    "SSCAN k 0 COUNT c",
    // Sorted sets.
    "ZADD k s e",
    "ZADD k NX|XX|GT|LT|CH s e s e",
    "ZADD k INCR s e",
    "ZADD k GT|LT CH? s e",
    "ZINCRBY k s e",
    "ZREM k e+",
    "ZCARD k",
    "ZSCORE k e",
    "ZMSCORE k e+",
    "ZRANK k e",
    "ZREVRANK k e",
    "ZCOUNT k r r",
    "ZLEXCOUNT k l l",
    "ZRANGE k n n WITHSCORES?",
    "ZRANGE k r r BYSCORE REV? LIMIT n n",
    "ZRANGE k l l BYLEX REV?",
    "ZRANGEBYSCORE k r r WITHSCORES?",
    "ZREVRANGEBYSCORE k r r LIMIT n n",
    "ZRANGEBYLEX k l l",
    "ZREVRANGEBYLEX k l l",
    "ZREVRANGE k n n WITHSCORES?",
    "ZREMRANGEBYRANK k n n",
    "ZREMRANGEBYSCORE k r r",
    "ZREMRANGEBYLEX k l l",
    "ZPOPMIN k c?",
    "ZPOPMAX k c?",
    "ZMPOP 1 k m",
    "ZMPOP 2 k k m COUNT c",
    "ZRANDMEMBER k c WITHSCORES?",
    "ZUNION 2 k k WITHSCORES?",
    "ZINTER 2 k k WEIGHTS n n AGGREGATE MIN|MAX|SUM",
    "ZDIFF 2 k k",
    "ZUNIONSTORE k 2 k k",
    "ZINTERSTORE k 2 k k AGGREGATE MIN|MAX",
    "ZDIFFSTORE k 1 k",
    "ZINTERCARD 2 k k",
    "ZRANGESTORE k k n n",
    "ZSCAN k 0",
    // SORT.
    "SORT k",
    "SORT k DESC? ALPHA? LIMIT n n",
    "SORT k BY p GET p GET p",
    "SORT k ALPHA STORE k",
    "SORT_RO k BY p ALPHA?",
    // Transactions.
    "MULTI",
    "EXEC",
    "DISCARD",
    "WATCH k+",
    "UNWATCH",
    // Encodings, and small thresholds so that conversions happen.
    "OBJECT ENCODING k",
    "TYPE k",
    "CONFIG SET list-max-listpack-size -2|-1|1|2|3|4",
    "CONFIG SET hash-max-listpack-entries 0|1|2|3|128",
    "CONFIG SET hash-max-listpack-value 0|1|4|64",
    "CONFIG SET set-max-intset-entries 0|1|2|3|512",
    "CONFIG SET zset-max-listpack-entries 0|1|2|3|128",
    "CONFIG SET zset-max-listpack-value 0|1|4|64",
    // Generic commands over collections.
    "COPY k k REPLACE?",
    "RENAME k k",
    "DEL k+",
    "EXPIRE k 1|0|-1",
    "PERSIST k",
    "EXISTS k+",
    // HyperLogLog strings (WRONGTYPE and INVALIDOBJ against the others).
    "PFADD k e*",
    "PFCOUNT k+",
    "PFMERGE k k*",
    "PFDEBUG ENCODING|GETREG|DECODE|TODENSE k",
    // Geo sets (sorted sets of geohash scores).
    "GEOADD k NX|XX|CH? 13.36|-180|180.1|0 38.11|85.05113|-86|0 e",
    "GEODIST k e e m|km|ft|mi|x?",
    "GEOHASH k e*",
    "GEOPOS k e*",
    "GEOSEARCH k FROMMEMBER e BYRADIUS n m|km ASC|DESC COUNT c ANY? WITHCOORD? WITHDIST? WITHHASH?",
    "GEOSEARCH k FROMLONLAT 13 38 BYBOX n n km ASC|DESC",
    "GEOSEARCHSTORE k k FROMLONLAT 13 38 BYRADIUS n km STOREDIST?",
    "GEORADIUS k 13 38 n km WITHDIST? COUNT c STORE|STOREDIST k",
    "GEORADIUSBYMEMBER_RO k e n km ASC|DESC",
    // Streams.
    "XADD k *|1-*|5-1|0-1|9-x|18446744073709551615-18446744073709551615 e e",
    "XADD k NOMKSTREAM? MAXLEN|MINID ~|= n LIMIT? c? * e e",
    "XRANGE k -|0|(1-1|5 +|(5-1|9 COUNT c",
    "XREVRANGE k +|(5-1|9 -|0|(1-1",
    "XDEL k 1-1|5-1|0-1+",
    "XTRIM k MAXLEN|MINID ~|= n",
    "XLEN k",
    "XREAD COUNT c STREAMS k k 0|$ 0|$",
    "XREAD BLOCK t STREAMS k $",
    "XGROUP CREATE k e 0|$ MKSTREAM?",
    "XREADGROUP GROUP e e COUNT c NOACK? STREAMS k >|0",
    "XREADGROUP GROUP e e BLOCK t STREAMS k >",
    "XACK k e 1-1|5-1|0-1+",
    "XPENDING k e",
    "XPENDING k e - + c e?",
    "XCLAIM k e e n 1-1|5-1 JUSTID? FORCE?",
    "XAUTOCLAIM k e e n 0-0 COUNT c",
    "XINFO STREAM k FULL?",
    "XSETID k 5-1|0-0|99-0",
];

/// The arguments of template `index` (modulo the count of [`TEMPLATES`]
/// and [`adversarial::TEMPLATES`] together) with its slots filled from
/// `picks` (one byte per choice, zeros past the end).
pub fn expand(index: usize, picks: &[u8]) -> Vec<Vec<u8>> {
    let count = TEMPLATES.len() + adversarial::TEMPLATES.len();
    let index = index % count;
    let template = match TEMPLATES.get(index) {
        Some(template) => template,
        None => adversarial::TEMPLATES[index - TEMPLATES.len()],
    };
    expand_template(template, picks)
}

/// How many templates [`expand`] chooses from.
pub fn templates_count() -> usize {
    TEMPLATES.len() + adversarial::TEMPLATES.len()
}

/// The arguments of `template` with its slots filled from `picks`.
pub fn expand_template(template: &str, picks: &[u8]) -> Vec<Vec<u8>> {
    let mut picks = picks.iter().copied().chain(std::iter::repeat(0));
    let mut next = move || usize::from(picks.next().unwrap_or(0));
    let mut args = Vec::new();
    for token in template.split(' ') {
        let (base, times) = match token.as_bytes().last() {
            Some(b'?') if token.len() > 1 => (&token[..token.len() - 1], next() % 2),
            Some(b'*') if token.len() > 1 => (&token[..token.len() - 1], next() % 3),
            Some(b'+') if token.len() > 1 => (&token[..token.len() - 1], 1 + next() % 3),
            _ => (token, 1),
        };
        for _ in 0..times {
            let word: Vec<u8> = match base {
                "k" => KEYS[next() % KEYS.len()].into(),
                "e" => ELEMENTS[next() % ELEMENTS.len()].into(),
                "n" => INTS[next() % INTS.len()].into(),
                "c" => COUNTS[next() % COUNTS.len()].into(),
                "s" => SCORES[next() % SCORES.len()].into(),
                "r" => SCORE_BOUNDS[next() % SCORE_BOUNDS.len()].into(),
                "l" => LEX_BOUNDS[next() % LEX_BOUNDS.len()].into(),
                "t" => TIMEOUTS[next() % TIMEOUTS.len()].into(),
                "w" => ["LEFT", "RIGHT"][next() % 2].into(),
                "m" => ["MIN", "MAX"][next() % 2].into(),
                "p" => PATTERNS[next() % PATTERNS.len()].into(),
                _ if adversarial::is_slot(base) => adversarial::word(base, next()),
                _ if base.contains('|') => {
                    let choices: Vec<&str> = base.split('|').collect();
                    choices[next() % choices.len()].into()
                }
                _ => base.into(),
            };
            args.push(word);
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_expand() {
        let words = |ws: &[&str]| ws.iter().map(|w| w.as_bytes().to_vec()).collect::<Vec<_>>();
        // k: "a"; e+: 1 + 1 times; e: "z", then "x" (zeros past the end).
        assert_eq!(expand(0, &[0, 1, 2]), words(&["LPUSH", "a", "z", "x"]));
        assert_eq!(expand(templates_count(), &[]), expand(0, &[]));
        for i in 0..TEMPLATES.len() {
            assert!(!expand(i, &[]).is_empty());
        }
    }
}
