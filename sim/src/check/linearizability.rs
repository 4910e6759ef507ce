//! Linearizability of single-key string operations, judged from what the
//! clients observed alone (invocation time, reply, reply time), without the
//! engine's execution order or the reference model.
//!
//! # The property
//!
//! A history is linearizable if every operation can be given a single
//! instant between its invocation and its reply at which it took effect,
//! such that running the operations one by one in that order, on a plain
//! register, gives exactly the replies the clients saw. For a single-threaded
//! server this must hold; a stale read, a lost update, or a reply sent for
//! the wrong request all break it.
//!
//! # Partitioning by key (P-compositionality)
//!
//! Linearizability is *local*: a history is linearizable if and only if its
//! restriction to each object is (Herlihy & Wing). Porcupine exploits this
//! as "P-compositionality": with one key per operation, each key's history
//! is checked on its own, which turns one exponential search into many small
//! ones. So the checker only considers operations on exactly one key:
//! GET, SET (with NX, XX, GET), SETNX, GETSET, DEL/UNLINK/EXISTS of one key,
//! INCR, DECR, INCRBY, DECRBY, APPEND, GETDEL and STRLEN.
//!
//! A key is **excluded** (not checked) if anything else may have written
//! it during the run: a multi-key write (MSET, DEL of several keys), a TTL
//! (EXPIRE, SET EX, PERSIST... since expiry is a hidden writer), FLUSHDB,
//! FLUSHALL, a write the checker does not recognise, a write queued in
//! MULTI, or a write on a connection whose selected database is unknown.
//! Read-only commands the checker does not model (MGET, TTL, KEYS, SCAN...)
//! are simply left out: dropping reads can never make a linearizable
//! history non-linearizable, so this is sound.
//!
//! # The search (Wing & Gong, with Lowe's memoization)
//!
//! For one key, every operation contributes a *call* entry (at invocation)
//! and a *return* entry (at reply) to one list sorted by time (calls before
//! returns at equal times, so operations that touch are concurrent). The
//! search walks the list from the front:
//!
//! - at a call entry, it tries to linearize that operation now: apply it to
//!   the current state; if the model's reply equals the recorded one, lift
//!   the call and its return out of the list, push (operation, old state) on
//!   a stack, and restart from the front;
//! - at a return entry, the operation it belongs to should already have been
//!   linearized and was not: backtrack by popping the stack, putting the
//!   operation back, and trying the next candidate after it;
//! - an empty stack at a return entry means no order works: not linearizable.
//!
//! Lowe's improvement memoizes every (set of linearized operations, state)
//! reached; reaching one again cannot lead anywhere new, so it is skipped.
//! The effort is bounded ([`LINEARIZABILITY_STEPS_MAX`] steps and
//! [`LINEARIZABILITY_CACHE_BYTES_MAX`] of memo per key); a key that exceeds
//! it is reported as unknown, never as a failure.
//!
//! # Requests without a reply
//!
//! A request whose connection died before the reply may or may not have run.
//! Its return entry is placed at +infinity: it may take effect at any point
//! after its invocation, or never. The search succeeds as soon as the first
//! return entry left in the list is such an infinite one, since then every
//! operation that did complete has been linearized. Reads without a reply
//! constrain nothing and are dropped.
//!
//! # Layout
//!
//! This file holds the checker, its report and the types its parts share;
//! `register` is the register model, `partition` splits the history by
//! key, `search` and `memo` are the search and its bookkeeping.

use seedkv_engine::resp::Frame;

use super::model::expected::render_args;
use crate::check::{Checker, RunFacts, Violation};
use crate::history::{History, TimeNs};
use partition::partition;
use search::search;

mod memo;
mod partition;
mod register;
mod search;
#[cfg(test)]
mod tests;

/// Search steps (list entries visited) per key before giving up.
pub const LINEARIZABILITY_STEPS_MAX: u64 = 2_000_000;

/// Memory the memo table of one key may use before giving up.
pub const LINEARIZABILITY_CACHE_BYTES_MAX: usize = 64 * 1024 * 1024;

/// Operations shown in a violation message.
const OPS_SHOWN_MAX: usize = 24;

