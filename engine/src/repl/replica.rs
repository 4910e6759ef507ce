//! The replica's side: the link to a primary (REPLICAOF host port), as
//! Redis 7.0.15's `replication.c` runs it.
//!
//! # Sans-IO contract
//!
//! The engine never opens the link itself:
//!
//! - `REPLICAOF host port` (or `replicaof` in the configuration) allocates
//!   a [`ClientId`] for the link, a client with [`ClientRole::Master`], and
//!   emits [`Event::ConnectPrimary`] from `poll_event`.
//! - The host connects. When the connection is up it calls
//!   `Engine::primary_link_up(now, client)`; when it fails, or later
//!   breaks, `Engine::disconnect(now, client)`. Bytes from the primary go to
//!   `handle_input`, bytes to it come out of the client's output as any
//!   reply does. The engine ends the link with [`Event::Close`]
//!   ([`CloseReason::ReplicationLink`]); the host closes and then calls
//!   `disconnect`.
//! - Reconnecting is the engine's: the replication cron (once a second,
//!   Redis's `replicationCron`, a deadline of `poll_timeout`) asks for a
//!   new connection with a fresh ClientId after a link is lost or a
//!   connect failed. `repl-timeout` (no byte from the primary for that
//!   long, in the handshake, the transfer or the stream) is the same
//!   cron's check against `now`.
//! - `REPLICAOF NO ONE` closes the link and promotes this server (its
//!   replication id shifts to `replid2`).
//! - Loading the primary's RDB is reported as [`Event::SyncLoaded`] with
//!   its work units, for a host that charges CPU (the simulator).
//!
//! # States
//!
//! [`LinkState`] follows Redis's `repl_state`: `Connect` (waiting for the
//! cron), `Connecting` (the host is connecting), the handshake steps,
//! `Transfer` (reading the RDB) and `Connected` (applying the stream as
//! the master client). The master's replication id and offsets live in
//! [`MasterState`]: the current master's while connected, the cached one
//! after the link is lost, which the next PSYNC offers for a partial
//! resync (`replicationCacheMaster`).
//!
//! [`Event::ConnectPrimary`]: crate::Event::ConnectPrimary
//! [`Event::SyncLoaded`]: crate::Event::SyncLoaded
//! [`Event::Close`]: crate::Event::Close

use std::collections::VecDeque;
use std::fmt::Write;

use crate::client::{Client, ClientId, Clients, CloseReason, ConnectInfo};
use crate::cmd::Ctx;
use crate::event::{Event, LogLevel};
use crate::server::Server;
use crate::time::Now;

use super::{ClientRole, Replication};

pub mod blocked;
pub mod handshake;
#[cfg(test)]
mod tests;

pub use handshake::{PsyncReply, Transfer};

/// Redis's `replicationCron` period.
pub const CRON_PERIOD_NS: u64 = 1_000_000_000;

/// Where the link to the primary stands (Redis's `repl_state`).
#[derive(Debug)]
pub enum LinkState {
    /// Waiting for the replication cron to ask for a connection.
    Connect,
    /// [`crate::Event::ConnectPrimary`] was emitted; the host is connecting.
    Connecting,
    /// Sent PING, waiting for its reply.
    ReceivePing,
    /// Sent AUTH (with `masterauth`), waiting for its reply.
    ReceiveAuth,
    /// Sent `REPLCONF listening-port`, waiting for its reply.
    ReceivePort,
    /// Sent `REPLCONF capa eof capa psync2`, waiting for its reply.
    ReceiveCapa,
    /// Sent PSYNC, waiting for `+FULLRESYNC`, `+CONTINUE` or an error.
    ReceivePsync,
    /// Reading the RDB of a full resync.
    Transfer(Box<Transfer>),
    /// Applying the primary's stream.
    Connected,
}

impl LinkState {
    /// ROLE's name for the state.
    pub fn role_name(&self) -> &'static str {
        match self {
            LinkState::Connect => "connect",
            LinkState::Connecting => "connecting",
            LinkState::Transfer(_) => "sync",
            LinkState::Connected => "connected",
            _ => "handshake",
        }
    }

    /// Redis's `slaveIsInHandshakeState`.
    pub fn in_handshake(&self) -> bool {
        matches!(
            self,
            LinkState::ReceivePing
                | LinkState::ReceiveAuth
                | LinkState::ReceivePort
                | LinkState::ReceiveCapa
                | LinkState::ReceivePsync
        )
    }
}

