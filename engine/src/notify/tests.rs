use super::*;
use crate::resp::encode::encode_request;
use crate::resp::{Frame, FrameDecoder};
use crate::testing::TestEngine;

#[test]
fn flags_read_back_in_redis_order() {
    // Pairs recorded from redis-server 7.0.15 (CONFIG SET, then GET).
    let cases = [
        ("KEA", "AKE"),
        ("AKE", "AKE"),
        ("x", "x"),
        ("", ""),
        ("Egx", "gxE"),
        ("KEn", "nKE"),
        ("KEmA", "AKEm"),
        ("Ed", "dE"),
        ("Kg$lshzxetd", "AK"),
        ("KEAn", "AnKE"),
    ];
    for (set, get) in cases {
        let flags = parse_flags(set.as_bytes()).expect(set);
        assert_eq!(render_flags(flags), get, "{set}");
    }
}

#[test]
fn an_unknown_class_character_is_refused() {
    for bad in ["Kq", "KE ", "a", "KEA1"] {
        assert_eq!(parse_flags(bad.as_bytes()), None, "{bad}");
    }
}

#[test]
fn all_leaves_out_new_and_key_miss() {
    let flags = parse_flags(b"A").unwrap();
    assert_eq!(flags & (class::NEW | class::KEY_MISS), 0);
    assert_eq!(flags & class::EXPIRED, class::EXPIRED);
}

