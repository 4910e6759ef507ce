//! The busy window of long scripts (Redis's `busy-reply-threshold`).
//!
//! A script that runs in several slices is recorded as a
//! [`ScriptRun`](crate::history::ScriptRun): from the start of the turn
//! its EVAL started in to the end of the EVAL's execution. The engine runs
//! nothing else inside it before the threshold (other clients' requests
//! wait in their query buffers), and after it only what Redis runs while a
//! script is busy: commands flagged allow-busy, and refusals answered
//! `-BUSY`. So:
//!
//! - every execution of another client that starts inside a script run
//!   starts at least `threshold_ms` after the run's start, and is allowed
//!   while busy or was answered `-BUSY`;
//! - every `-BUSY` reply comes from an execution inside a script run,
//!   past its threshold;
//! - a script killed (SCRIPT KILL, FUNCTION KILL) wrote nothing: Redis
//!   refuses to kill one that ran a write command (`-UNKILLABLE`), so a
//!   killed script's calls hold no write.
//!
//! The order of the script's own calls is the group checker's
//! ([`super::atomicity::GroupAtomicity`]), which lets exactly these
//! executions fall between them.

use seedkv_engine::resp::Frame;

use seedkv_engine::cmd::flags::WRITE;

use super::{Checker, RunFacts, Violation};
use crate::fxhash::FxHashSet;
use crate::history::{ConnId, Execution, History};

pub struct BusyWindow;

const NAME: &str = "busy-window";

/// Commands Redis 7.0.15 flags allow-busy (COMMAND INFO), by the full
/// names the engine records their executions under.
const ALLOWED_WHILE_BUSY: &[&str] = &[
    "auth",
    "discard",
    "function|kill",
    "function|stats",
    "hello",
    "multi",
    "quit",
    "replconf",
    "reset",
    "script|kill",
    "shutdown",
    "unwatch",
    "watch",
];

/// EXEC refused while busy aborts the transaction with the `-BUSY` text.
const EXECABORT_BUSY: &[u8] = b"EXECABORT Transaction discarded because of: BUSY ";

/// Whether `reply` is a `-BUSY` refusal (EXEC's included).
pub fn is_busy_reply(reply: &Frame) -> bool {
    matches!(reply, Frame::Error(e) if e.starts_with(b"BUSY ") || e.starts_with(EXECABORT_BUSY))
}

/// Whether `e` may run while a script is busy: a command flagged
/// allow-busy, or a request refused before it ran (the engine records it
/// with an empty name: `-BUSY`, or an unknown command or a wrong arity,
/// which Redis checks first). A refused request runs nothing, so it
/// cannot break the script's atomicity.
pub fn allowed_while_busy(e: &Execution) -> bool {
    ALLOWED_WHILE_BUSY.contains(&e.name) || e.name.is_empty()
}

impl Checker for BusyWindow {
    fn name(&self) -> &'static str {
        NAME
    }

    fn check(&self, history: &History, _facts: &RunFacts) -> Result<(), Violation> {
        check_busy(history).map_err(|message| Violation {
            checker: NAME,
            message,
        })
    }
}

fn check_busy(history: &History) -> Result<(), String> {
    let replies = history.op_index();
    let reply_of = |e: &Execution| -> Option<&Frame> {
        let op = replies.get(&(e.conn, e.seq_in_conn))?;
        op.complete.as_ref().map(|(_, f)| f)
    };
    let executions = &history.executions;
    // Executions inside some script run, which the -BUSY check below
    // consults. Runs never overlap (one script runs at a time), so every
    // execution is visited at most once here.
    let mut inside = vec![false; executions.len()];
    for run in &history.script_runs {
        let end = run.eval_execution.unwrap_or(executions.len());
        let busy_from_ns = run.started_ns + run.threshold_ms * 1_000_000;
        for index in run.executions_from..end.min(executions.len()) {
            let e = &executions[index];
            if e.conn == run.conn {
                continue; // the script's own calls: the group checker's
            }
            inside[index] = true;
            if e.start_ns < busy_from_ns || !allowed_while_busy(e) {
                return Err(format!(
                    "execution #{index}: {} (conn {} request #{}) ran at {} ns inside the script \
                     of conn {} request #{} (started {} ns, busy from {} ns)",
                    if e.name.is_empty() {
                        "(rejected)"
                    } else {
                        e.name
                    },
                    e.conn,
                    e.seq_in_conn,
                    e.start_ns,
                    run.conn,
                    run.seq_in_conn,
                    run.started_ns,
                    busy_from_ns
                ));
            }
        }
    }
    check_killed_wrote_nothing(history)?;
    for (index, e) in executions.iter().enumerate() {
        if !inside[index] && reply_of(e).is_some_and(is_busy_reply) {
            return Err(format!(
                "execution #{index} (conn {} request #{}) was answered -BUSY at {} ns, while no \
                 script ran past its threshold",
                e.conn, e.seq_in_conn, e.start_ns
            ));
        }
    }
    Ok(())
}

/// The error a killed script or function ends with.
const KILLED: &[u8] = b"ERR Script killed by user";

