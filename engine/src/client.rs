//! Per-connection state.

use crate::resp::{Protocol, RequestParser};
use crate::time::Now;

/// Bytes a client costs before any buffer (CLIENT LIST `tot-mem`, INFO
/// memory), an estimate: `size_of::<Client>()` when it was last measured,
/// fixed so that these figures, and with them the simulator's trace
/// hashes, do not move when a field comes or goes or the compiler
/// reorders the struct.
pub(crate) const CLIENT_STRUCT_BYTES: usize = 528;

/// A connection's identity: the number `CLIENT ID` reports. Ids are assigned
/// in increasing order from 1 and never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClientId(pub u64);

/// Why the engine asks the host to close a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseReason {
    /// The client sent QUIT. Flush the pending reply first.
    Quit,
    /// A malformed request. Flush the pending error reply first.
    ProtocolError,
    /// The query buffer exceeded `client-query-buffer-limit`. Close at once.
    QueryBufferLimit,
    /// The output buffer exceeded its limit. Close at once.
    OutputBufferLimit,
    /// `CLIENT KILL` named this client. Close at once.
    Killed,
    /// `maxclients` was reached when it connected. Flush the error first.
    MaxClients,
    /// Idle for longer than `timeout` (see [`crate::idle`]). Close at once.
    IdleTimeout,
    /// The largest connection when the clients' memory reached
    /// `maxmemory-clients` (see [`crate::client_evict`]). Close at once.
    ClientEviction,
    /// The replica ends its link to its primary (REPLICAOF, `repl-timeout`,
    /// a failed handshake or load; see [`crate::repl::replica`]). Close at
    /// once.
    ReplicationLink,
}

impl CloseReason {
    /// Whether the host should write the pending output before closing.
    pub fn flush_first(self) -> bool {
        matches!(
            self,
            CloseReason::Quit | CloseReason::ProtocolError | CloseReason::MaxClients
        )
    }
}

/// What the host knows about a new connection.
#[derive(Clone, Debug, Default)]
pub struct ConnectInfo {
    /// Peer address as `ip:port` (CLIENT LIST `addr=`).
    pub addr: String,
    /// Local address as `ip:port` (CLIENT LIST `laddr=`).
    pub laddr: String,
    /// File descriptor or other host handle, for CLIENT LIST `fd=`.
    pub fd: i64,
}