/// Commands and the `__keyevent@<db>__:<event>` messages (as
/// `event(key)`) redis-server 7.0.15 published for each, recorded with
/// `notify-keyspace-events KEAn` and a subscriber of `__key*__:*` (the
/// random and timed commands left out).
const RECORDED: &[(&str, &str)] = &[
    ("set a 1", "new(a) set(a)"),
    ("set a 2", "set(a)"),
    ("setnx a 3", ""),
    ("setex b 100 x", "new(b) set(b) expire(b)"),
    ("psetex b 100000 x", "set(b) expire(b)"),
    ("getset a 5", "set(a)"),
    ("getdel a", "del(a)"),
    ("set c 1", "new(c) set(c)"),
    ("incr c", "incrby(c)"),
    ("incrby c 3", "incrby(c)"),
    ("decr c", "incrby(c)"),
    ("decrby c 2", "incrby(c)"),
    ("incrbyfloat c 1.5", "incrbyfloat(c)"),
    ("append c x", "append(c)"),
    ("append d y", "new(d) append(d)"),
    ("setrange d 5 z", "setrange(d)"),
    ("setrange e 0 z", "new(e) setrange(e)"),
    ("mset m1 1 m2 2", "new(m1) set(m1) new(m2) set(m2)"),
    ("msetnx m3 1 m4 2", "new(m3) set(m3) new(m4) set(m4)"),
    ("getex m1 ex 100", "expire(m1)"),
    ("getex m1 persist", "persist(m1)"),
    ("getex m1 px 0", ""),
    ("set a 1", "new(a) set(a)"),
    ("expire a 100", "expire(a)"),
    ("pexpire a 100000", "expire(a)"),
    ("expireat a 99999999999", "expire(a)"),
    ("persist a", "persist(a)"),
    ("persist a", ""),
    ("expire a 0", "del(a)"),
    ("set a 1", "new(a) set(a)"),
    ("rename a b", "new(b) rename_from(a) rename_to(b)"),
    ("set a 1", "new(a) set(a)"),
    ("rename a b", "new(b) rename_from(a) rename_to(b)"),
    ("renamenx b a", "new(a) rename_from(b) rename_to(a)"),
    ("copy a c2", "new(c2) copy_to(c2)"),
    ("copy a c2 replace", "new(c2) copy_to(c2)"),
    ("move c2 1", "new(c2) move_from(c2) move_to(c2)"),
    ("del b a zz", "del(a)"),
    ("unlink m2 m3", "del(m2) del(m3)"),
    ("lpush l 1 2 3", "new(l) lpush(l)"),
    ("rpush l 4", "rpush(l)"),
    ("lpushx l 5", "lpush(l)"),
    ("rpushx l 6", "rpush(l)"),
    ("linsert l before 1 9", "linsert(l)"),
    ("lset l 0 x", "lset(l)"),
    ("lpop l", "lpop(l)"),
    ("rpop l 2", "rpop(l)"),
    ("ltrim l 0 1", "ltrim(l)"),
    ("lrem l 0 9", ""),
    ("lmove l l2 left right", "new(l2) rpush(l2) lpop(l)"),
    ("lpop l 5", "lpop(l) del(l)"),
    ("lpop l2", "lpop(l2) del(l2)"),
    ("rpush l 1 2 3", "new(l) rpush(l)"),
    ("ltrim l 5 10", "ltrim(l) del(l)"),
    ("rpush l 1 2 3", "new(l) rpush(l)"),
    ("rpoplpush l l3", "new(l3) lpush(l3) rpop(l)"),
    ("lmpop 1 l left count 5", "lpop(l) del(l)"),
    ("sadd s 1 2 3", "new(s) sadd(s)"),
    ("sadd s 1", ""),
    ("srem s 1", "srem(s)"),
    ("smove s s2 3", "srem(s) new(s2) sadd(s2)"),
    ("sadd s 1 2", "sadd(s)"),
    ("sinterstore s3 s s2", ""),
    ("sunionstore s3 s s2", "new(s3) sunionstore(s3)"),
    ("sdiffstore s3 s s2", "sdiffstore(s3)"),
    ("sinterstore s3 nope s", "del(s3)"),
    ("srem s 1 2", "srem(s) del(s)"),
    ("hset h f 1 g 2", "new(h) hset(h)"),
    ("hsetnx h f 3", ""),
    ("hsetnx h x 3", "hset(h)"),
    ("hincrby h f 1", "hincrby(h)"),
    ("hincrbyfloat h f 1.5", "hincrbyfloat(h)"),
    ("hdel h f", "hdel(h)"),
    ("hdel h g x", "hdel(h) del(h)"),
    ("zadd z 1 a 2 b", "new(z) zadd(z)"),
    ("zadd z incr 5 a", "zincr(z)"),
    ("zincrby z 1 b", "zincr(z)"),
    ("zrem z a", "zrem(z)"),
    ("zadd z 3 c 4 d", "zadd(z)"),
    ("zremrangebyscore z 3 3", "zremrangebyscore(z)"),
    ("zremrangebyrank z 0 0", "zremrangebyrank(z) del(z)"),
    ("zadd z 0 a 0 b", "new(z) zadd(z)"),
    ("zremrangebylex z [a [a", "zremrangebylex(z)"),
    ("zpopmin z", "zpopmin(z) del(z)"),
    ("zpopmax z", ""),
    ("zadd z 1 a 2 b", "new(z) zadd(z)"),
    ("zunionstore z2 1 z", "new(z2) zunionstore(z2)"),
    ("zinterstore z2 1 z", "zinterstore(z2)"),
    ("zdiffstore z2 1 z", "zdiffstore(z2)"),
    ("zrangestore z3 z 0 -1", "new(z3) zrangestore(z3)"),
    ("zrangestore z3 z 5 6", "del(z3)"),
    ("zmpop 1 z min count 10", "zpopmin(z) del(z)"),
    ("setbit bb 1 1", "new(bb) setbit(bb)"),
    ("setbit bb 1 1", ""),
    ("bitop and bb2 bb bb", "new(bb2) set(bb2)"),
    ("pfadd hl a", "new(hl) pfadd(hl)"),
    ("pfadd hl a", ""),
    ("pfmerge hl2 hl", "new(hl2) pfadd(hl2)"),
    ("rpush sl 3 1 2", "new(sl) rpush(sl)"),
    ("sort sl store sl2", "new(sl2) sortstore(sl2)"),
    ("xadd st 1-1 f v", "new(st) xadd(st)"),
    ("xtrim st maxlen 0", "xtrim(st)"),
    ("xadd st 1-1 f v", ""),
    ("xdel st 1-1", ""),
    ("xgroup create st g $", "xgroup-create(st)"),
    ("xgroup createconsumer st g c", "xgroup-createconsumer(st)"),
    ("xgroup delconsumer st g c", "xgroup-delconsumer(st)"),
    ("xgroup setid st g 0", "xgroup-setid(st)"),
    ("xgroup destroy st g", "xgroup-destroy(st)"),
    ("xsetid st 5-5", "xsetid(st)"),
    ("geoadd g 13.361389 38.115556 p", "new(g) zadd(g)"),
    ("rpush l 1", "new(l) rpush(l)"),
    ("lmove l l2 left left", "new(l2) lpush(l2) lpop(l) del(l)"),
    ("rpush l 1 2", "new(l) rpush(l)"),
    ("lmove l l right left", "lpush(l) rpop(l)"),
    ("sadd s 1 2 3 4 5 6 7 8 9 10", "new(s) sadd(s)"),
    ("bitfield bf set u8 0 255", "new(bf) setbit(bf)"),
    ("bitfield bf set u8 0 255", ""),
    ("bitfield bf get u8 0", ""),
    ("bitop and d1 nokey", ""),
    ("set d1 x", "new(d1) set(d1)"),
    ("bitop and d1 nokey", "del(d1)"),
    (
        "geoadd g 13.361389 38.115556 p 15.087269 37.502669 q",
        "zadd(g)",
    ),
    (
        "georadius g 15 37 200 km store g2",
        "new(g2) georadiusstore(g2)",
    ),
    (
        "geosearchstore g3 g fromlonlat 15 37 byradius 200 km",
        "new(g3) geosearchstore(g3)",
    ),
    ("georadius g 15 37 1 km store g2", "del(g2)"),
    ("rpush sl 1", "rpush(sl)"),
    ("sort sl store sl2", "sortstore(sl2)"),
    ("sort nokey store sl2", "del(sl2)"),
    ("xadd st maxlen 1 9-* f v", "xadd(st)"),
    ("xadd st maxlen 1 9-* f v", "xadd(st) xtrim(st)"),
    ("xtrim st maxlen 5", ""),
    ("hset h a 1", "new(h) hset(h)"),
    ("hset h a 1", "hset(h)"),
    ("hsetnx h a 2", ""),
    ("set dd v", "new(dd) set(dd)"),
    ("set str hello", "new(str) set(str)"),
    ("set str3 v ex 100", "new(str3) set(str3) expire(str3)"),
    ("set str3 v keepttl", "set(str3)"),
    ("setnx new1 v", "new(new1) set(new1)"),
    ("set new2 v nx", "new(new2) set(new2)"),
    ("set new2 v xx get", "set(new2)"),
    ("getex new2 exat 1", "del(new2)"),
    ("incrbyfloat nk 1", "new(nk) incrbyfloat(nk)"),
    ("hincrby hnew f 1", "new(hnew) hincrby(hnew)"),
    ("zadd zz xx 1 a", ""),
    ("zadd zz nx 1 a", "new(zz) zadd(zz)"),
    ("zadd zz 1 a", ""),
    ("zadd zz 1 a", ""),
    ("zadd zz ch 2 a", "zadd(zz)"),
    ("zadd zz incr 0 a", ""),
    ("lpush ll a", "new(ll) lpush(ll)"),
    ("linsert ll before zz q", ""),
    ("lrem ll 1 a", "lrem(ll) del(ll)"),
    ("lpush ll a b", "new(ll) lpush(ll)"),
    ("ltrim ll 0 -1", "ltrim(ll)"),
    ("pfmerge hl3", "new(hl3) pfadd(hl3)"),
    ("select 1", ""),
    ("set x 1", "new(x) set(x)"),
    ("move x 0", "new(x) move_from(x) move_to(x)"),
    ("select 0", ""),
    ("copy x x2 db 3", "new(x2) copy_to(x2)"),
];

