//! HSCAN, SSCAN and ZSCAN completeness: the SCAN guarantees, per
//! collection. For an iteration over one key (from cursor 0 to a reply
//! with cursor 0, on one connection, same MATCH),
//!
//! 1. every element (hash field, set or sorted-set member) present in the
//!    key for the **whole** iteration is returned at least once;
//! 2. nothing is returned that was not in the key at some point during it,
//!    and every returned element matches MATCH;
//! 3. the iteration terminates (the bound of [`scan_calls_max`]).
//!
//! Iterations are found as in `check::scan` (SCAN over the keyspace), and
//! judged over the window from the execution of their first call to that
//! of their last.
//!
//! # Which elements were present
//!
//! [`Presence`] tracking follows the `hash:`, `set:` and `zset:` keys (only
//! the collection workloads use them) element by element through the
//! execution order: HSET/HDEL, SADD/SREM, ZADD/ZREM... say what they do to
//! each element whatever the reply; SPOP and ZPOPMIN say it through their
//! reply; set and sorted-set stores recompute the destination from the
//! sources. A store replaces the whole value, so an element it keeps is no
//! longer owed: the cursor walked the old table. When the checker cannot tell (a pop whose reply was lost, a
//! command it does not follow), the elements concerned become unknown:
//! never required, always allowed.

use std::collections::{BTreeMap, BTreeSet};

use seedkv_engine::cmd::flags;
use seedkv_engine::resp::Frame;

use super::model::redis_c::glob_match;
use super::pipeline::{parse_i64, render_args};
use super::scan::{scan_calls_max, SCAN_CALLS_SLACK};
use crate::check::{Checker, RunFacts, Violation};
use crate::history::{ConnId, Execution, History, Op};

/// Key prefixes whose elements are tracked.
pub const TRACKED_PREFIXES: &[&[u8]] = &[b"hash:", b"set:", b"zset:"];

/// Elements shown in a violation message.
const ELEMENTS_SHOWN_MAX: usize = 10;

fn is_tracked(key: &[u8]) -> bool {
    TRACKED_PREFIXES.iter().any(|p| key.starts_with(p))
}

/// The checker.
pub struct CollectionScan;

impl Checker for CollectionScan {
    fn name(&self) -> &'static str {
        "collection-scan"
    }

    fn check(&self, history: &History, _facts: &RunFacts) -> Result<(), Violation> {
        check_collection_scans(history).map_err(|message| Violation {
            checker: self.name(),
            message,
        })
    }
}

/// What the checker knows of one element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presence {
    Present,
    Absent,
    Unknown,
}

/// One key's elements. Elements not listed are absent, or unknown if
/// `wild`.
#[derive(Clone, Debug, Default)]
struct KeyElements {
    elements: BTreeMap<Vec<u8>, Presence>,
    wild: bool,
}

impl KeyElements {
    fn get(&self, e: &[u8]) -> Presence {
        match self.elements.get(e) {
            Some(&p) => p,
            None if self.wild => Presence::Unknown,
            None => Presence::Absent,
        }
    }

    fn set(&mut self, e: &[u8], p: Presence) {
        if p == Presence::Absent && !self.wild {
            self.elements.remove(e);
        } else {
            self.elements.insert(e.to_vec(), p);
        }
    }

    /// Every element becomes unknown.
    fn blur(&mut self) {
        for p in self.elements.values_mut() {
            *p = Presence::Unknown;
        }
        self.wild = true;
    }
}

/// What changed: one element, or (`None`) possibly all of a key.
type Change = (Vec<u8>, Option<Vec<u8>>);

/// Per tracked key, its elements.
#[derive(Debug, Default)]
struct Tracker {
    keys: BTreeMap<Vec<u8>, KeyElements>,
}

