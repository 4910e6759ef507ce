//! Tail latency in virtual time: histograms per command, and a bound on
//! fast commands when nothing slow is running.
//!
//! # What is measured
//!
//! A request's latency is what its client saw: reply time minus invocation
//! time, in virtual nanoseconds, so it includes the network and every
//! command the single server CPU ran ahead of it. Requests are grouped by
//! command name and by class: **O(N)** if the command carries the engine's
//! [`O_N`] flag (KEYS, FLUSHALL, DEL...), **fast** otherwise.
//! [`latency_report`] prints p50, p99 and max per command, the table of
//! seed 002 (PING while KEYS, SCAN, DEL, UNLINK run). Like that article it
//! reports the tail, never the mean.
//!
//! # The invariant
//!
//! Head-of-line blocking is expected while an O(N) command runs: that is
//! the point of the seed. Outside such stalls, a fast request must be
//! answered quickly. Precisely, for every fast request invoked after fault
//! injection stopped ([`History::faults_end_ns`]) whose
//! `[invocation, reply]` window overlaps no *stall* (the execution of an
//! O(N) command, or of any command that did at least
//! [`FAST_WORK_UNITS_MAX`] work units, such as a large EXEC or a GET of a
//! huge value). Only constant-time commands ([`FAST_COMMANDS`]: PING, GET,
//! SET, INCR...) are judged, and only requests of at most
//! [`FAST_REQUEST_BYTES_MAX`] bytes that were not pipelined behind an
//! unanswered request of their own connection:
//!
//! ```text
//! latency - (server CPU time spent on other requests within the window)
//!     <= RunFacts::fast_latency_bound_ns
//! ```
//!
//! Subtracting the CPU time of other requests removes the legitimate
//! queueing behind other clients' fast commands and behind the request's
//! own pipeline, which grows with load rather than with any bug. What is
//! left is the request's own execution plus network time plus time the
//! server was idle while the request waited: a fast command that secretly
//! does O(N) work, a reply left unsent, or a wake-up that never came all
//! show up there. The bound (from the runner) must therefore cover one fast
//! command's cost, the network's worst latency both ways, and one timer
//! (cron) step. A bound of 0 disables the check.
//!
//! A slow-reading client ([`RunFacts::slow_readers`]) reads its socket
//! only every `interval_ns`, at most `read_bytes_max` bytes at a time, so
//! its reply may sit in the socket after it arrived: for such a client the
//! bound grows by one read interval per read the reply needs, plus one for
//! a read scheduled just before the reply arrived. Other clients get no
//! allowance, and slow readers are still judged against the larger bound.
//!
//! Background work (lazy free) runs on its own virtual CPU and does not
//! delay the command CPU, so it needs no exemption here.
//!
//! [`O_N`]: seedkv_engine::cmd::flags::O_N

use std::collections::BTreeMap;

use crate::fxhash::FxHashMap;

use hdrhistogram::Histogram;
use seedkv_engine::cmd::flags::O_N;

use seedkv_engine::resp::Frame;

use super::model::expected::render_args;
use crate::check::{Checker, RunFacts, Violation};
use crate::client::SlowReader;
use crate::history::{ConnId, Execution, History, Op, TimeNs};

/// An execution doing at least this much work is a stall, whatever its flags.
pub const FAST_WORK_UNITS_MAX: u64 = 1_000;

/// Requests larger than this (all arguments) are not judged: their transfer
/// time depends on the drawn bandwidth, which the bound does not cover.
pub const FAST_REQUEST_BYTES_MAX: usize = 512;

/// Replies larger than this are not judged either, for the same reason (a
/// GET of a dense HyperLogLog's 12 KB took a few us past the bound).
pub const FAST_REPLY_BYTES_MAX: u64 = 4_096;

/// The constant-time commands the invariant judges. Commands whose work
/// grows with their arguments or a hint (MSET, MGET, SCAN's COUNT) are
/// reported but not judged.
pub const FAST_COMMANDS: &[&str] = &[
    "ping", "echo", "get", "set", "setnx", "getset", "getdel", "incr", "decr", "incrby", "decrby",
    "append", "strlen", "exists", "ttl", "pttl", "expire", "pexpire", "persist", "type", "select",
    "dbsize",
];

/// Histograms track latencies up to this (one virtual hour); longer ones
/// are recorded as this value.
pub const LATENCY_TRACKED_MAX_NS: u64 = 3_600 * 1_000_000_000;

