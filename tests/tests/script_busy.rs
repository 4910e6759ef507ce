//! The busy window of a script over real sockets: a script looping
//! forever (`EVAL "while true do end" 0`) is stopped by SCRIPT KILL from
//! another redis-cli, which meanwhile gets -BUSY, on seedkv-server as on
//! redis-server (compared when it is installed); a function looping
//! forever gives the function's -BUSY, shows in FUNCTION STATS and is
//! stopped by FUNCTION KILL, not SCRIPT KILL. A low
//! `busy-reply-threshold` keeps it fast; nothing asserts wall-clock time.

use seedkv_engine::resp::Frame;
use seedkv_tests::{cli, redis_cli, redis_server, RespClient, ServerProcess};

/// redis-cli PINGs until one is answered -BUSY: the first may reach the
/// server before the script starts (then it gets PONG and is retried).
const BUSY_ATTEMPTS_MAX: usize = 100;

/// What the clients saw: the other client's -BUSY, its SCRIPT KILL, the
/// script's reply, a PING after it and SCRIPT KILL with nothing running.
fn busy_transcript(port: u16) -> Vec<String> {
    let mut script = RespClient::connect(port);
    let set = script.command(&[b"CONFIG", b"SET", b"busy-reply-threshold", b"50"]);
    assert_eq!(set, Frame::Simple(b"OK".to_vec()));
    script.send(&[b"EVAL", b"while true do end", b"0"]);
    // redis-cli ends an error with an empty line, a reply with none.
    let cli = |args: &[&str]| cli(port, args).trim_end().to_string();
    let mut busy = None;
    for _ in 0..BUSY_ATTEMPTS_MAX {
        let reply = cli(&["PING"]);
        if reply.starts_with("BUSY") {
            busy = Some(reply);
            break;
        }
        assert_eq!(reply, "PONG", "before the script starts");
    }
    let busy = busy.expect("redis-cli got -BUSY while the script ran");
    let get = cli(&["GET", "k"]);
    let kill = cli(&["SCRIPT", "KILL"]);
    let killed = match script.next_reply() {
        Frame::Error(e) => String::from_utf8_lossy(&e).into_owned(),
        other => panic!("the killed script's reply: {other:?}"),
    };
    let ping = cli(&["PING"]);
    let not_busy = cli(&["SCRIPT", "KILL"]);
    vec![busy, get, kill, killed, ping, not_busy]
}

#[test]
fn script_kill_from_another_redis_cli_stops_a_script_looping_forever() {
    if redis_cli().is_none() {
        return;
    }
    let server = ServerProcess::seedkv(&[]);
    let seen = busy_transcript(server.port);
    let busy =
        "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
    assert_eq!(seen[0], busy);
    assert_eq!(seen[1], busy);
    assert_eq!(seen[2], "OK");
    assert_eq!(
        seen[3],
        "ERR Script killed by user with SCRIPT KILL... script: \
         694a5fe1ddb97a4c6a1bf299d9537c7d3d0f84e7, on @user_script:1."
    );
    assert_eq!(seen[4], "PONG");
    assert_eq!(seen[5], "NOTBUSY No scripts in execution right now.");
    if let Some(redis) = redis_server() {
        assert_eq!(busy_transcript(redis.port), seen, "as redis-server 7.0.15");
    }
}

/// A library with a function that loops forever.
const SPIN_LIBRARY: &str =
    "#!lua name=busylib\nredis.register_function('spin', function(keys, args) while true do end end)";

/// Sends `call` on `caller` and PINGs with redis-cli until it is answered
/// -BUSY (the first PING may come before the call starts); returns that.
fn wait_busy(port: u16, caller: &mut RespClient, call: &[&[u8]]) -> String {
    caller.send(call);
    for _ in 0..BUSY_ATTEMPTS_MAX {
        let reply = cli(port, &["PING"]).trim_end().to_string();
        if reply.starts_with("BUSY") {
            return reply;
        }
        assert_eq!(reply, "PONG", "before the call starts");
    }
    panic!("redis-cli got no -BUSY while {call:?} ran");
}

/// FUNCTION STATS with `duration_ms`'s value (which depends on the
/// machine's speed) replaced by a mark once checked to be an integer.
fn function_stats(port: u16) -> Frame {
    let mut stats = RespClient::connect(port).command(&[b"FUNCTION", b"STATS"]);
    if let Frame::Array(items) = &mut stats {
        if let Some(Frame::Array(running)) = items.get_mut(1) {
            if let Some(duration) = running.get_mut(5) {
                assert!(matches!(duration, Frame::Integer(_)), "{duration:?}");
                *duration = Frame::Simple(b"<duration_ms>".to_vec());
            }
        }
    }
    stats
}

