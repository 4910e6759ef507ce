//! Planted bug [`PlantedBug::ExecInterleaved`], the engine's side: the part
//! of an EXEC's queue that `crate::multi::planted_split_exec` held back
//! runs at the end of the next input the engine handles, after that
//! input's own commands, so another client's commands fall between one
//! transaction's commands. A child module of `engine` because it drives
//! the engine's private request path; nothing here runs on a clean engine.

use super::Engine;
use crate::client::ClientId;
use crate::multi::Queued;
use crate::planted::PlantedBug;
use crate::time::Now;

/// Held-back EXEC tails: `(client, EXEC's request_seq, queue)`.
pub(super) type ExecTails = Vec<(ClientId, u64, Vec<Queued>)>;

impl Engine {
    /// The tails held back so far, to run once the caller's input ran.
    pub(super) fn planted_take_exec_tails(&mut self) -> ExecTails {
        std::mem::take(&mut self.server.planted.exec_tails)
    }

    /// Runs `tails` (from [`Engine::planted_take_exec_tails`]) as EXEC would
    /// have: each command recorded under its own queued `request_seq` with
    /// the EXEC's in `in_exec`, its reply appended to the client's output
    /// (EXEC's array header already counted it). A tail of several commands
    /// is split again, so it trickles out one command per input.
    pub(super) fn planted_run_exec_tails(&mut self, now: Now, tails: ExecTails) {
        if tails.is_empty() {
            return;
        }
        debug_assert_eq!(
            self.server.config.planted_bug,
            Some(PlantedBug::ExecInterleaved)
        );
        for (client, exec_seq, tail) in tails {
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
