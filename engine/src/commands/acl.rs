//! ACL: SETUSER GETUSER DELUSER USERS LIST WHOAMI CAT GENPASS DRYRUN LOG
//! LOAD SAVE HELP, over the users of [`crate::acl`]. Changing or deleting a
//! user disconnects the clients that may no longer do what they do, as
//! Redis 7.0.15 does: DELUSER closes every client of the user, SETUSER
//! closes its subscribers to channels it no longer allows.

use crate::acl::user::{merge_selector_args, valid_user_name};
use crate::acl::{check, User, CATEGORIES, DEFAULT_USER, GENPASS_BITS_MAX};
use crate::client::{ClientId, CloseReason};
use crate::clients::close_client;
use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::commands::config::help_reply;
use crate::pipeline::Found;
use crate::util::{parse_i64_strict, sanitize};

const ACL_SUB: CommandSpec = CommandSpec {
    arity: 2,
    flags: ADMIN | NOSCRIPT | LOADING | STALE,
    acl_categories: &["admin", "slow", "dangerous"],
    group: "server",
    since: "6.0.0",
    complexity: "O(N). Where N is the number of configured users.",
    ..CommandSpec::DEFAULT
};

/// Subcommands anyone may run (no `admin` flag).
const ACL_SUB_USER: CommandSpec = CommandSpec {
    flags: NOSCRIPT | LOADING | STALE,
    acl_categories: &["slow"],
    ..ACL_SUB
};

const ACL_SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "acl|cat",
        arity: -2,
        summary: "List the ACL categories or the commands inside a category",
        complexity: "O(1) since the categories and commands are a fixed set.",
        handler: Some(acl_cat),
        ..ACL_SUB_USER
    },
    CommandSpec {
        name: "acl|deluser",
        arity: -3,
        summary: "Remove the specified ACL users and the associated rules",
        complexity: "O(1) amortized time considering the typical user.",
        handler: Some(acl_deluser),
        ..ACL_SUB
    },
    CommandSpec {
        name: "acl|dryrun",
        arity: -4,
        summary:
            "Returns whether the user can execute the given command without executing the command.",
        since: "7.0.0",
        complexity: "O(1).",
        handler: Some(acl_dryrun),
        ..ACL_SUB
    },
    CommandSpec {
        name: "acl|genpass",
        arity: -2,
        summary: "Generate a pseudorandom secure password to use for ACL users",
        complexity: "O(N)",
        handler: Some(acl_genpass),
        ..ACL_SUB_USER
    },
    CommandSpec {
        name: "acl|getuser",
        arity: 3,
        summary: "Get the rules for a specific ACL user",
        complexity:
            "O(N). Where N is the number of password, command and pattern rules that the user has.",
        handler: Some(acl_getuser),
        ..ACL_SUB
    },
    CommandSpec {
        name: "acl|help",
        flags: LOADING | STALE,
        summary: "Show helpful text about the different subcommands",
        complexity: "O(1)",
        handler: Some(acl_help),
        ..ACL_SUB_USER
    },
    CommandSpec {
        name: "acl|list",
        summary: "List the current ACL rules in ACL config file format",
        handler: Some(acl_list),
        ..ACL_SUB
    },
    CommandSpec {
        name: "acl|load",
        summary: "Reload the ACLs from the configured ACL file",
        handler: Some(acl_load),
        ..ACL_SUB
    },
    CommandSpec {
        name: "acl|log",
        arity: -2,
        summary: "List latest events denied because of ACLs in place",
        complexity: "O(N) with N being the number of entries shown.",
        handler: Some(acl_log),
        ..ACL_SUB
    },
    CommandSpec {
        name: "acl|save",
        summary: "Save the current ACL rules in the configured ACL file",
        handler: Some(acl_save),
        ..ACL_SUB
    },
    CommandSpec {
        name: "acl|setuser",
        arity: -3,
        summary: "Modify or create the rules for a specific ACL user",
        complexity: "O(N). Where N is the number of rules provided.",
        handler: Some(acl_setuser),
        ..ACL_SUB
    },
    CommandSpec {
        name: "acl|users",
        summary: "List the username of all the configured ACL rules",
        handler: Some(acl_users),
        ..ACL_SUB
    },
    CommandSpec {
        name: "acl|whoami",
        summary: "Return the name of the user associated to the current connection",
        complexity: "O(1)",
        handler: Some(acl_whoami),
        ..ACL_SUB_USER
    },
];

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    name: "acl",
    arity: -2,
    acl_categories: &["slow"],
    group: "server",
    summary: "A container for Access List Control commands",
    since: "6.0.0",
    complexity: "Depends on subcommand.",
    subcommands: ACL_SUBCOMMANDS,
    ..CommandSpec::DEFAULT
}];

