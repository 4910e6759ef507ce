//! Sorted sets: members with scores, ordered by score then member bytes.
//!
//! Two encodings, as in Redis 7.0 (`OBJECT ENCODING` names them):
//!
//! - `listpack`: the elements packed in order into one byte buffer
//!   ([`listpack`]) while the set has at most `zset-max-listpack-entries`
//!   members of at most `zset-max-listpack-value` bytes. Lookups, ranks
//!   and ranges walk it, which is cheap at that size and keeps small sets
//!   as compact as Redis's; callers charge each walk as work
//!   ([`ZSet::walk_units`]).
//! - `skiplist`: a [`Dict`] from member to score (O(1) ZSCORE, ZSCAN's
//!   cursor) plus a [`SkipList`] (O(log N) ranks and ranges). A set converts
//!   once, when an add crosses a limit, and never back (except the results
//!   that the store commands build, as Redis does).
//!
//! Everything the commands need is expressed in *ranks* (0-based positions
//! in the order), so the command code never looks at the encoding.

use std::cmp::Ordering;

use rand::{Rng, RngCore};

use crate::dict::Dict;
use crate::types::Limits;

/// The packed buffer of the `listpack` encoding.
pub mod listpack;
/// The skiplist of the `skiplist` encoding.
pub mod skiplist;

use listpack::Listpack;
pub use skiplist::{cmp_elements, RangeSpec};
use skiplist::{NodeId, SkipList, NIL};

#[derive(Clone, Debug)]
struct Big {
    dict: Dict<f64>,
    list: SkipList,
}

#[derive(Clone, Debug)]
enum Encoding {
    Listpack(Listpack),
    Skiplist(Box<Big>),
}

/// A sorted set. See the module docs.
#[derive(Clone, Debug)]
pub struct ZSet {
    encoding: Encoding,
    /// Keys the dict's hash and the skiplist's levels when converting.
    seed: u64,
}

impl Default for ZSet {
    fn default() -> Self {
        ZSet::new(0, false)
    }
}

impl PartialEq for ZSet {
    /// Same elements in the same order, whatever the encodings.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self
                .iter_ranks(0, self.len(), false)
                .zip(other.iter_ranks(0, other.len(), false))
                .all(|((m1, s1), (m2, s2))| m1 == m2 && s1 == s2)
    }
}

/// ZADD's options, as `zsetAdd` takes them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AddFlags {
    pub nx: bool,
    pub xx: bool,
    pub gt: bool,
    pub lt: bool,
    pub incr: bool,
}

/// What one add did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AddResult {
    pub added: bool,
    pub updated: bool,
    /// Skipped because of NX, XX, GT or LT.
    pub skipped: bool,
    /// The member's score afterwards (when not skipped).
    pub score: f64,
}

/// An increment produced NaN (`+inf` plus `-inf`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotANumber;

/// A score interval; `(` in the command syntax makes an end exclusive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreRange {
    pub min: f64,
    pub max: f64,
    pub min_exclusive: bool,
    pub max_exclusive: bool,
}

impl RangeSpec for ScoreRange {
    fn is_empty(&self) -> bool {
        self.min > self.max || (self.min == self.max && (self.min_exclusive || self.max_exclusive))
    }
    fn gte_min(&self, score: f64, _member: &[u8]) -> bool {
        if self.min_exclusive {
            score > self.min
        } else {
            score >= self.min
        }
    }
    fn lte_max(&self, score: f64, _member: &[u8]) -> bool {
        if self.max_exclusive {
            score < self.max
        } else {
            score <= self.max
        }
    }
}

/// One end of a lex interval: `-`, `+`, `[member` or `(member`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LexBound {
    /// `-`: before every member.
    Min,
    /// `+`: after every member.
    Max,
    Inclusive(Vec<u8>),
    Exclusive(Vec<u8>),
}

impl LexBound {
    fn is_exclusive(&self) -> bool {
        !matches!(self, LexBound::Inclusive(_))
    }

    /// Redis's `sdscmplex` of two bounds.
    fn cmp_bound(&self, other: &LexBound) -> Ordering {
        use LexBound::*;
        match (self, other) {
            (Min, Min) | (Max, Max) => Ordering::Equal,
            (Min, _) | (_, Max) => Ordering::Less,
            (Max, _) | (_, Min) => Ordering::Greater,
            (Inclusive(a) | Exclusive(a), Inclusive(b) | Exclusive(b)) => a.cmp(b),
        }
    }
}

/// A lex interval (ZRANGEBYLEX), meaningful when all scores are equal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexRange {
    pub min: LexBound,
    pub max: LexBound,
}

