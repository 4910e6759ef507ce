//! The quicklist against a `VecDeque` model, across fills that force node
//! splits and merges.

use std::collections::VecDeque;

use proptest::prelude::*;
use proptest::test_runner::RngSeed;

use super::{Direction, List};

#[derive(Clone, Debug)]
enum Op {
    PushFront(Vec<u8>),
    PushBack(Vec<u8>),
    PopFront,
    PopBack,
    /// Insert before/after the first entry equal to the entry at this
    /// index (modulo len).
    Insert(usize, bool, Vec<u8>),
    Set(usize, Vec<u8>),
    /// Remove up to n (0 = all) copies of the entry at this index, from the
    /// head or the tail.
    Remove(usize, usize, bool),
    DrainFront(usize),
    DrainBack(usize),
}

/// Entries: mostly short and few distinct (so LREM/LINSERT match), some
/// long enough to hit the byte limits.
fn entry() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => (0u8..6).prop_map(|b| vec![b'a' + b]),
        3 => (0usize..200, any::<u8>()).prop_map(|(n, b)| vec![b; n]),
        1 => (1000usize..5000).prop_map(|n| vec![b'z'; n]),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => entry().prop_map(Op::PushFront),
        4 => entry().prop_map(Op::PushBack),
        1 => Just(Op::PopFront),
        1 => Just(Op::PopBack),
        3 => (any::<usize>(), any::<bool>(), entry()).prop_map(|(i, a, e)| Op::Insert(i, a, e)),
        2 => (any::<usize>(), entry()).prop_map(|(i, e)| Op::Set(i, e)),
        1 => (any::<usize>(), 0usize..3, any::<bool>()).prop_map(|(i, n, b)| Op::Remove(i, n, b)),
        1 => (0usize..8).prop_map(Op::DrainFront),
        1 => (0usize..8).prop_map(Op::DrainBack),
    ]
}

fn apply(list: &mut List, model: &mut VecDeque<Vec<u8>>, op: &Op) {
    match op {
        Op::PushFront(e) => {
            list.push_front(e);
            model.push_front(e.clone());
        }
        Op::PushBack(e) => {
            list.push_back(e);
            model.push_back(e.clone());
        }
        Op::PopFront => assert_eq!(list.pop_front(), model.pop_front()),
        Op::PopBack => assert_eq!(list.pop_back(), model.pop_back()),
        Op::Insert(i, after, e) => {
            let pivot = if model.is_empty() {
                b"missing".to_vec()
            } else {
                model[i % model.len()].clone()
            };
            let (found, _) = list.insert_by_pivot(&pivot, *after, e);
            match model.iter().position(|x| *x == pivot) {
                Some(p) => {
                    assert!(found);
                    model.insert(p + usize::from(*after), e.clone());
                }
                None => assert!(!found),
            }
        }
        Op::Set(i, e) => {
            if model.is_empty() {
                assert_eq!(list.set(0, e), None);
            } else {
                let i = i % model.len();
                assert!(list.set(i, e).is_some());
                model[i] = e.clone();
            }
        }
        Op::Remove(i, n, from_tail) => {
            if model.is_empty() {
                return;
            }
            let value = model[i % model.len()].clone();
            let limit = (*n > 0).then_some(*n);
            let direction = if *from_tail {
                Direction::Backward
            } else {
                Direction::Forward
            };
            let (removed, _) = list.remove_matching(&value, limit, direction);
            let mut expect = 0;
            let quota = limit.unwrap_or(usize::MAX);
            if *from_tail {
                let mut j = model.len();
                while j > 0 && expect < quota {
                    j -= 1;
                    if model[j] == value {
                        model.remove(j);
                        expect += 1;
                    }
                }
            } else {
                let mut j = 0;
                while j < model.len() && expect < quota {
                    if model[j] == value {
                        model.remove(j);
                        expect += 1;
                    } else {
                        j += 1;
                    }
                }
            }
            assert_eq!(removed, expect);
        }
        Op::DrainFront(n) => {
            list.drain_front(*n);
            model.drain(..(*n).min(model.len()));
        }
        Op::DrainBack(n) => {
            list.drain_back(*n);
            let keep = model.len().saturating_sub(*n);
            model.truncate(keep);
        }
    }
}

