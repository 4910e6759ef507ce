//! Workloads: what a simulated client asks the server. Each lives in its own
//! file behind the [`Workload`] trait; adding one is a new file, a variant in
//! [`WorkloadKind`] and a line in [`WorkloadKind::build`].
//!
//! Key namespaces are disjoint per workload (`kv:`, `ctr:`, `pipe:`,
//! `scan:`, `ttl:`, `big:`, `hash:`, `set:`, `zset:`, `list:` and `rot:`
//! for lists, `blk:` and `bzs:` for blocking, `acct:` for transfer, `rare:` in databases
//! 10-13 for rare, `cont:` for contention, `adv:` for adversarial, `strm:` for streams,
//! `bit:` for bits, `geo:` for geo, `hll:` for hll, `trk:` in database 9 for tracking,
//! `ntf:` in database 7 for notify, `busy:` for busy, `acl:` for acl), so a checker can
//! reason about one workload's
//! keys without the others. Values written under `kv:`, `ttl:`, `pipe:`,
//! `scan:` and `big:` always start with `<key>|`, which lets the pipeline
//! checker tell a reply that belongs to another key.

use rand_chacha::ChaCha8Rng;
use seedkv_engine::resp::Frame;

pub mod acl;
pub mod adversarial;
pub mod big;
pub mod bits;
pub mod blocking;
pub mod busy;
pub mod contention;
pub mod counter;
pub mod cscan;
pub mod geo;
pub mod hashes;
pub mod hll;
pub mod kv;
pub mod lists;
pub mod notify;
pub mod ping;
pub mod pipeline;
pub mod pubsub;
pub mod rare;
pub mod scan;
pub mod sets;
pub mod streams;
pub mod tracking;
pub mod transfer;
pub mod ttl;
pub mod zsets;

/// One request: the command name then its arguments.
pub type Request = Vec<Vec<u8>>;

/// Requests in one batch (a pipeline) at most.
pub const BATCH_REQUESTS_MAX: usize = 1000;

/// Namespaces whose values always start with `<key>|`.
pub const PREFIXED_NAMESPACES: &[&[u8]] = &[b"kv:", b"ttl:", b"pipe:", b"scan:", b"big:"];

/// A client's behaviour: what to send next, and what to make of replies.
pub trait Workload {
    fn kind(&self) -> WorkloadKind;

    /// Appends the next batch (1 ..= [`BATCH_REQUESTS_MAX`] requests, sent
    /// as one pipeline) to `batch`.
    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>);

    /// The reply to one of this workload's requests, in request order;
    /// `None` when the connection died before it came.
    fn on_reply(&mut self, _request: &Request, _reply: Option<&Frame>) {}

    /// Called once per request as it is sent, in order: how many frames
    /// its reply is made of (a SUBSCRIBE of three channels is answered by
    /// three confirmations). The world hands the reply to [`on_reply`]
    /// and records it as an array of those frames when more than one.
    ///
    /// [`on_reply`]: Workload::on_reply
    fn reply_frames(&mut self, _request: &Request) -> usize {
        1
    }

    /// Whether this client may be subscribed: then a pub/sub message frame
    /// (see [`crate::history::Delivery::parse`]) answers no request, and
    /// goes to [`Workload::on_message`] and the history instead.
    fn takes_messages(&self) -> bool {
        false
    }

    /// A pub/sub message arrived (recorded in the history already).
    fn on_message(&mut self, _delivery: &crate::history::Delivery) {}

    /// Whether this client tracks keys (client-side caching): then an
    /// `invalidate` push answers no request, and goes to
    /// [`Workload::on_invalidation`] and the history instead.
    fn takes_invalidations(&self) -> bool {
        false
    }

    /// An invalidation arrived (recorded in the history already): these
    /// keys, or (`None`) every key.
    fn on_invalidation(&mut self, _keys: Option<&[Vec<u8>]>) {}

    /// Moves the reads the last [`Workload::next_batch`] answered from the
    /// client's cache (key, value served) to `out`, for the history.
    fn take_cache_serves(&mut self, _out: &mut Vec<(Vec<u8>, Option<Vec<u8>>)>) {}

    /// A new connection opened: whatever state the server kept for the
    /// previous one (subscriptions, protocol) is gone.
    fn on_connect(&mut self) {}

    /// Virtual time to wait between the end of a batch and the next one.
    fn think_ns(&mut self, rng: &mut ChaCha8Rng) -> u64;

    /// A scripted workload that has sent its whole script: its client stops
    /// (as when its request budget is spent) once every reply is in.
    fn finished(&self) -> bool {
        false
    }
}

