//! Keyspace notifications (Redis's notify.c): a write that changes a key
//! publishes `__keyspace@<db>__:<key>` -> `<event>` and
//! `__keyevent@<db>__:<event>` -> `<key>` through ordinary pub/sub, when
//! `notify-keyspace-events` enables the event's class and at least one of
//! the two channel kinds (`K`, `E`).
//!
//! Events are raised where Redis raises them: after the write is applied,
//! in command order (inside MULTI/EXEC and scripts too), so a subscriber
//! sees `new` before the first write event of a key it creates, and `del`
//! after the pop that emptied a collection. Expiry (lazy and active)
//! raises `expired`, eviction `evicted`. With notifications off (the
//! default) [`notify`] costs one branch on a config word.

use std::collections::VecDeque;

use crate::clients::Clients;
use crate::cmd::Ctx;
use crate::event::{Event, KeyRemoved, RemovalCause};
use crate::pubsub::Caller;
use crate::server::Server;

/// Event classes, as Redis's `NOTIFY_*` flags.
pub mod class {
    /// `K`: publish on `__keyspace@<db>__:<key>`.
    pub const KEYSPACE: u32 = 1 << 0;
    /// `E`: publish on `__keyevent@<db>__:<event>`.
    pub const KEYEVENT: u32 = 1 << 1;
    /// `g`: generic commands (DEL, EXPIRE, RENAME...).
    pub const GENERIC: u32 = 1 << 2;
    /// `$`: string commands.
    pub const STRING: u32 = 1 << 3;
    /// `l`: list commands.
    pub const LIST: u32 = 1 << 4;
    /// `s`: set commands.
    pub const SET: u32 = 1 << 5;
    /// `h`: hash commands.
    pub const HASH: u32 = 1 << 6;
    /// `z`: sorted-set commands.
    pub const ZSET: u32 = 1 << 7;
    /// `x`: a key expired.
    pub const EXPIRED: u32 = 1 << 8;
    /// `e`: a key was evicted.
    pub const EVICTED: u32 = 1 << 9;
    /// `t`: stream commands.
    pub const STREAM: u32 = 1 << 10;
    /// `m`: a lookup missed (never part of `A`).
    pub const KEY_MISS: u32 = 1 << 11;
    /// `d`: module key types (accepted; seedkv has no modules).
    pub const MODULE: u32 = 1 << 12;
    /// `n`: a key was created (never part of `A`).
    pub const NEW: u32 = 1 << 13;
    /// `A`: an alias for `g$lshzxetd`.
    pub const ALL: u32 =
        GENERIC | STRING | LIST | SET | HASH | ZSET | EXPIRED | EVICTED | STREAM | MODULE;
}

/// The character of each class, in the order Redis renders them after `A`
/// (or in its place) — `keyspaceEventsFlagsToString`.
const CLASS_CHARS: [(u32, u8); 11] = [
    (class::GENERIC, b'g'),
    (class::STRING, b'$'),
    (class::LIST, b'l'),
    (class::SET, b's'),
    (class::HASH, b'h'),
    (class::ZSET, b'z'),
    (class::EXPIRED, b'x'),
    (class::EVICTED, b'e'),
    (class::STREAM, b't'),
    (class::MODULE, b'd'),
    (class::NEW, b'n'),
];

/// The channel-kind and key-miss characters, rendered last in this order.
const TRAILING_CHARS: [(u32, u8); 3] = [
    (class::KEYSPACE, b'K'),
    (class::KEYEVENT, b'E'),
    (class::KEY_MISS, b'm'),
];

/// The CONFIG SET error for a character that names no class (Redis's text).
pub const INVALID_CLASS_ERROR: &str = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";

/// Parses `notify-keyspace-events` as `keyspaceEventsStringToFlags` does:
/// each character adds its class, `A` adds [`class::ALL`]; any other
/// character makes the whole value invalid.
pub fn parse_flags(text: &[u8]) -> Option<u32> {
    let mut flags = 0;
    for &c in text {
        flags |= match c {
            b'A' => class::ALL,
            _ => {
                CLASS_CHARS
                    .iter()
                    .chain(TRAILING_CHARS.iter())
                    .find(|&&(_, ch)| ch == c)?
                    .0
            }
        };
    }
    Some(flags)
}

/// Renders flags in Redis's canonical order (`KEA` reads back as `AKE`).
pub fn render_flags(flags: u32) -> String {
    let mut out = String::new();
    if flags & class::ALL == class::ALL {
        out.push('A');
    }
    for &(flag, ch) in &CLASS_CHARS {
        let covered_by_all = flags & class::ALL == class::ALL && flag & class::ALL != 0;
        if flags & flag != 0 && !covered_by_all {
            out.push(ch as char);
        }
    }
    for &(flag, ch) in &TRAILING_CHARS {
        if flags & flag != 0 {
            out.push(ch as char);
        }
    }
    out
}

/// Whether `flags` publish anything: a class (`m` included: a read's
/// miss) and a channel kind.
pub fn enabled(flags: u32) -> bool {
    flags & (class::KEYSPACE | class::KEYEVENT) != 0
        && flags & !(class::KEYSPACE | class::KEYEVENT) != 0
}

/// Raises `event` (of class `class`) on `key` in the calling client's
/// database. One branch when the class is off.
#[inline]
pub fn notify(ctx: &mut Ctx, class: u32, event: &str, key: &[u8]) {
    if ctx.server.config.notify_keyspace_events & class == 0 {
        return;
    }
    let db = ctx.db_index();
    notify_in_db(ctx, class, event, key, db);
}

