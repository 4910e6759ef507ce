//! BGREWRITEAOF as Redis 7.0 does it with multi-part AOF: the parent opens
//! a new incremental file at once (later writes go there), a forked child
//! writes the dataset as of the fork to a temp file (an RDB preamble by
//! default), and when it succeeds the parent renames it into a new base
//! file, marks the old base and incrs as history and persists the
//! manifest. No rewrite buffer is needed: what was written during the
//! rewrite is already in the new incr file.

use std::collections::VecDeque;

use super::manifest::Manifest;
use super::{path, persist_manifest};
use crate::cmd::Ctx;
use crate::event::{Event, LogLevel};
use crate::persist::rdb::child_active;
use crate::persist::state::{PersistConfig, Purpose};
use crate::persist::storage::{ChildId, ChildJob, ForkRequest, IoMode, StorageOp};
use crate::server::Server;
use crate::time::Now;

/// The rewrite's state.
#[derive(Debug)]
pub(crate) struct RewriteState {
    pub(crate) child: Option<RewriteChild>,
    /// A rewrite to fork at the end of this input: the fork is the
    /// instant the dataset is frozen, so everything the input's commands
    /// propagated goes to the old incr file first and nothing is in both
    /// the new base and the new incr.
    pub(crate) pending: bool,
    pub(crate) scheduled: bool,
    pub(crate) last_ok: bool,
    pub(crate) rewrites: u64,
    pub(crate) consecutive_failures: u64,
    pub(crate) last_time_s: i64,
    /// `appendonly` was turned on at run time: the AOF is on once the
    /// first rewrite succeeds (Redis's `AOF_WAIT_REWRITE`).
    pub(crate) turning_on: bool,
    /// The AOF size after the last rewrite (for auto-aof-rewrite).
    pub(crate) base_size_bytes: u64,
}

impl Default for RewriteState {
    fn default() -> RewriteState {
        RewriteState {
            child: None,
            pending: false,
            scheduled: false,
            last_ok: true,
            rewrites: 0,
            consecutive_failures: 0,
            last_time_s: -1,
            turning_on: false,
            base_size_bytes: 0,
        }
    }
}

impl RewriteState {
    /// Commands are buffered while the AOF waits for its first rewrite.
    pub(crate) fn waiting_to_turn_on(&self) -> bool {
        self.turning_on && self.child.is_some()
    }
}

#[derive(Debug)]
pub(crate) struct RewriteChild {
    pub(crate) id: ChildId,
    pub(crate) temp: String,
    pub(crate) started_mono_ns: u64,
}

/// Whether a BGREWRITEAOF child is running.
pub(crate) fn rewrite_active(server: &Server) -> bool {
    let rw = &server.persist.aof.rewrite;
    rw.child.is_some() || rw.pending
}

/// The new base file of a rewrite: the dataset as an RDB preamble, or as
/// commands.
pub(crate) fn rewrite_bytes(server: &Server, now: Now, rdb_preamble: bool) -> (Vec<u8>, u64) {
    if rdb_preamble {
        crate::persist::rdb::snapshot(server, now, true)
    } else {
        super::commands::dataset_as_commands(server)
    }
}

/// BGREWRITEAOF.
pub(crate) fn bgrewriteaof_command(ctx: &mut Ctx) {
    if rewrite_active(ctx.server) {
        return ctx.error("ERR Background append only file rewriting already in progress");
    }
    if child_active(ctx.server) || ctx.server.persist.rdb.save.is_some() {
        ctx.server.persist.aof.rewrite.scheduled = true;
        return ctx
            .w()
            .simple("Background append only file rewriting scheduled");
    }
    ctx.server.persist.aof.rewrite.pending = true;
    ctx.w()
        .simple("Background append only file rewriting started");
}

/// Asks for a rewrite at the end of this input (see `pending`).
pub(crate) fn start(server: &mut Server, _events: &mut VecDeque<Event>, _now: Now) -> bool {
    if child_active(server) {
        return false;
    }
    server.persist.aof.rewrite.pending = true;
    true
}

/// Forks the pending rewrite, at the end of an input once its commands'
/// stream is in the AOF buffer: flushes the buffer to the old incr file,
/// opens a new incr file (when the AOF is on), forks the child.
pub(crate) fn fork_pending(server: &mut Server, events: &mut VecDeque<Event>, now: Now) {
    let rw = &mut server.persist.aof.rewrite;
    if !std::mem::take(&mut rw.pending) || rw.child.is_some() {
        return;
    }
    let pc = PersistConfig::of(&server.config);
    super::flush(server, events, now, true);
    let dir = StorageOp::MakeDir {
        dir: pc.appenddirname.clone(),
    };
    super::issue_files(server, events, [dir]);
    let aof = &mut server.persist.aof;
    if aof.on {
        // The old incr file is complete: made durable before the switch
        // (Redis's `aof_background_fsync_and_close`), so a crash cannot
        // tear a file that is no longer the last.
        let old = StorageOp::Fsync {
            file: aof.incr_path.clone(),
        };
        let incr = aof.manifest.new_incr(&pc.appendfilename);
        aof.incr_path = path(&pc, &incr);
        aof.incr_size_bytes = 0;
        let create = StorageOp::Create {
            file: aof.incr_path.clone(),
        };
        super::issue_files(server, events, [old, create]);
        persist_manifest(server, events, &pc);
        server.propagation.reset_selected_db();
    }
    let id = server.persist.requests.next_child();
    let temp = format!("temp-rewriteaof-bg-{}.aof", id.0);
    server.persist.aof.rewrite.child = Some(RewriteChild {
        id,
        temp: temp.clone(),
        started_mono_ns: now.mono_ns,
    });
    events.push_back(Event::Fork(ForkRequest {
        id,
        job: ChildJob::AofRewrite {
            temp,
            rdb_preamble: pc.aof_use_rdb_preamble,
        },
    }));
    events.push_back(Event::Log {
        level: LogLevel::Notice,
        text: format!(
            "Background append only file rewriting started by pid {}",
            id.0
        ),
    });
}

