//! Linearizability of single-key string operations, judged from what the
//! clients observed alone (invocation time, reply, reply time), without the
//! engine's execution order or the reference model.
//!
//! # The property
//!
//! A history is linearizable if every operation can be given a single
//! instant between its invocation and its reply at which it took effect,
//! such that running the operations one by one in that order, on a plain
//! register, gives exactly the replies the clients saw. For a single-threaded
//! server this must hold; a stale read, a lost update, or a reply sent for
//! the wrong request all break it.
//!
//! # Partitioning by key (P-compositionality)
//!
//! Linearizability is *local*: a history is linearizable if and only if its
//! restriction to each object is (Herlihy & Wing). Porcupine exploits this
//! as "P-compositionality": with one key per operation, each key's history
//! is checked on its own, which turns one exponential search into many small
//! ones. So the checker only considers operations on exactly one key:
//! GET, SET (with NX, XX, GET), SETNX, GETSET, DEL/UNLINK/EXISTS of one key,
//! INCR, DECR, INCRBY, DECRBY, APPEND, GETDEL and STRLEN.
//!
//! A key is **excluded** (not checked) if anything else may have written
//! it during the run: a multi-key write (MSET, DEL of several keys), a TTL
//! (EXPIRE, SET EX, PERSIST... since expiry is a hidden writer), FLUSHDB,
//! FLUSHALL, a write the checker does not recognise, a write queued in
//! MULTI, or a write on a connection whose selected database is unknown.
//! Read-only commands the checker does not model (MGET, TTL, KEYS, SCAN...)
//! are simply left out: dropping reads can never make a linearizable
//! history non-linearizable, so this is sound.
//!
//! # The search (Wing & Gong, with Lowe's memoization)
//!
//! For one key, every operation contributes a *call* entry (at invocation)
//! and a *return* entry (at reply) to one list sorted by time (calls before
//! returns at equal times, so operations that touch are concurrent). The
//! search walks the list from the front:
//!
//! - at a call entry, it tries to linearize that operation now: apply it to
//!   the current state; if the model's reply equals the recorded one, lift
//!   the call and its return out of the list, push (operation, old state) on
//!   a stack, and restart from the front;
//! - at a return entry, the operation it belongs to should already have been
//!   linearized and was not: backtrack by popping the stack, putting the
//!   operation back, and trying the next candidate after it;
//! - an empty stack at a return entry means no order works: not linearizable.
//!
//! Lowe's improvement memoizes every (set of linearized operations, state)
//! reached; reaching one again cannot lead anywhere new, so it is skipped.
//! The effort is bounded ([`LINEARIZABILITY_STEPS_MAX`] steps and
//! [`LINEARIZABILITY_CACHE_BYTES_MAX`] of memo per key); a key that exceeds
//! it is reported as unknown, never as a failure.
//!
//! # Requests without a reply
//!
//! A request whose connection died before the reply may or may not have run.
//! Its return entry is placed at +infinity: it may take effect at any point
//! after its invocation, or never. The search succeeds as soon as the first
//! return entry left in the list is such an infinite one, since then every
//! operation that did complete has been linearized. Reads without a reply
//! constrain nothing and are dropped.

use seedkv_engine::cmd::{flags, CommandTable};
use seedkv_engine::resp::Frame;

use super::model::util::{parse_i64_strict, render_args};
use super::model::{is_harmless, is_single_key_command, modelled_keys, DB_COUNT};
use crate::check::{Checker, RunFacts, Violation};
use crate::fxhash::{FxHashMap, FxHashSet};
use crate::history::{History, Op, TimeNs};

/// Search steps (list entries visited) per key before giving up.
pub const LINEARIZABILITY_STEPS_MAX: u64 = 2_000_000;

/// Memory the memo table of one key may use before giving up.
pub const LINEARIZABILITY_CACHE_BYTES_MAX: usize = 64 * 1024 * 1024;

/// Operations shown in a violation message.
const OPS_SHOWN_MAX: usize = 24;

const NOT_AN_INTEGER: &[u8] = b"ERR value is not an integer or out of range";
const OVERFLOW: &[u8] = b"ERR increment or decrement would overflow";

