//! A script that runs long, as Redis 7.0 runs it (script.c,
//! `scriptInterrupt`): it keeps running in slices (see [`super::task`]);
//! before `busy-reply-threshold` nothing else runs (other clients' input
//! waits in their query buffers); past it, the engine serves other clients
//! between slices in busy mode: commands flagged `allow-busy` run (SCRIPT
//! KILL, FUNCTION KILL, SHUTDOWN NOSAVE, MULTI/EXEC bookkeeping, ...) and
//! the rest get `-BUSY`. SCRIPT KILL stops a script that has not written.
//!
//! The engine drives it: the EVAL that starts a script runs its first
//! slice; if the script is not done, the handler leaves it here and marks
//! its [`Ctx`] suspended (no reply yet), and every `handle_timeout` (due at
//! once while a script is suspended) runs the next slice through
//! [`crate::pipeline::Pipeline::resume_script`]. Elapsed time is the host's
//! `now` minus the `now` the script started at, so the same inputs and
//! times give the same outputs.

use std::cell::Cell;
use std::rc::Rc;

use corosensei::stack::DefaultStack;

pub use super::task::Entry;
use super::task::{Outcome, Resume, Start, Step, Suspend, Task, SCRIPT_STACK_BYTES};
use super::{call, lua, Run, Scripting};
use crate::client::ClientId;
use crate::cmd::Ctx;
use crate::resp::Protocol;

/// Redis's `shared.slowevalerr`: the reply to commands refused while an
/// EVAL script is busy.
pub const BUSY_EVAL: &str =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";

/// Redis's `shared.slowscripterr`: the same while a function is busy.
pub const BUSY_FUNCTION: &str =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";

const NOT_BUSY: &str = "NOTBUSY No scripts in execution right now.";

const UNKILLABLE: &str = "UNKILLABLE Sorry the script already executed write commands against \
the dataset. You can either wait the script termination or kill the server in a hard way using \
the SHUTDOWN NOSAVE command.";

/// Which kind of Lua run is in progress: SCRIPT KILL stops only an EVAL,
/// FUNCTION KILL only a function (Redis's `SCRIPT_EVAL_MODE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScriptKind {
    Eval,
    Function,
}

impl ScriptKind {
    /// The `-BUSY` text (without the dash) while a script of this kind runs.
    pub fn busy_error(self) -> &'static str {
        match self {
            ScriptKind::Eval => BUSY_EVAL,
            ScriptKind::Function => BUSY_FUNCTION,
        }
    }

    /// The reply when a run of this kind fails outside the script's own
    /// protected call (Redis's texts for EVAL and FCALL).
    pub fn run_error(self, name: &str, e: &mlua::Error) -> String {
        match self {
            ScriptKind::Eval => format!("ERR Error running script (call to f_{name}): {e}"),
            ScriptKind::Function => format!("ERR Error running function {name}: {e}"),
        }
    }
}

/// What FUNCTION STATS shows of the run in progress.
pub struct RunningInfo<'a> {
    pub kind: ScriptKind,
    pub name: &'a str,
    pub command: &'a [Vec<u8>],
    pub duration_ms: u64,
}

/// A script's run between two slices.
pub struct Running {
    task: Task,
    lua: mlua::Lua,
    run: Run,
    /// The script's SHA or the function's name.
    name: String,
    /// The request's arguments (FUNCTION STATS `command`).
    command: Vec<Vec<u8>>,
    caller_db: usize,
    protocol: Protocol,
    kind: ScriptKind,
    client: ClientId,
    started_ns: u64,
    /// The Lua state's instruction counter, and how much of it is charged.
    instructions: Rc<Cell<u64>>,
    instructions_charged: u64,
    /// SCRIPT KILL sets it to 0: the count hook then raises.
    kill_at: Rc<Cell<u64>>,
    slice_at: Rc<Cell<u64>>,
    /// The run may give control back to the host (a request's EVAL, not
    /// one inside EXEC).
    suspendable: bool,
    /// Past `busy-reply-threshold`: other clients are served in busy mode.
    timed_out: bool,
}

/// The Lua state's counters a run reads and sets (see [`lua::Vm`]).
pub struct Counters {
    pub instructions: Rc<Cell<u64>>,
    pub kill_at: Rc<Cell<u64>>,
    pub slice_at: Rc<Cell<u64>>,
}

/// What to run, in the Lua state it lives in (EVAL's or the functions').
pub struct Target {
    pub kind: ScriptKind,
    /// An EVAL script's SHA, a function's name: errors and FUNCTION STATS
    /// name the run by it.
    pub name: String,
    pub lua: mlua::Lua,
    pub function: mlua::Function,
    pub entry: Entry,
    pub counters: Counters,
}