impl RangeSpec for LexRange {
    fn is_empty(&self) -> bool {
        match self.min.cmp_bound(&self.max) {
            Ordering::Greater => true,
            Ordering::Equal => self.min.is_exclusive() || self.max.is_exclusive(),
            Ordering::Less => false,
        }
    }
    fn gte_min(&self, _score: f64, member: &[u8]) -> bool {
        match &self.min {
            LexBound::Min => true,
            LexBound::Max => false,
            LexBound::Inclusive(b) => member >= b.as_slice(),
            LexBound::Exclusive(b) => member > b.as_slice(),
        }
    }
    fn lte_max(&self, _score: f64, member: &[u8]) -> bool {
        match &self.max {
            LexBound::Min => false,
            LexBound::Max => true,
            LexBound::Inclusive(b) => member <= b.as_slice(),
            LexBound::Exclusive(b) => member < b.as_slice(),
        }
    }
}

/// A listpack stores integral scores as integers (Redis's `double2ll`), so
/// -0 reads back as 0. Every score entering the listpack goes through here.
fn listpack_score(score: f64) -> f64 {
    if score == 0.0 {
        0.0
    } else {
        score
    }
}

impl ZSet {
    /// An empty set; `skiplist` picks the big encoding from the start (ZADD
    /// does when the limits are 0 or its first member is too long). `seed`
    /// keys the dict and the skiplist levels.
    pub fn new(seed: u64, skiplist: bool) -> ZSet {
        let mut z = ZSet {
            encoding: Encoding::Listpack(Listpack::default()),
            seed,
        };
        if skiplist {
            z.convert_to_skiplist();
        }
        z
    }

    /// A set of `sorted` (ascending by score then member, members unique),
    /// in the encoding Redis's `zsetConvertToListpackIfNeeded` picks for a
    /// store command's result.
    pub fn from_sorted(sorted: Vec<(Box<[u8]>, f64)>, limits: &Limits, seed: u64) -> ZSet {
        debug_assert!(sorted
            .windows(2)
            .all(|w| cmp_elements(w[0].1, &w[0].0, w[1].1, &w[1].0) == Ordering::Less));
        let member_len_max = sorted.iter().map(|(m, _)| m.len()).max().unwrap_or(0);
        let small = sorted.len() <= limits.zset_max_listpack_entries
            && member_len_max <= limits.zset_max_listpack_value_bytes;
        let mut z = ZSet::new(seed, !small);
        match &mut z.encoding {
            Encoding::Listpack(lp) => {
                for (member, score) in &sorted {
                    lp.push(member, listpack_score(*score));
                }
            }
            Encoding::Skiplist(big) => {
                // Inserting from the highest down makes every insert stop at
                // the header, as Redis's zsetDup does.
                for (member, score) in sorted.into_iter().rev() {
                    big.dict.insert(member.clone(), score);
                    big.list.insert(score, member);
                }
            }
        }
        z
    }

    pub fn len(&self) -> usize {
        match &self.encoding {
            Encoding::Listpack(lp) => lp.len(),
            Encoding::Skiplist(big) => big.list.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn encoding_name(&self) -> &'static str {
        match &self.encoding {
            Encoding::Listpack(_) => "listpack",
            Encoding::Skiplist(_) => "skiplist",
        }
    }

    pub fn free_cost_units(&self) -> u64 {
        self.len() as u64
    }

    /// The work units of one walk over a listpack (a lookup, a rank, a
    /// range's bounds, an insert's position, a seek to a rank): what a
    /// command charges per walk it asks for. Zero for the skiplist, whose
    /// O(log N) searches the commands' own charges cover.
    pub fn walk_units(&self) -> u64 {
        match &self.encoding {
            Encoding::Listpack(lp) => lp.walk_units(),
            Encoding::Skiplist(_) => 0,
        }
    }

    /// O(1) estimate of the heap bytes held: the listpack's buffer; the
    /// dict (which holds a copy of every member) plus the skiplist arena
    /// otherwise.
    pub fn size_bytes(&self) -> usize {
        match &self.encoding {
            Encoding::Listpack(lp) => lp.capacity_bytes(),
            Encoding::Skiplist(big) => big.dict.memory_estimate_bytes() + big.list.size_bytes(),
        }
    }

    /// The member's score.
    pub fn score(&self, member: &[u8]) -> Option<f64> {
        match &self.encoding {
            Encoding::Listpack(lp) => lp.find(member).map(|(_, e)| e.score),
            Encoding::Skiplist(big) => big.dict.get(member).copied(),
        }
    }

    /// The member's 0-based rank from the lowest.
    pub fn rank(&self, member: &[u8]) -> Option<usize> {
        match &self.encoding {
            Encoding::Listpack(lp) => lp.find(member).map(|(rank, _)| rank),
            Encoding::Skiplist(big) => {
                let score = *big.dict.get(member)?;
                let rank = big.list.rank(score, member);
                debug_assert!(rank >= 1, "a member in the dict is in the list");
                rank.checked_sub(1)
            }
        }
    }

    /// A uniformly random element (the set must not be empty): one walk
    /// over a listpack. See [`ZSet::sampler`] for many.
    pub fn random_element(&self, rng: &mut dyn RngCore) -> (&[u8], f64) {
        self.sampler().random_element(rng)
    }

    /// Random and by-rank access for many draws (ZRANDMEMBER with a
    /// count): a listpack is walked once into an index (O(N), one walk's
    /// units), then every draw is O(1) instead of a walk each.
    pub fn sampler(&self) -> Sampler<'_> {
        match &self.encoding {
            Encoding::Listpack(lp) => Sampler(Sample::Listpack(
                lp.iter().map(|e| (e.member, e.score)).collect(),
            )),
            Encoding::Skiplist(big) => Sampler(Sample::Skiplist(big)),
        }
    }

