//! Each planted bug against the clean engine, at the seam that plants it.

use super::*;
use crate::dict::Dict;
use crate::resp::encode::encode_request;
use crate::resp::Frame;
use crate::testing::{bulk, int, simple, TestEngine};
use crate::Config;

fn engine(bug: Option<PlantedBug>) -> TestEngine {
    TestEngine::with_config(Config {
        planted_bug: bug,
        ..Config::default()
    })
}

#[test]
fn names_round_trip() {
    for &bug in PlantedBug::ALL {
        assert_eq!(PlantedBug::from_name(bug.name()), Some(bug));
    }
    assert_eq!(PlantedBug::from_name("none"), None);
}

/// Keys one full SCAN iteration over a dict caught mid-rehash returns,
/// through the seam of an engine with `bug` planted.
fn scan_all(dict: &Dict<u32>, bug: Option<PlantedBug>) -> std::collections::BTreeSet<Vec<u8>> {
    let hook = Hook::new(bug);
    let mut seen = std::collections::BTreeSet::new();
    let mut cursor = 0;
    loop {
        cursor = hook.scan(dict, cursor, |k, _| {
            seen.insert(k.to_vec());
        });
        if cursor == 0 {
            return seen;
        }
    }
}

#[test]
fn scan_skips_rehash_buckets() {
    let mut dict = Dict::new(7);
    let mut n = 0u32;
    while !dict.is_rehashing() || n < 1100 {
        dict.insert(format!("k{n}").into_bytes().into(), n);
        n += 1;
    }
    assert!(dict.is_rehashing());
    assert_eq!(scan_all(&dict, None).len(), dict.len());
    let bug = Some(PlantedBug::ScanSkipsRehashBuckets);
    assert!(scan_all(&dict, bug).len() < dict.len());
}

#[test]
fn incr_not_atomic_loses_a_concurrent_update() {
    for (bug, second) in [(None, 2), (Some(PlantedBug::IncrNotAtomic), 1)] {
        let mut t = engine(bug);
        let (a, b) = (t.connect(), t.connect());
        assert_eq!(t.cmd(a, &["INCR", "n"]), int(1));
        assert_eq!(t.cmd(b, &["INCR", "n"]), int(second));
    }
}

#[test]
fn expiry_off_by_one_ms_keeps_a_key_through_its_expiry_millisecond() {
    for (bug, exists) in [(None, 0), (Some(PlantedBug::ExpiryOffByOneMs), 1)] {
        let mut t = engine(bug);
        let c = t.connect();
        assert_eq!(t.cmd(c, &["SET", "k", "v", "PX", "10"]), simple("OK"));
        t.advance_ms(10);
        assert_eq!(t.cmd(c, &["EXISTS", "k"]), int(exists));
        t.advance_ms(1);
        assert_eq!(t.cmd(c, &["EXISTS", "k"]), int(0));
    }
}

#[test]
fn lazy_free_still_reachable_until_the_cron_runs() {
    for (bug, exists) in [(None, 0), (Some(PlantedBug::LazyFreeStillReachable), 1)] {
        let mut t = engine(bug);
        let c = t.connect();
        assert_eq!(
            t.cmd(c, &["SETRANGE", "big", "4299999", "|"]),
            int(4_300_000)
        );
        assert_eq!(t.cmd(c, &["UNLINK", "big"]), int(1));
        assert_eq!(t.cmd(c, &["EXISTS", "big"]), int(exists));
        t.advance_ms(1000);
        assert_eq!(t.cmd(c, &["EXISTS", "big"]), int(0));
    }
}

#[test]
fn partial_write_drops_the_last_reply() {
    for (bug, expected) in [
        (None, &b"+PONG\r\n$1\r\nb\r\n"[..]),
        (Some(PlantedBug::PartialWriteDropsReply), &b"+PONG\r\n"[..]),
    ] {
        let mut t = engine(bug);
        let c = t.connect();
        let mut pipeline = encode_request(&[b"PING"]);
        pipeline.extend(encode_request(&[b"ECHO", b"b"]));
        t.engine.handle_input(t.now, c, &pipeline);
        // The host writes 3 bytes, then the rest.
        let mut written = t.engine.pending_output(c)[..3].to_vec();
        t.engine.consume_output(c, 3);
        written.extend_from_slice(t.engine.pending_output(c));
        assert_eq!(written, expected);
    }
}

#[test]
fn exec_interleaved_lets_another_client_in_between() {
    for (bug, seen, tail) in [
        (None, bulk("1"), &b"*2\r\n+OK\r\n+OK\r\n"[..]),
        (
            Some(PlantedBug::ExecInterleaved),
            Frame::Null,
            &b"*2\r\n+OK\r\n"[..],
        ),
    ] {
        let mut t = engine(bug);
        let (a, b) = (t.connect(), t.connect());
        let mut block = encode_request(&[b"MULTI"]);
        block.extend(encode_request(&[b"SET", b"x", b"1"]));
        block.extend(encode_request(&[b"SET", b"y", b"1"]));
        block.extend(encode_request(&[b"EXEC"]));
        let out = t.raw(a, &block);
        assert!(out.ends_with(tail), "{}", String::from_utf8_lossy(&out));
        // The next input runs before the held-back SET y.
        assert_eq!(t.cmd(b, &["GET", "y"]), seen);
        assert_eq!(t.cmd(b, &["GET", "x"]), bulk("1"));
        // By now the held-back SET ran: the transaction completed late.
        assert_eq!(t.cmd(b, &["GET", "y"]), bulk("1"));
    }
}

