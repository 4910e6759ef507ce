//! Snapshot tests: every script in tests/scripts runs through the engine
//! alone (virtual clock, fixed seed) and its transcript, rendered as
//! redis-cli prints replies, is compared with the reviewed
//! `snapshots/snapshots__<script>.snap`. Update with `INSTA_UPDATE=always`
//! (or `cargo insta review`) and review the diff like code.

use seedkv_tests::script;

fn check(name: &str) {
    let lines = script::load(name);
    let transcript = script::transcript(&lines);
    insta::assert_snapshot!(name, transcript);
}

#[test]
fn strings() {
    check("strings");
}

#[test]
fn keys() {
    check("keys");
}

#[test]
fn expire() {
    check("expire");
}

#[test]
fn scan() {
    check("scan");
}

#[test]
fn connection() {
    check("connection");
}

#[test]
fn server() {
    check("server");
}

#[test]
fn errors() {
    check("errors");
}

#[test]
fn wrongtype() {
    check("wrongtype");
}

#[test]
fn lists() {
    check("lists");
}

#[test]
fn hashes() {
    check("hashes");
}

#[test]
fn sets() {
    check("sets");
}

#[test]
fn zsets() {
    check("zsets");
}

#[test]
fn sort() {
    check("sort");
}

#[test]
fn pubsub() {
    check("pubsub");
}

#[test]
fn blocking() {
    check("blocking");
}

#[test]
fn slowlog() {
    check("slowlog");
}

#[test]
fn multi() {
    check("multi");
}

#[test]
fn scripting() {
    check("scripting");
}

#[test]
fn streams() {
    check("streams");
}

#[test]
fn maxmemory() {
    check("maxmemory");
}

#[test]
fn client_pause() {
    check("client_pause");
}

/// Every script has a snapshot test above.
#[test]
fn every_script_is_snapshotted() {
    let known = [
        "strings",
        "keys",
        "expire",
        "scan",
        "connection",
        "server",
        "errors",
        "wrongtype",
        "lists",
        "hashes",
        "sets",
        "zsets",
        "sort",
        "blocking",
        "multi",
        "scripting",
        "slowlog",
        "maxmemory",
        "pubsub",
        "client_pause",
        "streams",
    ];
    for path in script::all_scripts() {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        assert!(
            known.contains(&stem.as_str()),
            "add a snapshot test for tests/scripts/{stem}.txt"
        );
    }
}
