//! One value in RDB form (`rdbSaveObject` / `rdbLoadObject`): the type byte
//! and the payload, in the encoding Redis 7.0 writes for each in-memory
//! encoding, and loading of every type a 7.0 file or DUMP may carry.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use super::codec::{self, put_double, put_len, put_string, Reader};
use super::{intset, kind, listpack, Corrupt, Result};
use crate::resp::encode::format_double;
use crate::types::set::Member;
use crate::types::zset::cmp_elements;
use crate::types::{Hash, Limits, List, Set, ZSet};
use crate::value::{RString, Value};

/// Quicklist node containers (`QUICKLIST_NODE_CONTAINER_*`).
const CONTAINER_PLAIN: u64 = 1;
const CONTAINER_PACKED: u64 = 2;
/// Redis's `optimization_level` and `SIZE_SAFETY_LIMIT`, for cutting a list
/// into listpack nodes as a quicklist with the list's fill would.
const NODE_LIMITS_BYTES: [usize; 5] = [4096, 8192, 16384, 32768, 65536];
const SIZE_SAFETY_LIMIT_BYTES: usize = 8192;
/// Redis's `SIZE_ESTIMATE_OVERHEAD`.
const SIZE_ESTIMATE_OVERHEAD_BYTES: usize = 8;

/// Appends `value` as its type byte and payload; returns the work done
/// (elements written).
pub fn save(out: &mut Vec<u8>, value: &Value, compress: bool) -> u64 {
    out.push(kind_of(value));
    save_payload(out, value, compress)
}

/// The type byte Redis 7.0 writes for `value` in its current encoding
/// (`rdbSaveObjectType`). An RDB file puts the key between this byte and
/// the payload.
pub fn kind_of(value: &Value) -> u8 {
    match value {
        Value::Str(_) => kind::STRING,
        Value::List(_) => kind::LIST_QUICKLIST_2,
        Value::Set(s) if s.is_intset() => kind::SET_INTSET,
        Value::Set(_) => kind::SET,
        Value::ZSet(z) if z.encoding_name() == "listpack" => kind::ZSET_LISTPACK,
        Value::ZSet(_) => kind::ZSET_2,
        Value::Hash(h) if h.is_listpack() => kind::HASH_LISTPACK,
        Value::Hash(_) => kind::HASH,
        Value::Stream(_) => kind::STREAM_LISTPACKS_2,
    }
}

/// Appends `value`'s payload, without the type byte ([`kind_of`] says
/// which layout it is); returns the work done (elements written).
pub fn save_payload(out: &mut Vec<u8>, value: &Value, compress: bool) -> u64 {
    match value {
        Value::Str(s) => {
            put_string(out, s.as_bytes(), compress);
            1
        }
        Value::List(l) => save_list(out, l, compress),
        Value::Set(s) => save_set(out, s, compress),
        Value::ZSet(z) => save_zset(out, z, compress),
        Value::Hash(h) => save_hash(out, h, compress),
        Value::Stream(s) => super::stream::save(out, s, compress),
    }
}

fn save_list(out: &mut Vec<u8>, list: &List, compress: bool) -> u64 {
    let nodes = list_nodes(list);
    put_len(out, nodes.len() as u64);
    let mut entries = list.iter();
    for &count in &nodes {
        put_len(out, CONTAINER_PACKED);
        let blob = listpack::encode(entries.by_ref().take(count));
        put_string(out, &blob, compress);
    }
    list.len() as u64
}

/// The entry counts of the nodes a quicklist with `list`'s fill would hold
/// after pushing every entry at the tail (`_quicklistNodeAllowInsert`: the
/// node's listpack bytes plus the entry's length plus an 8-byte overhead
/// estimate against the fill's limit), so that DUMP lays a list out in the
/// nodes Redis would.
fn list_nodes(list: &List) -> Vec<usize> {
    let fill = list.fill();
    let allow = |node_bytes: usize, entry_len: usize, count: usize| {
        let new_bytes = node_bytes + entry_len + SIZE_ESTIMATE_OVERHEAD_BYTES;
        match usize::try_from(-fill - 1) {
            Ok(level) => NODE_LIMITS_BYTES
                .get(level)
                .is_some_and(|&l| new_bytes <= l),
            Err(_) => new_bytes <= SIZE_SAFETY_LIMIT_BYTES && (count as i64) < fill,
        }
    };
    let mut nodes = Vec::new();
    let (mut bytes, mut count) = (listpack::EMPTY_BYTES, 0usize);
    for entry in list.iter() {
        if count > 0 && !allow(bytes, entry.len(), count) {
            nodes.push(count);
            (bytes, count) = (listpack::EMPTY_BYTES, 0);
        }
        bytes += listpack::entry_size_bytes(entry);
        count += 1;
    }
    if count > 0 {
        nodes.push(count);
    }
    nodes
}

