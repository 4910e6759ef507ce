//! The modelled disk: files behind a page cache, as Linux keeps them.
//!
//! Each file is an inode with two views of its bytes: `data`, what reads
//! see (the page cache), and `durable`, what survives a crash. Appends and
//! truncations change `data`; a successful `fsync` copies it to `durable`.
//! A failed `fsync` marks the unsynced range as a *hole*: those bytes never
//! become durable, even after a later successful `fsync` (Linux marks the
//! failed pages clean and reports the error once), and they may be dropped
//! from the cache too (reads then see zeros, as the disk holds them).
//!
//! Names live in two namespaces: `live` (what the running process sees)
//! and `durable` (what a crash keeps). Create, rename and remove change
//! `live`; `SyncDir` of a directory copies that directory's entries to
//! `durable`. So a crash may lose a create or a rename not followed by a
//! directory sync. A directory made with `MakeDir` survives once it or
//! its parent is synced. Creating over an existing name binds a new inode (a
//! simplification of `O_TRUNC`: the old bytes stay reachable through the
//! durable name until the directory is synced).
//!
//! A crash (`crash.rs`) keeps, of each durable file, its durable bytes plus
//! a seeded prefix of its unsynced tail in 512-byte sectors, the last one
//! possibly torn. Faults (short writes, EIO on write or fsync, ENOSPC at a
//! capacity) and latency (`latency.rs`) are knobs ([`DiskKnobs`]).

use std::collections::{BTreeMap, BTreeSet};

use rand::Rng;
use seedkv_engine::persist::{StorageDone, StorageError, StorageOp, StorageResult};

use crate::rng::ChoiceRng;

mod crash;
mod latency;
#[cfg(test)]
mod tests;

pub use latency::{LatencyKnobs, LATENCY_NS_MAX};

/// Sector size: a crash keeps or tears whole sectors of an unsynced tail.
pub const SECTOR_BYTES: u64 = 512;
/// Files the disk holds at most (live or durable).
pub const FILES_MAX: usize = 4096;
/// Bytes one read may return at most.
pub const READ_BYTES_MAX: u64 = 64 * 1024 * 1024;
/// Largest capacity (the default: effectively unbounded).
pub const CAPACITY_BYTES_MAX: u64 = 1 << 40;

/// Fault rates and bounds of the disk (all off by default).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiskKnobs {
    /// Bytes the disk holds at most (live and durable data together);
    /// an append past it is short, then ENOSPC.
    pub capacity_bytes: u64,
    /// Chance per append that fewer bytes are written, per mille.
    pub short_write_per_mille: u32,
    /// Chance per append of EIO, per mille.
    pub write_error_per_mille: u32,
    /// Chance per fsync of EIO (the unsynced range never becomes durable).
    pub fsync_error_per_mille: u32,
    /// Chance that a failed fsync also drops the range from the cache.
    pub fsync_drop_cache_per_mille: u32,
    /// At a crash, chance per file that the first lost sector is torn
    /// (part new bytes, the rest garbage or zeros) rather than lost whole.
    pub torn_sector_per_mille: u32,
    /// The file system's journal commits every directory change at each
    /// multiple of this (ext4's `commit=5`); `None`: only `SyncDir` does
    /// (the strict reading of POSIX).
    pub journal_commit_ns: Option<u64>,
    pub latency: LatencyKnobs,
}

impl DiskKnobs {
    /// No faults, no capacity bound, default latency.
    pub fn none() -> DiskKnobs {
        DiskKnobs {
            capacity_bytes: CAPACITY_BYTES_MAX,
            short_write_per_mille: 0,
            write_error_per_mille: 0,
            fsync_error_per_mille: 0,
            fsync_drop_cache_per_mille: 0,
            torn_sector_per_mille: 0,
            journal_commit_ns: None,
            latency: LatencyKnobs::default(),
        }
    }