const NOT_AN_INTEGER: &[u8] = b"ERR value is not an integer or out of range";
const OVERFLOW: &[u8] = b"ERR increment or decrement would overflow";

/// The checker.
pub struct Linearizability;

impl Checker for Linearizability {
    fn name(&self) -> &'static str {
        "linearizability"
    }

    fn check(&self, history: &History, _facts: &RunFacts) -> Result<(), Violation> {
        let report = check_linearizability(history);
        match report.violation {
            None => Ok(()),
            Some(message) => Err(Violation {
                checker: self.name(),
                message,
            }),
        }
    }
}

/// What the checker did, for reports.
#[derive(Clone, Debug, Default)]
pub struct LinearizabilityReport {
    /// Keys whose history was searched and found linearizable.
    pub keys_linearizable: usize,
    /// Keys whose search exceeded the effort bound.
    pub keys_unknown: usize,
    /// Keys left out because something other than a single-key operation
    /// may have written them.
    pub keys_excluded: usize,
    /// Operations in the searched keys' histories.
    pub ops_checked: usize,
    /// The first non-linearizable key's account.
    pub violation: Option<String>,
}

/// Checks every key's history; stops at the first violation.
pub fn check_linearizability(history: &History) -> LinearizabilityReport {
    check_bounded(history, LINEARIZABILITY_STEPS_MAX)
}

fn check_bounded(history: &History, steps_max: u64) -> LinearizabilityReport {
    let partition = partition(history);
    let mut report = LinearizabilityReport {
        keys_excluded: partition.excluded_count,
        ..Default::default()
    };
    for ((db, key), ops) in &partition.keys {
        let key: &[u8] = key;
        report.ops_checked += ops.len();
        match search(ops, steps_max) {
            Outcome::Linearizable => report.keys_linearizable += 1,
            Outcome::Unknown => report.keys_unknown += 1,
            Outcome::NotLinearizable => {
                report.violation = Some(describe(*db, key, ops, history));
                return report;
            }
        }
    }
    report
}

/// A single-key operation, as the register model sees it. Values are
/// borrowed from the history: a run names tens of thousands of them.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Action<'h> {
    Get,
    Set {
        value: &'h [u8],
        nx: bool,
        xx: bool,
        get: bool,
    },
    SetNx(&'h [u8]),
    Del,
    Exists,
    IncrBy(i64),
    Append(&'h [u8]),
    GetDel,
    Strlen,
}

/// One operation of one key's history.
#[derive(Clone, Debug)]
struct KeyOp<'h> {
    /// Index in `History::ops`.
    op: usize,
    action: Action<'h>,
    invoke_ns: TimeNs,
    /// The reply and its time; `None`: it may have run any time after its
    /// invocation, or never.
    complete: Option<(TimeNs, &'h Frame)>,
}

/// The register: a string value, or no key.
type State = Option<Vec<u8>>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Linearizable,
    NotLinearizable,
    Unknown,
}

/// A violation message: the key and its operations in invocation order.
fn describe(db: usize, key: &[u8], ops: &[KeyOp<'_>], history: &History) -> String {
    let mut message = format!(
        "key {:?} (db {db}): its {} single-key operations have no linearization:",
        String::from_utf8_lossy(key),
        ops.len()
    );
    let mut sorted: Vec<&KeyOp<'_>> = ops.iter().collect();
    sorted.sort_by_key(|o| o.invoke_ns);
    for o in sorted.iter().take(OPS_SHOWN_MAX) {
        let op = &history.ops[o.op];
        let (end, reply) = match &op.complete {
            Some((t, frame)) => (t.to_string(), frame.render()),
            None => ("never".into(), "(no reply)".into()),
        };
        message.push_str(&format!(
            "\n  [{} .. {end}] conn {} #{} `{}` -> {reply}",
            op.invoke_ns,
            op.conn,
            op.seq_in_conn,
            render_args(&op.args)
        ));
    }
    if ops.len() > OPS_SHOWN_MAX {
        message.push_str(&format!("\n  ... {} more", ops.len() - OPS_SHOWN_MAX));
    }
    message
}