fn save_set(out: &mut Vec<u8>, set: &Set, compress: bool) -> u64 {
    if set.is_intset() {
        let values: Vec<i64> = set
            .iter()
            .map(|m| match m {
                Member::Int(v) => v,
                Member::Bytes(_) => unreachable!("an intset holds integers"),
            })
            .collect();
        put_string(out, &intset::encode(&values), compress);
    } else {
        put_len(out, set.len() as u64);
        let mut buf = [0u8; 20];
        for m in set.iter() {
            put_string(out, m.as_bytes(&mut buf), compress);
        }
    }
    set.len() as u64
}

fn save_zset(out: &mut Vec<u8>, zset: &ZSet, compress: bool) -> u64 {
    let n = zset.len();
    if zset.encoding_name() == "listpack" {
        let pairs: Vec<(Vec<u8>, Vec<u8>)> = zset
            .iter_ranks(0, n, false)
            .map(|(m, s)| (m.to_vec(), format_double(s).into_bytes()))
            .collect();
        let blob = listpack::encode(pairs.iter().flat_map(|(m, s)| [m.as_slice(), s.as_slice()]));
        put_string(out, &blob, compress);
    } else {
        // Greatest first, so that loading inserts at the skiplist's head.
        put_len(out, n as u64);
        for (member, score) in zset.iter_ranks(0, n, true) {
            put_string(out, member, compress);
            put_double(out, score);
        }
    }
    n as u64
}

fn save_hash(out: &mut Vec<u8>, hash: &Hash, compress: bool) -> u64 {
    if hash.is_listpack() {
        let blob = listpack::encode(hash.iter().flat_map(|(f, v)| [f, v]));
        put_string(out, &blob, compress);
    } else {
        put_len(out, hash.len() as u64);
        for (f, v) in hash.iter() {
            put_string(out, f, compress);
            put_string(out, v, compress);
        }
    }
    hash.len() as u64
}

/// What a loaded collection is built with: the encoding thresholds in force
/// and the hash seed of collection dicts.
#[derive(Clone, Copy, Debug)]
pub struct Build {
    pub limits: Limits,
    pub seed: u64,
}

/// Why [`load`] refused an empty collection (Redis's
/// `RDB_LOAD_ERR_EMPTY_KEY`): RESTORE refuses it, a file load skips the key.
pub const EMPTY: Corrupt = Corrupt("empty collection");

/// Loads a value of type `kind` (the byte [`save`] wrote first). An empty
/// collection is [`EMPTY`], with the whole payload consumed, as Redis counts
/// it (`RDB_LOAD_ERR_EMPTY_KEY`).
pub fn load(r: &mut Reader<'_>, kind: u8, build: Build) -> Result<Value> {
    let value = match kind {
        kind::STRING => Value::Str(RString::new(r.string()?)),
        kind::LIST => load_plain_list(r, build)?,
        kind::LIST_QUICKLIST_2 => load_quicklist(r, build)?,
        kind::SET => load_set(r, build)?,
        kind::SET_INTSET => load_intset(r, build)?,
        kind::ZSET | kind::ZSET_2 => load_zset(r, kind, build)?,
        kind::ZSET_LISTPACK => load_zset_listpack(r, build)?,
        kind::HASH => load_hash(r, build)?,
        kind::HASH_LISTPACK => load_hash_listpack(r, build)?,
        kind::STREAM_LISTPACKS | kind::STREAM_LISTPACKS_2 => {
            Value::Stream(Box::new(super::stream::load(r, kind)?))
        }
        _ => return Err(Corrupt("unsupported object type")),
    };
    r.work_units += collection_len(&value);
    Ok(value)
}

fn collection_len(value: &Value) -> u64 {
    match value {
        Value::Str(_) => 1,
        Value::List(l) => l.len() as u64,
        Value::Set(s) => s.len() as u64,
        Value::ZSet(z) => z.len() as u64,
        Value::Hash(h) => h.len() as u64,
        Value::Stream(s) => s.len() as u64,
    }
}

fn non_empty<T>(len: usize, value: T) -> Result<T> {
    match len {
        0 => Err(EMPTY),
        _ => Ok(value),
    }
}

fn load_plain_list(r: &mut Reader<'_>, build: Build) -> Result<Value> {
    let n = r.count(1)?;
    let mut list = List::new(build.limits.list_max_listpack_size);
    for _ in 0..n {
        list.push_back(&r.string()?);
    }
    non_empty(list.len(), Value::List(Box::new(list)))
}

