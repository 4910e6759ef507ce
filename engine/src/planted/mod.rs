//! Planted bugs: deliberate defects the simulator must find, selected at run
//! time through [`crate::Config::planted_bug`] so that one build runs the
//! clean engine and each planted one side by side. (A cargo feature would
//! leak into every crate of a workspace build.)
//!
//! # One hook, a few seams
//!
//! The engine owns one `Hook` (crate-private, in `Server::planted`), empty
//! on a clean engine. The shipped code consults it only at the named seams
//! below, each a one-line call that does nothing when the hook is empty;
//! every defect lives in this directory. No data structure (`Db`,
//! `Client`, `Dict`) holds planted state, no public function takes a
//! planted parameter, and the per-key lookup path has no branch for it.
//!
//! | seam | called from | bugs |
//! |---|---|---|
//! | the command table is built | `Engine::with_commands` | incr-not-atomic, lindex-panics, lrem-quadratic (buggy handlers, `commands.rs`) |
//! | a reply is written | `Engine::execute_request` | reply-to-wrong-connection, partial-write-drops-reply (`replies.rs`) |
//! | output is written out, compacted | `Engine::consume_output` | partial-write-drops-reply |
//! | an input begins (its held work runs at its end), a timer fires | `Engine::handle_input`, `handle_timeout` | incr-not-atomic, exec-interleaved (`held.rs`) |
//! | EXEC runs its queue | `Engine::run_exec` | exec-interleaved |
//! | the expiry clock | `Ctx::expiry_now_ms`, the cron | expiry-off-by-one-ms |
//! | EXEC checks its watched keys | EXEC | watch-ignores-expiry |
//! | a value is lazily freed | `Ctx::delete` | lazy-free-still-reachable (`held.rs`) |
//! | a cron tick | the cron | lazy-free-still-reachable, incr-not-atomic |
//! | SCAN visits a bucket | SCAN | scan-skips-rehash-buckets |
//! | PUBLISH delivers | `publish_message` | publish-twice |
//! | a key expires or is evicted | `notify::expired_on_access`, `notify::removed_outside` | missed-expired-event |
//! | a script writes, a script starts | `redis.call`, EVAL | script-partial-visible (`scripts.rs`) |
//! | `appendfsync always` fsyncs an append | the AOF write path | ack-before-fsync |
//! | an AOF rewrite ends | `rewrite_exited` | rewrite-drops-writes |
//! | the AOF loader meets a torn tail | AOF loading | torn-tail-loaded-as-data (`persist.rs`) |
//! | XCLAIM moves a pending entry | XCLAIM | xclaim-leaves-both-pels (`streams.rs`) |
//! | blocked clients are served on a key | `Pipeline::serve_key` | xreadgroup-woken-by-other-stream (`streams.rs`) |
//! | the ACL check finds a command's keys | `permit::check_client` | acl-mset-first-key (`acl.rs`) |
//! | a script's `redis.call` is checked | `redis.call` | acl-script-bypass (`acl.rs`) |
//! | a partial resync serves the backlog | PSYNC | psync-skips-boundary-command (`repl.rs`) |
//! | WAIT counts acks | WAIT, a replica's ack | wait-counts-unacked (`repl.rs`) |
//! | a snapshot read produces a slice | `Engine::snapshot_turn` | snapshot-skips-saved |
//! | a replica meets an expired key | the cron, `Ctx::replica_keeps_expired` | replica-self-expiry (`repl.rs`) |
//! | FAILOVER waits for its target | `failover::update` | failover-skips-wait-for-sync (`repl.rs`) |
//!
//! The expiry clock is the one seam on the lookup path: it subtracts a lag
//! (0 on a clean engine) from the command's clock, without a branch. The
//! other seams run once per command, reply, write to the socket, input,
//! SCAN call, PUBLISH or cron tick, and test one pointer.

use std::collections::BTreeMap;

use crate::client::{ClientId, Clients};
use crate::cmd::{CommandTable, Ctx};
use crate::dict::Dict;
use crate::multi::Queued;
use crate::server::Server;
use crate::time::Now;
use crate::value::Value;

mod acl;
mod commands;
mod held;
mod persist;
mod repl;
mod replies;
mod scripts;
mod streams;
#[cfg(test)]
mod tests;
mod tracking;

pub(crate) use held::Held;
pub(crate) use streams::{waiters, xclaim_transfer};