/// Runs `command` on `c` (a RESP3 client subscribed to every keyspace
/// channel, so its own messages come ahead of its reply) and returns the
/// keyevent messages as `event(key)`, checking that each follows its
/// keyspace message when `K` is on.
/// Sends a space-separated command; returns every byte `c` received.
fn send(t: &mut TestEngine, c: crate::ClientId, command: &str) -> Vec<u8> {
    let args: Vec<&[u8]> = command.split(' ').map(str::as_bytes).collect();
    t.raw(c, &encode_request(&args))
}

fn events_of(t: &mut TestEngine, c: crate::ClientId, command: &str) -> String {
    let out = send(t, c, command);
    let mut d = FrameDecoder::new();
    d.feed(&out);
    let mut events = Vec::new();
    let mut keyspace: Option<(Vec<u8>, Vec<u8>)> = None;
    while let Some(frame) = d.next_frame().expect("valid RESP") {
        let Frame::Push(items) = frame else {
            continue;
        };
        let [Frame::Bulk(kind), _, Frame::Bulk(channel), Frame::Bulk(payload)] = &items[..] else {
            continue;
        };
        assert_eq!(kind, b"pmessage");
        let (space, rest) = channel.split_at(channel.iter().position(|&b| b == b':').unwrap());
        let rest = &rest[1..];
        if space.starts_with(b"__keyspace@") {
            assert!(
                keyspace.is_none(),
                "{command}: two keyspace messages in a row"
            );
            keyspace = Some((rest.to_vec(), payload.clone()));
            continue;
        }
        // With `K` on, the keyspace message of each event comes first.
        if let Some(pair) = keyspace.take() {
            assert_eq!(
                pair,
                (payload.clone(), rest.to_vec()),
                "{command}: the keyspace message of another event"
            );
        }
        events.push(format!(
            "{}({})",
            String::from_utf8_lossy(rest),
            String::from_utf8_lossy(payload)
        ));
    }
    assert!(keyspace.is_none(), "{command}: a keyspace message alone");
    events.join(" ")
}

