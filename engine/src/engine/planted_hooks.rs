//! The engine-side hook of a planted bug (see crate::planted) that acts on
//! deferred writes; the one that acts on replies is the pipeline's
//! (`crate::pipeline`).

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
}
