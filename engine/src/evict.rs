//! `maxmemory`: eviction before commands, and the OOM error (Redis 7.0's
//! `performEvictions` and the maxmemory check of `processCommand`).
//!
//! Before every command, while `maxmemory` is set and used memory is over
//! it, keys are evicted per `maxmemory-policy` until the excess is freed.
//! When nothing can be evicted (`noeviction`, or a volatile policy with no
//! key carrying a TTL) the command still runs unless it may grow memory
//! (`denyoom`): those get `-OOM command not allowed when used memory >
//! 'maxmemory'.`. Inside MULTI every command but EXEC, DISCARD, QUIT and
//! RESET is refused then (queueing grows memory too), and EXEC is refused
//! when it queued a `denyoom` command, which aborts the transaction.
//!
//! "Used memory" is what INFO reports as `used_memory`: the host
//! allocator's count when the host measures it (the real server sets it
//! before each input), else the engine's own estimate. The estimate visits
//! every key, so it is cached until the next write (`dirty` changes). Each
//! eviction subtracts the evicted key's estimated size from whichever
//! figure is in use, as Redis adds up `zmalloc_used_memory()` deltas, so
//! that a pipeline evicts what it must without a fresh measurement.
//!
//! Candidates come from [`crate::evict_pool`] (LRU, LFU, volatile-ttl) or a
//! uniform draw with the seeded RNG (the random policies), one database
//! after the other as Redis's `next_db` does.

use std::collections::VecDeque;

use crate::client::{ClientId, Clients};
use crate::cmd::flags;
use crate::config::MaxmemoryPolicy;
use crate::event::{Event, Garbage, LAZYFREE_THRESHOLD_UNITS};
use crate::evict_pool::{volatile_only, EvictionPool};
use crate::lru::Access;
use crate::pipeline::{Found, Resolved};
use crate::resp::{Protocol, ReplyWriter};
use crate::server::Server;
use crate::stats::CommandName;
use crate::time::Now;

/// Redis's `shared.oomerr`, without the leading `-`.
pub const OOM_ERROR: &str = "OOM command not allowed when used memory > 'maxmemory'.";

/// Estimated bytes a key costs besides its value and key bytes: the dict
/// entry and its share of the table (the TTL dict's entry is counted on
/// its own when the key has one).
const KEY_OVERHEAD_BYTES: u64 = 64 + 8;
const EXPIRE_ENTRY_BYTES: u64 = 64 + 8;

/// Eviction passes before a command, each followed by a fresh estimate
/// (see [`perform_evictions`]); each pass evicts at least one key, and in
/// practice the first or second ends under the limit.
const EVICTION_PASSES_MAX: usize = 8;

/// Eviction state that survives between commands.
#[derive(Debug, Default)]
pub struct EvictState {
    pool: EvictionPool,
    /// The database the random policies draw from next.
    next_db: usize,
    /// INFO stats `evicted_keys`.
    pub evicted_keys: u64,
    /// The engine's memory estimate and the `dirty` count it was taken at.
    estimate: Option<(u64, u64)>,
    /// Since when (monotonic ns) used memory has been over `maxmemory`
    /// without eviction bringing it back under (INFO
    /// `current_eviction_exceeded_time`).
    exceeded_since_ns: Option<u64>,
    /// Time spent over the limit before `exceeded_since_ns`, in ns.
    exceeded_before_ns: u64,
}

impl EvictState {
    /// INFO `total_eviction_exceeded_time`, in ms.
    pub fn total_exceeded_ms(&self, now: Now) -> u64 {
        self.exceeded_before_ns / 1_000_000 + self.current_exceeded_ms(now)
    }

    /// INFO `current_eviction_exceeded_time`, in ms.
    pub fn current_exceeded_ms(&self, now: Now) -> u64 {
        self.exceeded_since_ns
            .map_or(0, |since| now.mono_ns.saturating_sub(since) / 1_000_000)
    }

    /// CONFIG RESETSTAT: `evicted_keys` and the time over the limit start
    /// again from zero (a stretch over the limit in progress counts from
    /// now).
    pub fn reset_stats(&mut self, now: Now) {
        self.evicted_keys = 0;
        self.exceeded_before_ns = 0;
        if self.exceeded_since_ns.is_some() {
            self.exceeded_since_ns = Some(now.mono_ns);
        }
    }

    fn exceeded(&mut self, now: Now) {
        self.exceeded_since_ns.get_or_insert(now.mono_ns);
    }

    fn under_limit(&mut self, now: Now) {
        if let Some(since) = self.exceeded_since_ns.take() {
            self.exceeded_before_ns += now.mono_ns.saturating_sub(since);
        }
    }
}

