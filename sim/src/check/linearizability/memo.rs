//! The search's bookkeeping: interned register states, and Lowe's memo of
//! every (set of linearized operations, state) already reached.

use super::State;
use crate::fxhash::FxHashMap;

/// A pseudo-random word per operation (splitmix64 of its index): the memo
/// hashes a set of linearized operations as the xor of its members' words,
/// updated in O(1) as operations are lifted and put back.
pub(super) fn zobrist(op: usize) -> u64 {
    let mut z = (op as u64)
        .wrapping_add(1)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Distinct register states, interned: the search and its memo handle
/// small integer ids instead of cloning values.
#[derive(Default)]
pub(super) struct States {
    pub(super) values: Vec<State>,
    ids: FxHashMap<State, u32>,
    /// Bytes held by `values` (counted against the memory bound).
    pub(super) bytes: usize,
}

impl States {
    pub(super) fn intern(&mut self, state: State) -> u32 {
        if let Some(&id) = self.ids.get(&state) {
            return id;
        }
        let id = self.values.len() as u32;
        self.bytes += 2 * (state.as_ref().map_or(0, Vec::len) + 32);
        self.ids.insert(state.clone(), id);
        self.values.push(state);
        id
    }
}

/// Lowe's memo: every (set of linearized operations, state) reached.
///
/// A set has two parts. The answered operations, numbered in invocation
/// order, are linearized nearly as a prefix: the memo stores them as
/// their end (one past the highest member) and the few non-members below
/// it, the operations still in flight. That keeps entries a few words
/// long however long the key's history (whole bitsets made the memo
/// quadratic in the number of operations). Requests that never got a
/// reply are numbered apart and stored as a plain bitset: they may stay
/// unlinearized for the whole search, and as holes in the answered
/// numbering every entry carried all of them (a dead pipeline's requests
/// made the memo quadratic again). The lists live in two arenas; a map
/// from the combined hash to the newest entry with that hash, chained
/// through `next`, finds them. Equality is checked on the full
/// (canonical) set, so a hash collision can never skip a configuration.
#[derive(Default)]
pub(super) struct Memo {
    arena: Vec<u32>,
    /// The unanswered part of every entry, `unanswered_words` words each.
    unanswered_arena: Vec<u64>,
    unanswered_words: usize,
    entries: Vec<MemoEntry>,
    heads: FxHashMap<u64, u32>,
}

struct MemoEntry {
    state: u32,
    /// The previous entry with the same hash.
    next: u32,
    /// One past the set's highest member.
    end: u32,
    /// The non-members below `end`: `arena[from..from + len]`, ascending.
    from: usize,
    len: usize,
    /// The unanswered members: `unanswered_arena[unanswered_from..]`,
    /// `Memo::unanswered_words` words.
    unanswered_from: usize,
}

impl Memo {
    const NO_ENTRY: u32 = u32::MAX;

    /// A memo for sets whose unanswered part has `unanswered_words` words.
    pub(super) fn new(unanswered_words: usize) -> Memo {
        Memo {
            unanswered_words,
            ..Memo::default()
        }
    }

    fn key_hash(set_hash: u64, state: u32) -> u64 {
        set_hash ^ (state as u64 + 1).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95)
    }

    /// Adds (set, state); false if it was already there. The set is given
    /// as the `end` of its answered part, its ascending non-members `holes`
    /// below it, and the bitset of its `unanswered` members.
    pub(super) fn insert(
        &mut self,
        end: u32,
        holes: &[u32],
        unanswered: &[u64],
        set_hash: u64,
        state: u32,
    ) -> bool {
        debug_assert!(holes.last().is_none_or(|&h| h + 1 < end));
        debug_assert_eq!(unanswered.len(), self.unanswered_words);
        let words = self.unanswered_words;
        let hash = Memo::key_hash(set_hash, state);
        let head = self.heads.get(&hash).copied().unwrap_or(Memo::NO_ENTRY);
        let mut at = head;
        while at != Memo::NO_ENTRY {
            let e = &self.entries[at as usize];
            if e.state == state
                && e.end == end
                && e.len == holes.len()
                && self.unanswered_arena[e.unanswered_from..e.unanswered_from + words]
                    == *unanswered
                && self.arena[e.from..e.from + e.len] == *holes
            {
                return false;
            }
            at = e.next;
        }
        let id = self.entries.len() as u32;
        self.entries.push(MemoEntry {
            state,
            next: head,
            end,
            from: self.arena.len(),
            len: holes.len(),
            unanswered_from: self.unanswered_arena.len(),
        });
        self.arena.extend_from_slice(holes);
        self.unanswered_arena.extend_from_slice(unanswered);
        self.heads.insert(hash, id);
        true
    }

    /// Memory held, for the effort bound.
    pub(super) fn bytes(&self) -> usize {
        self.arena.len() * 4
            + self.unanswered_arena.len() * 8
            + self.entries.len() * (std::mem::size_of::<MemoEntry>() + 16)
    }
}

/// The canonical form of a bitset for [`Memo`]: fills `holes` with the
/// non-members below the highest member and returns one past that member.
/// `full_words` and `top` are hints kept by the search: every word before
/// `full_words` is all ones, every word from `top` on is zero; they are
/// tightened here.
pub(super) fn canonical(
    bits: &[u64],
    full_words: &mut usize,
    top: &mut usize,
    holes: &mut Vec<u32>,
) -> u32 {
    while *full_words < *top && bits[*full_words] == u64::MAX {
        *full_words += 1;
    }
    while *top > *full_words && bits[*top - 1] == 0 {
        *top -= 1;
    }
    holes.clear();
    if *top == 0 {
        return 0;
    }
    let last = bits[*top - 1];
    let end = (*top - 1) * 64 + (64 - last.leading_zeros() as usize);
    for (w, &word) in bits.iter().enumerate().take(*top).skip(*full_words) {
        let mut missing = !word;
        while missing != 0 {
            let bit = w * 64 + missing.trailing_zeros() as usize;
            if bit >= end {
                break;
            }
            holes.push(bit as u32);
            missing &= missing - 1;
        }
    }
    end as u32
}
