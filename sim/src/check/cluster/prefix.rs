//! Every replica's stream is a prefix of the primary's, at the same
//! offsets: byte for byte, what each replication link handed the replica
//! from its start offset on equals what the primary wrote there (as the
//! witness read it). A write skipped, applied twice, reordered or invented
//! breaks the equality, and a partial resync resumes exactly where the
//! replica's applied stream ended.

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
                if let Some(p) = previous.filter(|p| p.incarnation != s.incarnation) {
                    return fail(
                        self.name(),
                        format!(
                            "link {i} of node{}: a partial resync at {} ns onto the primary's life {} resumes a stream applied from its life {}: a restarted primary's stream is another history",
                            s.replica, s.opened_ns, s.incarnation, p.incarnation
                        ),
                    );
                }
                let had = previous.and_then(|p| cached(h, p)).map(|(_, o)| o);
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
            let Some(w) = h.witness.iter().find(|w| {
                w.incarnation == s.incarnation
                    && s.answer_replid.as_deref().is_none_or(|r| r == w.replid)
            }) else {
                return fail(self.name(), format!("link {i} of node{}: a stream under replication id {:?}, which the primary never had", s.replica, s.answer_replid));
            };
            if base < w.base || base + s.stream.len() as u64 > w.end() {
                return fail(
                    self.name(),
                    format!(
                        "link {i} of node{}: stream bytes {}..={} outside the primary's {}..={}",
                        s.replica,
                        base + 1,
                        base + s.stream.len() as u64,
                        w.base + 1,
                        w.end()
                    ),
                );
            }
            let from = (base - w.base) as usize;
            let expected = &w.bytes[from..from + s.stream.len()];
            if let Some(at) = s.stream.iter().zip(expected).position(|(a, b)| a != b) {
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
                        show(expected)
                    ),
                );
            }
        }
        Ok(())
    }
}
