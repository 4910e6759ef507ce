use crate::resp::Frame;
use crate::testing::{bulk, err, int, TestEngine};
use crate::Config;

fn arr(items: &[&str]) -> Frame {
    Frame::Array(items.iter().map(|s| bulk(s)).collect())
}

#[test]
fn sadd_srem_and_encodings() {
    let mut t = TestEngine::new();
    let c = t.connect();
    assert_eq!(t.cmd(c, &["SADD", "s", "3", "1", "2", "1"]), int(3));
    assert_eq!(t.cmd(c, &["OBJECT", "ENCODING", "s"]), bulk("intset"));
    assert_eq!(t.cmd(c, &["SMEMBERS", "s"]), arr(&["1", "2", "3"]));
    assert_eq!(t.cmd(c, &["SADD", "s", "a"]), int(1));
    assert_eq!(t.cmd(c, &["OBJECT", "ENCODING", "s"]), bulk("hashtable"));
    assert_eq!(t.cmd(c, &["SREM", "s", "a", "1", "2", "3", "9"]), int(4));
    assert_eq!(t.cmd(c, &["EXISTS", "s"]), int(0));
    t.cmd(c, &["SET", "str", "v"]);
    assert_eq!(
        t.cmd(c, &["SADD", "str", "x"]),
        err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
}

#[test]
fn algebra_of_intsets_is_sorted() {
    let mut t = TestEngine::new();
    let c = t.connect();
    t.cmd(c, &["SADD", "a", "5", "1", "3", "7"]);
    t.cmd(c, &["SADD", "b", "3", "7", "9"]);
    assert_eq!(t.cmd(c, &["SINTER", "a", "b"]), arr(&["3", "7"]));
    assert_eq!(
        t.cmd(c, &["SUNION", "a", "b"]),
        arr(&["1", "3", "5", "7", "9"])
    );
    assert_eq!(t.cmd(c, &["SDIFF", "a", "b"]), arr(&["1", "5"]));
    assert_eq!(t.cmd(c, &["SDIFF", "a", "a"]), arr(&[]));
    assert_eq!(
        t.cmd(c, &["SINTERCARD", "2", "a", "b", "LIMIT", "1"]),
        int(1)
    );
    assert_eq!(t.cmd(c, &["SINTERSTORE", "d", "a", "nokey"]), int(0));
    assert_eq!(t.cmd(c, &["SUNIONSTORE", "d", "a", "b"]), int(5));
    assert_eq!(t.cmd(c, &["SCARD", "d"]), int(5));
}

#[test]
fn big_smembers_and_delete_charge_per_element() {
    let mut t = TestEngine::with_config(Config {
        record_executions: true,
        ..Config::default()
    });
    let c = t.connect();
    for i in 0..1000 {
        t.cmd(c, &["SADD", "big", &format!("m{i}")]);
    }
    t.cmd(c, &["SMEMBERS", "big"]);
    assert!(t.executed_work("smembers") >= 1000);
    t.cmd(c, &["DEL", "big"]);
    assert!(t.executed_work("del") >= 1000);
}

/// Sends an SSCAN/HSCAN and splits the reply into the next cursor and the
/// elements.
fn scan_call(t: &mut TestEngine, c: crate::client::ClientId, args: &[&str]) -> (u64, Vec<String>) {
    let Frame::Array(parts) = t.cmd(c, args) else {
        panic!("scan replies with an array");
    };
    let [Frame::Bulk(cursor), Frame::Array(items)] = &parts[..] else {
        panic!("scan replies [cursor, items]: {parts:?}");
    };
    let cursor = std::str::from_utf8(cursor).unwrap().parse().unwrap();
    let items = items
        .iter()
        .map(|k| match k {
            Frame::Bulk(b) => String::from_utf8(b.clone()).unwrap(),
            other => panic!("element is a bulk string: {other:?}"),
        })
        .collect();
    (cursor, items)
}

/// The SCAN guarantee for SSCAN and HSCAN: while other writes grow the
/// collection's table several times over and shrink it again between
/// calls, every element present for the whole iteration is returned.
#[test]
fn sscan_and_hscan_return_every_stable_element_across_grow_and_shrink() {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::collections::BTreeSet;

    for (seed, hash) in [(0u64, false), (1, true), (2, false), (3, true)] {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut t = TestEngine::with_config(Config {
            seed,
            ..Config::default()
        });
        let c = t.connect();
        // 150 stable fields must make a hash table (Redis's default
        // threshold, 512, would keep them in a listpack).
        t.cmd(c, &["CONFIG", "SET", "hash-max-listpack-entries", "128"]);
        let (add, del, scan) = if hash {
            ("HSET", "HDEL", "HSCAN")
        } else {
            ("SADD", "SREM", "SSCAN")
        };
        let put = |t: &mut TestEngine, m: &str| {
            if hash {
                t.cmd(c, &[add, "k", m, "v"]);
            } else {
                t.cmd(c, &[add, "k", m]);
            }
        };
        let stable: Vec<String> = (0..150).map(|i| format!("stable:{i}")).collect();
        for m in &stable {
            put(&mut t, m);
        }
        let mut churn: Vec<String> = Vec::new();
        let mut next = 0u64;
        let mut seen = BTreeSet::new();
        let mut cursor = 0u64;
        let mut calls = 0;
        loop {
            let cursor_text = cursor.to_string();
            let (next_cursor, items) =
                scan_call(&mut t, c, &[scan, "k", &cursor_text, "COUNT", "5"]);
            if hash {
                assert_eq!(items.len() % 2, 0);
                seen.extend(items.into_iter().step_by(2));
            } else {
                seen.extend(items);
            }
            cursor = next_cursor;
            calls += 1;
            if cursor == 0 {
                break;
            }
            assert!(calls < 10_000, "scan did not finish");
            match calls {
                3 => {
                    for _ in 0..3000 {
                        let m = format!("churn:{next}");
                        next += 1;
                        put(&mut t, &m);
                        churn.push(m);
                    }
                }
                12 => {
                    for m in churn.drain(..) {
                        t.cmd(c, &[del, "k", &m]);
                    }
                }
                _ => {
                    for _ in 0..rng.gen_range(0..6) {
                        if rng.gen_bool(0.5) || churn.is_empty() {
                            let m = format!("churn:{next}");
                            next += 1;
                            put(&mut t, &m);
                            churn.push(m);
                        } else {
                            let m = churn.swap_remove(rng.gen_range(0..churn.len()));
                            t.cmd(c, &[del, "k", &m]);
                        }
                    }
                }
            }
        }
        for m in &stable {
            assert!(
                seen.contains(m),
                "{m} present throughout but not returned (seed {seed})"
            );
        }
        assert!(calls > 20, "the iteration spanned the grow and the shrink");
    }
}
