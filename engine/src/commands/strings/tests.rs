//! The string families' behaviour, against Redis 7.0's replies.

use crate::resp::Frame;
use crate::testing::{bulk, err, int, simple, TestEngine, UNIX_ORIGIN_US};
use crate::value::RString;
use crate::{ClientId, Config};

const NOW_MS: u64 = UNIX_ORIGIN_US / 1000;
const SYNTAX: &str = "ERR syntax error";
const NOT_INT: &str = "ERR value is not an integer or out of range";
const NOT_FLOAT: &str = "ERR value is not a valid float";

fn setup() -> (TestEngine, ClientId) {
    let mut t = TestEngine::new();
    let c = t.connect();
    (t, c)
}

fn ok() -> Frame {
    simple("OK")
}

fn nil() -> Frame {
    Frame::Null
}

fn arr(items: Vec<Frame>) -> Frame {
    Frame::Array(items)
}

/// The stored string, read straight from the keyspace (no lazy expiry).
fn stored(t: &TestEngine, key: &str) -> Option<RString> {
    let v = t.engine.server().keyspace.dbs[0].get(key.as_bytes())?;
    Some(v.as_str().expect("a string").clone())
}

fn expire_of(t: &TestEngine, key: &str) -> Option<u64> {
    t.engine.server().keyspace.dbs[0].get_expire(key.as_bytes())
}

#[test]
fn get_and_set() {
    let (mut t, c) = setup();
    assert_eq!(t.cmd(c, &["GET", "k"]), nil());
    assert_eq!(t.cmd(c, &["SET", "k", "v"]), ok());
    assert_eq!(t.cmd(c, &["get", "k"]), bulk("v"));
    assert_eq!(t.cmd(c, &["SET", "k", ""]), ok());
    assert_eq!(t.cmd(c, &["GET", "k"]), bulk(""));
    assert_eq!(
        t.cmd(c, &["GET"]),
        err("ERR wrong number of arguments for 'get' command")
    );
    assert_eq!(
        t.cmd(c, &["SET", "k"]),
        err("ERR wrong number of arguments for 'set' command")
    );
    let binary: &[u8] = b"a\0b\r\nc";
    assert_eq!(t.cmd_bytes(c, &[b"SET", b"bin", binary]), ok());
    assert_eq!(t.cmd(c, &["GET", "bin"]), Frame::Bulk(binary.to_vec()));
}

#[test]
fn set_nx_xx_get() {
    let (mut t, c) = setup();
    assert_eq!(t.cmd(c, &["SET", "k", "1", "XX"]), nil());
    assert_eq!(t.cmd(c, &["SET", "k", "1", "nx"]), ok());
    assert_eq!(t.cmd(c, &["SET", "k", "2", "NX"]), nil());
    assert_eq!(t.cmd(c, &["SET", "k", "3", "XX"]), ok());
    assert_eq!(t.cmd(c, &["GET", "k"]), bulk("3"));
    assert_eq!(t.cmd(c, &["SET", "k", "4", "GET"]), bulk("3"));
    assert_eq!(t.cmd(c, &["SET", "new", "x", "GET"]), nil());
    assert_eq!(t.cmd(c, &["GET", "new"]), bulk("x"));
    // NX with GET: the old value comes back and nothing is written.
    assert_eq!(t.cmd(c, &["SET", "k", "5", "NX", "GET"]), bulk("4"));
    assert_eq!(t.cmd(c, &["GET", "k"]), bulk("4"));
    assert_eq!(t.cmd(c, &["SET", "missing", "5", "XX", "GET"]), nil());
    assert_eq!(t.cmd(c, &["GET", "missing"]), nil());
    // Repeated options are fine.
    assert_eq!(t.cmd(c, &["SET", "k", "6", "NX", "NX"]), nil());
    assert_eq!(t.cmd(c, &["SET", "k", "6", "GET", "GET"]), bulk("4"));
}

