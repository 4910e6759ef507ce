//! The rule parser, the descriptions and the permission check, against
//! answers taken from redis-server 7.0.15.

use super::selector::RuleError;
use super::*;
use crate::cmd::CommandTable;

fn table() -> CommandTable {
    CommandTable::new(crate::commands::FAMILIES)
}

/// A user built from `rules` as `ACL SETUSER` applies them.
fn user(index: &CommandIndex, rules: &[&str]) -> Result<User, RuleError> {
    let mut u = User::new(b"u".to_vec(), index, false);
    let mut steps = 0;
    let args: Vec<Vec<u8>> = rules.iter().map(|r| r.as_bytes().to_vec()).collect();
    let merged = user::merge_selector_args(&args).expect("balanced");
    for r in merged {
        u.set_rule(&r, index, false, &mut steps)?;
    }
    Ok(u)
}

fn describe(index: &CommandIndex, rules: &[&str]) -> String {
    let mut steps = 0;
    let text = user(index, rules)
        .expect("valid")
        .describe(index, &mut steps);
    String::from_utf8(text).expect("these rules are ASCII")
}

fn args(words: &[&str]) -> Vec<Vec<u8>> {
    words.iter().map(|w| w.as_bytes().to_vec()).collect()
}

fn verdict(
    table: &CommandTable,
    index: &CommandIndex,
    u: &User,
    words: &[&str],
) -> Result<(), Denied> {
    let argv = args(words);
    let spec = match crate::pipeline::lookup(table, &argv).expect("known") {
        crate::pipeline::Found::Runs((_, spec)) => spec,
        other => panic!("{other:?}"),
    };
    let mut steps = 0;
    check::check(u, index, spec, &argv, &mut steps)
}

#[test]
fn a_new_user_is_off_with_nothing_allowed() {
    let t = table();
    let index = CommandIndex::new(&t);
    assert_eq!(describe(&index, &[]), "off resetchannels -@all");
    assert_eq!(
        describe(&index, &["reset"]),
        "off sanitize-payload resetchannels -@all"
    );
}

#[test]
fn descriptions_match_redis() {
    let t = table();
    let index = CommandIndex::new(&t);
    // Each expected line is what redis-server 7.0.15 prints for the rules.
    let cases: &[(&[&str], &str)] = &[
        (
            &["on", "~k*", "%R~r*", "&ch*", "+@string", "-set"],
            "on ~k* %R~r* resetchannels &ch* -@all +@string -set",
        ),
        (
            &[
                "+set",
                "+@string",
                "-get",
                "+@hash",
                "-@hash",
                "+config|get",
                "+config",
                "-@all",
                "+get",
                "+@read",
                "-@write",
            ],
            "off resetchannels -@all +@read",
        ),
        (
            &["+@all", "-@string", "+get"],
            "off resetchannels +@all -@string +get",
        ),
        // Redis lists single commands in its dict's (hash) order, which
        // changes between runs: `-debug -config|set` there.
        (
            &["allcommands", "-debug", "-config|set"],
            "off resetchannels +@all -config|set -debug",
        ),
        (&["%W~w*", "%R~w*"], "off ~w* resetchannels -@all"),
        (
            &["nopass", "allkeys", "allchannels", "(~x* +get)"],
            "off nopass ~* &* -@all (~x* resetchannels -@all +get)",
        ),
    ];
    for (rules, expected) in cases {
        assert_eq!(describe(&index, rules), *expected, "rules {rules:?}");
    }
}

#[test]
fn rule_errors_are_redis_s() {
    let t = table();
    let index = CommandIndex::new(&t);
    assert_eq!(user(&index, &["foo"]), Err(RuleError::Syntax));
    assert_eq!(user(&index, &["#abc"]), Err(RuleError::BadHash));
    assert_eq!(user(&index, &["+nosuch"]), Err(RuleError::UnknownCommand));
    assert_eq!(user(&index, &["+@nosuch"]), Err(RuleError::UnknownCommand));
    assert_eq!(
        user(&index, &["allkeys", "~x"]),
        Err(RuleError::KeyAfterAll)
    );
    assert_eq!(user(&index, &["&*", "&x"]), Err(RuleError::ChannelAfterAll));
    assert_eq!(user(&index, &["<nope"]), Err(RuleError::NoSuchPassword));
    assert_eq!(
        user(&index, &["+config|get|x"]),
        Err(RuleError::FirstArgOfSubcommand)
    );
    assert_eq!(user(&index, &["%X~k"]), Err(RuleError::Syntax));
    assert_eq!(user(&index, &["~a b"]), Err(RuleError::Syntax));
    assert_eq!(
        user::merge_selector_args(&args(&["on", "(~x", "+get"])),
        Err(1),
        "an unclosed selector names its first argument"
    );
}

