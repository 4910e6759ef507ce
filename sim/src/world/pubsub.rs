//! Message routing for subscribed clients: pub/sub messages answer no
//! request, so they are told apart from replies before a reply is matched
//! to its request.

use seedkv_engine::resp::Frame;

use super::{frame_summary, World};
use crate::history::{Delivery, Invalidation};

impl World {
    /// Routes one received frame of a client that may be subscribed: a
    /// pub/sub message is recorded (`History::pubsub`) and handed to the
    /// workload; a frame that is part of a reply of several frames is kept
    /// until the last one. Returns the frame (or the gathered array of
    /// frames) that answers the oldest outstanding request, if complete.
    pub(super) fn pubsub_frame(&mut self, client: u32, conn: u64, frame: Frame) -> Option<Frame> {
        let c = &mut self.clients[client as usize];
        if c.workload.takes_invalidations() {
            if let Some(keys) = Invalidation::parse(&frame) {
                let before_seq = c
                    .outstanding
                    .front()
                    .map_or(c.seq_next, |&i| self.history.ops[i].seq_in_conn);
                if self.trace.printing() {
                    self.trace.line(
                        self.now_ns,
                        format_args!(
                            "  client {client} conn {conn} invalidation {}",
                            frame_summary(&frame)
                        ),
                    );
                }
                c.workload.on_invalidation(keys.as_deref());
                self.history.tracking.invalidations.push(Invalidation {
                    conn,
                    client,
                    at_ns: self.now_ns,
                    before_seq,
                    keys,
                });
                return None;
            }
        }
        if c.workload.takes_messages() {
            if let Some((kind, pattern, channel, payload)) = Delivery::parse(&frame) {
                let before_seq = c
                    .outstanding
                    .front()
                    .map_or(c.seq_next, |&i| self.history.ops[i].seq_in_conn);
                let delivery = Delivery {
                    conn,
                    client,
                    at_ns: self.now_ns,
                    before_seq,
                    kind,
                    pattern,
                    channel,
                    payload,
                };
                if self.trace.printing() {
                    self.trace.line(
                        self.now_ns,
                        format_args!(
                            "  client {client} conn {conn} message {}",
                            frame_summary(&frame)
                        ),
                    );
                }
                c.workload.on_message(&delivery);
                self.history.pubsub.deliveries.push(delivery);
                return None;
            }
        }
        let wanted = c.reply_frames.front().copied().unwrap_or(1);
        if wanted <= 1 {
            c.reply_frames.pop_front();
            return Some(frame);
        }
        c.reply_parts.push(frame);
        if c.reply_parts.len() < wanted {
            return None;
        }
        c.reply_frames.pop_front();
        Some(Frame::Array(std::mem::take(&mut c.reply_parts)))
    }
}
