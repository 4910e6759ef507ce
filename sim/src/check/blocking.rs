//! Blocking commands (BLPOP, BRPOP, BLMPOP, BLMOVE, BRPOPLPUSH, BZPOPMIN,
//! BZPOPMAX, BZMPOP): what Redis promises a client parked on keys.
//!
//! 1. **No lost wake-up.** After every command (and the serves it
//!    triggers), no blocked client waits on a key that could serve it: a
//!    push to a key with waiters is followed at once by their serves. So
//!    before any execution that is not such a serve, no blocked client may
//!    have a non-empty key of its type. In particular a client never times
//!    out while an element sat in one of its keys. A client also never
//!    parks while one of its keys could serve it.
//! 2. **FIFO.** Among the clients blocked on one key, the one blocked first
//!    is served first.
//! 3. **Timeouts in virtual time.** A timed-out request executes no earlier
//!    than its timeout after it parked, and no later than that plus
//!    [`RunFacts::fast_latency_bound_ns`] plus the CPU time other requests
//!    took meanwhile (the timer waits for the turn in progress).
//! 4. **At most once.** An element pushed under `blk:`/`bzs:` is popped at
//!    most once, and only after it was pushed.
//!
//! # Where a request parked
//!
//! A blocked request's [`crate::history::Execution`] is recorded when it is
//! served or times out. Where it parked comes from
//! [`History::received`]: the world notes, for every request that may
//! block, how many executions preceded the moment the engine got its last
//! byte. A request with nothing ahead of it on its connection (the previous
//! reply had arrived before it was sent) executes or parks exactly there.
//! Requests pipelined behind others are not placed, hence not judged
//! (their effect still goes through the model); nor are requests that
//! arrived while a long script was suspended between slices (the engine
//! held them until it ended, see [`History::received_inside_script_run`]).
//!
//! # What the keys held
//!
//! [`PopModel`] follows the `blk:`, `bzs:` and `rot:` keys exactly through
//! the execution order (see its docs); anything touching an unknown key is
//! not judged. A parked request whose connection closed without it being
//! served is taken as blocked only until the first execution that started
//! after the close (the engine may drop it any time after).

use std::collections::{BTreeMap, BTreeSet};

use seedkv_engine::resp::Frame;

use super::latency::LazyCpuTimeline;
use super::pipeline::render_args;
use super::pop_model::{is_modelled_key, Kind, PopModel};
use crate::check::{Checker, RunFacts, Violation};
use crate::fxhash::{FxHashMap, FxHashSet};
use crate::history::{ConnId, History, Op, Received, TimeNs};

/// Slack on both sides of a timeout: the engine may keep its deadlines in
/// milliseconds, as Redis does.
pub const TIMEOUT_SLACK_NS: u64 = 1_000_000;

/// Commands that may block.
pub const BLOCKING_COMMANDS: &[&str] = &[
    "blpop",
    "brpop",
    "brpoplpush",
    "blmove",
    "blmpop",
    "bzpopmin",
    "bzpopmax",
    "bzmpop",
];

/// A blocking request's timeout argument, in milliseconds (Redis takes
/// seconds as a float and rounds up to whole milliseconds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlockingTimeout {
    /// 0: wait forever.
    pub ms_lo: u64,
    pub ms_hi: u64,
}

impl BlockingTimeout {
    pub fn forever(self) -> bool {
        self.ms_hi == 0
    }

    /// The longest the request may legitimately wait; `None` if forever.
    pub fn wait_ns_max(self) -> Option<u64> {
        (!self.forever()).then(|| self.ms_hi * 1_000_000 + TIMEOUT_SLACK_NS)
    }
}

