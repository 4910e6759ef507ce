//! Lists: a quicklist, as Redis 7.0 keeps every list.
//!
//! A [`List`] is a deque of [`Node`]s, each a packed buffer of entries (see
//! `list/node.rs`) bounded by `list-max-listpack-size`, read when the list
//! is created, as Redis fixes a quicklist's `fill` at creation:
//!
//! - negative (-1..-5): each node holds at most 4, 8, 16, 32 or 64 KB;
//! - positive (or zero): at most that many entries, and never past the 8 KB
//!   safety limit (a zero fill gives one entry per node).
//!
//! An entry that alone exceeds the limit gets a node of its own. Pushes and
//! pops at either end touch one node (O(1) amortised, plus the memmove of
//! at most one node's bytes, as in a listpack); indexed operations hop over
//! whole nodes and then walk entries inside one, so their cost is the nodes
//! skipped plus the entries walked, which [`List::get`] and friends report
//! as `steps` for the work accounting.
//!
//! Inserting into a full node splits it; neighbours that fit together after
//! a split or a removal are merged, so the nodes stay dense.

use std::collections::VecDeque;

mod node;

use node::{entry_size_bytes, Node};

/// Redis's `SIZE_SAFETY_LIMIT`: a count-limited node never grows past this.
const SIZE_SAFETY_LIMIT_BYTES: usize = 8192;
/// Redis's `optimization_level`: node sizes for fill -1..-5.
const OPTIMIZATION_LEVEL_BYTES: [usize; 5] = [4096, 8192, 16384, 32768, 65536];
/// Redis's `FILL_MAX` (a node's count is a 16-bit field, signed fill).
const FILL_MAX: i64 = (1 << 15) - 1;
/// The fill Redis uses by default (`list-max-listpack-size -2`).
const FILL_DEFAULT: i64 = -2;
/// A listpack's header (total bytes, count) and end byte, counted in a
/// node's size against the limits as Redis counts them.
const NODE_HEADER_BYTES: usize = 7;
/// Heap bytes of the list head (Redis's `quicklist` struct) and, per node,
/// of its bookkeeping (`quicklistNode`), for `size_bytes`.
const LIST_STRUCT_BYTES: usize = 40;
const NODE_STRUCT_BYTES: usize = 32;

/// A list (Redis 7.0 reports every list as `quicklist`).
#[derive(Clone, Debug)]
pub struct List {
    nodes: VecDeque<Node>,
    /// Entries across all nodes.
    len: usize,
    /// `list-max-listpack-size` at creation, clamped as Redis clamps it.
    fill: i64,
    /// Sum of the nodes' buffer capacities.
    node_bytes: usize,
}

impl Default for List {
    fn default() -> Self {
        List::new(FILL_DEFAULT)
    }
}

/// Two lists are equal when they hold the same entries in the same order,
/// whatever their node layout.
impl PartialEq for List {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

/// A position: the node and the byte offset of an entry in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pos {
    node: usize,
    offset: usize,
    /// The entry's index within its node.
    in_node: usize,
}

/// Which way an iteration walks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Head to tail.
    Forward,
    /// Tail to head.
    Backward,
}

/// Whether a node of `size_bytes` (entries plus header) holding `count`
/// entries respects `fill` (Redis's `_quicklistNodeAllowInsert` and
/// `_quicklistNodeAllowMerge`, asked about the node after the change).
fn fits(fill: i64, size_bytes: usize, count: usize) -> bool {
    if fill < 0 {
        let level = usize::try_from(-fill - 1).unwrap_or(usize::MAX);
        OPTIMIZATION_LEVEL_BYTES
            .get(level)
            .is_some_and(|&limit| size_bytes <= limit)
    } else {
        size_bytes <= SIZE_SAFETY_LIMIT_BYTES && count as i64 <= fill
    }
}

