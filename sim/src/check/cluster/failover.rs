//! A coordinated failover loses no confirmed write. FAILOVER without
//! FORCE pauses writes and hands over only once the target acknowledged
//! the primary's whole stream, so after one that completed, every write
//! that was acknowledged and then confirmed by a WAIT returning at least
//! 1 before the FAILOVER began is in the new primary's history:
//!
//! - its stream: the new primary's history (the witness stream read from
//!   it right after its promotion) takes the old one over at an offset at
//!   or past the WAIT's offset, the end of the connection's writes;
//! - its data: each such append (`RPUSH`, unique elements on lists that
//!   only grow, so nothing later overwrites it) is in the final primary's
//!   list, unless a primary crashed after the failover (that loss is the
//!   `repl-lost-writes` count's).
//!
//! What makes that so is checked too, from the acks the old primary was
//! handed: it hands over only once the target's last ack equals its whole
//! stream (the offset where its witness stream stopped).
//!
//! With FORCE, or for writes no WAIT confirmed, losses across a failover
//! are counted ([`failover_counts`], in the sweep summary), not failed.

use seedkv_engine::resp::Frame;

use super::{fail, ClusterChecker};
use crate::check::Violation;
use crate::cluster::history::{ClusterHistory, ClusterOp, FailoverRecord};

/// What the FAILOVER faults of runs did, and what they lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FailoverCounts {
    pub requested_count: u64,
    pub accepted_count: u64,
    pub completed_count: u64,
    /// Completed by FORCE.
    pub forced_count: u64,
    /// `FAILOVER ABORT` answered `+OK`.
    pub aborted_count: u64,
    /// WAIT-confirmed appends checked across completed failovers.
    pub confirmed_count: u64,
    /// Acknowledged appends before a completed failover missing at the
    /// end (no primary crash after it), and of those, WAIT-confirmed.
    pub lost_count: u64,
    pub lost_confirmed_count: u64,
}

impl FailoverCounts {
    pub fn add(&mut self, o: FailoverCounts) {
        self.requested_count += o.requested_count;
        self.accepted_count += o.accepted_count;
        self.completed_count += o.completed_count;
        self.forced_count += o.forced_count;
        self.aborted_count += o.aborted_count;
        self.confirmed_count += o.confirmed_count;
        self.lost_count += o.lost_count;
        self.lost_confirmed_count += o.lost_confirmed_count;
    }
}

/// An acknowledged append before failover `f` began, on its primary.
struct Append<'h> {
    op: &'h ClusterOp,
    /// The WAIT (k >= 1) that confirmed it before `f` began, if any.
    confirmed_by: Option<&'h ClusterOp>,
}

fn wait_confirms(op: &ClusterOp, before_ns: u64) -> bool {
    op.args[0] == b"WAIT"
        && op.wait_woff > 0
        && op.complete_ns < before_ns
        && matches!(op.reply, Some(Frame::Integer(k)) if k >= 1)
}

/// The appends `f`'s primary acknowledged before it began, since its last
/// crash (an earlier life's writes are the crash's to lose).
fn appends<'h>(h: &'h ClusterHistory, f: &FailoverRecord) -> Vec<Append<'h>> {
    let since_ns = h
        .primary_crashes_ns
        .iter()
        .copied()
        .filter(|&c| c <= f.at_ns)
        .max()
        .unwrap_or(0);
    let ops: Vec<&ClusterOp> = h
        .ops
        .iter()
        .filter(|o| o.node == f.node && o.invoke_ns >= since_ns && o.complete_ns < f.at_ns)
        .collect();
    let mut out = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        if op.args[0] != b"RPUSH" || !matches!(op.reply, Some(Frame::Integer(_))) {
            continue;
        }
        let confirmed_by = ops[i + 1..]
            .iter()
            .find(|w| w.conn == op.conn && wait_confirms(w, f.at_ns))
            .copied();
        out.push(Append { op, confirmed_by });
    }
    out
}

/// Whether a primary crashed after `f` began (its losses are the crash's).
fn crashed_after(h: &ClusterHistory, f: &FailoverRecord) -> bool {
    h.primary_crashes_ns.iter().any(|&c| c >= f.at_ns)
}

