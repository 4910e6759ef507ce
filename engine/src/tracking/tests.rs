//! The tracking table through the engine's inputs, byte for byte as
//! redis-server 7.0.15 answers (see tests/tests/tracking.rs for the
//! differential run).

use std::collections::BTreeMap;

use crate::client::ClientId;
use crate::resp::encode::encode_request;
use crate::testing::{err, int, simple, TestEngine};
use crate::Config;

/// Runs one command of `who`; returns what every client was sent.
fn run(t: &mut TestEngine, who: ClientId, args: &[&str]) -> BTreeMap<ClientId, Vec<u8>> {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    t.engine.handle_input(t.now, who, &encode_request(&args));
    while t.engine.poll_event().is_some() {}
    let mut out: BTreeMap<ClientId, Vec<u8>> = BTreeMap::new();
    while let Some(c) = t.engine.poll_transmit() {
        let bytes = t.engine.pending_output(c).to_vec();
        t.engine.consume_output(c, bytes.len());
        out.entry(c).or_default().extend_from_slice(&bytes);
    }
    out
}

/// What `to` was sent while `who` ran `args`.
fn sent_to(t: &mut TestEngine, who: ClientId, args: &[&str], to: ClientId) -> Vec<u8> {
    run(t, who, args).remove(&to).unwrap_or_default()
}

fn send(t: &mut TestEngine, c: crate::client::ClientId, args: &[&str]) -> Vec<u8> {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    t.raw(c, &encode_request(&args))
}

const INVALIDATE_K: &[u8] = b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n";

#[test]
fn a_write_invalidates_a_read_key_once() {
    let mut t = TestEngine::new();
    let (r, w) = (t.connect(), t.connect());
    send(&mut t, r, &["HELLO", "3"]);
    assert_eq!(t.cmd(r, &["CLIENT", "TRACKING", "on"]), simple("OK"));
    send(&mut t, r, &["GET", "k"]);
    assert!(t.engine.server_tracking().is_tracked(b"k", r));
    assert_eq!(sent_to(&mut t, w, &["SET", "k", "1"], r), INVALIDATE_K);
    // Forgotten once told: a second write says nothing.
    assert_eq!(sent_to(&mut t, w, &["SET", "k", "2"], r), b"");
}

#[test]
fn the_writer_s_own_invalidation_follows_its_reply_and_noloop_skips_it() {
    let mut t = TestEngine::new();
    let r = t.connect();
    send(&mut t, r, &["HELLO", "3"]);
    t.cmd(r, &["CLIENT", "TRACKING", "on"]);
    send(&mut t, r, &["GET", "k"]);
    let out = send(&mut t, r, &["SET", "k", "1"]);
    assert_eq!(out, [b"+OK\r\n".as_slice(), INVALIDATE_K].concat());
    // Inside MULTI, after the whole EXEC.
    send(&mut t, r, &["GET", "k"]);
    send(&mut t, r, &["MULTI"]);
    send(&mut t, r, &["SET", "k", "2"]);
    send(&mut t, r, &["GET", "k"]);
    let out = send(&mut t, r, &["EXEC"]);
    let exec_reply: &[u8] = b"*2\r\n+OK\r\n$1\r\n2\r\n";
    assert_eq!(out, [exec_reply, INVALIDATE_K].concat());
    t.cmd(r, &["CLIENT", "TRACKING", "on", "noloop"]);
    send(&mut t, r, &["GET", "k"]);
    assert_eq!(send(&mut t, r, &["SET", "k", "3"]), b"+OK\r\n");
}

#[test]
fn a_redirect_reaches_a_resp2_subscriber_and_flush_sends_null() {
    let mut t = TestEngine::new();
    let (sub, r, w) = (t.connect(), t.connect(), t.connect());
    send(&mut t, sub, &["SUBSCRIBE", "__redis__:invalidate"]);
    let id = sub.0.to_string();
    t.cmd(r, &["CLIENT", "TRACKING", "on", "redirect", &id]);
    assert_eq!(t.cmd(r, &["CLIENT", "GETREDIR"]), int(sub.0 as i64));
    send(&mut t, r, &["MGET", "k", "j"]);
    let out = sent_to(&mut t, w, &["SET", "k", "1"], sub);
    let msg = b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$1\r\nk\r\n";
    assert_eq!(out, msg, "{:?}", String::from_utf8_lossy(&out));
    let out = sent_to(&mut t, w, &["FLUSHALL"], sub);
    let null = b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n$-1\r\n";
    assert_eq!(out, null, "{:?}", String::from_utf8_lossy(&out));
    // The target gone, the redirect is broken.
    t.engine.disconnect(t.now, sub);
    send(&mut t, r, &["GET", "k"]);
    t.cmd(w, &["SET", "k", "2"]);
    let info = send(&mut t, r, &["CLIENT", "TRACKINGINFO"]);
    assert!(info.windows(15).any(|x| x == b"broken_redirect"));
}

