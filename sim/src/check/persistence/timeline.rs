//! Which prefixes of the execution order explain a restarted dataset.
//!
//! The reference model replays the executions in order; after each one,
//! every key it touched gets a new entry in that key's timeline (its state
//! from that prefix on: unknown, absent, or a value digest and expiry),
//! and every database changed as a whole (FLUSHDB, or made unknown) gets
//! one in the database's. A key's state at prefix `k` is its latest entry
//! at or before `k`, unless a database entry is later. For each key (every
//! key the model ever touched, and every key the restarted server holds),
//! the prefixes whose state matches what was read back form a set of
//! intervals; the dataset is explained by the prefixes in the intersection
//! of all of them.

use std::collections::BTreeMap;

use crate::check::model::{index_ops, KeyState, KeyspaceModel, Value, DB_COUNT};
use crate::history::History;
use crate::persistence::digest::{digest, Canon};
use crate::persistence::record::ObservedKey;

/// Sorted, disjoint, inclusive ranges of prefix lengths.
pub type Intervals = Vec<(usize, usize)>;

/// Expiry times this close to the restart may have gone either way.
pub const EXPIRY_SLACK_MS: u64 = 2;

/// A key's state from some prefix on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Snap {
    Unknown,
    Absent,
    Present {
        digest: u64,
        expire_unix_ms: Option<u64>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DbEvent {
    Flushed,
    Unknown,
}

/// A key: its database and name.
pub type DbKey = (usize, Vec<u8>);

/// Every key's timeline over the first `executions_count` executions.
pub struct Timelines {
    pub executions_count: usize,
    keys: BTreeMap<DbKey, Vec<(usize, Snap)>>,
    dbs: Vec<Vec<(usize, DbEvent)>>,
}

pub fn value_digest(value: &Value) -> u64 {
    match value {
        Value::Str(s) => digest(Canon::Str(s)),
        Value::List(l) => digest(Canon::List(l.iter().map(Vec::as_slice).collect())),
        Value::Hash(h) => digest(Canon::Hash(
            h.iter()
                .map(|(f, v)| (f.as_slice(), v.as_slice()))
                .collect(),
        )),
        Value::Set(s) => digest(Canon::Set(s.iter().map(Vec::as_slice).collect())),
        Value::ZSet(z) => digest(Canon::ZSet(z.iter().collect())),
    }
}

impl Timelines {
    pub fn build(history: &History, executions_count: usize) -> Timelines {
        assert!(executions_count <= history.executions.len());
        let ops = index_ops(history);
        let mut model = KeyspaceModel::new();
        let mut t = Timelines {
            executions_count,
            keys: BTreeMap::new(),
            dbs: vec![Vec::new(); DB_COUNT],
        };
        for (i, exec) in history.executions[..executions_count].iter().enumerate() {
            let op = ops.of_execution(i, exec);
            model.apply(exec, op);
            let prefix = i + 1;
            let touched = model.touched();
            for db in 0..DB_COUNT {
                if touched.dbs[db] {
                    let event = if model.db_is_unknown(db) {
                        DbEvent::Unknown
                    } else {
                        DbEvent::Flushed
                    };
                    t.dbs[db].push((prefix, event));
                }
            }
            for (db, key) in &touched.keys {
                let snap = match model.peek(*db, key, exec.unix_ms) {
                    KeyState::Unknown => Snap::Unknown,
                    KeyState::Absent => Snap::Absent,
                    KeyState::Present(entry) => Snap::Present {
                        digest: value_digest(&entry.value),
                        expire_unix_ms: entry.expire_unix_ms,
                    },
                };
                let line = t.keys.entry((*db, key.clone())).or_default();
                match line.last_mut() {
                    Some((at, last)) if *at == prefix => *last = snap,
                    Some((_, last)) if *last == snap => {}
                    _ => line.push((prefix, snap)),
                }
            }
        }
        t
    }

    /// The key's states, as (first prefix, state) in order from prefix 0.
    fn segments(&self, db: usize, key: &[u8]) -> Vec<(usize, Snap)> {
        let own = self.keys.get(&(db, key.to_vec()));
        let own = own.map_or(&[][..], Vec::as_slice);
        let mut out = vec![(0, Snap::Absent)];
        let (mut i, mut j) = (0, 0);
        let events = &self.dbs[db];
        while i < own.len() || j < events.len() {
            let take_own = j >= events.len() || (i < own.len() && own[i].0 <= events[j].0);
            let (at, snap) = if take_own {
                i += 1;
                own[i - 1]
            } else {
                j += 1;
                let snap = match events[j - 1].1 {
                    DbEvent::Flushed => Snap::Absent,
                    DbEvent::Unknown => Snap::Unknown,
                };
                (events[j - 1].0, snap)
            };
            // A key's own entry at the same prefix as a database event
            // is the state after the whole execution: it wins.
            match out.last_mut() {
                Some((last_at, last)) if *last_at == at => {
                    if take_own || *last != Snap::Unknown {
                        *last = snap;
                    }
                }
                _ => out.push((at, snap)),
            }
        }
        out
    }

    /// The prefixes at which `key` is what was read back (`None`: absent).
    pub fn matching(
        &self,
        db: usize,
        key: &[u8],
        observed: Option<&ObservedKey>,
        restart_unix_ms: u64,
    ) -> Intervals {
        let segments = self.segments(db, key);
        let mut out: Intervals = Vec::new();
        for (n, &(start, snap)) in segments.iter().enumerate() {
            let end = segments
                .get(n + 1)
                .map_or(self.executions_count, |&(next, _)| next - 1);
            if start > end || !snap_matches(snap, observed, restart_unix_ms) {
                continue;
            }
            match out.last_mut() {
                Some((_, last_end)) if *last_end + 1 >= start => *last_end = end,
                _ => out.push((start, end)),
            }
        }
        out
    }

    /// Every key the model ever touched.
    pub fn touched_keys(&self) -> impl Iterator<Item = &(usize, Vec<u8>)> {
        self.keys.keys()
    }

    /// The key's state at prefix `k`, for messages.
    pub fn state_at(&self, db: usize, key: &[u8], k: usize) -> Snap {
        self.segments(db, key)
            .into_iter()
            .take_while(|&(at, _)| at <= k)
            .last()
            .map_or(Snap::Absent, |(_, s)| s)
    }
}

fn snap_matches(snap: Snap, observed: Option<&ObservedKey>, restart_unix_ms: u64) -> bool {
    match (snap, observed) {
        (Snap::Unknown, _) => true,
        (Snap::Absent, None) => true,
        (Snap::Absent, Some(_)) => false,
        (Snap::Present { expire_unix_ms, .. }, None) => {
            expire_unix_ms.is_some_and(|at| at <= restart_unix_ms + EXPIRY_SLACK_MS)
        }
        (
            Snap::Present {
                digest,
                expire_unix_ms,
            },
            Some(o),
        ) => {
            let expiry_ok = match (expire_unix_ms, o.expire_unix_ms) {
                (None, None) => true,
                (Some(a), Some(b)) => a.abs_diff(b) <= EXPIRY_SLACK_MS,
                _ => false,
            };
            let live = expire_unix_ms.is_none_or(|at| at + EXPIRY_SLACK_MS > restart_unix_ms);
            digest == o.digest && expiry_ok && live
        }
    }
}

/// `a ∩ b`.
pub fn intersect(a: &[(usize, usize)], b: &[(usize, usize)]) -> Intervals {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let lo = a[i].0.max(b[j].0);
        let hi = a[i].1.min(b[j].1);
        if lo <= hi {
            out.push((lo, hi));
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// Intervals as text, shortened.
pub fn show(intervals: &[(usize, usize)]) -> String {
    let mut parts: Vec<String> = intervals
        .iter()
        .take(8)
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}..={b}")
            }
        })
        .collect();
    if intervals.len() > 8 {
        parts.push(format!("... ({} intervals)", intervals.len()));
    }
    format!("{{{}}}", parts.join(", "))
}