fn load_quicklist(r: &mut Reader<'_>, build: Build) -> Result<Value> {
    let nodes = r.count(2)?;
    let mut list = List::new(build.limits.list_max_listpack_size);
    for _ in 0..nodes {
        match r.length()? {
            CONTAINER_PLAIN => list.push_back(&r.string()?),
            CONTAINER_PACKED => {
                // An empty node is skipped, as Redis does.
                for entry in listpack::decode(&r.string()?)? {
                    list.push_back(&entry);
                }
            }
            _ => return Err(Corrupt("unknown quicklist container")),
        }
    }
    non_empty(list.len(), Value::List(Box::new(list)))
}

fn load_set(r: &mut Reader<'_>, build: Build) -> Result<Value> {
    let n = r.count(1)?;
    let mut set = Set::new(build.seed);
    for _ in 0..n {
        if !set.insert(&r.string()?, &build.limits) {
            return Err(Corrupt("duplicate set members"));
        }
    }
    non_empty(set.len(), Value::Set(Box::new(set)))
}

fn load_intset(r: &mut Reader<'_>, build: Build) -> Result<Value> {
    let values = intset::decode(&r.string()?)?;
    let mut set = Set::new(build.seed);
    for v in values {
        set.insert(&codec::itoa(v), &build.limits);
    }
    non_empty(set.len(), Value::Set(Box::new(set)))
}

fn load_zset(r: &mut Reader<'_>, kind: u8, build: Build) -> Result<Value> {
    let n = r.count(2)?;
    let mut elements = BTreeMap::new();
    for _ in 0..n {
        let member = r.string()?;
        let score = match kind {
            kind::ZSET_2 => r.binary_double()?,
            _ => r.text_double()?,
        };
        if score.is_nan() {
            return Err(Corrupt("zset with a NaN score"));
        }
        if elements.insert(member.into_boxed_slice(), score).is_some() {
            return Err(Corrupt("duplicate zset members"));
        }
    }
    zset_from(elements, build)
}

fn load_zset_listpack(r: &mut Reader<'_>, build: Build) -> Result<Value> {
    let entries = listpack::decode(&r.string()?)?;
    if entries.len() % 2 != 0 {
        return Err(Corrupt("zset listpack with an odd entry count"));
    }
    let mut elements = BTreeMap::new();
    for pair in entries.chunks_exact(2) {
        let score = codec::parse_double(&pair[1]).ok_or(Corrupt("invalid zset score"))?;
        if score.is_nan() {
            return Err(Corrupt("zset with a NaN score"));
        }
        if elements
            .insert(pair[0].clone().into_boxed_slice(), score)
            .is_some()
        {
            return Err(Corrupt("duplicate zset members"));
        }
    }
    zset_from(elements, build)
}

fn zset_from(elements: BTreeMap<Box<[u8]>, f64>, build: Build) -> Result<Value> {
    let mut sorted: Vec<(Box<[u8]>, f64)> = elements.into_iter().collect();
    sorted.sort_by(|a, b| match cmp_elements(a.1, &a.0, b.1, &b.0) {
        Ordering::Equal => a.0.cmp(&b.0),
        order => order,
    });
    let len = sorted.len();
    let zset = ZSet::from_sorted(sorted, &build.limits, build.seed);
    non_empty(len, Value::ZSet(Box::new(zset)))
}

fn load_hash(r: &mut Reader<'_>, build: Build) -> Result<Value> {
    let n = r.count(2)?;
    let mut hash = Hash::new(build.seed);
    for _ in 0..n {
        let field = r.string()?;
        let value = r.string()?;
        if !hash.insert(&field, &value, &build.limits) {
            return Err(Corrupt("duplicate hash fields"));
        }
    }
    non_empty(hash.len(), Value::Hash(Box::new(hash)))
}

fn load_hash_listpack(r: &mut Reader<'_>, build: Build) -> Result<Value> {
    let entries = listpack::decode(&r.string()?)?;
    if entries.len() % 2 != 0 {
        return Err(Corrupt("hash listpack with an odd entry count"));
    }
    let mut seen = BTreeSet::new();
    let mut hash = Hash::new(build.seed);
    for pair in entries.chunks_exact(2) {
        if !seen.insert(&pair[0]) {
            return Err(Corrupt("duplicate hash fields"));
        }
        hash.insert(&pair[0], &pair[1], &build.limits);
    }
    non_empty(hash.len(), Value::Hash(Box::new(hash)))
}
