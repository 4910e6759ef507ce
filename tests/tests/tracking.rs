//! Client-side caching against a real redis-server 7.0: the same scenario
//! (RESP3 pushes, RESP2 redirect to a subscribed client, BCAST with
//! prefixes and NOLOOP, OPTIN/OPTOUT with CLIENT CACHING, invalidations
//! after a MULTI's reply, flushes, a broken redirect, every CLIENT TRACKING
//! error) runs on both servers, and every frame each connection receives
//! must be the same.
//!
//! After each command, every connection is synced with a PING: the frames
//! it receives before its PONG are what the step delivered to it. Skipped,
//! with a printed reason, when redis-server is not installed.

use seedkv_tests::{redis_server, RespClient, ServerProcess};

/// Connections of the scenario.
const CONNECTIONS_COUNT: usize = 6;

/// One step: a connection runs a command. `{id N}` in an argument is
/// replaced by connection N's client id.
type Step = (usize, &'static [&'static str]);

/// The scenario. Connection 0 is a RESP2 redirect target subscribed to
/// `__redis__:invalidate`, 1 tracks with REDIRECT to it, 2 is a RESP3
/// tracker, 3 a RESP3 BCAST tracker with prefixes and NOLOOP, 4 writes,
/// 5 is a RESP3 OPTIN/OPTOUT tracker.
const STEPS: &[Step] = &[
    (2, &["HELLO", "3"]),
    (3, &["HELLO", "3"]),
    (5, &["HELLO", "3"]),
    (0, &["SUBSCRIBE", "__redis__:invalidate"]),
    // Errors, in Redis's order of checks.
    (2, &["CLIENT", "TRACKING", "on", "optin", "optout"]),
    (2, &["CLIENT", "TRACKING", "on", "prefix", "a"]),
    (2, &["CLIENT", "TRACKING", "on", "bcast", "optin"]),
    (2, &["CLIENT", "TRACKING", "on", "redirect", "0"]),
    (2, &["CLIENT", "TRACKING", "on", "redirect", "x"]),
    (
        2,
        &[
            "CLIENT", "TRACKING", "on", "redirect", "{id 0}", "redirect", "{id 0}",
        ],
    ),
    (2, &["CLIENT", "TRACKING", "on", "redirect"]),
    (2, &["CLIENT", "TRACKING", "on", "bogus"]),
    (2, &["CLIENT", "TRACKING", "maybe"]),
    (
        2,
        &[
            "CLIENT", "TRACKING", "on", "bcast", "prefix", "a", "prefix", "ab",
        ],
    ),
    (2, &["CLIENT", "CACHING", "yes"]),
    (2, &["CLIENT", "CACHING", "yes", "extra"]),
    (2, &["CLIENT", "GETREDIR"]),
    (2, &["CLIENT", "TRACKINGINFO"]),
    // Plain tracking in RESP3, and through a redirect in RESP2.
    (1, &["CLIENT", "TRACKING", "on", "redirect", "{id 0}"]),
    (1, &["CLIENT", "GETREDIR"]),
    (2, &["CLIENT", "TRACKING", "on"]),
    (2, &["CLIENT", "TRACKING", "on", "bcast"]),
    (2, &["CLIENT", "TRACKINGINFO"]),
    (1, &["MGET", "a", "b", "c"]),
    (2, &["MGET", "a", "b"]),
    (4, &["SET", "a", "1"]),
    (4, &["SET", "a", "2"]),
    (4, &["MSET", "b", "1", "c", "1"]),
    (2, &["GET", "a"]),
    (4, &["EXPIRE", "a", "100"]),
    (4, &["DEL", "a"]),
    // A tracker's own write: the invalidation follows its reply, and
    // follows a whole EXEC.
    (2, &["GET", "s"]),
    (2, &["SET", "s", "1"]),
    (2, &["GET", "s"]),
    (2, &["MULTI"]),
    (2, &["SET", "s", "2"]),
    (2, &["GET", "s"]),
    (2, &["EXEC"]),
    (2, &["GET", "s"]),
    (4, &["INCR", "s"]),
    // BCAST with prefixes, NOLOOP and one message per prefix.
    (
        3,
        &[
            "CLIENT", "TRACKING", "on", "bcast", "prefix", "x", "prefix", "y", "noloop",
        ],
    ),
    (3, &["CLIENT", "TRACKING", "on", "bcast", "prefix", "xy"]),
    (3, &["CLIENT", "TRACKINGINFO"]),
    (4, &["MSET", "x1", "1", "y1", "1", "z1", "1", "x0", "1"]),
    (3, &["SET", "x2", "1"]),
    (4, &["MULTI"]),
    (4, &["SET", "x9", "1"]),
    (4, &["DEL", "x9"]),
    (4, &["EXEC"]),
    // OPTIN: only reads after CACHING yes are tracked; OPTOUT the other
    // way round.
    (5, &["CLIENT", "TRACKING", "on", "optin"]),
    (5, &["CLIENT", "CACHING", "no"]),
    (5, &["GET", "o1"]),
    (5, &["CLIENT", "CACHING", "yes"]),
    (5, &["CLIENT", "TRACKINGINFO"]),
    (5, &["GET", "o2"]),
    (5, &["GET", "o3"]),
    (4, &["MSET", "o1", "1", "o2", "1", "o3", "1"]),
    (5, &["CLIENT", "TRACKING", "on", "optout"]),
    (5, &["CLIENT", "TRACKING", "off"]),
    (5, &["CLIENT", "TRACKING", "on", "optout"]),
    (5, &["CLIENT", "CACHING", "no"]),
    (5, &["GET", "o1"]),
    (5, &["GET", "o2"]),
    (4, &["MSET", "o1", "2", "o2", "2"]),
    (5, &["CLIENT", "TRACKINGINFO"]),
    (4, &["INFO", "stats"]),
    // Flushes tell every tracker, BCAST ones too, with a null.
    (1, &["GET", "f"]),
    (4, &["FLUSHDB"]),
    (4, &["FLUSHALL"]),
    // RESET turns tracking off.
    (5, &["RESET"]),
    (5, &["CLIENT", "TRACKINGINFO"]),
    // RESET also takes a BCAST client out of its prefixes: a write under
    // them no longer reaches it, and tracking starts afresh.
    (3, &["RESET"]),
    (4, &["SET", "x5", "1"]),
    (3, &["CLIENT", "TRACKINGINFO"]),
    (3, &["HELLO", "3"]),
    (3, &["CLIENT", "TRACKING", "on"]),
    (3, &["CLIENT", "TRACKINGINFO"]),
    (4, &["INFO", "clients"]),
    // A read remembers the keys COMMAND GETKEYS names: a subcommand's,
    // after a numkeys or a keyword, SORT_RO's; SORT ... STORE invalidates
    // its destination.
    (2, &["OBJECT", "ENCODING", "k1"]),
    (2, &["MEMORY", "USAGE", "k2"]),
    (2, &["ZUNION", "2", "z1", "z2"]),
    (2, &["XREAD", "COUNT", "1", "STREAMS", "st1", "0"]),
    (2, &["SORT_RO", "l1"]),
    (2, &["LCS", "k3", "k4"]),
    (2, &["GET", "sd"]),
    (4, &["MSET", "k1", "1", "k2", "2", "k3", "3"]),
    (4, &["SET", "k4", "4"]),
    (4, &["ZADD", "z2", "1", "m"]),
    (4, &["XADD", "st1", "1-1", "f", "v"]),
    (4, &["RPUSH", "l1", "a"]),
    (4, &["SORT", "l1", "ALPHA", "STORE", "sd"]),
];

