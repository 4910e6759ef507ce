//! Streams and consumer groups on shared `strm:` keys. Every client plays
//! every role, batch by batch:
//!
//! - **producer**: XADD with `*`, `<ms>-*` and explicit IDs (some of them
//!   too small, refused), each entry tagged `t <client>:<n>`, now and then
//!   with an exact MAXLEN trim;
//! - **reader**: XRANGE, XREVRANGE (full, bounded, exclusive, COUNT),
//!   XLEN, XREAD, and XREAD BLOCK alone in its batch with a timeout of a
//!   few milliseconds;
//! - **group worker**: XGROUP CREATE ... MKSTREAM (BUSYGROUP is expected),
//!   XREADGROUP `>` with COUNT (BLOCK alone in its batch), XACK of what it
//!   holds, XREADGROUP of its own history, XPENDING summary and extended;
//! - **claimer**: XCLAIM of entries another consumer left pending (learnt
//!   from XPENDING), XAUTOCLAIM, both with small min-idle times;
//! - a worker **crashes**: it forgets what it holds and goes on as a new
//!   consumer, so its pending entries stay until someone claims them;
//! - **trimmer**: XTRIM MAXLEN (`=` and `~`) and MINID, XDEL, and rarely
//!   DEL of a whole stream (groups and all).
//!
//! `check::streams` judges IDs, ranges and every delivery.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use seedkv_engine::resp::Frame;

use super::{Request, Workload, WorkloadKind};

/// Streams `strm:0 ..`.
pub const STREAM_KEYS_COUNT: u32 = 2;
/// Consumer groups per stream.
pub const STREAM_GROUPS: &[&str] = &["g0", "g1"];
/// BLOCK timeouts are drawn in 1 ..= this many milliseconds.
pub const STREAM_BLOCK_MS_MAX: u64 = 30;
/// COUNT of reads and claims at most.
pub const STREAM_COUNT_MAX: u32 = 6;
/// Trims keep between these many entries.
pub const STREAM_KEEP_MIN: u32 = 10;
pub const STREAM_KEEP_MAX: u32 = 60;
/// Entries a client remembers holding (pending for one of its
/// consumers), and IDs of others' pending entries it may claim.
pub const STREAM_HELD_MAX: usize = 64;
/// Longest pause between batches.
pub const STREAM_THINK_NS_MAX: u64 = 2_000_000;

/// The key of stream `i`.
pub fn stream_key(i: u32) -> Vec<u8> {
    format!("strm:{i}").into_bytes()
}

/// A stream ID `ms-seq` parsed.
pub fn parse_stream_id(text: &[u8]) -> Option<(u64, u64)> {
    let text = std::str::from_utf8(text).ok()?;
    let (ms, seq) = text.split_once('-')?;
    Some((ms.parse().ok()?, seq.parse().ok()?))
}

fn id_text((ms, seq): (u64, u64)) -> Vec<u8> {
    format!("{ms}-{seq}").into_bytes()
}

/// An entry a consumer of ours holds (delivered, not acknowledged).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Held {
    key: Vec<u8>,
    group: Vec<u8>,
    id: (u64, u64),
}

pub struct Streams {
    client: u32,
    /// Entries added so far (the tag's counter).
    added_count: u64,
    /// Crashes so far: the consumer's name carries it.
    epoch: u32,
    /// The largest ID seen per stream (replies of XADD and reads).
    last_seen: Vec<Option<(u64, u64)>>,
    /// Entries our current consumer holds.
    held: Vec<Held>,
    /// Pending entries of other consumers, from XPENDING.
    others: Vec<Held>,
    /// IDs seen in replies, for XDEL and range bounds.
    seen: Vec<(Vec<u8>, (u64, u64))>,
    /// A (key, group) a reply said did not exist: created next.
    missing_group: Option<(Vec<u8>, Vec<u8>)>,
}

fn pick<T: Clone>(rng: &mut ChaCha8Rng, items: &[T]) -> T {
    items[rng.gen_range(0..items.len())].clone()
}

fn count(rng: &mut ChaCha8Rng) -> Vec<u8> {
    rng.gen_range(1..=STREAM_COUNT_MAX).to_string().into_bytes()
}

fn block_ms(rng: &mut ChaCha8Rng) -> Vec<u8> {
    rng.gen_range(1..=STREAM_BLOCK_MS_MAX)
        .to_string()
        .into_bytes()
}

