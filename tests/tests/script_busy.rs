//! The busy window of a script over real sockets: a script looping
//! forever (`EVAL "while true do end" 0`) is stopped by SCRIPT KILL from
//! another redis-cli, which meanwhile gets -BUSY, on seedkv-server as on
//! redis-server (compared when it is installed). A low
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