/// The checker.
pub struct Linearizability;

impl Checker for Linearizability {
    fn name(&self) -> &'static str {
        "linearizability"
    }

    fn check(&self, history: &History, _facts: &RunFacts) -> Result<(), Violation> {
        let report = check_linearizability(history);
        match report.violation {
            None => Ok(()),
            Some(message) => Err(Violation {
                checker: self.name(),
                message,
            }),
        }
    }
}

/// What the checker did, for reports.
#[derive(Clone, Debug, Default)]
pub struct LinearizabilityReport {
    /// Keys whose history was searched and found linearizable.
    pub keys_linearizable: usize,
    /// Keys whose search exceeded the effort bound.
    pub keys_unknown: usize,
    /// Keys left out because something other than a single-key operation
    /// may have written them.
    pub keys_excluded: usize,
    /// Operations in the searched keys' histories.
    pub ops_checked: usize,
    /// The first non-linearizable key's account.
    pub violation: Option<String>,
}

/// Checks every key's history; stops at the first violation.
pub fn check_linearizability(history: &History) -> LinearizabilityReport {
    check_bounded(history, LINEARIZABILITY_STEPS_MAX)
}

fn check_bounded(history: &History, steps_max: u64) -> LinearizabilityReport {
    let partition = partition(history);
    let mut report = LinearizabilityReport {
        keys_excluded: partition.excluded_count,
        ..Default::default()
    };
    for ((db, key), ops) in &partition.keys {
        let key: &[u8] = key;
        report.ops_checked += ops.len();
        match search(ops, steps_max) {
            Outcome::Linearizable => report.keys_linearizable += 1,
            Outcome::Unknown => report.keys_unknown += 1,
            Outcome::NotLinearizable => {
                report.violation = Some(describe(*db, key, ops, history));
                return report;
            }
        }
    }
    report
}

/// A single-key operation, as the register model sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Action {
    Get,
    Set {
        value: Vec<u8>,
        nx: bool,
        xx: bool,
        get: bool,
    },
    SetNx(Vec<u8>),
    Del,
    Exists,
    IncrBy(i64),
    Append(Vec<u8>),
    GetDel,
    Strlen,
}

/// One operation of one key's history.
#[derive(Clone, Debug)]
struct KeyOp {
    /// Index in `History::ops`.
    op: usize,
    action: Action,
    invoke_ns: TimeNs,
    /// The reply and its time; `None`: it may have run any time after its
    /// invocation, or never.
    complete: Option<(TimeNs, Frame)>,
}

/// The register: a string value, or no key.
type State = Option<Vec<u8>>;

/// Applies `action` to `state`: the new state and the reply.
fn step(state: &State, action: &Action) -> (State, Frame) {
    let int = |n: usize| Frame::Integer(n as i64);
    match action {
        Action::Get => (state.clone(), value_frame(state)),
        Action::Set { value, nx, xx, get } => {
            let found = state.is_some();
            let refused = (*nx && found) || (*xx && !found);
            let new = if refused {
                state.clone()
            } else {
                Some(value.clone())
            };
            let reply = match (*get, refused) {
                (true, _) => value_frame(state),
                (false, true) => Frame::Null,
                (false, false) => Frame::Simple(b"OK".to_vec()),
            };
            (new, reply)
        }
        Action::SetNx(value) => match state {
            Some(_) => (state.clone(), int(0)),
            None => (Some(value.clone()), int(1)),
        },
        Action::Del => (None, int(usize::from(state.is_some()))),
        Action::Exists => (state.clone(), int(usize::from(state.is_some()))),
        Action::IncrBy(by) => {
            let old = match state {
                None => Some(0),
                Some(v) => parse_i64_strict(v),
            };
            match old {
                None => (state.clone(), Frame::Error(NOT_AN_INTEGER.to_vec())),
                Some(old) => match old.checked_add(*by) {
                    None => (state.clone(), Frame::Error(OVERFLOW.to_vec())),
                    Some(new) => (Some(new.to_string().into_bytes()), Frame::Integer(new)),
                },
            }
        }
        Action::Append(suffix) => {
            let mut value = state.clone().unwrap_or_default();
            value.extend_from_slice(suffix);
            let len = value.len();
            (Some(value), int(len))
        }
        Action::GetDel => (None, value_frame(state)),
        Action::Strlen => (state.clone(), int(state.as_ref().map_or(0, Vec::len))),
    }
}

