//! RDB snapshots as Redis 7.0 takes them: SAVE on the command thread,
//! BGSAVE in a forked child, the `save <seconds> <changes>` rules, the
//! MISCONF refusal after a failed background save, and loading
//! `dbfilename` at start.
//!
//! A foreground save is a chain of inline requests (create the temp file,
//! append the snapshot, fsync, rename over `dbfilename`), one after the
//! other's completion; the client that asked waits without being served
//! (its pipelined requests stay in its query buffer), and gets `+OK` or
//! `-ERR` when the chain ends.

use std::collections::VecDeque;

use super::state::{Persist, PersistConfig, Purpose};
use super::storage::{
    ChildId, ChildJob, ForkRequest, IoMode, StorageDone, StorageError, StorageOp, StorageResult,
};
use crate::client::ClientId;
use crate::event::{Event, LogLevel, Shutdown};
use crate::server::Server;
use crate::time::Now;

/// Bytes per read while loading at start.
pub const LOAD_READ_CHUNK_BYTES: u64 = 16 * 1024 * 1024;

/// Redis's `CONFIG_BGSAVE_RETRY_DELAY`: after a failed BGSAVE, the save
/// rules wait this long before trying again.
pub const BGSAVE_RETRY_DELAY_S: u64 = 5;

/// The MISCONF error while the last background save failed and
/// `stop-writes-on-bgsave-error` is on.
pub const MISCONF_BGSAVE: &str = "MISCONF Redis is configured to save RDB snapshots, but it's \
currently unable to persist to disk. Commands that may modify the data set are disabled, because \
this instance is configured to report errors during writes if RDB snapshotting fails \
(stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error.";

/// RDB state (INFO persistence's `rdb_*` fields).
#[derive(Debug)]
pub(crate) struct RdbState {
    /// The last successful save, unix seconds (LASTSAVE).
    pub(crate) lastsave_unix_s: u64,
    pub(crate) last_bgsave_ok: bool,
    /// The last time a BGSAVE was tried, for the retry delay.
    pub(crate) last_bgsave_try_unix_s: u64,
    pub(crate) last_bgsave_time_s: i64,
    pub(crate) child: Option<BgChild>,
    /// BGSAVE SCHEDULE while another child ran.
    pub(crate) scheduled: bool,
    /// Saves done (INFO `rdb_saves`).
    pub(crate) saves: u64,
    pub(crate) last_load_keys_loaded: u64,
    pub(crate) last_load_keys_expired: u64,
    /// The foreground save in progress.
    pub(crate) save: Option<Box<ForegroundSave>>,
}

impl Default for RdbState {
    fn default() -> RdbState {
        RdbState {
            lastsave_unix_s: 0,
            last_bgsave_ok: true,
            last_bgsave_try_unix_s: 0,
            last_bgsave_time_s: -1,
            child: None,
            scheduled: false,
            saves: 0,
            last_load_keys_loaded: 0,
            last_load_keys_expired: 0,
            save: None,
        }
    }
}

/// A BGSAVE child at work.
#[derive(Debug)]
pub(crate) struct BgChild {
    pub(crate) id: ChildId,
    pub(crate) temp: String,
    pub(crate) started_mono_ns: u64,
    pub(crate) dirty_at_fork: u64,
}

/// What happens when a foreground save ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AfterSave {
    /// SAVE: reply to the client and let it go on.
    Reply(ClientId),
    /// SHUTDOWN: stop the server (or, if the save failed without FORCE,
    /// answer the client with Redis's error).
    Shutdown(Option<ClientId>, Shutdown),
}

