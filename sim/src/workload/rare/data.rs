//! The data-type commands with every option: strings, generic key
//! commands, lists (blocking ones on keys that are ready, and one that
//! times out), hashes, sets, sorted sets and SORT. All in [`HOME_DB`], on
//! `rare:` keys cleared at the start of each section.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{Section, SectionFn, HOME_DB, OTHER_DB};

pub(crate) const SECTIONS: &[SectionFn] = &[
    strings,
    strings_ttl,
    generic,
    dump_restore,
    expire_options,
    lists,
    lists_blocking,
    hashes,
    sets,
    zsets,
    zsets_ranges,
    zsets_algebra,
    sort,
];

/// A far future, as unix seconds (2100-01-01).
const FUTURE_S: u64 = 4_102_444_800;

fn strings(s: &mut Section, rng: &mut ChaCha8Rng) {
    let v = s.unique();
    s.batch(HOME_DB)
        .add("DEL rare:s rare:s2 rare:s3 rare:n rare:f")
        .add(&format!("SET rare:s {v}"))
        .add(&format!("SET rare:s {v} XX"))
        .add(&format!("SET rare:s {v} NX"))
        .add(&format!("SET rare:s {v}x GET"))
        .add("SETNX rare:s2 hello")
        .add("GETSET rare:s2 world")
        .add("MSET rare:s3 ohmytext rare:s4 mynewtext")
        .add("MSETNX rare:s5 a rare:s6 b")
        .add("MGET rare:s rare:s2 rare:nothing")
        .add("APPEND rare:s2 !")
        .add("STRLEN rare:s2")
        .add("GETRANGE rare:s2 0 2")
        .add("SUBSTR rare:s2 1 -1")
        .add("SETRANGE rare:s2 3 xyz")
        .add("LCS rare:s3 rare:s4")
        .add("LCS rare:s3 rare:s4 LEN")
        .add("LCS rare:s3 rare:s4 IDX MINMATCHLEN 2 WITHMATCHLEN")
        .add(&format!("INCRBY rare:n {}", rng.gen_range(1..100)))
        .add("INCR rare:n")
        .add("DECR rare:n")
        .add("DECRBY rare:n 3")
        .add("INCRBYFLOAT rare:f 2.5")
        .add("GETDEL rare:s4")
        .add("GET rare:s4");
}

fn strings_ttl(s: &mut Section, _rng: &mut ChaCha8Rng) {
    let v = s.unique();
    s.batch(HOME_DB)
        .add("DEL rare:t")
        .add(&format!("SET rare:t {v} EX 100"))
        .add(&format!("SET rare:t {v} PX 100000"))
        .add(&format!("SET rare:t {v} EXAT {FUTURE_S}"))
        .add(&format!("SET rare:t {v} PXAT {}", FUTURE_S * 1000))
        .add(&format!("SET rare:t {v}k KEEPTTL"))
        .add("SETEX rare:t 100 x")
        .add("PSETEX rare:t 100000 y")
        .add("GETEX rare:t EX 200")
        .add("GETEX rare:t PX 200000")
        .add(&format!("GETEX rare:t EXAT {FUTURE_S}"))
        .add(&format!("GETEX rare:t PXAT {}", FUTURE_S * 1000))
        .add("EXPIRETIME rare:t")
        .add("PEXPIRETIME rare:t")
        .add("GETEX rare:t PERSIST")
        .add("TTL rare:t")
        .add("PTTL rare:t");
}

