//! CLIENT PAUSE, the engine's side: holding a request that must wait and
//! running the held clients when the pause ends. The pause itself is
//! [`crate::pause`]. (DEBUG SLEEP, which stalls the whole server rather
//! than some clients, is not a pause: it is an [`crate::Event::Stall`] for
//! the host.)

use super::Engine;
use crate::client::ClientId;
use crate::pause::must_wait;
use crate::time::Now;

impl Engine {
    /// The request in `args` must wait for the pause to end: `client` is
    /// held with it (`args` is left empty). False when it may run now.
    pub(super) fn hold_if_paused(
        &mut self,
        now: Now,
        client: ClientId,
        args: &mut Vec<Vec<u8>>,
    ) -> bool {
        let Some(mode) = self.server.pause.mode(now) else {
            return false;
        };
        let Some(c) = self.clients.get(&client) else {
            return false;
        };
        if c.closing.is_some() || !must_wait(&self.server, c, args, mode) {
            return false;
        }
        self.server.pause.hold(client, std::mem::take(args));
        true
    }

    /// Runs the held clients once the pause is over (its end passed, or
    /// CLIENT UNPAUSE ran during this input): each one's held request, then
    /// the rest of its query buffer, in the order they were held. Called
    /// before an input (a pause that ended goes before it, as in Redis,
    /// where it ends only in the cron), after it (its UNPAUSE) and from the
    /// timer; does nothing while the pause lasts.
    #[inline]
    pub(super) fn release_paused(&mut self, now: Now, args: &mut Vec<Vec<u8>>) {
        // The request path calls this on every input: nothing held, no work.
        if !self.server.pause.holds_anyone() {
            return;
        }
        self.release_paused_slow(now, args);
    }

    fn release_paused_slow(&mut self, now: Now, args: &mut Vec<Vec<u8>>) {
        let Some(released) = self.server.pause.take_released(now) else {
            return;
        };
        for (id, mut held) in released {
            // A request run again goes through the pause check again: a
            // pause begun by a client released before holds it anew.
            if self.hold_if_paused(now, id, &mut held) {
                continue;
            }
            let Some(c) = self.clients.get(&id) else {
                continue;
            };
            if c.closing.is_some() {
                continue;
            }
            let had_output = !c.pending_output().is_empty();
            self.execute(now, id, &mut held);
            self.after_command(now, id);
            self.process_input(now, id, args);
            let has_output = self
                .clients
                .get(&id)
                .is_some_and(|c| !c.pending_output().is_empty());
            if !had_output && has_output && !self.transmit.contains(&id) {
                self.transmit.push_back(id);
            }
        }
        self.process_unblocked(now, args);
    }

    /// [`Engine::release_paused`] from a timer.
    pub(super) fn release_paused_at(&mut self, now: Now) {
        if !self.server.pause.holds_anyone() {
            return;
        }
        let mut args = Vec::new();
        self.release_paused_slow(now, &mut args);
    }
}
