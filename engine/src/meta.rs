//! Command metadata as Redis 7.0 declares it: key specs, flags, tips and
//! documentation for every command redis-server 7.0.15 has, whether or not
//! seedkv implements it.
//!
//! Redis generates its command table (commands.def) from
//! src/commands/*.json; seedkv generates [`table`] from redis-server
//! 7.0.15's own COMMAND INFO and COMMAND DOCS replies with
//! `engine/gen/commands.py`. COMMAND INFO, DOCS and GETKEYS render from
//! here, and [`keys`] finds a request's keys from the key specs exactly as
//! Redis's `getKeysFromCommandWithSpecs` does, so that every user of key
//! positions (GETKEYS, client tracking, scripts) has one truth. A command
//! seedkv adds later picks its metadata up by name.

pub mod keys;
mod procs;
mod table;
#[cfg(test)]
mod tests;

pub use keys::{command_keys, getkeys, has_keys, KeyRef, KeysError};

/// One command (or subcommand) as COMMAND INFO and COMMAND DOCS show it.
#[derive(Debug)]
pub struct CommandMeta {
    /// The full lowercase name: `get`, or `client|list` for a subcommand.
    pub name: &'static str,
    pub arity: i32,
    /// Command flags as COMMAND INFO names them (`write`, `movablekeys`...).
    pub flags: &'static [&'static str],
    /// The legacy (first, last, step) key range of COMMAND INFO.
    pub first_key: i32,
    pub last_key: i32,
    pub key_step: i32,
    /// ACL categories with their `@`, in Redis's order.
    pub acl_categories: &'static [&'static str],
    /// Command tips (`nondeterministic_output`, `request_policy:...`).
    pub tips: &'static [&'static str],
    pub key_specs: &'static [KeySpec],
    pub docs: Docs,
    /// Subcommands sorted by name (Redis lists them in its dict's order,
    /// which changes from process to process).
    pub subcommands: &'static [CommandMeta],
}

/// Where a key spec's keys are and how the command uses them.
#[derive(Debug)]
pub struct KeySpec {
    pub notes: Option<&'static str>,
    /// `RO`/`RW`/`OW`/`RM`, then `access`/`update`/`insert`/`delete`, then
    /// `not_key`/`incomplete`/`variable_flags`.
    pub flags: &'static [&'static str],
    pub begin_search: BeginSearch,
    pub find_keys: FindKeys,
}

/// How a key spec finds its first key.
#[derive(Debug)]
pub enum BeginSearch {
    /// At a fixed argument index.
    Index {
        index: i32,
    },
    /// After `keyword`, searched from argument `startfrom` (negative: from
    /// the end, backwards).
    Keyword {
        keyword: &'static str,
        startfrom: i32,
    },
    Unknown,
}

/// How a key spec finds its keys once it has the first one.
#[derive(Debug)]
pub enum FindKeys {
    /// `lastkey` relative to the first key (negative: from the end, or with
    /// `limit`, a 1/limit share of the remaining arguments); every
    /// `keystep`-th argument.
    Range {
        lastkey: i32,
        keystep: i32,
        limit: i32,
    },
    /// The argument `keynumidx` after the first holds the number of keys,
    /// which start `firstkey` after the first.
    Keynum {
        keynumidx: i32,
        firstkey: i32,
        keystep: i32,
    },
    Unknown,
}

/// A command's COMMAND DOCS entry; `None` and empty fields are omitted
/// from the reply.
#[derive(Debug)]
pub struct Docs {
    pub summary: Option<&'static str>,
    pub since: Option<&'static str>,
    pub group: &'static str,
    pub complexity: Option<&'static str>,
    pub doc_flags: &'static [&'static str],
    pub deprecated_since: Option<&'static str>,
    pub replaced_by: Option<&'static str>,
    /// (version, change) pairs.
    pub history: &'static [(&'static str, &'static str)],
    pub arguments: &'static [Arg],
}

impl Docs {
    pub const DEFAULT: Docs = Docs {
        summary: None,
        since: None,
        group: "",
        complexity: None,
        doc_flags: &[],
        deprecated_since: None,
        replaced_by: None,
        history: &[],
        arguments: &[],
    };
}

/// One argument in COMMAND DOCS; `oneof` and `block` arguments nest.
#[derive(Debug)]
pub struct Arg {
    pub name: &'static str,
    /// The argument's `type` (`key`, `string`, `pure-token`, `oneof`...).
    pub kind: &'static str,
    pub key_spec_index: Option<i32>,
    pub token: Option<&'static str>,
    pub summary: Option<&'static str>,
    pub since: Option<&'static str>,
    pub flags: &'static [&'static str],
    pub deprecated_since: Option<&'static str>,
    pub arguments: &'static [Arg],
}

impl Arg {
    pub const DEFAULT: Arg = Arg {
        name: "",
        kind: "",
        key_spec_index: None,
        token: None,
        summary: None,
        since: None,
        flags: &[],
        deprecated_since: None,
        arguments: &[],
    };

    /// Whether COMMAND DOCS shows nested arguments for it.
    pub fn nests(&self) -> bool {
        matches!(self.kind, "oneof" | "block")
    }
}

impl CommandMeta {
    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.contains(&flag)
    }

    /// The subcommand named `full_name` (`client|list`).
    pub fn subcommand(&self, full_name: &str) -> Option<&'static CommandMeta> {
        // The table is 'static, so is every subcommand slice in it.
        let subs: &'static [CommandMeta] = self.subcommands;
        subs.iter().find(|s| s.name == full_name)
    }
}

/// Every command redis-server 7.0.15 has, sorted by name.
pub fn all() -> &'static [&'static CommandMeta] {
    table::ALL
}

/// The command or subcommand named `full_name` (lowercase, `parent|sub`
/// for subcommands), if redis-server 7.0.15 has it.
pub fn find(full_name: &str) -> Option<&'static CommandMeta> {
    match full_name.split_once('|') {
        None => top(full_name),
        Some((parent, _)) => top(parent)?.subcommand(full_name),
    }
}

/// The indices in `args` of the keys a request names, for a command
/// named by its full name (`get`, `object|encoding`); none for a command
/// redis-server 7.0.15 lacks. Client tracking and scripts use this, so that
/// every consumer of key positions agrees with COMMAND GETKEYS. The work is
/// linear in `args.len()`, which the caller charges.
pub fn request_keys(full_name: &str, args: &[Vec<u8>]) -> Vec<usize> {
    find(full_name)
        .map(|meta| command_keys(meta, args).iter().map(|k| k.index).collect())
        .unwrap_or_default()
}

fn top(name: &str) -> Option<&'static CommandMeta> {
    let i = table::ALL.binary_search_by(|m| m.name.cmp(name)).ok()?;
    Some(table::ALL[i])
}