/// The timeout of `request` if it is a blocking command with a valid one.
pub fn blocking_timeout(request: &[Vec<u8>]) -> Option<BlockingTimeout> {
    // Lowercased on the stack: the world asks of every request it sends.
    let first = request.first()?;
    let mut name = [0u8; 16];
    let name = match name.get_mut(..first.len()) {
        Some(name) => {
            name.copy_from_slice(first);
            name.make_ascii_lowercase();
            &name[..]
        }
        None => return None,
    };
    if name == b"xread" || name == b"xreadgroup" {
        return stream_block_timeout(request);
    }
    let at = match name {
        b"blmpop" | b"bzmpop" => 1,
        b"blpop" | b"brpop" | b"brpoplpush" | b"blmove" | b"bzpopmin" | b"bzpopmax" => {
            request.len().checked_sub(1)?
        }
        _ => return None,
    };
    if at == 0 {
        return None;
    }
    let seconds: f64 = std::str::from_utf8(request.get(at)?)
        .ok()?
        .trim()
        .parse()
        .ok()?;
    if !(0.0..=1e9).contains(&seconds) {
        return None;
    }
    let ms = seconds * 1000.0;
    Some(BlockingTimeout {
        ms_lo: ms.floor() as u64,
        ms_hi: ms.ceil() as u64,
    })
}

/// XREAD's and XREADGROUP's `BLOCK <ms>` (before STREAMS), if any.
fn stream_block_timeout(request: &[Vec<u8>]) -> Option<BlockingTimeout> {
    let options = request
        .iter()
        .take_while(|a| !a.eq_ignore_ascii_case(b"streams"));
    let mut options = options.skip(1);
    while let Some(a) = options.next() {
        if a.eq_ignore_ascii_case(b"block") {
            let ms: u64 = std::str::from_utf8(options.next()?).ok()?.parse().ok()?;
            return Some(BlockingTimeout {
                ms_lo: ms,
                ms_hi: ms,
            });
        }
    }
    None
}

/// The keys a blocking request waits on, and their type.
fn waited_keys(args: &[Vec<u8>]) -> Option<(Vec<Vec<u8>>, Kind)> {
    let name = args.first()?.to_ascii_lowercase();
    let (keys, kind) = match name.as_slice() {
        b"blpop" | b"brpop" => (
            args.get(1..args.len().checked_sub(1)?)?.to_vec(),
            Kind::List,
        ),
        b"bzpopmin" | b"bzpopmax" => (
            args.get(1..args.len().checked_sub(1)?)?.to_vec(),
            Kind::ZSet,
        ),
        b"brpoplpush" | b"blmove" => (vec![args.get(1)?.clone()], Kind::List),
        b"blmpop" | b"bzmpop" => {
            let n: usize = std::str::from_utf8(args.get(2)?).ok()?.parse().ok()?;
            let keys = args.get(3..3usize.checked_add(n)?)?.to_vec();
            let kind = if name == b"blmpop" {
                Kind::List
            } else {
                Kind::ZSet
            };
            (keys, kind)
        }
        _ => return None,
    };
    (!keys.is_empty()).then_some((keys, kind))
}

/// The checker.
pub struct Blocking;

impl Checker for Blocking {
    fn name(&self) -> &'static str {
        "blocking"
    }

    fn check(&self, history: &History, facts: &RunFacts) -> Result<(), Violation> {
        check_blocking(history, facts.fast_latency_bound_ns).map_err(|message| Violation {
            checker: self.name(),
            message,
        })
    }
}

/// A blocking request the checker can place in the execution order.
struct Waiter<'a> {
    op: &'a Op,
    keys: Vec<Vec<u8>>,
    kind: Kind,
    timeout: BlockingTimeout,
    received: &'a Received,
    /// Executions before it parked (or executed at once).
    park: usize,
    /// Its own execution, if any.
    exec: Option<usize>,
    /// Removed from the waiters at this execution at the latest (closed
    /// connection, never served).
    gone_ns: Option<TimeNs>,
}

impl Waiter<'_> {
    /// Executed in the turn that received it: it never parked.
    fn immediate(&self) -> bool {
        self.exec
            .is_some_and(|e| e < self.received.executions_after)
    }

    fn describe(&self) -> String {
        format!(
            "conn {} request #{} `{}` (received at {} ns after execution #{})",
            self.op.conn,
            self.op.seq_in_conn,
            render_args(&self.op.args),
            self.received.at_ns,
            self.park as i64 - 1
        )
    }
}

