//! Replication as Redis 7.0.15 speaks it: a primary streams its writes to
//! replicas; a replica (see [`replica`]) applies a primary's stream.
//!
//! The replication stream is the propagated stream of [`crate::propagate`]
//! (one execution path: what a write puts into the AOF is what it sends to
//! replicas), plus the primary's own PINGs and `REPLCONF GETACK *`. Every
//! byte of it has an offset (see [`backlog`] for the numbering and the
//! PSYNC arithmetic); `master_repl_offset` counts them.
//!
//! # Sans-IO
//!
//! A replica connection to a primary is an ordinary client of the primary
//! engine, marked [`ClientRole::Replica`] once it sent PSYNC: its output is
//! the `+FULLRESYNC` line, the RDB and then the stream, written into its
//! client output like any reply. The engine never opens a socket: a
//! replica engine asks its host for the link with an event (see
//! [`replica`]).
//!
//! # Identity
//!
//! A primary has a replication id (`replid`, 40 hex characters) naming its
//! history, and keeps the previous one (`replid2`) with the offset where it
//! stopped being valid (`second_replid_offset`), so that a promoted replica
//! can serve partial resyncs to the replicas of its old primary. Ids come
//! from the engine's seed, never from the OS.

pub mod backlog;
pub mod failover;
pub mod info;
pub mod primary;
pub mod replica;
pub mod restart;
#[cfg(test)]
mod sync_tests;
#[cfg(test)]
mod tests;
pub mod writable;

use std::collections::BTreeMap;

use rand::RngCore;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::client::ClientId;
use backlog::Backlog;

/// The null replication id Redis prints for "none".
pub const NULL_REPLID: &str = "0000000000000000000000000000000000000000";

/// What a connection is to replication.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClientRole {
    /// An ordinary client.
    #[default]
    Normal,
    /// A replica of this server (it sent SYNC or PSYNC).
    Replica,
    /// This server's link to its primary (see [`replica`]).
    Master,
}

/// How far a replica of this server has got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplicaState {
    /// It got a diskless RDB (`$EOF:<mark>`) and has not acked yet: the
    /// stream waits in `held` (Redis's `repl_put_online_on_ack`), since
    /// a replica finds the mark only at the end of what it has read.
    WaitAck,
    /// It has the RDB (queued in its output) and gets the stream.
    Online,
}

/// One replica of this server (Redis's `server.slaves` entry).
#[derive(Clone, Debug)]
pub struct Replica {
    pub client: ClientId,
    pub state: ReplicaState,
    /// The stream offset its copy starts from: it gets every byte after it.
    pub start_offset: u64,
    /// The last offset it acknowledged (REPLCONF ACK), and when (monotonic).
    pub ack_offset: u64,
    pub ack_mono_ns: u64,
    /// REPLCONF listening-port, and the address it connects from.
    pub listening_port: u16,
    pub ip: String,
    /// The stream held while it is [`ReplicaState::WaitAck`].
    pub held: Vec<u8>,
}

/// What a connection said with REPLCONF before its PSYNC.
#[derive(Clone, Debug, Default)]
pub struct Handshake {
    pub listening_port: u16,
    pub capa_eof: bool,
    pub capa_psync2: bool,
    /// `REPLCONF rdb-only 1`: the RDB and nothing after it (`redis-cli
    /// --rdb`); the connection closes once the RDB is written.
    pub rdb_only: bool,
    /// `REPLCONF rdb-filter-only`: the RDB leaves out the keys, and the
    /// function libraries unless the filter names `functions` (`redis-cli
    /// --functions-rdb`, and `--replica` with an empty filter).
    pub rdb_filter: Option<RdbFilter>,
}

/// What a filtered RDB keeps (Redis's `SLAVE_REQ_RDB_*` flags).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RdbFilter {
    pub functions: bool,
}

/// A client parked by WAIT until `numreplicas` acknowledged `offset`.
#[derive(Clone, Debug)]
pub struct Waiter {
    pub client: ClientId,
    pub offset: u64,
    pub numreplicas: usize,
    /// Monotonic deadline; `None` waits forever (timeout 0).
    pub deadline_ns: Option<u64>,
}