/// Counts what the failovers of a run did and lost.
pub fn failover_counts(h: &ClusterHistory) -> FailoverCounts {
    let mut out = FailoverCounts::default();
    let present = h.final_elements();
    for f in &h.failovers {
        out.requested_count += 1;
        out.accepted_count += f.accepted as u64;
        out.aborted_count += f.abort.as_ref().is_some_and(|(_, r)| r == "+OK") as u64;
        if f.completed.is_none() {
            continue;
        }
        out.completed_count += 1;
        out.forced_count += f.force as u64;
        let Some(present) = present.as_ref().filter(|_| !crashed_after(h, f)) else {
            continue;
        };
        for a in appends(h, f) {
            out.confirmed_count += a.confirmed_by.is_some() as u64;
            if !present.contains(&(a.op.args[1].as_slice(), a.op.args[2].as_slice())) {
                out.lost_count += 1;
                out.lost_confirmed_count += a.confirmed_by.is_some() as u64;
            }
        }
    }
    out
}

pub struct FailoverKeepsConfirmed;

impl ClusterChecker for FailoverKeepsConfirmed {
    fn name(&self) -> &'static str {
        "repl-failover"
    }

    fn check(&self, h: &ClusterHistory) -> Result<(), Violation> {
        let present = h.final_elements();
        for f in h.failovers.iter().filter(|f| !f.force) {
            let (Some((done_ns, node)), Some(after)) = (f.completed, f.witness_after) else {
                continue;
            };
            let new = &h.witness[after];
            let continued = f
                .witness_before
                .is_some_and(|b| h.lineage(after).contains(&b));
            let took_over = new.base;
            let what = |w: &ClusterOp| {
                format!(
                    "client {}'s WAIT {} returned {:?} at {} ns, confirming offset {}",
                    w.client,
                    String::from_utf8_lossy(&w.args[1]),
                    w.reply,
                    w.complete_ns,
                    w.wait_woff
                )
            };
            let request = f.args.join(" ");
            if let (Some(t), Some(before)) = (f.handed_over_ns, f.witness_before) {
                let end = h.witness[before].end();
                let acked = h
                    .sessions
                    .iter()
                    .filter(|s| s.replica == node && s.primary == f.node && s.opened_ns <= t)
                    .flat_map(|s| s.acks.iter())
                    .filter(|&&(at, _)| at <= t)
                    .max_by_key(|&&(at, _)| at)
                    .map(|&(_, o)| o);
                if acked != Some(end) {
                    return fail(
                        self.name(),
                        format!(
                            "`{request}` sent to node{} at {} ns handed over at {t} ns to node{node}, whose last ack was {acked:?}, not the primary's whole stream up to offset {end}",
                            f.node, f.at_ns
                        ),
                    );
                }
            }
            for a in appends(h, f) {
                let Some(w) = a.confirmed_by else { continue };
                if w.wait_woff > took_over {
                    return fail(
                        self.name(),
                        format!(
                            "`{request}` sent to node{} at {} ns completed at {done_ns} ns (node{node} promoted), yet {} before it, and the new primary's history takes the old one over only up to offset {took_over} ({})",
                            f.node,
                            f.at_ns,
                            what(w),
                            if continued { "continued" } else { "a full resync: another history" }
                        ),
                    );
                }
                let Some(present) = present.as_ref().filter(|_| !crashed_after(h, f)) else {
                    continue;
                };
                let (key, value) = (a.op.args[1].as_slice(), a.op.args[2].as_slice());
                if !present.contains(&(key, value)) {
                    return fail(
                        self.name(),
                        format!(
                            "`{request}` sent to node{} at {} ns completed at {done_ns} ns (node{node} promoted), yet client {}'s RPUSH {} {}, acknowledged at {} ns and then {}, is missing from the final primary node{}'s list",
                            f.node,
                            f.at_ns,
                            a.op.client,
                            String::from_utf8_lossy(key),
                            String::from_utf8_lossy(value),
                            a.op.complete_ns,
                            what(w),
                            h.final_primary
                        ),
                    );
                }
            }
        }
        Ok(())
    }
}
