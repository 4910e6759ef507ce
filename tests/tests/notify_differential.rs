//! Keyspace notifications against redis-server 7.0.15: one command script
//! runs on both servers while a RESP2 and a RESP3 client subscribed to
//! every keyspace and keyevent channel listen; their byte streams must be
//! equal, byte for byte (channels, events, databases, order, push or
//! array framing).
//!
//! Skipped, with a printed reason, when redis-server is not installed
//! (and failing instead under `SEEDKV_REQUIRE_TOOLS=1`).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use seedkv_engine::resp::encode::encode_request;
use seedkv_engine::resp::FrameDecoder;
use seedkv_tests::notify::{assert_same_streams, messages, run, STREAM_BYTES_MAX};
use seedkv_tests::{redis_server, RespClient, ServerProcess};

/// The script both servers run, in the syntax of
/// [`seedkv_tests::notify`] (`sleep`, `block`, `unblock`, `~` lines).
///
/// Events never depend on chance or on the clock beyond what the sleeps
/// settle: one volatile key at a time, explicit stream IDs, eviction of
/// the only volatile key under `volatile-lru`.
const SCRIPT: &str = r##"
# Strings, keys, lists, sets, hashes, sorted sets, bitmaps, HLL, geo,
# SORT, streams, MOVE and COPY.
set a 1
set a 2
setnx a 3
setex b 100 x
psetex b 100000 x
getset a 5
getdel a
set c 1
incr c
incrby c 3
decr c
decrby c 2
incrbyfloat c 1.5
append c x
append d y
setrange d 5 z
setrange e 0 z
mset m1 1 m2 2
msetnx m3 1 m4 2
getex m1 ex 100
getex m1 persist
getex m1 px 0
set a 1
expire a 100
pexpire a 100000
expireat a 99999999999
persist a
persist a
expire a 0
set a 1
rename a b
set a 1
rename a b
renamenx b a
copy a c2
copy a c2 replace
move c2 1
del b a zz
unlink m2 m3
lpush l 1 2 3
rpush l 4
lpushx l 5
rpushx l 6
linsert l before 1 9
lset l 0 x
lpop l
rpop l 2
ltrim l 0 1
lrem l 0 9
lmove l l2 left right
lpop l 5
lpop l2
rpush l 1 2 3
ltrim l 5 10
rpush l 1 2 3
rpoplpush l l3
lmpop 1 l left count 5
sadd s 1 2 3
sadd s 1
srem s 1
smove s s2 3
sadd s 1 2
sinterstore s3 s s2
sunionstore s3 s s2
sdiffstore s3 s s2
sinterstore s3 nope s
srem s 1 2
hset h f 1 g 2
hsetnx h f 3
hsetnx h x 3
hincrby h f 1
hincrbyfloat h f 1.5
hdel h f
hdel h g x
zadd z 1 a 2 b
zadd z incr 5 a
zincrby z 1 b
zrem z a
zadd z 3 c 4 d
zremrangebyscore z 3 3
zremrangebyrank z 0 0
zadd z 0 a 0 b
zremrangebylex z [a [a
zpopmin z
zpopmax z
zadd z 1 a 2 b
zunionstore z2 1 z
zinterstore z2 1 z
zdiffstore z2 1 z
zrangestore z3 z 0 -1
zrangestore z3 z 5 6
zmpop 1 z min count 10
setbit bb 1 1
setbit bb 1 1
bitop and bb2 bb bb
pfadd hl a
pfadd hl a
pfmerge hl2 hl
rpush sl 3 1 2
sort sl store sl2
xadd st 1-1 f v
xtrim st maxlen 0
xadd st 1-1 f v
xdel st 1-1
xgroup create st g $
xgroup createconsumer st g c
xgroup delconsumer st g c
xgroup setid st g 0
xgroup destroy st g
xsetid st 5-5
geoadd g 13.361389 38.115556 p
rpush l 1
lmove l l2 left left
rpush l 1 2
lmove l l right left
sadd s 1 2 3 4 5 6 7 8 9 10
bitfield bf set u8 0 255
bitfield bf set u8 0 255
bitfield bf get u8 0
bitop and d1 nokey
set d1 x
bitop and d1 nokey
geoadd g 13.361389 38.115556 p 15.087269 37.502669 q
georadius g 15 37 200 km store g2
geosearchstore g3 g fromlonlat 15 37 byradius 200 km
georadius g 15 37 1 km store g2
rpush sl 1
sort sl store sl2
sort nokey store sl2
xadd st maxlen 1 9-* f v
xadd st maxlen 1 9-* f v
xtrim st maxlen 5
hset h a 1
hset h a 1
hsetnx h a 2
set dd v
set str hello
set str3 v ex 100
set str3 v keepttl
setnx new1 v
set new2 v nx
set new2 v xx get
getex new2 exat 1
incrbyfloat nk 1
hincrby hnew f 1
zadd zz xx 1 a
zadd zz nx 1 a
zadd zz 1 a
zadd zz 1 a
zadd zz ch 2 a
zadd zz incr 0 a
lpush ll a
linsert ll before zz q
lrem ll 1 a
lpush ll a b
ltrim ll 0 -1
pfmerge hl3
select 1
set x 1
move x 0
select 0
copy x x2 db 3
# The EXPIRE family: a TTL in the past deletes (del, not expired).
set t1 v
expire t1 -1
set t1 v
pexpire t1 -5
set t1 v
expireat t1 1
set t1 v
pexpireat t1 1
set t1 v
expire t1 100 nx
expire t1 200 xx
expire t1 50 gt
expire t1 50 lt
expire t1 500 nx
set t1 v px 100000
set t1 v exat 99999999999
getex t1 pxat 1
setex t2 100 v
psetex t2 100000 v
set t3 v
expiretime t3
persist t3
# Lazy expiry: the next access deletes the key and raises expired, before
# the access's own events.
set lz v px 1
sleep 20
get lz
set lz2 v px 1
sleep 20
exists lz2
set lz3 v px 1
sleep 20
set lz3 w
rpush lz4 a
pexpire lz4 1
sleep 20
lpush lz4 b
hset lz5 f v
pexpire lz5 1
sleep 20
hset lz5 g v
del lz3 lz4 lz5
# Active expiry: the cron finds the key alone.
set ac v px 1
sleep 500
# Blocking commands that find data at once.
rpush bl 1 2 3 4 5 6
blpop bl 0
brpop bl 0
blmove bl bl2 left right 0
brpoplpush bl2 bl 0
blmpop 0 1 bl left count 10
zadd bz 1 a 2 b 3 c
bzpopmin bz 0
bzpopmax bz 0
bzmpop 0 1 bz min count 5
# Blocked commands served by a later write: the push, then the served
# client's pop (and del when it emptied the key).
block blpop kb 0
rpush kb x
unblock
block blmove kb2 kb3 right left 0
lpush kb2 y
unblock
block brpoplpush kb5 kb3 0
rpush kb5 z w
unblock
block bzpopmin kz 0
zadd kz 1 m
unblock
block blmpop 0 1 kb4 right count 2
rpush kb4 a b c
unblock
block bzmpop 0 1 kz2 max count 2
zadd kz2 1 a 2 b
unblock
block xread block 0 streams xs $
xadd xs 1-1 f v
unblock
xgroup create xs2 gx $ mkstream
block xreadgroup group gx cx block 0 streams xs2 >
xadd xs2 1-1 f v
unblock
# Sets whose pops are random: the events are not.
sadd sp a b c
~spop sp
~spop sp 5
sadd sp a
spop sp
sadd sp2 a b c d
~spop sp2 2
~srandmember sp2 2
smove sp2 sp3 nope
# Streams: consumers created implicitly by XREADGROUP, XCLAIM, XAUTOCLAIM.
xadd st2 1-1 f v
xadd st2 2-1 f v
xgroup create st2 g2 0
xreadgroup group g2 alice count 1 streams st2 >
xreadgroup group g2 alice count 1 streams st2 >
xclaim st2 g2 bob 0 1-1
xclaim st2 g2 bob 0 1-1
xautoclaim st2 g2 carol 0 0-0
xack st2 g2 1-1
xgroup create st3 g $ mkstream
xgroup createconsumer st3 g c
xgroup createconsumer st3 g c
xreadgroup group g2 dave noack streams st2 0
xdel st2 1-1 2-1
xtrim st2 minid 5
xgroup create nost g $
xadd st4 nomkstream * f v
xadd st4 maxlen 0 1-1 f v
# MULTI/EXEC, scripts and functions raise their writes' events in order.
multi
set mx 1
incr mx
lpush ml a
del mx ml
exec
eval "redis.call('set', KEYS[1], 'v'); redis.call('expire', KEYS[1], 100); return redis.call('del', KEYS[1])" 1 ev
hset hd f v
eval "local d = redis.call('dump', KEYS[1]); redis.call('restore', KEYS[2], 0, d); redis.call('restore', KEYS[2], 100000, d, 'replace'); return 1" 2 hd hr
eval "local d = redis.call('dump', KEYS[1]); redis.call('del', KEYS[1]); return redis.call('restore', KEYS[1], 0, d, 'absttl')" 1 hd
eval "return redis.call('hset', KEYS[1], 'f', 'v')" 1 hs
function load replace "#!lua name=nlib\nredis.register_function('nset', function(keys, args) redis.call('set', keys[1], args[1]); return redis.call('incr', keys[2]) end)"
fcall nset 2 fk fc 7
fcall nset 2 fk fc 8
function delete nlib
# Flushes and SWAPDB raise nothing.
set f1 v
select 1
set f2 v
select 0
swapdb 0 1
flushdb
flushall
# Eviction (last, as it needs a tiny maxmemory): the only volatile key
# goes, then the write is refused.
set keep v
set ev v ex 1000
config set maxmemory-policy volatile-lru
config set maxmemory 1
set more v
config set maxmemory 0
config set maxmemory-policy noeviction
set after v
"##;

/// Events the script must make redis-server raise, so that a sleep too
/// short or a section that stopped working cannot pass unnoticed.
const EVENTS_EXPECTED: &[&str] = &[
    "__keyevent@0__:expired lz\n",
    "__keyevent@0__:expired ac\n",
    "__keyevent@0__:evicted ev\n",
    "__keyevent@0__:new kb\n",
    "__keyevent@0__:xgroup-createconsumer st2\n",
    "__keyevent@0__:restore hr\n",
    "__keyevent@0__:incrby fc\n",
    "__keyevent@1__:move_from x\n",
    "__keyevent@0__:move_to x\n",
];

#[test]
fn notification_streams_equal_redis_byte_for_byte() {
    let Some(redis) = redis_server() else { return };
    let seedkv = ServerProcess::seedkv(&[]);
    let theirs = run(redis.port, "KEAn", SCRIPT);
    let ours = run(seedkv.port, "KEAn", SCRIPT);
    let events = messages(&theirs.resp2).join("\n");
    for event in EVENTS_EXPECTED {
        assert!(events.contains(event), "redis-server raised no {event}");
    }
    assert_same_streams(&theirs, &ours);
}

/// A RESP3 connection subscribed to its own keys' events, writing: its
/// messages come as pushes around each reply (before it, or after it for
/// the commands Redis replies first, like LPUSH and EXPIRE), inside
/// MULTI/EXEC and scripts too, and keep coming while CLIENT REPLY
/// suppresses the replies.
const SELF_SCRIPT: &[&[&str]] = &[
    &["PSUBSCRIBE", "__key*__:*"],
    &["SET", "a", "1"],
    &["LPUSH", "l", "x"],
    &["GET", "a"],
    &["GET", "nokey"],
    &["CLIENT", "REPLY", "SKIP"],
    &["MGET", "nokey", "a"],
    &["SET", "a", "2"],
    &["INCR", "a"],
    &["CLIENT", "REPLY", "OFF"],
    &["DEL", "a"],
    &["RPOP", "l"],
    &["CLIENT", "REPLY", "ON"],
    &["MULTI"],
    &["SET", "b", "1"],
    &["EXPIRE", "b", "100"],
    &["LLEN", "nokey"],
    &["EXEC"],
    &["EVAL", "return redis.call('del', KEYS[1])", "1", "b"],
    &["ECHO", "selfdone"],
];

/// The reply that ends the self-notifying connection's stream.
const SELF_END: &[u8] = b"$8\r\nselfdone\r\n";

/// Runs [`SELF_SCRIPT`] (pipelined) on `port` with `flags` as
/// `notify-keyspace-events`; returns its byte stream.
fn self_stream(port: u16, flags: &str) -> Vec<u8> {
    let mut writer = RespClient::connect(port);
    writer.command(&[b"FLUSHALL"]);
    writer.command(&[
        b"CONFIG",
        b"SET",
        b"notify-keyspace-events",
        flags.as_bytes(),
    ]);
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("set a read timeout");
    // HELLO's reply names the connection's id, which differs by server.
    stream
        .write_all(&encode_request(&[b"HELLO", b"3"]))
        .expect("send HELLO");
    let mut decoder = FrameDecoder::new();
    while decoder.next_frame().expect("valid RESP").is_none() {
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).expect("read HELLO's reply");
        assert!(n > 0, "the server closed the connection");
        decoder.feed(&chunk[..n]);
    }
    for command in SELF_SCRIPT {
        let args: Vec<&[u8]> = command.iter().map(|a| a.as_bytes()).collect();
        stream
            .write_all(&encode_request(&args))
            .expect("send a request");
    }
    let mut out = Vec::new();
    while !out.ends_with(SELF_END) {
        assert!(out.len() < STREAM_BYTES_MAX, "no end marker");
        let mut chunk = [0u8; 16 * 1024];
        let n = stream.read(&mut chunk).expect("read");
        assert!(n > 0, "the server closed the connection");
        out.extend_from_slice(&chunk[..n]);
    }
    out
}

#[test]
fn own_events_interleave_with_replies_as_in_redis() {
    let Some(redis) = redis_server() else { return };
    let seedkv = ServerProcess::seedkv(&[]);
    let theirs = self_stream(redis.port, "KEA");
    let ours = self_stream(seedkv.port, "KEA");
    assert!(
        String::from_utf8_lossy(&theirs).contains("__keyspace@0__:l\r\n$4\r\nrpop"),
        "redis-server delivered no events under CLIENT REPLY OFF"
    );
    assert!(
        ours == theirs,
        "streams differ:\n redis-server: {:?}\n seedkv:       {:?}",
        String::from_utf8_lossy(&theirs),
        String::from_utf8_lossy(&ours)
    );
}

/// The same connection with `keymiss` on: a read's miss comes as a push
/// ahead of its reply (inside MULTI/EXEC too, and while CLIENT REPLY
/// suppresses the reply).
#[test]
fn own_keymiss_events_precede_replies_as_in_redis() {
    let Some(redis) = redis_server() else { return };
    let seedkv = ServerProcess::seedkv(&[]);
    let theirs = self_stream(redis.port, "KEAm");
    let ours = self_stream(seedkv.port, "KEAm");
    assert!(
        String::from_utf8_lossy(&theirs).contains("__keyspace@0__:nokey\r\n$7\r\nkeymiss"),
        "redis-server raised no keymiss"
    );
    assert!(
        ours == theirs,
        "streams differ:\n redis-server: {:?}\n seedkv:       {:?}",
        String::from_utf8_lossy(&theirs),
        String::from_utf8_lossy(&ours)
    );
}
