//! The append-only file as Redis 7.0 keeps it: multi-part (a base file,
//! incremental files, a manifest, all under `appenddirname`), written after
//! every input from the propagated commands, fsynced per `appendfsync`.
//!
//! - **always**: the buffer is appended and fsynced *inline* after each
//!   input that wrote, so the replies of that input leave only after the
//!   fsync (the host performs inline requests before transmitting). An
//!   append or fsync error is fatal, as in Redis ("Can't recover from AOF
//!   write error when the AOF fsync policy is 'always'. Exiting...").
//! - **everysec**: appended inline (the page cache), fsynced in the
//!   background at most once a second; while a background fsync is still
//!   running, the append is postponed, up to 2 seconds, then done anyway
//!   (INFO `aof_delayed_fsync`).
//! - **no**: appended inline, never fsynced by the server.
//!
//! After an append error (everysec/no) writes are refused with
//! `MISCONF Errors writing to the AOF file: ...` until an append succeeds;
//! the cron retries. A background fsync error does the same until a later
//! fsync succeeds.

pub(crate) mod commands;
pub(crate) mod load;
pub(crate) mod manifest;
pub(crate) mod rewrite;
mod stream_commands;

use std::collections::VecDeque;

use super::state::{Fsync, PersistConfig, Purpose};
use super::storage::{IoMode, StorageDone, StorageError, StorageOp, StorageResult};
use crate::event::{Event, LogLevel};
use crate::server::Server;
use crate::time::Now;
use manifest::Manifest;

pub(crate) use rewrite::{bgrewriteaof_command, rewrite_active, rewrite_bytes, rewrite_exited};

/// Redis's postponement limit for everysec appends while a background
/// fsync runs.
pub const POSTPONE_LIMIT_NS: u64 = 2_000_000_000;
/// everysec: a background fsync at most this often.
pub const EVERYSEC_NS: u64 = 1_000_000_000;
/// After a failed append, the next try waits this long (Redis retries from
/// its cron, once a second): a completion is an input too, so retrying on
/// it would loop as fast as the disk fails.
pub const WRITE_ERROR_RETRY_NS: u64 = 1_000_000_000;

/// What an AOF request is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AofOp {
    /// An append of `len` buffered bytes.
    Append { len: usize },
    /// The fsync that follows an append under `always`.
    FsyncAlways,
    /// A background fsync under everysec.
    FsyncBackground,
    /// A step of writing the manifest or opening files.
    Files,
}

/// The AOF state (INFO persistence's `aof_*` fields).
#[derive(Debug, Default)]
pub(crate) struct Aof {
    /// Commands are appended (Redis's `aof_state == AOF_ON`).
    pub(crate) on: bool,
    pub(crate) manifest: Manifest,
    /// The incr file being appended to, with its directory.
    pub(crate) incr_path: String,
    /// Propagated bytes not yet appended (`aof_buf`).
    pub(crate) buf: Vec<u8>,
    /// An append in flight (inline: completes before the next input).
    pub(crate) append_in_flight: bool,
    pub(crate) fsync_in_flight: bool,
    /// Bytes were appended since the last fsync.
    pub(crate) unsynced: bool,
    pub(crate) last_fsync_mono_ns: u64,
    pub(crate) postponed_since_ns: Option<u64>,
    pub(crate) delayed_fsync: u64,
    /// The last append failed (`aof_last_write_status`).
    pub(crate) write_error: Option<StorageError>,
    /// When the last append failed (for [`WRITE_ERROR_RETRY_NS`]).
    pub(crate) write_error_at_ns: u64,
    /// The last background fsync failed (`aof_bio_fsync_status`).
    pub(crate) fsync_error: Option<StorageError>,
    /// Bytes in the current incr file, and in the base.
    pub(crate) incr_size_bytes: u64,
    pub(crate) base_size_bytes: u64,
    pub(crate) rewrite: rewrite::RewriteState,
    /// `appendfsync` and `no-appendfsync-on-rewrite`, read from the
    /// configuration when it changes, not after every input.
    pub(crate) policy: Policy,
    /// File operations (manifest, base and incr files) done one at a
    /// time, each after the previous succeeded: a failed or short step
    /// must not let the rename after it publish a half-written file.
    pub(crate) files: VecDeque<StorageOp>,
    /// The bytes of the files step in flight, when it is an append.
    pub(crate) files_append_len: Option<usize>,
    pub(crate) files_in_flight: bool,
    /// The file the append in flight goes to (a rewrite may switch the
    /// incr file before it completes; its fsync is for this one).
    pub(crate) append_file: String,
    /// The file the background fsync in flight is for.
    pub(crate) fsync_file: String,
}