/// Builds the placeable waiters, sorted by park order.
fn waiters(history: &History) -> Vec<Waiter<'_>> {
    let ops = history.op_index();
    let exec_of = history.first_executions();
    let closed: BTreeMap<ConnId, TimeNs> = history
        .conns
        .iter()
        .filter_map(|c| c.closed.as_ref().map(|(at, _)| (c.conn, *at)))
        .collect();
    let mut out = Vec::new();
    for r in &history.received {
        let Some(op) = ops.get(&(r.conn, r.seq_in_conn)) else {
            continue;
        };
        // Nothing of its connection may be ahead of it.
        if r.seq_in_conn > 0 {
            let ahead_done = ops
                .get(&(r.conn, r.seq_in_conn - 1))
                .and_then(|p| p.complete.as_ref())
                .is_some_and(|(at, _)| *at <= op.invoke_ns);
            if !ahead_done {
                continue;
            }
        }
        // A request that arrived while a script was suspended waited in
        // its query buffer until the script ended, then ran among the
        // other clients' held input in client order: where it parked is
        // not known, so it is not placed (its effect still goes through
        // the model, and its execution counts as an unplaced resume).
        if history.received_inside_script_run(r.executions_before) {
            continue;
        }
        let (Some((keys, kind)), Some(timeout)) =
            (waited_keys(&op.args), blocking_timeout(&op.args))
        else {
            continue;
        };
        if !keys.iter().all(|k| is_modelled_key(k)) {
            continue;
        }
        let exec = exec_of.get(&(r.conn, r.seq_in_conn)).copied();
        out.push(Waiter {
            op,
            keys,
            kind,
            timeout,
            received: r,
            park: r.executions_before,
            exec,
            gone_ns: if exec.is_none() {
                closed.get(&r.conn).copied()
            } else {
                None
            },
        });
    }
    out.sort_by_key(|w| (w.park, w.received.at_ns));
    out
}

/// The state of the walk over the execution order.
struct Walk<'a> {
    model: PopModel,
    waiters: Vec<Waiter<'a>>,
    /// Per key, the blocked waiters (indices into `waiters`) in FIFO order.
    queues: BTreeMap<Vec<u8>, Vec<usize>>,
    /// Keys that hold something a waiter on them could take.
    ready: BTreeSet<Vec<u8>>,
    /// Times each element was popped out of `blk:`/`bzs:` keys, and
    /// pushed into them.
    popped: BTreeMap<Vec<u8>, u32>,
    pushed: BTreeMap<Vec<u8>, u32>,
}

impl Walk<'_> {
    fn refresh_ready(&mut self, key: &[u8]) {
        let servable = !self.model.is_unknown(key)
            && self.queues.get(key).is_some_and(|q| {
                q.iter()
                    .any(|&w| self.model.len(key, self.waiters[w].kind) > 0)
            });
        if servable {
            self.ready.insert(key.to_vec());
        } else {
            self.ready.remove(key);
        }
    }

    fn unblock(&mut self, w: usize) {
        for key in self.waiters[w].keys.clone() {
            if let Some(q) = self.queues.get_mut(&key) {
                q.retain(|&x| x != w);
                if q.is_empty() {
                    self.queues.remove(&key);
                }
            }
            self.refresh_ready(&key);
        }
    }

    /// Parks waiter `w` (before execution `park`).
    fn park(&mut self, w: usize) -> Result<(), String> {
        let waiter = &self.waiters[w];
        if waiter.keys.iter().any(|k| self.model.is_unknown(k)) {
            return Ok(());
        }
        if waiter.immediate() {
            return Ok(()); // executed at once, never blocked
        }
        if let Some(k) = waiter
            .keys
            .iter()
            .find(|k| self.model.len(k, waiter.kind) > 0)
        {
            return Err(format!(
                "{} blocked although {} held {} element(s) it could take",
                waiter.describe(),
                String::from_utf8_lossy(k),
                self.model.len(k, waiter.kind)
            ));
        }
        for key in waiter.keys.clone() {
            self.queues.entry(key.clone()).or_default().push(w);
        }
        Ok(())
    }

    fn is_blocked(&self, w: usize) -> bool {
        self.waiters[w]
            .keys
            .first()
            .and_then(|k| self.queues.get(k))
            .is_some_and(|q| q.contains(&w))
    }

    fn lost_wakeup(&self, before: &str) -> Result<(), String> {
        let Some(key) = self.ready.first() else {
            return Ok(());
        };
        let q = &self.queues[key];
        let w = &self.waiters[q[0]];
        Err(format!(
            "lost wake-up: {} was blocked on {} while it held {} element(s), but {before} ran \
             before it was served",
            w.describe(),
            String::from_utf8_lossy(key),
            self.model.len(key, w.kind)
        ))
    }
}

