//! Fault injection: the draws made each time a batch is sent (a reset
//! while the request is on the wire, a wall-clock jump, an idle server)
//! and the connection reset itself.

use rand::Rng;

use super::{SimEvent, World};
use crate::knobs::{CLOCK_JUMP_MS_MAX, IDLE_MS_MAX};
use crate::net::Pipe;

impl World {
    /// Fault draws made each time a batch is sent.
    pub(super) fn maybe_faults_after_send(&mut self, slot: usize, arrival_last_ns: u64) {
        if !self.faults_active {
            return;
        }
        if self.ops_sent >= self.faults_stop_after_ops {
            self.faults_active = false;
            self.history.faults_end_ns = self.now_ns;
            return;
        }
        let f = self.knobs.faults.clone();
        if self.fault_rng.gen_range(0..1000) < f.reset_request_per_mille {
            // Somewhere while the request is on the wire or being read.
            let at = self
                .fault_rng
                .gen_range(self.now_ns..=arrival_last_ns.max(self.now_ns));
            self.schedule(at, SimEvent::Reset { slot: slot as u32 });
        }
        if self.fault_rng.gen_range(0..1000) < f.clock_jump_per_mille {
            let jump_ms = self.fault_rng.gen_range(1..=CLOCK_JUMP_MS_MAX);
            self.clock_skew_us += jump_ms * 1000;
            self.stats.clock_jumps_count += 1;
            self.stats.faults_count += 1;
            self.trace.word(jump_ms);
            self.trace.line(
                self.now_ns,
                format_args!("  fault: wall clock +{jump_ms} ms"),
            );
        }
        if self.fault_rng.gen_range(0..1000) < f.idle_per_mille {
            let idle_ms = self.fault_rng.gen_range(1..=IDLE_MS_MAX);
            self.idle_until_ns = self.idle_until_ns.max(self.now_ns + idle_ms * 1_000_000);
            self.stats.idles_count += 1;
            self.stats.faults_count += 1;
            self.trace
                .line(self.now_ns, format_args!("  fault: idle {idle_ms} ms"));
        }
    }

    /// Both ends lose the connection at once; whatever was in flight is lost.
    pub(super) fn reset(&mut self, slot: u32, reason: &str) {
        let cs = &mut self.conns[slot as usize];
        if !cs.server_open && !cs.client_open {
            return;
        }
        self.stats.resets_count += 1;
        self.stats.faults_count += 1;
        let client = cs.client;
        let id = cs.id;
        let was_client_open = cs.client_open;
        cs.up = Pipe::default();
        cs.down = Pipe::default();
        cs.client_open = false;
        if cs.server_open {
            cs.server_open = false;
            self.record_server_disconnect(id);
            self.engine.disconnect(self.now(), id);
            self.drain_engine(None);
        }
        if was_client_open {
            self.trace
                .line(self.now_ns, format_args!("  conn {} {reason}", id.0));
            self.history.conns[slot as usize]
                .closed
                .get_or_insert((self.now_ns, reason.to_string()));
            self.forget_outstanding(client);
            self.schedule_reconnect(client);
        }
    }
}
