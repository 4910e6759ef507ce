//! The harness's own declaration of how much work each command may do: a
//! bound per command (and subcommand) over sizes the engine's generic
//! execution code measured around it ([`Sizes`]), never over what the
//! command reported. The `no-freeze` checker ([`super::no_freeze`]) holds
//! every execution to it.
//!
//! A bound is `FIXED_UNITS + reply + SLACK × (arguments + Σ terms)`:
//!
//! - `reply` is one unit per [`REPLY_BYTES_PER_WORK_UNIT`] bytes of reply
//!   (the engine's encoding charge, over bytes it produced);
//! - `arguments` is the argument count plus one per 64 bytes of them
//!   (every command parses its arguments);
//! - the terms are the command's declared complexity, read from the Redis
//!   7.0 documentation (`COMMAND DOCS` complexity) and made precise over
//!   measurable sizes ([`Term`]): `N` is the elements of the values at the
//!   command's keys before and after it ran (strings count one element
//!   per 64 bytes), `log N` is `log2` of the largest of them plus 2;
//! - [`SLACK`] is the constant factor allowed per declared step. The
//!   clean engine charges about one unit per element visited, so it stays
//!   well inside; a loop that is quadratic where the declaration is linear
//!   passes the bound as soon as `N` exceeds a few times `SLACK`.
//!
//! A blocking command served after it parked did each attempt's work
//! ([`Sizes::runs`]): its bound is multiplied by the attempts. EXEC and
//! scripts are bounded by their group: EXEC by its queue, a script by its
//! busy threshold ([`SCRIPT_BUSY_UNITS`]); each command they ran is its own
//! execution with its own bound, and the group's bound adds theirs.

use seedkv_engine::cmd::REPLY_BYTES_PER_WORK_UNIT;
use seedkv_engine::sizes::{Sizes, ValueSizes};

/// Units every command may spend besides its terms (lookup, dispatch,
/// bookkeeping, a lazily expired key, blocked clients to signal).
pub const FIXED_UNITS: u64 = 64;

/// The constant factor allowed per declared step.
pub const SLACK: u64 = 8;

/// Bytes of a string that count as one element.
pub const STRING_BYTES_PER_ELEMENT: u64 = 64;

/// Cells of LCS's dynamic-programming table that count as one element.
pub const LCS_CELLS_PER_ELEMENT: u64 = 16;

/// A script may run until its busy threshold (`busy-reply-threshold`, 5000
/// ms, counted in the engine's work units) before it is stopped.
pub const SCRIPT_BUSY_UNITS: u64 = 5_000 * 1_000_000 / seedkv_engine::stopwatch::WORK_UNIT_NS;

/// Entries of the server's fixed tables a command may walk (the command
/// table, configuration parameters, INFO fields, LATENCY events × samples,
/// help texts, the slow log at its default length...).
pub const SERVER_TABLE_UNITS: u64 = 32 * 1024;
/// PFSELFTEST's two tests: 8 cycles over 16384 registers and 100,000
/// elements added to a dense and a sparse HLL (the engine charges about
/// 226,000 units; the bound multiplies this by its slack).
pub const HLL_SELFTEST_UNITS: u64 = 40_000;

/// LOLWUT's largest canvas (the engine refuses a larger one), a unit per
/// `PIXELS_PER_WORK_UNIT` pixels, plus a unit per square (at most 200 ×
/// 200).
pub const LOLWUT_CANVAS_UNITS: u64 = seedkv_engine::commands::lolwut::CANVAS_PIXELS_MAX
    / seedkv_engine::commands::lolwut::PIXELS_PER_WORK_UNIT
    + 200 * 200;

