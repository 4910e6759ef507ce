//! acl_rules: ACL SETUSER with fuzzed rules, then the properties Redis's
//! ACL file relies on and the check's consistency:
//!
//! - nothing panics, and every request gets exactly one reply;
//! - a user that was set is described by ACL LIST, and those rules given to
//!   a fresh user describe it the same way (what ACL SAVE then LOAD does),
//!   unless a pattern holds a quote: Redis describes it as it is, and its
//!   own ACL LOAD then cannot split the line either; bytes that are not
//!   UTF-8 are described raw and compared as bytes;
//! - ACL DRYRUN's verdict on a fuzzed command is what the engine does when
//!   a client logged in as the user sends it: OK exactly when no NOPERM
//!   comes back.
//!
//! The input is split at `\n` into rules (the last line, split at spaces,
//! is the command to try), over an alphabet the seeds steer towards rule
//! syntax.

use seedkv_engine::resp::encode::encode_request;
use seedkv_engine::resp::{Frame, FrameDecoder};
use seedkv_engine::{ClientId, Config, ConnectInfo, Engine, Now};

/// Rules per input: enough for selectors and resets to interact.
const RULES_MAX: usize = 32;

/// Bytes per rule and per command argument.
const RULE_BYTES_MAX: usize = 64;

/// Arguments of the command tried.
const COMMAND_ARGS_MAX: usize = 6;

/// Wall-clock origin of a run (2023-11-14T22:13:20Z).
const UNIX_ORIGIN_US: u64 = 1_700_000_000_000_000;

struct Driver {
    engine: Engine,
    now: Now,
}

impl Driver {
    /// One request of `client` and its reply; `None` when the engine closed
    /// the connection instead.
    fn command(&mut self, client: ClientId, args: &[&[u8]]) -> Option<Frame> {
        self.engine
            .handle_input(self.now, client, &encode_request(args));
        while self.engine.poll_event().is_some() {}
        let mut decoder = FrameDecoder::new();
        while let Some(id) = self.engine.poll_transmit() {
            let out = self.engine.pending_output(id).to_vec();
            self.engine.consume_output(id, out.len());
            if id == client {
                decoder.feed(&out);
            }
        }
        let frame = decoder.next_frame().expect("valid RESP output");
        assert!(
            decoder.next_frame().expect("valid RESP").is_none(),
            "one request, one reply: {args:?}"
        );
        frame
    }
}

pub fn run(data: &[u8]) {
    let mut lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    let command: Vec<&[u8]> = lines
        .pop()
        .unwrap_or_default()
        .split(|&b| b == b' ')
        .filter(|a| !a.is_empty())
        .take(COMMAND_ARGS_MAX)
        .map(|a| &a[..a.len().min(RULE_BYTES_MAX)])
        .collect();
    let rules: Vec<&[u8]> = lines
        .into_iter()
        .take(RULES_MAX)
        .map(|r| &r[..r.len().min(RULE_BYTES_MAX)])
        .collect();
    let now = Now::from_ns(0, UNIX_ORIGIN_US);
    let mut d = Driver {
        engine: Engine::new(Config::default(), now),
        now,
    };
    let admin = d.engine.connect(now, ConnectInfo::default());
    let mut setuser: Vec<&[u8]> = vec![b"ACL", b"SETUSER", b"fz"];
    setuser.extend(&rules);
    let set = d
        .command(admin, &setuser)
        .expect("the admin stays connected");
    if matches!(set, Frame::Error(_)) {
        let missing = d.command(admin, &[b"ACL", b"GETUSER", b"fz"]);
        assert_eq!(
            missing,
            Some(Frame::Null),
            "a refused SETUSER creates nothing"
        );
        return;
    }
    round_trip(&mut d, admin);
    dryrun_agrees(&mut d, admin, &command);
}

