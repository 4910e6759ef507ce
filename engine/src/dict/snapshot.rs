//! A point-in-time read of a dict that is produced in slices while writers
//! go on (KEYS, SMEMBERS, HGETALL, HKEYS, HVALS with `snapshot-reads yes`;
//! see [`crate::snapshot_read`]).
//!
//! The read walks the slab, not the tables: slab indices do not move when a
//! rehash or a shrink moves chains between tables, so the walk is immune to
//! resizes. While a read is open the slab is split into three regions:
//!
//! ```text
//!   0 ........ pos ........ end ........ len
//!   | visited   | unvisited  | not in the |
//!   | (emitted) | snapshot   | snapshot   |
//! ```
//!
//! `[pos, end)` holds exactly the entries that existed when the read opened,
//! unchanged since, and not yet visited. Everything a writer does keeps that
//! true:
//!
//! - an insert pushes at `len`, in the third region;
//! - removing an unvisited entry first copies it into the side list
//!   (`saved`), then swaps it with the last unvisited entry and shrinks
//!   `end`, so it leaves the region before the slab's own swap-remove runs
//!   (which then only moves entries of the third region);
//! - removing a visited entry swaps it with the last visited one (`pos`
//!   shrinks), then out of the unvisited region as above, so that no
//!   unvisited entry is moved below `pos` and no new one into `[pos, end)`;
//! - overwriting, or handing out `&mut` to, an unvisited entry whose value
//!   the read needs saves the old value and moves the entry out the same
//!   way.
//!
//! So the read's answer is `[pos, end)` (visited over time) plus `saved`,
//! which is the dict at the opening instant: each entry exactly once. A
//! swap re-points the two links (a bucket head or a chain predecessor's
//! `next`) that named the swapped indices: O(chain length), as a remove.
//!
//! Memory: `saved` holds at most one copy per unvisited entry that a writer
//! changed, so at most the snapshot's own size; the reader empties it slice
//! by slice.

use std::mem;

use super::{bucket_of, Dict, NIL};

/// Copies the part of a value a read needs (a hash field's value).
pub type CopyValue<V> = fn(&V) -> Box<[u8]>;

/// An entry a writer changed before the read visited it: its key and, for
/// reads that need values, its value as it was when the read opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    pub key: Box<[u8]>,
    pub value: Option<Box<[u8]>>,
}

/// The open read's regions and side list (see the module docs).
#[derive(Debug, Clone)]
pub(super) struct Snapshot<V> {
    pos: u32,
    end: u32,
    /// Copies the part of a value the read needs; `None`: keys only.
    copy_value: Option<CopyValue<V>>,
    /// Whether the dict itself saves the unvisited entries a writer removes.
    /// The keyspace does not: its owner decides (a key already expired when
    /// the read opened is no part of it) and saves through
    /// [`Dict::snapshot_release`] before it removes.
    saves_removed: bool,
    saved: Vec<Saved>,
}

impl<V> Snapshot<V> {
    /// The regions are in order and inside the slab.
    pub(super) fn check(&self, len: usize) {
        assert!(
            self.pos <= self.end && self.end as usize <= len,
            "dict: snapshot regions {}..{} outside the slab of {len}",
            self.pos,
            self.end
        );
    }
}

/// Where a dict keeps its open read. A clone of the dict (COPY) is a new
/// value that no read is walking: it starts with none.
#[derive(Debug)]
pub(super) struct Slot<V>(pub(super) Option<Box<Snapshot<V>>>);

impl<V> Clone for Slot<V> {
    fn clone(&self) -> Self {
        Slot(None)
    }
}

/// What [`Dict::snapshot_release`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Released {
    /// The key was not an unvisited entry of the open read (or none is open).
    NotPending,
    /// It was: now it is out of the read, saved if asked.
    Pending,
}

