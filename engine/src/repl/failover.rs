//! FAILOVER, the primary's side, as Redis 7.0.15's `replication.c` runs it
//! (`failoverCommand`, `updateFailoverStatus`, `abortFailover`).
//!
//! A coordinated failover hands the primary role to a replica without
//! losing a write:
//!
//! 1. `FAILOVER` pauses writes (CLIENT PAUSE WRITE semantics, a pause of
//!    its own that CLIENT UNPAUSE does not end) and enters
//!    [`FailoverState::WaitForSync`]: the stream's offset stops growing
//!    (no PING, no GETACK goes out), so the replicas' acks can catch up.
//! 2. After every input and every timer ([`update`]), as Redis's
//!    `beforeSleep` and `replicationCron` do: once the target (the one named
//!    with `TO`, else the first replica whose ack equals the offset) has
//!    acknowledged every byte, this server becomes a replica of it
//!    ([`FailoverState::InProgress`]) and its PSYNC carries `FAILOVER`:
//!    the target, whose history is ours, promotes itself and answers
//!    `+CONTINUE` with its new id (see `commands/replication.rs`).
//! 3. The PSYNC answered `+CONTINUE` or `+FULLRESYNC`: the failover is done,
//!    the pause ends (the held writes then meet a read-only replica). Any
//!    other answer aborts it: this server is a primary again.
//!
//! `TIMEOUT ms` bounds step 1: past it the failover aborts, or with `FORCE`
//! hands over to the named target even though it has not caught up (its
//! PSYNC then asks for bytes the target never had: a full resync).
//! `FAILOVER ABORT` undoes it from either state.

use crate::client::Clients;
use crate::event::{Event, LogLevel};
use crate::server::Server;
use crate::time::Now;

use super::replica::{self, Parts};
use super::ReplicaState;

/// Where a failover stands (Redis's `failover_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailoverState {
    /// Writes are paused; waiting for the target to acknowledge the offset.
    WaitForSync,
    /// This server is a replica of the target and its PSYNC says FAILOVER.
    InProgress,
}

/// A failover under way.
#[derive(Clone, Debug)]
pub struct Failover {
    pub state: FailoverState,
    /// The target, named by `TO` or chosen once it caught up.
    pub target: Option<(String, u16)>,
    /// `TIMEOUT`'s end (monotonic ns).
    pub end_ns: Option<u64>,
    pub force: bool,
}

/// INFO's `master_failover_state`.
pub fn state_name(failover: Option<&Failover>) -> &'static str {
    match failover.map(|f| f.state) {
        None => "no-failover",
        Some(FailoverState::WaitForSync) => "waiting-for-sync",
        Some(FailoverState::InProgress) => "failover-in-progress",
    }
}

/// Redis's `findReplica`: the replica that connects from `host` and listens
/// on `port` (the host compared without case).
pub fn find_replica(server: &Server, host: &str, port: i64) -> Option<usize> {
    server
        .repl
        .replicas
        .iter()
        .position(|r| r.ip.eq_ignore_ascii_case(host) && i64::from(r.listening_port) == port)
}

/// What [`update`] decided.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// Keep waiting.
    Wait,
    /// Hand over: become a replica of this target (`true`: forced by the
    /// timeout, not caught up).
    HandOver(String, u16, bool),
    /// Give up with this reason.
    Abort(&'static str),
}