/// The description of `fz`, applied to a fresh user, describes it alike.
fn round_trip(d: &mut Driver, admin: ClientId) {
    let described = description(d, admin, b"fz");
    // Redis's own ACL LOAD (sdssplitargs) cannot read such a line back
    // either: a quote opens a quoted argument, and every `isspace` byte
    // (not only the space ACL LIST joins with) or a NUL ends one.
    let unsplittable = |b: u8| matches!(b, b'"' | b'\'' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | 0);
    if described.iter().any(|&b| unsplittable(b)) {
        return;
    }
    // A pattern with a parenthesis can end (or open) a selector early when
    // the line is read back, in Redis's ACLMergeSelectorArguments as here.
    let parenthesised_pattern = described.split(|&b| b == b' ').any(|rule| {
        let rule = rule.strip_prefix(b"(").unwrap_or(rule);
        matches!(rule.first(), Some(b'~' | b'%' | b'&'))
            && rule.iter().any(|&b| b == b'(' || b == b')')
    });
    if parenthesised_pattern {
        return;
    }
    let rules = seedkv_engine::resp::parse::split_args(&described).expect("a description splits");
    let mut setuser: Vec<&[u8]> = vec![b"ACL", b"SETUSER", b"fz2", b"reset"];
    setuser.extend(rules.iter().map(Vec::as_slice));
    let reply = d.command(admin, &setuser);
    assert_eq!(
        reply,
        Some(Frame::Simple(b"OK".to_vec())),
        "rules {:?}",
        String::from_utf8_lossy(&described)
    );
    let again = description(d, admin, b"fz2");
    // `reset` adds `sanitize-payload` where `fz` may have neither flag.
    // Compared as bytes: patterns that are not UTF-8 are described raw.
    let (again, described) = (
        without_sanitize_flag(&again),
        without_sanitize_flag(&described),
    );
    assert_eq!(
        again,
        described,
        "{:?} vs {:?}",
        String::from_utf8_lossy(&again),
        String::from_utf8_lossy(&described)
    );
}

/// A description without its `sanitize-payload ` flag.
fn without_sanitize_flag(description: &[u8]) -> Vec<u8> {
    const FLAG: &[u8] = b"sanitize-payload ";
    match description.windows(FLAG.len()).position(|w| w == FLAG) {
        Some(at) => [&description[..at], &description[at + FLAG.len()..]].concat(),
        None => description.to_vec(),
    }
}

/// The rules of `user` in its ACL LIST line (after `user <name> `).
fn description(d: &mut Driver, admin: ClientId, user: &[u8]) -> Vec<u8> {
    let Some(Frame::Array(lines)) = d.command(admin, &[b"ACL", b"LIST"]) else {
        panic!("ACL LIST answers an array");
    };
    let prefix = [b"user ".as_slice(), user, b" "].concat();
    lines
        .into_iter()
        .find_map(|line| match line {
            Frame::Bulk(l) if l.starts_with(&prefix) => Some(l[prefix.len()..].to_vec()),
            _ => None,
        })
        .expect("the user is listed")
}

/// DRYRUN's verdict is what a client logged in as `fz` gets.
fn dryrun_agrees(d: &mut Driver, admin: ClientId, command: &[&[u8]]) {
    if command.is_empty() {
        return;
    }
    let mut dryrun: Vec<&[u8]> = vec![b"ACL", b"DRYRUN", b"fz"];
    dryrun.extend(command);
    let verdict = d
        .command(admin, &dryrun)
        .expect("the admin stays connected");
    let allowed = match verdict {
        Frame::Simple(ok) if ok == b"OK" => true,
        Frame::Bulk(_) => false,
        // An unknown command or a wrong arity: nothing to compare.
        _ => return,
    };
    // Only commands that leave the connection and the data alone are run.
    let name = command[0].to_ascii_lowercase();
    let harmless: &[&[u8]] = &[
        b"get", b"exists", b"strlen", b"publish", b"echo", b"ping", b"ttl",
    ];
    if !harmless.contains(&name.as_slice()) {
        return;
    }
    let on = d.command(admin, &[b"ACL", b"SETUSER", b"fz", b"on", b"nopass"]);
    assert_eq!(on, Some(Frame::Simple(b"OK".to_vec())));
    let client = d.engine.connect(d.now, ConnectInfo::default());
    let auth = d.command(client, &[b"AUTH", b"fz", b"x"]);
    assert_eq!(auth, Some(Frame::Simple(b"OK".to_vec())));
    let reply = d
        .command(client, command)
        .expect("a harmless command keeps the connection");
    let denied = matches!(&reply, Frame::Error(e) if e.starts_with(b"NOPERM"));
    assert_eq!(
        !denied, allowed,
        "DRYRUN said {allowed}, the command got {reply:?}"
    );
}