fn min_idle(rng: &mut ChaCha8Rng) -> Vec<u8> {
    pick(rng, &[0u32, 0, 1, 5, 10]).to_string().into_bytes()
}

/// The entries of a read reply: `[[key, [[id, fields]...]]...]` (a map in
/// RESP3), as (key, id) pairs.
fn read_reply_ids(reply: &Frame) -> Vec<(Vec<u8>, (u64, u64))> {
    let mut out = Vec::new();
    let mut per_key = |key: &Frame, entries: &Frame| {
        let Frame::Bulk(key) = key else { return };
        for id in entry_ids(entries) {
            out.push((key.clone(), id));
        }
    };
    match reply {
        Frame::Array(items) => {
            for item in items {
                if let Frame::Array(pair) = item {
                    if let [key, entries] = pair.as_slice() {
                        per_key(key, entries);
                    }
                }
            }
        }
        Frame::Map(pairs) => {
            for (key, entries) in pairs {
                per_key(key, entries);
            }
        }
        _ => {}
    }
    out
}

/// The IDs of an array of entries `[id, fields]` (or of bare IDs).
fn entry_ids(entries: &Frame) -> Vec<(u64, u64)> {
    let Frame::Array(items) = entries else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|e| match e {
            Frame::Bulk(id) => parse_stream_id(id),
            Frame::Array(pair) => match pair.first() {
                Some(Frame::Bulk(id)) => parse_stream_id(id),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

impl Streams {
    pub fn new(client: u32) -> Streams {
        Streams {
            client,
            added_count: 0,
            epoch: 0,
            last_seen: vec![None; STREAM_KEYS_COUNT as usize],
            held: Vec::new(),
            others: Vec::new(),
            seen: Vec::new(),
            missing_group: None,
        }
    }

    fn consumer(&self) -> Vec<u8> {
        format!("c{}-{}", self.client, self.epoch).into_bytes()
    }

    fn key(rng: &mut ChaCha8Rng) -> (u32, Vec<u8>) {
        let i = rng.gen_range(0..STREAM_KEYS_COUNT);
        (i, stream_key(i))
    }

    fn group(rng: &mut ChaCha8Rng) -> Vec<u8> {
        pick(rng, STREAM_GROUPS).as_bytes().to_vec()
    }

    fn note_seen(&mut self, key: &[u8], id: (u64, u64)) {
        if let Some(i) = std::str::from_utf8(key)
            .ok()
            .and_then(|k| k.strip_prefix("strm:"))
            .and_then(|i| i.parse::<usize>().ok())
        {
            if let Some(last) = self.last_seen.get_mut(i) {
                *last = Some(last.map_or(id, |l| l.max(id)));
            }
        }
        if self.seen.len() >= STREAM_HELD_MAX {
            self.seen.remove(0);
        }
        self.seen.push((key.to_vec(), id));
    }

    fn hold(&mut self, held: Held) {
        if self.held.contains(&held) {
            return;
        }
        if self.held.len() >= STREAM_HELD_MAX {
            self.held.remove(0);
        }
        self.held.push(held);
    }

    /// The ID argument of an XADD: mostly `*`, else built on the largest
    /// ID seen (`<ms>-*`, or explicit; some are too small).
    fn add_id(&self, rng: &mut ChaCha8Rng, k: u32) -> Vec<u8> {
        let Some((ms, seq)) = self.last_seen[k as usize] else {
            return b"*".to_vec();
        };
        match rng.gen_range(0..100) {
            0..=59 => b"*".to_vec(),
            60..=74 => format!("{}-*", ms + rng.gen_range(0..=8)).into_bytes(),
            75..=82 => id_text((ms, seq + rng.gen_range(1..=3))),
            83..=95 => id_text((ms + rng.gen_range(1..=8), rng.gen_range(0..=2))),
            _ => id_text((ms.saturating_sub(rng.gen_range(0..=1)), seq)),
        }
    }

    fn produce(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        for _ in 0..rng.gen_range(1..=3) {
            let (k, key) = Self::key(rng);
            let mut r = vec![b"XADD".to_vec(), key];
            if rng.gen_bool(0.05) {
                r.push(b"NOMKSTREAM".to_vec());
            }
            if rng.gen_bool(0.1) {
                r.push(b"MAXLEN".to_vec());
                r.push(b"=".to_vec());
                r.push(
                    rng.gen_range(STREAM_KEEP_MIN..=STREAM_KEEP_MAX)
                        .to_string()
                        .into_bytes(),
                );
            }
            r.push(self.add_id(rng, k));
            self.added_count += 1;
            r.push(b"t".to_vec());
            r.push(format!("{}:{}", self.client, self.added_count).into_bytes());
            if rng.gen_bool(0.3) {
                r.push(b"v".to_vec());
                r.push(rng.gen_range(0..1000u32).to_string().into_bytes());
            }
            batch.push(r);
        }
    }

    /// A range bound: `-`/`+`, a seen ID, exclusive or not, or a bare ms.
    fn bound(&self, rng: &mut ChaCha8Rng, key: &[u8], open: &[u8]) -> Vec<u8> {
        let seen: Vec<(u64, u64)> = self
            .seen
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, id)| *id)
            .collect();
        if seen.is_empty() || rng.gen_bool(0.4) {
            return open.to_vec();
        }
        let id = pick(rng, &seen);
        match rng.gen_range(0..3) {
            0 => id_text(id),
            1 => [b"(".as_slice(), &id_text(id)].concat(),
            _ => id.0.to_string().into_bytes(),
        }
    }

    fn read(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        let (k, key) = Self::key(rng);
        let with_count = |mut r: Request, rng: &mut ChaCha8Rng| {
            if rng.gen_bool(0.6) {
                r.push(b"COUNT".to_vec());
                r.push(count(rng));
            }
            r
        };
        match rng.gen_range(0..100) {
            0..=29 => {
                let (a, b) = (self.bound(rng, &key, b"-"), self.bound(rng, &key, b"+"));
                batch.push(with_count(vec![b"XRANGE".to_vec(), key, a, b], rng));
            }
            30..=49 => {
                let (a, b) = (self.bound(rng, &key, b"+"), self.bound(rng, &key, b"-"));
                batch.push(with_count(vec![b"XREVRANGE".to_vec(), key, a, b], rng));
            }
            50..=64 => batch.push(vec![b"XLEN".to_vec(), key]),
            _ => {
                let from = match self.last_seen[k as usize] {
                    Some((ms, seq)) if rng.gen_bool(0.6) => {
                        id_text((ms.saturating_sub(rng.gen_range(0..=2)), seq))
                    }
                    _ => b"0".to_vec(),
                };
                let mut r = with_count(vec![b"XREAD".to_vec()], rng);
                r.push(b"STREAMS".to_vec());
                if rng.gen_bool(0.3) {
                    let other = stream_key((k + 1) % STREAM_KEYS_COUNT);
                    r.extend([key, other, from, b"0".to_vec()]);
                } else {
                    r.extend([key, from]);
                }
                batch.push(r);
            }
        }
    }

    /// XREAD BLOCK, alone in its batch.
    fn read_blocking(&mut self, rng: &mut ChaCha8Rng) -> Request {
        let (k, key) = Self::key(rng);
        let mut r = vec![b"XREAD".to_vec()];
        if rng.gen_bool(0.5) {
            r.push(b"COUNT".to_vec());
            r.push(count(rng));
        }
        r.push(b"BLOCK".to_vec());
        r.push(block_ms(rng));
        r.push(b"STREAMS".to_vec());
        let from = match self.last_seen[k as usize] {
            Some(id) if rng.gen_bool(0.3) => id_text(id),
            _ => b"$".to_vec(),
        };
        r.extend([key, from]);
        r
    }

    fn create_group(rng: &mut ChaCha8Rng, key: &[u8], group: &[u8]) -> Request {
        let from: &[u8] = if rng.gen_bool(0.8) { b"0" } else { b"$" };
        vec![
            b"XGROUP".to_vec(),
            b"CREATE".to_vec(),
            key.to_vec(),
            group.to_vec(),
            from.to_vec(),
            b"MKSTREAM".to_vec(),
        ]
    }

    fn read_group(&self, rng: &mut ChaCha8Rng, key: &[u8], group: &[u8], block: bool) -> Request {
        let mut r = vec![
            b"XREADGROUP".to_vec(),
            b"GROUP".to_vec(),
            group.to_vec(),
            self.consumer(),
            b"COUNT".to_vec(),
            count(rng),
        ];
        if block {
            r.push(b"BLOCK".to_vec());
            r.push(block_ms(rng));
        }
        if rng.gen_bool(0.03) {
            r.push(b"NOACK".to_vec());
        }
        r.extend([b"STREAMS".to_vec(), key.to_vec(), b">".to_vec()]);
        r
    }

    /// XACK of some held entries of one key and group.
    fn ack(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        let Some(first) = self.held.first().cloned() else {
            return;
        };
        let n = rng.gen_range(1..=4);
        let mut r = vec![b"XACK".to_vec(), first.key.clone(), first.group.clone()];
        let mut taken = 0;
        self.held.retain(|h| {
            if taken < n && h.key == first.key && h.group == first.group {
                r.push(id_text(h.id));
                taken += 1;
                false
            } else {
                true
            }
        });
        if rng.gen_bool(0.1) {
            r.push(id_text(first.id)); // acked twice in one call
        }
        batch.push(r);
    }

    fn work(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        let (key, group) = match self.missing_group.take() {
            Some((key, group)) => {
                batch.push(Self::create_group(rng, &key, &group));
                (key, group)
            }
            None => {
                let (_, key) = Self::key(rng);
                let group = Self::group(rng);
                if rng.gen_bool(0.1) {
                    batch.push(Self::create_group(rng, &key, &group));
                }
                (key, group)
            }
        };
        batch.push(self.read_group(rng, &key, &group, false));
        if rng.gen_bool(0.7) {
            self.ack(rng, batch);
        }
    }

    fn claim(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        let (_, key) = Self::key(rng);
        let group = Self::group(rng);
        match rng.gen_range(0..100) {
            0..=39 => {
                let mut r = vec![
                    b"XPENDING".to_vec(),
                    key,
                    group,
                    b"-".to_vec(),
                    b"+".to_vec(),
                    b"20".to_vec(),
                ];
                if rng.gen_bool(0.2) {
                    r.insert(3, b"IDLE".to_vec());
                    r.insert(4, min_idle(rng));
                }
                batch.push(r);
            }
            40..=79 if !self.others.is_empty() => {
                // The most recently learnt first: older ones were likely
                // claimed or acknowledged since.
                self.others.reverse();
                let target = pick(rng, &self.others);
                let mut r = vec![
                    b"XCLAIM".to_vec(),
                    target.key.clone(),
                    target.group.clone(),
                    self.consumer(),
                    min_idle(rng),
                ];
                for h in self
                    .others
                    .iter()
                    .filter(|h| h.key == target.key && h.group == target.group)
                    .take(4)
                {
                    r.push(id_text(h.id));
                }
                if rng.gen_bool(0.3) {
                    r.push(b"JUSTID".to_vec());
                }
                self.others
                    .retain(|h| !(h.key == target.key && h.group == target.group));
                batch.push(r);
            }
            _ => {
                let mut r = vec![
                    b"XAUTOCLAIM".to_vec(),
                    key,
                    group,
                    self.consumer(),
                    min_idle(rng),
                    b"0".to_vec(),
                    b"COUNT".to_vec(),
                    count(rng),
                ];
                if rng.gen_bool(0.3) {
                    r.push(b"JUSTID".to_vec());
                }
                batch.push(r);
            }
        }
    }

    fn inspect(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        let (_, key) = Self::key(rng);
        let group = Self::group(rng);
        match rng.gen_range(0..10) {
            0..=4 => batch.push(vec![b"XPENDING".to_vec(), key, group]),
            5 => batch.push(vec![
                b"XPENDING".to_vec(),
                key,
                group,
                b"-".to_vec(),
                b"+".to_vec(),
                b"50".to_vec(),
                self.consumer(),
            ]),
            _ => batch.push(vec![
                b"XREADGROUP".to_vec(),
                b"GROUP".to_vec(),
                group,
                self.consumer(),
                b"STREAMS".to_vec(),
                key,
                b"0".to_vec(),
            ]),
        }
    }

    fn trim(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        let (k, key) = Self::key(rng);
        match rng.gen_range(0..100) {
            0..=39 => {
                let exact: &[u8] = if rng.gen_bool(0.5) { b"=" } else { b"~" };
                let n = rng.gen_range(STREAM_KEEP_MIN..=STREAM_KEEP_MAX);
                batch.push(vec![
                    b"XTRIM".to_vec(),
                    key,
                    b"MAXLEN".to_vec(),
                    exact.to_vec(),
                    n.to_string().into_bytes(),
                ]);
            }
            40..=59 => {
                let Some((ms, _)) = self.last_seen[k as usize] else {
                    return;
                };
                let min = format!("{}-0", ms.saturating_sub(rng.gen_range(5..=50)));
                batch.push(vec![
                    b"XTRIM".to_vec(),
                    key,
                    b"MINID".to_vec(),
                    min.into_bytes(),
                ]);
            }
            60..=89 => {
                let seen: Vec<(u64, u64)> = self
                    .seen
                    .iter()
                    .filter(|(s, _)| *s == key)
                    .map(|(_, id)| *id)
                    .collect();
                if seen.is_empty() {
                    return;
                }
                let mut r = vec![b"XDEL".to_vec(), key];
                for _ in 0..rng.gen_range(1..=3) {
                    r.push(id_text(pick(rng, &seen)));
                }
                batch.push(r);
            }
            _ => batch.push(vec![b"DEL".to_vec(), key]),
        }
    }
}

impl Workload for Streams {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Streams
    }

    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        match rng.gen_range(0..100) {
            0..=27 => self.produce(rng, batch),
            28..=39 => self.read(rng, batch),
            // Blocking reads are alone in their batch: they park with
            // nothing of their own ahead.
            40..=45 => batch.push(self.read_blocking(rng)),
            46..=53 => {
                let (_, key) = Self::key(rng);
                let group = Self::group(rng);
                batch.push(self.read_group(rng, &key, &group, true));
            }
            54..=73 => self.work(rng, batch),
            74..=83 => self.claim(rng, batch),
            84..=89 => self.inspect(rng, batch),
            90..=97 => self.trim(rng, batch),
            _ => {
                // A crash: what the consumer held stays pending under its
                // name, for the others to claim.
                self.epoch += 1;
                self.held.clear();
            }
        }
        if batch.is_empty() {
            batch.push(vec![b"XLEN".to_vec(), Self::key(rng).1]);
        }
    }

    fn on_reply(&mut self, request: &Request, reply: Option<&Frame>) {
        let Some(reply) = reply else { return };
        let name = request[0].to_ascii_uppercase();
        if let Frame::Error(e) = reply {
            if e.starts_with(b"NOGROUP") && request.len() > 2 {
                let (key, group) = match name.as_slice() {
                    b"XREADGROUP" => (request[request.len() - 2].clone(), request[2].clone()),
                    _ => (request[1].clone(), request[2].clone()),
                };
                self.missing_group = Some((key, group));
            }
            return;
        }
        match name.as_slice() {
            b"XADD" => {
                if let Frame::Bulk(id) = reply {
                    if let Some(id) = parse_stream_id(id) {
                        self.note_seen(&request[1].clone(), id);
                    }
                }
            }
            b"XRANGE" | b"XREVRANGE" => {
                for id in entry_ids(reply) {
                    self.note_seen(&request[1].clone(), id);
                }
            }
            b"XREAD" => {
                for (key, id) in read_reply_ids(reply) {
                    self.note_seen(&key, id);
                }
            }
            b"XREADGROUP" => {
                let noack = request.iter().any(|a| a.eq_ignore_ascii_case(b"NOACK"));
                let group = request[2].clone();
                for (key, id) in read_reply_ids(reply) {
                    self.note_seen(&key, id);
                    if !noack && request[3] == self.consumer() {
                        self.hold(Held {
                            key,
                            group: group.clone(),
                            id,
                        });
                    }
                }
            }
            b"XCLAIM" if request[3] == self.consumer() => {
                for id in entry_ids(reply) {
                    self.hold(Held {
                        key: request[1].clone(),
                        group: request[2].clone(),
                        id,
                    });
                }
            }
            b"XAUTOCLAIM" if request[3] == self.consumer() => {
                if let Frame::Array(parts) = reply {
                    if let Some(claimed) = parts.get(1) {
                        for id in entry_ids(claimed) {
                            self.hold(Held {
                                key: request[1].clone(),
                                group: request[2].clone(),
                                id,
                            });
                        }
                    }
                }
            }
            b"XPENDING" if request.len() >= 6 => {
                let Frame::Array(rows) = reply else { return };
                let me = self.consumer();
                for row in rows {
                    let Frame::Array(cols) = row else { continue };
                    let (Some(Frame::Bulk(id)), Some(Frame::Bulk(owner))) =
                        (cols.first(), cols.get(1))
                    else {
                        continue;
                    };
                    let Some(id) = parse_stream_id(id) else {
                        continue;
                    };
                    let held = Held {
                        key: request[1].clone(),
                        group: request[2].clone(),
                        id,
                    };
                    if *owner != me && !self.others.contains(&held) {
                        if self.others.len() >= STREAM_HELD_MAX {
                            self.others.remove(0);
                        }
                        self.others.push(held);
                    }
                }
            }
            _ => {}
        }
    }

    fn think_ns(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        rng.gen_range(0..=STREAM_THINK_NS_MAX)
    }
}