/// A deliberate defect, for proving the simulator's checkers work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PlantedBug {
    /// SCAN forgets to visit the larger table's expansions during rehash.
    ScanSkipsRehashBuckets,
    /// Output consumed in part loses the rest of a pipelined reply.
    PartialWriteDropsReply,
    /// INCR reads, then writes back in a later step, losing concurrent updates.
    IncrNotAtomic,
    /// Keys are treated as expired one millisecond late: commands and the
    /// cron judge expiry by a clock 1 ms behind theirs.
    ExpiryOffByOneMs,
    /// A value handed to the background free stays reachable: UNLINK (and
    /// any lazy delete) of a big value leaves it in place, without its
    /// TTL, until the next cron tick drops it.
    LazyFreeStillReachable,
    /// Every 997th reply is appended to another connection's output.
    ReplyToWrongConnection,
    /// EXEC runs the first queued command, then defers the rest to the end
    /// of the next input the engine handles: another client's commands run
    /// in between, and the transaction is no longer atomic.
    ExecInterleaved,
    /// WATCH does not notice that a watched key expired before EXEC (Redis
    /// 7.0 fails such an EXEC): an optimistic transaction commits on a
    /// value that is gone.
    WatchIgnoresExpiry,
    /// A script's writes after its first are put off until the next script
    /// starts: other clients see the script's first write alone.
    ScriptPartialVisible,
    /// Every 50th PUBLISH delivers its message twice to its first channel
    /// subscriber.
    PublishTwice,
    /// LINDEX with a negative index past the head of the list indexes out
    /// of bounds and panics, as a C engine would read out of bounds: the
    /// simulator must report the panic as a failure of that seed (with its
    /// repro line) and go on with the rest of the sweep.
    LindexPanics,
    /// LREM charges the square of the elements it visited: an O(N)
    /// command whose work grows quadratically (the no-freeze invariant's
    /// target; a real quadratic loop would be charged the same).
    LremQuadratic,
    /// Under `appendfsync always` the fsync after an append runs in the
    /// background: replies leave before their write is durable, and a
    /// crash loses acknowledged writes.
    AckBeforeFsync,
    /// An AOF rewrite that ends opens a fresh incr file and marks the one
    /// written during the rewrite as history (it is deleted): what was
    /// written while the child ran is gone after a restart.
    RewriteDropsWrites,
    /// Loading an AOF whose last command is torn, the loader runs what it
    /// could read of it (its last argument cut short) before cutting the
    /// tail: a value nobody wrote appears after a crash.
    TornTailLoadedAsData,
    /// XCLAIM adds the entry to the claimer's PEL without removing it from
    /// its old owner's: the entry is pending for two consumers.
    XclaimLeavesBothPels,
    /// An XADD to a stream wakes the XREADGROUP readers blocked on the
    /// database's other streams too, and serves them from the stream it
    /// wrote.
    XreadgroupWokenByOtherStream,
    /// A SET of a tracked key sends its invalidations at once but lands
    /// only at its client's next input: a client that re-reads the key on
    /// the invalidation caches the old value, and nothing invalidates it.
    InvalidateBeforeWrite,
    /// Every 4th key the active-expire cron deletes raises no `expired`
    /// keyspace notification: subscribers never learn that it expired.
    MissedExpiredEvent,
    /// The ACL check of a multi-key command (MSET, MGET, DEL...) looks at
    /// its first key only: the others are written or read whatever the
    /// user's key patterns say.
    AclMsetFirstKey,
    /// A script's `redis.call` skips the ACL check: a user runs, through
    /// EVAL, commands and keys its permissions refuse.
    AclScriptBypass,
    /// A partial resync (`+CONTINUE`) leaves out the command at the
    /// backlog boundary, the first one the replica is missing.
    PsyncSkipsBoundaryCommand,
    /// WAIT counts a replica that has acknowledged some offset, not
    /// necessarily the one the client's writes reached.
    WaitCountsUnacked,
    /// A replica deletes expired keys by itself (in its cron and on
    /// access) instead of leaving expiry to its primary's DEL.
    ReplicaSelfExpiry,
    /// FAILOVER hands the primary role to a replica that acknowledged
    /// anything at all, without waiting for its ack to reach the
    /// primary's offset: the writes the target had not received are lost.
    FailoverSkipsWaitForSync,
    /// A snapshot read (KEYS, SMEMBERS, HGETALL... produced in slices)
    /// drops its side list: the entries writers removed or changed before
    /// the read got to them are missing from the reply.
    SnapshotSkipsSaved,
}

