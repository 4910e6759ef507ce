//! Server introspection: COMMAND (COUNT INFO DOCS LIST GETKEYS
//! GETKEYSANDFLAGS HELP), INFO and TIME.
//!
//! Everything here is computed from the command table, the configuration,
//! the counters and `now`: INFO never asks the OS anything (`os` and
//! `arch_bits` are compile-time constants), so the same seed and inputs give
//! the same INFO text.
//!
//! INFO reports virtual quantities where Redis reports measured ones:
//!
//! - commandstats `usec` and latencystats are durations measured by the
//!   host's stopwatch (see [`crate::stopwatch`]): wall time on the real
//!   server, the cost model's virtual time in the simulator, and work units
//!   (one unit, one microsecond) by default;
//! - memory figures are estimates: a fixed startup size, the dicts' tables
//!   and a fixed size per entry, and the clients' buffers; keys and values
//!   are not walked, so INFO stays O(databases + clients);
//! - rates (`instantaneous_*`), CPU times and `avg_ttl` are 0.
//!
//! COMMAND lives in `server/command.rs`, INFO in `server/info.rs`, and the
//! memory estimate INFO, MEMORY and eviction share in `server/memory_estimate.rs`;
//! this file holds the table and TIME.

use crate::cmd::{flags::*, CommandSpec, Ctx};

mod command;
mod info;
mod memory_estimate;
#[cfg(test)]
mod tests;

pub use info::bytes_to_human;
pub use memory_estimate::{
    memory_report, memory_report_of, MemoryReport, BUCKET_BYTES, ENTRY_OVERHEAD_BYTES,
    USED_MEMORY_STARTUP_BYTES,
};

use command::{
    command_all, command_count, command_docs, command_getkeys, command_getkeysandflags,
    command_help, command_info, command_list,
};
use info::info;

const SERVER: CommandSpec = CommandSpec {
    group: "server",
    flags: LOADING | STALE,
    acl_categories: &["slow", "connection"],
    ..CommandSpec::DEFAULT
};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "command",
        arity: -1,
        since: "2.8.13",
        summary: "Get array of Redis command details",
        complexity: "O(N) where N is the total number of Redis commands",
        tips: &["nondeterministic_output_order"],
        handler: Some(command_all),
        subcommands: &[
            CommandSpec {
                name: "command|count",
                arity: 2,
                since: "2.8.13",
                summary: "Get total number of Redis commands",
                handler: Some(command_count),
                ..SERVER
            },
            CommandSpec {
                name: "command|list",
                arity: -2,
                since: "7.0.0",
                summary: "Get an array of Redis command names",
                complexity: "O(N) where N is the total number of Redis commands",
                tips: &["nondeterministic_output_order"],
                handler: Some(command_list),
                ..SERVER
            },
            CommandSpec {
                name: "command|info",
                arity: -2,
                since: "2.8.13",
                summary:
                    "Get array of specific Redis command details, or all when no argument is given.",
                complexity: "O(N) where N is the number of commands to look up",
                tips: &["nondeterministic_output_order"],
                handler: Some(command_info),
                ..SERVER
            },
            CommandSpec {
                name: "command|docs",
                arity: -2,
                since: "7.0.0",
                summary: "Get array of specific Redis command documentation",
                complexity: "O(N) where N is the number of commands to look up",
                tips: &["nondeterministic_output_order"],
                handler: Some(command_docs),
                ..SERVER
            },
            CommandSpec {
                name: "command|getkeys",
                arity: -4,
                since: "2.8.13",
                summary: "Extract keys given a full Redis command",
                complexity: "O(N) where N is the number of arguments to the command",
                handler: Some(command_getkeys),
                ..SERVER
            },
            CommandSpec {
                name: "command|getkeysandflags",
                arity: -4,
                since: "7.0.0",
                summary: "Extract keys and access flags given a full Redis command",
                complexity: "O(N) where N is the number of arguments to the command",
                handler: Some(command_getkeysandflags),
                ..SERVER
            },
            CommandSpec {
                name: "command|help",
                arity: 2,
                since: "5.0.0",
                summary: "Show helpful text about the different subcommands",
                handler: Some(command_help),
                ..SERVER
            },
        ],
        ..SERVER
    },
    CommandSpec {
        name: "info",
        arity: -1,
        flags: LOADING | STALE,
        acl_categories: &["slow", "dangerous"],
        summary: "Get information and statistics about the server",
        tips: &[
            "nondeterministic_output",
            "request_policy:all_shards",
            "response_policy:special",
        ],
        handler: Some(info),
        ..SERVER
    },
    CommandSpec {
        name: "time",
        arity: 1,
        flags: LOADING | STALE | FAST,
        acl_categories: &["fast"],
        since: "2.6.0",
        summary: "Return the current server time",
        tips: &["nondeterministic_output"],
        handler: Some(time),
        ..SERVER
    },
];

// ---------------------------------------------------------------- TIME

fn time(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let us = ctx.now.unix_us;
    let mut w = ctx.w();
    w.array_len(2);
    w.bulk_str(&(us / 1_000_000).to_string());
    w.bulk_str(&(us % 1_000_000).to_string());
}
