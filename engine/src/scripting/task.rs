//! A script's run as a task that can give control back to the host
//! between slices of VM instructions, so that a long script keeps running
//! while the engine answers other clients `-BUSY` (Redis's
//! `busy-reply-threshold`), and SCRIPT KILL can stop it.
//!
//! Why a stackful coroutine. Lua 5.1 cannot yield from a count hook
//! through mlua, nor across a C boundary (`pcall`, metamethods, the
//! prelude's protected call), so Lua's own coroutines cannot suspend an
//! arbitrary script. The script's Lua call therefore runs on a stack of
//! its own ([`corosensei`]); the count hook calls a function that
//! suspends that stack, and the engine resumes it on its next turn.
//!
//! Why no reference into the server crosses a suspension. The coroutine's
//! body owns only Lua handles (the state, the compiled function, the
//! prelude's entry points) and the arguments. Everything that needs the
//! server travels as a message: `redis.call` (the prelude's `host`)
//! suspends with [`Suspend::Host`] and its arguments, the engine runs the
//! host function with its own `Ctx` and resumes with the result. The
//! functions that suspend are created in an mlua scope inside the body,
//! so they borrow the body's `Yielder` and cannot outlive it: no `unsafe`
//! is needed anywhere. While the coroutine is suspended the engine runs
//! only commands that do not touch the Lua state (the busy mode's
//! SCRIPT KILL, SHUTDOWN, MULTI bookkeeping); the host function's own Lua
//! calls happen while the script is inside a C function call, where the
//! Lua API may be used as from any C function.
//!
//! The stack is allocated once and reused by every run
//! ([`Scripting::spare_stack`](super::Scripting)).

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use mlua::{Function, Lua, MultiValue, Table, Value};

use super::api;

/// Bytes of the stack a script's Lua runs on. Lua-to-Lua calls do not
/// use it (Lua 5.1 keeps them on its own heap stack); C-level recursion
/// (pcall, metamethods, `table.sort` comparators, the parser of
/// `loadstring`) is bounded by `LUAI_MAXCCALLS` (200) levels of a few
/// hundred bytes each. The host function runs on the engine's stack. The
/// Rust libraries recurse too: cjson and cmsgpack follow up to 1000
/// levels of nesting (`cjson::NESTING_MAX`), a few hundred bytes to a few
/// KiB a level in an unoptimised build; 8 MiB holds that with room to
/// spare (the pages are touched only as deep as a run goes).
pub const SCRIPT_STACK_BYTES: usize = 8 << 20;

/// Why a task gave control back.
pub enum Suspend {
    /// A slice of instructions ran out (see [`super::lua::SLICE_INSTRUCTIONS`]).
    Slice,
    /// The prelude's `host(op, ...)` (redis.call and friends): the engine
    /// runs it and resumes with [`Resume::Host`].
    Host(MultiValue),
}

/// What a task is resumed with.
pub enum Resume {
    /// Go on: the first resume, and the one after a [`Suspend::Slice`].
    Go,
    /// The result of the host function a [`Suspend::Host`] asked for.
    Host(mlua::Result<MultiValue>),
}

/// What a script's body returns: the prelude's `(ok, value)`.
pub type Outcome = mlua::Result<(bool, Value)>;

/// One step of a task, as the engine sees it.
pub enum Step {
    Suspended(Suspend),
    Done(Outcome),
}

type ScriptCoroutine = Coroutine<Resume, Suspend, Outcome, DefaultStack>;

/// A script's run on its own stack.
pub struct Task {
    coroutine: Option<ScriptCoroutine>,
}

/// How a run enters Lua: the prelude function that calls the script's
/// code in a protected call and returns `(ok, value)`.
pub enum Entry {
    /// EVAL: the sandbox prelude's `run(function, KEYS, ARGV)`.
    Eval { run: Function },
    /// FCALL: the functions prelude's `call(callback, keys, args)`.
    Function { call: Function },
}

/// What the body needs, all owned: Lua handles and the arguments.
pub struct Start {
    pub lua: Lua,
    pub function: Function,
    pub entry: Entry,
    pub keys: Vec<Vec<u8>>,
    pub argv: Vec<Vec<u8>>,
}

impl Task {
    /// A task that has not run yet; `stack` is reused from the last run.
    pub fn new(start: Start, stack: DefaultStack) -> Task {
        let coroutine =
            Coroutine::with_stack(stack, move |yielder, _first: Resume| body(yielder, start));
        Task {
            coroutine: Some(coroutine),
        }
    }

    /// Runs the task until it suspends or ends.
    pub fn resume(&mut self, resume: Resume) -> Step {
        let coroutine = self
            .coroutine
            .as_mut()
            .expect("a task is resumed until done");
        debug_assert!(!coroutine.done());
        match coroutine.resume(resume) {
            CoroutineResult::Yield(suspend) => Step::Suspended(suspend),
            CoroutineResult::Return(outcome) => Step::Done(outcome),
        }
    }

    /// The stack of a task that has ended, for the next one.
    pub fn into_stack(mut self) -> Option<DefaultStack> {
        let coroutine = self.coroutine.take()?;
        if coroutine.done() {
            Some(coroutine.into_stack())
        } else {
            // A task dropped mid-run (see Drop) is not unwound: its stack
            // goes with it.
            self.coroutine = Some(coroutine);
            None
        }
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        // A task still suspended when the engine goes away (a crash in the
        // simulator, SHUTDOWN NOSAVE) is leaked rather than unwound:
        // unwinding would run through Lua's C frames, which longjmp-based
        // error handling does not survive. The engine ends soon after.
        if let Some(coroutine) = self.coroutine.take() {
            if !coroutine.done() {
                std::mem::forget(coroutine);
            }
        }
    }
}

/// The coroutine's body: the prelude's `run(function, env)` with the
/// suspending functions registered for the hook and for `host`.
fn body(yielder: &Yielder<Resume, Suspend>, start: Start) -> Outcome {
    let Start {
        lua,
        function,
        entry,
        keys,
        argv,
    } = start;
    lua.scope(|scope| {
        // Two closures and the KEYS and ARGV tables: bounded by the
        // request's size, so made without mlua's per-value pcall.
        let made = super::convert::unlimited(&lua, || {
            let host = scope.create_function(|_, args: MultiValue| {
                match yielder.suspend(Suspend::Host(args)) {
                    Resume::Host(result) => result,
                    Resume::Go => Ok(MultiValue::new()),
                }
            })?;
            let slice = scope.create_function(|_, ()| {
                let _ = yielder.suspend(Suspend::Slice);
                Ok(())
            })?;
            let (keys, argv) = (string_array(&lua, &keys)?, string_array(&lua, &argv)?);
            Ok((host, slice, keys, argv))
        });
        let (host, slice, keys, argv) = made?;
        lua.set_app_data(api::RunFunctions { host, slice });
        let outcome = match entry {
            Entry::Eval { run } => run.call::<(bool, Value)>((function, keys, argv)),
            Entry::Function { call } => call.call::<(bool, Value)>((function, keys, argv)),
        };
        lua.remove_app_data::<api::RunFunctions>();
        outcome
    })
}

fn string_array(lua: &Lua, items: &[Vec<u8>]) -> mlua::Result<Table> {
    let t = lua.create_table_with_capacity(items.len(), 0)?;
    for (i, item) in items.iter().enumerate() {
        t.raw_set(i + 1, lua.create_string(item)?)?;
    }
    Ok(t)
}
