//! Seeds with persistence and a crash: for each mode, the server crashes
//! at a seeded time, restarts over the crashed disk, and the recovery
//! checker (with every other checker) passes; each seed is deterministic.

use seedkv_sim::knobs::{Knobs, Overrides};
use seedkv_sim::persistence::PersistMode;
use seedkv_sim::run::{check_determinism, run, RunConfig, RunOptions};

/// Seeds per mode, and requests per run at most.
const SEEDS_COUNT: u64 = 8;
const TEST_OPS_MAX: u64 = 3_000;

fn config(seed: u64, mode: PersistMode) -> RunConfig {
    let drawn = Knobs::draw(seed, &Overrides::default()).ops_count;
    RunConfig {
        seed,
        bug: None,
        overrides: Overrides {
            ops: Some(drawn.min(TEST_OPS_MAX)),
            persistence: Some(mode),
            crash: true,
            ..Overrides::default()
        },
    }
}

fn crashes_recover(mode: PersistMode) {
    let mut crashes_count = 0;
    for seed in 0..SEEDS_COUNT {
        let config = config(seed, mode);
        let report = check_determinism(&config).unwrap_or_else(|v| {
            panic!(
                "{}: {}\nrepro: {}",
                v.checker,
                v.message,
                config.repro_line()
            )
        });
        assert!(
            !report.failed(),
            "seed {seed} failed: {:?}\nrepro: {}",
            report.violations,
            config.repro_line()
        );
        let options = RunOptions {
            keep_history: true,
            skip_checks: true,
            ..RunOptions::default()
        };
        let history = run(&config, options).history.expect("kept");
        let record = history.persist.expect("a persistence run records");
        if let Some(crash) = &record.crash {
            // A restart may refuse a torn AOF tail (as Redis does); the
            // recovery checker judged that above.
            let clean = crash.restart_error.is_none() && crash.inspect_error.is_none();
            assert!(
                clean || crash.restart_fault_injected,
                "seed {seed}: {crash:?}"
            );
            crashes_count += 1;
        }
    }
    // A run may end before its crash (all clients finished early); most
    // do not.
    assert!(crashes_count * 2 >= SEEDS_COUNT, "{crashes_count} crashes");
}

#[test]
fn rdb_crashes_recover_a_snapshot() {
    crashes_recover(PersistMode::Rdb);
}

#[test]
fn aof_no_crashes_recover_a_prefix() {
    crashes_recover(PersistMode::AofNo);
}

#[test]
fn aof_always_crashes_keep_every_acknowledged_write() {
    crashes_recover(PersistMode::AofAlways);
}

#[test]
fn aof_everysec_crashes_lose_at_most_the_window() {
    crashes_recover(PersistMode::AofEverysec);
}

#[test]
fn a_run_without_persistence_records_none() {
    let config = RunConfig {
        seed: 1,
        bug: None,
        overrides: Overrides {
            ops: Some(500),
            ..Overrides::default()
        },
    };
    let options = RunOptions {
        keep_history: true,
        skip_checks: true,
        ..RunOptions::default()
    };
    assert!(run(&config, options)
        .history
        .expect("kept")
        .persist
        .is_none());
}
