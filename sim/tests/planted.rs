//! Proof that the simulator finds bugs: for each planted engine bug, seeds
//! from 0 are run with the bug until a checker fails. The failure must come
//! within a stated number of seeds, re-running its [`RunConfig`] (what the
//! printed repro line encodes) must fail the same way with the same trace
//! hash, and the clean engine must pass every seed the search ran.
//!
//! Runs are shortened to [`TEST_OPS_MAX`] requests so that the whole file
//! stays well under a minute on two cores; `seedkv-sim sweep --bug NAME`
//! hunts with the full drawn sizes.

use seedkv_engine::PlantedBug;
use seedkv_sim::knobs::{Knobs, Overrides};
use seedkv_sim::persistence::PersistMode;
use seedkv_sim::run::{run, RunConfig, RunOptions, RunReport};
use seedkv_sim::sweep::{sweep, SweepConfig};
use seedkv_sim::workload::WorkloadKind;

/// Requests per run at most.
const TEST_OPS_MAX: u64 = 3_000;

fn config(seed: u64, bug: Option<PlantedBug>, base: &Overrides) -> RunConfig {
    let drawn = Knobs::draw(seed, base).ops_count;
    RunConfig {
        seed,
        bug,
        overrides: Overrides {
            ops: Some(drawn.min(TEST_OPS_MAX)),
            ..base.clone()
        },
    }
}

/// Runs seeds `0..seeds_max` with `bug` until one fails; checks the repro
/// and the clean engine on the seeds it took. Returns the failing report.
fn hunt(bug: PlantedBug, seeds_max: u64, checkers: &[&str]) -> RunReport {
    hunt_with(bug, seeds_max, checkers, &Overrides::default())
}

/// [`hunt`] with the run's workloads fixed (`--workloads`).
fn hunt_in(
    bug: PlantedBug,
    seeds_max: u64,
    checkers: &[&str],
    workloads: Option<&[WorkloadKind]>,
) -> RunReport {
    let base = Overrides {
        workloads: workloads.map(<[WorkloadKind]>::to_vec),
        ..Overrides::default()
    };
    hunt_with(bug, seeds_max, checkers, &base)
}

/// [`hunt`] with `base` overrides (workloads, persistence, a crash).
fn hunt_with(bug: PlantedBug, seeds_max: u64, checkers: &[&str], base: &Overrides) -> RunReport {
    let found = (0..seeds_max)
        .map(|seed| run(&config(seed, Some(bug), base), RunOptions::default()))
        .find(RunReport::failed)
        .unwrap_or_else(|| panic!("{}: not found in {seeds_max} seeds", bug.name()));
    let seed = found.config.seed;
    let checker = found.first_checker().expect("failed");
    assert!(
        checkers.contains(&checker),
        "{}: seed {seed} failed {checker}, expected one of {checkers:?}: {:?}",
        bug.name(),
        found.violations
    );

    // The repro line names everything the run depends on...
    let line = found.config.repro_line();
    assert!(
        line.contains(&format!("--seed {seed} --bug {}", bug.name())),
        "{line}"
    );
    assert!(line.contains(&found.config.overrides.flags()), "{line}");
    // ...and running it again gives the same run, bit for bit.
    let again = run(&found.config, RunOptions::default());
    assert_eq!(
        again.trace_hash,
        found.trace_hash,
        "{}: repro of seed {seed} diverged",
        bug.name()
    );
    assert_eq!(
        again.violations,
        found.violations,
        "{}: repro of seed {seed}",
        bug.name()
    );

    // The clean engine passes the same seeds: the failure is the bug's.
    for s in 0..=seed {
        let clean = run(&config(s, None, base), RunOptions::default());
        assert!(
            !clean.failed(),
            "clean engine fails seed {s}: {:?}\nrepro: {}",
            clean.violations,
            clean.config.repro_line()
        );
    }
    println!(
        "{}: found at seed {seed} by {checker}, trace hash {:016x}; repro: {line}",
        bug.name(),
        found.trace_hash
    );
    found
}

