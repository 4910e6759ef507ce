//! Hand-built histories for the blocking checker: each failing history
//! breaks exactly one of its rules, next to a passing twin.

use seedkv_engine::resp::Frame;

use super::{blocking_timeout, check_blocking, BlockingTimeout};
use crate::check::model::testkit::{bulk, Builder};
use crate::history::Received;

const BOUND_NS: u64 = 1_000_000;

/// Sends a blocking request on `conn` that the engine receives now, with
/// nothing executed yet on its behalf; returns its op index.
fn park(b: &mut Builder, conn: u64, text: &str) -> usize {
    let i = b.op(conn, text, b.now_ns, None);
    b.now_ns += 10;
    let op = &b.history.ops[i];
    b.history.received.push(Received {
        conn: op.conn,
        seq_in_conn: op.seq_in_conn,
        at_ns: b.now_ns,
        executions_before: b.history.executions.len(),
        executions_after: b.history.executions.len(),
    });
    i
}

/// The engine executes request `i` at once, in the turn that received it.
fn at_once(b: &mut Builder, i: usize, reply: Frame) {
    resume(b, i, reply);
    let op = &b.history.ops[i];
    let key = (op.conn, op.seq_in_conn);
    let r = b
        .history
        .received
        .iter_mut()
        .find(|r| (r.conn, r.seq_in_conn) == key)
        .expect("received");
    r.executions_after += 1;
}

/// The engine executes parked request `i` now (served or timed out).
fn resume(b: &mut Builder, i: usize, reply: Frame) {
    b.execute(i, 10);
    b.history.ops[i].complete = Some((b.now_ns + 10, reply));
    b.now_ns += 20;
}

fn popped(key: &str, element: &str) -> Frame {
    Frame::Array(vec![bulk(key), bulk(element)])
}

#[test]
fn timeouts_parse_like_redis() {
    let t = |text: &str| blocking_timeout(&crate::check::model::testkit::args(text));
    assert_eq!(
        t("BLPOP a b 0.015"),
        Some(BlockingTimeout {
            ms_lo: 15,
            ms_hi: 15
        })
    );
    assert_eq!(t("BLMPOP 2 1 a LEFT").map(|t| t.ms_hi), Some(2000));
    assert!(t("BLPOP a 0").is_some_and(BlockingTimeout::forever));
    assert_eq!(t("BLPOP a -1"), None);
    assert_eq!(t("LPOP a 1"), None);
    assert_eq!(
        t("XREAD COUNT 2 BLOCK 15 STREAMS s $").map(|t| t.ms_hi),
        Some(15)
    );
    assert!(t("XREADGROUP GROUP g c BLOCK 0 STREAMS s >").is_some_and(BlockingTimeout::forever));
    assert_eq!(t("XREAD STREAMS block 0"), None);
}

#[test]
fn a_push_wakes_the_first_blocked_client() {
    let mut b = Builder::new();
    let first = park(&mut b, 1, "BLPOP blk:0 blk:1 0.1");
    let second = park(&mut b, 2, "BRPOP blk:0 0.1");
    b.run(3, "RPUSH blk:0 x y", Frame::Integer(2));
    resume(&mut b, first, popped("blk:0", "x"));
    resume(&mut b, second, popped("blk:0", "y"));
    b.run(3, "LLEN blk:0", Frame::Integer(0));
    check_blocking(&b.history, BOUND_NS).expect("served in order");
}

#[test]
fn serving_the_later_client_first_breaks_fifo() {
    let mut b = Builder::new();
    let first = park(&mut b, 1, "BLPOP blk:0 0.1");
    let second = park(&mut b, 2, "BLPOP blk:0 0.1");
    b.run(3, "RPUSH blk:0 x", Frame::Integer(1));
    resume(&mut b, second, popped("blk:0", "x"));
    b.advance_ms(100);
    resume(&mut b, first, Frame::Null);
    let message = check_blocking(&b.history, BOUND_NS).expect_err("conn 2 jumped the queue");
    assert!(message.starts_with("FIFO"), "{message}");
}

