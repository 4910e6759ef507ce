//! The primary's stream read as commands: where each write sits.

use std::collections::BTreeMap;

use crate::cluster::history::{ClusterHistory, Session, WitnessStream};
use crate::cluster::tap::parse_request;

/// Commands read from one stream at most.
const COMMANDS_MAX: usize = 10_000_000;

/// Each command of `w` with the offset of its last byte.
pub fn commands(w: &WitnessStream) -> Vec<(u64, Vec<Vec<u8>>)> {
    let mut out = Vec::new();
    let mut at = 0;
    while out.len() < COMMANDS_MAX {
        let Some((args, len)) = parse_request(&w.bytes[at..]) else {
            break;
        };
        at += len;
        out.push((w.base + at as u64, args));
    }
    out
}

/// Where each `SET key value` of the streams landed: (history, key,
/// value) → offset, a history being the root of a chain of witness
/// streams (offsets go on across a failover that continued it).
pub fn set_offsets(h: &ClusterHistory) -> BTreeMap<(usize, Vec<u8>, Vec<u8>), u64> {
    let mut out = BTreeMap::new();
    for (i, w) in h.witness.iter().enumerate() {
        let root = h.lineage(i)[0];
        for (offset, args) in commands(w) {
            if args.len() >= 3 && args[0].eq_ignore_ascii_case(b"set") {
                out.insert((root, args[1].clone(), args[2].clone()), offset);
            }
        }
    }
    out
}

/// The replication id and offset a replica keeps from session `p` (its
/// cached primary), if that sync completed: the end of the last whole
/// command it was handed (a command cut by the link's end is not applied).
pub fn cached(h: &ClusterHistory, p: &Session) -> Option<(String, u64)> {
    if !p.synced {
        return None;
    }
    let base = p.stream_base?;
    let mut at = 0;
    // Bounded by the stream's length: each request consumes bytes.
    while let Some((_, len)) = parse_request(&p.stream[at..]) {
        at += len;
    }
    let replid = match &p.answer_replid {
        Some(r) => r.clone(),
        None => h.witness[h.witness_of(p)?].replid.clone(),
    };
    Some((replid, base + at as u64))
}
