//! Reading and writing the `aclfile` through the storage boundary: ACL
//! LOAD (and loading at start) reads the whole file; ACL SAVE writes a
//! temp file, fsyncs it and renames it over the file, as Redis's
//! `ACLSaveToFile` does (which, in 7.0.15, does not fsync: seedkv does, so
//! that a saved file survives a crash of the simulated disk).
//!
//! Like a foreground SAVE, each is a chain of inline requests: the client
//! that asked waits unserved (`waiting_save`) and gets its reply when the
//! chain ends; nothing else runs meanwhile, so the users a save describes
//! are those of the moment it was asked. The text itself is
//! [`crate::acl::file`]'s business.

use std::collections::VecDeque;

use super::state::Purpose;
use super::storage::{IoMode, StorageDone, StorageError, StorageOp, StorageResult};
use crate::client::ClientId;
use crate::event::{Event, LogLevel};
use crate::server::Server;

/// Bytes per read of the file.
pub const READ_CHUNK_BYTES: u64 = 1024 * 1024;

/// Who waits for the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Caller {
    Client(ClientId),
    /// Loading at start (Redis's `ACLLoadUsersAtStartup`).
    Startup,
}

/// The ACL file operation in progress.
#[derive(Debug)]
pub(crate) struct AclFileOp {
    pub(crate) caller: Caller,
    file: String,
    job: Job,
}

#[derive(Debug)]
enum Job {
    Load { bytes: Vec<u8> },
    Save(Save),
}

#[derive(Debug)]
struct Save {
    temp: String,
    bytes: Vec<u8>,
    written_bytes: usize,
    step: SaveStep,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SaveStep {
    Create,
    Append,
    Fsync,
    Rename,
}

/// How an operation ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The whole file.
    Read(Vec<u8>),
    /// Redis's message for a file it could not open.
    ReadFailed(String),
    Saved,
    /// Failed; the reason is already logged.
    SaveFailed,
}

/// The file name the engine asks for: `aclfile` as configured (an absolute
/// path, or one relative to `dir`, where Redis runs).
pub(crate) fn configured(server: &Server) -> String {
    crate::commands::config::config_get(&server.config, "aclfile").unwrap_or_default()
}

/// Starts reading the `aclfile`.
pub(crate) fn start_load(server: &mut Server, events: &mut VecDeque<Event>, caller: Caller) {
    debug_assert!(server.persist.acl_file.is_none());
    let file = configured(server);
    server.persist.acl_file = Some(AclFileOp {
        caller,
        file: file.clone(),
        job: Job::Load { bytes: Vec::new() },
    });
    issue_read(server, events, file, 0);
}

fn issue_read(server: &mut Server, events: &mut VecDeque<Event>, file: String, offset: u64) {
    server.persist.requests.issue(
        events,
        IoMode::Inline,
        StorageOp::Read {
            file,
            offset_bytes: offset,
            len_bytes: READ_CHUNK_BYTES,
        },
        Purpose::AclFile,
    );
}

/// Starts writing `bytes` (the users as [`crate::acl::file::render`] wrote
/// them) to the `aclfile`, through a temp file named as Redis names it.
pub(crate) fn start_save(
    server: &mut Server,
    events: &mut VecDeque<Event>,
    client: ClientId,
    bytes: Vec<u8>,
    now_ms: u64,
) {
    debug_assert!(server.persist.acl_file.is_none());
    let file = configured(server);
    let temp = format!("{file}.tmp-{}-{now_ms}", server.config.process_id);
    server.persist.acl_file = Some(AclFileOp {
        caller: Caller::Client(client),
        file,
        job: Job::Save(Save {
            temp: temp.clone(),
            bytes,
            written_bytes: 0,
            step: SaveStep::Create,
        }),
    });
    server.persist.requests.issue(
        events,
        IoMode::Inline,
        StorageOp::Create { file: temp },
        Purpose::AclFile,
    );
}