/// The workloads there are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WorkloadKind {
    /// GET/SET/DEL/EXISTS/APPEND/MSET/MGET over five keys (conflicts).
    Kv,
    /// INCR on three shared counters, and GETs of them.
    Counter,
    /// Pipelines of depth 1 ..= 1000 of PING/SET/GET/INCR.
    Pipeline,
    /// SCAN iterations while inserting and deleting enough keys to force
    /// rehash growth and shrink.
    Scan,
    /// SET EX/PX, EXPIRE, TTL, PTTL while the clock advances.
    Ttl,
    /// O(N) commands: MSET of many keys, KEYS, DEL of many keys.
    Big,
    /// A PING every millisecond or two, to measure head-of-line blocking.
    Ping,
    /// Hash commands on shared keys crossing the listpack threshold, HSCAN.
    Hashes,
    /// Set commands on intset and string sets, SPOP, set algebra, SSCAN.
    Sets,
    /// Sorted-set commands (ZADD variants, ranges, pops, ZUNIONSTORE), ZSCAN.
    ZSets,
    /// Plain list commands, and a rotation of tagged elements moved by
    /// LMOVE/RPOPLPUSH/BLMOVE with snapshots of the whole group.
    Lists,
    /// Blocking pops with small timeouts against producers of tagged
    /// elements.
    Blocking,
    /// Publishers of numbered messages and RESP2/RESP3 subscribers that
    /// come and go (channels, patterns, shard channels).
    PubSub,
    /// Bank transfers between accounts in MULTI/EXEC, WATCH retry loops
    /// and scripts, against readers of every balance; plus unprotected
    /// pipelined pairs.
    Transfer,
    /// Every command of the table with each of its options, and TTL key
    /// life cycles across features, in databases of its own (`rare:`).
    Rare,
    /// `rare` plus the server-wide commands that have no harmless form
    /// (FLUSHALL, CLIENT PAUSE, SCRIPT FLUSH, MONITOR, QUIT): drawn as
    /// the run's only workload.
    RareSolo,
    /// Several clients parked on one key when one element arrives, and
    /// several watching one key (`cont:`).
    Contention,
    /// Edge inputs (i64 edges, float specials, huge indices, binary,
    /// pathological globs, Lua limits), families swarm-drawn per seed.
    Adversarial,
    /// Stream producers, readers, consumer-group workers that crash and
    /// are claimed from, and trimmers (`strm:`).
    Streams,
    /// Bitmap commands (SETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD...) on
    /// shared `bit:` keys, mixed with the string commands on them.
    Bits,
    /// Geo sets around one region (and the odd point elsewhere): GEOADD,
    /// lookups, every search form with STORE, and sorted-set reads (`geo:`).
    Geo,
    /// HyperLogLogs on shared `hll:` keys, one grown past the sparse
    /// limit; GET/SET/APPEND on them as strings (`hll:`).
    Hll,
    /// Client-side caching: RESP3 tracking clients (default, BCAST with
    /// prefixes, OPTIN) that cache GETs and drop what is invalidated,
    /// against writers of the same keys (`trk:`, database 9).
    Tracking,
    /// Keyspace notifications: RESP2 and RESP3 subscribers of the
    /// keyspace and keyevent channels while a writer creates, expires and
    /// deletes keys of every type (`ntf:`, database 7).
    Notify,
    /// Long scripts and functions past a low `busy-reply-threshold`, and
    /// clients that get `-BUSY` and kill them (`busy:`): drawn as the
    /// run's only workload.
    Busy,
    /// ACL users with drawn permissions, changed and deleted by an admin
    /// client while the others run as them (`acl:`).
    Acl,
}

