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

use std::fmt::Write as _;

use rand::RngCore;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::cmd::{flags::*, lookup_subcommand, CommandSpec, CommandTable, Ctx};
use crate::commands::config::{config_get, help_reply};
use crate::commands::connection::REDIS_VERSION;
use crate::resp::ReplyWriter;
use crate::util::glob_match;

/// Bytes INFO counts per bucket of a keyspace dict table.
pub const BUCKET_BYTES: usize = 8;

/// Bytes INFO counts per dict entry besides the value itself: the entry,
/// the key's header and a typical short key (Redis's dictEntry + sds).
pub const ENTRY_OVERHEAD_BYTES: usize = 48;

/// Bytes INFO counts for an empty server (Redis 7.0 reports about 860 KB
/// of `used_memory_startup`).
pub const USED_MEMORY_STARTUP_BYTES: u64 = 860_000;

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

// ---------------------------------------------------------------- COMMAND

/// The name COMMAND shows: `client|list` for subcommands.
fn full_name(parent: Option<&CommandSpec>, spec: &CommandSpec) -> String {
    match parent {
        Some(p) if !spec.name.contains('|') => format!("{}|{}", p.name, spec.name),
        _ => spec.name.to_string(),
    }
}

/// Looks up `get` or `client|list` (case-insensitive) as COMMAND INFO/DOCS do.
fn lookup_full(
    table: &CommandTable,
    name: &[u8],
) -> Option<(Option<&'static CommandSpec>, &'static CommandSpec)> {
    match name.iter().position(|&b| b == b'|') {
        None => table.lookup(name).map(|s| (None, s)),
        Some(bar) => {
            let parent = table.lookup(&name[..bar])?;
            let sub = lookup_subcommand(parent, &name[bar + 1..])?;
            Some((Some(parent), sub))
        }
    }
}

/// Key-spec flags for COMMAND INFO and GETKEYSANDFLAGS.
fn key_spec_flags(spec: &CommandSpec) -> &'static [&'static str] {
    if !spec.key_spec_flags.is_empty() {
        spec.key_spec_flags
    } else if spec.has(READONLY) {
        &["RO", "access"]
    } else {
        &["RW", "update"]
    }
}

/// One COMMAND INFO entry in Redis 7.0's ten-element layout.
fn write_command_info(w: &mut ReplyWriter, parent: Option<&CommandSpec>, spec: &CommandSpec) {
    w.array_len(10);
    w.bulk_str(&full_name(parent, spec));
    w.int(spec.arity as i64);
    let flags: Vec<&str> = NAMES
        .iter()
        .filter(|(bit, _)| spec.has(*bit))
        .map(|(_, n)| *n)
        .collect();
    w.set_len(flags.len());
    for f in flags {
        w.simple(f);
    }
    let has_keys = spec.first_key > 0;
    w.int(spec.first_key as i64);
    w.int(spec.last_key as i64);
    w.int(if has_keys { spec.key_step as i64 } else { 0 });
    w.set_len(spec.acl_categories.len());
    for c in spec.acl_categories {
        w.simple(&format!("@{c}"));
    }
    w.set_len(spec.tips.len());
    for t in spec.tips {
        w.simple(t);
    }
    if has_keys {
        w.set_len(1);
        w.map_len(3);
        w.bulk_str("flags");
        let kflags = key_spec_flags(spec);
        w.set_len(kflags.len());
        for f in kflags {
            w.simple(f);
        }
        w.bulk_str("begin_search");
        w.map_len(2);
        w.bulk_str("type");
        w.bulk_str("index");
        w.bulk_str("spec");
        w.map_len(1);
        w.bulk_str("index");
        w.int(spec.first_key as i64);
        w.bulk_str("find_keys");
        w.map_len(2);
        w.bulk_str("type");
        w.bulk_str("range");
        w.bulk_str("spec");
        w.map_len(3);
        w.bulk_str("lastkey");
        // Relative to the first key; negative counts from the end.
        let lastkey = if spec.last_key < 0 {
            spec.last_key
        } else {
            spec.last_key - spec.first_key
        };
        w.int(lastkey as i64);
        w.bulk_str("keystep");
        w.int(spec.key_step.max(1) as i64);
        w.bulk_str("limit");
        w.int(0);
    } else {
        w.set_len(0);
    }
    if spec.subcommands.is_empty() {
        w.set_len(0);
    } else {
        w.array_len(spec.subcommands.len());
        for sub in spec.subcommands {
            write_command_info(w, Some(spec), sub);
        }
    }
}

