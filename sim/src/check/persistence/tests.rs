//! The recovery checker on hand-built histories, including the shapes the
//! planted persistence bugs leave: an acknowledgement before the fsync
//! under `always`, a rewrite that drops keys written while it ran, and a
//! torn AOF tail loaded as data.

use std::collections::BTreeMap;

use super::Recovery;
use crate::check::model::testkit::{simple, Builder};
use crate::check::{Checker, RunFacts};
use crate::persistence::digest::{digest, Canon};
use crate::persistence::record::{CrashRecord, ObservedKey, PersistRecord, Snapshot};
use crate::persistence::PersistMode;

fn string(value: &str) -> ObservedKey {
    ObservedKey {
        type_name: "string".into(),
        digest: digest(Canon::Str(value.as_bytes())),
        expire_unix_ms: None,
        shown: value.into(),
    }
}

/// `SET a 1`, `SET b 2`, `SET a 3`, each acknowledged, 10 ms apart.
fn three_writes() -> Builder {
    let mut b = Builder::new();
    for text in ["SET a 1", "SET b 2", "SET a 3"] {
        b.run(1, text, simple("OK"));
        b.advance_ms(10);
    }
    b
}

fn crash_with(
    b: &mut Builder,
    mode: PersistMode,
    crash_after_ms: u64,
    observed: &[(&str, ObservedKey)],
) -> Result<(), String> {
    b.advance_ms(crash_after_ms);
    let mut record = PersistRecord::new(mode, 1_000_000);
    record.crash = Some(CrashRecord {
        at_ns: b.now_ns,
        executions_count: b.history.executions.len(),
        restart_unix_ms: b.unix_ms,
        observed: observed
            .iter()
            .map(|(k, o)| ((0, k.as_bytes().to_vec()), o.clone()))
            .collect::<BTreeMap<_, _>>(),
        ..CrashRecord::default()
    });
    b.history.persist = Some(Box::new(record));
    Recovery
        .check(&b.history, &RunFacts::default())
        .map_err(|v| v.message)
}

#[test]
fn any_prefix_passes_without_a_durability_promise() {
    for observed in [
        vec![],
        vec![("a", string("1"))],
        vec![("a", string("1")), ("b", string("2"))],
        vec![("a", string("3")), ("b", string("2"))],
    ] {
        crash_with(&mut three_writes(), PersistMode::AofNo, 0, &observed).unwrap();
    }
}

#[test]
fn a_state_no_prefix_explains_fails() {
    // a = 3 needs all three writes, but b is missing.
    let e = crash_with(
        &mut three_writes(),
        PersistMode::AofNo,
        0,
        &[("a", string("3"))],
    )
    .unwrap_err();
    assert!(e.contains("no prefix"), "{e}");
}

/// Planted bug (a): the reply left before the fsync; the crash lost it.
#[test]
fn always_keeps_every_acknowledged_write() {
    let lost_last = [("a", string("1")), ("b", string("2"))];
    let e = crash_with(&mut three_writes(), PersistMode::AofAlways, 0, &lost_last).unwrap_err();
    assert!(e.contains("appendfsync always"), "{e}");
    let all = [("a", string("3")), ("b", string("2"))];
    crash_with(&mut three_writes(), PersistMode::AofAlways, 0, &all).unwrap();
}

#[test]
fn everysec_may_lose_only_its_window() {
    let lost_last = [("a", string("1")), ("b", string("2"))];
    crash_with(
        &mut three_writes(),
        PersistMode::AofEverysec,
        500,
        &lost_last,
    )
    .unwrap();
    let e = crash_with(
        &mut three_writes(),
        PersistMode::AofEverysec,
        10_000,
        &lost_last,
    )
    .unwrap_err();
    assert!(e.contains("everysec"), "{e}");
}

#[test]
fn disk_faults_waive_the_floor_but_not_the_prefix() {
    let mut b = three_writes();
    let lost_last = [("a", string("1")), ("b", string("2"))];
    crash_with(&mut b, PersistMode::AofAlways, 0, &lost_last).unwrap_err();
    let record = b.history.persist.as_mut().unwrap();
    record.crash.as_mut().unwrap().disk_faults_count = 1;
    Recovery.check(&b.history, &RunFacts::default()).unwrap();
}

