//! The probe (`seedkv-sim probe`, issue 9) over real sockets: a short probe
//! passes every checker against seedkv-server and against Debian's
//! redis-server (skipped, with the reason printed, when it is absent), and
//! reports the violation against seedkv-server with a planted bug on.
//!
//! Nothing here asserts wall-clock time: the probes are bounded by their
//! op budget (a few thousand requests, about a second each), with a
//! generous duration cap that only a hung server would reach.

use std::time::Duration;

use seedkv_sim::probe::{probe, ProbeConfig};
use seedkv_sim::workload::WorkloadKind;
use seedkv_tests::{redis_server, ServerProcess};

fn config(port: u16, ops: u64) -> ProbeConfig {
    ProbeConfig {
        ops,
        duration: Duration::from_secs(120),
        seed: 7,
        ..ProbeConfig::new(&format!("127.0.0.1:{port}"))
    }
}

fn workloads(names: &[&str]) -> Vec<WorkloadKind> {
    names
        .iter()
        .map(|n| WorkloadKind::from_name(n).expect("a workload"))
        .collect()
}

#[test]
fn a_short_probe_passes_every_checker_against_seedkv_server() {
    let server = ServerProcess::seedkv(&[]);
    let report = probe(&config(server.port, 5_000)).expect("the probe runs");
    let text = report.render();
    println!("{text}");
    assert!(report.passed(), "{text}");
    assert!(report.ops_count() >= 3_000, "{text}");
    assert_eq!(report.verdicts.len(), 7, "{text}");
    // The transfer and pub/sub workloads ran, and messages were routed.
    let names: Vec<&str> = report.verdicts.iter().map(|v| v.name).collect();
    assert!(
        names.contains(&"transfer") && names.contains(&"pubsub"),
        "{text}"
    );
    let transfer_ops = report
        .history
        .ops
        .iter()
        .filter(|op| op.workload == "transfer");
    assert!(transfer_ops.count() > 0, "{text}");
    assert!(!report.history.pubsub.deliveries.is_empty(), "{text}");
    // Faults were drawn and injected (DEBUG SLEEP and CLIENT PAUSE may be
    // refused: counted as skipped, never as errors).
    let injected: u64 = report.faults_injected.iter().map(|(_, n)| n).sum();
    assert!(injected > 0, "{text}");
}

#[test]
fn a_short_probe_passes_every_checker_against_redis_server() {
    let Some(server) = redis_server() else { return };
    let report = probe(&config(server.port, 5_000)).expect("the probe runs");
    let text = report.render();
    println!("{text}");
    assert!(report.server.starts_with("redis-server"), "{text}");
    assert!(report.passed(), "{text}");
    assert!(!report.history.pubsub.deliveries.is_empty(), "{text}");
    assert!(report.ops_count() >= 3_000, "{text}");
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "the release seedkv-server has no --bug"
)]
fn the_probe_reports_a_lost_update_of_incr_not_atomic() {
    let server = ServerProcess::seedkv(&["--bug", "incr-not-atomic"]);
    let mut c = config(server.port, 4_000);
    c.workloads = workloads(&["counter"]);
    c.clients = 3;
    let report = probe(&c).expect("the probe runs");
    let text = report.render();
    println!("{text}");
    assert!(!report.passed(), "{text}");
    assert!(
        report.violations().any(|v| v.checker == "atomicity"),
        "{text}"
    );
    assert!(text.contains("FAIL [atomicity]"), "{text}");
    assert!(text.contains("history excerpt"), "{text}");
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "the release seedkv-server has no --bug"
)]
fn the_probe_reports_a_reply_to_the_wrong_connection() {
    let server = ServerProcess::seedkv(&["--bug", "reply-to-wrong-connection"]);
    let mut c = config(server.port, 6_000);
    c.workloads = workloads(&["kv", "counter", "pipeline", "ping"]);
    c.clients = 4;
    let report = probe(&c).expect("the probe runs");
    let text = report.render();
    println!("{text}");
    assert!(!report.passed(), "{text}");
    assert!(
        report.violations().any(|v| v.checker == "pipeline-order"),
        "{text}"
    );
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "the release seedkv-server has no --bug"
)]
fn the_probe_reports_a_reader_seeing_half_a_script_transfer() {
    let server = ServerProcess::seedkv(&["--bug", "script-partial-visible"]);
    let mut c = config(server.port, 4_000);
    c.workloads = workloads(&["transfer"]);
    c.clients = 4;
    let report = probe(&c).expect("the probe runs");
    let text = report.render();
    println!("{text}");
    assert!(!report.passed(), "{text}");
    assert!(text.contains("FAIL [transfer]"), "{text}");
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "the release seedkv-server has no --bug"
)]
fn the_probe_reports_a_message_delivered_twice() {
    let server = ServerProcess::seedkv(&["--bug", "publish-twice"]);
    let mut c = config(server.port, 4_000);
    c.workloads = workloads(&["pubsub", "pubsub", "pubsub", "pubsub"]);
    c.clients = 4;
    let report = probe(&c).expect("the probe runs");
    let text = report.render();
    println!("{text}");
    assert!(!report.passed(), "{text}");
    assert!(text.contains("FAIL [pubsub]"), "{text}");
}

#[test]
fn the_probe_refuses_a_non_loopback_address() {
    let e = probe(&ProbeConfig::new("10.0.0.1:6379")).unwrap_err();
    assert!(e.contains("not a loopback address"), "{e}");
}
