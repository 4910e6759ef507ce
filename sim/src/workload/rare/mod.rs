//! `rare`: every command of the command table with each of its options, and
//! key life cycles that cross features, so that a sweep exercises what the
//! other workloads never send (see `coverage`).
//!
//! The client plays a script, [`RARE_PASSES`] times over: sections (one
//! concern each: strings, lists, ..., server introspection, TTL life cycles)
//! shuffled per pass, each one or more batches. Every batch starts with a
//! SELECT, so a reconnect in between (a reset, a disconnect) cannot leave a
//! batch in the wrong database.
//!
//! Isolation from the other workloads, which all live in database 0:
//!
//! - keys are `rare:*`, in databases [`HOME_DB`] (home), [`OTHER_DB`]
//!   (MOVE and COPY DB target) and [`SWAP_DBS`] (SWAPDB, FLUSHDB), which
//!   no other workload selects;
//! - server-wide commands go in a harmless form: CONFIG SET of a parameter
//!   to its default, CLIENT KILL and CLIENT UNBLOCK of an id no client has
//!   (filters are ANDed), CLIENT LIST of `rare`'s own type;
//! - the commands that have no harmless form (FLUSHALL, CLIENT PAUSE and
//!   UNPAUSE, SCRIPT FLUSH, FUNCTION FLUSH, MONITOR, QUIT) are sent only by `rare-solo`,
//!   which a seed draws (swarm) as the run's only workload.
//!
//! Every reply is judged: the reference model predicts the commands it
//! models (the rest it declines explicitly, marking what they touch
//! unknown), and `check::rare` fails the run on an error reply to a request
//! that [`expected_error`] does not list, or on a success where it lists
//! one.

use std::collections::VecDeque;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{Request, Workload, WorkloadKind};
use crate::history::Delivery;
use crate::reply_mode::ReplyState;

mod bits;
mod data;
mod functions;
mod lifecycle;
mod server;
mod streams;

/// Times the whole script is played; then the client stops.
pub const RARE_PASSES: u32 = 2;
/// Requests a `rare` client may send at least, whatever the run's budget
/// (two passes of the script fit).
pub const RARE_OPS_MIN: u64 = 2_000;
/// The home database, the MOVE/COPY target, and the pair SWAPDB swaps.
pub const HOME_DB: usize = 10;
pub const OTHER_DB: usize = 11;
pub const SWAP_DBS: [usize; 2] = [12, 13];
/// Pause between batches: long enough for a 1 ms PX to expire in between.
pub const RARE_THINK_NS_MIN: u64 = 2_000_000;
pub const RARE_THINK_NS_MAX: u64 = 3_000_000;

/// One request from a space-separated line (no argument holds a space).
pub(crate) fn r(line: &str) -> Request {
    line.split(' ').map(|a| a.as_bytes().to_vec()).collect()
}

/// Builds the batches of one section.
pub(crate) struct Section {
    batches: Vec<Vec<Request>>,
    /// Unique suffix for values and pub/sub payloads.
    seq: u64,
    client: u32,
}

impl Section {
    /// Starts a batch in database `db`.
    pub(crate) fn batch(&mut self, db: usize) -> &mut Self {
        self.batches.push(vec![r(&format!("SELECT {db}"))]);
        self
    }

    /// Appends one request (a space-separated line) to the current batch.
    pub(crate) fn add(&mut self, line: &str) -> &mut Self {
        self.push(r(line))
    }

    /// Appends one request given as arguments.
    pub(crate) fn push(&mut self, request: Request) -> &mut Self {
        self.batches
            .last_mut()
            .expect("a batch was started")
            .push(request);
        self
    }

    /// A value or payload never used before in this run.
    pub(crate) fn unique(&mut self) -> String {
        self.seq += 1;
        format!("rare{}:{}", self.client, self.seq)
    }
}

/// A section: fills `s` with its batches.
pub(crate) type SectionFn = fn(&mut Section, &mut ChaCha8Rng);

pub struct Rare {
    client: u32,
    solo: bool,
    passes_left: u32,
    script: VecDeque<Vec<Request>>,
    seq: u64,
    /// Subscriptions held on this connection (channels, patterns, shard
    /// channels), for the number of confirmations an unsubscribe gets.
    subscribed_count: usize,
    /// CLIENT REPLY on this connection: which requests get no reply.
    reply: ReplyState,
}

impl Rare {
    pub fn new(client: u32, solo: bool) -> Rare {
        Rare {
            client,
            solo,
            passes_left: RARE_PASSES,
            script: VecDeque::new(),
            seq: 0,
            subscribed_count: 0,
            reply: ReplyState::default(),
        }
    }

    fn sections(&self) -> Vec<SectionFn> {
        let mut all: Vec<SectionFn> = Vec::new();
        all.extend_from_slice(data::SECTIONS);
        all.extend_from_slice(server::SECTIONS);
        all.extend_from_slice(lifecycle::SECTIONS);
        all.extend_from_slice(bits::SECTIONS);
        all.extend_from_slice(streams::SECTIONS);
        all.extend_from_slice(functions::SECTIONS);
        if self.solo {
            all.extend_from_slice(server::SOLO_SECTIONS);
            all.extend_from_slice(functions::SOLO_SECTIONS);
        }
        all
    }

