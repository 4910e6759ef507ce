//! The primary's side: feeding the stream to the backlog and the replicas,
//! answering PSYNC with a full or a partial resync, and the acks that
//! WAIT and `min-replicas-to-write` count.

use crate::client::{ClientId, Clients};
use crate::cmd::{flags, CommandSpec};
use crate::commands::config::config_get;
use crate::config::Config;
use crate::resp::{Protocol, ReplyWriter};
use crate::server::Server;
use crate::stats::CommandName;
use crate::time::Now;

use super::{ClientRole, Handshake, Replica, ReplicaState, Replication};

/// `REPLCONF GETACK *`, as Redis writes it into the stream.
pub const GETACK: &[u8] = b"*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n";
/// The primary's keep-alive in the stream.
pub const PING: &[u8] = b"*1\r\n$4\r\nPING\r\n";

/// A numeric configuration parameter (the table validated it).
pub fn config_u64(config: &Config, name: &str) -> u64 {
    config_get(config, name)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Appends `bytes` to the stream: the offset grows, the backlog keeps
/// them, and every replica whose copy starts before them gets them
/// (Redis's `replicationFeedSlaves`). Returns the work it took.
pub fn feed(repl: &mut Replication, clients: &mut Clients, bytes: &[u8]) -> u64 {
    if bytes.is_empty() {
        return 0;
    }
    let first = repl.master_repl_offset + 1;
    repl.master_repl_offset += bytes.len() as u64;
    let mut work_units = repl.backlog.as_mut().map_or(0, |b| b.append(bytes));
    for r in &mut repl.replicas {
        // A replica that synced in the middle of this input has the
        // bytes before its start in its RDB already.
        let skip = r
            .start_offset
            .saturating_sub(first - 1)
            .min(bytes.len() as u64) as usize;
        let Some(c) = clients.get_mut(&r.client) else {
            continue;
        };
        if c.closing.is_some() || skip == bytes.len() {
            continue;
        }
        if r.state == ReplicaState::WaitAck {
            r.held.extend_from_slice(&bytes[skip..]);
            continue;
        }
        if c.pending_output().is_empty() {
            repl.to_transmit.push(r.client);
        }
        c.output.extend_from_slice(&bytes[skip..]);
        work_units += (bytes.len() - skip) as u64 / 64 + 1;
    }
    work_units
}

/// How a PSYNC is answered.
pub enum Resync {
    /// `+CONTINUE`: these backlog bytes follow.
    Partial(Vec<u8>),
    Full,
}

/// Redis's `masterTryPartialResynchronization`: a partial resync iff the
/// replica's history is ours (our id, or our previous id up to where it
/// stopped being valid) and the backlog still covers the byte it asks for.
pub fn try_partial(repl: &Replication, replid: &[u8], offset: i64) -> Resync {
    let ours = replid == repl.replid.as_bytes();
    let previous = replid == repl.replid2.as_bytes() && offset <= repl.second_replid_offset;
    if !(ours || previous) || offset < 0 {
        return Resync::Full;
    }
    match repl.backlog.as_ref().and_then(|b| b.since(offset as u64)) {
        Some(bytes) => Resync::Partial(bytes),
        None => Resync::Full,
    }
}

/// Makes `client` a replica whose copy starts at `start_offset`.
pub fn add_replica(
    server: &mut Server,
    clients: &mut Clients,
    (now, client): (Now, ClientId),
    (start_offset, state): (u64, ReplicaState),
) {
    let hs = server.repl.handshakes.remove(&client).unwrap_or_default();
    let Some(c) = clients.get_mut(&client) else {
        return;
    };
    c.repl_role = ClientRole::Replica;
    let ip = c
        .info
        .addr
        .rsplit_once(':')
        .map_or(String::new(), |(ip, _)| ip.to_string());
    server.repl.replicas.push(Replica {
        client,
        state,
        start_offset,
        ack_offset: 0,
        ack_mono_ns: now.mono_ns,
        listening_port: hs.listening_port,
        ip,
        held: Vec::new(),
    });
}

/// The handshake options a connection gave so far.
pub fn handshake(repl: &mut Replication, client: ClientId) -> &mut Handshake {
    repl.handshakes.entry(client).or_default()
}

/// Replicas whose last ack is at most `min-replicas-max-lag` seconds old
/// (Redis's `repl_good_slaves_count`).
pub fn good_replicas(server: &Server, now: Now) -> usize {
    let max_lag_ns = u64::from(server.config.min_replicas_max_lag_s) * 1_000_000_000;
    server
        .repl
        .replicas
        .iter()
        .filter(|r| now.mono_ns.saturating_sub(r.ack_mono_ns) <= max_lag_ns)
        .count()
}

/// Refuses writes without enough good replicas (`-NOREPLICAS`), and
/// writes to a read-only replica (`-READONLY`), except from its primary.
pub(crate) fn admit(
    server: &Server,
    (now, role): (Now, ClientRole),
    resolved: &mut Result<
        (Option<&'static CommandSpec>, &'static CommandSpec),
        Option<CommandName>,
    >,
    reply: &mut Vec<u8>,
) {
    let Ok((parent, spec)) = *resolved else {
        return;
    };
    if !spec.has(flags::WRITE) || role == ClientRole::Master {
        return;
    }
    let message = if server.repl.is_replica() {
        if !super::replica::refuses_writes(server, role) {
            return;
        }
        super::replica::READONLY
    } else {
        // Every write on a primary comes here: without a minimum (the
        // default) the lag is not even looked up.
        let min = server.config.min_replicas_to_write as usize;
        if min == 0 {
            return;
        }
        let lag = server.config.min_replicas_max_lag_s;
        if lag == 0 || good_replicas(server, now) >= min {
            return;
        }
        "NOREPLICAS Not enough good replicas to write."
    };
    ReplyWriter::new(reply, Protocol::Resp2).error(message);
    *resolved = Err(Some(CommandName::of(parent, spec)));
}

/// Answers the WAITs that are satisfied, or (with `timed_out`) whose
/// deadline has passed, with the number of replicas that acknowledged
/// their offset, and queues their clients to go on (Redis's
/// `processClientsWaitingReplicas`).
pub fn answer_waiters(server: &mut Server, clients: &mut Clients, now_ns: u64, timed_out: bool) {
    let waiters = std::mem::take(&mut server.repl.waiters);
    for w in waiters {
        let acked = server.planted.acked_count(&server.repl, w.offset);
        let expired = timed_out && w.deadline_ns.is_some_and(|d| d <= now_ns);
        if acked < w.numreplicas && !expired {
            server.repl.waiters.push(w);
            continue;
        }
        let Some(c) = clients.get_mut(&w.client) else {
            continue;
        };
        c.waiting_acks = false;
        c.output
            .extend_from_slice(format!(":{acked}\r\n").as_bytes());
        server.blocking.push_unblocked(w.client);
    }
}
