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
//! too (AOF replay, the replica stream), and propagation a step of finish.

use std::collections::VecDeque;

use crate::blocking::BlockRequest;
use crate::client::{ClientId, Clients};
use crate::cmd::{CommandSpec, Ctx, REPLY_BYTES_PER_WORK_UNIT};
use crate::event::Event;
use crate::multi::Hook;
use crate::resp::Protocol;
use crate::server::Server;
use crate::sizes::Measuring;
use crate::stats::CommandName;
use crate::stopwatch::{Stopwatch, WorkUnitStopwatch};
use crate::time::Now;

mod execute;
mod finish;
mod planted;
mod resolve;
mod unblock;

pub use resolve::{lookup, lookup_full_name, Found};

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
    measuring: Option<Box<Measuring>>,
    /// A request that blocked: what it waits for, and its arguments to run
    /// again.
    block: Option<Box<(BlockRequest, Vec<Vec<u8>>)>>,
}

/// The handler's result, from [`Pipeline::execute`].
struct Handled {
    reply: Vec<u8>,
    work_units: u64,
    block: Option<BlockRequest>,
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
        let mut reply = std::mem::take(&mut c.output);
        let reply_start = reply.len();
        self.server.stats.now = now;
        let mut resolved = resolve::request(&self.server.commands, args, c, &mut reply);
        let admitted = self.admit(
            (now, client, caller),
            (args, request_seq),
            &mut resolved,
            (&mut reply, reply_start),
        );
        let Some(evict_work_units) = admitted else {
            // Queued by MULTI: `+QUEUED` is its whole effect.
            self.clients.get_mut(&client).expect("client").output = reply;
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
                    measuring: None,
                    block: None,
                }
            }
        };
        let reply_bytes = (reply.len() - reply_start) as u64;
        done.work_units += reply_bytes / REPLY_BYTES_PER_WORK_UNIT;
        if done.command.is_some() {
            done.duration_ns = self.stopwatch.stop(done.work_units, reply_bytes);
        }
        self.finish(now, done, &mut reply, reply_start);
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
        let evict_work_units = crate::evict::admit(
            (self.server, self.clients, self.events),
            (now, client, in_exec),
            resolved,
            reply,
        );
        let c = self.clients.get_mut(&client).expect("client");
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
        Some(evict_work_units)
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
}