    fn plan_pass(&mut self, rng: &mut ChaCha8Rng) {
        let mut sections = self.sections();
        for i in (1..sections.len()).rev() {
            let j = rng.gen_range(0..=i);
            sections.swap(i, j);
        }
        let mut s = Section {
            batches: Vec::new(),
            seq: self.seq,
            client: self.client,
        };
        for section in sections {
            section(&mut s, rng);
        }
        if self.solo && self.passes_left == 0 {
            server::solo_monitor(&mut s, rng);
        }
        self.seq = s.seq;
        self.script.extend(s.batches);
    }
}

impl Workload for Rare {
    fn kind(&self) -> WorkloadKind {
        if self.solo {
            WorkloadKind::RareSolo
        } else {
            WorkloadKind::Rare
        }
    }

    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        if self.script.is_empty() && self.passes_left > 0 {
            self.passes_left -= 1;
            self.plan_pass(rng);
        }
        match self.script.pop_front() {
            Some(b) => batch.extend(b),
            // Only after `finished`, which stops the client first.
            None => batch.push(r("PING")),
        }
        debug_assert!(batch.len() <= super::BATCH_REQUESTS_MAX);
    }

    fn reply_frames(&mut self, request: &Request) -> usize {
        let name = request[0].to_ascii_lowercase();
        let answered = self.reply.request(request);
        // A CLIENT REPLY takes effect at once only outside MULTI, and
        // confirmations are pushes that CLIENT REPLY OFF does not drop:
        // the script sends neither in a silenced stretch.
        debug_assert!(
            self.reply.is_on()
                || !matches!(name.as_slice(), b"multi" | b"subscribe" | b"unsubscribe")
        );
        if !answered {
            return 0;
        }
        match name.as_slice() {
            b"subscribe" | b"psubscribe" | b"ssubscribe" => {
                self.subscribed_count += request.len() - 1;
                request.len() - 1
            }
            b"unsubscribe" | b"punsubscribe" | b"sunsubscribe" => {
                // The script always names what it drops.
                self.subscribed_count = self.subscribed_count.saturating_sub(request.len() - 1);
                (request.len() - 1).max(1)
            }
            b"reset" => {
                self.subscribed_count = 0;
                1
            }
            _ => 1,
        }
    }

    fn takes_messages(&self) -> bool {
        true
    }

    fn on_message(&mut self, _delivery: &Delivery) {}

    fn on_connect(&mut self) {
        self.subscribed_count = 0;
        self.reply = ReplyState::default();
    }

    fn think_ns(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        rng.gen_range(RARE_THINK_NS_MIN..=RARE_THINK_NS_MAX)
    }

    fn finished(&self) -> bool {
        self.passes_left == 0 && self.script.is_empty()
    }
}

/// The error reply (its first words) that `rare` expects to `args`, or
/// `None` when it expects success. These are refusals Redis 7.0.15 gives
/// too in this configuration (checked with redis-cli against redis-server
/// 7.0.15; CLIENT SETINFO, which seedkv answers, is a 7.2 command that
/// 7.0.15 does not know).
/// [`expected_error`]'s answer for a request that may succeed or fail
/// with the run's storage (SAVE, BGSAVE, BGREWRITEAOF: `-ERR` without a
/// disk, a success or "already in progress" with one).
pub const ANY_REPLY: &str = "*";

pub fn expected_error(args: &[Vec<u8>]) -> Option<&'static str> {
    let lower: Vec<String> = args
        .iter()
        .take(3)
        .map(|a| String::from_utf8_lossy(a).to_ascii_lowercase())
        .collect();
    let word = |i: usize| lower.get(i).map_or("", |s| s.as_str());
    match (word(0), word(1)) {
        ("debug", _) => Some("ERR DEBUG command not allowed"),
        ("psync" | "sync", _) => Some("ERR Filtered replica requires EOF capability"),
        ("save" | "bgsave" | "bgrewriteaof", _) => Some(ANY_REPLY),
        ("config", "rewrite") => Some("ERR The server is running without a config file"),
        ("script" | "function", "kill") => Some("NOTBUSY"),
        ("auth", _) if args.len() == 2 => Some("ERR AUTH <password> called without any password"),
        ("auth", "rare-nouser") => Some("WRONGPASS"),
        ("acl", "load" | "save") => {
            Some("ERR This Redis instance is not configured to use an ACL file")
        }
        // No replica ever connects in a single-node run (Redis checks
        // for replicas before the TO target).
        ("failover", "abort") => Some("ERR No failover in progress."),
        ("failover", _) => Some("ERR FAILOVER requires connected replicas."),
        ("object", "freq") => Some("ERR An LFU maxmemory policy is not selected"),
        ("latency", "graph") => Some("ERR No samples available for event"),
        ("client", "kill") if args.len() == 3 => Some("ERR No such client"),
        ("client", "reply") if !matches!(word(2), "on" | "off" | "skip") => {
            Some("ERR syntax error")
        }
        _ => None,
    }
}
