//! See `seedkv_fuzz::client_stream` (fuzz/src/client_stream.rs) for what this target checks.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| seedkv_fuzz::client_stream::run(data));
