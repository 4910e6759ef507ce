//! Snapshot reads: KEYS, SMEMBERS, HGETALL, HKEYS, HVALS and LRANGE over a
//! big collection answer from a point-in-time view of it, produced in bounded
//! slices between other clients' commands (`snapshot-reads yes`, seedkv's
//! own parameter; no Redis has this).
//!
//! Why: in Redis such a command holds the one command thread for the whole
//! walk (`KEYS *` over 2M keys: every other client waits about a second).
//! Here the command *executes* at once: it opens a read on the dict
//! ([`crate::dict::Dict::snapshot_open`], O(1)) and replies nothing yet.
//! The engine then produces [`SLICE_ELEMENTS`] elements per
//! `handle_timeout` (due at once, like a suspended script's slices), and
//! serves other clients' input in between. Writers go on: the dict and the
//! database keep the view exact (see [`crate::dict`]'s `snapshot` module
//! and [`barrier`]), so the reply is what the command would have returned
//! at its execution point, which is where it is recorded (stats, MONITOR,
//! the simulator's history). The reader's own later requests wait, so its
//! replies stay in order.
//!
//! When it does not slice (the command runs whole, as in Redis): inside
//! MULTI/EXEC or a script (they are atomic and reply at once), for a
//! client with tracking, subscriptions or CLIENT REPLY OFF/SKIP (whose
//! pushes or suppressed replies would interleave with the staged reply),
//! a listpack or intset (small) value, a collection of at most
//! [`SLICE_ELEMENTS`], and while another snapshot read is open (one at a
//! time, engine-wide).
//!
//! Edge cases: a reader that disconnects mid-reply drops the read (its
//! staged reply with it); FLUSHALL, FLUSHDB, DEL/UNLINK, overwrite,
//! RENAME, MOVE, expiry or eviction of the value being read first save
//! what the read still owes (O(remaining), once) and the read finishes
//! from that list; SWAPDB carries the read with the contents; loading a
//! dataset (DEBUG RELOAD, a full resync) finishes the read first. The
//! staged reply counts against the client's hard output buffer limit
//! after every slice (over it: the client is closed, as Redis closes it
//! while it writes); the soft limit applies once the reply is in the
//! output buffer. CLIENT PAUSE holds new commands, not a reply being
//! produced. RESP3 gets its map for HGETALL.
//!
//! LRANGE: a list has no per-element guard, so the first command that gets
//! the list for writing (or touches it through a write lookup) first copies
//! the elements the read still owes, in order (O(remaining), once), and
//! the read finishes from that copy; DEL, RENAME, FLUSHALL, expiry and the
//! like do the same through the database's barrier. ZRANGE still runs
//! whole.
//!
//! Memory: the staged reply (as large as the reply, which Redis also
//! holds; in chunks, see [`crate::reply_chunks`]) and the side list of
//! entries writers changed before the read got to them (at most one copy
//! per unvisited entry, emptied slice by slice; for LRANGE, one copy of
//! the owed elements).

pub mod barrier;

pub use barrier::Pinned;

use crate::client::{ClientId, Clients};
use crate::cmd::Ctx;
use crate::dict::Saved;
use crate::glob::{self, glob_match};
use crate::reply_chunks::ChunkedBody;
use crate::resp::{Protocol, ReplyWriter};
use crate::server::Server;
use crate::types::list::Direction;
use crate::value::Value;

/// Elements one slice visits or emits at most by default
/// ([`crate::Config::snapshot_slice_elements`]). At ~50 ns per element
/// that is ~0.2 ms of the command thread per slice; a collection no
/// bigger is read whole.
pub const SLICE_ELEMENTS: usize = 4096;

/// What each element of the reply is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// KEYS: the key, when it matches the pattern.
    Keys,
    /// SMEMBERS: the member (a set in RESP3).
    Members,
    /// HKEYS: the field.
    Fields,
    /// HVALS: the value.
    Values,
    /// HGETALL: field and value (a map in RESP3).
    Pairs,
    /// LRANGE: the element, in list order.
    ListRange,
}

/// The open read: whose, and the reply staged so far.
#[derive(Debug)]
pub struct SnapshotRead {
    pub client: ClientId,
    pub request_seq: u64,
    shape: Shape,
    /// KEYS's pattern; `None` for `*` and the value reads.
    pattern: Option<Vec<u8>>,
    protocol: Protocol,
    /// The elements so far, in chunks (see [`crate::reply_chunks`]).
    body: ChunkedBody,
    /// Elements in `body` (pairs for HGETALL).
    count: usize,
}