#[test]
fn scan_skips_rehash_buckets_is_found() {
    hunt(
        PlantedBug::ScanSkipsRehashBuckets,
        50,
        &["scan-completeness"],
    );
}

#[test]
fn partial_write_drops_reply_is_found() {
    hunt(
        PlantedBug::PartialWriteDropsReply,
        20,
        &["pipeline-order", "liveness"],
    );
}

#[test]
fn incr_not_atomic_is_found() {
    hunt(
        PlantedBug::IncrNotAtomic,
        20,
        &["atomicity", "reference-model", "linearizability"],
    );
}

#[test]
fn expiry_off_by_one_ms_is_found() {
    // Caught only when a read lands in the millisecond a key expires: the
    // ttl workload's expiry probes (a PX of a few ms, then reads every
    // fraction of a millisecond) aim at it. The hunt runs the core
    // workloads, so that the collection draw's extra clients do not move
    // the seeds.
    use WorkloadKind::*;
    let core = [
        Kv, Counter, Ttl, Big, Pipeline, Hashes, Sets, Lists, Transfer,
    ];
    hunt_in(
        PlantedBug::ExpiryOffByOneMs,
        20,
        &["reference-model", "linearizability", "scan-completeness"],
        Some(&core),
    );
}

#[test]
fn lazy_free_still_reachable_is_found() {
    hunt(
        PlantedBug::LazyFreeStillReachable,
        20,
        &["reference-model", "linearizability"],
    );
}

#[test]
fn reply_to_wrong_connection_is_found() {
    hunt(PlantedBug::ReplyToWrongConnection, 20, &["pipeline-order"]);
}

#[test]
fn exec_interleaved_is_found() {
    hunt(
        PlantedBug::ExecInterleaved,
        20,
        // `rare` pipelines MULTI/EXEC then more commands: the ones EXEC
        // left behind run after the next input, whose replies then come
        // out of order.
        &["group-atomicity", "transfer", "pipeline-order"],
    );
}

#[test]
fn watch_ignores_expiry_is_found() {
    hunt(PlantedBug::WatchIgnoresExpiry, 20, &["transfer"]);
}

/// The scripting code plants this one (a script's writes visible to other
/// clients before it ends); the transfer readers and the group checker
/// are what must catch it.
#[test]
fn script_partial_visible_is_found() {
    hunt(
        PlantedBug::ScriptPartialVisible,
        20,
        &["group-atomicity", "transfer"],
    );
}

#[test]
fn publish_twice_is_found() {
    hunt(PlantedBug::PublishTwice, 20, &["pubsub"]);
}

/// A panicking engine is a failure of its seed, not the end of the sweep:
/// the failure names the panic and its repro line replays it, and the
/// sweep runs every other seed and reports them.
#[test]
fn lindex_panics_is_a_failure_of_its_seed_and_the_sweep_goes_on() {
    let found = hunt(PlantedBug::LindexPanics, 20, &["panic"]);
    let message = &found.violations[0].message;
    assert!(message.contains("index out of bounds"), "{message}");
    // The buggy LINDEX is the planted one, swapped into the command table.
    assert!(message.contains("planted/commands.rs"), "{message}");

    let seeds_count = 20;
    let summary = sweep(
        &SweepConfig {
            start: 0,
            seeds_count,
            jobs: 2,
            shard_index: 0,
            shard_count: 1,
            bug: Some(PlantedBug::LindexPanics),
            overrides: Overrides {
                ops: Some(TEST_OPS_MAX),
                ..Overrides::default()
            },
            stop_at_first_failure: false,
            skip_checks: false,
        },
        &|_| {},
    );
    assert_eq!(summary.seeds_count, seeds_count, "every seed ran");
    assert!(summary.failures_count >= 1);
    assert!(
        summary.failures_count < seeds_count,
        "some seeds never send such an LINDEX, and pass"
    );
    for failure in &summary.failures {
        assert_eq!(
            failure.first_checker(),
            Some("panic"),
            "{:?}",
            failure.violations
        );
        assert!(failure.config.repro_line().contains(&format!(
            "--seed {} --bug lindex-panics",
            failure.config.seed
        )));
    }
}