/// Members named in a pop's reply (SPOP; ZPOPMIN flat or in pairs).
fn reply_members(reply: &Frame, zset: bool) -> Option<Vec<Vec<u8>>> {
    match reply {
        Frame::Null => Some(Vec::new()),
        Frame::Bulk(m) => Some(vec![m.clone()]),
        Frame::Array(items) | Frame::Set(items) => {
            let mut out = Vec::new();
            for (i, item) in items.iter().enumerate() {
                match item {
                    Frame::Bulk(m) if !zset || i % 2 == 0 => out.push(m.clone()),
                    Frame::Array(pair) if zset => match pair.first() {
                        Some(Frame::Bulk(m)) => out.push(m.clone()),
                        _ => return None,
                    },
                    _ if zset && i % 2 == 1 => {}
                    _ => return None,
                }
            }
            Some(out)
        }
        _ => None,
    }
}

/// How a store combines its sources.
#[derive(Clone, Copy)]
enum Algebra {
    Union,
    Inter,
    Diff,
}

impl Tracker {
    fn key(&mut self, key: &[u8]) -> &mut KeyElements {
        self.keys.entry(key.to_vec()).or_default()
    }

    fn get(&self, key: &[u8], e: &[u8]) -> Presence {
        self.keys.get(key).map_or(Presence::Absent, |k| k.get(e))
    }

    fn set(&mut self, key: &[u8], e: &[u8], p: Presence, changes: &mut Vec<Change>) {
        self.key(key).set(e, p);
        changes.push((key.to_vec(), Some(e.to_vec())));
    }

    /// `e` was written by a command that makes it present unless it failed
    /// in a way the lost reply hides: present stays present, else unknown.
    fn maybe_present(
        &mut self,
        key: &[u8],
        e: &[u8],
        reply: Option<&Frame>,
        changes: &mut Vec<Change>,
    ) {
        let p = match reply {
            Some(Frame::Null) => return,
            Some(_) => Presence::Present,
            None if self.get(key, e) == Presence::Present => Presence::Present,
            None => Presence::Unknown,
        };
        self.set(key, e, p, changes);
    }

    fn blur(&mut self, key: &[u8], changes: &mut Vec<Change>) {
        self.key(key).blur();
        changes.push((key.to_vec(), None));
    }

    fn store(
        &mut self,
        dst: &[u8],
        sources: &[Vec<u8>],
        algebra: Algebra,
        changes: &mut Vec<Change>,
    ) {
        let empty = KeyElements::default();
        let srcs: Vec<&KeyElements> = sources
            .iter()
            .map(|s| self.keys.get(s.as_slice()).unwrap_or(&empty))
            .collect();
        // Each element's presence in the result, from its presence in the
        // first source and in the rest.
        let combine = |first: Presence, rest: &mut dyn Iterator<Item = Presence>| -> Presence {
            use Presence::*;
            let (mut present, mut unknown, mut absent) = (false, false, false);
            for p in rest {
                match p {
                    Present => present = true,
                    Unknown => unknown = true,
                    Absent => absent = true,
                }
            }
            match algebra {
                Algebra::Union if first == Present || present => Present,
                Algebra::Union if first == Unknown || unknown => Unknown,
                Algebra::Union => Absent,
                Algebra::Inter if first == Absent || absent => Absent,
                Algebra::Inter if first == Present && !unknown => Present,
                Algebra::Inter => Unknown,
                Algebra::Diff if first == Absent || present => Absent,
                Algebra::Diff if first == Present && !unknown => Present,
                Algebra::Diff => Unknown,
            }
        };
        let wild = match algebra {
            Algebra::Union => srcs.iter().any(|s| s.wild),
            Algebra::Inter => srcs.iter().all(|s| s.wild),
            Algebra::Diff => srcs[0].wild,
        };
        // The sources' elements merged in order (each source's map is
        // sorted): one pass, and the result built from sorted pairs,
        // instead of a lookup per element per source and an insert each.
        let mut heads: Vec<_> = srcs.iter().map(|s| s.elements.iter().peekable()).collect();
        let mut merged: Vec<(Vec<u8>, Presence)> = Vec::new();
        let mut presences: Vec<Presence> = Vec::with_capacity(srcs.len());
        while let Some(c) = heads
            .iter_mut()
            .filter_map(|h| h.peek().map(|(e, _)| *e))
            .min()
        {
            presences.clear();
            for (head, src) in heads.iter_mut().zip(&srcs) {
                match head.next_if(|(e, _)| *e == c) {
                    Some((_, &p)) => presences.push(p),
                    None => presences.push(src.get(c)),
                }
            }
            let p = combine(presences[0], &mut presences[1..].iter().copied());
            // As `KeyElements::set` on an empty result.
            if p != Presence::Absent || wild {
                merged.push((c.clone(), p));
            }
        }
        let out = KeyElements {
            elements: merged.into_iter().collect(),
            wild,
        };
        self.keys.insert(dst.to_vec(), out);
        changes.push((dst.to_vec(), None));
    }