/// One declared step of a command's complexity, over measured sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Term {
    /// `O(log N)` per argument (a skiplist search per member).
    ArgsLogN,
    /// A small encoding (listpack, intset) searched linearly: Redis counts
    /// it as `O(1)` because its size is capped by configuration; up to
    /// [`PACKED_ELEMENTS_MAX`] elements, `N`, above it nothing.
    Packed,
    /// A small encoding searched linearly once per argument (HSET, HMGET,
    /// HDEL of many fields on a listpack): per argument, a unit per
    /// [`PACKED_SCAN_PER_UNIT`] of the largest small value's elements.
    ArgsPacked,
    /// `O(N)`: the elements at its keys, before and after.
    N,
    /// `O(N log N)`: a sort, or a skiplist insert per element.
    NLogN,
    /// `O(M log N)`, `M` the elements it added or removed (ZPOPMIN COUNT).
    ChangedLogN,
    /// `O(M)`, `M` the items of its reply (each takes at least
    /// [`REPLY_ITEM_BYTES_MIN`] bytes): for a count argument that the
    /// collection's size does not cap (HRANDFIELD -1000000).
    ReplyItems,
    /// `O(args × N log N)`: SORT, whose BY and GET patterns look up a key
    /// per element.
    ArgsNLogN,
    /// A dense HyperLogLog's 16384 registers per key argument (PFCOUNT
    /// and PFMERGE merge them; PFADD may promote to dense).
    HllDense,
    /// PFSELFTEST's fixed tests ([`HLL_SELFTEST_UNITS`]).
    HllSelfTest,
    /// LOLWUT's canvas, at most [`LOLWUT_CANVAS_UNITS`].
    LolwutCanvas,
    /// PFMERGE into a sparse destination: an in-place sparse update per
    /// register the union sets (at most 4 per source byte, 16384 in all),
    /// each walking the destination's opcodes (a unit per 64 bytes).
    HllSparseMerge,
    /// `O(N × M)` over the two longest strings (LCS).
    StringProduct,
    /// `N`, each element matched against the request's pattern (HSCAN,
    /// SSCAN, ZSCAN MATCH).
    NGlob,
    /// Keys of the selected database (RANDOMKEY sampling expired keys).
    DbKeys,
    /// Keys of the selected database, each matched against the request's
    /// pattern (KEYS, SCAN).
    DbKeysGlob,
    /// Keys of every database (INFO keyspace/memory, MEMORY STATS).
    AllKeys,
    /// Elements of every database's values (FLUSHDB, FLUSHALL).
    AllElements,
    /// Every database's keys, elements and bytes (a unit per 64 bytes):
    /// serializing the whole dataset (SAVE).
    Dataset,
    /// Connected clients (CLIENT LIST, CLIENT KILL, INFO clients).
    Clients,
    /// Channels and patterns, each matched against the request's names
    /// (PUBLISH, PUBSUB CHANNELS).
    PubSubGlob,
    /// Channels and patterns, per argument (SUBSCRIBE family: a client's
    /// patterns are a list).
    PubSubArgs,
    /// The caller's MULTI queue and watched keys, per argument.
    Tx,
    /// Cached scripts (SCRIPT FLUSH).
    Scripts,
    /// Function libraries, their functions and code bytes (FUNCTION LIST,
    /// DUMP, FLUSH; a save writes the libraries too).
    Functions,
    /// The server's fixed tables ([`SERVER_TABLE_UNITS`]).
    ServerTables,
    /// A fixed table's names matched against the request's patterns
    /// (CONFIG GET, COMMAND LIST FILTERBY PATTERN).
    TableGlob,
    /// A script's instruction budget ([`SCRIPT_BUSY_UNITS`]), plus the
    /// bounds of the commands it called.
    Script,
    /// EXEC: its queue (counted by its group's executions), plus their
    /// bounds.
    Exec,
}

/// Above this many elements a collection is never in a small encoding
/// (the largest default threshold is `set-max-intset-entries` 512).
pub const PACKED_ELEMENTS_MAX: u64 = 512;
/// Elements of a small encoding compared per work unit of a search
/// ([`Term::ArgsPacked`]; the engine charges a unit per 8 hash pairs, and
/// a pair counts as one element here).
pub const PACKED_SCAN_PER_UNIT: u64 = 8;

