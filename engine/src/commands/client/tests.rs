//! Unit tests of the CLIENT family.

use crate::resp::Frame;
use crate::testing::{bulk, err, int, simple, TestEngine};
use crate::{ClientId, CloseReason, ConnectInfo, Event};

fn text(f: Frame) -> String {
    match f {
        Frame::Bulk(b) => String::from_utf8(b).unwrap(),
        Frame::Verbatim { data, .. } => String::from_utf8(data).unwrap(),
        other => panic!("expected text, got {other:?}"),
    }
}

fn connect_from(t: &mut TestEngine, addr: &str) -> ClientId {
    let info = ConnectInfo {
        addr: addr.into(),
        laddr: "127.0.0.1:6379".into(),
        fd: 8,
    };
    t.engine.connect(t.now, info)
}

#[test]
fn id_setname_getname() {
    let mut t = TestEngine::new();
    let c = t.connect();
    assert_eq!(t.cmd(c, &["CLIENT", "ID"]), int(c.0 as i64));
    assert_eq!(t.cmd(c, &["client", "getname"]), Frame::Null);
    assert_eq!(t.cmd(c, &["client", "setname", "worker-1"]), simple("OK"));
    assert_eq!(t.cmd(c, &["client", "getname"]), bulk("worker-1"));
    assert_eq!(
        t.cmd(c, &["client", "setname", "a b"]),
        err("ERR Client names cannot contain spaces, newlines or special characters.")
    );
    assert_eq!(t.cmd(c, &["client", "setname", ""]), simple("OK"));
    assert_eq!(t.cmd(c, &["client", "getname"]), Frame::Null);
    assert_eq!(
        t.cmd(c, &["client", "setname"]),
        err("ERR wrong number of arguments for 'client|setname' command")
    );
    assert_eq!(
        t.cmd(c, &["client"]),
        err("ERR wrong number of arguments for 'client' command")
    );
    assert_eq!(
        t.cmd(c, &["client", "foo"]),
        err("ERR unknown subcommand 'foo'. Try CLIENT HELP.")
    );
}

#[test]
fn list_and_info_fields_in_redis_order() {
    let mut t = TestEngine::new();
    let a = connect_from(&mut t, "10.0.0.1:5000");
    let b = connect_from(&mut t, "10.0.0.2:5001");
    t.cmd(b, &["client", "setname", "bee"]);
    t.advance_ms(3_000);
    let line = text(t.cmd(a, &["client", "info"]));
    let keys: Vec<&str> = line
        .trim_end()
        .split(' ')
        .map(|kv| kv.split('=').next().unwrap())
        .collect();
    assert_eq!(
        keys.join(" "),
        "id addr laddr fd name age idle flags db sub psub ssub multi qbuf qbuf-free \
         argv-mem multi-mem rbs rbp obl oll omem tot-mem events cmd user redir resp"
    );
    assert!(line.starts_with(&format!(
        "id={} addr=10.0.0.1:5000 laddr=127.0.0.1:6379 fd=8 name= age=3 idle=0 flags=N db=0",
        a.0
    )));
    assert!(line.contains(" argv-mem=10 "), "{line}");
    assert!(line.ends_with(" cmd=client|info user=default redir=-1 resp=2\n"));
    let list = text(t.cmd(a, &["client", "list"]));
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0].contains(" cmd=client|list "));
    assert!(lines[1].contains(" name=bee age=3 idle=3 "), "{}", lines[1]);
    assert!(lines[1].contains(" cmd=client|setname "));
    let only_b = text(t.cmd(a, &["client", "list", "id", &b.0.to_string(), "999"]));
    assert_eq!(only_b.lines().count(), 1);
    assert_eq!(text(t.cmd(a, &["client", "list", "type", "pubsub"])), "");
    // A subscribed client is a pub/sub one, and no longer a normal one.
    t.cmd(b, &["subscribe", "ch"]);
    let pubsub = text(t.cmd(a, &["client", "list", "type", "pubsub"]));
    assert_eq!(pubsub.lines().count(), 1);
    assert!(pubsub.starts_with(&format!("id={} ", b.0)), "{pubsub}");
    let normal = text(t.cmd(a, &["client", "list", "type", "normal"]));
    assert_eq!(normal.lines().count(), 1);
    t.cmd(b, &["unsubscribe"]);
    assert_eq!(text(t.cmd(a, &["client", "list", "type", "pubsub"])), "");
    assert_eq!(
        t.cmd(a, &["client", "list", "type", "foo"]),
        err("ERR Unknown client type 'foo'")
    );
    assert_eq!(
        t.cmd(a, &["client", "list", "id", "x"]),
        err("ERR Invalid client ID")
    );
    assert_eq!(
        t.cmd(a, &["client", "list", "foo"]),
        err("ERR syntax error")
    );
    // RESP3: a verbatim string.
    t.cmd(a, &["hello", "3"]);
    assert!(matches!(
        t.cmd(a, &["client", "info"]),
        Frame::Verbatim { .. }
    ));
}