#[test]
fn passwords_are_sha256_hex_kept_in_order() {
    let t = table();
    let index = CommandIndex::new(&t);
    let u = user(&index, &[">x", ">y", "<y", ">password"]).unwrap();
    assert_eq!(
        u.passwords,
        [
            "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881",
            "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8",
        ]
    );
    assert!(u.has_password(b"password"));
    assert!(!u.has_password(b"y"));
    let u = user(&index, &[">x", "nopass"]).unwrap();
    assert!(u.passwords.is_empty() && u.nopass);
}

#[test]
fn checks_follow_key_access_channels_and_selectors() {
    let t = table();
    let index = CommandIndex::new(&t);
    let u = user(
        &index,
        &[
            "~k*",
            "%R~r*",
            "%W~w*",
            "&ch*",
            "+get",
            "+set",
            "+mset",
            "+publish",
            "+psubscribe",
            "+client|id",
            "(~x* +del)",
        ],
    )
    .unwrap();
    let v = |words: &[&str]| verdict(&t, &index, &u, words);
    assert_eq!(v(&["get", "k1"]), Ok(()));
    assert_eq!(v(&["get", "r1"]), Ok(()));
    assert_eq!(v(&["get", "w1"]), Err(Denied::Key(1)));
    assert_eq!(v(&["set", "w1", "v"]), Ok(()));
    assert_eq!(v(&["set", "w1", "v", "get"]), Err(Denied::Key(1)));
    assert_eq!(v(&["set", "r1", "v"]), Err(Denied::Key(1)));
    assert_eq!(v(&["mset", "k1", "1", "zz", "2"]), Err(Denied::Key(3)));
    assert_eq!(v(&["del", "x1"]), Ok(()), "the selector allows it");
    // The root denies the command, the selector the key: the key wins.
    assert_eq!(v(&["del", "k1"]), Err(Denied::Key(1)));
    assert_eq!(v(&["publish", "ch1", "m"]), Ok(()));
    assert_eq!(v(&["publish", "other", "m"]), Err(Denied::Channel(1)));
    assert_eq!(v(&["psubscribe", "ch*"]), Ok(()));
    assert_eq!(v(&["psubscribe", "ch1*"]), Err(Denied::Channel(1)));
    assert_eq!(v(&["client", "id"]), Ok(()));
    assert_eq!(v(&["client", "list"]), Err(Denied::Command));
    assert_eq!(
        v(&["auth", "x"]),
        Ok(()),
        "no-auth commands are always allowed"
    );
}

#[test]
fn first_arguments_allow_one_form_of_a_denied_command() {
    let t = table();
    let index = CommandIndex::new(&t);
    let u = user(&index, &["+select|0", "allkeys"]).unwrap();
    assert_eq!(verdict(&t, &index, &u, &["select", "0"]), Ok(()));
    assert_eq!(
        verdict(&t, &index, &u, &["select", "1"]),
        Err(Denied::Command)
    );
    let mut steps = 0;
    assert_eq!(
        u.describe(&index, &mut steps),
        b"off ~* resetchannels -@all +select|0"
    );
}

#[test]
fn requirepass_is_the_default_user_s_password() {
    let t = table();
    let mut acl = Acl::new(&t, None);
    assert!(acl.default_user_needs_no_auth());
    acl.set_requirepass(Some(b"secret"));
    assert!(!acl.default_user_needs_no_auth());
    assert!(acl.credentials_ok(b"default", b"secret"));
    assert!(!acl.credentials_ok(b"default", b"other"));
    assert!(!acl.credentials_ok(b"nosuch", b"secret"));
    acl.set_requirepass(None);
    assert!(acl.credentials_ok(b"default", b"anything"));
}

