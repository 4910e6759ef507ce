//! A request whose script is suspended between slices (see
//! [`crate::scripting::busy`]): its finish waits for the script's end, so
//! that the EVAL is counted, recorded and propagated once, after its
//! `redis.call`s, as when a script runs inside one command.

use super::{Caller, Done, Pipeline, Resolved, Touch};
use crate::client::ClientId;
use crate::cmd::REPLY_BYTES_PER_WORK_UNIT;
use crate::sizes::Measuring;
use crate::time::Now;

/// What [`Pipeline::finish`] needs of a suspended EVAL, kept from its
/// first slice to its last.
pub struct SuspendedEval {
    pub(super) request_seq: u64,
    pub(super) db: usize,
    pub(super) command: Option<Resolved>,
    /// Work and time of the slices so far.
    pub(super) work_units: u64,
    pub(super) duration_ns: u64,
    pub(super) touch: Option<Box<Touch>>,
    /// The keys client-side caching remembers once the EVAL finishes.
    pub(super) tracked: Option<Box<crate::tracking::CallKeys>>,
    pub(super) measuring: Option<Box<Measuring>>,
}

impl Pipeline<'_> {
    /// The request's script did not end in this slice: the client keeps
    /// its output, the request waits.
    pub(super) fn suspend(&mut self, client: ClientId, eval: SuspendedEval, reply: &mut Vec<u8>) {
        debug_assert!(self.server.suspended_eval.is_none());
        if let Some(c) = self.clients.get_mut(&client) {
            c.output = std::mem::take(reply);
        }
        self.events.push_back(crate::event::Event::ScriptSlice {
            client,
            request_seq: eval.request_seq,
            work_units: eval.work_units,
        });
        self.server.suspended_eval = Some(Box::new(eval));
    }

    /// Runs the next slice of the suspended script, on its client as its
    /// EVAL; finishes the EVAL when the script ends. Returns whether a
    /// script is still suspended.
    pub fn resume_script(&mut self, now: Now) -> bool {
        let Some(client) = self.server.scripting.running_client() else {
            return false;
        };
        let mut eval = *self
            .server
            .suspended_eval
            .take()
            .expect("a suspended script has its request");
        let (_, spec) = eval.command.expect("a suspended request ran its command");
        let request_seq = eval.request_seq;
        let c = self
            .clients
            .get_mut(&client)
            .expect("a script's client stays until it ends");
        let protocol = c.protocol;
        let mut reply = std::mem::take(&mut c.output);
        let reply_start = reply.len();
        self.server.stats.now = now;
        self.server.scripting.request_seq = eval.request_seq;
        let resume: crate::cmd::Handler = |ctx, _| crate::scripting::busy::resume(ctx);
        let handled = self.execute(
            now,
            (client, Caller::Request),
            (spec, resume),
            &mut [],
            (reply, protocol),
            false,
        );
        reply = handled.reply;
        let reply_bytes = (reply.len() - reply_start) as u64;
        let slice_work_units = handled.work_units - 1 + reply_bytes / REPLY_BYTES_PER_WORK_UNIT;
        eval.work_units += slice_work_units;
        eval.duration_ns += self.stopwatch.stop(slice_work_units, reply_bytes);
        if handled.suspended {
            self.server.suspended_eval = Some(Box::new(eval));
            self.clients.get_mut(&client).expect("client").output = reply;
            self.events.push_back(crate::event::Event::ScriptSlice {
                client,
                request_seq,
                work_units: slice_work_units,
            });
            return true;
        }
        let done = Done {
            caller: Caller::Request,
            client,
            request_seq: eval.request_seq,
            db: eval.db,
            command: eval.command,
            args: &[],
            work_units: eval.work_units,
            duration_ns: eval.duration_ns,
            touch: eval.touch,
            tracked: eval.tracked,
            measuring: eval.measuring,
            block: None,
            suspended: false,
        };
        self.finish(now, done, &mut reply, reply_start);
        false
    }
}
