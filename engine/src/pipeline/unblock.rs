//! The pipeline's blocked commands: parking a request that blocked,
//! serving the clients blocked on keys made ready by running their command
//! again, and finishing a command when it is unblocked (served, timed out,
//! or CLIENT UNBLOCK). The engine drives the timeouts and the requests
//! pipelined behind an unblocked command (`Engine::process_unblocked`).

use super::{Caller, Done, Pipeline, Touch};
use crate::blocking::{BlockRequest, Blocked};
use crate::client::ClientId;
use crate::cmd::{CommandSpec, REPLY_BYTES_PER_WORK_UNIT};
use crate::sizes::Measuring;
use crate::time::Now;
use crate::value::Value;

impl Pipeline<'_> {
    /// Parks `client` on the keys of `request` (see [`crate::blocking`]).
    /// `attempt` is the work and stopwatch time of the run that blocked.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn park(
        &mut self,
        now: Now,
        client: ClientId,
        spec: &'static CommandSpec,
        args: Vec<Vec<u8>>,
        request: BlockRequest,
        request_seq: u64,
        (work_units, elapsed_ns): (u64, u64),
    ) {
        let c = self
            .clients
            .get_mut(&client)
            .expect("checked by the caller");
        // BLPOP k k 0 waits once on k, as Redis's blockForKeys does.
        let mut keys: Vec<Vec<u8>> = Vec::with_capacity(request.keys.len());
        for key in request.keys {
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        let deadline_ns = (request.timeout_ms > 0).then(|| {
            now.mono_ns
                .saturating_add(request.timeout_ms.saturating_mul(1_000_000))
        });
        let blocked = Blocked {
            spec,
            args,
            db: c.db,
            keys,
            deadline_ns,
            on_timeout: request.on_timeout,
            request_seq,
            work_units,
            elapsed_ns,
            runs: 1,
        };
        self.server.blocking.park(c, blocked);
    }

    /// Serves the clients blocked on the keys signalled ready, key by key
    /// in signal order, each key's waiters first blocked first. Serving can
    /// signal more keys (BLMOVE's destination); those are served in the
    /// next round.
    pub(crate) fn serve_ready_keys(&mut self, now: Now) {
        // A round that serves nobody changes nothing and signals nothing,
        // and each serve unblocks a client; so there are at most as many
        // rounds as blocked clients, plus the last, empty one.
        let rounds_max = self.server.blocking.blocked_count() + 1;
        let mut rounds = 0;
        while self.server.blocking.has_ready() {
            assert!(
                rounds < rounds_max,
                "serving blocked clients did not settle"
            );
            rounds += 1;
            for (db, key) in self.server.blocking.take_ready() {
                self.serve_key(now, db, &key);
            }
        }
    }

    /// Serves the clients blocked on `key` in database `db` while it holds
    /// a value (Redis's `serveClientsBlockedOn*Key`).
    fn serve_key(&mut self, now: Now, db: usize, key: &[u8]) {
        for id in crate::planted::waiters(self.server, self.clients, db, key) {
            let value_type = self.server.keyspace.dbs[db].get(key).map(Value::type_name);
            let Some(c) = self.clients.get_mut(&id) else {
                continue;
            };
            let Some(blocked) = c.blocked.as_ref() else {
                continue;
            };
            // A missing key serves nobody (it was emptied, and deleted, by
            // the clients served before), except an XREADGROUP, which its
            // stream's deletion ends with an error: one parked behind an
            // XREAD on the same key must still be reached.
            let xreadgroup = blocked.spec.name == "xreadgroup";
            if value_type.is_none() && !xreadgroup {
                continue;
            }
            if c.closing.is_some() {
                // Killed or over a limit: it will never read a reply, so it
                // must not consume a value.
                drop(self.server.blocking.unpark(c));
                continue;
            }
            // Redis 7.0 serves a list waiter from a list only, and so on;
            // a key of another type leaves it blocked.
            if let (Some(wanted), Some(t)) = (blocked.wanted_type(), value_type) {
                if wanted != t {
                    continue;
                }
            }
            self.rerun_blocked(now, id);
        }
    }

    /// Runs `client`'s blocked command again, without blocking. A reply
    /// other than a null unblocks it with that reply; a null (nothing to
    /// serve after all) leaves it blocked in place.
    fn rerun_blocked(&mut self, now: Now, client: ClientId) {
        let c = self.clients.get(&client).expect("checked by the caller");
        let blocked = c.blocked.as_ref().expect("checked by the caller");
        debug_assert_eq!(c.db, blocked.db, "a blocked client runs nothing else");
        let (spec, db, protocol) = (blocked.spec, blocked.db, c.protocol);
        let mut args = blocked.args.clone();
        let caller = Caller::Unblocked;
        let (touch, measuring) = self.before(client, caller, (None, spec), &args, 0, db);
        let propagating = self
            .server
            .propagation
            .before(self.server.dirty, db, spec, &args);
        let handler = spec.handler.expect("resolved specs have handlers");
        let handled = self.execute(
            now,
            (client, caller),
            (spec, handler),
            &mut args,
            (Vec::new(), protocol),
            false,
        );
        if let Some(capture) = propagating {
            self.server.propagation.after(capture, self.server.dirty);
        }
        // One served client is one unit (Redis's `afterCommand` for each),
        // whether or not it was served after all (a lazy expiry).
        self.server.propagation.flush(crate::propagate::Wrap::Multi);
        let reply = handled.reply;
        let reply_bytes = reply.len() as u64;
        let elapsed_ns = self.stopwatch.stop(
            handled.work_units + reply_bytes / REPLY_BYTES_PER_WORK_UNIT,
            reply_bytes,
        );
        let c = self
            .clients
            .get_mut(&client)
            .expect("a re-run keeps its client");
        if handled.block.is_some() || crate::blocking::is_null_reply(&reply) {
            let blocked = c.blocked.as_mut().expect("still blocked");
            blocked.work_units += handled.work_units;
            blocked.elapsed_ns += elapsed_ns;
            blocked.runs += 1;
            return;
        }
        let mut blocked = self
            .server
            .blocking
            .unpark(c)
            .expect("checked by the caller");
        blocked.elapsed_ns += elapsed_ns;
        let stats = &mut self.server.stats;
        stats.latency.add_if_needed(
            self.server.config.latency_monitor_threshold_ms,
            crate::commands::latency::EVENT_COMMAND_UNBLOCKING,
            now.unix_us / 1_000_000,
            elapsed_ns / 1_000_000,
        );
        let attempt = (handled.work_units, measuring, touch);
        self.finish_unblocked(now, client, &blocked, reply, attempt);
    }

    /// Finishes `client`'s command, just unparked from `blocked` (served,
    /// timed out, or CLIENT UNBLOCK), with `reply`: counted (once, here)
    /// and recorded, and the client queued to run its pipelined requests.
    /// `attempt` is the work of the re-run that served it, if one did, its
    /// measurement (see [`crate::sizes`]) and the keys it changed.
    fn finish_unblocked(
        &mut self,
        now: Now,
        client: ClientId,
        blocked: &Blocked,
        mut reply: Vec<u8>,
        attempt: (u64, Option<Box<Measuring>>, Option<Box<Touch>>),
    ) {
        let (attempt_work_units, measuring, touch) = attempt;
        debug_assert!(!reply.is_empty());
        let Some(c) = self.clients.get(&client) else {
            return;
        };
        debug_assert!(c.blocked.is_none(), "unparked first");
        let server = &*self.server;
        let measuring =
            (server.config.record_executions && server.config.record_sizes).then(|| {
                let runs = blocked.runs + u64::from(measuring.is_some());
                let mut m = measuring.unwrap_or_else(|| {
                    let (spec, args) = (blocked.spec, &blocked.args);
                    let cs = (&*self.clients, client);
                    let m =
                        crate::sizes::measure_before(server, cs, blocked.db, (None, spec), args);
                    Box::new(m)
                });
                m.sizes.runs = runs;
                m
            });
        let reply_bytes = reply.len() as u64;
        let done = Done {
            caller: Caller::Unblocked,
            client,
            request_seq: blocked.request_seq,
            db: blocked.db,
            command: Some((None, blocked.spec)),
            args: &blocked.args,
            work_units: blocked.work_units
                + attempt_work_units
                + reply_bytes / REPLY_BYTES_PER_WORK_UNIT,
            duration_ns: blocked.elapsed_ns,
            touch,
            tracked: None,
            measuring,
            block: None,
            suspended: false,
        };
        self.finish(now, done, &mut reply, 0);
    }

    /// Finishes `client`'s command unparked without a re-run (its timeout,
    /// or CLIENT UNBLOCK), with `reply`.
    pub fn finish_unserved(&mut self, now: Now, client: ClientId, blocked: &Blocked, reply: &[u8]) {
        let attempt = (0, None, None);
        self.finish_unblocked(now, client, blocked, reply.to_vec(), attempt);
    }
}