/// The replication state of a server.
#[derive(Debug)]
pub struct Replication {
    pub replid: String,
    pub replid2: String,
    /// The last offset `replid2` is valid for; -1 when there is none.
    pub second_replid_offset: i64,
    pub master_repl_offset: u64,
    /// Created when the first replica syncs (as Redis), kept after.
    pub backlog: Option<Backlog>,
    /// Replicas in the order they synced (INFO's slave0, slave1...).
    pub replicas: Vec<Replica>,
    pub handshakes: BTreeMap<ClientId, Handshake>,
    pub waiters: Vec<Waiter>,
    /// A WAIT blocked: `REPLCONF GETACK *` goes into the stream once this
    /// input's writes are in.
    pub getack_pending: bool,
    /// Replicas that gained output, for the engine to transmit.
    pub to_transmit: Vec<ClientId>,
    pub last_ping_mono_ns: u64,
    pub sync_full: u64,
    pub sync_partial_ok: u64,
    pub sync_partial_err: u64,
    /// Ids drawn so far (each new id is the seed's next).
    replids_drawn: u64,
    seed: u64,
    /// The link to our primary, when this server is a replica.
    pub master: Option<Box<replica::MasterLink>>,
    /// A FAILOVER under way (see [`failover`]).
    pub failover: Option<failover::Failover>,
    /// Keys a writable replica's clients gave a TTL (see [`writable`]).
    pub writable_expires: writable::WritableExpires,
}

impl Replication {
    pub fn new(seed: u64) -> Replication {
        let mut r = Replication {
            replid: String::new(),
            replid2: NULL_REPLID.to_string(),
            second_replid_offset: -1,
            master_repl_offset: 0,
            backlog: None,
            replicas: Vec::new(),
            handshakes: BTreeMap::new(),
            waiters: Vec::new(),
            getack_pending: false,
            to_transmit: Vec::new(),
            last_ping_mono_ns: 0,
            sync_full: 0,
            sync_partial_ok: 0,
            sync_partial_err: 0,
            replids_drawn: 0,
            seed,
            master: None,
            failover: None,
            writable_expires: writable::WritableExpires::default(),
        };
        r.replid = r.draw_replid();
        r
    }

    /// A new replication id, a function of the seed and how many were
    /// drawn before (Redis's `changeReplicationId` uses the OS's RNG).
    fn draw_replid(&mut self) -> String {
        let salt = 0x7265_706c_6964 ^ self.replids_drawn.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.replids_drawn += 1;
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed ^ salt);
        let mut bytes = [0u8; 20];
        rng.fill_bytes(&mut bytes);
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The 40 characters that end a diskless RDB transfer (`$EOF:<mark>`).
    pub fn eof_mark(&mut self) -> String {
        self.draw_replid()
    }

    /// A new history (Redis's `changeReplicationId`).
    pub fn change_replid(&mut self) {
        self.replid = self.draw_replid();
    }

    /// Redis's `shiftReplicationId`: the current id becomes the previous
    /// one, valid up to the current offset, and a new id starts.
    pub fn shift_replid(&mut self) {
        self.replid2 = std::mem::take(&mut self.replid);
        self.second_replid_offset = self.master_repl_offset as i64 + 1;
        self.change_replid();
    }

    /// Redis's `clearReplicationId2`.
    pub fn clear_replid2(&mut self) {
        self.replid2 = NULL_REPLID.to_string();
        self.second_replid_offset = -1;
    }

    /// Whether the stream must be produced: a backlog exists (it keeps the
    /// stream for replicas to come back), or this server is a replica.
    pub fn wants_stream(&self) -> bool {
        self.backlog.is_some()
    }

    /// Whether this server is a replica (REPLICAOF host port).
    pub fn is_replica(&self) -> bool {
        self.master.is_some()
    }

    /// Forgets a connection that is gone.
    pub fn client_gone(&mut self, client: ClientId) {
        self.handshakes.remove(&client);
        self.replicas.retain(|r| r.client != client);
        self.waiters.retain(|w| w.client != client);
    }

    /// Replicas that acknowledged `offset` (Redis's
    /// `replicationCountAcksByOffset`).
    pub fn acked_count(&self, offset: u64) -> usize {
        self.replicas
            .iter()
            .filter(|r| r.state == ReplicaState::Online && r.ack_offset >= offset)
            .count()
    }

    /// Creates the backlog if there is none (Redis's
    /// `createReplicationBacklog`).
    pub fn ensure_backlog(&mut self, size_bytes: usize) {
        if self.backlog.is_none() {
            self.backlog = Some(Backlog::new(self.master_repl_offset + 1, size_bytes));
        }
    }
}
