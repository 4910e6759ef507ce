//! The zsets command family.

use crate::cmd::CommandSpec;

pub const COMMANDS: &[CommandSpec] = &[];
