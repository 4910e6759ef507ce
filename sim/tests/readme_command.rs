//! The README's main command, `cargo run --release -p seedkv-sim -- sweep`,
//! must name one binary: seedkv-sim has two (`seedkv-sim`, `seedkv-load`),
//! and without `default-run` cargo refuses to pick (the command was broken
//! that way for a while with every test green).

use std::path::Path;

#[test]
fn the_readme_sweep_command_runs_the_simulator_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("../README.md")).expect("README.md");
    assert!(
        readme.contains("cargo run --release -p seedkv-sim -- sweep"),
        "the README's main command changed: update this test"
    );
    let bins = std::fs::read_dir(root.join("src/bin"))
        .expect("sim/src/bin")
        .count();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("Cargo.toml");
    let default_run = manifest
        .lines()
        .find_map(|l| l.trim().strip_prefix("default-run"))
        .map(|v| {
            v.trim_start_matches([' ', '='])
                .trim()
                .trim_matches('"')
                .to_string()
        });
    if bins > 1 {
        assert_eq!(
            default_run.as_deref(),
            Some("seedkv-sim"),
            "sim has {bins} binaries: `cargo run -p seedkv-sim` needs default-run = \"seedkv-sim\""
        );
    }
    assert!(root.join("src/bin/seedkv-sim.rs").exists());
}
