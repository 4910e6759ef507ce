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
//!
//! # Atomic groups ([`GroupAtomicity`])
//!
//! An EXEC runs its queue, and a script its `redis.call`s, with nothing
//! else in between: the engine is one thread. In the engine's execution
//! order (`History::executions`), the commands of one group are recorded
//! back to back with `in_exec` naming the EXEC or script, right before the
//! EXEC or script itself. So, for every group:
//!
//! - no other command — another client's, or another group's — falls
//!   between its commands, or between them and the EXEC or script;
//! - an EXEC's commands are exactly the requests queued since its MULTI,
//!   in order, and an EXEC that replied an array of N replies ran N;
//! - a script's calls carry the script's own request index.
//!
//! A pipeline is no group: its commands carry no `in_exec`, and other
//! clients' commands may fall between them (pipelines give no isolation).
//! The checker accepts that. So it does, between a script's calls, another
//! client's command allowed while a script is busy (SCRIPT KILL, MULTI
//! bookkeeping) or refused `-BUSY`: a script past `busy-reply-threshold`
//! lets those run between its slices, and `check::busy` judges when.

use std::collections::BTreeMap;

use seedkv_engine::resp::Frame;

use super::name_buffer::NameBuffer;
use super::pipeline::{parse_i64, render_args};
use super::{Checker, RunFacts, Violation};
use crate::fxhash::FxHashMap;
use crate::history::{ConnId, Execution, History, Op};
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

/// See the module docs, "Atomic groups".
pub struct GroupAtomicity;

const GROUP_NAME: &str = "group-atomicity";

impl Checker for GroupAtomicity {
    fn name(&self) -> &'static str {
        GROUP_NAME
    }

    fn check(&self, history: &History, _facts: &RunFacts) -> Result<(), Violation> {
        check_groups(history).map_err(|message| Violation {
            checker: GROUP_NAME,
            message,
        })
    }
}

/// A group whose commands are being recorded.
struct OpenGroup {
    conn: ConnId,
    /// The EXEC's or script's request index.
    owner_seq: u64,
    /// Request indices of its commands so far.
    members: Vec<u64>,
}

fn describe(e: &Execution) -> String {
    let name = if e.name.is_empty() {
        "(rejected)"
    } else {
        e.name
    };
    match e.in_exec {
        Some(owner) => format!(
            "{name} (conn {} request #{}, of the group of request #{owner})",
            e.conn, e.seq_in_conn
        ),
        None => format!("{name} (conn {} request #{})", e.conn, e.seq_in_conn),
    }
}

/// The group checks over the execution order (see the module docs).
pub fn check_groups(history: &History) -> Result<(), String> {
    // Each connection's ops in request order, built only if an EXEC ran
    // a group (most runs' groups are few; every op went into it before).
    let by_conn = std::cell::OnceCell::new();
    let conn_ops = |conn: ConnId| -> &[&Op] {
        let ops = by_conn.get_or_init(|| {
            let mut ops: FxHashMap<ConnId, Vec<&Op>> = FxHashMap::default();
            for op in &history.ops {
                ops.entry(op.conn).or_default().push(op);
            }
            for list in ops.values_mut() {
                list.sort_by_key(|op| op.seq_in_conn);
            }
            ops
        });
        ops.get(&conn).map_or(&[][..], Vec::as_slice)
    };
    // The shared index: an op by name in O(1), each execution's by a
    // vector the checkers share.
    let index_ops = history.op_index();
    let op_of = |conn: ConnId, seq: u64| -> Option<&Op> { index_ops.get(&(conn, seq)) };
    let mut open: Option<OpenGroup> = None;
    for (index, e) in history.executions.iter().enumerate() {
        if let Some(owner_seq) = e.in_exec {
            match &mut open {
                Some(g) if g.conn == e.conn && g.owner_seq == owner_seq => {
                    g.members.push(e.seq_in_conn)
                }
                Some(g) => {
                    return Err(format!(
                        "execution #{index}: {} ran between the commands of the group of conn {} \
                         request #{}: the group is not atomic",
                        describe(e),
                        g.conn,
                        g.owner_seq
                    ))
                }
                None => {
                    open = Some(OpenGroup {
                        conn: e.conn,
                        owner_seq,
                        members: vec![e.seq_in_conn],
                    })
                }
            }
            continue;
        }
        let owner = index_ops.of_execution(index, e);
        if let Some(g) = &open {
            let is_script = op_of(g.conn, g.owner_seq).is_some_and(is_script_request);
            if is_script && e.conn != g.conn && super::busy::allowed_while_busy(e) {
                // A script past busy-reply-threshold lets these run between
                // its slices; they touch no data, and the busy-window
                // checker judges when they ran.
                continue;
            }
        }
        let members = match open.take() {
            Some(g) if g.conn == e.conn && g.owner_seq == e.seq_in_conn => g.members,
            Some(g) => {
                return Err(format!(
                    "execution #{index}: {} ran after {} command(s) of the group of conn {} \
                     request #{} and before it ended: the group is not atomic",
                    describe(e),
                    g.members.len(),
                    g.conn,
                    g.owner_seq
                ))
            }
            None => Vec::new(),
        };
        let Some(owner) = owner else {
            continue;
        };
        check_group(index, e, owner, &members, || conn_ops(e.conn))?;
    }
    match open {
        Some(g) => Err(format!(
            "the group of conn {} request #{} ran {} command(s) and never ended",
            g.conn,
            g.owner_seq,
            g.members.len()
        )),
        None => Ok(()),
    }
}

