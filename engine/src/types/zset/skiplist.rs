//! The ordered half of a big sorted set: William Pugh's skiplist as Redis
//! extends it in `t_zset.c`.
//!
//! - Elements are ordered by score, then by member bytes, so repeated scores
//!   are allowed and the order is total (a sorted set never holds a member
//!   twice; the caller checks that in its dict first).
//! - Every forward link carries a *span*, the number of level-0 steps it
//!   jumps over. Summing spans along a search path gives an element's rank,
//!   and walking spans finds the element at a rank, both in O(log N).
//! - Level 0 is doubly linked (`backward`), for reverse walks (ZREVRANGE).
//!
//! What differs from Redis, and why:
//!
//! - Nodes live in an arena (`Vec<Node>`) addressed by `u32` indices instead
//!   of individually allocated pointers; slot 0 is the header. Freed slots go
//!   on a free list and are reused, so indices held during a range delete
//!   stay valid; once more than half the arena is free it is compacted in
//!   one O(N) pass, which an equal number of deletes has already paid for.
//! - Node levels come from a per-list SplitMix64 stream seeded by the
//!   caller, never from the OS, so the shape of the list (and therefore the
//!   work every operation reports) is a function of the seed.

use std::cmp::Ordering;
use std::mem;

/// Most levels a node can have (Redis's `ZSKIPLIST_MAXLEVEL`): enough for
/// 4^32 elements.
pub const LEVEL_MAX: usize = 32;

/// A node gets one more level with probability 1/4 (Redis's `ZSKIPLIST_P`),
/// drawn as a 16-bit value below this threshold.
const LEVEL_UP_THRESHOLD: u64 = 0x4000;

/// Compaction runs only past this many free slots, so that small lists never
/// pay for it.
const COMPACT_FREE_SLOTS_MIN: usize = 64;

/// The end of a chain, and "no node".
pub const NIL: u32 = u32::MAX;

/// The header node's slot.
const HEAD: u32 = 0;

/// A node's index in the arena, valid until the next insert or delete.
pub type NodeId = u32;

/// Redis's element order: by score, then by member bytes. Scores are never
/// NaN (every writer rejects NaN), so `partial_cmp` always answers; -0 and
/// 0 compare equal, as with C's `<`.
pub fn cmp_elements(a_score: f64, a_member: &[u8], b_score: f64, b_member: &[u8]) -> Ordering {
    debug_assert!(!a_score.is_nan() && !b_score.is_nan());
    match a_score.partial_cmp(&b_score) {
        Some(Ordering::Equal) | None => a_member.cmp(b_member),
        Some(order) => order,
    }
}