fn value_frame(state: &State) -> Frame {
    match state {
        Some(v) => Frame::Bulk(v.clone()),
        None => Frame::Null,
    }
}

impl Action {
    fn reads_only(&self) -> bool {
        matches!(self, Action::Get | Action::Exists | Action::Strlen)
    }
}

/// Recognises a single-key operation. `Err(true)`: a write the register
/// model cannot follow (TTL options); `Err(false)`: not a single-key form.
fn recognise(args: &[Vec<u8>]) -> Result<(&[u8], Action), bool> {
    let name = args[0].to_ascii_lowercase();
    let key = args.get(1).ok_or(false)?.as_slice();
    let action = match (name.as_slice(), args.len()) {
        (b"get", 2) => Action::Get,
        (b"set", n) if n >= 3 => {
            let (mut nx, mut xx, mut get) = (false, false, false);
            for opt in &args[3..] {
                match opt.to_ascii_lowercase().as_slice() {
                    b"nx" if !xx => nx = true,
                    b"xx" if !nx => xx = true,
                    b"get" => get = true,
                    // EX, PX, KEEPTTL...: a TTL, or a syntax error.
                    _ => return Err(true),
                }
            }
            Action::Set {
                value: args[2].clone(),
                nx,
                xx,
                get,
            }
        }
        (b"getset", 3) => Action::Set {
            value: args[2].clone(),
            nx: false,
            xx: false,
            get: true,
        },
        (b"setnx", 3) => Action::SetNx(args[2].clone()),
        (b"del" | b"unlink", 2) => Action::Del,
        (b"exists", 2) => Action::Exists,
        (b"incr", 2) => Action::IncrBy(1),
        (b"decr", 2) => Action::IncrBy(-1),
        (b"incrby", 3) => Action::IncrBy(parse_i64_strict(&args[2]).ok_or(true)?),
        (b"decrby", 3) => match parse_i64_strict(&args[2]) {
            Some(by) if by != i64::MIN => Action::IncrBy(-by),
            _ => return Err(true),
        },
        (b"append", 3) => Action::Append(args[2].clone()),
        (b"getdel", 2) => Action::GetDel,
        (b"strlen", 2) => Action::Strlen,
        _ => return Err(false),
    };
    Ok((key, action))
}

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
    let name = String::from_utf8_lossy(&args[0]).to_ascii_lowercase();
    if let Some((keys, writes)) = modelled_keys(&name, args) {
        return match (name.as_str(), writes) {
            ("flushdb", _) => Writes::Db,
            ("flushall", _) => Writes::Everything,
            (_, true) => Writes::Keys(keys),
            (_, false) => Writes::Nothing,
        };
    }
    if let Some(keys) = super::transfer::script_keys(args) {
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
            match keys.is_empty() || matches!(name.as_str(), "move" | "copy") {
                true => Writes::Everything,
                false => Writes::Keys(keys),
            }
        }
        _ if is_harmless(&name) => Writes::Nothing,
        _ if is_single_key_command(&name) && args.len() >= 2 => Writes::Keys(vec![&args[1]]),
        _ => Writes::Everything,
    }
}

/// A key in a database, borrowed from the history.
type KeyId<'a> = (usize, &'a [u8]);

/// The per-key histories (ordered by database, then key), and what was
/// excluded.
struct Partition<'a> {
    keys: Vec<(KeyId<'a>, Vec<KeyOp>)>,
    excluded_count: usize,
}

/// A connection's state as its own requests and replies reveal it.
struct ConnView {
    /// Selected database; `None` when a SELECT's outcome is unknown.
    db: Option<usize>,
    in_multi: bool,
    /// SUBSCRIBE, MONITOR, CLIENT REPLY: the checker stops following it.
    opaque: bool,
}