/// One COMMAND DOCS value: summary, since, group, complexity, subcommands.
fn write_command_docs(w: &mut ReplyWriter, parent: Option<&CommandSpec>, spec: &CommandSpec) {
    let has_subs = !spec.subcommands.is_empty();
    w.map_len(if has_subs { 5 } else { 4 });
    w.bulk_str("summary");
    w.bulk_str(spec.summary);
    w.bulk_str("since");
    w.bulk_str(spec.since);
    w.bulk_str("group");
    w.bulk_str(spec.group);
    w.bulk_str("complexity");
    w.bulk_str(spec.complexity);
    if has_subs {
        w.bulk_str("subcommands");
        w.map_len(spec.subcommands.len());
        for sub in spec.subcommands {
            w.bulk_str(&full_name(Some(spec), sub));
            write_command_docs(w, Some(spec), sub);
        }
    }
    let _ = parent;
}

/// COMMAND with no subcommand: every command's info.
fn command_all(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let specs: Vec<&'static CommandSpec> = ctx.server.commands.iter().collect();
    ctx.work(specs.len() as u64);
    let mut w = ctx.w();
    w.array_len(specs.len());
    for spec in specs {
        write_command_info(&mut w, None, spec);
    }
}

fn command_count(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let n = ctx.server.commands.len();
    ctx.int(n as i64);
}

fn command_info(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if args.len() == 2 {
        return command_all(ctx, args);
    }
    let found: Vec<_> = args[2..]
        .iter()
        .map(|name| lookup_full(&ctx.server.commands, name))
        .collect();
    ctx.work(found.len() as u64);
    let mut w = ctx.w();
    w.array_len(found.len());
    for entry in found {
        match entry {
            Some((parent, spec)) => write_command_info(&mut w, parent, spec),
            None => w.null(),
        }
    }
}

fn command_docs(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let found: Vec<(Option<&'static CommandSpec>, &'static CommandSpec)> = if args.len() == 2 {
        ctx.server.commands.iter().map(|s| (None, s)).collect()
    } else {
        args[2..]
            .iter()
            .filter_map(|name| lookup_full(&ctx.server.commands, name))
            .collect()
    };
    ctx.work(found.len() as u64);
    let mut w = ctx.w();
    w.map_len(found.len());
    for (parent, spec) in found {
        w.bulk_str(&full_name(parent, spec));
        write_command_docs(&mut w, parent, spec);
    }
}

/// COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern].
fn command_list(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    enum Filter {
        All,
        None,
        AclCat(String),
        Pattern(Vec<u8>),
    }
    let filter = match args.len() {
        2 => Filter::All,
        5 if args[2].eq_ignore_ascii_case(b"filterby") => {
            let kind = args[3].to_ascii_lowercase();
            match kind.as_slice() {
                // No modules can be loaded.
                b"module" => Filter::None,
                b"aclcat" => Filter::AclCat(String::from_utf8_lossy(&args[4]).to_ascii_lowercase()),
                b"pattern" => Filter::Pattern(args[4].clone()),
                _ => return ctx.error("ERR syntax error"),
            }
        }
        _ => return ctx.error("ERR syntax error"),
    };
    let mut names = Vec::new();
    for spec in ctx.server.commands.iter() {
        let subs = spec.subcommands.iter().map(|sub| (Some(spec), sub));
        for (parent, s) in std::iter::once((None, spec)).chain(subs) {
            let name = full_name(parent, s);
            let keep = match &filter {
                Filter::All => true,
                Filter::None => false,
                Filter::AclCat(cat) => s.acl_categories.iter().any(|c| c == cat),
                Filter::Pattern(p) => glob_match(p, name.as_bytes(), true),
            };
            if keep {
                names.push(name);
            }
        }
    }
    ctx.work(names.len() as u64 + ctx.server.commands.len() as u64);
    let mut w = ctx.w();
    w.array_len(names.len());
    for n in names {
        w.bulk_str(&n);
    }
}