/// What the clients saw around a long function, then around a long
/// script: the kinds' -BUSY texts, FUNCTION STATS, KILL of the wrong kind
/// and of the right one, the killed function's error.
fn function_transcript(port: u16) -> Vec<Frame> {
    let mut caller = RespClient::connect(port);
    let set = caller.command(&[b"CONFIG", b"SET", b"busy-reply-threshold", b"50"]);
    assert_eq!(set, Frame::Simple(b"OK".to_vec()));
    let load = caller.command(&[b"FUNCTION", b"LOAD", b"REPLACE", SPIN_LIBRARY.as_bytes()]);
    assert_eq!(load, Frame::Bulk(b"busylib".to_vec()));
    let other = |args: &[&[u8]]| RespClient::connect(port).command(args);
    let mut seen = Vec::new();
    let busy = wait_busy(port, &mut caller, &[b"FCALL", b"spin", b"1", b"k", b"a"]);
    seen.push(Frame::Error(busy.into_bytes()));
    seen.push(other(&[b"GET", b"k"]));
    seen.push(function_stats(port));
    seen.push(other(&[b"SCRIPT", b"KILL"]));
    seen.push(other(&[b"FUNCTION", b"KILL"]));
    seen.push(caller.next_reply());
    seen.push(other(&[b"FUNCTION", b"KILL"]));
    seen.push(function_stats(port));
    let busy = wait_busy(port, &mut caller, &[b"EVAL", b"while true do end", b"0"]);
    seen.push(Frame::Error(busy.into_bytes()));
    seen.push(other(&[b"FUNCTION", b"STATS"]));
    seen.push(other(&[b"FUNCTION", b"KILL"]));
    seen.push(other(&[b"SCRIPT", b"KILL"]));
    seen.push(caller.next_reply());
    seen
}

#[test]
fn function_kill_stops_a_function_looping_forever_and_function_stats_shows_it() {
    if redis_cli().is_none() {
        return;
    }
    let server = ServerProcess::seedkv(&[]);
    let seen = function_transcript(server.port);
    let error = |s: &str| Frame::Error(s.as_bytes().to_vec());
    let bulk = |s: &str| Frame::Bulk(s.as_bytes().to_vec());
    let busy_function =
        "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";
    let busy_eval =
        "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
    assert_eq!(seen[0], error(busy_function));
    assert_eq!(seen[1], error(busy_function));
    let running = Frame::Array(vec![
        bulk("name"),
        bulk("spin"),
        bulk("command"),
        Frame::Array(["FCALL", "spin", "1", "k", "a"].map(bulk).to_vec()),
        bulk("duration_ms"),
        Frame::Simple(b"<duration_ms>".to_vec()),
    ]);
    let engines = |running: Frame| {
        Frame::Array(vec![
            bulk("running_script"),
            running,
            bulk("engines"),
            Frame::Array(vec![
                bulk("LUA"),
                Frame::Array(vec![
                    bulk("libraries_count"),
                    Frame::Integer(1),
                    bulk("functions_count"),
                    Frame::Integer(1),
                ]),
            ]),
        ])
    };
    assert_eq!(seen[2], engines(running));
    assert_eq!(seen[3], error(busy_function));
    assert_eq!(seen[4], Frame::Simple(b"OK".to_vec()));
    assert_eq!(
        seen[5],
        error("ERR Script killed by user with SCRIPT KILL... script: spin, on @user_function:2.")
    );
    assert_eq!(seen[6], error("NOTBUSY No scripts in execution right now."));
    assert_eq!(seen[7], engines(Frame::Null));
    assert_eq!(seen[8], error(busy_eval));
    assert_eq!(seen[9], error(busy_eval));
    assert_eq!(seen[10], error(busy_eval));
    assert_eq!(seen[11], Frame::Simple(b"OK".to_vec()));
    assert!(
        matches!(&seen[12], Frame::Error(e) if e.starts_with(b"ERR Script killed by user")),
        "{:?}",
        seen[12]
    );
    if let Some(redis) = redis_server() {
        assert_eq!(
            function_transcript(redis.port),
            seen,
            "as redis-server 7.0.15"
        );
    }
}