#[test]
fn kill_filters_and_errors() {
    let mut t = TestEngine::new();
    let a = connect_from(&mut t, "10.0.0.1:5000");
    let b = connect_from(&mut t, "10.0.0.2:5001");
    let c = connect_from(&mut t, "10.0.0.3:5002");
    assert_eq!(
        t.cmd(a, &["client", "kill", "1.2.3.4:5"]),
        err("ERR No such client")
    );
    assert_eq!(
        t.cmd(a, &["client", "kill", "id", "abc"]),
        err("ERR client-id should be greater than 0")
    );
    assert_eq!(
        t.cmd(a, &["client", "kill", "foo", "bar"]),
        err("ERR syntax error")
    );
    assert_eq!(
        t.cmd(a, &["client", "kill", "skipme", "maybe"]),
        err("ERR syntax error")
    );
    assert_eq!(
        t.cmd(a, &["client", "kill", "id", "1", "id"]),
        err("ERR syntax error")
    );
    assert_eq!(
        t.cmd(a, &["client", "kill", "user", "nobody"]),
        err("ERR No such user 'nobody'")
    );
    assert_eq!(
        t.cmd(a, &["client", "kill", "type", "foo"]),
        err("ERR Unknown client type 'foo'")
    );
    assert_eq!(t.cmd(a, &["client", "kill", "id", "999"]), int(0));
    assert_eq!(t.cmd(a, &["client", "kill", "10.0.0.2:5001"]), simple("OK"));
    assert!(t.events.iter().any(|e| matches!(e,
        Event::Close { client, reason: CloseReason::Killed } if *client == b)));
    // A killed client is no longer listed, and cannot be killed twice.
    assert_eq!(text(t.cmd(a, &["client", "list"])).lines().count(), 2);
    assert_eq!(
        t.cmd(a, &["client", "kill", "id", &b.0.to_string()]),
        int(0)
    );
    // New form skips the caller by default.
    assert_eq!(t.cmd(a, &["client", "kill", "user", "default"]), int(1));
    assert!(t.events.iter().any(|e| matches!(e,
        Event::Close { client, .. } if *client == c)));
}

#[test]
fn kill_self_replies_first() {
    let mut t = TestEngine::new();
    let a = connect_from(&mut t, "10.0.0.1:5000");
    assert_eq!(
        t.cmd(
            a,
            &["client", "kill", "laddr", "127.0.0.1:6379", "skipme", "no"]
        ),
        int(1)
    );
    assert!(t.events.iter().any(|e| matches!(e,
        Event::Close { client, reason } if *client == a && reason.flush_first())));
}

