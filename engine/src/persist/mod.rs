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
pub(crate) mod rdb;
pub(crate) mod state;
pub mod storage;

pub use child::ChildProcess;
pub use state::PersistConfig;
pub use storage::{
    ChildId, ChildJob, ForkRequest, IoMode, StorageDone, StorageError, StorageId, StorageOp,
    StorageRequest, StorageResult,
};