fn partition<'h>(history: &'h History) -> Partition<'h> {
    let table = CommandTable::new(seedkv_engine::commands::FAMILIES);
    // Every op in (connection, request index) order: one sort instead of a
    // map of per-connection lists.
    let mut order: Vec<usize> = (0..history.ops.len()).collect();
    order.sort_unstable_by_key(|&i| (history.ops[i].conn, history.ops[i].seq_in_conn, i));
    let mut keys: FxHashMap<KeyId<'h>, Vec<KeyOp>> = FxHashMap::default();
    // Only keys that some single-key operation names can ever be searched,
    // so exclusions are recorded for those alone: the workloads' MSETs and
    // DELs of thousands of other keys then cost one lookup per key. Keys
    // are borrowed from the history, never copied.
    let candidates: FxHashSet<&'h [u8]> = history
        .ops
        .iter()
        .filter_map(|op| match op.args.first() {
            Some(_) => recognise(&op.args).ok().map(|(key, _)| key),
            None => None,
        })
        .collect();
    let mut excluded: FxHashSet<KeyId<'h>> = FxHashSet::default();
    let mut excluded_dbs = [false; DB_COUNT];
    for indices in order.chunk_by(|&a, &b| history.ops[a].conn == history.ops[b].conn) {
        let mut conn = ConnView {
            db: Some(0),
            in_multi: false,
            opaque: false,
        };
        for &i in indices.iter() {
            let op = &history.ops[i];
            if op.args.is_empty() {
                continue;
            }
            let reply = op.complete.as_ref().map(|(_, frame)| frame);
            let name = op.args[0].to_ascii_lowercase();
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
            match name.as_slice() {
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
            match recognise(&op.args) {
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
fn key_op(index: usize, op: &Op, action: Action) -> Option<KeyOp> {
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
            complete: op.complete.clone(),
        }),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Linearizable,
    NotLinearizable,
    Unknown,
}

/// One call or return in the time-ordered list.
#[derive(Clone, Copy, Debug)]
struct ListEntry {
    /// Index into the key's ops.
    op: usize,
    is_call: bool,
    time_ns: TimeNs,
}

/// A pseudo-random word per operation (splitmix64 of its index): the memo
/// hashes a set of linearized operations as the xor of its members' words,
/// updated in O(1) as operations are lifted and put back.
fn zobrist(op: usize) -> u64 {
    let mut z = (op as u64)
        .wrapping_add(1)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Distinct register states, interned: the search and its memo handle
/// small integer ids instead of cloning values.
#[derive(Default)]
struct States {
    values: Vec<State>,
    ids: FxHashMap<State, u32>,
    /// Bytes held by `values` (counted against the memory bound).
    bytes: usize,
}

impl States {
    fn intern(&mut self, state: State) -> u32 {
        if let Some(&id) = self.ids.get(&state) {
            return id;
        }
        let id = self.values.len() as u32;
        self.bytes += 2 * (state.as_ref().map_or(0, Vec::len) + 32);
        self.ids.insert(state.clone(), id);
        self.values.push(state);
        id
    }
}

/// Lowe's memo: every (set of linearized operations, state) reached.
///
/// A set is a bitset over the key's operations, numbered in invocation
/// order, so the linearized ones are nearly a prefix. The memo stores a
/// set as its end (one past the highest member) and the few non-members
/// below it: the operations still in flight, and requests that never got
/// a reply. That keeps entries a few words long however long the key's
/// history (whole bitsets made the memo quadratic in the number of
/// operations). The lists live in one arena; a map from the combined hash
/// to the newest entry with that hash, chained through `next`, finds
/// them. Equality is checked on the full (canonical) set, so a hash
/// collision can never skip a configuration.
#[derive(Default)]
struct Memo {
    arena: Vec<u32>,
    entries: Vec<MemoEntry>,
    heads: FxHashMap<u64, u32>,
}

struct MemoEntry {
    state: u32,
    /// The previous entry with the same hash.
    next: u32,
    /// One past the set's highest member.
    end: u32,
    /// The non-members below `end`: `arena[from..from + len]`, ascending.
    from: usize,
    len: usize,
}

impl Memo {
    const NO_ENTRY: u32 = u32::MAX;

    fn key_hash(set_hash: u64, state: u32) -> u64 {
        set_hash ^ (state as u64 + 1).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95)
    }

    /// Adds (set, state); false if it was already there. The set is given
    /// as its `end` and its ascending non-members `holes` below it.
    fn insert(&mut self, end: u32, holes: &[u32], set_hash: u64, state: u32) -> bool {
        debug_assert!(holes.last().is_none_or(|&h| h + 1 < end));
        let hash = Memo::key_hash(set_hash, state);
        let head = self.heads.get(&hash).copied().unwrap_or(Memo::NO_ENTRY);
        let mut at = head;
        while at != Memo::NO_ENTRY {
            let e = &self.entries[at as usize];
            if e.state == state && e.end == end && self.arena[e.from..e.from + e.len] == *holes {
                return false;
            }
            at = e.next;
        }
        let id = self.entries.len() as u32;
        self.entries.push(MemoEntry {
            state,
            next: head,
            end,
            from: self.arena.len(),
            len: holes.len(),
        });
        self.arena.extend_from_slice(holes);
        self.heads.insert(hash, id);
        true
    }

    /// Memory held, for the effort bound.
    fn bytes(&self) -> usize {
        self.arena.len() * 4 + self.entries.len() * (std::mem::size_of::<MemoEntry>() + 16)
    }
}

/// The canonical form of a bitset for [`Memo`]: fills `holes` with the
/// non-members below the highest member and returns one past that member.
/// `full_words` and `top` are hints kept by the search: every word before
/// `full_words` is all ones, every word from `top` on is zero; they are
/// tightened here.
fn canonical(bits: &[u64], full_words: &mut usize, top: &mut usize, holes: &mut Vec<u32>) -> u32 {
    while *full_words < *top && bits[*full_words] == u64::MAX {
        *full_words += 1;
    }
    while *top > *full_words && bits[*top - 1] == 0 {
        *top -= 1;
    }
    holes.clear();
    if *top == 0 {
        return 0;
    }
    let last = bits[*top - 1];
    let end = (*top - 1) * 64 + (64 - last.leading_zeros() as usize);
    for (w, &word) in bits.iter().enumerate().take(*top).skip(*full_words) {
        let mut missing = !word;
        while missing != 0 {
            let bit = w * 64 + missing.trailing_zeros() as usize;
            if bit >= end {
                break;
            }
            holes.push(bit as u32);
            missing &= missing - 1;
        }
    }
    end as u32
}

/// The WGL search with Lowe's memoization on one key's history.
fn search(ops: &[KeyOp], steps_max: u64) -> Outcome {
    const NONE: usize = usize::MAX;
    let mut entries: Vec<ListEntry> = Vec::with_capacity(ops.len() * 2);
    for (i, op) in ops.iter().enumerate() {
        entries.push(ListEntry {
            op: i,
            is_call: true,
            time_ns: op.invoke_ns,
        });
        let end = op
            .complete
            .as_ref()
            .map_or(TimeNs::MAX, |(t, _)| (*t).max(op.invoke_ns));
        entries.push(ListEntry {
            op: i,
            is_call: false,
            time_ns: end,
        });
    }
    // Calls before returns at equal times: touching operations overlap.
    entries.sort_by_key(|e| (e.time_ns, !e.is_call, e.op));
    let n = entries.len();
    // A doubly linked list over `entries`, with a head sentinel at index n.
    let head = n;
    let mut next = vec![NONE; n + 1];
    let mut prev = vec![NONE; n + 1];
    for i in 0..n {
        next[i] = if i + 1 < n { i + 1 } else { NONE };
        prev[i] = if i == 0 { head } else { i - 1 };
    }
    next[head] = if n > 0 { 0 } else { NONE };
    let mut return_of = vec![NONE; ops.len()];
    for (i, e) in entries.iter().enumerate() {
        if !e.is_call {
            return_of[e.op] = i;
        }
    }
    let lift = |next: &mut Vec<usize>, prev: &mut Vec<usize>, call: usize, ret: usize| {
        for i in [call, ret] {
            next[prev[i]] = next[i];
            if next[i] != NONE {
                prev[next[i]] = prev[i];
            }
        }
    };
    let unlift = |next: &mut Vec<usize>, prev: &mut Vec<usize>, call: usize, ret: usize| {
        for i in [ret, call] {
            next[prev[i]] = i;
            if next[i] != NONE {
                prev[next[i]] = i;
            }
        }
    };

    let words = ops.len().div_ceil(64).max(1);
    let zobrist: Vec<u64> = (0..ops.len()).map(zobrist).collect();
    let mut linearized = vec![0u64; words];
    let mut linearized_hash: u64 = 0;
    // Canonical-form hints: `linearized[..full_words]` are all ones (at
    // least), `linearized[top..]` are all zeros (at least).
    let mut full_words: usize = 0;
    let mut top: usize = 0;
    let mut memo = Memo::default();
    let mut holes: Vec<u32> = Vec::new();
    // Symmetry: requests without a reply that do the same thing are
    // interchangeable (any linearization that runs a later-invoked one and
    // not an earlier twin stays valid with the twin in its place, since the
    // twin's window, from its earlier invocation to infinity, contains that
    // point, and neither has a reply to match). So each such request may be
    // linearized only after its earlier twin: k unanswered INCRs then give
    // k + 1 configurations instead of 2^k.
    let mut twin_before: Vec<usize> = vec![NONE; ops.len()];
    {
        let mut last_unanswered: Vec<usize> = Vec::new();
        for (i, op) in ops.iter().enumerate().filter(|(_, o)| o.complete.is_none()) {
            if let Some(&twin) = last_unanswered
                .iter()
                .rev()
                .find(|&&j| ops[j].action == op.action)
            {
                twin_before[i] = twin;
            }
            last_unanswered.push(i);
        }
    }
    let mut states = States::default();
    // (state, op) -> the state after op, if its reply matches the recorded
    // one. The search tries the same op from the same state many times.
    let mut transitions: FxHashMap<(u32, u32), Option<u32>> = FxHashMap::default();
    let mut stack: Vec<(usize, u32)> = Vec::new();
    let mut state: u32 = states.intern(None);
    let mut entry = next[head];
    let mut steps: u64 = 0;
    while entry != NONE {
        steps += 1;
        let bytes = memo.bytes() + transitions.len() * 32 + states.bytes;
        if steps > steps_max || bytes > LINEARIZABILITY_CACHE_BYTES_MAX {
            return Outcome::Unknown;
        }
        let e = entries[entry];
        if e.is_call {
            let twin = twin_before[e.op];
            if twin != NONE && linearized[twin / 64] & (1 << (twin % 64)) == 0 {
                entry = next[entry];
                continue;
            }
            let new_state = *transitions.entry((state, e.op as u32)).or_insert_with(|| {
                let op = &ops[e.op];
                let (new_state, reply) = step(&states.values[state as usize], &op.action);
                let matches = op
                    .complete
                    .as_ref()
                    .is_none_or(|(_, recorded)| *recorded == reply);
                matches.then(|| states.intern(new_state))
            });
            if let Some(new_state) = new_state {
                let w = e.op / 64;
                linearized[w] |= 1 << (e.op % 64);
                linearized_hash ^= zobrist[e.op];
                top = top.max(w + 1);
                let end = canonical(&linearized, &mut full_words, &mut top, &mut holes);
                if memo.insert(end, &holes, linearized_hash, new_state) {
                    stack.push((entry, std::mem::replace(&mut state, new_state)));
                    lift(&mut next, &mut prev, entry, return_of[e.op]);
                    entry = next[head];
                    continue;
                }
                linearized[w] &= !(1 << (e.op % 64));
                linearized_hash ^= zobrist[e.op];
                full_words = full_words.min(w);
            }
            entry = next[entry];
        } else {
            if e.time_ns == TimeNs::MAX {
                // Only requests without replies are left; they may never
                // have run.
                return Outcome::Linearizable;
            }
            let Some((call, old_state)) = stack.pop() else {
                return Outcome::NotLinearizable;
            };
            let op = entries[call].op;
            linearized[op / 64] &= !(1 << (op % 64));
            linearized_hash ^= zobrist[op];
            full_words = full_words.min(op / 64);
            state = old_state;
            unlift(&mut next, &mut prev, call, return_of[op]);
            entry = next[call];
        }
    }
    Outcome::Linearizable
}

/// A violation message: the key and its operations in invocation order.
fn describe(db: usize, key: &[u8], ops: &[KeyOp], history: &History) -> String {
    let mut message = format!(
        "key {:?} (db {db}): its {} single-key operations have no linearization:",
        String::from_utf8_lossy(key),
        ops.len()
    );
    let mut sorted: Vec<&KeyOp> = ops.iter().collect();
    sorted.sort_by_key(|o| o.invoke_ns);
    for o in sorted.iter().take(OPS_SHOWN_MAX) {
        let op = &history.ops[o.op];
        let (end, reply) = match &op.complete {
            Some((t, frame)) => (t.to_string(), frame.render()),
            None => ("never".into(), "(no reply)".into()),
        };
        message.push_str(&format!(
            "\n  [{} .. {end}] conn {} #{} `{}` -> {reply}",
            op.invoke_ns,
            op.conn,
            op.seq_in_conn,
            render_args(&op.args)
        ));
    }
    if ops.len() > OPS_SHOWN_MAX {
        message.push_str(&format!("\n  ... {} more", ops.len() - OPS_SHOWN_MAX));
    }
    message
}

#[cfg(test)]
mod tests {
    use seedkv_engine::resp::Frame;

    use super::{check_bounded, check_linearizability, LinearizabilityReport};
    use crate::check::model::testkit::{bulk, simple, Builder};

    fn ok() -> Option<Frame> {
        Some(simple("OK"))
    }

    /// Adds an op on its own connection over `[invoke, complete]`.
    fn op(b: &mut Builder, text: &str, invoke: u64, complete: Option<(u64, Frame)>) {
        let conn = b.history.ops.len() as u64 + 1;
        b.op(conn, text, invoke, complete);
    }

    fn done(t: u64, reply: Option<Frame>) -> Option<(u64, Frame)> {
        reply.map(|r| (t, r))
    }

    fn report(b: &Builder) -> LinearizabilityReport {
        check_linearizability(&b.history)
    }

    #[test]
    fn stale_read_after_completed_write_fails() {
        let mut b = Builder::new();
        op(&mut b, "SET k a", 0, done(10, ok()));
        op(&mut b, "SET k b", 20, done(30, ok()));
        op(&mut b, "GET k", 40, Some((50, bulk("b"))));
        let good = report(&b);
        assert!(good.violation.is_none(), "{good:?}");
        assert_eq!(good.keys_linearizable, 1);
        b.history.ops[2].complete = Some((50, bulk("a")));
        let bad = report(&b);
        assert!(
            bad.violation
                .as_deref()
                .is_some_and(|m| m.contains("\"k\"")),
            "{bad:?}"
        );
    }

    #[test]
    fn overlapping_ops_may_take_effect_in_either_order() {
        for seen in ["a", "b"] {
            let mut b = Builder::new();
            op(&mut b, "SET k a", 0, done(10, ok()));
            op(&mut b, "SET k b", 20, done(60, ok()));
            op(&mut b, "GET k", 30, Some((50, bulk(seen))));
            assert!(report(&b).violation.is_none(), "GET may see {seen}");
        }
        let mut b = Builder::new();
        op(&mut b, "SET k a", 0, done(10, ok()));
        op(&mut b, "SET k b", 20, done(60, ok()));
        op(&mut b, "GET k", 30, Some((50, bulk("c"))));
        assert!(report(&b).violation.is_some(), "a value never written");
    }

    #[test]
    fn a_read_cannot_go_back_in_time() {
        let mut b = Builder::new();
        op(&mut b, "SET k a", 0, done(10, ok()));
        op(&mut b, "SET k b", 20, done(100, ok()));
        op(&mut b, "GET k", 30, Some((40, bulk("b"))));
        op(&mut b, "GET k", 50, Some((60, bulk("b"))));
        assert!(report(&b).violation.is_none());
        b.history.ops[3].complete = Some((60, bulk("a")));
        assert!(report(&b).violation.is_some(), "b was seen, then a again");
    }

    #[test]
    fn unanswered_writes_may_happen_later_or_never() {
        for seen in [Frame::Null, bulk("x")] {
            let mut b = Builder::new();
            op(&mut b, "SET k x", 0, None);
            op(&mut b, "GET k", 100, Some((110, seen)));
            assert!(report(&b).violation.is_none());
        }
        let mut b = Builder::new();
        op(&mut b, "SET k x", 50, None);
        op(&mut b, "GET k", 0, Some((10, bulk("x"))));
        assert!(report(&b).violation.is_some(), "seen before it was sent");
    }

    #[test]
    fn lost_increment_fails_and_concurrent_increments_pass() {
        let mut b = Builder::new();
        op(&mut b, "INCR n", 0, Some((50, Frame::Integer(2))));
        op(&mut b, "INCR n", 10, Some((40, Frame::Integer(1))));
        op(&mut b, "INCRBY n 5", 60, Some((70, Frame::Integer(7))));
        assert!(report(&b).violation.is_none());
        b.history.ops[1].complete = Some((40, Frame::Integer(2)));
        assert!(report(&b).violation.is_some(), "two INCRs both returned 2");
    }

    #[test]
    fn other_commands_that_write_the_key_exclude_it() {
        let mut b = Builder::new();
        op(&mut b, "SET k a", 0, done(10, ok()));
        op(&mut b, "SET k b", 20, done(30, ok()));
        op(&mut b, "GET k", 40, Some((50, bulk("a"))));
        assert!(report(&b).violation.is_some());
        for writer in [
            "MSET k a j b",
            "EXPIRE k 10",
            "SET k a EX 5",
            "FLUSHDB",
            "HSET k f v",
        ] {
            let mut excluded = b.history.clone();
            excluded.ops.push(excluded.ops[0].clone());
            let extra = excluded.ops.last_mut().unwrap();
            extra.conn = 99;
            extra.args = crate::check::model::testkit::args(writer);
            let r = check_linearizability(&excluded);
            assert!(r.violation.is_none(), "{writer}: {r:?}");
            assert_eq!(r.keys_excluded, 1, "{writer}");
        }
    }

    #[test]
    fn selected_database_separates_keys() {
        let mut b = Builder::new();
        b.op(1, "SELECT 1", 0, done(5, ok()));
        b.op(1, "SET k one", 10, done(20, ok()));
        b.op(2, "SET k zero", 30, done(40, ok()));
        b.op(1, "GET k", 50, Some((60, bulk("one"))));
        assert!(report(&b).violation.is_none());
        b.history.ops[3].complete = Some((60, bulk("zero")));
        assert!(report(&b).violation.is_some());
    }

    #[test]
    fn many_unanswered_increments_stay_decidable() {
        // 40 INCRs whose connections died: 2^40 subsets may have run, but
        // they are interchangeable, so the search stays small and still
        // sees that no subset explains a read of 41.
        let mut b = Builder::new();
        for i in 0..40 {
            op(&mut b, "INCR n", i, None);
        }
        op(&mut b, "GET n", 100, Some((110, bulk("17"))));
        op(&mut b, "INCR n", 120, Some((130, Frame::Integer(20))));
        let r = check_bounded(&b.history, 20_000);
        assert!(r.violation.is_none(), "{r:?}");
        assert_eq!((r.keys_linearizable, r.keys_unknown), (1, 0), "{r:?}");
        b.history.ops[40].complete = Some((110, bulk("41")));
        let r = check_bounded(&b.history, 20_000);
        assert!(r.violation.is_some(), "only 40 increments were sent: {r:?}");
    }

    #[test]
    fn effort_is_bounded_and_reported_as_unknown() {
        let mut b = Builder::new();
        // Many overlapping writes and an impossible read: the search must
        // try every order before failing, which the bound cuts short.
        for i in 0..200 {
            op(
                &mut b,
                &format!("SET k v{i}"),
                i,
                Some((10_000, simple("OK"))),
            );
        }
        op(&mut b, "GET k", 500, Some((600, bulk("never"))));
        let r = check_bounded(&b.history, 20_000);
        assert!(r.violation.is_none(), "{r:?}");
        assert_eq!(r.keys_unknown, 1);
    }
}
