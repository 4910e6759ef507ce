//! Key life cycles that cross features: a key given a TTL, removed by one
//! path (DEL, UNLINK, GETDEL, expiry, SET over it, RENAME away or over it,
//! MOVE, FLUSHDB, SWAPDB, the pop or removal of its last element), seen
//! absent, then recreated by one of the paths that create keys (SET,
//! INCR, LPUSH, SADD, HSET, ZADD, COPY, RENAME, MOVE, the *STORE variants,
//! SORT STORE...). Each pass pairs every removal path with a creation path
//! (rotating, so that over passes and seeds the pairs vary). Expiry needs
//! time: its removal and the rest are two batches, the think time between
//! them ([`RARE_THINK_NS_MIN`]) longer than the 1 ms PX.
//!
//! [`RARE_THINK_NS_MIN`]: super::RARE_THINK_NS_MIN

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{Section, SectionFn, HOME_DB, OTHER_DB, SWAP_DBS};

pub(crate) const SECTIONS: &[SectionFn] = &[life_cycles];

/// Removal paths: setup of `rare:k` with a TTL, then its removal; the
/// database it runs in.
const REMOVALS: &[(&str, &[&str])] = &[
    ("del", &["SET rare:k v EX 100", "DEL rare:k"]),
    ("unlink", &["SET rare:k v PX 100000", "UNLINK rare:k"]),
    ("getdel", &["SETEX rare:k 100 v", "GETDEL rare:k"]),
    (
        "set",
        &["PSETEX rare:k 100000 v", "SET rare:k w", "DEL rare:k"],
    ),
    ("rename", &["SET rare:k v EX 100", "RENAME rare:k rare:k2"]),
    (
        "rename-over",
        &[
            "SET rare:k v EX 100",
            "SET rare:k2 w",
            "RENAME rare:k2 rare:k",
            "DEL rare:k",
        ],
    ),
    ("move", &["SET rare:k v EX 100", "MOVE rare:k 11"]),
    (
        "lpop",
        &["RPUSH rare:k a", "EXPIRE rare:k 100", "LPOP rare:k"],
    ),
    (
        "rpop",
        &["RPUSH rare:k a", "PEXPIRE rare:k 100000", "RPOP rare:k"],
    ),
    (
        "lmove",
        &[
            "RPUSH rare:k a",
            "EXPIRE rare:k 100",
            "LMOVE rare:k rare:k2 LEFT LEFT",
        ],
    ),
    (
        "ltrim",
        &["RPUSH rare:k a", "EXPIRE rare:k 100", "LTRIM rare:k 1 0"],
    ),
    (
        "spop",
        &["SADD rare:k a", "EXPIRE rare:k 100", "SPOP rare:k"],
    ),
    (
        "srem",
        &["SADD rare:k a", "EXPIRE rare:k 100", "SREM rare:k a"],
    ),
    (
        "hdel",
        &["HSET rare:k f v", "EXPIRE rare:k 100", "HDEL rare:k f"],
    ),
    (
        "zpopmin",
        &["ZADD rare:k 1 a", "EXPIRE rare:k 100", "ZPOPMIN rare:k"],
    ),
    (
        "zrem",
        &["ZADD rare:k 1 a", "EXPIRE rare:k 100", "ZREM rare:k a"],
    ),
];

/// Creation paths of `rare:k` (absent before), from `rare:src` where one
/// is needed.
const CREATIONS: &[&[&str]] = &[
    &["SET rare:k v"],
    &["SETNX rare:k v"],
    &["INCR rare:k"],
    &["INCRBYFLOAT rare:k 1.5"],
    &["APPEND rare:k v"],
    &["SETRANGE rare:k 2 v"],
    &["MSET rare:k v rare:src w"],
    &["LPUSH rare:k a"],
    &["RPUSH rare:k a"],
    &["RPUSH rare:src a", "LMOVE rare:src rare:k LEFT RIGHT"],
    &["SADD rare:k a"],
    &["SADD rare:src a", "SMOVE rare:src rare:k a"],
    &["HSET rare:k f v"],
    &["HINCRBY rare:k f 2"],
    &["ZADD rare:k 1 a"],
    &["ZINCRBY rare:k 2 a"],
    &["SET rare:src v", "COPY rare:src rare:k"],
    &["SET rare:src v", "RENAME rare:src rare:k"],
    &["SADD rare:src a", "SUNIONSTORE rare:k rare:src"],
    &["ZADD rare:src 1 a", "ZRANGESTORE rare:k rare:src 0 -1"],
    &["RPUSH rare:src 3 1 2", "SORT rare:src STORE rare:k"],
];

/// One life cycle: clean slate, `removal`, observe, `creation`, observe.
fn cycle(s: &mut Section, db: usize, removal: &[&str], creation: &[&str]) {
    s.batch(OTHER_DB).add("DEL rare:k");
    s.batch(db).add("DEL rare:k rare:k2 rare:src");
    for line in removal {
        s.add(line);
    }
    s.add("EXISTS rare:k");
    for line in creation {
        s.add(line);
    }
    s.add("EXISTS rare:k").add("DEL rare:k rare:k2 rare:src");
}

fn life_cycles(s: &mut Section, rng: &mut ChaCha8Rng) {
    let offset = rng.gen_range(0..CREATIONS.len());
    let total = REMOVALS.len() + 3;
    let creation = |i: usize| CREATIONS[(offset + i) % CREATIONS.len()];
    for (i, (_, removal)) in REMOVALS.iter().enumerate() {
        cycle(s, HOME_DB, removal, creation(i));
    }
    // Expiry: the key lives 1 ms; the next batch starts after it.
    s.batch(HOME_DB)
        .add("DEL rare:k rare:k2 rare:src")
        .add("SET rare:k v PX 1");
    s.batch(HOME_DB).add("EXISTS rare:k");
    for line in creation(REMOVALS.len()) {
        s.add(line);
    }
    s.add("EXISTS rare:k").add("DEL rare:k rare:k2 rare:src");
    // Database-wide removals, in the databases only `rare` uses.
    // The other database is emptied in the same pipeline as the SWAPDB:
    // a connection reset between two batches must not leave a key there
    // that the swap would bring back.
    let [a, b] = SWAP_DBS;
    let (select_a, select_b) = (format!("SELECT {a}"), format!("SELECT {b}"));
    let swap = format!("SWAPDB {a} {b}");
    cycle(
        s,
        a,
        &[
            &select_b,
            "FLUSHDB",
            &select_a,
            "SET rare:k v EX 100",
            &swap,
        ],
        creation(REMOVALS.len() + 1),
    );
    cycle(
        s,
        a,
        &["SET rare:k v EX 100", "FLUSHDB"],
        creation(REMOVALS.len() + 2),
    );
    // Created by MOVE: from the other database into the home one.
    s.batch(OTHER_DB).add("SET rare:k v");
    s.batch(HOME_DB)
        .add("DEL rare:k")
        .add("SET rare:k v EX 100")
        .add("DEL rare:k")
        .add(&format!("SELECT {OTHER_DB}"))
        .add(&format!("MOVE rare:k {HOME_DB}"))
        .add(&format!("SELECT {HOME_DB}"))
        .add("EXISTS rare:k")
        .add("DEL rare:k");
    // Every creation path once more after a DEL of a TTL key.
    for i in total..total + CREATIONS.len() {
        cycle(
            s,
            HOME_DB,
            &["SET rare:k v EX 100", "DEL rare:k"],
            creation(i),
        );
    }
}