impl List {
    /// An empty list whose nodes follow `list-max-listpack-size` = `fill`.
    pub fn new(fill: i64) -> List {
        List {
            nodes: VecDeque::new(),
            len: 0,
            fill: fill.clamp(-(OPTIMIZATION_LEVEL_BYTES.len() as i64), FILL_MAX),
            node_bytes: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn encoding_name(&self) -> &'static str {
        "quicklist"
    }

    /// `list-max-listpack-size` as fixed at creation (clamped).
    pub fn fill(&self) -> i64 {
        self.fill
    }

    /// Elements a free visits.
    pub fn free_cost_units(&self) -> u64 {
        self.len as u64
    }

    /// Heap bytes held: the head, the node slots, and each node's
    /// bookkeeping and buffer. O(1): buffer capacities are summed as they
    /// change.
    pub fn size_bytes(&self) -> usize {
        LIST_STRUCT_BYTES
            + self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.nodes.len() * NODE_STRUCT_BYTES
            + self.node_bytes
    }

    /// Nodes in the quicklist (for tests and diagnostics).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Whether `node` could take one more entry of `len` bytes.
    fn allows_insert(&self, node: &Node, len: usize) -> bool {
        fits(
            self.fill,
            NODE_HEADER_BYTES + node.len_bytes() + entry_size_bytes(len),
            node.count() + 1,
        )
    }

    /// Runs `f` on node `i`, keeping `node_bytes` in step with its
    /// capacity.
    fn edit<R>(&mut self, i: usize, f: impl FnOnce(&mut Node) -> R) -> R {
        let node = &mut self.nodes[i];
        let before = node.capacity_bytes();
        let r = f(node);
        let after = node.capacity_bytes();
        self.node_bytes = self.node_bytes - before + after;
        r
    }

    fn insert_node(&mut self, i: usize, node: Node) {
        debug_assert!(node.count() > 0);
        // Most lists are one node: room for exactly one, not the four a
        // VecDeque's first growth allocates (96 bytes of a small list).
        if self.nodes.capacity() == 0 {
            self.nodes.reserve_exact(1);
        }
        self.node_bytes += node.capacity_bytes();
        self.nodes.insert(i, node);
    }

    fn remove_node(&mut self, i: usize) -> Node {
        let node = self.nodes.remove(i).expect("node index in range");
        self.node_bytes -= node.capacity_bytes();
        node
    }

    /// Drops node `i` if it holds nothing; returns whether it did.
    fn drop_if_empty(&mut self, i: usize) -> bool {
        if self.nodes[i].count() == 0 {
            self.remove_node(i);
            true
        } else {
            false
        }
    }

    pub fn push_back(&mut self, data: &[u8]) {
        let last = self.nodes.len().wrapping_sub(1);
        match self.nodes.back() {
            Some(n) if self.allows_insert(n, data.len()) => {
                self.edit(last, |n| n.push_back(data));
            }
            _ => {
                let mut n = Node::new();
                n.push_back(data);
                self.insert_node(self.nodes.len(), n);
            }
        }
        self.len += 1;
    }

    pub fn push_front(&mut self, data: &[u8]) {
        match self.nodes.front() {
            Some(n) if self.allows_insert(n, data.len()) => {
                self.edit(0, |n| n.push_front(data));
            }
            _ => {
                let mut n = Node::new();
                n.push_front(data);
                self.insert_node(0, n);
            }
        }
        self.len += 1;
    }

    pub fn pop_front(&mut self) -> Option<Vec<u8>> {
        let first = self.nodes.front()?;
        let value = first.data_at(0).to_vec();
        self.edit(0, |n| n.remove_at(0));
        self.drop_if_empty(0);
        self.len -= 1;
        Some(value)
    }

    pub fn pop_back(&mut self) -> Option<Vec<u8>> {
        let i = self.nodes.len().checked_sub(1)?;
        let offset = self.nodes[i].last_offset()?;
        let value = self.nodes[i].data_at(offset).to_vec();
        self.edit(i, |n| n.remove_at(offset));
        self.drop_if_empty(i);
        self.len -= 1;
        Some(value)
    }

    pub fn pop(&mut self, direction: Direction) -> Option<Vec<u8>> {
        match direction {
            Direction::Forward => self.pop_front(),
            Direction::Backward => self.pop_back(),
        }
    }

    pub fn push(&mut self, direction: Direction, data: &[u8]) {
        match direction {
            Direction::Forward => self.push_front(data),
            Direction::Backward => self.push_back(data),
        }
    }

    /// The position of entry `index` (`index < len`) and the steps taken
    /// to find it: nodes skipped from the nearer end, then entries walked.
    fn locate(&self, index: usize) -> (Pos, usize) {
        debug_assert!(index < self.len);
        let mut steps = 0;
        let (node, in_node) = if index < self.len / 2 {
            let mut skipped = 0;
            let mut i = 0;
            while skipped + self.nodes[i].count() <= index {
                skipped += self.nodes[i].count();
                i += 1;
                steps += 1;
            }
            (i, index - skipped)
        } else {
            let mut after = self.len;
            let mut i = self.nodes.len() - 1;
            while after - self.nodes[i].count() > index {
                after -= self.nodes[i].count();
                i -= 1;
                steps += 1;
            }
            (i, index - (after - self.nodes[i].count()))
        };
        let n = &self.nodes[node];
        steps += in_node.min(n.count() - in_node);
        let offset = n.offset_of(in_node);
        (
            Pos {
                node,
                offset,
                in_node,
            },
            steps,
        )
    }

    /// Entry `index` and the steps taken to reach it.
    pub fn get(&self, index: usize) -> Option<(&[u8], usize)> {
        if index >= self.len {
            return None;
        }
        let (pos, steps) = self.locate(index);
        Some((self.nodes[pos.node].data_at(pos.offset), steps))
    }

    /// Replaces entry `index`; returns the steps taken, or None when out
    /// of range.
    pub fn set(&mut self, index: usize, data: &[u8]) -> Option<usize> {
        if index >= self.len {
            return None;
        }
        let (pos, steps) = self.locate(index);
        self.edit(pos.node, |n| n.replace_at(pos.offset, data));
        let n = &self.nodes[pos.node];
        if n.count() > 1 && !fits(self.fill, NODE_HEADER_BYTES + n.len_bytes(), n.count()) {
            // The new entry outgrew the node: give it a node of its own, as
            // Redis's insert-then-delete replacement does, then re-merge.
            self.isolate(pos.node, pos.in_node);
        }
        Some(steps)
    }

    /// Splits node `i` so that its entry `in_node` stands alone, then
    /// merges whatever fits around it.
    fn isolate(&mut self, i: usize, in_node: usize) {
        let mut at = i;
        if in_node + 1 < self.nodes[i].count() {
            let rest = self.edit(i, |n| n.split_off(in_node + 1));
            self.insert_node(i + 1, rest);
        }
        if in_node > 0 {
            let single = self.edit(i, |n| n.split_off(in_node));
            self.insert_node(i + 1, single);
            at = i + 1;
        }
        self.merge_around(at);
    }

    /// Merges node `i` with its neighbours where the result fits, as
    /// Redis's `_quicklistMergeNodes` does after a split.
    fn merge_around(&mut self, i: usize) {
        let mut i = i;
        if i > 0 && self.try_merge(i - 1) {
            i -= 1;
        }
        if i + 1 < self.nodes.len() {
            self.try_merge(i);
        }
    }

    /// Merges node `i + 1` into node `i` if together they fit.
    fn try_merge(&mut self, i: usize) -> bool {
        let (a, b) = (&self.nodes[i], &self.nodes[i + 1]);
        let size_bytes = NODE_HEADER_BYTES + a.len_bytes() + b.len_bytes();
        if !fits(self.fill, size_bytes, a.count() + b.count()) {
            return false;
        }
        let b = self.remove_node(i + 1);
        self.edit(i, |a| a.append(b));
        true
    }

    /// Inserts `data` before (or, when `after`, behind) the entry at `pos`.
    fn insert_at(&mut self, pos: Pos, after: bool, data: &[u8]) {
        let i = pos.node;
        let count = self.nodes[i].count();
        let index = pos.in_node + usize::from(after);
        debug_assert!(index <= count);
        if self.allows_insert(&self.nodes[i], data.len()) {
            let offset = if after {
                self.nodes[i].entry_at(pos.offset).2
            } else {
                pos.offset
            };
            self.edit(i, |n| n.insert_at(offset, data));
        } else if index == count {
            // After the node's last entry: the next node's head, or a new node.
            let next_allows = self
                .nodes
                .get(i + 1)
                .is_some_and(|n| self.allows_insert(n, data.len()));
            if next_allows {
                self.edit(i + 1, |n| n.push_front(data));
            } else {
                let mut n = Node::new();
                n.push_back(data);
                self.insert_node(i + 1, n);
            }
        } else if index == 0 {
            let prev_allows = i > 0 && self.allows_insert(&self.nodes[i - 1], data.len());
            if prev_allows {
                self.edit(i - 1, |n| n.push_back(data));
            } else {
                let mut n = Node::new();
                n.push_back(data);
                self.insert_node(i, n);
            }
        } else {
            // Inside a full node: split it at the insertion point, put the
            // entry at the end of the first half (or alone), re-merge.
            let tail = self.edit(i, |n| n.split_off(index));
            self.insert_node(i + 1, tail);
            if self.allows_insert(&self.nodes[i], data.len()) {
                self.edit(i, |n| n.push_back(data));
                self.merge_around(i);
            } else if self.allows_insert(&self.nodes[i + 1], data.len()) {
                self.edit(i + 1, |n| n.push_front(data));
                self.merge_around(i + 1);
            } else {
                let mut n = Node::new();
                n.push_back(data);
                self.insert_node(i + 1, n);
                self.merge_around(i + 1);
            }
        }
        self.len += 1;
    }

    /// LINSERT: inserts `data` before (or after) the first entry equal to
    /// `pivot`, searching from the head. Returns whether the pivot was
    /// found and the entries visited.
    pub fn insert_by_pivot(&mut self, pivot: &[u8], after: bool, data: &[u8]) -> (bool, usize) {
        let mut iter = self.iter();
        let mut visited = 0;
        while let Some(entry) = iter.next() {
            visited += 1;
            if entry == pivot {
                let pos = iter.last;
                self.insert_at(pos, after, data);
                return (true, visited);
            }
        }
        (false, visited)
    }

    /// Removes the first `n` entries (all of them when `n >= len`).
    pub fn drain_front(&mut self, n: usize) {
        let mut left = n.min(self.len);
        self.len -= left;
        while left > 0 {
            let count = self.nodes[0].count();
            if count <= left {
                self.remove_node(0);
                left -= count;
            } else {
                self.edit(0, |node| {
                    node.drain_front(left);
                    node.shrink_if_sparse();
                });
                left = 0;
            }
        }
    }

    /// Removes the last `n` entries (all of them when `n >= len`).
    pub fn drain_back(&mut self, n: usize) {
        let mut left = n.min(self.len);
        self.len -= left;
        while left > 0 {
            let last = self.nodes.len() - 1;
            let count = self.nodes[last].count();
            if count <= left {
                self.remove_node(last);
                left -= count;
            } else {
                self.edit(last, |node| {
                    node.drain_back(left);
                    node.shrink_if_sparse();
                });
                left = 0;
            }
        }
    }

    /// LREM: removes up to `limit` entries equal to `value` (every one when
    /// `limit` is None), walking from the head, or from the tail when
    /// `direction` is Backward. Returns the entries removed and visited.
    pub fn remove_matching(
        &mut self,
        value: &[u8],
        limit: Option<usize>,
        direction: Direction,
    ) -> (usize, usize) {
        let mut removed = 0;
        let mut visited = 0;
        let node_count = self.nodes.len();
        for k in 0..node_count {
            if limit.is_some_and(|l| removed >= l) {
                break;
            }
            let i = match direction {
                Direction::Forward => k,
                Direction::Backward => node_count - 1 - k,
            };
            // Which of this node's entries to drop, by index within it.
            let n = &self.nodes[i];
            let quota = limit.map_or(usize::MAX, |l| l - removed);
            let mut doomed = Vec::new();
            match direction {
                Direction::Forward => {
                    let mut offset = 0;
                    for j in 0..n.count() {
                        visited += 1;
                        if n.data_at(offset) == value {
                            doomed.push(j);
                            if doomed.len() == quota {
                                break;
                            }
                        }
                        offset = n.entry_at(offset).2;
                    }
                }
                Direction::Backward => {
                    let mut end = n.len_bytes();
                    let mut j = n.count();
                    while let Some(offset) = n.prev_offset(end) {
                        j -= 1;
                        visited += 1;
                        if n.data_at(offset) == value {
                            doomed.push(j);
                            if doomed.len() == quota {
                                break;
                            }
                        }
                        end = offset;
                    }
                }
            }
            if doomed.is_empty() {
                continue;
            }
            doomed.sort_unstable();
            let mut j = 0;
            let mut next = 0;
            let dropped = self.edit(i, |n| {
                let dropped = n.retain(|_| {
                    let keep = doomed.get(next) != Some(&j);
                    if !keep {
                        next += 1;
                    }
                    j += 1;
                    keep
                });
                n.shrink_if_sparse();
                dropped
            });
            debug_assert_eq!(dropped, doomed.len());
            removed += dropped;
        }
        self.len -= removed;
        if removed > 0 {
            self.compact();
        }
        (removed, visited)
    }

    /// Drops empty nodes and merges neighbours that fit together.
    fn compact(&mut self) {
        let mut i = 0;
        while i < self.nodes.len() {
            if self.drop_if_empty(i) {
                continue;
            }
            if i + 1 < self.nodes.len() && self.nodes[i + 1].count() > 0 && self.try_merge(i) {
                continue;
            }
            i += 1;
        }
    }

    /// Every entry, head to tail.
    pub fn iter(&self) -> Iter<'_> {
        self.iter_from(0, Direction::Forward)
    }