impl PlantedBug {
    pub const ALL: &'static [PlantedBug] = &[
        PlantedBug::ScanSkipsRehashBuckets,
        PlantedBug::PartialWriteDropsReply,
        PlantedBug::IncrNotAtomic,
        PlantedBug::ExpiryOffByOneMs,
        PlantedBug::LazyFreeStillReachable,
        PlantedBug::ReplyToWrongConnection,
        PlantedBug::ExecInterleaved,
        PlantedBug::WatchIgnoresExpiry,
        PlantedBug::ScriptPartialVisible,
        PlantedBug::PublishTwice,
        PlantedBug::LindexPanics,
        PlantedBug::LremQuadratic,
        PlantedBug::AckBeforeFsync,
        PlantedBug::RewriteDropsWrites,
        PlantedBug::TornTailLoadedAsData,
        PlantedBug::XclaimLeavesBothPels,
        PlantedBug::XreadgroupWokenByOtherStream,
        PlantedBug::InvalidateBeforeWrite,
        PlantedBug::MissedExpiredEvent,
        PlantedBug::AclMsetFirstKey,
        PlantedBug::AclScriptBypass,
        PlantedBug::PsyncSkipsBoundaryCommand,
        PlantedBug::WaitCountsUnacked,
        PlantedBug::ReplicaSelfExpiry,
        PlantedBug::SnapshotSkipsSaved,
        PlantedBug::FailoverSkipsWaitForSync,
    ];

    /// The name used on the command line (`--bug scan-skips-rehash-buckets`).
    pub fn name(self) -> &'static str {
        match self {
            PlantedBug::ScanSkipsRehashBuckets => "scan-skips-rehash-buckets",
            PlantedBug::PartialWriteDropsReply => "partial-write-drops-reply",
            PlantedBug::IncrNotAtomic => "incr-not-atomic",
            PlantedBug::ExpiryOffByOneMs => "expiry-off-by-one-ms",
            PlantedBug::LazyFreeStillReachable => "lazy-free-still-reachable",
            PlantedBug::ReplyToWrongConnection => "reply-to-wrong-connection",
            PlantedBug::ExecInterleaved => "exec-interleaved",
            PlantedBug::WatchIgnoresExpiry => "watch-ignores-expiry",
            PlantedBug::ScriptPartialVisible => "script-partial-visible",
            PlantedBug::PublishTwice => "publish-twice",
            PlantedBug::LindexPanics => "lindex-panics",
            PlantedBug::LremQuadratic => "lrem-quadratic",
            PlantedBug::AckBeforeFsync => "ack-before-fsync",
            PlantedBug::RewriteDropsWrites => "rewrite-drops-writes",
            PlantedBug::TornTailLoadedAsData => "torn-tail-loaded-as-data",
            PlantedBug::XclaimLeavesBothPels => "xclaim-leaves-both-pels",
            PlantedBug::XreadgroupWokenByOtherStream => "xreadgroup-woken-by-other-stream",
            PlantedBug::InvalidateBeforeWrite => "invalidate-before-write",
            PlantedBug::MissedExpiredEvent => "missed-expired-event",
            PlantedBug::AclMsetFirstKey => "acl-mset-first-key",
            PlantedBug::AclScriptBypass => "acl-script-bypass",
            PlantedBug::PsyncSkipsBoundaryCommand => "psync-skips-boundary-command",
            PlantedBug::WaitCountsUnacked => "wait-counts-unacked",
            PlantedBug::ReplicaSelfExpiry => "replica-self-expiry",
            PlantedBug::SnapshotSkipsSaved => "snapshot-skips-saved",
            PlantedBug::FailoverSkipsWaitForSync => "failover-skips-wait-for-sync",
        }
    }

    pub fn from_name(name: &str) -> Option<PlantedBug> {
        PlantedBug::ALL.iter().copied().find(|b| b.name() == name)
    }
}

/// Every Nth reply goes to another connection under
/// [`PlantedBug::ReplyToWrongConnection`].
pub(crate) const MISROUTED_REPLY_EVERY: u64 = 997;

/// Under [`PlantedBug::PublishTwice`], every this-many PUBLISH delivers
/// twice to one subscriber.
pub(crate) const PUBLISH_TWICE_EVERY: u64 = 50;

