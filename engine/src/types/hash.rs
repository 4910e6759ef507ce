//! Hashes: a `listpack` of field/value entries in insertion order while the
//! hash is small, converted once to a `hashtable` ([`Dict`]) past
//! `hash-max-listpack-entries` entries or when a field or value is longer
//! than `hash-max-listpack-value` bytes. As in Redis, a hash never converts
//! back, even when it shrinks again.

use rand::{Rng, RngCore};

use self::listpack::{EntrySpan, Listpack};
use super::Limits;
use crate::dict::Dict;

pub mod listpack;

/// Listpack pairs compared per work unit of a field lookup.
pub const LISTPACK_PAIRS_PER_UNIT: usize = 8;

/// A hash value.
#[derive(Clone, Debug, Default)]
pub struct Hash {
    encoding: Encoding,
    /// Seeds the hash table's hash function when the hash converts (drawn
    /// from the server's seeded RNG when the hash was created), so that the
    /// table layout, HSCAN order and HGETALL order are a function of the
    /// seed.
    seed: u64,
}

#[derive(Clone, Debug)]
enum Encoding {
    Listpack(Listpack),
    /// Boxed: the table is large and most hashes are small listpacks.
    Table(Box<Table>),
}

impl Default for Encoding {
    fn default() -> Self {
        Encoding::Listpack(Listpack::new())
    }
}

#[derive(Clone, Debug)]
struct Table {
    dict: Dict<Box<[u8]>>,
    /// Bytes of every value (the dict counts its keys itself), kept up to
    /// date so that [`Hash::size_bytes`] is O(1).
    value_bytes: usize,
}

/// Two hashes are equal when they hold the same pairs, whatever their
/// encodings or insertion orders.
impl PartialEq for Hash {
    fn eq(&self, other: &Hash) -> bool {
        self.len() == other.len() && self.iter().all(|(f, v)| other.get(f) == Some(v))
    }
}

impl Hash {
    /// An empty hash (listpack); `seed` keys the hash table if it converts.
    pub fn new(seed: u64) -> Hash {
        Hash {
            encoding: Encoding::default(),
            seed,
        }
    }

    pub fn len(&self) -> usize {
        match &self.encoding {
            Encoding::Listpack(lp) => lp.len() / 2,
            Encoding::Table(t) => t.dict.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn encoding_name(&self) -> &'static str {
        match &self.encoding {
            Encoding::Listpack(_) => "listpack",
            Encoding::Table(_) => "hashtable",
        }
    }

    pub fn is_listpack(&self) -> bool {
        matches!(self.encoding, Encoding::Listpack(_))
    }

    pub fn free_cost_units(&self) -> u64 {
        self.len() as u64
    }

    /// Heap bytes held, maintained incrementally: the listpack's buffer, or
    /// the dict's tables, slab and keys plus every value's allocation.
    pub fn size_bytes(&self) -> usize {
        std::mem::size_of::<Hash>()
            + match &self.encoding {
                Encoding::Listpack(lp) => lp.capacity_bytes(),
                Encoding::Table(t) => {
                    std::mem::size_of::<Table>() + t.dict.memory_estimate_bytes() + t.value_bytes
                }
            }
    }

    pub fn get(&self, field: &[u8]) -> Option<&[u8]> {
        self.get_counted(field).0
    }

    /// [`Hash::get`], and the work units of the lookup: a listpack is
    /// searched pair by pair (a unit per [`LISTPACK_PAIRS_PER_UNIT`] pairs
    /// compared, the pace the cost audit measures), a table in O(1).
    pub fn get_counted(&self, field: &[u8]) -> (Option<&[u8]>, u64) {
        match &self.encoding {
            Encoding::Listpack(lp) => {
                let (pair, compared) = find_pair(lp, field);
                (pair.map(|p| p.value), scan_units(compared))
            }
            Encoding::Table(t) => (t.dict.get(field).map(|v| &**v), 0),
        }
    }

    pub fn contains(&self, field: &[u8]) -> bool {
        self.get(field).is_some()
    }

    /// Sets `field` to `value`; returns true when the field is new. Converts
    /// to a hash table first when either is longer than the listpack limit,
    /// and after the insert when the hash has more entries than it.
    pub fn insert(&mut self, field: &[u8], value: &[u8], limits: &Limits) -> bool {
        self.insert_counted(field, value, limits).0
    }

    /// [`Hash::insert`], and the work units of its lookup (see
    /// [`Hash::get_counted`]).
    pub fn insert_counted(&mut self, field: &[u8], value: &[u8], limits: &Limits) -> (bool, u64) {
        let value_max = limits.hash_max_listpack_value_bytes;
        if self.is_listpack() && (field.len() > value_max || value.len() > value_max) {
            self.convert_to_table();
        }
        let mut units = 0;
        let added = match &mut self.encoding {
            Encoding::Listpack(lp) => {
                let (pair, compared) = find_pair(lp, field);
                units = scan_units(compared);
                match pair {
                    Some(pair) => {
                        let span = pair.value_span;
                        lp.replace(span, value);
                        false
                    }
                    None => {
                        lp.push(field);
                        lp.push(value);
                        true
                    }
                }
            }
            Encoding::Table(t) => {
                t.value_bytes += value.len();
                match t.dict.get_mut(field) {
                    Some(old) => {
                        t.value_bytes -= old.len();
                        *old = value.into();
                        false
                    }
                    None => {
                        t.dict.insert(field.into(), value.into());
                        true
                    }
                }
            }
        };
        if self.is_listpack() && self.len() > limits.hash_max_listpack_entries {
            self.convert_to_table();
        }
        (added, units)
    }

    /// Removes `field`; returns whether it was there.
    pub fn remove(&mut self, field: &[u8]) -> bool {
        self.remove_counted(field).0
    }

    /// [`Hash::remove`], and the work units of its lookup (see
    /// [`Hash::get_counted`]).
    pub fn remove_counted(&mut self, field: &[u8]) -> (bool, u64) {
        match &mut self.encoding {
            Encoding::Listpack(lp) => {
                let (pair, compared) = find_pair(lp, field);
                let span = pair.map(|p| (p.field_span.start, p.value_span.end));
                if let Some((start, end)) = span {
                    lp.remove_range(start, end, 2);
                }
                (span.is_some(), scan_units(compared))
            }
            Encoding::Table(t) => match t.dict.remove(field) {
                Some((_, value)) => {
                    t.value_bytes -= value.len();
                    (true, 0)
                }
                None => (false, 0),
            },
        }
    }

    /// Every pair: insertion order for a listpack, table order otherwise
    /// (what HGETALL, HKEYS and HVALS reply).
    pub fn iter(&self) -> Iter<'_> {
        match &self.encoding {
            Encoding::Listpack(lp) => Iter::Listpack(lp.iter()),
            Encoding::Table(t) => Iter::Table(Box::new(t.dict.iter())),
        }
    }