#[test]
fn watch_ignores_expiry_commits_on_an_expired_key() {
    for (bug, committed) in [(None, false), (Some(PlantedBug::WatchIgnoresExpiry), true)] {
        let mut t = engine(bug);
        let c = t.connect();
        assert_eq!(t.cmd(c, &["SET", "k", "v", "PX", "10"]), simple("OK"));
        assert_eq!(t.cmd(c, &["WATCH", "k"]), simple("OK"));
        t.advance_ms(20);
        assert_eq!(t.cmd(c, &["MULTI"]), simple("OK"));
        assert_eq!(t.cmd(c, &["SET", "k", "w"]), simple("QUEUED"));
        let exec = t.cmd(c, &["EXEC"]);
        assert_eq!(exec != Frame::Null, committed, "{exec:?}");
    }
}

#[test]
fn reply_to_wrong_connection_every_nth_reply() {
    let mut t = engine(Some(PlantedBug::ReplyToWrongConnection));
    let (a, b) = (t.connect(), t.connect());
    for _ in 1..MISROUTED_REPLY_EVERY {
        assert_eq!(t.cmd(a, &["PING"]), simple("PONG"));
    }
    t.engine.handle_input(t.now, a, &encode_request(&[b"PING"]));
    assert_eq!(t.engine.pending_output(a), b"");
    assert_eq!(t.engine.pending_output(b), b"+PONG\r\n");
}

#[test]
fn publish_twice_doubles_every_nth_publish() {
    let mut t = engine(Some(PlantedBug::PublishTwice));
    let (s, p) = (t.connect(), t.connect());
    t.raw(s, &encode_request(&[b"SUBSCRIBE", b"c"]));
    for i in 1..=PUBLISH_TWICE_EVERY {
        let n = i.to_string();
        let publish = encode_request(&[b"PUBLISH", b"c", n.as_bytes()]);
        t.engine.handle_input(t.now, p, &publish);
        let message = format!("*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n${}\r\n{n}\r\n", n.len());
        let copies = if i == PUBLISH_TWICE_EVERY { 2 } else { 1 };
        assert_eq!(
            t.engine.pending_output(s),
            message.repeat(copies).as_bytes()
        );
        assert_eq!(
            t.engine.pending_output(p),
            b":1\r\n",
            "the count stays right"
        );
        for c in [s, p] {
            let len = t.engine.pending_output(c).len();
            t.engine.consume_output(c, len);
        }
    }
}

#[test]
fn lindex_panics_past_the_head_only() {
    let mut t = engine(Some(PlantedBug::LindexPanics));
    let c = t.connect();
    assert_eq!(t.cmd(c, &["RPUSH", "l", "a", "b"]), int(2));
    assert_eq!(t.cmd(c, &["LINDEX", "l", "-2"]), bulk("a"));
    assert_eq!(t.cmd(c, &["LINDEX", "missing", "-3"]), Frame::Null);
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        t.cmd(c, &["LINDEX", "l", "-3"])
    }));
    assert!(panicked.is_err());
}

#[test]
fn lrem_quadratic_charges_the_square_of_the_visited() {
    for (bug, work) in [(None, 3 + 1), (Some(PlantedBug::LremQuadratic), 3 * 3)] {
        let mut t = TestEngine::with_config(Config {
            planted_bug: bug,
            record_executions: true,
            ..Config::default()
        });
        let c = t.connect();
        assert_eq!(t.cmd(c, &["RPUSH", "l", "a", "b", "c"]), int(3));
        assert_eq!(t.cmd(c, &["LREM", "l", "0", "c"]), int(1));
        // One unit for the command itself, and the reply's.
        assert_eq!(t.executed_work("lrem"), 1 + work, "{bug:?}");
    }
}

/// The background free drops the value it was handed, not a value written
/// to the key since.
#[test]
fn lazy_free_still_reachable_spares_a_later_write() {
    let mut t = engine(Some(PlantedBug::LazyFreeStillReachable));
    let c = t.connect();
    assert_eq!(
        t.cmd(c, &["SETRANGE", "big", "4299999", "|"]),
        int(4_300_000)
    );
    assert_eq!(t.cmd(c, &["UNLINK", "big"]), int(1));
    assert_eq!(t.frees(), 1, "the host frees the original");
    assert_eq!(t.cmd(c, &["SET", "big", "new"]), simple("OK"));
    t.advance_ms(1000);
    assert_eq!(t.cmd(c, &["GET", "big"]), bulk("new"));
}

#[test]
fn invalidate_before_write_invalidates_while_the_old_value_is_still_read() {
    for bug in [None, Some(PlantedBug::InvalidateBeforeWrite)] {
        let mut t = engine(bug);
        let (r, w) = (t.connect(), t.connect());
        t.cmd(w, &["SET", "k", "old"]);
        t.raw(r, &encode_request(&[b"HELLO", b"3"]));
        t.cmd(r, &["CLIENT", "TRACKING", "on"]);
        t.raw(r, &encode_request(&[b"GET", b"k"]));
        assert_eq!(t.cmd(w, &["SET", "k", "new"]), simple("OK"));
        // The invalidation arrived; the reader reads again at once.
        let out = t.raw(r, &encode_request(&[b"GET", b"k"]));
        let want: &[u8] = if bug.is_some() {
            b"$3\r\nold\r\n"
        } else {
            b"$3\r\nnew\r\n"
        };
        assert!(
            out.ends_with(want),
            "{bug:?}: {:?}",
            String::from_utf8_lossy(&out)
        );
        // The writer's next input lands the write, without a new
        // invalidation for the reader.
        t.cmd(w, &["PING"]);
        assert_eq!(t.cmd(r, &["GET", "k"]), bulk("new"));
    }
}