fn subscribed_client(t: &mut TestEngine, flags: &str) -> crate::ClientId {
    let c = t.connect();
    t.cmd(c, &["HELLO", "3"]);
    t.cmd(c, &["CONFIG", "SET", "notify-keyspace-events", flags]);
    t.cmd(c, &["PSUBSCRIBE", "__key*__:*"]);
    c
}

#[test]
fn every_family_raises_the_events_redis_does_in_its_order() {
    let mut t = TestEngine::new();
    let c = subscribed_client(&mut t, "KEAn");
    for (command, expected) in RECORDED {
        assert_eq!(events_of(&mut t, c, command), *expected, "{command}");
    }
}

#[test]
fn classes_filter_events_and_off_publishes_nothing() {
    let mut t = TestEngine::new();
    let c = subscribed_client(&mut t, "Kl");
    assert_eq!(events_of(&mut t, c, "set a 1"), "");
    t.cmd(c, &["CONFIG", "SET", "notify-keyspace-events", "El"]);
    assert_eq!(events_of(&mut t, c, "rpush l 1"), "rpush(l)");
    let out = send(&mut t, c, "lpop l");
    let text = String::from_utf8_lossy(&out);
    assert!(text.contains("__keyevent@0__:lpop"), "{text}");
    assert!(!text.contains("__keyspace@"), "{text}");
    assert!(!text.contains(":del"), "g is off: {text}");
    t.cmd(c, &["CONFIG", "SET", "notify-keyspace-events", ""]);
    let out = send(&mut t, c, "rpush l 1");
    assert_eq!(out, b":1\r\n", "nothing published");
}

#[test]
fn lazy_and_active_expiry_raise_expired() {
    let mut t = TestEngine::new();
    let c = subscribed_client(&mut t, "Ex");
    t.cmd(c, &["SET", "lazy", "v", "PX", "5"]);
    t.cmd(c, &["SET", "active", "v", "PX", "5"]);
    t.advance_ms(10);
    assert_eq!(events_of(&mut t, c, "get lazy"), "expired(lazy)");
    // The cron's messages wait in the subscriber's output.
    t.advance_ms(1_000);
    let out = send(&mut t, c, "ping");
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.contains("__keyevent@0__:expired\r\n$6\r\nactive"),
        "{text}"
    );
}

