//! A rewrite's base file as commands, for `aof-use-rdb-preamble no`
//! (Redis's `rewriteAppendOnlyFileRio`): per database a SELECT, per key
//! the command that builds it, collections in batches of 64 items
//! (`AOF_REWRITE_ITEMS_PER_CMD`), then PEXPIREAT for a key with a TTL.

use crate::resp::encode::{encode_request, format_double};
use crate::server::Server;
use crate::value::Value;

/// Items per command (`AOF_REWRITE_ITEMS_PER_CMD`).
const ITEMS_PER_CMD: usize = 64;

/// The dataset as commands, and the work it took.
pub(crate) fn dataset_as_commands(server: &Server) -> (Vec<u8>, u64) {
    let mut out = Vec::new();
    let mut work_units = 0u64;
    // The libraries come first, as Redis's `rewriteFunctions` writes them.
    for library in server.functions.libraries() {
        out.extend(encode_request(&[b"FUNCTION", b"LOAD", &library.code[..]]));
        work_units += 1;
    }
    for db in &server.keyspace.dbs {
        if db.keys.is_empty() {
            continue;
        }
        let id = db.id.to_string();
        out.extend(encode_request(&[b"SELECT", id.as_bytes()]));
        for (key, value) in db.keys.iter() {
            work_units += 1 + value_commands(&mut out, key, value);
            if let Some(&when) = db.expires.get(key) {
                let when = when.to_string();
                out.extend(encode_request(&[b"PEXPIREAT", key, when.as_bytes()]));
            }
        }
    }
    let work_units = work_units + out.len() as u64 / 64;
    (out, work_units)
}

/// Appends the commands that build `key`; returns the items written.
fn value_commands(out: &mut Vec<u8>, key: &[u8], value: &Value) -> u64 {
    let items: Vec<Vec<u8>> = match value {
        Value::Str(s) => {
            out.extend(encode_request(&[b"SET", key, s.as_bytes()]));
            return 1;
        }
        Value::Stream(s) => return super::stream_commands::stream_commands(out, key, s),
        Value::List(l) => l.iter().map(|e| e.to_vec()).collect(),
        Value::Set(s) => {
            let mut buf = [0u8; 20];
            s.iter().map(|m| m.as_bytes(&mut buf).to_vec()).collect()
        }
        Value::ZSet(z) => z
            .iter_ranks(0, z.len(), false)
            .flat_map(|(m, score)| [format_double(score).into_bytes(), m.to_vec()])
            .collect(),
        Value::Hash(h) => h
            .iter()
            .flat_map(|(f, v)| [f.to_vec(), v.to_vec()])
            .collect(),
    };
    let (name, per_item): (&[u8], usize) = match value {
        Value::List(_) => (b"RPUSH", 1),
        Value::Set(_) => (b"SADD", 1),
        Value::ZSet(_) => (b"ZADD", 2),
        Value::Hash(_) => (b"HMSET", 2),
        Value::Str(_) | Value::Stream(_) => unreachable!(),
    };
    for batch in items.chunks(ITEMS_PER_CMD * per_item) {
        let mut args: Vec<&[u8]> = vec![name, key];
        args.extend(batch.iter().map(|a| a.as_slice()));
        out.extend(encode_request(&args));
    }
    (items.len() / per_item) as u64
}