/// A primary's history as this replica has it: Redis's `server.master`
/// (connected) or `server.cached_master` (lost, kept for PSYNC).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MasterState {
    pub replid: String,
    /// The offset of the last stream byte applied (`reploff`).
    pub reploff: u64,
    /// The offset of the last stream byte read (`read_reploff`).
    pub read_reploff: u64,
    /// The database the stream had selected (kept across a partial resync:
    /// the primary does not select it again).
    pub db: usize,
}

/// The primary this server replicates, and where its link stands.
#[derive(Debug)]
pub struct MasterLink {
    pub host: String,
    pub port: u16,
    pub state: LinkState,
    /// The connection, from `Connecting` on.
    pub client: Option<ClientId>,
    /// The handshake's partial reply line.
    pub line: Vec<u8>,
    /// The master while connected.
    pub master: Option<MasterState>,
    /// The master kept after the link was lost, for a partial resync.
    pub cached: Option<MasterState>,
    /// The id and offset of `+FULLRESYNC`.
    pub full_replid: String,
    pub full_offset: i64,
    /// Stream bytes fed to the master client's parser and not yet applied
    /// (their offsets are counted when their command has run).
    pub unapplied: Vec<u8>,
    /// The last byte from the primary, or the start of the connection
    /// (monotonic; `repl-timeout` counts from it).
    pub last_io_mono_ns: u64,
    /// The next replication cron tick (monotonic).
    pub cron_due_ns: u64,
    /// When the link went down (unix seconds), for INFO.
    pub down_since_unix_s: Option<u64>,
    /// A `REPLCONF GETACK` ran: the ACK goes out after its command.
    pub ack_requested: bool,
}

impl MasterLink {
    fn new(host: String, port: u16, now: Now) -> MasterLink {
        MasterLink {
            host,
            port,
            state: LinkState::Connect,
            client: None,
            line: Vec::new(),
            master: None,
            cached: None,
            full_replid: String::new(),
            full_offset: -1,
            unapplied: Vec::new(),
            last_io_mono_ns: now.mono_ns,
            cron_due_ns: now.mono_ns,
            down_since_unix_s: None,
            ack_requested: false,
        }
    }

    /// Whether the link applies the stream (`master_link_status:up`).
    pub fn is_up(&self) -> bool {
        matches!(self.state, LinkState::Connected)
    }
}

/// The engine's queues a link change touches.
pub struct Parts<'a> {
    pub server: &'a mut Server,
    pub clients: &'a mut Clients,
    pub events: &'a mut VecDeque<Event>,
}

impl Parts<'_> {
    fn log(&mut self, level: LogLevel, text: String) {
        self.events.push_back(Event::Log { level, text });
    }
}

/// Redis's `replicationSetMaster`: forget the current link (caching its
/// master), remember the new primary and connect to it at once.
pub fn set_master(p: &mut Parts, now: Now, host: String, port: u16) {
    blocked::disconnect_blocked_clients(p, now);
    set_master_from(p, now, (host, port), true);
}

/// [`set_master`]; `offer_own` offers this server's own history to the
/// new primary when it was a primary (not at startup: Redis's
/// `replicaof` directive only sets the address).
pub fn set_master_from(p: &mut Parts, now: Now, (host, port): (String, u16), offer_own: bool) {
    let was_master = !p.server.repl.is_replica() && offer_own;
    if let Some(link) = p.server.repl.master.as_deref_mut() {
        if link.is_up() {
            cache_master(p);
        }
    }
    cancel_handshake(p);
    let cached = p.server.repl.master.take().and_then(|l| l.cached);
    let mut link = Box::new(MasterLink::new(host, port, now));
    link.cached = cached;
    if was_master {
        // Our own history is what we offer the new primary
        // (`replicationCacheMasterUsingMyself`).
        link.cached = Some(MasterState {
            replid: p.server.repl.replid.clone(),
            reploff: p.server.repl.master_repl_offset,
            read_reploff: p.server.repl.master_repl_offset,
            db: 0,
        });
    }
    p.server.repl.master = Some(link);
    let line = format!("Connecting to MASTER {}:{}", host_of(p), port);
    p.log(LogLevel::Notice, line);
    connect(p, now);
}

fn host_of(p: &Parts) -> String {
    p.server
        .repl
        .master
        .as_ref()
        .map_or(String::new(), |l| l.host.clone())
}

/// Redis's `replicationUnsetMaster` (REPLICAOF NO ONE): the link closes,
/// the cached master is dropped, the history shifts to `replid2` and the
/// replicas reconnect to learn the new id.
pub fn unset_master(p: &mut Parts) {
    let Some(link) = p.server.repl.master.take() else {
        return;
    };
    if let Some(id) = link.client {
        crate::clients::close_client(p.clients, p.events, id, CloseReason::ReplicationLink);
    }
    p.server.repl.shift_replid();
    // A primary expires every key itself.
    p.server.repl.writable_expires.clear();
    disconnect_replicas(p);
    // The next replica's stream starts with a SELECT.
    p.server.propagation.reset_selected_db();
}

