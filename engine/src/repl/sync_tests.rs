//! SYNC and the REPLCONF options of `redis-cli --rdb`, `--functions-rdb`
//! and `--replica` (rdb-only, rdb-filter-only), driven through the
//! engine's inputs; replies checked against redis-server 7.0.15.

use crate::client::{ClientId, CloseReason};
use crate::event::Event;
use crate::propagate::encode_command;
use crate::testing::TestEngine;

/// Sends one command and returns the events it raised.
fn send(t: &mut TestEngine, client: ClientId, args: &[&str]) -> Vec<Event> {
    let mut bytes = Vec::new();
    encode_command(&mut bytes, args);
    t.engine.handle_input(t.now, client, &bytes);
    std::iter::from_fn(|| t.engine.poll_event()).collect()
}

fn take_output(t: &mut TestEngine, client: ClientId) -> Vec<u8> {
    let out = t.engine.pending_output(client).to_vec();
    t.engine.consume_output(client, out.len());
    out
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn closed(events: &[Event], client: ClientId) -> bool {
    events
        .iter()
        .any(|e| matches!(e, Event::Close { client: c, reason: CloseReason::Quit } if *c == client))
}

/// A server holding the key `somekey` and the library `mylib`.
fn server_with_data() -> (TestEngine, ClientId) {
    let mut t = TestEngine::new();
    let c = t.connect();
    t.cmd(c, &["SET", "somekey", "1"]);
    let library = "#!lua name=mylib\nredis.register_function('f', function() return 1 end)";
    t.cmd(c, &["FUNCTION", "LOAD", library]);
    (t, c)
}

fn connected_replicas(t: &mut TestEngine, c: ClientId) -> String {
    let crate::resp::Frame::Bulk(info) = t.cmd(c, &["INFO", "replication"]) else {
        panic!("INFO reply");
    };
    let info = String::from_utf8(info).expect("text");
    let line = info.lines().find(|l| l.starts_with("connected_slaves:"));
    line.expect("connected_slaves").to_string()
}

#[test]
fn sync_sends_the_rdb_without_a_fullresync_line_and_the_stream_after() {
    let (mut t, c) = server_with_data();
    let r = t.connect();
    let events = send(&mut t, r, &["SYNC"]);
    assert!(!closed(&events, r));
    let sync = take_output(&mut t, r);
    // No `capa eof`: a `$<len>` bulk (Redis's disk-based transfer).
    assert!(
        sync.starts_with(b"$"),
        "{:?}",
        String::from_utf8_lossy(&sync)
    );
    let header_end = sync.windows(2).position(|w| w == b"\r\n").expect("header");
    let len: usize = std::str::from_utf8(&sync[1..header_end])
        .unwrap()
        .parse()
        .unwrap();
    let rdb = &sync[header_end + 2..];
    assert_eq!(rdb.len(), len);
    assert!(rdb.starts_with(b"REDIS0010"));
    assert!(contains(rdb, b"somekey") && contains(rdb, b"mylib"));
    assert_eq!(connected_replicas(&mut t, c), "connected_slaves:1");

    send(&mut t, c, &["SET", "after", "2"]);
    let stream = take_output(&mut t, r);
    assert!(
        contains(&stream, b"after"),
        "{:?}",
        String::from_utf8_lossy(&stream)
    );
}

#[test]
fn rdb_only_gets_the_rdb_and_is_closed_after_it() {
    let (mut t, c) = server_with_data();
    let r = t.connect();
    send(&mut t, r, &["REPLCONF", "capa", "eof", "rdb-only", "1"]);
    assert_eq!(take_output(&mut t, r), b"+OK\r\n");
    let events = send(&mut t, r, &["SYNC"]);
    let sync = take_output(&mut t, r);
    assert!(
        sync.starts_with(b"$EOF:"),
        "{:?}",
        String::from_utf8_lossy(&sync)
    );
    let mark = &sync[5..45];
    assert!(sync.ends_with(mark));
    assert!(contains(&sync, b"somekey"));
    assert!(
        closed(&events, r),
        "closed once the RDB is written: {events:?}"
    );
    assert_eq!(connected_replicas(&mut t, c), "connected_slaves:0");
}

#[test]
fn a_filtered_rdb_keeps_only_what_the_filter_names() {
    let (mut t, _) = server_with_data();
    // --functions-rdb: the libraries, no keys.
    let r = t.connect();
    send(
        &mut t,
        r,
        &[
            "REPLCONF",
            "capa",
            "eof",
            "rdb-only",
            "1",
            "rdb-filter-only",
            "functions",
        ],
    );
    take_output(&mut t, r);
    send(&mut t, r, &["SYNC"]);
    let sync = take_output(&mut t, r);
    assert!(sync.starts_with(b"$EOF:"));
    assert!(contains(&sync, b"mylib") && !contains(&sync, b"somekey"));

    // --replica: an empty filter, nothing at all; PSYNC filters too, and
    // goes the diskless way even though repl-diskless-sync is off.
    let r = t.connect();
    t.cmd(r, &["CONFIG", "SET", "repl-diskless-sync", "no"]);
    send(
        &mut t,
        r,
        &["REPLCONF", "capa", "eof", "rdb-filter-only", ""],
    );
    take_output(&mut t, r);
    send(&mut t, r, &["PSYNC", "?", "-1"]);
    let sync = take_output(&mut t, r);
    assert!(sync.starts_with(b"+FULLRESYNC "));
    assert!(contains(&sync, b"\r\n$EOF:"));
    assert!(!contains(&sync, b"mylib") && !contains(&sync, b"somekey"));
}

#[test]
fn replconf_rdb_options_answer_as_redis() {
    let mut t = TestEngine::new();
    let r = t.connect();
    let cases: &[(&[&str], &[u8])] = &[
        (
            &["REPLCONF", "rdb-only", "5"],
            b"-ERR value is out of range, value must between 0 and 1\r\n",
        ),
        (
            &["REPLCONF", "rdb-only", "x"],
            b"-ERR value is not an integer or out of range\r\n",
        ),
        (&["REPLCONF", "rdb-only", "0"], b"+OK\r\n"),
        (
            &["REPLCONF", "rdb-filter-only", "\"a"],
            b"-ERR Missing rdb-filter-only values\r\n",
        ),
        (
            &["REPLCONF", "rdb-filter-only", "functions x y"],
            b"-ERR Unsupported rdb-filter-only option: x\r\n",
        ),
        (
            &["REPLCONF", "rdb-filter-only", "functions FUNCTIONS"],
            b"+OK\r\n",
        ),
        // A filter needs an EOF-marked transfer: refused before any sync.
        (
            &["SYNC"],
            b"-ERR Filtered replica requires EOF capability\r\n",
        ),
        (
            &["PSYNC", "?", "-1"],
            b"-ERR Filtered replica requires EOF capability\r\n",
        ),
        (
            &["SYNC", "x"],
            b"-ERR wrong number of arguments for 'sync' command\r\n",
        ),
    ];
    for (args, want) in cases {
        send(&mut t, r, args);
        let got = take_output(&mut t, r);
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(want),
            "{args:?}"
        );
    }
}
