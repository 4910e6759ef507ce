//! Pub/sub through the engine's host API: delivery order, RESP2 subscribed
//! mode, RESP3 pushes interleaved with replies, cleanup on disconnect and
//! RESET, and the output buffer limits closing a slow subscriber (at the
//! hard limit at once, over the soft limit after its seconds of virtual
//! time) while a fast one keeps receiving.

use seedkv_engine::resp::Frame;
use seedkv_engine::testing::{bulk, TestHost};
use seedkv_engine::{ClientId, CloseReason, Config};

/// A host whose closes may not ask to flush first (QUIT excepted): these
/// tests expect no protocol error or refusal, and a slow client's pending
/// error would never be read.
fn host(config: Config) -> TestHost {
    let mut h = TestHost::new(config);
    h.forbid_flush_first_closes = true;
    h
}

fn arr(items: Vec<Frame>) -> Frame {
    Frame::Array(items)
}

fn confirm(kind: &str, name: Option<&str>, count: i64) -> Frame {
    arr(vec![
        bulk(kind),
        name.map_or(Frame::Null, bulk),
        Frame::Integer(count),
    ])
}

fn message(channel: &str, payload: &str) -> Frame {
    arr(vec![bulk("message"), bulk(channel), bulk(payload)])
}

fn pmessage(pattern: &str, channel: &str, payload: &str) -> Frame {
    arr(vec![
        bulk("pmessage"),
        bulk(pattern),
        bulk(channel),
        bulk(payload),
    ])
}

/// A PUBSUB NUMSUB or SHARDNUMSUB reply: each channel with its count.
fn counts(channels: &[(&str, i64)]) -> Frame {
    arr(channels
        .iter()
        .flat_map(|&(name, count)| [bulk(name), Frame::Integer(count)])
        .collect())
}

fn push(frame: Frame) -> Frame {
    match frame {
        Frame::Array(items) => Frame::Push(items),
        other => other,
    }
}

#[test]
fn publish_reaches_channel_then_pattern_subscribers_in_subscription_order() {
    let mut h = host(Config::default());
    let (a, b, c, publisher) = (h.connect(), h.connect(), h.connect(), h.connect());
    assert_eq!(
        h.call(b, &["subscribe", "news", "other"]),
        vec![
            confirm("subscribe", Some("news"), 1),
            confirm("subscribe", Some("other"), 2)
        ]
    );
    assert_eq!(
        h.call(a, &["subscribe", "news", "news"]),
        vec![
            confirm("subscribe", Some("news"), 1),
            confirm("subscribe", Some("news"), 1)
        ]
    );
    assert_eq!(
        h.call(c, &["psubscribe", "n*", "*s"]),
        vec![
            confirm("psubscribe", Some("n*"), 1),
            confirm("psubscribe", Some("*s"), 2)
        ]
    );
    assert_eq!(
        h.call(publisher, &["publish", "news", "hi"]),
        vec![Frame::Integer(4)]
    );
    assert_eq!(h.frames(b), vec![message("news", "hi")]);
    assert_eq!(h.frames(a), vec![message("news", "hi")]);
    assert_eq!(
        h.frames(c),
        vec![pmessage("*s", "news", "hi"), pmessage("n*", "news", "hi")]
    );
    // Each subscriber gets a publisher's messages in publish order.
    for i in 0..5 {
        h.send(publisher, &["publish", "other", &i.to_string()]);
    }
    let expected: Vec<Frame> = (0..5).map(|i| message("other", &i.to_string())).collect();
    assert_eq!(h.frames(b), expected);
    assert!(h.frames(a).is_empty());
    h.frames(publisher);
    assert_eq!(
        h.call(publisher, &["publish", "zzz", "x"]),
        vec![Frame::Integer(0)]
    );
}

#[test]
fn nothing_is_kept_for_later_subscribers() {
    let mut h = host(Config::default());
    let (late, publisher) = (h.connect(), h.connect());
    assert_eq!(
        h.call(publisher, &["publish", "ch", "early"]),
        vec![Frame::Integer(0)]
    );
    h.call(late, &["subscribe", "ch"]);
    assert!(h.frames(late).is_empty());
    h.send(publisher, &["publish", "ch", "late"]);
    assert_eq!(h.frames(late), vec![message("ch", "late")]);
}

