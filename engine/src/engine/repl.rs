//! The engine's side of replication: the stream fed to the backlog and
//! the replicas after every input, WAIT's deadlines, the primary's pings
//! (see [`crate::repl`]).

use super::Engine;
use crate::repl::{failover, primary};
use crate::time::Now;

impl Engine {
    /// After every input: the writes it propagated go to the backlog and
    /// the replicas; a WAIT that blocked asks the replicas for their
    /// offsets. Returns the stream bytes taken (the AOF wants them too),
    /// or `None` when replication does not use the stream.
    pub(super) fn replicate_stream(&mut self) -> Option<Vec<u8>> {
        if !self.server.repl.wants_stream() {
            return None;
        }
        let bytes = self.server.propagation.take();
        let repl = &mut self.server.repl;
        if repl.is_replica() {
            // A replica's backlog and sub-replicas get its primary's
            // stream as it is applied (see `replica.rs`); what its own
            // execution propagated goes to the AOF only.
            return Some(bytes);
        }
        primary::feed(repl, &mut self.clients, &bytes);
        // A failover holds the offset still for the target to catch up:
        // GETACK waits for it to end (Redis sends none while paused).
        if repl.failover.is_none() && std::mem::take(&mut repl.getack_pending) {
            primary::feed(repl, &mut self.clients, primary::GETACK);
        }
        self.transmit_replicas();
        Some(bytes)
    }

    /// Redis's `updateFailoverStatus`, after every input and timer (its
    /// `beforeSleep` and `replicationCron`): a FAILOVER waiting for its
    /// target hands over once the target acknowledged every byte, or gives
    /// up at its timeout (see [`crate::repl::failover`]).
    pub(super) fn update_failover(&mut self, now: Now) {
        if self.server.repl.failover.is_none() {
            return;
        }
        let step = failover::update(&mut self.server, &self.clients, now);
        let mut parts = crate::repl::replica::Parts {
            server: &mut self.server,
            clients: &mut self.clients,
            events: &mut self.events,
        };
        match step {
            failover::Step::Wait => {}
            failover::Step::HandOver(host, port, forced) => {
                failover::hand_over(&mut parts, now, (host, port), forced)
            }
            failover::Step::Abort(why) => failover::abort(&mut parts, why),
        }
    }

    /// Queues the replicas that gained stream bytes for transmission.
    fn transmit_replicas(&mut self) {
        for id in std::mem::take(&mut self.server.repl.to_transmit) {
            if !self.transmit.contains(&id) {
                self.transmit.push_back(id);
            }
        }
    }

    /// The next time replication wants `handle_timeout`: a WAIT's
    /// deadline, the next ping to the replicas.
    pub(super) fn repl_deadline_ns(&self) -> u64 {
        let repl = &self.server.repl;
        let wait_ns = repl.waiters.iter().filter_map(|w| w.deadline_ns).min();
        // Only a ping that would be sent is a deadline: a replica's, or a
        // failing-over primary's, skipped ping would be due again at once
        // and spin the host's timer.
        let pings = !repl.replicas.is_empty() && !repl.is_replica() && repl.failover.is_none();
        let ping_ns = pings.then(|| {
            let period_s = primary::config_u64(&self.server.config, "repl-ping-replica-period");
            repl.last_ping_mono_ns + period_s.max(1) * 1_000_000_000
        });
        let link_ns = self.master_link_deadline_ns();
        let failover_ns = repl.failover.as_ref().and_then(|f| f.end_ns);
        [wait_ns, ping_ns, link_ns, failover_ns]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(u64::MAX)
    }

    /// WAITs past their deadline get their count; the replicas get a PING
    /// every `repl-ping-replica-period` seconds (it keeps their
    /// `repl-timeout` from firing on an idle primary).
    pub(super) fn repl_timers(&mut self, now: Now) {
        if !self.server.repl.waiters.is_empty() {
            primary::answer_waiters(&mut self.server, &mut self.clients, now.mono_ns, true);
            let mut args = std::mem::take(&mut self.args);
            self.process_unblocked(now, &mut args);
            self.args = args;
        }
        let repl = &self.server.repl;
        // No PING during a failover: the offset must hold still for the
        // target to catch up (Redis's `manual_failover_in_progress`).
        // The period is read only when a ping could be sent: this runs
        // every turn, and reading a config parameter parses its text.
        let pings = !repl.replicas.is_empty() && !repl.is_replica() && repl.failover.is_none();
        let due = pings && {
            let period_s = primary::config_u64(&self.server.config, "repl-ping-replica-period");
            repl.last_ping_mono_ns + period_s.max(1) * 1_000_000_000 <= now.mono_ns
        };
        if due {
            let repl = &mut self.server.repl;
            repl.last_ping_mono_ns = now.mono_ns;
            // Between inputs the propagated stream is empty: the PING does
            // not cut a unit in two.
            let pending = self.server.propagation.take();
            primary::feed(repl, &mut self.clients, &pending);
            primary::feed(repl, &mut self.clients, primary::PING);
            self.transmit_replicas();
            debug_assert!(pending.is_empty());
        }
        self.master_link_timers(now);
        self.update_failover(now);
    }
}
