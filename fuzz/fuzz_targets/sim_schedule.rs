//! See `seedkv_fuzz::sim_schedule` (fuzz/src/sim_schedule.rs) for what this target checks.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| seedkv_fuzz::sim_schedule::run(data));
