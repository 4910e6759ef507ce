//! A crash: the process and the page cache are gone; what the disk holds
//! is each durable name's durable bytes plus a seeded prefix of the
//! unsynced tail, cut at a sector boundary, the next sector possibly torn.

use rand::Rng;

use super::{Disk, Inode, SECTOR_BYTES};

impl Disk {
    /// Applies crash semantics: afterwards `live` is what survived.
    pub fn crash(&mut self) {
        self.stats.crashes_count += 1;
        let dirs = self.durable_dirs.clone();
        self.durable
            .retain(|name, _| super::dir_of(name).is_empty() || dirs.contains(super::dir_of(name)));
        self.live = self.durable.clone();
        self.live_dirs = self.durable_dirs.clone();
        self.collect_garbage();
        let ids: Vec<u64> = self.inodes.keys().copied().collect();
        for id in ids {
            let mut inode = self.inodes.remove(&id).expect("listed");
            let survived = self.surviving_bytes(&inode);
            inode.data = survived.clone();
            inode.durable = survived;
            inode.holes.clear();
            self.inodes.insert(id, inode);
        }
        self.assert_invariants();
    }

    /// What of `inode` survives: its durable bytes, and when the unsynced
    /// bytes only extend them (appends), a prefix of whole sectors of the
    /// tail and maybe one torn sector.
    fn surviving_bytes(&mut self, inode: &Inode) -> Vec<u8> {
        let durable_len = inode.durable.len();
        let written = inode.written_back();
        let appended = written.len() > durable_len && written[..durable_len] == inode.durable[..];
        if !appended {
            // Truncated or rewritten since the last fsync: the old bytes.
            return inode.durable.clone();
        }
        let end = written.len() as u64;
        // Cut points: the durable end, each sector boundary inside the
        // tail, and the end of the data.
        let first_boundary = (durable_len as u64 / SECTOR_BYTES + 1) * SECTOR_BYTES;
        let boundaries_count = if first_boundary < end {
            (end - 1 - first_boundary) / SECTOR_BYTES + 1
        } else {
            0
        };
        let pick = self.rng.gen_range(0..=boundaries_count + 1);
        let cut = match pick {
            0 => durable_len as u64,
            p if p <= boundaries_count => first_boundary + (p - 1) * SECTOR_BYTES,
            _ => end,
        };
        assert!(cut >= durable_len as u64 && cut <= end);
        let mut kept = written[..cut as usize].to_vec();
        if cut < end && self.draw(self.knobs.torn_sector_per_mille) {
            self.stats.torn_count += 1;
            let sector_end = ((cut / SECTOR_BYTES + 1) * SECTOR_BYTES).min(end);
            let new_bytes = self.rng.gen_range(0..sector_end - cut);
            kept.extend_from_slice(&written[cut as usize..(cut + new_bytes) as usize]);
            let garbage = self.rng.gen_bool(0.5);
            for _ in cut + new_bytes..sector_end {
                kept.push(if garbage { self.rng.gen() } else { 0 });
            }
            assert_eq!(kept.len() as u64, sector_end);
        }
        kept
    }
}