#[test]
fn set_option_conflicts_are_syntax_errors() {
    let (mut t, c) = setup();
    for opts in [
        &["NX", "XX"][..],
        &["XX", "NX"],
        &["EX", "10", "PX", "10"],
        &["PX", "10", "EX", "10"],
        &["EX", "10", "EXAT", "10"],
        &["PXAT", "10", "PX", "10"],
        &["EX", "10", "KEEPTTL"],
        &["KEEPTTL", "EX", "10"],
        &["KEEPTTL", "PXAT", "10"],
        &["EX"],
        &["PX"],
        &["PERSIST"],
        &["FOO"],
        &["NXX"],
        &["E"],
    ] {
        let mut args = vec!["SET", "k", "v"];
        args.extend_from_slice(opts);
        assert_eq!(t.cmd(c, &args), err(SYNTAX), "{opts:?}");
    }
    assert_eq!(t.cmd(c, &["GET", "k"]), nil());
    // Options are C strings to Redis: an embedded NUL ends them.
    assert_eq!(t.cmd_bytes(c, &[b"SET", b"k", b"v", b"nx\0junk"]), ok());
}

#[test]
fn set_expire_options() {
    let (mut t, c) = setup();
    assert_eq!(t.cmd(c, &["SET", "k", "v", "EX", "10"]), ok());
    assert_eq!(expire_of(&t, "k"), Some(NOW_MS + 10_000));
    assert_eq!(t.cmd(c, &["SET", "k", "v", "px", "1500"]), ok());
    assert_eq!(expire_of(&t, "k"), Some(NOW_MS + 1500));
    assert_eq!(t.cmd(c, &["SET", "k", "v", "EXAT", "1800000000"]), ok());
    assert_eq!(expire_of(&t, "k"), Some(1_800_000_000_000));
    assert_eq!(t.cmd(c, &["SET", "k", "v", "PXAT", "1800000000123"]), ok());
    assert_eq!(expire_of(&t, "k"), Some(1_800_000_000_123));
    // The last of a repeated option wins.
    assert_eq!(t.cmd(c, &["SET", "k", "v", "EX", "10", "EX", "20"]), ok());
    assert_eq!(expire_of(&t, "k"), Some(NOW_MS + 20_000));
    assert_eq!(t.cmd(c, &["SET", "k", "w", "KEEPTTL"]), ok());
    assert_eq!(expire_of(&t, "k"), Some(NOW_MS + 20_000));
    assert_eq!(t.cmd(c, &["SET", "k", "x"]), ok());
    assert_eq!(expire_of(&t, "k"), None);
    // The key disappears once its time comes.
    assert_eq!(t.cmd(c, &["SET", "k", "v", "PX", "100"]), ok());
    t.advance_ms(99);
    assert_eq!(t.cmd(c, &["GET", "k"]), bulk("v"));
    t.advance_ms(1);
    assert_eq!(t.cmd(c, &["GET", "k"]), nil());
}

#[test]
fn set_expire_errors() {
    let (mut t, c) = setup();
    let invalid = err("ERR invalid expire time in 'set' command");
    for (opt, v) in [
        ("EX", "0"),
        ("EX", "-1"),
        ("PX", "0"),
        ("EXAT", "0"),
        ("PXAT", "-5"),
        ("EX", "9999999999999999"),
        ("EX", "9223372036854776"),
        ("PX", "9223372036854775807"),
        ("EXAT", "9223372036854776"),
    ] {
        assert_eq!(t.cmd(c, &["SET", "k", "v", opt, v]), invalid, "{opt} {v}");
    }
    for v in ["abc", "1.5", " 1", "01", "9223372036854775808", ""] {
        assert_eq!(t.cmd(c, &["SET", "k", "v", "EX", v]), err(NOT_INT), "{v:?}");
    }
    assert_eq!(t.cmd(c, &["GET", "k"]), nil());
    // The largest absolute times are valid.
    assert_eq!(
        t.cmd(c, &["SET", "k", "v", "EXAT", "9223372036854775"]),
        ok()
    );
    assert_eq!(expire_of(&t, "k"), Some(9_223_372_036_854_775_000));
    assert_eq!(
        t.cmd(c, &["SET", "k", "v", "PXAT", "9223372036854775807"]),
        ok()
    );
    // An expire error comes before GET's reply.
    assert_eq!(t.cmd(c, &["SET", "k", "v", "GET", "EX", "0"]), invalid);
}

