//! Keys a writable replica's own clients gave a TTL (Redis 7.0.15's
//! `slaveKeysWithExpire`, `rememberSlaveKeyWithExpire` and
//! `expireSlaveKeys`).
//!
//! A replica's keys expire by its primary's DELs. A key written with a TTL
//! by a client of a `replica-read-only no` replica has no primary to
//! expire it, so the replica remembers it and its cron deletes it once it
//! expires, as Redis does. The set is bounded by the keys with a TTL; an
//! entry whose key lost its TTL (or is gone) is dropped when the cron
//! reaches it. The cron visits at most [`VISIT_BUDGET_KEYS`] entries a
//! tick, resuming after the last one (Redis stops after a millisecond,
//! from the start again).

use std::collections::BTreeSet;
use std::ops::Bound;

use crate::db::Keyspace;
use crate::value::Value;

/// Whether a replica takes its clients' writes (`replica-read-only no`).
pub fn is_writable(config: &crate::Config) -> bool {
    crate::commands::config::config_get(config, "replica-read-only").as_deref() == Some("no")
}

/// Entries the cron looks at per tick.
pub const VISIT_BUDGET_KEYS: usize = 256;

/// The remembered keys, by database.
#[derive(Debug, Default)]
pub struct WritableExpires {
    keys: BTreeSet<(usize, Vec<u8>)>,
    /// Where the last tick stopped.
    cursor: Option<(usize, Vec<u8>)>,
}

impl WritableExpires {
    pub fn remember(&mut self, db: usize, key: &[u8]) {
        if !self.keys.contains(&(db, key.to_vec())) {
            self.keys.insert((db, key.to_vec()));
        }
    }

    /// Forgets every key (Redis's `flushSlaveKeysWithExpireList`: the
    /// server stopped being a replica, or a full resync emptied it).
    pub fn clear(&mut self) {
        self.keys.clear();
        self.cursor = None;
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// One tick: removes the visited keys that expired by `now_ms` from
    /// `keyspace` and returns them with their database; drops entries whose
    /// key has no TTL any more. Returns the entries visited too (the
    /// tick's work).
    pub fn expire(
        &mut self,
        keyspace: &mut Keyspace,
        now_ms: u64,
    ) -> (Vec<(usize, Vec<u8>, Value)>, usize) {
        let start = match self.cursor.take() {
            Some(c) => Bound::Excluded(c),
            None => Bound::Unbounded,
        };
        let visit: Vec<(usize, Vec<u8>)> = self
            .keys
            .range((start, Bound::Unbounded))
            .take(VISIT_BUDGET_KEYS)
            .cloned()
            .collect();
        // A short batch reached the end: the next tick starts over.
        if visit.len() == VISIT_BUDGET_KEYS {
            self.cursor = visit.last().cloned();
        }
        let mut expired = Vec::new();
        for (db, key) in &visit {
            let Some(d) = keyspace.dbs.get_mut(*db) else {
                self.keys.remove(&(*db, key.clone()));
                continue;
            };
            if d.get_expire(key).is_none() {
                self.keys.remove(&(*db, key.clone()));
            } else if let Some(v) = d.expire_if_needed(key, now_ms) {
                self.keys.remove(&(*db, key.clone()));
                expired.push((*db, key.clone(), v));
            }
        }
        (expired, visit.len())
    }
}