fn generic(s: &mut Section, _rng: &mut ChaCha8Rng) {
    s.batch(OTHER_DB).add("DEL rare:g rare:g2 rare:g3");
    s.batch(HOME_DB)
        .add("DEL rare:g rare:g2 rare:g3 rare:g4")
        .add("SET rare:g 1")
        .add("EXISTS rare:g rare:g2")
        .add("TYPE rare:g")
        .add("TOUCH rare:g rare:g2")
        .add("KEYS rare:g*")
        .add("SCAN 0 MATCH rare:* COUNT 100 TYPE string")
        .add("RANDOMKEY")
        .add("DBSIZE")
        .add("COPY rare:g rare:g2")
        .add("COPY rare:g rare:g2 REPLACE")
        .add(&format!("COPY rare:g rare:g3 DB {OTHER_DB}"))
        .add(&format!("COPY rare:g rare:g3 DB {OTHER_DB} REPLACE"))
        .add("RENAME rare:g2 rare:g4")
        .add("RENAMENX rare:g4 rare:g")
        .add(&format!("MOVE rare:g4 {OTHER_DB}"))
        .add("OBJECT ENCODING rare:g")
        .add("OBJECT REFCOUNT rare:g")
        .add("OBJECT IDLETIME rare:g")
        .add("OBJECT FREQ rare:g")
        .add("OBJECT HELP")
        .add("UNLINK rare:g rare:g3")
        .add("DEL rare:g4");
}

/// DUMP payloads written by redis-server 7.0.15 (`DUMP k` after `SET k
/// hello`, `RPUSH l a 1 b`, `ZADD z 1.5 m 2 n`), so that RESTORE loads
/// what Redis writes, not only what seedkv writes.
const REDIS_DUMPS: [&[u8]; 3] = [
    b"\x00\x05hello\n\x00cr\xdfve4 \n",
    b"\x12\x01\x02\x0f\x0f\x00\x00\x00\x03\x00\x81a\x02\x01\x01\x81b\x02\xff\n\x00\x90C\xa3L\xeb\x8e\x1b\x1c",
    b"\x11\x14\x14\x00\x00\x00\x04\x00\x81m\x02\x831.5\x04\x81n\x02\x02\x01\xff\n\x00\xf1\xb0:mX_i8",
];

fn dump_restore(s: &mut Section, rng: &mut ChaCha8Rng) {
    let payload = REDIS_DUMPS[rng.gen_range(0..REDIS_DUMPS.len())];
    let restore = |key: &str, ttl: &str, options: &[&str]| {
        let mut args: Vec<Vec<u8>> = vec![
            b"RESTORE".to_vec(),
            key.into(),
            ttl.into(),
            payload.to_vec(),
        ];
        args.extend(options.iter().map(|o| o.as_bytes().to_vec()));
        args
    };
    s.batch(HOME_DB)
        .add("DEL rare:d rare:d2")
        .push(restore("rare:d", "0", &[]))
        .add("DUMP rare:d")
        .add("DUMP rare:nothing")
        .push(restore("rare:d", "0", &["REPLACE", "IDLETIME", "5"]))
        .push(restore("rare:d", "0", &["REPLACE", "FREQ", "3"]))
        .push(restore(
            "rare:d2",
            &format!("{}", FUTURE_S * 1000),
            &["ABSTTL"],
        ))
        .push(restore("rare:d2", "100000", &["REPLACE"]))
        .add("DEL rare:d rare:d2");
}

fn expire_options(s: &mut Section, _rng: &mut ChaCha8Rng) {
    s.batch(HOME_DB).add("SET rare:e 1");
    for cmd in ["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"] {
        let (a, b) = match cmd {
            "EXPIRE" => (100, 200),
            "PEXPIRE" => (100_000, 200_000),
            "EXPIREAT" => (FUTURE_S, FUTURE_S + 100),
            _ => (FUTURE_S * 1000, FUTURE_S * 1000 + 100_000),
        };
        s.add("PERSIST rare:e")
            .add(&format!("{cmd} rare:e {a} NX"))
            .add(&format!("{cmd} rare:e {b} XX"))
            .add(&format!("{cmd} rare:e {a} GT"))
            .add(&format!("{cmd} rare:e {a} LT"))
            .add(&format!("{cmd} rare:e {b}"));
    }
    s.add("DEL rare:e");
}