/// Significant decimal digits the histograms keep.
const HISTOGRAM_SIGNIFICANT_DIGITS: u8 = 3;

/// The checker.
pub struct TailLatency;

impl Checker for TailLatency {
    fn name(&self) -> &'static str {
        "tail-latency"
    }

    fn check(&self, history: &History, facts: &RunFacts) -> Result<(), Violation> {
        if history.persist.is_some() {
            // Inline disk latency (an fsync under `always`) is not in the
            // bound yet: persistence runs are not judged.
            return Ok(());
        }
        check_fast_latency(history, facts.fast_latency_bound_ns, &facts.slow_readers).map_err(
            |message| Violation {
                checker: self.name(),
                message,
            },
        )
    }
}

/// The command class of the report's rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CommandClass {
    Fast,
    ON,
}

impl CommandClass {
    fn of(exec: &Execution) -> CommandClass {
        match exec.flags & O_N != 0 {
            true => CommandClass::ON,
            false => CommandClass::Fast,
        }
    }

    fn label(self) -> &'static str {
        match self {
            CommandClass::Fast => "fast",
            CommandClass::ON => "O(N)",
        }
    }
}

/// p50, p99 and max of one row, in nanoseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LatencyRow {
    pub command: String,
    pub class: CommandClass,
    pub count: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, LATENCY_TRACKED_MAX_NS, HISTOGRAM_SIGNIFICANT_DIGITS)
        .expect("valid histogram bounds")
}

/// Each executed request's (first) execution, by `(connection, index)`.
fn execution_of<'h>(
    history: &'h History,
    first: &crate::history::FirstExecutions,
    op: &Op,
) -> Option<&'h Execution> {
    let &i = first.get(&(op.conn, op.seq_in_conn))?;
    Some(&history.executions[i])
}

/// Latency rows per (command, class), completed and executed requests only,
/// sorted by class then command.
pub fn latency_rows(history: &History) -> Vec<LatencyRow> {
    let execs = history.first_executions();
    let mut histograms: BTreeMap<(CommandClass, String), Histogram<u64>> = BTreeMap::new();
    for op in &history.ops {
        let (Some((complete_ns, _)), Some(exec)) =
            (&op.complete, execution_of(history, &execs, op))
        else {
            continue;
        };
        if exec.name.is_empty() {
            continue;
        }
        let latency_ns = complete_ns.saturating_sub(op.invoke_ns).max(1);
        histograms
            .entry((CommandClass::of(exec), exec.name.to_ascii_uppercase()))
            .or_insert_with(new_histogram)
            .saturating_record(latency_ns);
    }
    histograms
        .into_iter()
        .map(|((class, command), h)| LatencyRow {
            command,
            class,
            count: h.len(),
            p50_ns: h.value_at_quantile(0.50),
            p99_ns: h.value_at_quantile(0.99),
            max_ns: h.max(),
        })
        .collect()
}

/// The report the CLI prints: one line per command, like seed 002's table.
pub fn latency_report(history: &History) -> String {
    let rows = latency_rows(history);
    let mut out = format!(
        "{:<16} {:<5} {:>9} {:>12} {:>12} {:>12}\n",
        "command", "class", "count", "p50", "p99", "max"
    );
    for row in &rows {
        out.push_str(&format!(
            "{:<16} {:<5} {:>9} {:>12} {:>12} {:>12}\n",
            row.command,
            row.class.label(),
            row.count,
            format_ms(row.p50_ns),
            format_ms(row.p99_ns),
            format_ms(row.max_ns)
        ));
    }
    if rows.is_empty() {
        out.push_str("(no completed requests)\n");
    }
    out
}

/// Virtual nanoseconds as milliseconds with three decimals ("0.344 ms").
fn format_ms(ns: u64) -> String {
    format!("{}.{:03} ms", ns / 1_000_000, (ns % 1_000_000) / 1_000)
}

/// The server CPU's busy intervals (executions and the command thread's
/// other busy spans, such as inline fsyncs), in time order, with prefix sums.
pub(crate) struct CpuTimeline {
    starts_ns: Vec<TimeNs>,
    ends_ns: Vec<TimeNs>,
    /// `busy_before_ns[i]`: total duration of executions `0..i`.
    busy_before_ns: Vec<u64>,
}

/// A [`CpuTimeline`] built the first time it is asked for: the checkers
/// that read it do only for a request that took long, which most runs
/// have none of.
pub(crate) struct LazyCpuTimeline<'h> {
    history: &'h History,
    built: std::cell::OnceCell<CpuTimeline>,
}

