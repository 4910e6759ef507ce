//! Client-side caching (CLIENT TRACKING): caching clients that answer
//! repeated GETs from a local cache and drop what the server invalidates,
//! against writers of the same keys, for `check::tracking`.
//!
//! A client's role follows its index (`client % 4`), so any four
//! consecutive tracking clients hold every role:
//!
//! - 0: a **writer**: SET (some with PX), DEL, PEXPIRE and, rarely,
//!   FLUSHDB of the workload's database.
//! - 1: a RESP3 **default** tracker: every GET it sends is remembered by
//!   the server, and invalidated once.
//! - 2: a RESP3 **BCAST** tracker with prefixes: it caches only keys under
//!   them, and is told of every write under them.
//! - 3: a RESP3 **OPTIN** tracker: a GET that follows CLIENT CACHING yes is
//!   cached; now and then one without it is not.
//!
//! Every connection starts with SELECT of the workload's database (so a
//! FLUSHDB wipes only `trk:` keys), and a tracker's with HELLO 3 and CLIENT
//! TRACKING on: the cache is used once that reply is `+OK`. A new
//! connection starts with an empty cache, as the server forgot the old
//! connection's tracking. A read answered from the cache is reported to
//! the history (see [`Workload::take_cache_serves`]), which is what the
//! checker judges.

use std::collections::{BTreeMap, VecDeque};

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use seedkv_engine::resp::Frame;

use super::{request, Request, Workload, WorkloadKind};

/// Keys `trk:0 ..`.
pub const KEYS_COUNT: u32 = 6;
/// The database the workload's keys live in (the rare workload's are
/// 10-13, everyone else's 0).
pub const DB: u32 = 9;
/// The BCAST tracker's prefixes: two of the keys.
pub const BCAST_PREFIXES: &[&[u8]] = &[b"trk:1", b"trk:3"];
/// Reads per tracker batch, and writes per writer batch, at most.
pub const READS_PER_BATCH_MAX: u32 = 4;
pub const WRITES_PER_BATCH_MAX: u32 = 2;
/// A PX write's lifetime at most, so that some keys expire during a run.
pub const PX_MS_MAX: u64 = 20;
/// Longest pause between batches of a writer and of a tracker.
pub const WRITER_THINK_NS_MAX: u64 = 800_000;
pub const TRACKER_THINK_NS_MAX: u64 = 300_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Writer,
    Default,
    Bcast,
    Optin,
}

pub struct Tracking {
    client: u32,
    role: Role,
    /// Values written so far (each write's value is unique in the run).
    written_count: u64,
    /// The connection's setup (SELECT, HELLO 3, CLIENT TRACKING) was sent.
    setup_sent: bool,
    /// CLIENT TRACKING on was answered `+OK` on this connection.
    tracking_on: bool,
    /// The local cache: key -> value (`None`: cached as absent). Bounded
    /// by the key space ([`KEYS_COUNT`]).
    cache: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    /// For each GET in flight, in order: whether its reply may be cached.
    gets_in_flight: VecDeque<bool>,
    /// Reads the last batch answered from the cache.
    served: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    /// Invalidations received, for the trace of a run (the checker reads
    /// the history, not this).
    pub invalidations_count: u64,
}

fn key(rng: &mut ChaCha8Rng) -> Vec<u8> {
    format!("trk:{}", rng.gen_range(0..KEYS_COUNT)).into_bytes()
}

impl Tracking {
    pub fn new(client: u32) -> Tracking {
        let role = match client % 4 {
            0 => Role::Writer,
            1 => Role::Default,
            2 => Role::Bcast,
            _ => Role::Optin,
        };
        Tracking {
            client,
            role,
            written_count: 0,
            setup_sent: false,
            tracking_on: false,
            cache: BTreeMap::new(),
            gets_in_flight: VecDeque::new(),
            served: Vec::new(),
            invalidations_count: 0,
        }
    }

    fn setup(&self, batch: &mut Vec<Request>) {
        batch.push(request(&[b"SELECT", DB.to_string().as_bytes()]));
        let tracking: Request = match self.role {
            Role::Writer => return,
            Role::Default => request(&[b"CLIENT", b"TRACKING", b"on"]),
            Role::Bcast => {
                let mut r = request(&[b"CLIENT", b"TRACKING", b"on", b"BCAST"]);
                for p in BCAST_PREFIXES {
                    r.push(b"PREFIX".to_vec());
                    r.push(p.to_vec());
                }
                r
            }
            Role::Optin => request(&[b"CLIENT", b"TRACKING", b"on", b"OPTIN"]),
        };
        batch.push(request(&[b"HELLO", b"3"]));
        batch.push(tracking);
    }

    fn value(&mut self) -> Vec<u8> {
        self.written_count += 1;
        format!("{}.{}", self.client, self.written_count).into_bytes()
    }

    fn write(&mut self, rng: &mut ChaCha8Rng) -> Request {
        let k = key(rng);
        match rng.gen_range(0..100) {
            0..=59 => {
                let v = self.value();
                request(&[b"SET", &k, &v])
            }
            60..=69 => {
                let v = self.value();
                let px = rng.gen_range(1..=PX_MS_MAX).to_string();
                request(&[b"SET", &k, &v, b"PX", px.as_bytes()])
            }
            70..=86 => request(&[b"DEL", &k]),
            87..=96 => {
                let px = rng.gen_range(0..=PX_MS_MAX).to_string();
                request(&[b"PEXPIRE", &k, px.as_bytes()])
            }
            _ => request(&[b"FLUSHDB"]),
        }
    }

