//! Per-key partitioning: each connection's requests are followed (selected
//! database, MULTI, subscribed mode) to split the history into one list
//! of single-key operations per key, and to exclude every key that
//! something else may have written.

use seedkv_engine::cmd::{flags, CommandTable};
use seedkv_engine::resp::Frame;

use super::register::recognise;
use super::{Action, KeyOp, NOT_AN_INTEGER, OVERFLOW};
use crate::check::model::redis_c::parse_i64_strict;
use crate::check::model::{is_harmless, is_single_key_command, modelled_keys, DB_COUNT};
use crate::check::name_buffer::NameBuffer;
use crate::fxhash::{FxHashMap, FxHashSet};
use crate::history::{History, Op};

/// What a command the checker does not recognise may write.
enum Writes<'a> {
    Nothing,
    Keys(Vec<&'a [u8]>),
    /// Every key of the connection's database.
    Db,
    /// Every key of every database.
    Everything,
}

fn writes_of<'a>(table: &CommandTable, args: &'a [Vec<u8>]) -> Writes<'a> {
    // Lowercased on the stack when it can be (every op the recogniser
    // declines comes here); a long or non-UTF-8 name as before.
    let mut name_buffer = NameBuffer::default();
    let lowered: String;
    let name: &str = match std::str::from_utf8(name_buffer.lower(&args[0])) {
        Ok(name) if !name.is_empty() || args[0].is_empty() => name,
        _ => {
            lowered = String::from_utf8_lossy(&args[0]).to_ascii_lowercase();
            &lowered
        }
    };
    if let Some((keys, writes)) = modelled_keys(name, args) {
        return match (name, writes) {
            ("flushdb", _) => Writes::Db,
            ("flushall", _) => Writes::Everything,
            (_, true) => Writes::Keys(keys),
            (_, false) => Writes::Nothing,
        };
    }
    if let Some(keys) = crate::check::transfer::script_keys(args) {
        // The workloads' scripts touch only the keys they declare.
        return Writes::Keys(keys.iter().map(Vec::as_slice).collect());
    }
    match table.lookup(&args[0]) {
        Some(spec) if spec.has(flags::READONLY) => Writes::Nothing,
        Some(spec) if spec.has(flags::WRITE) => {
            let keys: Vec<&[u8]> = spec
                .key_indices(args.len())
                .into_iter()
                .map(|i| args[i].as_slice())
                .collect();
            match keys.is_empty() || matches!(name, "move" | "copy") {
                true => Writes::Everything,
                false => Writes::Keys(keys),
            }
        }
        _ if is_harmless(name) => Writes::Nothing,
        _ if is_single_key_command(name) && args.len() >= 2 => Writes::Keys(vec![&args[1]]),
        _ => Writes::Everything,
    }
}

/// What [`recognise`] made of an op.
type Recognised<'h> = Result<(&'h [u8], Action<'h>), bool>;

/// A key in a database, borrowed from the history.
pub(super) type KeyId<'a> = (usize, &'a [u8]);

/// The per-key histories (ordered by database, then key), and what was
/// excluded.
pub(super) struct Partition<'a> {
    pub(super) keys: Vec<(KeyId<'a>, Vec<KeyOp<'a>>)>,
    pub(super) excluded_count: usize,
}

/// A connection's state as its own requests and replies reveal it.
struct ConnView {
    /// Selected database; `None` when a SELECT's outcome is unknown.
    db: Option<usize>,
    in_multi: bool,
    /// SUBSCRIBE, MONITOR, CLIENT REPLY: the checker stops following it.
    opaque: bool,
}