#[test]
fn the_log_groups_like_events_and_keeps_its_bound() {
    use log::{AclLog, Context, Entry, Reason};
    let mut l = AclLog::default();
    let event = |object: &str, at_ms: u64| Entry {
        count: 1,
        reason: Reason::Key,
        context: Context::Toplevel,
        object: object.as_bytes().to_vec(),
        username: b"u".to_vec(),
        created_ms: at_ms,
        client_info: Vec::new(),
    };
    const ENTRIES_MAX: usize = 128;
    l.add(event("a", 0), ENTRIES_MAX);
    l.add(event("a", 1000), ENTRIES_MAX);
    assert_eq!(l.len(), 1, "a like event within a minute is counted in");
    l.add(event("a", 100_000), ENTRIES_MAX);
    assert_eq!(l.len(), 2, "a minute later it is a new entry");
    for i in 0..ENTRIES_MAX + 10 {
        l.add(event(&i.to_string(), 200_000), ENTRIES_MAX);
    }
    assert_eq!(l.len(), ENTRIES_MAX);
    // A smaller bound trims at the next new entry only, as in Redis.
    l.add(event("130", 200_000), 3);
    assert_eq!(l.len(), ENTRIES_MAX, "a counted event trims nothing");
    l.add(event("new", 200_000), 3);
    assert_eq!(l.len(), 3);
    l.add(event("newer", 200_000), 0);
    assert!(l.is_empty());
}

#[test]
fn key_permissions_follow_the_key_specs() {
    let t = table();
    let index = CommandIndex::new(&t);
    let u = user(&index, &["on", "+@all", "%R~r*", "%W~w*", "~k*"]).expect("valid");
    // Each verdict is redis-server 7.0.15's ACL DRYRUN for the same user:
    // the access a key needs comes from its key spec's flags (EXISTS's
    // `RO` alone needs none), and from the command's own procedure where
    // the spec cannot say (SET ... GET, SORT ... STORE, BITFIELD).
    let cases: &[(&str, Result<(), Denied>)] = &[
        ("set w1 v", Ok(())),
        ("set w1 v get", Err(Denied::Key(1))),
        ("set r1 v", Err(Denied::Key(1))),
        ("get r1", Ok(())),
        ("get w1", Err(Denied::Key(1))),
        ("sort r1", Ok(())),
        ("sort r1 store w1", Ok(())),
        ("sort r1 store r2", Err(Denied::Key(3))),
        ("sort_ro r1", Ok(())),
        ("copy r1 w1", Ok(())),
        ("copy w1 r1", Err(Denied::Key(1))),
        ("lmove r1 w1 left right", Err(Denied::Key(1))),
        ("eval x 1 r1", Err(Denied::Key(3))),
        ("eval x 1 k1", Ok(())),
        ("rename r1 w1", Err(Denied::Key(1))),
        ("rename k1 w1", Ok(())),
        ("del w1", Ok(())),
        ("exists w1", Ok(())),
        ("object encoding w1", Ok(())),
        ("memory usage w1", Ok(())),
        ("bitfield w1 get u8 0", Err(Denied::Key(1))),
        ("bitfield r1 get u8 0", Ok(())),
        ("bitfield r1 set u8 0 1", Err(Denied::Key(1))),
        ("xread streams r1 0", Ok(())),
        ("zunionstore w1 2 r1 r2", Ok(())),
        ("getdel w1", Err(Denied::Key(1))),
        ("getex r1", Err(Denied::Key(1))),
        ("publish x y", Err(Denied::Channel(1))),
    ];
    for (request, expected) in cases {
        let words: Vec<&str> = request.split(' ').collect();
        assert_eq!(
            verdict(&t, &index, &u, &words),
            *expected,
            "ACL DRYRUN u {request}"
        );
    }
}

#[test]
fn a_selector_ends_at_a_nul_byte_as_redis_s_c_string_does() {
    let t = table();
    let index = CommandIndex::new(&t);
    // Found by the acl_rules fuzz target: the split of a selector's rules
    // found an empty rule at the NUL forever. Redis's `sdssplitargs` stops
    // there, so only `~x*` and `+g\x11` are rules, and the second is
    // unknown.
    let rule = "(~x* +g\u{11}\0\0\0et)";
    assert_eq!(
        user(&index, &["on", rule]).err(),
        Some(RuleError::UnknownCommand)
    );
    assert!(user(&index, &["on", "(~x* +get\0 junk)"]).is_ok());
    // A command rule is a C string to Redis too: the first argument ends
    // at the NUL (redis-server 7.0.15 describes `+select|0\x01`).
    assert_eq!(
        describe(&index, &["+select|0\u{1}\0\0junk", "+@read\0x"]),
        "off resetchannels -@all +@read +select|0\u{1}"
    );
}

