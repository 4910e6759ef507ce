//! The engine's side of the hook of planted bugs (see [`crate::planted`]):
//! running the work a planted bug held back, which needs the engine's
//! private request path. Nothing here runs on a clean engine (the held
//! work is empty).

use super::Engine;
use crate::planted::Held;
use crate::time::Now;

impl Engine {
    /// Runs `held` (from a seam): its writes, then its EXEC tails, each as
    /// EXEC would have run it (its replies appended to the client's output,
    /// whose EXEC array header already counted them).
    pub(super) fn run_held(&mut self, now: Now, mut held: Held) {
        crate::planted::run_held_writes(&mut self.server, &mut held);
        for (client, exec_seq, tail) in held.take_exec_tails() {
            let Some(c) = self.clients.get_mut(&client) else {
                continue;
            };
            if c.closing.is_some() {
                continue;
            }
            let had_output = !c.pending_output().is_empty();
            let output = std::mem::take(&mut c.output);
            let output = self
                .pipeline()
                .run_exec(now, client, output, tail, exec_seq);
            let Some(c) = self.clients.get_mut(&client) else {
                continue;
            };
            c.output = output;
            if !had_output && !c.pending_output().is_empty() {
                self.transmit.push_back(client);
            }
        }
    }
}