pub(super) fn partition<'h>(history: &'h History) -> Partition<'h> {
    let table = CommandTable::new(seedkv_engine::commands::FAMILIES);
    // Every op in (connection, request index) order: one sort instead of a
    // map of per-connection lists.
    let order = history.ops_in_conn_order();
    let mut keys: FxHashMap<KeyId<'h>, Vec<KeyOp<'h>>> = FxHashMap::default();
    // Only keys that some single-key operation names can ever be searched,
    // so exclusions are recorded for those alone: the workloads' MSETs and
    // DELs of thousands of other keys then cost one lookup per key. Keys
    // are borrowed from the history, never copied.
    // Each op is recognised once (its SET's value copied once), here.
    let mut recognised: Vec<Option<Recognised<'h>>> = history
        .ops
        .iter()
        .map(|op| op.args.first().map(|_| recognise(&op.args)))
        .collect();
    let candidates: FxHashSet<&'h [u8]> = recognised
        .iter()
        .filter_map(|r| match r {
            Some(Ok((key, _))) => Some(*key),
            _ => None,
        })
        .collect();
    let mut excluded: FxHashSet<KeyId<'h>> = FxHashSet::default();
    let mut excluded_dbs = [false; DB_COUNT];
    let conn_of = |i: u32| history.ops[i as usize].conn;
    for indices in order.chunk_by(|&a, &b| conn_of(a) == conn_of(b)) {
        let mut conn = ConnView {
            db: Some(0),
            in_multi: false,
            opaque: false,
        };
        for &i in indices {
            let i = i as usize;
            let op = &history.ops[i];
            if op.args.is_empty() {
                continue;
            }
            let reply = op.complete.as_ref().map(|(_, frame)| frame);
            let mut name_buffer = NameBuffer::default();
            let name = name_buffer.lower(&op.args[0]);
            let mut exclude = |db: Option<usize>, writes: Writes<'h>| match (writes, db) {
                (Writes::Nothing, _) => {}
                (Writes::Keys(names), Some(db)) => excluded.extend(
                    names
                        .into_iter()
                        .filter(|k| candidates.contains(k))
                        .map(|k| (db, k)),
                ),
                (Writes::Keys(names), None) => {
                    for k in names.into_iter().filter(|k| candidates.contains(k)) {
                        excluded.extend((0..DB_COUNT).map(|db| (db, k)));
                    }
                }
                (Writes::Db, Some(db)) => excluded_dbs[db] = true,
                (Writes::Db | Writes::Everything, _) => excluded_dbs = [true; DB_COUNT],
            };
            // Connection state first: these change how later requests read.
            match name {
                b"select" => {
                    conn.db = match reply {
                        _ if conn.in_multi || conn.opaque => None,
                        Some(Frame::Simple(ok)) if ok == b"OK" => op
                            .args
                            .get(1)
                            .and_then(|a| parse_i64_strict(a))
                            .map(|d| d as usize),
                        Some(Frame::Error(_)) => conn.db,
                        _ => None,
                    };
                    continue;
                }
                b"reset" => {
                    conn = match reply {
                        Some(_) => ConnView {
                            db: Some(0),
                            in_multi: false,
                            opaque: false,
                        },
                        None => ConnView {
                            db: None,
                            in_multi: true,
                            opaque: true,
                        },
                    };
                    continue;
                }
                b"multi" => {
                    conn.in_multi = !matches!(reply, Some(Frame::Error(_)));
                    continue;
                }
                b"exec" | b"discard" => {
                    conn.in_multi = false;
                    continue;
                }
                b"subscribe" | b"psubscribe" | b"ssubscribe" | b"monitor" => {
                    conn.opaque = true;
                    continue;
                }
                b"client"
                    if op
                        .args
                        .get(1)
                        .is_some_and(|a| a.eq_ignore_ascii_case(b"reply")) =>
                {
                    conn.opaque = true;
                    continue;
                }
                _ => {}
            }
            // Writes queued in MULTI run later, at EXEC, in the same
            // database (a queued SELECT made `db` unknown above).
            let write_db = conn.db.filter(|_| !conn.opaque);
            let recognised = recognised[i].take().expect("each op is partitioned once");
            match recognised {
                Ok((key, action)) if conn.in_multi || conn.opaque || conn.db.is_none() => {
                    if !action.reads_only() {
                        exclude(write_db, Writes::Keys(vec![key]));
                    }
                }
                Ok((key, action)) => {
                    let db = conn.db.expect("checked above");
                    if let Some(key_op) = key_op(i, op, action) {
                        keys.entry((db, key)).or_default().push(key_op);
                    }
                }
                Err(true) => exclude(write_db, Writes::Keys(vec![&op.args[1]])),
                Err(false) => exclude(write_db, writes_of(&table, &op.args)),
            }
        }
    }
    let total = keys.len();
    let mut keys: Vec<(KeyId, Vec<KeyOp>)> = keys
        .into_iter()
        .filter(|(id, _)| !excluded_dbs[id.0] && !excluded.contains(id))
        .collect();
    keys.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    // Invocation order numbers the search's operations so that the ones
    // linearized first are nearly a prefix (see `Memo`).
    for (_, ops) in &mut keys {
        ops.sort_by_key(|o| o.invoke_ns);
    }
    Partition {
        excluded_count: total - keys.len(),
        keys,
    }
}

/// The operation as the search sees it, or `None` if it constrains nothing:
/// a read without a reply, or a request refused with an error that does not
/// depend on the key (such requests have no effect).
fn key_op<'h>(index: usize, op: &'h Op, action: Action<'h>) -> Option<KeyOp<'h>> {
    match &op.complete {
        None if action.reads_only() => None,
        Some((_, Frame::Error(e)))
            if !(matches!(action, Action::IncrBy(_)) && (e == NOT_AN_INTEGER || e == OVERFLOW)) =>
        {
            None
        }
        _ => Some(KeyOp {
            op: index,
            action,
            invoke_ns: op.invoke_ns,
            complete: op.complete.as_ref().map(|(t, frame)| (*t, frame)),
        }),
    }
}
