//! The transfer workload's money (see `workload::transfer`), judged twice.
//!
//! **From the client histories alone** ([`check_observations`], which the
//! real-socket probe reuses): every observation of a whole protected pool
//! — an MGET (one command is atomic), the EXEC of a MULTI of GETs, the read
//! script — sums to [`TOTAL`]. A partial transfer seen by a reader breaks
//! it. The unprotected pool is exempt: its DECRBY/INCRBY pairs are
//! pipelined without MULTI, and a reader may see money in flight.
//!
//! **Through the engine's execution order** ([`check_execution_order`]):
//! an exact replay of every `acct:` key. Each write is applied where it
//! executed (an EXEC's commands where they ran, recorded with `in_exec`; a
//! script as a whole where it ran), so a transfer whose EXEC reply was
//! lost counts exactly when it executed. Every reply the clients got —
//! reads of both pools, DECRBY/INCRBY results, the elements of an EXEC's
//! array, a script's balances — must equal the replay's: every committed
//! transfer is visible exactly once, and nothing else moved money. A
//! WATCH round's EXEC must be null when a watched key was written after
//! the WATCH, or was alive at WATCH and expired before EXEC; and must run
//! when neither happened (expiry within a millisecond of either is left
//! undecided).

use std::collections::BTreeMap;

use seedkv_engine::resp::Frame;

use super::{Checker, RunFacts, Violation};
use crate::fxhash::FxHashMap;
use crate::history::{ConnId, History, Op};
use crate::workload::transfer::{
    parse_account, Pool, ACCOUNTS_COUNT, READ_FUNCTION, READ_SCRIPT, TOTAL, TRANSFER_FUNCTION,
    TRANSFER_SCRIPT,
};

pub struct TransferCheck;

const NAME: &str = "transfer";
const WORKLOAD: &str = "transfer";

impl Checker for TransferCheck {
    fn name(&self) -> &'static str {
        NAME
    }

    fn check(&self, history: &History, _facts: &RunFacts) -> Result<(), Violation> {
        check_observations(&history.ops)
            .and_then(|()| check_execution_order(history))
            .map_err(|message| Violation {
                checker: NAME,
                message,
            })
    }
}

/// An integer from a bulk reply.
fn bulk_i64(frame: &Frame) -> Option<i64> {
    match frame {
        Frame::Bulk(b) => std::str::from_utf8(b).ok()?.parse().ok(),
        _ => None,
    }
}

/// Whether `keys` are exactly the protected pool, in index order.
fn is_whole_protected_pool(keys: &[Vec<u8>]) -> bool {
    keys.len() == ACCOUNTS_COUNT as usize
        && keys
            .iter()
            .enumerate()
            .all(|(i, k)| parse_account(k) == Some((Pool::Protected, i as u32)))
}

/// The sum of one observation of the protected pool.
fn observed_sum(values: &[Frame]) -> Result<i64, String> {
    let mut sum = 0i64;
    for v in values {
        let Some(n) = bulk_i64(v) else {
            return Err(format!("a balance read as {v:?}"));
        };
        sum = sum.saturating_add(n);
    }
    Ok(sum)
}

/// The ops of each connection, indexed by `seq_in_conn`.
fn ops_by_conn(ops: &[Op]) -> FxHashMap<ConnId, Vec<&Op>> {
    let mut by_conn: FxHashMap<ConnId, Vec<&Op>> = FxHashMap::default();
    for op in ops {
        by_conn.entry(op.conn).or_default().push(op);
    }
    for list in by_conn.values_mut() {
        list.sort_by_key(|op| op.seq_in_conn);
    }
    by_conn
}

/// The requests queued between the MULTI before `exec` and `exec` on its
/// connection (`conn_ops` indexed by `seq_in_conn`).
pub fn queued_before<'h>(conn_ops: &[&'h Op], exec: &Op) -> Option<Vec<&'h Op>> {
    let end = usize::try_from(exec.seq_in_conn).ok()?;
    let start = conn_ops[..end.min(conn_ops.len())]
        .iter()
        .rposition(|op| op.args[0].eq_ignore_ascii_case(b"MULTI"))?;
    Some(conn_ops[start + 1..end].to_vec())
}