impl WorkloadKind {
    pub const ALL: &'static [WorkloadKind] = &[
        WorkloadKind::Kv,
        WorkloadKind::Counter,
        WorkloadKind::Pipeline,
        WorkloadKind::Scan,
        WorkloadKind::Ttl,
        WorkloadKind::Big,
        WorkloadKind::Ping,
        WorkloadKind::Hashes,
        WorkloadKind::Sets,
        WorkloadKind::ZSets,
        WorkloadKind::Lists,
        WorkloadKind::Blocking,
        WorkloadKind::PubSub,
        WorkloadKind::Transfer,
        WorkloadKind::Rare,
        WorkloadKind::RareSolo,
        WorkloadKind::Contention,
        WorkloadKind::Adversarial,
        WorkloadKind::Streams,
        WorkloadKind::Bits,
        WorkloadKind::Geo,
        WorkloadKind::Hll,
        WorkloadKind::Tracking,
        WorkloadKind::Notify,
        WorkloadKind::Busy,
        WorkloadKind::Acl,
    ];

    /// The workloads of the first simulator (drawn from the knobs stream);
    /// the rest are drawn from their own stream, so that adding them left
    /// these draws, and every seed's network and fault knobs, as they were.
    pub const CORE: &'static [WorkloadKind] = &[
        WorkloadKind::Kv,
        WorkloadKind::Counter,
        WorkloadKind::Pipeline,
        WorkloadKind::Scan,
        WorkloadKind::Ttl,
        WorkloadKind::Big,
        WorkloadKind::Ping,
    ];

    /// The collection-type workloads (see [`WorkloadKind::CORE`]), and
    /// those added after them (transfer, pub/sub), drawn the same way on
    /// clients of their own.
    pub const COLLECTIONS: &'static [WorkloadKind] = &[
        WorkloadKind::Hashes,
        WorkloadKind::Sets,
        WorkloadKind::ZSets,
        WorkloadKind::Lists,
        WorkloadKind::Blocking,
        WorkloadKind::Transfer,
        WorkloadKind::PubSub,
        WorkloadKind::Adversarial,
        WorkloadKind::Streams,
        WorkloadKind::Bits,
        WorkloadKind::Geo,
        WorkloadKind::Hll,
        WorkloadKind::Tracking,
        WorkloadKind::Notify,
    ];

    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::Kv => "kv",
            WorkloadKind::Counter => "counter",
            WorkloadKind::Pipeline => "pipeline",
            WorkloadKind::Scan => "scan",
            WorkloadKind::Ttl => "ttl",
            WorkloadKind::Big => "big",
            WorkloadKind::Ping => "ping",
            WorkloadKind::Hashes => "hashes",
            WorkloadKind::Sets => "sets",
            WorkloadKind::ZSets => "zsets",
            WorkloadKind::Lists => "lists",
            WorkloadKind::Blocking => "blocking",
            WorkloadKind::PubSub => "pubsub",
            WorkloadKind::Transfer => "transfer",
            WorkloadKind::Rare => "rare",
            WorkloadKind::RareSolo => "rare-solo",
            WorkloadKind::Contention => "contention",
            WorkloadKind::Adversarial => "adversarial",
            WorkloadKind::Streams => "streams",
            WorkloadKind::Bits => "bits",
            WorkloadKind::Geo => "geo",
            WorkloadKind::Hll => "hll",
            WorkloadKind::Tracking => "tracking",
            WorkloadKind::Notify => "notify",
            WorkloadKind::Busy => "busy",
            WorkloadKind::Acl => "acl",
        }
    }

    pub fn from_name(name: &str) -> Option<WorkloadKind> {
        WorkloadKind::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// A fresh workload for client `client`.
    pub fn build(self, client: u32, rng: &mut ChaCha8Rng) -> Box<dyn Workload> {
        match self {
            WorkloadKind::Kv => Box::new(kv::Kv::new(client)),
            WorkloadKind::Counter => Box::new(counter::Counter::new()),
            WorkloadKind::Pipeline => Box::new(pipeline::Pipeline::new(client)),
            WorkloadKind::Scan => Box::new(scan::Scan::new(client, rng)),
            WorkloadKind::Ttl => Box::new(ttl::Ttl::new(client)),
            WorkloadKind::Big => Box::new(big::Big::new(client, rng)),
            WorkloadKind::Ping => Box::new(ping::Ping::new()),
            WorkloadKind::Hashes => Box::new(hashes::Hashes::new(rng)),
            WorkloadKind::Sets => Box::new(sets::Sets::new(rng)),
            WorkloadKind::ZSets => Box::new(zsets::ZSets::new(rng)),
            WorkloadKind::Lists => Box::new(lists::Lists::new(client)),
            WorkloadKind::Blocking => Box::new(blocking::Blocking::new(client)),
            WorkloadKind::PubSub => Box::new(pubsub::PubSub::new(client)),
            WorkloadKind::Transfer => Box::new(transfer::Transfer::new(client)),
            WorkloadKind::Rare => Box::new(rare::Rare::new(client, false)),
            WorkloadKind::RareSolo => Box::new(rare::Rare::new(client, true)),
            WorkloadKind::Contention => Box::new(contention::Contention::new(client)),
            WorkloadKind::Adversarial => Box::new(adversarial::Adversarial::new(rng)),
            WorkloadKind::Streams => Box::new(streams::Streams::new(client)),
            WorkloadKind::Bits => Box::new(bits::Bits::new()),
            WorkloadKind::Geo => Box::new(geo::Geo::new(rng)),
            WorkloadKind::Hll => Box::new(hll::Hll::new(client)),
            WorkloadKind::Tracking => Box::new(tracking::Tracking::new(client)),
            WorkloadKind::Notify => Box::new(notify::Notify::new(client)),
            WorkloadKind::Busy => Box::new(busy::Busy::new(client, rng)),
            WorkloadKind::Acl => Box::new(acl::Acl::new(client)),
        }
    }
}

/// A request from string-like parts.
pub fn request(parts: &[&[u8]]) -> Request {
    parts.iter().map(|p| p.to_vec()).collect()
}

/// A value for `key` that starts with `<key>|`.
pub fn prefixed_value(key: &[u8], tag: &str) -> Vec<u8> {
    let mut v = Vec::with_capacity(key.len() + 1 + tag.len());
    v.extend_from_slice(key);
    v.push(b'|');
    v.extend_from_slice(tag.as_bytes());
    v
}
