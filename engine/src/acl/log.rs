//! `ACL LOG`: denied commands, keys and channels and failed logins, newest
//! first. An event like one of the ten newest entries (same reason,
//! context, object and user, within a minute) updates that entry instead
//! of adding one, as Redis's `addACLLogEntry` does.

use std::collections::VecDeque;

use super::Denied;
use crate::resp::ReplyWriter;

/// How many of the newest entries an event is compared with (Redis's
/// bounded search for a duplicate).
const GROUPING_ENTRIES_MAX: usize = 10;

/// Events further apart than this are separate entries
/// (`ACL_LOG_GROUPING_MAX_TIME_DELTA`).
const GROUPING_DELTA_MS_MAX: u64 = 60_000;

/// Why an entry was logged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    Command,
    Key,
    Channel,
    Auth,
}

impl Reason {
    pub fn of(denied: Denied) -> Reason {
        match denied {
            Denied::Command => Reason::Command,
            Denied::Key(_) => Reason::Key,
            Denied::Channel(_) => Reason::Channel,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Reason::Command => "command",
            Reason::Key => "key",
            Reason::Channel => "channel",
            Reason::Auth => "auth",
        }
    }
}

/// Where the denied command came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Context {
    Toplevel,
    Multi,
    Lua,
}

impl Context {
    fn name(self) -> &'static str {
        match self {
            Context::Toplevel => "toplevel",
            Context::Multi => "multi",
            Context::Lua => "lua",
        }
    }
}

/// One `ACL LOG` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub count: u64,
    pub reason: Reason,
    pub context: Context,
    /// The command's full name, the key, the channel, or for a failed
    /// login the command (`auth`, `hello`).
    pub object: Vec<u8>,
    pub username: Vec<u8>,
    /// When the entry was last updated (unix ms).
    pub created_ms: u64,
    /// The client's CLIENT LIST line at that time.
    pub client_info: Vec<u8>,
}

/// The log, newest entry first.
#[derive(Clone, Debug, Default)]
pub struct AclLog {
    entries: VecDeque<Entry>,
}

impl AclLog {
    /// Adds an event, or counts it into a recent entry like it. A new
    /// entry trims the log to `entries_max` (`acllog-max-len`), oldest
    /// first; as in Redis, a smaller `acllog-max-len` takes effect only
    /// then, and a counted event trims nothing. Returns the entries
    /// compared and dropped, for the caller to charge.
    pub fn add(&mut self, event: Entry, entries_max: usize) -> u64 {
        debug_assert_eq!(event.count, 1);
        let similar = self
            .entries
            .iter()
            .take(GROUPING_ENTRIES_MAX)
            .position(|e| e.same_event(&event));
        match similar {
            Some(i) => {
                let mut entry = self.entries.remove(i).expect("found");
                entry.count += 1;
                entry.created_ms = event.created_ms;
                entry.client_info = event.client_info;
                self.entries.push_front(entry);
            }
            None => {
                self.entries.push_front(event);
                let dropped = self.entries.len().saturating_sub(entries_max);
                self.entries.truncate(entries_max);
                return (GROUPING_ENTRIES_MAX + dropped) as u64;
            }
        }
        GROUPING_ENTRIES_MAX as u64
    }

    pub fn reset(&mut self) {
        self.entries.clear();
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Writes the newest `count` entries as `ACL LOG` shows them at
    /// `now_ms`.
    pub fn write(&self, w: &mut ReplyWriter, count: usize, now_ms: u64) {
        let count = count.min(self.entries.len());
        w.array_len(count);
        for e in self.entries.iter().take(count) {
            w.map_len(7);
            w.bulk_str("count");
            w.int(e.count as i64);
            w.bulk_str("reason");
            w.bulk_str(e.reason.name());
            w.bulk_str("context");
            w.bulk_str(e.context.name());
            w.bulk_str("object");
            w.bulk(&e.object);
            w.bulk_str("username");
            w.bulk(&e.username);
            w.bulk_str("age-seconds");
            w.double(now_ms.saturating_sub(e.created_ms) as f64 / 1000.0);
            w.bulk_str("client-info");
            w.bulk(&e.client_info);
        }
    }
}

impl Entry {
    /// Redis's `ACLLogMatchEntry`.
    fn same_event(&self, other: &Entry) -> bool {
        self.reason == other.reason
            && self.context == other.context
            && other.created_ms.saturating_sub(self.created_ms) <= GROUPING_DELTA_MS_MAX
            && self.object == other.object
            && self.username == other.username
    }
}
