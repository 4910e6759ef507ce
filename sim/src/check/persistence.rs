//! Recovery after a crash: the restarted server's dataset (read back
//! through commands) must be the state after some prefix of the executed
//! commands, as the reference model replays them (`timeline.rs`); nothing
//! never written may appear, and:
//!
//! - `appendfsync always`: the prefix holds every write whose reply a
//!   client received;
//! - `appendfsync everysec`: it holds every acknowledged write older than
//!   the policy's window ([`everysec_window_ns`]) at the crash;
//! - `appendfsync no`: any prefix;
//! - RDB only: the prefix is the one of a snapshot that reached
//!   `dbfilename` (at least the last one whose rename was followed by a
//!   directory sync), or the empty start.
//!
//! The lower bounds hold only while the disk reported no fault (an fsync
//! that failed makes no promise). An exit of the server is a finding
//! unless a disk fault came first; so is a restart that cannot load.

use seedkv_engine::cmd::flags;
use seedkv_engine::resp::Frame;

use crate::check::model::index_ops;
use crate::check::{Checker, RunFacts, Violation};
use crate::history::{History, TimeNs};
use crate::persistence::record::{CrashRecord, PersistRecord};
use crate::persistence::PersistMode;

#[cfg(test)]
mod tests;
mod timeline;

pub use timeline::{intersect, show, Intervals, Timelines};

/// How far behind the crash `everysec` may lose acknowledged writes: Redis
/// postpones a write up to 2 s while an fsync is in progress, and the fsync
/// itself takes up to the disk's worst latency; plus a second of slack for
/// the once-a-second cadence.
pub fn everysec_window_ns(record: &PersistRecord) -> u64 {
    3_000_000_000 + 2 * record.fsync_latency_max_ns
}

pub struct Recovery;

impl Checker for Recovery {
    fn name(&self) -> &'static str {
        "persistence-recovery"
    }

    fn check(&self, history: &History, _facts: &RunFacts) -> Result<(), Violation> {
        let Some(record) = &history.persist else {
            return Ok(());
        };
        let fail = |message: String| Violation {
            checker: "persistence-recovery",
            message,
        };
        if let Some((at_ns, status, legit, why)) = &record.exit {
            if !legit {
                return Err(fail(format!(
                    "the server exited with status {status} at {at_ns} ns with no disk fault \
                     injected: {why}"
                )));
            }
            return Ok(());
        }
        let Some(crash) = &record.crash else {
            return Ok(());
        };
        if let Some(e) = &crash.restart_error {
            if crash.restart_fault_injected {
                return Ok(()); // the disk failed the restart itself
            }
            return Err(fail(format!("restart after the crash failed: {e}")));
        }
        if let Some(e) = &crash.inspect_error {
            return Err(fail(format!("reading the restarted dataset failed: {e}")));
        }
        check_crash(history, record, crash).map_err(fail)
    }
}

fn check_crash(
    history: &History,
    record: &PersistRecord,
    crash: &CrashRecord,
) -> Result<(), String> {
    let timelines = Timelines::build(history, crash.executions_count);
    let mut valid: Intervals = vec![(0, crash.executions_count)];
    let mut keys: std::collections::BTreeSet<&(usize, Vec<u8>)> =
        timelines.touched_keys().collect();
    keys.extend(crash.observed.keys());
    for (db, key) in keys {
        let observed = crash.observed.get(&(*db, key.clone()));
        let matching = timelines.matching(*db, key, observed, crash.restart_unix_ms);
        let narrowed = intersect(&valid, &matching);
        if narrowed.is_empty() {
            let shown = observed.map_or("absent".to_string(), |o| {
                format!("{} {}", o.type_name, o.shown)
            });
            return Err(format!(
                "no prefix of the {} executions explains the restarted dataset: key {:?} \
                 (db {db}) is {shown} after the restart, as after prefixes {}, but the other \
                 keys allow only {} (its state at the latest of those: {:?})",
                crash.executions_count,
                String::from_utf8_lossy(key),
                show(&matching),
                show(&valid),
                timelines.state_at(*db, key, valid.last().map_or(0, |v| v.1)),
            ));
        }
        valid = narrowed;
    }
    let required = required_prefixes(history, record, crash);
    if let Some((required, why)) = required {
        if intersect(&valid, &required).is_empty() {
            return Err(format!(
                "{} crash at {} ns: the restarted dataset is the state after prefixes {} of {} \
                 executions, but {why} requires {}",
                record.mode.name(),
                crash.at_ns,
                show(&valid),
                crash.executions_count,
                show(&required),
            ));
        }
    }
    Ok(())
}

