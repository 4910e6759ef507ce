//! Property tests of [`ZSet`] (both encodings, and the conversion between
//! them) against a `BTreeSet<(score, member)>` model.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use proptest::test_runner::RngSeed;

use super::*;

/// An element ordered as Redis orders them.
#[derive(Clone, Debug, PartialEq)]
struct Key(f64, Vec<u8>);

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        cmp_elements(self.0, &self.1, other.0, &other.1)
    }
}

#[derive(Default)]
struct Model {
    order: BTreeSet<Key>,
    scores: BTreeMap<Vec<u8>, f64>,
}

impl Model {
    fn add(&mut self, member: &[u8], score: f64) {
        if let Some(old) = self.scores.insert(member.to_vec(), score) {
            self.order.remove(&Key(old, member.to_vec()));
        }
        self.order.insert(Key(score, member.to_vec()));
    }

    fn remove(&mut self, member: &[u8]) -> bool {
        match self.scores.remove(member) {
            None => false,
            Some(old) => self.order.remove(&Key(old, member.to_vec())),
        }
    }

    fn sorted(&self) -> Vec<(Vec<u8>, f64)> {
        self.order.iter().map(|k| (k.1.clone(), k.0)).collect()
    }
}

#[derive(Clone, Debug)]
enum Op {
    Add(Vec<u8>, f64),
    Incr(Vec<u8>, f64),
    Remove(Vec<u8>),
    RemoveRanks(usize, usize),
    ScoreRange(ScoreRange),
}

fn member() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), Just(b'c')], 0..5)
}

fn score() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => (-4i32..5).prop_map(f64::from),
        2 => (-40i32..40).prop_map(|n| f64::from(n) / 8.0),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
    ]
}

fn score_range() -> impl Strategy<Value = ScoreRange> {
    (score(), score(), any::<bool>(), any::<bool>()).prop_map(|(min, max, a, b)| ScoreRange {
        min,
        max,
        min_exclusive: a,
        max_exclusive: b,
    })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (member(), score()).prop_map(|(m, s)| Op::Add(m, s)),
        2 => (member(), (-3i32..4).prop_map(f64::from)).prop_map(|(m, s)| Op::Incr(m, s)),
        3 => member().prop_map(Op::Remove),
        1 => (0usize..12, 0usize..12).prop_map(|(a, b)| Op::RemoveRanks(a, b)),
        2 => score_range().prop_map(Op::ScoreRange),
    ]
}

fn limits(entries: usize, value_bytes: usize) -> Limits {
    Limits {
        zset_max_listpack_entries: entries,
        zset_max_listpack_value_bytes: value_bytes,
        ..Limits::default()
    }
}

fn collect(z: &ZSet, lo: usize, hi: usize, reverse: bool) -> Vec<(Vec<u8>, f64)> {
    z.iter_ranks(lo, hi, reverse)
        .map(|(m, s)| (m.to_vec(), s))
        .collect()
}

/// The model's answer for a score range: the contiguous block in range.
fn model_block(sorted: &[(Vec<u8>, f64)], r: &ScoreRange) -> Option<(usize, usize)> {
    let lo = sorted.iter().position(|(m, s)| r.gte_min(*s, m))?;
    let hi = lo
        + sorted[lo..]
            .iter()
            .take_while(|(m, s)| r.lte_max(*s, m))
            .count();
    (hi > lo).then_some((lo, hi))
}

fn check_against(z: &ZSet, model: &Model) {
    z.check();
    let sorted = model.sorted();
    assert_eq!(z.len(), sorted.len());
    assert_eq!(collect(z, 0, z.len(), false), sorted);
    let mut reversed = sorted.clone();
    reversed.reverse();
    assert_eq!(collect(z, 0, z.len(), true), reversed);
    for (rank, (m, s)) in sorted.iter().enumerate() {
        assert_eq!(z.rank(m), Some(rank));
        assert_eq!(z.score(m), Some(*s));
        assert_eq!(z.sampler().at_rank(rank), (m.as_slice(), *s));
    }
    // Every sub-interval, both directions.
    let n = sorted.len();
    for lo in 0..=n.min(6) {
        for hi in lo..=n {
            assert_eq!(collect(z, lo, hi, false), sorted[lo..hi].to_vec());
            let mut rev = sorted[lo..hi].to_vec();
            rev.reverse();
            assert_eq!(collect(z, lo, hi, true), rev);
        }
    }
}

