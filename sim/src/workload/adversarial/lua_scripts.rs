//! Scripts at Lua's limits: recursion to "stack overflow", deeply nested
//! tables and huge tables returned as replies, binary strings through
//! ARGV. Every script here takes no keys and writes nothing, and its reply
//! is a function of its arguments: [`judge_script_reply`] says what Redis
//! 7.0.15 replies (measured with redis-cli), and `check::adversarial`
//! compares every recorded reply with it.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use seedkv_engine::resp::Frame;

use super::values::{binary_value, req};
use crate::workload::Request;

/// `f(n)` recurses n deep (not a tail call).
pub const RECURSE_SCRIPT: &str = "local function f(n) if n == 0 then return 0 end \
     return 1 + f(n - 1) end return f(tonumber(ARGV[1]))";
/// `nest(d)`: d tables, each holding the next, around the integer 1.
pub const NEST_SCRIPT: &str = "local function nest(d) if d == 0 then return 1 end \
     return {nest(d - 1)} end return nest(tonumber(ARGV[1]))";
/// A table of 1..n, returned whole.
pub const WIDE_SCRIPT: &str = "local t = {} for i = 1, tonumber(ARGV[1]) do t[i] = i end return t";
/// A table of 1..n, returning its length.
pub const COUNT_SCRIPT: &str =
    "local t = {} for i = 1, tonumber(ARGV[1]) do t[i] = i end return #t";
/// ARGV[1] back, as a bulk string.
pub const ECHO_SCRIPT: &str = "return ARGV[1]";
/// A string of n bytes.
pub const REP_SCRIPT: &str = "return string.rep('x', tonumber(ARGV[1]))";

/// Lua 5.1 doubles its call-info array up to LUAI_MAXCALLS (20000): a
/// fresh VM overflows past 16384 frames, one that overflowed before only
/// near 20000 (Redis 7.0.15 and seedkv alike; the last frames differ by
/// two, see sim/README.md). The depths stay clear of that zone.
const RECURSE_DEPTHS: &[u64] = &[0, 10, 1000, 16_000, 25_000, 200_000];
/// Deepest recursion that must succeed.
const RECURSE_OK_MAX: u64 = 16_000;
/// Nesting depths of a returned table (seedkv refuses deeper than 1000,
/// Redis 7.0.15 at 7995 arrays: see sim/README.md).
const NEST_DEPTHS: &[u64] = &[0, 1, 10, 100, 1000];
const WIDE_LENS: &[u64] = &[0, 1, 1000, 20_000];
const COUNT_LENS: &[u64] = &[1000, 100_000];
/// The rare COUNT of a million elements.
const COUNT_LEN_HUGE: u64 = 1_000_000;
const REP_LENS: &[u64] = &[0, 1, 65_536];

fn eval(script: &str, arg: &[u8]) -> Request {
    req(&[b"EVAL", script.as_bytes(), b"0", arg])
}

fn pick(rng: &mut ChaCha8Rng, values: &[u64]) -> Vec<u8> {
    values[rng.gen_range(0..values.len())]
        .to_string()
        .into_bytes()
}

pub fn request(rng: &mut ChaCha8Rng) -> Request {
    match rng.gen_range(0..6) {
        0 => eval(RECURSE_SCRIPT, &pick(rng, RECURSE_DEPTHS)),
        1 => eval(NEST_SCRIPT, &pick(rng, NEST_DEPTHS)),
        2 => eval(WIDE_SCRIPT, &pick(rng, WIDE_LENS)),
        3 => match rng.gen_ratio(1, 20) {
            true => eval(COUNT_SCRIPT, COUNT_LEN_HUGE.to_string().as_bytes()),
            false => eval(COUNT_SCRIPT, &pick(rng, COUNT_LENS)),
        },
        4 => eval(ECHO_SCRIPT, &binary_value(rng)),
        _ => eval(REP_SCRIPT, &pick(rng, REP_LENS)),
    }
}

/// Whether `args` is one of this file's scripts.
pub fn is_adversarial_script(args: &[Vec<u8>]) -> bool {
    args.len() == 4
        && args[0].eq_ignore_ascii_case(b"EVAL")
        && [
            RECURSE_SCRIPT,
            NEST_SCRIPT,
            WIDE_SCRIPT,
            COUNT_SCRIPT,
            ECHO_SCRIPT,
            REP_SCRIPT,
        ]
        .iter()
        .any(|s| args[1] == s.as_bytes())
}

/// What Redis 7.0.15 replies to one of this file's scripts: `Ok(frame)`
/// exactly, or `Err(prefix)` for an error reply starting with `prefix`.
/// `None` for another request.
pub fn expected_script_reply(args: &[Vec<u8>]) -> Option<Result<Frame, &'static str>> {
    if !is_adversarial_script(args) {
        return None;
    }
    let script = args[1].as_slice();
    let arg = &args[3];
    if script == ECHO_SCRIPT.as_bytes() {
        return Some(Ok(Frame::Bulk(arg.clone())));
    }
    let n: u64 = std::str::from_utf8(arg).ok()?.parse().ok()?;
    Some(match script {
        s if s == RECURSE_SCRIPT.as_bytes() => match n <= RECURSE_OK_MAX {
            true => Ok(Frame::Integer(n as i64)),
            false => Err("ERR user_script:1: stack overflow"),
        },
        s if s == NEST_SCRIPT.as_bytes() => {
            let mut frame = Frame::Integer(1);
            for _ in 0..n {
                frame = Frame::Array(vec![frame]);
            }
            Ok(frame)
        }
        s if s == WIDE_SCRIPT.as_bytes() => {
            Ok(Frame::Array((1..=n as i64).map(Frame::Integer).collect()))
        }
        s if s == COUNT_SCRIPT.as_bytes() => Ok(Frame::Integer(n as i64)),
        _ => Ok(Frame::Bulk(vec![b'x'; n as usize])),
    })
}