#[test]
fn resp2_subscribed_mode_allows_only_the_subscribe_family_ping_quit_reset() {
    let mut h = host(Config::default());
    let c = h.connect();
    h.call(c, &["subscribe", "a"]);
    assert_eq!(
        h.call(c, &["get", "k"]),
        vec![Frame::Error(
            b"ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context".to_vec()
        )]
    );
    assert_eq!(
        h.call(c, &["client", "list"]),
        vec![Frame::Error(
            b"ERR Can't execute 'client|list': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context".to_vec()
        )]
    );
    assert_eq!(
        h.call(c, &["ping"]),
        vec![arr(vec![bulk("pong"), bulk("")])]
    );
    assert_eq!(
        h.call(c, &["ping", "x"]),
        vec![arr(vec![bulk("pong"), bulk("x")])]
    );
    assert_eq!(
        h.call(c, &["psubscribe", "p*"]),
        vec![confirm("psubscribe", Some("p*"), 2)]
    );
    assert_eq!(
        h.call(c, &["unsubscribe"]),
        vec![confirm("unsubscribe", Some("a"), 1)]
    );
    // Still subscribed to a pattern: still restricted.
    assert!(matches!(h.call(c, &["get", "k"])[0], Frame::Error(_)));
    assert_eq!(
        h.call(c, &["punsubscribe"]),
        vec![confirm("punsubscribe", Some("p*"), 0)]
    );
    assert_eq!(
        h.call(c, &["unsubscribe"]),
        vec![confirm("unsubscribe", None, 0)]
    );
    assert_eq!(
        h.call(c, &["punsubscribe"]),
        vec![confirm("punsubscribe", None, 0)]
    );
    assert_eq!(h.call(c, &["get", "k"]), vec![Frame::Null]);
    assert_eq!(h.call(c, &["ping"]), vec![Frame::Simple(b"PONG".to_vec())]);
    // RESET leaves subscribed mode.
    h.call(c, &["subscribe", "a"]);
    assert_eq!(
        h.call(c, &["reset"]),
        vec![Frame::Simple(b"RESET".to_vec())]
    );
    assert_eq!(h.call(c, &["get", "k"]), vec![Frame::Null]);
    let p = h.connect();
    assert_eq!(
        h.call(p, &["pubsub", "numsub", "a"]),
        vec![counts(&[("a", 0)])]
    );
}

/// Switches `c` to RESP3 and subscribes it to `channel` with `command`
/// (subscribe or ssubscribe): the confirmation is a push.
fn resp3_subscribe(h: &mut TestHost, c: ClientId, command: &str, channel: &str) {
    h.call(c, &["hello", "3"]);
    assert_eq!(
        h.call(c, &[command, channel]),
        vec![push(confirm(command, Some(channel), 1))]
    );
}

#[test]
fn resp3_pushes_interleave_with_replies() {
    let mut h = host(Config::default());
    let (c, publisher) = (h.connect(), h.connect());
    resp3_subscribe(&mut h, c, "subscribe", "ch");
    h.send(publisher, &["publish", "ch", "one"]);
    // Normal commands run; the message waiting ahead of the reply stays ahead.
    assert_eq!(
        h.call(c, &["set", "k", "v"]),
        vec![push(message("ch", "one")), Frame::Simple(b"OK".to_vec())]
    );
    assert_eq!(h.call(c, &["get", "k"]), vec![bulk("v")]);
    assert_eq!(h.call(c, &["ping"]), vec![Frame::Simple(b"PONG".to_vec())]);
    // Its own PUBLISH: the message comes before the reply, as in Redis 7.0.
    h.call(c, &["psubscribe", "c*"]);
    assert_eq!(
        h.call(c, &["publish", "ch", "self"]),
        vec![
            push(message("ch", "self")),
            push(pmessage("c*", "ch", "self")),
            Frame::Integer(2)
        ]
    );
    assert_eq!(
        h.call(c, &["punsubscribe", "c*", "zz"]),
        vec![
            push(confirm("punsubscribe", Some("c*"), 1)),
            push(confirm("punsubscribe", Some("zz"), 1))
        ]
    );
    assert_eq!(
        h.call(c, &["unsubscribe"]),
        vec![push(confirm("unsubscribe", Some("ch"), 0))]
    );
    assert_eq!(
        h.call(c, &["unsubscribe"]),
        vec![push(confirm("unsubscribe", None, 0))]
    );
}