#[test]
fn config_set_refuses_an_unknown_class_as_redis_does() {
    let mut t = TestEngine::new();
    let c = t.connect();
    assert_eq!(
        t.cmd(c, &["CONFIG", "SET", "notify-keyspace-events", "Kq"]),
        crate::testing::err(
            "ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - \
             Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
        )
    );
    t.cmd(c, &["CONFIG", "SET", "notify-keyspace-events", "KEA"]);
    assert_eq!(
        t.cmd(c, &["CONFIG", "GET", "notify-keyspace-events"]),
        Frame::Array(vec![
            crate::testing::bulk("notify-keyspace-events"),
            crate::testing::bulk("AKE")
        ])
    );
}

/// The RESP3 frames `c` receives for `args`, as `>event(key)` for its own
/// keyevent pushes and the frame's debug text for anything else.
fn frames_of(t: &mut TestEngine, c: crate::ClientId, args: &[&str]) -> Vec<String> {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    let out = t.raw(c, &encode_request(&args));
    let mut d = FrameDecoder::new();
    d.feed(&out);
    let mut frames = Vec::new();
    while let Some(frame) = d.next_frame().expect("valid RESP") {
        let text = match &frame {
            Frame::Push(items) => match &items[..] {
                [_, _, Frame::Bulk(channel), Frame::Bulk(key)]
                    if channel.starts_with(b"__keyevent@0__:") =>
                {
                    let event = String::from_utf8_lossy(&channel[15..]).into_owned();
                    format!(">{event}({})", String::from_utf8_lossy(key))
                }
                _ => continue,
            },
            other => format!("{other:?}"),
        };
        frames.push(text);
    }
    frames
}

#[test]
fn a_script_s_events_reach_its_resp3_caller_ahead_of_the_eval_reply() {
    let mut t = TestEngine::new();
    let c = subscribed_client(&mut t, "KEA");
    // Recorded from redis-server 7.0.15: the events of the script's
    // calls, in order and as pushes, then EVAL's reply. (They used to land
    // in the script's own reply buffer and break `redis.call`'s reply.)
    let script = "redis.call('set', KEYS[1], 'v'); return redis.call('del', KEYS[1])";
    assert_eq!(
        frames_of(&mut t, c, &["EVAL", script, "1", "k"]),
        [">set(k)", ">del(k)", "Integer(1)"]
    );
    let library = "#!lua name=n\nredis.register_function('f', \
                   function(keys) return redis.call('lpush', keys[1], 'x') end)";
    t.cmd(c, &["FUNCTION", "LOAD", library]);
    assert_eq!(
        frames_of(&mut t, c, &["FCALL", "f", "1", "l"]),
        [">lpush(l)", "Integer(1)"]
    );
}

#[test]
fn lpush_and_expire_reply_before_their_event_as_redis_does() {
    let mut t = TestEngine::new();
    let c = subscribed_client(&mut t, "KEA");
    assert_eq!(
        frames_of(&mut t, c, &["RPUSH", "l", "a"]),
        ["Integer(1)", ">rpush(l)"]
    );
    assert_eq!(
        frames_of(&mut t, c, &["EXPIRE", "l", "100"]),
        ["Integer(1)", ">expire(l)"]
    );
    // A TTL in the past deletes: `del` comes before the reply.
    assert_eq!(
        frames_of(&mut t, c, &["EXPIRE", "l", "-1"]),
        [">del(l)", "Integer(1)"]
    );
    assert_eq!(
        frames_of(&mut t, c, &["SET", "s", "v"]),
        [">set(s)", "Simple([79, 75])"]
    );
}

#[test]
fn channel_names_spell_the_database_in_decimal() {
    // One buffer throughout, longer name first: each name replaces the last.
    let mut channel = b"stale bytes from an earlier, longer name".to_vec();
    super::key_channel(&mut channel, b"__keyspace@", 0, b"k");
    assert_eq!(channel, b"__keyspace@0__:k");
    super::key_channel(&mut channel, b"__keyevent@", 15, b"set");
    assert_eq!(channel, b"__keyevent@15__:set");
    super::key_channel(&mut channel, b"__keyspace@", 1234, b"");
    assert_eq!(channel, b"__keyspace@1234__:");
}
