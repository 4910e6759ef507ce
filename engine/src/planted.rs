//! Planted bugs: deliberate defects the simulator must find, selected at run
//! time through [`crate::Config::planted_bug`] so that one build runs the
//! clean engine and each planted one side by side. (A cargo feature would
//! leak into every crate of a workspace build.) When `None` — the default —
//! each check is one predictable branch on a field already in cache.

use crate::client::ClientId;
use crate::multi::Queued;

/// A deliberate defect, for proving the simulator's checkers work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PlantedBug {
    /// SCAN forgets to visit the larger table's expansions during rehash.
    ScanSkipsRehashBuckets,
    /// Output consumed in part loses the rest of a pipelined reply.
    PartialWriteDropsReply,
    /// INCR reads, then writes back in a later step, losing concurrent updates.
    IncrNotAtomic,
    /// Keys are treated as expired one millisecond late.
    ExpiryOffByOneMs,
    /// A value handed to the background free stays reachable.
    LazyFreeStillReachable,
    /// A reply is appended to the wrong connection's output.
    ReplyToWrongConnection,
    /// EXEC runs the first queued command, then defers the rest to the end
    /// of the next input the engine handles: another client's commands run
    /// in between, and the transaction is no longer atomic.
    ExecInterleaved,
    /// WATCH does not notice that a watched key expired before EXEC (Redis
    /// 7.0 fails such an EXEC): an optimistic transaction commits on a
    /// value that is gone.
    WatchIgnoresExpiry,
    /// A script's writes become visible to other clients before the script
    /// finished (implemented by the scripting code).
    ScriptPartialVisible,
    /// Every Nth PUBLISH delivers its message twice to one subscriber
    /// (see `pubsub::PUBLISH_TWICE_EVERY`).
    PublishTwice,
    /// LINDEX with a negative index past the head of the list indexes out
    /// of bounds and panics, as a C engine would read out of bounds: the
    /// simulator must report the panic as a failure of that seed (with its
    /// repro line) and go on with the rest of the sweep.
    LindexPanics,
}

impl PlantedBug {
    pub const ALL: &'static [PlantedBug] = &[
        PlantedBug::ScanSkipsRehashBuckets,
        PlantedBug::PartialWriteDropsReply,
        PlantedBug::IncrNotAtomic,
        PlantedBug::ExpiryOffByOneMs,
        PlantedBug::LazyFreeStillReachable,
        PlantedBug::ReplyToWrongConnection,
        PlantedBug::ExecInterleaved,
        PlantedBug::WatchIgnoresExpiry,
        PlantedBug::ScriptPartialVisible,
        PlantedBug::PublishTwice,
        PlantedBug::LindexPanics,
    ];

    /// The name used on the command line (`--bug scan-skips-rehash-buckets`).
    pub fn name(self) -> &'static str {
        match self {
            PlantedBug::ScanSkipsRehashBuckets => "scan-skips-rehash-buckets",
            PlantedBug::PartialWriteDropsReply => "partial-write-drops-reply",
            PlantedBug::IncrNotAtomic => "incr-not-atomic",
            PlantedBug::ExpiryOffByOneMs => "expiry-off-by-one-ms",
            PlantedBug::LazyFreeStillReachable => "lazy-free-still-reachable",
            PlantedBug::ReplyToWrongConnection => "reply-to-wrong-connection",
            PlantedBug::ExecInterleaved => "exec-interleaved",
            PlantedBug::WatchIgnoresExpiry => "watch-ignores-expiry",
            PlantedBug::ScriptPartialVisible => "script-partial-visible",
            PlantedBug::PublishTwice => "publish-twice",
            PlantedBug::LindexPanics => "lindex-panics",
        }
    }

    pub fn from_name(name: &str) -> Option<PlantedBug> {
        PlantedBug::ALL.iter().copied().find(|b| b.name() == name)
    }
}

/// Every Nth reply goes to another connection under
/// [`PlantedBug::ReplyToWrongConnection`].
pub const MISROUTED_REPLY_EVERY: u64 = 997;

/// State that only planted bugs use; empty and untouched on a clean engine.
#[derive(Debug, Default)]
pub struct PlantedState {
    /// [`PlantedBug::IncrNotAtomic`]: INCR results not yet written back, as
    /// `(db, key, new value)`, applied at the end of the next input.
    pub incr_writes: Vec<(usize, Vec<u8>, Vec<u8>)>,
    /// [`PlantedBug::ReplyToWrongConnection`]: replies since the last
    /// misrouted one.
    pub replies_count: u64,
    /// [`PlantedBug::ExecInterleaved`]: the commands of each EXEC held back
    /// after its first, as `(client, EXEC's request_seq, queue)`, run at the
    /// end of the next input (see `crate::multi::planted_split_exec`).
    pub exec_tails: Vec<(ClientId, u64, Vec<Queued>)>,
}

#[cfg(test)]
mod tests {
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

    /// Keys one full SCAN iteration over a dict caught mid-rehash returns.
    fn scan_all(dict: &Dict<u32>, skip_expansions: bool) -> std::collections::BTreeSet<Vec<u8>> {
        let mut seen = std::collections::BTreeSet::new();
        let mut cursor = 0;
        loop {
            cursor = dict.scan_with(cursor, skip_expansions, |k, _| {
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
        assert_eq!(scan_all(&dict, false).len(), dict.len());
        assert!(scan_all(&dict, true).len() < dict.len());
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
}
