//! The engine-side hooks of planted bugs (see crate::planted) that act on
//! replies and deferred writes.

use super::*;

impl Engine {
    /// Planted bug (PlantedBug::IncrNotAtomic): INCR replied with `old + 1`
    /// but left the write-back for later, as if read and write were two
    /// steps of an event loop. Writing back now overwrites whatever other
    /// INCRs of the same counter did in between: their updates are lost.
    pub(super) fn apply_deferred_incr_writes(&mut self, writes: Vec<(usize, Vec<u8>, Vec<u8>)>) {
        debug_assert_eq!(
            self.server.config.planted_bug,
            Some(PlantedBug::IncrNotAtomic)
        );
        for (db, key, text) in writes {
            let value = Value::Str(crate::value::RString::new(text));
            drop(self.server.keyspace.dbs[db].set(&key, value, true));
            self.server.dirty += 1;
        }
    }

    /// The planted bugs that act on a reply just produced by `client`.
    pub(super) fn planted_after_reply(
        &mut self,
        client: ClientId,
        reply: &mut Vec<u8>,
        reply_start: usize,
    ) {
        match self.server.config.planted_bug {
            Some(PlantedBug::PartialWriteDropsReply) => {
                if let Some(c) = self.clients.get_mut(&client) {
                    c.planted_last_reply_start = reply_start;
                }
            }
            Some(PlantedBug::ReplyToWrongConnection) => {
                self.server.planted.replies_count += 1;
                if self.server.planted.replies_count < MISROUTED_REPLY_EVERY {
                    return;
                }
                self.server.planted.replies_count = 0;
                // Planted bug (PlantedBug::ReplyToWrongConnection): every
                // Nth reply is appended to the output of the next live
                // connection (by id, wrapping) instead of its own.
                let other = self
                    .clients
                    .range(ClientId(client.0 + 1)..)
                    .chain(self.clients.range(..client))
                    .find(|(_, c)| c.closing.is_none())
                    .map(|(&id, _)| id);
                let Some(other) = other else { return };
                let o = self.clients.get_mut(&other).expect("found above");
                let had_output = !o.pending_output().is_empty();
                o.output.extend_from_slice(&reply[reply_start..]);
                reply.truncate(reply_start);
                if !had_output {
                    self.transmit.push_back(other);
                }
            }
            _ => {}
        }
    }
}
