//! Conservation in the list rotation: elements moved between the lists of
//! a group by LMOVE, RPOPLPUSH and BLMOVE are never lost or duplicated.
//!
//! # The system
//!
//! The lists workload (`workload::lists`) seeds each rotation group
//! (`rot:<g>:0 ..`) once per client with its own tagged elements (RPUSH),
//! then only moves them between the group's lists. So the multiset of
//! elements over a group's lists is, at every point of the execution
//! order, exactly the multiset of elements its executed pushes brought in:
//! the **universe**, known from the execution order alone, whatever became
//! of the pushes' replies.
//!
//! # Observations
//!
//! A snapshot is one client's pipeline of `LRANGE rot:<g>:<i> 0 -1` over
//! every list of a group, in order. Its requests execute in order, but
//! other clients' commands may run between them; the snapshot is judged
//! only if no write to the group executed between its first and last
//! LRANGE (the execution order says so), so it shows the group at one
//! instant. Then the union of its replies must equal the universe: an
//! element missing was lost, one seen more often than pushed was
//! duplicated, one never pushed was invented.
//!
//! Any write to a group other than a push or a move within the group (a
//! pop, LREM, DEL, a move out of it) would change the universe in a way
//! the checker does not follow: the group is not judged after it.

use std::collections::BTreeMap;

use seedkv_engine::cmd::flags;
use seedkv_engine::resp::Frame;

use super::pipeline::render_args;
use crate::check::{Checker, RunFacts, Violation};
use crate::history::{ConnId, History, Op};
use crate::workload::lists::{parse_rotation_key, ROTATION_LISTS_COUNT};

/// Elements shown in a violation message.
const ELEMENTS_SHOWN_MAX: usize = 8;

/// The checker.
pub struct Conservation;

impl Checker for Conservation {
    fn name(&self) -> &'static str {
        "conservation"
    }

    fn check(&self, history: &History, _facts: &RunFacts) -> Result<(), Violation> {
        check_conservation(history).map_err(|message| Violation {
            checker: self.name(),
            message,
        })
    }
}

/// One snapshot: a group, and its LRANGE ops in list order.
struct Snapshot<'a> {
    group: u32,
    ops: Vec<&'a Op>,
}

/// Whether `op` is `LRANGE rot:<g>:<i> 0 -1`; returns (g, i).
fn full_lrange(op: &Op) -> Option<(u32, u32)> {
    match op.args.as_slice() {
        [name, key, start, stop]
            if name.eq_ignore_ascii_case(b"lrange") && start == b"0" && stop == b"-1" =>
        {
            parse_rotation_key(key)
        }
        _ => None,
    }
}

/// Every snapshot with all its replies in.
fn snapshots(history: &History) -> Vec<Snapshot<'_>> {
    let mut by_conn: BTreeMap<ConnId, Vec<&Op>> = BTreeMap::new();
    for op in &history.ops {
        if full_lrange(op).is_some() {
            by_conn.entry(op.conn).or_default().push(op);
        }
    }
    let mut out = Vec::new();
    for ops in by_conn.values_mut() {
        ops.sort_by_key(|op| op.seq_in_conn);
        let mut i = 0;
        while i < ops.len() {
            let (group, _) = full_lrange(ops[i]).expect("filtered");
            let run: Vec<&Op> = ops[i..]
                .iter()
                .take(ROTATION_LISTS_COUNT as usize)
                .copied()
                .collect();
            let whole = run.len() == ROTATION_LISTS_COUNT as usize
                && run.iter().enumerate().all(|(n, op)| {
                    full_lrange(op) == Some((group, n as u32))
                        && op.seq_in_conn == run[0].seq_in_conn + n as u64
                        && op.complete.is_some()
                });
            if whole {
                out.push(Snapshot { group, ops: run });
                i += ROTATION_LISTS_COUNT as usize;
            } else {
                i += 1;
            }
        }
    }
    out
}