impl<'h> LazyCpuTimeline<'h> {
    pub(crate) fn new(history: &'h History) -> LazyCpuTimeline<'h> {
        LazyCpuTimeline {
            history,
            built: std::cell::OnceCell::new(),
        }
    }

    pub(crate) fn get(&self) -> &CpuTimeline {
        self.built.get_or_init(|| CpuTimeline::new(self.history))
    }
}

impl CpuTimeline {
    pub(crate) fn new(history: &History) -> CpuTimeline {
        let mut spans: Vec<(TimeNs, TimeNs)> = history
            .executions
            .iter()
            .map(|e| (e.start_ns, e.end_ns.max(e.start_ns)))
            .chain(history.thread_busy_spans.iter().copied())
            .collect();
        // One CPU runs one thing at a time, so spans are in order already
        // and disjoint; sorting and merging keep the prefix sums right even
        // if they were not (an execution recorded outside a charged turn).
        spans.sort_unstable();
        let mut merged: Vec<(TimeNs, TimeNs)> = Vec::with_capacity(spans.len());
        for (start, end) in spans {
            match merged.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        let spans = merged;
        let mut busy_before_ns = Vec::with_capacity(spans.len() + 1);
        busy_before_ns.push(0);
        for &(start, end) in &spans {
            busy_before_ns.push(busy_before_ns.last().expect("non-empty") + (end - start));
        }
        CpuTimeline {
            starts_ns: spans.iter().map(|s| s.0).collect(),
            ends_ns: spans.iter().map(|s| s.1).collect(),
            busy_before_ns,
        }
    }

    /// CPU time spent on executions within `[from, to]`.
    pub(crate) fn busy_ns(&self, from: TimeNs, to: TimeNs) -> u64 {
        if to <= from {
            return 0;
        }
        let first = self.ends_ns.partition_point(|&end| end <= from);
        let last = self.starts_ns.partition_point(|&start| start < to);
        if first >= last {
            return 0;
        }
        let mut busy = self.busy_before_ns[last] - self.busy_before_ns[first];
        busy -= from
            .saturating_sub(self.starts_ns[first])
            .min(self.ends_ns[first] - self.starts_ns[first]);
        busy -= self.ends_ns[last - 1]
            .saturating_sub(to)
            .min(self.ends_ns[last - 1] - self.starts_ns[last - 1]);
        busy
    }
}

/// The stalls (executions of O(N) or heavy commands), sorted by start, with
/// the running maximum of their ends.
struct Stalls {
    starts_ns: Vec<TimeNs>,
    ends_max_ns: Vec<TimeNs>,
}

impl Stalls {
    fn new(history: &History) -> Stalls {
        let mut spans: Vec<(TimeNs, TimeNs)> = history
            .executions
            .iter()
            .filter(|e| is_stall(e))
            .map(|e| (e.start_ns, e.end_ns))
            .collect();
        spans.sort_unstable();
        let mut end_max = 0;
        let ends_max_ns = spans
            .iter()
            .map(|s| {
                end_max = end_max.max(s.1);
                end_max
            })
            .collect();
        Stalls {
            starts_ns: spans.iter().map(|s| s.0).collect(),
            ends_max_ns,
        }
    }