/// The smallest encoding of one reply item (`:1\r\n`).
pub const REPLY_ITEM_BYTES_MIN: u64 = 4;

/// Names in a fixed server table (commands, configuration parameters)
/// and the longest of them.
pub const TABLE_NAMES_MAX: u64 = 512;
pub const TABLE_NAME_BYTES_MAX: u64 = 64;

/// What the checker knows besides one execution's sizes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Context {
    /// The longest argument any request of the run carried: an upper bound
    /// on every key's and channel's length, for glob matching.
    pub arg_bytes_max: u64,
    /// For EXEC and scripts: the executions of its group, and the sum of
    /// their bounds.
    pub group_count: u64,
    pub group_bound_units: u64,
}

fn log2_plus_2(n: u64) -> u64 {
    u64::from(64 - (n + 2).leading_zeros())
}

fn elements(v: &ValueSizes) -> u64 {
    v.elements + v.string_bytes.div_ceil(STRING_BYTES_PER_ELEMENT)
}

/// Elements added or removed at the command's keys (freed values, lazily
/// expired ones, created values).
fn changed(s: &Sizes) -> u64 {
    elements(&s.before).abs_diff(elements(&s.after))
}

/// `(1 + pattern bytes) × (1 + name bytes)`: the steps a bounded glob
/// matcher may take per name.
fn glob_steps(s: &Sizes, name_bytes_max: u64) -> u64 {
    (1 + s.args_bytes).saturating_mul(1 + name_bytes_max)
}

fn term_units(term: Term, s: &Sizes, cx: &Context) -> u64 {
    let n = elements(&s.before).saturating_add(elements(&s.after));
    let largest = s
        .before
        .elements_max
        .max(s.after.elements_max)
        .max(s.before.string_bytes_max / STRING_BYTES_PER_ELEMENT)
        .max(s.after.string_bytes_max / STRING_BYTES_PER_ELEMENT);
    let log_n = log2_plus_2(largest);
    let sub = s.channels.saturating_add(s.patterns);
    match term {
        Term::ArgsLogN => s.args_count.saturating_mul(log_n),
        Term::Packed => {
            let small = |v: &ValueSizes| match v.elements_max <= PACKED_ELEMENTS_MAX {
                true => v.elements,
                false => 0,
            };
            small(&s.before) + small(&s.after)
        }
        Term::ArgsPacked => {
            let small = |v: &ValueSizes| match v.elements_max <= PACKED_ELEMENTS_MAX {
                true => v.elements_max,
                false => 0,
            };
            let scan = small(&s.before).max(small(&s.after)) / PACKED_SCAN_PER_UNIT;
            s.args_count.saturating_mul(scan)
        }
        Term::N => n,
        Term::NLogN => n.saturating_mul(log_n),
        Term::ChangedLogN => changed(s).saturating_mul(log_n),
        Term::ReplyItems => s.reply_bytes / REPLY_ITEM_BYTES_MIN,
        Term::ArgsNLogN => s.args_count.saturating_mul(n + 1).saturating_mul(log_n),
        Term::HllDense => s.args_count.saturating_mul(HLL_DENSE_UNITS),
        Term::HllSelfTest => HLL_SELFTEST_UNITS,
        Term::LolwutCanvas => LOLWUT_CANVAS_UNITS,
        Term::HllSparseMerge => {
            let registers = s.before.string_bytes.saturating_mul(4).min(16_384);
            let longest = s.before.string_bytes_max.max(s.after.string_bytes_max);
            registers.saturating_mul(1 + longest / STRING_BYTES_PER_ELEMENT)
        }
        Term::StringProduct => {
            let longest = s.before.string_bytes_max.max(s.after.string_bytes_max);
            longest.saturating_mul(longest) / LCS_CELLS_PER_ELEMENT
        }
        Term::NGlob => n.saturating_mul(glob_steps(s, cx.arg_bytes_max)),
        Term::DbKeys => s.db_keys,
        Term::DbKeysGlob => s.db_keys.saturating_mul(glob_steps(s, cx.arg_bytes_max)),
        Term::AllKeys => s.all_keys,
        Term::AllElements => s.all_elements.saturating_add(s.all_keys),
        Term::Dataset => s
            .all_elements
            .saturating_add(s.all_keys)
            .saturating_add(s.all_bytes / 64),
        Term::Clients => s.clients,
        Term::PubSubGlob => sub.saturating_mul(glob_steps(s, cx.arg_bytes_max)),
        Term::PubSubArgs => sub.saturating_mul(s.args_count),
        Term::Tx => (s.queued + s.watched).saturating_mul(s.args_count),
        Term::Scripts => s.scripts,
        Term::Functions => s.functions,
        Term::ServerTables => SERVER_TABLE_UNITS,
        Term::TableGlob => TABLE_NAMES_MAX.saturating_mul(glob_steps(s, TABLE_NAME_BYTES_MAX)),
        Term::Script => SCRIPT_BUSY_UNITS.saturating_add(cx.group_bound_units),
        Term::Exec => cx.group_count.saturating_add(cx.group_bound_units),
    }
}

