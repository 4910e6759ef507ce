//! TIME, INFO and COMMAND, against Redis 7.0's replies.

use super::info::SECTIONS;
use super::*;
use crate::resp::Frame;
use crate::testing::{bulk, err, int, TestEngine, UNIX_ORIGIN_US};
use crate::Config;

fn text(f: Frame) -> String {
    match f {
        Frame::Bulk(b) => String::from_utf8(b).unwrap(),
        Frame::Verbatim { data, .. } => String::from_utf8(data).unwrap(),
        other => panic!("expected text, got {other:?}"),
    }
}

fn field<'a>(info: &'a str, key: &str) -> Option<&'a str> {
    info.split("\r\n")
        .find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix(':')))
}

fn strs(items: &[&str]) -> Frame {
    Frame::Array(items.iter().map(|s| bulk(s)).collect())
}

#[test]
fn time_comes_from_now() {
    let mut t = TestEngine::new();
    let c = t.connect();
    t.advance_ms(1_500);
    let us = UNIX_ORIGIN_US + 1_500_000;
    assert_eq!(
        t.cmd(c, &["TIME"]),
        strs(&[&(us / 1_000_000).to_string(), &(us % 1_000_000).to_string()])
    );
}

#[test]
fn info_server_section() {
    let config = Config {
        port: 7001,
        process_id: 4242,
        ..Config::default()
    };
    let mut t = TestEngine::with_config(config);
    let c = t.connect();
    t.advance_ms(90_000);
    let info = text(t.cmd(c, &["INFO", "server"]));
    assert!(info.starts_with("# Server\r\nredis_version:7.0.15\r\n"));
    assert!(info.ends_with("\r\n") && !info.ends_with("\r\n\r\n"));
    assert_eq!(
        field(&info, "seedkv_version"),
        Some(env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(field(&info, "redis_mode"), Some("standalone"));
    assert_eq!(field(&info, "arch_bits"), Some("64"));
    assert_eq!(field(&info, "process_id"), Some("4242"));
    assert_eq!(field(&info, "tcp_port"), Some("7001"));
    assert_eq!(field(&info, "uptime_in_seconds"), Some("90"));
    assert_eq!(field(&info, "uptime_in_days"), Some("0"));
    assert_eq!(field(&info, "run_id").unwrap().len(), 40);
    assert!(field(&info, "os").is_some());
    assert!(field(&info, "connected_clients").is_none());
    // Deterministic: same seed and inputs, same text.
    let mut t2 = TestEngine::with_config(Config {
        port: 7001,
        process_id: 4242,
        ..Config::default()
    });
    let c2 = t2.connect();
    t2.advance_ms(90_000);
    assert_eq!(text(t2.cmd(c2, &["INFO", "server"])), info);
}

#[test]
fn info_section_selection() {
    let mut t = TestEngine::new();
    let c = t.connect();
    let headers = |s: &str| -> Vec<String> {
        s.split("\r\n")
            .filter(|l| l.starts_with('#'))
            .map(String::from)
            .collect()
    };
    let default = headers(&text(t.cmd(c, &["INFO"])));
    assert_eq!(default, headers(&text(t.cmd(c, &["info", "default"]))));
    assert!(default.contains(&"# Keyspace".to_string()));
    assert!(!default.contains(&"# Commandstats".to_string()));
    let all = headers(&text(t.cmd(c, &["info", "all"])));
    assert_eq!(all.len(), SECTIONS.len());
    assert_eq!(all, headers(&text(t.cmd(c, &["info", "everything"]))));
    assert_eq!(
        headers(&text(t.cmd(c, &["info", "KEYSPACE", "server"]))),
        vec!["# Server", "# Keyspace"]
    );
    assert_eq!(text(t.cmd(c, &["info", "nosuch"])), "");
    // Sections are separated by one blank line.
    assert!(text(t.cmd(c, &["info", "cluster", "keyspace"]))
        .contains("cluster_enabled:0\r\n\r\n# Keyspace\r\n"));
    t.cmd(c, &["hello", "3"]);
    assert!(matches!(
        t.cmd(c, &["info", "server"]),
        Frame::Verbatim { format, .. } if &format == b"txt"
    ));
}

#[test]
fn info_stats_keyspace_commandstats_memory() {
    let mut t = TestEngine::new();
    let c = t.connect();
    let before = text(t.cmd(c, &["info", "memory"]));
    let used_before: u64 = field(&before, "used_memory").unwrap().parse().unwrap();
    for i in 0..100 {
        t.cmd(c, &["SET", &format!("key:{i}"), "value"]);
    }
    t.cmd(c, &["GET", "key:1"]);
    t.cmd(c, &["nosuchcommand"]);
    let info = text(t.cmd(c, &["info", "all"]));
    assert_eq!(field(&info, "db0"), Some("keys=100,expires=0,avg_ttl=0"));
    assert_eq!(field(&info, "connected_clients"), Some("1"));
    assert_eq!(field(&info, "total_connections_received"), Some("1"));
    assert_eq!(field(&info, "maxmemory_policy"), Some("noeviction"));
    assert_eq!(field(&info, "maxmemory_human"), Some("0B"));
    let set = field(&info, "cmdstat_set").unwrap();
    assert!(set.starts_with("calls=100,usec="), "{set}");
    assert!(set.ends_with(",rejected_calls=0,failed_calls=0"));
    assert!(field(&info, "cmdstat_get").unwrap().starts_with("calls=1,"));
    let used: u64 = field(&info, "used_memory").unwrap().parse().unwrap();
    assert!(used > used_before, "{used} > {used_before}");
    // INFO itself is counted once it has run.
    let info2 = text(t.cmd(c, &["info", "commandstats"]));
    assert!(field(&info2, "cmdstat_info")
        .unwrap()
        .starts_with("calls=2,"));
}

#[test]
fn bytes_to_human_like_redis() {
    assert_eq!(bytes_to_human(0), "0B");
    assert_eq!(bytes_to_human(1023), "1023B");
    assert_eq!(bytes_to_human(1262728), "1.20M");
    assert_eq!(bytes_to_human(1 << 30), "1.00G");
    assert_eq!(bytes_to_human(1536), "1.50K");
}

#[test]
fn command_count_list_info_docs() {
    let mut t = TestEngine::new();
    let c = t.connect();
    let n = t.engine.server().commands.len() as i64;
    assert_eq!(t.cmd(c, &["command", "count"]), int(n));
    let Frame::Array(all) = t.cmd(c, &["command"]) else {
        panic!()
    };
    assert_eq!(all.len() as i64, n);
    let Frame::Array(names) = t.cmd(c, &["command", "list"]) else {
        panic!()
    };
    assert!(names.contains(&bulk("client|kill")) && names.contains(&bulk("get")));
    assert_eq!(
        t.cmd(c, &["command", "list", "filterby", "pattern", "config*"]),
        strs(&[
            "config",
            "config|get",
            "config|set",
            "config|resetstat",
            "config|rewrite",
            "config|help"
        ])
    );
    assert_eq!(
        t.cmd(c, &["command", "list", "filterby", "module", "x"]),
        Frame::Array(vec![])
    );
    let Frame::Array(admin) = t.cmd(c, &["command", "list", "filterby", "aclcat", "admin"]) else {
        panic!()
    };
    assert!(admin.contains(&bulk("config|set")) && !admin.contains(&bulk("get")));
    assert_eq!(
        t.cmd(c, &["command", "list", "foo"]),
        err("ERR syntax error")
    );
    assert_eq!(
        t.cmd(c, &["command", "list", "filterby", "foo", "x"]),
        err("ERR syntax error")
    );
    assert_eq!(
        t.cmd(c, &["command", "foo"]),
        err("ERR unknown subcommand 'foo'. Try COMMAND HELP.")
    );

    // COMMAND INFO get, in RESP2: the layout Redis 7.0.15 replies.
    let get = t.cmd(c, &["command", "info", "get", "nosuch"]);
    let s = |x: &str| Frame::Simple(x.as_bytes().to_vec());
    let expected_get = Frame::Array(vec![
        bulk("get"),
        int(2),
        Frame::Array(vec![s("readonly"), s("fast")]),
        int(1),
        int(1),
        int(1),
        Frame::Array(vec![s("@read"), s("@string"), s("@fast")]),
        Frame::Array(vec![]),
        Frame::Array(vec![Frame::Array(vec![
            bulk("flags"),
            Frame::Array(vec![s("RO"), s("access")]),
            bulk("begin_search"),
            Frame::Array(vec![
                bulk("type"),
                bulk("index"),
                bulk("spec"),
                Frame::Array(vec![bulk("index"), int(1)]),
            ]),
            bulk("find_keys"),
            Frame::Array(vec![
                bulk("type"),
                bulk("range"),
                bulk("spec"),
                Frame::Array(vec![
                    bulk("lastkey"),
                    int(0),
                    bulk("keystep"),
                    int(1),
                    bulk("limit"),
                    int(0),
                ]),
            ]),
        ])]),
        Frame::Array(vec![]),
    ]);
    assert_eq!(get, Frame::Array(vec![expected_get, Frame::Null]));

    let Frame::Array(info) = t.cmd(c, &["command", "info", "CLIENT|LIST"]) else {
        panic!()
    };
    let Frame::Array(entry) = &info[0] else {
        panic!()
    };
    assert_eq!(entry[0], bulk("client|list"));
    assert_eq!(entry[1], int(-2));
    assert_eq!(
        entry[2],
        Frame::Array(vec![s("admin"), s("noscript"), s("loading"), s("stale")])
    );
    // Tips are bulk strings, unlike flags and categories.
    assert_eq!(
        entry[7],
        Frame::Array(vec![bulk("nondeterministic_output")])
    );

    // DOCS: a map of name to summary/since/group/complexity(/subcommands).
    t.cmd(c, &["hello", "3"]);
    let docs = t.cmd(c, &["command", "docs", "time", "nosuch"]);
    assert_eq!(
        docs,
        Frame::Map(vec![(
            bulk("time"),
            Frame::Map(vec![
                (bulk("summary"), bulk("Return the current server time")),
                (bulk("since"), bulk("2.6.0")),
                (bulk("group"), bulk("server")),
                (bulk("complexity"), bulk("O(1)")),
            ])
        )])
    );
    let Frame::Map(config_docs) = t.cmd(c, &["command", "docs", "config"]) else {
        panic!()
    };
    let Frame::Map(fields) = &config_docs[0].1 else {
        panic!()
    };
    assert_eq!(fields[4].0, bulk("subcommands"));
}

#[test]
fn command_getkeys() {
    let mut t = TestEngine::new();
    let c = t.connect();
    assert_eq!(
        t.cmd(c, &["command", "getkeys", "set", "a", "1"]),
        strs(&["a"])
    );
    assert_eq!(
        t.cmd(c, &["command", "getkeys", "nosuch", "a"]),
        err("ERR Invalid command specified")
    );
    assert_eq!(
        t.cmd(c, &["command", "getkeys", "client", "list"]),
        err("ERR The command has no key arguments")
    );
    assert_eq!(
        t.cmd(c, &["command", "getkeys", "set", "a"]),
        err("ERR Invalid number of arguments specified for command")
    );
    assert_eq!(
        t.cmd(c, &["command", "getkeys", "get"]),
        err("ERR wrong number of arguments for 'command|getkeys' command")
    );
    let s = |x: &str| Frame::Simple(x.as_bytes().to_vec());
    assert_eq!(
        t.cmd(c, &["command", "getkeysandflags", "get", "k"]),
        Frame::Array(vec![Frame::Array(vec![
            bulk("k"),
            Frame::Array(vec![s("RO"), s("access")])
        ])])
    );
}
