//! Client-side caching: a tracking client never answers a read from its
//! cache with a value the server had already replaced, as far as the
//! client could see.
//!
//! What a client has seen is its connection's **frontier**: when it serves
//! a read from its cache (a [`CacheServe`]), every earlier request on the
//! connection has been answered, and the latest of them in the server's
//! execution order ([`History::executions`]) is the frontier. Redis
//! writes an invalidation to a tracking client while the write runs (a
//! BCAST one at the end of the engine's input), so it comes before the
//! reply to any of that client's requests executed after the write: a
//! client that drops what is invalidated cannot hold a value that a write
//! before its frontier replaced. The checker therefore replays the
//! workload's writes in execution order and requires the served value to
//! be the key's value at the frontier.
//!
//! Judging the value, rather than whether an invalidation came, is what
//! closes the gaps a message-only check leaves: an invalidation sent
//! before the write took effect (the client re-reads the old value on it
//! and caches it again, and no second message comes), one that is lost,
//! one for another key, a flush without the null invalidation. The served
//! value must also be what the connection's last GET of the key read.
//!
//! The checker declines, rather than guesses, where the replay cannot know
//! the value: a key with an expiry time (Redis tells a tracker only when
//! the key is deleted, lazily or by active expiry, by a clock the faults
//! move), a key some other
//! workload's request named, every key after a FLUSHDB or SWAPDB of
//! another workload, and runs with a crash and restart.

use seedkv_engine::resp::Frame;

use super::name_buffer::NameBuffer;
use super::{Checker, RunFacts, Violation};
use crate::check::pipeline::render_args;
use crate::fxhash::FxHashMap;
use crate::history::{CacheServe, ConnId, History, Op};
use crate::workload::tracking::KEYS_COUNT;

const NAME: &str = "tracking";

/// The workload whose writes are replayed (`Op::workload`).
const WORKLOAD: &str = "tracking";

/// Keys the replay follows: the workload's `trk:` keys, bounded so that a
/// malformed history cannot grow the timelines without limit.
const KEYS_MAX: usize = KEYS_COUNT as usize;

pub struct TrackingCheck;

/// A key's value after an execution, as far as the replay knows it.
/// Values are borrowed from the history's requests: the replay records
/// one state per write, and a copy of each value was most of its cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State<'a> {
    /// The value (`None`: absent) and its expiry time (unix ms).
    Known(Option<&'a [u8]>, Option<u64>),
    Unknown,
}

/// The replay: per key, the executions that changed it (execution index,
/// state after); and the executions that changed every key.
#[derive(Default)]
struct Timelines<'a> {
    keys: FxHashMap<&'a [u8], Vec<(usize, State<'a>)>>,
    all: Vec<(usize, State<'a>)>,
}

impl<'a> Timelines<'a> {
    /// The key's state after execution `at` (and before any later one).
    fn state_at(&self, key: &[u8], at: usize) -> State<'a> {
        let last = |events: &[(usize, State<'a>)]| {
            let n = events.partition_point(|(i, _)| *i <= at);
            n.checked_sub(1).map(|n| events[n])
        };
        let own = self.keys.get(key).and_then(|e| last(e));
        let all = last(&self.all);
        match (own, all) {
            (Some((i, s)), Some((j, _))) if i > j => s,
            (_, Some((_, s))) => s,
            (Some((_, s)), None) => s,
            (None, None) => State::Known(None, None),
        }
    }

    fn push(&mut self, key: &'a [u8], at: usize, state: State<'a>) {
        if !self.keys.contains_key(key) && self.keys.len() >= KEYS_MAX {
            // Not one of the workload's keys: the replay does not follow it.
            return;
        }
        self.keys.entry(key).or_default().push((at, state));
    }
}

fn is_tracking_key(arg: &[u8]) -> bool {
    arg.starts_with(b"trk:")
}

fn parse_i64(arg: &[u8]) -> Option<i64> {
    std::str::from_utf8(arg).ok()?.parse().ok()
}

/// Replays one of the workload's writes (`at` is its execution index).
fn replay_write<'a>(t: &mut Timelines<'a>, at: usize, unix_ms: u64, args: &'a [Vec<u8>]) {
    let mut name_buffer = NameBuffer::default();
    match (name_buffer.lower(&args[0]), args.len()) {
        (b"set", 3) => t.push(&args[1], at, State::Known(Some(&args[2]), None)),
        (b"set", 5) => {
            let expiry = parse_i64(&args[4]).map(|ms| unix_ms.saturating_add(ms as u64));
            let state = match expiry {
                Some(e) => State::Known(Some(&args[2]), Some(e)),
                None => State::Unknown,
            };
            t.push(&args[1], at, state);
        }
        (b"del", _) => {
            for k in &args[1..] {
                t.push(k, at, State::Known(None, None));
            }
        }
        (b"pexpire", 3) => {
            let state = match (parse_i64(&args[2]), t.state_at(&args[1], at)) {
                (Some(ms), _) if ms <= 0 => State::Known(None, None),
                (Some(ms), State::Known(Some(v), _)) => {
                    State::Known(Some(v), Some(unix_ms.saturating_add(ms as u64)))
                }
                (Some(_), State::Known(None, _)) => State::Known(None, None),
                _ => State::Unknown,
            };
            t.push(&args[1], at, state);
        }
        (b"flushdb", _) => t.all.push((at, State::Known(None, None))),
        _ => {}
    }
}

