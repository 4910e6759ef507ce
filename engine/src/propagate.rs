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
//! | GETSET | `SET key value` |
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
//! | EVAL, EVALSHA (and `_RO`) | never themselves: each `redis.call` propagates as above, except while `redis.set_repl` has the AOF bit off (REPL_NONE, REPL_REPLICA: this stream is the AOF's) |
//! | EXEC | never itself: its commands, MULTI/EXEC-wrapped when more than one propagates |
//! | GEOADD | the `ZADD key [options] score member ...` it ran |
//! | PFCOUNT (read-only) | verbatim when it rewrote a stale cached cardinality (one key), else nothing |
//! | everything else that writes (SET without expiry, MSET, APPEND, INCR..., DEL, UNLINK, RENAME, RENAMENX, COPY, MOVE, SWAPDB, PERSIST, the list, hash, set and sorted-set writes, LMOVE, RPOPLPUSH, SMOVE, the *STORE commands, ZRANGESTORE, SORT ... STORE, PFADD, PFMERGE, PFDEBUG, GEORADIUS ... STORE, GEOSEARCHSTORE, LPOP/RPOP/ZPOPMIN/ZPOPMAX with their counts, SETRANGE, MSETNX, SETNX, ZINCRBY, SETBIT, BITOP, BITFIELD) | verbatim: each is deterministic given the dataset (SORT ... STORE sorts even under BY nosort); SETBIT and BITFIELD only when they grew the string or changed a bit (7.0.15) |
//!
//! Deletions that no command asked for propagate as `DEL key`, or `UNLINK
//! key` when the matching lazyfree option is on (Redis's
//! `propagateDeletion`): a key found expired on access
//! (`lazyfree-lazy-expire`), by the cron's active expiry (same option),
//! and a key evicted under `maxmemory` (`lazyfree-lazy-eviction`).
//!
//! Every lookup deletes an expired key this way (SCAN and RANDOMKEY too;
//! KEYS skips them without deleting, as Redis does). PUBLISH goes to
//! replicas only in Redis (not to the AOF) and is not propagated here.
//!
//! # Cost
//!
//! While [`Propagation::is_enabled`] is false a command pays a few
//! predictable branches (is it on; was anything captured; is the unit
//! empty): the pipeline benchmark's instructions per command do not move.
//! While on, a write's arguments are encoded once, before it runs, into a
//! reused buffer.
//!
//! [`Ctx::propagate`]: crate::cmd::Ctx::propagate

use crate::cmd::{flags, CommandSpec};
use crate::db::DATABASES_COUNT;

/// Encoded arguments kept for reuse: a capture takes one and gives it back
/// (so the steady state allocates nothing), up to this many.
const SPARE_BUFFERS_MAX: usize = 16;

/// One command of the unit under way: its database, and where its encoded
/// bytes end in `pending_bytes` (they start where the previous op's end).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Op {
    db: usize,
    end: usize,
}

/// What the running command said about its own propagation (see
/// [`Ctx::propagate`](crate::cmd::Ctx::propagate)); saved and restored
/// around a nested write (a script's `redis.call`, EXEC's queue).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Verdict {
    /// The handler propagated its effect itself (or chose nothing): the
    /// command is not propagated verbatim.
    replaced: bool,
}

/// What is taken before a write runs, to decide after it whether and how
/// it propagates. Only built while propagation is enabled.
pub(crate) struct Capture {
    dirty_before: u64,
    db: usize,
    /// The command as sent, already encoded (handlers may take their
    /// arguments apart).
    encoded: Vec<u8>,
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
    /// The commands of the unit under way (Redis's `also_propagate`), and
    /// their encoded bytes end to end.
    pending: Vec<Op>,
    pending_bytes: Vec<u8>,
    /// The verdict of the write running now.
    verdict: Verdict,
    /// The database of the last command written (`aof_selected_db`);
    /// `None` at start and after [`Propagation::reset_selected_db`].
    selected_db: Option<usize>,
    /// The stream not yet taken.
    buf: Vec<u8>,
    /// Bytes written to the stream since start.
    propagated_bytes: u64,
    spare: Vec<Vec<u8>>,
}

