//! Redis's `disconnectAllBlockedClients`: a server that becomes a replica
//! (REPLICAOF host port, or a FAILOVER handing over) ends every blocked
//! command with an error and closes its connection after the reply. What
//! the clients blocked for (a list push, a stream entry, replicas' acks)
//! will not happen on a replica the way it would have on the primary they
//! connected to. Clients held by a pause are not blocked in this sense:
//! they run when the pause ends, as Redis's postponed clients do.

use std::collections::VecDeque;

use crate::client::{ClientId, CloseReason};
use crate::pipeline::Pipeline;
use crate::stopwatch::WorkUnitStopwatch;
use crate::time::Now;

use super::Parts;

/// The reply each blocked client gets.
pub const UNBLOCKED: &[u8] =
    b"-UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)\r\n";

/// Ends every blocked command (BLPOP and the other key waits, XREAD and
/// XREADGROUP BLOCK, WAIT) with [`UNBLOCKED`] and closes its client after
/// the reply. Clients go in id order.
pub fn disconnect_blocked_clients(p: &mut Parts, now: Now) {
    let blocked: Vec<ClientId> = p
        .clients
        .iter()
        .filter(|(_, c)| c.closing.is_none() && (c.blocked.is_some() || c.waiting_acks))
        .map(|(id, _)| *id)
        .collect();
    for id in blocked {
        let c = p.clients.get_mut(&id).expect("listed above");
        if let Some(parked) = p.server.blocking.unpark(c) {
            // Finished as CLIENT UNBLOCK ... ERROR finishes it (a call with
            // an error reply, not run again), except that Redis does not
            // count it as a failed call.
            let mut transmit = VecDeque::new();
            let mut pipeline = Pipeline {
                server: &mut *p.server,
                clients: &mut *p.clients,
                events: &mut *p.events,
                transmit: &mut transmit,
                stopwatch: &mut WorkUnitStopwatch,
            };
            pipeline.finish_unserved(now, id, &parked, UNBLOCKED);
            debug_assert!(transmit.is_empty(), "an unserved finish feeds no monitor");
            let name = crate::stats::CommandName::of(None, parked.spec);
            p.server.stats.forgive_failure(name);
        } else {
            // WAIT: its command already ran; the reply is the error.
            c.waiting_acks = false;
            c.output.extend_from_slice(UNBLOCKED);
            p.server.repl.waiters.retain(|w| w.client != id);
            p.server.stats.record_error_reply(UNBLOCKED);
        }
        crate::clients::close_client(p.clients, p.events, id, CloseReason::Quit);
    }
}
