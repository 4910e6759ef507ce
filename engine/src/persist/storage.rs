//! The storage boundary: what the engine asks of a disk, and what the disk
//! answers. The engine never touches a file. It emits a [`StorageRequest`]
//! as [`crate::Event::Storage`] and the host performs it (seedkv-server on
//! real files, the simulator on its modelled disk), reporting the outcome
//! with [`crate::Engine::storage_done`].
//!
//! Files are named relative to the server's `dir` (the host's business):
//! `dump.rdb`, `appendonlydir/appendonly.aof.1.incr.aof`. The engine keeps
//! its file names short and free of `..`; a host may refuse anything else.
//!
//! A request is either [`IoMode::Inline`] or [`IoMode::Background`], as in
//! Redis, where `write(2)` to the AOF and the `fsync` of `appendfsync
//! always` happen on the command thread and the everysec `fsync` on a
//! background thread:
//!
//! - **Inline**: the host performs it *before anything else*: before the
//!   next event, before transmitting any client output, before feeding the
//!   engine another input. Its completion is the host's next call into the
//!   engine. This is how "the reply leaves only after the fsync" is kept:
//!   the replies of the input that wrote are still in the engine when the
//!   fsync is asked for.
//! - **Background**: the host performs it when it likes (a thread, a later
//!   virtual time) and reports its completion as an input, meanwhile the
//!   engine goes on serving.
//!
//! A forked child ([`crate::Event::Fork`], BGSAVE and BGREWRITEAOF) issues
//! its own requests through [`crate::persist::ChildProcess`]; the host runs
//! them in the child's context (the real server in the forked process).

/// Names one storage request, unique for the life of its issuer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StorageId(pub u64);

/// When the host must perform a request (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoMode {
    Inline,
    Background,
}

/// One thing to do to the disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StorageOp {
    /// Read up to `len_bytes` from `offset_bytes`; fewer bytes (down to
    /// none) at the end of the file. A missing file is
    /// [`StorageError::NotFound`].
    Read {
        file: String,
        offset_bytes: u64,
        len_bytes: u64,
    },
    /// Create `file` empty, truncating an existing one (`O_CREAT|O_TRUNC`).
    Create { file: String },
    /// Append `bytes` at the end of `file` (which must exist). The host may
    /// write fewer ([`StorageDone::Written`]); the engine then retries the
    /// rest.
    Append { file: String, bytes: Vec<u8> },
    /// Make `file`'s data durable (`fsync(2)`). Until it succeeds, a crash
    /// may lose or tear anything appended since the last successful one; a
    /// failed fsync does not make the data durable later.
    Fsync { file: String },
    /// Atomically replace `to` with `from` (`rename(2)`). Durable only once
    /// the directory is synced ([`StorageOp::SyncDir`]).
    Rename { from: String, to: String },
    /// Cut `file` to `len_bytes` (`truncate(2)`): loading cuts a torn AOF
    /// tail this way when `aof-load-truncated` allows it.
    Truncate { file: String, len_bytes: u64 },
    /// Delete `file`; a missing file is not an error.
    Remove { file: String },
    /// Create directory `dir` (`appenddirname`); an existing one is fine.
    MakeDir { dir: String },
    /// Make the entries of directory `dir` durable (creates, renames,
    /// removes); `""` is the server's `dir` itself.
    SyncDir { dir: String },
    /// The size of `file` in bytes ([`StorageDone::Size`]).
    Size { file: String },
}

impl StorageOp {
    /// The file or directory the request is about, for logs.
    pub fn target(&self) -> &str {
        match self {
            StorageOp::Read { file, .. }
            | StorageOp::Create { file }
            | StorageOp::Append { file, .. }
            | StorageOp::Fsync { file }
            | StorageOp::Truncate { file, .. }
            | StorageOp::Remove { file }
            | StorageOp::Size { file } => file,
            StorageOp::Rename { to, .. } => to,
            StorageOp::MakeDir { dir } | StorageOp::SyncDir { dir } => dir,
        }
    }
}

/// A request for the host (the payload of [`crate::Event::Storage`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StorageRequest {
    pub id: StorageId,
    pub mode: IoMode,
    pub op: StorageOp,
}

/// What a request achieved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StorageDone {
    /// Done (create, fsync, rename, remove, mkdir, sync dir).
    Ok,
    /// The bytes read (a short or empty read is the end of the file).
    Read(Vec<u8>),
    /// Bytes of an append that reached the file (fewer than asked: a short
    /// write).
    Written(u64),
    /// A file's size.
    Size(u64),
}

/// Why a request failed, as the errno Redis would log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StorageError {
    /// ENOENT.
    NotFound,
    /// ENOSPC.
    NoSpace,
    /// EIO, and anything else the host cannot name.
    Io,
    /// EACCES / EPERM.
    Permission,
}

impl StorageError {
    /// `strerror` of the errno, as Redis's log lines and MISCONF replies
    /// quote it.
    pub fn text(self) -> &'static str {
        match self {
            StorageError::NotFound => "No such file or directory",
            StorageError::NoSpace => "No space left on device",
            StorageError::Io => "Input/output error",
            StorageError::Permission => "Permission denied",
        }
    }

    /// The error for an OS errno (hosts on real files use it).
    pub fn from_errno(errno: i32) -> StorageError {
        match errno {
            2 => StorageError::NotFound,
            28 => StorageError::NoSpace,
            1 | 13 => StorageError::Permission,
            _ => StorageError::Io,
        }
    }
}

/// The outcome the host reports for a request.
pub type StorageResult = Result<StorageDone, StorageError>;

/// Names one forked child, unique for the life of the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ChildId(pub u64);

/// What a child is forked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChildJob {
    /// BGSAVE: write the snapshot to `temp`, fsync it and rename it to
    /// `file` (Redis's child does the rename too).
    RdbSave { temp: String, file: String },
    /// BGREWRITEAOF: write a new base file to `temp` (an RDB preamble when
    /// `rdb_preamble`, else commands) and fsync it; the parent renames it.
    AofRewrite { temp: String, rdb_preamble: bool },
}

/// A fork the engine asks for (the payload of [`crate::Event::Fork`]).
///
/// The host forks (seedkv-server calls `fork(2)`; the simulator freezes
/// the engine's state at that instant) and, in the child, calls
/// [`crate::Engine::start_child`] and performs the returned
/// [`crate::persist::ChildProcess`]'s requests until it exits. When the
/// child has exited, the parent's host reports it with
/// [`crate::Engine::child_exited`]. A host that cannot fork reports the
/// child as failed at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForkRequest {
    pub id: ChildId,
    pub job: ChildJob,
}
