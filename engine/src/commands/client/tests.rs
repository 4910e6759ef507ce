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
