//! A real client library (the `redis` crate, sync API) against
//! seedkv-server over TCP, in RESP2 and in RESP3 (`HELLO 3`).

use redis::{Commands, Value};
use seedkv_tests::ServerProcess;

fn connect(server: &ServerProcess, resp3: bool) -> redis::Connection {
    let url = if resp3 {
        format!("{}?protocol=resp3", server.url())
    } else {
        server.url()
    };
    redis::Client::open(url)
        .expect("valid url")
        .get_connection()
        .expect("connect to seedkv-server")
}

#[test]
fn strings_and_keys_in_resp2() {
    let server = ServerProcess::seedkv(&[]);
    let mut con = connect(&server, false);

    let _: () = con.set("k", "v").unwrap();
    let v: String = con.get("k").unwrap();
    assert_eq!(v, "v");
    let missing: Option<String> = con.get("missing").unwrap();
    assert_eq!(missing, None);

    assert_eq!(con.incr::<_, _, i64>("n", 1).unwrap(), 1);
    assert_eq!(con.incr::<_, _, i64>("n", 41).unwrap(), 42);
    assert_eq!(con.decr::<_, _, i64>("n", 2).unwrap(), 40);

    let _: () = con.mset(&[("a", "1"), ("b", "2")]).unwrap();
    let got: Vec<Option<String>> = con.mget(&["a", "b", "nosuch"]).unwrap();
    assert_eq!(got, vec![Some("1".into()), Some("2".into()), None]);

    assert!(con.expire::<_, bool>("a", 100).unwrap());
    let ttl: i64 = con.ttl("a").unwrap();
    assert!((99..=100).contains(&ttl), "ttl {ttl}");
    assert_eq!(con.ttl::<_, i64>("b").unwrap(), -1);
    assert_eq!(con.ttl::<_, i64>("nosuch").unwrap(), -2);

    let mut keys: Vec<String> = con.scan().unwrap().collect();
    keys.sort();
    assert_eq!(keys, ["a", "b", "k", "n"]);

    assert_eq!(con.del::<_, i64>(&["a", "b", "nosuch"]).unwrap(), 2);
    assert_eq!(con.exists::<_, i64>("a").unwrap(), 0);
    let dbsize: i64 = redis::cmd("DBSIZE").query(&mut con).unwrap();
    assert_eq!(dbsize, 2);

    // Errors come back as errors, and the connection stays usable.
    let _: () = con.set("s", "text").unwrap();
    let err = con.incr::<_, _, i64>("s", 1).unwrap_err();
    assert!(err.to_string().contains("not an integer"), "{err}");
    let pong: String = redis::cmd("PING").query(&mut con).unwrap();
    assert_eq!(pong, "PONG");
}

#[test]
fn pipelines_answer_in_order() {
    let server = ServerProcess::seedkv(&[]);
    let mut con = connect(&server, false);
    let mut pipe = redis::pipe();
    for i in 0..1000 {
        pipe.cmd("SET").arg(format!("key:{i}")).arg(i).ignore();
        pipe.cmd("INCR").arg("counter");
    }
    let counts: Vec<i64> = pipe.query(&mut con).unwrap();
    assert_eq!(counts, (1..=1000).collect::<Vec<_>>());
    let v: i64 = con.get("key:777").unwrap();
    assert_eq!(v, 777);
}

