//! The one path a command takes, whoever runs it: a request read from a
//! connection, a command from EXEC's queue, a parked blocking command (run
//! again to serve a ready key, or answered by its timeout or CLIENT
//! UNBLOCK), and `redis.call` from a script. Each goes through:
//!
//! 1. **resolve**: the command table lookup with subcommands ([`lookup`],
//!    the only one) and the caller's rejections (unknown command, arity,
//!    NOAUTH; a script's own messages);
//! 2. **admit**: what may refuse or queue a resolved request before it runs
//!    (the keyspace access mode and OOM, RESP2 subscribed mode, MULTI).
//!    CLIENT PAUSE holds requests one step earlier, in the engine, because a
//!    held request keeps its client's later requests in the query buffer;
//! 3. **execute**: the handler, on a [`Ctx`] built here and nowhere else;
//! 4. **finish**: error-reply accounting, the reply to its client, WATCH
//!    invalidation and MONITOR, INFO commandstats with the slow log and
//!    the latency monitor, the [`Executed`] record, and serving the clients
//!    blocked on keys the command made ready: once, for every caller.
//!
//! What differs between callers is data, a [`Caller`]: which checks apply,
//! where the reply goes, whether the command may block, and whether it
//! serves blocked clients. Persistence and replication will be callers
//! too (AOF replay, the replica stream). Propagation (see
//! [`crate::propagate`]) takes the arguments before execute, decides after
//! it, and a request's finish (or a served blocked command's) writes the
//! unit.

use std::collections::VecDeque;

use crate::blocking::BlockRequest;
use crate::client::{ClientId, Clients};
use crate::cmd::{CommandSpec, Ctx, REPLY_BYTES_PER_WORK_UNIT};
use crate::event::{Event, Executed};
use crate::multi::Hook;
use crate::propagate::Wrap;
use crate::resp::Protocol;
use crate::server::Server;
use crate::sizes::Measuring;
use crate::stats::CommandName;
use crate::stopwatch::{Stopwatch, WorkUnitStopwatch};
use crate::time::Now;

pub(crate) mod permit;
mod resolve;
mod suspend;
mod unblock;

pub use resolve::{lookup, lookup_full_name, Found};
pub use suspend::SuspendedEval;

/// A command that passed lookup: its container (for a subcommand) and the
/// spec that runs.
pub type Resolved = (Option<&'static CommandSpec>, &'static CommandSpec);

/// Who runs a command. Everything the pipeline does differently for one
/// caller is decided from this value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Caller {
    /// A request from the client's connection (or released by a pause).
    Request,
    /// A command from EXEC's queue: `request_seq` is its own request's
    /// index on the connection (it was counted when queued), `exec_seq`
    /// the EXEC's.
    Exec { request_seq: u64, exec_seq: u64 },
    /// A parked blocking command: run again to serve a ready key, or
    /// answered by its timeout or CLIENT UNBLOCK.
    Unblocked,
    /// `redis.call` from a script; `eval_seq` is the script's request.
    Script { eval_seq: u64 },
}

impl Caller {
    /// The request whose group the command is recorded in
    /// ([`Executed::in_exec`]).
    fn in_exec(self) -> Option<u64> {
        match self {
            Caller::Exec { exec_seq, .. } => Some(exec_seq),
            Caller::Script { eval_seq } => Some(eval_seq),
            Caller::Request | Caller::Unblocked => None,
        }
    }

    /// A request or a command of EXEC's queue: it writes into its client's
    /// output directly, the slow log captured its arguments before it ran,
    /// and WATCH and MONITOR see it through a [`Hook`].
    fn is_request(self) -> bool {
        matches!(self, Caller::Request | Caller::Exec { .. })
    }

    /// Work charged before the handler counts any: one unit for the
    /// command itself, except for a re-run, whose first attempt paid it.
    fn base_work_units(self) -> u64 {
        match self {
            Caller::Unblocked => 0,
            _ => 1,
        }
    }
}

