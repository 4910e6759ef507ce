//! Propagation: what every write puts into the AOF (and, later, the
//! replication stream). Redis does not log the commands clients sent but
//! their *effects*, rewritten so that replaying them later, at another
//! time and with another random state, builds the same dataset. This module
//! builds that stream in memory, as RESP bytes exactly as Redis 7.0's
//! `feedAppendOnlyFile` writes them; the AOF code drains it after each
//! input ([`Propagation::take`]).
//!
//! # The shape of the stream
//!
//! Redis's `call()` collects the commands one execution unit propagates
//! (`server.also_propagate`) and writes them when the unit ends
//! (`propagatePendingCommands`). A unit is a request (with everything it
//! runs: EXEC's queue, a script's `redis.call`s), one blocked client
//! served, one active-expire cycle, one round of evictions. A unit that
//! propagates more than one command is wrapped in `MULTI` ... `EXEC`, so
//! that a replica applies it atomically, except expiry and eviction
//! deletions (`propagate_no_multi`). A `SELECT <db>` precedes any command
//! whose database differs from the last one written (`aof_selected_db`);
//! `MULTI` takes its first command's database and `EXEC` its last's.
//!
//! Some consequences, all checked against redis-server 7.0.15:
//! - `MULTI SET a 1 EXEC` propagates a bare `SET a 1`; a read-only
//!   transaction propagates nothing.
//! - A write that lazily expires its key first propagates
//!   `MULTI DEL k; SET k v; EXEC` (7.0's behaviour; 7.2 moved the DEL out).
//! - A script propagates the effects of its `redis.call`s, never itself.
//!
//! # Which commands propagate, and how
//!
//! A command propagates iff it changed the dataset (`server.dirty` grew
//! while it ran; FLUSHALL and FLUSHDB always count one change, so that
//! they propagate even on empty databases, as Redis forces). By default
//! it propagates verbatim, as the client sent it (the name keeps its
//! case). A handler replaces that with [`Ctx::propagate`] (one or several
//! commands) where verbatim would replay differently. The decision for
//! every write command of the table:
//!
//! | command | propagated as |
//! | --- | --- |
//! | EXPIRE, PEXPIRE, EXPIREAT | `PEXPIREAT key <abs ms> [options]`; at or before now: `DEL key` (`UNLINK` under `lazyfree-lazy-expire`) |
//! | PEXPIREAT | verbatim; in the past: `DEL`/`UNLINK` as above |
//! | SET with EX/PX/EXAT/PXAT, SETEX, PSETEX | `SET key value PXAT <abs ms>` (NX/XX/GET dropped) |
//! | GETEX EX/PX/EXAT/PXAT | `PEXPIREAT key <abs ms>`; in the past: `DEL`/`UNLINK` (`lazyfree-lazy-expire`) |
//! | GETEX PERSIST | `PERSIST key` |
//! | GETDEL | `DEL key` (`UNLINK` under `lazyfree-lazy-user-del`) |
//! | INCRBYFLOAT | `SET key <new value> KEEPTTL` |
//! | HINCRBYFLOAT | `HSET key field <new value>` |
//! | SPOP key | `SREM key member` |
//! | SPOP key count | one `SREM key member` per popped member (a unit: MULTI/EXEC when more than one); the whole set: `DEL key` |
//! | BLPOP, BRPOP | `LPOP key` / `RPOP key` |
//! | LMPOP, BLMPOP | `LPOP key n` / `RPOP key n`, n the number popped |
//! | BLMOVE | `LMOVE` with the same arguments |
//! | BRPOPLPUSH | `RPOPLPUSH source destination` |
//! | BZPOPMIN, BZPOPMAX | `ZPOPMIN key` / `ZPOPMAX key` |
//! | ZMPOP, BZMPOP | `ZPOPMIN key n` / `ZPOPMAX key n`, n the number popped |
//! | RESTORE with a relative TTL | the TTL made absolute and `ABSTTL` appended; already expired: `DEL`/`UNLINK` (`lazyfree-lazy-server-del`) when it replaced a key, else nothing |
//! | FLUSHALL, FLUSHDB | verbatim, always (even when nothing was there) |
//! | EVAL, EVALSHA, FCALL (and `_RO`) | never themselves: each `redis.call` propagates as above |
//! | EXEC | never itself: its commands, MULTI/EXEC-wrapped when more than one propagates |
//! | everything else that writes (SET without expiry, MSET, APPEND, INCR..., DEL, UNLINK, RENAME, RENAMENX, COPY, MOVE, SWAPDB, PERSIST, the list, hash, set and sorted-set writes, LMOVE, RPOPLPUSH, SMOVE, the *STORE commands, ZRANGESTORE, SORT ... STORE, LPOP/RPOP/ZPOPMIN/ZPOPMAX with their counts, GETSET, SETRANGE, MSETNX, SETNX, ZINCRBY) | verbatim: each is deterministic given the dataset (SORT ... STORE sorts even under BY nosort) |
//!
//! Deletions that no command asked for propagate as `DEL key`, or `UNLINK
//! key` when the matching lazyfree option is on (Redis's
//! `propagateDeletion`): a key found expired on access
//! (`lazyfree-lazy-expire`), by the cron's active expiry (same option),
//! and a key evicted under `maxmemory` (`lazyfree-lazy-eviction`).
//!
//! PUBLISH goes to replicas only in Redis (not to the AOF) and is not
//! propagated here. When [`Propagation::is_enabled`] is false, the hot path
//! pays one branch per command.
//!
//! [`Ctx::propagate`]: crate::cmd::Ctx::propagate