/// The engine's hook before a resolved request runs (or is queued by
/// MULTI): sets how its lookups stamp keys, evicts while over
/// `maxmemory`, and refuses it with OOM as Redis does (then `resolved`
/// becomes the rejection, with the error written to `reply`). Returns the
/// work the evictions did, charged to the request. Commands EXEC runs
/// (`in_exec`) were admitted with EXEC.
pub fn admit(
    (server, clients, events): (&mut Server, &mut Clients, &mut VecDeque<Event>),
    (now, client, in_exec): (Now, ClientId, Option<u64>),
    resolved: &mut Result<Resolved, Option<CommandName>>,
    reply: &mut Vec<u8>,
) -> u64 {
    let Ok((parent, spec)) = *resolved else {
        return 0;
    };
    let touch = !looks_without_touching(parent.unwrap_or(spec).name);
    let access = Access::at(now, &server.config, touch);
    server.keyspace.set_access(access);
    if in_exec.is_some() {
        return 0;
    }
    if server.config.maxmemory_bytes == 0 {
        server.evict.under_limit(now);
        return 0;
    }
    let (fits, work_units) = perform_evictions(server, clients, events, now);
    // Evictions are a unit of their own, before the command's, and never
    // wrapped (Redis's `propagate_no_multi`).
    server.propagation.flush(crate::propagate::Wrap::Bare);
    if fits {
        return work_units;
    }
    let Some(c) = clients.get(&client) else {
        return work_units;
    };
    let refuse = spec.has(flags::DENYOOM)
        || match c.tx.multi.as_ref() {
            None => false,
            Some(multi) => match parent.unwrap_or(spec).name {
                "exec" => multi.queue.iter().any(|q| queued_denyoom(server, &q.args)),
                "discard" | "quit" | "reset" => false,
                _ => true,
            },
        };
    if refuse {
        // RESP2 and RESP3 spell errors the same way.
        ReplyWriter::new(reply, Protocol::Resp2).error(OOM_ERROR);
        *resolved = Err(Some(CommandName::of(parent, spec)));
    }
    work_units
}

/// Redis 7.0 looks keys up with LOOKUP_NOTOUCH for these: asking about a
/// key does not make it recently used. RANDOMKEY only checks the expiry of
/// the key it draws (`dbRandomKey`), which does not touch it either.
fn looks_without_touching(name: &str) -> bool {
    // Every request asks: most names fail on their first byte, without a
    // string comparison.
    matches!(
        name.as_bytes().first(),
        Some(b't' | b'e' | b'p' | b'o' | b'm' | b'r')
    ) && matches!(
        name,
        "type"
            | "exists"
            | "ttl"
            | "pttl"
            | "expiretime"
            | "pexpiretime"
            | "object"
            | "memory"
            | "randomkey"
    )
}

/// Whether a queued request is a `denyoom` command (its container, or
/// the subcommand it names).
fn queued_denyoom(server: &Server, args: &[Vec<u8>]) -> bool {
    crate::pipeline::lookup(&server.commands, args).is_some_and(|found| {
        found.top().has(flags::DENYOOM)
            || matches!(found, Found::Runs((_, spec)) if spec.has(flags::DENYOOM))
    })
}

/// Used memory as eviction counts it (INFO `used_memory`; seedkv has no
/// replica or AOF buffers, Redis's `mem_not_counted_for_evict`).
pub fn used_memory_bytes(server: &mut Server, clients: &Clients) -> u64 {
    if let Some(bytes) = server.allocated_bytes {
        return bytes;
    }
    match server.evict.estimate {
        Some((dirty, bytes)) if dirty == server.dirty => bytes,
        _ => {
            let bytes = crate::commands::server::memory_report_of(server, clients).used_bytes;
            server.evict.estimate = Some((server.dirty, bytes));
            bytes
        }
    }
}

/// Evicts until used memory is at most `maxmemory`. Returns whether it
/// is (Redis's EVICT_OK) and the work done.
///
/// With the host's measurement, one pass frees the excess by estimated
/// sizes (the host measures again before the next input). With the
/// engine's own estimate, which can be taken again, a pass is followed by
/// a fresh estimate and another pass while still over: evicting a key
/// frees less than its estimated size while the dict's table keeps its
/// size.
pub fn perform_evictions(
    server: &mut Server,
    clients: &mut Clients,
    events: &mut VecDeque<Event>,
    now: Now,
) -> (bool, u64) {
    let mut work_units = 0u64;
    for _ in 0..EVICTION_PASSES_MAX {
        let used_bytes = used_memory_bytes(server, clients);
        let max_bytes = server.config.maxmemory_bytes;
        if used_bytes <= max_bytes {
            server.evict.under_limit(now);
            return (true, work_units);
        }
        server.evict.exceeded(now);
        let (freed_all, units) = evict_pass(server, clients, events, used_bytes - max_bytes);
        work_units += units;
        if !freed_all {
            return (false, work_units);
        }
        if server.allocated_bytes.is_some() {
            server.evict.under_limit(now);
            return (true, work_units);
        }
        server.evict.estimate = None;
    }
    // Still over after every pass: refuse for now; the next command
    // evicts again.
    (false, work_units)
}

