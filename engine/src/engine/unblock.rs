//! Blocked clients (BLPOP and the other blocking commands), the engine's
//! side: timing them out, and running the requests they pipelined behind
//! the blocking one. Parking and serving them is the command pipeline's
//! (see `crate::pipeline`).

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
            self.pipeline().finish_unserved(now, id, &blocked, reply);
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
}
