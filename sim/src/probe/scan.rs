//! SCAN completeness judged from the clients' side alone.
//!
//! The simulator's `scan-completeness` checker follows each iteration
//! through the engine's execution order; a real server does not reveal its
//! order, so the probe runs this black-box variant over the same guarantees:
//!
//! 1. A key surely present for the whole iteration is returned. Only keys of
//!    the `scan:` namespace are judged: the scan workload alone writes them,
//!    creating each with MSET and removing it with DEL. A key is surely
//!    present over the iteration's window (first call's invocation to last
//!    call's reply) if an acknowledged MSET of it completed before the window
//!    opened, and every DEL of it that may take effect before the window
//!    closes (invoked before the last reply; acknowledged or of unknown fate)
//!    certainly took effect before such an MSET began.
//! 2. Nothing is returned that no request named before the iteration ended
//!    (the probe flushes the server first), and every key matches MATCH.
//! 3. The iteration terminates: at most [`SCAN_CALLS_MAX`] calls.
//!
//! Sound for any correct server: each rule only uses orders that real time
//! proves (a reply before an invocation).

use std::collections::BTreeMap;

use seedkv_engine::resp::Frame;

use crate::check::model::redis_c::glob_match;
use crate::check::scan::{iterations, shown, Iteration};
use crate::check::{Checker, RunFacts, Violation};
use crate::history::{History, TimeNs};

/// Calls one iteration may take (the scan workload's key sets stay under
/// 5,000 keys per client; a reverse-binary cursor visits a bucket per call).
pub const SCAN_CALLS_MAX: usize = 1_000_000;

pub const NAME: &str = "scan-completeness (black box)";

pub struct BlackBoxScan;

impl Checker for BlackBoxScan {
    fn name(&self) -> &'static str {
        NAME
    }

    fn check(&self, history: &History, _facts: &RunFacts) -> Result<(), Violation> {
        check(history).map_err(|message| Violation {
            checker: NAME,
            message,
        })
    }
}

/// When a key was written: (invoke, reply time if acknowledged).
#[derive(Default)]
struct KeyWrites {
    creates: Vec<(TimeNs, Option<TimeNs>)>,
    removes: Vec<(TimeNs, Option<TimeNs>)>,
}

impl KeyWrites {
    fn surely_present(&self, from_ns: TimeNs, to_ns: TimeNs) -> bool {
        // Acknowledged creates done before the window opened.
        let done: Vec<(TimeNs, TimeNs)> = self
            .creates
            .iter()
            .filter_map(|&(invoke, complete)| Some((invoke, complete?)))
            .filter(|&(_, complete)| complete < from_ns)
            .collect();
        if done.is_empty() {
            return false;
        }
        self.removes.iter().all(|&(invoke, complete)| {
            invoke >= to_ns || complete.is_some_and(|c| done.iter().any(|&(ci, _)| c < ci))
        })
    }
}

fn check(history: &History) -> Result<(), String> {
    let iterations = finished_iterations(history)?;
    if iterations.is_empty() {
        return Ok(());
    }
    let mut writes: BTreeMap<&[u8], KeyWrites> = BTreeMap::new();
    // First invocation naming each argument.
    let mut named: BTreeMap<&[u8], TimeNs> = BTreeMap::new();
    for op in &history.ops {
        for arg in &op.args[1..] {
            named.entry(arg).or_insert(op.invoke_ns);
        }
        let name = op.args[0].to_ascii_uppercase();
        let acked = op
            .complete
            .as_ref()
            .and_then(|(at, reply)| (!matches!(reply, Frame::Error(_))).then_some(*at));
        let errored = matches!(op.complete, Some((_, Frame::Error(_))));
        let keys: Vec<&[u8]> = match name.as_slice() {
            b"MSET" => op.args[1..].iter().step_by(2).map(Vec::as_slice).collect(),
            b"DEL" | b"UNLINK" => op.args[1..].iter().map(Vec::as_slice).collect(),
            _ => continue,
        };
        if errored {
            continue;
        }
        for key in keys.into_iter().filter(|k| k.starts_with(b"scan:")) {
            let w = writes.entry(key).or_default();
            let entry = (op.invoke_ns, acked);
            if name == b"MSET" {
                w.creates.push(entry);
            } else {
                w.removes.push(entry);
            }
        }
    }
    for it in &iterations {
        let first = &history.ops[it.calls[0]];
        let last = &history.ops[*it.calls.last().unwrap_or(&it.calls[0])];
        let (from_ns, to_ns) = (first.invoke_ns, last.complete.as_ref().map_or(0, |c| c.0));
        let context = || {
            format!(
                "SCAN iteration on conn {} (requests #{}..=#{}, {} calls, MATCH {:?})",
                first.conn,
                first.seq_in_conn,
                last.seq_in_conn,
                it.calls.len(),
                it.filters
                    .as_ref()
                    .map(|p| String::from_utf8_lossy(p).into_owned())
            )
        };
        let invented: Vec<&Vec<u8>> = it
            .returned
            .iter()
            .filter(|k| named.get(k.as_slice()).is_none_or(|&at| at > to_ns))
            .collect();
        if !invented.is_empty() {
            return Err(format!(
                "{} returned keys no request had named: {}",
                context(),
                shown(invented)
            ));
        }
        if let Some(p) = &it.filters {
            let off: Vec<&Vec<u8>> = it.returned.iter().filter(|k| !glob_match(p, k)).collect();
            if !off.is_empty() {
                return Err(format!(
                    "{} returned keys outside MATCH: {}",
                    context(),
                    shown(off)
                ));
            }
        }
        let missed: Vec<Vec<u8>> = writes
            .iter()
            .filter(|(key, w)| {
                it.filters.as_ref().is_none_or(|p| glob_match(p, key))
                    && !it.returned.contains(**key)
                    && w.surely_present(from_ns, to_ns)
            })
            .map(|(key, _)| key.to_vec())
            .collect();
        if !missed.is_empty() {
            return Err(format!(
                "{} missed keys present for the whole iteration (created and acknowledged \
                 before its first call, not deleted before its last reply): {}",
                context(),
                shown(missed.iter().collect())
            ));
        }
    }
    Ok(())
}