    /// Applies one execution; returns what changed.
    fn apply(&mut self, exec: &Execution, args: &[Vec<u8>], reply: Option<&Frame>) -> Vec<Change> {
        let mut changes = Vec::new();
        if exec.name.is_empty()
            || matches!(reply, Some(Frame::Error(_)))
            || !args.iter().skip(1).any(|a| is_tracked(a))
        {
            return changes;
        }
        if !self.apply_known(exec.name, args, reply, &mut changes) && exec.flags & flags::WRITE != 0
        {
            for a in &args[1..] {
                if is_tracked(a) {
                    self.blur(a, &mut changes);
                }
            }
        }
        changes
    }

    /// `false`: a command (or form) this tracker does not follow.
    fn apply_known(
        &mut self,
        name: &str,
        args: &[Vec<u8>],
        reply: Option<&Frame>,
        changes: &mut Vec<Change>,
    ) -> bool {
        let Some(key) = args.get(1) else { return false };
        match name {
            "hset" | "hmset" if args.len() >= 4 && args.len().is_multiple_of(2) => {
                for pair in args[2..].chunks(2) {
                    self.set(key, &pair[0], Presence::Present, changes);
                }
            }
            "hsetnx" if args.len() == 4 => self.set(key, &args[2], Presence::Present, changes),
            "sadd" if args.len() >= 3 => {
                for m in &args[2..] {
                    self.set(key, m, Presence::Present, changes);
                }
            }
            "hdel" | "srem" | "zrem" if args.len() >= 3 => {
                for m in &args[2..] {
                    self.set(key, m, Presence::Absent, changes);
                }
            }
            "hincrby" | "hincrbyfloat" if args.len() == 4 => {
                self.maybe_present(key, &args[2], reply, changes)
            }
            "zincrby" if args.len() == 4 => self.maybe_present(key, &args[3], reply, changes),
            "spop" | "zpopmin" | "zpopmax" => {
                let zset = name != "spop";
                match reply.and_then(|r| reply_members(r, zset)) {
                    Some(members) => {
                        for m in members {
                            self.set(key, &m, Presence::Absent, changes);
                        }
                    }
                    None => self.blur(key, changes),
                }
            }
            "smove" if args.len() == 4 => {
                let (dst, m) = (&args[2], &args[3]);
                match reply {
                    Some(Frame::Integer(1)) | Some(Frame::Boolean(true)) => {
                        self.set(key, m, Presence::Absent, changes);
                        self.set(dst, m, Presence::Present, changes);
                    }
                    Some(_) => {}
                    None => {
                        if self.get(key, m) != Presence::Absent {
                            self.set(key, m, Presence::Unknown, changes);
                        }
                        if self.get(dst, m) != Presence::Present {
                            self.set(dst, m, Presence::Unknown, changes);
                        }
                    }
                }
            }
            "sunionstore" | "sinterstore" | "sdiffstore" if args.len() >= 3 => {
                let algebra = match name {
                    "sunionstore" => Algebra::Union,
                    "sinterstore" => Algebra::Inter,
                    _ => Algebra::Diff,
                };
                self.store(key, &args[2..], algebra, changes);
            }
            "zunionstore" | "zinterstore" | "zdiffstore" => {
                let Some(n) = args.get(2).and_then(|n| parse_i64(n)) else {
                    return false;
                };
                let Some(sources) = usize::try_from(n).ok().and_then(|n| args.get(3..3 + n)) else {
                    return false;
                };
                if sources.is_empty() {
                    return false;
                }
                let algebra = match name {
                    "zunionstore" => Algebra::Union,
                    "zinterstore" => Algebra::Inter,
                    _ => Algebra::Diff,
                };
                self.store(key, sources, algebra, changes);
            }
            "zadd" => return self.zadd(key, args, reply, changes),
            "del" | "unlink" => {
                for k in &args[1..] {
                    if is_tracked(k) {
                        self.keys.remove(k.as_slice());
                        changes.push((k.clone(), None));
                    }
                }
            }
            _ => return false,
        }
        true
    }