#[test]
fn no_evict_setinfo_help() {
    let mut t = TestEngine::new();
    let c = t.connect();
    assert_eq!(
        t.cmd(c, &["client", "no-evict", "maybe"]),
        err("ERR syntax error")
    );
    assert_eq!(t.cmd(c, &["client", "no-evict", "on"]), simple("OK"));
    assert!(text(t.cmd(c, &["client", "info"])).contains(" flags=e "));
    assert_eq!(
        t.cmd(c, &["client", "setinfo", "lib-name", "redis-py"]),
        simple("OK")
    );
    assert_eq!(
        t.cmd(c, &["client", "setinfo", "lib-ver", "1 2"]),
        err("ERR lib-ver cannot contain spaces, newlines or special characters.")
    );
    assert_eq!(
        t.cmd(c, &["client", "setinfo", "foo", "x"]),
        err("ERR Unrecognized option 'foo'")
    );
    let Frame::Array(help) = t.cmd(c, &["client", "help"]) else {
        panic!()
    };
    assert_eq!(
        help[0],
        simple("CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
    );
}

/// Sends `commands` pipelined in one input and returns the raw output.
fn pipelined(t: &mut TestEngine, c: ClientId, commands: &[&[&str]]) -> Vec<u8> {
    let mut input = Vec::new();
    for args in commands {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        input.extend_from_slice(&crate::resp::reply::encode_request(&args));
    }
    t.raw(c, &input)
}

/// The transcripts below were taken from redis-server 7.0.15.
#[test]
fn reply_off_skip_on_drop_replies_and_errors() {
    let mut t = TestEngine::new();
    let c = t.connect();
    let out = pipelined(
        &mut t,
        c,
        &[
            &["CLIENT", "REPLY", "OFF"],
            &["SET", "k", "v"],
            &["GETX"],
            &["CLIENT", "REPLY", "SKIP"],
            &["GET", "k"],
            &["CLIENT", "REPLY", "ON"],
            &["GET", "k"],
        ],
    );
    assert_eq!(out, b"+OK\r\n$1\r\nv\r\n");
    let out = pipelined(
        &mut t,
        c,
        &[
            &["CLIENT", "REPLY", "SKIP"],
            &["GET", "k"],
            &["GET", "k"],
            &["CLIENT", "REPLY", "bad"],
            &["CLIENT", "REPLY"],
        ],
    );
    assert_eq!(
        out,
        b"$1\r\nv\r\n-ERR syntax error\r\n\
          -ERR wrong number of arguments for 'client|reply' command\r\n"
    );
    let skip: &[&str] = &["CLIENT", "REPLY", "SKIP"];
    let out = pipelined(&mut t, c, &[skip, skip, &["PING", "1"], &["PING", "2"]]);
    assert_eq!(
        out, b"$1\r\n2\r\n",
        "a second SKIP skips the command after it"
    );
    let off: &[&str] = &["CLIENT", "REPLY", "OFF"];
    let on: &[&str] = &["CLIENT", "REPLY", "ON"];
    let out = pipelined(&mut t, c, &[off, skip, &["PING", "1"], on, &["PING", "2"]]);
    assert_eq!(out, b"+OK\r\n$1\r\n2\r\n", "SKIP is ignored while OFF");
}

#[test]
fn reply_reset_answers_under_off_but_not_when_skipped() {
    let mut t = TestEngine::new();
    let c = t.connect();
    let skip: &[&str] = &["CLIENT", "REPLY", "SKIP"];
    let off: &[&str] = &["CLIENT", "REPLY", "OFF"];
    let out = pipelined(&mut t, c, &[skip, &["RESET"], &["PING", "2"]]);
    assert_eq!(out, b"$1\r\n2\r\n");
    let out = pipelined(&mut t, c, &[off, &["RESET"], &["PING", "2"]]);
    assert_eq!(out, b"+RESET\r\n$1\r\n2\r\n");
}

/// Publishes `m` on `ch`, leaving the subscribers' output for the caller.
fn publish(t: &mut TestEngine, publisher: ClientId) {
    let request = crate::resp::reply::encode_request(&[b"PUBLISH", b"ch", b"m"]);
    t.engine.handle_input(t.now, publisher, &request);
}

#[test]
fn reply_off_still_delivers_pushes() {
    let mut t = TestEngine::new();
    let (sub, publisher) = (t.connect(), t.connect());
    let out = pipelined(
        &mut t,
        sub,
        &[&["CLIENT", "REPLY", "OFF"], &["SUBSCRIBE", "ch"]],
    );
    assert_eq!(out, b"*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n");
    publish(&mut t, publisher);
    assert_eq!(
        t.raw(sub, b""),
        b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nm\r\n"
    );
    assert_eq!(
        t.raw(sub, &crate::resp::reply::encode_request(&[b"RESET"])),
        b"+RESET\r\n"
    );
    // RESP3: a message to a subscriber whose replies are off is a push.
    pipelined(&mut t, sub, &[&["HELLO", "3"], &["SUBSCRIBE", "ch"]]);
    assert_eq!(pipelined(&mut t, sub, &[&["CLIENT", "REPLY", "OFF"]]), b"");
    publish(&mut t, publisher);
    assert_eq!(
        t.raw(sub, b""),
        b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nm\r\n"
    );
    assert_eq!(
        pipelined(&mut t, sub, &[&["CLIENT", "REPLY", "ON"]]),
        b"+OK\r\n"
    );
}

#[test]
fn reply_skip_drops_a_blocked_commands_later_reply_and_queued() {
    let mut t = TestEngine::new();
    let (c, pusher) = (t.connect(), t.connect());
    let out = pipelined(
        &mut t,
        c,
        &[&["CLIENT", "REPLY", "SKIP"], &["BLPOP", "l", "0"]],
    );
    assert_eq!(out, b"");
    assert_eq!(t.cmd(pusher, &["RPUSH", "l", "x"]), int(1));
    assert_eq!(t.raw(c, b""), b"", "the served BLPOP's reply is skipped");
    assert_eq!(t.cmd(c, &["PING"]), simple("PONG"));
    // Inside EXEC, SKIP has no reply of its own (Redis 7.0.15 sends the
    // array header of two with one element) and skips the command after
    // EXEC, since the SKIP is spent only when a request completes.
    let out = pipelined(
        &mut t,
        c,
        &[
            &["MULTI"],
            &["CLIENT", "REPLY", "SKIP"],
            &["SET", "k", "1"],
            &["EXEC"],
            &["PING", "a"],
            &["PING", "b"],
        ],
    );
    assert_eq!(
        out,
        b"+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n$1\r\nb\r\n"
    );
    let out = pipelined(
        &mut t,
        c,
        &[
            &["CLIENT", "REPLY", "SKIP"],
            &["MULTI"],
            &["SET", "k", "1"],
            &["EXEC"],
        ],
    );
    assert_eq!(out, b"+QUEUED\r\n*1\r\n+OK\r\n");
}
