//! The pub/sub family's specs, against Redis 7.0's COMMAND INFO (found by
//! cargo-mutants: a spec's flags or key step could be dropped unnoticed,
//! since only COMMAND INFO and scripts read them).

use super::COMMANDS;
use crate::cmd::flags::*;

#[test]
fn specs_match_redis_command_info() {
    let subscriber = PUBSUB | NOSCRIPT | LOADING | STALE;
    let publisher = PUBSUB | LOADING | STALE | FAST;
    let introspection = PUBSUB | LOADING | STALE;
    // (name, arity, flags, first key, last key, key step); `O_N` is the
    // engine's own flag, not one of Redis's, so it is left out.
    let expected: &[(&str, i32, u32, i32, i32, i32)] = &[
        ("subscribe", -2, subscriber, 0, 0, 0),
        ("unsubscribe", -1, subscriber, 0, 0, 0),
        ("psubscribe", -2, subscriber, 0, 0, 0),
        ("punsubscribe", -1, subscriber, 0, 0, 0),
        ("publish", 3, publisher, 0, 0, 0),
        ("ssubscribe", -2, subscriber, 1, -1, 1),
        ("sunsubscribe", -1, subscriber, 1, -1, 1),
        ("spublish", 3, publisher, 1, 1, 1),
        ("pubsub", -2, 0, 0, 0, 0),
        ("pubsub|channels", -2, introspection, 0, 0, 0),
        ("pubsub|numsub", -2, introspection, 0, 0, 0),
        ("pubsub|numpat", 2, introspection, 0, 0, 0),
        ("pubsub|shardchannels", -2, introspection, 0, 0, 0),
        ("pubsub|shardnumsub", -2, introspection, 0, 0, 0),
        ("pubsub|help", 2, LOADING | STALE, 0, 0, 0),
    ];
    let pubsub = COMMANDS
        .iter()
        .find(|s| s.name == "pubsub")
        .expect("pubsub");
    let all = || COMMANDS.iter().chain(pubsub.subcommands);
    assert_eq!(all().count(), expected.len());
    for &(name, arity, flags, first, last, step) in expected {
        let spec = all().find(|s| s.name == name).expect(name);
        let actual = (
            spec.arity,
            spec.flags & !O_N,
            spec.first_key,
            spec.last_key,
            spec.key_step,
        );
        assert_eq!(actual, (arity, flags, first, last, step), "{name}");
    }
}
