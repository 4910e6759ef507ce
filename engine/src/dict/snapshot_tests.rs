//! The snapshot read against a model: whatever writers do between slices
//! (inserts, overwrites, `&mut` changes, removes of visited and unvisited
//! entries, grows, shrinks, rehash steps, a take), what the read visits
//! plus its side list is the dict as it was when the read opened.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

#[derive(Debug, Clone)]
enum Op {
    Insert(u16, u16),
    Remove(u16),
    Bump(u16),
    Rehash(u8),
    Visit(u8),
    Take,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..600u16, any::<u16>()).prop_map(|(k, v)| Op::Insert(k, v)),
        4 => (0..600u16).prop_map(Op::Remove),
        2 => (0..600u16).prop_map(Op::Bump),
        1 => any::<u8>().prop_map(Op::Rehash),
        3 => (1..64u8).prop_map(Op::Visit),
        1 => Just(Op::Take),
    ]
}

fn copy(v: &u64) -> Box<[u8]> {
    v.to_string().into_bytes().into_boxed_slice()
}

fn key(k: u16) -> Box<[u8]> {
    format!("k{k}").into_bytes().into_boxed_slice()
}

/// Reads the open snapshot to the end, in slices of `slice`.
fn drain(dict: &mut Dict<u64>, slice: usize, got: &mut Vec<(Vec<u8>, Vec<u8>)>) {
    loop {
        let visited = dict.snapshot_visit(slice, |k, v| got.push((k.to_vec(), copy(v).into())));
        let saved = dict.snapshot_take_saved(slice);
        let saved_count = saved.len();
        for s in saved {
            got.push((s.key.into(), s.value.expect("values copied").into()));
        }
        if visited == 0 && saved_count == 0 {
            return;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn snapshot_read_is_the_dict_at_its_opening(
        seed in any::<u64>(),
        start_len in 0..500u16,
        ops in proptest::collection::vec(op(), 0..400),
    ) {
        let mut dict: Dict<u64> = Dict::new(seed);
        for k in 0..start_len {
            dict.insert(key(k), u64::from(k));
        }
        // Shrinks and grows under way when the read opens, sometimes.
        for k in 0..start_len / 2 {
            dict.remove(&key(k * 2));
        }
        let at_open: BTreeMap<Vec<u8>, Vec<u8>> =
            dict.iter().map(|(k, v)| (k.to_vec(), copy(v).into())).collect();
        dict.snapshot_open(Some(copy), true);
        let mut got = Vec::new();
        for op in ops {
            match op {
                Op::Insert(k, v) => {
                    dict.insert(key(k), u64::from(v));
                }
                Op::Remove(k) => {
                    dict.remove(&key(k));
                }
                Op::Bump(k) => {
                    if let Some(v) = dict.get_mut(&key(k)) {
                        *v += 1_000_000;
                    }
                }
                Op::Rehash(n) => {
                    dict.rehash_steps(usize::from(n));
                }
                Op::Visit(n) => {
                    dict.snapshot_visit(usize::from(n), |k, v| {
                        got.push((k.to_vec(), copy(v).into()))
                    });
                }
                Op::Take => drop(dict.take()),
            }
            dict.check_invariants();
        }
        drain(&mut dict, 7, &mut got);
        dict.snapshot_close();
        dict.check_invariants();
        let count = got.len();
        let got: BTreeMap<Vec<u8>, Vec<u8>> = got.into_iter().collect();
        prop_assert_eq!(count, got.len(), "an entry read twice");
        prop_assert_eq!(got, at_open);
    }
}

#[test]
fn keys_only_read_saves_through_the_owner() {
    let mut dict: Dict<u64> = Dict::new(3);
    for k in 0..100 {
        dict.insert(key(k), u64::from(k));
    }
    dict.snapshot_open(None, false);
    let mut got = Vec::new();
    dict.snapshot_visit(10, |k, _| got.push(k.to_vec()));
    // The owner releases an unvisited key (saved) and one it does not want
    // (dropped), then removes both; a visited key is removed directly.
    let unvisited: Vec<Vec<u8>> = (0..100)
        .map(|k| key(k).into())
        .filter(|k| !got.contains(k))
        .collect();
    assert_eq!(
        dict.snapshot_release(&unvisited[0], true),
        Released::Pending
    );
    assert_eq!(
        dict.snapshot_release(&unvisited[1], false),
        Released::Pending
    );
    assert_eq!(
        dict.snapshot_release(&unvisited[1], false),
        Released::NotPending
    );
    dict.remove(&unvisited[0]);
    dict.remove(&unvisited[1]);
    dict.remove(&got[0].clone());
    dict.insert(key(1000), 0);
    dict.check_invariants();
    loop {
        let n = dict.snapshot_visit(9, |k, _| got.push(k.to_vec()));
        if n == 0 {
            break;
        }
    }
    for s in dict.snapshot_take_saved(usize::MAX) {
        assert_eq!(s.value, None);
        got.push(s.key.into());
    }
    got.sort();
    let mut want: Vec<Vec<u8>> = (0..100)
        .map(|k| key(k).into())
        .filter(|k| *k != unvisited[1])
        .collect();
    want.sort();
    assert_eq!(got, want);
}

#[test]
fn a_clone_has_no_open_read() {
    let mut dict: Dict<u64> = Dict::new(1);
    dict.insert(key(1), 1);
    dict.snapshot_open(None, true);
    assert!(dict.snapshot_is_open());
    assert!(!dict.clone().snapshot_is_open());
}