impl<V> Dict<V> {
    /// Opens a point-in-time read of every entry. O(1).
    ///
    /// `copy_value`: what the read needs of a value (`None`: keys only);
    /// `saves_removed`: whether a remove of an unvisited entry saves it
    /// (else the owner calls [`Dict::snapshot_release`] first).
    ///
    /// # Panics
    ///
    /// When a read is already open (one at a time per dict).
    pub fn snapshot_open(&mut self, copy_value: Option<CopyValue<V>>, saves_removed: bool) {
        assert!(self.snapshot.0.is_none(), "dict: a snapshot read is open");
        self.snapshot.0 = Some(Box::new(Snapshot {
            pos: 0,
            end: self.len() as u32,
            copy_value,
            saves_removed,
            saved: Vec::new(),
        }));
    }

    pub fn snapshot_is_open(&self) -> bool {
        self.snapshot.0.is_some()
    }

    /// Ends the read (done or abandoned). O(1) plus the unread side list.
    pub fn snapshot_close(&mut self) {
        self.snapshot.0 = None;
    }

    /// Unvisited entries left in the slab (the side list not counted).
    pub fn snapshot_unvisited(&self) -> usize {
        self.snapshot
            .0
            .as_ref()
            .map_or(0, |s| (s.end - s.pos) as usize)
    }

    /// Visits up to `budget` unvisited entries in slab order. Returns how
    /// many it visited.
    pub fn snapshot_visit(&mut self, budget: usize, mut visit: impl FnMut(&[u8], &V)) -> usize {
        let Some(snap) = self.snapshot.0.as_mut() else {
            return 0;
        };
        let stop = snap.end.min(snap.pos.saturating_add(budget as u32));
        let start = snap.pos;
        snap.pos = stop;
        for index in start..stop {
            let entry = self.entries.get(index);
            visit(&entry.key, &entry.value);
        }
        (stop - start) as usize
    }

    /// Takes the side list (entries writers changed before the read got
    /// to them).
    pub fn snapshot_take_saved(&mut self, max: usize) -> Vec<Saved> {
        let Some(snap) = self.snapshot.0.as_mut() else {
            return Vec::new();
        };
        let keep = snap.saved.len().saturating_sub(max);
        snap.saved.split_off(keep)
    }

    /// Entries waiting in the side list.
    pub fn snapshot_saved_len(&self) -> usize {
        self.snapshot.0.as_ref().map_or(0, |s| s.saved.len())
    }

    /// The owner's write barrier: if `key` is an unvisited entry of the open
    /// read, saves it when `save` (with its value, if the read needs values)
    /// and moves it out of the read, so that whatever the caller does to it
    /// next the read does not see. O(1) expected.
    pub fn snapshot_release(&mut self, key: &[u8], save: bool) -> Released {
        if self.snapshot.0.is_none() {
            return Released::NotPending;
        }
        let Some(index) = self.find_key(key) else {
            return Released::NotPending;
        };
        let snap = self.snapshot.0.as_ref().expect("checked");
        if index < snap.pos || index >= snap.end {
            return Released::NotPending;
        }
        if save {
            self.save(index);
        }
        self.move_out_of_unvisited(index);
        Released::Pending
    }

    /// Saves every unvisited entry for which `keep` says so, and empties
    /// the unvisited region: the dict's contents may go now (FLUSHALL, the
    /// value deleted). O(unvisited).
    pub fn snapshot_save_all(&mut self, mut keep: impl FnMut(&[u8]) -> bool) {
        let Some(snap) = self.snapshot.0.as_mut() else {
            return;
        };
        let (pos, end) = (snap.pos, snap.end);
        snap.pos = 0;
        snap.end = 0;
        let copy_value = snap.copy_value;
        let mut saved = mem::take(&mut snap.saved);
        for index in pos..end {
            let entry = self.entries.get(index);
            if keep(&entry.key) {
                saved.push(Saved {
                    key: entry.key.clone(),
                    value: copy_value.map(|copy| copy(&entry.value)),
                });
            }
        }
        self.snapshot.0.as_mut().expect("checked").saved = saved;
    }

    /// Takes the open read away (with its side list), leaving none open:
    /// for moving it to the fresh dict of a [`Dict::take`]. The unvisited
    /// region must be empty.
    pub(super) fn snapshot_detach(&mut self) -> Option<Box<Snapshot<V>>> {
        let snap = self.snapshot.0.take()?;
        debug_assert_eq!(snap.pos, snap.end, "dict: an unvisited region detached");
        Some(snap)
    }

