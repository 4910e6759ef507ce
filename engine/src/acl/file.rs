//! The `aclfile`'s text as Redis 7.0.15 reads it (`ACLLoadFromFile`) and
//! writes it (`ACLSaveToFile`). Reading and writing the file itself goes
//! through the storage boundary (`crate::persist::aclfile`); this module
//! only turns bytes into users and users into bytes.
//!
//! Redis's reader is stricter and odder than a config parser, and clients
//! see its quirks in ACL LOAD's error, so they are kept:
//!
//! - the file ends at its first NUL byte (Redis `strlen`s what `fgets`
//!   read);
//! - a line is split on single spaces, not as arguments: `user  x` has an
//!   empty user name, and quotes are ordinary bytes outside a selector;
//! - every line is validated and every error collected (an unknown command
//!   is reported for each rule, any other error once per line), and one
//!   error anywhere loads nothing.

use std::collections::BTreeMap;

use super::selector::{has_spaces, RuleError};
use super::user::merge_selector_args;
use super::{Acl, CommandIndex, User, DEFAULT_USER};

/// What ACL LOAD's error ends with.
const NO_CHANGE: &[u8] =
    b"WARNING: ACL errors detected, no change to the previously active ACL rules was performed";

/// Parses a whole `aclfile` (`filename` as configured, for the messages).
/// `Ok` holds every user the file defines (without `default` when it
/// defines none: see [`Acl::replace_users`]); `Err` Redis's one-line
/// description of every problem found. `steps` counts the rules and bytes
/// gone through, for the caller to charge.
pub fn parse(
    text: &[u8],
    filename: &str,
    index: &CommandIndex,
    pubsub_default_all: bool,
    steps: &mut u64,
) -> Result<BTreeMap<Vec<u8>, User>, Vec<u8>> {
    let text = &text[..text.iter().position(|&b| b == 0).unwrap_or(text.len())];
    *steps += text.len() as u64;
    let mut users: BTreeMap<Vec<u8>, User> = BTreeMap::new();
    let mut errors = Vec::new();
    for (i, raw) in text.split(|&b| b == b'\n').enumerate() {
        let line = trim(raw, b" \t\r\n");
        if line.is_empty() {
            continue;
        }
        let n = i + 1;
        let argv: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
        *steps += argv.len() as u64;
        if argv[0] != b"user" || argv.len() < 2 {
            errors.extend_from_slice(
                format!("{filename}:{n} should start with user keyword followed by the username. ")
                    .as_bytes(),
            );
            continue;
        }
        let name = argv[1];
        if has_spaces(name) {
            errors.extend_from_slice(format!("'{filename}:{n}: username '").as_bytes());
            errors.extend_from_slice(name);
            errors.extend_from_slice(b"' contains invalid characters. ");
            continue;
        }
        if users.contains_key(name) {
            errors.extend_from_slice(b"WARNING: Duplicate user '");
            errors.extend_from_slice(name);
            errors.extend_from_slice(format!("' found on line {n}. ").as_bytes());
            continue;
        }
        let mut user = User::new(name.to_vec(), index, pubsub_default_all);
        let args: Vec<Vec<u8>> = argv[2..].iter().map(|a| a.to_vec()).collect();
        // Redis 7.0.15 goes on with the merged rules it could not build
        // here and crashes when a selector was merged before the unmatched
        // one; seedkv applies no rule of the line, which errs anyway.
        let rules = merge_selector_args(&args).unwrap_or_else(|_| {
            errors.extend_from_slice(
                format!("{filename}:{n}: Unmatched parenthesis in selector definition.").as_bytes(),
            );
            Vec::new()
        });
        let mut reported = false;
        for rule in &rules {
            let rule = trim(rule, b"\t\r\n");
            match user.set_rule(rule, index, pubsub_default_all, steps) {
                Ok(()) => {}
                Err(RuleError::UnknownCommand) => {
                    errors.extend_from_slice(
                        format!("{filename}:{n}: Error in applying operation '").as_bytes(),
                    );
                    errors.extend_from_slice(rule);
                    errors.extend_from_slice(
                        format!("': {}. ", RuleError::UnknownCommand.message()).as_bytes(),
                    );
                }
                // Only the first of the other errors: it may cause the rest.
                Err(e) if !reported => {
                    reported = true;
                    errors
                        .extend_from_slice(format!("{filename}:{n}: {}. ", e.message()).as_bytes());
                }
                Err(_) => {}
            }
        }
        users.insert(name.to_vec(), user);
    }
    if errors.is_empty() {
        Ok(users)
    } else {
        errors.extend_from_slice(NO_CHANGE);
        Err(errors)
    }
}

/// `bytes` without the bytes of `set` at either end (Redis's `sdstrim`).
fn trim<'a>(bytes: &'a [u8], set: &[u8]) -> &'a [u8] {
    let start = bytes.iter().position(|b| !set.contains(b));
    let Some(start) = start else {
        return &[];
    };
    let end = bytes
        .iter()
        .rposition(|b| !set.contains(b))
        .unwrap_or(start);
    &bytes[start..=end]
}

/// The file ACL SAVE writes: `user <name> <rules>` per user, in name
/// order, the rules as ACL LIST shows them.
pub fn render(acl: &Acl, steps: &mut u64) -> Vec<u8> {
    let mut out = Vec::new();
    for user in acl.users.values() {
        out.extend_from_slice(b"user ");
        out.extend_from_slice(&user.name);
        out.push(b' ');
        out.extend_from_slice(&user.describe(&acl.index, steps));
        out.push(b'\n');
    }
    out
}

impl Acl {
    /// ACL LOAD's success: `users` (from [`parse`]) become the users.
    /// Redis copies the loaded `default` into the user every connection
    /// points to, or a fresh default user (all permissions, no password)
    /// when the file has none. Returns the users that went away (every
    /// user but `default` is replaced, even one loaded unchanged): their
    /// clients are logged out and disconnected.
    pub fn replace_users(&mut self, mut users: BTreeMap<Vec<u8>, User>) -> Vec<Vec<u8>> {
        if !users.contains_key(DEFAULT_USER) {
            users.insert(DEFAULT_USER.to_vec(), self.fresh_default());
        }
        let old = std::mem::replace(&mut self.users, users);
        old.into_keys().filter(|n| n != DEFAULT_USER).collect()
    }
}