    /// Whether a stall overlaps `[from, to]`.
    fn overlap(&self, from: TimeNs, to: TimeNs) -> bool {
        let started_before_end = self.starts_ns.partition_point(|&start| start <= to);
        started_before_end > 0 && self.ends_max_ns[started_before_end - 1] >= from
    }
}

fn is_stall(exec: &Execution) -> bool {
    exec.flags & O_N != 0 || exec.work_units >= FAST_WORK_UNITS_MAX
}

/// An upper bound on a reply's size on the wire (RESP2 or RESP3): its
/// payload plus a generous header per frame.
fn reply_bytes_max(frame: &Frame) -> u64 {
    const HEADER_BYTES_MAX: u64 = 32;
    HEADER_BYTES_MAX
        + match frame {
            Frame::Simple(b) | Frame::Error(b) | Frame::Bulk(b) | Frame::BigNumber(b) => {
                b.len() as u64
            }
            Frame::Verbatim { data, .. } => data.len() as u64,
            Frame::Integer(_) | Frame::Null | Frame::Double(_) | Frame::Boolean(_) => 0,
            Frame::Array(items) | Frame::Set(items) | Frame::Push(items) => {
                items.iter().map(reply_bytes_max).sum()
            }
            Frame::Map(pairs) => pairs
                .iter()
                .map(|(k, v)| reply_bytes_max(k) + reply_bytes_max(v))
                .sum(),
        }
}

/// How long a slow reader may leave `reply` unread after it arrived: one
/// interval per read it needs, plus one for a read already scheduled.
fn slow_read_allowance_ns(reader: Option<&SlowReader>, reply: &Frame) -> u64 {
    let Some(r) = reader else { return 0 };
    let reads = reply_bytes_max(reply).div_ceil(r.read_bytes_max.max(1) as u64);
    (reads + 1) * r.interval_ns
}

/// The invariant of the module docs.
fn check_fast_latency(
    history: &History,
    bound_ns: u64,
    slow_readers: &[Option<SlowReader>],
) -> Result<(), String> {
    if bound_ns == 0 {
        return Ok(());
    }
    let execs = history.first_executions();
    let cpu = LazyCpuTimeline::new(history);
    let stalls = std::cell::OnceCell::new();
    // The latest reply time of each connection's requests so far, to tell
    // a request sent alone from one pipelined behind its predecessors.
    let mut conn_busy_until_ns: FxHashMap<ConnId, TimeNs> = FxHashMap::default();
    for &position in history.ops_in_conn_order().iter() {
        let op = &history.ops[position as usize];
        let busy_until_ns = conn_busy_until_ns.entry(op.conn).or_insert(0);
        let pipelined = *busy_until_ns > op.invoke_ns;
        let reply_ns = op.complete.as_ref().map_or(TimeNs::MAX, |(t, _)| *t);
        *busy_until_ns = (*busy_until_ns).max(reply_ns);
        let (Some((complete_ns, reply)), Some(exec)) =
            (&op.complete, execution_of(history, &execs, op))
        else {
            continue;
        };
        // The cheap tests first: most requests are pipelined or sent
        // under faults, and an MSET's request has thousands of arguments.
        if pipelined
            || op.invoke_ns < history.faults_end_ns
            || !FAST_COMMANDS.contains(&exec.name)
            || is_stall(exec)
            || op.args.iter().map(Vec::len).sum::<usize>() > FAST_REQUEST_BYTES_MAX
            || reply_bytes_max(reply) > FAST_REPLY_BYTES_MAX
        {
            continue;
        }
        let (from, to) = (op.invoke_ns, *complete_ns);
        let latency_ns = to.saturating_sub(from);
        let reader = slow_readers
            .get(op.client as usize)
            .and_then(Option::as_ref);
        let bound_ns = bound_ns + slow_read_allowance_ns(reader, reply);
        if latency_ns <= bound_ns
            || stalls
                .get_or_init(|| Stalls::new(history))
                .overlap(from, to)
        {
            continue;
        }
        let own_ns = exec.end_ns.min(to).saturating_sub(exec.start_ns.max(from));
        let others_ns = cpu.get().busy_ns(from, to).saturating_sub(own_ns);
        let unexplained_ns = latency_ns.saturating_sub(others_ns);
        if unexplained_ns > bound_ns {
            return Err(format!(
                "conn {} request {} `{}` (fast) took {latency_ns} ns from {from} to {to} with no O(N) \
                 command running; {others_ns} ns of it went to other requests, leaving {unexplained_ns} ns \
                 over the bound of {bound_ns} ns{}",
                op.conn,
                op.seq_in_conn,
                render_args(&op.args),
                match reader {
                    Some(r) => format!(
                        " (client {} reads slowly: every {} ns, {} bytes at most)",
                        op.client, r.interval_ns, r.read_bytes_max
                    ),
                    None => String::new(),
                }
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use seedkv_engine::cmd::flags::O_N;

    use super::{check_fast_latency, latency_report, latency_rows, CommandClass};
    use crate::check::model::testkit::{bulk, simple, Builder};
    use crate::client::SlowReader;

    const BOUND_NS: u64 = 1_000;

    /// A PING client and a second client; returns the builder.
    fn pings_around(slow_ns: u64, o_n: bool) -> Builder {
        let mut b = Builder::new();
        b.run(1, "PING", simple("PONG"));
        // KEYS on conn 2 occupies the CPU; a PING invoked meanwhile waits.
        let keys = b.op(2, "KEYS *", b.now_ns, None);
        let ping = b.op(1, "PING", b.now_ns + 1, None);
        b.execute(keys, slow_ns);
        if o_n {
            b.history.executions.last_mut().unwrap().flags |= O_N;
        }
        b.history.ops[keys].complete = Some((b.now_ns + 10, frame_array()));
        b.execute(ping, 10);
        b.history.ops[ping].complete = Some((b.now_ns + 10, simple("PONG")));
        b.now_ns += 20;
        b.run(1, "GET k", bulk("v"));
        b
    }

    fn frame_array() -> seedkv_engine::resp::Frame {
        seedkv_engine::resp::Frame::Array(vec![])
    }

    #[test]
    fn stalls_behind_o_n_commands_are_allowed() {
        let b = pings_around(1_000_000, true);
        check_fast_latency(&b.history, BOUND_NS, &[]).expect("KEYS is flagged O(N)");
    }

    #[test]
    fn queueing_behind_other_work_is_subtracted() {
        // Unflagged, but its CPU time is accounted as another request's.
        // (Its own reply is lost, so KEYS itself is not judged.)
        let mut b = pings_around(5_000, false);
        b.history.ops[1].complete = None;
        check_fast_latency(&b.history, BOUND_NS, &[]).expect("the PING waited for real work");
    }

    #[test]
    fn a_slow_fast_command_fails() {
        let mut b = Builder::new();
        b.run(1, "PING", simple("PONG"));
        let get = b.op(1, "GET k", b.now_ns, None);
        b.execute(get, 5_000);
        b.history.ops[get].complete = Some((b.now_ns + 10, bulk("v")));
        let message =
            check_fast_latency(&b.history, BOUND_NS, &[]).expect_err("GET took 5 us alone");
        assert!(message.contains("GET k"), "{message}");
        check_fast_latency(&b.history, 10_000, &[]).expect("under a looser bound");
    }

    #[test]
    fn a_slow_reader_may_leave_a_reply_unread_for_its_read_intervals() {
        let mut b = Builder::new();
        let ping = b.op(1, "PING", b.now_ns, None);
        b.execute(ping, 10);
        // The reply sat in the socket for 40 us: within two read intervals
        // of 25 us (one read, plus one scheduled just before it arrived).
        b.history.ops[ping].complete = Some((b.now_ns + 40_000, simple("PONG")));
        let client = b.history.ops[ping].client as usize;
        let mut readers = vec![None; client + 1];
        readers[client] = Some(SlowReader {
            read_bytes_max: 512,
            interval_ns: 25_000,
        });
        check_fast_latency(&b.history, BOUND_NS, &readers).expect("a slow reader");
        assert!(
            check_fast_latency(&b.history, BOUND_NS, &[]).is_err(),
            "the same delay for a client that reads at once"
        );
        // Longer than the allowance: still a failure for the slow reader.
        b.history.ops[ping].complete = Some((b.now_ns + 60_000, simple("PONG")));
        let message = check_fast_latency(&b.history, BOUND_NS, &readers).expect_err("too slow");
        assert!(message.contains("reads slowly"), "{message}");
    }

    #[test]
    fn an_idle_server_cannot_explain_a_late_reply() {
        let mut b = Builder::new();
        let ping = b.op(1, "PING", b.now_ns, None);
        b.execute(ping, 10);
        // The reply arrives long after the CPU finished: e.g. it sat unsent.
        b.history.ops[ping].complete = Some((b.now_ns + 50_000, simple("PONG")));
        assert!(check_fast_latency(&b.history, BOUND_NS, &[]).is_err());
        b.history.faults_end_ns = b.now_ns + 1_000_000;
        check_fast_latency(&b.history, BOUND_NS, &[]).expect("during faults, not judged");
    }

    #[test]
    fn report_has_a_row_per_command_and_class() {
        let b = pings_around(1_000_000, true);
        let rows = latency_rows(&b.history);
        let keys = rows.iter().find(|r| r.command == "KEYS").expect("KEYS row");
        assert_eq!(keys.class, CommandClass::ON);
        let ping = rows.iter().find(|r| r.command == "PING").expect("PING row");
        assert_eq!((ping.class, ping.count), (CommandClass::Fast, 2));
        assert!(ping.max_ns >= 1_000_000, "{ping:?}");
        let text = latency_report(&b.history);
        assert!(
            text.contains("PING") && text.contains("O(N)") && text.contains(" ms"),
            "{text}"
        );
    }
}
