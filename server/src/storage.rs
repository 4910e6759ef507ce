//! The engine's storage requests performed on real files (see
//! `seedkv_engine::persist::storage`).
//!
//! [`Disk`] performs one [`StorageOp`] on files named relative to the
//! server's `dir`. The event loop performs inline requests with it on the
//! command thread, inside the drain; background requests go to the
//! [`Background`] thread, whose completions come back through a channel
//! and are fed to the engine on the command thread.
//!
//! Appends keep their file open ([`Disk`] caches one handle per file,
//! opened `O_APPEND`): the AOF is appended to after every batch of write
//! commands, and reopening it each time would cost a path lookup per
//! batch. Create, rename and remove drop the cached handles they affect.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::mpsc;

use seedkv_engine::persist::{StorageDone, StorageError, StorageId, StorageOp, StorageResult};

/// Files under one directory, and the append handles kept open.
#[derive(Debug)]
pub struct Disk {
    base: PathBuf,
    appends: HashMap<String, File>,
    /// Whether append handles are kept open (the command thread's disk);
    /// the background thread's disk opens per request, so that a handle
    /// it holds never outlives a rename done on the other thread.
    cache: bool,
}

impl Disk {
    /// A disk for the files under `base` (the server's `dir`).
    pub fn new(base: PathBuf) -> Disk {
        Disk {
            base,
            appends: HashMap::new(),
            cache: true,
        }
    }

    /// A disk that keeps no file open between requests.
    pub fn uncached(base: PathBuf) -> Disk {
        Disk {
            cache: false,
            ..Disk::new(base)
        }
    }

    pub fn base(&self) -> &Path {
        &self.base
    }

    /// Performs `op`, mapping an OS error to the engine's errno kinds.
    pub fn perform(&mut self, op: &StorageOp) -> StorageResult {
        self.perform_io(op).map_err(|e| error_of(&e))
    }

    fn perform_io(&mut self, op: &StorageOp) -> io::Result<StorageDone> {
        match op {
            StorageOp::Read {
                file,
                offset_bytes,
                len_bytes,
            } => read(&self.path(file)?, *offset_bytes, *len_bytes).map(StorageDone::Read),
            StorageOp::Create { file } => {
                let path = self.path(file)?;
                self.appends.remove(file);
                // O_CREAT|O_TRUNC|O_APPEND (std refuses truncate with its
                // own append flag, so O_APPEND goes in as a raw flag).
                let handle = OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .custom_flags(libc::O_APPEND)
                    .open(path)?;
                if self.cache {
                    self.appends.insert(file.clone(), handle);
                }
                Ok(StorageDone::Ok)
            }
            StorageOp::Append { file, bytes } => {
                let handle = self.append_handle(file)?;
                append(handle, bytes).map(StorageDone::Written)
            }
            StorageOp::Fsync { file } => {
                match self.appends.get(file) {
                    Some(handle) => handle.sync_data()?,
                    // fsync(2) on a read-only descriptor syncs the file too.
                    None => File::open(self.path(file)?)?.sync_data()?,
                }
                Ok(StorageDone::Ok)
            }
            StorageOp::Rename { from, to } => {
                let (from_path, to_path) = (self.path(from)?, self.path(to)?);
                std::fs::rename(from_path, to_path)?;
                // The open handle follows its inode: it now writes `to`.
                match self.appends.remove(from) {
                    Some(handle) => self.appends.insert(to.clone(), handle),
                    None => self.appends.remove(to),
                };
                Ok(StorageDone::Ok)
            }
            StorageOp::Truncate { file, len_bytes } => {
                // set_len on the open append handle, or a fresh one; an
                // O_APPEND handle keeps appending at the new end.
                match self.appends.get(file) {
                    Some(handle) => handle.set_len(*len_bytes)?,
                    None => OpenOptions::new()
                        .write(true)
                        .open(self.path(file)?)?
                        .set_len(*len_bytes)?,
                }
                Ok(StorageDone::Ok)
            }
            StorageOp::Remove { file } => {
                let path = self.path(file)?;
                self.appends.remove(file);
                match std::fs::remove_file(path) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
                    _ => Ok(StorageDone::Ok),
                }
            }
            StorageOp::MakeDir { dir } => match std::fs::create_dir(self.path(dir)?) {
                Err(e) if e.kind() != io::ErrorKind::AlreadyExists => Err(e),
                _ => Ok(StorageDone::Ok),
            },
            StorageOp::SyncDir { dir } => {
                File::open(self.path(dir)?)?.sync_all()?;
                Ok(StorageDone::Ok)
            }
            StorageOp::Size { file } => Ok(StorageDone::Size(self.path(file)?.metadata()?.len())),
        }
    }

    /// The path of `name` under the base directory, or `name` itself when
    /// absolute (the `aclfile` is a path as configured, usually absolute,
    /// as in Redis). Names that climb (`..`) are refused: the engine never
    /// asks for them.
    fn path(&self, name: &str) -> io::Result<PathBuf> {
        let relative = Path::new(name);
        let plain = relative.components().all(|c| {
            matches!(
                c,
                Component::Normal(_) | Component::CurDir | Component::RootDir
            )
        });
        if !plain {
            return Err(io::Error::from_raw_os_error(libc::EACCES));
        }
        Ok(self.base.join(relative))
    }

    fn append_handle(&mut self, file: &str) -> io::Result<&File> {
        if !self.appends.contains_key(file) {
            // The file must exist: no O_CREAT.
            let handle = OpenOptions::new().append(true).open(self.path(file)?)?;
            self.appends.insert(file.to_string(), handle);
        }
        let handle = &self.appends[file];
        Ok(handle)
    }

    /// Drops the handles an uncached disk opened for one request.
    fn forget(&mut self) {
        if !self.cache {
            self.appends.clear();
        }
    }
}

