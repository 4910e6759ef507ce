//! COMMAND and its subcommands (COUNT INFO DOCS LIST GETKEYS
//! GETKEYSANDFLAGS HELP): the command table, rendered in Redis 7.0's
//! layouts. The table iterates in name order, so every listing is
//! deterministic.

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::commands::config::help_reply;
use crate::glob::{self, glob_match};
use crate::pipeline::{lookup, lookup_full_name, Found};
use crate::resp::ReplyWriter;

/// The name COMMAND shows: `client|list` for subcommands.
fn full_name(parent: Option<&CommandSpec>, spec: &CommandSpec) -> String {
    match parent {
        Some(p) if !spec.name.contains('|') => format!("{}|{}", p.name, spec.name),
        _ => spec.name.to_string(),
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
pub(super) fn command_all(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let specs: Vec<&'static CommandSpec> = ctx.server.commands.iter().collect();
    ctx.work(specs.len() as u64);
    let mut w = ctx.w();
    w.array_len(specs.len());
    for spec in specs {
        write_command_info(&mut w, None, spec);
    }
}

pub(super) fn command_count(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let n = ctx.server.commands.len();
    ctx.int(n as i64);
}

pub(super) fn command_info(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if args.len() == 2 {
        return command_all(ctx, args);
    }
    let found: Vec<_> = args[2..]
        .iter()
        .map(|name| lookup_full_name(&ctx.server.commands, name))
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

pub(super) fn command_docs(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let found: Vec<(Option<&'static CommandSpec>, &'static CommandSpec)> = if args.len() == 2 {
        ctx.server.commands.iter().map(|s| (None, s)).collect()
    } else {
        args[2..]
            .iter()
            .filter_map(|name| lookup_full_name(&ctx.server.commands, name))
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
pub(super) fn command_list(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
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
    let mut glob_steps = 0;
    for spec in ctx.server.commands.iter() {
        let subs = spec.subcommands.iter().map(|sub| (Some(spec), sub));
        for (parent, s) in std::iter::once((None, spec)).chain(subs) {
            let name = full_name(parent, s);
            let keep = match &filter {
                Filter::All => true,
                Filter::None => false,
                Filter::AclCat(cat) => s.acl_categories.iter().any(|c| c == cat),
                Filter::Pattern(p) => glob_match(p, name.as_bytes(), true, &mut glob_steps),
            };
            if keep {
                names.push(name);
            }
        }
    }
    ctx.work(names.len() as u64 + ctx.server.commands.len() as u64 + glob::work_units(glob_steps));
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
    let spec = match lookup(&ctx.server.commands, cmd) {
        None | Some(Found::UnknownSubcommand(_)) => return Err("ERR Invalid command specified"),
        Some(Found::NoSubcommand(top)) => top,
        Some(Found::Runs((_, spec))) => spec,
    };
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

pub(super) fn command_getkeys(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
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

pub(super) fn command_getkeysandflags(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
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

pub(super) fn command_help(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
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
