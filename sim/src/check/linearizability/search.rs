//! The search for a linearization of one key's history (Wing & Gong, with
//! Lowe's memoization; see the parent module).

use super::memo::{canonical, zobrist, Memo, States};
use super::register::step;
use super::{KeyOp, Outcome, LINEARIZABILITY_CACHE_BYTES_MAX};
use crate::fxhash::FxHashMap;
use crate::history::TimeNs;

/// One call or return in the time-ordered list.
#[derive(Clone, Copy, Debug)]
struct ListEntry {
    /// Index into the key's ops.
    op: usize,
    is_call: bool,
    time_ns: TimeNs,
}

/// The WGL search with Lowe's memoization on one key's history.
///
/// At each configuration the candidates are the calls before the first
/// return entry left; WGL may try them in any order. Answered requests
/// are tried first, then those without a reply: a dead pipeline leaves
/// a dozen unanswered SETs invoked before the answered requests, and
/// trying them first in list order made the search linearize every
/// subset of them before finding that none had run (2^13 configurations,
/// the step bound reached, the key unknown, for a history of 24 requests).
pub(super) fn search(ops: &[KeyOp<'_>], steps_max: u64) -> Outcome {
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

    // The memo numbers answered and unanswered requests apart (see `Memo`):
    // `class_index` is an op's number within its class.
    let mut class_index: Vec<usize> = Vec::with_capacity(ops.len());
    let (mut answered_count, mut unanswered_count) = (0usize, 0usize);
    for op in ops {
        let count = match op.complete {
            Some(_) => &mut answered_count,
            None => &mut unanswered_count,
        };
        class_index.push(*count);
        *count += 1;
    }
    let zobrist: Vec<u64> = (0..ops.len()).map(zobrist).collect();
    // Adds `op` to the linearized set, or takes it out, in its class's
    // bitset, keeping the answered bitset's hints valid.
    let flip = |op: usize,
                answered: &mut [u64],
                unanswered: &mut [u64],
                full_words: &mut usize,
                top: &mut usize| {
        let i = class_index[op];
        let (w, bit) = (i / 64, 1u64 << (i % 64));
        if ops[op].complete.is_none() {
            unanswered[w] ^= bit;
            return;
        }
        answered[w] ^= bit;
        if answered[w] & bit != 0 {
            *top = (*top).max(w + 1);
        } else {
            *full_words = (*full_words).min(w);
        }
    };
    let mut linearized = vec![0u64; answered_count.div_ceil(64).max(1)];
    let mut unanswered_linearized = vec![0u64; unanswered_count.div_ceil(64)];
    let mut linearized_hash: u64 = 0;
    // Canonical-form hints: `linearized[..full_words]` are all ones (at
    // least), `linearized[top..]` are all zeros (at least).
    let mut full_words: usize = 0;
    let mut top: usize = 0;
    let mut memo = Memo::new(unanswered_linearized.len());
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
    // Which candidates the walk is trying (see the function's doc).
    let mut unanswered_pass = false;
    let mut steps: u64 = 0;
    while entry != NONE {
        steps += 1;
        let bytes = memo.bytes() + transitions.len() * 32 + states.bytes;
        if steps > steps_max || bytes > LINEARIZABILITY_CACHE_BYTES_MAX {
            return Outcome::Unknown;
        }
        let e = entries[entry];
        if e.is_call {
            if ops[e.op].complete.is_none() != unanswered_pass {
                entry = next[entry];
                continue;
            }
            let twin = twin_before[e.op];
            let twin_bit = |twin: usize| {
                let t = class_index[twin];
                unanswered_linearized[t / 64] & (1 << (t % 64))
            };
            if twin != NONE && twin_bit(twin) == 0 {
                entry = next[entry];
                continue;
            }
            let new_state = *transitions.entry((state, e.op as u32)).or_insert_with(|| {
                let op = &ops[e.op];
                let (new_state, reply) = step(&states.values[state as usize], &op.action);
                let matches = op
                    .complete
                    .as_ref()
                    .is_none_or(|(_, recorded)| **recorded == reply);
                matches.then(|| states.intern(new_state))
            });
            if let Some(new_state) = new_state {
                flip(
                    e.op,
                    &mut linearized,
                    &mut unanswered_linearized,
                    &mut full_words,
                    &mut top,
                );
                linearized_hash ^= zobrist[e.op];
                let end = canonical(&linearized, &mut full_words, &mut top, &mut holes);
                let fresh = memo.insert(
                    end,
                    &holes,
                    &unanswered_linearized,
                    linearized_hash,
                    new_state,
                );
                if fresh {
                    stack.push((entry, std::mem::replace(&mut state, new_state)));
                    lift(&mut next, &mut prev, entry, return_of[e.op]);
                    entry = next[head];
                    unanswered_pass = false;
                    continue;
                }
                flip(
                    e.op,
                    &mut linearized,
                    &mut unanswered_linearized,
                    &mut full_words,
                    &mut top,
                );
                linearized_hash ^= zobrist[e.op];
            }
            entry = next[entry];
        } else {
            if e.time_ns == TimeNs::MAX {
                // Only requests without replies are left; they may never
                // have run.
                return Outcome::Linearizable;
            }
            if !unanswered_pass && unanswered_count > 0 {
                // The answered candidates are tried: now the unanswered
                // ones, up to the same return entry.
                unanswered_pass = true;
                entry = next[head];
                continue;
            }
            let Some((call, old_state)) = stack.pop() else {
                return Outcome::NotLinearizable;
            };
            let op = entries[call].op;
            flip(
                op,
                &mut linearized,
                &mut unanswered_linearized,
                &mut full_words,
                &mut top,
            );
            linearized_hash ^= zobrist[op];
            state = old_state;
            unlift(&mut next, &mut prev, call, return_of[op]);
            // The candidates after it, in its pass.
            unanswered_pass = ops[op].complete.is_none();
            entry = next[call];
        }
    }
    Outcome::Linearizable
}
