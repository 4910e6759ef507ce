//! The engine: a Redis-compatible state machine driven by its host.
//!
//! # Driving the engine
//!
//! The host (the simulator, or the real server's event loop) owns every
//! socket and every clock. It feeds the engine inputs, each carrying `now`:
//!
//! - [`Engine::connect`] when a connection is accepted,
//! - [`Engine::handle_input`] with bytes received on a connection,
//! - [`Engine::disconnect`] when a connection is gone,
//! - [`Engine::handle_timeout`] when the deadline from `poll_timeout` passes
//!   (a spurious or early call is harmless).
//!
//! After **every** input the host drains the outputs, in this order:
//!
//! 1. [`Engine::poll_event`] until `None`: every effect the host must
//!    perform ([`Event`]): close requests, values to free in the background,
//!    stalls (DEBUG SLEEP), a shutdown request, log lines, and (if
//!    configured) a record of each executed command;
//! 2. [`Engine::poll_transmit`] until `None`: each returns a client with new
//!    output; the host reads [`Engine::pending_output`] and reports what it
//!    wrote with [`Engine::consume_output`] (bytes it could not write yet stay
//!    pending, so a slow reader backs output up in the engine, as in Redis);
//! 3. [`Engine::poll_timeout`] for the next deadline (there always is one).
//!
//! A host with [`Config::group_commit`] also calls [`Engine::before_sleep`]
//! at the end of each turn of its event loop (then drains as above): the
//! AOF is written once per turn and replies wait for it, as in Redis.
//!
//! There is no other channel from the engine to its host: what is not an
//! event, a transmit or the deadline, the host need not do. Read-only
//! accessors ([`Engine::config`], [`Engine::client_count`],
//! [`Engine::is_blocked`], ...) answer questions about the state without
//! exposing it.
//!
//! Inputs for a client the engine has asked to close are ignored.
//!
//! # Work
//!
//! Every executed command reports the work it did in **work units**: one unit
//! per element visited, produced or freed (a key tested by KEYS, an element
//! of a freed list, a key returned by SCAN), one per 64 bytes of reply
//! encoded, and one for the command itself. `GET` costs about 1; `KEYS *`
//! over 2M keys costs about 2M. The simulator turns units into virtual time.
//!
//! # Determinism
//!
//! No I/O, no clocks, no threads, no OS randomness: every random choice comes
//! from a ChaCha RNG seeded by [`Config::seed`], and every table iterates in an
//! order that is a function of the seed and the inputs. The same seed and the
//! same inputs give the same outputs, byte for byte.

use std::collections::VecDeque;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::client::{Client, ClientId, Clients, CloseReason, ConnectInfo};
use crate::clients::close_client;
use crate::cmd::{CommandSpec, CommandTable};
use crate::config::Config;
use crate::db::{Keyspace, ACTIVE_EXPIRE_BUDGET_KEYS};
use crate::event::{Event, Garbage, LAZYFREE_THRESHOLD_UNITS};
use crate::pipeline::{Caller, Pipeline};
use crate::propagate::Propagation;
use crate::resp::{ParserLimits, ReplyWriter};
use crate::server::Server;
use crate::stats::Stats;
use crate::stopwatch::{Stopwatch, WorkUnitStopwatch};
use crate::time::Now;

mod aclfile;
mod aof;
mod cron;
mod pause;
mod persist;
mod planted_seams;
mod rdb_entry;
mod repl;
mod replica;
mod script;
mod snapshot;
mod unblock;

use cron::cron_interval_ns;

/// Buckets the cron moves per database per tick while a dict is rehashing
/// (Redis's `activerehashing` uses 1 ms; we use a counted budget).
pub const CRON_REHASH_BUCKETS_PER_DB: usize = 100;

/// The reused argument vector is dropped after a request with more
/// arguments than this, so that one huge request does not pin its memory.
const ARGS_KEPT_CAPACITY_MAX: usize = 1024;

