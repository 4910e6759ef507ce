//! The string families' specs, against Redis 7.0's COMMAND INFO.

use super::{counters, getex, lcs, multi, ranges, COMMANDS};
use crate::cmd::{flags::*, CommandSpec, CommandTable};

/// Every string family's table: together, Redis's `string` group.
const TABLES: [&[CommandSpec]; 6] = [
    COMMANDS,
    getex::COMMANDS,
    multi::COMMANDS,
    ranges::COMMANDS,
    counters::COMMANDS,
    lcs::COMMANDS,
];

#[test]
fn specs_match_redis_command_info() {
    let all = || TABLES.iter().flat_map(|table| table.iter());
    let spec = |name: &str| all().find(|s| s.name == name).expect(name);
    // (name, arity, flags, first, last, step, acl categories, since)
    type Row = (
        &'static str,
        i32,
        u32,
        i32,
        i32,
        i32,
        &'static [&'static str],
        &'static str,
    );
    let expected: &[Row] = &[
        (
            "get",
            2,
            READONLY | FAST,
            1,
            1,
            1,
            &["read", "string", "fast"],
            "1.0.0",
        ),
        (
            "set",
            -3,
            WRITE | DENYOOM,
            1,
            1,
            1,
            &["write", "string", "slow"],
            "1.0.0",
        ),
        (
            "setnx",
            3,
            WRITE | DENYOOM | FAST,
            1,
            1,
            1,
            &["write", "string", "fast"],
            "1.0.0",
        ),
        (
            "setex",
            4,
            WRITE | DENYOOM,
            1,
            1,
            1,
            &["write", "string", "slow"],
            "2.0.0",
        ),
        (
            "psetex",
            4,
            WRITE | DENYOOM,
            1,
            1,
            1,
            &["write", "string", "slow"],
            "2.6.0",
        ),
        (
            "mget",
            -2,
            READONLY | FAST,
            1,
            -1,
            1,
            &["read", "string", "fast"],
            "1.0.0",
        ),
        (
            "mset",
            -3,
            WRITE | DENYOOM,
            1,
            -1,
            2,
            &["write", "string", "slow"],
            "1.0.1",
        ),
        (
            "msetnx",
            -3,
            WRITE | DENYOOM,
            1,
            -1,
            2,
            &["write", "string", "slow"],
            "1.0.1",
        ),
        (
            "getset",
            3,
            WRITE | DENYOOM | FAST,
            1,
            1,
            1,
            &["write", "string", "fast"],
            "1.0.0",
        ),
        (
            "getdel",
            2,
            WRITE | FAST,
            1,
            1,
            1,
            &["write", "string", "fast"],
            "6.2.0",
        ),
        (
            "getex",
            -2,
            WRITE | FAST,
            1,
            1,
            1,
            &["write", "string", "fast"],
            "6.2.0",
        ),
        (
            "append",
            3,
            WRITE | DENYOOM | FAST,
            1,
            1,
            1,
            &["write", "string", "fast"],
            "2.0.0",
        ),
        (
            "strlen",
            2,
            READONLY | FAST,
            1,
            1,
            1,
            &["read", "string", "fast"],
            "2.2.0",
        ),
        (
            "getrange",
            4,
            READONLY,
            1,
            1,
            1,
            &["read", "string", "slow"],
            "2.4.0",
        ),
        (
            "substr",
            4,
            READONLY,
            1,
            1,
            1,
            &["read", "string", "slow"],
            "1.0.0",
        ),
        (
            "setrange",
            4,
            WRITE | DENYOOM,
            1,
            1,
            1,
            &["write", "string", "slow"],
            "2.2.0",
        ),
        (
            "incr",
            2,
            WRITE | DENYOOM | FAST,
            1,
            1,
            1,
            &["write", "string", "fast"],
            "1.0.0",
        ),
        (
            "decr",
            2,
            WRITE | DENYOOM | FAST,
            1,
            1,
            1,
            &["write", "string", "fast"],
            "1.0.0",
        ),
        (
            "incrby",
            3,
            WRITE | DENYOOM | FAST,
            1,
            1,
            1,
            &["write", "string", "fast"],
            "1.0.0",
        ),
        (
            "decrby",
            3,
            WRITE | DENYOOM | FAST,
            1,
            1,
            1,
            &["write", "string", "fast"],
            "1.0.0",
        ),
        (
            "incrbyfloat",
            3,
            WRITE | DENYOOM | FAST,
            1,
            1,
            1,
            &["write", "string", "fast"],
            "2.6.0",
        ),
        (
            "lcs",
            -3,
            READONLY,
            1,
            2,
            1,
            &["read", "string", "slow"],
            "7.0.0",
        ),
    ];
    assert_eq!(all().count(), expected.len());
    // Every family's table reaches the engine's command table.
    let table = CommandTable::new(crate::commands::FAMILIES);
    let string_group = table.iter().filter(|s| s.group == "string").count();
    assert_eq!(string_group, expected.len());
    for &(name, arity, flags, first, last, step, acl, since) in expected {
        let s = spec(name);
        assert_eq!(s.arity, arity, "{name}");
        assert_eq!(s.flags & !O_N, flags, "{name}");
        assert_eq!(
            (s.first_key, s.last_key, s.key_step),
            (first, last, step),
            "{name}"
        );
        assert_eq!(s.acl_categories, acl, "{name}");
        assert_eq!(s.since, since, "{name}");
        assert_eq!(s.group, "string", "{name}");
        assert!(!s.summary.is_empty() && s.handler.is_some(), "{name}");
    }
}
