//! The keyspace's side of a snapshot read: what a database does before it
//! removes a key, overwrites it, changes its TTL or empties itself while a
//! read is open on it.
//!
//! - KEYS reads the keys dict: a key about to change is released from the
//!   read, saved if it was live when the read opened (a key already
//!   expired then is no part of the answer, and an expiry set or cleared
//!   later must not change that).
//! - SMEMBERS, HGETALL, HKEYS and HVALS read a value's own dict, whose
//!   entries the value's dict guards itself; when the whole value is about
//!   to leave (DEL, overwrite, RENAME, MOVE, expiry, eviction, FLUSHALL),
//!   every entry the read has not visited is saved (O(remaining), once),
//!   and the read goes on from that list alone.

use std::collections::VecDeque;

use crate::db::Db;
use crate::dict::Saved;
use crate::types::list::Direction;
use crate::value::Value;

/// What a database's open read is pinned to.
#[derive(Debug)]
pub enum Pinned {
    /// KEYS: the keys dict, as of `now_ms` (for expiry).
    Keys { now_ms: u64 },
    /// A hash or set value's dict, at `key`; `detached` once the value
    /// left the keyspace, with every entry the read had yet to emit.
    Value {
        key: Box<[u8]>,
        detached: Option<Vec<Saved>>,
    },
    /// LRANGE: the list at `key`, its elements `next..end` still owed;
    /// `detached` once a writer was about to touch the list, with those
    /// elements copied in order (see [`Db::snapshot_before_mut`]).
    List {
        key: Box<[u8]>,
        next: usize,
        end: usize,
        detached: Option<VecDeque<Box<[u8]>>>,
    },
}

impl Db {
    /// The write barrier: called before `key` is removed, overwritten or
    /// its TTL changed.
    pub(crate) fn snapshot_barrier(&mut self, key: &[u8]) {
        let Some(pinned) = self.snapshot.as_deref_mut() else {
            return;
        };
        match pinned {
            Pinned::Keys { now_ms } => {
                let live = self.expires.get(key).is_none_or(|&when| when > *now_ms);
                self.keys.snapshot_release(key, live);
            }
            Pinned::Value {
                key: pinned,
                detached,
            } => {
                if detached.is_none() && **pinned == *key {
                    let saved = self.keys.get_mut(key).map(detach).unwrap_or_default();
                    *detached = Some(saved);
                }
            }
            Pinned::List { .. } => self.snapshot_before_mut(key),
        }
    }

    /// The barrier of [`Db::get_mut`]: a list being read has no guard of
    /// its own (unlike a hash's or a set's dict), so before anyone gets to
    /// change it the elements the read still owes are copied, in order,
    /// and the read goes on from that copy. O(remaining), once per read;
    /// a command that only reads through `get_mut` (it touches the LRU
    /// clock) pays it too.
    pub(crate) fn snapshot_before_mut(&mut self, key: &[u8]) {
        let Some(Pinned::List {
            key: pinned,
            next,
            end,
            detached: detached @ None,
        }) = self.snapshot.as_deref_mut()
        else {
            return;
        };
        if **pinned != *key {
            return;
        }
        let owed = *end - *next;
        let copy = match self.keys.get(key).and_then(|v| v.as_list()) {
            Some(list) => {
                let (entries, _) = list.iter_from_with_steps(*next, Direction::Forward);
                entries.take(owed).map(Box::from).collect()
            }
            None => VecDeque::new(),
        };
        debug_assert_eq!(copy.len(), owed, "a read list changed under its read");
        *detached = Some(copy);
    }

    /// Before the database is emptied: every entry the read still owes is
    /// saved.
    pub(crate) fn snapshot_before_take(&mut self) {
        match self.snapshot.as_deref() {
            None => {}
            Some(Pinned::Keys { now_ms }) => {
                let (now_ms, expires) = (*now_ms, &self.expires);
                self.keys
                    .snapshot_save_all(|key| expires.get(key).is_none_or(|&when| when > now_ms));
            }
            Some(Pinned::Value { key, .. } | Pinned::List { key, .. }) => {
                let key = key.clone();
                self.snapshot_barrier(&key);
            }
        }
    }
}

/// Saves every entry of the value's open read that it has not emitted,
/// and closes the read on the value. O(remaining).
pub(crate) fn detach(value: &mut Value) -> Vec<Saved> {
    let mut saved = Vec::new();
    with_dict(value, |d| {
        d.save_all();
        saved = d.take_saved(usize::MAX);
        d.close();
    });
    saved
}

/// What a slice does with each entry it visits: key and, when the read
/// needs it, value.
pub(crate) type Visit<'a> = dyn FnMut(&[u8], Option<&[u8]>) + 'a;

/// A value's dict under a read, whatever its value type.
pub(crate) trait ReadDict {
    fn visit(&mut self, budget: usize, out: &mut Visit<'_>) -> usize;
    fn take_saved(&mut self, max: usize) -> Vec<Saved>;
    fn save_all(&mut self);
    fn close(&mut self);
    /// Entries the read still owes: unvisited and saved.
    fn remaining(&self) -> usize;
}

impl ReadDict for crate::dict::Dict<Box<[u8]>> {
    fn visit(&mut self, budget: usize, out: &mut Visit<'_>) -> usize {
        self.snapshot_visit(budget, |k, v| out(k, Some(v)))
    }
    fn take_saved(&mut self, max: usize) -> Vec<Saved> {
        self.snapshot_take_saved(max)
    }
    fn save_all(&mut self) {
        self.snapshot_save_all(|_| true);
    }
    fn close(&mut self) {
        self.snapshot_close();
    }
    fn remaining(&self) -> usize {
        self.snapshot_unvisited() + self.snapshot_saved_len()
    }
}

impl ReadDict for crate::dict::Dict<()> {
    fn visit(&mut self, budget: usize, out: &mut Visit<'_>) -> usize {
        self.snapshot_visit(budget, |k, _| out(k, None))
    }
    fn take_saved(&mut self, max: usize) -> Vec<Saved> {
        self.snapshot_take_saved(max)
    }
    fn save_all(&mut self) {
        self.snapshot_save_all(|_| true);
    }
    fn close(&mut self) {
        self.snapshot_close();
    }
    fn remaining(&self) -> usize {
        self.snapshot_unvisited() + self.snapshot_saved_len()
    }
}

/// Runs `f` on the dict of a hash or set value in its table encoding;
/// returns false (without running it) for any other value.
pub(crate) fn with_dict(value: &mut Value, f: impl FnOnce(&mut dyn ReadDict)) -> bool {
    match value {
        Value::Hash(h) => match h.dict_mut() {
            Some(d) => {
                f(d);
                true
            }
            None => false,
        },
        Value::Set(s) => match s.dict_mut() {
            Some(d) => {
                f(d);
                true
            }
            None => false,
        },
        _ => false,
    }
}
