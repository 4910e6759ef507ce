//! The replica's link driven through the engine's inputs: a primary's
//! replies (handshake, RDB in both forms, stream) fed split at every
//! position and byte by byte, the offsets of a partial command, GETACK,
//! the cached master's PSYNC, reconnection and `repl-timeout`, and a
//! replica wired to a primary engine.

use crate::client::ClientId;
use crate::event::Event;
use crate::propagate::encode_command;
use crate::resp::Frame;
use crate::testing::{bulk, simple, TestEngine};

const ID: &str = "0123456789abcdef0123456789abcdef01234567";
const ID2: &str = "fedcba9876543210fedcba9876543210fedcba98";

fn command(args: &[&str]) -> Vec<u8> {
    let mut bytes = Vec::new();
    encode_command(&mut bytes, args);
    bytes
}

/// A replica that asked for a link (REPLICAOF) and got it up: returns
/// the engine, a normal client and the link.
fn linked() -> (TestEngine, ClientId, ClientId) {
    let mut t = TestEngine::new();
    let c = t.connect();
    assert_eq!(
        t.cmd(c, &["REPLICAOF", "primary.example", "6379"]),
        simple("OK")
    );
    let link = connect_event(&mut t).expect("REPLICAOF asks for a connection");
    t.engine.primary_link_up(t.now, link);
    assert_eq!(take(&mut t, link), command(&["PING"]));
    (t, c, link)
}

/// The last `ConnectPrimary` the engine emitted, checked for its address.
fn connect_event(t: &mut TestEngine) -> Option<ClientId> {
    while let Some(e) = t.engine.poll_event() {
        t.events.push(e);
    }
    t.events.iter().rev().find_map(|e| match e {
        Event::ConnectPrimary { client, host, port } => {
            assert_eq!((host.as_str(), *port), ("primary.example", 6379));
            Some(*client)
        }
        _ => None,
    })
}

fn take(t: &mut TestEngine, client: ClientId) -> Vec<u8> {
    let out = t.engine.pending_output(client).to_vec();
    t.engine.consume_output(client, out.len());
    out
}

fn feed(t: &mut TestEngine, link: ClientId, bytes: &[u8]) {
    t.engine.handle_input(t.now, link, bytes);
    while let Some(e) = t.engine.poll_event() {
        t.events.push(e);
    }
}

fn info_field(t: &mut TestEngine, c: ClientId, name: &str) -> String {
    let Frame::Bulk(info) = t.cmd(c, &["INFO", "replication"]) else {
        panic!("INFO reply");
    };
    let info = String::from_utf8(info).expect("text");
    let prefix = format!("{name}:");
    let line = info.lines().find(|l| l.starts_with(&prefix));
    line.unwrap_or_else(|| panic!("no {name} in {info}"))[prefix.len()..].to_string()
}

/// An RDB holding `a` = 1 in database 0 and `z` = 26 in database 3.
fn rdb() -> Vec<u8> {
    let mut source = TestEngine::new();
    let c = source.connect();
    source.cmd(c, &["SET", "a", "1"]);
    source.cmd(c, &["SELECT", "3"]);
    source.cmd(c, &["SET", "z", "26"]);
    source.engine.rdb_file_bytes(source.now)
}

/// The stream after the RDB: SELECT 0, SET b 2, then PING.
fn stream() -> Vec<u8> {
    let mut s = command(&["SELECT", "0"]);
    s.extend(command(&["SET", "b", "2"]));
    s.extend(command(&["PING"]));
    s
}

/// Everything a primary answers a fresh replica: the handshake replies,
/// a keepalive newline, the RDB (`$len` or `$EOF:`) and the stream (which
/// a primary holds after a diskless RDB until the replica's first ACK,
/// since the replica looks for the mark at the end of what it read: see
/// [`feed_transcript`]).
fn transcript(diskless: bool) -> Vec<u8> {
    let mut t = b"+PONG\r\n+OK\r\n+OK\r\n".to_vec();
    t.extend(format!("+FULLRESYNC {ID} 100\r\n\n").as_bytes());
    let rdb = rdb();
    if diskless {
        let mark = "m".repeat(40);
        t.extend(format!("$EOF:{mark}\r\n").as_bytes());
        t.extend(&rdb);
        t.extend(mark.as_bytes());
    } else {
        t.extend(format!("${}\r\n", rdb.len()).as_bytes());
        t.extend(&rdb);
    }
    t.extend(stream());
    t
}