/// The options the write path reads after every input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Policy {
    pub(crate) fsync: Fsync,
    pub(crate) no_fsync_on_rewrite: bool,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            fsync: Fsync::EverySec,
            no_fsync_on_rewrite: false,
        }
    }
}

impl Policy {
    pub(crate) fn of(pc: &PersistConfig) -> Policy {
        Policy {
            fsync: pc.appendfsync,
            no_fsync_on_rewrite: pc.no_appendfsync_on_rewrite,
        }
    }
}

/// Queues file operations to run in order (see `Aof::files`).
pub(crate) fn issue_files(
    server: &mut Server,
    events: &mut VecDeque<Event>,
    ops: impl IntoIterator<Item = StorageOp>,
) {
    server.persist.aof.files.extend(ops);
    next_files_step(server, events);
}

fn next_files_step(server: &mut Server, events: &mut VecDeque<Event>) {
    let aof = &mut server.persist.aof;
    if aof.files_in_flight {
        return;
    }
    let Some(op) = aof.files.pop_front() else {
        return;
    };
    aof.files_append_len = match &op {
        StorageOp::Append { bytes, .. } => Some(bytes.len()),
        _ => None,
    };
    aof.files_in_flight = true;
    server
        .persist
        .requests
        .issue(events, IoMode::Inline, op, Purpose::Aof(AofOp::Files));
}

/// The directory-qualified name of `file` in `appenddirname`.
pub(crate) fn path(pc: &PersistConfig, file: &str) -> String {
    format!("{}/{}", pc.appenddirname, file)
}

/// Whether writes are refused because the AOF cannot be written.
pub(crate) fn writes_denied(server: &Server) -> Option<StorageError> {
    let aof = &server.persist.aof;
    if !aof.on {
        return None;
    }
    aof.write_error.or(aof.fsync_error)
}

/// Bytes propagated by the commands of the last input, for the AOF.
pub(crate) fn feed(server: &mut Server, bytes: &[u8]) {
    if server.persist.aof.on || server.persist.aof.rewrite.waiting_to_turn_on() {
        server.persist.aof.buf.extend_from_slice(bytes);
    }
}

/// After every input (Redis's `beforeSleep` → `flushAppendOnlyFile(0)`):
/// appends the buffer and fsyncs as the policy says.
pub(crate) fn flush(server: &mut Server, events: &mut VecDeque<Event>, now: Now, force: bool) {
    let aof = &mut server.persist.aof;
    if !aof.on || aof.append_in_flight || aof.files_in_flight {
        // File steps first: the incr file may not exist yet.
        return;
    }
    let retry_wait = aof.write_error.is_some()
        && now.mono_ns.saturating_sub(aof.write_error_at_ns) < WRITE_ERROR_RETRY_NS;
    if retry_wait && !force {
        return;
    }
    let policy = aof.policy;
    if aof.buf.is_empty() {
        maybe_background_fsync(server, events, now, policy);
        return;
    }
    if policy.fsync == Fsync::EverySec && !force && aof.fsync_in_flight {
        match aof.postponed_since_ns {
            None => {
                aof.postponed_since_ns = Some(now.mono_ns);
                return;
            }
            Some(since) if now.mono_ns.saturating_sub(since) < POSTPONE_LIMIT_NS => return,
            Some(_) => {
                aof.delayed_fsync += 1;
                events.push_back(Event::Log {
                    level: LogLevel::Notice,
                    text: "Asynchronous AOF fsync is taking too long (disk is busy?). Writing the \
                           AOF buffer without waiting for fsync to complete, this may slow down \
                           Redis."
                        .to_string(),
                });
            }
        }
    }
    aof.postponed_since_ns = None;
    aof.append_in_flight = true;
    let bytes = aof.buf.clone();
    let len = bytes.len();
    let file = aof.incr_path.clone();
    aof.append_file = file.clone();
    server.persist.requests.issue(
        events,
        IoMode::Inline,
        StorageOp::Append { file, bytes },
        Purpose::Aof(AofOp::Append { len }),
    );
}

