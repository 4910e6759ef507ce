//! The pub/sub checker over hand-built histories: one per verdict, with
//! the engine's execution order and from client-side times only.

use seedkv_engine::resp::Frame;

use super::*;
use crate::history::{Execution, Op};

/// Builds a history one request at a time; each request executes at once
/// unless told otherwise, and time moves 10 ns per step.
#[derive(Default)]
struct Builder {
    h: History,
    now_ns: u64,
    seq_next: BTreeMap<ConnId, u64>,
}

impl Builder {
    /// A request on `conn` answered with `reply`; returns its index.
    fn req(&mut self, conn: ConnId, args: &[&str], reply: Frame) -> u64 {
        self.request(conn, args, Some(reply), true)
    }

    fn publish(&mut self, conn: ConnId, channel: &str, payload: &str, receivers: i64) -> u64 {
        self.req(
            conn,
            &["PUBLISH", channel, payload],
            Frame::Integer(receivers),
        )
    }

    fn request(&mut self, conn: ConnId, args: &[&str], reply: Option<Frame>, runs: bool) -> u64 {
        let seq = self.seq_next.entry(conn).or_default();
        let seq_in_conn = *seq;
        *seq += 1;
        let invoke_ns = self.tick();
        let exec_ns = self.tick();
        if runs {
            self.h.executions.push(Execution {
                conn,
                seq_in_conn,
                start_ns: exec_ns,
                end_ns: exec_ns,
                unix_ms: 0,
                name: "x",
                flags: 0,
                work_units: 1,
                in_exec: None,
                sizes: None,
            });
        }
        let complete = reply.map(|r| (self.tick(), r));
        self.h.ops.push(Op {
            client: conn as u32,
            conn,
            seq_in_conn,
            args: args.iter().map(|a| a.as_bytes().to_vec()).collect(),
            workload: "pubsub",
            invoke_ns,
            complete,
        });
        seq_in_conn
    }

    /// A message received on `conn` before the reply of its request
    /// `before_seq`.
    fn got(
        &mut self,
        conn: ConnId,
        before_seq: u64,
        kind: MessageKind,
        channel: &str,
        payload: &str,
    ) {
        self.got_with(conn, before_seq, kind, None, channel, payload);
    }

    fn got_with(
        &mut self,
        conn: ConnId,
        before_seq: u64,
        kind: MessageKind,
        pattern: Option<&str>,
        channel: &str,
        payload: &str,
    ) {
        let at_ns = self.tick();
        self.h.pubsub.deliveries.push(Delivery {
            conn,
            client: conn as u32,
            at_ns,
            before_seq,
            kind,
            pattern: pattern.map(|p| p.as_bytes().to_vec()),
            channel: channel.as_bytes().to_vec(),
            payload: payload.as_bytes().to_vec(),
        });
    }

    fn server_drops(&mut self, conn: ConnId) {
        let at = self.h.executions.len();
        self.h.pubsub.server_disconnects.push((conn, at));
    }

    fn tick(&mut self) -> u64 {
        self.now_ns += 10;
        self.now_ns
    }

    fn check(&self) -> Result<(), Violation> {
        PubSubDelivery.check(&self.h, &RunFacts::default())
    }

    /// The same history as seen over a real socket: no execution order.
    fn check_by_client_times(&self) -> Result<(), Violation> {
        let mut h = self.h.clone();
        h.executions.clear();
        h.pubsub.server_disconnects.clear();
        PubSubDelivery.check(&h, &RunFacts::default())
    }
}

fn ok() -> Frame {
    Frame::Integer(1)
}

fn fails_with(result: Result<(), Violation>, words: &str) {
    let v = result.expect_err("a violation");
    assert_eq!(v.checker, "pubsub");
    assert!(v.message.contains(words), "{}", v.message);
}

/// conn 1 subscribes to chan:0; conn 2 publishes `2:0` there; conn 1's
/// next request executes after it.
fn one_message(delivered: usize) -> Builder {
    let mut b = Builder::default();
    b.req(1, &["SUBSCRIBE", "chan:0"], ok());
    b.publish(2, "chan:0", "2:0", 1);
    for _ in 0..delivered {
        b.got(1, 1, MessageKind::Message, "chan:0", "2:0");
    }
    b.req(1, &["SUBSCRIBE", "chan:0"], ok());
    b
}

#[test]
fn a_message_delivered_once_passes() {
    let b = one_message(1);
    assert_eq!(b.check(), Ok(()));
    assert_eq!(b.check_by_client_times(), Ok(()));
}

#[test]
fn a_lost_message_fails() {
    let b = one_message(0);
    fails_with(b.check(), "lost");
    fails_with(b.check_by_client_times(), "lost");
}

#[test]
fn a_message_delivered_twice_fails() {
    let b = one_message(2);
    fails_with(b.check(), "delivered twice");
    fails_with(b.check_by_client_times(), "twice");
}

#[test]
fn a_message_that_arrives_after_a_later_reply_is_lost() {
    let mut b = one_message(0);
    b.got(1, 2, MessageKind::Message, "chan:0", "2:0");
    fails_with(b.check(), "answered before it");
}

#[test]
fn no_later_reply_no_obligation() {
    let mut b = Builder::default();
    b.req(1, &["SUBSCRIBE", "chan:0"], ok());
    b.publish(2, "chan:0", "2:0", 1);
    // The subscriber's next request was never answered (reset).
    b.request(1, &["SUBSCRIBE", "chan:1"], None, true);
    assert_eq!(b.check(), Ok(()));
    assert_eq!(b.check_by_client_times(), Ok(()));
}

