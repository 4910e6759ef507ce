//! Planted bugs on the way out: [`PlantedBug::ReplyToWrongConnection`] and
//! [`PlantedBug::PartialWriteDropsReply`].

use std::collections::VecDeque;

use super::{Planted, PlantedBug, MISROUTED_REPLY_EVERY};
use crate::client::{ClientId, Clients};

impl Planted {
    /// `reply[reply_start..]` is the reply `client`'s command just produced.
    pub(super) fn reply_written(
        &mut self,
        (clients, transmit): (&mut Clients, &mut VecDeque<ClientId>),
        client: ClientId,
        reply: &mut Vec<u8>,
        reply_start: usize,
    ) {
        match self.bug {
            PlantedBug::PartialWriteDropsReply if clients.get(&client).is_some() => {
                self.last_reply_start.insert(client, reply_start);
            }
            PlantedBug::ReplyToWrongConnection => {
                self.replies_count += 1;
                if self.replies_count < MISROUTED_REPLY_EVERY {
                    return;
                }
                self.replies_count = 0;
                misroute(clients, transmit, client, reply, reply_start);
            }
            _ => {}
        }
    }

    /// The host wrote `client`'s `output` up to `sent`.
    pub(super) fn output_written(&self, client: ClientId, output: &mut Vec<u8>, sent: usize) {
        if self.bug != PlantedBug::PartialWriteDropsReply || sent >= output.len() {
            return;
        }
        // Planted bug (PlantedBug::PartialWriteDropsReply): after a short
        // write the buffer is cut back to where the last reply began (or to
        // the write position, if the write stopped inside it), so the last
        // pipelined reply, or its unsent tail, is lost and its client waits
        // for it forever.
        let last_reply_start = self.last_reply_start.get(&client).copied().unwrap_or(0);
        output.truncate(last_reply_start.clamp(sent, output.len()));
    }

    /// The first `drained` bytes of `client`'s output were dropped.
    pub(super) fn output_compacted(&mut self, client: ClientId, drained: usize) {
        if let Some(start) = self.last_reply_start.get_mut(&client) {
            *start = start.saturating_sub(drained);
        }
    }
}

/// Planted bug (PlantedBug::ReplyToWrongConnection): the reply is appended
/// to the output of the next live connection (by id, wrapping) instead of
/// its own.
fn misroute(
    clients: &mut Clients,
    transmit: &mut VecDeque<ClientId>,
    client: ClientId,
    reply: &mut Vec<u8>,
    reply_start: usize,
) {
    let other = clients
        .range(ClientId(client.0 + 1)..)
        .chain(clients.range(..client))
        .find(|(_, c)| c.closing.is_none())
        .map(|(&id, _)| id);
    let Some(other) = other else { return };
    let o = clients.get_mut(&other).expect("found above");
    let had_output = !o.pending_output().is_empty();
    o.output.extend_from_slice(&reply[reply_start..]);
    reply.truncate(reply_start);
    if !had_output {
        transmit.push_back(other);
    }
}
