//! The connection table: every command looks its client up several times
//! (parse, execute, reply, stats), so lookup is a hash probe, while
//! iteration (CLIENT LIST, INFO, broadcasts, idle checks) stays in id
//! order, as a `BTreeMap` would give it.
//!
//! Ids are assigned in increasing order and never reused, so appending a new
//! client keeps the slot vector sorted by id; a removed client leaves a hole
//! that is squeezed out once holes outnumber live clients (amortised O(1)).
//! The index's hasher is fixed (no random state): lookups are deterministic,
//! and the index is never iterated.

use std::cell::Cell;
use std::ops::RangeBounds;

use rustc_hash::FxHashMap;

use std::collections::VecDeque;

use crate::client::{Client, ClientId, CloseReason};
use crate::event::Event;

/// Holes below this many are never squeezed out: a handful of churned
/// connections is cheaper to skip than to compact.
const COMPACT_HOLES_MIN: usize = 64;

#[derive(Debug, Default)]
pub struct Clients {
    /// Clients in id order; `None` marks a removed client's hole.
    slots: Vec<Option<(ClientId, Client)>>,
    /// Id -> index into `slots`.
    index: FxHashMap<ClientId, usize>,
    /// The highest id ever inserted: the next must be higher.
    last_id: Option<ClientId>,
    /// The slot of the last client looked up: a request looks its own
    /// client up a dozen times (parse, admit, execute, reply, stats, the
    /// host's writes), so checking this slot's id first skips most hash
    /// probes. A hint, verified against the slot's own id on every use, so
    /// no removal or compaction has to keep it right.
    last_slot: Cell<usize>,
}

impl Clients {
    pub fn new() -> Clients {
        Clients::default()
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    pub fn contains_key(&self, id: &ClientId) -> bool {
        self.index.contains_key(id)
    }

    #[inline]
    pub fn get(&self, id: &ClientId) -> Option<&Client> {
        let slot = self.slot_of(id)?;
        self.slots[slot].as_ref().map(|(_, c)| c)
    }

    #[inline]
    pub fn get_mut(&mut self, id: &ClientId) -> Option<&mut Client> {
        let slot = self.slot_of(id)?;
        self.slots[slot].as_mut().map(|(_, c)| c)
    }

    /// `id`'s slot: the last lookup's when it holds `id`, else the index's.
    #[inline]
    fn slot_of(&self, id: &ClientId) -> Option<usize> {
        let hint = self.last_slot.get();
        if let Some(Some((held, _))) = self.slots.get(hint) {
            if held == id {
                return Some(hint);
            }
        }
        let slot = *self.index.get(id)?;
        self.last_slot.set(slot);
        Some(slot)
    }

    /// Adds a client. Ids must arrive in increasing order (the engine
    /// assigns them so); returns the client an equal id replaced, which
    /// never happens.
    pub fn insert(&mut self, id: ClientId, client: Client) -> Option<Client> {
        if let Some(&slot) = self.index.get(&id) {
            let old = self.slots[slot].replace((id, client));
            return old.map(|(_, c)| c);
        }
        assert!(
            self.last_id < Some(id),
            "client ids are assigned in increasing order"
        );
        self.last_id = Some(id);
        self.index.insert(id, self.slots.len());
        self.slots.push(Some((id, client)));
        None
    }

    pub fn remove(&mut self, id: &ClientId) -> Option<Client> {
        let slot = self.index.remove(id)?;
        let removed = self.slots[slot].take().map(|(_, c)| c);
        debug_assert!(removed.is_some(), "the index points at live slots");
        self.compact_if_sparse();
        removed
    }

    /// Clients in id order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&ClientId, &Client)> {
        self.slots.iter().flatten().map(|(id, c)| (id, c))
    }

