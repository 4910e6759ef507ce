//! The command table and the execution context handed to every command.
//!
//! Each command family lives in its own file under `commands/` and exports a
//! `COMMANDS: &[CommandSpec]` slice; [`CommandTable`] gathers them. A
//! handler gets a [`Ctx`] (the server state, the client table, the calling
//! client, the reply buffer, `now`, and a work counter) and the request's
//! arguments, already checked against the spec's arity.

use std::collections::{BTreeMap, VecDeque};

use crate::client::{ClientId, Clients};
use crate::event::Event;
use crate::resp::{Protocol, ReplyWriter};
use crate::server::Server;
use crate::time::Now;
use crate::value::Value;

mod read;
pub use read::Lookup;

/// Bytes of reply that count as one unit of work.
pub const REPLY_BYTES_PER_WORK_UNIT: u64 = 64;

/// A handler. `args[0]` is the command name as sent.
pub type Handler = fn(&mut Ctx, &mut [Vec<u8>]);

/// Command flags, as `COMMAND INFO` names them.
pub mod flags {
    pub const WRITE: u32 = 1 << 0;
    pub const READONLY: u32 = 1 << 1;
    pub const DENYOOM: u32 = 1 << 2;
    pub const ADMIN: u32 = 1 << 3;
    pub const PUBSUB: u32 = 1 << 4;
    pub const NOSCRIPT: u32 = 1 << 5;
    pub const BLOCKING: u32 = 1 << 6;
    pub const LOADING: u32 = 1 << 7;
    pub const STALE: u32 = 1 << 8;
    pub const SKIP_MONITOR: u32 = 1 << 9;
    pub const SKIP_SLOWLOG: u32 = 1 << 10;
    pub const FAST: u32 = 1 << 11;
    pub const NO_AUTH: u32 = 1 << 12;
    pub const MAY_REPLICATE: u32 = 1 << 13;
    pub const SENTINEL: u32 = 1 << 14;
    pub const NO_MULTI: u32 = 1 << 15;
    pub const ALLOW_BUSY: u32 = 1 << 16;
    /// Not a Redis flag: the command's work grows with the data (KEYS,
    /// FLUSHALL, DEL of a big value...). The simulator's tail-latency checker
    /// uses it to tell expected stalls from bugs.
    pub const O_N: u32 = 1 << 31;

    /// Flag names in Redis's order, for COMMAND INFO.
    pub const NAMES: &[(u32, &str)] = &[
        (WRITE, "write"),
        (READONLY, "readonly"),
        (DENYOOM, "denyoom"),
        (ADMIN, "admin"),
        (PUBSUB, "pubsub"),
        (NOSCRIPT, "noscript"),
        (BLOCKING, "blocking"),
        (LOADING, "loading"),
        (STALE, "stale"),
        (SKIP_MONITOR, "skip_monitor"),
        (SKIP_SLOWLOG, "skip_slowlog"),
        (FAST, "fast"),
        (NO_AUTH, "no_auth"),
        (MAY_REPLICATE, "may_replicate"),
        (SENTINEL, "sentinel"),
        (NO_MULTI, "no_multi"),
        (ALLOW_BUSY, "allow_busy"),
    ];
}

/// One entry of the command table.
#[derive(Debug)]
pub struct CommandSpec {
    /// Lowercase name (`get`, or `kill` for a subcommand of `client`).
    pub name: &'static str,
    /// Redis arity: N means exactly N arguments including the name; -N means
    /// at least N.
    pub arity: i32,
    pub flags: u32,
    /// Key positions (first, last, step); last < 0 counts from the end.
    pub first_key: i32,
    pub last_key: i32,
    pub key_step: i32,
    /// ACL categories without the `@` (e.g. `["string", "fast"]`), and the
    /// COMMAND DOCS group and summary.
    pub acl_categories: &'static [&'static str],
    pub group: &'static str,
    pub summary: &'static str,
    pub since: &'static str,
    pub complexity: &'static str,
    /// None for container commands (CLIENT, CONFIG...) that dispatch on
    /// their first argument to `subcommands`.
    pub handler: Option<Handler>,
    /// Subcommands of a container, named by their full name (`client|kill`),
    /// as COMMAND INFO, CLIENT LIST `cmd=` and INFO commandstats show them.
    pub subcommands: &'static [CommandSpec],
    /// COMMAND INFO command tips (`nondeterministic_output`,
    /// `request_policy:all_shards`...).
    pub tips: &'static [&'static str],
    /// COMMAND INFO key-spec flags (`RW`, `access`...); when empty, derived
    /// from `flags` (`RO` for read-only commands, `RW` otherwise).
    pub key_spec_flags: &'static [&'static str],
}