    fn zadd(
        &mut self,
        key: &[u8],
        args: &[Vec<u8>],
        reply: Option<&Frame>,
        changes: &mut Vec<Change>,
    ) -> bool {
        let (mut nx, mut xx, mut incr) = (false, false, false);
        let mut at = 2;
        while let Some(a) = args.get(at) {
            match a.to_ascii_lowercase().as_slice() {
                b"nx" => nx = true,
                b"xx" => xx = true,
                b"incr" => incr = true,
                b"gt" | b"lt" | b"ch" => {}
                _ => break,
            }
            at += 1;
        }
        let pairs = &args[at..];
        if pairs.is_empty() || !pairs.len().is_multiple_of(2) {
            return false;
        }
        if xx {
            return true; // updates existing members only
        }
        for pair in pairs.chunks(2) {
            if incr && !nx {
                self.maybe_present(key, &pair[1], reply, changes);
            } else {
                self.set(key, &pair[1], Presence::Present, changes);
            }
        }
        true
    }
}

/// One finished iteration.
struct Iteration<'a> {
    conn: ConnId,
    key: Vec<u8>,
    calls: Vec<&'a Op>,
    pattern: Option<Vec<u8>>,
    returned: BTreeSet<Vec<u8>>,
}

/// `(command, key, cursor, MATCH)` of an HSCAN/SSCAN/ZSCAN request.
type Step<'a> = (Vec<u8>, &'a [u8], &'a [u8], Option<Vec<u8>>);

fn parse_step(op: &Op) -> Option<Step<'_>> {
    let name = op.args.first()?.to_ascii_lowercase();
    if !matches!(name.as_slice(), b"hscan" | b"sscan" | b"zscan") {
        return None;
    }
    let (key, cursor) = (op.args.get(1)?, op.args.get(2)?);
    let mut pattern = None;
    for pair in op.args.get(3..)?.chunks(2) {
        let [option, value] = pair else { return None };
        match option.to_ascii_lowercase().as_slice() {
            b"match" => pattern = Some(value.clone()),
            b"count" => {}
            _ => return None,
        }
    }
    Some((name, key, cursor, pattern))
}

/// The next cursor and the elements of a reply.
fn parse_reply(reply: &Frame, pairs: bool) -> Option<(&[u8], Vec<&[u8]>)> {
    let Frame::Array(items) = reply else {
        return None;
    };
    let [Frame::Bulk(cursor), Frame::Array(elements)] = items.as_slice() else {
        return None;
    };
    let step = if pairs { 2 } else { 1 };
    let mut out = Vec::new();
    for e in elements.iter().step_by(step) {
        let Frame::Bulk(e) = e else { return None };
        out.push(e.as_slice());
    }
    Some((cursor, out))
}