/// The replay of every execution that may have changed a `trk:` key.
fn timelines<'a>(history: &'a History, ops: &crate::history::OpIndex<'a>) -> Timelines<'a> {
    let mut t = Timelines::default();
    for (at, exec) in history.executions.iter().enumerate() {
        if exec.name.is_empty() {
            continue;
        }
        let Some(op) = ops.of_execution(at, exec) else {
            continue;
        };
        if op.workload == WORKLOAD {
            replay_write(&mut t, at, exec.unix_ms, &op.args);
            continue;
        }
        match exec.name {
            "flushall" => t.all.push((at, State::Known(None, None))),
            "flushdb" | "swapdb" => t.all.push((at, State::Unknown)),
            _ => {
                for arg in op.args.iter().filter(|a| is_tracking_key(a)) {
                    t.push(arg, at, State::Unknown);
                }
            }
        }
    }
    t
}

/// Per connection, by request index: the latest execution index among
/// that request and every earlier one (the frontier once they are all
/// answered).
fn frontiers(history: &History) -> FxHashMap<ConnId, Vec<Option<usize>>> {
    let mut out: FxHashMap<ConnId, Vec<Option<usize>>> = FxHashMap::default();
    for (at, exec) in history.executions.iter().enumerate() {
        let v = out.entry(exec.conn).or_default();
        let seq = exec.seq_in_conn as usize;
        if v.len() <= seq {
            v.resize(seq + 1, None);
        }
        v[seq] = Some(v[seq].map_or(at, |p: usize| p.max(at)));
    }
    for v in out.values_mut() {
        let mut max = None;
        for p in v.iter_mut() {
            max = max.max(*p);
            *p = max;
        }
    }
    out
}

fn fail(message: String) -> Result<(), Violation> {
    Err(Violation {
        checker: NAME,
        message,
    })
}

fn render_value(v: Option<&[u8]>) -> String {
    match v {
        Some(v) => format!("{:?}", String::from_utf8_lossy(v)),
        None => "(absent)".into(),
    }
}

/// Per connection and key: the connection's GETs of the key (indices in
/// `History::ops`, in request order).
type Gets<'a> = FxHashMap<(ConnId, &'a [u8]), Vec<usize>>;

fn gets(history: &History) -> Gets<'_> {
    let mut out = Gets::default();
    for (i, op) in history.ops.iter().enumerate() {
        if op.workload == WORKLOAD && op.args.len() == 2 && op.args[0] == b"GET" {
            out.entry((op.conn, op.args[1].as_slice()))
                .or_default()
                .push(i);
        }
    }
    out
}

/// The connection's last answered GET of the serve's key before it.
fn last_get<'h>(history: &'h History, gets: &Gets, serve: &CacheServe) -> Option<&'h Op> {
    let list = gets.get(&(serve.conn, serve.key.as_slice()))?;
    let n = list.partition_point(|&i| history.ops[i].seq_in_conn < serve.seq_next);
    list[..n]
        .iter()
        .rev()
        .map(|&i| &history.ops[i])
        .find(|op| op.complete.is_some())
}

fn check_serve(
    history: &History,
    (t, gets): (&Timelines, &Gets),
    frontiers: &FxHashMap<ConnId, Vec<Option<usize>>>,
    serve: &CacheServe,
) -> Result<(), Violation> {
    let Some(get) = last_get(history, gets, serve) else {
        return fail(format!(
            "client {} conn {} served {} from its cache without ever reading it",
            serve.client,
            serve.conn,
            String::from_utf8_lossy(&serve.key)
        ));
    };
    let read = match &get.complete {
        Some((_, Frame::Bulk(v))) => Some(v.as_slice()),
        _ => None,
    };
    if read != serve.value.as_deref() {
        return fail(format!(
            "client {} conn {} served {}={} from its cache, but its last read #{} got {}",
            serve.client,
            serve.conn,
            String::from_utf8_lossy(&serve.key),
            render_value(serve.value.as_deref()),
            get.seq_in_conn,
            render_value(read)
        ));
    }
    let frontier = frontiers.get(&serve.conn).and_then(|v| {
        let i = (serve.seq_next as usize).min(v.len()).checked_sub(1)?;
        v[i]
    });
    let Some(frontier) = frontier else {
        return Ok(());
    };
    // A key with an expiry time is not judged: when the server deletes it
    // (and tells the trackers) depends on its clock, which faults move.
    let State::Known(value, None) = t.state_at(&serve.key, frontier) else {
        return Ok(());
    };
    if value == serve.value.as_deref() {
        return Ok(());
    }
    let exec = &history.executions[frontier];
    let invalidations: Vec<String> = history
        .tracking
        .invalidations
        .iter()
        .filter(|i| i.conn == serve.conn && i.at_ns <= serve.at_ns)
        .filter(|i| i.keys.as_ref().is_none_or(|k| k.contains(&serve.key)))
        .map(|i| format!("at {} ns before #{}", i.at_ns, i.before_seq))
        .collect();
    fail(format!(
        "client {} conn {} served {}={} from its cache (read by #{}) at {} ns, \
         after the reply to #{} (execution {frontier}), when the key was {}; \
         invalidations of it received: [{}]; its read: {}",
        serve.client,
        serve.conn,
        String::from_utf8_lossy(&serve.key),
        render_value(serve.value.as_deref()),
        get.seq_in_conn,
        serve.at_ns,
        exec.seq_in_conn,
        render_value(value),
        invalidations.join(", "),
        render_args(&get.args),
    ))
}

impl Checker for TrackingCheck {
    fn name(&self) -> &'static str {
        NAME
    }

    fn check(&self, history: &History, _facts: &RunFacts) -> Result<(), Violation> {
        if history.tracking.serves.is_empty() || history.persist.is_some() {
            return Ok(());
        }
        let ops = history.op_index();
        let t = timelines(history, &ops);
        let frontiers = frontiers(history);
        let gets = gets(history);
        for serve in &history.tracking.serves {
            check_serve(history, (&t, &gets), &frontiers, serve)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