#[test]
fn disconnect_and_reset_clean_every_subscription() {
    let mut h = host(Config::default());
    let (a, b, admin) = (h.connect(), h.connect(), h.connect());
    h.call(a, &["subscribe", "x", "y", "z"]);
    h.call(a, &["psubscribe", "p1", "p2"]);
    h.call(b, &["subscribe", "y"]);
    h.call(b, &["psubscribe", "p2", "p3"]);
    assert_eq!(
        h.call(admin, &["pubsub", "channels"]),
        vec![arr(vec![bulk("x"), bulk("y"), bulk("z")])]
    );
    assert_eq!(
        h.call(admin, &["pubsub", "numpat"]),
        vec![Frame::Integer(3)]
    );
    h.engine.disconnect(h.now, a);
    assert_eq!(
        h.call(admin, &["pubsub", "channels"]),
        vec![arr(vec![bulk("y")])]
    );
    assert_eq!(
        h.call(admin, &["pubsub", "numsub", "x", "y"]),
        vec![counts(&[("x", 0), ("y", 1)])]
    );
    assert_eq!(
        h.call(admin, &["pubsub", "numpat"]),
        vec![Frame::Integer(2)]
    );
    h.call(b, &["reset"]);
    assert_eq!(h.call(admin, &["pubsub", "channels"]), vec![arr(vec![])]);
    assert_eq!(
        h.call(admin, &["pubsub", "numpat"]),
        vec![Frame::Integer(0)]
    );
    assert_eq!(
        h.call(admin, &["publish", "y", "m"]),
        vec![Frame::Integer(0)]
    );
    // Churn: many subscribe/unsubscribe rounds leave exact counts.
    for round in 0..20 {
        let ch = format!("c{}", round % 3);
        h.call(b, &["subscribe", &ch]);
        if round % 2 == 0 {
            h.call(b, &["unsubscribe", &ch]);
        }
    }
    assert_eq!(
        h.call(admin, &["pubsub", "channels", "c*"]),
        vec![arr(vec![bulk("c1"), bulk("c2")])]
    );
}

/// The default config with one client class's output buffer `limits`
/// (`class hard soft soft-seconds`).
fn with_output_limits(limits: &str) -> Config {
    let mut config = Config::default();
    config
        .client_output_buffer_limit
        .apply(limits)
        .expect("valid limits");
    config
}

/// A config whose pubsub limits are small: hard 4000 bytes, soft 1000
/// bytes for 2 seconds.
fn small_limits() -> Config {
    with_output_limits("pubsub 4000 1000 2")
}

/// A slow and a fast subscriber of "ch" under [`small_limits`], and a
/// publisher: (host, slow, fast, publisher).
fn slow_and_fast_subscribers() -> (TestHost, ClientId, ClientId, ClientId) {
    let mut h = host(small_limits());
    let (slow, fast, publisher) = (h.connect(), h.connect(), h.connect());
    h.call(slow, &["subscribe", "ch"]);
    h.call(fast, &["subscribe", "ch"]);
    h.slow.insert(slow);
    (h, slow, fast, publisher)
}

#[test]
fn slow_subscriber_is_closed_at_the_hard_limit_while_a_fast_one_keeps_receiving() {
    let (mut h, slow, fast, publisher) = slow_and_fast_subscribers();
    let payload = "x".repeat(100);
    let mut sent = 0;
    while h.closed.is_empty() {
        assert!(
            sent < 100,
            "the hard limit never closed the slow subscriber"
        );
        h.send(publisher, &["publish", "ch", &payload]);
        sent += 1;
    }
    assert_eq!(h.closed, vec![(slow, CloseReason::OutputBufferLimit)]);
    // About 4000 / 125 bytes per message, all at the same instant.
    assert!((30..=34).contains(&sent), "closed after {sent} messages");
    assert_eq!(h.frames(fast).len(), sent);
    h.frames(publisher);
    // The fast one keeps receiving, and the slow one is no longer counted.
    assert_eq!(
        h.call(publisher, &["publish", "ch", "after"]),
        vec![Frame::Integer(1)]
    );
    assert_eq!(h.frames(fast), vec![message("ch", "after")]);
}