/// Redis's `updateFailoverStatus`: in [`FailoverState::WaitForSync`], a
/// passed timeout aborts (or with FORCE hands over), and a target whose
/// ack equals the offset gets the primary role. Records a chosen target.
pub fn update(server: &mut Server, clients: &Clients, now: Now) -> Step {
    let offset = server.repl.master_repl_offset;
    let Some(f) = server.repl.failover.as_ref() else {
        return Step::Wait;
    };
    if f.state != FailoverState::WaitForSync {
        return Step::Wait;
    }
    if f.end_ns.is_some_and(|end| end <= now.mono_ns) {
        return match (&f.target, f.force) {
            (Some((host, port)), true) => Step::HandOver(host.clone(), *port, true),
            _ => Step::Abort("Replica never caught up before timeout"),
        };
    }
    let synced = |i: usize| {
        let ack_offset = server.repl.replicas[i].ack_offset;
        server.planted.failover_target_synced(ack_offset, offset)
    };
    let target = match &f.target {
        Some((host, port)) => find_replica(server, host, i64::from(*port)).filter(|&i| synced(i)),
        None => (0..server.repl.replicas.len())
            .find(|&i| synced(i) && clients.contains_key(&server.repl.replicas[i].client)),
    };
    let Some(i) = target else {
        return Step::Wait;
    };
    let r = &server.repl.replicas[i];
    let (host, port) = (r.ip.clone(), r.listening_port);
    if let Some(f) = server.repl.failover.as_mut() {
        f.target = Some((host.clone(), port));
    }
    Step::HandOver(host, port, false)
}

/// Why FAILOVER refuses to start, if it does (Redis's checks after the
/// argument parsing, in its order).
pub fn refusal(
    server: &Server,
    target: Option<(&str, i64)>,
    force: bool,
    timeout_ms: i64,
) -> Option<&'static str> {
    if server.repl.failover.is_some() {
        return Some("ERR FAILOVER already in progress.");
    }
    if server.repl.is_replica() {
        return Some("ERR FAILOVER is not valid when server is a replica.");
    }
    if server.repl.replicas.is_empty() {
        return Some("ERR FAILOVER requires connected replicas.");
    }
    if force && (timeout_ms == 0 || target.is_none()) {
        return Some(
            "ERR FAILOVER with force option requires both a timeout and target HOST and IP.",
        );
    }
    let (host, port) = target?;
    match find_replica(server, host, port) {
        None => Some("ERR FAILOVER target HOST and PORT is not a replica."),
        Some(i) if server.repl.replicas[i].state != ReplicaState::Online => {
            Some("ERR FAILOVER target replica is not online.")
        }
        Some(_) => None,
    }
}

/// Whether a failover pauses this server's own stream (no PING, no GETACK).
pub fn holds_stream(server: &Server) -> bool {
    server.repl.failover.is_some()
}

/// The client that FAILOVER names as the cause in the log.
pub fn log_target(f: &Failover) -> String {
    match &f.target {
        Some((host, port)) => format!("{host}:{port}"),
        None => "any replica".to_string(),
    }
}

/// Redis's `clearFailoverState`: no failover any more, and the writes its
/// pause held go on (on a replica they then meet `-READONLY`).
pub fn clear(p: &mut Parts) {
    p.server.repl.failover = None;
    p.server.pause.end_failover();
}

/// Redis's `abortFailover`: a server already handing over becomes a
/// primary again (a new replication id, as REPLICAOF NO ONE), and the
/// paused writes go on.
pub fn abort(p: &mut Parts, why: &str) {
    let Some(f) = p.server.repl.failover.as_ref() else {
        return;
    };
    let text = format!("FAILOVER to {} aborted: {why}", log_target(f));
    let in_progress = f.state == FailoverState::InProgress;
    p.events.push_back(Event::Log {
        level: LogLevel::Notice,
        text,
    });
    if in_progress {
        replica::unset_master(p);
    }
    clear(p);
}

/// The target caught up (or FORCE's timeout passed): this server becomes
/// its replica, and its PSYNC will carry FAILOVER.
pub fn hand_over(p: &mut Parts, now: Now, (host, port): (String, u16), forced: bool) {
    let text = match forced {
        true => format!("FAILOVER to {host}:{port} time out exceeded, failing over."),
        false => format!("Failover target {host}:{port} is synced, failing over."),
    };
    p.events.push_back(Event::Log {
        level: LogLevel::Notice,
        text,
    });
    if let Some(f) = p.server.repl.failover.as_mut() {
        f.state = FailoverState::InProgress;
    }
    replica::set_master(p, now, host, port);
}

#[cfg(test)]
mod tests;
