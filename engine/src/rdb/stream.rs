//! Streams in RDB form: `RDB_TYPE_STREAM_LISTPACKS_2` (type 19, what Redis
//! 7.0 writes) and loading of the 5.0-6.2 `RDB_TYPE_STREAM_LISTPACKS`
//! (type 15), which lacks the 7.0 counters.
//!
//! Layout (`rdbSaveObject`): the node count, then per node its master ID
//! (16 bytes big-endian, as a string) and its listpack (a string); the
//! length, the last ID; with type 19 the first ID, the greatest deleted ID
//! and the entries added; then the groups: name, last ID, (type 19) entries
//! read, the group PEL (raw 16-byte ID, delivery time as 8 bytes little
//! endian, delivery count), and the consumers (name, seen time, and their
//! PEL as raw IDs that must be in the group's).

use super::codec::{put_len, put_string, Reader};
use super::{kind, listpack, Corrupt, Result};
use crate::types::stream::{Consumer, Group, Node, Pending, Stream, StreamId};

/// Appends the payload of a type-19 stream; returns the work done.
pub fn save(out: &mut Vec<u8>, s: &Stream, compress: bool) -> u64 {
    let mut work = 0u64;
    put_len(out, s.nodes_count() as u64);
    for node in s.nodes() {
        put_string(out, &node.master.to_be_bytes(), false);
        let elements = node.lp_elements();
        let blob = listpack::encode(elements.iter().map(Vec::as_slice));
        put_string(out, &blob, compress);
        work += node.total() as u64;
    }
    put_len(out, s.len() as u64);
    put_id(out, s.last_id);
    put_id(out, s.first_id());
    put_id(out, s.max_deleted_id);
    put_len(out, s.entries_added);
    put_len(out, s.groups.len() as u64);
    for (name, g) in &s.groups {
        put_string(out, name, compress);
        put_id(out, g.last_id);
        // Redis writes the invalid -1 as a 64-bit length.
        put_len(out, g.entries_read.unwrap_or(u64::MAX));
        put_len(out, g.pel.len() as u64);
        for (id, p) in &g.pel {
            out.extend_from_slice(&id.to_be_bytes());
            out.extend_from_slice(&p.delivery_time_ms.to_le_bytes());
            put_len(out, p.delivery_count);
        }
        put_len(out, g.consumers.len() as u64);
        for (cname, c) in &g.consumers {
            put_string(out, cname, compress);
            out.extend_from_slice(&c.seen_time_ms.to_le_bytes());
            put_len(out, c.pel.len() as u64);
            for id in &c.pel {
                out.extend_from_slice(&id.to_be_bytes());
            }
        }
        work += 1 + g.pel.len() as u64 + g.consumers.len() as u64;
    }
    work
}

fn put_id(out: &mut Vec<u8>, id: StreamId) {
    put_len(out, id.ms);
    put_len(out, id.seq);
}

fn id(r: &mut Reader<'_>) -> Result<StreamId> {
    Ok(StreamId::new(r.length()?, r.length()?))
}

fn raw_id(r: &mut Reader<'_>) -> Result<StreamId> {
    StreamId::from_be_bytes(r.take(16)?).ok_or(Corrupt("stream ID"))
}

fn ms_time(r: &mut Reader<'_>) -> Result<u64> {
    let b: [u8; 8] = r.take(8)?.try_into().map_err(|_| Corrupt("time"))?;
    Ok(u64::from_le_bytes(b))
}