/// Keyspace events a write may raise per key it names: `new`, its own
/// event, `del` when it empties a collection, `expired` for a lazily
/// expired value.
pub const NOTIFY_EVENTS_PER_KEY_MAX: u64 = 4;

/// Bytes a keyspace or keyevent channel adds to a key or event name
/// (`__keyspace@<db>__:`).
pub const NOTIFY_CHANNEL_PREFIX_BYTES_MAX: u64 = 32;

/// With keyspace notifications on, what publishing a write's events may
/// cost: each event is published on two channels, and each publish
/// matches every pattern (a bounded glob over a channel of a key's
/// length) and delivers to every subscriber.
fn notify_units(s: &Sizes, cx: &Context) -> u64 {
    if !s.notify {
        return 0;
    }
    let publishes = 2 * NOTIFY_EVENTS_PER_KEY_MAX * s.keys_count.max(1);
    let glob_units = (1 + cx.arg_bytes_max)
        .saturating_mul(1 + cx.arg_bytes_max + NOTIFY_CHANNEL_PREFIX_BYTES_MAX)
        .div_ceil(seedkv_engine::glob::GLOB_STEPS_PER_WORK_UNIT);
    let per_publish = 1 + s
        .patterns
        .saturating_mul(1 + glob_units)
        .saturating_add(s.clients.saturating_mul(1 + s.patterns));
    publishes.saturating_mul(per_publish)
}

/// The bound of one execution of a command declared with `terms`: every
/// command may parse its arguments, create or free what changed at its
/// keys (a lazily expired value included) and publish its keyspace events
/// besides its declared terms.
pub fn bound_units(terms: &[Term], s: &Sizes, cx: &Context) -> u64 {
    let base = s.args_count + s.args_bytes.div_ceil(64) + changed(s) + notify_units(s, cx);
    let steps = terms
        .iter()
        .fold(base, |acc, &t| acc.saturating_add(term_units(t, s, cx)));
    let per_run = FIXED_UNITS.saturating_add(SLACK.saturating_mul(steps));
    per_run
        .saturating_mul(s.runs.max(1))
        .saturating_add(s.reply_bytes / REPLY_BYTES_PER_WORK_UNIT)
}

/// The full name of a subcommand whose spec is named `sub` in container
/// `container` (`slowlog` and `get`, or `client` and `client|list`).
pub fn full_name(container: &str, sub: &str) -> String {
    match sub.contains('|') || container.is_empty() {
        true => sub.to_string(),
        false => format!("{container}|{sub}"),
    }
}

/// The declared complexity of `name` (full lowercase name, `client|list`
/// for a subcommand), or `None` for a command the table does not know.
pub fn terms_of(name: &str) -> Option<&'static [Term]> {
    TABLE
        .binary_search_by(|(n, _)| n.cmp(&name))
        .ok()
        .map(|i| TABLE[i].1)
}

