//! Unit tests of the dict: a model check, the resize thresholds, the rehash
//! budget, determinism, and SCAN completeness under churn and resizes.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::rehash::EMPTY_VISITS_PER_BUCKET;
use super::scan::next_cursor;
use super::*;

fn key(prefix: &str, n: u64) -> Box<[u8]> {
    format!("{prefix}:{n}").into_bytes().into_boxed_slice()
}

/// A dict keyed by `seed` holding `{prefix}:{i}` -> `i` for every i below
/// `len`, inserted in order.
fn filled(seed: u64, prefix: &str, len: u64) -> Dict<u64> {
    let mut dict = Dict::new(seed);
    for i in 0..len {
        dict.insert(key(prefix, i), i);
    }
    dict
}

/// Every entry of the dict, collected through `scan` with no concurrent
/// changes.
fn scan_all<V>(dict: &Dict<V>) -> Vec<Vec<u8>> {
    let mut keys = Vec::new();
    let mut cursor = 0;
    let mut calls = 0;
    loop {
        cursor = dict.scan(cursor, |k, _| keys.push(k.to_vec()));
        calls += 1;
        assert!(calls <= dict.bucket_count().max(1), "scan did not end");
        if cursor == 0 {
            return keys;
        }
    }
}

#[test]
fn empty_dict() {
    let mut dict: Dict<u32> = Dict::new(1);
    assert!(dict.is_empty());
    assert_eq!(dict.get(b"a"), None);
    assert_eq!(dict.get_mut(b"a"), None);
    assert_eq!(dict.remove(b"a"), None);
    assert_eq!(dict.scan(0, |_, _| panic!("nothing to visit")), 0);
    assert_eq!(dict.scan(12345, |_, _| panic!("nothing to visit")), 0);
    assert_eq!(dict.random_key(&mut ChaCha8Rng::seed_from_u64(0)), None);
    assert_eq!(dict.iter().count(), 0);
    assert_eq!(dict.table_sizes(), (0, 0));
    assert_eq!(dict.rehash_steps(100), 0);
    assert!(!dict.shrink_if_needed());
    dict.check_invariants();
}

#[test]
fn insert_get_replace_remove() {
    let mut dict = Dict::new(7);
    assert_eq!(dict.insert(key("k", 1), 10), None);
    assert_eq!(dict.insert(key("k", 1), 11), Some(10));
    assert_eq!(dict.len(), 1);
    assert_eq!(dict.get(&key("k", 1)), Some(&11));
    assert_eq!(dict.get_key_value(&key("k", 1)), Some((&*key("k", 1), &11)));
    *dict.get_mut(&key("k", 1)).unwrap() += 1;
    assert_eq!(dict.get(&key("k", 1)), Some(&12));
    assert!(dict.contains_key(&key("k", 1)));
    assert!(!dict.contains_key(&key("k", 2)));
    assert_eq!(dict.remove(&key("k", 1)), Some((key("k", 1), 12)));
    assert_eq!(dict.remove(&key("k", 1)), None);
    assert!(dict.is_empty());
    dict.check_invariants();
}

