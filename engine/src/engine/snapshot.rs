//! A snapshot read, the engine's side (see [`crate::snapshot_read`]): the
//! next slice runs at every `handle_timeout` (due at once while a read is
//! open), other clients' input is served between slices, and the reader's
//! own requests wait in its query buffer until its reply is out.

use super::*;

impl Engine {
    /// Whether a snapshot read is being produced in slices.
    pub fn snapshot_read_running(&self) -> bool {
        self.server.snapshot_read.is_some()
    }

    /// Whether `client`'s requests wait for its own snapshot read's reply.
    pub(super) fn waits_for_snapshot(&self, client: ClientId) -> bool {
        self.server
            .snapshot_read
            .as_ref()
            .is_some_and(|r| r.client == client)
    }

    /// Runs the open read's next slice; when it was the last, the reply
    /// goes out and the reader's pipelined requests run. With no read,
    /// nothing.
    pub(super) fn snapshot_turn(&mut self, now: Now) {
        let Some(read) = self.server.snapshot_read.as_deref() else {
            return;
        };
        let (client, request_seq) = (read.client, read.request_seq);
        if self
            .clients
            .get(&client)
            .is_none_or(|c| c.closing.is_some())
        {
            drop(crate::snapshot_read::close(&mut self.server));
            return;
        }
        self.server.stats.now = now;
        let budget = self.server.config.snapshot_slice_elements.max(1);
        let skip_saved = self.server.planted.snapshot_skips_saved();
        let slice = crate::snapshot_read::slice(&mut self.server, budget, skip_saved);
        self.events.push_back(Event::ReplySlice {
            client,
            request_seq,
            work_units: slice.work_units,
            reply_bytes: slice.reply_bytes,
            elements: slice.elements,
            last: slice.done,
        });
        if crate::snapshot_read::over_hard_limit(&self.server, &self.clients) {
            drop(crate::snapshot_read::close(&mut self.server));
            if let Some(c) = self.clients.get_mut(&client) {
                c.clear_output();
            }
            self.close(client, CloseReason::OutputBufferLimit);
            return;
        }
        if !slice.done {
            return;
        }
        let finished = crate::snapshot_read::finish(&mut self.server).expect("open");
        let c = self.clients.get_mut(&client).expect("checked above");
        let was_idle = c.pending_output().is_empty();
        if finished.chunks.len() <= 1 {
            // One chunk at most: copying it is as cheap as queueing it
            // (bounded by the chunk size), and the output stays one buffer.
            c.output.extend_from_slice(&finished.header);
            for chunk in &finished.chunks {
                c.output.extend_from_slice(chunk);
            }
        } else {
            let moved = c.queue_output(&finished.header, finished.chunks);
            // The ordinary buffer's offsets now belong to the queue.
            self.server.planted.output_compacted(client, moved);
        }
        if was_idle && !self.transmit.contains(&client) {
            self.transmit.push_back(client);
        }
        self.check_output_limit(now, client);
        // The reader's own pipelined requests, which waited.
        self.serve_waiting_input(now);
        self.after_input_persist(now);
    }

    /// Produces the open read to its end at once (its data is about to go
    /// whole: a dataset load).
    pub(super) fn finish_snapshot_read_now(&mut self, now: Now) {
        // Each turn produces at least one element or ends the read; the
        // bound is the read's size, which the keyspace bounds.
        while self.snapshot_read_running() {
            self.snapshot_turn(now);
        }
    }
}
