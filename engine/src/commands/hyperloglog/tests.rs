//! Engine-level tests of the HyperLogLog commands: encodings, the cache
//! bit, corruption errors and work. (Replies, estimates and the stored
//! bytes are compared with redis-server by tests/scripts/hll.txt and
//! tests/tests/hll_geo.rs.)

use crate::resp::Frame;
use crate::testing::{bulk, err, int, simple, TestEngine};
use crate::Config;

fn engine() -> TestEngine {
    TestEngine::with_config(Config {
        record_executions: true,
        ..Config::default()
    })
}

#[test]
fn pfadd_creates_a_sparse_hll_and_pfcount_caches_its_estimate() {
    let mut t = engine();
    let c = t.connect();
    assert_eq!(t.cmd(c, &["PFADD", "h", "a", "b", "c"]), int(1));
    assert_eq!(t.cmd(c, &["PFADD", "h", "a"]), int(0));
    assert_eq!(t.cmd(c, &["PFDEBUG", "ENCODING", "h"]), simple("sparse"));
    assert_eq!(t.cmd(c, &["PFCOUNT", "h"]), int(3));
    let Frame::Bulk(bytes) = t.cmd(c, &["GET", "h"]) else {
        panic!("a string")
    };
    assert_eq!(&bytes[..4], b"HYLL");
    assert_eq!(bytes[8], 3, "the cached cardinality");
    assert_eq!(bytes[15], 0, "the cache is valid");
    assert_eq!(t.cmd(c, &["PFDEBUG", "TODENSE", "h"]), int(1));
    assert_eq!(t.cmd(c, &["PFDEBUG", "TODENSE", "h"]), int(0));
    assert_eq!(t.cmd(c, &["PFCOUNT", "h"]), int(3));
}

#[test]
fn strings_that_are_not_hlls_are_refused() {
    let mut t = engine();
    let c = t.connect();
    t.cmd(c, &["SET", "s", "hello"]);
    let not_hll = err("WRONGTYPE Key is not a valid HyperLogLog string value.");
    assert_eq!(t.cmd(c, &["PFADD", "s", "a"]), not_hll);
    assert_eq!(t.cmd(c, &["PFCOUNT", "s"]), not_hll);
    assert_eq!(t.cmd(c, &["PFCOUNT", "nokey", "s"]), not_hll);
    assert_eq!(t.cmd(c, &["PFMERGE", "d", "s"]), not_hll);
    // A sparse body that covers one register is corrupt.
    let mut corrupt = b"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80".to_vec();
    corrupt.push(0);
    t.cmd_bytes(c, &[b"SET", b"bad", &corrupt]);
    let invalid = err("INVALIDOBJ Corrupted HLL object detected");
    assert_eq!(t.cmd(c, &["PFCOUNT", "bad"]), invalid);
    assert_eq!(t.cmd(c, &["PFADD", "bad", "x"]), invalid);
    assert_eq!(t.cmd(c, &["PFMERGE", "d", "bad"]), invalid);
    assert_eq!(t.cmd(c, &["PFDEBUG", "DECODE", "bad"]), bulk("z:1"));
}

#[test]
fn elements_added_before_a_corruption_leave_the_cache_invalid() {
    // redis-server 7.0.15: a sparse HLL with a VAL byte appended still
    // takes elements in its registers, until a promotion finds it corrupt;
    // the updates before that stay, and so does their invalidated cache.
    let mut t = TestEngine::with_config(Config {
        record_executions: true,
        hll_sparse_max_bytes: 34,
        ..Config::default()
    });
    let c = t.connect();
    assert_eq!(t.cmd(c, &["PFADD", "k", "a", "b", "c"]), int(1));
    assert_eq!(t.cmd(c, &["PFCOUNT", "k"]), int(3));
    t.cmd_bytes(c, &[b"APPEND", b"k", b"\xc3\xbf"]);
    let invalid = err("INVALIDOBJ Corrupted HLL object detected");
    assert_eq!(
        t.cmd(c, &["PFADD", "k", "d", "e", "f", "g", "h", "i", "j"]),
        invalid
    );
    let redis: &[u8] = b"HYLL\x01\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x80\
        \x5c\x7b\x80\x44\x76\x80\x50\xb1\x84\x4b\xfb\x80\x42\x5a\xc3\xbf";
    assert_eq!(t.cmd(c, &["GET", "k"]), Frame::Bulk(redis.to_vec()));
    assert_eq!(t.cmd(c, &["PFCOUNT", "k"]), invalid);
}