/// Random operations against a BTreeMap model. The key space breathes
/// (phases that mostly insert, then mostly remove) so the table grows
/// and shrinks many times, and no host rehash budget is granted in most
/// phases, so much of the run happens with a rehash in progress.
#[test]
fn matches_btreemap_model_under_random_operations() {
    for seed in 0..12u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut dict: Dict<u64> = Dict::new(seed);
        let mut model: BTreeMap<Box<[u8]>, u64> = BTreeMap::new();
        let (mut ops_rehashing, mut grows, mut shrinks) = (0usize, 0usize, 0usize);
        let ops = 30_000;
        for op in 0..ops {
            let phase = (op / 3_000) % 2;
            let insert_percent = if phase == 0 { 75 } else { 10 };
            let space = rng.gen_range(1..=3_000u64);
            let k = key("m", rng.gen_range(0..space));
            let sizes_before = dict.table_sizes();
            ops_rehashing += usize::from(dict.is_rehashing());
            let roll = rng.gen_range(0..100);
            if roll < insert_percent {
                let v = rng.gen::<u64>();
                assert_eq!(dict.insert(k.clone(), v), model.insert(k, v));
            } else if roll < 90 {
                // Mostly remove a present key, or the phases that should
                // empty the dict would mostly miss.
                let k = match model.range(k.clone()..).next() {
                    Some((present, _)) if rng.gen_bool(0.8) => present.clone(),
                    _ => k,
                };
                assert_eq!(dict.remove(&k), model.remove_entry(&k));
            } else if roll < 95 {
                assert_eq!(dict.get(&k), model.get(&k));
                assert_eq!(dict.contains_key(&k), model.contains_key(&k));
            } else if roll < 98 {
                let v = rng.gen::<u64>();
                match (dict.get_mut(&k), model.get_mut(&k)) {
                    (Some(a), Some(b)) => {
                        assert_eq!(a, b);
                        *a = v;
                        *b = v;
                    }
                    (None, None) => {}
                    other => panic!("get_mut mismatch: {other:?}"),
                }
            } else if roll < 99 {
                let budget = rng.gen_range(0..8);
                let work = dict.rehash_steps(budget);
                assert!(work <= budget * (EMPTY_VISITS_PER_BUCKET + 1) + dict.len());
            } else {
                dict.shrink_if_needed();
            }
            assert_eq!(dict.len(), model.len());
            // A resize started: a rehash target appeared, or (for an
            // empty dict) the main table was swapped at once.
            let (before, after) = (sizes_before, dict.table_sizes());
            if before.1 == 0 {
                let new_size = if after.1 != 0 { after.1 } else { after.0 };
                grows += usize::from(new_size > before.0 && before.0 != 0);
                shrinks += usize::from(new_size < before.0);
            }
            if op % 997 == 0 {
                dict.check_invariants();
            }
        }
        dict.check_invariants();
        let mut from_iter: Vec<(Vec<u8>, u64)> =
            dict.iter().map(|(k, v)| (k.to_vec(), *v)).collect();
        from_iter.sort();
        let expected: Vec<(Vec<u8>, u64)> = model.iter().map(|(k, v)| (k.to_vec(), *v)).collect();
        assert_eq!(from_iter, expected);
        let mut scanned = scan_all(&dict);
        scanned.sort();
        scanned.dedup();
        assert_eq!(scanned.len(), model.len());
        assert!(grows >= 5, "seed {seed}: only {grows} grows");
        assert!(shrinks >= 2, "seed {seed}: only {shrinks} shrinks");
        assert!(
            ops_rehashing * 10 >= ops,
            "seed {seed}: rehashing during only {ops_rehashing} of {ops} ops"
        );
    }
}

/// Lookups through `get` do not advance the rehash, so every entry must
/// be found whichever table it is in, at every point of a rehash.
#[test]
fn lookups_see_both_tables_at_every_rehash_step() {
    let n = 1_024u64;
    let mut dict = filled(3, "r", n);
    dict.rehash_steps(usize::MAX / 16);
    assert!(!dict.is_rehashing());
    assert_eq!(dict.table_sizes(), (1_024, 0));
    // The 1025th key starts a grow to 2048 buckets.
    dict.insert(key("r", n), n);
    assert!(dict.is_rehashing());
    assert_eq!(dict.table_sizes(), (1_024, 2_048));
    let mut steps = 0;
    while dict.is_rehashing() {
        for i in (0..=n).step_by(37) {
            assert_eq!(dict.get(&key("r", i)), Some(&i));
        }
        let mut seen = scan_all(&dict);
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), dict.len());
        assert_eq!(dict.iter().count(), dict.len());
        dict.check_invariants();
        dict.rehash_steps(8);
        steps += 1;
        assert!(steps <= 1_024, "rehash did not finish");
    }
    assert_eq!(dict.table_sizes(), (2_048, 0));
}

#[test]
fn grows_at_load_factor_one_and_shrinks_below_ten_percent() {
    let mut dict = Dict::new(11);
    dict.insert(key("g", 0), 0);
    assert_eq!(dict.table_sizes(), (4, 0));
    for i in 1..4 {
        dict.insert(key("g", i), i);
    }
    assert_eq!(dict.table_sizes(), (4, 0), "4 entries fit in 4 buckets");
    dict.insert(key("g", 4), 4);
    assert_eq!(dict.table_sizes().1, 8, "the 5th entry starts a grow to 8");
    for i in 5..1_000 {
        dict.insert(key("g", i), i);
    }
    dict.rehash_steps(1 << 20);
    assert_eq!(dict.table_sizes(), (1_024, 0));
    // 102 of 1024 is 9.96%: removing down to it starts a shrink to 128.
    for i in 102..1_000 {
        let expect_shrink = i == 102;
        dict.remove(&key("g", i));
        if !expect_shrink {
            assert!(!dict.is_rehashing() || dict.table_sizes().1 == 128);
        }
    }
    assert!(dict.is_rehashing());
    assert_eq!(dict.table_sizes().1, 128);
    dict.rehash_steps(1 << 20);
    assert_eq!(dict.table_sizes(), (128, 0));
    for i in 0..102 {
        assert_eq!(dict.get(&key("g", i)), Some(&i));
    }
    for i in 0..102 {
        dict.remove(&key("g", i));
        dict.rehash_steps(1 << 20);
    }
    assert!(dict.is_empty());
    assert_eq!(dict.table_sizes(), (4, 0));
    dict.check_invariants();
    assert!(!dict.shrink_if_needed());
}

