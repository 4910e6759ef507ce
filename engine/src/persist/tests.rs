//! Persistence through the engine's boundary, on the instant in-memory
//! disk of the test host: what is asked of the disk, in which order, what
//! the clients see, and what a new engine over the same disk loads.

use crate::config::Config;
use crate::persist::StorageError;
use crate::resp::Frame;
use crate::testing::{MemDisk, TestHost};

fn config() -> Config {
    let mut c = Config {
        storage: true,
        ..Config::default()
    };
    c.extra.insert("save".into(), String::new());
    c
}

fn aof_config() -> Config {
    let mut c = config();
    c.extra.insert("appendonly".into(), "yes".into());
    c.extra.insert("appendfsync".into(), "always".into());
    c
}

fn ok() -> Frame {
    Frame::Simple(b"OK".to_vec())
}

fn bulk(s: &str) -> Frame {
    Frame::Bulk(s.as_bytes().to_vec())
}

/// A new engine over `host`'s disk: a restart.
fn restart(host: TestHost, config: Config) -> TestHost {
    TestHost::with_disk(config, host.disk)
}

#[test]
fn save_writes_the_snapshot_and_a_restart_loads_it() {
    let mut h = TestHost::new(config());
    let c = h.connect();
    h.cmd(c, &["SET", "k", "v"]);
    h.cmd(c, &["RPUSH", "l", "a", "b"]);
    h.cmd(c, &["SET", "t", "x", "EX", "1000"]);
    // RPUSH counts one change per element, as in Redis.
    assert_eq!(
        h.info_field(c, "persistence", "rdb_changes_since_last_save"),
        4
    );
    assert_eq!(h.cmd(c, &["SAVE"]), ok());
    assert!(h.disk.files.contains_key("dump.rdb"));
    assert!(h.disk.files.keys().all(|f| !f.starts_with("temp-")));
    assert_eq!(
        h.info_field(c, "persistence", "rdb_changes_since_last_save"),
        0
    );
    assert_eq!(h.info_field(c, "persistence", "rdb_saves"), 1);
    let mut h = restart(h, config());
    let c = h.connect();
    assert_eq!(h.cmd(c, &["GET", "k"]), bulk("v"));
    assert_eq!(h.cmd(c, &["LLEN", "l"]), Frame::Integer(2));
    let Frame::Integer(ttl) = h.cmd(c, &["TTL", "t"]) else {
        panic!()
    };
    assert!((999..=1000).contains(&ttl));
    assert_eq!(
        h.info_field(c, "persistence", "rdb_last_load_keys_loaded"),
        3
    );
}

#[test]
fn save_orders_the_pipeline_after_its_reply() {
    let mut h = TestHost::new(config());
    let c = h.connect();
    h.pipeline(c, &[&["SET", "a", "1"], &["SAVE"], &["GET", "a"]]);
    assert_eq!(h.frames(c), [ok(), ok(), bulk("1")]);
}

#[test]
fn a_failing_disk_fails_save_and_bgsave_then_misconf_refuses_writes() {
    let mut c = config();
    c.extra.insert("save".into(), "3600 1".into());
    let mut h = TestHost::new(c);
    let id = h.connect();
    h.disk.fail_with = Some(StorageError::NoSpace);
    assert_eq!(h.cmd(id, &["SAVE"]), Frame::Error(b"ERR".to_vec()));
    assert_eq!(
        h.cmd(id, &["BGSAVE"]),
        Frame::Simple(b"Background saving started".to_vec())
    );
    let Frame::Error(e) = h.cmd(id, &["SET", "k", "v"]) else {
        panic!("a write after a failed BGSAVE is refused")
    };
    assert!(e.starts_with(b"MISCONF Redis is configured to save RDB snapshots"));
    assert!(matches!(h.cmd(id, &["PING"]), Frame::Error(_)));
    assert_eq!(h.cmd(id, &["GET", "k"]), Frame::Null);
    assert!(h
        .info_text(id, "persistence")
        .contains("rdb_last_bgsave_status:err"));
    h.disk.fail_with = None;
    assert_eq!(h.cmd(id, &["SAVE"]), ok());
    assert_eq!(h.cmd(id, &["SET", "k", "v"]), ok());
}