fn run(ops: &[Op], z: &mut ZSet, limits: &Limits) {
    let mut model = Model::default();
    for op in ops {
        match op {
            Op::Add(m, s) => {
                let r = z.add(m, *s, AddFlags::default(), limits).unwrap();
                assert_eq!(r.added, !model.scores.contains_key(m));
                model.add(m, *s);
            }
            Op::Incr(m, s) => {
                let flags = AddFlags {
                    incr: true,
                    ..AddFlags::default()
                };
                let now = model.scores.get(m).copied().unwrap_or(0.0) + s;
                match z.add(m, *s, flags, limits) {
                    Ok(r) => {
                        assert_eq!(r.score, now);
                        model.add(m, now);
                    }
                    Err(NotANumber) => assert!(now.is_nan()),
                }
            }
            Op::Remove(m) => assert_eq!(z.remove(m), model.remove(m)),
            Op::RemoveRanks(a, b) => {
                let (lo, hi) = (*a.min(b), *a.max(b));
                let expected: Vec<_> = model
                    .sorted()
                    .into_iter()
                    .skip(lo)
                    .take(hi.saturating_sub(lo))
                    .collect();
                let mut got = Vec::new();
                z.remove_ranks(lo, hi, |m, s| got.push((m.to_vec(), s)));
                assert_eq!(got, expected);
                for (m, _) in &expected {
                    model.remove(m);
                }
            }
            Op::ScoreRange(r) => {
                let sorted = model.sorted();
                let expected = model_block(&sorted, r);
                assert_eq!(z.range_ranks(r, false), expected, "{r:?}");
                assert_eq!(z.range_ranks(r, true), expected, "{r:?}");
            }
        }
        check_against(z, &model);
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 128,
        rng_seed: RngSeed::Fixed(0x25e7),
        ..ProptestConfig::default()
    })]

    /// Small limits: sets start as listpacks and convert on the way.
    #[test]
    fn zset_matches_model_across_conversion(ops in prop::collection::vec(op(), 1..60)) {
        let limits = limits(4, 3);
        let mut z = ZSet::new(7, false);
        run(&ops, &mut z, &limits);
    }

    /// The skiplist encoding from the first element.
    #[test]
    fn skiplist_matches_model(ops in prop::collection::vec(op(), 1..120)) {
        let limits = limits(0, 0);
        let mut z = ZSet::new(11, true);
        run(&ops, &mut z, &limits);
        prop_assert_eq!(z.encoding_name(), "skiplist");
    }

    /// Lex ranges over equal scores give the same block in both encodings
    /// and match the model.
    #[test]
    fn lex_ranges_match_model(
        members in prop::collection::btree_set(member(), 0..20),
        min in lex_bound(),
        max in lex_bound(),
    ) {
        let range = LexRange { min, max };
        let sorted: Vec<(Vec<u8>, f64)> = members.iter().map(|m| (m.clone(), 0.0)).collect();
        let lo = sorted.iter().position(|(m, s)| range.gte_min(*s, m));
        let expected = lo.and_then(|lo| {
            let hi = lo + sorted[lo..].iter().take_while(|(m, s)| range.lte_max(*s, m)).count();
            (hi > lo).then_some((lo, hi))
        });
        let expected = if range.is_empty() { None } else { expected };
        for skiplist in [false, true] {
            let mut z = ZSet::new(3, skiplist);
            for m in &members {
                z.add(m, 0.0, AddFlags::default(), &Limits::default()).unwrap();
            }
            prop_assert_eq!(z.range_ranks(&range, false), expected);
            prop_assert_eq!(z.range_ranks(&range, true), expected);
        }
    }
}

fn lex_bound() -> impl Strategy<Value = LexBound> {
    prop_oneof![
        1 => Just(LexBound::Min),
        1 => Just(LexBound::Max),
        3 => member().prop_map(LexBound::Inclusive),
        3 => member().prop_map(LexBound::Exclusive),
    ]
}

#[test]
fn listpack_keeps_minus_zero_as_zero_and_skiplist_keeps_it() {
    let limits = Limits::default();
    let mut small = ZSet::new(1, false);
    small.add(b"a", -0.0, AddFlags::default(), &limits).unwrap();
    assert!(small.score(b"a").unwrap().is_sign_positive());
    let mut big = ZSet::new(1, true);
    big.add(b"a", -0.0, AddFlags::default(), &limits).unwrap();
    assert!(big.score(b"a").unwrap().is_sign_negative());
}

#[test]
fn converts_once_past_either_limit() {
    let limits = limits(2, 4);
    let mut z = ZSet::new(1, false);
    for m in [&b"a"[..], b"b"] {
        z.add(m, 1.0, AddFlags::default(), &limits).unwrap();
    }
    assert_eq!(z.encoding_name(), "listpack");
    z.add(b"c", 1.0, AddFlags::default(), &limits).unwrap();
    assert_eq!(z.encoding_name(), "skiplist");
    z.remove(b"c");
    z.remove(b"b");
    assert_eq!(z.encoding_name(), "skiplist", "never converts back");

    let mut z = ZSet::new(1, false);
    z.add(b"12345", 1.0, AddFlags::default(), &limits).unwrap();
    assert_eq!(z.encoding_name(), "skiplist");
}

#[test]
fn big_skiplist_ranks_and_compaction() {
    let limits = limits(0, 0);
    let mut z = ZSet::new(5, true);
    let mut model = Model::default();
    for i in 0..5000u32 {
        let m = format!("m{}", i.wrapping_mul(2_654_435_761) % 100_000).into_bytes();
        let s = f64::from(i % 97);
        z.add(&m, s, AddFlags::default(), &limits).unwrap();
        model.add(&m, s);
    }
    z.check();
    // Remove most of it by ranks from the middle, forcing compaction.
    let n = z.len();
    z.remove_ranks(100, n - 100, |m, _| {
        model.remove(&m);
    });
    check_against(&z, &model);
    let size_small = z.size_bytes();
    assert!(size_small > 0);
}