#[test]
fn a_command_between_the_push_and_the_serve_is_a_lost_wakeup() {
    let mut b = Builder::new();
    let waiting = park(&mut b, 1, "BLPOP blk:0 0.1");
    b.run(3, "RPUSH blk:0 x", Frame::Integer(1));
    b.run(3, "LLEN blk:0", Frame::Integer(1));
    b.advance_ms(100);
    resume(&mut b, waiting, Frame::Null);
    let message = check_blocking(&b.history, BOUND_NS).expect_err("never woken");
    assert!(message.starts_with("lost wake-up"), "{message}");
    assert!(message.contains("LLEN"), "{message}");
}

#[test]
fn an_element_taken_by_another_client_first_is_no_lost_wakeup() {
    let mut b = Builder::new();
    let waiting = park(&mut b, 1, "BLPOP blk:0 0.1");
    // Another client's LMOVE pushes and a third client's serve... here the
    // push is immediately consumed by a non-blocking pop in the same
    // command stream only after the waiter got it: the waiter is served.
    b.run(3, "RPUSH blk:0 x", Frame::Integer(1));
    resume(&mut b, waiting, popped("blk:0", "x"));
    b.run(3, "LPOP blk:0", Frame::Null);
    check_blocking(&b.history, BOUND_NS).expect("served");
}

#[test]
fn parking_on_a_non_empty_key_fails() {
    let mut b = Builder::new();
    b.run(3, "RPUSH blk:0 x", Frame::Integer(1));
    let waiting = park(&mut b, 1, "BLPOP blk:0 0.1");
    b.run(3, "PING", Frame::Simple(b"PONG".to_vec()));
    resume(&mut b, waiting, popped("blk:0", "x"));
    let message = check_blocking(&b.history, BOUND_NS).expect_err("should not have blocked");
    assert!(message.contains("blocked although"), "{message}");
    // Served at once (executed where it was received): fine.
    let mut b = Builder::new();
    b.run(3, "RPUSH blk:0 x", Frame::Integer(1));
    let now = park(&mut b, 1, "BLPOP blk:0 0.1");
    at_once(&mut b, now, popped("blk:0", "x"));
    check_blocking(&b.history, BOUND_NS).expect("immediate pop");
    // An error at once (say, an unknown command) whose reply was lost is
    // no early timeout.
    let mut b = Builder::new();
    let now = park(&mut b, 1, "BLPOP blk:0 0.1");
    at_once(&mut b, now, Frame::Null);
    b.history.ops[now].complete = None;
    check_blocking(&b.history, BOUND_NS).expect("not a timeout");
}

#[test]
fn timeouts_fire_neither_early_nor_late() {
    let timed_out_after = |ms: u64| {
        let mut b = Builder::new();
        let waiting = park(&mut b, 1, "BZPOPMIN bzs:0 0.05");
        b.advance_ms(ms);
        resume(&mut b, waiting, Frame::Null);
        check_blocking(&b.history, BOUND_NS)
    };
    timed_out_after(50).expect("on time");
    assert!(timed_out_after(20)
        .expect_err("30 ms early")
        .contains("before its timeout"));
    assert!(timed_out_after(500)
        .expect_err("450 ms late with an idle CPU")
        .contains("timed out only at"));
}

#[test]
fn a_pop_that_contradicts_the_keys_contents_fails() {
    let mut b = Builder::new();
    b.run(3, "ZADD bzs:0 1 a 2 b", Frame::Integer(2));
    b.run(
        1,
        "BZPOPMIN bzs:0 0.1",
        Frame::Array(vec![bulk("bzs:0"), bulk("a"), bulk("1")]),
    );
    b.run(
        2,
        "BZPOPMIN bzs:0 0.1",
        Frame::Array(vec![bulk("bzs:0"), bulk("a"), bulk("1")]),
    );
    let message = check_blocking(&b.history, BOUND_NS).expect_err("a popped twice");
    assert!(message.contains("BZPOPMIN"), "{message}");
}

#[test]
fn a_client_that_disconnected_while_blocked_is_not_owed_a_serve() {
    let mut b = Builder::new();
    park(&mut b, 1, "BLPOP blk:0 0.1");
    b.history.conns.push(crate::history::Conn {
        conn: 1,
        client: 1,
        opened_ns: 0,
        closed: Some((b.now_ns, "reset".into())),
    });
    b.now_ns += 10;
    b.run(3, "RPUSH blk:0 x", Frame::Integer(1));
    b.run(3, "LLEN blk:0", Frame::Integer(1));
    check_blocking(&b.history, BOUND_NS).expect("conn 1 was gone");
}
