//! Times the keyspace dict against a BTreeMap on one million keys:
//! `cargo run --release -p seedkv-engine --example dict_bench`.
//! Prints the times; the lookups and removals are verified before printing.

use std::collections::BTreeMap;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use seedkv_engine::dict::Dict;

fn key(prefix: &str, i: u64) -> Box<[u8]> {
    format!("{prefix}:{i}").into_bytes().into_boxed_slice()
}

fn main() {
    let n = 1_000_000u64;
    // Shuffled, so that the BTreeMap yardstick below does not get the
    // cache-friendly sorted insertion order for free.
    let mut keys: Vec<Box<[u8]>> = (0..n).map(|i| key("key", i)).collect();
    rand::seq::SliceRandom::shuffle(&mut keys[..], &mut ChaCha8Rng::seed_from_u64(5));
    let mut dict = Dict::new(1);
    let start = std::time::Instant::now();
    for (i, k) in keys.iter().enumerate() {
        dict.insert(k.clone(), i as u64);
    }
    let inserted = start.elapsed();
    assert_eq!(dict.len(), n as usize);
    let start = std::time::Instant::now();
    let mut found = 0u64;
    for k in &keys {
        found += u64::from(dict.get(k).is_some());
    }
    let looked_up = start.elapsed();
    assert_eq!(found, n);
    let start = std::time::Instant::now();
    for k in &keys {
        assert!(dict.remove(k).is_some());
    }
    let removed = start.elapsed();
    assert!(dict.is_empty());
    println!(
        "dict 1M: insert {inserted:?} (includes key clone), get {looked_up:?}, \
         remove {removed:?}, tables {:?}",
        dict.table_sizes()
    );
    // The same work on a BTreeMap, as a yardstick on a machine whose
    // speed and load are unknown.
    let mut tree = BTreeMap::new();
    let start = std::time::Instant::now();
    for (i, k) in keys.iter().enumerate() {
        tree.insert(k.clone(), i as u64);
    }
    let inserted = start.elapsed();
    let start = std::time::Instant::now();
    let found = keys.iter().filter(|k| tree.contains_key(*k)).count();
    let looked_up = start.elapsed();
    assert_eq!(found as u64, n);
    let start = std::time::Instant::now();
    for k in &keys {
        assert!(tree.remove(k).is_some());
    }
    let removed = start.elapsed();
    println!("BTreeMap 1M: insert {inserted:?}, get {looked_up:?}, remove {removed:?}");
}