fn iterations(history: &History) -> Result<Vec<Iteration<'_>>, String> {
    let mut by_conn: BTreeMap<ConnId, Vec<&Op>> = BTreeMap::new();
    for op in &history.ops {
        if parse_step(op).is_some_and(|s| is_tracked(s.1)) {
            by_conn.entry(op.conn).or_default().push(op);
        }
    }
    let calls_max = std::cell::OnceCell::new();
    let mut done = Vec::new();
    for (conn, mut ops) in by_conn {
        ops.sort_by_key(|op| op.seq_in_conn);
        let mut current: Option<(Iteration, Vec<u8>, Vec<u8>)> = None;
        for op in ops {
            let (name, key, cursor, pattern) = parse_step(op).expect("filtered");
            let continues = current.as_ref().is_some_and(|(it, n, next)| {
                *n == name && it.key == key && next == cursor && it.pattern == pattern
            });
            if !continues {
                current = None;
                if cursor != b"0" {
                    continue;
                }
                let fresh = Iteration {
                    conn,
                    key: key.to_vec(),
                    calls: Vec::new(),
                    pattern,
                    returned: BTreeSet::new(),
                };
                current = Some((fresh, name.clone(), Vec::new()));
            }
            let (it, _, next) = current.as_mut().expect("set above");
            it.calls.push(op);
            let count = it.calls.len() as u64;
            if count > SCAN_CALLS_SLACK
                && count > *calls_max.get_or_init(|| scan_calls_max(history))
            {
                return Err(format!(
                    "{} iteration of {} on conn {conn} did not terminate after {count} calls",
                    String::from_utf8_lossy(&name).to_uppercase(),
                    String::from_utf8_lossy(key)
                ));
            }
            let Some((_, reply)) = &op.complete else {
                current = None;
                continue;
            };
            let Some((cursor_next, elements)) = parse_reply(reply, name != b"sscan") else {
                current = None;
                continue;
            };
            it.returned.extend(elements.into_iter().map(<[u8]>::to_vec));
            *next = cursor_next.to_vec();
            if cursor_next == b"0" {
                done.push(current.take().expect("in progress").0);
            }
        }
    }
    Ok(done)
}

/// An iteration followed through the execution order.
struct Window<'a> {
    iteration: Iteration<'a>,
    exec_last: usize,
    /// Elements present since the window opened.
    candidates: BTreeSet<Vec<u8>>,
    /// Returned elements not yet seen present or unknown in the key; `None`
    /// once the key had unknown elements beyond those listed. Only returned
    /// elements can be phantoms, so only they are followed: a store into
    /// the key no longer copies every element of the result.
    unseen: Option<BTreeSet<Vec<u8>>>,
}

impl Window<'_> {
    /// `e` was present or unknown in the key at some point.
    fn saw(&mut self, e: &[u8]) {
        if let Some(unseen) = self.unseen.as_mut() {
            unseen.remove(e);
        }
    }

    /// Every element listed in `k` was present or unknown at some point
    /// (a key that is not wild lists no absent element).
    fn saw_all(&mut self, k: &KeyElements) {
        debug_assert!(!k.wild);
        if let Some(unseen) = self.unseen.as_mut() {
            unseen.retain(|e| !k.elements.contains_key(e));
        }
    }
}

fn check_collection_scans(history: &History) -> Result<(), String> {
    let found = iterations(history)?;
    if found.is_empty() {
        return Ok(());
    }
    let exec_of = history.first_executions();
    let mut pending: BTreeMap<usize, Vec<Window>> = BTreeMap::new();
    for iteration in found {
        let execs: Option<Vec<usize>> = iteration
            .calls
            .iter()
            .map(|op| exec_of.get(&(op.conn, op.seq_in_conn)).copied())
            .collect();
        let Some(execs) = execs else { continue };
        let (first, last) = (execs[0], *execs.last().expect("calls"));
        let unseen = Some(iteration.returned.clone());
        pending.entry(first).or_default().push(Window {
            iteration,
            exec_last: last,
            candidates: BTreeSet::new(),
            unseen,
        });
    }
    let ops = history.op_index();
    let mut tracker = Tracker::default();
    let mut open: Vec<Window> = Vec::new();
    for (j, exec) in history.executions.iter().enumerate() {
        for mut w in pending.remove(&j).unwrap_or_default() {
            open_window(&mut w, &tracker);
            open.push(w);
        }
        let op = ops.of_execution(j, exec);
        if let Some(op) = op {
            let reply = op.complete.as_ref().map(|(_, f)| f);
            let changes = tracker.apply(exec, &op.args, reply);
            for w in open.iter_mut() {
                follow(w, &tracker, &changes);
            }
        }
        // Most executions close no window: no partition (two vectors) then.
        if open.iter().any(|w| w.exec_last == j) {
            let (closing, still): (Vec<Window>, Vec<Window>) =
                open.into_iter().partition(|w| w.exec_last == j);
            open = still;
            for w in closing {
                judge(&w)?;
            }
        }
        if open.is_empty() && pending.is_empty() {
            break;
        }
    }
    Ok(())
}

