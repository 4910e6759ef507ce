//! The pipeline's seam for the planted bugs (see [`crate::planted`]) that
//! act on a reply just produced; nothing here runs on a clean engine.

use super::Pipeline;
use crate::client::ClientId;
use crate::planted::{PlantedBug, MISROUTED_REPLY_EVERY};

/// The planted bugs that act on a reply just produced by `client`.
pub(super) fn planted_after_reply(
    p: &mut Pipeline,
    client: ClientId,
    reply: &mut Vec<u8>,
    reply_start: usize,
) {
    match p.server.config.planted_bug {
        Some(PlantedBug::PartialWriteDropsReply) => {
            if let Some(c) = p.clients.get_mut(&client) {
                c.planted_last_reply_start = reply_start;
            }
        }
        Some(PlantedBug::ReplyToWrongConnection) => {
            p.server.planted.replies_count += 1;
            if p.server.planted.replies_count < MISROUTED_REPLY_EVERY {
                return;
            }
            p.server.planted.replies_count = 0;
            // Planted bug (PlantedBug::ReplyToWrongConnection): every
            // Nth reply is appended to the output of the next live
            // connection (by id, wrapping) instead of its own.
            let other = p
                .clients
                .range(ClientId(client.0 + 1)..)
                .chain(p.clients.range(..client))
                .find(|(_, c)| c.closing.is_none())
                .map(|(&id, _)| id);
            let Some(other) = other else { return };
            let o = p.clients.get_mut(&other).expect("found above");
            let had_output = !o.pending_output().is_empty();
            o.output.extend_from_slice(&reply[reply_start..]);
            reply.truncate(reply_start);
            if !had_output {
                p.transmit.push_back(other);
            }
        }
        _ => {}
    }
}
