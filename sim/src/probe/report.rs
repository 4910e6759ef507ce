//! The probe's report: what was sent, what came back, every error reply
//! counted by kind, the faults, throughput, each checker's verdict, and for
//! a violation the excerpt of the history that shows it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::time::Duration;

use seedkv_engine::resp::Frame;

use super::checkers::NOT_RUN;
use super::client::FAULT_WORKLOAD;
use super::faults::FaultKind;
use super::ProbeConfig;
use crate::check::pipeline::render_args;
use crate::check::Violation;
use crate::history::{History, Op};
use crate::workload::WorkloadKind;

/// Bytes of an error reply that name its kind in the report.
pub const ERROR_SHOWN_BYTES_MAX: usize = 48;

/// Ops shown in a violation's excerpt at most.
pub const EXCERPT_OPS_MAX: usize = 40;

/// One checker's outcome.
#[derive(Debug)]
pub struct CheckerVerdict {
    pub name: &'static str,
    pub result: Result<(), Violation>,
    pub wall: Duration,
}

/// Error replies of one kind: (workload, command, start of the error).
pub type ErrorKind = (&'static str, String, String);

#[derive(Debug)]
pub struct ProbeReport {
    pub config: ProbeConfig,
    /// The server, as INFO named it.
    pub server: String,
    pub kinds: Vec<WorkloadKind>,
    pub history: History,
    pub verdicts: Vec<CheckerVerdict>,
    pub wall: Duration,
    pub faults_injected: Vec<(FaultKind, u64)>,
    pub faults_skipped: Vec<(FaultKind, u64)>,
    /// Clients that stopped waiting for a reply that never came.
    pub clients_gave_up: u64,
    pub connect_failures: u64,
    /// Restarts of the server by the crash-restart fault.
    pub restarts: u64,
    /// Error replies by kind, with whether the workload expects them.
    pub errors: BTreeMap<ErrorKind, (u64, Option<&'static str>)>,
}

impl ProbeReport {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        config: ProbeConfig,
        server: String,
        kinds: Vec<WorkloadKind>,
        history: History,
        verdicts: Vec<CheckerVerdict>,
        wall: Duration,
        faults_injected: Vec<(FaultKind, u64)>,
        faults_skipped: Vec<(FaultKind, u64)>,
        clients_gave_up: u64,
        connect_failures: u64,
    ) -> ProbeReport {
        let mut errors: BTreeMap<ErrorKind, (u64, Option<&'static str>)> = BTreeMap::new();
        for op in &history.ops {
            let Some((_, Frame::Error(e))) = &op.complete else {
                continue;
            };
            let code =
                String::from_utf8_lossy(&e[..e.len().min(ERROR_SHOWN_BYTES_MAX)]).into_owned();
            let command = String::from_utf8_lossy(&op.args[0]).to_ascii_uppercase();
            let entry = errors
                .entry((op.workload, command, code))
                .or_insert((0, expected_error(op, e)));
            entry.0 += 1;
        }
        ProbeReport {
            config,
            server,
            kinds,
            history,
            verdicts,
            wall,
            faults_injected,
            faults_skipped,
            clients_gave_up,
            connect_failures,
            restarts: 0,
            errors,
        }
    }

    pub fn ops_count(&self) -> u64 {
        self.history.ops.len() as u64
    }

    pub fn answered_count(&self) -> u64 {
        self.history
            .ops
            .iter()
            .filter(|op| op.complete.is_some())
            .count() as u64
    }

    pub fn unexpected_errors_count(&self) -> u64 {
        self.errors
            .values()
            .filter(|(_, why)| why.is_none())
            .map(|(n, _)| n)
            .sum()
    }

    pub fn violations(&self) -> impl Iterator<Item = &Violation> {
        self.verdicts.iter().filter_map(|v| v.result.as_ref().err())
    }

    /// Every checker passed and no error reply was unexpected.
    pub fn passed(&self) -> bool {
        self.violations().next().is_none() && self.unexpected_errors_count() == 0
    }

    /// The whole report as text.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let c = &self.config;
        let _ = writeln!(s, "probe of {} at {}", self.server, c.addr);
        let names: Vec<&str> = self.kinds.iter().map(|k| k.name()).collect();
        let _ = writeln!(
            s,
            "  seed {}, {} clients ({}), budget {} ops or {:.0} s, faults {}/1000 batches",
            c.seed,
            self.kinds.len(),
            names.join(","),
            c.ops,
            c.duration.as_secs_f64(),
            c.fault_per_mille
        );
        let secs = self.wall.as_secs_f64().max(1e-9);
        let ops = self.ops_count();
        let answered = self.answered_count();
        let row = |s: &mut String, name: &str, value: String| {
            let _ = writeln!(s, "  {name:<34} {value}");
        };
        row(&mut s, "operations sent", ops.to_string());
        row(&mut s, "answered", answered.to_string());
        row(
            &mut s,
            "unknown outcome (connection lost)",
            (ops - answered).to_string(),
        );
        let mut by_workload: BTreeMap<&str, u64> = BTreeMap::new();
        for op in &self.history.ops {
            *by_workload.entry(op.workload).or_default() += 1;
        }
        let by_workload: Vec<String> = by_workload
            .iter()
            .map(|(w, n)| format!("{w} {n}"))
            .collect();
        row(&mut s, "by workload", by_workload.join(", "));
        row(&mut s, "connections", self.history.conns.len().to_string());
        row(&mut s, "duration", format!("{secs:.2} s"));
        row(
            &mut s,
            "throughput",
            format!("{:.0} ops/s", ops as f64 / secs),
        );
        let errors_total: u64 = self.errors.values().map(|(n, _)| n).sum();
        row(
            &mut s,
            "error replies",
            format!(
                "{errors_total} ({} unexpected)",
                self.unexpected_errors_count()
            ),
        );
        for ((workload, command, code), (n, why)) in &self.errors {
            let verdict = match why {
                Some(why) => format!("expected: {why}"),
                None => "UNEXPECTED".to_owned(),
            };
            let _ = writeln!(s, "    {n:>8}  {workload} {command}: -{code} ({verdict})");
        }
        row(
            &mut s,
            "pub/sub messages received",
            self.history.pubsub.deliveries.len().to_string(),
        );
        row(
            &mut s,
            "connect failures",
            self.connect_failures.to_string(),
        );
        row(
            &mut s,
            "clients that gave up waiting",
            self.clients_gave_up.to_string(),
        );
        if self.config.restart.is_some() {
            row(
                &mut s,
                "server restarts (--restart-cmd)",
                self.restarts.to_string(),
            );
        }
        let _ = writeln!(s, "  faults (injected / skipped)");
        for ((kind, n), (_, skipped)) in self.faults_injected.iter().zip(&self.faults_skipped) {
            let _ = writeln!(s, "    {:<32} {n} / {skipped}", kind.name());
        }
        let _ = writeln!(s, "  checkers");
        for v in &self.verdicts {
            let verdict = match &v.result {
                Ok(()) => "pass".to_owned(),
                Err(_) => "FAIL".to_owned(),
            };
            let _ = writeln!(
                s,
                "    {:<34} {verdict} ({:.2} s)",
                v.name,
                v.wall.as_secs_f64()
            );
        }
        for (name, why) in NOT_RUN {
            let _ = writeln!(s, "    {name:<34} not run: {why}");
        }
        for v in self.violations() {
            let _ = writeln!(s, "FAIL [{}] {}", v.checker, v.message);
            s.push_str(&excerpt(&self.history, &v.message));
        }
        let _ = writeln!(
            s,
            "{}",
            if self.passed() {
                "probe passed"
            } else {
                "probe FAILED"
            }
        );
        s
    }
}

/// Why an error reply is expected, or `None` (a finding).
fn expected_error(op: &Op, error: &[u8]) -> Option<&'static str> {
    if op.workload == FAULT_WORKLOAD {
        return Some(if op.args[0].eq_ignore_ascii_case(b"DEBUG") {
            "the server refuses DEBUG; the fault is switched off"
        } else {
            "the fault's target is gone or the server refuses it"
        });
    }
    let command = op.args[0].to_ascii_uppercase();
    if op.workload == "streams" {
        // The streams workload sends IDs that may be behind the top on
        // purpose, creates groups that may exist, and reads groups that a
        // concurrent DEL or XTRIM-to-empty-then-DEL may have removed.
        if error.starts_with(b"ERR The ID specified in XADD is equal or smaller") {
            return Some("an explicit ID at or behind the stream's top (sent on purpose)");
        }
        if error.starts_with(b"BUSYGROUP") {
            return Some("the group exists already (created by another worker)");
        }
        if error.starts_with(b"NOGROUP") {
            return Some("a concurrent DEL removed the stream and its groups");
        }
        if error.starts_with(b"UNBLOCKED the stream key no longer exists") {
            return Some("a blocked XREADGROUP's stream was deleted (Redis 7.0 ends it so)");
        }
    }
    if error.starts_with(b"BUSYGROUP") {
        return None;
    }
    match command.as_slice() {
        // The lists workload sets indices that concurrent pops and trims
        // may have removed.
        b"LSET"
            if error.starts_with(b"ERR index out of range")
                || error.starts_with(b"ERR no such key") =>
        {
            Some("the index or list was removed by a concurrent pop or trim")
        }
        _ => None,
    }
}

