//! The server's writes: replies go out to the network when a CPU turn
//! ends (as Redis writes in `beforeSleep`), as far as the socket buffer
//! takes them, and pending closes are carried out.

use rand::Rng;

use super::{SimEvent, World};

impl World {
    /// Writes every pending reply and carries out pending closes.
    pub(super) fn release(&mut self) {
        let mut flush = std::mem::take(&mut self.pending_flush);
        for &slot in &flush {
            self.flush(slot);
        }
        flush.clear();
        self.pending_flush = flush;
        let mut closes = std::mem::take(&mut self.pending_close);
        for &slot in &closes {
            let cs = &mut self.conns[slot as usize];
            if cs.server_open {
                let at = cs.down.write_fin(self.now_ns);
                self.schedule(at, SimEvent::DownArrive { slot });
                self.server_disconnect(slot);
            }
        }
        closes.clear();
        self.pending_close = closes;
    }

    /// Writes as much of the engine's pending output for `slot` as the
    /// socket buffer takes, piece after piece (a big reply comes in chunks:
    /// `seedkv_engine::reply_chunks`). Bounded: each piece written is
    /// output consumed, and the engine holds finitely much.
    pub(super) fn flush(&mut self, slot: u32) {
        while self.flush_piece(slot) {}
    }

    /// Writes what it can of the engine's next piece of output for `slot`;
    /// returns whether all of it went and more is pending.
    fn flush_piece(&mut self, slot: u32) -> bool {
        let cs = &mut self.conns[slot as usize];
        if !cs.server_open {
            return false;
        }
        let pending = self.engine.pending_output(cs.id);
        let room = self
            .knobs
            .net
            .socket_buffer_bytes
            .saturating_sub(cs.down.unread_bytes());
        let n = pending.len().min(room);
        cs.write_blocked = n < pending.len();
        if n == 0 {
            return false;
        }
        let bytes = &pending[..n];
        self.trace.bytes(bytes);
        self.stats.bytes_down += n as u64;
        let queue = &mut self.queue;
        let counter = &mut self.pending_non_cron;
        let last = cs.down.write(
            self.now_ns,
            bytes,
            &self.knobs.net,
            &mut self.net_rng,
            |at| {
                *counter += 1;
                queue.push(at, SimEvent::DownArrive { slot });
            },
        );
        let id = cs.id;
        self.engine.consume_output(id, n);
        if self.faults_active
            && self.fault_rng.gen_range(0..1000) < self.knobs.faults.reset_reply_per_mille
        {
            let at = self
                .fault_rng
                .gen_range(self.now_ns..=last.max(self.now_ns));
            self.schedule(at, SimEvent::Reset { slot });
        }
        !self.conns[slot as usize].write_blocked && !self.engine.pending_output(id).is_empty()
    }
}