/// The keys a script request (EVAL, EVALSHA and their `_RO` forms)
/// declares; `None` for any other request or a malformed count. The
/// workloads' scripts touch no other key, which lets the reference model
/// and linearizability forget just these where a script ran.
pub fn script_keys(args: &[Vec<u8>]) -> Option<&[Vec<u8>]> {
    let name = args.first()?;
    let is_script = [
        &b"EVAL"[..],
        b"EVALSHA",
        b"EVAL_RO",
        b"EVALSHA_RO",
        b"FCALL",
        b"FCALL_RO",
    ]
    .iter()
    .any(|n| name.eq_ignore_ascii_case(n));
    if !is_script {
        return None;
    }
    let count: usize = std::str::from_utf8(args.get(2)?).ok()?.parse().ok()?;
    args.get(3..3usize.checked_add(count)?)
}

/// Whether a request runs at once inside MULTI rather than being queued
/// (as the engine's `multi::runs_inside_multi` decides).
pub fn runs_inside_multi(name: &[u8]) -> bool {
    [
        &b"EXEC"[..],
        b"DISCARD",
        b"MULTI",
        b"WATCH",
        b"QUIT",
        b"RESET",
    ]
    .iter()
    .any(|n| name.eq_ignore_ascii_case(n))
}

/// The history-only half: every observation of the whole protected pool
/// sums to [`TOTAL`].
pub fn check_observations(ops: &[Op]) -> Result<(), String> {
    let by_conn = ops_by_conn(ops);
    for op in ops {
        if op.workload != WORKLOAD {
            continue;
        }
        let Some((_, reply)) = &op.complete else {
            continue;
        };
        let name = op.args[0].to_ascii_uppercase();
        let values: Option<&[Frame]> = match (name.as_slice(), reply) {
            (b"MGET", Frame::Array(v)) if is_whole_protected_pool(&op.args[1..]) => Some(v),
            (b"EVAL" | b"FCALL_RO", Frame::Array(v)) if is_read_script(op) => Some(v),
            (b"EXEC", Frame::Array(v)) => {
                let queued = by_conn
                    .get(&op.conn)
                    .and_then(|c| queued_before(c, op))
                    .unwrap_or_default();
                let all_gets = queued
                    .iter()
                    .all(|q| q.args.len() == 2 && q.args[0].eq_ignore_ascii_case(b"GET"));
                let keys: Vec<Vec<u8>> = queued
                    .iter()
                    .filter_map(|q| q.args.get(1).cloned())
                    .collect();
                (all_gets && is_whole_protected_pool(&keys)).then_some(v.as_slice())
            }
            _ => None,
        };
        let Some(values) = values else {
            continue;
        };
        let what = match name.as_slice() {
            b"EXEC" => "a MULTI of GETs",
            b"EVAL" => "the read script",
            b"FCALL_RO" => "the read function",
            _ => "MGET",
        };
        let sum = observed_sum(values).map_err(|e| {
            format!(
                "{what} on conn {} request #{}: {e}",
                op.conn, op.seq_in_conn
            )
        })?;
        if sum != TOTAL || values.len() != ACCOUNTS_COUNT as usize {
            return Err(format!(
                "{what} on conn {} request #{} saw balances {} summing to {sum}, not {TOTAL}: \
                 a reader observed a partial transfer",
                op.conn,
                op.seq_in_conn,
                render_values(values)
            ));
        }
    }
    Ok(())
}

fn render_values(values: &[Frame]) -> String {
    let parts: Vec<String> = values
        .iter()
        .map(|v| match bulk_i64(v) {
            Some(n) => n.to_string(),
            None => format!("{v:?}"),
        })
        .collect();
    format!("[{}]", parts.join(", "))
}

/// The read script, by EVAL or as the library's `bank_read`.
fn is_read_script(op: &Op) -> bool {
    is_workload_script(op, READ_SCRIPT, READ_FUNCTION)
}