/// Redis's `addReplySubcommandSyntaxError`, for a subcommand called with
/// an argument count its handler does not take.
fn syntax_error(ctx: &mut Ctx, args: &[Vec<u8>]) {
    ctx.error(&format!(
        "ERR unknown subcommand or wrong number of arguments for '{}'. Try ACL HELP.",
        sanitize(&args[1], 128)
    ));
}

/// `ACL SETUSER name rule...`: the rules are applied to a copy, so that a
/// refused rule changes nothing.
fn acl_setuser(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let name = &args[2];
    if !valid_user_name(name) {
        return ctx.error("ERR Usernames can't contain spaces or null characters");
    }
    ctx.work(args.len() as u64);
    let rules = match merge_selector_args(&args[3..]) {
        Ok(rules) => rules,
        Err(start) => {
            let mut msg = b"ERR Unmatched parenthesis in acl selector starting at '".to_vec();
            msg.extend_from_slice(&args[3 + start]);
            msg.extend_from_slice(b"'.");
            return ctx.w().error_bytes(&msg);
        }
    };
    let acl = &ctx.server.acl;
    let original = acl.users.get(name.as_slice()).cloned();
    let mut user = match &original {
        Some(u) => u.clone(),
        None => User::new(name.clone(), &acl.index, acl.pubsub_default_all),
    };
    let mut steps = 0;
    let applied = rules.iter().try_for_each(|rule| {
        user.set_rule(rule, &acl.index, acl.pubsub_default_all, &mut steps)
            .map_err(|e| (rule, e))
    });
    ctx.work(crate::glob::work_units(steps));
    if let Err((rule, e)) = applied {
        let mut msg = b"ERR Error in ACL SETUSER modifier '".to_vec();
        msg.extend_from_slice(c_string(rule));
        msg.extend_from_slice(format!("': {}", e.message()).as_bytes());
        return ctx.w().error_bytes(&msg);
    }
    if let Some(original) = original {
        let victims = subscribers_losing_channels(ctx, &original, &user);
        disconnect(ctx, victims);
    }
    ctx.server.acl.users.insert(name.clone(), user);
    ctx.ok();
}

/// The part of a rule a C string holds: Redis formats the rule with `%s`.
fn c_string(bytes: &[u8]) -> &[u8] {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    &bytes[..end]
}

/// Redis's `ACLKillPubsubClientsIfNeeded`: when `new` no longer allows
/// every channel `original` allowed, the user's subscribers with a
/// subscription outside the new patterns.
fn subscribers_losing_channels(ctx: &mut Ctx, original: &User, new: &User) -> Vec<ClientId> {
    if new.selectors.iter().any(|s| s.all_channels) {
        return Vec::new();
    }
    let upcoming: Vec<Vec<u8>> = new
        .selectors
        .iter()
        .flat_map(|s| s.channels.iter().cloned())
        .collect();
    let kept = original
        .selectors
        .iter()
        .flat_map(|s| s.channels.iter())
        .all(|c| upcoming.contains(c));
    ctx.work(upcoming.len() as u64);
    if kept {
        return Vec::new();
    }
    let mut steps = 0;
    let victims = ctx
        .clients
        .values()
        .filter(|c| c.user == original.name && !c.subscriptions.is_empty())
        .filter(|c| {
            let subs = &c.subscriptions;
            let pattern_lost = subs
                .patterns
                .iter()
                .any(|p| !check::channel_allowed(&upcoming, p, true, &mut steps));
            pattern_lost
                || subs
                    .channels
                    .iter()
                    .chain(subs.shard_channels.iter())
                    .any(|ch| !check::channel_allowed(&upcoming, ch, false, &mut steps))
        })
        .map(|c| c.id)
        .collect();
    ctx.work(ctx.clients.len() as u64 + crate::glob::work_units(steps));
    victims
}

