//! `timeout`: the cron closes clients idle for longer than `timeout`
//! seconds (Redis 7.0's `clientsCronHandleTimeout`).
//!
//! Like Redis, it spares clients that are idle by design: a client blocked
//! in BLPOP & co. (its own timeout governs it), a subscriber (pub/sub
//! clients only listen) and a MONITOR (Redis flags monitors as replicas,
//! which are never timed out). Idle time is measured from the client's
//! last input, in the host's monotonic time, with Redis's strict "more
//! than `timeout` whole seconds".

use std::collections::VecDeque;

use crate::client::{Client, ClientId, Clients, CloseReason};
use crate::clients::close_client;
use crate::event::Event;
use crate::time::Now;

/// Whether `c` has been idle for more than `timeout_s` at `now` and may be
/// closed for it.
pub fn is_idle_too_long(c: &Client, now: Now, timeout_s: u64) -> bool {
    if timeout_s == 0 || c.closing.is_some() {
        return false;
    }
    if c.blocked.is_some() || !c.subscriptions.is_empty() || c.monitor {
        return false;
    }
    let idle_s = now.mono_ns.saturating_sub(c.last_interaction.mono_ns) / 1_000_000_000;
    idle_s > timeout_s
}

/// Closes every client idle for more than `timeout` (none when it is 0),
/// with [`CloseReason::IdleTimeout`], except those `waiting` says wait on
/// the server (held by CLIENT PAUSE: Redis's postponed clients are blocked
/// clients, which its timeout check skips). One pass over the clients:
/// Redis visits at least `numclients / hz` per tick, so every client within
/// a second; visiting all of them each tick is the same rule, sooner.
pub fn close_idle_clients(
    timeout_s: u64,
    clients: &mut Clients,
    events: &mut VecDeque<Event>,
    now: Now,
    waiting: impl Fn(ClientId) -> bool,
) {
    if timeout_s == 0 {
        return;
    }
    let idle: Vec<ClientId> = clients
        .values()
        .filter(|c| is_idle_too_long(c, now, timeout_s) && !waiting(c.id))
        .map(|c| c.id)
        .collect();
    for id in idle {
        close_client(clients, events, id, CloseReason::IdleTimeout);
    }
}