impl CommandSpec {
    /// A spec with the common defaults; families fill the rest with struct
    /// update syntax.
    pub const DEFAULT: CommandSpec = CommandSpec {
        name: "",
        arity: 0,
        flags: 0,
        first_key: 0,
        last_key: 0,
        key_step: 0,
        acl_categories: &[],
        group: "generic",
        summary: "",
        since: "1.0.0",
        complexity: "O(1)",
        handler: None,
        subcommands: &[],
        tips: &[],
        key_spec_flags: &[],
    };

    pub fn arity_ok(&self, argc: usize) -> bool {
        let argc = argc as i64;
        let arity = self.arity as i64;
        if arity >= 0 {
            argc == arity
        } else {
            argc >= -arity
        }
    }

    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }

    /// The key positions in `args` (indices), from the spec.
    pub fn key_indices(&self, argc: usize) -> Vec<usize> {
        if self.first_key <= 0 || argc == 0 {
            return Vec::new();
        }
        let last = if self.last_key < 0 {
            argc as i64 + self.last_key as i64
        } else {
            self.last_key as i64
        };
        let step = self.key_step.max(1) as usize;
        let mut out = Vec::new();
        let mut i = self.first_key as usize;
        while (i as i64) <= last && i < argc {
            out.push(i);
            i += step;
        }
        out
    }
}

/// Name-to-spec lookup for top-level commands.
///
/// `by_name` keeps the specs in name order for COMMAND's listings. Lookups,
/// which run once per request, go through `buckets` instead: the specs are
/// grouped by name length and first letter, so that a lookup compares the
/// request's name case-insensitively against the few specs that can match,
/// without copying it. Each spec carries its name's first eight bytes as
/// one word ([`name_prefix`]): a bucket holds up to four names (`lpush`,
/// `lmove`, `lmpop`, `ltrim`), and comparing them byte by byte without
/// case was ~120 instructions of every LPUSH.
pub struct CommandTable {
    by_name: BTreeMap<&'static str, &'static CommandSpec>,
    buckets: Vec<Vec<(u64, &'static CommandSpec)>>,
}

/// The first eight bytes of `name` (fewer if shorter, zero-padded),
/// lowercased, as one little-endian word: two names of the same length
/// agree on it exactly when those bytes agree ignoring ASCII case.
/// All eight bytes lowercased at once (a byte loop cost as much as the
/// comparisons it replaced).
fn name_prefix(name: &[u8]) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut bytes = [0u8; 8];
    let n = name.len().min(8);
    bytes[..n].copy_from_slice(&name[..n]);
    let word = u64::from_le_bytes(bytes);
    // Per byte, on its low seven bits (no carry crosses bytes): the high
    // bit is set from 'A' up, and from past 'Z' up.
    let low = word & !HIGH;
    let from_a = low + ONES * u64::from(0x80 - b'A');
    let past_z = low + ONES * u64::from(0x7f - b'Z');
    // 'A'..='Z' and ASCII: add 0x20.
    let upper = from_a & !past_z & !word & HIGH;
    word | (upper >> 2)
}

/// Longest command name we look up; longer names are unknown commands.
const NAME_MAX_BYTES: usize = 64;

/// Lookup buckets per name length: one per value of a name's first byte's
/// low five bits, which is the same for a letter in either case.
const BUCKETS_PER_LENGTH: usize = 32;

/// The bucket for a name of this length and first byte (`len >= 1`,
/// `len <= NAME_MAX_BYTES`). Upper- and lowercase letters share a bucket.
fn bucket_index(len: usize, first: u8) -> usize {
    debug_assert!((1..=NAME_MAX_BYTES).contains(&len));
    (len - 1) * BUCKETS_PER_LENGTH + usize::from(first & 0x1f)
}