/// The keys of the command in `args[2..]`, or Redis's error text.
fn keys_of(
    ctx: &Ctx,
    args: &[Vec<u8>],
) -> Result<(&'static CommandSpec, Vec<usize>), &'static str> {
    let cmd = &args[2..];
    let mut spec = ctx
        .server
        .commands
        .lookup(&cmd[0])
        .ok_or("ERR Invalid command specified")?;
    if !spec.subcommands.is_empty() && cmd.len() >= 2 {
        spec = lookup_subcommand(spec, &cmd[1]).ok_or("ERR Invalid command specified")?;
    }
    if spec.first_key <= 0 {
        return Err("ERR The command has no key arguments");
    }
    if !spec.arity_ok(cmd.len()) {
        return Err("ERR Invalid number of arguments specified for command");
    }
    let keys = spec.key_indices(cmd.len());
    if keys.is_empty() {
        return Err("ERR Invalid arguments specified for command");
    }
    Ok((spec, keys))
}

fn command_getkeys(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match keys_of(ctx, args) {
        Err(e) => ctx.error(e),
        Ok((_, keys)) => {
            let mut w = ctx.w();
            w.array_len(keys.len());
            for i in keys {
                w.bulk(&args[2 + i]);
            }
        }
    }
}

fn command_getkeysandflags(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match keys_of(ctx, args) {
        Err(e) => ctx.error(e),
        Ok((spec, keys)) => {
            let kflags = key_spec_flags(spec);
            let mut w = ctx.w();
            w.array_len(keys.len());
            for i in keys {
                w.array_len(2);
                w.bulk(&args[2 + i]);
                w.set_len(kflags.len());
                for f in kflags {
                    w.simple(f);
                }
            }
        }
    }
}

fn command_help(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    help_reply(
        ctx,
        "COMMAND",
        &[
            "(no subcommand)",
            "    Return details about all Redis commands.",
            "COUNT",
            "    Return the total number of commands in this Redis server.",
            "LIST",
            "    Return a list of all commands in this Redis server.",
            "INFO [<command-name> ...]",
            "    Return details about multiple Redis commands.",
            "    If no command names are given, documentation details for all",
            "    commands are returned.",
            "DOCS [<command-name> ...]",
            "    Return documentation details about multiple Redis commands.",
            "    If no command names are given, documentation details for all",
            "    commands are returned.",
            "GETKEYS <full-command>",
            "    Return the keys from a full Redis command.",
            "GETKEYSANDFLAGS <full-command>",
            "    Return the keys and the access flags from a full Redis command.",
        ],
    );
}

// ---------------------------------------------------------------- INFO

/// INFO sections in Redis's order, and whether `INFO` / `INFO default`
/// includes each (`all` adds the rest; `everything` is `all` plus modules).
const SECTIONS: &[(&str, bool)] = &[
    ("server", true),
    ("clients", true),
    ("memory", true),
    ("persistence", true),
    ("stats", true),
    ("replication", true),
    ("cpu", true),
    ("modules", true),
    ("commandstats", false),
    ("errorstats", true),
    ("latencystats", false),
    ("cluster", true),
    ("keyspace", true),
];

fn info(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let mut wanted = [false; SECTIONS.len()];
    if args.len() == 1 {
        for (i, (_, default)) in SECTIONS.iter().enumerate() {
            wanted[i] = *default;
        }
    }
    for arg in &args[1..] {
        let arg = String::from_utf8_lossy(arg).to_ascii_lowercase();
        for (i, (name, default)) in SECTIONS.iter().enumerate() {
            let hit = match arg.as_str() {
                "all" | "everything" => true,
                "default" => *default,
                other => other == *name,
            };
            wanted[i] |= hit;
        }
    }
    let mut text = String::with_capacity(4096);
    for (i, (name, _)) in SECTIONS.iter().enumerate() {
        if !wanted[i] {
            continue;
        }
        if !text.is_empty() {
            text.push_str("\r\n");
        }
        write_section(ctx, name, &mut text);
    }
    ctx.work(ctx.server.stats.commands.len() as u64 + ctx.clients.len() as u64);
    ctx.w().verbatim("txt", text.as_bytes());
}

/// Redis's `bytesToHuman`.
pub fn bytes_to_human(n: u64) -> String {
    const UNITS: [(u64, &str); 5] = [
        (1 << 20, "K"),
        (1 << 30, "M"),
        (1 << 40, "G"),
        (1 << 50, "T"),
        (1 << 60, "P"),
    ];
    if n < 1024 {
        return format!("{n}B");
    }
    for (limit, unit) in UNITS {
        if n < limit {
            return format!("{:.2}{unit}", n as f64 / (limit >> 10) as f64);
        }
    }
    format!("{n}B")
}

/// A 40-hex-digit id derived from the seed (`run_id`, `master_replid`).
fn hex_id(seed: u64, salt: u64) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ salt);
    let mut bytes = [0u8; 20];
    rng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn os_name() -> String {
    let os = match std::env::consts::OS {
        "linux" => "Linux",
        "macos" => "Darwin",
        "windows" => "Windows",
        "freebsd" => "FreeBSD",
        other => other,
    };
    format!("{os} {}", std::env::consts::ARCH)
}

/// What INFO memory reports, in bytes.
pub struct MemoryReport {
    /// `used_memory`: the host allocator's count when the host measures
    /// (the real server), else the engine's estimate.
    pub used_bytes: u64,
    /// `used_memory_dataset`: keys, values, expiry entries and dict tables.
    pub dataset_bytes: u64,
    /// `mem_clients_normal`: client structs and their buffers.
    pub clients_bytes: u64,
    /// Keys visited to compute it (the work INFO memory is charged).
    pub keys_visited: u64,
}

/// The engine's estimate of the dataset: every value's `size_bytes` (an
/// O(1) running figure each type keeps) plus the dicts' own tables, entries
/// and key bytes. Visits every key: INFO memory is O(keys) here.
pub fn memory_report(ctx: &Ctx) -> MemoryReport {
    memory_report_of(ctx.server, ctx.clients)
}