/// A score or lex interval, as ZRANGEBYSCORE and ZRANGEBYLEX take them.
/// Both predicates are monotone along the element order (for lex ranges,
/// only when all scores are equal, which is what Redis documents).
pub trait RangeSpec {
    /// True when the interval can hold nothing (`min > max`, or equal with
    /// an exclusive end).
    fn is_empty(&self) -> bool;
    /// The element is at or past the interval's start.
    fn gte_min(&self, score: f64, member: &[u8]) -> bool;
    /// The element is at or before the interval's end.
    fn lte_max(&self, score: f64, member: &[u8]) -> bool;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Level {
    forward: u32,
    /// Level-0 steps from this node to `forward` (to the end of the list
    /// when `forward` is NIL, on the header only).
    span: usize,
}

const LEVEL_NONE: Level = Level {
    forward: NIL,
    span: 0,
};

#[derive(Clone, Debug)]
struct Node {
    score: f64,
    member: Box<[u8]>,
    backward: u32,
    levels: Box<[Level]>,
}

/// The skiplist. See the module docs.
#[derive(Clone, Debug)]
pub struct SkipList {
    nodes: Vec<Node>,
    free: Vec<u32>,
    /// Levels in use (at least 1).
    level: usize,
    len: usize,
    tail: u32,
    rng_state: u64,
    /// Levels allocated over all live nodes, and their member bytes, for
    /// [`SkipList::size_bytes`].
    level_slots: usize,
    member_bytes: usize,
}

impl SkipList {
    /// An empty list whose node levels are drawn from a stream keyed by
    /// `seed`.
    pub fn new(seed: u64) -> SkipList {
        let header = Node {
            score: 0.0,
            member: Box::default(),
            backward: NIL,
            levels: vec![LEVEL_NONE; LEVEL_MAX].into_boxed_slice(),
        };
        SkipList {
            nodes: vec![header],
            free: Vec::new(),
            level: 1,
            len: 0,
            tail: NIL,
            rng_state: seed,
            level_slots: 0,
            member_bytes: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Heap bytes held: the arena (header included), the level arrays, the
    /// member bytes and the free list.
    pub fn size_bytes(&self) -> usize {
        self.nodes.capacity() * mem::size_of::<Node>()
            + (LEVEL_MAX + self.level_slots) * mem::size_of::<Level>()
            + self.member_bytes
            + self.free.capacity() * mem::size_of::<u32>()
    }

    /// The member and score of a node.
    pub fn get(&self, id: NodeId) -> (&[u8], f64) {
        let node = &self.nodes[id as usize];
        (&node.member, node.score)
    }

    /// The first node (lowest), or NIL.
    pub fn first(&self) -> NodeId {
        self.nodes[HEAD as usize].levels[0].forward
    }

    /// The last node (highest), or NIL.
    pub fn last(&self) -> NodeId {
        self.tail
    }

    /// The node after `id`, or NIL.
    pub fn next(&self, id: NodeId) -> NodeId {
        self.nodes[id as usize].levels[0].forward
    }

    /// The node before `id`, or NIL.
    pub fn prev(&self, id: NodeId) -> NodeId {
        self.nodes[id as usize].backward
    }

    /// SplitMix64: small, fast, and good enough for coin flips.
    fn next_random(&mut self) -> u64 {
        self.rng_state = self.rng_state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng_state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A level in 1..=LEVEL_MAX, each further level with probability 1/4.
    fn random_level(&mut self) -> usize {
        let mut level = 1;
        while level < LEVEL_MAX && (self.next_random() & 0xFFFF) < LEVEL_UP_THRESHOLD {
            level += 1;
        }
        level
    }

    fn forward(&self, id: u32, level: usize) -> u32 {
        self.nodes[id as usize].levels[level].forward
    }

    fn span(&self, id: u32, level: usize) -> usize {
        self.nodes[id as usize].levels[level].span
    }

    /// Whether node `id` orders strictly before (score, member).
    fn is_before(&self, id: u32, score: f64, member: &[u8]) -> bool {
        let node = &self.nodes[id as usize];
        cmp_elements(node.score, &node.member, score, member) == Ordering::Less
    }

    fn alloc(&mut self, node: Node) -> u32 {
        self.level_slots += node.levels.len();
        self.member_bytes += node.member.len();
        match self.free.pop() {
            Some(slot) => {
                self.nodes[slot as usize] = node;
                slot
            }
            None => {
                assert!(self.nodes.len() < NIL as usize, "skiplist: arena full");
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        }
    }

    /// Frees an unlinked node's slot, returning its member and score.
    fn release(&mut self, id: u32) -> (Box<[u8]>, f64) {
        debug_assert!(id != HEAD);
        let node = &mut self.nodes[id as usize];
        let member = mem::take(&mut node.member);
        let levels = mem::take(&mut node.levels);
        let score = node.score;
        self.level_slots -= levels.len();
        self.member_bytes -= member.len();
        self.free.push(id);
        (member, score)
    }

    /// The predecessor of (score, member) at every level in use.
    fn seek(&self, score: f64, member: &[u8]) -> [u32; LEVEL_MAX] {
        let mut update = [HEAD; LEVEL_MAX];
        let mut x = HEAD;
        for i in (0..self.level).rev() {
            loop {
                let f = self.forward(x, i);
                if f != NIL && self.is_before(f, score, member) {
                    x = f;
                } else {
                    break;
                }
            }
            update[i] = x;
        }
        update
    }

    /// Inserts an element that is not in the list (the caller's dict says
    /// so). Returns its node.
    pub fn insert(&mut self, score: f64, member: Box<[u8]>) -> NodeId {
        debug_assert!(!score.is_nan());
        let mut update = [HEAD; LEVEL_MAX];
        let mut rank = [0usize; LEVEL_MAX];
        let mut x = HEAD;
        for i in (0..self.level).rev() {
            rank[i] = if i == self.level - 1 { 0 } else { rank[i + 1] };
            loop {
                let f = self.forward(x, i);
                if f != NIL && self.is_before(f, score, &member) {
                    rank[i] += self.span(x, i);
                    x = f;
                } else {
                    break;
                }
            }
            update[i] = x;
        }
        let level = self.random_level();
        if level > self.level {
            for i in self.level..level {
                rank[i] = 0;
                update[i] = HEAD;
                self.nodes[HEAD as usize].levels[i].span = self.len;
            }
            self.level = level;
        }
        let x = self.alloc(Node {
            score,
            member,
            backward: NIL,
            levels: vec![LEVEL_NONE; level].into_boxed_slice(),
        });
        for i in 0..level {
            let u = update[i] as usize;
            let before = self.nodes[u].levels[i];
            let crossed = rank[0] - rank[i];
            self.nodes[x as usize].levels[i] = Level {
                forward: before.forward,
                span: before.span - crossed,
            };
            self.nodes[u].levels[i] = Level {
                forward: x,
                span: crossed + 1,
            };
        }
        for (i, &u) in update.iter().enumerate().take(self.level).skip(level) {
            self.nodes[u as usize].levels[i].span += 1;
        }
        self.nodes[x as usize].backward = if update[0] == HEAD { NIL } else { update[0] };
        let next = self.forward(x, 0);
        if next != NIL {
            self.nodes[next as usize].backward = x;
        } else {
            self.tail = x;
        }
        self.len += 1;
        x
    }

    /// Unlinks node `x` whose predecessors are `update` (Redis's
    /// `zslDeleteNode`); the slot is not freed.
    fn unlink(&mut self, x: u32, update: &[u32; LEVEL_MAX]) {
        for (i, &u) in update.iter().enumerate().take(self.level) {
            // Only levels that point at x read x's level i, which x has.
            let x_level = self.nodes[x as usize].levels.get(i).copied();
            let level = &mut self.nodes[u as usize].levels[i];
            match x_level {
                Some(x_level) if level.forward == x => {
                    level.span += x_level.span;
                    level.span -= 1;
                    level.forward = x_level.forward;
                }
                _ => level.span -= 1,
            }
        }
        let next = self.forward(x, 0);
        let back = self.nodes[x as usize].backward;
        if next != NIL {
            self.nodes[next as usize].backward = back;
        } else {
            self.tail = back;
        }
        while self.level > 1 && self.forward(HEAD, self.level - 1) == NIL {
            self.level -= 1;
        }
        self.len -= 1;
    }

    /// Removes (score, member); returns the member when it was there.
    pub fn delete(&mut self, score: f64, member: &[u8]) -> Option<Box<[u8]>> {
        let update = self.seek(score, member);
        let x = self.forward(update[0], 0);
        if x == NIL {
            return None;
        }
        let node = &self.nodes[x as usize];
        if node.score != score || *node.member != *member {
            return None;
        }
        self.unlink(x, &update);
        let (member, _) = self.release(x);
        self.compact_if_sparse();
        Some(member)
    }

    /// Moves an element from `current` to `new_score` (Redis's
    /// `zslUpdateScore`): in place when the order is unchanged, otherwise
    /// by unlinking and reinserting. The element must be present.
    pub fn update_score(&mut self, current: f64, member: &[u8], new_score: f64) {
        let update = self.seek(current, member);
        let x = self.forward(update[0], 0);
        debug_assert!(x != NIL && self.get(x) == (member, current));
        if x == NIL {
            return;
        }
        let back = self.nodes[x as usize].backward;
        let next = self.forward(x, 0);
        if (back == NIL || self.nodes[back as usize].score < new_score)
            && (next == NIL || self.nodes[next as usize].score > new_score)
        {
            self.nodes[x as usize].score = new_score;
            return;
        }
        self.unlink(x, &update);
        let (member, _) = self.release(x);
        self.insert(new_score, member);
    }

    /// The 1-based rank of (score, member), 0 when absent.
    pub fn rank(&self, score: f64, member: &[u8]) -> usize {
        let mut x = HEAD;
        let mut rank = 0;
        for i in (0..self.level).rev() {
            loop {
                let f = self.forward(x, i);
                if f == NIL {
                    break;
                }
                let node = &self.nodes[f as usize];
                if cmp_elements(node.score, &node.member, score, member) == Ordering::Greater {
                    break;
                }
                rank += self.span(x, i);
                x = f;
            }
            if x != HEAD && self.get(x) == (member, score) {
                return rank;
            }
        }
        0
    }

    /// The node at 1-based `rank`, or NIL when out of range.
    pub fn by_rank(&self, rank: usize) -> NodeId {
        if rank == 0 || rank > self.len {
            return NIL;
        }
        let mut x = HEAD;
        let mut traversed = 0;
        for i in (0..self.level).rev() {
            loop {
                let f = self.forward(x, i);
                if f != NIL && traversed + self.span(x, i) <= rank {
                    traversed += self.span(x, i);
                    x = f;
                } else {
                    break;
                }
            }
            if traversed == rank {
                return x;
            }
        }
        NIL
    }

    fn gte_min<R: RangeSpec>(&self, id: u32, range: &R) -> bool {
        let node = &self.nodes[id as usize];
        range.gte_min(node.score, &node.member)
    }

    fn lte_max<R: RangeSpec>(&self, id: u32, range: &R) -> bool {
        let node = &self.nodes[id as usize];
        range.lte_max(node.score, &node.member)
    }

    /// Whether some part of the list may be in `range` (Redis's
    /// `zslIsInRange`).
    fn overlaps<R: RangeSpec>(&self, range: &R) -> bool {
        if range.is_empty() || self.tail == NIL || !self.gte_min(self.tail, range) {
            return false;
        }
        self.lte_max(self.first(), range)
    }

    /// The first node in `range` and its 1-based rank.
    pub fn first_in_range<R: RangeSpec>(&self, range: &R) -> Option<(NodeId, usize)> {
        if !self.overlaps(range) {
            return None;
        }
        let mut x = HEAD;
        let mut rank = 0;
        for i in (0..self.level).rev() {
            loop {
                let f = self.forward(x, i);
                if f != NIL && !self.gte_min(f, range) {
                    rank += self.span(x, i);
                    x = f;
                } else {
                    break;
                }
            }
        }
        let x = self.forward(x, 0);
        if x == NIL || !self.lte_max(x, range) {
            return None;
        }
        Some((x, rank + 1))
    }

    /// The last node in `range` and its 1-based rank.
    pub fn last_in_range<R: RangeSpec>(&self, range: &R) -> Option<(NodeId, usize)> {
        if !self.overlaps(range) {
            return None;
        }
        let mut x = HEAD;
        let mut rank = 0;
        for i in (0..self.level).rev() {
            loop {
                let f = self.forward(x, i);
                if f != NIL && self.lte_max(f, range) {
                    rank += self.span(x, i);
                    x = f;
                } else {
                    break;
                }
            }
        }
        if x == HEAD || !self.gte_min(x, range) {
            return None;
        }
        Some((x, rank))
    }

    /// Removes the elements of 1-based ranks `start..=end` (Redis's
    /// `zslDeleteRangeByRank`), handing each to `removed` in order.
    pub fn delete_rank_range(
        &mut self,
        start: usize,
        end: usize,
        mut removed: impl FnMut(Box<[u8]>, f64),
    ) {
        debug_assert!(start >= 1 && start <= end && end <= self.len);
        let mut update = [HEAD; LEVEL_MAX];
        let mut x = HEAD;
        let mut traversed = 0;
        for i in (0..self.level).rev() {
            loop {
                let f = self.forward(x, i);
                if f != NIL && traversed + self.span(x, i) < start {
                    traversed += self.span(x, i);
                    x = f;
                } else {
                    break;
                }
            }
            update[i] = x;
        }
        traversed += 1;
        let mut x = self.forward(x, 0);
        while x != NIL && traversed <= end {
            // Freed slots are not reused before the next insert and the
            // list is not compacted inside this loop, so `next` and
            // `update` stay valid.
            let next = self.forward(x, 0);
            self.unlink(x, &update);
            let (member, score) = self.release(x);
            removed(member, score);
            traversed += 1;
            x = next;
        }
        self.compact_if_sparse();
    }

    /// Rebuilds the arena in list order once most of it is free slots.
    fn compact_if_sparse(&mut self) {
        if self.free.len() < COMPACT_FREE_SLOTS_MIN || self.free.len() * 2 <= self.nodes.len() {
            return;
        }
        let mut new_index = vec![NIL; self.nodes.len()];
        new_index[HEAD as usize] = HEAD;
        let mut order = Vec::with_capacity(self.len + 1);
        order.push(HEAD);
        let mut x = self.first();
        while x != NIL {
            new_index[x as usize] = order.len() as u32;
            order.push(x);
            x = self.forward(x, 0);
        }
        debug_assert_eq!(order.len(), self.len + 1);
        let remap = |i: u32| if i == NIL { NIL } else { new_index[i as usize] };
        let mut old = mem::take(&mut self.nodes);
        let mut nodes = Vec::with_capacity(order.len());
        for &i in &order {
            let mut node = mem::replace(
                &mut old[i as usize],
                Node {
                    score: 0.0,
                    member: Box::default(),
                    backward: NIL,
                    levels: Box::default(),
                },
            );
            node.backward = remap(node.backward);
            for level in node.levels.iter_mut() {
                level.forward = remap(level.forward);
            }
            nodes.push(node);
        }
        self.nodes = nodes;
        self.tail = remap(self.tail);
        self.free = Vec::new();
    }

    /// Checks every structural invariant (for tests): order, spans, backward
    /// links, tail, length and the byte counters.
    #[cfg(test)]
    pub fn check(&self) {
        let mut ids = Vec::new();
        let mut x = self.first();
        let mut back = NIL;
        while x != NIL {
            assert_eq!(self.nodes[x as usize].backward, back);
            if back != NIL {
                let (pm, ps) = self.get(back);
                let (m, s) = self.get(x);
                assert_eq!(cmp_elements(ps, pm, s, m), Ordering::Less);
            }
            ids.push(x);
            back = x;
            x = self.forward(x, 0);
        }
        assert_eq!(self.tail, back);
        assert_eq!(ids.len(), self.len);
        let mut rank_of = vec![usize::MAX; self.nodes.len()];
        rank_of[HEAD as usize] = 0;
        for (r, &id) in ids.iter().enumerate() {
            rank_of[id as usize] = r + 1;
        }
        let mut slots = 0;
        let mut bytes = 0;
        for (i, &id) in [HEAD].iter().chain(ids.iter()).enumerate() {
            let node = &self.nodes[id as usize];
            if i > 0 {
                slots += node.levels.len();
                bytes += node.member.len();
            }
            for (lvl, level) in node.levels.iter().enumerate() {
                if lvl >= self.level {
                    break;
                }
                let to = if level.forward == NIL {
                    self.len
                } else {
                    rank_of[level.forward as usize]
                };
                if level.forward != NIL || id == HEAD {
                    assert_eq!(level.span, to - rank_of[id as usize], "span at level {lvl}");
                }
            }
        }
        assert_eq!(slots, self.level_slots);
        assert_eq!(bytes, self.member_bytes);
        assert!(self.level == 1 || self.forward(HEAD, self.level - 1) != NIL);
    }
}