/// The prefixes the mode allows, and why (`None`: any).
fn required_prefixes(
    history: &History,
    record: &PersistRecord,
    crash: &CrashRecord,
) -> Option<(Intervals, String)> {
    let n = crash.executions_count;
    match record.mode {
        PersistMode::Rdb => Some(snapshot_prefixes(record, n)),
        _ if crash.disk_faults_count > 0 => None,
        PersistMode::AofAlways => {
            let (lo, why) = acknowledged_floor(history, n, crash.at_ns, 0)?;
            Some((vec![(lo, n)], format!("appendfsync always ({why})")))
        }
        PersistMode::AofEverysec => {
            let window_ns = everysec_window_ns(record);
            let (lo, why) = acknowledged_floor(history, n, crash.at_ns, window_ns)?;
            Some((
                vec![(lo, n)],
                format!("appendfsync everysec with a {window_ns} ns window ({why})"),
            ))
        }
        PersistMode::AofNo => None,
    }
}

/// RDB: the prefixes of the snapshots that reached `dbfilename`, from the
/// last one made durable by a directory sync on (or from the start).
fn snapshot_prefixes(record: &PersistRecord, n: usize) -> (Intervals, String) {
    let last_durable = record.snapshots.iter().rposition(|s| s.dir_synced);
    let mut out: Intervals = Vec::new();
    if last_durable.is_none() {
        out.push((0, 0));
    }
    for s in &record.snapshots[last_durable.unwrap_or(0)..] {
        out.push((s.prefix_lo.min(n), s.prefix_hi.min(n)));
    }
    out.sort_unstable();
    let mut merged: Intervals = Vec::new();
    for (lo, hi) in out {
        match merged.last_mut() {
            Some((_, last_hi)) if *last_hi + 1 >= lo => *last_hi = (*last_hi).max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    let why = format!(
        "RDB recovery ({} snapshot(s) renamed over dbfilename, the last durable: {:?})",
        record.snapshots.len(),
        last_durable
    );
    (merged, why)
}

/// The shortest prefix holding every write acknowledged (a reply that is
/// not an error received) and executed at least `window_ns` before the
/// crash, and a description of the write that sets it.
fn acknowledged_floor(
    history: &History,
    n: usize,
    crash_ns: TimeNs,
    window_ns: u64,
) -> Option<(usize, String)> {
    let ops = index_ops(history);
    let mut floor = None;
    for (i, exec) in history.executions[..n].iter().enumerate() {
        if exec.name.is_empty() || exec.flags & flags::WRITE == 0 {
            continue;
        }
        if exec.end_ns.saturating_add(window_ns) > crash_ns {
            continue;
        }
        let seq = exec.in_exec.unwrap_or(exec.seq_in_conn);
        let Some(op) = ops.get(&(exec.conn, seq)) else {
            continue;
        };
        match &op.complete {
            Some((_, Frame::Error(_))) | None => continue,
            Some((at_ns, _)) => {
                let args: Vec<String> = op
                    .args
                    .iter()
                    .take(4)
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect();
                floor = Some((
                    i + 1,
                    format!(
                        "execution #{i} `{}` on conn {} was acknowledged at {at_ns} ns",
                        args.join(" "),
                        exec.conn
                    ),
                ));
            }
        }
    }
    floor
}