fn lists(s: &mut Section, _rng: &mut ChaCha8Rng) {
    s.batch(HOME_DB)
        .add("DEL rare:l rare:l2 rare:l3")
        .add("LPUSHX rare:l a")
        .add("RPUSH rare:l a b c d e c")
        .add("LPUSH rare:l z")
        .add("LPUSHX rare:l y")
        .add("RPUSHX rare:l f")
        .add("LLEN rare:l")
        .add("LRANGE rare:l 0 -1")
        .add("LINDEX rare:l 2")
        .add("LSET rare:l 0 q")
        .add("LINSERT rare:l BEFORE c b2")
        .add("LINSERT rare:l AFTER c c2")
        .add("LPOS rare:l c")
        .add("LPOS rare:l c RANK -1")
        .add("LPOS rare:l c COUNT 0 MAXLEN 10")
        .add("LREM rare:l 1 c")
        .add("LMOVE rare:l rare:l2 LEFT RIGHT")
        .add("LMOVE rare:l rare:l2 RIGHT LEFT")
        .add("RPOPLPUSH rare:l rare:l2")
        .add("LMPOP 2 rare:l3 rare:l LEFT")
        .add("LMPOP 1 rare:l RIGHT COUNT 2")
        .add("LPOP rare:l")
        .add("RPOP rare:l 2")
        .add("LTRIM rare:l 0 1")
        .add("LRANGE rare:l2 0 -1");
}

fn lists_blocking(s: &mut Section, _rng: &mut ChaCha8Rng) {
    s.batch(HOME_DB)
        .add("DEL rare:b rare:b2 rare:bz rare:bempty")
        .add("RPUSH rare:b 1 2 3 4 5 6 7 8")
        .add("ZADD rare:bz 1 a 2 b 3 c 4 d")
        .add("BLPOP rare:bempty rare:b 1")
        .add("BRPOP rare:b 1")
        .add("BLMOVE rare:b rare:b2 LEFT RIGHT 1")
        .add("BLMOVE rare:b rare:b2 RIGHT LEFT 1")
        .add("BRPOPLPUSH rare:b rare:b2 1")
        .add("BLMPOP 1 1 rare:b LEFT COUNT 1")
        .add("BLMPOP 1 2 rare:bempty rare:b RIGHT")
        .add("BZPOPMIN rare:bz 1")
        .add("BZPOPMAX rare:bz 1")
        .add("BZMPOP 1 1 rare:bz MIN")
        .add("BZMPOP 1 1 rare:bz MAX COUNT 1")
        // Nothing arrives: a null after 10 ms.
        .add("BLPOP rare:bempty 0.01");
}

fn hashes(s: &mut Section, _rng: &mut ChaCha8Rng) {
    s.batch(HOME_DB)
        .add("DEL rare:h")
        .add("HSET rare:h f1 v1 f2 v2 n 5")
        .add("HSETNX rare:h f1 x")
        .add("HMSET rare:h f3 v3 f4 v4")
        .add("HGET rare:h f1")
        .add("HMGET rare:h f1 nothing")
        .add("HLEN rare:h")
        .add("HEXISTS rare:h f2")
        .add("HKEYS rare:h")
        .add("HVALS rare:h")
        .add("HGETALL rare:h")
        .add("HINCRBY rare:h n 3")
        .add("HINCRBYFLOAT rare:h n 1.5")
        .add("HSTRLEN rare:h f1")
        .add("HRANDFIELD rare:h")
        .add("HRANDFIELD rare:h 2")
        .add("HRANDFIELD rare:h -3 WITHVALUES")
        .add("HSCAN rare:h 0")
        .add("HSCAN rare:h 0 MATCH f* COUNT 10")
        .add("HDEL rare:h f1 f2");
}

