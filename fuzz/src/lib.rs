//! The logic of seedkv's fuzz targets, as plain functions.
//!
//! Each `fuzz_targets/*.rs` binary is a one-line wrapper around a function
//! here, so that the same checks run three ways: under libFuzzer
//! (`cargo fuzz run -s none TARGET`), when `cargo test` in the root
//! workspace replays every committed seed and regression file
//! (`tests/tests/fuzz_corpus.rs` includes this file by path), and from any
//! other harness. A check that fails panics with an account of what broke.

pub mod acl_rules;
pub mod adversarial;
pub mod client_stream;
pub mod engine_commands;
pub mod rdb_file;
pub mod rdb_payload;
pub mod resp_parse;
pub mod sim_schedule;
pub mod slow;
pub mod templates;

/// A target's check: panics if `data` shows a bug.
pub type Check = fn(data: &[u8]);

/// The fuzz targets, by name: what `cargo fuzz run NAME` runs.
pub const TARGETS: &[(&str, Check)] = &[
    ("resp_parse", resp_parse::run),
    ("engine_commands", engine_commands::run),
    ("client_stream", client_stream::run),
    ("sim_schedule", sim_schedule::run),
    ("rdb_payload", rdb_payload::run),
    ("rdb_file", rdb_file::run),
    ("acl_rules", acl_rules::run),
];