impl CommandTable {
    pub fn new(families: &[&'static [CommandSpec]]) -> CommandTable {
        let mut by_name = BTreeMap::new();
        let mut buckets = vec![Vec::new(); NAME_MAX_BYTES * BUCKETS_PER_LENGTH];
        for family in families {
            for spec in family.iter() {
                let previous = by_name.insert(spec.name, spec);
                assert!(previous.is_none(), "command {} defined twice", spec.name);
                // The lookup lowercases the request's name and compares it
                // exactly, so only lowercase names could ever match.
                let name = spec.name.as_bytes();
                if !name.is_empty()
                    && name.len() <= NAME_MAX_BYTES
                    && !name.iter().any(u8::is_ascii_uppercase)
                {
                    buckets[bucket_index(name.len(), name[0])].push((name_prefix(name), spec));
                }
            }
        }
        CommandTable { by_name, buckets }
    }

    /// Case-insensitive lookup without allocating or copying the name.
    /// Replaces the spec of the command named `spec.name` (the hook of
    /// planted bugs swaps in a buggy handler; see [`crate::planted`]).
    pub(crate) fn replace(&mut self, spec: &'static CommandSpec) {
        let previous = self.by_name.insert(spec.name, spec);
        debug_assert!(previous.is_some(), "{} replaces no command", spec.name);
        let name = spec.name.as_bytes();
        for (_, slot) in &mut self.buckets[bucket_index(name.len(), name[0])] {
            if slot.name == spec.name {
                *slot = spec;
            }
        }
    }

    pub fn lookup(&self, name: &[u8]) -> Option<&'static CommandSpec> {
        let first = *name.first()?;
        if name.len() > NAME_MAX_BYTES {
            return None;
        }
        let prefix = name_prefix(name);
        // Past the prefix only names longer than eight bytes have a rest.
        let rest = name.get(8..).unwrap_or_default();
        let found = self.buckets[bucket_index(name.len(), first)]
            .iter()
            .find(|(spec_prefix, spec)| {
                *spec_prefix == prefix
                    && spec
                        .name
                        .as_bytes()
                        .get(8..)
                        .unwrap_or_default()
                        .eq_ignore_ascii_case(rest)
            })
            .map(|&(_, spec)| spec);
        debug_assert_eq!(
            found.map(|s| s.name),
            lookup_in(name, |n| self.by_name.get(n).copied()).map(|s| s.name)
        );
        found
    }

    pub fn iter(&self) -> impl Iterator<Item = &'static CommandSpec> + '_ {
        self.by_name.values().copied()
    }

    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

/// Finds a subcommand of `parent` by name, case-insensitively. Specs may be
/// named `kill` or `client|kill`; both match `KILL`.
pub fn lookup_subcommand(
    parent: &'static CommandSpec,
    name: &[u8],
) -> Option<&'static CommandSpec> {
    lookup_in(name, |n| {
        parent
            .subcommands
            .iter()
            .find(|s| s.name.rsplit('|').next() == Some(n))
    })
}

fn lookup_in<T>(name: &[u8], f: impl FnOnce(&str) -> Option<T>) -> Option<T> {
    if name.len() > NAME_MAX_BYTES {
        return None;
    }
    let mut buf = [0u8; NAME_MAX_BYTES];
    let lower = &mut buf[..name.len()];
    lower.copy_from_slice(name);
    lower.make_ascii_lowercase();
    f(std::str::from_utf8(lower).ok()?)
}