/// Closes `victims`: others at once (Redis frees them), the caller after
/// its reply.
fn disconnect(ctx: &mut Ctx, victims: Vec<ClientId>) {
    for victim in victims {
        let reason = match victim == ctx.client_id {
            true => CloseReason::Quit,
            false => CloseReason::Killed,
        };
        close_client(ctx.clients, ctx.events, victim, reason);
        if let Some(c) = ctx.clients.get_mut(&victim) {
            drop(ctx.server.blocking.unpark(c));
        }
    }
}

/// `ACL DELUSER name...`: the number deleted; their clients become the
/// default user's, unauthenticated, and are closed.
fn acl_deluser(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if args[2..].iter().any(|n| n.as_slice() == DEFAULT_USER) {
        return ctx.error("ERR The 'default' user cannot be removed");
    }
    let mut deleted = 0;
    for name in &args[2..] {
        if ctx.server.acl.users.remove(name.as_slice()).is_none() {
            continue;
        }
        deleted += 1;
        let victims: Vec<ClientId> = ctx
            .clients
            .values_mut()
            .filter(|c| c.user == *name)
            .map(|c| {
                c.user = DEFAULT_USER.to_vec();
                c.authenticated = false;
                c.id
            })
            .collect();
        ctx.work(ctx.clients.len() as u64);
        disconnect(ctx, victims);
    }
    ctx.int(deleted);
}

/// `ACL GETUSER name`: flags, passwords, the root selector's commands,
/// keys and channels, and the other selectors.
fn acl_getuser(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let acl = &ctx.server.acl;
    let Some(user) = acl.users.get(args[2].as_slice()) else {
        return ctx.null();
    };
    let mut steps = 0;
    let root = describe_selector(user.root(), &acl.index, &mut steps);
    let others: Vec<[Vec<u8>; 3]> = user.selectors[1..]
        .iter()
        .map(|s| describe_selector(s, &acl.index, &mut steps))
        .collect();
    let (flags, passwords) = (user.flags(), user.passwords.clone());
    let mut w = ctx.w();
    w.map_len(6);
    w.bulk_str("flags");
    w.set_len(flags.len());
    for f in flags {
        w.bulk_str(f);
    }
    w.bulk_str("passwords");
    w.array_len(passwords.len());
    for p in &passwords {
        w.bulk_str(p);
    }
    write_selector(&mut w, &root);
    w.bulk_str("selectors");
    w.array_len(others.len());
    for s in &others {
        w.map_len(3);
        write_selector(&mut w, s);
    }
    ctx.work(crate::glob::work_units(steps) + passwords.len() as u64);
}

fn describe_selector(
    s: &crate::acl::selector::Selector,
    index: &crate::acl::CommandIndex,
    steps: &mut u64,
) -> [Vec<u8>; 3] {
    [
        s.describe_commands(index, steps),
        s.keys_text(),
        s.channels_text(),
    ]
}

fn write_selector(w: &mut crate::resp::ReplyWriter, [commands, keys, channels]: &[Vec<u8>; 3]) {
    w.bulk_str("commands");
    w.bulk(commands);
    w.bulk_str("keys");
    w.bulk(keys);
    w.bulk_str("channels");
    w.bulk(channels);
}

/// `ACL USERS`: the names, in byte order.
fn acl_users(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let names: Vec<Vec<u8>> = ctx.server.acl.users.keys().cloned().collect();
    ctx.work(names.len() as u64);
    let mut w = ctx.w();
    w.array_len(names.len());
    for n in &names {
        w.bulk(n);
    }
}

/// `ACL LIST`: each user as a config line (`user name rules...`).
fn acl_list(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let acl = &ctx.server.acl;
    let mut steps = 0;
    let lines: Vec<Vec<u8>> = acl
        .users
        .values()
        .map(|u| {
            let mut line = b"user ".to_vec();
            line.extend_from_slice(&u.name);
            line.push(b' ');
            line.extend_from_slice(&u.describe(&acl.index, &mut steps));
            line
        })
        .collect();
    ctx.work(crate::glob::work_units(steps));
    let mut w = ctx.w();
    w.array_len(lines.len());
    for l in &lines {
        w.bulk(l);
    }
}