/// Prepares `target`'s run on its own stack; the error is the command's
/// reply. `command` is the request's arguments (FUNCTION STATS shows
/// them while a function runs).
pub fn start(
    ctx: &mut Ctx,
    run: Run,
    target: Target,
    (keys, argv): (Vec<Vec<u8>>, Vec<Vec<u8>>),
    command: Vec<Vec<u8>>,
) -> Result<Running, String> {
    debug_assert!(
        ctx.server.scripting.running.is_none(),
        "one script at a time"
    );
    let suspendable = ctx.may_suspend;
    let (protocol, caller_db, client, now_ns) = (
        ctx.protocol,
        ctx.client().db,
        ctx.client_id,
        ctx.now.mono_ns,
    );
    let stack = match ctx.server.scripting.spare_stack.take() {
        Some(stack) => stack,
        None => {
            DefaultStack::new(SCRIPT_STACK_BYTES).map_err(|e| format!("ERR script stack: {e}"))?
        }
    };
    let Target {
        kind,
        name,
        lua,
        function,
        entry,
        counters,
    } = target;
    let count = counters.instructions.get();
    // A run that cannot give control back is stopped at the threshold
    // (see `lua::BUSY_INSTRUCTIONS`); one that can runs until killed.
    let kill_at = if suspendable {
        u64::MAX
    } else {
        count.saturating_add(lua::BUSY_INSTRUCTIONS)
    };
    counters.kill_at.set(kill_at);
    counters
        .slice_at
        .set(count.saturating_add(lua::SLICE_INSTRUCTIONS));
    let begin = Start {
        lua: lua.clone(),
        function,
        entry,
        keys,
        argv,
    };
    Ok(Running {
        task: Task::new(begin, stack),
        lua,
        run,
        name,
        command,
        caller_db,
        protocol,
        kind,
        client,
        started_ns: now_ns,
        instructions: counters.instructions,
        instructions_charged: count,
        kill_at: counters.kill_at,
        slice_at: counters.slice_at,
        suspendable,
        timed_out: false,
    })
}

/// Runs `running` until it ends (then replies) or its slice runs out in a
/// suspendable run (then it waits in [`Scripting`] and the command is
/// marked suspended, without a reply).
pub fn drive(ctx: &mut Ctx, mut running: Running) {
    match slice(ctx, &mut running) {
        Some(outcome) => end(ctx, running, outcome),
        None => {
            ctx.server.scripting.running = Some(Box::new(running));
            ctx.suspended = true;
        }
    }
}

/// The next slice of the suspended script (the pipeline runs it on the
/// script's client, as its EVAL).
pub fn resume(ctx: &mut Ctx) {
    if let Some(running) = ctx.server.scripting.running.take() {
        debug_assert_eq!(running.client, ctx.client_id);
        drive(ctx, *running);
    }
}

/// One slice: the script's host calls are served on the engine's stack as
/// they come. The loop ends when the slice does; each turn runs Lua
/// instructions, charged as work, so its count is bounded by them.
fn slice(ctx: &mut Ctx, r: &mut Running) -> Option<Outcome> {
    let mut resume = Resume::Go;
    loop {
        let step = r.task.resume(resume);
        charge(ctx, r);
        match step {
            Step::Done(outcome) => return Some(outcome),
            Step::Suspended(Suspend::Host(args)) => {
                resume = Resume::Host(call::host(&r.lua, ctx, &mut r.run, args));
            }
            Step::Suspended(Suspend::Slice) if r.suspendable => return None,
            Step::Suspended(Suspend::Slice) => resume = Resume::Go,
        }
    }
}

/// Charges the instructions run since the last charge.
fn charge(ctx: &mut Ctx, r: &mut Running) {
    let run = r.instructions.get().wrapping_sub(r.instructions_charged);
    let units = run / lua::INSTRUCTIONS_PER_WORK_UNIT;
    ctx.work(units);
    r.instructions_charged = r
        .instructions_charged
        .wrapping_add(units * lua::INSTRUCTIONS_PER_WORK_UNIT);
}

fn end(ctx: &mut Ctx, running: Running, outcome: Outcome) {
    running.kill_at.set(u64::MAX);
    running.slice_at.set(u64::MAX);
    let Running {
        task,
        lua,
        run,
        name,
        caller_db,
        protocol,
        kind,
        ..
    } = running;
    ctx.server.scripting.spare_stack = task.into_stack();
    let about = (kind, &name[..], caller_db, protocol);
    super::finish_run(ctx, (&lua, run), about, outcome);
}

/// SCRIPT KILL (`kind` Eval) and FUNCTION KILL (`kind` Function), as
/// Redis's `scriptKill`: OK, and the script ends with "Script killed by
/// user" at its next hook; refused when none runs, when it wrote, or when
/// it is of the other kind.
pub fn kill(ctx: &mut Ctx, kind: ScriptKind) {
    let Some(running) = ctx.server.scripting.running.as_ref() else {
        return ctx.error(NOT_BUSY);
    };
    if running.run.wrote {
        return ctx.error(UNKILLABLE);
    }
    if running.kind != kind {
        return ctx.error(running.kind.busy_error());
    }
    running.kill_at.set(0);
    ctx.ok();
}

impl Scripting {
    /// The client whose script is suspended between slices.
    pub fn running_client(&self) -> Option<ClientId> {
        self.running.as_ref().map(|r| r.client)
    }

    /// The run in progress at `now_ns`, if any.
    pub fn running_info(&self, now_ns: u64) -> Option<RunningInfo<'_>> {
        self.running.as_ref().map(|r| RunningInfo {
            kind: r.kind,
            name: &r.name,
            command: &r.command,
            duration_ms: now_ns.saturating_sub(r.started_ns) / 1_000_000,
        })
    }

    /// The `-BUSY` text when a script runs past the threshold, else `None`:
    /// then other clients' commands are refused unless allowed while busy.
    pub fn busy_error(&self) -> Option<&'static str> {
        self.running
            .as_ref()
            .filter(|r| r.timed_out)
            .map(|r| r.kind.busy_error())
    }

    /// Marks the running script timed out once `threshold_ms` has passed
    /// since it started; true when it becomes so now (the engine then
    /// serves the input that waited).
    pub fn check_busy(&mut self, now_ns: u64, threshold_ms: u64) -> bool {
        let Some(r) = self.running.as_mut() else {
            return false;
        };
        let elapsed_ns = now_ns.saturating_sub(r.started_ns);
        if r.timed_out || elapsed_ns < threshold_ms.saturating_mul(1_000_000) {
            return false;
        }
        r.timed_out = true;
        true
    }
}