/// The rotation group a write changes, and whether the checker follows
/// the change (`Err(group)`: it does not).
fn group_write(name: &str, args: &[Vec<u8>]) -> Option<Result<u32, u32>> {
    let groups: Vec<u32> = args[1..]
        .iter()
        .filter_map(|a| parse_rotation_key(a).map(|(g, _)| g))
        .collect();
    let &first = groups.first()?;
    let followed = match name {
        "lpush" | "rpush" => args.len() >= 3 && parse_rotation_key(&args[1]).is_some(),
        "lmove" | "rpoplpush" | "blmove" | "brpoplpush" => {
            let (src, dst) = (args.get(1)?, args.get(2)?);
            match (parse_rotation_key(src), parse_rotation_key(dst)) {
                (Some((a, _)), Some((b, _))) => a == b,
                _ => false,
            }
        }
        _ => false,
    };
    Some(if followed { Ok(first) } else { Err(first) })
}

fn check_conservation(history: &History) -> Result<(), String> {
    let found = snapshots(history);
    if found.is_empty() {
        return Ok(());
    }
    let exec_of = history.first_executions();
    // Snapshots by the execution index of their first and last LRANGE.
    let mut opening: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut closing: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (s, snap) in found.iter().enumerate() {
        let execs: Option<Vec<usize>> = snap
            .ops
            .iter()
            .map(|op| exec_of.get(&(op.conn, op.seq_in_conn)).copied())
            .collect();
        let Some(execs) = execs else { continue };
        let (first, last) = (execs[0], *execs.last().expect("non-empty"));
        opening.entry(first).or_default().push(s);
        closing.entry(last).or_default().push(s);
    }
    let ops = history.op_index();
    let mut universe: BTreeMap<u32, BTreeMap<Vec<u8>, i64>> = BTreeMap::new();
    let mut writes: BTreeMap<u32, u64> = BTreeMap::new();
    let mut broken: BTreeMap<u32, usize> = BTreeMap::new();
    // Writes to the snapshot's group counted when it opened.
    let mut opened: BTreeMap<usize, u64> = BTreeMap::new();
    for (j, exec) in history.executions.iter().enumerate() {
        for &s in opening.get(&j).into_iter().flatten() {
            let g = found[s].group;
            opened.insert(s, writes.get(&g).copied().unwrap_or(0));
        }
        let op = ops.of_execution(j, exec);
        let reply_is_error = op
            .and_then(|o| o.complete.as_ref())
            .is_some_and(|(_, f)| matches!(f, Frame::Error(_)));
        if let Some(op) = op {
            let is_write = !exec.name.is_empty()
                && (exec.flags & flags::WRITE != 0
                    || matches!(
                        exec.name,
                        "lpush" | "rpush" | "lmove" | "rpoplpush" | "blmove" | "brpoplpush"
                    ));
            match group_write(exec.name, &op.args).filter(|_| is_write) {
                None => {}
                Some(Ok(g)) => {
                    *writes.entry(g).or_default() += 1;
                    if (exec.name == "lpush" || exec.name == "rpush") && !reply_is_error {
                        let u = universe.entry(g).or_default();
                        for e in &op.args[2..] {
                            *u.entry(e.clone()).or_default() += 1;
                        }
                    }
                }
                Some(Err(g)) => {
                    *writes.entry(g).or_default() += 1;
                    broken.entry(g).or_insert(j);
                }
            }
        }
        for &s in closing.get(&j).into_iter().flatten() {
            let snap = &found[s];
            let g = snap.group;
            let Some(&at_open) = opened.get(&s) else {
                continue;
            };
            if writes.get(&g).copied().unwrap_or(0) != at_open || broken.contains_key(&g) {
                continue;
            }
            judge(snap, universe.get(&g), j)?;
        }
    }
    Ok(())
}

fn shown(elements: &[(&Vec<u8>, i64)]) -> String {
    let mut list: Vec<String> = elements
        .iter()
        .take(ELEMENTS_SHOWN_MAX)
        .map(|(e, n)| format!("{:?} x{n}", String::from_utf8_lossy(e)))
        .collect();
    if elements.len() > ELEMENTS_SHOWN_MAX {
        list.push(format!("... {} more", elements.len() - ELEMENTS_SHOWN_MAX));
    }
    list.join(", ")
}