#[test]
fn bgsave_snapshots_and_resets_dirty() {
    let mut h = TestHost::new(config());
    let c = h.connect();
    h.cmd(c, &["SET", "k", "v"]);
    let before = h.cmd(c, &["LASTSAVE"]);
    h.advance_ms(2000);
    assert_eq!(
        h.cmd(c, &["BGSAVE"]),
        Frame::Simple(b"Background saving started".to_vec())
    );
    assert_ne!(h.cmd(c, &["LASTSAVE"]), before);
    assert!(h.disk.files.contains_key("dump.rdb"));
    assert_eq!(
        h.info_field(c, "persistence", "rdb_changes_since_last_save"),
        0
    );
    assert_eq!(
        h.cmd(c, &["BGSAVE", "x"]),
        Frame::Error(b"ERR syntax error".to_vec())
    );
}

#[test]
fn save_rules_start_a_bgsave_from_the_cron() {
    let mut c = config();
    c.extra.insert("save".into(), "1 2".into());
    let mut h = TestHost::new(c);
    let id = h.connect();
    h.cmd(id, &["SET", "a", "1"]);
    h.cmd(id, &["SET", "b", "1"]);
    assert!(!h.disk.files.contains_key("dump.rdb"));
    h.advance_ms(2100);
    assert!(h.disk.files.contains_key("dump.rdb"));
    assert_eq!(h.info_field(id, "persistence", "rdb_saves"), 1);
}

#[test]
fn without_storage_save_fails_and_nothing_is_asked() {
    let mut h = TestHost::new(Config::default());
    let c = h.connect();
    assert_eq!(h.cmd(c, &["SAVE"]), Frame::Error(b"ERR".to_vec()));
    assert_eq!(h.cmd(c, &["BGSAVE"]), Frame::Error(b"ERR".to_vec()));
    assert!(h.disk.log.is_empty());
}

#[test]
fn a_corrupt_snapshot_stops_the_server_at_load() {
    let mut disk = MemDisk::default();
    disk.files
        .insert("dump.rdb".into(), b"REDIS0010garbage".to_vec());
    let h = TestHost::with_disk(config(), disk);
    assert_eq!(h.exits, [1]);
}

#[test]
fn appendonly_at_start_creates_base_incr_and_manifest_as_redis() {
    let h = TestHost::new(aof_config());
    let files: Vec<&str> = h.disk.files.keys().map(|s| s.as_str()).collect();
    assert_eq!(
        files,
        [
            "appendonlydir/appendonly.aof.1.base.rdb",
            "appendonlydir/appendonly.aof.1.incr.aof",
            "appendonlydir/appendonly.aof.manifest"
        ]
    );
    assert_eq!(
        h.disk.files["appendonlydir/appendonly.aof.manifest"],
        b"file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"
    );
    assert!(h.exits.is_empty());
}

fn disk_with_incr(incr: &[u8]) -> MemDisk {
    let mut disk = TestHost::new(aof_config()).disk;
    disk.files.insert(
        "appendonlydir/appendonly.aof.1.incr.aof".into(),
        incr.to_vec(),
    );
    disk
}

#[test]
fn the_incr_file_is_replayed_at_start() {
    let incr = b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n\
*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n";
    let mut h = TestHost::with_disk(aof_config(), disk_with_incr(incr));
    let c = h.connect();
    assert_eq!(h.cmd(c, &["GET", "k"]), bulk("v"));
    assert_eq!(h.cmd(c, &["GET", "n"]), bulk("2"));
    assert_eq!(h.info_field(c, "stats", "total_commands_processed"), 2);
}

#[test]
fn a_torn_tail_is_cut_and_the_rest_loads() {
    let good = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n";
    let mut incr = good.to_vec();
    incr.extend_from_slice(b"*3\r\n$3\r\nSET\r\n$1\r\nj\r\n$2\r\nv");
    let mut h = TestHost::with_disk(aof_config(), disk_with_incr(&incr));
    let c = h.connect();
    assert_eq!(h.cmd(c, &["GET", "k"]), bulk("v"));
    assert_eq!(h.cmd(c, &["EXISTS", "j"]), Frame::Integer(0));
    assert_eq!(
        h.disk.files["appendonlydir/appendonly.aof.1.incr.aof"],
        good.to_vec()
    );
}