fn acl_whoami(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let name = ctx.client().user.clone();
    ctx.bulk(&name);
}

/// Whether ACL LOAD / ACL SAVE may start; answers the client when not.
fn acl_file_usable(ctx: &mut Ctx) -> bool {
    if crate::persist::aclfile::configured(ctx.server).is_empty() {
        ctx.error("ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.");
        return false;
    }
    // The file is read or written by requests the host answers later;
    // inside EXEC the reply cannot wait (Redis does it synchronously).
    if ctx.in_exec || !ctx.server.config.storage || ctx.server.persist.acl_file.is_some() {
        ctx.error("ERR ACL LOAD and ACL SAVE need the server's disk and cannot run inside MULTI/EXEC in seedkv");
        return false;
    }
    true
}

/// The client waits for the `aclfile` requests (see
/// [`crate::persist::aclfile`]); their end answers it.
fn wait_for_acl_file(ctx: &mut Ctx) {
    let client = ctx.client_id;
    if let Some(c) = ctx.clients.get_mut(&client) {
        c.waiting_save = true;
    }
}

/// `ACL LOAD`: the users of the `aclfile` replace the current ones when
/// the whole file is valid (see [`crate::acl::file::parse`]).
fn acl_load(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    if !acl_file_usable(ctx) {
        return;
    }
    let caller = crate::persist::aclfile::Caller::Client(ctx.client_id);
    crate::persist::aclfile::start_load(ctx.server, ctx.events, caller);
    wait_for_acl_file(ctx);
}

/// `ACL SAVE`: every user, as ACL LIST describes it, to the `aclfile`.
fn acl_save(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    if !acl_file_usable(ctx) {
        return;
    }
    let mut steps = 0;
    let bytes = crate::acl::file::render(&ctx.server.acl, &mut steps);
    ctx.work(crate::glob::work_units(steps) + bytes.len() as u64 / 64);
    let (client, now_ms) = (ctx.client_id, ctx.now.unix_ms());
    crate::persist::aclfile::start_save(ctx.server, ctx.events, client, bytes, now_ms);
    wait_for_acl_file(ctx);
}

/// `ACL CAT [category]`: the categories, or a category's commands.
fn acl_cat(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match args.len() {
        2 => {
            let mut w = ctx.w();
            w.array_len(CATEGORIES.len());
            for c in CATEGORIES {
                w.bulk_str(c);
            }
        }
        3 => {
            let Some(bit) = crate::acl::category_bit(&args[2]) else {
                return ctx.error(&format!(
                    "ERR Unknown category '{}'",
                    String::from_utf8_lossy(&args[2][..args[2].len().min(128)])
                ));
            };
            let index = &ctx.server.acl.index;
            let names: Vec<String> = index
                .commands
                .iter()
                .filter(|c| c.categories & bit != 0)
                .map(|c| c.full_name.clone())
                .collect();
            ctx.work(index.len() as u64);
            let mut w = ctx.w();
            w.array_len(names.len());
            for n in &names {
                w.bulk_str(n);
            }
        }
        _ => syntax_error(ctx, args),
    }
}

/// `ACL GENPASS [bits]`: random hex digits (bits / 4, rounded up) from the
/// engine's seeded RNG.
fn acl_genpass(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let bits = match args.len() {
        2 => 256,
        3 => match parse_i64_strict(&args[2]) {
            Some(bits) => bits,
            None => return ctx.error("ERR value is not an integer or out of range"),
        },
        _ => return syntax_error(ctx, args),
    };
    if bits <= 0 || bits > GENPASS_BITS_MAX {
        return ctx.error(&format!(
            "ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to {GENPASS_BITS_MAX}"
        ));
    }
    let chars = (bits as usize).div_ceil(4);
    let password: Vec<u8> = (0..chars)
        .map(|_| {
            let nibble = rand::Rng::gen_range(&mut ctx.server.rng, 0..16u8);
            b"0123456789abcdef"[nibble as usize]
        })
        .collect();
    ctx.work(chars as u64 / 16 + 1);
    ctx.bulk(&password);
}