/// One connection.
#[derive(Debug)]
pub struct Client {
    pub id: ClientId,
    pub info: ConnectInfo,
    pub parser: RequestParser,
    /// Encoded replies not yet taken by the host.
    pub output: Vec<u8>,
    /// Read position into the output stream's first piece (`queued`'s
    /// front chunk while there is one, else `output`): bytes before it
    /// were taken by the host.
    pub output_sent: usize,
    /// Chunks of big replies ahead of `output` in the stream (see
    /// [`crate::reply_chunks`]); empty but for a snapshot read's reply.
    pub queued: crate::reply_chunks::OutputQueue,
    pub protocol: Protocol,
    pub db: usize,
    pub name: Option<Vec<u8>>,
    pub authenticated: bool,
    /// The ACL user the connection runs as (see [`crate::acl`]); `default`
    /// until it authenticates as another.
    pub user: Vec<u8>,
    /// Set once the engine asked the host to close it; input is then ignored.
    pub closing: Option<super::CloseReason>,
    pub created: Now,
    pub last_interaction: Now,
    /// The last command executed, for CLIENT LIST `cmd=`.
    pub last_command: &'static str,
    /// Requests parsed on this connection so far (the next request's index).
    pub requests_parsed: u64,
    /// CLIENT SETINFO lib-name / lib-ver.
    pub lib_name: Option<Vec<u8>>,
    pub lib_ver: Option<Vec<u8>>,
    /// CLIENT NO-EVICT: excluded from client eviction (CLIENT LIST flag `e`).
    pub no_evict: bool,
    /// Set while the client is parked by a blocking command (see
    /// [`crate::blocking`]); its query buffer is not processed meanwhile.
    /// Changed only by `Blocking::park`/`unpark`.
    pub blocked: Option<Box<crate::blocking::Blocked>>,
    /// Set while the client waits for a foreground save it asked for
    /// (SAVE): its query buffer is not processed meanwhile, as Redis
    /// serves nobody during `rdbSave`.
    pub waiting_save: bool,
    /// Set while the client waits in WAIT for replicas' acks (see
    /// [`crate::repl`]); its query buffer is not processed meanwhile.
    pub waiting_acks: bool,
    /// What the connection is to replication (a replica of ours, our
    /// link to our primary, or neither).
    pub repl_role: crate::repl::ClientRole,
    /// The replication offset after its last command (Redis's `woff`):
    /// what its WAIT waits for.
    pub woff: u64,
    /// Commands of this client may not block: they reply as if their
    /// timeout had passed (Redis's CLIENT_DENY_BLOCKING, set inside MULTI
    /// and scripts).
    pub deny_blocking: bool,
    /// The fake client replaying an AOF (Redis's `mustObeyClient`): what it
    /// runs was already accepted once, so commands skip checks that only
    /// guard live requests (XADD/XTRIM's LIMIT without `~`, XCLAIM's TIME
    /// in the future).
    pub replaying_aof: bool,
    /// MULTI queue and watched keys (see [`crate::multi`]).
    pub tx: crate::multi::ClientTx,
    /// Set by MONITOR (see [`crate::commands::monitor`]).
    pub monitor: bool,
    /// Channels and patterns this client is subscribed to.
    pub subscriptions: crate::pubsub::Subscriptions,
    /// CLIENT TRACKING's mode (see [`crate::tracking`]).
    pub tracking: crate::tracking::ClientTracking,
    /// Since when (monotonic ns) its pending output has been over its
    /// class's soft limit, as of the last check; `None` when under it.
    pub output_soft_limit_since_ns: Option<u64>,
    /// CLIENT REPLY's state (see [`crate::reply_mode`]).
    pub reply_mode: crate::reply_mode::ReplyMode,
    /// Pushes to this client written while its replies are suppressed:
    /// the pipeline appends them once it has dropped the command's reply.
    pub held_pushes: Vec<u8>,
}

impl Client {
    pub fn new(id: ClientId, info: ConnectInfo, now: Now, authenticated: bool) -> Client {
        Client {
            id,
            info,
            parser: RequestParser::new(),
            output: Vec::new(),
            output_sent: 0,
            queued: Default::default(),
            protocol: Protocol::Resp2,
            db: 0,
            name: None,
            authenticated,
            user: crate::acl::DEFAULT_USER.to_vec(),
            closing: None,
            created: now,
            last_interaction: now,
            last_command: "NULL",
            requests_parsed: 0,
            lib_name: None,
            lib_ver: None,
            no_evict: false,
            blocked: None,
            waiting_save: false,
            waiting_acks: false,
            repl_role: Default::default(),
            woff: 0,
            deny_blocking: false,
            replaying_aof: false,
            tx: Default::default(),
            monitor: false,
            subscriptions: Default::default(),
            tracking: Default::default(),
            output_soft_limit_since_ns: None,
            reply_mode: Default::default(),
            held_pushes: Vec::new(),
        }
    }

    /// Output not yet taken by the host.
    ///
    /// While the client's own command runs, the engine has moved `output`
    /// into the command's reply buffer, so it may be shorter than
    /// `output_sent` (CLIENT INFO reading its own `obl` after a partial
    /// write); the pending output then reads as empty instead of panicking.
    ///
    /// This is the stream's first piece: with chunks queued (a big reply),
    /// the rest follows once it is consumed.
    pub fn pending_output(&self) -> &[u8] {
        let first = self.queued.front().unwrap_or(&self.output);
        first.get(self.output_sent..).unwrap_or(&[])
    }