#[test]
fn rehash_step_budget_is_counted_and_bounded() {
    let mut dict = Dict::new(5);
    for i in 0..4_096 {
        dict.insert(key("b", i), ());
    }
    dict.rehash_steps(1 << 20);
    assert_eq!(dict.table_sizes(), (4_096, 0));
    // 409 of 4096 buckets is under 10%: the remove that reaches it
    // starts a shrink to 512 and leaves a sparse old table to move.
    let mut removed = 0;
    while !dict.is_rehashing() {
        assert!(removed < 4_096, "no shrink started");
        dict.remove(&key("b", removed));
        removed += 1;
    }
    assert_eq!(dict.len(), 409);
    assert_eq!(dict.table_sizes(), (4_096, 512));
    // Each step moves one bucket, or gives up after 10 empty ones.
    let mut calls = 0;
    while dict.is_rehashing() {
        let work = dict.rehash_steps(1);
        assert!(work >= 1);
        assert!(work <= EMPTY_VISITS_PER_BUCKET + 1 + dict.len());
        calls += 1;
        assert!(calls <= 4_096, "rehash did not finish");
    }
    assert_eq!(dict.table_sizes(), (512, 0));
    dict.check_invariants();
}

#[test]
fn same_seed_same_order_other_seed_other_order() {
    let build = |seed| {
        let mut dict = filled(seed, "o", 2_000);
        for i in (0..2_000).step_by(3) {
            dict.remove(&key("o", i));
        }
        dict
    };
    let order = |dict: &Dict<u64>| dict.iter().map(|(_, v)| *v).collect::<Vec<_>>();
    let scan_order = |dict: &Dict<u64>| scan_all(dict);
    let (a, b, c) = (build(42), build(42), build(43));
    assert_eq!(order(&a), order(&b));
    assert_eq!(scan_order(&a), scan_order(&b));
    assert_ne!(order(&a), order(&c));
    let draw = |dict: &Dict<u64>| {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        (0..50)
            .map(|_| dict.random_key(&mut rng).unwrap().to_vec())
            .collect::<Vec<_>>()
    };
    assert_eq!(draw(&a), draw(&b));
}

/// Hashes are a pinned function of the seed, so a layout change (a new
/// hash, new key derivation) shows up here rather than as a silently
/// different SCAN order in the simulator's traces.
#[test]
fn hash_is_pinned() {
    let dict: Dict<()> = Dict::new(0);
    let mut state = 0;
    let (k0, k1) = (splitmix64(&mut state), splitmix64(&mut state));
    assert_eq!(
        dict.hash_key(b"foo"),
        SipHasher13::new_with_keys(k0, k1).hash(b"foo")
    );
    assert_eq!(k0, 0xe220_a839_7b1d_cdaf);
}

#[test]
fn random_key_is_fair() {
    let n = 64u64;
    let dict = filled(8, "f", n);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let draws = 64_000;
    let mut counts: BTreeMap<Vec<u8>, usize> = BTreeMap::new();
    for _ in 0..draws {
        *counts
            .entry(dict.random_key(&mut rng).unwrap().to_vec())
            .or_default() += 1;
    }
    assert_eq!(counts.len(), n as usize);
    let expected = draws / n as usize;
    for (k, c) in counts {
        assert!(
            c > expected * 7 / 10 && c < expected * 13 / 10,
            "{k:?} drawn {c} times, expected about {expected}"
        );
    }
}

