//! The primary's side driven through the engine's inputs: a full resync
//! and the stream after it, an ack and WAIT, a partial resync from the
//! backlog, WAIT's timeout, and -NOREPLICAS.

use crate::client::ClientId;
use crate::propagate::encode_command;
use crate::testing::{int, TestEngine};

fn send(t: &mut TestEngine, client: ClientId, args: &[&str]) {
    let mut bytes = Vec::new();
    encode_command(&mut bytes, args);
    t.engine.handle_input(t.now, client, &bytes);
    while t.engine.poll_event().is_some() {}
}

/// Everything pending for `client`, taken.
fn take_output(t: &mut TestEngine, client: ClientId) -> Vec<u8> {
    let out = t.engine.pending_output(client).to_vec();
    t.engine.consume_output(client, out.len());
    out
}

fn replid(t: &mut TestEngine, c: ClientId) -> String {
    let crate::resp::Frame::Bulk(info) = t.cmd(c, &["INFO", "replication"]) else {
        panic!("INFO reply");
    };
    let info = String::from_utf8(info).expect("text");
    let line = info.lines().find(|l| l.starts_with("master_replid:"));
    line.expect("master_replid")["master_replid:".len()..].to_string()
}

#[test]
fn full_resync_then_stream_then_partial_resync() {
    let mut t = TestEngine::new();
    let c = t.connect();
    t.cmd(c, &["SET", "a", "1"]);
    let r = t.connect();
    send(&mut t, r, &["REPLCONF", "capa", "eof", "capa", "psync2"]);
    assert_eq!(take_output(&mut t, r), b"+OK\r\n");
    send(&mut t, r, &["PSYNC", "?", "-1"]);
    let sync = take_output(&mut t, r);
    let id = replid(&mut t, c);
    let head = format!("+FULLRESYNC {id} 0\r\n$EOF:");
    assert!(
        sync.starts_with(head.as_bytes()),
        "{:?}",
        String::from_utf8_lossy(&sync)
    );
    let mark = &sync[head.len()..head.len() + 40];
    assert!(sync.ends_with(mark), "the RDB ends with the EOF mark");
    assert_eq!(&sync[head.len() + 42..head.len() + 47], b"REDIS");

    // The stream: the write as executed, with the SELECT Redis emits,
    // held until the replica acks its load (after a diskless RDB the
    // replica finds the mark only at the end of what it read).
    send(&mut t, c, &["SET", "b", "2"]);
    take_output(&mut t, c);
    assert!(
        take_output(&mut t, r).is_empty(),
        "held until the first ack"
    );
    send(&mut t, r, &["REPLCONF", "ACK", "0"]);
    let stream = take_output(&mut t, r);
    let mut expected = Vec::new();
    encode_command(&mut expected, &["SELECT", "0"]);
    encode_command(&mut expected, &["SET", "b", "2"]);
    assert_eq!(stream, expected);

    // An ack of everything: WAIT 1 answers at once.
    let acked = stream.len().to_string();
    send(&mut t, r, &["REPLCONF", "ACK", &acked]);
    assert!(take_output(&mut t, r).is_empty(), "acks get no reply");
    assert_eq!(t.cmd(c, &["WAIT", "1", "0"]), int(1));

    // The link drops; the replica asks for the byte after its offset.
    t.engine.disconnect(t.now, r);
    send(&mut t, c, &["SET", "c", "3"]);
    take_output(&mut t, c);
    let r2 = t.connect();
    let from = (stream.len() + 1).to_string();
    send(&mut t, r2, &["PSYNC", &id, &from]);
    let mut expected = b"+CONTINUE\r\n".to_vec();
    encode_command(&mut expected, &["SET", "c", "3"]);
    assert_eq!(take_output(&mut t, r2), expected);
    let stats = t.cmd(c, &["INFO", "stats"]).render();
    assert!(stats.contains("sync_partial_ok:1"), "{stats}");

    // A WAIT the replica never acks times out with the count it had.
    send(&mut t, c, &["SET", "d", "4"]);
    take_output(&mut t, c);
    send(&mut t, c, &["WAIT", "1", "100"]);
    assert!(take_output(&mut t, c).is_empty(), "WAIT blocks");
    let getack = take_output(&mut t, r2);
    assert!(getack.ends_with(crate::repl::primary::GETACK));
    t.advance_ms(100);
    assert_eq!(take_output(&mut t, c), b":0\r\n");
}

#[test]
fn min_replicas_to_write_refuses_writes_without_good_replicas() {
    let mut t = TestEngine::new();
    let c = t.connect();
    t.cmd(c, &["CONFIG", "SET", "min-replicas-to-write", "1"]);
    assert_eq!(
        t.cmd(c, &["SET", "a", "1"]),
        crate::testing::err("NOREPLICAS Not enough good replicas to write.")
    );
    assert_eq!(t.cmd(c, &["GET", "a"]), crate::resp::Frame::Null);
}
