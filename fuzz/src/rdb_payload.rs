//! RESTORE's loader on arbitrary bytes: `data` is an object as DUMP writes
//! it (type byte, then the payload) and the target appends a valid footer
//! (RDB version and the CRC64 of it all), so that the fuzzer spends its time
//! in the loader rather than on checksums.
//!
//! Checks: loading never panics; a value that loads re-serializes to a
//! payload that loads back to the same value; and the work charged is
//! bounded by what the input can hold (LZF expands ~88x at most), so no
//! payload makes the command thread do more than its size justifies.

use seedkv_engine::rdb::codec::CRC64;
use seedkv_engine::rdb::dump;
use seedkv_engine::rdb::object::Build;
use seedkv_engine::rdb::RDB_VERSION;
use seedkv_engine::types::Limits;

/// Work units a payload of `n` bytes may cost at most.
fn work_bound_units(n: usize) -> u64 {
    100 * n as u64 + 100
}

fn with_footer(object: &[u8]) -> Vec<u8> {
    let mut p = object.to_vec();
    p.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = CRC64.checksum(&p);
    p.extend_from_slice(&crc.to_le_bytes());
    p
}

pub fn run(data: &[u8]) {
    let build = Build {
        limits: Limits {
            // Small thresholds, so that conversions on load are exercised.
            hash_max_listpack_entries: 4,
            zset_max_listpack_entries: 4,
            set_max_intset_entries: 4,
            ..Limits::default()
        },
        seed: 1,
    };
    let payload = with_footer(data);
    let Ok((value, work_units)) = dump::load(&payload, build) else {
        return;
    };
    assert!(
        work_units <= work_bound_units(payload.len()),
        "{work_units} work units for a {}-byte payload",
        payload.len()
    );
    for compress in [true, false] {
        let (_, again) = dump::create(&value, compress);
        let (back, _) = dump::load(&again, build).expect("a payload we wrote loads");
        assert_eq!(back, value, "round trip (compress {compress})");
    }
}
