//! See `seedkv_fuzz::resp_parse` (fuzz/src/resp_parse.rs) for what this target checks.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| seedkv_fuzz::resp_parse::run(data));