    /// Entries from `index` (`< len`, else nothing) walking in
    /// `direction`, and the steps taken to reach `index`.
    pub fn iter_from(&self, index: usize, direction: Direction) -> Iter<'_> {
        self.iter_from_with_steps(index, direction).0
    }

    /// Like [`List::iter_from`], also giving the steps taken to reach
    /// `index`.
    pub fn iter_from_with_steps(&self, index: usize, direction: Direction) -> (Iter<'_>, usize) {
        if index >= self.len {
            return (Iter::empty(self), 0);
        }
        let (pos, steps) = if index == 0 {
            (
                Pos {
                    node: 0,
                    offset: 0,
                    in_node: 0,
                },
                0,
            )
        } else {
            self.locate(index)
        };
        let remaining = match direction {
            Direction::Forward => self.len - index,
            Direction::Backward => index + 1,
        };
        let iter = Iter {
            list: self,
            next: pos,
            last: pos,
            remaining,
            direction,
        };
        (iter, steps)
    }

    /// Checks every structural invariant (tests and debug assertions).
    pub fn check_invariants(&self) {
        let mut len = 0;
        let mut node_bytes = 0;
        for n in &self.nodes {
            assert!(n.count() > 0, "empty node");
            assert!(
                n.count() == 1 || fits(self.fill, NODE_HEADER_BYTES + n.len_bytes(), n.count()),
                "node over the fill limit"
            );
            len += n.count();
            node_bytes += n.capacity_bytes();
        }
        assert_eq!(len, self.len);
        assert_eq!(node_bytes, self.node_bytes);
        assert_eq!(self.iter().count(), self.len);
        assert_eq!(
            self.iter_from(self.len.saturating_sub(1), Direction::Backward)
                .count(),
            self.len
        );
    }
}