/// Feeds `bytes` (a [`transcript`]) in the two pieces split at `at`, the
/// stream of a diskless one apart.
fn feed_transcript(t: &mut TestEngine, link: ClientId, bytes: &[u8], diskless: bool, at: usize) {
    let rdb_end = match diskless {
        true => bytes.len() - stream().len(),
        false => bytes.len(),
    };
    let at = at.min(rdb_end);
    feed(t, link, &bytes[..at]);
    feed(t, link, &bytes[at..rdb_end]);
    feed(t, link, &bytes[rdb_end..]);
}

/// The replica holds the primary's dataset and stream, at its offset.
fn assert_synced(t: &mut TestEngine, c: ClientId) {
    assert_eq!(info_field(t, c, "master_link_status"), "up");
    assert_eq!(t.cmd(c, &["GET", "a"]), bulk("1"));
    assert_eq!(t.cmd(c, &["GET", "b"]), bulk("2"));
    t.cmd(c, &["SELECT", "3"]);
    assert_eq!(t.cmd(c, &["GET", "z"]), bulk("26"));
    t.cmd(c, &["SELECT", "0"]);
    let offset = (100 + stream().len()).to_string();
    assert_eq!(info_field(t, c, "slave_repl_offset"), offset);
    assert_eq!(info_field(t, c, "master_repl_offset"), offset);
    assert_eq!(info_field(t, c, "master_replid"), ID);
}

#[test]
fn handshake_sends_what_redis_sends() {
    let (mut t, c, link) = linked();
    feed(&mut t, link, b"+PONG\r\n");
    let mut want = command(&["REPLCONF", "listening-port", "6379"]);
    want.extend(command(&["REPLCONF", "capa", "eof", "capa", "psync2"]));
    assert_eq!(take(&mut t, link), want);
    feed(&mut t, link, b"+OK\r\n+OK\r\n");
    // A primary turned replica offers its own history
    // (`replicationCacheMasterUsingMyself`).
    let psync = take(&mut t, link);
    let own = info_field(&mut t, c, "master_replid");
    assert_eq!(psync, command(&["PSYNC", &own, "1"]));
}

#[test]
fn masterauth_and_masteruser_go_first() {
    let mut t = TestEngine::new();
    let c = t.connect();
    t.cmd(c, &["CONFIG", "SET", "masterauth", "secret"]);
    t.cmd(c, &["CONFIG", "SET", "masteruser", "repl"]);
    t.cmd(c, &["REPLICAOF", "primary.example", "6379"]);
    let link = connect_event(&mut t).expect("a connection");
    t.engine.primary_link_up(t.now, link);
    take(&mut t, link);
    feed(&mut t, link, b"-NOAUTH Authentication required.\r\n");
    let out = take(&mut t, link);
    assert!(out.starts_with(&command(&["AUTH", "repl", "secret"])));
    // A refused AUTH ends the link; the cron connects again.
    feed(
        &mut t,
        link,
        b"-WRONGPASS invalid username-password pair\r\n",
    );
    assert!(t
        .events
        .iter()
        .any(|e| matches!(e, Event::Close { client, .. } if *client == link)));
    t.engine.disconnect(t.now, link);
    t.advance_ms(1000);
    let again = connect_event(&mut t).expect("a new connection");
    assert_ne!(again, link);
}

#[test]
fn full_resync_split_at_every_position() {
    for diskless in [false, true] {
        let bytes = transcript(diskless);
        for at in 0..=bytes.len() {
            let (mut t, c, link) = linked();
            feed_transcript(&mut t, link, &bytes, diskless, at);
            assert_synced(&mut t, c);
        }
    }
}

#[test]
fn full_resync_byte_by_byte() {
    for diskless in [false, true] {
        let (mut t, c, link) = linked();
        let bytes = transcript(diskless);
        let rdb_end = bytes.len() - stream().len();
        for &b in &bytes[..rdb_end] {
            feed(&mut t, link, &[b]);
        }
        // A diskless load is acked at once: the primary holds the stream
        // until then.
        let out = take(&mut t, link);
        let ack = super::ack_bytes(100);
        assert_eq!(out.windows(ack.len()).any(|w| w == ack), diskless);
        for &b in &bytes[rdb_end..] {
            feed(&mut t, link, &[b]);
        }
        assert_synced(&mut t, c);
    }
}

