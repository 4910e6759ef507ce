//! Atomicity of INCR: concurrent increments of a shared counter never lose
//! an update.
//!
//! Only the counter workload touches `ctr:` keys, each starts absent (0),
//! and only INCR changes them. So, for every successful INCR reply `r` and
//! every GET reply `v` of a counter:
//!
//! - at least every INCR acknowledged before the request was sent had
//!   executed before it: `r` (minus its own increment) and `v` are at least
//!   that count;
//! - at most every INCR sent before the reply arrived, acknowledged or of
//!   unknown fate (its connection died), can have executed before it: `r`
//!   and `v` are at most that count;
//! - no two INCRs of one counter return the same value.
//!
//! INCRs answered with an error did not increment and count on neither side.

use std::collections::BTreeMap;

use seedkv_engine::resp::Frame;

use super::pipeline::{parse_i64, render_args};
use super::{Checker, RunFacts, Violation};
use crate::history::{History, Op};
use crate::workload::counter::is_counter_key;

pub struct IncrAtomicity;

const NAME: &str = "atomicity";

#[derive(Default)]
struct CounterOps<'a> {
    /// Completion times of acknowledged INCRs, sorted.
    acked_complete_ns: Vec<u64>,
    /// Invocation times of INCRs that may have executed, sorted.
    maybe_invoke_ns: Vec<u64>,
    incrs: Vec<&'a Op>,
    gets: Vec<&'a Op>,
}

impl CounterOps<'_> {
    /// INCRs certainly executed before something invoked at `invoke_ns`.
    fn lower(&self, invoke_ns: u64) -> i64 {
        self.acked_complete_ns.partition_point(|&t| t < invoke_ns) as i64
    }

    /// INCRs that may have executed before something completed at `complete_ns`.
    fn upper(&self, complete_ns: u64) -> i64 {
        self.maybe_invoke_ns.partition_point(|&t| t <= complete_ns) as i64
    }
}

fn fail(message: String) -> Result<(), Violation> {
    Err(Violation {
        checker: NAME,
        message,
    })
}

impl Checker for IncrAtomicity {
    fn name(&self) -> &'static str {
        NAME
    }

    fn check(&self, history: &History, _facts: &RunFacts) -> Result<(), Violation> {
        let mut counters: BTreeMap<&[u8], CounterOps> = BTreeMap::new();
        for op in &history.ops {
            if op.args.len() != 2 || !is_counter_key(&op.args[1]) {
                continue;
            }
            let name = op.args[0].to_ascii_uppercase();
            let c = counters.entry(&op.args[1]).or_default();
            if name == b"INCR" {
                match &op.complete {
                    Some((_, Frame::Error(_))) => {}
                    Some((at, _)) => {
                        c.acked_complete_ns.push(*at);
                        c.maybe_invoke_ns.push(op.invoke_ns);
                        c.incrs.push(op);
                    }
                    None => c.maybe_invoke_ns.push(op.invoke_ns),
                }
            } else if name == b"GET" && op.complete.is_some() {
                c.gets.push(op);
            }
        }
        for (key, c) in counters.iter_mut() {
            c.acked_complete_ns.sort_unstable();
            c.maybe_invoke_ns.sort_unstable();
            let key = String::from_utf8_lossy(key);
            let mut seen: BTreeMap<i64, &Op> = BTreeMap::new();
            for op in &c.incrs {
                let Some((complete_ns, reply)) = &op.complete else {
                    unreachable!("only acknowledged INCRs are kept")
                };
                let Frame::Integer(r) = reply else {
                    return fail(format!(
                        "INCR {key} on conn {} answered {:?}, not an integer",
                        op.conn, reply
                    ));
                };
                let (lo, hi) = (c.lower(op.invoke_ns) + 1, c.upper(*complete_ns));
                if *r < lo || *r > hi {
                    return fail(format!(
                        "INCR {key} on conn {} request #{} returned {r}, but between its \
                         invocation ({} ns) and reply ({} ns) the counter could only be {lo}..={hi}: \
                         an update was lost or invented",
                        op.conn, op.seq_in_conn, op.invoke_ns, complete_ns
                    ));
                }
                if let Some(other) = seen.insert(*r, op) {
                    return fail(format!(
                        "two INCRs of {key} both returned {r}: conn {} request #{} and conn {} \
                         request #{} (a lost update)",
                        other.conn, other.seq_in_conn, op.conn, op.seq_in_conn
                    ));
                }
            }
            for op in &c.gets {
                let Some((complete_ns, reply)) = &op.complete else {
                    continue;
                };
                let v = match reply {
                    Frame::Null => 0,
                    Frame::Bulk(b) => match parse_i64(b) {
                        Some(v) => v,
                        None => {
                            return fail(format!(
                                "{} read a non-integer counter",
                                render_args(&op.args)
                            ))
                        }
                    },
                    _ => continue,
                };
                let (lo, hi) = (c.lower(op.invoke_ns), c.upper(*complete_ns));
                if v < lo || v > hi {
                    return fail(format!(
                        "GET {key} on conn {} request #{} read {v}, but {lo} INCRs were \
                         acknowledged before it was sent and at most {hi} could have run before \
                         its reply: {}",
                        op.conn,
                        op.seq_in_conn,
                        if v < lo {
                            "an update was lost"
                        } else {
                            "an update was invented"
                        }
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(args: &[&str], invoke_ns: u64, complete: Option<(u64, Frame)>) -> Op {
        Op {
            client: 0,
            conn: 1,
            seq_in_conn: 0,
            args: args.iter().map(|a| a.as_bytes().to_vec()).collect(),
            workload: "counter",
            invoke_ns,
            complete,
        }
    }

    fn check(ops: Vec<Op>) -> Result<(), Violation> {
        let h = History {
            ops,
            ..History::default()
        };
        IncrAtomicity.check(&h, &RunFacts::default())
    }

    #[test]
    fn concurrent_increments_pass() {
        assert!(check(vec![
            op(&["INCR", "ctr:0"], 0, Some((10, Frame::Integer(2)))),
            op(&["INCR", "ctr:0"], 1, Some((9, Frame::Integer(1)))),
            op(&["INCR", "ctr:0"], 2, None),
            op(
                &["GET", "ctr:0"],
                20,
                Some((30, Frame::Bulk(b"3".to_vec())))
            ),
        ])
        .is_ok());
    }

    #[test]
    fn a_lost_update_fails() {
        // Two INCRs return the same value.
        assert!(check(vec![
            op(&["INCR", "ctr:0"], 0, Some((10, Frame::Integer(1)))),
            op(&["INCR", "ctr:0"], 1, Some((9, Frame::Integer(1)))),
        ])
        .is_err());
        // A read after two acknowledged INCRs sees one.
        assert!(check(vec![
            op(&["INCR", "ctr:0"], 0, Some((10, Frame::Integer(1)))),
            op(&["INCR", "ctr:0"], 11, Some((19, Frame::Integer(2)))),
            op(
                &["GET", "ctr:0"],
                20,
                Some((30, Frame::Bulk(b"1".to_vec())))
            ),
        ])
        .is_err());
    }

    #[test]
    fn an_invented_update_fails() {
        assert!(check(vec![op(
            &["INCR", "ctr:0"],
            0,
            Some((10, Frame::Integer(2)))
        ),])
        .is_err());
    }
}
