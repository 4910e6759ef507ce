//! SCAN completeness: Redis's SCAN guarantees, whatever the writes and table
//! resizes during an iteration,
//!
//! 1. every key present for the **whole** iteration is returned at least once
//!    (a key may be returned more than once);
//! 2. nothing is returned that did not exist at some point during it, and
//!    every returned key matches the MATCH pattern;
//! 3. the iteration terminates.
//!
//! # Finding iterations
//!
//! An iteration is a run of SCAN requests on one connection that starts at
//! cursor `0` and passes each reply's cursor to the next request, until a
//! reply carries cursor `0`. Requests are taken in connection order; a SCAN
//! with another cursor, a request without a reply (the connection died) or
//! an error reply ends the run, and an unfinished run is not judged (the run
//! or the connection ended first). A run longer than a bound derived from
//! the history is a failure to terminate (see [`scan_calls_max`]).
//!
//! # Which keys were present for the whole iteration
//!
//! The window is from the execution of the first SCAN to that of the last.
//! The checker replays the engine's execution order through the reference
//! model's keyspace ([`KeyspaceModel`]), which says after each command
//! which keys it touched and what they hold, with expiry by execution time.
//! When the first SCAN executes, the candidates are the keys live in the
//! connection's database (and matching MATCH/TYPE). A candidate drops out as
//! soon as a command leaves it absent or unknown, or it reaches its expiry
//! time within the window; an overwrite keeps it. The candidates left when
//! the last SCAN executes must all have been returned.
//!
//! The keys that existed at some point are the keys live at the start plus
//! every key a command left present during the window. Keys whose history
//! the model cannot follow (unknown keys, see the reference model) count as
//! possibly existing, and are never required. An iteration whose database
//! becomes wholly unknown, or whose connection's database the model cannot
//! tell, is skipped.

use std::collections::{BTreeMap, BTreeSet};

use seedkv_engine::resp::Frame;

use super::model::redis_c::glob_match;
use super::model::{index_ops, KeyState, KeyspaceModel};
use crate::check::{Checker, RunFacts, Violation};
use crate::fxhash::FxHashSet;
use crate::history::{ConnId, History, Op};

/// An iteration may take at most this many SCAN calls per distinct argument
/// in the history (an upper bound on the keys that ever existed, since every
/// key is named by some argument)...
pub const SCAN_CALLS_PER_KEY_MAX: u64 = 8;

/// ... plus this many.
pub const SCAN_CALLS_SLACK: u64 = 64;

/// Keys shown in a violation message.
const KEYS_SHOWN_MAX: usize = 10;

/// The checker.
pub struct ScanCompleteness;

impl Checker for ScanCompleteness {
    fn name(&self) -> &'static str {
        "scan-completeness"
    }

    fn check(&self, history: &History, _facts: &RunFacts) -> Result<(), Violation> {
        check_scans(history).map_err(|message| Violation {
            checker: self.name(),
            message,
        })
    }
}

/// The most SCAN calls one iteration may take in this history: a cursor
/// visits at least one bucket per call, and a table never has more than a
/// small multiple of the keys that ever existed.
pub fn scan_calls_max(history: &History) -> u64 {
    let mut distinct: FxHashSet<&[u8]> = FxHashSet::default();
    for op in &history.ops {
        distinct.extend(op.args.iter().map(Vec::as_slice));
    }
    distinct.len() as u64 * SCAN_CALLS_PER_KEY_MAX + SCAN_CALLS_SLACK
}

/// One finished iteration: a run of SCAN calls on one connection, with the
/// options `F` its calls share (this checker's [`ScanFilters`], the probe's
/// MATCH pattern).
#[derive(Debug)]
pub(crate) struct Iteration<F> {
    pub conn: ConnId,
    /// Indices into `History::ops`, in order.
    pub calls: Vec<usize>,
    pub filters: F,
    pub returned: BTreeSet<Vec<u8>>,
}

