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
use seedkv_engine::resp::{Frame, FrameDecoder};
use seedkv_tests::{redis_server, RespClient, ServerProcess};

/// Commands of every family whose events do not depend on chance or on
/// the clock (no SPOP, no short TTLs, explicit stream IDs).
const SCRIPT: &[&str] = &[
    "set a 1",
    "set a 2",
    "setnx a 3",
    "setex b 100 x",
    "psetex b 100000 x",
    "getset a 5",
    "getdel a",
    "set c 1",
    "incr c",
    "incrby c 3",
    "decr c",
    "decrby c 2",
    "incrbyfloat c 1.5",
    "append c x",
    "append d y",
    "setrange d 5 z",
    "setrange e 0 z",
    "mset m1 1 m2 2",
    "msetnx m3 1 m4 2",
    "getex m1 ex 100",
    "getex m1 persist",
    "getex m1 px 0",
    "set a 1",
    "expire a 100",
    "pexpire a 100000",
    "expireat a 99999999999",
    "persist a",
    "persist a",
    "expire a 0",
    "set a 1",
    "rename a b",
    "set a 1",
    "rename a b",
    "renamenx b a",
    "copy a c2",
    "copy a c2 replace",
    "move c2 1",
    "del b a zz",
    "unlink m2 m3",
    "lpush l 1 2 3",
    "rpush l 4",
    "lpushx l 5",
    "rpushx l 6",
    "linsert l before 1 9",
    "lset l 0 x",
    "lpop l",
    "rpop l 2",
    "ltrim l 0 1",
    "lrem l 0 9",
    "lmove l l2 left right",
    "lpop l 5",
    "lpop l2",
    "rpush l 1 2 3",
    "ltrim l 5 10",
    "rpush l 1 2 3",
    "rpoplpush l l3",
    "lmpop 1 l left count 5",
    "sadd s 1 2 3",
    "sadd s 1",
    "srem s 1",
    "smove s s2 3",
    "sadd s 1 2",
    "sinterstore s3 s s2",
    "sunionstore s3 s s2",
    "sdiffstore s3 s s2",
    "sinterstore s3 nope s",
    "srem s 1 2",
    "hset h f 1 g 2",
    "hsetnx h f 3",
    "hsetnx h x 3",
    "hincrby h f 1",
    "hincrbyfloat h f 1.5",
    "hdel h f",
    "hdel h g x",
    "zadd z 1 a 2 b",
    "zadd z incr 5 a",
    "zincrby z 1 b",
    "zrem z a",
    "zadd z 3 c 4 d",
    "zremrangebyscore z 3 3",
    "zremrangebyrank z 0 0",
    "zadd z 0 a 0 b",
    "zremrangebylex z [a [a",
    "zpopmin z",
    "zpopmax z",
    "zadd z 1 a 2 b",
    "zunionstore z2 1 z",
    "zinterstore z2 1 z",
    "zdiffstore z2 1 z",
    "zrangestore z3 z 0 -1",
    "zrangestore z3 z 5 6",
    "zmpop 1 z min count 10",
    "setbit bb 1 1",
    "setbit bb 1 1",
    "bitop and bb2 bb bb",
    "pfadd hl a",
    "pfadd hl a",
    "pfmerge hl2 hl",
    "rpush sl 3 1 2",
    "sort sl store sl2",
    "xadd st 1-1 f v",
    "xtrim st maxlen 0",
    "xadd st 1-1 f v",
    "xdel st 1-1",
    "xgroup create st g $",
    "xgroup createconsumer st g c",
    "xgroup delconsumer st g c",
    "xgroup setid st g 0",
    "xgroup destroy st g",
    "xsetid st 5-5",
    "geoadd g 13.361389 38.115556 p",
    "rpush l 1",
    "lmove l l2 left left",
    "rpush l 1 2",
    "lmove l l right left",
    "sadd s 1 2 3 4 5 6 7 8 9 10",
    "bitfield bf set u8 0 255",
    "bitfield bf set u8 0 255",
    "bitfield bf get u8 0",
    "bitop and d1 nokey",
    "set d1 x",
    "bitop and d1 nokey",
    "geoadd g 13.361389 38.115556 p 15.087269 37.502669 q",
    "georadius g 15 37 200 km store g2",
    "geosearchstore g3 g fromlonlat 15 37 byradius 200 km",
    "georadius g 15 37 1 km store g2",
    "rpush sl 1",
    "sort sl store sl2",
    "sort nokey store sl2",
    "xadd st maxlen 1 9-* f v",
    "xadd st maxlen 1 9-* f v",
    "xtrim st maxlen 5",
    "hset h a 1",
    "hset h a 1",
    "hsetnx h a 2",
    "set dd v",
    "set str hello",
    "set str3 v ex 100",
    "set str3 v keepttl",
    "setnx new1 v",
    "set new2 v nx",
    "set new2 v xx get",
    "getex new2 exat 1",
    "incrbyfloat nk 1",
    "hincrby hnew f 1",
    "zadd zz xx 1 a",
    "zadd zz nx 1 a",
    "zadd zz 1 a",
    "zadd zz 1 a",
    "zadd zz ch 2 a",
    "zadd zz incr 0 a",
    "lpush ll a",
    "linsert ll before zz q",
    "lrem ll 1 a",
    "lpush ll a b",
    "ltrim ll 0 -1",
    "pfmerge hl3",
    "select 1",
    "set x 1",
    "move x 0",
    "select 0",
    "copy x x2 db 3",
];