/// Loads a stream of type `kind` (15 or 19).
pub fn load(r: &mut Reader<'_>, kind_byte: u8) -> Result<Stream> {
    let v2 = kind_byte == kind::STREAM_LISTPACKS_2;
    let mut s = Stream::new();
    let nodes = r.count(2)?;
    for _ in 0..nodes {
        let key = r.string()?;
        let master = StreamId::from_be_bytes(&key).ok_or(Corrupt("stream node key"))?;
        let blob = r.string()?;
        let elements = listpack::decode(&blob)?;
        if elements.is_empty() {
            return Err(Corrupt("empty listpack inside stream"));
        }
        r.work_units += elements.len() as u64;
        let node = Node::from_lp_elements(master, &elements).ok_or(Corrupt("stream listpack"))?;
        if !s.push_loaded_node(node) {
            return Err(Corrupt("stream nodes out of order"));
        }
    }
    let len = r.length()?;
    if len != s.len() as u64 {
        return Err(Corrupt("stream length"));
    }
    s.last_id = id(r)?;
    s.finish_load();
    if v2 {
        let _first = id(r)?;
        s.max_deleted_id = id(r)?;
        s.entries_added = r.length()?;
    } else {
        s.entries_added = s.len() as u64;
    }
    if s.edge(true).is_some_and(|(_, i)| i.id > s.last_id) {
        return Err(Corrupt("stream last ID below an entry"));
    }
    let groups = r.count(1)?;
    for _ in 0..groups {
        let name = r.string()?;
        let last_id = id(r)?;
        let entries_read = if v2 {
            let n = r.length()?;
            (n != u64::MAX).then_some(n)
        } else {
            s.estimate_distance(last_id)
        };
        let mut g = Group::new(last_id, entries_read);
        let pel = r.count(17)?;
        for _ in 0..pel {
            let id = raw_id(r)?;
            let delivery_time_ms = ms_time(r)?;
            let delivery_count = r.length()?;
            let pending = Pending {
                consumer: Vec::new(),
                delivery_time_ms,
                delivery_count,
            };
            if g.pel.insert(id, pending).is_some() {
                return Err(Corrupt("duplicated PEL entry"));
            }
        }
        let consumers = r.count(2)?;
        for _ in 0..consumers {
            let cname = r.string()?;
            let seen_time_ms = ms_time(r)?;
            let mut c = Consumer {
                seen_time_ms,
                ..Consumer::default()
            };
            let owned = r.count(16)?;
            for _ in 0..owned {
                let id = raw_id(r)?;
                let p = g
                    .pel
                    .get_mut(&id)
                    .ok_or(Corrupt("consumer PEL entry not in group"))?;
                if !p.consumer.is_empty() || !c.pel.insert(id) {
                    return Err(Corrupt("PEL entry owned twice"));
                }
                p.consumer = cname.clone();
            }
            if g.consumers.insert(cname, c).is_some() {
                return Err(Corrupt("duplicated consumer"));
            }
        }
        if g.pel.values().any(|p| p.consumer.is_empty()) {
            return Err(Corrupt("PEL entry without a consumer"));
        }
        r.work_units += 1 + (pel + consumers) as u64;
        if s.groups.insert(name, g).is_some() {
            return Err(Corrupt("duplicated consumer group"));
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::types::Limits;

    fn sample() -> Stream {
        let limits = Limits {
            stream_node_max_entries: 3,
            ..Limits::default()
        };
        let mut s = Stream::new();
        for ms in 1..=8u64 {
            let pairs: Vec<Vec<u8>> = if ms % 3 == 0 {
                vec![b"other".to_vec(), ms.to_string().into_bytes()]
            } else {
                vec![
                    b"f".to_vec(),
                    b"v".to_vec(),
                    b"n".to_vec(),
                    ms.to_string().into_bytes(),
                ]
            };
            s.append(StreamId::new(ms, 1), &pairs, &limits).unwrap();
        }
        s.delete(StreamId::new(2, 1));
        let mut g = Group::new(StreamId::new(5, 1), Some(5));
        g.consumer_or_create(b"alice", 7);
        g.consumer_or_create(b"idle", 9);
        g.deliver_new(StreamId::new(4, 1), b"alice", 11);
        g.deliver_new(StreamId::new(5, 1), b"alice", 12);
        s.groups.insert(b"g".to_vec(), g);
        s.groups
            .insert(b"h".to_vec(), Group::new(StreamId::MIN, None));
        s
    }

    #[test]
    fn round_trips() {
        let s = sample();
        let mut out = Vec::new();
        save(&mut out, &s, false);
        let back = load(&mut Reader::new(&out), kind::STREAM_LISTPACKS_2).unwrap();
        assert_eq!(back, s);
    }

    /// Corrupted payloads are refused or loaded, never a panic.
    #[test]
    fn mutated_payloads_never_panic() {
        let mut clean = Vec::new();
        save(&mut clean, &sample(), false);
        let mut rng = ChaCha8Rng::seed_from_u64(17);
        for _ in 0..20_000 {
            let mut bytes = clean.clone();
            for _ in 0..rng.gen_range(1..4) {
                let at = rng.gen_range(0..bytes.len());
                bytes[at] = rng.gen();
            }
            if rng.gen_bool(0.2) {
                bytes.truncate(rng.gen_range(0..bytes.len()));
            }
            for kind in [kind::STREAM_LISTPACKS, kind::STREAM_LISTPACKS_2] {
                if let Ok(s) = load(&mut Reader::new(&bytes), kind) {
                    // Whatever loaded can be used.
                    let _ = s.group_lag(&Group::new(StreamId::new(3, 0), Some(1)));
                    for g in s.groups.values() {
                        let _ = s.group_lag(g);
                        assert!(g.is_consistent());
                    }
                    let mut out = Vec::new();
                    save(&mut out, &s, false);
                }
            }
        }
    }
}