/// The transfer script, by EVAL or as the library's `bank_transfer`.
fn is_transfer_script(op: &Op) -> bool {
    is_workload_script(op, TRANSFER_SCRIPT, TRANSFER_FUNCTION)
}

fn is_workload_script(op: &Op, script: &str, function: &str) -> bool {
    let (Some(name), Some(body)) = (op.args.first(), op.args.get(1)) else {
        return false;
    };
    if name.eq_ignore_ascii_case(b"EVAL") {
        return body == script.as_bytes();
    }
    let is_fcall = name.eq_ignore_ascii_case(b"FCALL") || name.eq_ignore_ascii_case(b"FCALL_RO");
    is_fcall && body.eq_ignore_ascii_case(function.as_bytes())
}

/// What a watched key looked like at WATCH.
#[derive(Clone, Debug)]
struct Watched {
    key: Vec<u8>,
    /// The replay's write counter of the key at WATCH.
    writes_at_watch: u64,
    /// Its expiry (unix ms) if it had one and was alive at WATCH; `Err`
    /// when too close to call.
    expires_at_ms: Result<Option<u64>, ()>,
}

/// The replay of the `acct:` keys.
#[derive(Default)]
struct Replay {
    /// Balances of the accounts (absent until opened).
    balances: BTreeMap<Vec<u8>, i64>,
    /// Lease expiry times (unix ms) of the lease keys that have one.
    leases: BTreeMap<Vec<u8>, u64>,
    /// Writes to each key so far (to tell a watched key was touched).
    writes: BTreeMap<Vec<u8>, u64>,
    /// Per connection: the keys it watches.
    watching: FxHashMap<ConnId, Vec<Watched>>,
    /// Per connection: replies the commands of its running EXEC produced.
    exec_replies: FxHashMap<ConnId, Vec<Frame>>,
    /// Per connection: the WATCH verdict for its running EXEC (see
    /// [`Replay::exec_must_fail`]), taken before its first command ran.
    decisions: FxHashMap<ConnId, (Option<bool>, String)>,
}

impl Replay {
    fn touch(&mut self, key: &[u8]) {
        *self.writes.entry(key.to_vec()).or_default() += 1;
    }

    fn get(&self, key: &[u8], now_ms: u64) -> Frame {
        if let Some(v) = self.balances.get(key) {
            return Frame::Bulk(v.to_string().into_bytes());
        }
        match self.leases.get(key) {
            Some(&at_ms) if at_ms > now_ms => Frame::Bulk(b"held".to_vec()),
            _ => Frame::Null,
        }
    }

    /// Applies one command to the replay and returns its reply; `None`
    /// for a command the replay does not know (none of the workload's).
    fn apply(&mut self, args: &[Vec<u8>], now_ms: u64) -> Option<Frame> {
        let name = args[0].to_ascii_uppercase();
        match name.as_slice() {
            b"GET" => Some(self.get(args.get(1)?, now_ms)),
            b"MGET" => Some(Frame::Array(
                args[1..].iter().map(|k| self.get(k, now_ms)).collect(),
            )),
            b"MSETNX" => {
                let pairs: Vec<&[Vec<u8>]> = args[1..].chunks(2).collect();
                if pairs.iter().any(|p| self.balances.contains_key(&p[0])) {
                    return Some(Frame::Integer(0));
                }
                for p in pairs {
                    let v = bulk_i64(&Frame::Bulk(p.get(1)?.clone()))?;
                    self.balances.insert(p[0].clone(), v);
                    self.touch(&p[0]);
                }
                Some(Frame::Integer(1))
            }
            b"DECRBY" | b"INCRBY" => {
                let key = args.get(1)?;
                let by = bulk_i64(&Frame::Bulk(args.get(2)?.clone()))?;
                let by = if name == b"DECRBY" { -by } else { by };
                let v = self.balances.entry(key.clone()).or_insert(0);
                *v += by;
                let v = *v;
                self.touch(key);
                Some(Frame::Integer(v))
            }
            b"SET" => {
                let key = args.get(1)?;
                match parse_account(key) {
                    Some(_) => {
                        let v = bulk_i64(&Frame::Bulk(args.get(2)?.clone()))?;
                        self.balances.insert(key.clone(), v);
                    }
                    None => {
                        // A lease: SET key held PX ms.
                        let ms = bulk_i64(&Frame::Bulk(args.get(4)?.clone()))?;
                        self.leases.insert(key.clone(), now_ms + ms as u64);
                    }
                }
                self.touch(key);
                Some(Frame::Simple(b"OK".to_vec()))
            }
            b"WATCH" | b"UNWATCH" | b"MULTI" => Some(Frame::Simple(b"OK".to_vec())),
            _ => None,
        }
    }

