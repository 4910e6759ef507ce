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
//! - [`state`]: the bookkeeping they share (ids, what each request is for,
//!   the options read from the configuration).

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

/// Refuses writes (and PING, as Redis does) with MISCONF while the disk
/// fails: the last background save (with `stop-writes-on-bgsave-error`
/// and save points) or the AOF (Redis's `writeCommandsDeniedByDiskError`).
pub(crate) fn admit(
    server: &Server,
    resolved: &mut Result<(Option<&'static CommandSpec>, &'static CommandSpec), Option<CommandName>>,
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
pub use storage::{
    ChildId, ChildJob, ForkRequest, IoMode, StorageDone, StorageError, StorageId, StorageOp,
    StorageRequest, StorageResult,
};
