//! Persistence: RDB snapshots and the append-only file, behind the sans-IO
//! boundary of [`storage`].
//!
//! The engine decides *what* goes to disk and *when*, as Redis 7.0 does;
//! the host only performs requests ([`crate::Event::Storage`]) and forks
//! ([`crate::Event::Fork`]) and reports back. The parts:
//!
//! - [`storage`]: the requests, their completions and errors;
//! - [`child`]: a forked child (BGSAVE, BGREWRITEAOF) as a state machine;
//! - [`rdb`]: SAVE, BGSAVE, the `save` rules, LASTSAVE, MISCONF, loading
//!   `dbfilename` at start;
//! - [`aclfile`]: ACL LOAD and ACL SAVE's reads and writes of the `aclfile`;
//! - [`state`]: the bookkeeping they share (ids, what each request is for,
//!   the options read from the configuration).

pub(crate) mod aclfile;
pub(crate) mod aof;
pub mod child;
pub(crate) mod info;
pub(crate) mod rdb;
pub(crate) mod state;
pub mod storage;
#[cfg(test)]
mod tests;

pub use child::ChildProcess;

use crate::cmd::{flags, CommandSpec};
use crate::resp::{Protocol, ReplyWriter};
use crate::server::Server;
use crate::stats::CommandName;

/// Starts a shutdown (SHUTDOWN, or a signal through
/// [`crate::Engine::prepare_shutdown`]) as Redis's `prepareForShutdown`:
/// the AOF flushed and fsynced inline, then the final RDB save when save
/// points are configured (or SAVE was asked, and not NOSAVE). Returns
/// `Ok(Some(work))` while the save runs (its end emits the shutdown, or
/// answers the client with the error), `Ok(None)` when the shutdown was
/// emitted at once, `Err(())` when saving is impossible and not forced.
pub(crate) fn shutdown(
    server: &mut Server,
    events: &mut std::collections::VecDeque<crate::Event>,
    now: crate::Now,
    client: Option<crate::ClientId>,
    shutdown: crate::Shutdown,
) -> Result<Option<u64>, ()> {
    use crate::event::ShutdownSave;
    if server.config.storage && server.persist.aof.on {
        aof::flush(server, events, now, true);
        let file = server.persist.aof.incr_path.clone();
        server.persist.requests.issue(
            events,
            IoMode::Inline,
            StorageOp::Fsync { file },
            state::Purpose::Cleanup,
        );
    }
    let pc = PersistConfig::of(&server.config);
    let wants_save = match shutdown.save {
        ShutdownSave::Save => true,
        ShutdownSave::NoSave => false,
        // A host without storage has nowhere to save to: only an explicit
        // SAVE insists (and fails).
        ShutdownSave::Configured => server.config.storage && !pc.save_points.is_empty(),
    };
    if !wants_save {
        events.push_back(crate::Event::Shutdown(shutdown));
        return Ok(None);
    }
    if !server.config.storage || server.persist.rdb.save.is_some() {
        if shutdown.force {
            events.push_back(crate::Event::Shutdown(shutdown));
            return Ok(None);
        }
        return Err(());
    }
    events.push_back(crate::Event::Log {
        level: crate::LogLevel::Notice,
        text: "Saving the final RDB snapshot before exiting.".to_string(),
    });
    let after = rdb::AfterSave::Shutdown(client, shutdown);
    Ok(Some(rdb::start_save(server, events, now, after)))
}

/// After CONFIG SET: `appendonly` switched on starts the AOF with a
/// rewrite (on once it succeeds, Redis's `startAppendOnly`), switched off
/// stops it after a last flush and fsync (`stopAppendOnly`).
pub(crate) fn config_changed(
    server: &mut Server,
    events: &mut std::collections::VecDeque<crate::Event>,
    now: crate::Now,
) {
    if !server.config.storage {
        return;
    }
    let pc = PersistConfig::of(&server.config);
    server.persist.aof.policy = aof::Policy::of(&pc);
    let aof = &server.persist.aof;
    let running = aof.on || aof.rewrite.turning_on;
    if pc.appendonly && !running {
        start_aof(server, events, now, &pc);
    } else if !pc.appendonly && running {
        stop_aof(server, events, now);
    }
}