/// The message that ends a stream: PUBLISH `end` `done`.
const END_RESP2: &[u8] = b"*3\r\n$7\r\nmessage\r\n$3\r\nend\r\n$4\r\ndone\r\n";
const END_RESP3: &[u8] = b">3\r\n$7\r\nmessage\r\n$3\r\nend\r\n$4\r\ndone\r\n";

/// Bytes a stream may reach before the test gives up on its end marker.
const STREAM_BYTES_MAX: usize = 1 << 20;

/// A subscribed connection read as raw bytes once its setup is answered.
struct Subscriber {
    stream: TcpStream,
    end: &'static [u8],
}

impl Subscriber {
    fn connect(port: u16, resp3: bool) -> Subscriber {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("set a read timeout");
        let mut setup: Vec<&[&[u8]]> = Vec::new();
        if resp3 {
            setup.push(&[b"HELLO", b"3"]);
        }
        setup.push(&[b"PSUBSCRIBE", b"__key*__:*"]);
        setup.push(&[b"SUBSCRIBE", b"end"]);
        let mut decoder = FrameDecoder::new();
        for request in &setup {
            stream
                .write_all(&encode_request(request))
                .expect("send a request");
            loop {
                if decoder.next_frame().expect("valid RESP").is_some() {
                    break;
                }
                let mut chunk = [0u8; 4096];
                let n = stream.read(&mut chunk).expect("read a reply");
                assert!(n > 0, "the server closed the connection");
                decoder.feed(&chunk[..n]);
            }
        }
        let end = if resp3 { END_RESP3 } else { END_RESP2 };
        Subscriber { stream, end }
    }

    /// Every byte up to and including the end marker.
    fn stream_until_end(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        while !out.ends_with(self.end) {
            assert!(out.len() < STREAM_BYTES_MAX, "no end marker");
            let mut chunk = [0u8; 16 * 1024];
            let n = self.stream.read(&mut chunk).expect("read messages");
            assert!(n > 0, "the server closed the connection");
            out.extend_from_slice(&chunk[..n]);
        }
        out
    }
}

/// Runs the script on `port` and returns the RESP2 and RESP3 streams.
fn streams(port: u16) -> (Vec<u8>, Vec<u8>) {
    let mut writer = RespClient::connect(port);
    writer.command(&[b"FLUSHALL"]);
    let set = writer.command(&[b"CONFIG", b"SET", b"notify-keyspace-events", b"KEAn"]);
    assert_eq!(set, Frame::Simple(b"OK".to_vec()));
    let mut resp2 = Subscriber::connect(port, false);
    let mut resp3 = Subscriber::connect(port, true);
    for command in SCRIPT {
        let args: Vec<&[u8]> = command.split(' ').map(str::as_bytes).collect();
        writer.command(&args);
    }
    writer.command(&[b"PUBLISH", b"end", b"done"]);
    (resp2.stream_until_end(), resp3.stream_until_end())
}

fn first_difference(a: &[u8], b: &[u8]) -> String {
    let at = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let from = at.saturating_sub(120);
    format!(
        "byte {at}:\n redis-server: {:?}\n seedkv:       {:?}",
        String::from_utf8_lossy(&a[from..(at + 120).min(a.len())]),
        String::from_utf8_lossy(&b[from..(at + 120).min(b.len())])
    )
}

#[test]
fn notification_streams_equal_redis_byte_for_byte() {
    let Some(redis) = redis_server() else { return };
    let seedkv = ServerProcess::seedkv(&[]);
    let (theirs2, theirs3) = streams(redis.port);
    let (ours2, ours3) = streams(seedkv.port);
    assert!(theirs2.len() > 10_000, "the script raised few events");
    assert!(
        ours2 == theirs2,
        "RESP2 streams differ at {}",
        first_difference(&theirs2, &ours2)
    );
    assert!(
        ours3 == theirs3,
        "RESP3 streams differ at {}",
        first_difference(&theirs3, &ours3)
    );
}