use crate::db::DATABASES_COUNT;

/// Commands pending in one execution unit past which the unit is a bug:
/// the biggest unit is one SREM per member of an SPOP count or one
/// command per `redis.call`, each bounded by the work a request may do.
const PENDING_OPS_MAX: usize = 1 << 24;

/// One command to propagate, in the database it ran in.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Op {
    db: usize,
    argv: Vec<Vec<u8>>,
}

/// What the running command said about its own propagation (see
/// [`Ctx::propagate`](crate::cmd::Ctx::propagate)); saved and restored
/// around a nested command (a script's `redis.call`, EXEC's queue).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Verdict {
    /// The handler propagated its effect itself (or chose nothing): the
    /// command is not propagated verbatim.
    replaced: bool,
}

/// What is taken before a command runs, to decide after it whether and how
/// it propagates. Only built while propagation is enabled.
pub(crate) struct Capture {
    dirty_before: u64,
    db: usize,
    /// The arguments as sent (handlers may take them apart); `None` for a
    /// command without the `write` flag, which never propagates verbatim.
    args: Option<Vec<Vec<u8>>>,
    /// The enclosing command's verdict, restored when this one ends.
    outer: Verdict,
}

/// Whether a unit of several commands is wrapped in MULTI/EXEC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wrap {
    /// A command's unit: wrapped when it propagates more than one.
    Multi,
    /// Expiry and eviction deletions: never wrapped.
    Bare,
}

/// The propagation state of a server (see the module docs).
#[derive(Debug, Default)]
pub struct Propagation {
    enabled: bool,
    /// The commands of the unit under way (Redis's `also_propagate`).
    pending: Vec<Op>,
    /// The verdict of the command running now.
    verdict: Verdict,
    /// The database of the last command written (`aof_selected_db`);
    /// `None` at start and after [`Propagation::reset_selected_db`].
    selected_db: Option<usize>,
    /// The stream not yet taken.
    buf: Vec<u8>,
    /// Bytes written to the stream since start.
    propagated_bytes: u64,
}

impl Propagation {
    /// Whether writes are propagated (off by default; the AOF code turns
    /// it on under `appendonly yes`).
    #[inline(always)]
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// Turns propagation on or off. Turning it off drops nothing already
    /// in the stream, but a unit under way (there is none between inputs)
    /// is forgotten.
    pub fn set_enabled(&mut self, enabled: bool) {
        self.enabled = enabled;
        if !enabled {
            self.pending.clear();
            self.verdict = Verdict::default();
        }
    }

    /// Forgets the database last written, so that the next command is
    /// preceded by a `SELECT` (after an AOF rewrite or a restart, as
    /// Redis's `aof_selected_db = -1`).
    pub fn reset_selected_db(&mut self) {
        self.selected_db = None;
    }

    /// Takes the stream written since the last take. Between inputs every
    /// unit is complete: the bytes end on a command boundary.
    #[must_use]
    pub fn take(&mut self) -> Vec<u8> {
        debug_assert!(self.pending.is_empty(), "taken in the middle of a unit");
        std::mem::take(&mut self.buf)
    }

    /// Appends the stream written since the last take to `out`, leaving
    /// the internal buffer empty (its capacity kept).
    pub fn drain_into(&mut self, out: &mut Vec<u8>) {
        debug_assert!(self.pending.is_empty(), "drained in the middle of a unit");
        out.extend_from_slice(&self.buf);
        self.buf.clear();
    }

    /// Whether the stream has bytes not yet taken.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The stream's bytes not yet taken.
    pub fn pending_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Bytes written to the stream since start (taken or not).
    pub fn propagated_bytes(&self) -> u64 {
        self.propagated_bytes
    }

