//! Liveness: once faults stop, every request on a connection that stays
//! open is answered within `RunFacts::liveness_bound_ns` of virtual time.
//!
//! A request is judged from the later of its invocation and the end of
//! faults. Requests on connections that were closed or reset are exempt
//! (their fate is unknown to the client); so are requests answered before
//! faults stopped.

use std::collections::BTreeMap;

use super::{Checker, RunFacts, Violation};
use crate::history::History;

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
        let bound = facts.liveness_bound_ns;
        for op in &history.ops {
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

#[cfg(test)]
mod tests {
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
            end_ns: 10_000,
        }
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
