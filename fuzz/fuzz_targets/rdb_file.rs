//! See `seedkv_fuzz::rdb_file` (fuzz/src/rdb_file.rs) for what this target checks.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| seedkv_fuzz::rdb_file::run(data));
