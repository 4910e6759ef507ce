//! Redis 7.0 functions: libraries of Lua functions loaded with FUNCTION
//! LOAD, called with FCALL / FCALL_RO, kept across FLUSHALL and saved with
//! the dataset (functions.c, function_lua.c).
//!
//! A library is its code (`#!lua name=<lib>` then Lua) and the functions
//! that code registered when it ran at load time. Function names are one
//! namespace across libraries and compare without case; library names
//! compare with case. Libraries and functions are kept in name order
//! (Redis's order is its dicts', seeded at random per process, so no
//! client can rely on it).
//!
//! Files: `metadata` (the shebang and the name rule), `prelude` (the Lua
//! environment shared by every library), `vm` (the functions' Lua state and
//! `redis.register_function`), `run` (FCALL), `payload` (FUNCTION DUMP /
//! RESTORE and the RDB records).

pub mod metadata;
pub mod payload;
mod prelude;
mod restore;
pub mod run;
mod vm;

use std::collections::BTreeMap;

use crate::scripting::ScriptFlags;
pub use restore::Policy;
use vm::FunctionsVm;

/// The only engine, as FUNCTION LIST and STATS name it.
pub const ENGINE_NAME: &str = "LUA";

/// A loaded library.
pub struct Library {
    pub name: String,
    /// The code as loaded, shebang included (FUNCTION LIST WITHCODE, DUMP).
    pub code: Vec<u8>,
    /// Its functions by lowercase name.
    pub functions: BTreeMap<String, Function>,
}

/// A registered function.
pub struct Function {
    pub name: String,
    pub description: Option<Vec<u8>>,
    pub flags: ScriptFlags,
    callback: mlua::RegistryKey,
}

/// The server's libraries (Redis's `functionsLibCtx`) and the Lua state
/// their functions live in.
#[derive(Default)]
pub struct Functions {
    vm: Option<FunctionsVm>,
    libraries: BTreeMap<String, Library>,
    /// Lowercase function name to the library that holds it.
    owners: BTreeMap<String, String>,
}

/// What a load did besides its outcome: the VM instructions it ran and
/// the code bytes compiled, for the caller to charge.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadCost {
    pub instructions: u64,
    pub code_bytes: u64,
}

impl LoadCost {
    /// Work units: the code's bytes as a reply's, the instructions as a
    /// script's.
    pub fn work_units(&self) -> u64 {
        self.code_bytes / crate::cmd::REPLY_BYTES_PER_WORK_UNIT
            + self.instructions / crate::scripting::lua::INSTRUCTIONS_PER_WORK_UNIT
    }
}

impl Functions {
    pub fn libraries(&self) -> impl Iterator<Item = &Library> {
        self.libraries.values()
    }

    pub fn libraries_count(&self) -> usize {
        self.libraries.len()
    }

    pub fn functions_count(&self) -> usize {
        self.owners.len()
    }

    /// Libraries, functions and a unit per 64 bytes of code: what walking
    /// them all costs (FUNCTION LIST, DUMP, FLUSH, a save).
    pub fn size_units(&self) -> u64 {
        let code_bytes: usize = self.libraries.values().map(|l| l.code.len()).sum();
        (self.libraries.len() + self.owners.len()) as u64 + code_bytes as u64 / 64
    }

    /// The function `name` (any case) and its library.
    pub fn function(&self, name: &[u8]) -> Option<(&Library, &Function)> {
        let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
        let library = self.libraries.get(self.owners.get(&lower)?)?;
        Some((library, library.functions.get(&lower)?))
    }

    /// The flags of function `name`, if it exists (CLIENT PAUSE WRITE and
    /// the OOM check ask before it runs).
    pub fn flags_of(&self, name: &[u8]) -> Option<ScriptFlags> {
        self.function(name).map(|(_, f)| f.flags)
    }

    /// FUNCTION FLUSH: every library goes, and the Lua state with them.
    pub fn flush(&mut self) {
        self.vm = None;
        self.libraries.clear();
        self.owners.clear();
    }

    /// FUNCTION DELETE: false when no library has that name.
    pub fn delete(&mut self, name: &[u8]) -> bool {
        let name = String::from_utf8_lossy(name);
        self.unlink(&name).is_some()
    }