fn matches_pattern(w: &Window, e: &[u8]) -> bool {
    w.iteration
        .pattern
        .as_ref()
        .is_none_or(|p| glob_match(p, e))
}

fn open_window(w: &mut Window, tracker: &Tracker) {
    let Some(k) = tracker.keys.get(&w.iteration.key) else {
        return;
    };
    for (e, &p) in &k.elements {
        if p == Presence::Present && matches_pattern(w, e) {
            w.candidates.insert(e.clone());
        }
    }
    match k.wild {
        true => w.unseen = None,
        false => w.saw_all(k),
    }
}

fn follow(w: &mut Window, tracker: &Tracker, changes: &[Change]) {
    for (key, element) in changes {
        if *key != w.iteration.key {
            continue;
        }
        match element {
            Some(e) => {
                let p = tracker.get(key, e);
                if p != Presence::Present {
                    w.candidates.remove(e);
                }
                if p != Presence::Absent {
                    w.saw(e);
                }
            }
            None => {
                // A store replaced the value (a new table: the cursor's
                // guarantee does not carry over), DEL emptied it, or the
                // checker lost track: nothing is owed from here on.
                w.candidates.clear();
                match tracker.keys.get(key) {
                    Some(k) if k.wild => w.unseen = None,
                    Some(k) => w.saw_all(k),
                    None => {}
                }
            }
        }
    }
}

fn shown<'a>(elements: impl Iterator<Item = &'a Vec<u8>>) -> String {
    let all: Vec<String> = elements
        .map(|e| format!("{:?}", String::from_utf8_lossy(e)))
        .collect();
    let n = all.len();
    let mut list: Vec<String> = all.into_iter().take(ELEMENTS_SHOWN_MAX).collect();
    if n > ELEMENTS_SHOWN_MAX {
        list.push(format!("... {} more", n - ELEMENTS_SHOWN_MAX));
    }
    list.join(", ")
}

