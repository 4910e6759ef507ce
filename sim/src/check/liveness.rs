//! Liveness: once faults stop, every request on a connection that stays
//! open is answered within `RunFacts::liveness_bound_ns` of virtual time.
//!
//! A request is judged from the later of its invocation and the end of
//! faults. Requests on connections that were closed or reset are exempt
//! (their fate is unknown to the client); so are requests answered before
//! faults stopped.
//!
//! A blocking request (BLPOP, BLMOVE...) legitimately waits up to its
//! timeout, and so does anything pipelined behind it: a request's bound
//! grows by the timeouts of its connection's blocking requests still
//! unanswered when it was sent, its own included. A request that may block
//! forever (timeout 0) is not judged, nor is anything behind it.

use std::collections::BTreeMap;

use super::blocking::blocking_timeout;
use super::{Checker, RunFacts, Violation};
use crate::history::{History, Op};

pub struct Liveness;

const NAME: &str = "liveness";

impl Checker for Liveness {
    fn name(&self) -> &'static str {
        NAME
    }

    fn check(&self, history: &History, facts: &RunFacts) -> Result<(), Violation> {
        let closed: BTreeMap<u64, bool> = history
            .conns
            .iter()
            .map(|c| (c.conn, c.closed.is_some()))
            .collect();
        let allowances = blocking_allowances(history);
        // CLIENT REPLY OFF or SKIP: these requests are never answered.
        let silenced = crate::reply_mode::silenced(history);
        for (i, (op, allowance)) in history.ops.iter().zip(allowances).enumerate() {
            let Some(allowance) = allowance else { continue };
            if silenced.contains(i) {
                continue;
            }
            let bound = facts.liveness_bound_ns + allowance;
            let from = op.invoke_ns.max(history.faults_end_ns);
            let waited = match &op.complete {
                Some((at, _)) => at.saturating_sub(from),
                None if closed.get(&op.conn).copied().unwrap_or(false) => continue,
                None => history.end_ns.saturating_sub(from),
            };
            if waited > bound {
                return Err(Violation {
                    checker: NAME,
                    message: format!(
                        "client {} conn {} request #{} ({}) invoked at {} ns {} after {} ns \
                         (bound {} ns, faults ended at {} ns)",
                        op.client,
                        op.conn,
                        op.seq_in_conn,
                        super::pipeline::render_args(&op.args),
                        op.invoke_ns,
                        if op.complete.is_some() {
                            "was answered only"
                        } else {
                            "was still unanswered"
                        },
                        waited,
                        bound,
                        history.faults_end_ns
                    ),
                });
            }
        }
        Ok(())
    }
}

/// Per op (in `History::ops` order): the extra wait its connection's
/// blocking requests allow it, `None` if one of them may wait forever.
fn blocking_allowances(history: &History) -> Vec<Option<u64>> {
    let mut allowances = vec![Some(0); history.ops.len()];
    if history.received.is_empty()
        && !history
            .ops
            .iter()
            .any(|op| blocking_timeout(&op.args).is_some())
    {
        return allowances;
    }
    let order = history.ops_in_conn_order();
    let conn_of = |i: u32| history.ops[i as usize].conn;
    for indices in order.chunk_by(|&a, &b| conn_of(a) == conn_of(b)) {
        // Blocking requests of this connection not yet answered, each
        // with its longest wait (parsed once, not once per later request).
        let mut waiting: Vec<(&Op, Option<u64>)> = Vec::new();
        for &i in indices {
            let i = i as usize;
            let op = &history.ops[i];
            waiting.retain(|(w, _)| w.complete.as_ref().is_none_or(|(at, _)| *at > op.invoke_ns));
            if let Some(timeout) = blocking_timeout(&op.args) {
                waiting.push((op, timeout.wait_ns_max()));
            }
            allowances[i] = waiting
                .iter()
                .try_fold(0u64, |sum, &(_, wait_ns_max)| Some(sum + wait_ns_max?));
        }
    }
    allowances
}

#[cfg(test)]
mod tests {
    use seedkv_engine::resp::Frame;

    use super::*;
    use crate::history::{Conn, Op};

    fn history(closed: bool) -> History {
        History {
            ops: vec![Op {
                client: 0,
                conn: 1,
                seq_in_conn: 0,
                args: vec![b"PING".to_vec()],
                workload: "ping",
                invoke_ns: 100,
                complete: None,
            }],
            executions: vec![],
            conns: vec![Conn {
                conn: 1,
                client: 0,
                opened_ns: 0,
                closed: closed.then(|| (200, "reset".to_string())),
            }],
            received: vec![],
            faults_end_ns: 50,
            pubsub: Default::default(),
            tracking: Default::default(),
            end_ns: 10_000,
            persist: None,
            thread_busy_spans: Vec::new(),
            key_removals: Vec::new(),
            script_runs: Vec::new(),
            reply_slices: Vec::new(),
            slice_waits: Vec::new(),
            ..History::default()
        }
    }

    #[test]
    fn a_blocked_request_may_wait_for_its_timeout() {
        let mut h = history(false);
        h.ops[0].args = vec![b"BLPOP".to_vec(), b"k".to_vec(), b"5".to_vec()];
        h.ops[0].complete = Some((5_000_000_050, Frame::Null));
        let facts = RunFacts {
            liveness_bound_ns: 1000,
            ..RunFacts::default()
        };
        assert!(Liveness.check(&h, &facts).is_ok(), "5 s timeout");
        h.ops[0].complete = Some((7_000_000_000, Frame::Null));
        assert!(Liveness.check(&h, &facts).is_err(), "2 s late");
        h.ops[0].args[2] = b"0".to_vec();
        assert!(Liveness.check(&h, &facts).is_ok(), "may block forever");
    }

    #[test]
    fn unanswered_request_on_a_live_connection_fails() {
        let facts = RunFacts {
            liveness_bound_ns: 1000,
            ..RunFacts::default()
        };
        assert!(Liveness.check(&history(false), &facts).is_err());
        assert!(Liveness.check(&history(true), &facts).is_ok());
        let generous = RunFacts {
            liveness_bound_ns: 100_000,
            ..RunFacts::default()
        };
        assert!(Liveness.check(&history(false), &generous).is_ok());
    }
}
