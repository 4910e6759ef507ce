//! The Rust libraries' work is a script's work: a long `cjson.encode`,
//! `cjson.decode`, `cmsgpack.pack` or `struct.pack` is charged (the
//! EVAL's work units grow with it), runs in slices like a long Lua loop,
//! gets other clients `-BUSY` past the threshold, and SCRIPT KILL stops it
//! in the middle of the library call.

use crate::resp::Frame;
use crate::testing::{err, int, simple, TestEngine, TestHost};
use crate::{ClientId, Config};

const BUSY: &str =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
const THRESHOLD_MS: u64 = 100;

fn host() -> TestHost {
    TestHost::new(Config {
        record_executions: true,
        busy_reply_threshold_ms: THRESHOLD_MS,
        ..Config::default()
    })
}

/// Starts `script` on a new client: it is still running after its first
/// slice, inside one library call (the Lua around it is a few
/// instructions).
fn start(h: &mut TestHost, script: &str) -> ClientId {
    let c = h.connect();
    h.send(c, &["EVAL", script, "0"]);
    assert!(h.engine.script_running(), "suspended inside the call");
    assert_eq!(h.frames(c), Vec::<Frame>::new());
    c
}

/// Each script is one long library call after a `string.rep` (one C call).
const LONG_CALLS: &[&str] = &[
    "return #cjson.encode(string.rep('a', 40000000))",
    "return #cjson.decode('\"' .. string.rep('a', 40000000) .. '\"')",
    "return #cmsgpack.pack(string.rep('a', 40000000))",
    "return #struct.pack(string.rep('x', 4000000))",
];

#[test]
fn a_long_library_call_is_sliced_busy_and_killable() {
    for script in LONG_CALLS {
        let mut h = host();
        let other = h.connect();
        let c = start(&mut h, script);
        h.advance_ms(THRESHOLD_MS);
        assert_eq!(h.cmd(other, &["PING"]), err(BUSY), "{script}");
        assert_eq!(h.cmd(other, &["SCRIPT", "KILL"]), simple("OK"));
        h.run_slices(2);
        assert!(!h.engine.script_running(), "{script}");
        let sha = super::sha1_hex(script.as_bytes());
        assert_eq!(
            h.frames(c),
            vec![err(&format!(
                "ERR Script killed by user with SCRIPT KILL... script: {sha}, on @user_script:1."
            ))],
            "{script}"
        );
        assert_eq!(h.cmd(other, &["PING"]), simple("PONG"));
    }
}

#[test]
fn a_long_library_call_left_alone_finishes_with_its_result() {
    let mut h = host();
    let c = start(&mut h, LONG_CALLS[0]);
    let slices = h.finish_script(10_000);
    assert!(slices >= 2, "several slices ({slices})");
    assert_eq!(h.frames(c), vec![int(40_000_002)]);
}

/// Work units of `EVAL script 0` on a fresh engine.
fn eval_work(script: &str) -> u64 {
    let mut t = TestEngine::with_config(Config {
        record_executions: true,
        ..Config::default()
    });
    let c = t.connect();
    t.cmd(c, &["EVAL", script, "0"]);
    t.executed_work("eval")
}

#[test]
fn library_work_is_charged_in_proportion() {
    let cases = [
        ("return #cjson.encode(string.rep('a', {n}))", 1),
        (
            "return #cjson.decode('\"' .. string.rep('a', {n}) .. '\"')",
            1,
        ),
        ("return #cmsgpack.pack(string.rep('a', {n}))", 1),
        ("return #struct.pack(string.rep('x', {n}))", 16),
        (
            "local t = {} for i = 1, {n} / 256 do t[i] = i end return #cjson.encode(t)",
            1,
        ),
    ];
    for (template, scale) in cases {
        let small = eval_work(&template.replace("{n}", &(100_000 / scale).to_string()));
        let large = eval_work(&template.replace("{n}", &(10_000_000 / scale).to_string()));
        assert!(
            large > 20 * small.max(1),
            "{template}: {small} work units for the small input, {large} for the large one"
        );
    }
}