/// Evicts keys per policy until their estimated sizes add up to
/// `to_free_bytes`. Returns whether they did (false: nothing left to
/// evict, or `noeviction`) and the work done.
fn evict_pass(
    server: &mut Server,
    clients: &mut Clients,
    events: &mut VecDeque<Event>,
    to_free_bytes: u64,
) -> (bool, u64) {
    let policy = server.config.maxmemory_policy;
    if policy == MaxmemoryPolicy::NoEviction {
        return (false, 0);
    }
    let mut freed_bytes = 0u64;
    let mut work_units = 0u64;
    // Each turn evicts a key or gives up, so there are at most as many
    // turns as keys.
    let keys_total: usize = server.keyspace.dbs.iter().map(|db| db.len()).sum();
    let mut turns = 0usize;
    let freed_all = loop {
        if freed_bytes >= to_free_bytes {
            break true;
        }
        assert!(turns <= keys_total, "eviction did not converge");
        turns += 1;
        let Some((db, key)) = pick_victim(server, policy) else {
            break false;
        };
        let (bytes, units) = evict_key(server, clients, events, db, &key);
        freed_bytes += bytes;
        work_units += units;
    };
    forget_freed(server, freed_bytes);
    (freed_all, work_units)
}

/// Lowers the memory figure in use by what evictions freed, until the
/// host measures again (or the next write re-estimates).
fn forget_freed(server: &mut Server, freed_bytes: u64) {
    if let Some(bytes) = server.allocated_bytes.as_mut() {
        *bytes = bytes.saturating_sub(freed_bytes);
    }
    if let Some((_, bytes)) = server.evict.estimate.as_mut() {
        *bytes = bytes.saturating_sub(freed_bytes);
    }
}

/// The next key to evict under `policy`, if any key qualifies.
fn pick_victim(server: &mut Server, policy: MaxmemoryPolicy) -> Option<(usize, Box<[u8]>)> {
    let volatile = volatile_only(policy);
    let dbs_count = server.keyspace.dbs.len();
    if matches!(
        policy,
        MaxmemoryPolicy::AllkeysRandom | MaxmemoryPolicy::VolatileRandom
    ) {
        for _ in 0..dbs_count {
            server.evict.next_db = (server.evict.next_db + 1) % dbs_count;
            let db = &server.keyspace.dbs[server.evict.next_db];
            let dict_key = if volatile {
                db.expires.random_key(&mut server.rng)
            } else {
                db.keys.random_key(&mut server.rng)
            };
            if let Some(key) = dict_key {
                return Some((server.evict.next_db, key.into()));
            }
        }
        return None;
    }
    let samples = server.config.maxmemory_samples.max(1);
    // Each round either finds a live candidate or empties the pool of
    // stale ones after refilling it; a round that samples no key ends it.
    loop {
        let mut sampled_any = false;
        for (i, db) in server.keyspace.dbs.iter().enumerate() {
            let dict_len = if volatile { db.expires.len() } else { db.len() };
            if dict_len > 0 {
                sampled_any = true;
                server
                    .evict
                    .pool
                    .populate(i, db, policy, samples, &mut server.rng);
            }
        }
        if !sampled_any {
            return None;
        }
        while let Some((db, key)) = server.evict.pool.pop_best() {
            let d = &server.keyspace.dbs[db];
            let live = if volatile {
                d.get_expire(&key).is_some()
            } else {
                d.contains(&key)
            };
            if live {
                return Some((db, key));
            }
        }
    }
}

/// Evicts one key: removed, counted, its watchers' transactions failed,
/// its value freed in the background under `lazyfree-lazy-eviction` when
/// big. Returns the estimated bytes freed and the work done.
fn evict_key(
    server: &mut Server,
    clients: &mut Clients,
    events: &mut VecDeque<Event>,
    db: usize,
    key: &[u8],
) -> (u64, u64) {
    let d = &mut server.keyspace.dbs[db];
    let had_ttl = d.get_expire(key).is_some();
    let Some(value) = d.remove(key) else {
        debug_assert!(false, "the victim exists");
        return (0, 0);
    };
    let freed_bytes = key.len() as u64
        + value.size_bytes() as u64
        + KEY_OVERHEAD_BYTES
        + if had_ttl { EXPIRE_ENTRY_BYTES } else { 0 };
    server.evict.evicted_keys += 1;
    let lazy = server.config.lazyfree_lazy_eviction;
    server.propagation.deletion(db, key, lazy);
    crate::multi::touch_key(&server.watches, clients, db, key);
    let notify_units = crate::notify::removed_outside(
        server,
        clients,
        events,
        (db, key),
        crate::event::RemovalCause::Evicted,
    );
    let tracked_units = crate::tracking::invalidate_key(&mut server.tracking, clients, key, true);
    let cost_units = value.free_cost_units();
    let work_units =
        if server.config.lazyfree_lazy_eviction && cost_units > LAZYFREE_THRESHOLD_UNITS {
            events.push_back(Event::Free(Garbage::Value(value)));
            1
        } else {
            drop(value);
            cost_units
        };
    (freed_bytes, work_units + notify_units + tracked_units)
}