/// The planted loader runs the torn command (its value cut short) before
/// cutting the tail: the file is cut the same, the dataset is not.
#[test]
fn the_planted_torn_tail_bug_loads_the_cut_value() {
    let good = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n";
    let mut incr = good.to_vec();
    incr.extend_from_slice(b"*3\r\n$3\r\nSET\r\n$1\r\nj\r\n$3\r\nvw");
    let config = Config {
        planted_bug: Some(crate::PlantedBug::TornTailLoadedAsData),
        ..aof_config()
    };
    let mut h = TestHost::with_disk(config, disk_with_incr(&incr));
    let c = h.connect();
    assert_eq!(h.cmd(c, &["GET", "j"]), bulk("vw"));
    assert_eq!(
        h.disk.files["appendonlydir/appendonly.aof.1.incr.aof"],
        good.to_vec()
    );
}

#[test]
fn a_torn_tail_without_aof_load_truncated_stops_the_server() {
    let mut c = aof_config();
    c.extra.insert("aof-load-truncated".into(), "no".into());
    let h = TestHost::with_disk(c, disk_with_incr(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1"));
    assert_eq!(h.exits, [1]);
}

#[test]
fn an_unfinished_multi_is_reverted() {
    let incr = b"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n*1\r\n$5\r\nMULTI\r\n\
*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\n1\r\n";
    let mut h = TestHost::with_disk(aof_config(), disk_with_incr(incr));
    let c = h.connect();
    assert_eq!(h.cmd(c, &["EXISTS", "a", "b"]), Frame::Integer(1));
    assert_eq!(
        h.disk.files["appendonlydir/appendonly.aof.1.incr.aof"],
        b"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n"
    );
}

#[test]
fn garbage_in_the_aof_stops_the_server() {
    let h = TestHost::with_disk(aof_config(), disk_with_incr(b"hello world\r\n"));
    assert_eq!(h.exits, [1]);
}

#[test]
fn bgrewriteaof_makes_a_new_base_and_drops_the_old_files() {
    let incr = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n";
    let mut h = TestHost::with_disk(aof_config(), disk_with_incr(incr));
    let c = h.connect();
    assert_eq!(
        h.cmd(c, &["BGREWRITEAOF"]),
        Frame::Simple(b"Background append only file rewriting started".to_vec())
    );
    let files: Vec<&str> = h.disk.files.keys().map(|s| s.as_str()).collect();
    assert_eq!(
        files,
        [
            "appendonlydir/appendonly.aof.2.base.rdb",
            "appendonlydir/appendonly.aof.2.incr.aof",
            "appendonlydir/appendonly.aof.manifest"
        ]
    );
    let mut h = restart(h, aof_config());
    let c = h.connect();
    assert_eq!(h.cmd(c, &["GET", "k"]), bulk("v"));
}

#[test]
fn shutdown_saves_first_when_save_points_are_set() {
    let mut c = config();
    c.shutdown_command = true;
    c.extra.insert("save".into(), "3600 1".into());
    let mut h = TestHost::new(c.clone());
    let id = h.connect();
    h.cmd(id, &["SET", "k", "v"]);
    h.send(id, &["SHUTDOWN"]);
    assert_eq!(h.frames(id), []);
    assert_eq!(h.shutdowns.len(), 1);
    let mut h = restart(h, c.clone());
    let id = h.connect();
    assert_eq!(h.cmd(id, &["GET", "k"]), bulk("v"));
    // A failing save keeps the server up, unless FORCE.
    h.disk.fail_with = Some(StorageError::Io);
    assert_eq!(
        h.cmd(id, &["SHUTDOWN"]),
        Frame::Error(b"ERR Errors trying to SHUTDOWN. Check logs.".to_vec())
    );
    assert!(h.shutdowns.is_empty());
    h.send(id, &["SHUTDOWN", "FORCE"]);
    assert_eq!(h.shutdowns.len(), 1);
    // NOSAVE never touches the disk.
    h.disk.fail_with = None;
    let mut h = restart(h, c);
    h.disk.log.clear();
    let id = h.connect();
    h.send(id, &["SHUTDOWN", "NOSAVE"]);
    assert_eq!(h.shutdowns.len(), 1);
    assert!(h.disk.log.is_empty());
}

#[test]
fn config_set_appendonly_starts_the_aof_with_a_rewrite() {
    let mut h = TestHost::new(config());
    let c = h.connect();
    h.cmd(c, &["SET", "k", "v"]);
    assert_eq!(h.cmd(c, &["CONFIG", "SET", "appendonly", "yes"]), ok());
    assert_eq!(h.info_field(c, "persistence", "aof_enabled"), 1);
    assert_eq!(
        h.disk.files["appendonlydir/appendonly.aof.manifest"],
        b"file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"
    );
    let mut h = restart(h, aof_config());
    let c = h.connect();
    assert_eq!(h.cmd(c, &["GET", "k"]), bulk("v"));
    assert_eq!(h.cmd(c, &["CONFIG", "SET", "appendonly", "no"]), ok());
    assert_eq!(h.info_field(c, "persistence", "aof_enabled"), 0);
}

#[test]
fn writes_reach_the_incr_file_and_survive_a_restart() {
    let mut h = TestHost::new(aof_config());
    let c = h.connect();
    h.pipeline(
        c,
        &[
            &["INCR", "n"],
            &["INCR", "n"],
            &["SET", "t", "x", "EX", "100"],
            &["SET", "gone", "x", "PX", "50"],
            &["SELECT", "3"],
            &["RPUSH", "l", "a", "b"],
        ],
    );
    assert_eq!(h.frames(c).len(), 6);
    let incr = &h.disk.files["appendonlydir/appendonly.aof.1.incr.aof"];
    assert!(incr.starts_with(b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*2\r\n$4\r\nINCR\r\n"));
    let mut h = restart(h, aof_config());
    h.advance_ms(10_000);
    let c = h.connect();
    assert_eq!(h.cmd(c, &["GET", "n"]), bulk("2"));
    assert_eq!(h.cmd(c, &["EXISTS", "gone"]), Frame::Integer(0));
    let Frame::Integer(ttl) = h.cmd(c, &["TTL", "t"]) else {
        panic!()
    };
    assert!((85..=100).contains(&ttl), "ttl {ttl}");
    h.cmd(c, &["SELECT", "3"]);
    assert_eq!(h.cmd(c, &["LLEN", "l"]), Frame::Integer(2));
}

#[test]
fn a_rewrite_in_the_middle_of_a_pipeline_applies_every_write_once() {
    let mut h = TestHost::new(aof_config());
    let c = h.connect();
    h.pipeline(c, &[&["INCR", "n"], &["BGREWRITEAOF"], &["INCR", "n"]]);
    assert_eq!(h.frames(c).len(), 3);
    h.cmd(c, &["INCR", "n"]);
    h.cmd(c, &["MULTI"]);
    h.cmd(c, &["INCR", "n"]);
    h.cmd(c, &["BGREWRITEAOF"]);
    h.cmd(c, &["EXEC"]);
    h.cmd(c, &["INCR", "n"]);
    assert_eq!(h.cmd(c, &["GET", "n"]), bulk("5"));
    let mut h = restart(h, aof_config());
    let c = h.connect();
    assert_eq!(h.cmd(c, &["GET", "n"]), bulk("5"));
}

#[test]
fn a_failing_append_under_everysec_refuses_writes_until_it_recovers() {
    let mut cfg = aof_config();
    cfg.extra.insert("appendfsync".into(), "everysec".into());
    let mut h = TestHost::new(cfg);
    let c = h.connect();
    h.disk.fail_with = Some(StorageError::NoSpace);
    assert_eq!(h.cmd(c, &["SET", "k", "v"]), ok());
    assert_eq!(
        h.cmd(c, &["SET", "k", "w"]),
        Frame::Error(b"MISCONF Errors writing to the AOF file: No space left on device".to_vec())
    );
    h.disk.fail_with = None;
    h.advance_ms(1000);
    assert_eq!(h.cmd(c, &["SET", "k", "w"]), ok());
    let mut h = restart(h, aof_config());
    let c = h.connect();
    assert_eq!(h.cmd(c, &["GET", "k"]), bulk("w"));
}

#[test]
fn always_appends_and_fsyncs_inline_before_the_reply() {
    let mut h = TestHost::new(aof_config());
    let c = h.connect();
    h.disk.log.clear();
    h.cmd(c, &["SET", "k", "v"]);
    let ops: Vec<&str> = h
        .disk
        .log
        .iter()
        .map(|op| match op {
            crate::persist::StorageOp::Append { .. } => "append",
            crate::persist::StorageOp::Fsync { .. } => "fsync",
            _ => "other",
        })
        .collect();
    assert_eq!(ops, ["append", "fsync"]);
}

/// Group commit: the writes of a turn's inputs from two clients reach the
/// AOF in one append and one fsync at `before_sleep`, and no reply (of a
/// read either) leaves before that fsync.
#[test]
fn group_commit_writes_and_fsyncs_once_per_turn_and_holds_replies() {
    use crate::persist::StorageOp;
    let config = Config {
        group_commit: true,
        ..aof_config()
    };
    let mut h = TestHost::new(config);
    let (a, b) = (h.connect(), h.connect());
    h.before_sleep();
    let incr = "appendonlydir/appendonly.aof.1.incr.aof";
    let fsyncs = |h: &TestHost| {
        h.disk
            .log
            .iter()
            .filter(|op| matches!(op, StorageOp::Fsync { file } if file == incr))
            .count()
    };
    let before = fsyncs(&h);
    h.send(a, &["SET", "x", "1"]);
    h.send(b, &["INCR", "n"]);
    h.send(b, &["GET", "x"]);
    assert!(h.frames(a).is_empty() && h.frames(b).is_empty());
    assert!(h.disk.files[incr].is_empty());
    h.before_sleep();
    assert_eq!(h.frames(a), [ok()]);
    assert_eq!(h.frames(b), [Frame::Integer(1), bulk("1")]);
    assert_eq!(fsyncs(&h), before + 1);
    let text = String::from_utf8_lossy(&h.disk.files[incr]).into_owned();
    assert!(text.contains("SET") && text.contains("INCR"), "{text}");
    // A turn without writes holds nothing.
    h.send(a, &["GET", "n"]);
    assert_eq!(h.frames(a), [bulk("1")]);
    assert_eq!(fsyncs(&h), before + 1);
}

/// QUIT behind a held write: the close (which writes its +OK first) waits
/// for the group commit with the replies.
#[test]
fn group_commit_holds_a_quit_close_with_the_replies() {
    let config = Config {
        group_commit: true,
        ..aof_config()
    };
    let mut h = TestHost::new(config);
    let c = h.connect();
    h.before_sleep();
    h.pipeline(c, &[&["SET", "x", "1"], &["QUIT"]]);
    assert!(h.closed.is_empty());
    assert!(h.frames(c).is_empty());
    h.before_sleep();
    assert_eq!(h.frames(c), [ok(), ok()]);
    assert_eq!(h.closed.len(), 1);
}

fn acl_config() -> Config {
    let mut c = config();
    c.extra.insert("aclfile".into(), "users.acl".into());
    c
}

fn acl_disk(contents: &[u8]) -> crate::testing::MemDisk {
    let mut disk = crate::testing::MemDisk::default();
    disk.files.insert("users.acl".into(), contents.to_vec());
    disk
}

#[test]
fn acl_users_load_at_start_and_save_renames_a_synced_temp_file() {
    let mut h = TestHost::with_disk(acl_config(), acl_disk(b"user alice on >pa ~a* +get\n"));
    assert!(h.exits.is_empty());
    let c = h.connect();
    assert_eq!(h.cmd(c, &["AUTH", "alice", "pa"]), ok());
    let admin = h.connect();
    assert_eq!(
        h.cmd(admin, &["ACL", "SETUSER", "bob", "on", "nopass"]),
        ok()
    );
    h.disk.log.clear();
    assert_eq!(h.cmd(admin, &["ACL", "SAVE"]), ok());
    let kinds: Vec<&str> = h
        .disk
        .log
        .iter()
        .map(|op| match op {
            crate::persist::StorageOp::Create { .. } => "create",
            crate::persist::StorageOp::Append { .. } => "append",
            crate::persist::StorageOp::Fsync { .. } => "fsync",
            crate::persist::StorageOp::Rename { .. } => "rename",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["create", "append", "fsync", "rename"]);
    assert_eq!(
        h.disk.files["users.acl"],
        b"user alice on #9513229d435978263d82902c59d4e0fb86c941a9bf09b605cd8a6643f40149a8 \
~a* resetchannels -@all +get\nuser bob on nopass resetchannels -@all\n\
user default on nopass ~* &* +@all\n"
    );
    assert_eq!(h.disk.files.len(), 1, "no temp file is left");
}

#[test]
fn acl_load_is_all_or_nothing_and_disconnects_named_users() {
    let mut h = TestHost::with_disk(acl_config(), acl_disk(b"user alice on >pa +@all ~*\n"));
    let alice = h.connect();
    assert_eq!(h.cmd(alice, &["AUTH", "alice", "pa"]), ok());
    let admin = h.connect();
    h.disk.files.insert(
        "users.acl".into(),
        b"user carol on nopass\nuser carol off\n".to_vec(),
    );
    let Frame::Error(e) = h.cmd(admin, &["ACL", "LOAD"]) else {
        panic!("a duplicate user refuses the load")
    };
    assert_eq!(
        e,
        b"ERR WARNING: Duplicate user 'carol' found on line 2. WARNING: ACL errors detected, \
no change to the previously active ACL rules was performed"
    );
    assert_eq!(h.cmd(alice, &["ACL", "WHOAMI"]), bulk("alice"));
    assert_eq!(h.cmd(admin, &["ACL", "GETUSER", "carol"]), Frame::Null);
    h.disk
        .files
        .insert("users.acl".into(), b"user alice on >pa +@all ~*\n".to_vec());
    assert_eq!(h.cmd(admin, &["ACL", "LOAD"]), ok());
    // Redis replaces every user but `default`, even one loaded unchanged.
    assert!(h.is_closed(alice).is_some());
    assert!(h.is_closed(admin).is_none());
    h.disk.files.remove("users.acl");
    let Frame::Error(e) = h.cmd(admin, &["ACL", "LOAD"]) else {
        panic!("a missing file refuses the load")
    };
    assert_eq!(
        e,
        b"ERR Error loading ACLs, opening file 'users.acl': No such file or directory"
    );
}

#[test]
fn a_failed_acl_save_leaves_the_file_and_answers_redis_error() {
    let mut h = TestHost::with_disk(acl_config(), acl_disk(b"user alice on\n"));
    let admin = h.connect();
    assert_eq!(h.cmd(admin, &["ACL", "SETUSER", "bob", "on"]), ok());
    h.disk.fail_with = Some(StorageError::NoSpace);
    let Frame::Error(e) = h.cmd(admin, &["ACL", "SAVE"]) else {
        panic!("the disk refuses")
    };
    assert_eq!(
        e,
        b"ERR There was an error trying to save the ACLs. Please check the server logs for \
more information"
    );
    h.disk.fail_with = None;
    assert_eq!(h.disk.files["users.acl"], b"user alice on\n");
    // Inside MULTI the reply cannot wait for the disk: refused, said why.
    h.cmd(admin, &["MULTI"]);
    h.cmd(admin, &["ACL", "SAVE"]);
    let Frame::Array(replies) = h.cmd(admin, &["EXEC"]) else {
        panic!("EXEC answers an array")
    };
    assert!(matches!(&replies[0], Frame::Error(_)));
}

#[test]
fn a_bad_aclfile_or_user_directives_next_to_one_stop_the_start() {
    let h = TestHost::with_disk(acl_config(), acl_disk(b"user x +nosuch\n"));
    assert_eq!(h.exits, [1]);
    let h = TestHost::with_disk(acl_config(), crate::testing::MemDisk::default());
    assert_eq!(h.exits, [1]);
    let mut both = acl_config();
    both.acl_users.push(vec![b"x".to_vec(), b"on".to_vec()]);
    let h = TestHost::with_disk(both, acl_disk(b""));
    assert_eq!(h.exits, [1]);
    let mut users = config();
    users
        .acl_users
        .push(vec![b"x".to_vec(), b"on".to_vec(), b">p".to_vec()]);
    let mut h = TestHost::new(users);
    assert!(h.exits.is_empty());
    let c = h.connect();
    assert_eq!(h.cmd(c, &["AUTH", "x", "p"]), ok());
}

/// The per-write MISCONF test reads two parameters alone and must decide
/// as the whole [`crate::persist::PersistConfig`] does.
#[test]
fn failed_save_stops_writes_as_the_whole_config_decides() {
    let saves = ["", "3600 1", "3600", "x y", "1 2 3", "900 1 300 10"];
    for save in saves {
        for stop in [None, Some("yes"), Some("no"), Some("YES")] {
            let mut c = Config::default();
            c.extra.insert("save".into(), save.into());
            if let Some(stop) = stop {
                c.extra
                    .insert("stop-writes-on-bgsave-error".into(), stop.into());
            }
            let pc = crate::persist::PersistConfig::of(&c);
            let whole = pc.stop_writes_on_bgsave_error && !pc.save_points.is_empty();
            let alone = crate::persist::state::stops_writes_after_failed_save(&c);
            assert_eq!(alone, whole, "save {save:?}, stop {stop:?}");
        }
    }
}
