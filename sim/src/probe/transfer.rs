//! The transfer checker over real sockets: the history-only half of
//! `check::transfer` (every observation of the protected pool sums to the
//! total) and an end-state check from client replies alone.
//!
//! # The end state
//!
//! Once every client has stopped, the probe reads both pools with one MGET
//! ([`read_end_state`]). Each account's final balance must be its opening
//! balance plus the moves that touched it: the moves whose reply says they
//! ran count exactly, the moves whose reply was lost (the connection died
//! first) may or may not have run, and the moves refused (a null EXEC, an
//! error) count not at all. Without the server's execution order, a lost
//! reply leaves a range, not a value: each account's balance must lie in
//! [known + every lost debit, known + every lost credit]. When no reply was
//! lost the range is one value. The protected pool's total must also be
//! exactly [`TOTAL`]: every move there is atomic.
//!
//! What counts as a move, per account (the workload's only writers):
//! DECRBY / INCRBY (pipelined on the loose pool, or queued in MULTI on the
//! protected one), the transfer script (KEYS from, to; ARGV amount), and a
//! WATCH round's SETs (the new value minus what the round's GET read: the
//! EXEC ran only if that value was still current).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use seedkv_engine::resp::Frame;

use super::conn::ProbeConn;
use crate::check::transfer::{check_observations, queued_before};
use crate::check::{Checker, RunFacts, Violation};
use crate::fxhash::FxHashMap;
use crate::history::{ConnId, History, Op};
use crate::workload::transfer::{
    parse_account, pool_keys, Pool, ACCOUNTS_COUNT, INITIAL_BALANCE, TOTAL, TRANSFER_FUNCTION,
    TRANSFER_SCRIPT,
};

const NAME: &str = "transfer";
const WORKLOAD: &str = "transfer";
/// Pause before the final read, so that a request written just before its
/// connection was dropped has been executed or discarded.
const SETTLE_MS: u64 = 200;
/// The final read may take this long.
const READ_MS: u64 = 10_000;

/// Both pools' final balances, in `pool_keys` order (protected, then
/// loose), as the final MGET returned them.
pub type EndState = Vec<(Vec<u8>, Frame)>;

/// Reads both pools once every client has stopped.
pub fn read_end_state(addr: SocketAddr) -> Result<EndState, String> {
    std::thread::sleep(Duration::from_millis(SETTLE_MS));
    let mut conn = ProbeConn::connect(addr).map_err(|e| format!("final read: {e}"))?;
    let keys: Vec<Vec<u8>> = [Pool::Protected, Pool::Loose]
        .into_iter()
        .flat_map(pool_keys)
        .collect();
    let mut request: Vec<&[u8]> = vec![b"MGET"];
    request.extend(keys.iter().map(Vec::as_slice));
    let deadline = Instant::now() + Duration::from_millis(READ_MS);
    match conn.call(&request, deadline) {
        Ok(Frame::Array(values)) if values.len() == keys.len() => {
            Ok(keys.into_iter().zip(values).collect())
        }
        other => Err(format!("final MGET of the accounts failed: {other:?}")),
    }
}

/// The transfer checker of the probe: observations, then the end state
/// (when the probe read one).
pub struct BlackBoxTransfer {
    pub end_state: Option<EndState>,
}

impl Checker for BlackBoxTransfer {
    fn name(&self) -> &'static str {
        NAME
    }

    fn check(&self, history: &History, _facts: &RunFacts) -> Result<(), Violation> {
        let end = match &self.end_state {
            Some(end) => check_end_state(&history.ops, end),
            None => Ok(()),
        };
        check_observations(&history.ops)
            .and(end)
            .map_err(|message| Violation {
                checker: NAME,
                message,
            })
    }
}

/// What the history says about one account: the sum of the moves known to
/// have run, and the lost ones' debits and credits.
#[derive(Clone, Copy, Debug, Default)]
struct Moves {
    known: i64,
    lost_debits: i64,
    lost_credits: i64,
    /// Requests of the workload on this account, and how many had replies.
    answered: u64,
}