/// The state a command runs against. The engine lends its own; a command
/// running commands (a script, CLIENT UNBLOCK) lends its [`Ctx`]'s with
/// [`nested`].
pub struct Pipeline<'a> {
    pub server: &'a mut Server,
    pub clients: &'a mut Clients,
    pub events: &'a mut VecDeque<Event>,
    /// Clients that gained output besides the caller (MONITOR feeds).
    pub transmit: &'a mut VecDeque<ClientId>,
    /// Times each command (see [`crate::stopwatch`]).
    pub stopwatch: &'a mut dyn Stopwatch,
}

/// A pipeline over `ctx`'s state, for a command that runs commands: a
/// script's `redis.call`s (timed by their work, as Redis does not time
/// them apart from the script) and CLIENT UNBLOCK's answer to its target.
/// Neither feeds monitors, so there is nothing to transmit.
pub fn nested<R>(ctx: &mut Ctx, f: impl FnOnce(&mut Pipeline) -> R) -> R {
    let mut transmit = VecDeque::new();
    let mut stopwatch = WorkUnitStopwatch;
    let mut p = Pipeline {
        server: &mut *ctx.server,
        clients: &mut *ctx.clients,
        events: &mut *ctx.events,
        transmit: &mut transmit,
        stopwatch: &mut stopwatch,
    };
    let r = f(&mut p);
    debug_assert!(transmit.is_empty(), "nested commands feed no monitor");
    r
}

/// How finish finds the watched keys a command changed; none when nobody
/// watches or monitors, or nothing changed (a timeout).
enum Touch {
    /// A request's write while someone watches, or a command MONITOR shows.
    Hook(Hook),
    /// A script's call: the keys of any command that dirtied the dataset,
    /// and those FLUSHDB/FLUSHALL emptied.
    Script {
        dirty_before: u64,
        flushed: Vec<(usize, Box<[u8]>)>,
    },
    /// A blocked command served by its re-run: its keys.
    Served,
}

/// A command at its end, for [`Pipeline::finish`].
struct Done<'r> {
    caller: Caller,
    client: ClientId,
    request_seq: u64,
    /// The database the command ran in.
    db: usize,
    /// What ran; `None` for a request rejected before it ran.
    command: Option<Resolved>,
    /// The arguments as they are after the command ran.
    args: &'r [Vec<u8>],
    work_units: u64,
    duration_ns: u64,
    touch: Option<Box<Touch>>,
    /// Its keys, for client-side caching (see [`crate::tracking`]).
    tracked: Option<Box<crate::tracking::CallKeys>>,
    measuring: Option<Box<Measuring>>,
    /// A request that blocked: what it waits for, and its arguments to run
    /// again.
    block: Option<Box<(BlockRequest, Vec<Vec<u8>>)>>,
    /// A request whose script is suspended between slices (see
    /// [`suspend`]): it finishes when the script ends.
    suspended: bool,
}

/// The handler's result, from [`Pipeline::execute`].
struct Handled {
    reply: Vec<u8>,
    work_units: u64,
    block: Option<BlockRequest>,
    suspended: bool,
}