#[test]
fn set_with_a_past_time_keeps_the_key_until_expiry() {
    let (mut t, c) = setup();
    assert_eq!(t.cmd(c, &["SET", "k", "v", "PXAT", "1"]), ok());
    // Like Redis 7.0, the key is stored with its past deadline and is
    // removed (and counted as expired) on the next access.
    assert_eq!(expire_of(&t, "k"), Some(1));
    assert_eq!(t.cmd(c, &["GET", "k"]), nil());
    assert!(stored(&t, "k").is_none());
    assert_eq!(t.engine.server().keyspace.expired_keys, 1);
}

#[test]
fn setnx_setex_psetex() {
    let (mut t, c) = setup();
    assert_eq!(t.cmd(c, &["SETNX", "k", "1"]), int(1));
    assert_eq!(t.cmd(c, &["SETNX", "k", "2"]), int(0));
    assert_eq!(t.cmd(c, &["GET", "k"]), bulk("1"));
    assert_eq!(t.cmd(c, &["SETEX", "k", "10", "v"]), ok());
    assert_eq!(t.cmd(c, &["GET", "k"]), bulk("v"));
    assert_eq!(expire_of(&t, "k"), Some(NOW_MS + 10_000));
    assert_eq!(t.cmd(c, &["PSETEX", "k", "10", "w"]), ok());
    assert_eq!(expire_of(&t, "k"), Some(NOW_MS + 10));
    assert_eq!(
        t.cmd(c, &["SETEX", "k", "0", "v"]),
        err("ERR invalid expire time in 'setex' command")
    );
    assert_eq!(
        t.cmd(c, &["PSETEX", "k", "-5", "v"]),
        err("ERR invalid expire time in 'psetex' command")
    );
    assert_eq!(
        t.cmd(c, &["SETEX", "k", "9223372036854775", "v"]),
        err("ERR invalid expire time in 'setex' command")
    );
    assert_eq!(t.cmd(c, &["SETEX", "k", "abc", "v"]), err(NOT_INT));
    assert_eq!(t.cmd(c, &["GET", "k"]), bulk("w"));
    t.advance_ms(10);
    assert_eq!(t.cmd(c, &["GET", "k"]), nil());
    assert_eq!(
        t.cmd(c, &["SETEX", "k", "10"]),
        err("ERR wrong number of arguments for 'setex' command")
    );
}

#[test]
fn mget_mset_msetnx() {
    let (mut t, c) = setup();
    assert_eq!(t.cmd(c, &["MSET", "a", "1", "b", "2", "a", "3"]), ok());
    assert_eq!(
        t.cmd(c, &["MGET", "a", "b", "c"]),
        arr(vec![bulk("3"), bulk("2"), nil()])
    );
    assert_eq!(
        t.cmd(c, &["MSET", "a"]),
        err("ERR wrong number of arguments for 'mset' command")
    );
    assert_eq!(
        t.cmd(c, &["MSET", "a", "1", "b"]),
        err("ERR wrong number of arguments for 'mset' command")
    );
    assert_eq!(
        t.cmd(c, &["MSETNX", "x", "1", "y"]),
        err("ERR wrong number of arguments for 'msetnx' command")
    );
    assert_eq!(t.cmd(c, &["MSETNX", "b", "9", "c", "9"]), int(0));
    assert_eq!(t.cmd(c, &["GET", "c"]), nil());
    assert_eq!(t.cmd(c, &["MSETNX", "c", "1", "c", "2", "d", "3"]), int(1));
    assert_eq!(
        t.cmd(c, &["MGET", "c", "d"]),
        arr(vec![bulk("2"), bulk("3")])
    );
    // MSET clears TTLs.
    assert_eq!(t.cmd(c, &["SET", "e", "v", "EX", "100"]), ok());
    assert_eq!(t.cmd(c, &["MSET", "e", "w"]), ok());
    assert_eq!(expire_of(&t, "e"), None);
    assert_eq!(
        t.cmd(c, &["MGET"]),
        err("ERR wrong number of arguments for 'mget' command")
    );
}