/// An iterator over a list's entries in one direction, yielding borrowed
/// bytes.
pub struct Iter<'a> {
    list: &'a List,
    /// The entry the next call yields.
    next: Pos,
    /// The entry the last call yielded.
    last: Pos,
    /// Entries still to yield.
    remaining: usize,
    direction: Direction,
}

impl<'a> Iter<'a> {
    fn empty(list: &'a List) -> Iter<'a> {
        let pos = Pos {
            node: 0,
            offset: 0,
            in_node: 0,
        };
        Iter {
            list,
            next: pos,
            last: pos,
            remaining: 0,
            direction: Direction::Forward,
        }
    }
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let pos = self.next;
        let list: &'a List = self.list;
        let n = &list.nodes[pos.node];
        let (_, _, after) = n.entry_at(pos.offset);
        self.last = pos;
        if self.remaining > 0 {
            self.next = match self.direction {
                Direction::Forward if after < n.len_bytes() => Pos {
                    node: pos.node,
                    offset: after,
                    in_node: pos.in_node + 1,
                },
                Direction::Forward => Pos {
                    node: pos.node + 1,
                    offset: 0,
                    in_node: 0,
                },
                Direction::Backward => match n.prev_offset(pos.offset) {
                    Some(offset) => Pos {
                        node: pos.node,
                        offset,
                        in_node: pos.in_node - 1,
                    },
                    None => {
                        let prev = &list.nodes[pos.node - 1];
                        Pos {
                            node: pos.node - 1,
                            offset: prev.last_offset().unwrap_or(0),
                            in_node: prev.count() - 1,
                        }
                    }
                },
            };
        }
        Some(n.data_at(pos.offset))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Iter<'_> {}

#[cfg(test)]
mod tests;
