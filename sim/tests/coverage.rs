//! Coverage: the default sweep sends every command of the engine's command
//! table with each of its options, and reaches every shape the coverage
//! module lists. The `rare` workload is what guarantees that, so these
//! tests run it (and the workloads that make the contention shapes) on a
//! few seeds, fail listing whatever is at zero, and check that the default
//! draw gives seeds `rare` and `rare-solo`.

use seedkv_sim::coverage::Coverage;
use seedkv_sim::knobs::{Knobs, Overrides};
use seedkv_sim::run::{run, RunConfig, RunOptions};
use seedkv_sim::workload::WorkloadKind;

/// Runs `seed` with only `workloads` (one client each) and checks it.
fn covered(seed: u64, workloads: &[WorkloadKind], ops: Option<u64>) -> Coverage {
    let config = RunConfig {
        seed,
        bug: None,
        overrides: Overrides {
            clients: Some(workloads.len() as u32),
            ops,
            workloads: Some(workloads.to_vec()),
            ..Overrides::default()
        },
    };
    let report = run(&config, RunOptions::default());
    assert!(
        !report.failed(),
        "seed {seed} failed: {:?}\nrepro: {}",
        report.violations,
        config.repro_line()
    );
    report.coverage
}

#[test]
fn rare_workloads_send_every_command_option_and_shape() {
    use WorkloadKind::{Contention, Rare, RareSolo};
    let mut coverage = Coverage::default();
    for seed in 0..3 {
        coverage.merge(&covered(seed, &[Rare], None));
    }
    coverage.merge(&covered(0, &[RareSolo], None));
    // Several clients parked on one key, several watching one key.
    coverage.merge(&covered(0, &[Contention; 3], Some(2_000)));
    let missing = (
        coverage.commands_missing(),
        coverage.options_missing(),
        coverage.shapes_missing(),
    );
    assert!(
        missing.0.is_empty() && missing.1.is_empty() && missing.2.is_empty(),
        "never exercised:\n  commands: {:?}\n  options: {:?}\n  shapes: {:?}\n{}",
        missing.0,
        missing.1,
        missing.2,
        coverage.report(false)
    );
}

#[test]
fn the_default_draw_runs_rare_and_rare_solo() {
    let mut rare = 0;
    let mut solo = 0;
    for seed in 0..1000 {
        let knobs = Knobs::draw(seed, &Overrides::default());
        rare += knobs.workloads.contains(&WorkloadKind::Rare) as u32;
        if knobs.workloads.contains(&WorkloadKind::RareSolo) {
            assert_eq!(knobs.workloads, [WorkloadKind::RareSolo], "seed {seed}");
            assert_eq!(knobs.clients_count, 1, "seed {seed}");
            solo += 1;
        }
    }
    // Half the seeds, one in eight of them alone (binomial; these bounds
    // are far outside its spread for 1000 seeds).
    assert!((350..650).contains(&rare), "{rare} seeds with rare");
    assert!((30..110).contains(&solo), "{solo} seeds with rare-solo");
}

#[test]
fn coverage_counts_full_names_and_options_of_executed_requests() {
    let coverage = covered(0, &[WorkloadKind::Rare], None);
    assert!(coverage.commands["client|list"] >= 1);
    assert!(coverage.commands["latency|latest"] >= 1);
    // EVAL's calls are counted by the name the engine recorded.
    assert!(coverage.commands["eval"] >= 1);
    assert!(coverage.options[&("set".to_string(), "KEEPTTL")] >= 1);
    assert!(coverage.shapes["ttl-removed-by:expiry"] >= 1);
    let report = coverage.report(true);
    assert!(report.contains("commands sent (executed by the engine):"));
    assert!(report.contains("client|kill"));
}