impl Moves {
    fn add(&mut self, delta: i64, ran: Option<bool>) {
        match ran {
            Some(true) => self.known = self.known.saturating_add(delta),
            Some(false) => {}
            None if delta < 0 => self.lost_debits = self.lost_debits.saturating_add(delta),
            None => self.lost_credits = self.lost_credits.saturating_add(delta),
        }
    }
}

fn int(arg: &[u8]) -> Option<i64> {
    std::str::from_utf8(arg).ok()?.parse().ok()
}

fn bulk_i64(frame: &Frame) -> Option<i64> {
    match frame {
        Frame::Bulk(b) => int(b),
        _ => None,
    }
}

/// Per account (by pool and index), the moves the history shows.
fn moves(ops: &[Op]) -> FxHashMap<(bool, u32), Moves> {
    let mut by_conn: FxHashMap<ConnId, Vec<&Op>> = FxHashMap::default();
    // Every op of a connection (faults' too): `queued_before` indexes by
    // `seq_in_conn`.
    for op in ops {
        by_conn.entry(op.conn).or_default().push(op);
    }
    let mut out: FxHashMap<(bool, u32), Moves> = FxHashMap::default();
    for conn_ops in by_conn.values_mut() {
        conn_ops.sort_by_key(|op| op.seq_in_conn);
        // `queued_before` indexes by `seq_in_conn`: a connection's ops are
        // all recorded, from 0, so the index is the position.
        let dense = conn_ops
            .iter()
            .enumerate()
            .all(|(i, op)| op.seq_in_conn == i as u64);
        if !dense {
            continue;
        }
        for (i, op) in conn_ops.iter().enumerate() {
            if op.workload != WORKLOAD {
                continue;
            }
            for (key, delta, ran) in op_moves(conn_ops, i, op) {
                if let Some((pool, index)) = parse_account(&key) {
                    let m = out.entry((pool == Pool::Protected, index)).or_default();
                    m.add(delta, ran);
                }
            }
            for key in op.args.iter().skip(1) {
                if let Some((pool, index)) = parse_account(key) {
                    let m = out.entry((pool == Pool::Protected, index)).or_default();
                    m.answered += u64::from(op.complete.is_some());
                }
            }
        }
    }
    out
}

/// Whether a request ran, from its own reply: `None` when it was lost.
fn ran(reply: Option<&Frame>) -> Option<bool> {
    match reply? {
        Frame::Error(_) | Frame::Null => Some(false),
        _ => Some(true),
    }
}

/// The moves request `i` of a connection makes: `(key, delta, ran)`.
fn op_moves(conn_ops: &[&Op], i: usize, op: &Op) -> Vec<(Vec<u8>, i64, Option<bool>)> {
    let name = op.args[0].to_ascii_uppercase();
    let reply = op.complete.as_ref().map(|(_, f)| f);
    let a = &op.args;
    match name.as_slice() {
        // Outside MULTI only: queued ones are counted with their EXEC.
        b"DECRBY" | b"INCRBY" if a.len() == 3 && !in_multi(conn_ops, i) => {
            let Some(n) = int(&a[2]) else {
                return Vec::new();
            };
            let delta = if name == b"DECRBY" { -n } else { n };
            vec![(a[1].clone(), delta, ran(reply))]
        }
        // The transfer script by EVAL, or the library's `bank_transfer` by
        // FCALL: the same `name body 2 from to amount` layout.
        b"EVAL" | b"FCALL" if a.len() == 6 && is_transfer_body(&name, &a[1]) && a[2] == b"2" => {
            let Some(n) = int(&a[5]) else {
                return Vec::new();
            };
            let r = ran(reply);
            vec![(a[3].clone(), -n, r), (a[4].clone(), n, r)]
        }
        b"EXEC" => {
            let Some(queued) = queued_before(conn_ops, op) else {
                return Vec::new();
            };
            let r = match reply {
                None => None,
                Some(Frame::Array(_)) => Some(true),
                Some(_) => Some(false),
            };
            queued
                .iter()
                .filter_map(|q| queued_move(conn_ops, q))
                .map(|(key, delta)| (key, delta, r))
                .collect()
        }
        _ => Vec::new(),
    }
}

