//! A partial resync whenever the backlog covers the gap: a replica that
//! asks `PSYNC <replid> <offset>` with the primary's current replication
//! id and an offset the backlog still holds (or the very next byte) must
//! get `+CONTINUE`; a full resync there is a defect (Redis's
//! `masterTryPartialResynchronization`).

use super::{fail, ClusterChecker};
use crate::check::Violation;
use crate::cluster::history::ClusterHistory;

pub struct PartialResync;

impl ClusterChecker for PartialResync {
    fn name(&self) -> &'static str {
        "repl-partial-resync"
    }

    fn check(&self, h: &ClusterHistory) -> Result<(), Violation> {
        for (i, s) in h.sessions.iter().enumerate() {
            let (Some((replid, offset)), Some(true)) = (&s.psync, s.full) else {
                continue;
            };
            if replid == "?" || *replid != s.primary_replid_at_psync || *offset < 1 {
                continue;
            }
            let Some(w) = h
                .witness
                .iter()
                .find(|w| w.incarnation == s.incarnation && w.replid == *replid)
            else {
                continue;
            };
            let end = s.primary_end_at_psync;
            let first = (w.base + 1).max((end + 1).saturating_sub(h.backlog_bytes));
            let offset = *offset as u64;
            if first <= offset && offset <= end + 1 {
                return fail(
                    self.name(),
                    format!(
                        "link {i} of node{} at {} ns: PSYNC {replid} {offset} got a full resync, yet the backlog held offsets {first}..={end}",
                        s.replica, s.psync_ns
                    ),
                );
            }
        }
        Ok(())
    }
}