fn sets(s: &mut Section, _rng: &mut ChaCha8Rng) {
    s.batch(HOME_DB)
        .add("DEL rare:x rare:x2 rare:x3")
        .add("SADD rare:x a b c d 1")
        .add("SADD rare:x2 c d e")
        .add("SREM rare:x 1 nothing")
        .add("SMEMBERS rare:x")
        .add("SISMEMBER rare:x a")
        .add("SMISMEMBER rare:x a z")
        .add("SCARD rare:x")
        .add("SRANDMEMBER rare:x")
        .add("SRANDMEMBER rare:x -5")
        .add("SMOVE rare:x rare:x2 a")
        .add("SINTER rare:x rare:x2")
        .add("SUNION rare:x rare:x2")
        .add("SDIFF rare:x rare:x2")
        .add("SINTERCARD 2 rare:x rare:x2")
        .add("SINTERCARD 2 rare:x rare:x2 LIMIT 1")
        .add("SINTERSTORE rare:x3 rare:x rare:x2")
        .add("SUNIONSTORE rare:x3 rare:x rare:x2")
        .add("SDIFFSTORE rare:x3 rare:x rare:x2")
        .add("SSCAN rare:x 0")
        .add("SSCAN rare:x 0 MATCH * COUNT 5")
        .add("SPOP rare:x")
        .add("SPOP rare:x 2");
}

fn zsets(s: &mut Section, _rng: &mut ChaCha8Rng) {
    s.batch(HOME_DB)
        .add("DEL rare:z")
        .add("ZADD rare:z 1 a 2 b 3 c 4 d 5 e")
        .add("ZADD rare:z NX 9 a 6 f")
        .add("ZADD rare:z XX CH 7 a")
        .add("ZADD rare:z GT CH 1 b 8 c")
        .add("ZADD rare:z LT 0 d")
        .add("ZADD rare:z INCR 2 e")
        .add("ZINCRBY rare:z 1 f")
        .add("ZCARD rare:z")
        .add("ZSCORE rare:z a")
        .add("ZMSCORE rare:z a nothing")
        .add("ZRANK rare:z a")
        .add("ZREVRANK rare:z a")
        .add("ZCOUNT rare:z 1 5")
        .add("ZLEXCOUNT rare:z - +")
        .add("ZRANDMEMBER rare:z")
        .add("ZRANDMEMBER rare:z 2 WITHSCORES")
        .add("ZSCAN rare:z 0")
        .add("ZSCAN rare:z 0 MATCH * COUNT 10")
        .add("ZREM rare:z nothing f")
        .add("ZPOPMIN rare:z")
        .add("ZPOPMAX rare:z 2")
        .add("ZMPOP 1 rare:z MIN")
        .add("ZMPOP 1 rare:z MAX COUNT 2");
}

fn zsets_ranges(s: &mut Section, _rng: &mut ChaCha8Rng) {
    s.batch(HOME_DB)
        .add("DEL rare:zr rare:zl rare:zd")
        .add("ZADD rare:zr 1 a 2 b 3 c 4 d 5 e 6 f")
        .add("ZADD rare:zl 0 a 0 b 0 c 0 d 0 e")
        .add("ZRANGE rare:zr 0 -1")
        .add("ZRANGE rare:zr 0 -1 WITHSCORES")
        .add("ZRANGE rare:zr (1 5 BYSCORE LIMIT 1 2")
        .add("ZRANGE rare:zr 5 1 BYSCORE REV WITHSCORES")
        .add("ZRANGE rare:zl [b (e BYLEX")
        .add("ZRANGE rare:zl + - BYLEX REV LIMIT 0 2")
        .add("ZREVRANGE rare:zr 0 2")
        .add("ZREVRANGE rare:zr 0 2 WITHSCORES")
        .add("ZRANGEBYSCORE rare:zr -inf +inf")
        .add("ZRANGEBYSCORE rare:zr 2 5 WITHSCORES LIMIT 1 2")
        .add("ZREVRANGEBYSCORE rare:zr 5 2 WITHSCORES LIMIT 0 2")
        .add("ZRANGEBYLEX rare:zl - + LIMIT 1 2")
        .add("ZREVRANGEBYLEX rare:zl + - LIMIT 0 3")
        .add("ZRANGESTORE rare:zd rare:zr 0 2")
        .add("ZRANGESTORE rare:zd rare:zr 2 5 BYSCORE LIMIT 0 2")
        .add("ZRANGESTORE rare:zd rare:zl [a [c BYLEX")
        .add("ZRANGESTORE rare:zd rare:zr 5 1 BYSCORE REV")
        .add("ZREMRANGEBYRANK rare:zr 0 0")
        .add("ZREMRANGEBYSCORE rare:zr 5 6")
        .add("ZREMRANGEBYLEX rare:zl [a [b");
}