/// `ACL LOG [count|RESET]`: the newest entries (10 by default).
fn acl_log(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let count = match args.len() {
        2 => 10,
        3 if args[2].eq_ignore_ascii_case(b"reset") => {
            ctx.work(ctx.server.acl.log.len() as u64);
            ctx.server.acl.log.reset();
            return ctx.ok();
        }
        3 => match parse_i64_strict(&args[2]) {
            Some(n) => n.max(0) as usize,
            None => return ctx.error("ERR value is not an integer or out of range"),
        },
        _ => return syntax_error(ctx, args),
    };
    let now_ms = ctx.now.unix_ms();
    let shown = count.min(ctx.server.acl.log.len());
    let mut w = crate::resp::ReplyWriter::new(&mut ctx.reply, ctx.protocol);
    ctx.server.acl.log.write(&mut w, count, now_ms);
    ctx.work(shown as u64);
}

/// `ACL DRYRUN user command arg...`: whether the user could run it, as a
/// bulk string naming the denial.
fn acl_dryrun(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let acl = &ctx.server.acl;
    let Some(user) = acl.users.get(args[2].as_slice()) else {
        return ctx.error(&format!(
            "ERR User '{}' not found",
            String::from_utf8_lossy(c_string(&args[2]))
        ));
    };
    let command = &args[3..];
    let spec = match crate::pipeline::lookup(&ctx.server.commands, command) {
        Some(Found::Runs((_, spec))) => spec,
        Some(Found::NoSubcommand(top)) => top,
        None | Some(Found::UnknownSubcommand(_)) => {
            return ctx.error(&format!(
                "ERR Command '{}' not found",
                String::from_utf8_lossy(c_string(&args[3]))
            ))
        }
    };
    let id = acl.index.id_of(spec);
    let full_name = id.map_or(spec.name.to_string(), |id| {
        acl.index.commands[id].full_name.clone()
    });
    if !spec.arity_ok(command.len()) {
        return ctx.error(&format!(
            "ERR wrong number of arguments for '{full_name}' command"
        ));
    }
    let mut steps = 0;
    let result = check::check(user, &acl.index, spec, command, &mut steps);
    ctx.work(crate::glob::work_units(steps));
    match result {
        Ok(()) => ctx.ok(),
        Err(check::Denied::Command) => ctx.bulk(
            format!("This user has no permissions to run the '{full_name}' command").as_bytes(),
        ),
        Err(check::Denied::Key(i)) => {
            let mut text = b"This user has no permissions to access the '".to_vec();
            text.extend_from_slice(c_string(&command[i]));
            text.extend_from_slice(b"' key");
            ctx.bulk(&text)
        }
        Err(check::Denied::Channel(i)) => {
            let mut text = b"This user has no permissions to access the '".to_vec();
            text.extend_from_slice(c_string(&command[i]));
            text.extend_from_slice(b"' channel");
            ctx.bulk(&text)
        }
    }
}

fn acl_help(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    help_reply(
        ctx,
        "ACL",
        &[
            "CAT [<category>]",
            "    List all commands that belong to <category>, or all command categories",
            "    when no category is specified.",
            "DELUSER <username> [<username> ...]",
            "    Delete a list of users.",
            "DRYRUN <username> <command> [<arg> ...]",
            "    Returns whether the user can execute the given command without executing the command.",
            "GETUSER <username>",
            "    Get the user's details.",
            "GENPASS [<bits>]",
            "    Generate a secure 256-bit user password. The optional `bits` argument can",
            "    be used to specify a different size.",
            "LIST",
            "    Show users details in config file format.",
            "LOAD",
            "    Reload users from the ACL file.",
            "LOG [<count> | RESET]",
            "    Show the ACL log entries.",
            "SAVE",
            "    Save the current config to the ACL file.",
            "SETUSER <username> <attribute> [<attribute> ...]",
            "    Create or modify a user with the specified attributes.",
            "USERS",
            "    List all the registered usernames.",
            "WHOAMI",
            "    Return the current connection username.",
        ],
    );
}
