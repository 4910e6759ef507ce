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
//!   past its threshold.
//!
//! The order of the script's own calls is the group checker's
//! ([`super::atomicity::GroupAtomicity`]), which lets exactly these
//! executions fall between them.

use seedkv_engine::resp::Frame;

use super::{Checker, RunFacts, Violation};
use crate::fxhash::FxHashMap;
use crate::history::{ConnId, Execution, History, Op};

pub struct BusyWindow;

const NAME: &str = "busy-window";

/// Commands Redis 7.0.15 flags allow-busy (COMMAND INFO), as the engine
/// records their execution (a container's subcommand by its own name).
const ALLOWED_WHILE_BUSY: &[&str] = &[
    "auth", "discard", "hello", "multi", "quit", "replconf", "reset", "kill", "stats", "shutdown",
    "unwatch", "watch",
];

/// Whether `reply` is a `-BUSY` error.
pub fn is_busy_reply(reply: &Frame) -> bool {
    matches!(reply, Frame::Error(e) if e.starts_with(b"BUSY "))
}

/// Whether `e` (whose request got `reply`) may run while a script is busy.
pub fn allowed_while_busy(e: &Execution, reply: Option<&Frame>) -> bool {
    ALLOWED_WHILE_BUSY.contains(&e.name) || reply.is_some_and(is_busy_reply)
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
    let mut replies: FxHashMap<(ConnId, u64), &Op> = FxHashMap::default();
    for op in &history.ops {
        replies.insert((op.conn, op.seq_in_conn), op);
    }
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
            if e.start_ns < busy_from_ns || !allowed_while_busy(e, reply_of(e)) {
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