/// [`memory_report`] from the server and client table alone (eviction
/// measures memory before any command context exists).
pub fn memory_report_of(
    server: &crate::engine::Server,
    clients: &crate::client::Clients,
) -> MemoryReport {
    let mut keys_visited = 0u64;
    let dataset_bytes: u64 = server
        .keyspace
        .dbs
        .iter()
        .map(|db| {
            let values: usize = db.keys.iter().map(|(_, v)| v.size_bytes()).sum();
            keys_visited += db.keys.len() as u64;
            let (e0, e1) = db.expires.table_sizes();
            let expires = (e0 + e1) * BUCKET_BYTES
                + db.expires.len() * (std::mem::size_of::<u64>() + ENTRY_OVERHEAD_BYTES);
            (db.keys.memory_estimate_bytes() + values + expires) as u64
        })
        .sum();
    let clients_bytes: u64 = clients
        .values()
        .map(|c| {
            (std::mem::size_of_val(c) + c.output.capacity() + c.parser.buffered_bytes()) as u64
        })
        .sum();
    let estimate = USED_MEMORY_STARTUP_BYTES + dataset_bytes + clients_bytes;
    let used_bytes = server.allocated_bytes.unwrap_or(estimate);
    MemoryReport {
        used_bytes,
        dataset_bytes: dataset_bytes.min(used_bytes),
        clients_bytes,
        keys_visited,
    }
}