    /// ZADD / ZINCRBY on one member (Redis's `zsetAdd`), converting to the
    /// skiplist encoding first when the new member would cross `limits`.
    pub fn add(
        &mut self,
        member: &[u8],
        score: f64,
        flags: AddFlags,
        limits: &Limits,
    ) -> Result<AddResult, NotANumber> {
        if score.is_nan() {
            return Err(NotANumber);
        }
        let skipped = AddResult {
            added: false,
            updated: false,
            skipped: true,
            score,
        };
        match self.score(member) {
            Some(current) => {
                if flags.nx {
                    return Ok(skipped);
                }
                let mut new_score = score;
                if flags.incr {
                    new_score += current;
                    if new_score.is_nan() {
                        return Err(NotANumber);
                    }
                }
                if (flags.lt && new_score >= current) || (flags.gt && new_score <= current) {
                    return Ok(skipped);
                }
                let updated = new_score != current;
                let stored = match updated {
                    true => self.move_member(member, current, new_score),
                    false => current,
                };
                Ok(AddResult {
                    added: false,
                    updated,
                    skipped: false,
                    score: stored,
                })
            }
            None if flags.xx => Ok(skipped),
            None => {
                if let Encoding::Listpack(lp) = &self.encoding {
                    if lp.len() + 1 > limits.zset_max_listpack_entries
                        || member.len() > limits.zset_max_listpack_value_bytes
                    {
                        self.convert_to_skiplist();
                    }
                }
                let stored = self.insert_new(member, score);
                Ok(AddResult {
                    added: true,
                    updated: false,
                    skipped: false,
                    score: stored,
                })
            }
        }
    }

    /// Inserts a member that is not in the set; returns the score as
    /// stored (a listpack stores -0 as 0).
    fn insert_new(&mut self, member: &[u8], score: f64) -> f64 {
        match &mut self.encoding {
            Encoding::Listpack(lp) => {
                let score = listpack_score(score);
                lp.insert(member, score);
                score
            }
            Encoding::Skiplist(big) => {
                let member: Box<[u8]> = member.into();
                let previous = big.dict.insert(member.clone(), score);
                debug_assert!(previous.is_none());
                big.list.insert(score, member);
                score
            }
        }
    }

    /// Changes a present member's score from `current` to `new_score`;
    /// returns the score as stored.
    fn move_member(&mut self, member: &[u8], current: f64, new_score: f64) -> f64 {
        match &mut self.encoding {
            Encoding::Listpack(lp) => {
                let Some((_, e)) = lp.find(member) else {
                    debug_assert!(false, "move_member of a member not held");
                    return current;
                };
                let (start, end) = (e.start, e.end);
                lp.remove_bytes(start, end, 1);
                let score = listpack_score(new_score);
                lp.insert(member, score);
                score
            }
            Encoding::Skiplist(big) => {
                big.list.update_score(current, member, new_score);
                if let Some(s) = big.dict.get_mut(member) {
                    *s = new_score;
                }
                new_score
            }
        }
    }

