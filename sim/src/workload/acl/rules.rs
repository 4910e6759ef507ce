//! The permissions the admin draws: `ACL SETUSER` of a whole user (`reset`
//! first, so the rules sent are the whole truth) or of a change to its
//! root selector, over the commands, keys and channels the users use.
//!
//! MULTI, EXEC and DISCARD are granted last in every definition, and no
//! change removes them (no `-@all`, `-@fast`, `-@slow`, `nocommands`):
//! a refused EXEC would leave its connection inside MULTI, and the
//! client's next batch would be queued instead of run.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{user_name, user_password, Request};

/// Rules a definition draws at most, and a change.
const DEFINE_RULES_MAX: usize = 6;
const CHANGE_RULES_MAX: usize = 2;
/// Rules inside a selector at most.
const SELECTOR_RULES_MAX: usize = 3;

const COMMANDS: &[&str] = &[
    "get",
    "set",
    "mget",
    "mset",
    "del",
    "incr",
    "exists",
    "publish",
    "subscribe",
    "psubscribe",
    "unsubscribe",
    "punsubscribe",
    "eval",
];
const CATEGORIES: &[&str] = &["read", "write", "string", "keyspace", "pubsub", "scripting"];
const KEY_PATTERNS: &[&str] = &[
    "~acl:a:*",
    "~acl:b:*",
    "~acl:?:1",
    "~acl:c:0",
    "%R~acl:*",
    "%W~acl:b:*",
    "%RW~acl:c:*",
];
const CHANNEL_PATTERNS: &[&str] = &["&acl:ch:a", "&acl:ch:*", "&acl:ch:[ab]", "&acl:ch:c"];

fn pick(rng: &mut ChaCha8Rng, from: &[&str]) -> String {
    from[rng.gen_range(0..from.len())].to_string()
}

/// One rule of the root selector or of a selector.
fn rule(rng: &mut ChaCha8Rng) -> String {
    match rng.gen_range(0..100) {
        0..=24 => format!("+{}", pick(rng, COMMANDS)),
        25..=34 => format!("-{}", pick(rng, COMMANDS)),
        35..=46 => format!("+@{}", pick(rng, CATEGORIES)),
        47..=52 => format!("-@{}", pick(rng, CATEGORIES)),
        53..=76 => pick(rng, KEY_PATTERNS),
        77..=93 => pick(rng, CHANNEL_PATTERNS),
        94..=96 => "allkeys".to_string(),
        _ => "allchannels".to_string(),
    }
}

/// A selector: `(rule rule ...)`.
fn selector(rng: &mut ChaCha8Rng) -> String {
    let rules: Vec<String> = (0..rng.gen_range(1..=SELECTOR_RULES_MAX))
        .map(|_| rule(rng))
        .collect();
    format!("({})", rules.join(" "))
}

fn setuser(user: usize, rules: impl IntoIterator<Item = String>) -> Request {
    let mut r = vec![b"ACL".to_vec(), b"SETUSER".to_vec(), user_name(user)];
    r.extend(rules.into_iter().map(String::into_bytes));
    r
}

/// The whole definition of `user`.
pub(super) fn define_user(rng: &mut ChaCha8Rng, user: usize) -> Request {
    let mut rules = vec!["reset".to_string(), "on".to_string()];
    rules.push(format!(
        ">{}",
        String::from_utf8_lossy(&user_password(user))
    ));
    if rng.gen_bool(0.4) {
        rules.push("+@all".to_string());
    }
    for _ in 0..rng.gen_range(1..=DEFINE_RULES_MAX) {
        rules.push(match rng.gen_ratio(1, 8) {
            true => selector(rng),
            false => rule(rng),
        });
    }
    rules.extend(["+multi", "+exec", "+discard"].map(str::to_string));
    setuser(user, rules)
}

/// A change to `user`'s root selector (or a selector added, or all
/// cleared); it creates the user, with no password and off, if the admin
/// deleted it.
pub(super) fn change_user(rng: &mut ChaCha8Rng, user: usize) -> Request {
    let rules: Vec<String> = (0..rng.gen_range(1..=CHANGE_RULES_MAX))
        .map(|_| match rng.gen_range(0..100) {
            0..=79 => rule(rng),
            80..=87 => selector(rng),
            88..=91 => "resetkeys".to_string(),
            92..=95 => "resetchannels".to_string(),
            _ => "clearselectors".to_string(),
        })
        .collect();
    setuser(user, rules)
}