fn check_blocking(history: &History, bound_ns: u64) -> Result<(), String> {
    if history.received.is_empty()
        && !history
            .ops
            .iter()
            .any(|op| op.args.get(1).is_some_and(|k| is_modelled_key(k)))
    {
        return Ok(());
    }
    let ops = history.op_index();
    let all = waiters(history);
    let mut by_park: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut by_exec: FxHashMap<usize, usize> = FxHashMap::default();
    let mut gone: Vec<(TimeNs, usize)> = Vec::new();
    for (i, w) in all.iter().enumerate() {
        by_park.entry(w.park).or_default().push(i);
        if let Some(e) = w.exec {
            by_exec.insert(e, i);
        }
        if let Some(at) = w.gone_ns {
            gone.push((at, i));
        }
    }
    gone.sort_unstable();
    let exec_of = history.first_executions();
    let resumed: FxHashSet<usize> = history
        .received
        .iter()
        .filter_map(|r| {
            exec_of
                .get(&(r.conn, r.seq_in_conn))
                .copied()
                .filter(|&e| e >= r.executions_after)
        })
        .collect();
    let mut gone = gone.into_iter().peekable();
    let cpu = LazyCpuTimeline::new(history);
    let mut walk = Walk {
        model: PopModel::default(),
        waiters: all,
        queues: BTreeMap::new(),
        ready: BTreeSet::new(),
        popped: BTreeMap::new(),
        pushed: BTreeMap::new(),
    };
    for (j, exec) in history.executions.iter().enumerate() {
        for w in by_park.remove(&j).unwrap_or_default() {
            walk.park(w)?;
        }
        // Clients whose connection closed before this execution started
        // may have been dropped by the engine.
        while let Some(&(at, w)) = gone.peek() {
            if at > exec.start_ns {
                break;
            }
            gone.next();
            if walk.is_blocked(w) {
                walk.unblock(w);
            }
        }
        let op = ops.of_execution(j, exec);
        let reply = op.and_then(|o| o.complete.as_ref()).map(|(_, f)| f);
        let waiter = by_exec.get(&j).copied().filter(|&w| walk.is_blocked(w));
        let served = waiter.is_some_and(|w| match reply {
            Some(Frame::Null) | Some(Frame::Error(_)) => false,
            Some(_) => true,
            None => {
                let w = &walk.waiters[w];
                w.keys.iter().any(|k| walk.model.len(k, w.kind) > 0)
            }
        });
        // A request that parked and resumed here, but that the walk could
        // not place, may be part of a serve phase: not judged.
        let unplaced_resume = waiter.is_none() && resumed.contains(&j);
        if !served && !unplaced_resume && !walk.ready.is_empty() {
            let what = match op {
                Some(o) => format!(
                    "execution #{j} (conn {} request #{} `{}`)",
                    o.conn,
                    o.seq_in_conn,
                    render_args(&o.args)
                ),
                None => format!("execution #{j}"),
            };
            walk.lost_wakeup(&what)?;
        }
        if let Some(w) = waiter {
            if !served && matches!(reply, None | Some(Frame::Null)) {
                check_timeout(&walk.waiters[w], exec.start_ns, bound_ns, &cpu)?;
            }
        }
        let Some(op) = op else { continue };
        if exec.name == "lpush" || exec.name == "rpush" || exec.name == "zadd" {
            note_pushes(&mut walk.pushed, &op.args, exec.name == "zadd");
        }
        let applied = walk.model.apply(exec, &op.args, reply).map_err(|why| {
            format!(
                "execution #{j} (conn {} request #{} `{}`): {why}",
                op.conn,
                op.seq_in_conn,
                render_args(&op.args)
            )
        })?;
        if let (Some(w), true) = (waiter, served) {
            if let Some(key) = &applied.served_from {
                check_fifo(&walk, w, key)?;
            }
            walk.unblock(w);
        } else if let Some(w) = waiter {
            walk.unblock(w);
        }
        for (key, element) in &applied.popped {
            if key.starts_with(b"rot:") {
                continue;
            }
            let pops = walk.popped.entry(element.clone()).or_default();
            *pops += 1;
            let pushes = walk.pushed.get(element).copied().unwrap_or(0);
            if *pops > pushes && pushes > 0 {
                return Err(format!(
                    "execution #{j} (conn {} request #{} `{}`) popped {:?} from {}, which was \
                     popped as many times before as it was pushed",
                    op.conn,
                    op.seq_in_conn,
                    render_args(&op.args),
                    String::from_utf8_lossy(element),
                    String::from_utf8_lossy(key)
                ));
            }
            if pushes == 0 {
                return Err(format!(
                    "execution #{j} `{}` popped {:?}, which was never pushed",
                    render_args(&op.args),
                    String::from_utf8_lossy(element)
                ));
            }
        }
        for key in applied.changed {
            walk.refresh_ready(&key);
        }
    }
    Ok(())
}

