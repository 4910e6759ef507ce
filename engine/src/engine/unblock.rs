//! Blocked clients (BLPOP and the other blocking commands): parking a
//! request, serving it when a write makes one of its keys ready, timing it
//! out, and running the pipeline that waited behind it.

use super::*;

impl Engine {
    /// Unblocks, with their timeout reply, the blocked clients whose
    /// deadline is at or before `now`, earliest first, then runs their
    /// pipelined requests.
    pub(super) fn time_out_blocked(&mut self, now: Now) {
        let expired_max = self.server.blocking.blocked_count();
        let mut expired = 0;
        while let Some(id) = self.server.blocking.first_expired(now.mono_ns) {
            // Each turn removes one client from the timeout table.
            assert!(
                expired < expired_max,
                "timeout table larger than the blocked clients"
            );
            expired += 1;
            let c = self
                .clients
                .get_mut(&id)
                .expect("blocked clients are connected");
            let blocked = self
                .server
                .blocking
                .unpark(c)
                .expect("clients in the timeout table are blocked");
            if c.closing.is_some() {
                continue;
            }
            let reply = blocked.on_timeout.encoded(c.protocol);
            deliver_unblocked(
                &mut self.server,
                &mut self.clients,
                &mut self.events,
                id,
                &blocked,
                reply,
                (0, None),
            );
        }
        let mut args = std::mem::take(&mut self.args);
        self.process_unblocked(now, &mut args);
        crate::resp::parse::recycle_args(&mut args, &mut self.spare_args);
        if args.capacity() <= ARGS_KEPT_CAPACITY_MAX {
            self.args = args;
        }
    }

    /// Queues the output of clients unblocked since the last call, and runs
    /// the requests they pipelined behind their blocking command (Redis
    /// does this in `processUnblockedClients`, before the next poll).
    pub(super) fn process_unblocked(&mut self, now: Now, args: &mut Vec<Vec<u8>>) {
        // A client enters the queue only when it is unblocked, which
        // consumed one of its requests; so the loop ends once the
        // unblocked clients' buffered requests are spent.
        while let Some(id) = self.server.blocking.pop_unblocked() {
            let Some(c) = self.clients.get(&id) else {
                continue;
            };
            if !c.pending_output().is_empty() && !self.transmit.contains(&id) {
                self.transmit.push_back(id);
            }
            if c.blocked.is_none() {
                self.process_input(now, id, args);
            }
        }
    }

    /// Parks `client` on the keys of `request` (see [`crate::blocking`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn park(
        &mut self,
        now: Now,
        client: ClientId,
        spec: &'static CommandSpec,
        args: Vec<Vec<u8>>,
        request: crate::blocking::BlockRequest,
        request_seq: u64,
        work_units: u64,
        elapsed_ns: u64,
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
    pub(super) fn serve_ready_keys(&mut self, now: Now) {
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
    pub(super) fn serve_key(&mut self, now: Now, db: usize, key: &[u8]) {
        for id in self.server.blocking.waiters(db, key) {
            let Some(value_type) = self.server.keyspace.dbs[db].get(key).map(Value::type_name)
            else {
                // Emptied (and deleted) by the clients served before.
                break;
            };
            let Some(c) = self.clients.get_mut(&id) else {
                continue;
            };
            let Some(blocked) = c.blocked.as_ref() else {
                continue;
            };
            if c.closing.is_some() {
                // Killed or over a limit: it will never read a reply, so it
                // must not consume a value.
                drop(self.server.blocking.unpark(c));
                continue;
            }
            // Redis 7.0 serves a list waiter from a list only, and so on;
            // a key of another type leaves it blocked.
            if blocked.wanted_type().is_some_and(|t| t != value_type) {
                continue;
            }
            self.rerun_blocked(now, id);
        }
    }

    /// Runs `client`'s blocked command again, without blocking. A reply
    /// other than a null unblocks it with that reply; a null (nothing to
    /// serve after all) leaves it blocked in place.
    pub(super) fn rerun_blocked(&mut self, now: Now, client: ClientId) {
        let c = self.clients.get(&client).expect("checked by the caller");
        let blocked = c.blocked.as_ref().expect("checked by the caller");
        debug_assert_eq!(c.db, blocked.db, "a blocked client runs nothing else");
        let spec = blocked.spec;
        let mut args = blocked.args.clone();
        let protocol = c.protocol;
        let measuring = self.server.config.record_sizes.then(|| {
            let cs = (&self.clients, client);
            crate::sizes::measure_before(&self.server, cs, blocked.db, (None, spec), &args)
        });
        let mut ctx = Ctx {
            server: &mut self.server,
            clients: &mut self.clients,
            client_id: client,
            events: &mut self.events,
            now,
            reply: Vec::new(),
            protocol,
            work_units: 0,
            spec,
            may_block: false,
            block: None,
        };
        self.stopwatch.start();
        (spec.handler.expect("blocked specs have handlers"))(&mut ctx, &mut args);
        let (reply, work_units, blocked_again) = (ctx.reply, ctx.work_units, ctx.block.is_some());
        let reply_bytes = reply.len() as u64;
        let elapsed_ns = self.stopwatch.stop(
            work_units + reply_bytes / REPLY_BYTES_PER_WORK_UNIT,
            reply_bytes,
        );
        let c = self
            .clients
            .get_mut(&client)
            .expect("a re-run keeps its client");
        if blocked_again || crate::blocking::is_null_reply(&reply) {
            let blocked = c.blocked.as_mut().expect("still blocked");
            blocked.work_units += work_units;
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
        crate::multi::touch_after_write(
            &self.server.watches,
            &mut self.clients,
            &self.server.keyspace,
            blocked.spec,
            &blocked.args,
            blocked.db,
        );
        let stats = &mut self.server.stats;
        stats.latency.add_if_needed(
            self.server.config.latency_monitor_threshold_ms,
            crate::commands::latency::EVENT_COMMAND_UNBLOCKING,
            now.unix_us / 1_000_000,
            elapsed_ns / 1_000_000,
        );
        deliver_unblocked(
            &mut self.server,
            &mut self.clients,
            &mut self.events,
            client,
            &blocked,
            &reply,
            (work_units, measuring),
        );
    }
}