/// Whether `op` runs a script (its `redis.call`s form its group).
fn is_script_request(op: &Op) -> bool {
    let mut name_buffer = NameBuffer::default();
    let name = op.args.first().map(|a| name_buffer.upper(a));
    matches!(
        name,
        Some(b"EVAL" | b"EVALSHA" | b"EVAL_RO" | b"EVALSHA_RO" | b"FCALL" | b"FCALL_RO")
    )
}

/// The commands recorded for the EXEC or script `e` (its request `owner`)
/// are the ones it should have run.
fn check_group<'a>(
    index: usize,
    e: &Execution,
    owner: &Op,
    members: &[u64],
    conn_ops: impl FnOnce() -> &'a [&'a Op],
) -> Result<(), String> {
    let mut name_buffer = NameBuffer::default();
    match name_buffer.upper(&owner.args[0]) {
        b"EXEC" => {}
        b"EVAL" | b"EVALSHA" | b"EVAL_RO" | b"EVALSHA_RO" | b"FCALL" | b"FCALL_RO" => {
            if let Some(m) = members.iter().find(|&&m| m != e.seq_in_conn) {
                return Err(format!(
                    "execution #{index}: the script of conn {} request #{} ran request #{m} as one \
                     of its calls",
                    e.conn, e.seq_in_conn
                ));
            }
            return Ok(());
        }
        _ if members.is_empty() => return Ok(()),
        _ => {
            return Err(format!(
                "execution #{index}: {} is neither EXEC nor a script but ran a group of {}",
                describe(e),
                members.len()
            ))
        }
    }
    if let Some((_, Frame::Array(items))) = &owner.complete {
        if items.len() != members.len() {
            return Err(format!(
                "execution #{index}: EXEC of conn {} request #{} replied {} results but only {} \
                 of its commands ran right before it: the rest ran elsewhere in the order",
                e.conn,
                e.seq_in_conn,
                items.len(),
                members.len()
            ));
        }
    }
    if members.is_empty() {
        return Ok(());
    }
    let queued = super::transfer::queued_before(conn_ops(), owner).unwrap_or_default();
    let expected: Vec<u64> = queued
        .iter()
        .filter(|q| !super::transfer::runs_inside_multi(&q.args[0]))
        .map(|q| q.seq_in_conn)
        .collect();
    if members != expected {
        return Err(format!(
            "execution #{index}: EXEC of conn {} request #{} ran requests {members:?}, but \
             {expected:?} were queued since its MULTI",
            e.conn, e.seq_in_conn
        ));
    }
    Ok(())
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