    /// Clients in id order, mutably.
    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = (&ClientId, &mut Client)> {
        self.slots.iter_mut().flatten().map(|(id, c)| (&*id, c))
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &ClientId> {
        self.iter().map(|(id, _)| id)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Client> {
        self.iter().map(|(_, c)| c)
    }

    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut Client> {
        self.iter_mut().map(|(_, c)| c)
    }

    /// Clients whose ids fall in `range`, in id order (a scan of the whole
    /// table: for rare callers).
    pub fn range<R: RangeBounds<ClientId>>(
        &self,
        range: R,
    ) -> impl DoubleEndedIterator<Item = (&ClientId, &Client)> {
        self.iter().filter(move |(id, _)| range.contains(id))
    }

    /// The slots, holes included (for [`crate::invariants`]).
    pub(crate) fn slots(&self) -> &[Option<(ClientId, Client)>] {
        &self.slots
    }

    /// Id -> slot (for [`crate::invariants`]).
    pub(crate) fn slot_index(&self) -> &FxHashMap<ClientId, usize> {
        &self.index
    }

    /// The highest id ever inserted.
    pub(crate) fn last_id(&self) -> Option<ClientId> {
        self.last_id
    }

    /// Lets invariant tests corrupt the index.
    #[cfg(test)]
    pub(crate) fn slot_index_mut(&mut self) -> &mut FxHashMap<ClientId, usize> {
        &mut self.index
    }

    /// Lets invariant tests corrupt the slots.
    #[cfg(test)]
    pub(crate) fn slots_mut(&mut self) -> &mut Vec<Option<(ClientId, Client)>> {
        &mut self.slots
    }

    /// Squeezes out holes once they outnumber live clients, re-pointing the
    /// index; each removal pays for at most two slot moves.
    fn compact_if_sparse(&mut self) {
        let holes = self.slots.len() - self.index.len();
        if holes < COMPACT_HOLES_MIN || holes <= self.index.len() {
            return;
        }
        self.slots.retain(Option::is_some);
        for (slot, entry) in self.slots.iter().enumerate() {
            let (id, _) = entry.as_ref().expect("retained live slots");
            *self.index.get_mut(id).expect("indexed") = slot;
        }
        debug_assert_eq!(self.slots.len(), self.index.len());
    }
}

impl std::ops::Index<&ClientId> for Clients {
    type Output = Client;

    /// The client with this id; panics if there is none (only for ids the
    /// engine knows are connected, like a command's own client).
    #[inline]
    fn index(&self, id: &ClientId) -> &Client {
        self.get(id).expect("no client with this id")
    }
}

/// Marks `client` as closing and tells the host.
pub(crate) fn close_client(
    clients: &mut Clients,
    events: &mut VecDeque<Event>,
    client: ClientId,
    reason: CloseReason,
) {
    if let Some(c) = clients.get_mut(&client) {
        if c.closing.is_none() {
            c.closing = Some(reason);
            events.push_back(Event::Close { client, reason });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::ConnectInfo;
    use crate::time::Now;

    fn client(id: u64) -> Client {
        Client::new(
            ClientId(id),
            ConnectInfo::default(),
            Now::from_ns(0, 0),
            true,
        )
    }

    fn ids(clients: &Clients) -> Vec<u64> {
        clients.keys().map(|id| id.0).collect()
    }

    /// Churn far past the compaction threshold: lookups, id order, ranges
    /// and lengths stay those of a `BTreeMap` holding the same clients.
    #[test]
    fn behaves_like_an_ordered_map_through_churn() {
        let mut clients = Clients::new();
        let mut model = std::collections::BTreeSet::new();
        let mut next = 1;
        for round in 0..20u64 {
            for _ in 0..50 {
                assert!(clients.insert(ClientId(next), client(next)).is_none());
                model.insert(next);
                next += 1;
            }
            // Remove every id whose remainder matches this round's pattern.
            let doomed: Vec<u64> = model
                .iter()
                .copied()
                .filter(|id| id % 3 != round % 3)
                .collect();
            for id in doomed {
                assert!(clients.remove(&ClientId(id)).is_some());
                assert!(clients.remove(&ClientId(id)).is_none());
                model.remove(&id);
            }
            assert_eq!(clients.len(), model.len());
            assert_eq!(ids(&clients), model.iter().copied().collect::<Vec<_>>());
            for id in 1..next {
                assert_eq!(
                    clients.get(&ClientId(id)).map(|c| c.id.0),
                    model.get(&id).copied()
                );
            }
            let mid = ClientId(next / 2);
            let above: Vec<u64> = clients.range(mid..).map(|(id, _)| id.0).collect();
            let below: Vec<u64> = clients.range(..mid).map(|(id, _)| id.0).collect();
            assert_eq!(above, model.range(mid.0..).copied().collect::<Vec<_>>());
            assert_eq!(below, model.range(..mid.0).copied().collect::<Vec<_>>());
        }
        assert!(clients.slots.len() <= 2 * clients.len() + COMPACT_HOLES_MIN);
    }

    #[test]
    #[should_panic(expected = "increasing order")]
    fn refuses_an_id_below_the_last() {
        let mut clients = Clients::new();
        clients.insert(ClientId(5), client(5));
        clients.insert(ClientId(4), client(4));
    }
}