/// Whether `body` is the workload's transfer script (EVAL) or function
/// (FCALL, whose name Redis matches case-sensitively).
fn is_transfer_body(name: &[u8], body: &[u8]) -> bool {
    match name {
        b"EVAL" => body == TRANSFER_SCRIPT.as_bytes(),
        _ => body == TRANSFER_FUNCTION.as_bytes(),
    }
}

/// Whether request `i` was sent between a MULTI and its EXEC/DISCARD.
fn in_multi(conn_ops: &[&Op], i: usize) -> bool {
    for op in conn_ops[..i].iter().rev() {
        let n = &op.args[0];
        if n.eq_ignore_ascii_case(b"MULTI") {
            return true;
        }
        if n.eq_ignore_ascii_case(b"EXEC") || n.eq_ignore_ascii_case(b"DISCARD") {
            return false;
        }
    }
    false
}

/// The move a request queued in MULTI makes: a DECRBY / INCRBY, or a
/// WATCH round's SET (relative to the round's GET of that key before the
/// MULTI).
fn queued_move(conn_ops: &[&Op], q: &Op) -> Option<(Vec<u8>, i64)> {
    let a = &q.args;
    if a.len() != 3 {
        return None;
    }
    let n = int(&a[2])?;
    if a[0].eq_ignore_ascii_case(b"DECRBY") {
        return Some((a[1].clone(), -n));
    }
    if a[0].eq_ignore_ascii_case(b"INCRBY") {
        return Some((a[1].clone(), n));
    }
    if !a[0].eq_ignore_ascii_case(b"SET") {
        return None;
    }
    let at = usize::try_from(q.seq_in_conn).ok()?;
    let read = conn_ops[..at.min(conn_ops.len())].iter().rev().find(|g| {
        g.args.len() == 2 && g.args[0].eq_ignore_ascii_case(b"GET") && g.args[1] == a[1]
    })?;
    let before = bulk_i64(&read.complete.as_ref()?.1)?;
    Some((a[1].clone(), n - before))
}