/// Closes every replica of this server (Redis's `disconnectSlaves`).
pub fn disconnect_replicas(p: &mut Parts) {
    let ids: Vec<ClientId> = p.server.repl.replicas.iter().map(|r| r.client).collect();
    for id in ids {
        crate::clients::close_client(p.clients, p.events, id, CloseReason::ReplicationLink);
    }
}

/// Redis's `connectWithMaster`: a fresh client for the link, and the host
/// asked to connect it.
pub fn connect(p: &mut Parts, now: Now) {
    let id = ClientId(p.server.next_client_id);
    p.server.next_client_id += 1;
    let Some(link) = p.server.repl.master.as_deref() else {
        return;
    };
    let info = ConnectInfo {
        addr: format!("{}:{}", link.host, link.port),
        ..ConnectInfo::default()
    };
    let mut client = Client::new(id, info, now, true);
    client.repl_role = ClientRole::Master;
    // Redis's master client has no user: nothing is ACL-checked.
    client.user = b"(superuser)".to_vec();
    client.deny_blocking = true;
    p.clients.insert(id, client);
    let Some(link) = p.server.repl.master.as_deref_mut() else {
        return;
    };
    link.client = Some(id);
    link.state = LinkState::Connecting;
    link.line.clear();
    link.last_io_mono_ns = now.mono_ns;
    let (host, port) = (link.host.clone(), link.port);
    p.events.push_back(Event::ConnectPrimary {
        client: id,
        host,
        port,
    });
}

/// Redis's `cancelReplicationHandshake`: a link that is connecting, in
/// its handshake or its transfer is closed; the state goes back to
/// `Connect`. Returns whether there was one.
pub fn cancel_handshake(p: &mut Parts) -> bool {
    let Some(link) = p.server.repl.master.as_deref_mut() else {
        return false;
    };
    let busy = matches!(link.state, LinkState::Connecting | LinkState::Transfer(_))
        || link.state.in_handshake();
    if !busy {
        return false;
    }
    link.state = LinkState::Connect;
    link.line.clear();
    if let Some(id) = link.client.take() {
        crate::clients::close_client(p.clients, p.events, id, CloseReason::ReplicationLink);
    }
    true
}

/// Redis's `replicationCacheMaster` followed by
/// `replicationHandleMasterDisconnection`: the connected master's id,
/// applied offset and database are kept for a partial resync; what was
/// read but not applied (a partial command, an open MULTI) is dropped.
pub fn cache_master(p: &mut Parts) {
    let now_unix_s = p.server.stats.now.unix_ms() / 1000;
    let Some(link) = p.server.repl.master.as_deref_mut() else {
        return;
    };
    let Some(mut master) = link.master.take() else {
        return;
    };
    if let Some(id) = link.client.take() {
        if let Some(c) = p.clients.get_mut(&id) {
            master.db = c.db;
        }
        crate::clients::close_client(p.clients, p.events, id, CloseReason::ReplicationLink);
    }
    master.read_reploff = master.reploff;
    link.cached = Some(master);
    link.unapplied.clear();
    link.state = LinkState::Connect;
    link.down_since_unix_s = Some(now_unix_s);
    p.log(
        LogLevel::Notice,
        "Caching the disconnected master state.".into(),
    );
}

/// The error a read-only replica answers a write with.
pub const READONLY: &str = "READONLY You can't write against a read only replica.";

/// Whether a write by a client of `role` is refused: this server is a
/// `replica-read-only` replica and the write does not come from its
/// primary (Redis's `processCommand` and `scriptVerifyWriteCommandAllow`).
pub fn refuses_writes(server: &Server, role: ClientRole) -> bool {
    server.repl.is_replica()
        && role != ClientRole::Master
        && crate::commands::config::config_get(&server.config, "replica-read-only").as_deref()
            == Some("yes")
}

/// Whether CLIENT LIST shows `c`: the link becomes Redis's master client
/// once it applies the stream; before, it is a bare connection.
pub fn is_listed(server: &Server, c: &Client) -> bool {
    if c.repl_role != ClientRole::Master {
        return true;
    }
    server
        .repl
        .master
        .as_deref()
        .is_some_and(|l| l.client == Some(c.id) && l.is_up())
}