/// The ops a violation message points at: the connections it names
/// (`conn N`) near the requests it names (`#S`, `request #S`), and the keys
/// it names (any argument of the history quoted in it), rendered one per
/// line like the simulator's trace, at most [`EXCERPT_OPS_MAX`].
pub fn excerpt(history: &History, message: &str) -> String {
    let words: Vec<&str> = message
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '(' | ')' | '"' | '[' | ']' | ';'))
        .filter(|w| !w.is_empty())
        .collect();
    let mut conns: BTreeSet<u64> = BTreeSet::new();
    for pair in words.windows(2) {
        if pair[0] == "conn" {
            if let Ok(n) = pair[1].trim_end_matches(':').parse() {
                conns.insert(n);
            }
        }
    }
    let word_set: BTreeSet<&[u8]> = words
        .iter()
        .map(|w| w.trim_end_matches(':').as_bytes())
        .filter(|w| w.contains(&b':'))
        .collect();
    let mut keys: BTreeSet<&[u8]> = BTreeSet::new();
    for op in &history.ops {
        for a in op.args.iter().skip(1) {
            if word_set.contains(a.as_slice()) {
                keys.insert(a);
            }
        }
    }
    let picked: Vec<&Op> = history
        .ops
        .iter()
        .filter(|op| {
            conns.contains(&op.conn) || op.args.iter().skip(1).any(|a| keys.contains(a.as_slice()))
        })
        .collect();
    if picked.is_empty() {
        return String::new();
    }
    // Centred on the first request the message names (`conn N ... #S`),
    // else on the last op picked.
    let mut named: Option<(u64, u64)> = None;
    for (i, pair) in words.windows(2).enumerate() {
        if pair[0] != "conn" {
            continue;
        }
        let Ok(conn) = pair[1].trim_end_matches(':').parse::<u64>() else {
            continue;
        };
        let seq = words[i + 2..].iter().take(4).find_map(|w| {
            w.strip_prefix('#')?
                .trim_end_matches(':')
                .parse::<u64>()
                .ok()
        });
        if let Some(seq) = seq {
            named = Some((conn, seq));
            break;
        }
    }
    let anchor = named
        .and_then(|(c, q)| {
            picked
                .iter()
                .position(|op| op.conn == c && op.seq_in_conn == q)
        })
        .unwrap_or(picked.len() - 1);
    let from = anchor.saturating_sub(EXCERPT_OPS_MAX / 2);
    let shown = &picked[from..picked.len().min(from + EXCERPT_OPS_MAX)];
    let mut s = format!(
        "  history excerpt ({} of {} ops on conn {:?} / keys {:?}):\n",
        shown.len(),
        picked.len(),
        conns,
        keys.iter()
            .map(|k| String::from_utf8_lossy(k))
            .collect::<Vec<_>>()
    );
    for op in shown {
        let reply = match &op.complete {
            Some((at, frame)) => format!("{} at {at} ns", crate::world::frame_summary(frame)),
            None => "(no reply: unknown outcome)".to_owned(),
        };
        let _ = writeln!(
            s,
            "    {} ns client {} ({}) conn {} #{} {} -> {reply}",
            op.invoke_ns,
            op.client,
            op.workload,
            op.conn,
            op.seq_in_conn,
            render_args(&op.args)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_picks_the_named_connection_and_keys() {
        let op = |conn: u64, args: &[&str]| Op {
            client: 0,
            conn,
            seq_in_conn: 0,
            args: args.iter().map(|a| a.as_bytes().to_vec()).collect(),
            workload: "kv",
            invoke_ns: 1,
            complete: Some((2, Frame::Integer(1))),
        };
        let history = History {
            ops: vec![
                op(1, &["INCR", "ctr:0"]),
                op(2, &["GET", "kv:1"]),
                op(3, &["PING"]),
            ],
            ..History::default()
        };
        let text = excerpt(
            &history,
            "two INCRs of ctr:0 both returned 1: conn 3 request #0",
        );
        assert!(text.contains("INCR ctr:0"), "{text}");
        assert!(text.contains("conn 3 #0 PING"), "{text}");
        assert!(!text.contains("kv:1"), "{text}");
    }
}