/// everysec: a background fsync once a second when there is something
/// unsynced and none is running.
fn maybe_background_fsync(
    server: &mut Server,
    events: &mut VecDeque<Event>,
    now: Now,
    policy: Policy,
) {
    let aof = &mut server.persist.aof;
    let due = now.mono_ns.saturating_sub(aof.last_fsync_mono_ns) >= EVERYSEC_NS;
    if policy.fsync != Fsync::EverySec || aof.fsync_in_flight || aof.files_in_flight || !due {
        return;
    }
    if aof.write_error.is_some() || !aof.unsynced {
        return;
    }
    if policy.no_fsync_on_rewrite && rewrite_active(server) {
        return;
    }
    server.persist.aof.last_fsync_mono_ns = now.mono_ns;
    background_fsync(server, events);
}

/// Issues the background fsync of the current incr file.
pub(crate) fn background_fsync(server: &mut Server, events: &mut VecDeque<Event>) {
    let aof = &mut server.persist.aof;
    aof.fsync_in_flight = true;
    aof.unsynced = false;
    aof.fsync_file = aof.incr_path.clone();
    let file = aof.incr_path.clone();
    server.persist.requests.issue(
        events,
        IoMode::Background,
        StorageOp::Fsync { file },
        Purpose::Aof(AofOp::FsyncBackground),
    );
}

/// The outcome of an AOF request. Returns `Err(line)` when Redis would
/// exit.
pub(crate) fn done(
    server: &mut Server,
    events: &mut VecDeque<Event>,
    now: Now,
    op: AofOp,
    result: StorageResult,
) -> Result<(), String> {
    let policy = server.persist.aof.policy;
    match op {
        AofOp::Append { len } => appended(server, events, now, policy, len, result),
        AofOp::FsyncAlways => match result {
            Ok(_) => {
                server.persist.aof.last_fsync_mono_ns = now.mono_ns;
                Ok(())
            }
            Err(e) => Err(format!(
                "Can't persist AOF for fsync error when the AOF fsync policy is 'always': {}. \
                 Exiting...",
                e.text()
            )),
        },
        AofOp::FsyncBackground => {
            let aof = &mut server.persist.aof;
            aof.fsync_in_flight = false;
            // Redis fsyncs a descriptor, which outlives the file's name: a
            // file a rewrite made history and removed meanwhile was synced
            // in full before the switch (`Aof::files`).
            let superseded = aof.fsync_file != aof.incr_path;
            match result {
                Ok(_) | Err(StorageError::NotFound) if superseded => aof.fsync_error = None,
                Ok(_) => aof.fsync_error = None,
                Err(e) => {
                    // The data is not durable and a retry would not make
                    // it so: the next append marks it unsynced again.
                    aof.fsync_error = Some(e);
                    aof.unsynced = true;
                    events.push_back(Event::Log {
                        level: LogLevel::Warning,
                        text: format!("Fail to fsync the AOF file: {}", e.text()),
                    });
                }
            }
            Ok(())
        }
        AofOp::Files => {
            let aof = &mut server.persist.aof;
            aof.files_in_flight = false;
            let expected = aof.files_append_len.take();
            let error = match (result, expected) {
                (Err(e), _) => Some(e.text().to_string()),
                (Ok(StorageDone::Written(n)), Some(len)) if (n as usize) < len => {
                    Some(format!("short write (nwritten={n}, expected={len})"))
                }
                _ => None,
            };
            if let Some(why) = error {
                aof.files.clear();
                return Err(format!("Can't persist the append-only files: {why}"));
            }
            next_files_step(server, events);
            if !server.persist.aof.files_in_flight {
                flush(server, events, now, false);
            }
            Ok(())
        }
    }
}