fn write_section(ctx: &mut Ctx, name: &str, out: &mut String) {
    let now = ctx.now;
    let cfg = &ctx.server.config;
    let _ = match name {
        "server" => {
            let uptime_s = now.mono_ns.saturating_sub(ctx.server.started.mono_ns) / 1_000_000_000;
            let hz = cfg.hz.clamp(1, 500);
            write!(
                out,
                "# Server\r\n\
                 redis_version:{REDIS_VERSION}\r\n\
                 seedkv_version:{}\r\n\
                 redis_git_sha1:00000000\r\n\
                 redis_git_dirty:0\r\n\
                 redis_build_id:0\r\n\
                 redis_mode:standalone\r\n\
                 os:{}\r\n\
                 arch_bits:{}\r\n\
                 monotonic_clock:host\r\n\
                 multiplexing_api:host\r\n\
                 atomicvar_api:none\r\n\
                 gcc_version:0.0.0\r\n\
                 process_id:{}\r\n\
                 process_supervised:no\r\n\
                 run_id:{}\r\n\
                 tcp_port:{}\r\n\
                 server_time_usec:{}\r\n\
                 uptime_in_seconds:{}\r\n\
                 uptime_in_days:{}\r\n\
                 hz:{hz}\r\n\
                 configured_hz:{hz}\r\n\
                 lru_clock:{}\r\n\
                 executable:\r\n\
                 config_file:\r\n\
                 io_threads_active:0\r\n",
                env!("CARGO_PKG_VERSION"),
                os_name(),
                if cfg!(target_pointer_width = "64") {
                    64
                } else {
                    32
                },
                cfg.process_id,
                hex_id(cfg.seed, 0x7275_6e5f_6964),
                cfg.port,
                now.unix_us,
                uptime_s,
                uptime_s / 86_400,
                (now.unix_ms() / 1000) & ((1 << 24) - 1),
            )
        }
        "clients" => {
            let live = ctx.clients.values().filter(|c| c.closing.is_none());
            let (mut count, mut max_in, mut max_out) = (0usize, 0usize, 0usize);
            for c in live {
                count += 1;
                max_in = max_in.max(c.parser.buffered_bytes());
                max_out = max_out.max(c.pending_output().len());
            }
            write!(
                out,
                "# Clients\r\n\
                 connected_clients:{count}\r\n\
                 cluster_connections:0\r\n\
                 maxclients:{}\r\n\
                 client_recent_max_input_buffer:{max_in}\r\n\
                 client_recent_max_output_buffer:{max_out}\r\n\
                 blocked_clients:{}\r\n\
                 tracking_clients:0\r\n\
                 clients_in_timeout_table:{}\r\n",
                cfg.maxclients,
                ctx.server.blocking.blocked_count(),
                ctx.server.blocking.timeouts_count(),
            )
        }
        "memory" => {
            let report = memory_report(ctx);
            let (used, dataset) = (report.used_bytes, report.dataset_bytes);
            ctx.work(report.keys_visited);
            let peak = ctx.server.stats.used_memory_peak_bytes.max(used);
            ctx.server.stats.used_memory_peak_bytes = peak;
            let cfg = &ctx.server.config;
            let overhead = used.saturating_sub(dataset);
            let dataset_perc = if used > USED_MEMORY_STARTUP_BYTES {
                dataset as f64 * 100.0 / (used - USED_MEMORY_STARTUP_BYTES) as f64
            } else {
                0.0
            };
            write!(
                out,
                "# Memory\r\n\
                 used_memory:{used}\r\n\
                 used_memory_human:{}\r\n\
                 used_memory_rss:{used}\r\n\
                 used_memory_rss_human:{}\r\n\
                 used_memory_peak:{peak}\r\n\
                 used_memory_peak_human:{}\r\n\
                 used_memory_peak_perc:{:.2}%\r\n\
                 used_memory_overhead:{overhead}\r\n\
                 used_memory_startup:{USED_MEMORY_STARTUP_BYTES}\r\n\
                 used_memory_dataset:{dataset}\r\n\
                 used_memory_dataset_perc:{dataset_perc:.2}%\r\n\
                 total_system_memory:0\r\n\
                 total_system_memory_human:0B\r\n\
                 maxmemory:{}\r\n\
                 maxmemory_human:{}\r\n\
                 maxmemory_policy:{}\r\n\
                 mem_fragmentation_ratio:1.00\r\n\
                 mem_fragmentation_bytes:0\r\n\
                 mem_not_counted_for_evict:0\r\n\
                 mem_clients_slaves:0\r\n\
                 mem_clients_normal:{}\r\n\
                 mem_aof_buffer:0\r\n\
                 mem_allocator:libc\r\n\
                 active_defrag_running:0\r\n\
                 lazyfree_pending_objects:0\r\n\
                 lazyfreed_objects:{}\r\n",
                bytes_to_human(used),
                bytes_to_human(used),
                bytes_to_human(peak),
                used as f64 * 100.0 / peak as f64,
                cfg.maxmemory_bytes,
                bytes_to_human(cfg.maxmemory_bytes),
                cfg.maxmemory_policy.name(),
                report.clients_bytes,
                // Handed to the host; it reports no completion, so none
                // are ever pending from the engine's point of view.
                ctx.server.stats.lazyfreed_objects,
            )
        }
        "persistence" => {
            let aof = config_get(cfg, "appendonly").is_some_and(|v| v == "yes");
            write!(
                out,
                "# Persistence\r\n\
                 loading:0\r\n\
                 async_loading:0\r\n\
                 rdb_changes_since_last_save:{}\r\n\
                 rdb_bgsave_in_progress:0\r\n\
                 rdb_last_save_time:{}\r\n\
                 rdb_last_bgsave_status:ok\r\n\
                 rdb_last_bgsave_time_sec:-1\r\n\
                 rdb_current_bgsave_time_sec:-1\r\n\
                 aof_enabled:{}\r\n\
                 aof_rewrite_in_progress:0\r\n\
                 aof_rewrite_scheduled:0\r\n\
                 aof_last_rewrite_time_sec:-1\r\n\
                 aof_current_rewrite_time_sec:-1\r\n\
                 aof_last_bgrewrite_status:ok\r\n\
                 aof_last_write_status:ok\r\n",
                ctx.server.dirty,
                ctx.server.started.unix_us / 1_000_000,
                aof as u8,
            )
        }
        "stats" => {
            let s = &ctx.server.stats;
            write!(
                out,
                "# Stats\r\n\
                 total_connections_received:{}\r\n\
                 total_commands_processed:{}\r\n\
                 instantaneous_ops_per_sec:0\r\n\
                 total_net_input_bytes:{}\r\n\
                 total_net_output_bytes:{}\r\n\
                 total_net_repl_input_bytes:0\r\n\
                 total_net_repl_output_bytes:0\r\n\
                 instantaneous_input_kbps:0.00\r\n\
                 instantaneous_output_kbps:0.00\r\n\
                 instantaneous_input_repl_kbps:0.00\r\n\
                 instantaneous_output_repl_kbps:0.00\r\n\
                 rejected_connections:{}\r\n\
                 sync_full:0\r\n\
                 sync_partial_ok:0\r\n\
                 sync_partial_err:0\r\n\
                 expired_keys:{}\r\n\
                 expired_stale_perc:0.00\r\n\
                 expired_time_cap_reached_count:0\r\n\
                 expire_cycle_cpu_milliseconds:0\r\n\
                 evicted_keys:{}\r\n\
                 evicted_clients:0\r\n\
                 total_eviction_exceeded_time:{}\r\n\
                 current_eviction_exceeded_time:{}\r\n\
                 keyspace_hits:{}\r\n\
                 keyspace_misses:{}\r\n\
                 pubsub_channels:{}\r\n\
                 pubsub_patterns:{}\r\n\
                 pubsubshard_channels:{}\r\n\
                 latest_fork_usec:0\r\n\
                 total_forks:0\r\n\
                 migrate_cached_sockets:0\r\n\
                 slave_expires_tracked_keys:0\r\n\
                 active_defrag_hits:0\r\n\
                 active_defrag_misses:0\r\n\
                 active_defrag_key_hits:0\r\n\
                 active_defrag_key_misses:0\r\n\
                 total_active_defrag_time:0\r\n\
                 current_active_defrag_time:0\r\n\
                 tracking_total_keys:0\r\n\
                 tracking_total_items:0\r\n\
                 tracking_total_prefixes:0\r\n\
                 unexpected_error_replies:0\r\n\
                 total_error_replies:{}\r\n\
                 dump_payload_sanitizations:0\r\n\
                 total_reads_processed:0\r\n\
                 total_writes_processed:0\r\n\
                 io_threaded_reads_processed:0\r\n\
                 io_threaded_writes_processed:0\r\n\
                 reply_buffer_shrinks:0\r\n\
                 reply_buffer_expands:0\r\n",
                s.total_connections_received,
                s.total_commands_processed,
                s.net_input_bytes,
                s.net_output_bytes,
                s.rejected_connections,
                ctx.server.keyspace.expired_keys,
                ctx.server.evict.evicted_keys,
                ctx.server.evict.total_exceeded_ms(ctx.now),
                ctx.server.evict.current_exceeded_ms(ctx.now),
                s.keyspace_hits,
                s.keyspace_misses,
                ctx.server.pubsub.channels_count(),
                ctx.server.pubsub.patterns_count(),
                ctx.server.pubsub.shard_channels_count(),
                s.total_error_replies,
            )
        }
        "replication" => write!(
            out,
            "# Replication\r\n\
             role:master\r\n\
             connected_slaves:0\r\n\
             master_failover_state:no-failover\r\n\
             master_replid:{}\r\n\
             master_replid2:0000000000000000000000000000000000000000\r\n\
             master_repl_offset:0\r\n\
             second_repl_offset:-1\r\n\
             repl_backlog_active:0\r\n\
             repl_backlog_size:1048576\r\n\
             repl_backlog_first_byte_offset:0\r\n\
             repl_backlog_histlen:0\r\n",
            hex_id(cfg.seed, 0x7265_706c_6964),
        ),
        // The engine has no CPU clock; the simulator's virtual CPU time is
        // in commandstats `usec`.
        "cpu" => write!(
            out,
            "# CPU\r\n\
             used_cpu_sys:0.000000\r\n\
             used_cpu_user:0.000000\r\n\
             used_cpu_sys_children:0.000000\r\n\
             used_cpu_user_children:0.000000\r\n\
             used_cpu_sys_main_thread:0.000000\r\n\
             used_cpu_user_main_thread:0.000000\r\n"
        ),
        "modules" => write!(out, "# Modules\r\n"),
        "commandstats" => {
            ctx.server.stats.write_commandstats(out);
            Ok(())
        }
        "errorstats" => {
            ctx.server.stats.write_errorstats(out);
            Ok(())
        }
        "latencystats" => {
            let percentiles = config_get(cfg, "latency-tracking-info-percentiles")
                .map(|text| crate::stats::parse_percentiles(&text))
                .unwrap_or_default();
            ctx.server.stats.write_latencystats(out, &percentiles);
            Ok(())
        }
        "cluster" => write!(out, "# Cluster\r\ncluster_enabled:0\r\n"),
        "keyspace" => {
            out.push_str("# Keyspace\r\n");
            for (i, db) in ctx.server.keyspace.dbs.iter().enumerate() {
                if db.is_empty() {
                    continue;
                }
                let _ = write!(
                    out,
                    "db{i}:keys={},expires={},avg_ttl=0\r\n",
                    db.len(),
                    db.expires.len()
                );
            }
            Ok(())
        }
        _ => Ok(()),
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::Frame;
    use crate::testing::{bulk, err, int, TestEngine, UNIX_ORIGIN_US};
    use crate::Config;

    fn text(f: Frame) -> String {
        match f {
            Frame::Bulk(b) => String::from_utf8(b).unwrap(),
            Frame::Verbatim { data, .. } => String::from_utf8(data).unwrap(),
            other => panic!("expected text, got {other:?}"),
        }
    }

    fn field<'a>(info: &'a str, key: &str) -> Option<&'a str> {
        info.split("\r\n")
            .find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix(':')))
    }

    fn strs(items: &[&str]) -> Frame {
        Frame::Array(items.iter().map(|s| bulk(s)).collect())
    }

    #[test]
    fn time_comes_from_now() {
        let mut t = TestEngine::new();
        let c = t.connect();
        t.advance_ms(1_500);
        let us = UNIX_ORIGIN_US + 1_500_000;
        assert_eq!(
            t.cmd(c, &["TIME"]),
            strs(&[&(us / 1_000_000).to_string(), &(us % 1_000_000).to_string()])
        );
    }

    #[test]
    fn info_server_section() {
        let config = Config {
            port: 7001,
            process_id: 4242,
            ..Config::default()
        };
        let mut t = TestEngine::with_config(config);
        let c = t.connect();
        t.advance_ms(90_000);
        let info = text(t.cmd(c, &["INFO", "server"]));
        assert!(info.starts_with("# Server\r\nredis_version:7.0.15\r\n"));
        assert!(info.ends_with("\r\n") && !info.ends_with("\r\n\r\n"));
        assert_eq!(
            field(&info, "seedkv_version"),
            Some(env!("CARGO_PKG_VERSION"))
        );
        assert_eq!(field(&info, "redis_mode"), Some("standalone"));
        assert_eq!(field(&info, "arch_bits"), Some("64"));
        assert_eq!(field(&info, "process_id"), Some("4242"));
        assert_eq!(field(&info, "tcp_port"), Some("7001"));
        assert_eq!(field(&info, "uptime_in_seconds"), Some("90"));
        assert_eq!(field(&info, "uptime_in_days"), Some("0"));
        assert_eq!(field(&info, "run_id").unwrap().len(), 40);
        assert!(field(&info, "os").is_some());
        assert!(field(&info, "connected_clients").is_none());
        // Deterministic: same seed and inputs, same text.
        let mut t2 = TestEngine::with_config(Config {
            port: 7001,
            process_id: 4242,
            ..Config::default()
        });
        let c2 = t2.connect();
        t2.advance_ms(90_000);
        assert_eq!(text(t2.cmd(c2, &["INFO", "server"])), info);
    }

    #[test]
    fn info_section_selection() {
        let mut t = TestEngine::new();
        let c = t.connect();
        let headers = |s: &str| -> Vec<String> {
            s.split("\r\n")
                .filter(|l| l.starts_with('#'))
                .map(String::from)
                .collect()
        };
        let default = headers(&text(t.cmd(c, &["INFO"])));
        assert_eq!(default, headers(&text(t.cmd(c, &["info", "default"]))));
        assert!(default.contains(&"# Keyspace".to_string()));
        assert!(!default.contains(&"# Commandstats".to_string()));
        let all = headers(&text(t.cmd(c, &["info", "all"])));
        assert_eq!(all.len(), SECTIONS.len());
        assert_eq!(all, headers(&text(t.cmd(c, &["info", "everything"]))));
        assert_eq!(
            headers(&text(t.cmd(c, &["info", "KEYSPACE", "server"]))),
            vec!["# Server", "# Keyspace"]
        );
        assert_eq!(text(t.cmd(c, &["info", "nosuch"])), "");
        // Sections are separated by one blank line.
        assert!(text(t.cmd(c, &["info", "cluster", "keyspace"]))
            .contains("cluster_enabled:0\r\n\r\n# Keyspace\r\n"));
        t.cmd(c, &["hello", "3"]);
        assert!(matches!(
            t.cmd(c, &["info", "server"]),
            Frame::Verbatim { format, .. } if &format == b"txt"
        ));
    }

    #[test]
    fn info_stats_keyspace_commandstats_memory() {
        let mut t = TestEngine::new();
        let c = t.connect();
        let before = text(t.cmd(c, &["info", "memory"]));
        let used_before: u64 = field(&before, "used_memory").unwrap().parse().unwrap();
        for i in 0..100 {
            t.cmd(c, &["SET", &format!("key:{i}"), "value"]);
        }
        t.cmd(c, &["GET", "key:1"]);
        t.cmd(c, &["nosuchcommand"]);
        let info = text(t.cmd(c, &["info", "all"]));
        assert_eq!(field(&info, "db0"), Some("keys=100,expires=0,avg_ttl=0"));
        assert_eq!(field(&info, "connected_clients"), Some("1"));
        assert_eq!(field(&info, "total_connections_received"), Some("1"));
        assert_eq!(field(&info, "maxmemory_policy"), Some("noeviction"));
        assert_eq!(field(&info, "maxmemory_human"), Some("0B"));
        let set = field(&info, "cmdstat_set").unwrap();
        assert!(set.starts_with("calls=100,usec="), "{set}");
        assert!(set.ends_with(",rejected_calls=0,failed_calls=0"));
        assert!(field(&info, "cmdstat_get").unwrap().starts_with("calls=1,"));
        let used: u64 = field(&info, "used_memory").unwrap().parse().unwrap();
        assert!(used > used_before, "{used} > {used_before}");
        // INFO itself is counted once it has run.
        let info2 = text(t.cmd(c, &["info", "commandstats"]));
        assert!(field(&info2, "cmdstat_info")
            .unwrap()
            .starts_with("calls=2,"));
    }

    #[test]
    fn bytes_to_human_like_redis() {
        assert_eq!(bytes_to_human(0), "0B");
        assert_eq!(bytes_to_human(1023), "1023B");
        assert_eq!(bytes_to_human(1262728), "1.20M");
        assert_eq!(bytes_to_human(1 << 30), "1.00G");
        assert_eq!(bytes_to_human(1536), "1.50K");
    }

    #[test]
    fn command_count_list_info_docs() {
        let mut t = TestEngine::new();
        let c = t.connect();
        let n = t.engine.server().commands.len() as i64;
        assert_eq!(t.cmd(c, &["command", "count"]), int(n));
        let Frame::Array(all) = t.cmd(c, &["command"]) else {
            panic!()
        };
        assert_eq!(all.len() as i64, n);
        let Frame::Array(names) = t.cmd(c, &["command", "list"]) else {
            panic!()
        };
        assert!(names.contains(&bulk("client|kill")) && names.contains(&bulk("get")));
        assert_eq!(
            t.cmd(c, &["command", "list", "filterby", "pattern", "config*"]),
            strs(&[
                "config",
                "config|get",
                "config|set",
                "config|resetstat",
                "config|rewrite",
                "config|help"
            ])
        );
        assert_eq!(
            t.cmd(c, &["command", "list", "filterby", "module", "x"]),
            Frame::Array(vec![])
        );
        let Frame::Array(admin) = t.cmd(c, &["command", "list", "filterby", "aclcat", "admin"])
        else {
            panic!()
        };
        assert!(admin.contains(&bulk("config|set")) && !admin.contains(&bulk("get")));
        assert_eq!(
            t.cmd(c, &["command", "list", "foo"]),
            err("ERR syntax error")
        );
        assert_eq!(
            t.cmd(c, &["command", "list", "filterby", "foo", "x"]),
            err("ERR syntax error")
        );
        assert_eq!(
            t.cmd(c, &["command", "foo"]),
            err("ERR unknown subcommand 'foo'. Try COMMAND HELP.")
        );

        // COMMAND INFO get, in RESP2: the layout Redis 7.0.15 replies.
        let get = t.cmd(c, &["command", "info", "get", "nosuch"]);
        let s = |x: &str| Frame::Simple(x.as_bytes().to_vec());
        let expected_get = Frame::Array(vec![
            bulk("get"),
            int(2),
            Frame::Array(vec![s("readonly"), s("fast")]),
            int(1),
            int(1),
            int(1),
            Frame::Array(vec![s("@read"), s("@string"), s("@fast")]),
            Frame::Array(vec![]),
            Frame::Array(vec![Frame::Array(vec![
                bulk("flags"),
                Frame::Array(vec![s("RO"), s("access")]),
                bulk("begin_search"),
                Frame::Array(vec![
                    bulk("type"),
                    bulk("index"),
                    bulk("spec"),
                    Frame::Array(vec![bulk("index"), int(1)]),
                ]),
                bulk("find_keys"),
                Frame::Array(vec![
                    bulk("type"),
                    bulk("range"),
                    bulk("spec"),
                    Frame::Array(vec![
                        bulk("lastkey"),
                        int(0),
                        bulk("keystep"),
                        int(1),
                        bulk("limit"),
                        int(0),
                    ]),
                ]),
            ])]),
            Frame::Array(vec![]),
        ]);
        assert_eq!(get, Frame::Array(vec![expected_get, Frame::Null]));

        let Frame::Array(info) = t.cmd(c, &["command", "info", "CLIENT|LIST"]) else {
            panic!()
        };
        let Frame::Array(entry) = &info[0] else {
            panic!()
        };
        assert_eq!(entry[0], bulk("client|list"));
        assert_eq!(entry[1], int(-2));
        assert_eq!(
            entry[2],
            Frame::Array(vec![s("admin"), s("noscript"), s("loading"), s("stale")])
        );
        assert_eq!(entry[7], Frame::Array(vec![s("nondeterministic_output")]));

        // DOCS: a map of name to summary/since/group/complexity(/subcommands).
        t.cmd(c, &["hello", "3"]);
        let docs = t.cmd(c, &["command", "docs", "time", "nosuch"]);
        assert_eq!(
            docs,
            Frame::Map(vec![(
                bulk("time"),
                Frame::Map(vec![
                    (bulk("summary"), bulk("Return the current server time")),
                    (bulk("since"), bulk("2.6.0")),
                    (bulk("group"), bulk("server")),
                    (bulk("complexity"), bulk("O(1)")),
                ])
            )])
        );
        let Frame::Map(config_docs) = t.cmd(c, &["command", "docs", "config"]) else {
            panic!()
        };
        let Frame::Map(fields) = &config_docs[0].1 else {
            panic!()
        };
        assert_eq!(fields[4].0, bulk("subcommands"));
    }

    #[test]
    fn command_getkeys() {
        let mut t = TestEngine::new();
        let c = t.connect();
        assert_eq!(
            t.cmd(c, &["command", "getkeys", "set", "a", "1"]),
            strs(&["a"])
        );
        assert_eq!(
            t.cmd(c, &["command", "getkeys", "nosuch", "a"]),
            err("ERR Invalid command specified")
        );
        assert_eq!(
            t.cmd(c, &["command", "getkeys", "client", "list"]),
            err("ERR The command has no key arguments")
        );
        assert_eq!(
            t.cmd(c, &["command", "getkeys", "set", "a"]),
            err("ERR Invalid number of arguments specified for command")
        );
        assert_eq!(
            t.cmd(c, &["command", "getkeys", "get"]),
            err("ERR wrong number of arguments for 'command|getkeys' command")
        );
        let s = |x: &str| Frame::Simple(x.as_bytes().to_vec());
        assert_eq!(
            t.cmd(c, &["command", "getkeysandflags", "get", "k"]),
            Frame::Array(vec![Frame::Array(vec![
                bulk("k"),
                Frame::Array(vec![s("RO"), s("access")])
            ])])
        );
    }
}
