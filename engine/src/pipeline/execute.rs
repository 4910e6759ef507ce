//! The pipeline's execute step: a request's handler (with what it needs
//! taken before, a command that blocked, and EXEC's queue), a script
//! call's, and the one place a [`Ctx`] is built.

use super::{Caller, Done, Handled, Pipeline, Resolved};
use crate::client::ClientId;
use crate::cmd::{CommandSpec, Ctx, REPLY_BYTES_PER_WORK_UNIT};
use crate::resp::Protocol;
use crate::time::Now;

impl Pipeline<'_> {
    /// The execute step of a request that passed admission: the handler,
    /// with what must be taken before it runs, a command that blocked
    /// parked or answered, and EXEC's queue run after EXEC's handler.
    #[inline(always)]
    pub(super) fn execute_request<'r>(
        &mut self,
        (now, client, caller, request_seq): (Now, ClientId, Caller, u64),
        command: Resolved,
        args: &'r mut [Vec<u8>],
        (reply, reply_start): (&mut Vec<u8>, usize),
        (db, protocol, may_block): (usize, Protocol, bool),
    ) -> Done<'r> {
        let (touch, measuring) = self.before(client, caller, command, args, request_seq, db);
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
        let handled = self.execute(
            now,
            (client, caller),
            command.1,
            args,
            (output, protocol),
            may_block,
        );
        *reply = handled.reply;
        let mut block = None;
        if let Some(request) = handled.block {
            debug_assert_eq!(reply.len(), reply_start, "a blocking handler replied");
            reply.truncate(reply_start);
            match saved_args {
                Some(saved) if may_block && !request.keys.is_empty() => {
                    block = Some(Box::new((request, saved)));
                }
                // A handler that blocks where it may not (or on no key)
                // gets its timeout reply at once.
                _ => reply.extend_from_slice(request.on_timeout.encoded(protocol)),
            }
        }
        if let Some(queue) = crate::multi::take_exec_queue(self.clients, client) {
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
            measuring,
            block,
        }
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
        let handled = self.execute(
            now,
            (client, caller),
            command.1,
            &mut args,
            (Vec::new(), protocol),
            false,
        );
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
            measuring,
            block: None,
        };
        self.finish(now, done, &mut reply, 0);
        (reply, work_units)
    }

    /// Runs `spec`'s handler for `client`, appending to `reply`, timed by
    /// the stopwatch (the caller stops it once the reply is complete).
    /// The only place a [`Ctx`] is built.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn execute(
        &mut self,
        now: Now,
        (client, caller): (ClientId, Caller),
        spec: &'static CommandSpec,
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
        };
        (spec.handler.expect("resolved specs have handlers"))(&mut ctx, args);
        Handled {
            reply: ctx.reply,
            work_units: ctx.work_units,
            block: ctx.block,
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
        crate::multi::planted_split_exec(self.server, client, exec_seq, &mut queue);
        let Some(c) = self.clients.get_mut(&client) else {
            return reply;
        };
        debug_assert!(c.output.is_empty(), "the output is EXEC's reply");
        c.output = reply;
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
                std::mem::take(&mut c.output)
            }
            None => Vec::new(),
        }
    }
}