fn note_pushes(pushed: &mut BTreeMap<Vec<u8>, u32>, args: &[Vec<u8>], zadd: bool) {
    let Some(key) = args.get(1) else { return };
    if key.starts_with(b"rot:") || !is_modelled_key(key) {
        return;
    }
    if zadd {
        for pair in args[2..].chunks(2) {
            if let [_, member] = pair {
                *pushed.entry(member.clone()).or_default() += 1;
            }
        }
    } else {
        for e in &args[2..] {
            *pushed.entry(e.clone()).or_default() += 1;
        }
    }
}

/// The waiter served from `key` must be the first one blocked on it.
fn check_fifo(walk: &Walk<'_>, w: usize, key: &[u8]) -> Result<(), String> {
    let Some(q) = walk.queues.get(key) else {
        return Ok(());
    };
    let kind = walk.waiters[w].kind;
    let first = q.iter().copied().find(|&x| walk.waiters[x].kind == kind);
    match first {
        Some(first) if first != w => Err(format!(
            "FIFO: {} was served from {} before {}, which had blocked on it earlier",
            walk.waiters[w].describe(),
            String::from_utf8_lossy(key),
            walk.waiters[first].describe()
        )),
        _ => Ok(()),
    }
}

/// A timed-out request executes within its timeout's window.
fn check_timeout(
    w: &Waiter<'_>,
    at_ns: TimeNs,
    bound_ns: u64,
    cpu: &LazyCpuTimeline<'_>,
) -> Result<(), String> {
    if w.timeout.forever() {
        return Err(format!(
            "{} has no timeout but timed out at {at_ns} ns",
            w.describe()
        ));
    }
    let earliest_ns =
        (w.received.at_ns + w.timeout.ms_lo * 1_000_000).saturating_sub(TIMEOUT_SLACK_NS);
    if at_ns < earliest_ns {
        return Err(format!(
            "{} timed out at {at_ns} ns, {} ns before its timeout of {} ms was over",
            w.describe(),
            earliest_ns + TIMEOUT_SLACK_NS - at_ns,
            w.timeout.ms_lo
        ));
    }
    if bound_ns == 0 {
        return Ok(());
    }
    let deadline_ns = w.received.at_ns + w.timeout.ms_hi * 1_000_000 + TIMEOUT_SLACK_NS;
    let late_ns = at_ns.saturating_sub(deadline_ns);
    if late_ns <= bound_ns {
        // Within the bound whatever the CPU did meanwhile.
        return Ok(());
    }
    let busy_ns = cpu.get().busy_ns(deadline_ns, at_ns);
    if late_ns > bound_ns + busy_ns {
        return Err(format!(
            "{} timed out only at {at_ns} ns, {late_ns} ns after its {} ms timeout; other \
             requests took {busy_ns} ns of CPU meanwhile (bound {bound_ns} ns)",
            w.describe(),
            w.timeout.ms_hi
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
