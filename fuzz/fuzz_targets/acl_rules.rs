//! See `seedkv_fuzz::acl_rules` (fuzz/src/acl_rules.rs) for what this target checks.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| seedkv_fuzz::acl_rules::run(data));