/// Under [`PlantedBug::MissedExpiredEvent`], every this-many keys the
/// active-expire cron deletes go without their `expired` event.
pub(crate) const MISSED_EXPIRED_EVENT_EVERY: u64 = 4;

/// The engine's one hook for planted bugs: empty on a clean engine, where
/// every seam is one predictable branch (none on the lookup path).
#[derive(Debug, Default)]
pub(crate) struct Hook {
    planted: Option<Box<Planted>>,
    /// Milliseconds the expiry clock runs behind the command's clock: 1
    /// under [`PlantedBug::ExpiryOffByOneMs`], else 0. Outside the box so
    /// that the lookup path reads it without a branch.
    expiry_lag_ms: u64,
}

/// The planted bug and the state only it uses.
#[derive(Debug)]
struct Planted {
    bug: PlantedBug,
    /// [`PlantedBug::PartialWriteDropsReply`]: where each client's last
    /// reply began in its output buffer (0 for clients not yet seen).
    last_reply_start: BTreeMap<ClientId, usize>,
    /// [`PlantedBug::ReplyToWrongConnection`]: replies since the last
    /// misrouted one.
    replies_count: u64,
    /// [`PlantedBug::IncrNotAtomic`], [`PlantedBug::ExecInterleaved`]: work
    /// held back until the end of the next input.
    held: Held,
    /// [`PlantedBug::LazyFreeStillReachable`]: values handed to the
    /// background free but left in place, as `(db, key, copy)`, until the
    /// next cron tick.
    ghosts: Vec<(usize, Box<[u8]>, Value)>,
    /// [`PlantedBug::PublishTwice`]: PUBLISH commands counted.
    publishes_count: u64,
    /// [`PlantedBug::ScriptPartialVisible`]: writes put off until the next
    /// script starts.
    script_writes: Vec<scripts::DeferredWrite>,
    /// [`PlantedBug::InvalidateBeforeWrite`]: SETs held until their
    /// client's next input.
    tracked_stores: Vec<tracking::HeldStore>,
    /// [`PlantedBug::MissedExpiredEvent`]: keys the cron expired.
    cron_expired_count: u64,
}

impl Hook {
    /// The hook for `bug`: empty for `None`.
    pub(crate) fn new(bug: Option<PlantedBug>) -> Hook {
        Hook {
            expiry_lag_ms: u64::from(bug == Some(PlantedBug::ExpiryOffByOneMs)),
            planted: bug.map(|bug| {
                Box::new(Planted {
                    bug,
                    last_reply_start: BTreeMap::new(),
                    replies_count: 0,
                    held: Held::default(),
                    ghosts: Vec::new(),
                    publishes_count: 0,
                    script_writes: Vec::new(),
                    tracked_stores: Vec::new(),
                    cron_expired_count: 0,
                })
            }),
        }
    }

    fn planted(&mut self, bug: PlantedBug) -> Option<&mut Planted> {
        self.planted.as_deref_mut().filter(|p| p.bug == bug)
    }

    fn is(&self, bug: PlantedBug) -> bool {
        self.planted.as_ref().is_some_and(|p| p.bug == bug)
    }

    /// Seam "the command table is built": a planted engine may swap in a
    /// buggy handler.
    pub(crate) fn command_table(&self, table: &mut CommandTable) {
        if let Some(p) = &self.planted {
            commands::patch(p.bug, table);
        }
    }

    /// Seam "the expiry clock": the time (unix ms) lazy and active expiry
    /// judge keys by, for a command or cron tick running at `now`.
    #[inline]
    pub(crate) fn expiry_clock_ms(&self, now: Now) -> u64 {
        // Planted bug (PlantedBug::ExpiryOffByOneMs): a clock 1 ms behind
        // keeps a key alive through the millisecond it expires at.
        now.unix_ms().saturating_sub(self.expiry_lag_ms)
    }

    /// Seam "a snapshot read produces a slice": whether it drops the side
    /// list of entries writers saved.
    pub(crate) fn snapshot_skips_saved(&self) -> bool {
        // Planted bug (PlantedBug::SnapshotSkipsSaved).
        self.is(PlantedBug::SnapshotSkipsSaved)
    }