impl SnapshotRead {
    /// Bytes of the reply staged so far.
    pub fn staged_bytes(&self) -> usize {
        self.body.bytes()
    }
}

/// What one slice did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slice {
    pub work_units: u64,
    pub elements: u64,
    pub reply_bytes: u64,
    /// Nothing is left: [`finish`] the read.
    pub done: bool,
}

/// Whether the running command may answer `len` elements through a
/// snapshot read (see the module docs for when it may not).
fn may_open(ctx: &Ctx, len: usize) -> bool {
    if !ctx.server.config.snapshot_reads
        || len <= ctx.server.config.snapshot_slice_elements.max(1)
        || !ctx.may_suspend
        || ctx.in_exec
        || ctx.in_script
        || ctx.server.snapshot_read.is_some()
        || ctx.server.scripting.running_client().is_some()
    {
        return false;
    }
    let c = &ctx.clients[&ctx.client_id];
    !c.tracking.on
        && c.subscriptions.is_empty()
        && !c.reply_mode.suppressed()
        && !c.replaying_aof
        && c.repl_role == crate::repl::ClientRole::Normal
}

fn register(ctx: &mut Ctx, shape: Shape, pattern: Option<Vec<u8>>) {
    let c = &ctx.clients[&ctx.client_id];
    debug_assert!(c.requests_parsed > 0);
    ctx.server.snapshot_read = Some(Box::new(SnapshotRead {
        client: ctx.client_id,
        request_seq: c.requests_parsed - 1,
        shape,
        pattern,
        protocol: ctx.protocol,
        body: ChunkedBody::default(),
        count: 0,
    }));
    ctx.work(1);
}

/// KEYS: opens a read of the selected database's keys when it pays;
/// returns whether it did (the handler then replies nothing).
pub(crate) fn open_keys(ctx: &mut Ctx, pattern: &[u8]) -> bool {
    let i = ctx.db_index();
    if !may_open(ctx, ctx.server.keyspace.dbs[i].len()) {
        return false;
    }
    let now_ms = ctx.expiry_now_ms();
    let db = &mut ctx.server.keyspace.dbs[i];
    debug_assert!(db.snapshot.is_none());
    db.keys.snapshot_open(None, false);
    db.snapshot = Some(Box::new(Pinned::Keys { now_ms }));
    let pattern = (pattern != b"*").then(|| pattern.to_vec());
    register(ctx, Shape::Keys, pattern);
    true
}

/// SMEMBERS, HKEYS, HVALS, HGETALL: opens a read of the hash or set at
/// `key` when it is big enough and in its table encoding; returns whether
/// it did. Looks before it counts: the lookup (lazy expiry, keyspace hits,
/// the LRU clock) runs only once the read is sure to open; else the
/// command's own path does all of it.
pub(crate) fn open_value(ctx: &mut Ctx, key: &[u8], shape: Shape) -> bool {
    let i = ctx.db_index();
    let now_ms = ctx.expiry_now_ms();
    let db = &ctx.server.keyspace.dbs[i];
    if db.is_expired(key, now_ms) {
        return false;
    }
    let len = match (db.get(key), shape) {
        (Some(Value::Hash(h)), Shape::Fields | Shape::Values | Shape::Pairs) => {
            h.dict().map_or(0, |d| d.len())
        }
        (Some(Value::Set(s)), Shape::Members) => s.dict().map_or(0, |d| d.len()),
        _ => 0,
    };
    if !may_open(ctx, len) {
        return false;
    }
    // The command's read, with its effects; the value is what we looked at.
    let _ = ctx.lookup_read_and_writer(key);
    let db = &mut ctx.server.keyspace.dbs[i];
    debug_assert!(db.snapshot.is_none());
    match db.keys.get_mut(key) {
        Some(Value::Hash(h)) => {
            let copy: fn(&Box<[u8]>) -> Box<[u8]> = |v| v.clone();
            let values = matches!(shape, Shape::Values | Shape::Pairs);
            h.dict_mut()
                .expect("checked: a table")
                .snapshot_open(values.then_some(copy), true);
        }
        Some(Value::Set(s)) => s
            .dict_mut()
            .expect("checked: a table")
            .snapshot_open(None, true),
        _ => unreachable!("checked: a hash or a set"),
    }
    db.snapshot = Some(Box::new(Pinned::Value {
        key: key.into(),
        detached: None,
    }));
    register(ctx, shape, None);
    true
}

