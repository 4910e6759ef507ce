//! INCR DECR INCRBY DECRBY INCRBYFLOAT: the counters, read-modify-writes of
//! a string holding a number. The key keeps its TTL; a missing key counts
//! as 0.

use super::{long_double, string_at, WrongType, NOT_AN_INTEGER, STRING, WRITE_FAST};
use crate::cmd::{flags::*, CommandSpec, Ctx, Lookup};
use crate::notify::{class, notify};
use crate::resp::encode::fmt_i64;
use crate::util::parse_i64_strict;
use crate::value::{RString, Value, WRONGTYPE};

const INCR_OVERFLOW: &str = "ERR increment or decrement would overflow";

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "incr",
        arity: 2,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Increment the integer value of a key by one",
        handler: Some(incr),
        ..STRING
    },
    CommandSpec {
        name: "decr",
        arity: 2,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Decrement the integer value of a key by one",
        handler: Some(decr),
        ..STRING
    },
    CommandSpec {
        name: "incrby",
        arity: 3,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Increment the integer value of a key by the given amount",
        handler: Some(incrby),
        ..STRING
    },
    CommandSpec {
        name: "decrby",
        arity: 3,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Decrement the integer value of a key by the given number",
        handler: Some(decrby),
        ..STRING
    },
    CommandSpec {
        name: "incrbyfloat",
        arity: 3,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Increment the float value of a key by the given amount",
        since: "2.6.0",
        handler: Some(incrbyfloat),
        ..STRING
    },
];

/// INCR, DECR, INCRBY, DECRBY: the stored integer plus `delta`. The key keeps
/// its TTL; a missing key counts as 0.
fn incr_decr(ctx: &mut Ctx, key: &[u8], delta: i64) {
    let current = match string_at(ctx, key, Lookup::Write) {
        Err(WrongType) => return ctx.error(WRONGTYPE),
        Ok(None) => 0,
        Ok(Some(s)) => match parse_i64_strict(s.as_bytes()) {
            Some(v) => match v.checked_add(delta) {
                // Like Redis's in-place update of an int-encoded object:
                // the stored string is rewritten where it is (its TTL and
                // access stamp stay), saving a second lookup and a free.
                Some(next) => {
                    // Formatted once: the digits stored are the reply's.
                    let mut digits = [0u8; 20];
                    let text = fmt_i64(&mut digits, next);
                    *s = RString::from_slice(text);
                    ctx.modified_in_place(key);
                    notify(ctx, class::STRING, "incrby", key);
                    return ctx.w().int_decimal(text);
                }
                _ => v,
            },
            None => return ctx.error(NOT_AN_INTEGER),
        },
    };
    let Some(next) = current.checked_add(delta) else {
        return ctx.error(INCR_OVERFLOW);
    };
    // Exactly as long as its digits (not `to_string`'s spare capacity,
    // which is the standard library's detail): memory figures count
    // capacity, and the in-place path above gives the same.
    let text = fmt_i64(&mut [0u8; 20], next).to_vec();
    ctx.store(key, Value::Str(RString::new(text)), true);
    notify(ctx, class::STRING, "incrby", key);
    ctx.int(next);
}

fn incr(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    incr_decr(ctx, &args[1], 1);
}

fn decr(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    incr_decr(ctx, &args[1], -1);
}

fn incrby(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match parse_i64_strict(&args[2]) {
        Some(delta) => incr_decr(ctx, &args[1], delta),
        None => ctx.error(NOT_AN_INTEGER),
    }
}

fn decrby(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match parse_i64_strict(&args[2]) {
        None => ctx.error(NOT_AN_INTEGER),
        Some(i64::MIN) => ctx.error("ERR decrement would overflow"),
        Some(delta) => incr_decr(ctx, &args[1], -delta),
    }
}

fn incrbyfloat(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let key = &args[1];
    let result = match string_at(ctx, key, Lookup::Write) {
        Err(WrongType) => return ctx.error(WRONGTYPE),
        Ok(current) => long_double::incr_by_float(current.map(|s| s.as_bytes()), &args[2]),
    };
    match result {
        Ok(text) => {
            ctx.store(
                key,
                Value::Str(RString::new(text.clone().into_bytes())),
                true,
            );
            notify(ctx, class::STRING, "incrbyfloat", key);
            // The sum's text, not the increment: replaying the addition
            // could round differently.
            ctx.propagate(&[b"SET", key.as_slice(), text.as_bytes(), b"KEEPTTL"]);
            ctx.bulk(text.as_bytes());
        }
        Err(e) => ctx.error(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{bulk, int, simple, TestEngine};

    #[test]
    fn formats_every_i64_like_to_string() {
        // Every digit count, both sides of each power of ten (where the
        // two-digit steps end on one digit or two), and the extremes.
        let mut values: Vec<i64> = (-10_000..=10_000).collect();
        let mut power: i64 = 10;
        loop {
            values.extend([power - 1, power, power + 1, -power + 1, -power, -power - 1]);
            match power.checked_mul(10) {
                Some(next) => power = next,
                None => break,
            }
        }
        values.extend([i64::MAX, i64::MAX - 1, i64::MIN, i64::MIN + 1]);
        for v in values {
            let mut buf = [0u8; 20];
            assert_eq!(fmt_i64(&mut buf, v), v.to_string().as_bytes());
        }
    }

    /// The in-place path keeps what Redis's keeps (the TTL), still
    /// invalidates a WATCH, and leaves the string int-encoded with capacity
    /// equal to its length, as the store path does.
    #[test]
    fn in_place_incr_keeps_ttl_breaks_watch_and_reencodes() {
        let mut t = TestEngine::new();
        let c = t.connect();
        let w = t.connect();
        assert_eq!(t.cmd(c, &["SET", "n", "9"]), simple("OK"));
        assert_eq!(t.cmd(c, &["APPEND", "n", "9"]), int(2));
        assert_eq!(t.cmd(c, &["OBJECT", "ENCODING", "n"]), bulk("raw"));
        assert_eq!(t.cmd(c, &["EXPIRE", "n", "100"]), int(1));
        assert_eq!(t.cmd(w, &["WATCH", "n"]), simple("OK"));
        assert_eq!(t.cmd(c, &["INCRBY", "n", "-200"]), int(-101));
        assert_eq!(t.cmd(c, &["OBJECT", "ENCODING", "n"]), bulk("int"));
        assert_eq!(t.cmd(c, &["TTL", "n"]), int(100));
        let s = t.engine.server().keyspace.dbs[0]
            .get(b"n")
            .and_then(|v| v.as_str().cloned())
            .expect("a string");
        assert_eq!(s.as_bytes(), b"-101");
        assert_eq!(s.capacity_bytes(), s.len());
        assert_eq!(t.cmd(w, &["MULTI"]), simple("OK"));
        assert_eq!(t.cmd(w, &["GET", "n"]), simple("QUEUED"));
        assert_eq!(t.cmd(w, &["EXEC"]), crate::resp::Frame::Null);
    }
}
