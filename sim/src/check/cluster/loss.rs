//! Lost acknowledged writes, Jepsen-style: every RPUSH the primary
//! acknowledged appended a unique element; an element missing from the
//! primary's final list is a lost write. Asynchronous replication (and
//! `appendfsync everysec`) may lose writes when the primary crashes, so
//! those are counted and reported, not failed, and so may a FAILOVER that
//! hands over by FORCE to a target that had not caught up; a loss without
//! either has no excuse and fails. (`repl-failover` holds a failover
//! without FORCE to the stricter promise.) The final lists are the final
//! primary's, whichever node that is.

use seedkv_engine::resp::Frame;

use super::{fail, ClusterChecker};
use crate::check::Violation;
use crate::cluster::history::ClusterHistory;

/// The count of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Loss {
    pub acked_count: u64,
    pub lost_count: u64,
    /// Lost writes a later WAIT on their connection had confirmed.
    pub wait_confirmed_lost_count: u64,
}

impl Loss {
    pub fn add(&mut self, other: Loss) {
        self.acked_count += other.acked_count;
        self.lost_count += other.lost_count;
        self.wait_confirmed_lost_count += other.wait_confirmed_lost_count;
    }
}

/// Counts the acknowledged appends missing from the final lists.
pub fn loss(h: &ClusterHistory) -> Loss {
    let mut out = Loss::default();
    let Some(present) = h.final_elements() else {
        return out;
    };
    for (i, op) in h.ops.iter().enumerate() {
        let (true, Some(Frame::Integer(_))) = (op.args[0] == b"RPUSH", &op.reply) else {
            continue;
        };
        out.acked_count += 1;
        if present.contains(&(op.args[1].as_slice(), op.args[2].as_slice())) {
            continue;
        }
        out.lost_count += 1;
        let confirmed = h.ops[i + 1..].iter().filter(|o| o.conn == op.conn).any(|o| {
            o.args[0] == b"WAIT"
                && matches!(o.reply, Some(Frame::Integer(k)) if k >= 1
                    && k >= std::str::from_utf8(&o.args[1]).ok().and_then(|n| n.parse().ok()).unwrap_or(i64::MAX))
        });
        out.wait_confirmed_lost_count += confirmed as u64;
    }
    out
}

pub struct LostWrites;

impl ClusterChecker for LostWrites {
    fn name(&self) -> &'static str {
        "repl-lost-writes"
    }

    fn check(&self, h: &ClusterHistory) -> Result<(), Violation> {
        let l = loss(h);
        if l.lost_count > 0
            && h.primary_crashes_ns.is_empty()
            && h.forced_failovers_ns().next().is_none()
        {
            return fail(
                self.name(),
                format!(
                    "{} of {} acknowledged appends are missing from the primary's lists, and the primary never crashed nor was failed over by FORCE",
                    l.lost_count, l.acked_count
                ),
            );
        }
        Ok(())
    }
}
