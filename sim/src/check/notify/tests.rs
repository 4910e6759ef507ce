use super::*;
use crate::workload::request;

fn apply(model: &mut Model, parts: &[&[u8]]) -> Vec<&'static str> {
    let mut out = Vec::new();
    model.apply(&request(parts), &mut out);
    out.iter().map(|e| e.name).collect()
}

#[test]
fn writes_owe_redis_events_in_order() {
    let mut m = Model::default();
    assert_eq!(
        apply(&mut m, &[b"SET", b"k", b"1", b"PX", b"5"]),
        ["new", "set", "expire"]
    );
    assert_eq!(apply(&mut m, &[b"INCRBY", b"k", b"2"]), ["incrby"]);
    assert_eq!(apply(&mut m, &[b"PERSIST", b"k"]), ["persist"]);
    assert!(apply(&mut m, &[b"PERSIST", b"k"]).is_empty(), "no TTL left");
    assert_eq!(apply(&mut m, &[b"APPEND", b"k", b"x"]), ["append"]);
    assert!(
        apply(&mut m, &[b"INCRBY", b"k", b"1"]).is_empty(),
        "not an integer"
    );
    assert_eq!(apply(&mut m, &[b"DEL", b"k"]), ["del"]);
    assert!(apply(&mut m, &[b"DEL", b"k"]).is_empty());
    assert_eq!(
        apply(&mut m, &[b"LPUSH", b"l", b"a", b"b"]),
        ["new", "lpush"]
    );
    assert_eq!(apply(&mut m, &[b"RPOP", b"l"]), ["rpop"]);
    assert_eq!(apply(&mut m, &[b"LPOP", b"l"]), ["lpop", "del"]);
    assert!(apply(&mut m, &[b"LPOP", b"l"]).is_empty());
    assert_eq!(apply(&mut m, &[b"SADD", b"s", b"a"]), ["new", "sadd"]);
    assert!(apply(&mut m, &[b"SADD", b"s", b"a"]).is_empty());
    assert!(apply(&mut m, &[b"SREM", b"s", b"b"]).is_empty());
    assert_eq!(apply(&mut m, &[b"SREM", b"s", b"a"]), ["srem", "del"]);
    assert_eq!(apply(&mut m, &[b"HSET", b"h", b"f", b"1"]), ["new", "hset"]);
    assert_eq!(apply(&mut m, &[b"HSET", b"h", b"f", b"2"]), ["hset"]);
    assert_eq!(apply(&mut m, &[b"HDEL", b"h", b"f"]), ["hdel", "del"]);
    assert_eq!(
        apply(&mut m, &[b"ZADD", b"z", b"NX", b"1", b"a"]),
        ["new", "zadd"]
    );
    assert!(apply(&mut m, &[b"ZADD", b"z", b"NX", b"2", b"a"]).is_empty());
    assert_eq!(apply(&mut m, &[b"ZREM", b"z", b"a"]), ["zrem", "del"]);
    assert!(apply(&mut m, &[b"PEXPIRE", b"z", b"5"]).is_empty(), "gone");
}

#[test]
fn a_read_of_a_missing_key_owes_keymiss() {
    let mut m = Model::default();
    assert_eq!(apply(&mut m, &[b"EXISTS", b"k"]), ["keymiss"]);
    apply(&mut m, &[b"SET", b"k", b"1"]);
    assert!(apply(&mut m, &[b"EXISTS", b"k"]).is_empty(), "a hit");
    apply(&mut m, &[b"DEL", b"k"]);
    assert_eq!(apply(&mut m, &[b"EXISTS", b"k"]), ["keymiss"]);
    // `m` alone publishes it; `A` leaves it out.
    let mut events = Vec::new();
    m.apply(&request(&[b"EXISTS", b"ntf:str:0"]), &mut events);
    for (flags, published) in [(&b"KEA"[..], 0), (b"Em", 1), (b"KEAm", 2)] {
        m.flags = parse_flags(flags).unwrap();
        let mut out = Vec::new();
        m.messages(&events, 1, &mut out);
        assert_eq!(out.len(), published, "{}", String::from_utf8_lossy(flags));
    }
}

#[test]
fn messages_follow_the_classes_in_force() {
    let mut m = Model {
        flags: parse_flags(b"Kg").unwrap(),
        ..Model::default()
    };
    let mut events = Vec::new();
    m.apply(&request(&[b"SET", b"ntf:str:0", b"1"]), &mut events);
    m.apply(&request(&[b"DEL", b"ntf:str:0"]), &mut events);
    let mut out = Vec::new();
    m.messages(&events, 3, &mut out);
    let rendered: Vec<String> = out.iter().map(Message::render).collect();
    assert_eq!(rendered, ["__keyspace@7__:ntf:str:0 -> del"]);
    m.flags = parse_flags(b"AKE").unwrap();
    out.clear();
    m.messages(&events[..2], 3, &mut out);
    let rendered: Vec<String> = out.iter().map(Message::render).collect();
    assert_eq!(
        rendered,
        [
            "__keyspace@7__:ntf:str:0 -> set",
            "__keyevent@7__:set -> ntf:str:0"
        ],
        "no `new` without n"
    );
}

#[test]
fn integers_parse_as_redis_does() {
    assert_eq!(parse_i64(b"12"), Some(12));
    assert_eq!(parse_i64(b"-3"), Some(-3));
    for bad in [
        &b"012"[..],
        b"+1",
        b"-0",
        b" 1",
        b"",
        b"99999999999999999999",
    ] {
        assert_eq!(parse_i64(bad), None);
    }
}