    /// Bytes of output not yet taken by the host, every piece counted.
    pub fn pending_output_bytes(&self) -> usize {
        match self.queued.front() {
            None => self.pending_output().len(),
            Some(_) => self.queued.bytes() - self.output_sent + self.output.len(),
        }
    }

    /// Memory the output holds (CLIENT LIST `omem`-like figures).
    pub fn output_capacity_bytes(&self) -> usize {
        self.output.capacity() + self.queued.bytes()
    }

    /// Drops every byte of pending output.
    pub fn clear_output(&mut self) {
        self.output = Vec::new();
        self.queued.clear();
        self.output_sent = 0;
    }

    /// Appends `head` and then `chunks` to the output without copying the
    /// chunks: the ordinary buffer, with `head` at its end, joins the
    /// queue, then the chunks, and a fresh buffer takes later replies.
    /// Returns the bytes the ordinary buffer held before (its offsets now
    /// belong to the queue). O(chunks).
    pub fn queue_output(&mut self, head: &[u8], chunks: Vec<Vec<u8>>) -> usize {
        self.output.extend_from_slice(head);
        let moved = std::mem::take(&mut self.output);
        let moved_bytes = moved.len();
        // `output_sent` indexed the stream's first piece; if that was
        // `output`, it is now the queue's front: the offset holds.
        self.queued.push(moved);
        for chunk in chunks {
            self.queued.push(chunk);
        }
        moved_bytes - head.len()
    }

    /// The host took `n` bytes of [`Client::pending_output`]. Returns
    /// whether a queued chunk was finished with output still pending after
    /// it (the host must be told there is more).
    pub fn consume_queued(&mut self, n: usize) -> bool {
        let Some(front) = self.queued.front() else {
            return false;
        };
        self.output_sent += n;
        debug_assert!(self.output_sent <= front.len());
        if self.output_sent < front.len() {
            return false;
        }
        self.queued.pop_front();
        self.output_sent = 0;
        self.pending_output_bytes() > 0
    }

    /// The `client-output-buffer-limit` class this client falls in: a
    /// client with subscriptions is `pubsub` (in RESP3 too, as in Redis).
    pub fn output_limit<'l>(
        &self,
        limits: &'l crate::config::OutputBufferLimits,
    ) -> &'l crate::config::OutputBufferLimit {
        if self.repl_role == crate::repl::ClientRole::Replica {
            &limits.replica
        } else if self.subscriptions.is_empty() {
            &limits.normal
        } else {
            &limits.pubsub
        }
    }

    /// Redis's `checkClientOutputBufferLimits`, run whenever output is
    /// added: whether the pending output is at or over the hard limit, or
    /// has stayed at or over the soft limit for more than `soft_seconds`
    /// (virtual time from the host's `now`). Starts or resets the soft
    /// limit's clock as a side effect, as Redis does.
    pub fn output_limit_reached(
        &mut self,
        limits: &crate::config::OutputBufferLimits,
        now_ns: u64,
    ) -> bool {
        let limit = *self.output_limit(limits);
        let pending_bytes = self.pending_output_bytes() as u64;
        let hard = limit.hard_bytes > 0 && pending_bytes >= limit.hard_bytes;
        let over_soft = limit.soft_bytes > 0 && pending_bytes >= limit.soft_bytes;
        if !over_soft {
            self.output_soft_limit_since_ns = None;
            return hard;
        }
        let Some(since_ns) = self.output_soft_limit_since_ns else {
            // The first time over the soft limit only starts its clock.
            self.output_soft_limit_since_ns = Some(now_ns);
            return hard;
        };
        // Redis counts whole seconds and needs more than `soft_seconds` of
        // them; we count nanoseconds, with the same strict comparison.
        let soft_ns = limit.soft_seconds.saturating_mul(1_000_000_000);
        hard || now_ns.saturating_sub(since_ns) > soft_ns
    }
}

/// The connection table, iterated in id order (CLIENT LIST order).
pub use crate::clients::Clients;