#[test]
fn pfmerge_and_a_union_count_agree() {
    let mut t = engine();
    let c = t.connect();
    t.cmd(c, &["PFADD", "a", "1", "2", "3"]);
    t.cmd(c, &["PFADD", "b", "3", "4"]);
    assert_eq!(t.cmd(c, &["PFCOUNT", "a", "b", "missing"]), int(4));
    assert_eq!(t.cmd(c, &["PFMERGE", "d", "a", "b"]), simple("OK"));
    assert_eq!(t.cmd(c, &["PFCOUNT", "d"]), int(4));
    assert_eq!(t.cmd(c, &["PFDEBUG", "ENCODING", "d"]), simple("sparse"));
}

#[test]
fn a_dense_count_is_charged_per_64_registers() {
    let mut t = engine();
    let c = t.connect();
    t.cmd(c, &["PFADD", "h", "x"]);
    t.cmd(c, &["PFDEBUG", "TODENSE", "h"]);
    t.cmd(c, &["PFCOUNT", "h"]);
    assert!(t.executed_work("pfcount") >= 256);
}

/// A small deterministic generator for the adversarial test.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn pick<'a>(&mut self, items: &[&'a [u8]]) -> &'a [u8] {
        items[self.next() as usize % items.len()]
    }
}

/// Corrupt and hand-made values never panic: random sparse bodies, dense
/// strings with registers above 51, truncated XZEROs, every command over
/// them in random order.
#[test]
fn adversarial_values_never_panic() {
    let mut t = engine();
    let c = t.connect();
    let mut rng = Lcg(18);
    let mut header = b"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80".to_vec();
    for round in 0..400 {
        let key = format!("k{}", round % 7);
        match rng.next() % 4 {
            0 => {
                let len = rng.next() as usize % 40;
                let mut v = header.clone();
                v.extend((0..len).map(|_| rng.next() as u8));
                t.cmd_bytes(c, &[b"SET", key.as_bytes(), &v]);
            }
            1 => {
                header[4] = 0;
                let mut v = header.clone();
                v.extend((0..crate::types::hll::DENSE_BYTES - 16).map(|_| rng.next() as u8));
                header[4] = 1;
                t.cmd_bytes(c, &[b"SET", key.as_bytes(), &v]);
            }
            _ => {}
        }
        let max_bytes = rng.pick(&[b"0", b"20", b"3000", b"100000"]);
        t.cmd_bytes(c, &[b"CONFIG", b"SET", b"hll-sparse-max-bytes", max_bytes]);
        let element = format!("e{}", rng.next());
        let other = format!("k{}", rng.next() % 7);
        let sub = rng.pick(&[b"GETREG", b"DECODE", b"ENCODING", b"TODENSE", b"nope"]);
        match rng.next() % 5 {
            0 => t.cmd(c, &["PFADD", &key, &element, "x", "y"]),
            1 => t.cmd(c, &["PFCOUNT", &key]),
            2 => t.cmd(c, &["PFCOUNT", &key, &other]),
            3 => t.cmd(c, &["PFMERGE", &key, &other]),
            _ => t.cmd_bytes(c, &[b"PFDEBUG", sub, key.as_bytes()]),
        };
    }
}

#[test]
fn pfselftest_passes_charges_its_work_and_leaves_the_keyspace_alone() {
    let mut t = engine();
    let c = t.connect();
    t.cmd(c, &["SET", "k", "v"]);
    assert_eq!(t.cmd(c, &["PFSELFTEST"]), simple("OK"));
    let units = t.executed_work("pfselftest");
    // 8 register cycles (512 units each) and 100,000 elements added twice.
    assert!(units > 200_000, "charged {units}");
    assert!(units < 2_000_000, "charged {units}");
    assert_eq!(t.cmd(c, &["DBSIZE"]), int(1));
    assert_eq!(
        t.cmd(c, &["PFSELFTEST", "x"]),
        err("ERR wrong number of arguments for 'pfselftest' command")
    );
}