use Term::*;

/// `O(1)` per argument.
const ONE: &[Term] = &[];
/// `O(1)` over a small encoding: hash, set and sorted-set member access.
const PACKED: &[Term] = &[Packed];
/// A small encoding searched once per argument.
const PACKED_ARGS: &[Term] = &[Packed, ArgsPacked];
/// `O(log N)` per argument, over a small encoding too.
const LOG: &[Term] = &[ArgsLogN, Packed];
/// Work units of a pass over a dense HyperLogLog's registers (16384
/// registers, a unit per 64 as other byte scans).
const HLL_DENSE_UNITS: u64 = 16_384 / 64;
/// `O(N)`.
const LINEAR: &[Term] = &[N];
/// `O(N)` plus what it returns (random members with repetition, pops).
const LINEAR_OUT: &[Term] = &[N, ReplyItems];
/// A collection scan: `O(N)` with MATCH run on each element.
const SCAN_GLOB: &[Term] = &[N, ReplyItems, NGlob];
/// `O(log N + M)`: sorted-set ranges (M counted in `N`, offsets too).
const LOG_LINEAR: &[Term] = &[N, ArgsLogN];
/// `O(M log N)`: pops of M elements.
const POPS: &[Term] = &[ChangedLogN, ArgsLogN, Packed, ReplyItems];
/// `O(N log N)`: sorted-set algebra.
const SORTING: &[Term] = &[NLogN, ArgsLogN];
/// Walks a fixed server table.
const TABLES: &[Term] = &[ServerTables];
const PUBSUB: &[Term] = &[PubSubArgs];