    /// The hash table, mutable, for a snapshot read's open and close (see
    /// [`crate::snapshot_read`]); fields go through the hash's own methods.
    pub(crate) fn dict_mut(&mut self) -> Option<&mut Dict<Box<[u8]>>> {
        match &mut self.encoding {
            Encoding::Listpack(_) => None,
            Encoding::Table(t) => Some(&mut t.dict),
        }
    }

    /// The hash table, when the hash is one (for HSCAN's cursor).
    pub fn dict(&self) -> Option<&Dict<Box<[u8]>>> {
        match &self.encoding {
            Encoding::Listpack(_) => None,
            Encoding::Table(t) => Some(&t.dict),
        }
    }

    /// One uniformly drawn pair, None when empty. O(1) for a table, O(N)
    /// for a listpack (bounded by the listpack limit).
    pub fn random_pair(&self, rng: &mut dyn RngCore) -> Option<(&[u8], &[u8])> {
        if self.is_empty() {
            return None;
        }
        match &self.encoding {
            Encoding::Listpack(_) => {
                let i = rng.gen_range(0..self.len() as u64) as usize;
                self.iter().nth(i)
            }
            Encoding::Table(t) => {
                let field = t.dict.random_key(rng)?;
                let value = t.dict.get(field)?;
                Some((field, value))
            }
        }
    }

    fn convert_to_table(&mut self) {
        let Encoding::Listpack(lp) = &self.encoding else {
            return;
        };
        let mut dict = Dict::new(self.seed);
        let mut value_bytes = 0;
        let mut entries = lp.iter().map(|(_, bytes)| bytes);
        while let (Some(field), Some(value)) = (entries.next(), entries.next()) {
            value_bytes += value.len();
            dict.insert(field.into(), value.into());
        }
        debug_assert_eq!(dict.len(), lp.len() / 2);
        self.encoding = Encoding::Table(Box::new(Table { dict, value_bytes }));
    }
}

/// A field found in a listpack: the spans of its two entries and the value.
struct Pair<'a> {
    field_span: EntrySpan,
    value_span: EntrySpan,
    value: &'a [u8],
}

/// The pair named `field`, and how many pairs were compared to find it.
fn find_pair<'a>(lp: &'a Listpack, field: &[u8]) -> (Option<Pair<'a>>, usize) {
    let mut entries = lp.iter();
    let mut compared = 0;
    while let (Some((field_span, f)), Some((value_span, value))) = (entries.next(), entries.next())
    {
        compared += 1;
        if f == field {
            let pair = Pair {
                field_span,
                value_span,
                value,
            };
            return (Some(pair), compared);
        }
    }
    (None, compared)
}