/// Raises `event` on `key` in database `db` (MOVE and COPY write to
/// another database than the client's). The calling client's own
/// messages land in its reply, ahead of it.
pub fn notify_in_db(ctx: &mut Ctx, class: u32, event: &str, key: &[u8], db: usize) {
    if ctx.server.config.notify_keyspace_events & class == 0 {
        return;
    }
    let caller = Some(crate::pubsub::caller_of!(ctx));
    let units = publish_event(ctx.server, ctx.clients, caller, (event, key, db));
    ctx.work(units);
}

/// Raises `event` on `key` in `db` outside any command (the active-expire
/// cron, eviction before a command); returns the work done. The engine
/// queues the receivers for transmission after its turn.
fn notify_outside(
    server: &mut Server,
    clients: &mut Clients,
    class: u32,
    event: &str,
    key: &[u8],
    db: usize,
) -> u64 {
    if server.config.notify_keyspace_events & class == 0 {
        return 0;
    }
    publish_event(server, clients, None, (event, key, db))
}

/// A command met `key` (in `db`) past its TTL and deleted it: raises
/// `expired`, as Redis's `deleteExpiredKeyAndPropagate` does.
pub(crate) fn expired_on_access(ctx: &mut Ctx, db: usize, key: &[u8]) {
    let cause = RemovalCause::ExpiredOnAccess;
    record_removal(ctx.server, ctx.events, db, key, cause);
    if ctx.server.planted.expired_notified(cause) {
        notify_in_db(ctx, class::EXPIRED, "expired", key, db);
    }
}

/// The cron expired `key`, or eviction removed it: raises `expired` or
/// `evicted`; returns the work done.
pub(crate) fn removed_outside(
    server: &mut Server,
    clients: &mut Clients,
    events: &mut VecDeque<Event>,
    (db, key): (usize, &[u8]),
    cause: RemovalCause,
) -> u64 {
    record_removal(server, events, db, key, cause);
    if !server.planted.expired_notified(cause) {
        return 0;
    }
    let (class, event) = match cause {
        RemovalCause::Evicted => (class::EVICTED, "evicted"),
        RemovalCause::ExpiredInCron | RemovalCause::ExpiredOnAccess => (class::EXPIRED, "expired"),
    };
    notify_outside(server, clients, class, event, key, db)
}

/// Tells a host that records executions (the simulator) that `key` left
/// the keyspace on its own, so that its checkers can demand the event.
fn record_removal(
    server: &Server,
    events: &mut VecDeque<Event>,
    db: usize,
    key: &[u8],
    cause: RemovalCause,
) {
    if server.config.record_executions {
        events.push_back(Event::KeyRemoved(KeyRemoved {
            db,
            key: key.to_vec(),
            cause,
        }));
    }
}

/// What both kinds of channel names start with (`__keyspace@`,
/// `__keyevent@`).
const KEY_CHANNELS_PREFIX: &[u8] = b"__key";

/// Publishes one event on the keyspace and keyevent channels the config
/// enables, in that order (as `notifyKeyspaceEvent`); returns the work.
#[cold]
fn publish_event(
    server: &mut Server,
    clients: &mut Clients,
    mut caller: Option<Caller>,
    (event, key, db): (&str, &[u8], usize),
) -> u64 {
    let flags = server.config.notify_keyspace_events;
    let mut work_units = 0;
    if !server.pubsub.may_reach(KEY_CHANNELS_PREFIX) {
        // Nobody could receive it: the same work as publishing to no
        // subscriber and no pattern, without building the channel names.
        if flags & class::KEYSPACE != 0 {
            work_units += 1 + key.len() as u64 / crate::cmd::REPLY_BYTES_PER_WORK_UNIT;
        }
        if flags & class::KEYEVENT != 0 {
            work_units += 1;
        }
        return work_units;
    }
    // One buffer for both names, kept between events: no allocation per
    // notification.
    let mut channel = std::mem::take(&mut server.pubsub.channel_scratch);
    if flags & class::KEYSPACE != 0 {
        key_channel(&mut channel, b"__keyspace@", db, key);
        work_units += 1 + key.len() as u64 / crate::cmd::REPLY_BYTES_PER_WORK_UNIT;
        crate::pubsub::publish(
            &mut server.pubsub,
            clients,
            caller.as_mut().map(Caller::reborrow),
            (&channel, event.as_bytes()),
            1,
            &mut work_units,
        );
    }
    if flags & class::KEYEVENT != 0 {
        key_channel(&mut channel, b"__keyevent@", db, event.as_bytes());
        work_units += 1;
        crate::pubsub::publish(
            &mut server.pubsub,
            clients,
            caller,
            (&channel, key),
            1,
            &mut work_units,
        );
    }
    server.pubsub.channel_scratch = channel;
    work_units
}

/// `{kind}{db}__:{suffix}`, the name of a keyspace or keyevent channel,
/// written over `channel`, without the formatting machinery (every write of a run with
/// notifications and a listener builds two).
fn key_channel(channel: &mut Vec<u8>, kind: &[u8], db: usize, suffix: &[u8]) {
    let mut buf = [0u8; 20];
    // A database index is below `databases` (an i32 config), so it fits.
    let digits = crate::resp::encode::fmt_i64(&mut buf, db as i64);
    channel.clear();
    channel.extend_from_slice(kind);
    channel.extend_from_slice(digits);
    channel.extend_from_slice(b"__:");
    channel.extend_from_slice(suffix);
}

#[cfg(test)]
mod tests;