#[test]
fn slow_subscriber_is_closed_after_the_soft_limit_seconds_in_virtual_time() {
    let (mut h, slow, fast, publisher) = slow_and_fast_subscribers();
    let payload = "x".repeat(100);
    // Over the soft limit (1000 bytes) but under the hard one.
    for _ in 0..10 {
        h.send(publisher, &["publish", "ch", &payload]);
    }
    assert!(h.engine.pending_output(slow).len() > 1000);
    assert!(h.closed.is_empty());
    // Still over after 2 seconds exactly: not yet (Redis needs more).
    h.advance_ms(2000);
    h.send(publisher, &["publish", "ch", "m"]);
    assert!(h.closed.is_empty());
    h.advance_ms(1);
    h.send(publisher, &["publish", "ch", "m"]);
    assert_eq!(h.closed, vec![(slow, CloseReason::OutputBufferLimit)]);
    assert_eq!(h.frames(fast).len(), 12);
}

#[test]
fn reading_below_the_soft_limit_resets_its_clock() {
    let mut h = host(small_limits());
    let (slow, publisher) = (h.connect(), h.connect());
    h.call(slow, &["subscribe", "ch"]);
    h.slow.insert(slow);
    let payload = "x".repeat(100);
    for _ in 0..10 {
        h.send(publisher, &["publish", "ch", &payload]);
    }
    h.advance_ms(1500);
    // The client catches up; the next check sees it under the limit.
    let pending = h.engine.pending_output(slow).len();
    h.engine.consume_output(slow, pending);
    h.send(publisher, &["publish", "ch", "m"]);
    for _ in 0..10 {
        h.send(publisher, &["publish", "ch", &payload]);
    }
    h.advance_ms(1500);
    h.send(publisher, &["publish", "ch", "m"]);
    assert!(
        h.closed.is_empty(),
        "the soft clock restarted when it caught up"
    );
}

#[test]
fn normal_class_limit_applies_to_normal_clients() {
    let mut h = host(with_output_limits("normal 1000 0 0"));
    let (c, other) = (h.connect(), h.connect());
    h.slow.insert(c);
    h.send(c, &["set", "k", &"v".repeat(600)]);
    h.send(c, &["get", "k"]);
    assert!(h.closed.is_empty());
    h.send(c, &["get", "k"]);
    assert_eq!(h.closed, vec![(c, CloseReason::OutputBufferLimit)]);
    assert_eq!(
        h.call(other, &["ping"]),
        vec![Frame::Simple(b"PONG".to_vec())]
    );
}

/// The first line of CLIENT LIST (the first client connected), as `admin`
/// reads it.
fn first_client_line(h: &mut TestHost, admin: ClientId) -> String {
    let Frame::Bulk(list) = h.cmd(admin, &["client", "list"]) else {
        panic!("CLIENT LIST replies a bulk string");
    };
    let list = String::from_utf8(list).expect("text");
    list.lines().next().expect("first client").to_string()
}

#[test]
fn client_list_and_info_report_subscriptions() {
    let mut h = host(Config::default());
    let (c, admin) = (h.connect(), h.connect());
    h.call(c, &["subscribe", "a", "b"]);
    h.call(c, &["psubscribe", "p*"]);
    let line = first_client_line(&mut h, admin);
    assert!(line.contains(" flags=P "), "{line}");
    assert!(line.contains(" sub=2 psub=1 ssub=0 "), "{line}");
    let info = h.info_text(admin, "stats");
    assert!(info.contains("pubsub_channels:2\r\n"), "{info}");
    assert!(info.contains("pubsub_patterns:1\r\n"), "{info}");
}

fn smessage(channel: &str, payload: &str) -> Frame {
    arr(vec![bulk("smessage"), bulk(channel), bulk(payload)])
}