/// A rewrite child exited.
pub(crate) fn rewrite_exited(
    server: &mut Server,
    events: &mut VecDeque<Event>,
    now: Now,
    id: ChildId,
    ok: bool,
) {
    let rw = &mut server.persist.aof.rewrite;
    if rw.child.as_ref().map(|c| c.id) != Some(id) {
        return;
    }
    let child = rw.child.take().expect("child");
    rw.last_time_s = (now.mono_ns.saturating_sub(child.started_mono_ns) / 1_000_000_000) as i64;
    let pc = PersistConfig::of(&server.config);
    if !ok {
        rw.last_ok = false;
        rw.consecutive_failures += 1;
        events.push_back(Event::Log {
            level: LogLevel::Warning,
            text: "Background AOF rewrite terminated with error".to_string(),
        });
        server.persist.requests.issue(
            events,
            IoMode::Inline,
            StorageOp::Remove { file: child.temp },
            Purpose::Cleanup,
        );
        return;
    }
    rw.last_ok = true;
    rw.consecutive_failures = 0;
    rw.rewrites += 1;
    let turning_on = std::mem::take(&mut rw.turning_on);
    let fresh_incr = server.planted.rewrite_starts_fresh_incr(turning_on);
    let aof = &mut server.persist.aof;
    let base = aof
        .manifest
        .new_base(&pc.appendfilename, pc.aof_use_rdb_preamble);
    let mut ops = vec![StorageOp::Rename {
        from: child.temp,
        to: path(&pc, &base),
    }];
    if fresh_incr && (aof.on || turning_on) {
        // The AOF starts now, in a fresh incr file after the new base; the
        // commands buffered during the rewrite go there first.
        let incr = aof.manifest.new_incr(&pc.appendfilename);
        aof.incr_path = path(&pc, &incr);
        aof.incr_size_bytes = 0;
        ops.push(StorageOp::Create {
            file: aof.incr_path.clone(),
        });
        aof.on = true;
    }
    aof.manifest.mark_rewritten_incrs_as_history();
    super::issue_files(server, events, ops);
    persist_manifest(server, events, &pc);
    delete_history(server, events, &pc);
    events.push_back(Event::Log {
        level: LogLevel::Notice,
        text: "Background AOF rewrite terminated with success".to_string(),
    });
    events.push_back(Event::Log {
        level: LogLevel::Notice,
        text: "Background AOF rewrite finished successfully".to_string(),
    });
    let aof = &mut server.persist.aof;
    aof.rewrite.base_size_bytes = aof.base_size_bytes + aof.incr_size_bytes;
    super::flush(server, events, now, false);
}

/// Removes the history files and drops them from the manifest
/// (`aofDelHistoryFiles`).
pub(crate) fn delete_history(
    server: &mut Server,
    events: &mut VecDeque<Event>,
    pc: &PersistConfig,
) {
    let history = std::mem::take(&mut server.persist.aof.manifest.history);
    if history.is_empty() {
        return;
    }
    persist_manifest(server, events, pc);
    for h in history {
        events.push_back(Event::Log {
            level: LogLevel::Notice,
            text: format!("Removing the history file {} in the background", h.name),
        });
        server.persist.requests.issue(
            events,
            IoMode::Inline,
            StorageOp::Remove {
                file: path(pc, &h.name),
            },
            Purpose::Cleanup,
        );
    }
}

/// The cron's part: a scheduled rewrite once no child runs.
pub(crate) fn cron(server: &mut Server, events: &mut VecDeque<Event>, now: Now) {
    if child_active(server) || server.persist.rdb.save.is_some() {
        return;
    }
    if std::mem::take(&mut server.persist.aof.rewrite.scheduled) {
        start(server, events, now);
        return;
    }
    // auto-aof-rewrite-percentage / -min-size, as Redis's serverCron.
    let aof = &server.persist.aof;
    if !aof.on {
        return;
    }
    let get = |name: &str| {
        crate::commands::config::config_get(&server.config, name)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let (percent, min_size) = (
        get("auto-aof-rewrite-percentage"),
        get("auto-aof-rewrite-min-size"),
    );
    let current = aof.base_size_bytes + aof.incr_size_bytes;
    if percent == 0 || current <= min_size {
        return;
    }
    let base = aof.rewrite.base_size_bytes.max(1);
    let growth = (current.saturating_mul(100) / base).saturating_sub(100);
    if growth >= percent {
        events.push_back(Event::Log {
            level: LogLevel::Notice,
            text: format!("Starting automatic rewriting of AOF on {growth}% growth"),
        });
        start(server, events, now);
    }
}

/// The manifest file name of `pc`.
pub(crate) fn manifest_path(pc: &PersistConfig) -> String {
    path(pc, &Manifest::file_name(&pc.appendfilename))
}