/// The engine's error for an OS error.
fn error_of(e: &io::Error) -> StorageError {
    match e.raw_os_error() {
        Some(errno) => StorageError::from_errno(errno),
        None if e.kind() == io::ErrorKind::WriteZero => StorageError::NoSpace,
        None => StorageError::Io,
    }
}

/// Up to `len_bytes` from `offset_bytes`, fewer only at the end of the
/// file (the engine reads a short read as the end). The buffer is
/// allocated at what the file holds, never at the size asked.
fn read(path: &Path, offset_bytes: u64, len_bytes: u64) -> io::Result<Vec<u8>> {
    let file = File::open(path)?;
    let size_bytes = file.metadata()?.len();
    let want = len_bytes.min(size_bytes.saturating_sub(offset_bytes));
    let mut bytes = vec![0u8; want as usize];
    let mut filled = 0usize;
    while filled < bytes.len() {
        match file.read_at(&mut bytes[filled..], offset_bytes + filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    bytes.truncate(filled);
    Ok(bytes)
}

/// Appends `bytes`; an error after some bytes went out is a short write
/// (the engine retries the rest and sees the error then).
fn append(mut file: &File, bytes: &[u8]) -> io::Result<u64> {
    let mut written = 0usize;
    while written < bytes.len() {
        match file.write(&bytes[written..]) {
            Ok(0) => break,
            Ok(n) => written += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if written == 0 => return Err(e),
            Err(_) => break,
        }
    }
    Ok(written as u64)
}

/// Performs a forked child's requests to its exit, with a disk of its own
/// (nothing of the parent's is touched: no lock, no channel, no log).
pub fn run_child(base: PathBuf, child: &mut seedkv_engine::persist::ChildProcess) -> bool {
    let mut disk = Disk::uncached(base);
    while let Some(request) = child.poll_storage() {
        let result = disk.perform(&request.op);
        disk.forget();
        child.storage_done(request.id, result);
    }
    child.exit_status().unwrap_or(false)
}

/// A completed background request.
pub type Completion = (StorageId, StorageResult);

/// The background I/O thread (Redis's bio thread for the everysec fsync):
/// requests in order, completions out through `done`, each followed by a
/// call to `wake` so the command thread picks it up.
pub struct Background {
    requests: mpsc::Sender<(StorageId, StorageOp)>,
}

impl Background {
    pub fn start(
        base: PathBuf,
        done: impl Fn(Completion) + Send + 'static,
    ) -> io::Result<Background> {
        let (requests, rx) = mpsc::channel::<(StorageId, StorageOp)>();
        std::thread::Builder::new()
            .name("seedkv-bio".into())
            .spawn(move || {
                let mut disk = Disk::uncached(base);
                for (id, op) in rx {
                    let result = disk.perform(&op);
                    disk.forget();
                    done((id, result));
                }
            })?;
        Ok(Background { requests })
    }

    /// Queues a request; `false` if the thread is gone.
    pub fn submit(&self, id: StorageId, op: StorageOp) -> bool {
        self.requests.send((id, op)).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("seedkv-disk-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn op_read(file: &str, offset_bytes: u64, len_bytes: u64) -> StorageOp {
        StorageOp::Read {
            file: file.into(),
            offset_bytes,
            len_bytes,
        }
    }

    #[test]
    fn create_append_read_rename_remove() {
        let dir = temp_dir("basic");
        let mut disk = Disk::new(dir.clone());
        let f = "a.tmp".to_string();
        assert_eq!(
            disk.perform(&StorageOp::Append {
                file: f.clone(),
                bytes: b"x".to_vec()
            }),
            Err(StorageError::NotFound)
        );
        assert_eq!(
            disk.perform(&StorageOp::Create { file: f.clone() }),
            Ok(StorageDone::Ok)
        );
        for part in [&b"hello "[..], b"world"] {
            assert_eq!(
                disk.perform(&StorageOp::Append {
                    file: f.clone(),
                    bytes: part.to_vec()
                }),
                Ok(StorageDone::Written(part.len() as u64))
            );
        }
        assert_eq!(
            disk.perform(&StorageOp::Fsync { file: f.clone() }),
            Ok(StorageDone::Ok)
        );
        assert_eq!(
            disk.perform(&op_read(&f, 6, 100)),
            Ok(StorageDone::Read(b"world".to_vec()))
        );
        assert_eq!(
            disk.perform(&op_read(&f, 100, 10)),
            Ok(StorageDone::Read(vec![]))
        );
        assert_eq!(
            disk.perform(&StorageOp::Size { file: f.clone() }),
            Ok(StorageDone::Size(11))
        );
        let to = "b.rdb".to_string();
        assert_eq!(
            disk.perform(&StorageOp::Rename {
                from: f.clone(),
                to: to.clone()
            }),
            Ok(StorageDone::Ok)
        );
        // The cached handle followed the rename.
        disk.perform(&StorageOp::Append {
            file: to.clone(),
            bytes: b"!".to_vec(),
        })
        .unwrap();
        assert_eq!(std::fs::read(dir.join(&to)).unwrap(), b"hello world!");
        assert_eq!(
            disk.perform(&StorageOp::SyncDir { dir: String::new() }),
            Ok(StorageDone::Ok)
        );
        assert_eq!(
            disk.perform(&StorageOp::Remove { file: to.clone() }),
            Ok(StorageDone::Ok)
        );
        assert_eq!(
            disk.perform(&StorageOp::Remove { file: to.clone() }),
            Ok(StorageDone::Ok)
        );
        assert_eq!(
            disk.perform(&op_read(&to, 0, 1)),
            Err(StorageError::NotFound)
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn directories_and_refused_names() {
        let dir = temp_dir("dirs");
        let mut disk = Disk::new(dir.clone());
        let d = StorageOp::MakeDir {
            dir: "appendonlydir".into(),
        };
        assert_eq!(disk.perform(&d), Ok(StorageDone::Ok));
        assert_eq!(disk.perform(&d), Ok(StorageDone::Ok));
        let inner = "appendonlydir/x.aof".to_string();
        disk.perform(&StorageOp::Create { file: inner }).unwrap();
        assert_eq!(
            disk.perform(&StorageOp::SyncDir {
                dir: "appendonlydir".into()
            }),
            Ok(StorageDone::Ok)
        );
        for bad in ["../x", "/tmp/../etc/passwd", "a/../../b"] {
            assert_eq!(
                disk.perform(&StorageOp::Create { file: bad.into() }),
                Err(StorageError::Permission),
                "{bad}"
            );
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn background_thread_reports_completions() {
        let dir = temp_dir("bio");
        std::fs::write(dir.join("f"), b"abc").unwrap();
        let (tx, rx) = mpsc::channel();
        let bio = Background::start(dir.clone(), move |c| tx.send(c).unwrap()).unwrap();
        assert!(bio.submit(StorageId(7), StorageOp::Fsync { file: "f".into() }));
        assert!(bio.submit(StorageId(8), StorageOp::Fsync { file: "g".into() }));
        assert_eq!(rx.recv().unwrap(), (StorageId(7), Ok(StorageDone::Ok)));
        assert_eq!(
            rx.recv().unwrap(),
            (StorageId(8), Err(StorageError::NotFound))
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