impl Propagation {
    /// Whether writes are propagated (off by default; the AOF code turns
    /// it on under `appendonly yes`).
    #[inline(always)]
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// Turns propagation on or off. Turning it off drops nothing already
    /// in the stream; a unit under way (there is none between inputs) is
    /// forgotten.
    pub fn set_enabled(&mut self, enabled: bool) {
        self.enabled = enabled;
        if !enabled {
            self.pending.clear();
            self.pending_bytes.clear();
            self.verdict = Verdict::default();
        }
    }

    /// Forgets the database last written, so that the next command is
    /// preceded by a `SELECT` (after an AOF rewrite or a restart, as
    /// Redis's `aof_selected_db = -1`).
    pub fn reset_selected_db(&mut self) {
        self.selected_db = None;
    }

    /// The database of the last command written, if any since the last
    /// reset (Redis's `slaveseldb`, -1 as `None`).
    pub fn selected_db(&self) -> Option<usize> {
        self.selected_db
    }

    /// Takes the stream written since the last take: complete units only,
    /// so the bytes end on a command boundary. The host
    /// drains after every input, which bounds the buffer by what one input
    /// wrote.
    #[must_use]
    pub fn take(&mut self) -> Vec<u8> {
        // A unit still open (a long script suspended between slices,
        // seed 23 of the torn-tail hunt) stays in `pending`: `buf` holds
        // only complete units, so taking it mid-unit is safe.
        std::mem::take(&mut self.buf)
    }

    /// Appends the stream written since the last take to `out`, leaving
    /// the internal buffer empty (its capacity kept).
    pub fn drain_into(&mut self, out: &mut Vec<u8>) {
        // As in `take`: an open unit stays in `pending`.
        out.extend_from_slice(&self.buf);
        self.buf.clear();
    }

    /// Whether the stream has bytes not yet taken.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The stream's bytes not yet taken.
    pub fn stream(&self) -> &[u8] {
        &self.buf
    }

    /// Bytes written to the stream since start (taken or not).
    pub fn propagated_bytes(&self) -> u64 {
        self.propagated_bytes
    }

    /// Queues `argv` in database `db` into the unit under way (Redis's
    /// `alsoPropagate`).
    fn push<A: AsRef<[u8]>>(&mut self, db: usize, argv: &[A]) {
        encode_command(&mut self.pending_bytes, argv);
        self.push_encoded(db);
    }

    /// Queues the command just encoded at the end of `pending_bytes`.
    fn push_encoded(&mut self, db: usize) {
        debug_assert!(self.enabled);
        // No bound of its own: a unit holds what one request did (one SREM
        // per member SPOP popped, one command per `redis.call`), and every
        // one of those was charged as work.
        debug_assert!(db < DATABASES_COUNT);
        let end = self.pending_bytes.len();
        debug_assert!(self.pending.last().map(|op| op.end) < Some(end));
        self.pending.push(Op { db, end });
    }

    /// A deletion no command asked for: an expired or evicted key (Redis's
    /// `propagateDeletion`). No-op while disabled.
    #[inline]
    pub(crate) fn deletion(&mut self, db: usize, key: &[u8], lazy: bool) {
        if self.enabled {
            let name: &[u8] = if lazy { b"UNLINK" } else { b"DEL" };
            self.push(db, &[name, key]);
        }
    }

    /// Before a write runs: what deciding its propagation needs. `None`
    /// while disabled, and for commands without the `write` flag (but
    /// PFCOUNT, see [`rewrites_on_read`]), which
    /// never propagate themselves (a script's or EXEC's writes propagate
    /// on their own).
    #[inline(always)]
    pub(crate) fn before(
        &mut self,
        dirty: u64,
        db: usize,
        spec: &CommandSpec,
        args: &[Vec<u8>],
    ) -> Option<Capture> {
        if !self.enabled || !(spec.has(flags::WRITE) || rewrites_on_read(spec)) {
            return None;
        }
        Some(self.capture(dirty, db, args))
    }

    fn capture(&mut self, dirty_before: u64, db: usize, args: &[Vec<u8>]) -> Capture {
        let mut encoded = self.spare.pop().unwrap_or_default();
        debug_assert!(encoded.is_empty());
        encode_command(&mut encoded, args);
        Capture {
            dirty_before,
            db,
            encoded,
            outer: std::mem::take(&mut self.verdict),
        }
    }