/// The engine. See the module docs for the drive/drain contract.
pub struct Engine {
    server: Server,
    clients: Clients,
    events: VecDeque<Event>,
    /// Clients that gained output since the last `poll_transmit`, in order,
    /// without duplicates (`queued_transmit` marks membership).
    transmit: VecDeque<ClientId>,
    /// Flush-first closes waiting for a group commit's release.
    held_closes: Vec<Event>,
    /// The arguments of the request being executed, and spare argument
    /// buffers, reused from request to request so that parsing a request
    /// does not allocate (see `RequestParser::next_request_into`).
    args: Vec<Vec<u8>>,
    spare_args: Vec<Vec<u8>>,
    /// Times each command (see [`crate::stopwatch`]).
    stopwatch: Box<dyn Stopwatch>,
    /// The client of the suspended script, disconnected while it runs: it
    /// leaves the table when the script ends (Redis keeps running the
    /// script and drops its reply).
    script_client_gone: Option<ClientId>,
}

impl Engine {
    /// A fresh engine whose clock starts at `now`.
    pub fn new(config: Config, now: Now) -> Engine {
        Engine::build(config, now, &[])
    }

    /// A fresh engine that also knows the commands of `extra_families`
    /// (tests use it to drive engine features, such as blocking, through
    /// commands of their own). Names must not clash with Redis's. Only for
    /// tests (the `testing` feature): a command's handler sees all of the
    /// engine's state.
    #[cfg(any(test, feature = "testing"))]
    pub fn with_commands(
        config: Config,
        now: Now,
        extra_families: &[&'static [CommandSpec]],
    ) -> Engine {
        Engine::build(config, now, extra_families)
    }

    fn build(config: Config, now: Now, extra_families: &[&'static [CommandSpec]]) -> Engine {
        let mut engine = Engine::build_empty(config, now, extra_families);
        engine.start_persistence(now);
        engine.start_replication(now);
        engine
    }

    fn build_empty(config: Config, now: Now, extra_families: &[&'static [CommandSpec]]) -> Engine {
        let mut families = crate::commands::FAMILIES.to_vec();
        if config.shutdown_command {
            families.push(crate::commands::shutdown::COMMANDS);
        }
        families.extend_from_slice(extra_families);
        let seed = config.seed;
        let rng = ChaCha8Rng::seed_from_u64(config.seed);
        let keyspace = Keyspace::new(config.seed);
        let planted = crate::planted::Hook::new(config.planted_bug);
        let mut commands = CommandTable::new(&families);
        planted.command_table(&mut commands);
        let mut acl = crate::acl::Acl::new(&commands, config.requirepass.as_deref());
        acl.pubsub_default_all = crate::acl::pubsub_default_all(&config);
        let interval = cron_interval_ns(config.hz);
        Engine {
            server: Server {
                config,
                keyspace,
                rng,
                commands,
                stats: Stats::default(),
                dirty: 0,
                started: now,
                next_client_id: 1,
                cron_deadline_ns: now.mono_ns + interval,
                planted,
                blocking: Default::default(),
                allocated_bytes: None,
                watches: Default::default(),
                monitors: Vec::new(),
                pubsub: Default::default(),
                tracking: Default::default(),
                scripting: Default::default(),
                functions: Default::default(),
                suspended_eval: None,
                snapshot_read: None,
                evict: Default::default(),
                pause: Default::default(),
                persist: Default::default(),
                propagation: Default::default(),
                acl,
                // A restart is a new history: the start time goes into the
                // replication id's draw, or a restarted primary with a fixed
                // seed would claim its old id over a different stream and
                // its replicas would resume onto it (the multi-node
                // simulator's prefix checker caught that).
                repl: crate::repl::Replication::new(seed ^ now.unix_us.rotate_left(29)),
            },
            clients: Clients::new(),
            events: VecDeque::new(),
            transmit: VecDeque::new(),
            held_closes: Vec::new(),
            args: Vec::new(),
            spare_args: Vec::new(),
            stopwatch: Box::new(WorkUnitStopwatch),
            script_client_gone: None,
        }
    }

    /// Replaces the stopwatch that times commands for SLOWLOG, LATENCY and
    /// INFO commandstats/latencystats (by default, a [`WorkUnitStopwatch`]).
    pub fn set_stopwatch(&mut self, stopwatch: Box<dyn Stopwatch>) {
        self.stopwatch = stopwatch;
    }

    /// The process's heap bytes as the host's allocator counts them, for
    /// INFO memory `used_memory` (Redis reports its allocator's figure too).
    /// A host that cannot measure never calls this; the simulator does not,
    /// so that replies stay a function of the seed.
    pub fn set_allocated_bytes(&mut self, bytes: Option<u64>) {
        self.server.allocated_bytes = bytes;
    }

    pub fn config(&self) -> &Config {
        &self.server.config
    }

    /// All of the engine's state, for the crate's own tests and modules.
    #[cfg(test)]
    pub(crate) fn server(&self) -> &Server {
        &self.server
    }

    /// What writes put into the AOF (see [`crate::propagate`]): the host
    /// enables it, and drains [`Propagation::take`] after each input.
    pub fn propagation(&self) -> &Propagation {
        &self.server.propagation
    }

    /// The propagation state, to enable it, reset its database or take the
    /// stream.
    pub fn propagation_mut(&mut self) -> &mut Propagation {
        &mut self.server.propagation
    }

    /// Watched (client, key) pairs in all databases (WATCH).
    pub fn watched_keys_count(&self) -> usize {
        self.server.watches.len()
    }

    /// Clients in MONITOR mode.
    pub fn monitors_count(&self) -> usize {
        self.server.monitors.len()
    }

    /// Whether a CLIENT PAUSE is in force at `now` (of either mode).
    pub fn is_paused(&self, now: Now) -> bool {
        self.server.pause.mode(now).is_some()
    }

    /// Whether this engine follows a primary (REPLICAOF, or a FAILOVER
    /// that handed the role over) rather than being one: a host that
    /// routes clients or watches the stream learns a role change here, as
    /// an operator reads ROLE.
    pub fn is_replica(&self) -> bool {
        self.server.repl.is_replica()
    }

    /// Clients whose requests wait for the current pause to end.
    pub fn paused_clients_count(&self) -> usize {
        self.server.pause.held_count()
    }

    /// A new connection. Over `maxclients`, it gets Redis's error and a close.
    pub fn connect(&mut self, now: Now, info: ConnectInfo) -> ClientId {
        let id = ClientId(self.server.next_client_id);
        self.server.next_client_id += 1;
        let authenticated = self.server.acl.default_user_needs_no_auth();
        let mut client = Client::new(id, info, now, authenticated);
        let full = self.clients.len() >= self.server.config.maxclients;
        if full {
            ReplyWriter::new(&mut client.output, client.protocol)
                .error("ERR max number of clients reached");
            client.closing = Some(CloseReason::MaxClients);
            self.server.stats.rejected_connections += 1;
        } else {
            self.server.stats.total_connections_received += 1;
        }
        self.clients.insert(id, client);
        if full {
            self.transmit.push_back(id);
            self.events.push_back(Event::Close {
                client: id,
                reason: CloseReason::MaxClients,
            });
        }
        id
    }

    /// The connection is gone (closed by the peer, or by the host after a
    /// `Close` event). Unknown ids are ignored. A blocked client leaves its
    /// keys' queues without a reply.
    pub fn disconnect(&mut self, now: Now, client: ClientId) {
        if self.server.scripting.running_client() == Some(client) {
            // The script's command still runs on this client: it leaves
            // when the script ends.
            if let Some(c) = self.clients.get_mut(&client) {
                c.clear_output();
                c.closing.get_or_insert(CloseReason::Killed);
            }
            self.script_client_gone = Some(client);
            return;
        }
        if self.waits_for_snapshot(client) {
            // Nobody will read the reply: the read ends here.
            drop(crate::snapshot_read::close(&mut self.server));
        }
        if let Some(mut c) = self.clients.remove(&client) {
            drop(self.server.blocking.unpark(&mut c));
            self.server.pause.forget(client);
            crate::multi::client_gone(&mut self.server, &mut c);
            self.server
                .pubsub
                .remove_client(client, &mut c.subscriptions);
            crate::tracking::disable(&mut self.server.tracking, &mut c);
            self.server.repl.client_gone(client);
            self.master_link_gone(now, client);
        }
    }

    /// Whether commands of `client` may block (true by default). With
    /// `false`, a blocking command with nothing to serve replies at once as
    /// if its timeout had passed, as inside MULTI (Redis's
    /// CLIENT_DENY_BLOCKING). Unknown ids are ignored.
    pub fn set_may_block(&mut self, client: ClientId, may_block: bool) {
        if let Some(c) = self.clients.get_mut(&client) {
            c.deny_blocking = !may_block;
        }
    }

    /// Whether `client` is parked by a blocking command.
    pub fn is_blocked(&self, client: ClientId) -> bool {
        self.clients
            .get(&client)
            .is_some_and(|c| c.blocked.is_some())
    }

    /// Bytes received from `client`. Complete requests execute at once, in
    /// order; an incomplete tail waits for more bytes.
    pub fn handle_input(&mut self, now: Now, client: ClientId, bytes: &[u8]) {
        let Some(c) = self.clients.get_mut(&client) else {
            return;
        };
        if c.closing.is_some() {
            return;
        }
        c.last_interaction = now;
        if c.repl_role == crate::repl::ClientRole::Master {
            // Our primary's replies, RDB and stream (see `replica.rs`).
            return self.link_input(now, client, bytes);
        }
        self.serve_input(now, client, bytes);
    }

    /// Feeds `bytes` to `client`'s parser and serves the requests.
    fn serve_input(&mut self, now: Now, client: ClientId, bytes: &[u8]) {
        let Some(c) = self.clients.get_mut(&client) else {
            return;
        };
        c.parser.feed(bytes);
        crate::planted::client_input_begins(&mut self.server, client);
        let held = self.server.planted.input_begins();
        if c.repl_role != crate::repl::ClientRole::Master {
            // The link counted its bytes as they arrived.
            self.server.stats.net_input_bytes += bytes.len() as u64;
        }
        if self.check_script_busy(now) {
            // Past the threshold: the input that waited is served (in busy
            // mode) before this one, as it arrived first.
            self.serve_waiting_input(now);
        }
        let mut args = std::mem::take(&mut self.args);
        // Clients held by a pause that has ended go first, then this input;
        // an UNPAUSE in it releases the held clients after it.
        self.release_paused(now, &mut args);
        self.process_input(now, client, &mut args);
        self.process_unblocked(now, &mut args);
        self.release_paused(now, &mut args);
        // The last request's buffers are kept for the next input (with one
        // request per input, as at pipeline depth 1, that is every reuse).
        crate::resp::parse::recycle_args(&mut args, &mut self.spare_args);
        if args.capacity() <= ARGS_KEPT_CAPACITY_MAX {
            self.args = args;
        }
        self.run_held(now, held);
        self.broadcast_invalidations(now);
        self.after_input_persist(now);
        self.update_failover(now);
        self.evict_clients(now);
    }

    /// `maxmemory-clients`: see [`crate::client_evict`]. Nothing to do (one
    /// comparison) while the limit is 0.
    fn evict_clients(&mut self, now: Now) {
        let config = &self.server.config;
        let limit =
            crate::client_evict::limit_bytes(config.maxmemory_clients, config.maxmemory_bytes);
        if limit > 0 {
            let evicted =
                crate::client_evict::evict_clients(limit, &mut self.clients, &mut self.events, now);
            self.server.stats.evicted_clients += evicted;
        }
    }

    /// Client-side caching's BCAST messages for the keys the input's
    /// commands modified (Redis sends them in `beforeSleep`), and the
    /// receivers of every invalidation queued for transmission.
    ///
    /// Also while a script is suspended between slices, where Redis differs:
    /// its `beforeSleep` returns before the broadcast while it processes
    /// events inside a script, yet writes the replies of that turn, so a
    /// BCAST client can get a reply to a read that ran after a write, and
    /// keep a stale cached value, until the script ends. An invalidation
    /// early is harmless (a re-read waits for the script or gets -BUSY).
    fn broadcast_invalidations(&mut self, now: Now) {
        crate::tracking::broadcast(&mut self.server.tracking, &mut self.clients);
        self.deliver_invalidations(now);
    }

    /// Queues the clients given invalidations since the last look for
    /// transmission, and closes those over their output limits.
    fn deliver_invalidations(&mut self, now: Now) {
        let delivered = std::mem::take(&mut self.server.tracking.delivered);
        for &(id, was_idle) in &delivered {
            if was_idle {
                self.transmit.push_back(id);
            }
            self.check_output_limit(now, id);
        }
    }

    /// Executes the complete requests in `client`'s query buffer, in order,
    /// until it runs dry, the client blocks or is closing, then sends the
    /// BCAST invalidations of what they wrote. `args` is the reused
    /// argument vector.
    ///
    /// Redis broadcasts once per event-loop iteration, after every client
    /// it served; where one turn serves several clients (those a script,
    /// a pause or a blocking pop held), a reader served after a writer then
    /// gets its reply ahead of the invalidation and may cache a replaced
    /// value. seedkv batches per client's input instead: the same messages
    /// for a single input, and no such window.
    fn process_input(&mut self, now: Now, client: ClientId, args: &mut Vec<Vec<u8>>) {
        self.process_requests(now, client, args);
        self.broadcast_invalidations(now);
    }

    /// [`Engine::process_input`] before its broadcast.
    fn process_requests(&mut self, now: Now, client: ClientId, args: &mut Vec<Vec<u8>>) {
        let Some(c) = self.clients.get(&client) else {
            return;
        };
        let had_output = !c.pending_output().is_empty();
        let limits = ParserLimits {
            proto_max_bulk_len_bytes: self.server.config.proto_max_bulk_len_bytes,
            ..ParserLimits::default()
        };
        while let Some(c) = self.clients.get_mut(&client) {
            if c.closing.is_some() {
                break;
            }
            // The parser's tighter limits for a connection that has not
            // authenticated (Redis's `authRequired`).
            let authenticated = !self.server.auth_required(c);
            let waits_for_script = self.waits_for_script(client) || self.waits_for_snapshot(client);
            let c = self.clients.get_mut(&client).expect("checked above");
            if c.blocked.is_some()
                || c.waiting_save
                || c.waiting_acks
                || self.server.pause.holds(client)
                || waits_for_script
            {
                // Redis leaves a blocked client's query buffer alone until
                // it is unblocked; the buffer limit still applies.
                if c.parser.buffered_bytes() > self.server.config.client_query_buffer_limit_bytes {
                    self.close(client, CloseReason::QueryBufferLimit);
                }
                break;
            }
            match c
                .parser
                .next_request_into(&limits, authenticated, args, &mut self.spare_args)
            {
                Ok(true) => {
                    if self.hold_if_paused(now, client, args) {
                        break;
                    }
                    self.execute(now, client, args);
                    self.after_command(now, client);
                }
                Ok(false) => {
                    if c.parser.buffered_bytes()
                        > self.server.config.client_query_buffer_limit_bytes
                    {
                        self.close(client, CloseReason::QueryBufferLimit);
                    }
                    break;
                }
                Err(e) => {
                    // Raw bytes: Redis echoes a non-ASCII byte after "got '" verbatim.
                    c.output.extend_from_slice(b"-ERR ");
                    c.output.extend_from_slice(&e.message_bytes());
                    c.output.extend_from_slice(b"\r\n");
                    self.close(client, CloseReason::ProtocolError);
                    break;
                }
            }
        }
        if let Some(c) = self.clients.get(&client) {
            if !had_output && !c.pending_output().is_empty() {
                self.transmit.push_back(client);
            }
        }
    }

    /// Runs timers: blocked clients whose timeout passed get their timeout
    /// reply (then their pipelined requests run), and the cron does active
    /// expiry and incremental rehashing, with counted budgets. Calling it
    /// early is harmless (it does nothing).
    pub fn handle_timeout(&mut self, now: Now) {
        self.server.stats.now = now;
        self.run_timers(now);
        // Every path above may have run commands (a script's last slice,
        // clients a pause held, a blocked client's pipelined requests, the
        // cron's expiries): their BCAST invalidations go out in this turn,
        // as Redis's `beforeSleep` sends them.
        self.broadcast_invalidations(now);
    }

    /// [`Engine::handle_timeout`]'s work before the turn's broadcast.
    fn run_timers(&mut self, now: Now) {
        if self.script_running() {
            // Nothing else runs while a script does: no cron (active
            // expiry would break its atomicity), no blocked timeouts.
            return self.script_turn(now);
        }
        self.snapshot_turn(now);
        if self.script_running() {
            // The read's last slice let its client's pipelined requests
            // run, and one of them started a long script: from here on
            // nothing else runs (seed 569: a blocked client's timeout was
            // served inside the script).
            return;
        }
        self.release_paused_at(now);
        let held = self.server.planted.timer_fires();
        self.run_held(now, held);
        if self.server.blocking.first_expired(now.mono_ns).is_some() {
            self.time_out_blocked(now);
        }
        // What ran above (writes a pause held, a blocked client's pipelined
        // requests) goes to the replicas and the AOF before the replication
        // timers put a PING into the stream (seed 41 of the failover test:
        // writes released by an aborted FAILOVER's pause waited for the
        // next input).
        self.after_input_persist(now);
        self.repl_timers(now);
        if now.mono_ns < self.server.cron_deadline_ns {
            return;
        }
        self.server.cron_deadline_ns = now.mono_ns + cron_interval_ns(self.server.config.hz);
        self.cron(now);
        // Active expiry notified subscribers of the keys it deleted.
        self.queue_deliveries(now);
        // Active expiry may have deleted a stream a blocked XREADGROUP
        // waits on: it is told now (Redis serves ready keys before sleep).
        if self.server.blocking.has_ready() {
            self.pipeline().serve_ready_keys(now);
            let mut args = std::mem::take(&mut self.args);
            self.process_unblocked(now, &mut args);
            self.args = args;
        }
        self.after_input_persist(now);
    }

    /// The end of a turn of the host's event loop, with
    /// [`Config::group_commit`] (Redis's `beforeSleep`): the turn's writes
    /// go to the AOF in one append (and, under `appendfsync always`, one
    /// fsync), and the replies held for it are released when that is done
    /// (drain as after any input). Without group commit, a no-op.
    pub fn before_sleep(&mut self, now: Now) {
        self.flush_for_replies(now);
        self.evict_clients(now);
    }

    /// Whether replies wait for [`Engine::before_sleep`] (a group commit
    /// is due): a host wakes its end-of-turn work when this turns true.
    pub fn wants_before_sleep(&self) -> bool {
        self.server.persist.aof.replies_wait
    }

    /// The next time `handle_timeout` wants to run (monotonic nanoseconds):
    /// the cron's next tick, a blocked client's deadline or the end of a
    /// pause that holds clients, whichever comes first. Changed by every input.
    /// There always is one: the cron ticks `hz` times a second.
    #[must_use]
    pub fn poll_timeout(&self) -> u64 {
        if self.script_running() || self.snapshot_read_running() {
            // A suspended script's or a snapshot read's next slice is due
            // at once.
            return 0;
        }
        let pause_ns = self.server.pause.deadline_ns().unwrap_or(u64::MAX);
        let cron_ns = self
            .server
            .cron_deadline_ns
            .min(pause_ns)
            .min(self.repl_deadline_ns());
        self.server
            .blocking
            .next_deadline_ns()
            .map_or(cron_ns, |ns| ns.min(cron_ns))
    }

    /// The next event. Changed by every input.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event> {
        loop {
            let event = self.events.pop_front();
            match &event {
                Some(Event::Free(garbage)) => {
                    self.server.stats.lazyfreed_objects += garbage.objects_count();
                }
                // A close that writes its reply first waits with the
                // replies a group commit holds (QUIT's +OK must not be cut).
                Some(Event::Close { reason, .. })
                    if reason.flush_first() && self.server.persist.aof.replies_wait =>
                {
                    self.held_closes.push(event.expect("matched"));
                    continue;
                }
                _ => {}
            }
            return event;
        }
    }

    /// The next client with output to send. Changed by every input.
    #[must_use]
    pub fn poll_transmit(&mut self) -> Option<ClientId> {
        if self.server.persist.aof.replies_wait {
            return None; // a group commit holds every reply
        }
        while let Some(id) = self.transmit.pop_front() {
            if self
                .clients
                .get(&id)
                .is_some_and(|c| !c.pending_output().is_empty())
            {
                return Some(id);
            }
        }
        None
    }

    /// Output not yet taken for `client` (empty for unknown clients).
    pub fn pending_output(&self, client: ClientId) -> &[u8] {
        if self.server.persist.aof.replies_wait {
            return &[]; // a group commit holds every reply
        }
        self.clients
            .get(&client)
            .map(|c| c.pending_output())
            .unwrap_or(&[])
    }

    /// The host wrote `n` bytes of `pending_output(client)`.
    pub fn consume_output(&mut self, client: ClientId, n: usize) {
        let Some(c) = self.clients.get_mut(&client) else {
            return;
        };
        let n = n.min(c.pending_output().len());
        self.server.stats.net_output_bytes += n as u64;
        if !c.queued.is_empty() {
            // A big reply's chunk (see `reply_chunks`): freed once sent.
            if c.consume_queued(n) && !self.transmit.contains(&client) {
                self.transmit.push_back(client);
            }
            return;
        }
        c.output_sent += n;
        self.server
            .planted
            .output_written(client, &mut c.output, c.output_sent);
        if c.output_sent == c.output.len() {
            c.output.clear();
            c.output_sent = 0;
        } else if c.output_sent > 64 * 1024 && c.output_sent * 2 > c.output.len() {
            c.output.drain(..c.output_sent);
            self.server.planted.output_compacted(client, c.output_sent);
            c.output_sent = 0;
        }
    }

    /// Connected clients (including those being closed).
    /// Asserts the invariants of the keyspace's dicts and expiry index,
    /// the blocking queues, the watch table and the client table, panicking
    /// with what broke (see `invariants.rs`). Read-only and O(size): the
    /// simulator runs it after inputs in debug builds. Returns the items
    /// visited, for pacing.
    #[doc(hidden)]
    pub fn check_invariants(&self) -> usize {
        crate::invariants::check(&self.server, &self.clients)
    }

    /// The state, for tests that corrupt it on purpose.
    #[cfg(test)]
    pub(crate) fn parts_mut(&mut self) -> (&mut Server, &mut Clients) {
        (&mut self.server, &mut self.clients)
    }

    /// The tracking table (client-side caching), read-only.
    pub fn server_tracking(&self) -> &crate::tracking::Tracking {
        &self.server.tracking
    }

    pub fn client_count(&self) -> usize {
        self.clients.len()
    }

    /// After each command: queues the clients its messages reached for
    /// transmission, and closes those (and the caller) now over their
    /// output buffer limits.
    fn after_command(&mut self, now: Now, client: ClientId) {
        if self.is_master_link(client) {
            self.master_command_done(client);
        }
        if let Some(c) = self.clients.get_mut(&client) {
            // The stream not yet fed is replication's only with a backlog
            // (else it is the AOF's).
            let repl = &self.server.repl;
            let unfed = match repl.wants_stream() {
                true => self.server.propagation.stream().len() as u64,
                false => 0,
            };
            c.woff = repl.master_repl_offset + unfed;
        }
        self.queue_deliveries(now);
        self.check_output_limit(now, client);
    }

    /// Queues the clients that messages reached since the engine last
    /// looked (a command's, or the cron's keyspace notifications) for
    /// transmission, and closes those now over their output limits.
    fn queue_deliveries(&mut self, now: Now) {
        // After almost every command nothing was delivered: no work, and
        // the lists keep their buffers.
        if self.server.pubsub.delivered.is_empty() && self.server.tracking.delivered.is_empty() {
            return;
        }
        let delivered = std::mem::take(&mut self.server.pubsub.delivered);
        for &(id, was_idle) in &delivered {
            if was_idle {
                self.transmit.push_back(id);
            }
            self.check_output_limit(now, id);
        }
        self.deliver_invalidations(now);
    }

    /// Closes `client` at once, dropping its pending output, if that output
    /// is over its class's `client-output-buffer-limit` (see
    /// [`Client::output_limit_reached`]).
    fn check_output_limit(&mut self, now: Now, client: ClientId) {
        let limits = &self.server.config.client_output_buffer_limit;
        let Some(c) = self.clients.get_mut(&client) else {
            return;
        };
        if c.closing.is_none() && c.output_limit_reached(limits, now.mono_ns) {
            c.clear_output();
            self.close(client, CloseReason::OutputBufferLimit);
        }
    }

    /// Asks the host to close `client`. A blocked client (over its query
    /// buffer limit) leaves its keys' queues at once: it will never read a
    /// reply, so it must not be served one.
    fn close(&mut self, client: ClientId, reason: CloseReason) {
        if let Some(c) = self.clients.get_mut(&client) {
            drop(self.server.blocking.unpark(c));
        }
        close_client(&mut self.clients, &mut self.events, client, reason);
    }

    /// Runs the request in `args` (see `crate::pipeline`).
    fn execute(&mut self, now: Now, client: ClientId, args: &mut [Vec<u8>]) {
        self.pipeline().run(now, client, args, Caller::Request);
    }

    /// The command pipeline over the engine's state.
    #[inline]
    fn pipeline(&mut self) -> Pipeline<'_> {
        Pipeline {
            server: &mut self.server,
            clients: &mut self.clients,
            events: &mut self.events,
            transmit: &mut self.transmit,
            stopwatch: &mut *self.stopwatch,
        }
    }
}