/// Work units of comparing `pairs` listpack pairs.
fn scan_units(pairs: usize) -> u64 {
    (pairs / LISTPACK_PAIRS_PER_UNIT) as u64
}

/// The hashtable encoding's pairs, borrowed.
type TablePairs<'a> = Box<dyn Iterator<Item = (&'a [u8], &'a Box<[u8]>)> + 'a>;

/// The iterator behind [`Hash::iter`].
pub enum Iter<'a> {
    Listpack(listpack::Iter<'a>),
    Table(TablePairs<'a>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a [u8], &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Iter::Listpack(entries) => {
                let (_, field) = entries.next()?;
                let (_, value) = entries.next()?;
                Some((field, value))
            }
            Iter::Table(pairs) => pairs.next().map(|(f, v)| (f, &**v)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;
    use proptest::test_runner::{Config as ProptestConfig, RngAlgorithm, TestRng, TestRunner};

    use super::*;

    fn small_limits() -> Limits {
        Limits {
            hash_max_listpack_entries: 8,
            hash_max_listpack_value_bytes: 6,
            ..Limits::default()
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(Vec<u8>, Vec<u8>),
        Remove(Vec<u8>),
    }

    fn op() -> impl Strategy<Value = Op> {
        let field = prop::collection::vec(b'a'..b'e', 0..8);
        let value = prop::collection::vec(b'0'..b'3', 0..9);
        prop_oneof![
            3 => (field.clone(), value).prop_map(|(f, v)| Op::Insert(f, v)),
            1 => field.prop_map(Op::Remove),
        ]
    }

    /// A hash behaves as a BTreeMap across the listpack-to-table conversion,
    /// converts exactly when Redis would, and never converts back.
    #[test]
    fn hash_matches_btreemap_model() {
        let config = ProptestConfig {
            cases: 256,
            ..ProptestConfig::default()
        };
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]);
        let mut runner = TestRunner::new_with_rng(config, rng);
        runner
            .run(&prop::collection::vec(op(), 0..60), |ops| {
                let limits = small_limits();
                let mut hash = Hash::new(1);
                let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
                let mut must_be_table = false;
                for op in ops {
                    match op {
                        Op::Insert(f, v) => {
                            must_be_table |= f.len() > 6 || v.len() > 6;
                            let added = hash.insert(&f, &v, &limits);
                            prop_assert_eq!(added, model.insert(f, v).is_none());
                            must_be_table |= model.len() > 8;
                        }
                        Op::Remove(f) => {
                            prop_assert_eq!(hash.remove(&f), model.remove(&f).is_some());
                        }
                    }
                    prop_assert_eq!(hash.len(), model.len());
                    prop_assert_eq!(hash.is_listpack(), !must_be_table);
                    let mut pairs: Vec<(Vec<u8>, Vec<u8>)> =
                        hash.iter().map(|(f, v)| (f.to_vec(), v.to_vec())).collect();
                    pairs.sort();
                    let expected: Vec<(Vec<u8>, Vec<u8>)> =
                        model.iter().map(|(f, v)| (f.clone(), v.clone())).collect();
                    prop_assert_eq!(pairs, expected);
                    for (f, v) in &model {
                        prop_assert_eq!(hash.get(f), Some(v.as_slice()));
                    }
                }
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn size_bytes_tracks_contents() {
        let limits = small_limits();
        let mut hash = Hash::new(3);
        let empty = hash.size_bytes();
        hash.insert(b"f", b"v", &limits);
        assert!(hash.size_bytes() > empty);
        for i in 0..100 {
            hash.insert(format!("field{i}").as_bytes(), &[b'x'; 100], &limits);
        }
        assert_eq!(hash.encoding_name(), "hashtable");
        let big = hash.size_bytes();
        assert!(big > 100 * 100, "{big}");
        for i in 0..100 {
            hash.remove(format!("field{i}").as_bytes());
        }
        assert!(hash.size_bytes() < big - 100 * 100);
    }

    #[test]
    fn insertion_order_in_listpack() {
        let mut hash = Hash::new(0);
        let limits = Limits::default();
        hash.insert(b"z", b"1", &limits);
        hash.insert(b"a", b"2", &limits);
        hash.insert(b"z", b"3", &limits);
        let pairs: Vec<(&[u8], &[u8])> = hash.iter().collect();
        assert_eq!(pairs, vec![(&b"z"[..], &b"3"[..]), (b"a", b"2")]);
    }
}