/// The execution context of one command.
pub struct Ctx<'a> {
    pub server: &'a mut Server,
    pub clients: &'a mut Clients,
    pub client_id: ClientId,
    pub events: &'a mut VecDeque<Event>,
    pub now: Now,
    /// The reply being built (appended to the client's output afterwards).
    pub reply: Vec<u8>,
    pub protocol: Protocol,
    /// Work done so far, in work units (see [`crate::engine`] docs).
    pub work_units: u64,
    /// The spec being executed (the subcommand for containers).
    pub spec: &'static CommandSpec,
    /// False inside MULTI, scripts, and when a blocked command is re-run to
    /// serve a ready key: the command must reply instead of blocking.
    pub may_block: bool,
    /// Set by [`Ctx::block_on_keys`]; the engine parks the client.
    pub block: Option<crate::blocking::BlockRequest>,
    /// The command runs from a script (`redis.call`), where XREAD and
    /// XREADGROUP refuse BLOCK outright.
    pub in_script: bool,
    /// A script this command starts may give control back to the host
    /// between slices (a request's EVAL; not one inside EXEC).
    pub may_suspend: bool,
    /// Set when the command's script is suspended: no reply yet, the
    /// engine resumes it (see [`crate::scripting::busy`]).
    pub suspended: bool,
    /// The command runs from EXEC's queue: Redis's client is still in
    /// MULTI and running EXEC, which a failed AUTH's ACL LOG entry shows.
    pub in_exec: bool,
}

/// A key held a value of another type; the caller replies [`WRONGTYPE`].
///
/// [`WRONGTYPE`]: crate::value::WRONGTYPE
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WrongType;