#[test]
fn a_partial_command_is_read_but_not_applied() {
    let (mut t, c, link) = linked();
    let bytes = transcript(false);
    feed(&mut t, link, &bytes);
    let set = command(&["SET", "c", "3"]);
    feed(&mut t, link, &set[..set.len() - 3]);
    let applied = 100 + stream().len();
    assert_eq!(
        info_field(&mut t, c, "slave_repl_offset"),
        applied.to_string()
    );
    let read = applied + set.len() - 3;
    assert_eq!(
        info_field(&mut t, c, "slave_read_repl_offset"),
        read.to_string()
    );
    feed(&mut t, link, &set[set.len() - 3..]);
    assert_eq!(t.cmd(c, &["GET", "c"]), bulk("3"));
    let applied = applied + set.len();
    assert_eq!(
        info_field(&mut t, c, "slave_repl_offset"),
        applied.to_string()
    );
    // A MULTI counts when its EXEC has run.
    let mut tx = command(&["MULTI"]);
    tx.extend(command(&["INCR", "c"]));
    feed(&mut t, link, &tx);
    assert_eq!(
        info_field(&mut t, c, "slave_repl_offset"),
        applied.to_string()
    );
    feed(&mut t, link, &command(&["EXEC"]));
    let applied = applied + tx.len() + command(&["EXEC"]).len();
    assert_eq!(
        info_field(&mut t, c, "slave_repl_offset"),
        applied.to_string()
    );
    assert_eq!(t.cmd(c, &["GET", "c"]), bulk("4"));
    // Nothing was answered to the primary.
    assert!(take(&mut t, link).is_empty());
}

#[test]
fn getack_is_answered_with_the_offset_before_it() {
    let (mut t, c, link) = linked();
    feed(&mut t, link, &transcript(false));
    take(&mut t, link);
    let offset = 100 + stream().len();
    feed(&mut t, link, &command(&["REPLCONF", "GETACK", "*"]));
    assert_eq!(take(&mut t, link), super::ack_bytes(offset as u64));
    // And every second from the replication cron, with the GETACK counted.
    let offset = offset + command(&["REPLCONF", "GETACK", "*"]).len();
    t.advance_ms(1000);
    assert_eq!(take(&mut t, link), super::ack_bytes(offset as u64));
    assert_eq!(
        t.cmd(c, &["SET", "x", "1"]),
        crate::testing::err("READONLY You can't write against a read only replica.")
    );
}

#[test]
fn a_lost_link_resyncs_partially_from_the_cached_master() {
    let (mut t, c, link) = linked();
    feed(&mut t, link, &transcript(false));
    let offset = 100 + stream().len();
    t.cmd(c, &["SELECT", "0"]);
    // A command cut by the loss is dropped with the link.
    feed(&mut t, link, b"*3\r\n$3\r\nSET\r\n");
    t.engine.disconnect(t.now, link);
    assert_eq!(info_field(&mut t, c, "master_link_status"), "down");
    assert_eq!(t.cmd(c, &["GET", "b"]), bulk("2"), "stale data is served");
    t.advance_ms(1000);
    let link = connect_event(&mut t).expect("reconnects");
    t.engine.primary_link_up(t.now, link);
    take(&mut t, link);
    feed(&mut t, link, b"+PONG\r\n+OK\r\n+OK\r\n");
    let psync = command(&["PSYNC", ID, &(offset + 1).to_string()]);
    assert!(take(&mut t, link).ends_with(&psync));
    // The primary failed over to a new id: ours becomes replid2.
    let mut reply = format!("+CONTINUE {ID2}\r\n").into_bytes();
    reply.extend(command(&["SET", "d", "4"]));
    for b in reply {
        feed(&mut t, link, &[b]);
    }
    assert_eq!(t.cmd(c, &["GET", "d"]), bulk("4"));
    assert_eq!(info_field(&mut t, c, "master_replid"), ID2);
    assert_eq!(info_field(&mut t, c, "master_replid2"), ID);
    let second = (offset + 1).to_string();
    assert_eq!(info_field(&mut t, c, "second_repl_offset"), second);
    let offset = offset + command(&["SET", "d", "4"]).len();
    assert_eq!(
        info_field(&mut t, c, "slave_repl_offset"),
        offset.to_string()
    );
}

