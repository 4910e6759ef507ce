//! The disk model's crash and fault semantics.

use seedkv_engine::persist::{StorageDone, StorageError, StorageOp};

use super::{Disk, DiskKnobs, SECTOR_BYTES};
use crate::rng::choice_rng;

fn disk(seed: u64, knobs: DiskKnobs) -> Disk {
    Disk::new(knobs, choice_rng(seed, "disk-test", 0))
}

fn op_create(file: &str) -> StorageOp {
    StorageOp::Create { file: file.into() }
}

fn op_append(file: &str, bytes: &[u8]) -> StorageOp {
    StorageOp::Append {
        file: file.into(),
        bytes: bytes.to_vec(),
    }
}

fn op_fsync(file: &str) -> StorageOp {
    StorageOp::Fsync { file: file.into() }
}

fn op_sync_root() -> StorageOp {
    StorageOp::SyncDir { dir: String::new() }
}

fn ok(d: &mut Disk, op: StorageOp) {
    assert!(d.perform(&op).is_ok(), "{op:?}");
}

#[test]
fn crash_keeps_synced_data_and_a_sector_prefix_of_the_rest() {
    for seed in 0..200 {
        let mut d = disk(seed, DiskKnobs::none());
        ok(&mut d, op_create("f"));
        ok(&mut d, op_sync_root());
        let synced: Vec<u8> = (0..700u32).map(|i| i as u8).collect();
        ok(&mut d, op_append("f", &synced));
        ok(&mut d, op_fsync("f"));
        let tail = vec![7u8; 3000];
        ok(&mut d, op_append("f", &tail));
        d.crash();
        let after = d.contents("f").expect("synced name survives");
        assert!(after.len() >= 700 && after.len() <= 3700, "seed {seed}");
        assert_eq!(&after[..700], &synced[..]);
        assert!(after[700..].iter().all(|&b| b == 7));
        // Cut at the durable end, a sector boundary or the end.
        let len = after.len() as u64;
        assert!(
            len == 700 || len == 3700 || len.is_multiple_of(SECTOR_BYTES),
            "seed {seed}: {len}"
        );
    }
}

#[test]
fn an_unsynced_file_loses_everything_and_cuts_vary_by_seed() {
    let mut lengths = std::collections::BTreeSet::new();
    for seed in 0..100 {
        let mut d = disk(seed, DiskKnobs::none());
        ok(&mut d, op_create("f"));
        ok(&mut d, op_sync_root());
        ok(&mut d, op_append("f", &[1u8; 5000]));
        d.crash();
        lengths.insert(d.contents("f").unwrap().len());
    }
    assert!(lengths.contains(&0));
    assert!(lengths.len() > 3, "{lengths:?}");
}

#[test]
fn a_torn_sector_is_cut_at_a_boundary_and_padded_to_the_next() {
    let mut knobs = DiskKnobs::none();
    knobs.torn_sector_per_mille = 1000;
    let mut torn_seen = 0;
    for seed in 0..100 {
        let mut d = disk(seed, knobs.clone());
        ok(&mut d, op_create("f"));
        ok(&mut d, op_sync_root());
        ok(&mut d, op_fsync("f"));
        ok(&mut d, op_append("f", &[9u8; 2048]));
        d.crash();
        let after = d.contents("f").unwrap();
        assert_eq!(after.len() as u64 % SECTOR_BYTES, 0, "seed {seed}");
        if after.len() < 2048 && after.iter().any(|&b| b != 9) {
            torn_seen += 1;
        }
    }
    assert!(torn_seen > 10, "{torn_seen}");
}

#[test]
fn a_rename_or_create_without_a_directory_sync_is_lost() {
    let mut d = disk(1, DiskKnobs::none());
    ok(&mut d, op_create("dump.rdb"));
    ok(&mut d, op_append("dump.rdb", b"old"));
    ok(&mut d, op_fsync("dump.rdb"));
    ok(&mut d, op_sync_root());
    ok(&mut d, op_create("temp.rdb"));
    ok(&mut d, op_append("temp.rdb", b"new"));
    ok(&mut d, op_fsync("temp.rdb"));
    ok(
        &mut d,
        StorageOp::Rename {
            from: "temp.rdb".into(),
            to: "dump.rdb".into(),
        },
    );
    assert_eq!(d.contents("dump.rdb"), Some(&b"new"[..]));
    d.crash();
    assert_eq!(d.contents("dump.rdb"), Some(&b"old"[..]));
    assert_eq!(d.contents("temp.rdb"), None, "the create was never synced");

    // With the directory synced, the rename survives.
    ok(&mut d, op_create("temp.rdb"));
    ok(&mut d, op_append("temp.rdb", b"new"));
    ok(&mut d, op_fsync("temp.rdb"));
    ok(
        &mut d,
        StorageOp::Rename {
            from: "temp.rdb".into(),
            to: "dump.rdb".into(),
        },
    );
    ok(&mut d, op_sync_root());
    d.crash();
    assert_eq!(d.contents("dump.rdb"), Some(&b"new"[..]));
    assert_eq!(d.contents("temp.rdb"), None);
}

