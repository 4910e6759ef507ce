//! A request's keys, found from its command's key specs as Redis 7.0's
//! `getKeysFromCommandWithSpecs` (src/db.c) finds them: the key specs
//! first, and when they cannot say (an incomplete spec such as SORT's, a
//! `numkeys` that does not parse, flags that depend on the arguments such
//! as SET ... GET), the command's own key-finding procedure in
//! [`super::procs`].

use super::procs;
use super::{BeginSearch, CommandMeta, FindKeys, KeySpec};

/// One key of a request: its index in the arguments (0 is the command
/// name) and the key-spec flags that say how the command uses it (empty
/// when the procedure that found it does not say, as in Redis).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyRef {
    pub index: usize,
    pub flags: &'static [&'static str],
}

/// Why COMMAND GETKEYS finds no keys, with Redis's error text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeysError {
    NoKeyArguments,
    InvalidArguments,
}

impl KeysError {
    pub fn message(self) -> &'static str {
        match self {
            KeysError::NoKeyArguments => "ERR The command has no key arguments",
            KeysError::InvalidArguments => "ERR Invalid arguments specified for command",
        }
    }
}

impl KeySpec {
    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.contains(&flag)
    }
}

/// Redis's `doesCommandHaveKeys`: a key-finding procedure, or a key spec
/// that names real keys (not `not_key`).
pub fn has_keys(meta: &CommandMeta) -> bool {
    procs::procedure(meta.name).is_some() || meta.key_specs.iter().any(|s| !s.has_flag("not_key"))
}

/// The keys of `args` (`args[0]` is the command name; for a subcommand,
/// the container's name), which must satisfy the command's arity. The
/// work is linear in `args.len()`, which the caller charges.
pub fn command_keys(meta: &CommandMeta, args: &[Vec<u8>]) -> Vec<KeyRef> {
    let has_keyspec = meta.key_specs.iter().any(|s| !s.has_flag("not_key"));
    let has_variable_flags = meta.key_specs.iter().any(|s| s.has_flag("variable_flags"));
    // Redis prefers the specs when their flags do not depend on the
    // arguments, and falls back to the procedure when a spec is invalid
    // for these arguments or incomplete.
    if has_keyspec && !has_variable_flags {
        if let Some(keys) = keys_from_specs(meta, args) {
            return keys;
        }
    }
    match procs::procedure(meta.name) {
        Some(procedure) => procedure(args),
        None => Vec::new(),
    }
}

/// The keys COMMAND GETKEYS replies for `args`, or its error.
pub fn getkeys(meta: &CommandMeta, args: &[Vec<u8>]) -> Result<Vec<KeyRef>, KeysError> {
    if !has_keys(meta) {
        return Err(KeysError::NoKeyArguments);
    }
    let keys = command_keys(meta, args);
    if keys.is_empty() && !meta.has_flag("no_mandatory_keys") {
        return Err(KeysError::InvalidArguments);
    }
    Ok(keys)
}

/// Redis's `getKeysUsingKeySpecs` without partial results: `None` when a
/// spec is unknown, out of bounds or incomplete for these arguments.
fn keys_from_specs(meta: &CommandMeta, args: &[Vec<u8>]) -> Option<Vec<KeyRef>> {
    let mut keys = Vec::new();
    for spec in meta.key_specs {
        // Specs of `not_key` arguments (a channel, say) name no key.
        if spec.has_flag("not_key") {
            continue;
        }
        let Some(first) = begin_search(spec, args)? else {
            // A keyword that is absent just means no keys from this spec.
            continue;
        };
        let (first, last, step) = find_keys(spec, args, first)?;
        let argc = args.len() as i64;
        if last >= argc || last < first || first >= argc {
            return None;
        }
        // Bounded by `argc`: `first..=last` lies inside the arguments.
        let mut i = first;
        while i <= last {
            keys.push(KeyRef {
                index: i as usize,
                flags: spec.flags,
            });
            i += step;
        }
        if spec.has_flag("incomplete") {
            return None;
        }
    }
    Some(keys)
}

/// The index of a spec's first key: `Some(None)` when its keyword is
/// absent, `None` when the spec is unknown.
fn begin_search(spec: &KeySpec, args: &[Vec<u8>]) -> Option<Option<i64>> {
    match spec.begin_search {
        BeginSearch::Index { index } => Some(Some(i64::from(index))),
        BeginSearch::Keyword { keyword, startfrom } => {
            Some(find_keyword(args, keyword, startfrom).map(|i| i as i64 + 1))
        }
        BeginSearch::Unknown => None,
    }
}

/// Redis's keyword search: forwards from `startfrom` to the argument before
/// the last, or backwards from `argc + startfrom` to argument 2 when
/// `startfrom` is negative. The end argument itself is never compared,
/// exactly as in Redis.
fn find_keyword(args: &[Vec<u8>], keyword: &str, startfrom: i32) -> Option<usize> {
    let argc = args.len() as i64;
    let startfrom = i64::from(startfrom);
    let (start, end) = if startfrom > 0 {
        (startfrom, argc - 1)
    } else {
        (argc + startfrom, 1)
    };
    let mut i = start;
    while i != end {
        if i >= argc || i < 1 {
            return None;
        }
        if procs::c_str_eq(&args[i as usize], keyword) {
            return Some(i as usize);
        }
        i = if start <= end { i + 1 } else { i - 1 };
    }
    None
}

/// The (first, last, step) of a spec's keys, or `None` when the spec is
/// unknown or its key count does not parse.
fn find_keys(spec: &KeySpec, args: &[Vec<u8>], first: i64) -> Option<(i64, i64, i64)> {
    let argc = args.len() as i64;
    match spec.find_keys {
        FindKeys::Range {
            lastkey,
            keystep,
            limit,
        } => {
            let lastkey = i64::from(lastkey);
            let last = if lastkey >= 0 {
                first + lastkey
            } else if limit == 0 {
                argc + lastkey
            } else {
                debug_assert_eq!(lastkey, -1);
                first + ((argc - first) / i64::from(limit) + lastkey)
            };
            Some((first, last, i64::from(keystep.max(1))))
        }
        FindKeys::Keynum {
            keynumidx,
            firstkey,
            keystep,
        } => {
            let at = first + i64::from(keynumidx);
            let numkeys = crate::util::parse_i64_strict(args.get(usize::try_from(at).ok()?)?)?;
            if numkeys < 0 {
                return None;
            }
            // Redis computes in C ints: a count beyond 2^31 wraps, and the
            // bounds check that follows rejects the result.
            let first = first as i32 + firstkey;
            let last = first.wrapping_add(numkeys as i32).wrapping_sub(1);
            Some((i64::from(first), i64::from(last), i64::from(keystep.max(1))))
        }
        FindKeys::Unknown => None,
    }
}