/// Each account's final balance lies in the range the history allows; the
/// protected pool sums to [`TOTAL`].
pub fn check_end_state(ops: &[Op], end: &EndState) -> Result<(), String> {
    let moves = moves(ops);
    let mut protected_sum = 0i64;
    let mut protected_seen = 0u32;
    for (key, frame) in end {
        let Some((pool, index)) = parse_account(key) else {
            continue;
        };
        let m = moves
            .get(&(pool == Pool::Protected, index))
            .copied()
            .unwrap_or_default();
        let key_text = String::from_utf8_lossy(key);
        let balance = match frame {
            // Never opened: no request of the workload on it was answered.
            Frame::Null if m.answered == 0 => continue,
            Frame::Null => return Err(format!("{key_text} is missing at the end")),
            f => bulk_i64(f).ok_or_else(|| format!("{key_text} reads {f:?} at the end"))?,
        };
        let low = INITIAL_BALANCE + m.known + m.lost_debits;
        let high = INITIAL_BALANCE + m.known + m.lost_credits;
        if balance < low || balance > high {
            return Err(format!(
                "{key_text} ends at {balance}, but its opening {INITIAL_BALANCE} plus the \
                 transfers acknowledged ({:+}) and those whose reply was lost (debits {}, \
                 credits {:+}) allow only {low}..={high}: a committed transfer was lost \
                 or money moved without one",
                m.known, m.lost_debits, m.lost_credits
            ));
        }
        if pool == Pool::Protected {
            protected_sum += balance;
            protected_seen += 1;
        }
    }
    if protected_seen == ACCOUNTS_COUNT && protected_sum != TOTAL {
        return Err(format!(
            "the protected accounts end summing to {protected_sum}, not {TOTAL}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(seq: u64, args: &[&str], reply: Option<Frame>) -> Op {
        Op {
            client: 0,
            conn: 1,
            seq_in_conn: seq,
            args: args.iter().map(|a| a.as_bytes().to_vec()).collect(),
            workload: WORKLOAD,
            invoke_ns: seq,
            complete: reply.map(|f| (seq + 1, f)),
        }
    }

    fn bulk(n: i64) -> Frame {
        Frame::Bulk(n.to_string().into_bytes())
    }

    fn end(protected: [i64; 5], loose: [i64; 5]) -> EndState {
        let p = pool_keys(Pool::Protected).into_iter().zip(protected);
        let l = pool_keys(Pool::Loose).into_iter().zip(loose);
        p.chain(l).map(|(k, v)| (k, bulk(v))).collect()
    }

    fn history() -> Vec<Op> {
        let queued = || Some(Frame::Simple(b"QUEUED".to_vec()));
        vec![
            op(0, &["MULTI"], Some(Frame::Simple(b"OK".to_vec()))),
            op(1, &["DECRBY", "acct:0", "10"], queued()),
            op(2, &["INCRBY", "acct:1", "10"], queued()),
            op(
                3,
                &["EXEC"],
                Some(Frame::Array(vec![bulk(990), bulk(1010)])),
            ),
            // A pipelined pair whose second reply was lost.
            op(
                4,
                &["DECRBY", "acct:loose:2", "7"],
                Some(Frame::Integer(993)),
            ),
            op(5, &["INCRBY", "acct:loose:3", "7"], None),
        ]
    }

    #[test]
    fn acknowledged_transfers_count_exactly_and_lost_ones_maybe() {
        let ops = history();
        let base = [1000; 5];
        let ok = end([990, 1010, 1000, 1000, 1000], [1000, 1000, 993, 1000, 1000]);
        assert_eq!(check_end_state(&ops, &ok), Ok(()));
        let lost_ran = end([990, 1010, 1000, 1000, 1000], [1000, 1000, 993, 1007, 1000]);
        assert_eq!(check_end_state(&ops, &lost_ran), Ok(()));
        let committed_lost = end(base, [1000, 1000, 993, 1000, 1000]);
        let e = check_end_state(&ops, &committed_lost).unwrap_err();
        assert!(e.contains("acct:0 ends at 1000"), "{e}");
        let moved = end([990, 1010, 1000, 1000, 1000], [1000, 1000, 993, 1008, 1000]);
        assert!(check_end_state(&ops, &moved).is_err());
    }

    #[test]
    fn a_watch_round_moves_what_its_set_changed() {
        let ops = vec![
            op(
                0,
                &["WATCH", "acct:0", "acct:1"],
                Some(Frame::Simple(b"OK".to_vec())),
            ),
            op(1, &["GET", "acct:0"], Some(bulk(1000))),
            op(2, &["GET", "acct:1"], Some(bulk(1000))),
            op(3, &["MULTI"], Some(Frame::Simple(b"OK".to_vec()))),
            op(
                4,
                &["SET", "acct:0", "975"],
                Some(Frame::Simple(b"QUEUED".to_vec())),
            ),
            op(
                5,
                &["SET", "acct:1", "1025"],
                Some(Frame::Simple(b"QUEUED".to_vec())),
            ),
            op(6, &["EXEC"], Some(Frame::Array(vec![]))),
        ];
        let ok = end([975, 1025, 1000, 1000, 1000], [1000; 5]);
        assert_eq!(check_end_state(&ops, &ok), Ok(()));
        let mut null = ops.clone();
        null[6].complete = Some((7, Frame::Null));
        assert!(check_end_state(&null, &ok).is_err());
        assert_eq!(check_end_state(&null, &end([1000; 5], [1000; 5])), Ok(()));
    }
}