impl Pipeline<'_> {
    /// Runs a request of `client` (`Caller::Request`, counted here as the
    /// connection's next request) or a command of its EXEC's queue
    /// (`Caller::Exec`): resolve, admit, execute, finish.
    pub fn run(&mut self, now: Now, client: ClientId, args: &mut [Vec<u8>], caller: Caller) {
        debug_assert!(!args.is_empty());
        let c = self.clients.get_mut(&client).expect("client");
        let request_seq = match caller {
            Caller::Exec { request_seq, .. } => request_seq,
            _ => {
                debug_assert_eq!(caller, Caller::Request);
                c.requests_parsed += 1;
                c.requests_parsed - 1
            }
        };
        let (db, protocol, may_block) = (c.db, c.protocol, !c.deny_blocking);
        if caller == Caller::Request {
            // Redis's `server.current_client`, for client-side caching.
            self.server.tracking.current = Some(client);
        }
        let mut reply = std::mem::take(&mut c.output);
        let reply_start = reply.len();
        self.server.stats.now = now;
        let auth_required = self.server.auth_required(c);
        let mut resolved =
            resolve::request(&self.server.commands, args, (c, auth_required), &mut reply);
        if let Some(busy) = self.server.scripting.busy_error() {
            // A script runs past busy-reply-threshold: only commands
            // flagged allow-busy run (Redis's processCommand), before
            // MULTI queues anything.
            resolved = resolve::reject_while_busy(resolved, busy, &mut reply);
        }
        let admitted = self.admit(
            (now, client, caller),
            (args, request_seq),
            &mut resolved,
            (&mut reply, reply_start),
        );
        let Some(evict_work_units) = admitted else {
            // Queued by MULTI: `+QUEUED` is its whole effect (and is
            // dropped like any reply under CLIENT REPLY OFF or SKIP).
            let c = self.clients.get_mut(&client).expect("client");
            crate::reply_mode::command_finished(c, &mut reply, reply_start);
            c.output = reply;
            self.after_request(client, true);
            return;
        };
        let mut done = match resolved {
            Ok(command) => {
                let at = (now, client, caller, request_seq);
                let on = (db, protocol, may_block);
                self.execute_request(at, command, args, (&mut reply, reply_start), on)
            }
            Err(rejected) => {
                self.server.stats.record_rejected(rejected);
                Done {
                    caller,
                    client,
                    request_seq,
                    db,
                    command: None,
                    args: &[],
                    work_units: 1 + evict_work_units,
                    duration_ns: 0,
                    touch: None,
                    tracked: None,
                    measuring: None,
                    block: None,
                    suspended: false,
                }
            }
        };
        let reply_bytes = (reply.len() - reply_start) as u64;
        done.work_units += reply_bytes / REPLY_BYTES_PER_WORK_UNIT;
        if done.command.is_some() {
            done.duration_ns = self.stopwatch.stop(done.work_units, reply_bytes);
        }
        let client_command =
            matches!(done.command, Some((Some(parent), _)) if parent.name == "client");
        self.finish(now, done, &mut reply, reply_start);
        if caller == Caller::Request {
            self.after_request(client, client_command);
        }
    }

    /// Client-side caching at the end of a request: see
    /// [`crate::tracking::after_request`]. Its work (an eviction of tracked
    /// keys) is the server's, as Redis's `trackingLimitUsedSlots` runs
    /// before the next command.
    fn after_request(&mut self, client: ClientId, client_command: bool) {
        let server = &mut *self.server;
        let max_keys = server.config.tracking_table_max_keys;
        let at = (client, client_command);
        let tracking = &mut server.tracking;
        crate::tracking::after_request(tracking, self.clients, &mut server.rng, max_keys, at);
    }

    /// The execute step of a request that passed admission: the handler,
    /// with what must be taken before it runs, a command that blocked
    /// parked or answered, and EXEC's queue run after EXEC's handler.
    #[inline(always)]
    fn execute_request<'r>(
        &mut self,
        (now, client, caller, request_seq): (Now, ClientId, Caller, u64),
        command: Resolved,
        args: &'r mut [Vec<u8>],
        (reply, reply_start): (&mut Vec<u8>, usize),
        (db, protocol, may_block): (usize, Protocol, bool),
    ) -> Done<'r> {
        let (touch, measuring) = self.before(client, caller, command, args, request_seq, db);
        let tracked = self.before_tracking(client, command.1, args);
        let propagating = self
            .server
            .propagation
            .before(self.server.dirty, db, command.1, args);
        // A handler may take its arguments apart; a command that may park
        // keeps the originals to run again when it is served.
        let saved_args = command
            .1
            .has(crate::cmd::flags::BLOCKING)
            .then(|| args.to_vec());
        if crate::commands::slowlog::SlowLog::enabled(&self.server.config) {
            self.server.stats.slowlog.capture(args);
        }
        let output = std::mem::take(reply);
        let handler = command.1.handler.expect("resolved specs have handlers");
        let handled = self.execute(
            now,
            (client, caller),
            (command.1, handler),
            args,
            (output, protocol),
            may_block,
        );
        if let Some(capture) = propagating {
            self.server.propagation.after(capture, self.server.dirty);
        }
        *reply = handled.reply;
        let suspended = handled.suspended;
        debug_assert!(
            !suspended || reply.len() == reply_start,
            "a suspended script replied"
        );
        let mut block = None;
        if let Some(request) = handled.block {
            debug_assert_eq!(reply.len(), reply_start, "a blocking handler replied");
            reply.truncate(reply_start);
            match saved_args {
                Some(saved) if may_block && !request.keys.is_empty() => {
                    let mut request = request;
                    let saved = request.rerun_args.take().unwrap_or(saved);
                    block = Some(Box::new((request, saved)));
                }
                // A handler that blocks where it may not (or on no key)
                // gets its timeout reply at once.
                _ => reply.extend_from_slice(request.on_timeout.encoded(protocol)),
            }
        }
        // Only EXEC's handler hands a queue over (a name test is cheaper
        // than looking the client up after every command).
        let exec_queue = match command.1.name {
            "exec" => crate::multi::take_exec_queue(self.clients, client),
            _ => None,
        };
        debug_assert!(self.clients[&client].tx.exec_queue.is_none());
        if let Some(queue) = exec_queue {
            // EXEC: its handler wrote the array header; each queued command
            // now runs and is timed on its own.
            let _ = self.stopwatch.stop(0, 0);
            *reply = self.run_exec(now, client, std::mem::take(reply), queue, request_seq);
            self.stopwatch.start();
        }
        Done {
            caller,
            client,
            request_seq,
            db,
            command: Some(command),
            args: &[],
            work_units: handled.work_units,
            duration_ns: 0,
            touch,
            tracked,
            measuring,
            block,
            suspended,
        }
    }

    /// The keys client-side caching needs from before a command ran.
    fn before_tracking(
        &self,
        client: ClientId,
        spec: &CommandSpec,
        args: &[Vec<u8>],
    ) -> Option<Box<crate::tracking::CallKeys>> {
        let server = &*self.server;
        crate::tracking::before_call(
            &server.tracking,
            self.clients,
            client,
            spec,
            args,
            server.dirty,
        )
    }

    /// Runs `redis.call`'s command for `client`'s script (`eval_seq` is
    /// the script's request), already resolved by the script's rules:
    /// never blocking, replying in `protocol`. Returns the reply and the
    /// work done, which the script is charged too.
    pub fn run_script_call(
        &mut self,
        now: Now,
        client: ClientId,
        eval_seq: u64,
        command: Resolved,
        (mut args, protocol): (Vec<Vec<u8>>, Protocol),
    ) -> (Vec<u8>, u64) {
        let caller = Caller::Script { eval_seq };
        let db = self.clients[&client].db;
        let (touch, measuring) = self.before(client, caller, command, &args, eval_seq, db);
        let tracked = self.before_tracking(client, command.1, &args);
        let propagating = self
            .server
            .propagation
            .before(self.server.dirty, db, command.1, &args);
        let handler = command.1.handler.expect("resolved specs have handlers");
        let handled = self.execute(
            now,
            (client, caller),
            (command.1, handler),
            &mut args,
            (Vec::new(), protocol),
            false,
        );
        debug_assert!(!handled.suspended, "a script's call runs no script");
        if let Some(capture) = propagating {
            self.server.propagation.after(capture, self.server.dirty);
        }
        let mut reply = handled.reply;
        if let Some(request) = handled.block {
            // Scripts never block (Redis denies blocking commands to them):
            // the command replies as if its timeout had passed.
            reply.clear();
            reply.extend_from_slice(request.on_timeout.encoded(protocol));
        }
        let reply_bytes = reply.len() as u64;
        let work_units = handled.work_units + reply_bytes / REPLY_BYTES_PER_WORK_UNIT;
        let duration_ns = self.stopwatch.stop(work_units, reply_bytes);
        let done = Done {
            caller,
            client,
            request_seq: eval_seq,
            db,
            command: Some(command),
            args: &args,
            work_units,
            duration_ns,
            touch,
            tracked,
            measuring,
            block: None,
            suspended: false,
        };
        self.finish(now, done, &mut reply, 0);
        (reply, work_units)
    }

    /// Admits a resolved request: the keyspace access mode and eviction
    /// with its OOM refusal (see [`crate::evict::admit`]), RESP2 subscribed
    /// mode, and MULTI, which queues it (then `None`) or rejects it.
    /// Returns the work eviction did. EXEC's commands were checked when
    /// they were queued.
    fn admit(
        &mut self,
        (now, client, caller): (Now, ClientId, Caller),
        (args, request_seq): (&[Vec<u8>], u64),
        resolved: &mut Result<Resolved, Option<CommandName>>,
        (reply, reply_start): (&mut Vec<u8>, usize),
    ) -> Option<u64> {
        let in_exec = caller.in_exec();
        let at_exec = matches!(caller, Caller::Exec { .. });
        let acl_work_units = permit::request(
            (self.server, self.clients),
            (now, client, at_exec),
            resolved,
            args,
            reply,
        );
        let evict_work_units = crate::evict::admit(
            (self.server, self.clients, self.events),
            (now, client, in_exec),
            resolved,
            reply,
        );
        let c = self.clients.get_mut(&client).expect("client");
        if in_exec.is_none() {
            crate::persist::admit(self.server, resolved, reply);
            crate::repl::primary::admit(self.server, (now, c.repl_role), resolved, reply);
        }
        if c.protocol == Protocol::Resp2 && !c.subscriptions.is_empty() {
            *resolved = resolve::reject_while_subscribed(*resolved, reply);
        }
        match *resolved {
            _ if in_exec.is_some() => {}
            Ok((parent, spec)) => {
                use crate::multi::Intercepted;
                match crate::multi::intercept(c, spec, args, request_seq, reply, c.protocol) {
                    Intercepted::No => {}
                    Intercepted::Queued => return None,
                    Intercepted::Rejected => *resolved = Err(Some(CommandName::of(parent, spec))),
                }
            }
            Err(_) => {
                let watches = &mut self.server.watches;
                crate::multi::rejected(watches, c, &args[0], reply, reply_start);
            }
        }
        Some(evict_work_units + acl_work_units)
    }

    /// What must be taken before a handler runs (it may take its arguments
    /// apart, and FLUSHDB's keys are gone after): the WATCH/MONITOR
    /// bookkeeping and the size measurement (see [`crate::sizes`]).
    #[inline(always)]
    fn before(
        &mut self,
        client: ClientId,
        caller: Caller,
        command: Resolved,
        args: &[Vec<u8>],
        request_seq: u64,
        db: usize,
    ) -> (Option<Box<Touch>>, Option<Box<Measuring>>) {
        let server = &mut *self.server;
        let spec = command.1;
        let touch = match caller {
            Caller::Request | Caller::Exec { .. } => {
                // A script records its redis.calls under this request.
                server.scripting.request_seq = request_seq;
                Hook::before(server, db, spec, args).map(|hook| Box::new(Touch::Hook(hook)))
            }
            Caller::Script { .. } => Some(Box::new(Touch::Script {
                dirty_before: server.dirty,
                flushed: crate::multi::before_flush(&server.watches, &server.keyspace, spec, db),
            })),
            Caller::Unblocked => Some(Box::new(Touch::Served)),
        };
        let measuring = server.config.record_sizes.then(|| {
            Box::new(crate::sizes::measure_before(
                server,
                (self.clients, client),
                db,
                command,
                args,
            ))
        });
        (touch, measuring)
    }

    /// Runs `spec`'s handler for `client` (or, for a suspended script,
    /// its resumption), appending to `reply`, timed by the stopwatch (the
    /// caller stops it once the reply is complete). The only place a
    /// [`Ctx`] is built.
    #[allow(clippy::too_many_arguments)]
    fn execute(
        &mut self,
        now: Now,
        (client, caller): (ClientId, Caller),
        (spec, handler): (&'static CommandSpec, crate::cmd::Handler),
        args: &mut [Vec<u8>],
        (reply, protocol): (Vec<u8>, Protocol),
        may_block: bool,
    ) -> Handled {
        self.stopwatch.start();
        let mut ctx = Ctx {
            server: &mut *self.server,
            clients: &mut *self.clients,
            client_id: client,
            events: &mut *self.events,
            now,
            reply,
            protocol,
            work_units: caller.base_work_units(),
            spec,
            may_block,
            block: None,
            in_script: matches!(caller, Caller::Script { .. }),
            may_suspend: caller == Caller::Request,
            suspended: false,
            in_exec: matches!(caller, Caller::Exec { .. }),
        };
        handler(&mut ctx, args);
        Handled {
            reply: ctx.reply,
            work_units: ctx.work_units,
            block: ctx.block,
            suspended: ctx.suspended,
        }
    }

    /// Runs EXEC's queue back to back: nothing else runs in between, and no
    /// command may block (each replies as timed out instead). `reply` is the
    /// client's output so far, ending with EXEC's array header; returns it
    /// with every command's reply appended.
    pub fn run_exec(
        &mut self,
        now: Now,
        client: ClientId,
        reply: Vec<u8>,
        mut queue: Vec<crate::multi::Queued>,
        exec_seq: u64,
    ) -> Vec<u8> {
        let queued_count = queue.len();
        self.server.planted.exec_queue(client, exec_seq, &mut queue);
        let Some(c) = self.clients.get_mut(&client) else {
            return reply;
        };
        debug_assert!(c.output.is_empty(), "the output is EXEC's reply");
        c.output = reply;
        c.tx.exec_running = Some(queued_count);
        let deny_blocking = std::mem::replace(&mut c.deny_blocking, true);
        for queued in queue {
            let mut args = queued.args;
            let request_seq = queued.request_seq;
            let caller = Caller::Exec {
                request_seq,
                exec_seq,
            };
            self.run(now, client, &mut args, caller);
        }
        match self.clients.get_mut(&client) {
            Some(c) => {
                c.deny_blocking = deny_blocking;
                c.tx.exec_running = None;
                std::mem::take(&mut c.output)
            }
            None => Vec::new(),
        }
    }

    /// The end of every command: `reply[reply_start..]` is its reply.
    /// Counts an error reply, hands the reply to its client (a request's
    /// `reply` is its client's whole output), invalidates WATCHes and feeds
    /// MONITOR, parks a request that blocked, or else counts the command
    /// (INFO commandstats, slow log, latency monitor) and records its
    /// execution; then serves the clients blocked on keys a request made
    /// ready (after the whole EXEC, as in Redis), or queues an unblocked
    /// client to run its pipelined requests.
    #[inline(always)]
    fn finish(&mut self, now: Now, done: Done, reply: &mut Vec<u8>, reply_start: usize) {
        let Done {
            caller,
            client,
            request_seq,
            db,
            command,
            args,
            work_units,
            duration_ns,
            touch,
            tracked,
            measuring,
            block,
            suspended,
        } = done;
        let mut work_units = work_units;
        if suspended {
            let eval = SuspendedEval {
                request_seq,
                db,
                command,
                work_units,
                duration_ns,
                touch,
                tracked,
                measuring,
            };
            return self.suspend(client, eval, reply);
        }
        if let Some(call) = tracked {
            let (tracking, dirty) = (&mut self.server.tracking, self.server.dirty);
            work_units += crate::tracking::after_call(tracking, self.clients, client, &call, dirty);
        }
        if caller == Caller::Request && self.server.scripting.running_client().is_none() {
            // A request is the whole unit: EXEC's queue and a script's
            // calls ran inside it. A command served while a script is
            // suspended (busy mode) writes nothing, and must not cut the
            // script's unit in two.
            self.server.propagation.flush(Wrap::Multi);
        }
        let reply_bytes = reply.len() - reply_start;
        let failed = self.server.stats.record_error_reply(&reply[reply_start..]);
        if caller == Caller::Request {
            let clients = (&mut *self.clients, &mut *self.transmit);
            self.server
                .planted
                .reply_written(clients, client, reply, reply_start);
        }
        // A client leaves the table only when the host disconnects it, never
        // while one of its commands runs (QUIT and CLIENT KILL mark it).
        let Some(c) = self.clients.get_mut(&client) else {
            return;
        };
        match caller {
            Caller::Request | Caller::Exec { .. } => {
                if caller == Caller::Request && block.is_none() {
                    crate::reply_mode::command_finished(c, reply, reply_start);
                }
                c.output = std::mem::take(reply);
                if let Some((_, spec)) = command {
                    c.last_command = spec.name;
                }
            }
            Caller::Unblocked => {
                crate::reply_mode::command_finished(c, reply, 0);
                c.output.extend_from_slice(reply);
            }
            Caller::Script { .. } => {}
        }
        if let Some((parent, spec)) = command {
            let finished = crate::stats::Finished {
                name: CommandName::of(parent, spec),
                flags: spec.flags,
                work_units,
                duration_ns,
                failed,
                // A request's arguments were captured before it ran.
                args: (!caller.is_request()).then_some(args),
            };
            if touch.is_none() && block.is_none() {
                // The common case: nothing in between, the client at hand.
                crate::stats::command_finished(self.server, c, finished);
            } else {
                if let Some(touch) = touch {
                    self.touch(now, *touch, (client, db, spec, args), failed);
                }
                if let Some(block) = block {
                    let (request, saved_args) = *block;
                    // Stats and the execution record wait for the reply that
                    // unblocks it, so that the command is counted once.
                    let attempt = (work_units, duration_ns);
                    self.park(now, client, spec, saved_args, request, request_seq, attempt);
                    return;
                }
                if let Some(c) = self.clients.get(&client) {
                    crate::stats::command_finished(self.server, c, finished);
                }
            }
        }
        let sizes = match measuring {
            Some(m) if self.server.config.record_executions => {
                Some(m.finish(self.server, reply_bytes))
            }
            _ => None,
        };
        if self.server.config.record_executions {
            let spec = command.map(|(_, spec)| spec);
            let executed = Executed {
                client,
                request_seq,
                name: spec.map_or("", |s| s.name),
                flags: spec.map_or(0, |s| s.flags),
                work_units,
                reply_bytes,
                in_exec: caller.in_exec(),
                sizes,
            };
            // The only place an execution is recorded.
            self.events.push_back(Event::Executed(executed));
        }
        match caller {
            Caller::Request if self.server.blocking.has_ready() => self.serve_ready_keys(now),
            Caller::Unblocked => self.server.blocking.push_unblocked(client),
            _ => {}
        }
    }

    /// Invalidates the WATCHes on the keys the command changed, and feeds
    /// MONITOR (see [`Touch`]).
    fn touch(
        &mut self,
        now: Now,
        touch: Touch,
        (client, db, spec, args): (ClientId, usize, &'static CommandSpec, &[Vec<u8>]),
        failed: bool,
    ) {
        let (server, clients) = (&*self.server, &mut *self.clients);
        let (watches, keyspace) = (&server.watches, &server.keyspace);
        match touch {
            Touch::Hook(hook) => {
                let transmit = &mut *self.transmit;
                hook.after(server, clients, transmit, now, client, db, spec, failed);
            }
            Touch::Script {
                dirty_before,
                flushed,
            } => {
                if server.dirty > dirty_before {
                    crate::multi::touch_after_write(watches, clients, keyspace, spec, args, db);
                }
                if !failed {
                    for (d, key) in &flushed {
                        crate::multi::touch_key(watches, clients, *d, key);
                    }
                }
            }
            Touch::Served => {
                crate::multi::touch_after_write(watches, clients, keyspace, spec, args, db);
            }
        }
    }
}
