//! A long script's busy window, as Redis 7.0.15 runs it: the script runs
//! in slices; before `busy-reply-threshold` other clients' requests wait;
//! past it they get `-BUSY` unless allowed while busy (SCRIPT KILL,
//! SHUTDOWN NOSAVE, MULTI bookkeeping); SCRIPT KILL stops a script that has
//! not written and is refused for one that has; disconnects meanwhile are
//! safe. The texts were taken from redis-server 7.0.15 with two
//! redis-cli's.

use seedkv_engine::resp::Frame;
use seedkv_engine::testing::{bulk, err, int, simple, TestHost};
use seedkv_engine::{ClientId, Config};

const BUSY: &str =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
const FOREVER: &str = "while true do end";
const THRESHOLD_MS: u64 = 100;

fn host() -> TestHost {
    let mut h = TestHost::new(Config {
        record_executions: true,
        shutdown_command: true,
        busy_reply_threshold_ms: THRESHOLD_MS,
        ..Config::default()
    });
    h.forbid_flush_first_closes = true;
    h
}

/// Starts `script` on a new client; it is still running after its first
/// slice.
fn start(h: &mut TestHost, script: &str) -> ClientId {
    let c = h.connect();
    h.send(c, &["EVAL", script, "0"]);
    assert!(h.engine.script_running(), "the script is suspended");
    assert_eq!(h.frames(c), vec![], "no reply while it runs");
    assert_eq!(h.engine.poll_timeout(), 0, "its next slice is due at once");
    c
}

#[test]
fn before_the_threshold_others_wait_then_get_busy_and_kill_stops_it() {
    let mut h = host();
    let other = h.connect();
    let script = start(&mut h, FOREVER);
    h.send(other, &["PING"]);
    h.advance_ms(THRESHOLD_MS - 1);
    assert_eq!(h.frames(other), vec![], "before the threshold PING waits");
    // The threshold passes: the waiting PING is answered -BUSY.
    h.advance_ms(1);
    assert_eq!(h.frames(other), vec![err(BUSY)]);
    assert!(h.engine.script_running());
    assert_eq!(h.cmd(other, &["GET", "k"]), err(BUSY));
    assert_eq!(h.cmd(other, &["SHUTDOWN"]), err(BUSY));
    // Unknown commands and arity keep their own errors.
    assert_eq!(
        h.cmd(other, &["SCRIPT", "KILL", "x"]),
        err("ERR wrong number of arguments for 'script|kill' command")
    );
    assert_eq!(h.cmd(other, &["SCRIPT", "KILL"]), simple("OK"));
    h.run_slices(1);
    assert!(!h.engine.script_running());
    let sha = seedkv_engine::scripting::sha1_hex(FOREVER.as_bytes());
    assert_eq!(
        h.frames(script),
        vec![err(&format!(
            "ERR Script killed by user with SCRIPT KILL... script: {sha}, on @user_script:1."
        ))]
    );
    assert_eq!(
        h.cmd(other, &["SCRIPT", "KILL"]),
        err("NOTBUSY No scripts in execution right now.")
    );
    assert_eq!(h.cmd(script, &["PING"]), simple("PONG"));
}

#[test]
fn a_script_that_wrote_is_unkillable_and_shutdown_nosave_stops_the_server() {
    let mut h = host();
    let other = h.connect();
    start(&mut h, "redis.call('SET', 'k', 'v') while true do end");
    h.advance_ms(THRESHOLD_MS);
    assert_eq!(
        h.cmd(other, &["SCRIPT", "KILL"]),
        err("UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.")
    );
    assert!(h.shutdowns.is_empty());
    h.send(other, &["SHUTDOWN", "NOSAVE"]);
    assert_eq!(h.shutdowns.len(), 1, "SHUTDOWN NOSAVE runs while busy");
}

