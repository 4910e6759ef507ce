//! A partial resync whenever the backlog covers the gap. Two ways to miss
//! one, both defects:
//!
//! - the primary answers a `PSYNC <replid> <offset>` naming its current
//!   history, with an offset its backlog still holds (or the very next
//!   byte), with `+FULLRESYNC` (Redis's `masterTryPartialResynchronization`
//!   would continue);
//! - a replica that lost its link (and did not restart) asks `PSYNC ?`,
//!   or an older offset, instead of resuming from its cached primary: the
//!   replication id and offset of the stream it applied, which the
//!   backlog still covered.
//!
//! The offset a replica resumes from is the end of the last whole command
//! it was handed (a command cut by the link's end is not applied).

use super::stream::cached;
use super::{fail, ClusterChecker};
use crate::check::Violation;
use crate::cluster::history::{ClusterHistory, Session, WitnessStream};

pub struct PartialResync;

/// The first and last offsets the backlog held when `s`'s PSYNC arrived.
fn backlog_span(h: &ClusterHistory, s: &Session, w: &WitnessStream) -> (u64, u64) {
    let end = s.primary_end_at_psync;
    (
        (w.base + 1).max((end + 1).saturating_sub(h.backlog_bytes)),
        end,
    )
}

impl ClusterChecker for PartialResync {
    fn name(&self) -> &'static str {
        "repl-partial-resync"
    }

    fn check(&self, h: &ClusterHistory) -> Result<(), Violation> {
        for (i, s) in h.sessions.iter().enumerate() {
            let (Some((replid, offset)), Some(true)) = (&s.psync, s.full) else {
                continue;
            };
            let Some(w) = h.witness.iter().find(|w| {
                w.node == s.primary
                    && w.incarnation == s.incarnation
                    && w.replid == s.primary_replid_at_psync
            }) else {
                continue;
            };
            let (first, end) = backlog_span(h, s, w);
            let covered = |o: u64| first <= o && o <= end + 1;
            if *replid == w.replid && *offset >= 1 && covered(*offset as u64) {
                return fail(
                    self.name(),
                    format!(
                        "link {i} of node{} at {} ns: PSYNC {replid} {offset} got a full resync, yet the backlog held offsets {first}..={end}",
                        s.replica, s.psync_ns
                    ),
                );
            }
            let previous = h.sessions[..i].iter().rev().find(|p| {
                p.replica == s.replica
                    && p.replica_incarnation == s.replica_incarnation
                    && p.full.is_some()
            });
            let Some((cached_id, cached_offset)) = previous.and_then(|p| cached(h, p)) else {
                continue;
            };
            let asked_behind = *replid != cached_id || *offset < (cached_offset + 1) as i64;
            if cached_id == w.replid && covered(cached_offset + 1) && asked_behind {
                return fail(
                    self.name(),
                    format!(
                        "link {i} of node{} at {} ns: the replica asked PSYNC {replid} {offset} and got a full resync, though it had applied {cached_id} up to {cached_offset} and the backlog held offsets {first}..={end}",
                        s.replica, s.psync_ns
                    ),
                );
            }
        }
        Ok(())
    }
}