/// An O(N) command charged quadratically: only the no-freeze invariant
/// (its work against LREM's declared O(N) over the list it walked) can
/// see it; every reply stays right.
#[test]
fn lrem_quadratic_is_found() {
    hunt(PlantedBug::LremQuadratic, 20, &["no-freeze"]);
}

/// A persistence mode with a crash and restart (`--persistence M --crash`).
fn crashing(mode: PersistMode) -> Overrides {
    Overrides {
        persistence: Some(mode),
        crash: true,
        ..Overrides::default()
    }
}

/// `appendfsync always` acknowledging before the fsync: a crash loses
/// writes whose replies the clients received, which the recovery checker
/// requires to be there.
#[test]
fn ack_before_fsync_is_found() {
    let found = hunt_with(
        PlantedBug::AckBeforeFsync,
        50,
        &["persistence-recovery"],
        &crashing(PersistMode::AofAlways),
    );
    let message = &found.violations[0].message;
    assert!(message.contains("was acknowledged"), "{message}");
}

/// A rewrite that drops the incr file written while it ran: after the
/// restart no prefix of the executed writes explains the dataset.
#[test]
fn rewrite_drops_writes_is_found() {
    hunt_with(
        PlantedBug::RewriteDropsWrites,
        50,
        &["persistence-recovery"],
        &crashing(PersistMode::AofAlways),
    );
}

/// A torn AOF tail replayed as a command: a value nobody wrote (the cut
/// argument) is in the restarted dataset.
#[test]
fn torn_tail_loaded_as_data_is_found() {
    hunt_with(
        PlantedBug::TornTailLoadedAsData,
        50,
        &["persistence-recovery"],
        &crashing(PersistMode::AofEverysec),
    );
}

/// XCLAIM leaving the entry in its old owner's PEL too: the stream
/// checker sees XPENDING's per-consumer counts (or a history read of the
/// old owner) disagree with a PEL where each entry has one owner.
#[test]
fn xclaim_leaves_both_pels_is_found() {
    hunt_in(
        PlantedBug::XclaimLeavesBothPels,
        50,
        &["streams"],
        Some(&[WorkloadKind::Streams]),
    );
}

/// A blocked XREADGROUP served from a stream it did not name: the reply
/// carries another stream, or a NOGROUP for a group its stream has.
#[test]
fn xreadgroup_woken_by_other_stream_is_found() {
    hunt_in(
        PlantedBug::XreadgroupWokenByOtherStream,
        50,
        &["streams"],
        Some(&[WorkloadKind::Streams]),
    );
}

/// A SET of a tracked key that sends its invalidations at once but takes
/// effect only at the writer's next input: a tracker that re-reads the key
/// on the invalidation caches the old value, and no second message comes.
/// The tracking checker sees the served value differ from the replayed
/// write that came before the client's frontier (the reference model,
/// which runs first, sees the re-read's old value too). Hunted in the
/// default mix, where the tracking workload is drawn often enough.
#[test]
fn invalidate_before_write_is_found() {
    let found = hunt(
        PlantedBug::InvalidateBeforeWrite,
        50,
        &["reference-model", "tracking"],
    );
    assert!(
        found.violations.iter().any(|v| v.checker == "tracking"),
        "{:?}",
        found.violations
    );
}

/// The active-expire cron dropping every 4th `expired` notification: a
/// keyspace subscriber's stream lacks an event the checker owes it for a
/// key the engine reported expired. Hunted in the default mix: the notify
/// workload is drawn there often enough for the bug to show.
#[test]
fn missed_expired_event_is_found() {
    hunt(PlantedBug::MissedExpiredEvent, 50, &["notify"]);
}

/// MSET, MGET and DEL of several keys checked on their first key only: the
/// access checker sees a key outside the user's patterns written or read.
#[test]
fn acl_mset_first_key_is_found() {
    hunt(PlantedBug::AclMsetFirstKey, 50, &["access"]);
}