/// Runs the scenario on `port`; returns what each step delivered to each
/// connection, one line per frame, with client ids replaced by names.
fn run(port: u16) -> Vec<String> {
    let mut conns: Vec<RespClient> = (0..CONNECTIONS_COUNT)
        .map(|_| RespClient::connect(port))
        .collect();
    let ids: Vec<String> = conns
        .iter_mut()
        .map(|c| c.command(&[b"CLIENT", b"ID"]).render())
        .collect();
    let mut transcript = Vec::new();
    // A connection inside MULTI would queue the PING that syncs it.
    let mut in_multi = [false; CONNECTIONS_COUNT];
    for (step, &(who, args)) in STEPS.iter().enumerate() {
        match args[0] {
            "MULTI" => in_multi[who] = true,
            "EXEC" | "DISCARD" => in_multi[who] = false,
            _ => {}
        }
        let args: Vec<Vec<u8>> = args.iter().map(|a| substitute(a, &ids)).collect();
        let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        let reply = conns[who].command(&refs);
        let rendered = rename(STEPS[step].1[0], &reply.render(), &ids);
        transcript.push(format!("{step} [{who}] {:?} -> {rendered}", STEPS[step].1));
        for (n, c) in conns.iter_mut().enumerate() {
            if in_multi[n] {
                continue;
            }
            for frame in drain(c) {
                transcript.push(format!("{step}   [{n}] got {frame}"));
            }
        }
    }
    transcript
}