#[test]
fn a_file_in_an_unsynced_directory_is_lost() {
    let mut d = disk(2, DiskKnobs::none());
    assert_eq!(d.perform(&op_create("dir/a")), Err(StorageError::NotFound));
    ok(&mut d, StorageOp::MakeDir { dir: "dir".into() });
    ok(&mut d, op_create("dir/a"));
    d.crash();
    assert_eq!(
        d.contents("dir/a"),
        None,
        "neither dir nor its entries were synced"
    );
    ok(&mut d, StorageOp::MakeDir { dir: "dir".into() });
    ok(&mut d, op_create("dir/a"));
    ok(&mut d, StorageOp::SyncDir { dir: "dir".into() });
    d.crash();
    assert_eq!(
        d.contents("dir/a"),
        Some(&[][..]),
        "a synced dir keeps itself and its entries"
    );
}

#[test]
fn a_failed_fsync_never_makes_its_range_durable() {
    let mut knobs = DiskKnobs::none();
    knobs.fsync_error_per_mille = 1000;
    let mut d = disk(3, knobs);
    ok(&mut d, op_create("f"));
    ok(&mut d, op_sync_root());
    ok(&mut d, op_append("f", &[5u8; 1024]));
    assert_eq!(d.perform(&op_fsync("f")), Err(StorageError::Io));
    // A later fsync succeeds (the error was reported once)...
    d.knobs.fsync_error_per_mille = 0;
    ok(&mut d, op_append("f", &[6u8; 1024]));
    ok(&mut d, op_fsync("f"));
    d.crash();
    // ...but the failed range is zeros on the disk; the rest is durable.
    let after = d.contents("f").unwrap();
    assert_eq!(after.len(), 2048);
    assert!(after[..1024].iter().all(|&b| b == 0));
    assert!(after[1024..].iter().all(|&b| b == 6));
}

#[test]
fn a_full_disk_writes_short_then_refuses() {
    let mut knobs = DiskKnobs::none();
    knobs.capacity_bytes = 1000;
    let mut d = disk(4, knobs);
    ok(&mut d, op_create("f"));
    assert_eq!(
        d.perform(&op_append("f", &[1u8; 600])),
        Ok(StorageDone::Written(600))
    );
    assert_eq!(
        d.perform(&op_append("f", &[1u8; 600])),
        Ok(StorageDone::Written(400))
    );
    assert_eq!(
        d.perform(&op_append("f", &[1u8; 600])),
        Err(StorageError::NoSpace)
    );
    // Removing the file frees its space.
    ok(&mut d, StorageOp::Remove { file: "f".into() });
    ok(&mut d, op_create("g"));
    assert_eq!(
        d.perform(&op_append("g", &[1u8; 600])),
        Ok(StorageDone::Written(600))
    );
}

#[test]
fn short_writes_write_a_nonempty_prefix() {
    let mut knobs = DiskKnobs::none();
    knobs.short_write_per_mille = 1000;
    let mut d = disk(5, knobs);
    ok(&mut d, op_create("f"));
    for _ in 0..50 {
        match d.perform(&op_append("f", &[1u8; 100])) {
            Ok(StorageDone::Written(n)) => assert!((1..100).contains(&n)),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn latency_is_bounded_and_seeded() {
    let mut a = disk(6, DiskKnobs::none());
    let mut b = disk(6, DiskKnobs::none());
    for _ in 0..1000 {
        let x = a.latency_ns(&op_fsync("f"));
        assert_eq!(x, b.latency_ns(&op_fsync("f")));
        assert!((1..=super::latency::LATENCY_NS_MAX).contains(&x));
    }
}

#[test]
fn a_journal_commit_makes_directory_changes_durable() {
    let mut knobs = DiskKnobs::none();
    knobs.journal_commit_ns = Some(5_000);
    let mut d = disk(7, knobs);
    d.advance(1_000);
    ok(&mut d, op_create("f"));
    ok(&mut d, op_append("f", b"data"));
    ok(&mut d, op_fsync("f"));
    d.advance(4_999);
    let mut before = d.clone();
    before.crash();
    assert_eq!(before.contents("f"), None, "no commit yet");
    d.advance(5_000);
    d.crash();
    assert_eq!(d.contents("f"), Some(&b"data"[..]));
}
