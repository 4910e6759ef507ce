//! CONFIG and redis.conf loading, against Redis 7.0's replies and errors.

use super::parse::split_config_line;
use super::*;
use crate::config::{Config, MaxmemoryPolicy};
use crate::resp::Frame;
use crate::testing::{bulk, err, simple, TestEngine};

fn pairs(f: Frame) -> Vec<(String, String)> {
    let Frame::Array(items) = f else {
        panic!("expected array, got {f:?}")
    };
    items
        .chunks(2)
        .map(|kv| match (&kv[0], &kv[1]) {
            (Frame::Bulk(k), Frame::Bulk(v)) => (
                String::from_utf8_lossy(k).into_owned(),
                String::from_utf8_lossy(v).into_owned(),
            ),
            other => panic!("unexpected {other:?}"),
        })
        .collect()
}

#[test]
fn get_exact_and_glob() {
    let mut t = TestEngine::new();
    let c = t.connect();
    assert_eq!(
        t.cmd(c, &["CONFIG", "GET", "maxmemory"]),
        Frame::Array(vec![bulk("maxmemory"), bulk("0")])
    );
    let lazy = pairs(t.cmd(c, &["config", "get", "lazyfree*"]));
    assert_eq!(lazy.len(), 5);
    assert!(lazy
        .iter()
        .all(|(k, v)| k.starts_with("lazyfree-") && v == "no"));
    assert_eq!(t.cmd(c, &["config", "get", "nosuch"]), Frame::Array(vec![]));
    let multi = pairs(t.cmd(c, &["config", "get", "hz", "HZ", "port"]));
    assert_eq!(
        multi,
        vec![("hz".into(), "10".into()), ("port".into(), "6379".into())]
    );
    assert_eq!(
        t.cmd(c, &["config", "get"]),
        err("ERR wrong number of arguments for 'config|get' command")
    );
    // Aliases answer under their own name.
    assert_eq!(
        pairs(t.cmd(c, &["config", "get", "hash-max-ziplist-entries"])),
        vec![("hash-max-ziplist-entries".into(), "512".into())]
    );
}

#[test]
fn get_is_a_map_in_resp3() {
    let mut t = TestEngine::new();
    let c = t.connect();
    t.cmd(c, &["HELLO", "3"]);
    assert_eq!(
        t.cmd(c, &["config", "get", "hz"]),
        Frame::Map(vec![(bulk("hz"), bulk("10"))])
    );
}

#[test]
fn set_validates_like_redis() {
    let mut t = TestEngine::new();
    let c = t.connect();
    let cases = [
        (vec!["foo", "bar"], "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"),
        (vec!["hz", "abc"], "ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be parsed into an integer"),
        (vec!["hz", "-1"], "ERR CONFIG SET failed (possibly related to argument 'hz') - argument must be between 0 and 2147483647 inclusive"),
        (vec!["maxmemory", "1.5gb"], "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value"),
        (vec!["maxmemory-policy", "foo"], "ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"),
        (vec!["lazyfree-lazy-expire", "maybe"], "ERR CONFIG SET failed (possibly related to argument 'lazyfree-lazy-expire') - argument must be 'yes' or 'no'"),
        (vec!["databases", "4"], "ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config"),
        (vec!["dir", "/tmp"], "ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config"),
        (vec!["hz", "10", "hz", "11"], "ERR CONFIG SET failed (possibly related to argument 'hz') - duplicate parameter"),
        (vec!["hz", "10", "foo", "1"], "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"),
        (vec!["hz", "10", "maxmemory"], "ERR syntax error"),
        (vec!["proto-max-bulk-len", "10"], "ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - argument must be between 1048576 and 9223372036854775807 inclusive"),
        (vec!["save", "10"], "ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters"),
        (vec!["loglevel", "loud"], "ERR CONFIG SET failed (possibly related to argument 'loglevel') - argument(s) must be one of the following: debug, verbose, notice, warning"),
    ];
    for (args, expected) in cases {
        let mut full = vec!["config", "set"];
        full.extend(args.iter());
        assert_eq!(t.cmd(c, &full), err(expected), "{args:?}");
    }
    assert_eq!(
        t.cmd(c, &["config", "set", "hz"]),
        err("ERR wrong number of arguments for 'config|set' command")
    );
}