fn check(list: &List, model: &VecDeque<Vec<u8>>) {
    list.check_invariants();
    assert_eq!(list.len(), model.len());
    assert!(list.iter().eq(model.iter().map(|v| v.as_slice())));
    let back: Vec<&[u8]> = list
        .iter_from(list.len().saturating_sub(1), Direction::Backward)
        .collect();
    assert!(back
        .into_iter()
        .eq(model.iter().rev().map(|v| v.as_slice())));
    for (i, v) in model.iter().enumerate() {
        assert_eq!(list.get(i).map(|(d, _)| d), Some(v.as_slice()));
    }
    if !model.is_empty() {
        let mid = model.len() / 2;
        assert!(list
            .iter_from(mid, Direction::Forward)
            .eq(model.iter().skip(mid).map(|v| v.as_slice())));
        assert!(list.iter_from(mid, Direction::Backward).eq(model
            .iter()
            .take(mid + 1)
            .rev()
            .map(|v| v.as_slice())));
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 128,
        rng_seed: RngSeed::Fixed(0x5eed_0715),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn quicklist_matches_a_deque(
        fill in prop_oneof![Just(-1i64), Just(-2), Just(-5), Just(0), Just(1), Just(2), Just(3), Just(7)],
        ops in proptest::collection::vec(op(), 1..120),
    ) {
        let mut list = List::new(fill);
        let mut model = VecDeque::new();
        for op in &ops {
            apply(&mut list, &mut model, op);
            check(&list, &model);
        }
    }
}

#[test]
fn fill_bounds_nodes_by_count_and_bytes() {
    let mut by_count = List::new(3);
    for i in 0..10 {
        by_count.push_back(format!("{i}").as_bytes());
    }
    assert_eq!(by_count.node_count(), 4);
    by_count.check_invariants();

    // 8 KB nodes: about 80 entries of 100 bytes each.
    let mut by_bytes = List::new(-2);
    for _ in 0..1000 {
        by_bytes.push_front(&[b'x'; 100]);
    }
    assert!(
        (12..=14).contains(&by_bytes.node_count()),
        "{}",
        by_bytes.node_count()
    );
    by_bytes.check_invariants();

    // An entry bigger than the limit gets a node of its own.
    let mut big = List::new(-1);
    big.push_back(b"a");
    big.push_back(&[b'b'; 10_000]);
    big.push_back(b"c");
    assert_eq!(big.node_count(), 3);
    big.check_invariants();
}

#[test]
fn out_of_range_fills_are_clamped() {
    let mut list = List::new(-100);
    list.push_back(b"a");
    list.check_invariants();
    let mut list = List::new(i64::MAX);
    for _ in 0..5000 {
        list.push_back(b"abcdefgh");
    }
    list.check_invariants();
    assert!(list.node_count() > 1, "the 8 KB safety limit still applies");
}

#[test]
fn size_tracks_contents() {
    let mut list = List::default();
    let empty = list.size_bytes();
    for _ in 0..1000 {
        list.push_back(&[b'v'; 50]);
    }
    let full = list.size_bytes();
    assert!(full >= empty + 50_000, "{full}");
    list.drain_front(1000);
    assert!(list.is_empty());
    assert_eq!(list.node_count(), 0);
    list.check_invariants();
}

#[test]
fn equality_ignores_layout() {
    let mut a = List::new(1);
    let mut b = List::new(-5);
    for v in ["x", "y", "z"] {
        a.push_back(v.as_bytes());
        b.push_back(v.as_bytes());
    }
    assert_ne!(a.node_count(), b.node_count());
    assert_eq!(a, b);
}
