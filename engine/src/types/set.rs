//! Sets: an `intset` (sorted integers) while every member is an integer in
//! Redis's strict `string2ll` form and the set holds at most
//! `set-max-intset-entries` members, converted once to a `hashtable`
//! ([`Dict`] with no values) otherwise. As in Redis 7.0 there is no listpack
//! set, and a set never converts back by itself (SPOP may rebuild one, see
//! the sets commands).

use rand::{Rng, RngCore};

use self::intset::Intset;
use super::Limits;
use crate::dict::Dict;
use crate::resp::encode::fmt_i64;
use crate::util::parse_i64_strict;

pub mod intset;

/// Redis caps `set-max-intset-entries` at 2^30 whatever the config says.
const INTSET_ENTRIES_MAX: usize = 1 << 30;

/// A set value.
#[derive(Clone, Debug, Default)]
pub struct Set {
    encoding: Encoding,
    /// Seeds the hash table's hash function when the set converts (drawn from
    /// the server's seeded RNG when the set was created).
    seed: u64,
}

#[derive(Clone, Debug)]
enum Encoding {
    Intset(Intset),
    /// Boxed: the table is large and most sets are small intsets.
    Table(Box<Dict<()>>),
}

impl Default for Encoding {
    fn default() -> Self {
        Encoding::Intset(Intset::new())
    }
}

/// One member as stored: an integer of an intset, or the bytes of a table
/// entry.
///
/// Ordered (integers before bytes) only so that samples can be deduplicated
/// in a `BTreeSet`; one set's members are all of one kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Member<'a> {
    Int(i64),
    Bytes(&'a [u8]),
}

impl<'a> Member<'a> {
    /// The member's bytes, formatting an integer into `buf`.
    pub fn as_bytes<'b>(&'b self, buf: &'b mut [u8; 20]) -> &'b [u8] {
        match self {
            Member::Int(n) => fmt_i64(buf, *n),
            Member::Bytes(b) => b,
        }
    }

    pub fn to_vec(&self) -> Vec<u8> {
        let mut buf = [0u8; 20];
        self.as_bytes(&mut buf).to_vec()
    }
}

/// Two sets are equal when they hold the same members, whatever their
/// encodings.
impl PartialEq for Set {
    fn eq(&self, other: &Set) -> bool {
        let mut buf = [0u8; 20];
        self.len() == other.len() && self.iter().all(|m| other.contains(m.as_bytes(&mut buf)))
    }
}

impl Set {
    /// An empty set (intset); `seed` keys the hash table if it converts.
    pub fn new(seed: u64) -> Set {
        Set {
            encoding: Encoding::default(),
            seed,
        }
    }

    /// An empty set in the encoding Redis's `setTypeCreate` picks for a set
    /// whose first member is `first`: an intset when it is an integer.
    pub fn for_first_member(first: &[u8], seed: u64) -> Set {
        let mut set = Set::new(seed);
        if parse_i64_strict(first).is_none() {
            set.convert_to_table();
        }
        set
    }

    pub fn len(&self) -> usize {
        match &self.encoding {
            Encoding::Intset(s) => s.len(),
            Encoding::Table(d) => d.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn encoding_name(&self) -> &'static str {
        match &self.encoding {
            Encoding::Intset(_) => "intset",
            Encoding::Table(_) => "hashtable",
        }
    }

    pub fn is_intset(&self) -> bool {
        matches!(self.encoding, Encoding::Intset(_))
    }

    pub fn free_cost_units(&self) -> u64 {
        self.len() as u64
    }

    /// Heap bytes held, maintained incrementally: the intset's array, or the
    /// dict's tables, slab and member bytes.
    pub fn size_bytes(&self) -> usize {
        std::mem::size_of::<Set>()
            + match &self.encoding {
                Encoding::Intset(s) => s.capacity_bytes(),
                Encoding::Table(d) => std::mem::size_of::<Dict<()>>() + d.memory_estimate_bytes(),
            }
    }

    pub fn contains(&self, member: &[u8]) -> bool {
        match &self.encoding {
            Encoding::Intset(s) => parse_i64_strict(member).is_some_and(|v| s.contains(v)),
            Encoding::Table(d) => d.contains_key(member),
        }
    }

    /// Adds `member`; returns whether it was new. A non-integer converts
    /// an intset first; an intset past `set-max-intset-entries` converts
    /// after the add.
    pub fn insert(&mut self, member: &[u8], limits: &Limits) -> bool {
        let added = match &mut self.encoding {
            Encoding::Intset(s) => match parse_i64_strict(member) {
                Some(v) => s.insert(v),
                None => {
                    self.convert_to_table();
                    return self.insert(member, limits);
                }
            },
            Encoding::Table(d) => {
                if d.contains_key(member) {
                    false
                } else {
                    d.insert(member.into(), ());
                    true
                }
            }
        };
        let intset_max = limits.set_max_intset_entries.min(INTSET_ENTRIES_MAX);
        if self.is_intset() && self.len() > intset_max {
            self.convert_to_table();
        }
        added
    }

    /// Removes `member`; returns whether it was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        match &mut self.encoding {
            Encoding::Intset(s) => parse_i64_strict(member).is_some_and(|v| s.remove(v)),
            Encoding::Table(d) => d.remove(member).is_some(),
        }
    }

    /// Every member: ascending for an intset, table order otherwise (what
    /// SMEMBERS replies).
    pub fn iter(&self) -> Iter<'_> {
        match &self.encoding {
            Encoding::Intset(s) => Iter::Intset(s.iter()),
            Encoding::Table(d) => Iter::Table(Box::new(d.iter())),
        }
    }

    /// The hash table, when the set is one (for SSCAN's cursor).
    pub fn dict(&self) -> Option<&Dict<()>> {
        match &self.encoding {
            Encoding::Intset(_) => None,
            Encoding::Table(d) => Some(d),
        }
    }

    /// The hash table, mutable, for a snapshot read's open and close (see
    /// [`crate::snapshot_read`]); members go through the set's own methods.
    pub(crate) fn dict_mut(&mut self) -> Option<&mut Dict<()>> {
        match &mut self.encoding {
            Encoding::Intset(_) => None,
            Encoding::Table(d) => Some(d),
        }
    }

    /// One uniformly drawn member, None when empty. O(1).
    pub fn random_member(&self, rng: &mut dyn RngCore) -> Option<Member<'_>> {
        if self.is_empty() {
            return None;
        }
        match &self.encoding {
            Encoding::Intset(s) => {
                let i = rng.gen_range(0..s.len() as u64) as usize;
                s.get(i).map(Member::Int)
            }
            Encoding::Table(d) => d.random_key(rng).map(Member::Bytes),
        }
    }

    fn convert_to_table(&mut self) {
        let Encoding::Intset(s) = &self.encoding else {
            return;
        };
        let mut dict = Dict::new(self.seed);
        let mut buf = [0u8; 20];
        for v in s.iter() {
            dict.insert(fmt_i64(&mut buf, v).into(), ());
        }
        self.encoding = Encoding::Table(Box::new(dict));
    }
}