#[test]
fn a_message_to_a_connection_never_subscribed_fails() {
    let mut b = one_message(1);
    b.req(3, &["PING"], Frame::Simple(b"PONG".to_vec()));
    b.got(3, 1, MessageKind::Message, "chan:0", "2:0");
    fails_with(b.check(), "not subscribed");
    fails_with(b.check_by_client_times(), "no subscription");
}

#[test]
fn a_message_replayed_after_a_reconnect_fails() {
    let mut b = one_message(1);
    b.server_drops(1);
    // The client's new connection subscribes after the publish.
    b.req(4, &["SUBSCRIBE", "chan:0"], ok());
    b.got(4, 1, MessageKind::Message, "chan:0", "2:0");
    fails_with(b.check(), "not subscribed");
    fails_with(b.check_by_client_times(), "no subscription");
}

#[test]
fn a_dropped_connection_is_no_receiver() {
    let mut b = Builder::default();
    b.req(1, &["SUBSCRIBE", "chan:0"], ok());
    b.server_drops(1);
    b.publish(2, "chan:0", "2:0", 0);
    assert_eq!(b.check(), Ok(()));
    let mut wrong = Builder::default();
    wrong.req(1, &["SUBSCRIBE", "chan:0"], ok());
    wrong.server_drops(1);
    wrong.publish(2, "chan:0", "2:0", 1);
    fails_with(wrong.check(), "replied :1 but 0");
}

#[test]
fn nothing_after_unsubscribing() {
    let mut b = Builder::default();
    b.req(1, &["SUBSCRIBE", "chan:0", "chan:1"], ok());
    b.req(1, &["UNSUBSCRIBE"], ok());
    b.publish(2, "chan:0", "2:0", 0);
    b.req(1, &["PSUBSCRIBE", "x*"], ok());
    assert_eq!(b.check(), Ok(()));
    assert_eq!(b.check_by_client_times(), Ok(()));
    b.got(1, 3, MessageKind::Message, "chan:0", "2:0");
    fails_with(b.check(), "not subscribed");
    fails_with(b.check_by_client_times(), "no subscription");
}

#[test]
fn a_pattern_and_a_channel_both_deliver() {
    let mut b = Builder::default();
    b.req(1, &["SUBSCRIBE", "chan:0"], ok());
    b.req(1, &["PSUBSCRIBE", "chan:*", "*:1"], ok());
    b.publish(2, "chan:0", "2:0", 2);
    b.got(1, 2, MessageKind::Message, "chan:0", "2:0");
    let mut both = Builder {
        h: b.h.clone(),
        now_ns: b.now_ns,
        seq_next: b.seq_next.clone(),
    };
    both.got_with(1, 2, MessageKind::PMessage, Some("chan:*"), "chan:0", "2:0");
    for x in [&mut b, &mut both] {
        x.req(1, &["SUBSCRIBE", "chan:0"], ok());
    }
    assert_eq!(both.check(), Ok(()));
    assert_eq!(both.check_by_client_times(), Ok(()));
    fails_with(b.check(), "lost");
    fails_with(b.check_by_client_times(), "lost");
}

#[test]
fn a_wrong_receiver_count_fails() {
    let mut b = Builder::default();
    b.req(1, &["SUBSCRIBE", "chan:0"], ok());
    b.publish(2, "chan:0", "2:0", 2);
    fails_with(b.check(), "replied :2 but 1");
    // Not judged without the execution order.
    assert_eq!(b.check_by_client_times(), Ok(()));
}

#[test]
fn messages_out_of_publish_order_fail() {
    let mut b = Builder::default();
    b.req(1, &["SUBSCRIBE", "chan:0"], ok());
    b.publish(2, "chan:0", "2:0", 1);
    b.publish(2, "chan:0", "2:1", 1);
    b.got(1, 1, MessageKind::Message, "chan:0", "2:1");
    b.got(1, 1, MessageKind::Message, "chan:0", "2:0");
    b.req(1, &["SUBSCRIBE", "chan:0"], ok());
    fails_with(b.check(), "published later");
    fails_with(b.check_by_client_times(), "later message");
}

#[test]
fn shard_channels_are_their_own_namespace() {
    let mut b = Builder::default();
    b.req(1, &["SSUBSCRIBE", "shard:0"], ok());
    b.publish(2, "shard:0", "2:0", 0);
    b.req(2, &["SPUBLISH", "shard:0", "2:1"], Frame::Integer(1));
    b.got(1, 1, MessageKind::SMessage, "shard:0", "2:1");
    b.req(1, &["SSUBSCRIBE", "shard:0"], ok());
    assert_eq!(b.check(), Ok(()));
    assert_eq!(b.check_by_client_times(), Ok(()));
    b.got(1, 2, MessageKind::SMessage, "shard:0", "2:0");
    fails_with(b.check(), "published by `PUBLISH");
}

#[test]
fn an_unexecuted_or_invented_message_fails() {
    let mut b = one_message(1);
    b.request(2, &["PUBLISH", "chan:0", "2:1"], None, false);
    b.got(1, 2, MessageKind::Message, "chan:0", "2:1");
    fails_with(b.check(), "never executed");
    let mut c = one_message(1);
    c.got(1, 2, MessageKind::Message, "chan:0", "9:9");
    fails_with(c.check(), "ever published");
    fails_with(c.check_by_client_times(), "ever published");
}