    /// After a write ran: queues it verbatim if it changed the dataset and
    /// did not propagate itself (Redis's `call()`), and restores the
    /// enclosing command's verdict.
    pub(crate) fn after(&mut self, capture: Capture, dirty: u64) {
        let Capture {
            dirty_before,
            db,
            mut encoded,
            outer,
        } = capture;
        let own = std::mem::replace(&mut self.verdict, outer);
        // Enabled still, unless the command itself turned it off.
        if self.enabled && dirty > dirty_before && !own.replaced {
            self.pending_bytes.extend_from_slice(&encoded);
            self.push_encoded(db);
        }
        if self.spare.len() < SPARE_BUFFERS_MAX {
            encoded.clear();
            self.spare.push(encoded);
        }
    }

    /// Where the unit under way ends now, for [`Propagation::discard_since`].
    pub(crate) fn unit_mark(&self) -> (usize, usize) {
        (self.pending.len(), self.pending_bytes.len())
    }

    /// Drops what the unit gained since `mark` (a script's call under
    /// `redis.set_repl(redis.REPL_NONE)`).
    pub(crate) fn discard_since(&mut self, (ops, bytes): (usize, usize)) {
        debug_assert!(ops <= self.pending.len() && bytes <= self.pending_bytes.len());
        self.pending.truncate(ops);
        self.pending_bytes.truncate(bytes);
    }

    /// The running write propagates `argv` (in database `db`) instead of
    /// itself; called once per command it propagates.
    pub(crate) fn replace_with<A: AsRef<[u8]>>(&mut self, db: usize, argv: &[A]) {
        self.verdict.replaced = true;
        self.push(db, argv);
    }

    /// The running write propagates nothing of itself.
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
        let start_len = self.buf.len();
        let multi = wrap == Wrap::Multi && self.pending.len() > 1;
        if multi {
            // MULTI takes the first command's database, so that its SELECT
            // comes first; EXEC the last's, so that it needs none.
            self.select(self.pending[0].db);
            self.buf.extend_from_slice(b"*1\r\n$5\r\nMULTI\r\n");
        }
        let mut start = 0;
        for i in 0..self.pending.len() {
            let op = self.pending[i];
            self.select(op.db);
            self.buf
                .extend_from_slice(&self.pending_bytes[start..op.end]);
            start = op.end;
        }
        debug_assert_eq!(start, self.pending_bytes.len());
        if multi {
            self.buf.extend_from_slice(b"*1\r\n$4\r\nEXEC\r\n");
        }
        self.pending.clear();
        self.pending_bytes.clear();
        self.propagated_bytes += (self.buf.len() - start_len) as u64;
    }

    /// A SELECT if the database differs from the last one written (Redis's
    /// `feedAppendOnlyFile`).
    fn select(&mut self, db: usize) {
        if self.selected_db != Some(db) {
            let mut digits = [0u8; 20];
            encode_command(
                &mut self.buf,
                &[b"SELECT".as_slice(), decimal(&mut digits, db as u64)],
            );
            self.selected_db = Some(db);
        }
    }
}

/// `n` in decimal, written into `buf`.
fn decimal(buf: &mut [u8; 20], mut n: u64) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[i..];
        }
    }
}

/// Appends `argv` as a RESP array of bulk strings (Redis's
/// `catAppendOnlyGenericCommand`).
pub fn encode_command<A: AsRef<[u8]>>(out: &mut Vec<u8>, argv: &[A]) {
    let mut digits = [0u8; 20];
    out.push(b'*');
    out.extend_from_slice(decimal(&mut digits, argv.len() as u64));
    out.extend_from_slice(b"\r\n");
    for arg in argv {
        let arg = arg.as_ref();
        out.push(b'$');
        out.extend_from_slice(decimal(&mut digits, arg.len() as u64));
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}

#[cfg(test)]
mod replay_tests;
#[cfg(test)]
mod tests;

/// PFCOUNT is read-only but rewrites its HLL's cached cardinality when
/// that was stale: the string changed, so Redis propagates the PFCOUNT.
fn rewrites_on_read(spec: &CommandSpec) -> bool {
    spec.name == "pfcount"
}