    fn watch(&mut self, conn: ConnId, keys: &[Vec<u8>], now_ms: u64) {
        let list = self.watching.entry(conn).or_default();
        for key in keys {
            let expires_at_ms = match self.leases.get(key) {
                // Alive at WATCH by a clear margin, or clearly not.
                Some(&at_ms) if at_ms > now_ms + 1 => Ok(Some(at_ms)),
                Some(&at_ms) if at_ms + 1 < now_ms => Ok(None),
                Some(_) => Err(()),
                None => Ok(None),
            };
            list.push(Watched {
                key: key.clone(),
                writes_at_watch: self.writes.get(key).copied().unwrap_or(0),
                expires_at_ms,
            });
        }
    }

    /// Whether an EXEC on `conn` at `now_ms` must fail (`Some(true)`), must
    /// run (`Some(false)`), or is too close to call; and why.
    fn exec_must_fail(&mut self, conn: ConnId, now_ms: u64) -> (Option<bool>, String) {
        let watched = self.watching.remove(&conn).unwrap_or_default();
        let mut unsure = false;
        for w in &watched {
            let key = String::from_utf8_lossy(&w.key);
            if self.writes.get(&w.key).copied().unwrap_or(0) != w.writes_at_watch {
                return (Some(true), format!("watched {key} was written after WATCH"));
            }
            match w.expires_at_ms {
                Ok(Some(at_ms)) if now_ms > at_ms => {
                    return (
                        Some(true),
                        format!(
                            "watched {key} was alive at WATCH and expired at {at_ms} ms, \
                             before EXEC at {now_ms} ms"
                        ),
                    )
                }
                Ok(Some(at_ms)) if now_ms + 1 >= at_ms => unsure = true,
                Err(()) => unsure = true,
                _ => {}
            }
        }
        match unsure {
            true => (None, String::new()),
            false => (Some(false), "no watched key changed or expired".into()),
        }
    }
}

