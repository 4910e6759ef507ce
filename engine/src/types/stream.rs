//! Streams: entries with increasing IDs, kept in nodes that mirror Redis
//! 7.0's radix tree of listpacks (see [`node`]), plus the stream's
//! counters and its consumer groups (see [`group`]).
//!
//! Besides its entries a stream remembers its last generated ID (which
//! never goes back, even when the entries holding it are deleted), the
//! greatest ID ever deleted by XDEL, and how many entries were ever added:
//! together they let a consumer group's lag be computed (`streamCGLag`).

use std::collections::BTreeMap;

use super::Limits;

pub mod group;
mod id;
pub mod node;
#[cfg(test)]
mod tests;

pub use group::{Consumer, Group, Pending};
pub use id::{string_to_u64, ParsedId, StreamId};
pub use node::{Item, Node};

/// Redis's `STREAM_LISTPACK_MAX_SIZE`: a node never grows past 1 GB.
pub const LISTPACK_MAX_SIZE_BYTES: usize = 1 << 30;

/// Bytes a node costs besides its listpack (the radix-tree key and
/// node), and a group or consumer besides its name, for MEMORY USAGE.
const NODE_OVERHEAD_BYTES: usize = 48;
const GROUP_OVERHEAD_BYTES: usize = 96;

/// A stream value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stream {
    /// Nodes by master ID.
    nodes: BTreeMap<StreamId, Node>,
    /// Live entries.
    len: usize,
    pub last_id: StreamId,
    /// The first live entry's ID, 0-0 when empty (Redis's `first_id`).
    first_id: StreamId,
    pub max_deleted_id: StreamId,
    pub entries_added: u64,
    /// Consumer groups by name.
    pub groups: BTreeMap<Vec<u8>, Group>,
}

/// Why [`Stream::append`] refused an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppendError {
    /// The ID is not above the last one (Redis's EDOM).
    IdTooSmall,
    /// The fields and values are too large for a node (Redis's ERANGE).
    TooLarge,
}

/// How XADD and XTRIM trim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trim {
    MaxLen(u64),
    MinId(StreamId),
}

impl Stream {
    pub fn new() -> Stream {
        Stream::default()
    }