/// Why this server refuses a SYNC/PSYNC now, if it does: a replica serves
/// its own replicas only while its link is up (Redis's `syncCommand`).
pub fn refuses_sync(server: &Server) -> Option<&'static str> {
    match server.repl.master.as_deref() {
        Some(link) if !link.is_up() => {
            Some("NOMASTERLINK Can't SYNC while not connected with my master")
        }
        _ => None,
    }
}

/// `REPLCONF GETACK`: only a replica's primary asks it; the ACK goes out
/// after the command (Redis's `replicationSendAck` from `replconfCommand`).
pub fn getack(ctx: &mut Ctx) {
    if ctx.client().repl_role != ClientRole::Master {
        return;
    }
    if let Some(link) = ctx.server.repl.master.as_deref_mut() {
        if link.is_up() {
            link.ack_requested = true;
        }
    }
}

/// `REPLCONF ACK <offset>` as a replica sends it.
pub fn ack_bytes(offset: u64) -> Vec<u8> {
    let n = offset.to_string();
    format!(
        "*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n${}\r\n{n}\r\n",
        n.len()
    )
    .into_bytes()
}

/// The applied offset ROLE and INFO show: the master's, else the cached
/// one's (Redis's `slave_repl_offset`).
fn offsets(link: &MasterLink) -> (u64, u64) {
    link.master
        .as_ref()
        .or(link.cached.as_ref())
        .map_or((0, 0), |m| (m.read_reploff, m.reploff))
}

/// ROLE on a replica; false on a primary (the caller answers).
pub fn write_role(ctx: &mut Ctx) -> bool {
    let Some(link) = ctx.server.repl.master.as_deref() else {
        return false;
    };
    let host = link.host.clone();
    let port = link.port;
    let state = link.state.role_name();
    let offset = link.master.as_ref().map_or(-1, |m| m.reploff as i64);
    let mut w = ctx.w();
    w.array_len(5);
    w.bulk_str("slave");
    w.bulk_str(&host);
    w.int(port as i64);
    w.bulk_str(state);
    w.int(offset);
    true
}

/// INFO replication's replica fields (after `# Replication`), as Redis
/// 7.0.15's `genRedisInfoString`.
pub fn write_info(server: &Server, link: &MasterLink, now: Now, out: &mut String) {
    let repl: &Replication = &server.repl;
    let _ = repl;
    let now_s = now.unix_ms() / 1000;
    let last_io_s = match link.is_up() {
        true => (now.mono_ns.saturating_sub(link.last_io_mono_ns) / 1_000_000_000) as i64,
        false => -1,
    };
    let (read_off, off) = offsets(link);
    let _ = write!(
        out,
        "role:slave\r\n\
         master_host:{}\r\n\
         master_port:{}\r\n\
         master_link_status:{}\r\n\
         master_last_io_seconds_ago:{last_io_s}\r\n\
         master_sync_in_progress:{}\r\n\
         slave_read_repl_offset:{read_off}\r\n\
         slave_repl_offset:{off}\r\n",
        link.host,
        link.port,
        if link.is_up() { "up" } else { "down" },
        matches!(link.state, LinkState::Transfer(_)) as u8,
    );
    if let LinkState::Transfer(t) = &link.state {
        let total = t.total_bytes();
        let read = t.read_bytes();
        let perc = match total {
            0 => 0.0,
            n => read as f64 * 100.0 / n as f64,
        };
        let io_s = now.mono_ns.saturating_sub(link.last_io_mono_ns) / 1_000_000_000;
        let _ = write!(
            out,
            "master_sync_total_bytes:{}\r\n\
             master_sync_read_bytes:{read}\r\n\
             master_sync_left_bytes:{}\r\n\
             master_sync_perc:{perc:.2}\r\n\
             master_sync_last_io_seconds_ago:{io_s}\r\n",
            total,
            total - read as i64,
        );
    }
    if !link.is_up() {
        let since = link
            .down_since_unix_s
            .map_or(-1, |s| now_s.saturating_sub(s) as i64);
        let _ = write!(out, "master_link_down_since_seconds:{since}\r\n");
    }
    let priority = super::primary::config_u64(&server.config, "replica-priority");
    let read_only = crate::commands::config::config_get(&server.config, "replica-read-only")
        .is_some_and(|v| v == "yes");
    let announced = crate::commands::config::config_get(&server.config, "replica-announced")
        .is_none_or(|v| v == "yes");
    let _ = write!(
        out,
        "slave_priority:{priority}\r\n\
         slave_read_only:{}\r\n\
         replica_announced:{}\r\n",
        read_only as u8, announced as u8
    );
}
