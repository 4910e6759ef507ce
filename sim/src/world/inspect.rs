//! The harness reads a restarted server's dataset through commands, as a
//! client would (SELECT, SCAN, TYPE, then GET, LRANGE, HGETALL, SMEMBERS
//! or ZRANGE WITHSCORES, and PTTL): the checkers trust nothing the engine
//! reports about itself.

use std::collections::BTreeMap;

use seedkv_engine::resp::encode::encode_request;
use seedkv_engine::resp::{Frame, FrameDecoder};
use seedkv_engine::{ClientId, ConnectInfo, Engine, Event, Now};

use super::disk::Disk;
use crate::persistence::digest::{digest, Canon};
use crate::persistence::record::ObservedKey;

/// Keys read at most (bounds the SCAN loop).
pub const INSPECT_KEYS_MAX: usize = 1_000_000;
/// Engine events one inspection command may produce at most.
const CALL_EVENTS_MAX: u64 = 1_000_000;
/// Bytes of a value shown in messages.
const SHOWN_BYTES_MAX: usize = 80;

pub(crate) struct Inspector<'a> {
    engine: &'a mut Engine,
    disk: &'a mut Disk,
    now: Now,
    id: ClientId,
    decoder: FrameDecoder,
}

impl<'a> Inspector<'a> {
    pub fn new(engine: &'a mut Engine, disk: &'a mut Disk, now: Now) -> Inspector<'a> {
        let info = ConnectInfo {
            addr: "10.0.0.253:1".into(),
            laddr: "10.0.0.254:6379".into(),
            fd: 7,
        };
        let id = engine.connect(now, info);
        Inspector {
            engine,
            disk,
            now,
            id,
            decoder: FrameDecoder::new(),
        }
    }

    /// Sends one command and returns its reply (storage requests it makes
    /// are performed at once).
    pub fn call(&mut self, args: &[&[u8]]) -> Result<Frame, String> {
        self.engine
            .handle_input(self.now, self.id, &encode_request(args));
        let mut events_count = 0u64;
        loop {
            let Some(event) = self.engine.poll_event() else {
                // A snapshot read produces its reply in slices, one per
                // timer turn (due at once while it runs).
                if self.engine.snapshot_read_running() {
                    self.engine.handle_timeout(self.now);
                    events_count += 1;
                    if events_count > CALL_EVENTS_MAX {
                        return Err("an inspection command never ends".into());
                    }
                    continue;
                }
                // A group commit (the host's end of turn) holds the reply.
                if !self.engine.wants_before_sleep() {
                    break;
                }
                self.engine.before_sleep(self.now);
                events_count += 1;
                continue;
            };
            events_count += 1;
            if events_count > CALL_EVENTS_MAX {
                return Err("an inspection command never ends".into());
            }
            match event {
                Event::Storage(request) => {
                    let result = self.disk.perform(&request.op);
                    self.engine.storage_done(self.now, request.id, result);
                }
                Event::Fork(fork) => self.engine.child_exited(self.now, fork.id, false),
                Event::Exit { status } => return Err(format!("exited with status {status}")),
                _ => {}
            }
        }
        let output = self.engine.pending_output(self.id).to_vec();
        self.engine.consume_output(self.id, output.len());
        self.decoder.feed(&output);
        match self.decoder.next_frame() {
            Ok(Some(Frame::Error(e))) => Err(format!(
                "{}: {}",
                String::from_utf8_lossy(args[0]),
                String::from_utf8_lossy(&e)
            )),
            Ok(Some(frame)) => Ok(frame),
            Ok(None) => Err(format!("no reply to {}", String::from_utf8_lossy(args[0]))),
            Err(e) => Err(e),
        }
    }
}

fn bulks(frame: Frame) -> Result<Vec<Vec<u8>>, String> {
    let (Frame::Array(items) | Frame::Set(items)) = frame else {
        return Err(format!("not an array: {frame:?}"));
    };
    items
        .into_iter()
        .map(|f| match f {
            Frame::Bulk(b) => Ok(b),
            other => Err(format!("not a bulk: {other:?}")),
        })
        .collect()
}

