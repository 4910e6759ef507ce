//! FUNCTION RESTORE's policies and the join of two sets of libraries
//! (Redis's `libraryJoin`): the payload's libraries are first loaded into
//! a set of their own, then flushed in, appended, or appended replacing
//! libraries of the same name; a failure leaves the loaded libraries as
//! they were.

use std::collections::BTreeMap;

use super::{Functions, Library, LoadCost};

/// What RESTORE does with the libraries already loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Delete them all first.
    Flush,
    /// Keep them; a library name or function name in both is an error.
    Append,
    /// Keep them, but a library of the same name is replaced.
    Replace,
}

impl Policy {
    pub fn parse(arg: &[u8]) -> Option<Policy> {
        match arg.to_ascii_lowercase().as_slice() {
            b"flush" => Some(Policy::Flush),
            b"append" => Some(Policy::Append),
            b"replace" => Some(Policy::Replace),
            _ => None,
        }
    }
}

impl Functions {
    /// Loads the libraries `codes` (from a payload or an RDB file) under
    /// `policy`. On error nothing changes.
    pub fn restore(
        &mut self,
        codes: Vec<Vec<u8>>,
        policy: Policy,
        cost: &mut LoadCost,
    ) -> Result<(), String> {
        let mut incoming: BTreeMap<String, Library> = BTreeMap::new();
        let mut names: BTreeMap<String, ()> = BTreeMap::new();
        for code in codes {
            let library = self.compile(&code, false, cost)?;
            if incoming.contains_key(&library.name) {
                return Err(format!("ERR Library '{}' already exists", library.name));
            }
            for (lower, f) in &library.functions {
                if names.insert(lower.clone(), ()).is_some() {
                    return Err(format!("ERR Function {} already exists", f.name));
                }
            }
            incoming.insert(library.name.clone(), library);
        }
        if policy == Policy::Flush {
            // The Lua state stays: the incoming callbacks live in it.
            self.libraries.clear();
            self.owners.clear();
        }
        self.join(incoming, policy == Policy::Replace)
    }

    /// Adds `incoming` to the loaded libraries (libraryJoin).
    fn join(&mut self, incoming: BTreeMap<String, Library>, replace: bool) -> Result<(), String> {
        let mut replaced = Vec::new();
        for name in incoming.keys() {
            if !self.libraries.contains_key(name) {
                continue;
            }
            if !replace {
                return Err(format!("ERR Library {name} already exists"));
            }
            replaced.extend(self.unlink(name));
        }
        let taken = incoming
            .values()
            .find_map(|library| self.collision(library));
        if let Some(taken) = taken {
            for old in replaced {
                self.link(old);
            }
            return Err(format!("ERR Function {taken} already exists"));
        }
        for library in incoming.into_values() {
            self.link(library);
        }
        Ok(())
    }
}
