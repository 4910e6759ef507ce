//! Whether a user may run a command: Redis's `ACLCheckAllUserCommandPerm`.
//! Each selector checks, in order, the command (its bit, or an allowed
//! first argument), the keys (the read or write access each key's spec
//! asks for), and the channels of PUBLISH and the subscribe family. The
//! command runs when one selector allows all three; otherwise the denial
//! reported is the worst one any selector found (channel over key over
//! command), at the latest argument.

use super::selector::{Selector, KEY_READ, KEY_WRITE};
use super::{CommandIndex, IndexedCommand, User};
use crate::cmd::{flags, CommandSpec};

/// Why a command was denied; keys and channels carry the index of the
/// argument that was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Denied {
    Command,
    Key(usize),
    Channel(usize),
}

impl Denied {
    /// Redis's ordering of denials (`ACL_DENIED_CMD` 1, `_KEY` 2,
    /// `_CHANNEL` 4) and the argument index, to pick the one to report.
    fn rank(self) -> (u8, usize) {
        match self {
            Denied::Command => (1, 0),
            Denied::Key(i) => (2, i),
            Denied::Channel(i) => (4, i),
        }
    }

    /// The NOPERM error a request gets (processCommand's wording).
    pub fn noperm_message(self, full_name: &str) -> String {
        match self {
            Denied::Command => {
                format!("NOPERM this user has no permissions to run the '{full_name}' command")
            }
            Denied::Key(_) => {
                "NOPERM this user has no permissions to access one of the keys used as arguments"
                    .to_string()
            }
            Denied::Channel(_) => {
                "NOPERM this user has no permissions to access one of the channels used as arguments"
                    .to_string()
            }
        }
    }

    /// Redis's `getAclErrorMessage`, as a script's `redis.call` reports
    /// a denial ("The user executing the script can't ...").
    pub fn script_message(self) -> &'static str {
        match self {
            Denied::Command => "The user executing the script can't run this command or subcommand",
            Denied::Key(_) => "The user executing the script can't access at least one of the keys mentioned in the command arguments",
            Denied::Channel(_) => "The user executing the script can't publish to the channel mentioned in the command",
        }
    }
}

/// A key argument and the access its key spec asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyAccess {
    pub index: usize,
    /// [`KEY_READ`] and/or [`KEY_WRITE`]; none when the procedure that
    /// found the key does not say, which any key pattern then allows.
    pub access: u8,
}

/// The keys of a command and the access each needs, found as Redis's
/// `ACLSelectorCheckCmd` finds them: `getKeysFromCommandWithSpecs` over
/// the command's key specs (a command Redis 7.0.15 lacks has none), each
/// key's spec flags giving the access (`access` reads; `insert`,
/// `delete` and `update` write), so that SET ... GET reads and writes,
/// SORT ... STORE writes its destination and EVAL's keys need both.
/// The work is linear in `args.len()`, which is added to `steps`.
pub fn keys_with_access(full_name: &str, args: &[Vec<u8>], steps: &mut u64) -> Vec<KeyAccess> {
    let Some(meta) = crate::meta::find(full_name) else {
        return Vec::new();
    };
    if !crate::meta::has_keys(meta) {
        return Vec::new();
    }
    *steps += args.len() as u64;
    crate::meta::command_keys(meta, args)
        .into_iter()
        .map(|key| KeyAccess {
            index: key.index,
            access: key_spec_access(key.flags),
        })
        .collect()
}

/// `ACLSelectorCheckKey`'s translation of key-spec flags into the
/// permission a key pattern must grant.
fn key_spec_access(flags: &[&str]) -> u8 {
    let mut access = 0;
    for f in flags {
        match *f {
            "access" => access |= KEY_READ,
            "insert" | "delete" | "update" => access |= KEY_WRITE,
            _ => {}
        }
    }
    access
}

/// A channel argument; `pattern` for PSUBSCRIBE's, which must equal an
/// allowed pattern literally.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChannelArg {
    pub index: usize,
    pub pattern: bool,
}

/// The channels a command publishes to or subscribes to (Redis's
/// `getChannelsFromCommand` with the publish and subscribe flags).
pub fn channels_of(spec: &CommandSpec, args: &[Vec<u8>]) -> Vec<ChannelArg> {
    let (first, pattern) = match spec.name {
        "publish" | "spublish" => {
            return vec![ChannelArg {
                index: 1,
                pattern: false,
            }]
        }
        "subscribe" | "ssubscribe" => (1, false),
        "psubscribe" => (1, true),
        _ => return Vec::new(),
    };
    (first..args.len())
        .map(|index| ChannelArg { index, pattern })
        .collect()
}