/// The frames `c` received before the reply to a PING.
fn drain(c: &mut RespClient) -> Vec<String> {
    c.send(&[b"PING"]);
    let mut frames = Vec::new();
    loop {
        let f = c.next_reply().render();
        if f.contains("PONG") || f.contains("pong") {
            return frames;
        }
        frames.push(f);
    }
}

fn substitute(arg: &str, ids: &[String]) -> Vec<u8> {
    match arg.strip_prefix("{id ").and_then(|r| r.strip_suffix('}')) {
        Some(n) => id_number(&ids[n.parse::<usize>().expect("a connection")]).into_bytes(),
        None => arg.as_bytes().to_vec(),
    }
}

/// The digits of a rendered integer reply.
fn id_number(rendered: &str) -> String {
    rendered.chars().filter(char::is_ascii_digit).collect()
}

/// Replaces the connections' ids by their names in a rendered reply of
/// `command`: where a CLIENT subcommand prints an id, and HELLO's `id`
/// (other integers, small on a fresh server, are left alone).
fn rename(command: &str, rendered: &str, ids: &[String]) -> String {
    let mut out = rendered.to_string();
    for (n, id) in ids.iter().enumerate() {
        let number = id_number(id);
        out = match command {
            "CLIENT" => out.replace(
                &format!("(integer) {number}"),
                &format!("(integer) <id {n}>"),
            ),
            "HELLO" => out.replace(
                &format!("\"id\" => (integer) {number}"),
                &format!("\"id\" => (integer) <id {n}>"),
            ),
            _ => out,
        };
    }
    out
}

/// INFO stats lines that differ between any two servers.
fn comparable(line: &str) -> String {
    if !line.contains("INFO") {
        return line.to_string();
    }
    line.split("\\r\\n")
        .filter(|l| l.starts_with("tracking_"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn tracking_matches_redis_server() {
    let Some(redis) = redis_server() else { return };
    let seedkv = ServerProcess::seedkv(&[]);
    let want: Vec<String> = run(redis.port).iter().map(|l| comparable(l)).collect();
    let got: Vec<String> = run(seedkv.port).iter().map(|l| comparable(l)).collect();
    let mut report = String::new();
    for i in 0..want.len().max(got.len()) {
        let (w, g) = (want.get(i), got.get(i));
        if w != g {
            report.push_str(&format!("redis : {w:?}\nseedkv: {g:?}\n"));
        }
    }
    assert!(
        report.is_empty(),
        "tracking differs from redis-server:\n{report}"
    );
    assert!(
        want.iter().any(|l| l.contains("invalidate")),
        "no invalidation seen"
    );
}
