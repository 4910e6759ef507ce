//! See `seedkv_fuzz::rdb_payload` (fuzz/src/rdb_payload.rs) for what this target checks.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| seedkv_fuzz::rdb_payload::run(data));