#[test]
fn bcast_sends_one_message_per_prefix_at_the_end_of_the_input() {
    let mut t = TestEngine::new();
    let (b, w) = (t.connect(), t.connect());
    send(&mut t, b, &["HELLO", "3"]);
    let on = [
        "CLIENT", "TRACKING", "on", "bcast", "prefix", "x", "prefix", "y",
    ];
    assert_eq!(t.cmd(b, &on), simple("OK"));
    let mset = ["MSET", "x1", "1", "y1", "1", "z1", "1", "x0", "1"];
    let out = sent_to(&mut t, w, &mset, b);
    let want = b">2\r\n$10\r\ninvalidate\r\n*2\r\n$2\r\nx0\r\n$2\r\nx1\r\n\
                 >2\r\n$10\r\ninvalidate\r\n*1\r\n$2\r\ny1\r\n";
    assert_eq!(out, want);
    let overlap = ["CLIENT", "TRACKING", "on", "bcast", "prefix", "xa"];
    assert_eq!(
        t.cmd(b, &overlap),
        err("ERR Prefix 'xa' overlaps with an existing prefix 'x'. Prefixes for a single client must not overlap.")
    );
}

#[test]
fn optin_remembers_only_after_caching_yes() {
    let mut t = TestEngine::new();
    let r = t.connect();
    send(&mut t, r, &["HELLO", "3"]);
    t.cmd(r, &["CLIENT", "TRACKING", "on", "optin"]);
    send(&mut t, r, &["GET", "a"]);
    t.cmd(r, &["CLIENT", "CACHING", "yes"]);
    send(&mut t, r, &["GET", "b"]);
    send(&mut t, r, &["GET", "c"]);
    let tr = t.engine.server_tracking();
    assert!(!tr.is_tracked(b"a", r) && tr.is_tracked(b"b", r) && !tr.is_tracked(b"c", r));
    assert_eq!(
        t.cmd(r, &["CLIENT", "CACHING", "no"]),
        err("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
    );
    assert_eq!(t.cmd(r, &["RESET"]), simple("RESET"));
    assert_eq!(t.cmd(r, &["CLIENT", "GETREDIR"]), int(-1));
}

#[test]
fn the_table_limit_invalidates_keys_to_make_room() {
    let mut t = TestEngine::with_config(Config {
        tracking_table_max_keys: 2,
        ..Config::default()
    });
    let r = t.connect();
    send(&mut t, r, &["HELLO", "3"]);
    t.cmd(r, &["CLIENT", "TRACKING", "on"]);
    let out = send(&mut t, r, &["MGET", "a", "b", "c", "d"]);
    assert_eq!(t.engine.server_tracking().keys_count(), 2);
    let pushes = out.windows(10).filter(|x| x == b"invalidate").count();
    assert_eq!(pushes, 2, "{:?}", String::from_utf8_lossy(&out));
}

/// A write that runs from a timer, not from input (here a SET a CLIENT
/// PAUSE held, released when the pause ends), is broadcast in that same
/// turn, as Redis's `beforeSleep` does after any event. The turn's other
/// replies may go out before the next input, and a BCAST client that saw
/// them must already have its invalidation (the simulator's tracking
/// checker found a stale cached read when only the cron's turns broadcast).
#[test]
fn bcast_of_a_write_released_by_a_pause_goes_out_in_the_timer_s_turn() {
    let mut t = TestEngine::new();
    t.advance_ms(1);
    let (b, p, w) = (t.connect(), t.connect(), t.connect());
    send(&mut t, b, &["HELLO", "3"]);
    let on = ["CLIENT", "TRACKING", "on", "bcast", "prefix", "x"];
    assert_eq!(t.cmd(b, &on), simple("OK"));
    assert_eq!(t.cmd(p, &["CLIENT", "PAUSE", "20", "WRITE"]), simple("OK"));
    assert!(send(&mut t, w, &["SET", "x1", "1"]).is_empty(), "held");
    t.advance_ms(30);
    let sent = t.engine.pending_output(b).to_vec();
    let want: &[u8] = b">2\r\n$10\r\ninvalidate\r\n*1\r\n$2\r\nx1\r\n";
    assert_eq!(sent, want, "{:?}", String::from_utf8_lossy(&sent));
}