#[test]
fn silence_past_repl_timeout_drops_the_link() {
    let (mut t, c, link) = linked();
    t.cmd(c, &["CONFIG", "SET", "repl-timeout", "5"]);
    feed(&mut t, link, &transcript(false));
    t.advance_ms(6000);
    t.advance_ms(1000);
    assert!(t
        .events
        .iter()
        .any(|e| matches!(e, Event::Close { client, .. } if *client == link)));
    assert_eq!(info_field(&mut t, c, "master_link_status"), "down");
}

#[test]
fn replicaof_no_one_promotes() {
    let (mut t, c, link) = linked();
    feed(&mut t, link, &transcript(false));
    assert_eq!(t.cmd(c, &["REPLICAOF", "NO", "ONE"]), simple("OK"));
    assert!(t
        .events
        .iter()
        .any(|e| matches!(e, Event::Close { client, .. } if *client == link)));
    assert_eq!(info_field(&mut t, c, "role"), "master");
    assert_eq!(info_field(&mut t, c, "master_replid2"), ID);
    assert_eq!(t.cmd(c, &["SET", "x", "1"]), simple("OK"));
}

#[test]
fn bad_replies_end_the_link() {
    for reply in [
        &b"-ERR wrong\r\n"[..],
        b"+PONG\r\n+OK\r\n+OK\r\n-NOMASTERLINK Can't SYNC while not connected with my master\r\n",
        b"+PONG\r\n+OK\r\n+OK\r\n+FULLRESYNC x 1\r\n-ERR aborted\r\n",
        b"+PONG\r\n+OK\r\n+OK\r\n+FULLRESYNC x 1\r\nhello\r\n",
        b"+PONG\r\n+OK\r\n+OK\r\n+FULLRESYNC x 1\r\n$5\r\nNORDB",
    ] {
        let (mut t, c, link) = linked();
        feed(&mut t, link, reply);
        let closed = t
            .events
            .iter()
            .any(|e| matches!(e, Event::Close { client, .. } if *client == link));
        assert!(closed, "{}", String::from_utf8_lossy(reply));
        assert_eq!(info_field(&mut t, c, "master_link_status"), "down");
    }
}

/// A replica engine wired to a primary engine: the handshake, the full
/// resync and the stream as the two engines produce them, and WAIT on
/// the primary counting the replica's ACK.
#[test]
fn a_replica_engine_syncs_from_a_primary_engine() {
    let mut p = TestEngine::new();
    let pc = p.connect();
    p.cmd(pc, &["SET", "a", "1"]);
    p.cmd(pc, &["RPUSH", "l", "x", "y"]);
    let (mut r, rc, link) = linked();
    let at_primary = p.connect();
    let pump = |p: &mut TestEngine, r: &mut TestEngine| {
        for _ in 0..20 {
            let up = take(r, link);
            if !up.is_empty() {
                p.engine.handle_input(p.now, at_primary, &up);
            }
            let down = take(p, at_primary);
            if !down.is_empty() {
                feed(r, link, &down);
            }
        }
    };
    p.engine
        .handle_input(p.now, at_primary, &command(&["PING"]));
    pump(&mut p, &mut r);
    // Not `cmd`, which would take the replica's output too.
    feed(&mut p, pc, &command(&["SET", "b", "2"]));
    assert_eq!(take(&mut p, pc), b"+OK\r\n");
    pump(&mut p, &mut r);
    assert_eq!(r.cmd(rc, &["GET", "a"]), bulk("1"));
    assert_eq!(
        r.cmd(rc, &["LRANGE", "l", "0", "-1"]),
        Frame::Array(vec![bulk("x"), bulk("y")])
    );
    assert_eq!(r.cmd(rc, &["GET", "b"]), bulk("2"));
    let offset = info_field(&mut p, pc, "master_repl_offset");
    assert_eq!(info_field(&mut r, rc, "slave_repl_offset"), offset);
    r.advance_ms(1000);
    pump(&mut p, &mut r);
    assert_eq!(p.cmd(pc, &["WAIT", "1", "0"]), crate::testing::int(1));
}