impl<'a> Ctx<'a> {
    /// The reply writer for this command.
    pub fn w(&mut self) -> ReplyWriter<'_> {
        ReplyWriter::new(&mut self.reply, self.protocol)
    }

    /// Shorthands for the common replies.
    pub fn ok(&mut self) {
        self.w().ok();
    }
    pub fn error(&mut self, msg: &str) {
        self.w().error(msg);
    }
    pub fn int(&mut self, n: i64) {
        self.w().int(n);
    }
    pub fn bulk(&mut self, data: &[u8]) {
        self.w().bulk(data);
    }
    pub fn null(&mut self) {
        self.w().null();
    }

    /// Writes a push (a pub/sub confirmation or message) to the calling
    /// client: into the reply, or aside while CLIENT REPLY suppresses its
    /// replies, since Redis delivers pushes regardless (see
    /// [`crate::reply_mode`]).
    pub fn push_to_self(&mut self, write: impl FnOnce(&mut ReplyWriter)) {
        let protocol = self.protocol;
        let c = self
            .clients
            .get_mut(&self.client_id)
            .expect("calling client exists");
        if c.reply_mode.suppressed() {
            write(&mut ReplyWriter::new(&mut c.held_pushes, protocol));
        } else {
            write(&mut self.w());
        }
    }

    /// Records `units` of work.
    pub fn work(&mut self, units: u64) {
        self.work_units += units;
    }

    /// The calling client.
    pub fn client(&mut self) -> &mut crate::client::Client {
        self.clients
            .get_mut(&self.client_id)
            .expect("calling client exists")
    }

    /// The calling client's selected database index.
    pub fn db_index(&self) -> usize {
        self.clients[&self.client_id].db
    }

    /// The calling client's selected database.
    pub fn db(&mut self) -> &mut crate::db::Db {
        let i = self.db_index();
        &mut self.server.keyspace.dbs[i]
    }

    pub fn now_ms(&self) -> u64 {
        self.now.unix_ms()
    }

    /// The time (unix ms) this command judges keys' expiry by: its clock,
    /// unless the hook of planted bugs moves it (see [`crate::planted`]).
    #[inline]
    pub fn expiry_now_ms(&self) -> u64 {
        self.server.planted.expiry_clock_ms(self.now)
    }

    /// Deletes `key` if expired (lazy expiry) in the client's database, then
    /// returns the live value, if any. Every key lookup goes through here.
    pub fn lookup(&mut self, key: &[u8]) -> Option<&mut Value> {
        let (i, hidden) = self.expire_lazily(key);
        if hidden {
            return None;
        }
        self.server.keyspace.dbs[i].get_mut(key)
    }

    /// Lazy expiry of `key` in the client's database; returns that
    /// database's index, and whether the key is expired but kept (on a
    /// replica, see [`Ctx::replica_keeps_expired`]).
    fn expire_lazily(&mut self, key: &[u8]) -> (usize, bool) {
        let now_ms = self.expiry_now_ms();
        let i = self.db_index();
        // Without any TTL in the database nothing can be expired, and the
        // expiry check (a read-only lookup) would only hash the key again.
        if self.server.keyspace.dbs[i].expires.is_empty() {
            return (i, false);
        }
        if let Some(from_master) = self.replica_keeps_expired() {
            // The master's commands see every key; the others do not see
            // an expired one, and only a write deletes it (Redis 7.0's
            // `lookupKeyWrite` forces the deletion on a writable replica,
            // so that a write never lands on an expired key's remains).
            let expired = self.server.keyspace.dbs[i].is_expired(key, now_ms);
            let write = self.spec.flags & crate::cmd::flags::WRITE != 0;
            if from_master || !expired || !write {
                return (i, !from_master && expired);
            }
        }
        // While clients are paused the dataset stays as it is (Redis's
        // `checkClientPauseTimeoutAndReturnIfPaused` in `expireIfNeeded`):
        // an expired key reads as absent and is deleted after the pause.
        if self.server.pause.mode(self.now).is_some()
            && self.server.keyspace.dbs[i].is_expired(key, now_ms)
        {
            return (i, true);
        }
        {
            if let Some(v) = self.server.keyspace.dbs[i].expire_if_needed(key, now_ms) {
                self.server.keyspace.expired_keys += 1;
                // A blocked XREADGROUP learns that its stream is gone.
                self.server.blocking.signal(i, key);
                let lazy = self.server.config.lazyfree_lazy_expire;
                self.propagate_deletion(i, key, lazy);
                self.invalidate_tracked(key);
                self.free(v, lazy);
                crate::notify::expired_on_access(self, i, key);
            }
        }
        (i, false)
    }

    /// On a replica, keys expire only by their primary's DEL (Redis 7.0's
    /// `expireIfNeeded`): `Some(true)` when the primary's stream runs the
    /// command (an expired key is still there for it), `Some(false)` for
    /// other clients (it reads as absent, and stays); `None` on a primary.
    pub fn replica_keeps_expired(&self) -> Option<bool> {
        if !self.server.repl.is_replica() || self.server.planted.replica_self_expires() {
            return None;
        }
        let role = self.clients.get(&self.client_id).map(|c| c.repl_role);
        Some(role == Some(crate::repl::ClientRole::Master))
    }

    /// Sets `key`'s TTL in database `db`. On a writable replica a client
    /// other than the primary's link makes the replica remember the key,
    /// whose expiry is then its own (see [`crate::repl::writable`]).
    pub fn set_expire_in(&mut self, db: usize, key: &[u8], when_ms: u64) {
        self.server.keyspace.dbs[db].set_expire(key, when_ms);
        if self.replica_keeps_expired() == Some(false)
            && crate::repl::writable::is_writable(&self.server.config)
        {
            self.server.repl.writable_expires.remember(db, key);
        }
    }

    /// Like [`Ctx::lookup`], but also hands out the reply writer, so a
    /// command can encode straight from the stored value without copying it.
    pub fn lookup_and_writer(&mut self, key: &[u8]) -> (Option<&mut Value>, ReplyWriter<'_>) {
        let (i, hidden) = self.expire_lazily(key);
        let value = match hidden {
            true => None,
            false => self.server.keyspace.dbs[i].get_mut(key),
        };
        (value, ReplyWriter::new(&mut self.reply, self.protocol))
    }

    /// Looks `key` up expecting the variant `pick` selects (for example
    /// `Value::as_list_mut`): `Ok(None)` when missing, `Err(WrongType)` when
    /// it holds another type.
    pub fn lookup_as<T>(
        &mut self,
        key: &[u8],
        pick: fn(&mut Value) -> Option<&mut T>,
    ) -> Result<Option<&mut T>, WrongType> {
        match self.lookup(key) {
            None => Ok(None),
            Some(v) => pick(v).map(Some).ok_or(WrongType),
        }
    }

    /// The hash seed of every collection dict (see
    /// [`Server::collection_hash_seed`]).
    pub fn collection_hash_seed(&self) -> u64 {
        self.server.collection_hash_seed()
    }

    /// The collection encoding thresholds in force.
    pub fn limits(&self) -> crate::types::Limits {
        self.server.config.limits
    }

    /// Whether this command may block (see [`Ctx::block_on_keys`]).
    pub fn may_block(&self) -> bool {
        self.may_block
    }

    /// Parks the calling client on `keys` (in its database) instead of
    /// replying, until a write signals one of them ready or `timeout_ms`
    /// (0: forever) passes, when it gets `on_timeout`. Only when
    /// [`Ctx::may_block`]; the handler must not write a reply.
    pub fn block_on_keys(
        &mut self,
        keys: Vec<Vec<u8>>,
        timeout_ms: u64,
        on_timeout: crate::blocking::TimeoutReply,
    ) {
        debug_assert!(self.may_block, "blocking where the command must reply");
        self.block = Some(crate::blocking::BlockRequest {
            keys,
            timeout_ms,
            on_timeout,
            rerun_args: None,
        });
    }

    /// A write made `key` (in the client's database) able to serve clients
    /// blocked on it: a push into a list, an add to a sorted set, a new key.
    pub fn signal_key_ready(&mut self, key: &[u8]) {
        let db = self.db_index();
        self.server.blocking.signal(db, key);
    }

    /// Whether writes are propagated (see [`crate::propagate`]): a handler
    /// builds a rewritten form only when they are.
    #[inline]
    pub fn propagating(&self) -> bool {
        self.server.propagation.is_enabled()
    }

    /// Propagates `argv` (in the client's database) instead of this
    /// command; called once per command to propagate (SPOP's SREMs). Only
    /// for a write (flag `write`) that changed the dataset; a no-op while
    /// propagation is off.
    pub fn propagate<A: AsRef<[u8]>>(&mut self, argv: &[A]) {
        debug_assert!(self.spec.has(flags::WRITE), "only writes propagate");
        if self.propagating() {
            let db = self.db_index();
            self.server.propagation.replace_with(db, argv);
        }
    }

    /// Propagates nothing of this write, whatever it changed (its effects
    /// were propagated otherwise).
    pub fn propagate_none(&mut self) {
        debug_assert!(self.spec.has(flags::WRITE), "only writes propagate");
        if self.propagating() {
            self.server.propagation.replace_with_nothing();
        }
    }

    /// A key was deleted without a command asking for it (lazy expiry):
    /// propagated as DEL, or UNLINK when `lazy`.
    pub fn propagate_deletion(&mut self, db: usize, key: &[u8], lazy: bool) {
        self.server.propagation.deletion(db, key, lazy);
    }

    /// Whether `key` exists (after lazy expiry) in the client's database.
    pub fn exists(&mut self, key: &[u8]) -> bool {
        self.lookup(key).is_some()
    }

    /// Redis's `lookupKeyWrite` before a write that replaces `key` whatever
    /// it holds (a plain SET): lazy expiry, and the access stamp. Under an
    /// LRU policy (or none) the store stamps the key again, so only the
    /// expiry runs and the lookup is saved; under LFU the lookup counts the
    /// access (and draws from the LFU RNG) exactly as `exists` would.
    pub fn expire_before_overwrite(&mut self, key: &[u8]) {
        if crate::lru::is_lfu(self.server.config.maxmemory_policy) {
            self.exists(key);
        } else {
            self.expire_lazily(key);
        }
    }

    /// A value at `key` (found by [`Ctx::lookup`]) was changed in place:
    /// what [`Ctx::store`] does besides replacing it — invalidate WATCHes,
    /// signal blocked clients, count the change.
    pub fn modified_in_place(&mut self, key: &[u8]) {
        let i = self.db_index();
        crate::multi::touch_key(&self.server.watches, self.clients, i, key);
        self.invalidate_tracked(key);
        self.server.blocking.signal(i, key);
        self.server.dirty += 1;
    }

    /// Stores a value in the client's database, clearing the TTL unless
    /// `keep_ttl`; frees the old value per `lazyfree-lazy-server-del`.
    pub fn store(&mut self, key: &[u8], value: Value, keep_ttl: bool) {
        let i = self.db_index();
        match self.server.keyspace.dbs[i].set(key, value, keep_ttl) {
            Some(old) => self.free(old, self.server.config.lazyfree_lazy_server_del),
            // Redis's `dbAdd` raises `new` as the key is created, before
            // the command's own event.
            None => crate::notify::notify(self, crate::notify::class::NEW, "new", key),
        }
        crate::multi::touch_key(&self.server.watches, self.clients, i, key);
        self.invalidate_tracked(key);
        self.server.blocking.signal(i, key);
        self.server.dirty += 1;
    }

    /// Removes `key` (after lazy expiry); returns whether it existed. The
    /// value is freed in the background when `lazy`.
    pub fn delete(&mut self, key: &[u8], lazy: bool) -> bool {
        if self.lookup(key).is_none() {
            return false;
        }
        let i = self.db_index();
        let v = self.server.keyspace.dbs[i].remove(key).expect("looked up");
        // A blocked XREADGROUP learns that its stream is gone.
        self.server.blocking.signal(i, key);
        if lazy {
            crate::planted::lazily_freed(self.server, i, key, &v);
        }
        self.free(v, lazy);
        crate::multi::touch_key(&self.server.watches, self.clients, i, key);
        self.invalidate_tracked(key);
        self.server.dirty += 1;
        true
    }

    /// Client-side caching: the clients that read `key` are told it
    /// changed (see [`crate::tracking::invalidate_key`]).
    pub fn invalidate_tracked(&mut self, key: &[u8]) {
        let tracking = &mut self.server.tracking;
        let work_units = crate::tracking::invalidate_key(tracking, self.clients, key, true);
        self.work(work_units);
    }

    /// Frees a value: inline (its cost charged to this command) or handed to
    /// the host as background work. Like Redis's `lazyfree-lazyfree-threshold`
    /// (64 elements), small values are always freed inline.
    pub fn free(&mut self, value: Value, lazy: bool) {
        let cost = value.free_cost_units();
        if lazy && cost > crate::event::LAZYFREE_THRESHOLD_UNITS {
            self.work(1);
            self.events
                .push_back(Event::Free(crate::event::Garbage::Value(value)));
        } else {
            self.work(cost);
            drop(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command is found by its name in any case, and a name that
    /// differs from one in a single byte (inside or past the eight-byte
    /// prefix) finds nothing, or the command it then spells.
    #[test]
    fn lookup_matches_whole_names_ignoring_case() {
        let table = CommandTable::new(crate::commands::FAMILIES);
        for spec in table.iter() {
            let lower = spec.name.as_bytes();
            let upper = lower.to_ascii_uppercase();
            let mixed: Vec<u8> = lower
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    if i % 2 == 0 {
                        b.to_ascii_uppercase()
                    } else {
                        *b
                    }
                })
                .collect();
            for name in [lower, &upper[..], &mixed[..]] {
                assert_eq!(table.lookup(name).map(|s| s.name), Some(spec.name));
            }
            for i in 0..lower.len() {
                let mut changed = lower.to_vec();
                changed[i] = b'#';
                assert_eq!(
                    table.lookup(&changed).map(|s| s.name),
                    None,
                    "{}",
                    spec.name
                );
            }
            let mut longer = lower.to_vec();
            longer.push(b'x');
            let expected = table.by_name.get(std::str::from_utf8(&longer).unwrap());
            assert_eq!(
                table.lookup(&longer).map(|s| s.name),
                expected.map(|s| s.name)
            );
        }
        assert!(table.lookup(b"").is_none());
        // The word-wide lowercasing agrees with the byte one on every byte.
        for b in 0..=255u8 {
            for at in 0..8 {
                let mut name = *b"aBcD1_zZ";
                name[at] = b;
                let mut expected = [0u8; 8];
                for (e, c) in expected.iter_mut().zip(name) {
                    *e = c.to_ascii_lowercase();
                }
                assert_eq!(name_prefix(&name), u64::from_le_bytes(expected));
                let mut shorter = [0u8; 8];
                shorter[..at].copy_from_slice(&expected[..at]);
                assert_eq!(name_prefix(&name[..at]), u64::from_le_bytes(shorter));
            }
        }
        assert!(table.lookup(&[b'a'; NAME_MAX_BYTES + 1]).is_none());
    }
}