fn appended(
    server: &mut Server,
    events: &mut VecDeque<Event>,
    now: Now,
    policy: Policy,
    len: usize,
    result: StorageResult,
) -> Result<(), String> {
    let aof = &mut server.persist.aof;
    aof.append_in_flight = false;
    let written = match result {
        Ok(StorageDone::Written(n)) => (n as usize).min(len),
        Ok(_) => len,
        Err(e) => {
            if policy.fsync == Fsync::Always {
                return Err(
                    "Can't recover from AOF write error when the AOF fsync policy is \
                            'always'. Exiting..."
                        .to_string(),
                );
            }
            if aof.write_error.is_none() {
                events.push_back(Event::Log {
                    level: LogLevel::Warning,
                    text: format!("Error writing to the AOF file: {}", e.text()),
                });
            }
            aof.write_error = Some(e);
            aof.write_error_at_ns = now.mono_ns;
            return Ok(());
        }
    };
    // What reached the file leaves the buffer; a short write keeps the
    // rest to append after it (the file holds a prefix of the buffer, so
    // appending the rest completes the same bytes).
    aof.buf.drain(..written);
    aof.incr_size_bytes += written as u64;
    aof.unsynced = true;
    if written < len {
        if policy.fsync == Fsync::Always {
            return Err(
                "Can't recover from AOF write error when the AOF fsync policy is \
                        'always'. Exiting..."
                    .to_string(),
            );
        }
        aof.write_error = Some(StorageError::NoSpace);
        aof.write_error_at_ns = now.mono_ns;
        events.push_back(Event::Log {
            level: LogLevel::Warning,
            text: format!(
                "Short write while writing to the AOF file: (nwritten={written}, expected={len})"
            ),
        });
        return Ok(());
    }
    if aof.write_error.take().is_some() {
        events.push_back(Event::Log {
            level: LogLevel::Warning,
            text: "AOF write error looks solved, Redis can write again.".to_string(),
        });
    }
    if policy.fsync == Fsync::Always {
        if crate::planted::acks_before_fsync(server, events) {
            return Ok(());
        }
        let aof = &mut server.persist.aof;
        aof.unsynced = false;
        let file = aof.append_file.clone();
        server.persist.requests.issue(
            events,
            IoMode::Inline,
            StorageOp::Fsync { file },
            Purpose::Aof(AofOp::FsyncAlways),
        );
        return Ok(());
    }
    maybe_background_fsync(server, events, now, policy);
    Ok(())
}

/// The cron's part (Redis's `serverCron`): a postponed append, a retry
/// after an append error, and the everysec fsync.
pub(crate) fn cron(server: &mut Server, events: &mut VecDeque<Event>, now: Now) {
    if !server.persist.aof.on {
        return;
    }
    flush(server, events, now, false);
    rewrite::cron(server, events, now);
}

/// Issues the requests that write `manifest` durably: a temp file,
/// fsynced, renamed over the manifest, and the directory synced
/// (`persistAofManifest`).
pub(crate) fn persist_manifest(
    server: &mut Server,
    events: &mut VecDeque<Event>,
    pc: &PersistConfig,
) {
    let name = Manifest::file_name(&pc.appendfilename);
    let temp = path(pc, &format!("temp-{name}"));
    let text = server.persist.aof.manifest.render().into_bytes();
    issue_files(
        server,
        events,
        [
            StorageOp::Create { file: temp.clone() },
            StorageOp::Append {
                file: temp.clone(),
                bytes: text,
            },
            StorageOp::Fsync { file: temp.clone() },
            StorageOp::Rename {
                from: temp,
                to: path(pc, &name),
            },
            StorageOp::SyncDir {
                dir: pc.appenddirname.clone(),
            },
        ],
    );
}
