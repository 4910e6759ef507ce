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

use crate::blocking::Blocked;
use crate::client::{Client, ClientId, Clients, CloseReason, ConnectInfo};
use crate::clients::close_client;
use crate::cmd::REPLY_BYTES_PER_WORK_UNIT;
use crate::cmd::{lookup_subcommand, CommandSpec, CommandTable, Ctx};
use crate::config::Config;
use crate::db::{Keyspace, ACTIVE_EXPIRE_BUDGET_KEYS};
use crate::event::{Event, Executed, Garbage, LAZYFREE_THRESHOLD_UNITS};
use crate::planted::{PlantedBug, PlantedState, MISROUTED_REPLY_EVERY};
use crate::resp::{ParserLimits, ReplyWriter};
use crate::server::Server;
use crate::stats::{CommandName, Stats};
use crate::stopwatch::{Stopwatch, WorkUnitStopwatch};
use crate::time::Now;
use crate::util::sanitize;
use crate::value::Value;

mod cron;
pub mod pause;
mod planted_exec;
mod planted_hooks;
mod resolve;
mod unblock;

use cron::cron_interval_ns;
use resolve::{reject_while_subscribed, resolve};

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
    /// The arguments of the request being executed, and spare argument
    /// buffers, reused from request to request so that parsing a request
    /// does not allocate (see `RequestParser::next_request_into`).
    args: Vec<Vec<u8>>,
    spare_args: Vec<Vec<u8>>,
    /// Times each command (see [`crate::stopwatch`]).
    stopwatch: Box<dyn Stopwatch>,
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
        let mut families = crate::commands::FAMILIES.to_vec();
        if config.shutdown_command {
            families.push(crate::commands::shutdown::COMMANDS);
        }
        families.extend_from_slice(extra_families);
        let rng = ChaCha8Rng::seed_from_u64(config.seed);
        let mut keyspace = Keyspace::new(config.seed);
        if config.planted_bug == Some(PlantedBug::ExpiryOffByOneMs) {
            for db in keyspace.dbs.iter_mut() {
                db.planted_expiry_late = true;
            }
        }
        let interval = cron_interval_ns(config.hz);
        Engine {
            server: Server {
                config,
                keyspace,
                rng,
                commands: CommandTable::new(&families),
                stats: Stats::default(),
                dirty: 0,
                started: now,
                next_client_id: 1,
                cron_deadline_ns: now.mono_ns + interval,
                planted: PlantedState::default(),
                blocking: Default::default(),
                allocated_bytes: None,
                watches: Default::default(),
                monitors: Vec::new(),
                pubsub: Default::default(),
                scripting: Default::default(),
                evict: Default::default(),
                pause: Default::default(),
            },
            clients: Clients::new(),
            events: VecDeque::new(),
            transmit: VecDeque::new(),
            args: Vec::new(),
            spare_args: Vec::new(),
            stopwatch: Box::new(WorkUnitStopwatch),
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

    /// Clients whose requests wait for the current pause to end.
    pub fn paused_clients_count(&self) -> usize {
        self.server.pause.held_count()
    }

    /// A new connection. Over `maxclients`, it gets Redis's error and a close.
    pub fn connect(&mut self, now: Now, info: ConnectInfo) -> ClientId {
        let id = ClientId(self.server.next_client_id);
        self.server.next_client_id += 1;
        let authenticated = self.server.config.requirepass.is_none();
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
    pub fn disconnect(&mut self, _now: Now, client: ClientId) {
        if let Some(mut c) = self.clients.remove(&client) {
            drop(self.server.blocking.unpark(&mut c));
            self.server.pause.forget(client);
            crate::multi::client_gone(&mut self.server, &mut c);
            self.server
                .pubsub
                .remove_client(client, &mut c.subscriptions);
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
        c.parser.feed(bytes);
        c.last_interaction = now;
        // Planted bug (PlantedBug::IncrNotAtomic): INCRs of the previous input
        // are written back only after this input's commands ran, so they read
        // the stale value; see `apply_deferred_incr_writes`.
        let deferred_incr_writes = std::mem::take(&mut self.server.planted.incr_writes);
        let exec_tails = self.planted_take_exec_tails();
        self.server.stats.net_input_bytes += bytes.len() as u64;
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
        if !deferred_incr_writes.is_empty() {
            self.apply_deferred_incr_writes(deferred_incr_writes);
        }
        self.planted_run_exec_tails(now, exec_tails);
    }

    /// Executes the complete requests in `client`'s query buffer, in order,
    /// until it runs dry, the client blocks or is closing. `args` is the
    /// reused argument vector.
    fn process_input(&mut self, now: Now, client: ClientId, args: &mut Vec<Vec<u8>>) {
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
            if c.blocked.is_some() || self.server.pause.holds(client) {
                // Redis leaves a blocked client's query buffer alone until
                // it is unblocked; the buffer limit still applies.
                if c.parser.buffered_bytes() > self.server.config.client_query_buffer_limit_bytes {
                    self.close(client, CloseReason::QueryBufferLimit);
                }
                break;
            }
            match c
                .parser
                .next_request_into(&limits, c.authenticated, args, &mut self.spare_args)
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
        self.release_paused_at(now);
        let exec_tails = self.planted_take_exec_tails();
        self.planted_run_exec_tails(now, exec_tails);
        if self.server.blocking.first_expired(now.mono_ns).is_some() {
            self.time_out_blocked(now);
        }
        if now.mono_ns < self.server.cron_deadline_ns {
            return;
        }
        self.server.cron_deadline_ns = now.mono_ns + cron_interval_ns(self.server.config.hz);
        let deferred_incr_writes = std::mem::take(&mut self.server.planted.incr_writes);
        self.cron(now);
        if !deferred_incr_writes.is_empty() {
            self.apply_deferred_incr_writes(deferred_incr_writes);
        }
    }

    /// The next time `handle_timeout` wants to run (monotonic nanoseconds):
    /// the cron's next tick, a blocked client's deadline or the end of a
    /// pause that holds clients, whichever comes first. Changed by every input.
    /// There always is one: the cron ticks `hz` times a second.
    #[must_use]
    pub fn poll_timeout(&self) -> u64 {
        let pause_ns = self.server.pause.deadline_ns().unwrap_or(u64::MAX);
        let cron_ns = self.server.cron_deadline_ns.min(pause_ns);
        self.server
            .blocking
            .next_deadline_ns()
            .map_or(cron_ns, |ns| ns.min(cron_ns))
    }

    /// The next event. Changed by every input.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event> {
        let event = self.events.pop_front();
        if let Some(Event::Free(garbage)) = &event {
            self.server.stats.lazyfreed_objects += garbage.objects_count();
        }
        event
    }

    /// The next client with output to send. Changed by every input.
    #[must_use]
    pub fn poll_transmit(&mut self) -> Option<ClientId> {
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
        let n = n.min(c.output.len() - c.output_sent);
        c.output_sent += n;
        self.server.stats.net_output_bytes += n as u64;
        if self.server.config.planted_bug == Some(PlantedBug::PartialWriteDropsReply)
            && c.output_sent < c.output.len()
        {
            // Planted bug (PlantedBug::PartialWriteDropsReply): after a
            // short write the buffer is cut back to where the last reply
            // began (or to the write position, if the write stopped inside
            // it), so the last pipelined reply, or its unsent tail, is lost
            // and its client waits for it forever.
            let keep = c
                .planted_last_reply_start
                .clamp(c.output_sent, c.output.len());
            c.output.truncate(keep);
        }
        if c.output_sent == c.output.len() {
            c.output.clear();
            c.output_sent = 0;
        } else if c.output_sent > 64 * 1024 && c.output_sent * 2 > c.output.len() {
            c.output.drain(..c.output_sent);
            c.planted_last_reply_start = c.planted_last_reply_start.saturating_sub(c.output_sent);
            c.output_sent = 0;
        }
    }

    /// Connected clients (including those being closed).
    pub fn client_count(&self) -> usize {
        self.clients.len()
    }

    /// After each command: queues the clients its messages reached for
    /// transmission, and closes those (and the caller) now over their
    /// output buffer limits.
    fn after_command(&mut self, now: Now, client: ClientId) {
        let delivered = std::mem::take(&mut self.server.pubsub.delivered);
        for &(id, was_idle) in &delivered {
            if was_idle {
                self.transmit.push_back(id);
            }
            self.check_output_limit(now, id);
        }
        self.check_output_limit(now, client);
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
            c.output = Vec::new();
            c.output_sent = 0;
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

    fn execute(&mut self, now: Now, client: ClientId, args: &mut [Vec<u8>]) {
        let c = self.clients.get_mut(&client).expect("client");
        let request_seq = c.requests_parsed;
        c.requests_parsed += 1;
        self.execute_request(now, client, args, request_seq, None);
    }

    /// Runs one request; `in_exec` is the EXEC's `request_seq` when EXEC
    /// runs it from its queue (see [`crate::multi`]).
    fn execute_request(
        &mut self,
        now: Now,
        client: ClientId,
        args: &mut [Vec<u8>],
        request_seq: u64,
        in_exec: Option<u64>,
    ) {
        debug_assert!(!args.is_empty());
        let c = self.clients.get_mut(&client).expect("client");
        let db = c.db;
        let mut reply = std::mem::take(&mut c.output);
        let reply_start = reply.len();
        let protocol = c.protocol;
        let authenticated = c.authenticated;
        let may_block = !c.deny_blocking;
        let subscribed_resp2 =
            protocol == crate::resp::Protocol::Resp2 && !c.subscriptions.is_empty();
        self.server.stats.now = now;
        let mut resolved = resolve(
            &self.server.commands,
            args,
            &mut reply,
            protocol,
            authenticated,
        );
        let evict_work_units = crate::evict::admit(
            (&mut self.server, &mut self.clients, &mut self.events),
            (now, client, in_exec),
            &mut resolved,
            &mut reply,
        );
        if subscribed_resp2 {
            resolved = reject_while_subscribed(resolved, &mut reply);
        }
        // MULTI queues (or rejects) the request here; EXEC's own commands
        // were checked when they were queued.
        let c = self.clients.get_mut(&client).expect("client");
        match resolved {
            _ if in_exec.is_some() => {}
            Ok((parent, spec)) => {
                match crate::multi::intercept(c, spec, args, request_seq, &mut reply, protocol) {
                    crate::multi::Intercepted::No => {}
                    crate::multi::Intercepted::Queued => {
                        c.output = reply;
                        return;
                    }
                    crate::multi::Intercepted::Rejected => {
                        resolved = Err(Some(CommandName::of(parent, spec)));
                    }
                }
            }
            Err(_) => crate::multi::rejected(
                &mut self.server.watches,
                c,
                &args[0],
                &mut reply,
                reply_start,
            ),
        }
        let mut work_units = 1 + evict_work_units;
        let mut executed = None;
        let mut block = None;
        let mut name = CommandName::top("");
        let mut hook = None;
        let mut measuring = None;
        if let Ok((parent, spec)) = resolved {
            name = CommandName::of(parent, spec);
            hook = crate::multi::Hook::before(&self.server, db, spec, args);
            // A script records its redis.calls under this request.
            self.server.scripting.request_seq = request_seq;
            // A handler may take its arguments apart; a command that may
            // park keeps the originals to run again when it is served.
            let saved_args = spec.has(crate::cmd::flags::BLOCKING).then(|| args.to_vec());
            measuring = self.server.config.record_sizes.then(|| {
                let cs = (&self.clients, client);
                crate::sizes::measure_before(&self.server, cs, db, (parent, spec), args)
            });
            if crate::commands::slowlog::SlowLog::enabled(&self.server.config) {
                self.server.stats.slowlog.capture(args);
            }
            self.stopwatch.start();
            let mut ctx = Ctx {
                server: &mut self.server,
                clients: &mut self.clients,
                client_id: client,
                events: &mut self.events,
                now,
                reply,
                protocol,
                work_units: 1,
                spec,
                may_block,
                block: None,
            };
            (spec.handler.expect("resolved specs have handlers"))(&mut ctx, args);
            reply = ctx.reply;
            work_units = ctx.work_units;
            executed = Some(spec);
            if let Some(request) = ctx.block {
                debug_assert_eq!(reply.len(), reply_start, "a blocking handler replied");
                reply.truncate(reply_start);
                match saved_args {
                    Some(saved) if may_block && !request.keys.is_empty() => {
                        block = Some((request, saved));
                    }
                    // A handler that blocks where it may not (or on no key)
                    // gets its timeout reply at once rather than hanging.
                    _ => reply.extend_from_slice(request.on_timeout.encoded(protocol)),
                }
            }
            if let Some(queue) = crate::multi::take_exec_queue(&mut self.clients, client) {
                // EXEC: its handler wrote the array header; each queued
                // command now runs and is timed on its own.
                let _ = self.stopwatch.stop(0, 0);
                reply = self.run_exec(now, client, reply, queue, request_seq);
                self.stopwatch.start();
            }
        } else if let Err(rejected) = resolved {
            self.server.stats.record_rejected(rejected);
        }
        let reply_bytes = reply.len() - reply_start;
        work_units += reply_bytes as u64 / REPLY_BYTES_PER_WORK_UNIT;
        let duration_ns = match executed {
            Some(_) => self.stopwatch.stop(work_units, reply_bytes as u64),
            None => 0,
        };
        let failed = self.server.stats.record_error_reply(&reply[reply_start..]);
        if self.server.config.planted_bug.is_some() && in_exec.is_none() {
            self.planted_after_reply(client, &mut reply, reply_start);
        }
        // The command may have closed or killed its own client (QUIT, CLIENT KILL).
        match self.clients.get_mut(&client) {
            Some(c) => {
                c.output = reply;
                if let Some(spec) = executed {
                    c.last_command = spec.name;
                }
            }
            None => return,
        }
        if let (Some(hook), Some(spec)) = (hook, executed) {
            hook.after(
                &self.server,
                &mut self.clients,
                &mut self.transmit,
                now,
                client,
                db,
                spec,
                failed,
            );
        }
        if let (Some((request, saved_args)), Some(spec)) = (block, executed) {
            // Stats and the execution record wait for the reply that
            // unblocks it, so that the command is counted once.
            self.park(
                now,
                client,
                spec,
                saved_args,
                request,
                request_seq,
                work_units,
                duration_ns,
            );
            return;
        }
        if let (Some(spec), Some(c)) = (executed, self.clients.get(&client)) {
            crate::stats::command_finished(
                &mut self.server,
                c,
                crate::stats::Finished {
                    name,
                    flags: spec.flags,
                    work_units,
                    duration_ns,
                    failed,
                    args: None,
                },
            );
        }
        if self.server.config.record_executions {
            self.events.push_back(Event::Executed(Executed {
                client,
                request_seq,
                name: executed.map_or("", |s| s.name),
                flags: executed.map_or(0, |s| s.flags),
                work_units,
                reply_bytes,
                in_exec,
                sizes: measuring.map(|m| m.finish(&self.server, reply_bytes)),
            }));
        }
        // Clients blocked on keys EXEC's commands made ready are served
        // after the whole EXEC, as in Redis.
        if in_exec.is_none() && self.server.blocking.has_ready() {
            self.serve_ready_keys(now);
        }
    }

    /// Runs EXEC's queue back to back: nothing else runs in between, and no
    /// command may block (each replies as timed out instead). `reply` is the
    /// client's output so far, ending with EXEC's array header; returns it
    /// with every command's reply appended.
    fn run_exec(
        &mut self,
        now: Now,
        client: ClientId,
        reply: Vec<u8>,
        mut queue: Vec<crate::multi::Queued>,
        exec_seq: u64,
    ) -> Vec<u8> {
        crate::multi::planted_split_exec(&mut self.server, client, exec_seq, &mut queue);
        let Some(c) = self.clients.get_mut(&client) else {
            return reply;
        };
        debug_assert!(c.output.is_empty(), "the output is EXEC's reply");
        c.output = reply;
        let deny_blocking = std::mem::replace(&mut c.deny_blocking, true);
        for queued in queue {
            let mut args = queued.args;
            self.execute_request(now, client, &mut args, queued.request_seq, Some(exec_seq));
        }
        match self.clients.get_mut(&client) {
            Some(c) => {
                c.deny_blocking = deny_blocking;
                std::mem::take(&mut c.output)
            }
            None => Vec::new(),
        }
    }
}

/// Sends `reply` to `client`, just unparked from `blocked` (served, timed
/// out, or CLIENT UNBLOCK), counts the command (once, here) and records its
/// execution, and queues the client to run its pipelined requests.
/// `extra` is the work of the attempt that served it, if one did, and that
/// attempt's measurement (see [`crate::sizes`]).
pub(crate) fn deliver_unblocked(
    server: &mut Server,
    clients: &mut Clients,
    events: &mut VecDeque<Event>,
    client: ClientId,
    blocked: &Blocked,
    reply: &[u8],
    extra: (u64, Option<crate::sizes::Measuring>),
) {
    let (extra_work_units, measuring) = extra;
    debug_assert!(!reply.is_empty());
    let Some(c) = clients.get_mut(&client) else {
        return;
    };
    debug_assert!(c.blocked.is_none(), "unparked first");
    c.output.extend_from_slice(reply);
    let work_units =
        blocked.work_units + extra_work_units + reply.len() as u64 / REPLY_BYTES_PER_WORK_UNIT;
    let failed = server.stats.record_error_reply(reply);
    crate::stats::command_finished(
        server,
        c,
        crate::stats::Finished {
            name: CommandName::top(blocked.spec.name),
            flags: blocked.spec.flags,
            work_units,
            duration_ns: blocked.elapsed_ns,
            failed,
            args: Some(&blocked.args),
        },
    );
    if server.config.record_executions {
        events.push_back(Event::Executed(Executed {
            client,
            request_seq: blocked.request_seq,
            name: blocked.spec.name,
            flags: blocked.spec.flags,
            work_units,
            reply_bytes: reply.len(),
            in_exec: None,
            sizes: server.config.record_sizes.then(|| {
                let runs = blocked.runs + u64::from(measuring.is_some());
                let mut m = measuring.unwrap_or_else(|| {
                    let (spec, args) = (blocked.spec, &blocked.args);
                    crate::sizes::measure_before(
                        server,
                        (clients, client),
                        blocked.db,
                        (None, spec),
                        args,
                    )
                });
                m.sizes.runs = runs;
                m.finish(server, reply.len())
            }),
        }));
    }
    server.blocking.push_unblocked(client);
}

/// A request's command: its container (for a subcommand) and its spec.
type Resolved = (Option<&'static CommandSpec>, &'static CommandSpec);