/// The execution-order half: the exact replay of every `acct:` key.
pub fn check_execution_order(history: &History) -> Result<(), String> {
    let ops: FxHashMap<(ConnId, u64), &Op> = history
        .ops
        .iter()
        .filter(|op| op.workload == WORKLOAD)
        .map(|op| ((op.conn, op.seq_in_conn), op))
        .collect();
    let mut replay = Replay::default();
    for exec in &history.executions {
        let Some(op) = ops.get(&(exec.conn, exec.seq_in_conn)).copied() else {
            continue;
        };
        if exec.name.is_empty() {
            continue;
        }
        let at = || {
            format!(
                "{} on conn {} request #{} (at {} ms)",
                render(&op.args),
                op.conn,
                op.seq_in_conn,
                exec.unix_ms
            )
        };
        let reply = op.complete.as_ref().map(|(_, r)| r);
        let name = op.args[0].to_ascii_uppercase();
        if exec.in_exec.is_some_and(|e| e == exec.seq_in_conn) {
            // A script's own call: the script is replayed as a whole below.
            continue;
        }
        if let Some(exec_seq) = exec.in_exec {
            // A command EXEC ran: its reply is an element of EXEC's array.
            if !replay.exec_replies.contains_key(&exec.conn) {
                // WATCH is judged before the queue runs (its own writes
                // come after the decision).
                let decision = replay.exec_must_fail(exec.conn, exec.unix_ms);
                replay.decisions.insert(exec.conn, decision);
            }
            let Some(predicted) = replay.apply(&op.args, exec.unix_ms) else {
                return Err(format!(
                    "{}: not a transfer command (EXEC #{exec_seq})",
                    at()
                ));
            };
            replay
                .exec_replies
                .entry(exec.conn)
                .or_default()
                .push(predicted);
            continue;
        }
        match name.as_slice() {
            b"WATCH" => {
                replay.watch(exec.conn, &op.args[1..], exec.unix_ms);
                continue;
            }
            b"UNWATCH" | b"MULTI" => {
                if name == b"UNWATCH" {
                    replay.watching.remove(&exec.conn);
                }
                continue;
            }
            b"EXEC" => {
                let ran = replay.exec_replies.remove(&exec.conn).unwrap_or_default();
                let (must_fail, why) = match replay.decisions.remove(&exec.conn) {
                    Some(decision) => decision,
                    None => replay.exec_must_fail(exec.conn, exec.unix_ms),
                };
                let committed = !ran.is_empty() || matches!(reply, Some(Frame::Array(_)));
                match must_fail {
                    Some(true) if committed => {
                        return Err(format!(
                            "{} ran {} commands, but {why}: the EXEC must fail",
                            at(),
                            ran.len()
                        ));
                    }
                    Some(false) if matches!(reply, Some(Frame::Null)) => {
                        return Err(format!("{} replied null, but {why}", at()));
                    }
                    _ => {}
                }
                match reply {
                    Some(Frame::Array(items)) if *items != ran => {
                        return Err(format!(
                            "{} replied {}, but its commands, as they ran, replied {}",
                            at(),
                            render_values(items),
                            render_values(&ran)
                        ));
                    }
                    Some(Frame::Null) if !ran.is_empty() => {
                        return Err(format!(
                            "{} replied null but ran {} commands",
                            at(),
                            ran.len()
                        ));
                    }
                    _ => {}
                }
                continue;
            }
            _ => {}
        }
        let predicted = if matches!(name.as_slice(), b"EVAL" | b"FCALL" | b"FCALL_RO") {
            match eval_reply(&mut replay, op, exec.unix_ms) {
                Some(p) => p,
                None => continue,
            }
        } else {
            match replay.apply(&op.args, exec.unix_ms) {
                Some(p) => p,
                None => continue,
            }
        };
        if let Some(reply) = reply {
            if *reply != predicted && !matches!(reply, Frame::Error(_)) {
                return Err(format!(
                    "{} replied {}, but the accounts' history says {}: a transfer was lost, \
                     duplicated or seen half-done",
                    at(),
                    render_values(std::slice::from_ref(reply)),
                    render_values(std::slice::from_ref(&predicted))
                ));
            }
        }
    }
    Ok(())
}

/// A script of the workload, replayed as a whole; `None` for another
/// script (the EVAL probe of an engine without scripts runs nothing).
fn eval_reply(replay: &mut Replay, op: &Op, now_ms: u64) -> Option<Frame> {
    if matches!(op.complete, Some((_, Frame::Error(_)))) {
        return None;
    }
    let keys_count: usize = std::str::from_utf8(op.args.get(2)?).ok()?.parse().ok()?;
    let keys = op.args.get(3..3 + keys_count)?;
    if is_read_script(op) {
        let values = keys.iter().map(|k| replay.get(k, now_ms)).collect();
        return Some(Frame::Array(values));
    }
    if is_transfer_script(op) {
        let amount = op.args.get(3 + keys_count)?.clone();
        let a = replay.apply(
            &[b"DECRBY".to_vec(), keys[0].clone(), amount.clone()],
            now_ms,
        )?;
        let b = replay.apply(&[b"INCRBY".to_vec(), keys.get(1)?.clone(), amount], now_ms)?;
        return Some(Frame::Array(vec![a, b]));
    }
    None
}

fn render(args: &[Vec<u8>]) -> String {
    let parts: Vec<String> = args
        .iter()
        .take(8)
        .map(|a| {
            let s = String::from_utf8_lossy(a);
            if s.len() > 24 {
                format!("{}...", &s[..24])
            } else {
                s.into_owned()
            }
        })
        .collect();
    parts.join(" ")
}

#[cfg(test)]
mod tests;
