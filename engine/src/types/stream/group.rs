//! Consumer groups: a group's last delivered ID and read counter, its
//! pending entries list (PEL: entries delivered and not yet acknowledged,
//! each owned by one consumer) and its consumers, each with the IDs of the
//! pending entries it owns. The group's PEL and the consumers' PELs always
//! hold the same IDs (Redis shares the NACK structs between them).

use std::collections::{BTreeMap, BTreeSet};

use super::StreamId;

/// A consumer group.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Group {
    pub last_id: StreamId,
    /// Entries read (Redis's `entries_read`); `None` is its invalid -1.
    pub entries_read: Option<u64>,
    pub pel: BTreeMap<StreamId, Pending>,
    pub consumers: BTreeMap<Vec<u8>, Consumer>,
}

/// A pending entry (Redis's `streamNACK`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending {
    pub consumer: Vec<u8>,
    /// Unix ms of the last delivery.
    pub delivery_time_ms: u64,
    pub delivery_count: u64,
}

/// A consumer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Consumer {
    /// Unix ms the consumer was last seen (Redis 7.0's `seen_time`).
    pub seen_time_ms: u64,
    pub pel: BTreeSet<StreamId>,
}

/// Bytes a pending entry and a consumer cost besides their names.
const PENDING_BYTES: usize = 64;
const CONSUMER_BYTES: usize = 64;

impl Group {
    pub fn new(last_id: StreamId, entries_read: Option<u64>) -> Group {
        Group {
            last_id,
            entries_read,
            ..Group::default()
        }
    }

    pub fn size_bytes(&self) -> usize {
        let consumers: usize = self
            .consumers
            .iter()
            .map(|(name, c)| name.len() + CONSUMER_BYTES + c.pel.len() * 16)
            .sum();
        self.pel.len() * PENDING_BYTES + consumers
    }

    /// The consumer `name`, created (seen now) if missing; returns whether
    /// it was created.
    pub fn consumer_or_create(&mut self, name: &[u8], now_ms: u64) -> (&mut Consumer, bool) {
        let created = !self.consumers.contains_key(name);
        let c = self
            .consumers
            .entry(name.to_vec())
            .or_insert_with(|| Consumer {
                seen_time_ms: now_ms,
                pel: BTreeSet::new(),
            });
        (c, created)
    }

    /// Removes a consumer and its pending entries; returns how many it had.
    pub fn delete_consumer(&mut self, name: &[u8]) -> Option<usize> {
        let consumer = self.consumers.remove(name)?;
        for id in &consumer.pel {
            self.pel.remove(id);
        }
        Some(consumer.pel.len())
    }

    /// Acknowledges `id`: it leaves the PEL and its consumer's.
    pub fn ack(&mut self, id: StreamId) -> bool {
        let Some(p) = self.pel.remove(&id) else {
            return false;
        };
        if let Some(c) = self.consumers.get_mut(&p.consumer) {
            c.pel.remove(&id);
        }
        true
    }

    /// Delivers `id` to `consumer` (which must exist) as new, replacing
    /// any pending entry for it (Redis's XREADGROUP `>` path).
    pub fn deliver_new(&mut self, id: StreamId, consumer: &[u8], now_ms: u64) {
        let pending = Pending {
            consumer: consumer.to_vec(),
            delivery_time_ms: now_ms,
            delivery_count: 1,
        };
        if let Some(old) = self.pel.insert(id, pending) {
            if let Some(c) = self.consumers.get_mut(&old.consumer) {
                c.pel.remove(&id);
            }
        }
        if let Some(c) = self.consumers.get_mut(consumer) {
            c.pel.insert(id);
        }
    }

    /// Moves the pending entry `id` to `consumer` (XCLAIM), which must
    /// exist.
    pub fn transfer(&mut self, id: StreamId, consumer: &[u8]) {
        let Some(p) = self.pel.get_mut(&id) else {
            return;
        };
        if p.consumer != consumer {
            let old = std::mem::replace(&mut p.consumer, consumer.to_vec());
            if let Some(c) = self.consumers.get_mut(&old) {
                c.pel.remove(&id);
            }
            if let Some(c) = self.consumers.get_mut(consumer) {
                c.pel.insert(id);
            }
        }
    }

    /// Checks that the group's PEL and its consumers' agree (for tests and
    /// invariants).
    pub fn is_consistent(&self) -> bool {
        let owned: usize = self.consumers.values().map(|c| c.pel.len()).sum();
        owned == self.pel.len()
            && self.consumers.iter().all(|(name, c)| {
                c.pel
                    .iter()
                    .all(|id| self.pel.get(id).is_some_and(|p| &p.consumer == name))
            })
    }
}
