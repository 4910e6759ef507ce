//! Each connection's requests in order, to find "the first request this
//! connection sent after time T" by binary search: the client-interval
//! no-loss check asks it for every (publish, subscription) pair, and a walk
//! over the connection's history made that check quadratic (minutes on a
//! 100,000-operation probe).

use std::collections::BTreeMap;

use crate::history::{ConnId, Op};

/// One connection's requests, by `seq_in_conn`.
pub(super) struct ConnRequests<'a> {
    ops: Vec<&'a Op>,
    /// For each index, the end (exclusive) of its run of consecutive
    /// sequence numbers.
    run_end: Vec<usize>,
    /// Whether invocation times never decrease along `ops` (one client
    /// sends a connection's requests in order, so they should); otherwise
    /// searches walk instead of bisecting.
    monotone: bool,
}

impl<'a> ConnRequests<'a> {
    /// Every connection's requests, from the `(conn, seq)`-ordered index.
    pub(super) fn index(
        ops: &BTreeMap<(ConnId, u64), &'a Op>,
    ) -> BTreeMap<ConnId, ConnRequests<'a>> {
        let mut by_conn: BTreeMap<ConnId, Vec<&'a Op>> = BTreeMap::new();
        for (&(conn, _), &op) in ops {
            by_conn.entry(conn).or_default().push(op);
        }
        by_conn
            .into_iter()
            .map(|(conn, ops)| (conn, ConnRequests::new(ops)))
            .collect()
    }

    fn new(ops: Vec<&'a Op>) -> ConnRequests<'a> {
        debug_assert!(ops.windows(2).all(|w| w[0].seq_in_conn < w[1].seq_in_conn));
        let mut run_end = vec![ops.len(); ops.len()];
        for i in (0..ops.len().saturating_sub(1)).rev() {
            if ops[i + 1].seq_in_conn != ops[i].seq_in_conn + 1 {
                run_end[i] = i + 1;
            } else {
                run_end[i] = run_end[i + 1];
            }
        }
        let monotone = ops.windows(2).all(|w| w[0].invoke_ns <= w[1].invoke_ns);
        ConnRequests {
            ops,
            run_end,
            monotone,
        }
    }

    /// The first of the requests numbered `after_seq + 1, after_seq + 2, ...`
    /// (while the numbers are consecutive) invoked after `t_ns`: what
    /// `(after_seq + 1..).map_while(get).find(|op| op.invoke_ns > t_ns)`
    /// gives, in O(log n).
    pub(super) fn first_sent_after(&self, after_seq: u64, t_ns: u64) -> Option<&'a Op> {
        let start = self
            .ops
            .binary_search_by_key(&(after_seq + 1), |op| op.seq_in_conn)
            .ok()?;
        let run = &self.ops[start..self.run_end[start]];
        if self.monotone {
            run.get(run.partition_point(|op| op.invoke_ns <= t_ns))
                .copied()
        } else {
            run.iter().copied().find(|op| op.invoke_ns > t_ns)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(conn: ConnId, seq: u64, invoke_ns: u64) -> Op {
        Op {
            client: 0,
            conn,
            seq_in_conn: seq,
            args: vec![b"PING".to_vec()],
            workload: "test",
            invoke_ns,
            complete: None,
        }
    }

    /// Same answers as the walk it replaces, with gaps in the sequence
    /// numbers and with times that go back (the walking fallback).
    #[test]
    fn agrees_with_the_walk() {
        let mut all = Vec::new();
        let seqs = [0u64, 1, 2, 3, 5, 6, 7, 10, 11];
        for (i, &seq) in seqs.iter().enumerate() {
            all.push(op(1, seq, 100 * i as u64));
            // Connection 2's times go back at seq 6.
            let t = if seq == 6 { 50 } else { 100 * i as u64 };
            all.push(op(2, seq, t));
        }
        let ops: BTreeMap<(ConnId, u64), &Op> =
            all.iter().map(|o| ((o.conn, o.seq_in_conn), o)).collect();
        let index = ConnRequests::index(&ops);
        assert!(index[&1].monotone);
        assert!(!index[&2].monotone);
        for conn in [1u64, 2] {
            for after in 0..13 {
                for t in (0..1000).step_by(25) {
                    let walk = (after + 1..)
                        .map_while(|seq| ops.get(&(conn, seq)))
                        .find(|o| o.invoke_ns > t)
                        .map(|o| o.seq_in_conn);
                    let found = index[&conn]
                        .first_sent_after(after, t)
                        .map(|o| o.seq_in_conn);
                    assert_eq!(found, walk, "conn {conn} after {after} t {t}");
                }
            }
        }
    }
}