#[test]
fn getset_getdel() {
    let (mut t, c) = setup();
    assert_eq!(t.cmd(c, &["GETSET", "k", "1"]), nil());
    assert_eq!(t.cmd(c, &["SET", "k", "1", "EX", "100"]), ok());
    assert_eq!(t.cmd(c, &["GETSET", "k", "2"]), bulk("1"));
    assert_eq!(t.cmd(c, &["GET", "k"]), bulk("2"));
    // GETSET clears the TTL.
    assert_eq!(expire_of(&t, "k"), None);
    assert_eq!(t.cmd(c, &["GETDEL", "k"]), bulk("2"));
    assert_eq!(t.cmd(c, &["GETDEL", "k"]), nil());
    assert!(stored(&t, "k").is_none());
}

#[test]
fn getex_options() {
    let (mut t, c) = setup();
    assert_eq!(t.cmd(c, &["GETEX", "k"]), nil());
    // A missing key is null even with an invalid time.
    assert_eq!(t.cmd(c, &["GETEX", "k", "EX", "abc"]), nil());
    assert_eq!(t.cmd(c, &["GETEX", "k", "EX", "0"]), nil());
    assert_eq!(t.cmd(c, &["SET", "k", "v"]), ok());
    assert_eq!(t.cmd(c, &["GETEX", "k"]), bulk("v"));
    assert_eq!(expire_of(&t, "k"), None);
    assert_eq!(t.cmd(c, &["GETEX", "k", "EX", "10"]), bulk("v"));
    assert_eq!(expire_of(&t, "k"), Some(NOW_MS + 10_000));
    assert_eq!(t.cmd(c, &["GETEX", "k", "PX", "10"]), bulk("v"));
    assert_eq!(expire_of(&t, "k"), Some(NOW_MS + 10));
    assert_eq!(t.cmd(c, &["GETEX", "k", "EXAT", "1800000000"]), bulk("v"));
    assert_eq!(expire_of(&t, "k"), Some(1_800_000_000_000));
    assert_eq!(
        t.cmd(c, &["GETEX", "k", "PXAT", "1800000000001"]),
        bulk("v")
    );
    assert_eq!(expire_of(&t, "k"), Some(1_800_000_000_001));
    assert_eq!(t.cmd(c, &["GETEX", "k", "PERSIST"]), bulk("v"));
    assert_eq!(expire_of(&t, "k"), None);
    assert_eq!(t.cmd(c, &["GETEX", "k", "PERSIST"]), bulk("v"));
    assert_eq!(t.cmd(c, &["GETEX", "k", "EX", "abc"]), err(NOT_INT));
    assert_eq!(
        t.cmd(c, &["GETEX", "k", "EX", "0"]),
        err("ERR invalid expire time in 'getex' command")
    );
    for opts in [
        &["NX"][..],
        &["XX"],
        &["GET"],
        &["KEEPTTL"],
        &["PERSIST", "EX", "1"],
        &["EX", "1", "PERSIST"],
        &["EX", "1", "PX", "1"],
        &["EX"],
    ] {
        let mut args = vec!["GETEX", "k"];
        args.extend_from_slice(opts);
        assert_eq!(t.cmd(c, &args), err(SYNTAX), "{opts:?}");
    }
    // A syntax error is reported even for a missing key.
    assert_eq!(t.cmd(c, &["GETEX", "nokey", "NX"]), err(SYNTAX));
    // An absolute time in the past deletes the key after replying, and
    // does not count as an expiry.
    assert_eq!(t.cmd(c, &["GETEX", "k", "PXAT", "1"]), bulk("v"));
    assert!(stored(&t, "k").is_none());
    assert_eq!(t.engine.server().keyspace.expired_keys, 0);
}