/// The iterator behind [`Set::iter`].
pub enum Iter<'a> {
    Intset(intset::Iter<'a>),
    Table(Box<dyn Iterator<Item = (&'a [u8], &'a ())> + 'a>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = Member<'a>;

    fn next(&mut self) -> Option<Member<'a>> {
        match self {
            Iter::Intset(values) => values.next().map(Member::Int),
            Iter::Table(entries) => entries.next().map(|(k, _)| Member::Bytes(k)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;
    use proptest::test_runner::{Config as ProptestConfig, RngAlgorithm, TestRng, TestRunner};

    use super::*;

    #[derive(Clone, Debug)]
    enum Op {
        Insert(Vec<u8>),
        Remove(Vec<u8>),
    }

    /// Mostly integers (some in non-canonical forms such as "+1" or "01",
    /// which are strings to Redis), a few words.
    fn member() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            6 => (-20i64..20).prop_map(|v| v.to_string().into_bytes()),
            1 => Just(b"+1".to_vec()),
            1 => Just(b"01".to_vec()),
            1 => prop::collection::vec(b'a'..b'd', 1..3),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => member().prop_map(Op::Insert),
            2 => member().prop_map(Op::Remove),
        ]
    }

    /// A set behaves as a BTreeSet across the intset-to-table conversion,
    /// converts exactly when Redis would and never converts back; an intset
    /// iterates in ascending order.
    #[test]
    fn set_matches_btreeset_model() {
        let config = ProptestConfig {
            cases: 256,
            ..ProptestConfig::default()
        };
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[11; 32]);
        let mut runner = TestRunner::new_with_rng(config, rng);
        runner
            .run(&prop::collection::vec(op(), 0..60), |ops| {
                let limits = Limits {
                    set_max_intset_entries: 10,
                    ..Limits::default()
                };
                let mut set = Set::new(5);
                let mut model: BTreeSet<Vec<u8>> = BTreeSet::new();
                let mut must_be_table = false;
                for op in ops {
                    match op {
                        Op::Insert(m) => {
                            must_be_table |= parse_i64_strict(&m).is_none();
                            prop_assert_eq!(set.insert(&m, &limits), model.insert(m));
                            must_be_table |= model.len() > 10;
                        }
                        Op::Remove(m) => {
                            prop_assert_eq!(set.remove(&m), model.remove(&m));
                        }
                    }
                    prop_assert_eq!(set.len(), model.len());
                    prop_assert_eq!(set.is_intset(), !must_be_table);
                    let members: Vec<Vec<u8>> = set.iter().map(|m| m.to_vec()).collect();
                    if set.is_intset() {
                        let ints: Vec<i64> = set
                            .iter()
                            .map(|m| match m {
                                Member::Int(v) => v,
                                Member::Bytes(_) => unreachable!(),
                            })
                            .collect();
                        prop_assert!(ints.windows(2).all(|w| w[0] < w[1]));
                    }
                    let members: BTreeSet<Vec<u8>> = members.into_iter().collect();
                    prop_assert_eq!(&members, &model);
                    for m in &model {
                        prop_assert!(set.contains(m));
                    }
                }
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn first_member_picks_encoding() {
        assert_eq!(Set::for_first_member(b"12", 0).encoding_name(), "intset");
        assert_eq!(Set::for_first_member(b"a", 0).encoding_name(), "hashtable");
        assert_eq!(
            Set::for_first_member(b"012", 0).encoding_name(),
            "hashtable"
        );
    }

    #[test]
    fn size_bytes_tracks_contents() {
        let limits = Limits::default();
        let mut set = Set::new(1);
        let empty = set.size_bytes();
        for i in 0..100 {
            set.insert(i.to_string().as_bytes(), &limits);
        }
        let ints = set.size_bytes();
        assert!(ints >= empty + 200, "2 bytes a small member");
        set.insert(b"word", &limits);
        assert!(set.size_bytes() > ints);
    }
}