    /// Seam "EXEC checks its watched keys": the clock (unix ms) EXEC judges
    /// whether a watched key expired by.
    pub(crate) fn watch_clock_ms(&self, now_ms: u64) -> u64 {
        // Planted bug (PlantedBug::WatchIgnoresExpiry): on a clock stopped
        // at 0 no watched key has expired, so an EXEC commits on a value
        // that is gone unless someone also wrote it.
        if self.is(PlantedBug::WatchIgnoresExpiry) {
            0
        } else {
            now_ms
        }
    }

    /// Seam "a reply is written": `reply[reply_start..]` is the reply
    /// `client`'s command just produced (not one run by EXEC).
    #[inline]
    pub(crate) fn reply_written(
        &mut self,
        (clients, transmit): (&mut Clients, &mut std::collections::VecDeque<ClientId>),
        client: ClientId,
        reply: &mut Vec<u8>,
        reply_start: usize,
    ) {
        if let Some(p) = &mut self.planted {
            p.reply_written((clients, transmit), client, reply, reply_start);
        }
    }

    /// Seam "output is written out": the host wrote `client`'s `output` up
    /// to `sent`.
    #[inline]
    pub(crate) fn output_written(&self, client: ClientId, output: &mut Vec<u8>, sent: usize) {
        if let Some(p) = &self.planted {
            p.output_written(client, output, sent);
        }
    }

    /// Seam "output is compacted": the first `drained` bytes of `client`'s
    /// output were written and dropped.
    #[inline]
    pub(crate) fn output_compacted(&mut self, client: ClientId, drained: usize) {
        if let Some(p) = &mut self.planted {
            p.output_compacted(client, drained);
        }
    }

    /// Seam "EXEC runs its queue": `queue` is what the EXEC of request
    /// `exec_seq` is about to run.
    pub(crate) fn exec_queue(&mut self, client: ClientId, exec_seq: u64, queue: &mut Vec<Queued>) {
        // Planted bug (PlantedBug::ExecInterleaved): EXEC runs only the
        // first of its queued commands now; the rest is held back and runs
        // at the end of the next input the engine handles, after whatever
        // that input executed, so the transaction is no longer atomic.
        if let Some(p) = self.planted(PlantedBug::ExecInterleaved) {
            if queue.len() >= 2 {
                let tail = queue.split_off(1);
                p.held.exec_tails.push((client, exec_seq, tail));
            }
        }
    }

    /// Seam "an input begins": the work held back so far, for the engine
    /// to run once this input's commands ran ([`run_held_writes`], then
    /// [`Held::take_exec_tails`]).
    #[inline]
    pub(crate) fn input_begins(&mut self) -> Held {
        match &mut self.planted {
            None => Held::default(),
            Some(p) => std::mem::take(&mut p.held),
        }
    }

    /// Seam "a timer fires": the held-back EXEC tails, to run now.
    #[inline]
    pub(crate) fn timer_fires(&mut self) -> Held {
        match &mut self.planted {
            None => Held::default(),
            Some(p) => Held {
                exec_tails: std::mem::take(&mut p.held.exec_tails),
                ..Held::default()
            },
        }
    }

    /// Seam "SCAN visits a bucket": one SCAN call over `dict` from
    /// `cursor`; returns the next cursor, as [`Dict::scan`].
    #[inline]
    pub(crate) fn scan<V>(&self, dict: &Dict<V>, cursor: u64, visit: impl FnMut(&[u8], &V)) -> u64 {
        if !self.is(PlantedBug::ScanSkipsRehashBuckets) {
            return dict.scan(cursor, visit);
        }
        // Planted bug (PlantedBug::ScanSkipsRehashBuckets): only the first
        // expansion of the small bucket is visited in the large table, yet
        // the cursor still steps over all of them, so keys that the rehash
        // already moved into the other expansions are never returned.
        let mut visit = visit;
        dict.scan_buckets(cursor, |bucket| {
            if bucket.expansion.is_none_or(|i| i == 0) {
                dict.visit_bucket(bucket, &mut visit);
            }
        })
    }

    /// Seam "an AOF rewrite ends": whether the writes go on in a fresh
    /// incr file (only when the AOF is being turned on, on a clean engine).
    pub(crate) fn rewrite_starts_fresh_incr(&self, turning_on: bool) -> bool {
        // Planted bug (PlantedBug::RewriteDropsWrites): always, so the incr
        // file written during the rewrite becomes history with the rest.
        turning_on || self.is(PlantedBug::RewriteDropsWrites)
    }