    /// FUNCTION LOAD [REPLACE]: returns the library's name, or the error
    /// reply, in Redis's order: metadata, name, engine, existence, code,
    /// at least one function, function names free in other libraries.
    pub fn load(
        &mut self,
        code: &[u8],
        replace: bool,
        cost: &mut LoadCost,
    ) -> Result<String, String> {
        let library = self.compile(code, !replace, cost)?;
        let old = if replace {
            self.unlink(&library.name)
        } else {
            None
        };
        if let Some(taken) = self.collision(&library) {
            if let Some(old) = old {
                self.link(old);
            }
            return Err(format!("ERR Function {taken} already exists"));
        }
        let name = library.name.clone();
        self.link(library);
        Ok(name)
    }

    /// Checks a library's metadata, then compiles and runs its code. With
    /// `unique`, a name already loaded is refused before the code runs
    /// (Redis's "Library 'x' already exists").
    fn compile(
        &mut self,
        code: &[u8],
        unique: bool,
        cost: &mut LoadCost,
    ) -> Result<Library, String> {
        let meta = metadata::parse(code)?;
        if !metadata::valid_name(meta.name.as_bytes()) {
            return Err(format!("ERR {}", metadata::BAD_NAME));
        }
        if !meta.engine.eq_ignore_ascii_case(ENGINE_NAME) {
            return Err(format!("ERR Engine '{}' not found", meta.engine));
        }
        if unique && self.libraries.contains_key(&meta.name) {
            return Err(format!("ERR Library '{}' already exists", meta.name));
        }
        cost.code_bytes += code.len() as u64;
        let vm = self.vm()?;
        let (registered, instructions) = vm.run_library(&meta.body);
        cost.instructions += instructions;
        let registered = registered?;
        if registered.is_empty() {
            return Err("ERR No functions registered".to_string());
        }
        let functions = registered
            .into_iter()
            .map(|r| {
                let function = Function {
                    name: r.name,
                    description: r.description,
                    flags: r.flags,
                    callback: r.callback,
                };
                (function.name.to_ascii_lowercase(), function)
            })
            .collect();
        Ok(Library {
            name: meta.name,
            code: code.to_vec(),
            functions,
        })
    }

    /// The first of `library`'s functions another library already holds.
    fn collision(&self, library: &Library) -> Option<String> {
        library
            .functions
            .iter()
            .find(|(lower, _)| self.owners.contains_key(*lower))
            .map(|(_, f)| f.name.clone())
    }

    fn link(&mut self, library: Library) {
        for lower in library.functions.keys() {
            let previous = self.owners.insert(lower.clone(), library.name.clone());
            debug_assert!(previous.is_none(), "function names are unique");
        }
        let previous = self.libraries.insert(library.name.clone(), library);
        debug_assert!(previous.is_none(), "library names are unique");
    }

    fn unlink(&mut self, name: &str) -> Option<Library> {
        let library = self.libraries.remove(name)?;
        for lower in library.functions.keys() {
            self.owners.remove(lower);
        }
        Some(library)
    }

    fn vm(&mut self) -> Result<&mut FunctionsVm, String> {
        if self.vm.is_none() {
            let vm = FunctionsVm::new().map_err(|e| format!("ERR Lua state: {e}"))?;
            self.vm = Some(vm);
        }
        Ok(self.vm.as_mut().expect("created above"))
    }

    /// The libraries as RDB records (`rdbSaveFunctions`), for a save.
    pub fn rdb_records(&self, compress: bool) -> Vec<u8> {
        let mut out = Vec::new();
        for library in self.libraries.values() {
            payload::put_library(&mut out, library, compress);
        }
        out
    }

    /// Replaces the libraries with those an RDB file holds (a load starts
    /// from an empty set, as Redis's `emptyData` flushes the functions
    /// before it loads a file). On error the libraries are left as they
    /// were.
    pub fn load_from_rdb(&mut self, codes: Vec<Vec<u8>>) -> Result<(), String> {
        let mut cost = LoadCost::default();
        self.restore(codes, Policy::Flush, &mut cost)
    }

    /// Bytes the functions' Lua state uses (INFO `used_memory_vm_functions`).
    pub fn used_memory_vm_bytes(&self) -> usize {
        self.vm.as_ref().map_or(0, |vm| vm.vm.used_memory_bytes())
    }
}

#[cfg(test)]
mod tests;