#[test]
fn a_long_script_that_ends_replies_then_the_waiting_requests_run_in_order() {
    let mut h = host();
    let other = h.connect();
    let script = start(
        &mut h,
        "local n = 0 for i = 1, 200000 do n = n + 1 end redis.call('SET', 'k', n) return n",
    );
    h.pipeline(other, &[&["GET", "k"], &["INCR", "k"]]);
    let slices = h.finish_script(1000);
    assert!(slices >= 2, "it ran in several slices ({slices})");
    assert_eq!(h.frames(script), vec![int(200000)]);
    // The requests that waited saw the script's whole effect.
    assert_eq!(h.frames(other), vec![bulk("200000"), int(200001)]);
    // The EVAL is recorded once, after its call, with every slice's work.
    let names = h.take_executed();
    assert_eq!(names, vec!["set", "eval", "get", "incr"]);
    assert!(h.script_slices >= 2);
}

#[test]
fn multi_in_busy_mode_is_aborted_at_exec() {
    let mut h = host();
    let other = h.connect();
    start(&mut h, FOREVER);
    h.advance_ms(THRESHOLD_MS);
    assert_eq!(h.cmd(other, &["MULTI"]), simple("OK"));
    assert_eq!(h.cmd(other, &["SET", "k", "v"]), err(BUSY));
    assert_eq!(
        h.cmd(other, &["EXEC"]),
        err(&format!(
            "EXECABORT Transaction discarded because of: {BUSY}"
        ))
    );
    assert_eq!(h.cmd(other, &["SCRIPT", "KILL"]), simple("OK"));
    h.run_slices(1);
    assert!(!h.engine.script_running());
    assert_eq!(h.cmd(other, &["EXISTS", "k"]), int(0));
}

#[test]
fn disconnects_while_a_script_runs_are_safe() {
    let mut h = host();
    let waiting = h.connect();
    let script = start(&mut h, FOREVER);
    h.send(waiting, &["PING"]);
    h.engine.disconnect(h.now, waiting);
    // The script's own client goes: the script keeps running.
    h.engine.disconnect(h.now, script);
    h.advance_ms(THRESHOLD_MS);
    assert!(h.engine.script_running());
    let killer = h.connect();
    assert_eq!(h.cmd(killer, &["SCRIPT", "KILL"]), simple("OK"));
    h.run_slices(1);
    assert!(!h.engine.script_running());
    assert_eq!(
        h.engine.client_count(),
        1,
        "the script's client left at its end"
    );
    assert_eq!(h.cmd(killer, &["PING"]), simple("PONG"));
}

#[test]
fn a_script_inside_exec_runs_inside_the_request() {
    let mut h = host();
    let c = h.connect();
    h.pipeline(
        c,
        &[
            &["MULTI"],
            &[
                "EVAL",
                "local n = 0 for i = 1, 200000 do n = n + 1 end return n",
                "0",
            ],
            &["EXEC"],
        ],
    );
    assert!(!h.engine.script_running());
    let frames = h.frames(c);
    assert_eq!(frames.last(), Some(&Frame::Array(vec![int(200000)])));
}

#[test]
fn same_inputs_and_times_give_the_same_outputs() {
    let run = || {
        let mut h = host();
        let other = h.connect();
        let script = start(
            &mut h,
            "local t = {} for i = 1, 300000 do t[i % 7] = i end return t[3]",
        );
        h.advance_ms(THRESHOLD_MS);
        let busy = h.call(other, &["PING"]);
        h.finish_script(1000);
        (busy, h.frames(script), h.take_executed(), h.script_slices)
    };
    assert_eq!(run(), run());
}

const BUSY_FUNCTION: &str =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";

/// A library with a function looping forever, one that writes first, and
/// a no-writes one.
const LIBRARY: &str = "#!lua name=lib\n\
    redis.register_function('spin', function(keys, args) while true do end end)\n\
    redis.register_function('spinw', function(keys, args) redis.call('SET', 'x', '1') while true do end end)";

/// Loads [`LIBRARY`] and starts `FCALL <function> 1 k a` on a new client;
/// it is still running after its first slice.
fn start_function(h: &mut TestHost, function: &str) -> ClientId {
    let c = h.connect();
    assert_eq!(h.cmd(c, &["FUNCTION", "LOAD", LIBRARY]), bulk("lib"));
    h.send(c, &["FCALL", function, "1", "k", "a"]);
    assert!(h.engine.script_running(), "the function is suspended");
    assert_eq!(h.frames(c), vec![], "no reply while it runs");
    c
}