/// A script's `redis.call` run without the ACL check: the access checker
/// sees the call (the n-th of the script's keys) outside the permissions.
#[test]
fn acl_script_bypass_is_found() {
    hunt(PlantedBug::AclScriptBypass, 50, &["access"]);
}

/// Requests per client at most in the multi-node hunts.
const CLUSTER_OPS_MAX: u64 = 200;

/// The multi-node run of `seed` (primary + 2 replicas, partitions and
/// crashes drawn), its requests capped.
fn cluster_config(seed: u64, bug: Option<PlantedBug>) -> seedkv_sim::cluster::ClusterConfig {
    use seedkv_sim::cluster::{ClusterConfig, ClusterKnobs};
    let drawn = ClusterKnobs::draw(&ClusterConfig::new(seed, 2)).ops_per_client;
    ClusterConfig {
        bug,
        ops: Some(drawn.min(CLUSTER_OPS_MAX)),
        ..ClusterConfig::new(seed, 2)
    }
}

/// Hunts `bug` over the multi-node sweep's seeds `0..seeds_max`: the first
/// seed where one of `checkers` fails with the bug while the clean engine
/// passes that checker on the same seed. The repro re-runs bit for bit.
fn hunt_cluster(bug: PlantedBug, seeds_max: u64, checkers: &[&str]) -> u64 {
    use seedkv_sim::cluster::run as cluster_run;
    let names = |r: &seedkv_sim::cluster::ClusterReport| -> Vec<&'static str> {
        r.violations.iter().map(|v| v.checker).collect()
    };
    for seed in 0..seeds_max {
        let found = cluster_run(&cluster_config(seed, Some(bug)), false, false);
        let hit: Vec<&str> = names(&found)
            .into_iter()
            .filter(|c| checkers.contains(c))
            .collect();
        if hit.is_empty() {
            continue;
        }
        let clean = cluster_run(&cluster_config(seed, None), false, false);
        if names(&clean).iter().any(|c| hit.contains(c)) {
            continue; // the clean engine fails it too: not the bug's
        }
        let line = found.config.repro_line();
        assert!(
            line.contains(&format!("--seed {seed} --replicas 2 --bug {}", bug.name())),
            "{line}"
        );
        let again = cluster_run(&found.config, false, false);
        assert_eq!(again.trace_hash, found.trace_hash, "repro of seed {seed}");
        assert_eq!(again.violations, found.violations, "repro of seed {seed}");
        println!(
            "{}: found at seed {seed} by {hit:?}; repro: {line}",
            bug.name()
        );
        return seed;
    }
    panic!("{}: not found in {seeds_max} multi-node seeds", bug.name());
}

/// A `+CONTINUE` that leaves out the command at the backlog boundary: the
/// replica's stream differs from the primary's at the resumed offset.
#[test]
fn psync_skips_boundary_command_is_found() {
    hunt_cluster(PlantedBug::PsyncSkipsBoundaryCommand, 50, &["repl-prefix"]);
}

/// WAIT counting a replica that acked some older offset: it returns more
/// replicas than had acked the client's offset when it answered.
#[test]
fn wait_counts_unacked_is_found() {
    hunt_cluster(PlantedBug::WaitCountsUnacked, 50, &["repl-wait"]);
}

/// A replica expiring keys by its own clock: it removes a key its primary
/// still holds, a write nobody made on the primary.
#[test]
fn replica_self_expiry_is_found() {
    hunt_cluster(
        PlantedBug::ReplicaSelfExpiry,
        50,
        &["repl-replica-writes", "repl-convergence"],
    );
}

/// FAILOVER handing the primary role to a replica that has not caught up:
/// appends a WAIT had confirmed (acknowledged by the other replica) are
/// not in the new primary's history.
#[test]
fn failover_skips_wait_for_sync_is_found() {
    hunt_cluster(PlantedBug::FailoverSkipsWaitForSync, 50, &["repl-failover"]);
}
