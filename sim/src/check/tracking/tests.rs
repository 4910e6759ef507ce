use std::collections::BTreeMap;

use seedkv_engine::resp::Frame;

use super::*;
use crate::history::{Execution, Invalidation};

/// A history builder: requests executed in the order they are added.
#[derive(Default)]
struct Builder {
    h: History,
    seqs: BTreeMap<ConnId, u64>,
}

impl Builder {
    fn exec(&mut self, conn: ConnId, args: &[&str], reply: Frame) -> &mut Self {
        let seq = *self.seqs.entry(conn).and_modify(|s| *s += 1).or_insert(0);
        let at_ns = self.h.ops.len() as u64 * 10;
        self.h.ops.push(Op {
            client: conn as u32,
            conn,
            seq_in_conn: seq,
            args: args.iter().map(|a| a.as_bytes().to_vec()).collect(),
            workload: WORKLOAD,
            invoke_ns: at_ns,
            complete: Some((at_ns + 5, reply)),
        });
        self.h.executions.push(Execution {
            conn,
            seq_in_conn: seq,
            start_ns: at_ns + 1,
            end_ns: at_ns + 2,
            unix_ms: 1_000,
            name: "x",
            flags: 0,
            work_units: 1,
            in_exec: None,
            sizes: None,
        });
        self
    }

    fn serve(&mut self, conn: ConnId, key: &str, value: Option<&str>) -> &mut Self {
        let seq_next = self.seqs.get(&conn).map_or(0, |s| s + 1);
        self.h.tracking.serves.push(CacheServe {
            conn,
            client: conn as u32,
            at_ns: self.h.ops.len() as u64 * 10,
            seq_next,
            key: key.as_bytes().to_vec(),
            value: value.map(|v| v.as_bytes().to_vec()),
        });
        self
    }

    fn invalidate(&mut self, conn: ConnId, keys: Option<&[&str]>) -> &mut Self {
        let before_seq = self.seqs.get(&conn).map_or(0, |s| s + 1);
        self.h.tracking.invalidations.push(Invalidation {
            conn,
            client: conn as u32,
            at_ns: self.h.ops.len() as u64 * 10,
            before_seq,
            keys: keys.map(|k| k.iter().map(|k| k.as_bytes().to_vec()).collect()),
        });
        self
    }

    fn check(&self) -> Result<(), Violation> {
        TrackingCheck.check(&self.h, &RunFacts::default())
    }
}

fn ok() -> Frame {
    Frame::Simple(b"OK".to_vec())
}

fn bulk(v: &str) -> Frame {
    Frame::Bulk(v.as_bytes().to_vec())
}

#[test]
fn a_serve_before_the_write_is_visible_passes_and_after_it_fails() {
    let mut b = Builder::default();
    b.exec(1, &["SET", "trk:0", "a"], ok())
        .exec(2, &["GET", "trk:0"], bulk("a"))
        .exec(1, &["SET", "trk:0", "b"], ok())
        // The client has not heard from the server since the write.
        .serve(2, "trk:0", Some("a"));
    assert_eq!(b.check(), Ok(()));
    // A reply to a request executed after the write: now it must know.
    b.exec(2, &["PING"], Frame::Simple(b"PONG".to_vec()))
        .serve(2, "trk:0", Some("a"));
    let v = b.check().unwrap_err();
    assert!(
        v.message.contains("when the key was \"b\""),
        "{}",
        v.message
    );
}

#[test]
fn the_old_value_read_again_after_the_write_is_stale() {
    // The planted bug's shape: the invalidation came, the re-read got the
    // old value (the write had not landed), and it was served later.
    let mut b = Builder::default();
    b.exec(2, &["GET", "trk:1"], Frame::Null)
        .exec(1, &["SET", "trk:1", "new"], ok())
        .invalidate(2, Some(&["trk:1"]))
        .exec(2, &["GET", "trk:1"], Frame::Null)
        .serve(2, "trk:1", None);
    assert!(b.check().is_err());
}

#[test]
fn flushes_deletes_and_expiring_keys() {
    let mut b = Builder::default();
    b.exec(1, &["SET", "trk:0", "a"], ok())
        .exec(2, &["GET", "trk:0"], bulk("a"))
        .exec(1, &["FLUSHDB"], ok())
        .invalidate(2, None)
        .exec(2, &["GET", "trk:0"], Frame::Null)
        .serve(2, "trk:0", None)
        .exec(1, &["SET", "trk:2", "x", "PX", "5"], ok())
        .exec(2, &["GET", "trk:2"], bulk("x"))
        .exec(1, &["PEXPIRE", "trk:2", "0"], Frame::Integer(1))
        .exec(2, &["GET", "trk:2"], Frame::Null)
        .serve(2, "trk:2", None);
    assert_eq!(b.check(), Ok(()));
    // A value it never read is a failure of its own.
    b.serve(2, "trk:2", Some("x"));
    assert!(b.check().unwrap_err().message.contains("last read"));
}

#[test]
fn a_key_with_an_expiry_time_is_not_judged() {
    let mut b = Builder::default();
    b.exec(1, &["SET", "trk:0", "a"], ok())
        .exec(2, &["GET", "trk:0"], bulk("a"))
        .exec(1, &["PEXPIRE", "trk:0", "3"], Frame::Integer(1))
        .exec(2, &["PING"], Frame::Simple(b"PONG".to_vec()))
        .serve(2, "trk:0", Some("a"));
    assert_eq!(b.check(), Ok(()));
}