    /// Fault rates drawn for a seed with persistence (crash semantics are
    /// not faults: the torn-sector rate is always drawn).
    pub fn draw(rng: &mut impl Rng, faults: bool) -> DiskKnobs {
        let mut knobs = DiskKnobs::none();
        knobs.torn_sector_per_mille = rng.gen_range(0..=1000);
        if rng.gen_bool(0.5) {
            knobs.journal_commit_ns = Some(rng.gen_range(1..=5) * 1_000_000_000);
        }
        knobs.latency = LatencyKnobs::draw(rng);
        if faults {
            knobs.short_write_per_mille = rng.gen_range(0..=100);
            knobs.write_error_per_mille = rng.gen_range(0..=5);
            knobs.fsync_error_per_mille = rng.gen_range(0..=5);
            knobs.fsync_drop_cache_per_mille = rng.gen_range(0..=1000);
            if rng.gen_bool(0.2) {
                knobs.capacity_bytes = rng.gen_range(64 * 1024..=16 * 1024 * 1024);
            }
        }
        knobs
    }

    fn assert_valid(&self) {
        assert!(self.capacity_bytes <= CAPACITY_BYTES_MAX);
        assert!(self.journal_commit_ns.is_none_or(|ns| ns > 0));
        for per_mille in [
            self.short_write_per_mille,
            self.write_error_per_mille,
            self.fsync_error_per_mille,
            self.fsync_drop_cache_per_mille,
            self.torn_sector_per_mille,
        ] {
            assert!(per_mille <= 1000);
        }
    }
}

/// One file's bytes.
#[derive(Clone, Debug, Default)]
struct Inode {
    /// What reads see (the page cache in front of the disk).
    data: Vec<u8>,
    /// What a crash keeps for sure.
    durable: Vec<u8>,
    /// Ranges of `data` whose write-back failed: never durable.
    holes: Vec<(u64, u64)>,
}

impl Inode {
    /// `data` as the disk would hold it once written back: holes zeroed.
    fn written_back(&self) -> Vec<u8> {
        let mut bytes = self.data.clone();
        for &(start, end) in &self.holes {
            let end = (end as usize).min(bytes.len());
            let start = (start as usize).min(end);
            bytes[start..end].fill(0);
        }
        bytes
    }
}

/// What the disk did, for the summary and the checkers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiskStats {
    pub requests_count: u64,
    pub bytes_appended: u64,
    pub fsyncs_count: u64,
    /// Errors and short writes injected.
    pub faults_count: u64,
    pub crashes_count: u64,
    /// Crashes that tore a sector.
    pub torn_count: u64,
}

/// The disk (see the module docs).
#[derive(Clone, Debug)]
pub struct Disk {
    knobs: DiskKnobs,
    rng: ChoiceRng,
    inodes: BTreeMap<u64, Inode>,
    next_inode: u64,
    live: BTreeMap<String, u64>,
    durable: BTreeMap<String, u64>,
    live_dirs: BTreeSet<String>,
    durable_dirs: BTreeSet<String>,
    /// Virtual time of the last [`Disk::advance`].
    now_ns: u64,
    pub stats: DiskStats,
}

/// The directory a path is in (`""`: the server's `dir`).
pub fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

impl Disk {
    pub fn new(knobs: DiskKnobs, rng: ChoiceRng) -> Disk {
        knobs.assert_valid();
        Disk {
            knobs,
            rng,
            inodes: BTreeMap::new(),
            next_inode: 1,
            live: BTreeMap::new(),
            durable: BTreeMap::new(),
            live_dirs: BTreeSet::new(),
            durable_dirs: BTreeSet::new(),
            now_ns: 0,
            stats: DiskStats::default(),
        }
    }

    /// Virtual time moves to `now_ns`: a journal commit that fell in
    /// between makes the directories as they are durable (nothing changed
    /// them since the last call, which came before the last change).
    /// Returns whether a commit happened.
    pub fn advance(&mut self, now_ns: u64) -> bool {
        assert!(now_ns >= self.now_ns, "disk time went back");
        let mut committed = false;
        if let Some(interval_ns) = self.knobs.journal_commit_ns {
            if now_ns / interval_ns > self.now_ns / interval_ns {
                self.durable = self.live.clone();
                self.durable_dirs = self.live_dirs.clone();
                self.collect_garbage();
                committed = true;
            }
        }
        self.now_ns = now_ns;
        committed
    }

    pub fn knobs(&self) -> &DiskKnobs {
        &self.knobs
    }