/// SCAN's MATCH pattern and TYPE filter.
#[derive(Debug, PartialEq, Eq)]
struct ScanFilters {
    pattern: Option<Vec<u8>>,
    type_filter: Option<Vec<u8>>,
}

/// SCAN's options after the cursor, or `None` if malformed.
fn scan_options(args: &[Vec<u8>]) -> Option<ScanFilters> {
    let (mut pattern, mut type_filter) = (None, None);
    for pair in args.get(2..)?.chunks(2) {
        let [name, value] = pair else { return None };
        match name.to_ascii_lowercase().as_slice() {
            b"match" => pattern = Some(value.clone()),
            b"count" => {}
            b"type" => type_filter = Some(value.to_ascii_lowercase()),
            _ => return None,
        }
    }
    Some(ScanFilters {
        pattern,
        type_filter,
    })
}

/// A SCAN reply: the next cursor and the keys.
fn scan_reply(frame: &Frame) -> Option<(&[u8], Vec<&[u8]>)> {
    let Frame::Array(items) = frame else {
        return None;
    };
    let [Frame::Bulk(cursor), Frame::Array(keys)] = items.as_slice() else {
        return None;
    };
    let keys = keys
        .iter()
        .map(|k| match k {
            Frame::Bulk(k) => Some(k.as_slice()),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some((cursor, keys))
}

/// A SCAN reply's next cursor and keys, owned.
type CursorAndKeys = (Vec<u8>, Vec<Vec<u8>>);

/// What one SCAN call of an iteration brought: the next cursor and the
/// keys; `None` when it got no reply or an error reply (its iteration ends
/// unjudged); `Err` for a reply that is not a SCAN reply.
fn scan_step(op: &Op) -> Result<Option<CursorAndKeys>, String> {
    let Some((_, reply)) = &op.complete else {
        return Ok(None);
    };
    match scan_reply(reply) {
        Some((cursor_next, keys)) => Ok(Some((
            cursor_next.to_vec(),
            keys.into_iter().map(<[u8]>::to_vec).collect(),
        ))),
        None if matches!(reply, Frame::Error(_)) => Ok(None),
        None => Err(format!(
            "conn {} request #{}: malformed SCAN reply {}",
            op.conn,
            op.seq_in_conn,
            reply.render()
        )),
    }
}

/// This checker's iterations; `Err` if one does not terminate within
/// [`scan_calls_max`] (computed only if an iteration gets long: it hashes
/// every argument of the history).
fn check_iterations(history: &History) -> Result<Vec<Iteration<ScanFilters>>, String> {
    let mut calls_max_cached = None;
    let too_long = |conn: ConnId, calls_count: usize, cursor: &[u8]| {
        // The bound is never below the slack, so short iterations need not
        // compute it.
        if calls_count as u64 <= SCAN_CALLS_SLACK {
            return None;
        }
        let calls_max = *calls_max_cached.get_or_insert_with(|| scan_calls_max(history));
        (calls_count as u64 > calls_max).then(|| {
            format!(
                "a SCAN iteration on conn {conn} did not terminate: {calls_count} calls (bound \
                 {calls_max}), last cursor {:?}",
                String::from_utf8_lossy(cursor)
            )
        })
    };
    iterations(history, scan_options, too_long)
}

/// Splits the SCAN requests into finished iterations: per connection, in
/// connection order, runs of calls from cursor 0, each passing the previous
/// reply's cursor and the same options, until a reply's cursor is 0.
/// `filters` reads a call's options (`None`: malformed, or not judged; it
/// ends the run); a call without a reply or with an error reply ends the
/// run unjudged. `too_long(conn, calls, cursor)` is the failure of a run
/// past its bound. Shared with the probe's black-box SCAN checker.
pub(crate) fn iterations<F: PartialEq>(
    history: &History,
    filters: impl Fn(&[Vec<u8>]) -> Option<F>,
    mut too_long: impl FnMut(ConnId, usize, &[u8]) -> Option<String>,
) -> Result<Vec<Iteration<F>>, String> {
    let mut by_conn: BTreeMap<ConnId, Vec<usize>> = BTreeMap::new();
    for (i, op) in history.ops.iter().enumerate() {
        if op
            .args
            .first()
            .is_some_and(|a| a.eq_ignore_ascii_case(b"scan"))
        {
            by_conn.entry(op.conn).or_default().push(i);
        }
    }
    let mut done = Vec::new();
    for (conn, mut indices) in by_conn {
        indices.sort_by_key(|&i| history.ops[i].seq_in_conn);
        // The iteration in progress, and the cursor its next call must carry.
        let mut current: Option<(Iteration<F>, Vec<u8>)> = None;
        for i in indices {
            let op = &history.ops[i];
            let (Some(cursor), Some(options)) = (op.args.get(1), filters(&op.args)) else {
                current = None;
                continue;
            };
            let continues = current
                .as_ref()
                .is_some_and(|(it, next)| next == cursor && it.filters == options);
            if !continues {
                current = None;
                if cursor.as_slice() != b"0" {
                    continue;
                }
                let fresh = Iteration {
                    conn,
                    calls: Vec::new(),
                    filters: options,
                    returned: BTreeSet::new(),
                };
                current = Some((fresh, Vec::new()));
            }
            let (iteration, next) = current.as_mut().expect("set above");
            iteration.calls.push(i);
            if let Some(failure) = too_long(conn, iteration.calls.len(), cursor) {
                return Err(failure);
            }
            let Some((cursor_next, keys)) = scan_step(op)? else {
                current = None;
                continue;
            };
            iteration.returned.extend(keys);
            let finished = cursor_next == b"0";
            *next = cursor_next;
            if finished {
                done.push(current.take().expect("in progress").0);
            }
        }
    }
    Ok(done)
}

/// An iteration being followed through the execution order.
struct Window {
    iteration: Iteration<ScanFilters>,
    db: usize,
    /// Execution index of the last call.
    exec_last: usize,
    /// Keys live since the window opened, with their expiry time.
    candidates: BTreeMap<Vec<u8>, Option<u64>>,
    /// Keys present (or unknown) at some point in the window.
    existed: BTreeSet<Vec<u8>>,
    /// The latest wall-clock time seen in the window.
    now_ms_max: u64,
    /// The model lost track: the iteration is not judged.
    skipped: bool,
}

fn check_scans(history: &History) -> Result<(), String> {
    let found = check_iterations(history)?;
    if found.is_empty() {
        return Ok(());
    }
    let exec_index = history.first_executions();
    // Windows waiting to open, by first execution.
    let mut pending: BTreeMap<usize, Vec<Window>> = BTreeMap::new();
    for iteration in found {
        let execs: Option<Vec<usize>> = iteration
            .calls
            .iter()
            .map(|&c| {
                exec_index
                    .get(&(history.ops[c].conn, history.ops[c].seq_in_conn))
                    .copied()
            })
            .collect();
        let Some(execs) = execs else { continue };
        let (exec_first, exec_last) = (execs[0], *execs.last().expect("an iteration has calls"));
        debug_assert!(exec_first <= exec_last);
        pending.entry(exec_first).or_default().push(Window {
            iteration,
            db: 0,
            exec_last,
            candidates: BTreeMap::new(),
            existed: BTreeSet::new(),
            now_ms_max: 0,
            skipped: false,
        });
    }
    let ops = index_ops(history);
    let mut model = KeyspaceModel::new();
    let mut open: Vec<Window> = Vec::new();
    for (i, exec) in history.executions.iter().enumerate() {
        let now = exec.unix_ms;
        for mut w in pending.remove(&i).unwrap_or_default() {
            open_window(&mut w, &model, now);
            open.push(w);
        }
        let is_call_of = |w: &Window| w.iteration.conn == exec.conn;
        for w in open.iter_mut().filter(|w| is_call_of(w)) {
            // A SELECT between the calls moves the iteration to another db.
            if model.conn_db(w.iteration.conn) != Some(w.db) {
                w.skipped = true;
            }
        }
        model.apply(exec, ops.of_execution(i, exec));
        for w in open.iter_mut() {
            follow_window(w, &model, now);
        }
        let mut still_open = Vec::with_capacity(open.len());
        for w in open {
            if w.exec_last != i {
                still_open.push(w);
                continue;
            }
            if !w.skipped {
                judge(&w, history)?;
            }
        }
        open = still_open;
        if open.is_empty() && pending.is_empty() {
            break;
        }
    }
    Ok(())
}

fn open_window(w: &mut Window, model: &KeyspaceModel, now: u64) {
    w.now_ms_max = now;
    let Some(db) = model
        .conn_db(w.iteration.conn)
        .filter(|&db| !model.db_is_unknown(db))
    else {
        w.skipped = true;
        return;
    };
    w.db = db;
    for key in model.live_keys(db, now).cloned() {
        w.existed.insert(key.clone());
        let matches = w
            .iteration
            .filters
            .pattern
            .as_ref()
            .is_none_or(|p| glob_match(p, &key));
        if matches {
            if let KeyState::Present(e) = model.peek(db, &key, now) {
                if has_wanted_type(&w.iteration, e) {
                    w.candidates.insert(key, e.expire_unix_ms);
                }
            }
        }
    }
    w.existed.extend(model.unknown_keys_in(db).cloned());
}

/// Whether `entry` is of the type SCAN's TYPE filter asks for (any type
/// without one).
fn has_wanted_type(iteration: &Iteration<ScanFilters>, entry: &crate::check::model::Entry) -> bool {
    iteration
        .filters
        .type_filter
        .as_ref()
        .is_none_or(|t| t.as_slice() == entry.value.type_name().as_bytes())
}

/// Updates a window after one execution.
fn follow_window(w: &mut Window, model: &KeyspaceModel, now: u64) {
    if w.skipped {
        return;
    }
    w.now_ms_max = w.now_ms_max.max(now);
    let touched = model.touched();
    if model.db_is_unknown(w.db) {
        w.skipped = true;
        return;
    }
    let db = w.db;
    let mut changed: Vec<Vec<u8>> = touched
        .keys
        .iter()
        .filter(|(d, _)| *d == db)
        .map(|(_, k)| k.clone())
        .collect();
    if touched.dbs[db] {
        changed.extend(w.candidates.keys().cloned());
    }
    for key in changed {
        // A candidate whose expiry came before this write was absent for a
        // while, whatever the write did.
        let expired = w
            .candidates
            .get(&key)
            .is_some_and(|e| e.is_some_and(|when| when <= w.now_ms_max));
        match model.peek(db, &key, now) {
            KeyState::Present(e) => {
                w.existed.insert(key.clone());
                // A key that changed type may be filtered out by TYPE.
                if !expired && has_wanted_type(&w.iteration, e) {
                    if let Some(expire) = w.candidates.get_mut(&key) {
                        *expire = e.expire_unix_ms;
                    }
                    continue;
                }
            }
            KeyState::Unknown => {
                w.existed.insert(key.clone());
            }
            KeyState::Absent => {}
        }
        w.candidates.remove(&key);
    }
}

/// Checks a closed window.
fn judge(w: &Window, history: &History) -> Result<(), String> {
    let it = &w.iteration;
    let first: &Op = &history.ops[it.calls[0]];
    let context = || {
        format!(
            "SCAN iteration on conn {} (requests {}..={}, {} calls, db {}, MATCH {:?})",
            it.conn,
            first.seq_in_conn,
            history.ops[*it.calls.last().expect("calls")].seq_in_conn,
            it.calls.len(),
            w.db,
            it.filters
                .pattern
                .as_ref()
                .map(|p| String::from_utf8_lossy(p).into_owned())
        )
    };
    let missed: Vec<&Vec<u8>> = w
        .candidates
        .iter()
        .filter(|(key, expire)| {
            expire.is_none_or(|when| when > w.now_ms_max) && !it.returned.contains(key.as_slice())
        })
        .map(|(key, _)| key)
        .collect();
    if !missed.is_empty() {
        return Err(format!(
            "{}: {} keys present for the whole iteration were never returned: {}",
            context(),
            missed.len(),
            shown(missed)
        ));
    }
    let phantom: Vec<&Vec<u8>> = it
        .returned
        .iter()
        .filter(|k| !w.existed.contains(*k))
        .collect();
    if !phantom.is_empty() {
        return Err(format!(
            "{}: returned keys that never existed during it: {}",
            context(),
            shown(phantom)
        ));
    }
    if let Some(pattern) = &it.filters.pattern {
        let unmatched: Vec<&Vec<u8>> = it
            .returned
            .iter()
            .filter(|k| !glob_match(pattern, k))
            .collect();
        if !unmatched.is_empty() {
            return Err(format!(
                "{}: returned keys that do not match: {}",
                context(),
                shown(unmatched)
            ));
        }
    }
    Ok(())
}

/// Keys for a failure message: the first [`KEYS_SHOWN_MAX`], then a count.
/// Shared with the probe's SCAN checker.
pub(crate) fn shown(keys: Vec<&Vec<u8>>) -> String {
    let n = keys.len();
    let mut list: Vec<String> = keys
        .into_iter()
        .take(KEYS_SHOWN_MAX)
        .map(|k| format!("{:?}", String::from_utf8_lossy(k)))
        .collect();
    if n > KEYS_SHOWN_MAX {
        list.push(format!("... {} more", n - KEYS_SHOWN_MAX));
    }
    list.join(", ")
}

#[cfg(test)]
mod tests {
    use seedkv_engine::resp::Frame;

    use super::{check_scans, SCAN_CALLS_SLACK};
    use crate::check::model::testkit::{bulk, simple, Builder};

    fn scan_reply(cursor: &str, keys: &[&str]) -> Frame {
        Frame::Array(vec![
            bulk(cursor),
            Frame::Array(keys.iter().map(|k| bulk(k)).collect()),
        ])
    }

    /// Keys a..e exist; conn 1 scans in two calls while conn 2 writes.
    fn churn(second_batch: &[&str]) -> Builder {
        let mut b = Builder::new();
        b.run(2, "MSET a 1 b 2 c 3 d 4 e 5", simple("OK"));
        b.run(2, "SET t 1 PX 50", simple("OK"));
        b.run(1, "SCAN 0 COUNT 2", scan_reply("6", &["a", "b"]));
        // Deleted during the iteration: need not be returned, may be.
        b.run(2, "DEL c", Frame::Integer(1));
        // Created during the iteration: may be returned.
        b.run(2, "SET new 1", simple("OK"));
        // Overwritten: still present for the whole iteration.
        b.run(2, "SET d 44", simple("OK"));
        b.advance_ms(100);
        b.run(1, "SCAN 6 COUNT 2", scan_reply("0", second_batch));
        b
    }

    #[test]
    fn complete_iteration_under_churn_passes() {
        let b = churn(&["d", "e", "new", "a"]);
        check_scans(&b.history).expect("every stable key returned");
        let b = churn(&["c", "d", "e", "t"]);
        check_scans(&b.history).expect("deleted and expiring keys may be returned");
    }

    #[test]
    fn missing_a_stable_key_fails() {
        let b = churn(&["d", "new"]);
        let message = check_scans(&b.history).expect_err("e was never returned");
        assert!(message.contains("\"e\""), "{message}");
    }

    #[test]
    fn a_key_that_never_existed_fails() {
        let b = churn(&["d", "e", "ghost"]);
        let message = check_scans(&b.history).expect_err("ghost never existed");
        assert!(message.contains("ghost"), "{message}");
    }

    #[test]
    fn match_filters_what_must_and_may_be_returned() {
        let mut b = Builder::new();
        b.run(2, "MSET a1 1 a2 2 b1 3", simple("OK"));
        b.run(1, "SCAN 0 MATCH a*", scan_reply("0", &["a1", "a2"]));
        check_scans(&b.history).expect("b1 need not be returned");
        b.history.ops[1].complete = Some((b.now_ns, scan_reply("0", &["a1", "a2", "b1"])));
        assert!(check_scans(&b.history)
            .expect_err("b1 does not match")
            .contains("b1"));
    }

    #[test]
    fn type_filters_what_must_be_returned() {
        let mut b = Builder::new();
        b.run(2, "SET s 1", simple("OK"));
        b.run(2, "RPUSH l a", Frame::Integer(1));
        b.run(1, "SCAN 0 TYPE string", scan_reply("0", &["s"]));
        check_scans(&b.history).expect("the list need not be returned");
        b.run(1, "SCAN 0 TYPE list", scan_reply("0", &[]));
        assert!(check_scans(&b.history)
            .expect_err("the list was there")
            .contains("\"l\""));
    }

    #[test]
    fn a_key_that_expired_and_came_back_is_not_required() {
        let mut b = Builder::new();
        b.run(2, "SET k v PX 10", simple("OK"));
        b.run(2, "SET j v", simple("OK"));
        b.run(1, "SCAN 0", scan_reply("3", &[]));
        b.advance_ms(20);
        b.run(2, "SET k again", simple("OK"));
        b.run(1, "SCAN 3", scan_reply("0", &["j"]));
        check_scans(&b.history).expect("k was absent for a while");
        let last = b.history.ops.len() - 1;
        b.history.ops[last].complete = Some((b.now_ns, scan_reply("0", &[])));
        assert!(check_scans(&b.history)
            .expect_err("j is stable")
            .contains("\"j\""));
    }

    #[test]
    fn unfinished_iterations_are_skipped_but_endless_ones_fail() {
        let mut b = Builder::new();
        b.run(2, "SET a 1", simple("OK"));
        b.run(1, "SCAN 0", scan_reply("1", &[]));
        let i = b.run(1, "SCAN 1", scan_reply("2", &[]));
        b.history.ops[i].complete = None;
        check_scans(&b.history).expect("cut short by the connection's death");
        let mut b = Builder::new();
        b.run(2, "SET a 1", simple("OK"));
        b.run(1, "SCAN 0", scan_reply("1", &[]));
        for _ in 0..SCAN_CALLS_SLACK + 100 {
            b.run(1, "SCAN 1", scan_reply("1", &[]));
        }
        assert!(check_scans(&b.history)
            .expect_err("cursor 1 forever")
            .contains("did not terminate"));
    }

    #[test]
    fn keys_the_model_cannot_follow_are_not_required() {
        let mut b = Builder::new();
        b.run(2, "MSET a 1 b 2", simple("OK"));
        b.run(1, "SCAN 0", scan_reply("5", &["a"]));
        b.run(2, "XDEL b 1-1", Frame::Integer(1));
        b.history.executions.last_mut().unwrap().flags = seedkv_engine::cmd::flags::WRITE;
        b.run(1, "SCAN 5", scan_reply("0", &[]));
        check_scans(&b.history).expect("b became unknown");
        b.history.ops.truncate(0);
        b.history.executions.truncate(0);
        b.run(2, "MSET a 1 b 2", simple("OK"));
        b.run(1, "SCAN 0", scan_reply("5", &["a"]));
        b.run(2, "GET b", bulk("2"));
        b.run(1, "SCAN 5", scan_reply("0", &[]));
        assert!(check_scans(&b.history).is_err(), "b stayed and was missed");
    }
}