    /// Seam "the AOF loader meets a torn tail": the command to run from
    /// the torn bytes at `pos` (none on a clean engine).
    pub(crate) fn torn_tail_command(&self, bytes: &[u8], pos: usize) -> Option<Vec<Vec<u8>>> {
        match self.is(PlantedBug::TornTailLoadedAsData) {
            true => persist::torn_command(bytes, pos),
            false => None,
        }
    }

    /// Seam "a key expires or is evicted": whether its keyspace
    /// notification is raised (always, on a clean engine).
    #[inline]
    pub(crate) fn expired_notified(&mut self, cause: crate::event::RemovalCause) -> bool {
        // Planted bug (PlantedBug::MissedExpiredEvent): every Nth key the
        // cron expires goes without its `expired` event.
        let Some(p) = self.planted(PlantedBug::MissedExpiredEvent) else {
            return true;
        };
        if cause != crate::event::RemovalCause::ExpiredInCron {
            return true;
        }
        p.cron_expired_count += 1;
        !p.cron_expired_count
            .is_multiple_of(MISSED_EXPIRED_EVENT_EVERY)
    }

    /// Seam "PUBLISH delivers": how many copies of the message PUBLISH
    /// sends its first channel subscriber (1 on a clean engine).
    #[inline]
    pub(crate) fn publish_copies(&mut self) -> usize {
        // Planted bug (PlantedBug::PublishTwice): every Nth PUBLISH
        // delivers its message twice to its first channel subscriber.
        let Some(p) = self.planted(PlantedBug::PublishTwice) else {
            return 1;
        };
        p.publishes_count += 1;
        if p.publishes_count.is_multiple_of(PUBLISH_TWICE_EVERY) {
            2
        } else {
            1
        }
    }
}

/// Seam "`appendfsync always` fsyncs an append": whether the planted
/// engine took the fsync over (the clean engine issues it inline, and the
/// replies wait for it).
#[inline]
pub(crate) fn acks_before_fsync(
    server: &mut Server,
    events: &mut std::collections::VecDeque<crate::event::Event>,
) -> bool {
    if !server.planted.is(PlantedBug::AckBeforeFsync) {
        return false;
    }
    // Planted bug (PlantedBug::AckBeforeFsync): the fsync runs in the
    // background, one at a time as everysec's do, and the replies leave
    // before the data is durable.
    if !server.persist.aof.fsync_in_flight {
        crate::persist::aof::background_fsync(server, events);
    }
    true
}

/// Seam "a value is lazily freed": `value` was removed from `key` of
/// database `db` and is being handed to the background free.
#[inline]
pub(crate) fn lazily_freed(server: &mut Server, db: usize, key: &[u8], value: &Value) {
    if server.planted.planted.is_some() {
        held::lazily_freed(server, db, key, value);
    }
}

/// Seam "a cron tick": the work held back for the end of the tick.
#[inline]
pub(crate) fn cron_tick(server: &mut Server) -> Held {
    match server.planted.planted.is_some() {
        false => Held::default(),
        true => held::cron_tick(server),
    }
}

/// Applies the writes of `held` (the start of running it; the engine runs
/// its EXEC tails next).
#[inline]
pub(crate) fn run_held_writes(server: &mut Server, held: &mut Held) {
    if !held.incr_writes.is_empty() {
        held::run_incr_writes(server, std::mem::take(&mut held.incr_writes));
    }
}

/// Seam "a script writes": whether `redis.call` puts off this write
/// command of a script that `wrote` already (then it calls
/// [`defer_script_write`]).
#[inline]
pub(crate) fn defers_script_write(ctx: &Ctx, wrote: bool) -> bool {
    wrote && ctx.server.planted.is(PlantedBug::ScriptPartialVisible)
}

pub(crate) use scripts::{defer_script_write, script_starts};
pub(crate) use tracking::{client_input_begins, tracked_store};

/// `<prefix><digits>\r\n` at `at`: the number and the offset after it
/// (the RESP headers the planted bugs of persist and repl read).
fn number_line(bytes: &[u8], prefix: u8, at: usize) -> Option<(usize, usize)> {
    if bytes.get(at) != Some(&prefix) {
        return None;
    }
    let line = bytes.get(at + 1..)?;
    let digits = line.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 9 || line.get(digits..digits + 2) != Some(b"\r\n") {
        return None;
    }
    let n = std::str::from_utf8(&line[..digits]).ok()?.parse().ok()?;
    Some((n, at + 1 + digits + 2))
}