/// LRANGE `start end` of the list at `key`: opens a read of the range
/// when it is longer than a slice; returns whether it did. Looks before
/// it counts, as [`open_value`]. The range's length is fixed here, at the
/// execution point; the list's own barrier is [`Db::snapshot_before_mut`]
/// (a list has no per-element guard).
///
/// [`Db::snapshot_before_mut`]: crate::db::Db::snapshot_before_mut
pub(crate) fn open_list(ctx: &mut Ctx, key: &[u8], start: i64, end: i64) -> bool {
    let i = ctx.db_index();
    let now_ms = ctx.expiry_now_ms();
    let db = &ctx.server.keyspace.dbs[i];
    if db.is_expired(key, now_ms) {
        return false;
    }
    let Some(list) = db.get(key).and_then(Value::as_list) else {
        return false;
    };
    let Some((from, to)) = crate::commands::lists::resolve_range(list.len(), start, end) else {
        return false;
    };
    if !may_open(ctx, to - from + 1) {
        return false;
    }
    // The command's read, with its effects; the list is what we looked at.
    let _ = ctx.lookup_read_and_writer(key);
    let db = &mut ctx.server.keyspace.dbs[i];
    debug_assert!(db.snapshot.is_none());
    db.snapshot = Some(Box::new(Pinned::List {
        key: key.into(),
        next: from,
        end: to + 1,
        detached: None,
    }));
    register(ctx, Shape::ListRange, None);
    true
}

/// Produces up to `budget` elements of the open read. `skip_saved` is the
/// planted `snapshot-skips-saved` defect (the side list is dropped).
pub fn slice(server: &mut Server, budget: usize, skip_saved: bool) -> Slice {
    let Some(read) = server.snapshot_read.as_deref_mut() else {
        return Slice {
            work_units: 0,
            elements: 0,
            reply_bytes: 0,
            done: true,
        };
    };
    let Some(db) = server
        .keyspace
        .dbs
        .iter_mut()
        .find(|d| d.snapshot.is_some())
    else {
        unreachable!("an open snapshot read is pinned in a database");
    };
    let body_before = read.body.bytes();
    let mut glob_steps = 0;
    let mut walk_steps = 0;
    let mut elements = 0;
    let done = match db.snapshot.as_deref_mut().expect("found") {
        Pinned::Keys { now_ms } => {
            let (now_ms, expires) = (*now_ms, &db.expires);
            elements += db.keys.snapshot_visit(budget, |key, _| {
                if expires.get(key).is_none_or(|&when| when > now_ms) {
                    read.emit(key, None, &mut glob_steps);
                }
            });
            let saved = db.keys.snapshot_take_saved(budget - elements);
            elements += read.emit_saved(saved, skip_saved, &mut glob_steps);
            db.keys.snapshot_unvisited() == 0 && db.keys.snapshot_saved_len() == 0
        }
        Pinned::List {
            detached: Some(copy),
            ..
        } => {
            for element in copy.drain(..budget.min(copy.len())) {
                read.emit(&element, None, &mut glob_steps);
                elements += 1;
            }
            copy.is_empty()
        }
        Pinned::List {
            key,
            next,
            end,
            detached: None,
        } => {
            let Some(list) = db.keys.get(key).and_then(Value::as_list) else {
                // Its barrier detaches the read before the list can go.
                debug_assert!(false, "a read list left the keyspace unseen");
                return Slice {
                    work_units: 0,
                    elements: 0,
                    reply_bytes: 0,
                    done: true,
                };
            };
            let take = budget.min(*end - *next);
            let (entries, steps) = list.iter_from_with_steps(*next, Direction::Forward);
            for element in entries.take(take) {
                read.emit(element, None, &mut glob_steps);
            }
            elements += take;
            walk_steps += steps as u64;
            *next += take;
            *next == *end
        }
        Pinned::Value {
            detached: Some(list),
            ..
        } => {
            let keep = list.len().saturating_sub(budget);
            let saved = list.split_off(keep);
            elements += read.emit_saved(saved, skip_saved, &mut glob_steps);
            list.is_empty()
        }
        Pinned::Value {
            key,
            detached: None,
        } => {
            let value = db
                .keys
                .get_mut(key)
                .expect("a read value is in the keyspace");
            let mut done = false;
            let opened = barrier::with_dict(value, |d| {
                elements += d.visit(budget, &mut |k, v| read.emit(k, v, &mut glob_steps));
                let saved = d.take_saved(budget - elements);
                elements += read.emit_saved(saved, skip_saved, &mut glob_steps);
                done = d.remaining() == 0;
            });
            debug_assert!(opened, "a read value keeps its table encoding");
            done || !opened
        }
    };
    debug_assert!(elements <= budget);
    Slice {
        work_units: elements as u64 + walk_steps + glob::work_units(glob_steps),
        elements: elements as u64,
        reply_bytes: (read.body.bytes() - body_before) as u64,
        done,
    }
}

