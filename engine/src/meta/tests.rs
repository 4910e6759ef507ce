//! The hand-written command specs against the generated metadata, and key
//! finding against Redis's documented examples.

use super::*;
use crate::cmd::{flags, CommandSpec};

/// Differences between a seedkv spec and redis-server 7.0.15 that are
/// intended, one reason each (`name`, `what`, `why`).
const DOCUMENTED: &[(&str, &str, &str)] = &[(
    "client|setinfo",
    "missing",
    "Redis 7.2's CLIENT SETINFO, accepted because clients send it on connect",
)];

/// Flags Redis hides from COMMAND INFO, so the metadata cannot confirm them.
const HIDDEN: &[&str] = &["may_replicate", "sentinel"];

fn every_spec() -> Vec<(String, &'static CommandSpec)> {
    let mut families = crate::commands::FAMILIES.to_vec();
    families.push(crate::commands::shutdown::COMMANDS);
    let mut out = Vec::new();
    for family in families {
        for spec in family.iter() {
            out.push((spec.name.to_string(), spec));
            for sub in spec.subcommands {
                let name = if sub.name.contains('|') {
                    sub.name.to_string()
                } else {
                    format!("{}|{}", spec.name, sub.name)
                };
                out.push((name, sub));
            }
        }
    }
    out
}

/// How `spec` differs from `meta`, one line per field.
fn differences(spec: &CommandSpec, meta: &CommandMeta) -> Vec<String> {
    let mut out = Vec::new();
    if spec.arity != meta.arity {
        out.push(format!("arity {} (redis {})", spec.arity, meta.arity));
    }
    let ours: Vec<&str> = flags::NAMES
        .iter()
        .filter(|(bit, name)| spec.has(*bit) && !HIDDEN.contains(name))
        .map(|(_, name)| *name)
        .collect();
    let theirs: Vec<&str> = meta
        .flags
        .iter()
        .copied()
        .filter(|f| flags::NAMES.iter().any(|(_, name)| name == f))
        .collect();
    if ours != theirs {
        out.push(format!("flags {ours:?} (redis {theirs:?})"));
    }
    let range = (spec.first_key, spec.last_key, spec.key_step);
    let redis_range = (meta.first_key, meta.last_key, meta.key_step);
    // A command without keys may leave its step at 0 or 1.
    if range != redis_range && !(spec.first_key == 0 && meta.first_key == 0) {
        out.push(format!("keys {range:?} (redis {redis_range:?})"));
    }
    let categories: Vec<String> = spec
        .acl_categories
        .iter()
        .map(|c| format!("@{c}"))
        .collect();
    if categories != meta.acl_categories {
        out.push(format!(
            "acl {categories:?} (redis {:?})",
            meta.acl_categories
        ));
    }
    out
}

#[test]
fn hand_written_specs_agree_with_redis() {
    let mut report = Vec::new();
    for (name, spec) in every_spec() {
        let documented = |what: &str| DOCUMENTED.iter().any(|(n, w, _)| *n == name && *w == what);
        match find(&name) {
            None if documented("missing") => {}
            None => report.push(format!("{name}: not in redis-server 7.0.15")),
            Some(meta) => {
                for line in differences(spec, meta) {
                    let what = line.split(' ').next().unwrap_or_default();
                    if !documented(what) {
                        report.push(format!("{name}: {line}"));
                    }
                }
            }
        }
    }
    assert!(
        report.is_empty(),
        "{} differences:\n{}",
        report.len(),
        report.join("\n")
    );
}

#[test]
fn the_table_is_sorted_and_complete() {
    let names: Vec<&str> = all().iter().map(|m| m.name).collect();
    assert!(names.windows(2).all(|w| w[0] < w[1]));
    // redis-server 7.0.15's COMMAND COUNT.
    assert_eq!(names.len(), 240);
    assert_eq!(find("client|list").map(|m| m.name), Some("client|list"));
    assert!(find("client|nosuch").is_none() && find("nosuch").is_none());
}

fn keys(name: &str, words: &str) -> Vec<usize> {
    let args: Vec<Vec<u8>> = words.split(' ').map(|w| w.as_bytes().to_vec()).collect();
    command_keys(find(name).expect("known"), &args)
        .iter()
        .map(|k| k.index)
        .collect()
}

#[test]
fn keys_from_specs_and_procedures() {
    assert_eq!(keys("get", "get k"), [1]);
    assert_eq!(keys("mset", "mset a 1 b 2"), [1, 3]);
    assert_eq!(keys("eval", "eval s 2 a b c"), [3, 4]);
    assert_eq!(keys("eval", "eval s 0"), Vec::<usize>::new());
    // The spec cannot parse "2x"; the procedure's atoi reads 2, and puts
    // the destination last.
    assert_eq!(keys("zunionstore", "zunionstore d 2x a b"), [3, 4, 1]);
    assert_eq!(keys("zunionstore", "zunionstore d 2 a b"), [1, 3, 4]);
    assert_eq!(keys("sort", "sort k by w store d"), [1, 5]);
    assert_eq!(
        keys("georadius", "georadius k 0 0 1 km storedist d"),
        [1, 7]
    );
    assert_eq!(keys("xread", "xread count 1 streams a b 0 0"), [4, 5]);
    // An odd count of streams and IDs: the spec still takes the first half
    // (rounded down), as Redis does.
    assert_eq!(keys("xread", "xread streams a b 0"), [2]);
    assert_eq!(keys("migrate", "migrate h 1  0 10 keys a b"), [7, 8]);
    assert_eq!(keys("object|encoding", "object encoding k"), [2]);
    let memory_usage: Vec<Vec<u8>> = ["memory", "usage", "k"]
        .iter()
        .map(|w| w.as_bytes().to_vec())
        .collect();
    assert_eq!(request_keys("memory|usage", &memory_usage), [2]);
    assert!(request_keys("nosuch", &memory_usage).is_empty());
    // Redis counts keys in a C int: 2^32 + 1 wraps to one key, 2^32 to none.
    assert_eq!(keys("lmpop", "lmpop 4294967297 a left"), [2]);
    assert_eq!(
        keys("lmpop", "lmpop 4294967296 a left"),
        Vec::<usize>::new()
    );
    let args: Vec<Vec<u8>> = ["set", "k", "v", "get"]
        .iter()
        .map(|w| w.as_bytes().to_vec())
        .collect();
    let set = command_keys(find("set").expect("known"), &args);
    assert_eq!(
        set,
        [KeyRef {
            index: 1,
            flags: &["RW", "access", "update"]
        }]
    );
    let eval: Vec<Vec<u8>> = ["eval", "s", "0"]
        .iter()
        .map(|w| w.as_bytes().to_vec())
        .collect();
    assert_eq!(
        getkeys(find("eval").expect("known"), &eval).map(|k| k.len()),
        Ok(0),
        "EVAL has no mandatory keys"
    );
    assert_eq!(
        getkeys(find("ping").expect("known"), &args[..1]),
        Err(KeysError::NoKeyArguments)
    );
}
