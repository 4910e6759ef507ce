//! An instant, infallible in-memory disk for tests: storage requests are
//! performed as soon as they are drained (inline and background alike) and
//! a fork runs its child to completion at once. Files survive the engine:
//! a test builds a new engine over the same disk to check a restart.

use std::collections::BTreeMap;

use crate::persist::{
    ForkRequest, StorageDone, StorageError, StorageOp, StorageRequest, StorageResult,
};
use crate::{Engine, Now};

/// Files by name (directories are implied by names).
#[derive(Clone, Debug, Default)]
pub struct MemDisk {
    pub files: BTreeMap<String, Vec<u8>>,
    /// Requests performed, in order (for tests of the request sequence).
    pub log: Vec<StorageOp>,
    /// When set, every request fails with this error.
    pub fail_with: Option<StorageError>,
}

impl MemDisk {
    pub fn perform(&mut self, op: &StorageOp) -> StorageResult {
        self.log.push(op.clone());
        if let Some(e) = self.fail_with {
            return Err(e);
        }
        match op {
            StorageOp::Read {
                file,
                offset_bytes,
                len_bytes,
            } => {
                let data = self.files.get(file).ok_or(StorageError::NotFound)?;
                let start = (*offset_bytes as usize).min(data.len());
                let end = start.saturating_add(*len_bytes as usize).min(data.len());
                Ok(StorageDone::Read(data[start..end].to_vec()))
            }
            StorageOp::Create { file } => {
                self.files.insert(file.clone(), Vec::new());
                Ok(StorageDone::Ok)
            }
            StorageOp::Append { file, bytes } => {
                let data = self.files.get_mut(file).ok_or(StorageError::NotFound)?;
                data.extend_from_slice(bytes);
                Ok(StorageDone::Written(bytes.len() as u64))
            }
            StorageOp::Fsync { file } => match self.files.contains_key(file) {
                true => Ok(StorageDone::Ok),
                false => Err(StorageError::NotFound),
            },
            StorageOp::Rename { from, to } => {
                let data = self.files.remove(from).ok_or(StorageError::NotFound)?;
                self.files.insert(to.clone(), data);
                Ok(StorageDone::Ok)
            }
            StorageOp::Truncate { file, len_bytes } => {
                let data = self.files.get_mut(file).ok_or(StorageError::NotFound)?;
                data.truncate(*len_bytes as usize);
                Ok(StorageDone::Ok)
            }
            StorageOp::Remove { file } => {
                self.files.remove(file);
                Ok(StorageDone::Ok)
            }
            StorageOp::MakeDir { .. } | StorageOp::SyncDir { .. } => Ok(StorageDone::Ok),
            StorageOp::Size { file } => {
                let data = self.files.get(file).ok_or(StorageError::NotFound)?;
                Ok(StorageDone::Size(data.len() as u64))
            }
        }
    }

    /// Performs `request` for `engine` and reports it.
    pub fn serve(&mut self, engine: &mut Engine, now: Now, request: StorageRequest) {
        let result = self.perform(&request.op);
        engine.storage_done(now, request.id, result);
    }

    /// Runs `fork`'s child to completion and reports its exit.
    pub fn fork(&mut self, engine: &mut Engine, now: Now, fork: &ForkRequest) {
        let mut child = engine.start_child(now, fork);
        while let Some(request) = child.poll_storage() {
            let result = self.perform(&request.op);
            child.storage_done(request.id, result);
        }
        let ok = child.exit_status().unwrap_or(false);
        engine.child_exited(now, fork.id, ok);
    }
}