/// Every key of every database, with its value's digest and expiry.
pub(crate) fn read_dataset(
    inspector: &mut Inspector,
    now_unix_ms: u64,
) -> Result<BTreeMap<(usize, Vec<u8>), ObservedKey>, String> {
    let mut observed = BTreeMap::new();
    for db in 0..seedkv_engine::db::DATABASES_COUNT {
        inspector.call(&[b"SELECT", db.to_string().as_bytes()])?;
        for key in scan_all(inspector)? {
            if observed.len() >= INSPECT_KEYS_MAX {
                return Err("too many keys".into());
            }
            if let Some(entry) = read_key(inspector, &key, now_unix_ms)? {
                observed.insert((db, key), entry);
            }
        }
    }
    Ok(observed)
}

fn scan_all(inspector: &mut Inspector) -> Result<Vec<Vec<u8>>, String> {
    let mut keys = std::collections::BTreeSet::new();
    let mut cursor = b"0".to_vec();
    loop {
        let reply = inspector.call(&[b"SCAN", &cursor, b"COUNT", b"1000"])?;
        let Frame::Array(mut parts) = reply else {
            return Err(format!("SCAN replied {reply:?}"));
        };
        if parts.len() != 2 {
            return Err("SCAN replied a wrong shape".into());
        }
        let batch = bulks(parts.pop().expect("two"))?;
        let Some(Frame::Bulk(next)) = parts.pop() else {
            return Err("SCAN's cursor is not a bulk".into());
        };
        keys.extend(batch);
        if keys.len() > INSPECT_KEYS_MAX {
            return Err("too many keys".into());
        }
        if next == b"0" {
            return Ok(keys.into_iter().collect());
        }
        cursor = next;
    }
}

/// A key's type, value digest and expiry; `None` if it vanished (expired
/// between SCAN and TYPE).
fn read_key(
    inspector: &mut Inspector,
    key: &[u8],
    now_unix_ms: u64,
) -> Result<Option<ObservedKey>, String> {
    let type_name = match inspector.call(&[b"TYPE", key])? {
        Frame::Simple(t) => String::from_utf8_lossy(&t).into_owned(),
        other => return Err(format!("TYPE replied {other:?}")),
    };
    let (digest, shown) = match type_name.as_str() {
        "none" => return Ok(None),
        "string" => match inspector.call(&[b"GET", key])? {
            Frame::Bulk(v) => (digest(Canon::Str(&v)), show(&v)),
            other => return Err(format!("GET replied {other:?}")),
        },
        "list" => {
            let items = bulks(inspector.call(&[b"LRANGE", key, b"0", b"-1"])?)?;
            let parts: Vec<&[u8]> = items.iter().map(Vec::as_slice).collect();
            (
                digest(Canon::List(parts)),
                format!("list of {}", items.len()),
            )
        }
        "hash" => {
            let items = bulks(inspector.call(&[b"HGETALL", key])?)?;
            let pairs: Vec<(&[u8], &[u8])> = items
                .chunks_exact(2)
                .map(|p| (p[0].as_slice(), p[1].as_slice()))
                .collect();
            (
                digest(Canon::Hash(pairs)),
                format!("hash of {}", items.len() / 2),
            )
        }
        "set" => {
            let items = bulks(inspector.call(&[b"SMEMBERS", key])?)?;
            let parts: Vec<&[u8]> = items.iter().map(Vec::as_slice).collect();
            (digest(Canon::Set(parts)), format!("set of {}", items.len()))
        }
        "zset" => {
            let items = bulks(inspector.call(&[b"ZRANGE", key, b"0", b"-1", b"WITHSCORES"])?)?;
            let mut pairs = Vec::with_capacity(items.len() / 2);
            for p in items.chunks_exact(2) {
                let score: f64 = std::str::from_utf8(&p[1])
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| format!("score {:?}", show(&p[1])))?;
                pairs.push((p[0].as_slice(), score));
            }
            (
                digest(Canon::ZSet(pairs)),
                format!("zset of {}", items.len() / 2),
            )
        }
        other => {
            // A type the model has no digest for (a stream...): its name.
            (digest(Canon::Str(other.as_bytes())), other.to_string())
        }
    };
    let expire_unix_ms = match inspector.call(&[b"PTTL", key])? {
        Frame::Integer(ms) if ms >= 0 => Some(now_unix_ms + ms as u64),
        Frame::Integer(_) => None,
        other => return Err(format!("PTTL replied {other:?}")),
    };
    Ok(Some(ObservedKey {
        type_name,
        digest,
        expire_unix_ms,
        shown,
    }))
}

fn show(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(SHOWN_BYTES_MAX)];
    format!("{:?}", String::from_utf8_lossy(cut))
}