#[test]
fn append_and_strlen() {
    let (mut t, c) = setup();
    assert_eq!(t.cmd(c, &["STRLEN", "k"]), int(0));
    assert_eq!(t.cmd(c, &["APPEND", "k", "abc"]), int(3));
    assert!(!stored(&t, "k").unwrap().is_raw());
    assert_eq!(t.cmd(c, &["APPEND", "k", ""]), int(3));
    assert!(stored(&t, "k").unwrap().is_raw());
    assert_eq!(t.cmd(c, &["APPEND", "k", "def"]), int(6));
    assert_eq!(t.cmd(c, &["GET", "k"]), bulk("abcdef"));
    assert_eq!(t.cmd(c, &["STRLEN", "k"]), int(6));
    // APPEND keeps the TTL.
    assert_eq!(t.cmd(c, &["SET", "e", "x", "EX", "100"]), ok());
    assert_eq!(t.cmd(c, &["APPEND", "e", "y"]), int(2));
    assert_eq!(expire_of(&t, "e"), Some(NOW_MS + 100_000));
}

#[test]
fn append_and_setrange_obey_proto_max_bulk_len() {
    let mut t = TestEngine::with_config(Config {
        proto_max_bulk_len_bytes: 20,
        ..Config::default()
    });
    let c = t.connect();
    let too_long = err("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
    assert_eq!(t.cmd(c, &["SET", "k", "123456789012345678"]), ok());
    assert_eq!(t.cmd(c, &["APPEND", "k", "90"]), int(20));
    assert_eq!(t.cmd(c, &["APPEND", "k", "x"]), too_long);
    assert_eq!(t.cmd(c, &["SETRANGE", "k", "20", "x"]), too_long);
    assert_eq!(t.cmd(c, &["SETRANGE", "k", "19", "x"]), int(20));
    assert_eq!(t.cmd(c, &["SETRANGE", "new", "20", "x"]), too_long);
    assert_eq!(t.cmd(c, &["SETRANGE", "new", "19", "x"]), int(20));
    assert_eq!(
        t.cmd(c, &["SETRANGE", "new", "9223372036854775807", "x"]),
        too_long
    );
    // Setting nothing is never too long.
    assert_eq!(t.cmd(c, &["SETRANGE", "none", "100", ""]), int(0));
    assert_eq!(t.cmd(c, &["SETRANGE", "k", "100", ""]), int(20));
    assert_eq!(t.cmd(c, &["GET", "k"]), bulk("1234567890123456789x"));
}

#[test]
fn getrange_and_substr() {
    let (mut t, c) = setup();
    assert_eq!(t.cmd(c, &["SET", "s", "hello"]), ok());
    for (start, end, want) in [
        ("0", "-1", "hello"),
        ("-3", "-1", "llo"),
        ("-1", "-3", ""),
        ("10", "20", ""),
        ("2", "100", "llo"),
        ("-100", "1", "he"),
        ("0", "0", "h"),
        ("4", "4", "o"),
        ("3", "1", ""),
        ("-9223372036854775808", "-1", "hello"),
        ("0", "9223372036854775807", "hello"),
        ("-1", "-1", "o"),
        ("0", "-100", "h"),
    ] {
        assert_eq!(
            t.cmd(c, &["GETRANGE", "s", start, end]),
            bulk(want),
            "{start} {end}"
        );
    }
    assert_eq!(t.cmd(c, &["SUBSTR", "s", "1", "2"]), bulk("el"));
    assert_eq!(t.cmd(c, &["GETRANGE", "missing", "0", "1"]), bulk(""));
    assert_eq!(t.cmd(c, &["GETRANGE", "s", "a", "1"]), err(NOT_INT));
    assert_eq!(
        t.cmd(c, &["GETRANGE", "s", "0", "9223372036854775808"]),
        err(NOT_INT)
    );
    assert_eq!(t.cmd(c, &["GETRANGE", "missing", "x", "1"]), err(NOT_INT));
    assert_eq!(t.cmd(c, &["SET", "e", ""]), ok());
    assert_eq!(t.cmd(c, &["GETRANGE", "e", "0", "-1"]), bulk(""));
    assert_eq!(t.cmd(c, &["GETRANGE", "e", "-1", "0"]), bulk(""));
    assert_eq!(t.cmd(c, &["SET", "i", "123"]), ok());
    assert_eq!(t.cmd(c, &["GETRANGE", "i", "1", "1"]), bulk("2"));
    assert_eq!(
        t.cmd(c, &["GETRANGE", "s", "0"]),
        err("ERR wrong number of arguments for 'getrange' command")
    );
}

#[test]
fn setrange() {
    let (mut t, c) = setup();
    assert_eq!(t.cmd(c, &["SETRANGE", "k", "0", ""]), int(0));
    assert!(stored(&t, "k").is_none());
    assert_eq!(t.cmd(c, &["SETRANGE", "k", "3", "ab"]), int(5));
    assert_eq!(t.cmd(c, &["GET", "k"]), Frame::Bulk(b"\0\0\0ab".to_vec()));
    assert!(stored(&t, "k").unwrap().is_raw());
    assert_eq!(t.cmd(c, &["SETRANGE", "k", "1", "XY"]), int(5));
    assert_eq!(t.cmd(c, &["GET", "k"]), Frame::Bulk(b"\0XYab".to_vec()));
    assert_eq!(t.cmd(c, &["SETRANGE", "k", "1", ""]), int(5));
    assert_eq!(t.cmd(c, &["SET", "h", "Hello World", "EX", "100"]), ok());
    assert_eq!(t.cmd(c, &["SETRANGE", "h", "6", "Redis"]), int(11));
    assert_eq!(t.cmd(c, &["GET", "h"]), bulk("Hello Redis"));
    assert_eq!(expire_of(&t, "h"), Some(NOW_MS + 100_000));
    assert_eq!(
        t.cmd(c, &["SETRANGE", "h", "-1", "x"]),
        err("ERR offset is out of range")
    );
    assert_eq!(t.cmd(c, &["SETRANGE", "h", "x", "x"]), err(NOT_INT));
}

#[test]
fn incr_decr_family() {
    let (mut t, c) = setup();
    assert_eq!(t.cmd(c, &["INCR", "n"]), int(1));
    assert_eq!(t.cmd(c, &["INCRBY", "n", "10"]), int(11));
    assert_eq!(t.cmd(c, &["DECR", "n"]), int(10));
    assert_eq!(t.cmd(c, &["DECRBY", "n", "-5"]), int(15));
    assert_eq!(t.cmd(c, &["GET", "n"]), bulk("15"));
    assert_eq!(t.cmd(c, &["DECR", "m"]), int(-1));
    assert_eq!(
        t.cmd(c, &["INCRBY", "x", "-9223372036854775808"]),
        int(i64::MIN)
    );
    // TTLs survive.
    assert_eq!(t.cmd(c, &["SET", "e", "5", "EX", "100"]), ok());
    assert_eq!(t.cmd(c, &["INCR", "e"]), int(6));
    assert_eq!(expire_of(&t, "e"), Some(NOW_MS + 100_000));
    // A fresh value: no raw encoding left over from APPEND.
    assert_eq!(t.cmd(c, &["APPEND", "e", "0"]), int(2));
    assert_eq!(t.cmd(c, &["INCR", "e"]), int(61));
    assert!(!stored(&t, "e").unwrap().is_raw());
}

#[test]
fn incr_decr_errors() {
    let (mut t, c) = setup();
    let overflow = err("ERR increment or decrement would overflow");
    assert_eq!(t.cmd(c, &["SET", "max", "9223372036854775807"]), ok());
    assert_eq!(t.cmd(c, &["INCR", "max"]), overflow);
    assert_eq!(t.cmd(c, &["INCRBY", "max", "1"]), overflow);
    assert_eq!(t.cmd(c, &["INCRBY", "max", "-1"]), int(i64::MAX - 1));
    assert_eq!(t.cmd(c, &["SET", "min", "-9223372036854775808"]), ok());
    assert_eq!(t.cmd(c, &["DECR", "min"]), overflow);
    assert_eq!(t.cmd(c, &["DECRBY", "min", "1"]), overflow);
    assert_eq!(
        t.cmd(c, &["DECRBY", "n", "-9223372036854775808"]),
        err("ERR decrement would overflow")
    );
    assert_eq!(t.cmd(c, &["INCRBY", "n", "abc"]), err(NOT_INT));
    assert_eq!(t.cmd(c, &["DECRBY", "n", "1.5"]), err(NOT_INT));
    for bad in [
        " 1",
        "01",
        "1.0",
        "abc",
        "",
        "-0",
        "+1",
        "99999999999999999999",
    ] {
        assert_eq!(t.cmd(c, &["SET", "s", bad]), ok());
        assert_eq!(t.cmd(c, &["INCR", "s"]), err(NOT_INT), "{bad:?}");
    }
    assert_eq!(t.cmd(c, &["GET", "n"]), nil());
}

#[test]
fn incrbyfloat() {
    let (mut t, c) = setup();
    assert_eq!(t.cmd(c, &["SET", "f", "10.50"]), ok());
    assert_eq!(t.cmd(c, &["INCRBYFLOAT", "f", "0.1"]), bulk("10.6"));
    assert_eq!(t.cmd(c, &["INCRBYFLOAT", "f", "-5"]), bulk("5.6"));
    assert_eq!(t.cmd(c, &["SET", "f", "5.0e3"]), ok());
    assert_eq!(t.cmd(c, &["INCRBYFLOAT", "f", "2.0e2"]), bulk("5200"));
    assert_eq!(t.cmd(c, &["GET", "f"]), bulk("5200"));
    assert_eq!(t.cmd(c, &["INCRBYFLOAT", "new", "0.1"]), bulk("0.1"));
    assert_eq!(t.cmd(c, &["INCRBYFLOAT", "new", "-0.1"]), bulk("0"));
    assert_eq!(t.cmd(c, &["INCRBYFLOAT", "hex", "0x10"]), bulk("16"));
    // TTLs survive.
    assert_eq!(t.cmd(c, &["SET", "e", "1", "EX", "100"]), ok());
    assert_eq!(t.cmd(c, &["INCRBYFLOAT", "e", "1.5"]), bulk("2.5"));
    assert_eq!(expire_of(&t, "e"), Some(NOW_MS + 100_000));
    // Errors: the stored value, then the increment, then the result.
    let nan_or_inf = err("ERR increment would produce NaN or Infinity");
    assert_eq!(t.cmd(c, &["INCRBYFLOAT", "e", "abc"]), err(NOT_FLOAT));
    assert_eq!(t.cmd(c, &["INCRBYFLOAT", "e", " 1"]), err(NOT_FLOAT));
    assert_eq!(t.cmd(c, &["INCRBYFLOAT", "e", "nan"]), err(NOT_FLOAT));
    assert_eq!(t.cmd(c, &["INCRBYFLOAT", "e", "1e5000"]), err(NOT_FLOAT));
    assert_eq!(t.cmd(c, &["INCRBYFLOAT", "e", "inf"]), nan_or_inf);
    assert_eq!(t.cmd(c, &["SET", "big", "1e4932"]), ok());
    assert_eq!(t.cmd(c, &["INCRBYFLOAT", "big", "1e4932"]), nan_or_inf);
    assert_eq!(t.cmd(c, &["SET", "s", "text"]), ok());
    assert_eq!(t.cmd(c, &["INCRBYFLOAT", "s", "1"]), err(NOT_FLOAT));
    assert_eq!(t.cmd(c, &["SET", "s", "inf"]), ok());
    assert_eq!(t.cmd(c, &["INCRBYFLOAT", "s", "x"]), err(NOT_FLOAT));
    assert_eq!(t.cmd(c, &["INCRBYFLOAT", "s", "1"]), nan_or_inf);
    assert_eq!(t.cmd(c, &["GET", "e"]), bulk("2.5"));
}

#[test]
fn lcs() {
    let (mut t, c) = setup();
    assert_eq!(t.cmd(c, &["LCS", "a", "b"]), bulk(""));
    assert_eq!(t.cmd(c, &["MSET", "a", "ohmytext", "b", "mynewtext"]), ok());
    assert_eq!(t.cmd(c, &["LCS", "a", "b"]), bulk("mytext"));
    assert_eq!(t.cmd(c, &["LCS", "a", "b", "LEN"]), int(6));
    let range = |a: i64, b: i64| arr(vec![int(a), int(b)]);
    assert_eq!(
        t.cmd(c, &["LCS", "a", "b", "IDX"]),
        arr(vec![
            bulk("matches"),
            arr(vec![
                arr(vec![range(4, 7), range(5, 8)]),
                arr(vec![range(2, 3), range(0, 1)]),
            ]),
            bulk("len"),
            int(6),
        ])
    );
    assert_eq!(
        t.cmd(
            c,
            &["LCS", "a", "b", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN"]
        ),
        arr(vec![
            bulk("matches"),
            arr(vec![arr(vec![range(4, 7), range(5, 8), int(4)])]),
            bulk("len"),
            int(6),
        ])
    );
    assert_eq!(
        t.cmd(c, &["LCS", "a", "b", "MINMATCHLEN", "-5", "IDX"]),
        t.cmd(c, &["LCS", "a", "b", "IDX"])
    );
    assert_eq!(
        t.cmd(c, &["LCS", "a", "b", "LEN", "IDX"]),
        err("ERR If you want both the length and indexes, please just use IDX.")
    );
    assert_eq!(t.cmd(c, &["LCS", "a", "b", "FOO"]), err(SYNTAX));
    assert_eq!(t.cmd(c, &["LCS", "a", "b", "MINMATCHLEN"]), err(SYNTAX));
    assert_eq!(
        t.cmd(c, &["LCS", "a", "b", "MINMATCHLEN", "x"]),
        err(NOT_INT)
    );
    assert_eq!(
        t.cmd(c, &["LCS", "a"]),
        err("ERR wrong number of arguments for 'lcs' command")
    );
}

#[test]
fn lcs_respects_the_transient_memory_limit() {
    let mut t = TestEngine::with_config(Config {
        proto_max_bulk_len_bytes: 100,
        ..Config::default()
    });
    let c = t.connect();
    assert_eq!(t.cmd(c, &["MSET", "a", "1234", "b", "1234"]), ok());
    assert_eq!(t.cmd(c, &["LCS", "a", "b"]), bulk("1234"));
    assert_eq!(t.cmd(c, &["SET", "b", "12345"]), ok());
    assert_eq!(
        t.cmd(c, &["LCS", "a", "b"]),
        err("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
    );
}

#[test]
fn resp3_nulls() {
    let (mut t, c) = setup();
    assert_eq!(t.cmd(c, &["HELLO", "3"]).clone(), t.cmd(c, &["HELLO", "3"]));
    assert_eq!(t.raw(c, b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"), b"_\r\n");
    assert_eq!(
        t.raw(c, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"),
        b"+OK\r\n"
    );
}

#[test]
fn work_grows_with_keys_and_bytes() {
    let mut t = TestEngine::with_config(Config {
        record_executions: true,
        ..Config::default()
    });
    let c = t.connect();
    let work_of = |t: &mut TestEngine, args: &[&str]| {
        t.events.clear();
        t.cmd(c, args);
        t.events
            .iter()
            .find_map(|e| match e {
                crate::Event::Executed(x) => Some(x.work_units),
                _ => None,
            })
            .expect("an execution record")
    };
    let one = work_of(&mut t, &["MGET", "a"]);
    let ten = work_of(
        &mut t,
        &["MGET", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"],
    );
    assert_eq!(ten - one, 9);
    let small = work_of(&mut t, &["SETRANGE", "s", "0", "x"]);
    let big = work_of(&mut t, &["SETRANGE", "s", "6400", "x"]);
    assert!(big >= small + 100, "{small} {big}");
}
