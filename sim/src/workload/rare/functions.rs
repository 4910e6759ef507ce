//! Redis 7.0 functions, in forms that leave the other workloads alone: a
//! library of `rare`'s own per client (`rare_c<client>`, its functions
//! `rare_c<client>_set` and `rare_c<client>_get`), loaded, called, listed,
//! dumped, restored over itself and deleted. FUNCTION FLUSH, which would
//! take the transfer workload's `bank` library, is `rare-solo`'s (see
//! [`solo_functions`]).

use rand_chacha::ChaCha8Rng;

use super::{Section, SectionFn, HOME_DB};
use seedkv_engine::rdb::{codec, file::opcode, RDB_VERSION};

pub(crate) const SECTIONS: &[SectionFn] = &[functions];

pub(crate) const SOLO_SECTIONS: &[SectionFn] = &[solo_functions];

/// The library of `client`: a writing and a read-only function.
fn library_code(client: u32) -> Vec<u8> {
    format!(
        "#!lua name=rare_c{client}\n\
         redis.register_function('rare_c{client}_set', function(keys, args) \
         return redis.call('SET', keys[1], args[1]) end)\n\
         redis.register_function{{function_name='rare_c{client}_get', \
         callback=function(keys) return redis.call('GET', keys[1]) end, \
         flags={{'no-writes'}}, description='reads a key'}}"
    )
    .into_bytes()
}

/// FUNCTION RESTORE's payload of `client`'s library alone, built as
/// FUNCTION DUMP writes it.
fn library_payload(client: u32) -> Vec<u8> {
    let mut p = vec![opcode::FUNCTION2];
    codec::put_string(&mut p, &library_code(client), false);
    p.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = codec::CRC64.checksum(&p);
    p.extend_from_slice(&crc.to_le_bytes());
    p
}

fn bytes(parts: &[&[u8]]) -> Vec<Vec<u8>> {
    parts.iter().map(|p| p.to_vec()).collect()
}

fn functions(s: &mut Section, _rng: &mut ChaCha8Rng) {
    let client = s.client;
    let lib = format!("rare_c{client}");
    let (set, get) = (format!("{lib}_set"), format!("{lib}_get"));
    s.batch(HOME_DB)
        .add("DEL rare:fn")
        .push(bytes(&[
            b"FUNCTION",
            b"LOAD",
            b"REPLACE",
            &library_code(client),
        ]))
        .add(&format!("FCALL {set} 1 rare:fn v"))
        .add(&format!("FCALL_RO {get} 1 rare:fn"))
        .add(&format!("FCALL {get} 1 rare:fn"))
        .add(&format!("FUNCTION LIST LIBRARYNAME {lib} WITHCODE"))
        .add("FUNCTION LIST")
        .add("FUNCTION STATS")
        .add("FUNCTION DUMP")
        .push(bytes(&[
            b"FUNCTION",
            b"RESTORE",
            &library_payload(client),
            b"REPLACE",
        ]))
        .add("FUNCTION KILL")
        .add("FUNCTION HELP")
        .add(&format!("FUNCTION DELETE {lib}"))
        .push(bytes(&[
            b"FUNCTION",
            b"RESTORE",
            &library_payload(client),
            b"APPEND",
        ]))
        .add(&format!("FUNCTION DELETE {lib}"))
        .push(bytes(&[b"FUNCTION", b"RESTORE", &library_payload(client)]))
        .add(&format!("FUNCTION DELETE {lib}"));
}

/// FUNCTION FLUSH in its three forms, and a RESTORE that flushes first.
fn solo_functions(s: &mut Section, _rng: &mut ChaCha8Rng) {
    let client = s.client;
    s.batch(HOME_DB)
        .push(bytes(&[b"FUNCTION", b"LOAD", &library_code(client)]))
        .add("FUNCTION FLUSH")
        .add("FUNCTION FLUSH ASYNC")
        .add("FUNCTION FLUSH SYNC")
        .push(bytes(&[
            b"FUNCTION",
            b"RESTORE",
            &library_payload(client),
            b"FLUSH",
        ]))
        .add("FUNCTION FLUSH");
}