    /// Queues `argv` in database `db` into the unit under way (Redis's
    /// `alsoPropagate`).
    pub(crate) fn push(&mut self, db: usize, argv: Vec<Vec<u8>>) {
        debug_assert!(self.enabled);
        debug_assert!(db < DATABASES_COUNT);
        debug_assert!(!argv.is_empty());
        assert!(self.pending.len() < PENDING_OPS_MAX, "unbounded unit");
        self.pending.push(Op { db, argv });
    }

    /// A deletion no command asked for: an expired or evicted key (Redis's
    /// `propagateDeletion`). No-op while disabled.
    #[inline]
    pub(crate) fn deletion(&mut self, db: usize, key: &[u8], lazy: bool) {
        if self.enabled {
            let name: &[u8] = if lazy { b"UNLINK" } else { b"DEL" };
            self.push(db, vec![name.to_vec(), key.to_vec()]);
        }
    }

    /// Before a command runs: what deciding its propagation needs.
    /// `None` while disabled.
    #[inline(always)]
    pub(crate) fn before(
        &mut self,
        dirty: u64,
        db: usize,
        spec: &crate::cmd::CommandSpec,
        args: &[Vec<u8>],
    ) -> Option<Box<Capture>> {
        if !self.enabled {
            return None;
        }
        Some(self.capture(dirty, db, spec, args))
    }

    fn capture(
        &mut self,
        dirty_before: u64,
        db: usize,
        spec: &crate::cmd::CommandSpec,
        args: &[Vec<u8>],
    ) -> Box<Capture> {
        let args = spec.has(crate::cmd::flags::WRITE).then(|| args.to_vec());
        Box::new(Capture {
            dirty_before,
            db,
            args,
            outer: std::mem::take(&mut self.verdict),
        })
    }

    /// After a command ran: queues it verbatim if it changed the dataset
    /// and did not propagate itself (Redis's `call()`), and restores the
    /// enclosing command's verdict.
    pub(crate) fn after(&mut self, capture: Box<Capture>, dirty: u64) {
        let Capture {
            dirty_before,
            db,
            args,
            outer,
        } = *capture;
        let own = std::mem::replace(&mut self.verdict, outer);
        if !self.enabled {
            // Turned off by the command itself (CONFIG SET appendonly no).
            return;
        }
        if let (true, false, Some(args)) = (dirty > dirty_before, own.replaced, args) {
            self.push(db, args);
        }
    }

    /// The running command propagates `argv` (in database `db`) instead of
    /// itself; called once per command it propagates.
    pub(crate) fn replace_with(&mut self, db: usize, argv: Vec<Vec<u8>>) {
        self.verdict.replaced = true;
        self.push(db, argv);
    }

    /// The running command propagates nothing of itself.
    pub(crate) fn replace_with_nothing(&mut self) {
        self.verdict.replaced = true;
    }

    /// Ends the unit under way: writes its commands to the stream, wrapped
    /// in MULTI/EXEC per `wrap` when there are several (Redis's
    /// `propagatePendingCommands`).
    #[inline]
    pub(crate) fn flush(&mut self, wrap: Wrap) {
        if self.pending.is_empty() {
            return;
        }
        let pending = std::mem::take(&mut self.pending);
        let multi = wrap == Wrap::Multi && pending.len() > 1;
        if multi {
            self.feed(pending[0].db, &[b"MULTI"]);
        }
        for op in &pending {
            self.feed(op.db, &op.argv);
        }
        if multi {
            let last_db = pending[pending.len() - 1].db;
            self.feed(last_db, &[b"EXEC"]);
        }
        // Keep the allocation for the next unit.
        let mut pending = pending;
        pending.clear();
        self.pending = pending;
    }

    /// Writes one command (Redis's `feedAppendOnlyFile`): a SELECT first if
    /// the database changed, then the command as a RESP array of bulks.
    fn feed<A: AsRef<[u8]>>(&mut self, db: usize, argv: &[A]) {
        let start = self.buf.len();
        if self.selected_db != Some(db) {
            let db_text = db.to_string();
            encode_command(&mut self.buf, &[b"SELECT".as_slice(), db_text.as_bytes()]);
            self.selected_db = Some(db);
        }
        encode_command(&mut self.buf, argv);
        self.propagated_bytes += (self.buf.len() - start) as u64;
    }
}

/// Appends `argv` as a RESP array of bulk strings (Redis's
/// `catAppendOnlyGenericCommand`).
pub fn encode_command<A: AsRef<[u8]>>(out: &mut Vec<u8>, argv: &[A]) {
    use std::io::Write;
    let _ = write!(out, "*{}\r\n", argv.len());
    for arg in argv {
        let arg = arg.as_ref();
        let _ = write!(out, "${}\r\n", arg.len());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}

#[cfg(test)]
mod replay_tests;
#[cfg(test)]
mod tests;
