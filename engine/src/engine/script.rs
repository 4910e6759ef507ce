//! A long script, the engine's side (see [`crate::scripting::busy`]): the
//! next slice runs at every `handle_timeout` (due at once while a script
//! is suspended); other clients' input waits until `busy-reply-threshold`
//! has passed, and is served in busy mode after it; when the script ends,
//! the input that waited runs.

use super::*;

impl Engine {
    /// Whether a script is suspended between slices.
    pub fn script_running(&self) -> bool {
        self.server.scripting.running_client().is_some()
    }

    /// Runs the suspended script's next slice; with no script, nothing.
    pub(super) fn script_turn(&mut self, now: Now) {
        let Some(client) = self.server.scripting.running_client() else {
            return;
        };
        self.server.stats.now = now;
        let became_busy = self.check_script_busy(now);
        let still_running = self.pipeline().resume_script(now);
        if let Some(c) = self.clients.get(&client) {
            if !c.pending_output().is_empty() && !self.transmit.contains(&client) {
                self.transmit.push_back(client);
            }
        }
        self.after_command(now, client);
        if !still_running {
            if self.script_client_gone.take() == Some(client) {
                self.disconnect(now, client);
            }
            // The script's own pipelined requests, then everyone's that
            // waited for it.
            self.serve_waiting_input(now);
            if self.server.blocking.has_ready() {
                self.pipeline().serve_ready_keys(now);
            }
        } else if became_busy {
            self.serve_waiting_input(now);
        }
        self.after_input_persist(now);
    }

    /// Marks the script timed out once the threshold has passed; true when
    /// it became so now. Redis logs the same warning then.
    pub(super) fn check_script_busy(&mut self, now: Now) -> bool {
        let threshold_ms = self.server.config.busy_reply_threshold_ms;
        let became = self.server.scripting.check_busy(now.mono_ns, threshold_ms);
        if became {
            self.events.push_back(Event::Log {
                level: crate::event::LogLevel::Warning,
                text: format!(
                    "Slow script detected: still in execution after {threshold_ms} milliseconds. \
                     You can try killing the script using the SCRIPT KILL command."
                ),
            });
        }
        became
    }

    /// Whether `client`'s requests wait in its query buffer for a script:
    /// its own (until the script ends), and everyone's until it is past
    /// `busy-reply-threshold`.
    pub(super) fn waits_for_script(&self, client: ClientId) -> bool {
        match self.server.scripting.running_client() {
            None => false,
            Some(id) if id == client => true,
            Some(_) => self.server.scripting.busy_error().is_none(),
        }
    }

    /// Runs the requests that waited in query buffers, clients in id order
    /// (the order is a function of the inputs, as everything the engine
    /// does).
    pub(super) fn serve_waiting_input(&mut self, now: Now) {
        let mut waiting: Vec<ClientId> = self
            .clients
            .iter()
            .filter(|(_, c)| c.parser.buffered_bytes() > 0 && c.closing.is_none())
            .map(|(&id, _)| id)
            .collect();
        waiting.sort_unstable();
        let mut args = std::mem::take(&mut self.args);
        // A request of the batch may start a new long script: the clients
        // after it then find their input waiting again (process_input
        // checks), which is what Redis's event loop does too.
        for id in waiting {
            self.process_input(now, id, &mut args);
        }
        self.process_unblocked(now, &mut args);
        self.args = args;
    }
}
