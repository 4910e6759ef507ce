//! Every replica's stream is a prefix of the primary's, at the same
//! offsets: byte for byte, what each replication link handed the replica
//! from its start offset on equals what the primary wrote there (as the
//! witness read it). A write skipped, applied twice, reordered or invented
//! breaks the equality, and a partial resync resumes exactly where the
//! replica's applied stream ended, in the history it applied. Across a
//! failover "the primary's stream" is the chain of witness streams the
//! new primary's continues (`ClusterHistory::lineage_bytes`), and a link
//! to a chained replica (the old primary) is compared with it the same
//! way: the stream's id names the history, the offsets place the bytes.

use super::stream::cached;
use super::{fail, ClusterChecker};
use crate::check::Violation;
use crate::cluster::history::ClusterHistory;

pub struct Prefix;

impl ClusterChecker for Prefix {
    fn name(&self) -> &'static str {
        "repl-prefix"
    }

    fn check(&self, h: &ClusterHistory) -> Result<(), Violation> {
        for (i, s) in h.sessions.iter().enumerate() {
            if s.garbled {
                return fail(
                    self.name(),
                    format!(
                        "link {i} of node{}: the primary's bytes are no replication stream",
                        s.replica
                    ),
                );
            }
            if s.full == Some(false) {
                // A partial resync resumes exactly where the replica's
                // applied stream ended: a gap skips writes, an overlap
                // applies some twice.
                let previous = h.sessions[..i].iter().rev().find(|p| {
                    p.replica == s.replica
                        && p.replica_incarnation == s.replica_incarnation
                        && p.full.is_some()
                });
                // The history the replica resumes must be the one it
                // applied: the same id, or one the answering primary's
                // history continues (a failover's new primary).
                let cached_state = previous.and_then(|p| cached(h, p));
                let lineage: Vec<&str> = h
                    .witness_of(s)
                    .map(|w| {
                        h.lineage(w)
                            .iter()
                            .map(|&i| h.witness[i].replid.as_str())
                            .collect()
                    })
                    .unwrap_or_default();
                if let (Some(p), Some((id, _))) = (previous, &cached_state) {
                    if !lineage.is_empty() && !lineage.contains(&id.as_str()) {
                        return fail(
                            self.name(),
                            format!(
                                "link {i} of node{}: a partial resync at {} ns onto node{}'s life {} resumes a stream applied under {id} from node{}'s life {}, which that history does not continue (a restarted primary's stream is another history)",
                                s.replica, s.opened_ns, s.primary, s.incarnation, p.primary, p.incarnation
                            ),
                        );
                    }
                }
                let had = cached_state.map(|(_, o)| o);
                if let (Some(had), Some(base)) = (had, s.stream_base) {
                    if had != base {
                        return fail(
                            self.name(),
                            format!(
                                "link {i} of node{}: a partial resync at {} ns resumes after offset {base}, but the replica had applied the stream up to {had}",
                                s.replica, s.opened_ns
                            ),
                        );
                    }
                }
            }
            let (Some(base), false) = (s.stream_base, s.stream.is_empty()) else {
                continue;
            };
            let Some(wi) = h.witness_of(s) else {
                return fail(self.name(), format!("link {i} of node{}: a stream under replication id {:?}, which no primary had", s.replica, s.answer_replid));
            };
            let end = base + s.stream.len() as u64;
            let Some(expected) = h.lineage_bytes(wi, base, end) else {
                let (w, root) = (&h.witness[wi], &h.witness[h.lineage(wi)[0]]);
                return fail(
                    self.name(),
                    format!(
                        "link {i} of node{}: stream bytes {}..={} outside the primary's history {}..={}",
                        s.replica,
                        base + 1,
                        end,
                        root.base + 1,
                        w.end()
                    ),
                );
            };
            if let Some(at) = s.stream.iter().zip(&expected).position(|(a, b)| a != b) {
                let show = |b: &[u8]| {
                    String::from_utf8_lossy(&b[at..(at + 60).min(b.len())])
                        .escape_debug()
                        .to_string()
                };
                return fail(
                    self.name(),
                    format!(
                        "link {i} of node{} ({} resync at {} ns): offset {} holds {:?}, the primary wrote {:?} there",
                        s.replica,
                        if s.full == Some(true) { "full" } else { "partial" },
                        s.opened_ns,
                        base + 1 + at as u64,
                        show(&s.stream),
                        show(&expected)
                    ),
                );
            }
        }
        Ok(())
    }
}