    /// Whether this tracker is told about writes to `k` once it read it.
    fn covers(&self, k: &[u8]) -> bool {
        match self.role {
            Role::Writer => false,
            Role::Bcast => BCAST_PREFIXES.iter().any(|p| k.starts_with(p)),
            Role::Default | Role::Optin => true,
        }
    }

    /// One read: answered from the cache when it holds the key, sent
    /// otherwise (after CLIENT CACHING yes for OPTIN, most of the time).
    fn read(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        let k = key(rng);
        if let Some(v) = self.cache.get(&k) {
            self.served.push((k, v.clone()));
            return;
        }
        let mut cacheable = self.tracking_on && self.covers(&k);
        if self.role == Role::Optin {
            if rng.gen_bool(0.8) {
                batch.push(request(&[b"CLIENT", b"CACHING", b"yes"]));
            } else {
                cacheable = false;
            }
        }
        batch.push(request(&[b"GET", &k]));
        self.gets_in_flight.push_back(cacheable);
    }
}

impl Workload for Tracking {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Tracking
    }

    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        if !self.setup_sent {
            self.setup_sent = true;
            self.setup(batch);
        }
        if self.role == Role::Writer {
            for _ in 0..rng.gen_range(1..=WRITES_PER_BATCH_MAX) {
                let r = self.write(rng);
                batch.push(r);
            }
            return;
        }
        for _ in 0..rng.gen_range(1..=READS_PER_BATCH_MAX) {
            self.read(rng, batch);
        }
        if batch.is_empty() {
            // Every read came from the cache; a PING still shows the
            // client what the server did meanwhile.
            batch.push(request(&[b"PING"]));
        }
    }

    fn on_reply(&mut self, request: &Request, reply: Option<&Frame>) {
        let name = request[0].to_ascii_uppercase();
        match name.as_slice() {
            b"CLIENT" if request[1].eq_ignore_ascii_case(b"TRACKING") => {
                self.tracking_on = matches!(reply, Some(Frame::Simple(s)) if s == b"OK");
            }
            b"GET" => {
                let cacheable = self.gets_in_flight.pop_front().unwrap_or(false);
                let value = match reply {
                    Some(Frame::Bulk(v)) => Some(v.clone()),
                    Some(Frame::Null) => None,
                    _ => return,
                };
                if cacheable && self.tracking_on {
                    self.cache.insert(request[1].clone(), value);
                }
            }
            _ => {}
        }
    }

    fn takes_invalidations(&self) -> bool {
        self.role != Role::Writer
    }

    fn on_invalidation(&mut self, keys: Option<&[Vec<u8>]>) {
        self.invalidations_count += 1;
        match keys {
            None => self.cache.clear(),
            Some(keys) => {
                for k in keys {
                    self.cache.remove(k);
                }
            }
        }
    }

    fn take_cache_serves(&mut self, out: &mut Vec<(Vec<u8>, Option<Vec<u8>>)>) {
        out.append(&mut self.served);
    }

    fn on_connect(&mut self) {
        self.setup_sent = false;
        self.tracking_on = false;
        self.cache.clear();
        self.gets_in_flight.clear();
    }

    fn think_ns(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        match self.role {
            Role::Writer => rng.gen_range(0..=WRITER_THINK_NS_MAX),
            _ => rng.gen_range(0..=TRACKER_THINK_NS_MAX),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn bulk(v: &[u8]) -> Frame {
        Frame::Bulk(v.to_vec())
    }

    #[test]
    fn a_cached_read_is_served_until_invalidated() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut t = Tracking::new(1);
        t.on_reply(
            &request(&[b"CLIENT", b"TRACKING", b"on"]),
            Some(&Frame::Simple(b"OK".to_vec())),
        );
        t.gets_in_flight.push_back(true);
        t.on_reply(&request(&[b"GET", b"trk:0"]), Some(&bulk(b"v")));
        t.gets_in_flight.push_back(true);
        t.on_reply(&request(&[b"GET", b"trk:1"]), Some(&Frame::Null));
        assert_eq!(t.cache.len(), 2);
        t.on_invalidation(Some(&[b"trk:0".to_vec()]));
        assert_eq!(t.cache.get(b"trk:1".as_slice()), Some(&None));
        // Reads of trk:1 come from the cache; others go to the server.
        let mut batch = Vec::new();
        for _ in 0..50 {
            t.read(&mut rng, &mut batch);
        }
        assert!(t.served.iter().all(|(k, v)| k == b"trk:1" && v.is_none()));
        assert!(!t.served.is_empty());
        t.on_invalidation(None);
        assert!(t.cache.is_empty());
    }

    #[test]
    fn bcast_caches_only_its_prefixes_and_optin_only_after_caching_yes() {
        let b = Tracking::new(2);
        assert!(b.covers(b"trk:1") && !b.covers(b"trk:0"));
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let mut o = Tracking::new(3);
        o.tracking_on = true;
        let mut batch = Vec::new();
        for _ in 0..40 {
            o.read(&mut rng, &mut batch);
        }
        let gets: Vec<usize> = (0..batch.len())
            .filter(|&i| batch[i][0] == b"GET")
            .collect();
        let cacheable: Vec<bool> = o.gets_in_flight.iter().copied().collect();
        for (n, &i) in gets.iter().enumerate() {
            let after_caching = i > 0 && batch[i - 1][0] == b"CLIENT";
            assert_eq!(cacheable[n], after_caching);
        }
    }
}