/// Redis's `ACLCheckAllUserCommandPerm`. `steps` counts the patterns
/// tried and the matcher's steps, for the caller to charge.
pub fn check(
    user: &User,
    index: &CommandIndex,
    spec: &'static CommandSpec,
    args: &[Vec<u8>],
    steps: &mut u64,
) -> Result<(), Denied> {
    let Some(id) = index.id_of(spec) else {
        // A spec the index does not know (none today) is not a command a
        // user can have been granted.
        return Err(Denied::Command);
    };
    let mut worst: Option<Denied> = None;
    // Like Redis's `aclKeyResultCache`, the keys are found once, by the
    // first selector that needs them.
    let mut keys = None;
    for selector in &user.selectors {
        let command = (id, &index.commands[id]);
        match check_selector(selector, command, args, &mut keys, steps) {
            Ok(()) => return Ok(()),
            Err(denied) => {
                if worst.is_none_or(|w| denied.rank() > w.rank()) {
                    worst = Some(denied);
                }
            }
        }
    }
    Err(worst.unwrap_or(Denied::Command))
}

/// Redis's `ACLUserCheckCmdWithUnrestrictedKeyAccess`: one selector both
/// allows the command (as [`check`] would) and grants `access` to every
/// key, by `allkeys` or a pattern that is literally `*` (`%R~*`, `~*`).
/// SORT asks it for read access before it follows a BY or GET pattern,
/// whose keys no key spec names, so a user limited to some keys cannot
/// read others through them. `steps` counts as in [`check`].
pub fn user_has_unrestricted_key_access(
    user: &User,
    index: &CommandIndex,
    spec: &'static CommandSpec,
    args: &[Vec<u8>],
    access: u8,
    steps: &mut u64,
) -> bool {
    let Some(id) = index.id_of(spec) else {
        return false;
    };
    let mut keys = None;
    user.selectors.iter().any(|selector| {
        let command = (id, &index.commands[id]);
        check_selector(selector, command, args, &mut keys, steps).is_ok()
            && selector_has_unrestricted_key_access(selector, access, steps)
    })
}

/// Redis's `ACLSelectorHasUnrestrictedKeyAccess`.
fn selector_has_unrestricted_key_access(selector: &Selector, access: u8, steps: &mut u64) -> bool {
    selector.all_keys
        || selector.keys.iter().any(|p| {
            *steps += 1;
            p.access & access == access && p.pattern == b"*"
        })
}

/// Redis's `ACLSelectorCheckCmd`.
fn check_selector(
    selector: &Selector,
    (id, command): (usize, &IndexedCommand),
    args: &[Vec<u8>],
    keys: &mut Option<Vec<KeyAccess>>,
    steps: &mut u64,
) -> Result<(), Denied> {
    let spec = command.spec;
    *steps += 1;
    if !selector.all_commands && !spec.has(flags::NO_AUTH) && !selector.allows_id(id) {
        let first_arg = args.get(1).filter(|_| args.len() >= 2);
        let allowed = first_arg.is_some_and(|arg| {
            let allowed = selector.first_args_of(id);
            *steps += allowed.len() as u64;
            allowed.iter().any(|a| a.eq_ignore_ascii_case(arg))
        });
        if !allowed {
            return Err(Denied::Command);
        }
    }
    if !selector.all_keys {
        let keys = match keys {
            Some(keys) => keys,
            None => keys.insert(keys_with_access(&command.full_name, args, steps)),
        };
        for key in keys.iter() {
            if !key_allowed(selector, &args[key.index], key.access, steps) {
                return Err(Denied::Key(key.index));
            }
        }
    }
    if !selector.all_channels {
        for channel in channels_of(spec, args) {
            if !channel_allowed(
                &selector.channels,
                &args[channel.index],
                channel.pattern,
                steps,
            ) {
                return Err(Denied::Channel(channel.index));
            }
        }
    }
    Ok(())
}

/// Redis's `ACLSelectorCheckKey`: a pattern granting at least the access
/// asked for matches the key.
pub fn key_allowed(selector: &Selector, key: &[u8], access: u8, steps: &mut u64) -> bool {
    if selector.all_keys {
        return true;
    }
    selector.keys.iter().any(|p| {
        *steps += 1;
        p.access & access == access && crate::glob::glob_match(&p.pattern, key, false, steps)
    })
}

/// Redis's `ACLCheckChannelAgainstList`: a channel matches the patterns;
/// a subscription pattern must equal one of them.
pub fn channel_allowed(
    patterns: &[Vec<u8>],
    channel: &[u8],
    pattern: bool,
    steps: &mut u64,
) -> bool {
    patterns.iter().any(|p| {
        *steps += 1;
        match pattern {
            true => p == channel,
            false => crate::glob::glob_match(p, channel, false, steps),
        }
    })
}

/// Redis's `ACLUserCheckChannelPerm` over all selectors.
pub fn user_channel_allowed(user: &User, channel: &[u8], pattern: bool, steps: &mut u64) -> bool {
    user.selectors
        .iter()
        .any(|s| s.all_channels || channel_allowed(&s.channels, channel, pattern, steps))
}
