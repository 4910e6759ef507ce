//! Planted bugs of replication's primary side:
//! [`PlantedBug::PsyncSkipsBoundaryCommand`](super::PlantedBug) drops the
//! first command of a partial resync's backlog bytes,
//! [`PlantedBug::WaitCountsUnacked`](super::PlantedBug) lets WAIT count a
//! replica whose last ack is short of the offset,
//! [`PlantedBug::ReplicaSelfExpiry`](super::PlantedBug) lets a replica
//! expire keys by its own clock,
//! [`PlantedBug::FailoverSkipsWaitForSync`](super::PlantedBug) hands the
//! primary role to a replica that has not caught up.

use crate::repl::{ReplicaState, Replication};

use super::{Hook, PlantedBug};

/// Commands' argument counts a skipped command may have at most (a bound
/// on the walk over a malformed backlog).
const ARGS_MAX: usize = 1 << 20;

impl Hook {
    /// Seam "a partial resync serves the backlog": the bytes `+CONTINUE`
    /// is followed by (the backlog from the replica's offset on).
    pub(crate) fn partial_resync_bytes(&self, bytes: Vec<u8>) -> Vec<u8> {
        // Planted bug (PlantedBug::PsyncSkipsBoundaryCommand): the command
        // at the boundary, the first one the replica is missing, is not
        // sent: the replica's copy silently lacks one write and its
        // offsets run ahead of its data.
        if !self.is(PlantedBug::PsyncSkipsBoundaryCommand) {
            return bytes;
        }
        match command_end(&bytes) {
            Some(end) => bytes[end..].to_vec(),
            None => bytes,
        }
    }

    /// Seam "a replica meets an expired key" (the cron, a lookup): whether
    /// the replica expires it itself (never, on a clean engine).
    pub(crate) fn replica_self_expires(&self) -> bool {
        // Planted bug (PlantedBug::ReplicaSelfExpiry): a replica deletes
        // keys by its own clock, as a primary does, instead of waiting for
        // its primary's DEL.
        self.is(PlantedBug::ReplicaSelfExpiry)
    }

    /// Seam "FAILOVER waits for its target": whether a replica that
    /// acknowledged `ack_offset` has the whole stream, up to `offset`.
    pub(crate) fn failover_target_synced(&self, ack_offset: u64, offset: u64) -> bool {
        // Planted bug (PlantedBug::FailoverSkipsWaitForSync): a replica
        // that ever acknowledged anything is taken as caught up, so the
        // primary hands over at once and what the target had not received
        // is gone from the new primary's history.
        if self.is(PlantedBug::FailoverSkipsWaitForSync) {
            return ack_offset > 0;
        }
        ack_offset == offset
    }

    /// Seam "WAIT counts acks": how many replicas acknowledged `offset`.
    pub(crate) fn acked_count(&self, repl: &Replication, offset: u64) -> usize {
        if !self.is(PlantedBug::WaitCountsUnacked) {
            return repl.acked_count(offset);
        }
        // Planted bug (PlantedBug::WaitCountsUnacked): a replica that ever
        // acknowledged anything counts, whatever offset it reached.
        repl.replicas
            .iter()
            .filter(|r| {
                r.state == ReplicaState::Online && (r.ack_offset >= offset || r.ack_offset > 0)
            })
            .count()
    }
}

/// Where the RESP multibulk command at the start of `bytes` ends; `None`
/// if the bytes do not start with a whole one.
fn command_end(bytes: &[u8]) -> Option<usize> {
    let (argc, mut at) = super::number_line(bytes, b'*', 0)?;
    for _ in 0..argc.min(ARGS_MAX) {
        let (len, next) = super::number_line(bytes, b'$', at)?;
        at = next.checked_add(len)?.checked_add(2)?;
        if at > bytes.len() {
            return None;
        }
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::command_end;

    #[test]
    fn finds_the_end_of_the_first_command() {
        let two = b"*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n";
        assert_eq!(command_end(two), Some(14));
        assert_eq!(command_end(&two[..10]), None);
        assert_eq!(command_end(b""), None);
    }
}
