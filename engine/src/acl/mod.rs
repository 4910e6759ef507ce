//! Access control lists as Redis 7.0.15 has them: named users with
//! passwords, and per user one or more selectors saying which commands,
//! keys and channels it may use.
//!
//! - [`user`]: a user and Redis's `ACLSetUser` rule parser (on/off,
//!   passwords, `reset`, selectors in parentheses);
//! - [`selector`]: a selector, its rules (`+cmd`, `-@category`, `~pat`,
//!   `%R~pat`, `&chan`...) and the way `ACL LIST` describes them;
//! - [`check`]: whether a user may run a command on its keys and channels,
//!   the check every caller of the pipeline passes;
//! - [`log`]: the `ACL LOG` of denied commands and failed logins;
//! - [`file`]: the `aclfile`'s text, as ACL LOAD reads and ACL SAVE writes it.
//!
//! Commands are identified by their position in a [`CommandIndex`], the
//! command table flattened (subcommands after their container), as Redis
//! gives every command an id to index each selector's bitmap with.

use std::collections::BTreeMap;

use crate::cmd::{CommandSpec, CommandTable};

pub mod check;
pub mod file;
pub mod log;
pub mod selector;
pub mod user;

pub use check::Denied;
pub use user::User;

/// Redis's ACL categories, in `ACLCommandCategories` order (ACL CAT lists
/// them so, and `ACL LIST` tries them in this order).
pub const CATEGORIES: &[&str] = &[
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
];

/// The category's bit in [`IndexedCommand::categories`], `None` for an
/// unknown name (matched case-insensitively, as Redis does).
pub fn category_bit(name: &[u8]) -> Option<u32> {
    CATEGORIES
        .iter()
        .position(|c| c.as_bytes().eq_ignore_ascii_case(name))
        .map(|i| 1 << i)
}

/// One command of the [`CommandIndex`].
#[derive(Debug)]
pub struct IndexedCommand {
    pub spec: &'static CommandSpec,
    /// `get`, or `config|get` for a subcommand.
    pub full_name: String,
    /// Bits of [`CATEGORIES`].
    pub categories: u32,
    /// The container's id, for a subcommand.
    pub parent: Option<usize>,
    /// The ids of a container's subcommands.
    pub subcommands: std::ops::Range<usize>,
}

/// The command table flattened for ACLs: every command and subcommand
/// with an id, in the table's name order with subcommands after their
/// container.
#[derive(Debug)]
pub struct CommandIndex {
    pub commands: Vec<IndexedCommand>,
    /// Ids by spec address: a resolved command's spec is one of the table's
    /// `&'static` specs, so its address names it without building a string.
    by_address: BTreeMap<usize, usize>,
}

impl CommandIndex {
    pub fn new(table: &CommandTable) -> CommandIndex {
        let mut commands = Vec::new();
        for top in table.iter() {
            let id = commands.len();
            commands.push(indexed(top, top.name.to_string(), None));
            for sub in top.subcommands {
                let full_name = match sub.name.contains('|') {
                    true => sub.name.to_string(),
                    false => format!("{}|{}", top.name, sub.name),
                };
                commands.push(indexed(sub, full_name, Some(id)));
            }
            commands[id].subcommands = id + 1..commands.len();
        }
        let by_address = commands
            .iter()
            .enumerate()
            .map(|(id, c)| (c.spec as *const CommandSpec as usize, id))
            .collect();
        CommandIndex {
            commands,
            by_address,
        }
    }

    /// The id of a spec of the table.
    pub fn id_of(&self, spec: &'static CommandSpec) -> Option<usize> {
        self.by_address
            .get(&(spec as *const CommandSpec as usize))
            .copied()
    }

    pub fn len(&self) -> usize {
        self.commands.len()
    }

    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }
}

fn indexed(spec: &'static CommandSpec, full_name: String, parent: Option<usize>) -> IndexedCommand {
    let categories = spec
        .acl_categories
        .iter()
        .filter_map(|c| category_bit(c.as_bytes()))
        .fold(0, |bits, bit| bits | bit);
    IndexedCommand {
        spec,
        full_name,
        categories,
        parent,
        subcommands: 0..0,
    }
}

/// Longest password `ACL GENPASS` makes, in bits (Redis's
/// `GENPASS_MAX_BITS`).
pub const GENPASS_BITS_MAX: i64 = 4096;

/// Every user, the ACL log, and the index rules are compiled against.
#[derive(Debug)]
pub struct Acl {
    /// Users by name, in name order (Redis keeps them in a radix tree, which
    /// ACL USERS and ACL LIST walk in byte order).
    pub users: BTreeMap<Vec<u8>, User>,
    pub log: log::AclLog,
    pub index: CommandIndex,
    /// `acl-pubsub-default`: whether new users start with `allchannels`.
    pub pubsub_default_all: bool,
}

/// `acl-pubsub-default`: whether new users and selectors start with
/// `allchannels` (Redis 7.0's default is `resetchannels`).
pub fn pubsub_default_all(config: &crate::Config) -> bool {
    config.extra.get("acl-pubsub-default").map(String::as_str) == Some("allchannels")
}

/// The default user's name.
pub const DEFAULT_USER: &[u8] = b"default";

impl Acl {
    /// The ACLs of a new server: only the default user, with all
    /// permissions, and `requirepass` (when set) as its password.
    pub fn new(table: &CommandTable, requirepass: Option<&[u8]>) -> Acl {
        let mut acl = Acl {
            users: BTreeMap::new(),
            log: log::AclLog::default(),
            index: CommandIndex::new(table),
            pubsub_default_all: false,
        };
        let default = acl.fresh_default();
        acl.users.insert(DEFAULT_USER.to_vec(), default);
        acl.set_requirepass(requirepass);
        acl
    }

    /// Redis's `ACLCreateDefaultUser`: every permission, no password.
    pub fn fresh_default(&self) -> User {
        let mut default = User::new(DEFAULT_USER.to_vec(), &self.index, false);
        for rule in ["+@all", "~*", "&*", "on", "nopass"] {
            let mut steps = 0;
            let set = default.set_rule(rule.as_bytes(), &self.index, false, &mut steps);
            debug_assert!(set.is_ok());
        }
        default
    }

    /// Redis's `ACLUpdateDefaultUserPassword`: `requirepass` is the default
    /// user's only password; unset, the default user needs none.
    pub fn set_requirepass(&mut self, password: Option<&[u8]>) {
        let default = self.users.get_mut(DEFAULT_USER).expect("default user");
        let mut steps = 0;
        let _ = default.set_rule(b"resetpass", &self.index, false, &mut steps);
        let rule = match password {
            Some(p) => [b">".as_slice(), p].concat(),
            None => b"nopass".to_vec(),
        };
        let set = default.set_rule(&rule, &self.index, false, &mut steps);
        debug_assert!(set.is_ok());
    }

    /// The user named `name`.
    pub fn user(&self, name: &[u8]) -> Option<&User> {
        self.users.get(name)
    }

    /// Whether a new connection starts authenticated: when the default
    /// user needs no password and is enabled.
    pub fn default_user_needs_no_auth(&self) -> bool {
        let default = &self.users[DEFAULT_USER];
        default.nopass && default.enabled
    }

    /// Redis's `ACLCheckUserCredentials`: whether `password` logs in as
    /// `name`.
    pub fn credentials_ok(&self, name: &[u8], password: &[u8]) -> bool {
        match self.users.get(name) {
            Some(u) if u.enabled => u.nopass || u.has_password(password),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests;