/// No script answered [`KILLED`] ran a write command: its calls are
/// recorded under its request (`in_exec`), with their flags.
fn check_killed_wrote_nothing(history: &History) -> Result<(), String> {
    let killed: FxHashSet<(ConnId, u64)> = history
        .ops
        .iter()
        .filter(|op| matches!(&op.complete, Some((_, Frame::Error(e))) if e.starts_with(KILLED)))
        .map(|op| (op.conn, op.seq_in_conn))
        .collect();
    if killed.is_empty() {
        return Ok(());
    }
    let wrote = history.executions.iter().find(|e| {
        e.flags & WRITE != 0 && e.in_exec.is_some_and(|seq| killed.contains(&(e.conn, seq)))
    });
    match wrote {
        Some(e) => Err(format!(
            "conn {} request #{} was killed after its call `{}` wrote (Redis answers \
             -UNKILLABLE then)",
            e.conn,
            e.in_exec.unwrap_or_default(),
            e.name
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Op, ScriptRun};

    const BUSY: &[u8] =
        b"BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
    const THRESHOLD_MS: u64 = 5;

    fn op(conn: ConnId, seq: u64, args: &[&str], reply: Frame) -> Op {
        Op {
            client: 0,
            conn,
            seq_in_conn: seq,
            args: args.iter().map(|a| a.as_bytes().to_vec()).collect(),
            workload: "adversarial",
            invoke_ns: 0,
            complete: Some((0, reply)),
        }
    }

    fn exec(conn: ConnId, seq: u64, name: &'static str, start_ns: u64) -> Execution {
        Execution {
            conn,
            seq_in_conn: seq,
            start_ns,
            end_ns: start_ns + 1,
            unix_ms: 0,
            name,
            flags: 0,
            work_units: 1,
            in_exec: None,
            sizes: None,
        }
    }

    /// Conn 1 runs a long script (its request #0) from 0 ns; conn 2's
    /// request #0 executes at `at_ns` as `name`, answered `reply`.
    fn history(name: &'static str, at_ns: u64, reply: Frame) -> History {
        let end_ns = 100_000_000;
        History {
            ops: vec![
                op(
                    1,
                    0,
                    &["EVAL", "while true do end", "0"],
                    Frame::Error(b"ERR".to_vec()),
                ),
                op(2, 0, &["X"], reply),
            ],
            executions: vec![exec(2, 0, name, at_ns), exec(1, 0, "eval", end_ns)],
            script_runs: vec![ScriptRun {
                conn: 1,
                seq_in_conn: 0,
                started_ns: 0,
                executions_from: 0,
                eval_execution: Some(1),
                threshold_ms: THRESHOLD_MS,
            }],
            ..History::default()
        }
    }

    fn check(h: &History) -> Result<(), Violation> {
        BusyWindow.check(h, &RunFacts::default())
    }

    #[test]
    fn past_the_threshold_busy_refusals_and_script_kill_pass() {
        let past_ns = THRESHOLD_MS * 1_000_000;
        assert!(check(&history("", past_ns, Frame::Error(BUSY.to_vec()))).is_ok());
        assert!(check(&history(
            "script|kill",
            past_ns,
            Frame::Simple(b"OK".to_vec())
        ))
        .is_ok());
        assert!(check(&history("function|stats", past_ns, Frame::Null)).is_ok());
    }

    #[test]
    fn a_command_inside_a_script_fails() {
        // Before the threshold nothing else runs, not even SCRIPT KILL.
        let before_ns = THRESHOLD_MS * 1_000_000 - 1;
        let ok = || Frame::Simple(b"OK".to_vec());
        assert!(check(&history("script|kill", before_ns, ok())).is_err());
        // Past it, a command that is not allowed while busy must be refused:
        // CLIENT KILL is not SCRIPT KILL.
        let past_ns = THRESHOLD_MS * 1_000_000;
        assert!(check(&history("get", past_ns, Frame::Null)).is_err());
        assert!(check(&history("client|kill", past_ns, ok())).is_err());
        assert!(check(&history("exec", past_ns, Frame::Array(Vec::new()))).is_err());
    }

    #[test]
    fn a_killed_script_that_wrote_fails() {
        let killed = Frame::Error(b"ERR Script killed by user with SCRIPT KILL...".to_vec());
        let mut h = history(
            "script|kill",
            THRESHOLD_MS * 1_000_000,
            Frame::Simple(b"OK".to_vec()),
        );
        h.ops[0].complete = Some((0, killed));
        assert!(check(&h).is_ok(), "killed before any call");
        let mut call = exec(1, 0, "incr", 1);
        call.in_exec = Some(0);
        h.executions.insert(0, call.clone());
        h.script_runs[0].eval_execution = Some(2);
        assert!(check(&h).is_ok(), "INCR carries no write flag here");
        h.executions[0].flags = WRITE;
        assert!(check(&h).is_err(), "a write, then killed");
    }

    #[test]
    fn a_busy_reply_outside_a_script_fails() {
        let mut h = history("", 1, Frame::Error(BUSY.to_vec()));
        h.script_runs.clear();
        assert!(check(&h).is_err());
    }
}