fn zsets_algebra(s: &mut Section, _rng: &mut ChaCha8Rng) {
    s.batch(HOME_DB)
        .add("DEL rare:za rare:zb rare:zc")
        .add("ZADD rare:za 1 a 2 b 3 c")
        .add("ZADD rare:zb 10 b 20 c 30 d")
        .add("ZUNION 2 rare:za rare:zb")
        .add("ZUNION 2 rare:za rare:zb WEIGHTS 1 2 AGGREGATE SUM WITHSCORES")
        .add("ZUNION 2 rare:za rare:zb AGGREGATE MIN")
        .add("ZUNION 2 rare:za rare:zb AGGREGATE MAX WITHSCORES")
        .add("ZINTER 2 rare:za rare:zb")
        .add("ZINTER 2 rare:za rare:zb WEIGHTS 2 1 AGGREGATE SUM WITHSCORES")
        .add("ZINTER 2 rare:za rare:zb AGGREGATE MIN")
        .add("ZINTER 2 rare:za rare:zb AGGREGATE MAX WITHSCORES")
        .add("ZDIFF 2 rare:za rare:zb")
        .add("ZDIFF 2 rare:za rare:zb WITHSCORES")
        .add("ZUNIONSTORE rare:zc 2 rare:za rare:zb")
        .add("ZUNIONSTORE rare:zc 2 rare:za rare:zb WEIGHTS 1 3 AGGREGATE SUM")
        .add("ZUNIONSTORE rare:zc 2 rare:za rare:zb AGGREGATE MIN")
        .add("ZUNIONSTORE rare:zc 2 rare:za rare:zb AGGREGATE MAX")
        .add("ZINTERSTORE rare:zc 2 rare:za rare:zb")
        .add("ZINTERSTORE rare:zc 2 rare:za rare:zb WEIGHTS 1 3 AGGREGATE SUM")
        .add("ZINTERSTORE rare:zc 2 rare:za rare:zb AGGREGATE MIN")
        .add("ZINTERSTORE rare:zc 2 rare:za rare:zb AGGREGATE MAX")
        .add("ZDIFFSTORE rare:zc 2 rare:za rare:zb")
        .add("ZINTERCARD 2 rare:za rare:zb")
        .add("ZINTERCARD 2 rare:za rare:zb LIMIT 1");
}

fn sort(s: &mut Section, _rng: &mut ChaCha8Rng) {
    s.batch(HOME_DB)
        .add("DEL rare:so rare:sa rare:sd")
        .add("RPUSH rare:so 3 1 2")
        .add("SADD rare:sa b a c")
        .add("MSET rare:w_1 30 rare:w_2 10 rare:w_3 20 rare:o_1 x rare:o_2 y rare:o_3 z")
        .add("SORT rare:so")
        .add("SORT rare:so DESC LIMIT 0 2")
        .add("SORT rare:so ASC")
        .add("SORT rare:sa ALPHA")
        .add("SORT rare:so BY rare:w_* GET # GET rare:o_*")
        .add("SORT rare:so BY nosort")
        .add("SORT rare:so LIMIT 1 1 STORE rare:sd")
        .add("SORT_RO rare:so")
        .add("SORT_RO rare:so BY rare:w_* GET # GET rare:o_* LIMIT 0 2 DESC")
        .add("SORT_RO rare:sa ALPHA ASC")
        .add("DEL rare:w_1 rare:w_2 rare:w_3 rare:o_1 rare:o_2 rare:o_3");
}
