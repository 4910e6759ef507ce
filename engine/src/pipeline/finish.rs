//! The pipeline's finish step, the same for every caller (see
//! [`Pipeline::finish`]).

use super::{planted, Caller, Done, Pipeline, Touch};
use crate::client::ClientId;
use crate::cmd::CommandSpec;
use crate::event::{Event, Executed};
use crate::stats::CommandName;
use crate::time::Now;

impl Pipeline<'_> {
    /// The end of every command: `reply[reply_start..]` is its reply.
    /// Counts an error reply, hands the reply to its client (a request's
    /// `reply` is its client's whole output), invalidates WATCHes and feeds
    /// MONITOR, parks a request that blocked, or else counts the command
    /// (INFO commandstats, slow log, latency monitor) and records its
    /// execution; then serves the clients blocked on keys a request made
    /// ready (after the whole EXEC, as in Redis), or queues an unblocked
    /// client to run its pipelined requests.
    #[inline(always)]
    pub(super) fn finish(&mut self, now: Now, done: Done, reply: &mut Vec<u8>, reply_start: usize) {
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
            measuring,
            block,
        } = done;
        let reply_bytes = reply.len() - reply_start;
        let failed = self.server.stats.record_error_reply(&reply[reply_start..]);
        if caller == Caller::Request && self.server.config.planted_bug.is_some() {
            planted::planted_after_reply(self, client, reply, reply_start);
        }
        // A client leaves the table only when the host disconnects it, never
        // while one of its commands runs (QUIT and CLIENT KILL mark it).
        let Some(c) = self.clients.get_mut(&client) else {
            return;
        };
        match caller {
            Caller::Request | Caller::Exec { .. } => {
                c.output = std::mem::take(reply);
                if let Some((_, spec)) = command {
                    c.last_command = spec.name;
                }
            }
            Caller::Unblocked => c.output.extend_from_slice(reply),
            Caller::Script { .. } => {}
        }
        if let Some((parent, spec)) = command {
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
                crate::stats::command_finished(
                    self.server,
                    c,
                    crate::stats::Finished {
                        name: CommandName::of(parent, spec),
                        flags: spec.flags,
                        work_units,
                        duration_ns,
                        failed,
                        // A request's arguments were captured before it ran.
                        args: (!caller.is_request()).then_some(args),
                    },
                );
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
