//! `seedkv-sim report latency` on a small instance: the table is a pure
//! function of the seed (an insta snapshot), and it has seed 002's shape —
//! KEYS * and DEL of the big hash raise PING max by more than ten times
//! over idle, SCAN COUNT 1000 and UNLINK barely move it.
//!
//! 100k keys and a 150k-field hash: large enough that a KEYS over every key
//! (≈ 30 ms of virtual CPU) stands well clear of the network model's
//! spikes (≈ 1 ms, the idle max), small enough to run in seconds.

use seedkv_sim::report::chart::write_svg;
use seedkv_sim::report::latency::{run_latency, LatencyConfig, LatencyReport, Row};

const SMALL: LatencyConfig = LatencyConfig {
    seed: 7,
    keys_count: 100_000,
    hash_fields_count: 150_000,
    snapshot_reads: false,
};

fn row<'a>(report: &'a LatencyReport, prefix: &str) -> &'a Row {
    report
        .row(prefix)
        .unwrap_or_else(|| panic!("no row {prefix:?} in\n{}", report.text()))
}

#[test]
fn latency_report_has_the_seed_shape_and_is_a_snapshot() {
    let report = run_latency(&SMALL).expect("the data checks out");
    let text = report.text();
    let idle = row(&report, "(nothing)");
    let keys_all = row(&report, "KEYS *");
    let keys_prefix = row(&report, "KEYS k:1*");
    let scan = row(&report, "SCAN");
    let del = row(&report, "DEL");
    let unlink = row(&report, "UNLINK");
    for r in &report.rows {
        assert!(r.pings_count > 1_000, "every window has PINGs:\n{text}");
    }
    assert!(keys_all.max_ns > 10 * idle.max_ns, "KEYS * blocks:\n{text}");
    assert!(
        keys_prefix.max_ns > 10 * idle.max_ns,
        "KEYS k:1* visits every key too:\n{text}"
    );
    assert!(del.max_ns > 10 * idle.max_ns, "DEL frees inline:\n{text}");
    assert!(
        unlink.max_ns < del.max_ns / 10,
        "UNLINK frees in the background:\n{text}"
    );
    assert!(
        scan.max_ns < keys_all.max_ns / 10,
        "SCAN yields between calls:\n{text}"
    );
    assert!(
        scan.max_ns < 2 * idle.max_ns,
        "SCAN barely moves the max:\n{text}"
    );
    assert!(
        unlink.max_ns < 2 * idle.max_ns,
        "UNLINK barely moves the max:\n{text}"
    );
    // Averages hide it: the median stays where it was.
    assert!(keys_all.p50_ns < 2 * idle.p50_ns, "{text}");
    assert!(
        report.background_busy_ns > 0,
        "UNLINK used the background CPU"
    );
    insta::assert_snapshot!("latency_small", text);
}

#[test]
fn same_seed_same_bytes_and_the_chart_is_written() {
    let config = LatencyConfig {
        seed: 3,
        keys_count: 3_000,
        hash_fields_count: 2_000,
        snapshot_reads: false,
    };
    let a = run_latency(&config).expect("the data checks out");
    let b = run_latency(&config).expect("the data checks out");
    assert_eq!(a.text(), b.text());
    let other = run_latency(&LatencyConfig { seed: 4, ..config }).expect("checks out");
    assert_ne!(a.pings, other.pings, "the seed drives the network draws");

    let path = std::env::temp_dir().join(format!("seedkv-report-{}.svg", std::process::id()));
    write_svg(&a, &path).expect("chart written");
    let svg = std::fs::read_to_string(&path).expect("chart readable");
    let _ = std::fs::remove_file(&path);
    assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(200)]);
    for label in [
        "KEYS *: max",
        "SCAN COUNT 1000: max",
        "DEL: max",
        "UNLINK: max",
        "virtual time (s)",
    ] {
        assert!(svg.contains(label), "the chart names {label:?}");
    }
}

#[test]
fn bad_sizes_are_refused() {
    for (keys_count, hash_fields_count) in [(0, 10), (10, 0), (u64::MAX, 10)] {
        let config = LatencyConfig {
            seed: 0,
            keys_count,
            hash_fields_count,
            snapshot_reads: false,
        };
        assert!(run_latency(&config).is_err());
    }
}