#[test]
fn shard_channels_are_a_namespace_of_their_own() {
    let mut h = host(Config::default());
    let (s, c, admin) = (h.connect(), h.connect(), h.connect());
    // Nothing held: one confirmation with a nil name, as Redis 7.0.
    assert_eq!(
        h.call(s, &["sunsubscribe"]),
        vec![confirm("sunsubscribe", None, 0)]
    );
    assert_eq!(
        h.call(s, &["ssubscribe", "a", "b", "a"]),
        vec![
            confirm("ssubscribe", Some("a"), 1),
            confirm("ssubscribe", Some("b"), 2),
            confirm("ssubscribe", Some("a"), 2),
        ]
    );
    // Shard and plain subscriptions are counted apart.
    assert_eq!(
        h.call(s, &["subscribe", "a"]),
        vec![confirm("subscribe", Some("a"), 1)]
    );
    h.call(c, &["psubscribe", "*"]);
    // SPUBLISH reaches shard subscribers only, never patterns; PUBLISH
    // never reaches shard subscribers.
    assert_eq!(
        h.call(admin, &["spublish", "a", "m1"]),
        vec![Frame::Integer(1)]
    );
    assert_eq!(h.frames(s), vec![smessage("a", "m1")]);
    assert_eq!(h.frames(c), vec![]);
    assert_eq!(
        h.call(admin, &["publish", "b", "m2"]),
        vec![Frame::Integer(1)]
    );
    assert_eq!(h.frames(s), vec![]);
    assert_eq!(h.frames(c), vec![pmessage("*", "b", "m2")]);
    assert_eq!(
        h.call(admin, &["pubsub", "shardchannels"]),
        vec![arr(vec![bulk("a"), bulk("b")])]
    );
    assert_eq!(
        h.call(admin, &["pubsub", "shardchannels", "b*"]),
        vec![arr(vec![bulk("b")])]
    );
    assert_eq!(
        h.call(admin, &["pubsub", "shardnumsub", "a", "x"]),
        vec![counts(&[("a", 1), ("x", 0)])]
    );
    assert_eq!(
        h.call(admin, &["pubsub", "numsub", "a"]),
        vec![counts(&[("a", 1)])]
    );
    assert_eq!(
        h.call(admin, &["pubsub", "shardchannels", "a", "b"]),
        vec![Frame::Error(
            b"ERR unknown subcommand or wrong number of arguments for 'shardchannels'. \
              Try PUBSUB HELP."
                .to_vec()
        )]
    );
    let line = first_client_line(&mut h, admin);
    assert!(line.contains(" flags=P "), "{line}");
    assert!(line.contains(" sub=1 psub=0 ssub=2 "), "{line}");
    let info = h.info_text(admin, "stats");
    assert!(info.contains("pubsubshard_channels:2\r\n"), "{info}");
    // Without arguments: every shard channel, in name order; the plain
    // subscription keeps the connection in subscribed mode.
    assert_eq!(
        h.call(s, &["sunsubscribe"]),
        vec![
            confirm("sunsubscribe", Some("a"), 1),
            confirm("sunsubscribe", Some("b"), 0),
        ]
    );
    assert!(matches!(h.call(s, &["get", "k"])[0], Frame::Error(_)));
    h.call(s, &["unsubscribe"]);
    assert_eq!(h.call(s, &["get", "k"]), vec![Frame::Null]);
    // A shard subscription alone is subscribed mode too; a disconnect
    // drops it.
    h.call(s, &["ssubscribe", "z"]);
    assert!(matches!(h.call(s, &["get", "k"])[0], Frame::Error(_)));
    h.engine.disconnect(h.now, s);
    assert_eq!(
        h.call(admin, &["pubsub", "shardnumsub", "z"]),
        vec![counts(&[("z", 0)])]
    );
}

#[test]
fn resp3_shard_confirmations_and_messages_are_pushes() {
    let mut h = host(Config::default());
    let (s, admin) = (h.connect(), h.connect());
    resp3_subscribe(&mut h, s, "ssubscribe", "a");
    // Its own SPUBLISH: the message comes ahead of the reply.
    assert_eq!(
        h.call(s, &["spublish", "a", "mine"]),
        vec![push(smessage("a", "mine")), Frame::Integer(1)]
    );
    h.call(admin, &["spublish", "a", "theirs"]);
    assert_eq!(h.frames(s), vec![push(smessage("a", "theirs"))]);
}