    pub(super) fn snapshot_attach(&mut self, mut snap: Box<Snapshot<V>>) {
        debug_assert!(self.snapshot.0.is_none() && self.is_empty());
        snap.pos = 0;
        snap.end = 0;
        self.snapshot.0 = Some(snap);
    }

    /// The barrier of [`Dict::remove`]: moves `key`'s entry out of the
    /// visited and unvisited regions first (saving an unvisited one when
    /// the dict saves removed entries itself).
    pub(super) fn snapshot_before_remove(&mut self, key: &[u8]) {
        let Some(snap) = self.snapshot.0.as_ref() else {
            return;
        };
        let Some(index) = self.find_key(key) else {
            return;
        };
        let (pos, end, saves) = (snap.pos, snap.end, snap.saves_removed);
        if index < pos {
            // Visited: the last visited entry takes its place.
            self.swap_slots(index, pos - 1);
            self.snapshot.0.as_mut().expect("checked").pos -= 1;
            self.move_out_of_unvisited(pos - 1);
        } else if index < end {
            debug_assert!(
                saves,
                "dict: an unvisited key removed without its owner's release"
            );
            if saves {
                self.save(index);
            }
            self.move_out_of_unvisited(index);
        }
    }

    /// The barrier of an overwrite or a `&mut` to `key`'s value: an
    /// unvisited entry whose value the read needs is saved and moved out.
    pub(super) fn snapshot_before_change(&mut self, key: &[u8]) {
        match self.snapshot.0.as_ref() {
            Some(snap) if snap.copy_value.is_some() => {}
            _ => return,
        }
        self.snapshot_release(key, true);
    }

    fn save(&mut self, index: u32) {
        let entry = self.entries.get(index);
        let snap = self.snapshot.0.as_ref().expect("open");
        let saved = Saved {
            key: entry.key.clone(),
            value: snap.copy_value.map(|copy| copy(&entry.value)),
        };
        self.snapshot.0.as_mut().expect("open").saved.push(saved);
    }

    /// Swaps the unvisited entry at `index` with the last unvisited one and
    /// shrinks the region by one: the entry is now just past `end`.
    fn move_out_of_unvisited(&mut self, index: u32) {
        let snap = self.snapshot.0.as_ref().expect("open");
        debug_assert!(snap.pos <= index && index < snap.end);
        let last = snap.end - 1;
        self.swap_slots(index, last);
        self.snapshot.0.as_mut().expect("open").end -= 1;
    }

    /// Exchanges the slab entries at `a` and `b`, re-pointing the one link
    /// that named each.
    fn swap_slots(&mut self, a: u32, b: u32) {
        if a == b {
            return;
        }
        let link_a = self.link_to(a);
        let link_b = self.link_to(b);
        self.entries.swap(a, b);
        // A link stored in an entry's `next` moved with that entry.
        let moved = |link: Link| match link {
            Link::Next(owner) if owner == a => Link::Next(b),
            Link::Next(owner) if owner == b => Link::Next(a),
            other => other,
        };
        self.set_link(moved(link_a), b);
        self.set_link(moved(link_b), a);
    }

    /// Where the link to the entry at `index` is stored.
    fn link_to(&self, index: u32) -> Link {
        let hash = self.entries.get(index).hash;
        let rehashing = self.is_rehashing();
        for table in 0..2 {
            let bucket = bucket_of(hash, self.tables[table].len());
            if !(table == 0 && rehashing && bucket < self.rehash_index) {
                let mut link = self.tables[table][bucket];
                if link == index {
                    return Link::Head(table, bucket);
                }
                while link != NIL {
                    let next = self.entries.get(link).next;
                    if next == index {
                        return Link::Next(link);
                    }
                    link = next;
                }
            }
            if !rehashing {
                break;
            }
        }
        unreachable!("dict: slab entry {index} is in no chain")
    }

    fn set_link(&mut self, link: Link, index: u32) {
        match link {
            Link::Head(table, bucket) => self.tables[table][bucket] = index,
            Link::Next(owner) => self.entries.get_mut(owner).next = index,
        }
    }
}

/// A bucket head or a chain predecessor.
#[derive(Debug, Clone, Copy)]
enum Link {
    Head(usize, usize),
    Next(u32),
}