#[test]
fn set_is_all_or_nothing_and_applies() {
    let mut t = TestEngine::new();
    let c = t.connect();
    assert_eq!(
        t.cmd(c, &["config", "set", "hz", "5", "maxmemory-policy", "bad"]),
        err("ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction")
    );
    assert_eq!(t.engine.config().hz, 10);
    assert_eq!(
        t.cmd(
            c,
            &[
                "config",
                "set",
                "hz",
                "1000",
                "maxmemory",
                "1gb",
                "MAXMEMORY-POLICY",
                "ALLKEYS-LRU"
            ]
        ),
        simple("OK")
    );
    let cfg = t.engine.config();
    assert_eq!(cfg.hz, 500);
    assert_eq!(cfg.maxmemory_bytes, 1 << 30);
    assert_eq!(cfg.maxmemory_policy, MaxmemoryPolicy::AllkeysLru);
    assert_eq!(
        pairs(t.cmd(c, &["config", "get", "maxmemory-policy"])),
        vec![("maxmemory-policy".into(), "allkeys-lru".into())]
    );
    t.cmd(
        c,
        &[
            "config",
            "set",
            "maxmemory",
            "1g",
            "save",
            "900  1 300 10",
            "appendonly",
            "YES",
        ],
    );
    assert_eq!(t.engine.config().maxmemory_bytes, 1_000_000_000);
    assert_eq!(
        pairs(t.cmd(c, &["config", "get", "save", "appendonly"])),
        vec![
            ("save".into(), "900 1 300 10".into()),
            ("appendonly".into(), "yes".into())
        ]
    );
    t.cmd(c, &["config", "set", "requirepass", "secret"]);
    assert_eq!(
        t.engine.config().requirepass.as_deref(),
        Some(&b"secret"[..])
    );
    t.cmd(c, &["config", "set", "requirepass", ""]);
    assert_eq!(t.engine.config().requirepass, None);
}

#[test]
fn memory_units() {
    assert_eq!(parse_memory("100"), Some(100));
    assert_eq!(parse_memory("1k"), Some(1000));
    assert_eq!(parse_memory("1KB"), Some(1024));
    assert_eq!(parse_memory("100mb"), Some(100 << 20));
    assert_eq!(parse_memory("2G"), Some(2_000_000_000));
    assert_eq!(parse_memory("-1"), None);
    assert_eq!(parse_memory("1.5gb"), None);
    assert_eq!(parse_memory("gb"), None);
    assert_eq!(parse_memory("99999999999999999999gb"), None);
}

#[test]
fn config_file_lines() {
    let mut cfg = Config::default();
    let text = "# comment\nport 7000\nbind 127.0.0.1 ::1\nsave 900 1\nsave 60 100\nmaxmemory 100mb\ndatabases 16\nappendonly \"yes\"\n";
    load_config_str(&mut cfg, text).unwrap();
    assert_eq!(cfg.port, 7000);
    assert_eq!(cfg.bind, "127.0.0.1 ::1");
    assert_eq!(cfg.maxmemory_bytes, 100 << 20);
    assert_eq!(config_get(&cfg, "save").unwrap(), "900 1 60 100");
    assert_eq!(config_get(&cfg, "appendonly").unwrap(), "yes");
    assert!(load_config_str(&mut cfg, "databases 4").is_err());
    assert!(load_config_str(&mut cfg, "dir \"/tmp").is_err());
    assert_eq!(
        split_config_line(br#"a "b c\x41\n" 'd\'e'  f"#).unwrap(),
        vec![
            b"a".to_vec(),
            b"b cA\n".to_vec(),
            b"d'e".to_vec(),
            b"f".to_vec()
        ]
    );
    assert_eq!(
        apply_config_line(&mut cfg, "hz", "x").unwrap_err(),
        "argument couldn't be parsed into an integer"
    );
    assert!(apply_config_line(&mut cfg, "nosuch", "1").is_err());
}

#[test]
fn resetstat_rewrite_help() {
    let mut t = TestEngine::new();
    let c = t.connect();
    t.cmd(c, &["ping"]);
    assert_eq!(t.cmd(c, &["config", "resetstat"]), simple("OK"));
    assert_eq!(t.engine.server().stats.total_commands_processed, 1);
    assert_eq!(
        t.cmd(c, &["config", "rewrite"]),
        err("ERR The server is running without a config file")
    );
    let Frame::Array(lines) = t.cmd(c, &["config", "help"]) else {
        panic!()
    };
    assert_eq!(lines.len(), 11);
    assert_eq!(
        t.cmd(c, &["config", "nope"]),
        err("ERR unknown subcommand 'nope'. Try CONFIG HELP.")
    );
}