#[test]
fn unrestricted_key_access_wants_allkeys_or_a_literal_star() {
    let t = table();
    let index = CommandIndex::new(&t);
    let argv = args(&["sort", "k1", "by", "w*"]);
    let spec = t.lookup(b"sort").expect("sort");
    let read = selector::KEY_READ;
    // As SORT's BY and GET ask it on redis-server 7.0.15: `%R~*` or `~*`
    // (allkeys) in a selector that also allows the command; `~k*` or
    // `%W~*` are not enough, nor `%R~*` in a selector denying SORT.
    let cases: &[(&[&str], bool)] = &[
        (&["+@all", "~*"], true),
        (&["+@all", "%R~*"], true),
        (&["+@all", "~k1", "%R~*"], true),
        (&["+@all", "~k*"], false),
        (&["+@all", "%W~*"], false),
        (&["+@all", "~k*", "~**"], false),
        (&["+get", "%R~*", "(+sort ~k*)"], false),
        (&["+get", "~k*", "(+sort %R~*)"], true),
    ];
    for (rules, expected) in cases {
        let mut rules = rules.to_vec();
        rules.insert(0, "on");
        let u = user(&index, &rules).expect("valid");
        let mut steps = 0;
        let full =
            check::user_has_unrestricted_key_access(&u, &index, spec, &argv, read, &mut steps);
        assert_eq!(full, *expected, "{rules:?}");
    }
}

/// An empty rule inside a selector (the fuzz target's `(\r'')`, which
/// splits into one) is a syntax error as on redis-server 7.0.15, where it
/// once indexed an empty slice; an empty rule outside one is accepted.
#[test]
fn an_empty_rule_in_a_selector_is_a_syntax_error() {
    let t = table();
    let index = CommandIndex::new(&t);
    assert!(matches!(user(&index, &["(\r'')"]), Err(RuleError::Syntax)));
    assert!(user(&index, &[""]).is_ok());
    assert!(user(&index, &["()"]).is_ok());
}

#[test]
fn an_acl_file_round_trips_through_its_text() {
    let t = CommandTable::new(crate::commands::FAMILIES);
    let mut acl = crate::acl::Acl::new(&t, None);
    let text = b"user a\xffb on >p ~k\xfe* %R~r* &c\xfd -@all +get (~x* +@hash)\n\
user default on nopass ~* &* +@all\n";
    let mut steps = 0;
    let users = super::file::parse(text, "f.acl", &acl.index, false, &mut steps).expect("valid");
    let gone = acl.replace_users(users);
    assert!(gone.is_empty());
    let rendered = super::file::render(&acl, &mut steps);
    let again =
        super::file::parse(&rendered, "f.acl", &acl.index, false, &mut steps).expect("valid");
    let gone = acl.replace_users(again);
    assert_eq!(gone, vec![b"a\xffb".to_vec()]);
    assert_eq!(super::file::render(&acl, &mut steps), rendered);
    assert!(rendered.starts_with(b"user a\xffb on #"));
}

#[test]
fn acl_file_errors_are_redis_s_per_line() {
    let t = CommandTable::new(crate::commands::FAMILIES);
    let acl = crate::acl::Acl::new(&t, None);
    let parse = |text: &[u8]| {
        let mut steps = 0;
        let e = super::file::parse(text, "u.acl", &acl.index, false, &mut steps).unwrap_err();
        String::from_utf8(e).unwrap()
    };
    let tail =
        "WARNING: ACL errors detected, no change to the previously active ACL rules was performed";
    assert_eq!(
        parse(b"user x +nosuch #abc +nosuch2 ~* ~a\n"),
        format!(
            "u.acl:1: Error in applying operation '+nosuch': Unknown command or category name in ACL. \
u.acl:1: The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters. \
u.acl:1: Error in applying operation '+nosuch2': Unknown command or category name in ACL. {tail}"
        )
    );
    assert_eq!(
        parse(b"\n# c\nuser x\x0b on\n"),
        format!(
            "u.acl:2 should start with user keyword followed by the username. \
'u.acl:3: username 'x\x0b' contains invalid characters. {tail}"
        )
    );
    // The file ends at its first NUL: line 2 is `user x`, a duplicate.
    assert_eq!(
        parse(b"user x\nuser x\x00 on\n"),
        format!("WARNING: Duplicate user 'x' found on line 2. {tail}")
    );
}