impl SnapshotRead {
    /// Appends one element, if it passes KEYS's pattern.
    fn emit(&mut self, key: &[u8], value: Option<&[u8]>, glob_steps: &mut u64) {
        if let Some(p) = &self.pattern {
            if !glob_match(p, key, false, glob_steps) {
                return;
            }
        }
        let tail = self.body.tail();
        let before = tail.len();
        let mut w = ReplyWriter::new(tail, self.protocol);
        match self.shape {
            Shape::Keys | Shape::Members | Shape::Fields | Shape::ListRange => w.bulk(key),
            Shape::Values => w.bulk(value.unwrap_or_default()),
            Shape::Pairs => {
                w.bulk(key);
                w.bulk(value.unwrap_or_default());
            }
        }
        let n = tail.len() - before;
        self.body.wrote(n);
        self.count += 1;
    }

    /// Appends the entries writers saved; returns how many there were.
    fn emit_saved(&mut self, saved: Vec<Saved>, skip: bool, glob_steps: &mut u64) -> usize {
        let n = saved.len();
        if !skip {
            for s in saved {
                self.emit(&s.key, s.value.as_deref(), glob_steps);
            }
        }
        n
    }
}

/// The finished reply of a read: its header (known only now: the count)
/// and its elements, in chunks.
#[derive(Debug)]
pub struct Finished {
    pub client: ClientId,
    pub header: Vec<u8>,
    pub chunks: Vec<Vec<u8>>,
}

/// Ends the open read. The caller appends the header, then the chunks, to
/// the client's output, copying no chunk (see [`crate::reply_chunks`]).
pub fn finish(server: &mut Server) -> Option<Finished> {
    let read = close(server)?;
    let mut header = Vec::with_capacity(24);
    let mut w = ReplyWriter::new(&mut header, read.protocol);
    match read.shape {
        Shape::Pairs => w.map_len(read.count),
        Shape::Members => w.set_len(read.count),
        Shape::Keys | Shape::Fields | Shape::Values | Shape::ListRange => w.array_len(read.count),
    }
    Some(Finished {
        client: read.client,
        header,
        chunks: read.body.into_chunks(),
    })
}

/// Drops the open read, if any (its client is gone), closing it on its
/// dict. O(1) plus what it held.
pub fn close(server: &mut Server) -> Option<Box<SnapshotRead>> {
    let read = server.snapshot_read.take()?;
    if let Some(db) = server
        .keyspace
        .dbs
        .iter_mut()
        .find(|d| d.snapshot.is_some())
    {
        match *db.snapshot.take().expect("found") {
            Pinned::Keys { .. } => db.keys.snapshot_close(),
            Pinned::Value {
                key,
                detached: None,
            } => {
                if let Some(value) = db.keys.get_mut(&key) {
                    barrier::with_dict(value, |d| d.close());
                }
            }
            Pinned::Value { .. } | Pinned::List { .. } => {}
        }
    }
    Some(read)
}

/// Whether `client`'s open read has staged more than its class's hard
/// output buffer limit allows, with what it already has pending.
pub fn over_hard_limit(server: &Server, clients: &Clients) -> bool {
    let Some(read) = server.snapshot_read.as_deref() else {
        return false;
    };
    let Some(c) = clients.get(&read.client) else {
        return false;
    };
    let limit = c.output_limit(&server.config.client_output_buffer_limit);
    limit.hard_bytes > 0
        && (c.pending_output_bytes() + read.body.bytes()) as u64 >= limit.hard_bytes
}
