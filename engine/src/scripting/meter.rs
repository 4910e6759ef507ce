//! Work done by the Rust libraries (cjson, cmsgpack, struct), charged as
//! VM instructions, the unit a script's work is counted in.
//!
//! A script's work is counted by the count hook every
//! [`HOOK_INSTRUCTIONS`] VM instructions; one call of a Rust function is
//! one instruction to the VM however long it runs, so `cjson.encode` of
//! a huge table, or `cjson.decode` of a long text, would run unseen: not
//! charged, not killable, not suspended at the end of a slice. The
//! libraries therefore report their loops here (one unit per value, per
//! few bytes), and [`Meter::advance`] does what the hook does at the same
//! points: counts, stops the run past `kill_at` (SCRIPT KILL, the busy
//! threshold of a run that cannot give control back, FUNCTION LOAD's
//! timeout), and suspends it at the end of a slice.

use std::cell::Cell;
use std::rc::Rc;

use mlua::Lua;

use super::lua::{HOOK_INSTRUCTIONS, SLICE_INSTRUCTIONS};

/// The counters a Lua state's work is charged to, kept in its app data.
pub struct Meter {
    pub instructions: Rc<Cell<u64>>,
    pub kill_at: Rc<Cell<u64>>,
    pub slice_at: Rc<Cell<u64>>,
    /// Set while FUNCTION LOAD runs a library's code: a stop is then the
    /// load timeout.
    pub loading: Option<Rc<Cell<bool>>>,
}

impl Meter {
    fn stop(&self) -> mlua::Error {
        let msg: &[u8] = if self.loading.as_ref().is_some_and(|l| l.get()) {
            b"ERR FUNCTION LOAD timeout"
        } else {
            b"ERR Script killed by user with SCRIPT KILL..."
        };
        mlua::Error::external(super::api::ScriptError(msg.to_vec()))
    }

    /// Counts `n` instructions; stops or suspends the run as the count hook
    /// does.
    pub fn advance(&self, lua: &Lua, n: u64) -> mlua::Result<()> {
        let counted = &self.instructions;
        counted.set(counted.get().saturating_add(n));
        if counted.get() > self.kill_at.get() {
            // Raised at every call from now on, so that a pcall in the
            // script cannot keep it alive.
            return Err(self.stop());
        }
        if counted.get() >= self.slice_at.get() {
            self.slice_at
                .set(counted.get().saturating_add(SLICE_INSTRUCTIONS));
            // The task's body registered it: this suspends the script's
            // stack until the engine resumes it.
            let slice = lua
                .app_data_ref::<super::api::RunFunctions>()
                .map(|run| run.slice.clone());
            if let Some(slice) = slice {
                slice.call::<()>(())?;
            }
            // SCRIPT KILL may have come while the run was suspended.
            if counted.get() > self.kill_at.get() {
                return Err(self.stop());
            }
        }
        Ok(())
    }
}

/// Work of one library call, reported to the state's [`Meter`] in steps of
/// [`HOOK_INSTRUCTIONS`], so that the bookkeeping costs little per unit.
pub struct Work<'a> {
    lua: &'a Lua,
    meter: Option<Rc<Meter>>,
    pending: u64,
}

impl<'a> Work<'a> {
    pub fn new(lua: &'a Lua) -> Work<'a> {
        let meter = lua.app_data_ref::<Rc<Meter>>().map(|m| Rc::clone(&m));
        Work {
            lua,
            meter,
            pending: 0,
        }
    }

    /// Adds `n` instructions' worth of work.
    pub fn add(&mut self, n: u64) -> mlua::Result<()> {
        self.pending = self.pending.saturating_add(n);
        if self.pending >= u64::from(HOOK_INSTRUCTIONS) {
            return self.flush();
        }
        Ok(())
    }

    /// Work proportional to `bytes` bytes copied or scanned.
    pub fn bytes(&mut self, bytes: usize) -> mlua::Result<()> {
        self.add((bytes as u64) / BYTES_PER_INSTRUCTION)
    }

    /// Charges what is pending, a hook's step at a time, so that a large
    /// charge reaches every slice end and kill check it passes.
    pub fn flush(&mut self) -> mlua::Result<()> {
        let Some(meter) = &self.meter else {
            self.pending = 0;
            return Ok(());
        };
        while self.pending > 0 {
            let step = self.pending.min(u64::from(HOOK_INSTRUCTIONS));
            self.pending -= step;
            meter.advance(self.lua, step)?;
        }
        Ok(())
    }
}

impl Drop for Work<'_> {
    /// What an error left pending is still charged (a stop it would raise
    /// is raised at the next hook).
    fn drop(&mut self) {
        if let Some(meter) = &self.meter {
            let counted = &meter.instructions;
            counted.set(counted.get().saturating_add(self.pending));
        }
    }
}

/// Bytes a VM instruction's worth of work copies or scans (a VM
/// instruction costs about as much as copying a few words).
pub const BYTES_PER_INSTRUCTION: u64 = 16;

/// Instructions charged per value encoded or decoded: a table access from
/// Rust through mlua costs several VM instructions' worth.
pub const VALUE_INSTRUCTIONS: u64 = 4;