/// A request of the operation completed: issues the next one, or returns
/// how the operation ended (and who waits for it).
pub(crate) fn step_done(
    server: &mut Server,
    events: &mut VecDeque<Event>,
    result: StorageResult,
) -> Option<(Caller, Outcome)> {
    let op = server.persist.acl_file.as_mut()?;
    let caller = op.caller;
    let next = match &mut op.job {
        Job::Load { bytes } => match result {
            Ok(StorageDone::Read(chunk)) => {
                let more = chunk.len() as u64 == READ_CHUNK_BYTES;
                bytes.extend_from_slice(&chunk);
                if more {
                    let (file, offset) = (op.file.clone(), bytes.len() as u64);
                    issue_read(server, events, file, offset);
                    return None;
                }
                Outcome::Read(std::mem::take(bytes))
            }
            Ok(_) => Outcome::ReadFailed(open_error(&op.file, StorageError::Io)),
            Err(e) => Outcome::ReadFailed(open_error(&op.file, e)),
        },
        Job::Save(save) => match save_step(save, &op.file, result) {
            Ok(Some(request)) => {
                server
                    .persist
                    .requests
                    .issue(events, IoMode::Inline, request, Purpose::AclFile);
                return None;
            }
            Ok(None) => Outcome::Saved,
            Err(why) => {
                events.push_back(Event::Log {
                    level: LogLevel::Warning,
                    text: why,
                });
                let file = save.temp.clone();
                server.persist.requests.issue(
                    events,
                    IoMode::Inline,
                    StorageOp::Remove { file },
                    Purpose::Cleanup,
                );
                Outcome::SaveFailed
            }
        },
    };
    server.persist.acl_file = None;
    Some((caller, next))
}

/// Redis's error for a file `fopen` refused.
fn open_error(file: &str, e: StorageError) -> String {
    format!("Error loading ACLs, opening file '{file}': {}", e.text())
}

/// The request after a save step, `None` when the save is done, or Redis's
/// log line for the step that failed.
fn save_step(
    save: &mut Save,
    file: &str,
    result: StorageResult,
) -> Result<Option<StorageOp>, String> {
    let temp = save.temp.clone();
    match (save.step, result) {
        (SaveStep::Create, Err(e)) => {
            Err(format!("Opening temp ACL file for ACL SAVE: {}", e.text()))
        }
        (SaveStep::Append | SaveStep::Fsync, Err(e)) => {
            Err(format!("Writing ACL file for ACL SAVE: {}", e.text()))
        }
        (SaveStep::Rename, Err(e)) => Err(format!("Renaming ACL file for ACL SAVE: {}", e.text())),
        (SaveStep::Create, Ok(_)) => {
            save.step = SaveStep::Append;
            Ok(Some(append_rest(save)))
        }
        (SaveStep::Append, Ok(done)) => {
            let n = match done {
                StorageDone::Written(n) => n as usize,
                _ => save.bytes.len() - save.written_bytes,
            };
            if n == 0 && save.written_bytes < save.bytes.len() {
                return Err("Writing ACL file for ACL SAVE: short write".to_string());
            }
            save.written_bytes = (save.written_bytes + n).min(save.bytes.len());
            if save.written_bytes < save.bytes.len() {
                return Ok(Some(append_rest(save)));
            }
            save.step = SaveStep::Fsync;
            Ok(Some(StorageOp::Fsync { file: temp }))
        }
        (SaveStep::Fsync, Ok(_)) => {
            save.step = SaveStep::Rename;
            Ok(Some(StorageOp::Rename {
                from: temp,
                to: file.to_string(),
            }))
        }
        (SaveStep::Rename, Ok(_)) => Ok(None),
    }
}

fn append_rest(save: &Save) -> StorageOp {
    StorageOp::Append {
        file: save.temp.clone(),
        bytes: save.bytes[save.written_bytes..].to_vec(),
    }
}