/// The union of the snapshot's replies equals the universe.
fn judge(
    snap: &Snapshot<'_>,
    universe: Option<&BTreeMap<Vec<u8>, i64>>,
    at: usize,
) -> Result<(), String> {
    let context = || {
        format!(
            "snapshot of rotation group {} on conn {} (requests #{}..=#{}, last executed as #{at}): `{}` ...",
            snap.group,
            snap.ops[0].conn,
            snap.ops[0].seq_in_conn,
            snap.ops[snap.ops.len() - 1].seq_in_conn,
            render_args(&snap.ops[0].args)
        )
    };
    let mut balance: BTreeMap<Vec<u8>, i64> = universe.cloned().unwrap_or_default();
    for op in &snap.ops {
        let Some((_, reply)) = &op.complete else {
            return Ok(());
        };
        let items = match reply {
            Frame::Array(items) => items,
            Frame::Error(_) => return Ok(()),
            other => {
                return Err(format!(
                    "{}: LRANGE replied {}",
                    context(),
                    crate::world::frame_summary(other)
                ))
            }
        };
        for item in items {
            let Frame::Bulk(e) = item else {
                return Err(format!(
                    "{}: LRANGE replied a non-string element",
                    context()
                ));
            };
            *balance.entry(e.clone()).or_default() -= 1;
        }
    }
    let lost: Vec<(&Vec<u8>, i64)> = balance
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(e, n)| (e, *n))
        .collect();
    let extra: Vec<(&Vec<u8>, i64)> = balance
        .iter()
        .filter(|(_, n)| **n < 0)
        .map(|(e, n)| (e, -*n))
        .collect();
    if lost.is_empty() && extra.is_empty() {
        return Ok(());
    }
    let pushed = |e: &Vec<u8>| universe.is_some_and(|u| u.contains_key(e));
    let (duplicated, invented): (Vec<_>, Vec<_>) = extra.into_iter().partition(|(e, _)| pushed(e));
    let mut parts = Vec::new();
    if !lost.is_empty() {
        parts.push(format!("{} element(s) lost: {}", lost.len(), shown(&lost)));
    }
    if !duplicated.is_empty() {
        parts.push(format!(
            "{} element(s) duplicated (extra copies): {}",
            duplicated.len(),
            shown(&duplicated)
        ));
    }
    if !invented.is_empty() {
        parts.push(format!(
            "{} element(s) never pushed: {}",
            invented.len(),
            shown(&invented)
        ));
    }
    Err(format!("{}: {}", context(), parts.join("; ")))
}

#[cfg(test)]
mod tests {
    use seedkv_engine::resp::Frame;

    use super::check_conservation;
    use crate::check::model::testkit::{bulk, Builder};

    fn list(items: &[&str]) -> Frame {
        Frame::Array(items.iter().map(|s| bulk(s)).collect())
    }

    /// Seeds group 0 with a b c, moves a to list 1, snapshots (conn 1).
    fn rotation(list1: &[&str], write_between: bool) -> Builder {
        let mut b = Builder::new();
        b.run(2, "RPUSH rot:0:0 a b c", Frame::Integer(3));
        b.run(2, "LMOVE rot:0:0 rot:0:1 LEFT RIGHT", bulk("a"));
        b.run(1, "LRANGE rot:0:0 0 -1", list(&["b", "c"]));
        if write_between {
            b.run(2, "LMOVE rot:0:0 rot:0:1 LEFT RIGHT", bulk("b"));
        }
        b.run(1, "LRANGE rot:0:1 0 -1", list(list1));
        b.run(1, "LRANGE rot:0:2 0 -1", list(&[]));
        b
    }

    #[test]
    fn a_consistent_snapshot_passes() {
        check_conservation(&rotation(&["a"], false).history).expect("a b c");
    }

    #[test]
    fn a_lost_element_fails() {
        let message = check_conservation(&rotation(&[], false).history).expect_err("a lost");
        assert!(
            message.contains("lost") && message.contains("\"a\""),
            "{message}"
        );
    }

    #[test]
    fn a_duplicated_or_invented_element_fails() {
        let message = check_conservation(&rotation(&["a", "c", "z"], false).history)
            .expect_err("c twice, z from nowhere");
        assert!(
            message.contains("duplicated") && message.contains("\"c\""),
            "{message}"
        );
        assert!(
            message.contains("never pushed") && message.contains("\"z\""),
            "{message}"
        );
    }

    #[test]
    fn a_snapshot_torn_by_a_concurrent_move_is_not_judged() {
        // b moved between the first and second LRANGE: seen twice, but the
        // snapshot is not of one instant.
        check_conservation(&rotation(&["a", "b"], true).history).expect("torn, skipped");
    }
}