    /// Live entries.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn encoding_name(&self) -> &'static str {
        "stream"
    }

    /// Radix-tree keys (XINFO STREAM `radix-tree-keys`).
    pub fn nodes_count(&self) -> usize {
        self.nodes.len()
    }

    pub fn nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes.values()
    }

    /// The first live entry's ID (0-0 when empty).
    pub fn first_id(&self) -> StreamId {
        self.first_id
    }

    /// Elements a free visits: nodes, entries, and pending entries.
    pub fn free_cost_units(&self) -> u64 {
        let pel: usize = self.groups.values().map(|g| g.pel.len()).sum();
        (self.nodes.len() + self.len + pel) as u64
    }

    /// Approximate heap bytes.
    pub fn size_bytes(&self) -> usize {
        let nodes: usize = self
            .nodes
            .values()
            .map(|n| n.lp_bytes() + NODE_OVERHEAD_BYTES)
            .sum();
        let groups: usize = self
            .groups
            .iter()
            .map(|(name, g)| name.len() + GROUP_OVERHEAD_BYTES + g.size_bytes())
            .sum();
        64 + nodes + groups
    }

    /// The ID XADD generates with `*` at `now_ms` (`streamNextID`), or
    /// `None` when the stream has used the last possible ID.
    pub fn next_auto_id(&self, now_ms: u64) -> Option<StreamId> {
        if now_ms > self.last_id.ms {
            Some(StreamId::new(now_ms, 0))
        } else {
            self.last_id.next()
        }
    }

    /// The ID XADD uses for `ms-*`: the next sequence in `ms`, or `None`
    /// when that is not above the last ID.
    pub fn next_id_in_ms(&self, ms: u64) -> Option<StreamId> {
        if ms == self.last_id.ms {
            self.last_id.next().filter(|id| id.ms == ms)
        } else if ms > self.last_id.ms {
            Some(StreamId::new(ms, 0))
        } else {
            None
        }
    }

    /// Appends an entry with `pairs` (field, value...) at `id`, which must
    /// be above the last ID (`streamAppendItem`). Starts a new node when the
    /// last one is full by `limits`.
    pub fn append(
        &mut self,
        id: StreamId,
        pairs: &[Vec<u8>],
        limits: &Limits,
    ) -> Result<(), AppendError> {
        debug_assert!(pairs.len().is_multiple_of(2) && !pairs.is_empty());
        if id <= self.last_id {
            return Err(AppendError::IdTooSmall);
        }
        let total_bytes: usize = pairs.iter().map(Vec::len).sum();
        if total_bytes > LISTPACK_MAX_SIZE_BYTES {
            return Err(AppendError::TooLarge);
        }
        let mut max_bytes = limits.stream_node_max_bytes;
        if max_bytes == 0 || max_bytes > LISTPACK_MAX_SIZE_BYTES {
            max_bytes = LISTPACK_MAX_SIZE_BYTES;
        }
        let max_entries = limits.stream_node_max_entries;
        let tail = self.nodes.values_mut().next_back().filter(|node| {
            node.lp_bytes() + total_bytes < max_bytes
                && (max_entries == 0 || node.total() < max_entries)
        });
        match tail {
            Some(node) => node.push(id, pairs),
            None => {
                // A full node takes no more entries: give back its slack,
                // as Redis shrinks the listpack (`lpShrinkToFit`).
                if let Some(full) = self.nodes.values_mut().next_back() {
                    full.items.shrink_to_fit();
                }
                self.nodes.insert(id, Node::new(id, pairs));
            }
        }
        if self.len == 0 {
            self.first_id = id;
        }
        self.len += 1;
        self.last_id = id;
        self.entries_added += 1;
        Ok(())
    }

    /// Visits the live entries from `start` to `end` (inclusive), forward
    /// or in reverse, while `visit` returns true. Returns the entries
    /// looked at, tombstones included (the work done).
    pub fn walk(
        &self,
        start: StreamId,
        end: StreamId,
        rev: bool,
        mut visit: impl FnMut(&Node, &Item) -> bool,
    ) -> u64 {
        let mut seen = 0u64;
        if start > end {
            return 0;
        }
        if !rev {
            let first = self
                .nodes
                .range(..=start)
                .next_back()
                .map_or(StreamId::MIN, |(k, _)| *k);
            for node in self.nodes.range(first..).map(|(_, n)| n) {
                if node.master > end {
                    break;
                }
                for item in &node.items[node.lower_bound(start)..] {
                    seen += 1;
                    if item.id > end {
                        return seen;
                    }
                    if !item.deleted && !visit(node, item) {
                        return seen;
                    }
                }
            }
        } else {
            for node in self.nodes.range(..=end).rev().map(|(_, n)| n) {
                let upto = node.items.partition_point(|i| i.id <= end);
                for item in node.items[..upto].iter().rev() {
                    seen += 1;
                    if item.id < start {
                        return seen;
                    }
                    if !item.deleted && !visit(node, item) {
                        return seen;
                    }
                }
                if node.master < start {
                    break;
                }
            }
        }
        seen
    }

    /// The live entry `id`, if any.
    pub fn get(&self, id: StreamId) -> Option<(&Node, &Item)> {
        let (_, node) = self.nodes.range(..=id).next_back()?;
        let pos = node.lower_bound(id);
        node.items
            .get(pos)
            .filter(|i| i.id == id && !i.deleted)
            .map(|i| (node, i))
    }

    /// The first (or last) live entry.
    pub fn edge(&self, last: bool) -> Option<(&Node, &Item)> {
        let mut found = None;
        self.walk(StreamId::MIN, StreamId::MAX, last, |_, i| {
            found = Some(i.id);
            false
        });
        self.get(found?)
    }

    /// Deletes the live entry `id` (XDEL): marks it, or frees its node when
    /// it was the node's last live entry. Returns whether it existed.
    pub fn delete(&mut self, id: StreamId) -> bool {
        let Some((&master, node)) = self.nodes.range_mut(..=id).next_back() else {
            return false;
        };
        let pos = node.lower_bound(id);
        if !node
            .items
            .get(pos)
            .is_some_and(|i| i.id == id && !i.deleted)
        {
            return false;
        }
        if node.live == 1 {
            self.nodes.remove(&master);
        } else {
            node.mark_deleted(pos);
        }
        self.len -= 1;
        if id > self.max_deleted_id {
            self.max_deleted_id = id;
        }
        if self.len == 0 {
            self.first_id = StreamId::MIN;
        } else if id == self.first_id {
            self.first_id = self.edge(false).map_or(StreamId::MIN, |(_, i)| i.id);
        }
        true
    }

    /// Trims (`streamTrim`): whole nodes from the head while they are all
    /// to go, then, unless `approx`, entries of the next node one by one.
    /// `limit` (0: none) caps the entries removed with whole nodes.
    /// Returns the entries removed and the nodes looked at.
    pub fn trim(&mut self, trim: Trim, approx: bool, limit: u64) -> (u64, u64) {
        let mut deleted = 0u64;
        let mut visited = 0u64;
        while let Some(mut entry) = self.nodes.first_entry() {
            visited += 1;
            if let Trim::MaxLen(max) = trim {
                if self.len as u64 <= max {
                    break;
                }
            }
            let node = entry.get_mut();
            let entries = node.live as u64;
            if limit != 0 && deleted + entries > limit {
                break;
            }
            let remove_node = match trim {
                Trim::MaxLen(max) => self.len as u64 - entries >= max,
                Trim::MinId(min) => node.last_id() < min,
            };
            if remove_node {
                entry.remove();
                self.len -= entries as usize;
                deleted += entries;
                continue;
            }
            if approx {
                break;
            }
            for pos in 0..node.items.len() {
                visited += 1;
                let stop = match trim {
                    Trim::MaxLen(max) => self.len as u64 <= max,
                    Trim::MinId(min) => node.items[pos].id >= min,
                };
                if stop {
                    break;
                }
                if !node.items[pos].deleted {
                    node.mark_deleted(pos);
                    self.len -= 1;
                    deleted += 1;
                }
            }
            break;
        }
        self.first_id = match self.edge(false) {
            Some((_, item)) => item.id,
            None => StreamId::MIN,
        };
        (deleted, visited)
    }

    /// The first entry's ID, tombstones included, or the last possible
    /// ID when there are no nodes (`streamGetEdgeID(s,1,0,..)`: what a
    /// MINID trim is propagated as).
    pub fn first_id_with_tombstones(&self) -> StreamId {
        self.nodes
            .values()
            .next()
            .and_then(|n| n.items.first())
            .map_or(StreamId::MAX, |i| i.id)
    }

    /// Whether an XDEL tombstone may lie in `start..=end`
    /// (`streamRangeHasTombstones`).
    pub fn range_has_tombstones(&self, start: StreamId, end: StreamId) -> bool {
        if self.len == 0 || self.max_deleted_id.is_zero() {
            return false;
        }
        if self.first_id > self.max_deleted_id {
            return false;
        }
        start <= self.max_deleted_id && self.max_deleted_id <= end
    }

    /// The logical read counter of `id` (`streamEstimateDistanceFromFirstEverEntry`),
    /// or `None` when it cannot be known.
    pub fn estimate_distance(&self, id: StreamId) -> Option<u64> {
        if self.entries_added == 0 {
            return Some(0);
        }
        if self.len == 0 && id <= self.last_id {
            return Some(self.entries_added);
        }
        if id == self.last_id {
            return Some(self.entries_added);
        } else if id > self.last_id {
            return None;
        }
        if self.max_deleted_id.is_zero() || self.max_deleted_id < self.first_id {
            // A loaded RDB may claim fewer entries added than it holds.
            let before_first = self.entries_added.saturating_sub(self.len as u64);
            if id < self.first_id {
                return Some(before_first);
            } else if id == self.first_id {
                return Some(before_first + 1);
            }
        }
        None
    }

    /// A group's lag (`streamCGLag`), `None` when it cannot be known.
    pub fn group_lag(&self, group: &Group) -> Option<u64> {
        if self.entries_added == 0 {
            return Some(0);
        }
        if let Some(read) = group.entries_read {
            if !self.range_has_tombstones(group.last_id, StreamId::MAX) {
                return Some(self.entries_added.saturating_sub(read));
            }
        }
        let read = self.estimate_distance(group.last_id)?;
        Some(self.entries_added.saturating_sub(read))
    }

    /// Adds a node loaded from an RDB (nodes come in ID order).
    pub fn push_loaded_node(&mut self, node: Node) -> bool {
        if self
            .nodes
            .last_key_value()
            .is_some_and(|(_, last)| last.last_id() >= node.master)
        {
            return false;
        }
        self.len += node.live;
        self.nodes.insert(node.master, node);
        true
    }

    /// Sets the counters loaded from an RDB, after its nodes.
    pub fn finish_load(&mut self) {
        self.first_id = self.edge(false).map_or(StreamId::MIN, |(_, i)| i.id);
    }
}