    /// Virtual time `op` takes, drawn from the latency knobs.
    pub fn latency_ns(&mut self, op: &StorageOp) -> u64 {
        let knobs = self.knobs.latency.clone();
        // A read costs what it returns (nothing for a missing file).
        let read_bytes = match op {
            StorageOp::Read {
                file,
                offset_bytes,
                len_bytes,
            } => {
                let size = self.contents(file).map_or(0, |d| d.len() as u64);
                size.saturating_sub(*offset_bytes).min(*len_bytes)
            }
            _ => 0,
        };
        knobs.draw_ns(&mut self.rng, op, read_bytes)
    }

    /// The live file names (for tests and traces).
    pub fn files(&self) -> impl Iterator<Item = &String> {
        self.live.keys()
    }

    /// What a read of the whole of `file` returns now.
    pub fn contents(&self, file: &str) -> Option<&[u8]> {
        let inode = self.live.get(file)?;
        Some(&self.inodes[inode].data)
    }

    fn draw(&mut self, per_mille: u32) -> bool {
        per_mille > 0 && self.rng.gen_range(0..1000) < per_mille
    }

    fn dir_exists(&self, dir: &str) -> bool {
        dir.is_empty() || self.live_dirs.contains(dir)
    }

    fn used_bytes(&self) -> u64 {
        let used: usize = self
            .inodes
            .values()
            .map(|i| i.data.len().max(i.durable.len()))
            .sum();
        used as u64
    }

    fn live_inode(&mut self, file: &str) -> Result<&mut Inode, StorageError> {
        let id = *self.live.get(file).ok_or(StorageError::NotFound)?;
        Ok(self.inodes.get_mut(&id).expect("live names name inodes"))
    }

    /// Puts `bytes` on the disk as `file` in the server's `dir`, durable
    /// (data and name), as an operator does before the server starts (an
    /// `aclfile` must exist then). Draws no fault.
    pub fn install(&mut self, file: &str, bytes: &[u8]) {
        debug_assert!(dir_of(file).is_empty() && !self.live.contains_key(file));
        let id = self.next_inode;
        self.next_inode += 1;
        let inode = Inode {
            data: bytes.to_vec(),
            durable: bytes.to_vec(),
            holes: Vec::new(),
        };
        self.inodes.insert(id, inode);
        self.live.insert(file.to_string(), id);
        self.durable.insert(file.to_string(), id);
        self.assert_invariants();
    }

    /// Performs `op` now and says what it achieved.
    pub fn perform(&mut self, op: &StorageOp) -> StorageResult {
        self.stats.requests_count += 1;
        let result = match op {
            StorageOp::Read {
                file,
                offset_bytes,
                len_bytes,
            } => {
                let data = &self.live_inode(file)?.data;
                let start = (*offset_bytes).min(data.len() as u64) as usize;
                let len = (*len_bytes).min(READ_BYTES_MAX) as usize;
                let end = start.saturating_add(len).min(data.len());
                Ok(StorageDone::Read(data[start..end].to_vec()))
            }
            StorageOp::Create { file } => self.create(file),
            StorageOp::Append { file, bytes } => self.append(file, bytes),
            StorageOp::Fsync { file } => self.fsync(file),
            StorageOp::Truncate { file, len_bytes } => {
                let inode = self.live_inode(file)?;
                let len = (*len_bytes).min(inode.data.len() as u64) as usize;
                inode.data.truncate(len);
                Ok(StorageDone::Ok)
            }
            StorageOp::Rename { from, to } => {
                let id = *self.live.get(from).ok_or(StorageError::NotFound)?;
                if !self.dir_exists(dir_of(to)) {
                    return Err(StorageError::NotFound);
                }
                self.live.remove(from);
                self.live.insert(to.clone(), id);
                self.collect_garbage();
                Ok(StorageDone::Ok)
            }
            StorageOp::Remove { file } => {
                self.live.remove(file);
                self.collect_garbage();
                Ok(StorageDone::Ok)
            }
            StorageOp::MakeDir { dir } => {
                if !dir.is_empty() {
                    self.live_dirs.insert(dir.clone());
                }
                Ok(StorageDone::Ok)
            }
            StorageOp::SyncDir { dir } => {
                self.sync_dir(dir);
                Ok(StorageDone::Ok)
            }
            StorageOp::Size { file } => {
                Ok(StorageDone::Size(self.live_inode(file)?.data.len() as u64))
            }
        };
        self.assert_invariants();
        result
    }