#[test]
fn take_moves_everything_and_keeps_the_seed() {
    let mut dict = filled(77, "t", 100);
    let before: Vec<u64> = dict.iter().map(|(_, v)| *v).collect();
    let taken = dict.take();
    assert!(dict.is_empty());
    assert_eq!(dict.table_sizes(), (0, 0));
    assert_eq!(dict.seed(), 77);
    assert_eq!(taken.len(), 100);
    assert_eq!(taken.iter().map(|(_, v)| *v).collect::<Vec<_>>(), before);
    dict.insert(key("t", 1), 1);
    assert_eq!(dict.get(&key("t", 1)), Some(&1));
    taken.check_invariants();
    dict.check_invariants();
}

#[test]
fn memory_estimate_follows_the_size() {
    let mut dict = Dict::new(1);
    let empty = dict.memory_estimate_bytes();
    for i in 0..20_000 {
        dict.insert(key("mem", i), i);
    }
    let full = dict.memory_estimate_bytes();
    assert!(full > empty + 20_000 * mem::size_of::<Entry<u64>>());
    for i in 0..20_000 {
        dict.remove(&key("mem", i));
        dict.rehash_steps(4);
    }
    assert!(dict.memory_estimate_bytes() < empty + 8 * 1024);
}

/// The cursor sequence for a fixed 8-bucket table, as in the comment
/// above `scan`.
#[test]
fn cursor_counts_in_reverse_binary() {
    let mask = 7;
    let mut cursor = 0;
    let mut order = Vec::new();
    loop {
        order.push(cursor);
        cursor = next_cursor(cursor, mask);
        if cursor == 0 {
            break;
        }
    }
    assert_eq!(order, [0, 4, 2, 6, 1, 5, 3, 7]);
}

/// One SCAN iteration while other clients churn: between calls, keys
/// are inserted and removed, in bursts big enough to grow the table
/// several times and then shrink it, with the host granting random
/// rehash budgets.
fn scan_under_churn(
    seed: u64,
    stable_len: u64,
    grow_at: usize,
    grow_len: u64,
    shrink_after: usize,
) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut dict: Dict<u64> = Dict::new(seed ^ 0x5eed);
    let mut ever: BTreeSet<Vec<u8>> = BTreeSet::new();
    let mut churn: Vec<Box<[u8]>> = Vec::new();
    let mut churn_next = 0u64;
    for i in 0..stable_len {
        dict.insert(key("s", i), i);
        ever.insert(key("s", i).to_vec());
    }
    // Some stable keys are removed (and maybe re-added) during the
    // iteration; only the others must be returned.
    let mut removed_stable: BTreeSet<u64> = BTreeSet::new();
    let mut returned: BTreeSet<Vec<u8>> = BTreeSet::new();
    let mut cursor = 0u64;
    let mut calls = 0usize;
    let mut largest_table = dict.table_sizes().0;
    let (mut grew, mut shrank) = (false, false);
    let shrink_at = grow_at + shrink_after;
    loop {
        cursor = dict.scan(cursor, |k, _| {
            assert!(ever.contains(k), "returned a key that never existed");
            returned.insert(k.to_vec());
        });
        calls += 1;
        if cursor == 0 {
            break;
        }
        assert!(
            calls <= largest_table,
            "scan did not end within {largest_table} calls"
        );
        let sizes = dict.table_sizes();
        if calls == grow_at {
            for _ in 0..grow_len {
                let k = key("c", churn_next);
                churn_next += 1;
                ever.insert(k.to_vec());
                dict.insert(k.clone(), 0);
                churn.push(k);
            }
        } else if calls == shrink_at {
            while let Some(k) = churn.pop() {
                dict.remove(&k);
            }
        } else {
            for _ in 0..rng.gen_range(0..4) {
                match rng.gen_range(0..10) {
                    0..=4 => {
                        let k = key("c", churn_next);
                        churn_next += 1;
                        ever.insert(k.to_vec());
                        dict.insert(k.clone(), 0);
                        churn.push(k);
                    }
                    5..=7 if !churn.is_empty() => {
                        let k = churn.swap_remove(rng.gen_range(0..churn.len()));
                        dict.remove(&k);
                    }
                    8 if stable_len > 0 => {
                        let i = rng.gen_range(0..stable_len);
                        if dict.remove(&key("s", i)).is_some() {
                            removed_stable.insert(i);
                        } else {
                            dict.insert(key("s", i), i);
                        }
                    }
                    _ => {
                        dict.rehash_steps(rng.gen_range(0..64));
                    }
                }
            }
        }
        let after = dict.table_sizes();
        largest_table = largest_table.max(after.0).max(after.1);
        // A resize is under way (a rehash target of another size
        // exists) or has finished (the main table changed size).
        grew |= after.1 > after.0 || after.0 > sizes.0;
        shrank |= (after.1 != 0 && after.1 < after.0) || after.0 < sizes.0;
    }
    for i in 0..stable_len {
        if !removed_stable.contains(&i) {
            assert!(
                returned.contains(&*key("s", i)),
                "stable key s:{i} present throughout but not returned (seed {seed})"
            );
        }
    }
    if grow_at < calls && grow_len >= 2 * stable_len.max(4) {
        assert!(grew, "the burst did not grow the table");
    }
    if shrink_at < calls && grow_len >= 20 * stable_len.max(4) {
        assert!(shrank, "removing the burst did not shrink the table");
    }
    dict.check_invariants();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed), ..ProptestConfig::default() })]

    #[test]
    fn scan_returns_every_key_present_throughout(
        seed in any::<u64>(),
        stable_len in 0u64..200,
        grow_at in 1usize..40,
        grow_len in 0u64..6_000,
        shrink_after in 1usize..200,
    ) {
        scan_under_churn(seed, stable_len, grow_at, grow_len, shrink_after);
    }
}