/// Every command and subcommand, sorted by name (a test checks the order
/// and that the engine's command table has exactly these).
pub const TABLE: &[(&str, &[Term])] = &[
    // ACL rules and descriptions walk the command table (categories), the
    // users, the clients (DELUSER's and SETUSER's disconnections) or the
    // ACL log, all server tables.
    ("acl|cat", TABLES),
    ("acl|deluser", TABLES),
    ("acl|dryrun", TABLES),
    ("acl|genpass", ONE),
    ("acl|getuser", TABLES),
    ("acl|help", TABLES),
    ("acl|list", TABLES),
    ("acl|load", ONE),
    ("acl|log", TABLES),
    ("acl|save", TABLES),
    ("acl|setuser", TABLES),
    ("acl|users", TABLES),
    ("acl|whoami", ONE),
    ("append", LINEAR),
    ("auth", ONE),
    // A fork: the child serializes, not the command thread.
    ("bgrewriteaof", ONE),
    ("bgsave", ONE),
    ("bitcount", LINEAR),
    // O(1) per operation; growing the string is the change every bound allows.
    ("bitfield", ONE),
    ("bitfield_ro", ONE),
    ("bitop", LINEAR),
    ("bitpos", LINEAR),
    ("blmove", ONE),
    ("blmpop", POPS),
    ("blpop", ONE),
    ("brpop", ONE),
    ("brpoplpush", ONE),
    ("bzmpop", POPS),
    ("bzpopmax", POPS),
    ("bzpopmin", POPS),
    ("client|caching", ONE),
    ("client|getname", ONE),
    ("client|getredir", ONE),
    ("client|help", TABLES),
    ("client|id", ONE),
    ("client|info", ONE),
    ("client|kill", &[Clients]),
    ("client|list", &[Clients]),
    ("client|no-evict", ONE),
    ("client|pause", &[Clients]),
    ("client|reply", ONE),
    ("client|setinfo", ONE),
    ("client|setname", ONE),
    // Tracking's options are checked against the client's own prefixes.
    ("client|tracking", &[Clients]),
    ("client|trackinginfo", ONE),
    ("client|unblock", &[Clients]),
    ("client|unpause", &[Clients]),
    ("command", TABLES),
    ("command|count", ONE),
    ("command|docs", TABLES),
    ("command|getkeys", ONE),
    ("command|getkeysandflags", ONE),
    ("command|help", TABLES),
    ("command|info", TABLES),
    ("command|list", &[ServerTables, TableGlob]),
    ("config|get", &[ServerTables, TableGlob]),
    ("config|help", TABLES),
    ("config|resetstat", TABLES),
    ("config|rewrite", TABLES),
    ("config|set", TABLES),
    ("copy", LINEAR),
    ("dbsize", ONE),
    ("debug", TABLES),
    ("decr", ONE),
    ("decrby", ONE),
    ("del", ONE),
    ("discard", &[Tx]),
    ("dump", LINEAR),
    ("echo", ONE),
    ("eval", &[Script]),
    ("eval_ro", &[Script]),
    ("evalsha", &[Script]),
    ("evalsha_ro", &[Script]),
    ("exec", &[Exec, Tx]),
    ("exists", ONE),
    ("expire", ONE),
    ("expireat", ONE),
    ("expiretime", ONE),
    // Its option loop ends within four options (each at most once).
    ("failover", ONE),
    // A function runs as a script does, within the same busy budget.
    ("fcall", &[Script]),
    ("fcall_ro", &[Script]),
    ("flushall", &[AllElements]),
    ("flushdb", &[AllElements]),
    ("function|delete", ONE),
    ("function|dump", &[Functions]),
    ("function|flush", &[Functions]),
    ("function|help", TABLES),
    ("function|kill", ONE),
    ("function|list", &[Functions]),
    // A library's code runs at load time under FUNCTION LOAD's timeout
    // (500 ms of instructions), well inside a script's budget; RESTORE
    // runs each library's code so, the payload's libraries being few.
    ("function|load", &[Script]),
    ("function|restore", &[Script, Functions]),
    ("function|stats", ONE),
    ("geoadd", LOG),
    ("geodist", LOG),
    ("geohash", LOG),
    ("geopos", LOG),
    ("georadius", SORTING),
    ("georadius_ro", SORTING),
    ("georadiusbymember", SORTING),
    ("georadiusbymember_ro", SORTING),
    ("geosearch", SORTING),
    ("geosearchstore", SORTING),
    ("get", ONE),
    ("getbit", ONE),
    ("getdel", ONE),
    ("getex", ONE),
    ("getrange", LINEAR),
    ("getset", ONE),
    ("hdel", PACKED_ARGS),
    ("hello", TABLES),
    ("hexists", PACKED),
    ("hget", PACKED),
    ("hgetall", LINEAR),
    ("hincrby", PACKED),
    ("hincrbyfloat", PACKED),
    ("hkeys", LINEAR),
    ("hlen", ONE),
    ("hmget", PACKED_ARGS),
    ("hmset", PACKED_ARGS),
    ("hrandfield", LINEAR_OUT),
    ("hscan", SCAN_GLOB),
    ("hset", PACKED_ARGS),
    ("hsetnx", PACKED),
    ("hstrlen", PACKED),
    ("hvals", LINEAR),
    ("incr", ONE),
    ("incrby", ONE),
    ("incrbyfloat", ONE),
    ("info", &[ServerTables, AllKeys, Clients]),
    ("keys", &[DbKeysGlob]),
    ("lastsave", ONE),
    ("latency|doctor", TABLES),
    ("latency|graph", TABLES),
    ("latency|help", TABLES),
    ("latency|histogram", TABLES),
    ("latency|history", TABLES),
    ("latency|latest", TABLES),
    ("latency|reset", TABLES),
    ("lcs", &[N, StringProduct]),
    ("lindex", LINEAR),
    ("linsert", LINEAR),
    ("llen", ONE),
    ("lmove", ONE),
    ("lmpop", POPS),
    ("lolwut", &[LolwutCanvas]),
    ("lpop", POPS),
    ("lpos", LINEAR),
    ("lpush", ONE),
    ("lpushx", ONE),
    ("lrange", LINEAR),
    ("lrem", LINEAR),
    ("lset", LINEAR),
    ("ltrim", LINEAR),
    ("memory|doctor", &[ServerTables, AllKeys]),
    ("memory|help", TABLES),
    ("memory|malloc-stats", TABLES),
    ("memory|purge", TABLES),
    ("memory|stats", &[ServerTables, AllKeys]),
    ("memory|usage", LINEAR),
    ("mget", ONE),
    ("monitor", ONE),
    ("move", ONE),
    ("mset", ONE),
    ("msetnx", ONE),
    ("multi", ONE),
    ("object|encoding", ONE),
    ("object|freq", ONE),
    ("object|help", TABLES),
    ("object|idletime", ONE),
    ("object|refcount", ONE),
    ("persist", ONE),
    ("pexpire", ONE),
    ("pexpireat", ONE),
    ("pexpiretime", ONE),
    ("pfadd", &[ArgsNLogN, HllDense]),
    ("pfcount", &[ArgsNLogN, HllDense]),
    ("pfdebug", &[ArgsNLogN, HllDense]),
    ("pfmerge", &[ArgsNLogN, HllDense, HllSparseMerge]),
    ("pfselftest", &[HllSelfTest]),
    ("ping", ONE),
    ("psetex", ONE),
    ("psubscribe", PUBSUB),
    // A full resync serializes every key on the command thread (no fork).
    ("psync", &[Dataset, Functions]),
    ("pttl", ONE),
    ("publish", &[PubSubGlob, Clients]),
    ("pubsub|channels", &[PubSubGlob]),
    ("pubsub|help", TABLES),
    ("pubsub|numpat", ONE),
    ("pubsub|numsub", PUBSUB),
    ("pubsub|shardchannels", &[PubSubGlob]),
    ("pubsub|shardnumsub", PUBSUB),
    ("punsubscribe", PUBSUB),
    ("quit", ONE),
    ("randomkey", &[DbKeys]),
    ("rename", ONE),
    ("renamenx", ONE),
    ("replconf", ONE),
    // NO ONE closes every replica of the server (they reconnect to learn
    // its new replication id).
    ("replicaof", &[Clients]),
    ("reset", &[PubSubArgs, Tx]),
    // The payload's bytes and the elements it creates (a sorted set sorts).
    ("restore", &[N, NLogN]),
    ("role", &[Clients]),
    ("rpop", POPS),
    ("rpoplpush", ONE),
    ("rpush", ONE),
    ("rpushx", ONE),
    ("sadd", PACKED),
    // Serializes every key on the command thread, as Redis's rdbSave.
    ("save", &[Dataset, Functions]),
    ("scan", &[DbKeysGlob]),
    ("scard", ONE),
    ("script|debug", ONE),
    ("script|exists", ONE),
    ("script|flush", &[Scripts]),
    ("script|help", TABLES),
    ("script|kill", ONE),
    ("script|load", ONE),
    ("sdiff", LINEAR_OUT),
    ("sdiffstore", LINEAR),
    ("select", ONE),
    ("set", ONE),
    // O(1); growing the string is the change every bound allows.
    ("setbit", ONE),
    ("setex", ONE),
    ("setnx", ONE),
    ("setrange", LINEAR),
    ("sinter", LINEAR_OUT),
    ("sintercard", LINEAR),
    ("sinterstore", LINEAR),
    ("sismember", PACKED),
    ("slaveof", &[Clients]),
    ("slowlog|get", TABLES),
    ("slowlog|help", TABLES),
    ("slowlog|len", ONE),
    ("slowlog|reset", TABLES),
    ("smembers", LINEAR),
    ("smismember", PACKED),
    ("smove", PACKED),
    ("sort", &[ArgsNLogN, ReplyItems]),
    ("sort_ro", &[ArgsNLogN, ReplyItems]),
    ("spop", POPS),
    ("spublish", &[PubSubGlob, Clients]),
    ("srandmember", LINEAR_OUT),
    ("srem", PACKED),
    ("sscan", SCAN_GLOB),
    ("ssubscribe", PUBSUB),
    ("strlen", ONE),
    ("subscribe", PUBSUB),
    ("substr", LINEAR),
    ("sunion", LINEAR_OUT),
    ("sunionstore", LINEAR),
    ("sunsubscribe", PUBSUB),
    ("swapdb", &[Clients, Tx]),
    // A full resync as PSYNC's, without its first line.
    ("sync", &[Dataset, Functions]),
    ("time", ONE),
    ("touch", ONE),
    ("ttl", ONE),
    ("type", ONE),
    ("unlink", ONE),
    ("unsubscribe", PUBSUB),
    ("unwatch", &[Tx]),
    ("wait", ONE),
    ("watch", &[Tx]),
    ("xack", LOG),
    ("xadd", LINEAR_OUT),
    ("xautoclaim", LINEAR_OUT),
    ("xclaim", LOG),
    ("xdel", LOG),
    ("xgroup|create", ONE),
    ("xgroup|createconsumer", ONE),
    ("xgroup|delconsumer", LINEAR_OUT),
    ("xgroup|destroy", LINEAR_OUT),
    ("xgroup|help", TABLES),
    ("xgroup|setid", ONE),
    ("xinfo|consumers", LINEAR_OUT),
    ("xinfo|groups", LINEAR_OUT),
    ("xinfo|help", TABLES),
    ("xinfo|stream", LINEAR_OUT),
    ("xlen", ONE),
    ("xpending", LINEAR_OUT),
    ("xrange", LOG_LINEAR),
    ("xread", LINEAR_OUT),
    ("xreadgroup", LINEAR_OUT),
    ("xrevrange", LOG_LINEAR),
    ("xsetid", ONE),
    ("xtrim", LINEAR_OUT),
    ("zadd", LOG),
    ("zcard", ONE),
    ("zcount", LOG),
    ("zdiff", SORTING),
    ("zdiffstore", SORTING),
    ("zincrby", LOG),
    ("zinter", SORTING),
    ("zintercard", SORTING),
    ("zinterstore", SORTING),
    ("zlexcount", LOG),
    ("zmpop", POPS),
    ("zmscore", LOG),
    ("zpopmax", POPS),
    ("zpopmin", POPS),
    ("zrandmember", LINEAR_OUT),
    ("zrange", LOG_LINEAR),
    ("zrangebylex", LOG_LINEAR),
    ("zrangebyscore", LOG_LINEAR),
    ("zrangestore", LOG_LINEAR),
    ("zrank", LOG),
    ("zrem", LOG),
    ("zremrangebylex", LOG_LINEAR),
    ("zremrangebyrank", LOG_LINEAR),
    ("zremrangebyscore", LOG_LINEAR),
    ("zrevrange", LOG_LINEAR),
    ("zrevrangebylex", LOG_LINEAR),
    ("zrevrangebyscore", LOG_LINEAR),
    ("zrevrank", LOG),
    ("zscan", SCAN_GLOB),
    ("zscore", LOG),
    ("zunion", SORTING),
    ("zunionstore", SORTING),
];

#[cfg(test)]
mod tests {
    use super::*;
    use seedkv_engine::cmd::CommandTable;

    #[test]
    fn table_is_sorted_without_duplicates() {
        for pair in TABLE.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{} then {}", pair[0].0, pair[1].0);
        }
    }

    /// Every command of the engine's table, subcommands included, has a
    /// declared bound, and the table declares nothing the engine lacks.
    #[test]
    fn every_command_has_a_bound() {
        let table = CommandTable::new(seedkv_engine::commands::FAMILIES);
        let names = crate::coverage::table_commands(&table);
        let missing: Vec<&String> = names.iter().filter(|n| terms_of(n).is_none()).collect();
        assert!(missing.is_empty(), "no bound for {missing:?}");
        for (name, _) in TABLE {
            assert!(
                names.iter().any(|n| n == name),
                "{name} is not in the engine's table"
            );
        }
    }
}
