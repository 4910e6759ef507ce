//! The RDB file loader on arbitrary bytes: `data` is a whole file, loaded
//! once with checksums off (so that the fuzzer's edits reach the opcodes
//! and values instead of dying on the CRC) and once with them on.
//!
//! Checks: loading never panics; the work charged is bounded by what the
//! input can hold (LZF expands ~88x at most); no more bytes are consumed
//! than given; and a file that loads writes back (compressed and not,
//! checksummed) to a file that loads to the same keyspace.

use seedkv_engine::config::MaxmemoryPolicy;
use seedkv_engine::db::Keyspace;
use seedkv_engine::rdb::file::{load_file, write_file, LoadOptions, SaveOptions};
use seedkv_engine::rdb::object::Build;
use seedkv_engine::types::Limits;

/// Work units a file of `n` bytes may cost at most.
fn work_bound_units(n: usize) -> u64 {
    100 * n as u64 + 100
}

/// 2023-11-14T22:13:20Z: the seeds' TTLs lie on both sides of it.
const NOW_MS: u64 = 1_700_000_000_000;

fn options(checksum: bool, drop_expired: bool) -> LoadOptions {
    LoadOptions {
        now_ms: NOW_MS,
        checksum,
        drop_expired,
        build: Build {
            limits: Limits {
                // Small thresholds, so that conversions on load are exercised.
                hash_max_listpack_entries: 4,
                zset_max_listpack_entries: 4,
                set_max_intset_entries: 4,
                ..Limits::default()
            },
            seed: 1,
        },
    }
}

pub fn run(data: &[u8]) {
    let mut checked = Keyspace::new(1);
    if let Ok(report) = load_file(data, &options(true, true), &mut checked) {
        assert!(report.consumed_bytes <= data.len());
    }
    let mut keyspace = Keyspace::new(1);
    let report = match load_file(data, &options(false, false), &mut keyspace) {
        Ok(report) => report,
        Err(e) => {
            // Failures are reported, never a panic; the text must build.
            assert!(!e.log_lines().is_empty());
            return;
        }
    };
    assert!(report.consumed_bytes <= data.len());
    assert!(
        report.work_units <= work_bound_units(data.len()),
        "{} work units for a {}-byte file",
        report.work_units,
        data.len()
    );
    for compress in [true, false] {
        let opts = SaveOptions {
            now_ms: NOW_MS,
            compress,
            checksum: true,
            aof_base: false,
            used_mem_bytes: 0,
            maxmemory_policy: MaxmemoryPolicy::NoEviction,
            lfu_decay_time_min: 1,
            repl: None,
        };
        let mut file = Vec::new();
        write_file(&keyspace, &[], &opts, &mut |chunk| {
            file.extend_from_slice(chunk)
        });
        let mut back = Keyspace::new(1);
        let again = load_file(&file, &options(true, false), &mut back)
            .unwrap_or_else(|e| panic!("a file we wrote loads (compress {compress}): {e}"));
        assert_eq!(again.consumed_bytes, file.len());
        assert_eq!(again.keys_loaded, report.keys_loaded);
        assert_same(&keyspace, &back, compress);
    }
}

fn assert_same(a: &Keyspace, b: &Keyspace, compress: bool) {
    for (x, y) in a.dbs.iter().zip(&b.dbs) {
        assert_eq!(x.len(), y.len(), "db {} (compress {compress})", x.id);
        for (key, value) in x.keys.iter() {
            assert_eq!(y.get(key), Some(value), "db {} {key:?}", x.id);
            assert_eq!(y.get_expire(key), x.get_expire(key), "db {} {key:?}", x.id);
        }
    }
}