    /// Removes a member; returns whether it was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        match &mut self.encoding {
            Encoding::Listpack(lp) => {
                let Some((_, e)) = lp.find(member) else {
                    return false;
                };
                let (start, end) = (e.start, e.end);
                lp.remove_bytes(start, end, 1);
                true
            }
            Encoding::Skiplist(big) => match big.dict.remove(member) {
                None => false,
                Some((_, score)) => {
                    let removed = big.list.delete(score, member);
                    debug_assert!(removed.is_some());
                    true
                }
            },
        }
    }

    /// Moves every element into a dict and a skiplist (also used by SORT,
    /// which converts a sorted set it sorts, as Redis's `zsetConvert` does).
    pub fn convert_to_skiplist(&mut self) {
        let Encoding::Listpack(lp) = &self.encoding else {
            return;
        };
        let mut big = Box::new(Big {
            dict: Dict::new(self.seed),
            list: SkipList::new(self.seed.rotate_left(32) ^ 0x5A5A_5A5A),
        });
        // From the highest down, so that every skiplist insert stops at the
        // header (the order the levels are drawn in is part of the seed's
        // outcome, so it stays what it was).
        for offset in lp.offsets(0, lp.len()).into_iter().rev() {
            let e = lp.element_at(offset as usize);
            let member: Box<[u8]> = e.member.into();
            big.dict.insert(member.clone(), e.score);
            big.list.insert(e.score, member);
        }
        self.encoding = Encoding::Skiplist(big);
    }

    /// The ranks `[lo, hi)` that Redis visits for `range`: from the first
    /// element in range onwards while in range, or (`reverse`) from the last
    /// one backwards while in range. `None` when nothing is in range.
    ///
    /// A listpack is scanned exactly as Redis scans it, so even a lex range
    /// over mixed scores (where the predicates are not monotone) gives
    /// Redis's answer; the skiplist uses two O(log N) descents.
    pub fn range_ranks<R: RangeSpec>(&self, range: &R, reverse: bool) -> Option<(usize, usize)> {
        match &self.encoding {
            Encoding::Listpack(lp) => listpack_range_ranks(lp, range, reverse),
            Encoding::Skiplist(big) => {
                let (_, first) = big.list.first_in_range(range)?;
                let (_, last) = big.list.last_in_range(range)?;
                (first <= last).then_some((first - 1, last))
            }
        }
    }

    /// The elements of ranks `lo..hi`, ascending, or descending from `hi-1`
    /// when `reverse`.
    pub fn iter_ranks(&self, lo: usize, hi: usize, reverse: bool) -> ZIter<'_> {
        let hi = hi.min(self.len());
        let lo = lo.min(hi);
        let remaining = hi - lo;
        let cursor = match &self.encoding {
            Encoding::Listpack(lp) if reverse => Cursor::ListpackBack(lp, lp.offsets(lo, hi)),
            Encoding::Listpack(lp) => Cursor::Listpack(lp.iter_at(lo)),
            Encoding::Skiplist(big) => {
                let start = if remaining == 0 {
                    NIL
                } else if reverse {
                    if hi == big.list.len() {
                        big.list.last()
                    } else {
                        big.list.by_rank(hi)
                    }
                } else if lo == 0 {
                    big.list.first()
                } else {
                    big.list.by_rank(lo + 1)
                };
                Cursor::Skiplist(&big.list, start)
            }
        };
        ZIter {
            cursor,
            remaining,
            reverse,
        }
    }

    /// Removes the elements of ranks `lo..hi`, handing each to `removed` in
    /// ascending order.
    pub fn remove_ranks(&mut self, lo: usize, hi: usize, mut removed: impl FnMut(Box<[u8]>, f64)) {
        let hi = hi.min(self.len());
        if lo >= hi {
            return;
        }
        match &mut self.encoding {
            Encoding::Listpack(lp) => {
                let (mut start, mut end) = (None, 0);
                for e in lp.iter_at(lo).take(hi - lo) {
                    start.get_or_insert(e.start);
                    end = e.end;
                    removed(e.member.into(), e.score);
                }
                lp.remove_bytes(start.unwrap_or(end), end, hi - lo);
            }
            Encoding::Skiplist(big) => {
                let dict = &mut big.dict;
                big.list.delete_rank_range(lo + 1, hi, |member, score| {
                    dict.remove(&member);
                    removed(member, score);
                });
            }
        }
    }

    /// The dict of the `skiplist` encoding (ZSCAN's cursor runs over it);
    /// None for a listpack, which ZSCAN returns whole.
    pub fn dict(&self) -> Option<&Dict<f64>> {
        match &self.encoding {
            Encoding::Listpack(_) => None,
            Encoding::Skiplist(big) => Some(&big.dict),
        }
    }

    /// Checks the encoding's invariants (for tests).
    #[cfg(test)]
    pub fn check(&self) {
        match &self.encoding {
            Encoding::Listpack(lp) => lp.check(),
            Encoding::Skiplist(big) => {
                big.list.check();
                assert_eq!(big.dict.len(), big.list.len());
                for (m, s) in self.iter_ranks(0, self.len(), false) {
                    assert_eq!(big.dict.get(m), Some(&s));
                }
            }
        }
    }
}