/// Planted bug (b): a rewrite that drops a key written while it ran: the
/// keys around it survive, it does not.
#[test]
fn a_rewrite_that_drops_a_key_is_seen() {
    let mut b = Builder::new();
    for text in ["SET k1 x", "SET k2 x", "SET k3 x"] {
        b.run(1, text, simple("OK"));
    }
    let observed = [("k1", string("x")), ("k3", string("x"))];
    let e = crash_with(&mut b, PersistMode::AofNo, 0, &observed).unwrap_err();
    assert!(e.contains("no prefix"), "{e}");
}

/// Planted bug (c): a torn tail loaded as data: a value never written, or
/// a key never written.
#[test]
fn a_torn_tail_loaded_as_data_is_seen() {
    let garbage = [("a", string("3\0\0")), ("b", string("2"))];
    let e = crash_with(&mut three_writes(), PersistMode::AofNo, 0, &garbage).unwrap_err();
    assert!(e.contains("no prefix"), "{e}");
    let stranger = [("a", string("1")), ("zz", string("1"))];
    let e = crash_with(&mut three_writes(), PersistMode::AofNo, 0, &stranger).unwrap_err();
    assert!(e.contains("\"zz\""), "{e}");
}

#[test]
fn rdb_recovers_a_renamed_snapshot() {
    let snapshot = |b: &mut Builder, lo, hi, dir_synced| {
        let record = b.history.persist.as_mut().unwrap();
        record.snapshots.push(Snapshot {
            prefix_lo: lo,
            prefix_hi: hi,
            renamed_ns: 0,
            dir_synced,
        });
        Recovery
            .check(&b.history, &RunFacts::default())
            .map_err(|v| v.message)
    };
    // The snapshot after the first write, made durable.
    let mut b = three_writes();
    crash_with(&mut b, PersistMode::Rdb, 0, &[("a", string("1"))]).unwrap_err();
    snapshot(&mut b, 1, 1, true).unwrap();
    // The state after two writes is no snapshot's.
    let mut b = three_writes();
    let two = [("a", string("1")), ("b", string("2"))];
    crash_with(&mut b, PersistMode::Rdb, 0, &two).unwrap_err();
    snapshot(&mut b, 1, 1, true).unwrap_err();
    // The empty start while a durable snapshot exists: lost.
    let mut b = three_writes();
    crash_with(&mut b, PersistMode::Rdb, 0, &[]).unwrap();
    snapshot(&mut b, 3, 3, true).unwrap_err();
}

#[test]
fn expired_keys_may_be_gone() {
    let mut b = Builder::new();
    b.run(1, "SET t 1 PX 100", simple("OK"));
    crash_with(&mut b, PersistMode::AofAlways, 1_000, &[]).unwrap();
}

#[test]
fn an_exit_without_a_disk_fault_and_a_failed_restart_are_findings() {
    let mut b = three_writes();
    let mut record = PersistRecord::new(PersistMode::AofAlways, 0);
    record.exit = Some((5, 1, false, "Can't open the append-only file".into()));
    b.history.persist = Some(Box::new(record.clone()));
    assert!(Recovery.check(&b.history, &RunFacts::default()).is_err());
    record.exit.as_mut().unwrap().2 = true;
    b.history.persist = Some(Box::new(record));
    assert!(Recovery.check(&b.history, &RunFacts::default()).is_ok());
    let e = crash_with(&mut three_writes(), PersistMode::AofNo, 0, &[]);
    assert!(e.is_ok());
    let mut b = three_writes();
    crash_with(&mut b, PersistMode::AofNo, 0, &[]).unwrap();
    let crash = b.history.persist.as_mut().unwrap().crash.as_mut().unwrap();
    crash.restart_error = Some("Bad file format reading the append only file".into());
    assert!(Recovery.check(&b.history, &RunFacts::default()).is_err());
    // Unless the disk failed the restart itself.
    let crash = b.history.persist.as_mut().unwrap().crash.as_mut().unwrap();
    crash.restart_fault_injected = true;
    assert!(Recovery.check(&b.history, &RunFacts::default()).is_ok());
}