#[test]
fn a_long_function_gives_busy_and_function_kill_stops_it() {
    let mut h = host();
    let other = h.connect();
    let caller = start_function(&mut h, "spin");
    h.send(other, &["GET", "k"]);
    h.advance_ms(THRESHOLD_MS - 1);
    assert_eq!(h.frames(other), vec![], "before the threshold GET waits");
    h.advance_ms(1);
    assert_eq!(h.frames(other), vec![err(BUSY_FUNCTION)]);
    // FUNCTION STATS names the function, its command and how long it ran.
    let stats = h.cmd(other, &["FUNCTION", "STATS"]);
    let Frame::Array(items) = stats else {
        panic!("FUNCTION STATS: {stats:?}")
    };
    assert_eq!(items[0], bulk("running_script"));
    assert_eq!(
        items[1],
        Frame::Array(vec![
            bulk("name"),
            bulk("spin"),
            bulk("command"),
            Frame::Array(vec![
                bulk("FCALL"),
                bulk("spin"),
                bulk("1"),
                bulk("k"),
                bulk("a")
            ]),
            bulk("duration_ms"),
            int(THRESHOLD_MS as i64),
        ])
    );
    // SCRIPT KILL does not stop a function; FUNCTION KILL does.
    assert_eq!(h.cmd(other, &["SCRIPT", "KILL"]), err(BUSY_FUNCTION));
    assert_eq!(h.cmd(other, &["FUNCTION", "KILL"]), simple("OK"));
    h.run_slices(1);
    assert!(!h.engine.script_running());
    assert_eq!(
        h.frames(caller),
        vec![err(
            "ERR Script killed by user with SCRIPT KILL... script: spin, on @user_function:2."
        )]
    );
    assert_eq!(
        h.cmd(other, &["FUNCTION", "KILL"]),
        err("NOTBUSY No scripts in execution right now.")
    );
    let stats = h.cmd(other, &["FUNCTION", "STATS"]);
    assert!(
        matches!(&stats, Frame::Array(items) if items[1] == Frame::Null),
        "nothing runs: {stats:?}"
    );
}

#[test]
fn function_kill_does_not_stop_a_script_nor_function_stats_show_it() {
    let mut h = host();
    let other = h.connect();
    start(&mut h, FOREVER);
    h.advance_ms(THRESHOLD_MS);
    assert_eq!(h.cmd(other, &["FUNCTION", "KILL"]), err(BUSY));
    assert_eq!(h.cmd(other, &["FUNCTION", "STATS"]), err(BUSY));
    assert_eq!(h.cmd(other, &["SCRIPT", "KILL"]), simple("OK"));
    h.run_slices(1);
    assert!(!h.engine.script_running());
}

#[test]
fn a_function_that_wrote_is_unkillable() {
    let mut h = host();
    let other = h.connect();
    start_function(&mut h, "spinw");
    h.advance_ms(THRESHOLD_MS);
    let unkillable = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.";
    assert_eq!(h.cmd(other, &["FUNCTION", "KILL"]), err(unkillable));
    assert_eq!(h.cmd(other, &["SCRIPT", "KILL"]), err(unkillable));
    h.send(other, &["SHUTDOWN", "NOSAVE"]);
    assert_eq!(h.shutdowns.len(), 1, "SHUTDOWN NOSAVE runs while busy");
}

#[test]
fn a_long_function_that_ends_replies_with_the_whole_effect() {
    let mut h = host();
    let c = h.connect();
    let other = h.connect();
    let library = "#!lua name=count\n\
        redis.register_function('count', function(keys, args) \
        local n = 0 for i = 1, 200000 do n = n + 1 end redis.call('SET', keys[1], n) return n end)";
    assert_eq!(h.cmd(c, &["FUNCTION", "LOAD", library]), bulk("count"));
    h.send(c, &["FCALL", "count", "1", "k"]);
    h.send(other, &["GET", "k"]);
    let slices = h.finish_script(1000);
    assert!(slices >= 2, "it ran in several slices ({slices})");
    assert_eq!(h.frames(c), vec![int(200000)]);
    assert_eq!(h.frames(other), vec![bulk("200000")]);
}
