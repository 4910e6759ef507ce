//! Command families, one file each. Each exports `COMMANDS`.

use crate::cmd::CommandSpec;

pub mod connection;
pub mod strings;

/// Every family's table, gathered by [`crate::cmd::CommandTable`].
pub const FAMILIES: &[&[CommandSpec]] = &[connection::COMMANDS, strings::COMMANDS];
