//! A forked child as a sans-IO state machine: what Redis's BGSAVE and
//! BGREWRITEAOF children do (write a file from the dataset frozen at the
//! fork, fsync it, and for BGSAVE rename it over `dbfilename`), as storage
//! requests the host performs in the child's context.
//!
//! The dataset is serialized when the child starts, so the bytes are the
//! dataset at the instant of the fork whatever the parent does after:
//! seedkv-server calls [`crate::Engine::start_child`] in the forked
//! process (copy-on-write memory is the frozen dataset, as in Redis); the
//! simulator calls it at the instant of the fork.

use super::storage::{
    ChildJob, ForkRequest, IoMode, StorageDone, StorageId, StorageOp, StorageRequest, StorageResult,
};

/// Bytes per append: Redis's child writes through a buffered rio and
/// fsyncs every 32 MB with `rdb-save-incremental-fsync`; appending in
/// chunks keeps a short write's retry small.
pub const CHILD_APPEND_CHUNK_BYTES: usize = 4 * 1024 * 1024;

/// Where the child is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Create,
    Write {
        offset_bytes: usize,
    },
    Fsync,
    Rename,
    /// The directory, so that the rename survives a crash.
    SyncDir,
    Exited {
        ok: bool,
    },
}

/// A forked child: poll its requests, perform them, report them, until
/// [`ChildProcess::exit_status`] says it exited.
#[derive(Debug)]
pub struct ChildProcess {
    fork: ForkRequest,
    bytes: Vec<u8>,
    step: Step,
    next_id: u64,
    /// The request in flight: a child does one thing at a time.
    in_flight: Option<StorageId>,
    work_units: u64,
    error: Option<String>,
}

impl ChildProcess {
    /// A child for `fork` that will write `bytes` (the serialized dataset;
    /// `work_units` the CPU work that took).
    pub(crate) fn new(fork: ForkRequest, bytes: Vec<u8>, work_units: u64) -> ChildProcess {
        ChildProcess {
            fork,
            bytes,
            step: Step::Create,
            next_id: 0,
            in_flight: None,
            work_units,
            error: None,
        }
    }

    pub fn id(&self) -> super::ChildId {
        self.fork.id
    }

    /// The work the child did serializing the dataset (for a host that
    /// models the child's CPU, as the simulator does).
    pub fn work_units(&self) -> u64 {
        self.work_units
    }

    /// The file's size in bytes.
    pub fn file_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Why the child failed, as its log line says it.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// `Some(ok)` once the child has exited: `true` for exit status 0.
    pub fn exit_status(&self) -> Option<bool> {
        match self.step {
            Step::Exited { ok } => Some(ok),
            _ => None,
        }
    }

    fn temp(&self) -> &str {
        match &self.fork.job {
            ChildJob::RdbSave { temp, .. } | ChildJob::AofRewrite { temp, .. } => temp,
        }
    }

    /// The next request to perform, if the child is not waiting for one.
    /// Every child request is inline for the child: it does one at a time.
    pub fn poll_storage(&mut self) -> Option<StorageRequest> {
        if self.in_flight.is_some() {
            return None;
        }
        let file = self.temp().to_string();
        let op = match self.step {
            Step::Create => StorageOp::Create { file },
            Step::Write { offset_bytes } => {
                let end = (offset_bytes + CHILD_APPEND_CHUNK_BYTES).min(self.bytes.len());
                StorageOp::Append {
                    file,
                    bytes: self.bytes[offset_bytes..end].to_vec(),
                }
            }
            Step::Fsync => StorageOp::Fsync { file },
            Step::Rename => match &self.fork.job {
                ChildJob::RdbSave { file: to, .. } => StorageOp::Rename {
                    from: file,
                    to: to.clone(),
                },
                ChildJob::AofRewrite { .. } => unreachable!("a rewrite child does not rename"),
            },
            Step::SyncDir => StorageOp::SyncDir { dir: String::new() },
            Step::Exited { .. } => return None,
        };
        let id = StorageId(self.next_id);
        self.next_id += 1;
        self.in_flight = Some(id);
        Some(StorageRequest {
            id,
            mode: IoMode::Inline,
            op,
        })
    }

    /// The outcome of the request `id`. Unknown ids are ignored.
    pub fn storage_done(&mut self, id: StorageId, result: StorageResult) {
        if self.in_flight != Some(id) {
            return;
        }
        self.in_flight = None;
        let done = match result {
            Ok(done) => done,
            Err(e) => {
                self.fail(format!(
                    "Failed opening the temp file needed for {} ({}): {}",
                    self.what(),
                    self.temp(),
                    e.text()
                ));
                return;
            }
        };
        self.step = match (self.step, done) {
            (Step::Create, _) if self.bytes.is_empty() => Step::Fsync,
            (Step::Create, _) => Step::Write { offset_bytes: 0 },
            (Step::Write { offset_bytes }, StorageDone::Written(n)) => {
                let offset_bytes = offset_bytes + n as usize;
                if n == 0 {
                    // No progress: a full disk reports it as an error, so
                    // a zero-byte write is one too.
                    self.fail(format!("Write error saving {}: short write", self.what()));
                    return;
                }
                if offset_bytes >= self.bytes.len() {
                    Step::Fsync
                } else {
                    Step::Write { offset_bytes }
                }
            }
            (Step::Fsync, _) => match self.fork.job {
                ChildJob::RdbSave { .. } => Step::Rename,
                ChildJob::AofRewrite { .. } => Step::Exited { ok: true },
            },
            (Step::Rename, _) => Step::SyncDir,
            (Step::SyncDir, _) => Step::Exited { ok: true },
            (step, done) => {
                self.fail(format!("unexpected completion {done:?} at {step:?}"));
                return;
            }
        };
    }

    fn what(&self) -> &'static str {
        match self.fork.job {
            ChildJob::RdbSave { .. } => "the DB",
            ChildJob::AofRewrite { .. } => "the AOF rewrite",
        }
    }

    fn fail(&mut self, why: String) {
        self.error = Some(why);
        self.step = Step::Exited { ok: false };
    }
}