/// A replica's full resync replaced the dataset: an AOF that is on stops
/// before the load and starts again after it with a rewrite of the new
/// dataset (Redis's `stopAppendOnly` and `restartAOFAfterSYNC` around
/// `readSyncBulkPayload`'s load). Without it the AOF would hold the old
/// dataset's commands followed by the new stream's, and a restart would
/// load a dataset that was never the primary's. Call with `loading` true
/// before the load and false after it (whether it succeeded or not).
pub(crate) fn around_sync_load(
    server: &mut Server,
    events: &mut std::collections::VecDeque<crate::Event>,
    now: crate::Now,
    loading: bool,
) {
    if !server.config.storage {
        return;
    }
    let pc = PersistConfig::of(&server.config);
    let aof = &server.persist.aof;
    let running = aof.on || aof.rewrite.turning_on;
    match loading {
        true if running => stop_aof(server, events, now),
        false if pc.appendonly && !running => start_aof(server, events, now, &pc),
        _ => {}
    }
}

/// Redis's `startAppendOnly`: a rewrite, the AOF on once it succeeds.
fn start_aof(
    server: &mut Server,
    events: &mut std::collections::VecDeque<crate::Event>,
    now: crate::Now,
    pc: &PersistConfig,
) {
    server.persist.aof.rewrite.turning_on = true;
    server.persist.requests.issue(
        events,
        IoMode::Inline,
        StorageOp::MakeDir {
            dir: pc.appenddirname.clone(),
        },
        state::Purpose::Cleanup,
    );
    if rdb::child_active(server) || server.persist.rdb.save.is_some() {
        server.persist.aof.rewrite.scheduled = true;
        events.push_back(crate::Event::Log {
            level: crate::LogLevel::Warning,
            text: "AOF was enabled but there is already another background operation. An \
                   AOF background was scheduled to start when possible."
                .to_string(),
        });
    } else {
        aof::rewrite::start(server, events, now);
    }
}

/// Redis's `stopAppendOnly`: a last flush and fsync, then off.
fn stop_aof(
    server: &mut Server,
    events: &mut std::collections::VecDeque<crate::Event>,
    now: crate::Now,
) {
    aof::flush(server, events, now, true);
    if server.persist.aof.on {
        let file = server.persist.aof.incr_path.clone();
        server.persist.requests.issue(
            events,
            IoMode::Inline,
            StorageOp::Fsync { file },
            state::Purpose::Cleanup,
        );
    }
    let aof = &mut server.persist.aof;
    aof.on = false;
    aof.rewrite.turning_on = false;
    aof.buf.clear();
    aof.write_error = None;
    aof.fsync_error = None;
}

/// Refuses writes (and PING, as Redis does) with MISCONF while the disk
/// fails: the last background save (with `stop-writes-on-bgsave-error`
/// and save points) or the AOF (Redis's `writeCommandsDeniedByDiskError`).
pub(crate) fn admit(
    server: &Server,
    resolved: &mut Result<
        (Option<&'static CommandSpec>, &'static CommandSpec),
        Option<CommandName>,
    >,
    reply: &mut Vec<u8>,
) {
    let Ok((parent, spec)) = *resolved else {
        return;
    };
    if !spec.has(flags::WRITE) && spec.name != "ping" {
        return;
    }
    let message = if rdb::writes_denied(server) {
        rdb::MISCONF_BGSAVE.to_string()
    } else if let Some(e) = aof::writes_denied(server) {
        format!("MISCONF Errors writing to the AOF file: {}", e.text())
    } else {
        return;
    };
    ReplyWriter::new(reply, Protocol::Resp2).error(&message);
    *resolved = Err(Some(CommandName::of(parent, spec)));
}
pub use state::PersistConfig;
pub use storage::*;