/// SCAN's MATCH pattern, or `Err` if the options are not ones the scan
/// workload sends (COUNT, MATCH).
fn scan_pattern(args: &[Vec<u8>]) -> Result<Option<Vec<u8>>, ()> {
    let mut pattern = None;
    for pair in args.get(2..).ok_or(())?.chunks(2) {
        let [name, value] = pair else { return Err(()) };
        match name.to_ascii_lowercase().as_slice() {
            b"match" => pattern = Some(value.clone()),
            b"count" => {}
            _ => return Err(()),
        }
    }
    Ok(pattern)
}

/// The finished iterations (`check::scan::iterations`), of calls whose
/// options the scan workload sends (COUNT, MATCH; a TYPE ends a run).
fn finished_iterations(history: &History) -> Result<Vec<Iteration<Option<Vec<u8>>>>, String> {
    let too_long = |conn, calls_count, _cursor: &[u8]| {
        (calls_count > SCAN_CALLS_MAX).then(|| {
            format!(
                "a SCAN iteration on conn {conn} did not terminate: over {SCAN_CALLS_MAX} calls"
            )
        })
    };
    iterations(history, |args| scan_pattern(args).ok(), too_long)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Op;

    fn op(conn: u64, seq: u64, args: &[&str], invoke: u64, reply: Option<(u64, Frame)>) -> Op {
        Op {
            client: conn as u32,
            conn,
            seq_in_conn: seq,
            args: args.iter().map(|a| a.as_bytes().to_vec()).collect(),
            workload: "scan",
            invoke_ns: invoke,
            complete: reply,
        }
    }

    fn scan_reply_frame(cursor: &str, keys: &[&str]) -> Frame {
        Frame::Array(vec![
            Frame::Bulk(cursor.as_bytes().to_vec()),
            Frame::Array(
                keys.iter()
                    .map(|k| Frame::Bulk(k.as_bytes().to_vec()))
                    .collect(),
            ),
        ])
    }

    fn history(scan_keys: &[&str], del_b: Option<(u64, Option<u64>)>) -> History {
        let ok = |at| Some((at, Frame::Simple(b"OK".to_vec())));
        let mut ops = vec![op(
            1,
            0,
            &["MSET", "scan:0:a", "v", "scan:0:b", "v"],
            0,
            ok(10),
        )];
        if let Some((invoke, complete)) = del_b {
            ops.push(op(
                3,
                0,
                &["DEL", "scan:0:b"],
                invoke,
                complete.map(|c| (c, Frame::Integer(1))),
            ));
        }
        ops.push(op(
            2,
            0,
            &["SCAN", "0"],
            20,
            Some((30, scan_reply_frame("5", &[]))),
        ));
        ops.push(op(
            2,
            1,
            &["SCAN", "5"],
            40,
            Some((50, scan_reply_frame("0", scan_keys))),
        ));
        History {
            ops,
            ..History::default()
        }
    }

    #[test]
    fn a_key_present_throughout_must_be_returned() {
        assert!(check(&history(&["scan:0:a", "scan:0:b"], None)).is_ok());
        let e = check(&history(&["scan:0:a"], None)).unwrap_err();
        assert!(e.contains("scan:0:b"), "{e}");
    }

    #[test]
    fn a_key_deleted_or_maybe_deleted_in_the_window_is_not_required() {
        assert!(check(&history(&["scan:0:a"], Some((35, Some(38))))).is_ok());
        assert!(check(&history(&["scan:0:a"], Some((25, None)))).is_ok());
        // A DEL invoked after the last reply cannot excuse a miss.
        assert!(check(&history(&["scan:0:a"], Some((60, None)))).is_err());
    }

    #[test]
    fn invented_keys_and_match_are_checked() {
        let e = check(&history(&["scan:0:a", "scan:0:b", "scan:9:z"], None)).unwrap_err();
        assert!(e.contains("no request had named"), "{e}");
    }
}
