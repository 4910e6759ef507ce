//! COMMAND and its subcommands (COUNT INFO DOCS LIST GETKEYS
//! GETKEYSANDFLAGS HELP): the command table, rendered in Redis 7.0's
//! layouts. The table iterates in name order, so every listing is
//! deterministic.

mod render;

use crate::cmd::{CommandSpec, Ctx};
use crate::commands::config::help_reply;
use crate::glob::{self, glob_match};
use crate::meta::{self, KeyRef};
use crate::pipeline::{lookup, lookup_full_name, Found};
use render::{full_name, meta_of, Render};

/// COMMAND with no subcommand: every command's info.
pub(super) fn command_all(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let specs: Vec<&'static CommandSpec> = ctx.server.commands.iter().collect();
    let mut w = ctx.w();
    w.array_len(specs.len());
    let mut render = Render {
        w: &mut w,
        entries: 0,
    };
    for spec in specs {
        render.info(None, spec);
    }
    let entries = render.entries;
    ctx.work(entries);
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
    let mut w = ctx.w();
    w.array_len(found.len());
    let mut render = Render {
        w: &mut w,
        entries: 0,
    };
    for entry in found {
        match entry {
            Some((parent, spec)) => render.info(parent, spec),
            None => {
                render.entries += 1;
                render.w.null();
            }
        }
    }
    let entries = render.entries;
    ctx.work(entries);
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
    let mut w = ctx.w();
    w.map_len(found.len());
    let mut render = Render {
        w: &mut w,
        entries: 0,
    };
    for (parent, spec) in found {
        render.w.bulk_str(&full_name(parent, spec));
        render.docs(parent, spec);
    }
    let entries = render.entries + (args.len() as u64 - 2);
    ctx.work(entries);
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

/// The keys of the command in `args[2..]`, or Redis's error text
/// (`getKeysSubcommandImpl` in src/server.c).
fn keys_of(ctx: &mut Ctx, args: &[Vec<u8>]) -> Result<Vec<KeyRef>, &'static str> {
    let cmd = &args[2..];
    let (parent, spec) = match lookup(&ctx.server.commands, cmd) {
        None | Some(Found::UnknownSubcommand(_)) => return Err("ERR Invalid command specified"),
        Some(Found::NoSubcommand(top)) => (None, top),
        Some(Found::Runs(resolved)) => resolved,
    };
    // The key search reads each argument at most a few times.
    ctx.work(cmd.len() as u64);
    let Some(meta) = meta_of(parent, spec) else {
        return keys_from_range(spec, cmd);
    };
    if !meta::has_keys(meta) {
        return Err(meta::KeysError::NoKeyArguments.message());
    }
    if !spec.arity_ok(cmd.len()) {
        return Err("ERR Invalid number of arguments specified for command");
    }
    meta::getkeys(meta, cmd).map_err(meta::KeysError::message)
}

/// GETKEYS for a command without generated metadata: its key range.
fn keys_from_range(spec: &CommandSpec, cmd: &[Vec<u8>]) -> Result<Vec<KeyRef>, &'static str> {
    if spec.first_key <= 0 {
        return Err(meta::KeysError::NoKeyArguments.message());
    }
    if !spec.arity_ok(cmd.len()) {
        return Err("ERR Invalid number of arguments specified for command");
    }
    let keys: Vec<KeyRef> = spec
        .key_indices(cmd.len())
        .into_iter()
        .map(|index| KeyRef { index, flags: &[] })
        .collect();
    if keys.is_empty() {
        return Err(meta::KeysError::InvalidArguments.message());
    }
    Ok(keys)
}

pub(super) fn command_getkeys(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match keys_of(ctx, args) {
        Err(e) => ctx.error(e),
        Ok(keys) => {
            ctx.work(keys.len() as u64);
            let mut w = ctx.w();
            w.array_len(keys.len());
            for key in keys {
                w.bulk(&args[2 + key.index]);
            }
        }
    }
}

pub(super) fn command_getkeysandflags(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match keys_of(ctx, args) {
        Err(e) => ctx.error(e),
        Ok(keys) => {
            ctx.work(keys.len() as u64);
            let mut w = ctx.w();
            w.array_len(keys.len());
            for key in keys {
                w.array_len(2);
                w.bulk(&args[2 + key.index]);
                w.set_len(key.flags.len());
                for flag in key.flags {
                    w.simple(flag);
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