#[derive(Debug)]
pub(crate) struct ForegroundSave {
    temp: String,
    file: String,
    bytes: Vec<u8>,
    written_bytes: usize,
    step: SaveStep,
    dirty_at_start: u64,
    pub(crate) after: AfterSave,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SaveStep {
    Create,
    Append,
    Fsync,
    Rename,
    /// The directory, so that the rename survives a crash (Redis's
    /// `fsyncFileDir` after `rdbSave`'s rename).
    SyncDir,
}

/// Loading at start.
#[derive(Debug)]
pub(crate) struct Load {
    file: String,
    bytes: Vec<u8>,
}

/// How a finished foreground save came out, for its caller.
pub(crate) enum Saved {
    Ok,
    /// Failed; the reason is already logged.
    Failed,
}

/// The snapshot's bytes and the work serializing took.
pub(crate) fn snapshot(server: &Server, now: Now, aof_base: bool) -> (Vec<u8>, u64) {
    let opts = server.rdb_save_options(now, server.allocated_bytes.unwrap_or(0), aof_base);
    let mut out = Vec::new();
    let functions = server.functions.rdb_records(opts.compress);
    let report = crate::rdb::file::write_file(
        &server.keyspace,
        &functions,
        &opts,
        &mut |chunk: &[u8]| out.extend_from_slice(chunk),
    );
    (out, report.work_units)
}

/// A filtered snapshot for a replica that asked for one (`REPLCONF
/// rdb-filter-only`): no keys (Redis's `SLAVE_REQ_RDB_EXCLUDE_DATA`), and
/// the function libraries only if the filter keeps them.
pub(crate) fn snapshot_filtered(
    server: &Server,
    now: Now,
    filter: crate::repl::RdbFilter,
) -> (Vec<u8>, u64) {
    let opts = server.rdb_save_options(now, server.allocated_bytes.unwrap_or(0), false);
    let mut out = Vec::new();
    let functions = match filter.functions {
        true => server.functions.rdb_records(opts.compress),
        false => Vec::new(),
    };
    let no_keys = crate::db::Keyspace::new(0);
    let report =
        crate::rdb::file::write_file(&no_keys, &functions, &opts, &mut |chunk: &[u8]| {
            out.extend_from_slice(chunk)
        });
    (out, report.work_units)
}

/// Starts a foreground save of the whole dataset (SAVE, SHUTDOWN). The
/// serialization happens now, on the command thread, as Redis's `rdbSave`.
/// Returns the work it took.
pub(crate) fn start_save(
    server: &mut Server,
    events: &mut VecDeque<Event>,
    now: Now,
    after: AfterSave,
) -> u64 {
    debug_assert!(server.persist.rdb.save.is_none());
    let (bytes, work_units) = snapshot(server, now, false);
    let pc = PersistConfig::of(&server.config);
    let temp = format!("temp-{}.rdb", server.config.process_id);
    let save = Box::new(ForegroundSave {
        temp: temp.clone(),
        file: pc.dbfilename,
        bytes,
        written_bytes: 0,
        step: SaveStep::Create,
        dirty_at_start: server.dirty,
        after,
    });
    server.persist.rdb.save = Some(save);
    server.persist.requests.issue(
        events,
        IoMode::Inline,
        StorageOp::Create { file: temp },
        Purpose::Save,
    );
    work_units
}

/// A step of the foreground save completed; issues the next, or returns
/// how the save ended.
pub(crate) fn save_step_done(
    server: &mut Server,
    events: &mut VecDeque<Event>,
    now: Now,
    result: StorageResult,
) -> Option<(AfterSave, Saved)> {
    let persist = &mut server.persist;
    let save = persist.rdb.save.as_mut()?;
    let failed = |why: String, save: &ForegroundSave, events: &mut VecDeque<Event>| {
        events.push_back(Event::Log {
            level: LogLevel::Warning,
            text: why,
        });
        (save.after, Saved::Failed)
    };
    let next = match (save.step, result) {
        (SaveStep::Create, Err(e)) => {
            let why = format!(
                "Failed opening the temp RDB file {} (in server root dir) for saving: {}",
                save.temp,
                e.text()
            );
            let out = failed(why, save, events);
            persist.rdb.save = None;
            return Some(out);
        }
        (SaveStep::Append | SaveStep::Fsync, Err(e)) => {
            let why = format!("Write error saving DB on disk: {}", e.text());
            let out = failed(why, save, events);
            let temp = save.temp.clone();
            persist.rdb.save = None;
            remove_temp(persist, events, temp);
            return Some(out);
        }
        (SaveStep::Rename, Err(e)) => {
            let why = format!(
                "Error moving temp DB file {} on the final destination {} (in server root dir): {}",
                save.temp,
                save.file,
                e.text()
            );
            let out = failed(why, save, events);
            let temp = save.temp.clone();
            persist.rdb.save = None;
            remove_temp(persist, events, temp);
            return Some(out);
        }
        (SaveStep::Create, Ok(_)) => {
            save.step = SaveStep::Append;
            StorageOp::Append {
                file: save.temp.clone(),
                bytes: save.bytes.clone(),
            }
        }
        (SaveStep::Append, Ok(done)) => {
            let n = match done {
                StorageDone::Written(n) => n as usize,
                _ => save.bytes.len() - save.written_bytes,
            };
            save.written_bytes += n;
            if n == 0 {
                let why = "Write error saving DB on disk: short write".to_string();
                let out = failed(why, save, events);
                let temp = save.temp.clone();
                persist.rdb.save = None;
                remove_temp(persist, events, temp);
                return Some(out);
            }
            if save.written_bytes < save.bytes.len() {
                StorageOp::Append {
                    file: save.temp.clone(),
                    bytes: save.bytes[save.written_bytes..].to_vec(),
                }
            } else {
                save.step = SaveStep::Fsync;
                StorageOp::Fsync {
                    file: save.temp.clone(),
                }
            }
        }
        (SaveStep::Fsync, Ok(_)) => {
            save.step = SaveStep::Rename;
            StorageOp::Rename {
                from: save.temp.clone(),
                to: save.file.clone(),
            }
        }
        (SaveStep::SyncDir, Err(e)) => {
            let why = format!("Failed to fsync directory while saving DB: {}", e.text());
            let out = failed(why, save, events);
            persist.rdb.save = None;
            return Some(out);
        }
        (SaveStep::Rename, Ok(_)) => {
            save.step = SaveStep::SyncDir;
            StorageOp::SyncDir { dir: String::new() }
        }
        (SaveStep::SyncDir, Ok(_)) => {
            let save = persist.rdb.save.take().expect("save");
            events.push_back(Event::Log {
                level: LogLevel::Notice,
                text: "DB saved on disk".to_string(),
            });
            server.dirty -= save.dirty_at_start.min(server.dirty);
            let rdb = &mut server.persist.rdb;
            rdb.lastsave_unix_s = now.unix_us / 1_000_000;
            rdb.last_bgsave_ok = true;
            rdb.saves += 1;
            return Some((save.after, Saved::Ok));
        }
    };
    persist
        .requests
        .issue(events, IoMode::Inline, next, Purpose::Save);
    None
}

fn remove_temp(persist: &mut Persist, events: &mut VecDeque<Event>, file: String) {
    persist.requests.issue(
        events,
        IoMode::Inline,
        StorageOp::Remove { file },
        Purpose::Cleanup,
    );
}

/// Why BGSAVE cannot start now.
pub(crate) enum BgsaveRefused {
    InProgress,
    OtherChild,
}

/// Whether any child (BGSAVE or BGREWRITEAOF) is running.
pub(crate) fn child_active(server: &Server) -> bool {
    server.persist.rdb.child.is_some() || super::aof::rewrite_active(server)
}

/// Forks a BGSAVE child.
pub(crate) fn start_bgsave(
    server: &mut Server,
    events: &mut VecDeque<Event>,
    now: Now,
) -> Result<(), BgsaveRefused> {
    if server.persist.rdb.child.is_some() {
        return Err(BgsaveRefused::InProgress);
    }
    if child_active(server) {
        return Err(BgsaveRefused::OtherChild);
    }
    let id = server.persist.requests.next_child();
    let temp = format!("temp-{}.rdb", id.0);
    let file = PersistConfig::of(&server.config).dbfilename;
    server.persist.rdb.last_bgsave_try_unix_s = now.unix_us / 1_000_000;
    server.persist.rdb.child = Some(BgChild {
        id,
        temp: temp.clone(),
        started_mono_ns: now.mono_ns,
        dirty_at_fork: server.dirty,
    });
    events.push_back(Event::Fork(ForkRequest {
        id,
        job: ChildJob::RdbSave { temp, file },
    }));
    events.push_back(Event::Log {
        level: LogLevel::Notice,
        text: format!("Background saving started by pid {}", id.0),
    });
    Ok(())
}

/// A BGSAVE child exited. Returns false if `id` was not one.
pub(crate) fn bgsave_exited(
    server: &mut Server,
    events: &mut VecDeque<Event>,
    now: Now,
    id: ChildId,
    ok: bool,
) -> bool {
    let rdb = &mut server.persist.rdb;
    if rdb.child.as_ref().map(|c| c.id) != Some(id) {
        return false;
    }
    let child = rdb.child.take().expect("child");
    rdb.last_bgsave_time_s =
        (now.mono_ns.saturating_sub(child.started_mono_ns) / 1_000_000_000) as i64;
    if ok {
        rdb.lastsave_unix_s = now.unix_us / 1_000_000;
        rdb.last_bgsave_ok = true;
        rdb.saves += 1;
        server.dirty -= child.dirty_at_fork.min(server.dirty);
        events.push_back(Event::Log {
            level: LogLevel::Notice,
            text: "Background saving terminated with success".to_string(),
        });
    } else {
        rdb.last_bgsave_ok = false;
        events.push_back(Event::Log {
            level: LogLevel::Warning,
            text: "Background saving error".to_string(),
        });
        remove_temp(&mut server.persist, events, child.temp);
    }
    true
}

/// The cron's part: a scheduled BGSAVE once no child runs, and the `save`
/// rules (Redis's `serverCron`).
pub(crate) fn cron(server: &mut Server, events: &mut VecDeque<Event>, now: Now) {
    if child_active(server) || server.persist.rdb.save.is_some() {
        return;
    }
    if server.persist.rdb.scheduled {
        server.persist.rdb.scheduled = false;
        let _ = start_bgsave(server, events, now);
        return;
    }
    let pc = PersistConfig::of(&server.config);
    let now_s = now.unix_us / 1_000_000;
    let rdb = &server.persist.rdb;
    let may_retry = rdb.last_bgsave_ok
        || now_s.saturating_sub(rdb.last_bgsave_try_unix_s) > BGSAVE_RETRY_DELAY_S;
    let due = pc.save_points.iter().find(|&&(secs, changes)| {
        server.dirty >= changes && now_s.saturating_sub(rdb.lastsave_unix_s) > secs
    });
    if let (Some(&(secs, changes)), true) = (due, may_retry) {
        let _ = changes;
        events.push_back(Event::Log {
            level: LogLevel::Notice,
            text: format!("{} changes in {} seconds. Saving...", server.dirty, secs),
        });
        let _ = start_bgsave(server, events, now);
    }
}

/// Whether writes are refused with MISCONF because the last background
/// save failed (Redis's `writeCommandsDeniedByDiskError`).
pub(crate) fn writes_denied(server: &Server) -> bool {
    let rdb = &server.persist.rdb;
    server.config.storage
        && !rdb.last_bgsave_ok
        && super::state::stops_writes_after_failed_save(&server.config)
}

/// Starts loading at start: `dbfilename`, read whole, then parsed.
pub(crate) fn start_load(server: &mut Server, events: &mut VecDeque<Event>) {
    let file = PersistConfig::of(&server.config).dbfilename;
    server.persist.load = Some(Load {
        file: file.clone(),
        bytes: Vec::new(),
    });
    server.persist.requests.issue(
        events,
        IoMode::Inline,
        StorageOp::Read {
            file,
            offset_bytes: 0,
            len_bytes: LOAD_READ_CHUNK_BYTES,
        },
        Purpose::Load,
    );
}

/// A read of the load completed: reads on, or loads what was read.
/// Returns `Err(log line)` when the file cannot be loaded (Redis exits).
pub(crate) fn load_step_done(
    server: &mut Server,
    events: &mut VecDeque<Event>,
    now: Now,
    result: StorageResult,
) -> Result<(), String> {
    let Some(load) = server.persist.load.as_mut() else {
        return Ok(());
    };
    match result {
        Err(StorageError::NotFound) => {
            server.persist.load = None;
            return Ok(());
        }
        Err(e) => {
            server.persist.load = None;
            return Err(format!(
                "Fatal error loading the DB: {}. Exiting.",
                e.text()
            ));
        }
        Ok(StorageDone::Read(chunk)) => {
            let full = chunk.len() as u64 == LOAD_READ_CHUNK_BYTES;
            load.bytes.extend_from_slice(&chunk);
            if full {
                let offset_bytes = load.bytes.len() as u64;
                let file = load.file.clone();
                server.persist.requests.issue(
                    events,
                    IoMode::Inline,
                    StorageOp::Read {
                        file,
                        offset_bytes,
                        len_bytes: LOAD_READ_CHUNK_BYTES,
                    },
                    Purpose::Load,
                );
                return Ok(());
            }
        }
        Ok(other) => {
            server.persist.load = None;
            return Err(format!(
                "Fatal error loading the DB: unexpected {other:?}. Exiting."
            ));
        }
    }
    let load = server.persist.load.take().expect("load");
    load_bytes(server, events, now, &load.bytes)
}

/// Loads a whole RDB file into the (empty) keyspace at start, with the
/// replication state it recorded ([`crate::repl::restart`]).
pub(crate) fn load_bytes(
    server: &mut Server,
    events: &mut VecDeque<Event>,
    now: Now,
    bytes: &[u8],
) -> Result<(), String> {
    let opts = server.rdb_load_options(now, true);
    // Keys take their LRU clock or LFU counter (and a file's IDLE/FREQ)
    // relative to now.
    let access = crate::lru::Access::at(now, &server.config, true);
    server.keyspace.set_access(access);
    let loaded =
        crate::rdb::file::load_file(bytes, &opts, &mut server.keyspace).and_then(|report| {
            server
                .functions
                .load_from_rdb(report.functions.clone())
                .map_err(|e| {
                    crate::rdb::file::LoadError::function_library(report.consumed_bytes, e)
                })?;
            Ok(report)
        });
    match loaded {
        Ok(report) => {
            let rdb = &mut server.persist.rdb;
            rdb.last_load_keys_loaded = report.keys_loaded;
            rdb.last_load_keys_expired = report.keys_expired;
            rdb.lastsave_unix_s = now.unix_us / 1_000_000;
            events.push_back(Event::Log {
                level: LogLevel::Notice,
                text: report.done_log_line(),
            });
            events.push_back(Event::Log {
                level: LogLevel::Notice,
                text: "DB loaded from disk: 0.000 seconds".to_string(),
            });
            for (level, text) in crate::repl::restart::restore(server, &report.aux) {
                events.push_back(Event::Log { level, text });
            }
            Ok(())
        }
        Err(e) => {
            // Redis's lines for the failure, the last one returned: after
            // it Redis runs redis-check-rdb on the file, or exits.
            let mut lines = e.log_lines();
            let last = lines.pop().unwrap_or_default();
            for text in lines {
                events.push_back(Event::Log {
                    level: LogLevel::Warning,
                    text,
                });
            }
            Err(last)
        }
    }
}