fn judge(w: &Window) -> Result<(), String> {
    let it = &w.iteration;
    let context = || {
        format!(
            "`{}` iteration on conn {} (requests #{}..=#{}, {} calls)",
            render_args(&it.calls[0].args),
            it.conn,
            it.calls[0].seq_in_conn,
            it.calls[it.calls.len() - 1].seq_in_conn,
            it.calls.len()
        )
    };
    let missed: Vec<&Vec<u8>> = w
        .candidates
        .iter()
        .filter(|c| !it.returned.contains(*c))
        .collect();
    if !missed.is_empty() {
        return Err(format!(
            "{}: {} element(s) present for the whole iteration were never returned: {}",
            context(),
            missed.len(),
            shown(missed.into_iter())
        ));
    }
    if let Some(unseen) = &w.unseen {
        let phantom: Vec<&Vec<u8>> = unseen.iter().collect();
        if !phantom.is_empty() {
            return Err(format!(
                "{}: returned element(s) that were never in the key during it: {}",
                context(),
                shown(phantom.into_iter())
            ));
        }
    }
    let unmatched: Vec<&Vec<u8>> = it
        .returned
        .iter()
        .filter(|e| !matches_pattern(w, e))
        .collect();
    if !unmatched.is_empty() {
        return Err(format!(
            "{}: returned element(s) that do not match: {}",
            context(),
            shown(unmatched.into_iter())
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use seedkv_engine::resp::Frame;

    use super::check_collection_scans;
    use crate::check::model::testkit::{bulk, Builder};

    fn reply(cursor: &str, elements: &[&str]) -> Frame {
        Frame::Array(vec![
            bulk(cursor),
            Frame::Array(elements.iter().map(|e| bulk(e)).collect()),
        ])
    }

    /// hash:0 has a, b, c, d; conn 1 scans it in two calls while conn 2
    /// deletes b, adds n, and overwrites c.
    fn churn(second: &[&str]) -> Builder {
        let mut b = Builder::new();
        b.run(2, "HSET hash:0 a 1 b 2 c 3 d 4", Frame::Integer(4));
        b.run(1, "HSCAN hash:0 0 COUNT 2", reply("3", &["a", "1"]));
        b.run(2, "HDEL hash:0 b", Frame::Integer(1));
        b.run(2, "HSET hash:0 n 9 c 33", Frame::Integer(1));
        b.run(1, "HSCAN hash:0 3 COUNT 2", reply("0", second));
        b
    }

    #[test]
    fn a_complete_iteration_under_churn_passes() {
        check_collection_scans(&churn(&["c", "33", "d", "4"]).history).expect("a, c, d returned");
        check_collection_scans(&churn(&["b", "2", "c", "33", "d", "4", "n", "9"]).history)
            .expect("deleted and added fields may be returned");
    }

    #[test]
    fn missing_a_stable_element_fails() {
        let message = check_collection_scans(&churn(&["c", "33"]).history).expect_err("d missed");
        assert!(message.contains("\"d\""), "{message}");
    }

    #[test]
    fn a_phantom_element_fails() {
        let message = check_collection_scans(&churn(&["c", "33", "d", "4", "zz", "0"]).history)
            .expect_err("zz never existed");
        assert!(message.contains("zz"), "{message}");
    }

    #[test]
    fn set_pops_and_stores_are_followed() {
        let mut b = Builder::new();
        b.run(2, "SADD set:0 1 2 3", Frame::Integer(3));
        b.run(2, "SADD set:1 3 4", Frame::Integer(2));
        b.run(1, "SSCAN set:4 0 MATCH *", reply("0", &[]));
        b.run(2, "SUNIONSTORE set:4 set:0 set:1", Frame::Integer(4));
        // A store during an iteration owes nothing: the table was replaced.
        b.run(1, "SSCAN set:4 0", reply("2", &["1"]));
        b.run(2, "SUNIONSTORE set:4 set:0 set:1", Frame::Integer(4));
        b.run(1, "SSCAN set:4 2", reply("0", &["3"]));
        check_collection_scans(&b.history).expect("replaced mid-iteration");
        b.run(1, "SSCAN set:4 0", reply("2", &["1", "2"]));
        b.run(2, "SPOP set:4", bulk("1"));
        b.run(1, "SSCAN set:4 2", reply("0", &["3"]));
        let message = check_collection_scans(&b.history).expect_err("4 was there throughout");
        assert!(message.contains("\"4\""), "{message}");
        // A lost SPOP reply: every member may be gone, none is required.
        let last = b.history.ops.len() - 2;
        b.history.ops[last].complete = None;
        check_collection_scans(&b.history).expect("unknown after the SPOP");
    }

    #[test]
    fn sorted_set_scans_read_members_not_scores() {
        let mut b = Builder::new();
        b.run(2, "ZADD zset:0 1 a 2 b", Frame::Integer(2));
        b.run(2, "ZADD zset:0 XX 5 c", Frame::Integer(0));
        b.run(1, "ZSCAN zset:0 0", reply("0", &["a", "1", "b", "2"]));
        check_collection_scans(&b.history).expect("c was never added");
        let last = b.history.ops.len() - 1;
        b.history.ops[last].complete = Some((b.now_ns, reply("0", &["a", "1"])));
        assert!(check_collection_scans(&b.history)
            .expect_err("b missed")
            .contains("\"b\""));
    }
}