#[test]
fn resp3_types_decode() {
    let server = ServerProcess::seedkv(&[]);
    let mut con = connect(&server, true);

    let hello: Value = redis::cmd("HELLO").arg(3).query(&mut con).unwrap();
    let Value::Map(fields) = hello else {
        panic!("HELLO 3 must reply with a map, got {hello:?}");
    };
    let field = |name: &str| {
        fields
            .iter()
            .find(|(k, _)| matches!(k, Value::BulkString(b) if b == name.as_bytes()))
            .map(|(_, v)| v.clone())
    };
    assert_eq!(field("proto"), Some(Value::Int(3)));
    assert_eq!(
        field("version"),
        Some(Value::BulkString(b"7.0.15".to_vec()))
    );

    let nil: Value = redis::cmd("GET").arg("missing").query(&mut con).unwrap();
    assert_eq!(nil, Value::Nil);

    let _: () = con.set("f", "10.5").unwrap();
    let f: Value = redis::cmd("INCRBYFLOAT")
        .arg("f")
        .arg("0.25")
        .query(&mut con)
        .unwrap();
    assert_eq!(f, Value::BulkString(b"10.75".to_vec()));

    let config: Value = redis::cmd("CONFIG")
        .arg("GET")
        .arg("maxclients")
        .query(&mut con)
        .unwrap();
    assert_eq!(
        config,
        Value::Map(vec![(
            Value::BulkString(b"maxclients".to_vec()),
            Value::BulkString(b"10000".to_vec())
        )])
    );

    let info: Value = redis::cmd("INFO").arg("server").query(&mut con).unwrap();
    match info {
        Value::VerbatimString { text, .. } => {
            assert!(text.contains("redis_version:7.0.15"), "{text}")
        }
        other => panic!("INFO in RESP3 must be a verbatim string, got {other:?}"),
    }

    let ping: Value = redis::cmd("PING").query(&mut con).unwrap();
    assert_eq!(ping, Value::SimpleString("PONG".into()));
}

#[test]
fn requirepass_needs_auth() {
    let server = ServerProcess::seedkv(&["--requirepass", "s3cret"]);
    let mut con = connect(&server, false);
    let err = redis::cmd("GET")
        .arg("k")
        .query::<Value>(&mut con)
        .unwrap_err();
    assert!(err.to_string().contains("NOAUTH"), "{err}");

    let url = format!("redis://:s3cret@127.0.0.1:{}/", server.port);
    let mut con = redis::Client::open(url).unwrap().get_connection().unwrap();
    let _: () = con.set("k", "v").unwrap();
    assert_eq!(con.get::<_, String>("k").unwrap(), "v");
}

/// Pub/sub through the crate: a RESP2 subscriber connection (`as_pubsub`)
/// gets `message` and `pmessage` for one PUBLISH, and its connection
/// serves commands again once it unsubscribed from everything; a RESP3
/// connection gets its messages as pushes between ordinary replies.
#[test]
fn pubsub_in_resp2_and_resp3() {
    use std::time::Duration;

    let server = ServerProcess::seedkv(&[]);
    let mut publisher = connect(&server, false);
    let mut con = connect(&server, false);
    {
        let mut sub = con.as_pubsub();
        sub.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        sub.subscribe("news").unwrap();
        sub.psubscribe("n*").unwrap();
        let receivers: i64 = publisher.publish("news", "hello").unwrap();
        assert_eq!(receivers, 2, "the channel and the pattern");
        let m = sub.get_message().unwrap();
        assert_eq!((m.get_channel_name(), m.from_pattern()), ("news", false));
        assert_eq!(m.get_payload::<String>().unwrap(), "hello");
        let m = sub.get_message().unwrap();
        assert!(m.from_pattern());
        assert_eq!(m.get_pattern::<String>().unwrap(), "n*");
        assert_eq!(m.get_payload::<String>().unwrap(), "hello");
        sub.unsubscribe("news").unwrap();
        sub.punsubscribe("n*").unwrap();
    }
    let _: () = con.set("after", "1").unwrap();
    assert_eq!(publisher.publish::<_, _, i64>("news", "gone").unwrap(), 0);

    let mut con3 = connect(&server, true);
    let (tx, rx) = std::sync::mpsc::channel();
    con3.set_push_sender(tx);
    con3.subscribe_resp3("news").unwrap();
    assert_eq!(publisher.publish::<_, _, i64>("news", "three").unwrap(), 1);
    // Commands still run on it; the push comes in ahead of their replies.
    let v: String = con3.get("after").unwrap();
    assert_eq!(v, "1");
    let pushes: Vec<redis::PushInfo> = rx.try_iter().collect();
    let message = pushes
        .iter()
        .find(|p| p.kind == redis::PushKind::Message)
        .unwrap_or_else(|| panic!("a message push among {pushes:?}"));
    assert_eq!(
        message.data,
        vec![
            Value::BulkString(b"news".to_vec()),
            Value::BulkString(b"three".to_vec())
        ]
    );
    let spublished: i64 = publisher.spublish("news", "shard").unwrap();
    assert_eq!(spublished, 0, "shard channels are another namespace");
}