/// Deterministic cases that certainly grow (4 -> 8192 buckets) and then
/// shrink mid-iteration, whatever proptest draws.
#[test]
fn scan_survives_growth_and_shrink() {
    for seed in 0..16 {
        scan_under_churn(seed, 20, 2, 5_000, 30);
        scan_under_churn(seed, 150, 5, 3_000, 3);
    }
}

/// `rehash_steps` reports one unit per bucket visited plus one per entry
/// moved, and the iterator's size hint is exact before, during and after
/// a rehash (found by cargo-mutants: neither was checked).
#[test]
fn rehash_work_counts_buckets_and_moved_entries_and_size_hint_is_exact() {
    let n = 1_024u64;
    let mut dict = filled(5, "w", n);
    dict.rehash_steps(usize::MAX / 16);
    let len = dict.len();
    assert_eq!(dict.iter().size_hint(), (len, Some(len)));
    // The 1025th key starts a grow (and runs one step of it).
    dict.insert(key("w", n), n);
    assert!(dict.is_rehashing());
    let len = dict.len();
    assert_eq!(dict.iter().size_hint(), (len, Some(len)));
    {
        let mut iter = dict.iter();
        iter.next();
        assert_eq!(iter.size_hint(), (len - 1, Some(len - 1)));
    }
    // The rehash stops at the last non-empty bucket of the old table.
    let start = dict.rehash_index;
    let last = (start..dict.tables[0].len())
        .rev()
        .find(|&b| dict.tables[0][b] != NIL)
        .expect("entries left to move");
    let moved = dict.used[0];
    let work = dict.rehash_steps(usize::MAX / 16);
    assert!(!dict.is_rehashing());
    assert_eq!(work, (last + 1 - start) + moved);
    assert_eq!(dict.iter().size_hint(), (len, Some(len)));
}

/// `upsert_with_meta` leaves the dict exactly as `get_mut_with_meta`
/// followed on a miss by `insert_with_meta` does (table layout, rehash
/// progress, slab order, meta words), through grows, shrinks and the
/// incremental rehashes between them.
#[test]
fn upsert_equals_lookup_then_insert() {
    let mut rng = ChaCha8Rng::seed_from_u64(22);
    let (mut one_hash, mut two_calls) = (Dict::<u64>::new(5), Dict::<u64>::new(5));
    let mut hits = 0;
    for step in 0..8_000u64 {
        let k = key("k", rng.gen_range(0..300));
        if rng.gen_ratio(1, 3) {
            assert_eq!(one_hash.remove(&k), two_calls.remove(&k));
        } else {
            let meta = step as u32;
            let a = one_hash.upsert_with_meta(&k, step, meta, |m| *m = meta);
            let b = match two_calls.get_mut_with_meta(&k) {
                Some((slot, m)) => {
                    *m = meta;
                    Some(std::mem::replace(slot, step))
                }
                None => two_calls.insert_with_meta(k.clone(), step, meta),
            };
            hits += usize::from(a.is_some());
            assert_eq!(a, b, "step {step}");
        }
        assert_eq!(
            format!("{one_hash:?}"),
            format!("{two_calls:?}"),
            "step {step}"
        );
    }
    assert!(hits > 1000, "{hits} replacements");
}
