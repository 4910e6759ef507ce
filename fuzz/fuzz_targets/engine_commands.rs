//! See `seedkv_fuzz::engine_commands` (fuzz/src/engine_commands.rs) for what this target checks.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| seedkv_fuzz::engine_commands::run(data));