/// The ranks [`ZSet::range_ranks`] answers for a listpack, in one forward
/// walk: Redis checks that the last element is at or past the start and
/// the first at or before the end, then forwards scans from the first
/// element at or past the start while at or before the end, or (reverse)
/// backwards from the last element at or before the end while at or past
/// the start. Without back links the reverse run is tracked going forwards:
/// it starts after the last element before it that fails the start.
fn listpack_range_ranks<R: RangeSpec>(
    lp: &Listpack,
    range: &R,
    reverse: bool,
) -> Option<(usize, usize)> {
    if range.is_empty() {
        return None;
    }
    let (mut first_lte, mut last_gte) = (false, false);
    // Forward: the block found and whether it may still grow.
    let (mut forward, mut forward_open) = (None, false);
    // Reverse: where the current run of elements at or past the start
    // began, and the block ending at the last element at or before the end.
    let (mut gte_run_start, mut backward) = (0, None);
    for (rank, e) in lp.iter().enumerate() {
        let gte = range.gte_min(e.score, e.member);
        let lte = range.lte_max(e.score, e.member);
        if rank == 0 {
            first_lte = lte;
        }
        last_gte = gte;
        if reverse {
            if !gte {
                gte_run_start = rank + 1;
            }
            if lte {
                backward = Some((gte_run_start, rank + 1));
            }
        } else if forward.is_none() {
            if gte {
                forward = Some((rank, rank + usize::from(lte)));
                forward_open = lte;
            }
        } else if forward_open {
            match (&mut forward, lte) {
                (Some((_, hi)), true) => *hi = rank + 1,
                _ => forward_open = false,
            }
        }
    }
    if !first_lte || !last_gte {
        return None;
    }
    let (lo, hi) = if reverse { backward? } else { forward? };
    (hi > lo).then_some((lo, hi))
}

/// Random and by-rank access over a set for many draws; see
/// [`ZSet::sampler`].
pub struct Sampler<'a>(Sample<'a>);

enum Sample<'a> {
    /// Every element of a listpack, in order.
    Listpack(Vec<(&'a [u8], f64)>),
    Skiplist(&'a Big),
}

impl<'a> Sampler<'a> {
    /// A uniformly random element (the set must not be empty). A listpack
    /// draws a rank, a skiplist a dict entry, as Redis does.
    pub fn random_element(&self, rng: &mut dyn RngCore) -> (&'a [u8], f64) {
        match &self.0 {
            Sample::Listpack(elements) => {
                debug_assert!(!elements.is_empty());
                elements[rng.gen_range(0..elements.len() as u64) as usize]
            }
            Sample::Skiplist(big) => {
                let member = big.dict.random_key(rng).unwrap_or_default();
                let score = big.dict.get(member).copied().unwrap_or(0.0);
                (member, score)
            }
        }
    }

    /// The element at 0-based `rank` (which must be < len).
    pub fn at_rank(&self, rank: usize) -> (&'a [u8], f64) {
        match &self.0 {
            Sample::Listpack(elements) => elements[rank],
            Sample::Skiplist(big) => big.list.get(big.list.by_rank(rank + 1)),
        }
    }
}

enum Cursor<'a> {
    /// A forward walk over a listpack.
    Listpack(listpack::Iter<'a>),
    /// A backward walk: the offsets of the elements still to visit, the
    /// next one last.
    ListpackBack(&'a Listpack, Vec<u32>),
    Skiplist(&'a SkipList, NodeId),
}

/// An iterator over a rank interval; see [`ZSet::iter_ranks`].
pub struct ZIter<'a> {
    cursor: Cursor<'a>,
    remaining: usize,
    reverse: bool,
}

impl<'a> Iterator for ZIter<'a> {
    type Item = (&'a [u8], f64);

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        match &mut self.cursor {
            Cursor::Listpack(iter) => iter.next().map(|e| (e.member, e.score)),
            Cursor::ListpackBack(lp, offsets) => {
                let lp: &'a Listpack = lp;
                let e = lp.element_at(offsets.pop()? as usize);
                Some((e.member, e.score))
            }
            Cursor::Skiplist(list, at) => {
                let list: &'a SkipList = list;
                if *at == NIL {
                    self.remaining = 0;
                    return None;
                }
                let item = list.get(*at);
                *at = if self.reverse {
                    list.prev(*at)
                } else {
                    list.next(*at)
                };
                Some(item)
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

#[cfg(test)]
mod tests;
