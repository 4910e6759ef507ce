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