    fn create(&mut self, file: &str) -> StorageResult {
        if !self.dir_exists(dir_of(file)) {
            return Err(StorageError::NotFound);
        }
        if self.live.len() >= FILES_MAX && !self.live.contains_key(file) {
            return Err(StorageError::NoSpace);
        }
        let id = self.next_inode;
        self.next_inode += 1;
        self.inodes.insert(id, Inode::default());
        self.live.insert(file.to_string(), id);
        self.collect_garbage();
        Ok(StorageDone::Ok)
    }

    fn append(&mut self, file: &str, bytes: &[u8]) -> StorageResult {
        self.live_inode(file)?;
        if self.draw(self.knobs.write_error_per_mille) {
            self.stats.faults_count += 1;
            return Err(StorageError::Io);
        }
        let free_bytes = self.knobs.capacity_bytes.saturating_sub(self.used_bytes());
        if free_bytes == 0 && !bytes.is_empty() {
            self.stats.faults_count += 1;
            return Err(StorageError::NoSpace);
        }
        let mut n = (bytes.len() as u64).min(free_bytes) as usize;
        if n > 1 && self.draw(self.knobs.short_write_per_mille) {
            n = self.rng.gen_range(1..n);
        }
        if n < bytes.len() {
            self.stats.faults_count += 1;
        }
        self.live_inode(file)?.data.extend_from_slice(&bytes[..n]);
        self.stats.bytes_appended += n as u64;
        Ok(StorageDone::Written(n as u64))
    }

    fn fsync(&mut self, file: &str) -> StorageResult {
        self.live_inode(file)?;
        self.stats.fsyncs_count += 1;
        let fail = self.draw(self.knobs.fsync_error_per_mille);
        let drop_cache = fail && self.draw(self.knobs.fsync_drop_cache_per_mille);
        let inode = self.live_inode(file)?;
        if fail {
            let start = inode.durable.len().min(inode.data.len());
            let end = inode.data.len();
            if start < end {
                inode.holes.push((start as u64, end as u64));
                if drop_cache {
                    inode.data[start..end].fill(0);
                }
            }
            self.stats.faults_count += 1;
            return Err(StorageError::Io);
        }
        inode.durable = inode.written_back();
        Ok(StorageDone::Ok)
    }

    fn sync_dir(&mut self, dir: &str) {
        let names: BTreeSet<String> = self
            .live
            .keys()
            .chain(self.durable.keys())
            .filter(|name| dir_of(name) == dir)
            .cloned()
            .collect();
        for name in names {
            match self.live.get(&name) {
                Some(&id) => self.durable.insert(name, id),
                None => self.durable.remove(&name),
            };
        }
        if dir.is_empty() {
            self.durable_dirs = self.live_dirs.clone();
        } else if self.live_dirs.contains(dir) {
            // Syncing a directory persists the directory itself too (its
            // own inode and, through the journal commit, the entry that
            // created it on ext4 and xfs): lenient, or `appenddirname`
            // made once and never synced in its parent would vanish.
            self.durable_dirs.insert(dir.to_string());
        }
        self.collect_garbage();
    }

    /// Drops inodes no name reaches any more.
    fn collect_garbage(&mut self) {
        let reachable: BTreeSet<u64> = self
            .live
            .values()
            .chain(self.durable.values())
            .copied()
            .collect();
        self.inodes.retain(|id, _| reachable.contains(id));
    }

    fn assert_invariants(&self) {
        assert!(self.live.len() <= FILES_MAX + 1);
        assert!(self.durable.len() <= 2 * FILES_MAX);
        for id in self.live.values().chain(self.durable.values()) {
            assert!(self.inodes.contains_key(id), "a name without an inode");
            assert!(*id < self.next_inode);
        }
        for inode in self.inodes.values() {
            for &(start, end) in &inode.holes {
                assert!(start < end);
            }
        }
    }
}
