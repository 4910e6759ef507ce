//! XGROUP CREATE | CREATECONSUMER | DELCONSUMER | DESTROY | SETID | HELP.
//!
//! Redis handles them in one function (`xgroupCommand`) whose checks run
//! in this order: the subcommand's options, the key's type, the group
//! (for SETID, CREATECONSUMER, DELCONSUMER), the key's existence (only
//! CREATE MKSTREAM may do without), then the ID.

use super::{is_word, parse_i64, parse_id, parse_strict_id};
use crate::cmd::Ctx;
use crate::notify::{class, notify};
use crate::types::stream::{Group, Stream, StreamId};
use crate::value::{Value, WRONGTYPE};

const NO_KEY: &str = "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.";

/// `addReplySubcommandSyntaxError`.
pub(super) fn subcommand_syntax_error(ctx: &mut Ctx, args: &[Vec<u8>], container: &str) {
    ctx.error(&format!(
        "ERR unknown subcommand or wrong number of arguments for '{}'. Try {container} HELP.",
        crate::util::sanitize(&args[1], 128)
    ));
}

/// The NOGROUP error of XGROUP.
fn no_group(ctx: &mut Ctx, args: &[Vec<u8>]) {
    ctx.error(&format!(
        "NOGROUP No such consumer group '{}' for key name '{}'",
        String::from_utf8_lossy(crate::commands::lists::c_str(&args[3])),
        String::from_utf8_lossy(crate::commands::lists::c_str(&args[2]))
    ));
}

/// ENTRIESREAD's value: a count, or -1 (unknown).
fn parse_entries_read(arg: &[u8]) -> Result<Option<u64>, &'static str> {
    match parse_i64(arg)? {
        -1 => Ok(None),
        n if n < 0 => Err("ERR value for ENTRIESREAD must be positive or -1"),
        n => Ok(Some(n as u64)),
    }
}

/// What the key holds: `Err` after replying WRONGTYPE.
fn key_state(ctx: &mut Ctx, key: &[u8]) -> Result<bool, ()> {
    match ctx.lookup(key) {
        None => Ok(false),
        Some(Value::Stream(_)) => Ok(true),
        Some(_) => {
            ctx.error(WRONGTYPE);
            Err(())
        }
    }
}

fn stream<'c>(ctx: &'c mut Ctx, key: &[u8]) -> &'c mut Stream {
    ctx.lookup_as(key, Value::as_stream_mut)
        .ok()
        .flatten()
        .expect("checked by the caller")
}

/// Whether the stream at `args[2]` exists and has the group `args[3]`;
/// replies the error otherwise (WRONGTYPE, then a missing key, then a
/// missing group).
fn with_group(ctx: &mut Ctx, args: &[Vec<u8>]) -> Option<()> {
    let exists = key_state(ctx, &args[2]).ok()?;
    if !exists {
        ctx.error(NO_KEY);
        return None;
    }
    let has = stream(ctx, &args[2]).groups.contains_key(&args[3]);
    if !has {
        no_group(ctx, args);
        return None;
    }
    Some(())
}

pub(super) fn create(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if args.len() > 8 {
        return subcommand_syntax_error(ctx, args, "XGROUP");
    }
    let mut mkstream = false;
    let mut entries_read = None;
    let mut i = 5;
    while i < args.len() {
        if is_word(&args[i], "mkstream") {
            mkstream = true;
            i += 1;
        } else if is_word(&args[i], "entriesread") && i + 1 < args.len() {
            match parse_entries_read(&args[i + 1]) {
                Ok(n) => entries_read = n,
                Err(e) => return ctx.error(e),
            }
            i += 2;
        } else {
            return subcommand_syntax_error(ctx, args, "XGROUP");
        }
    }
    let Ok(exists) = key_state(ctx, &args[2]) else {
        return;
    };
    if !exists && !mkstream {
        return ctx.error(NO_KEY);
    }
    let id = if args[4].as_slice() == b"$" {
        if exists {
            stream(ctx, &args[2]).last_id
        } else {
            StreamId::MIN
        }
    } else {
        match parse_strict_id(&args[4], 0) {
            Ok(id) => id,
            Err(e) => return ctx.error(e),
        }
    };
    let key = args[2].clone();
    if !exists {
        ctx.store(&key, Value::Stream(Box::new(Stream::new())), false);
        ctx.server.dirty -= 1;
    }
    let s = stream(ctx, &key);
    if s.groups.contains_key(&args[3]) {
        return ctx.error("BUSYGROUP Consumer Group name already exists");
    }
    s.groups
        .insert(args[3].clone(), Group::new(id, entries_read));
    ctx.server.dirty += 1;
    notify(ctx, class::STREAM, "xgroup-create", &key);
    ctx.ok();
}

pub(super) fn setid(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let mut entries_read = None;
    if args.len() == 7 {
        if !is_word(&args[5], "entriesread") {
            return subcommand_syntax_error(ctx, args, "XGROUP");
        }
        match parse_entries_read(&args[6]) {
            Ok(n) => entries_read = n,
            Err(e) => return ctx.error(e),
        }
    } else if args.len() != 5 {
        return subcommand_syntax_error(ctx, args, "XGROUP");
    }
    if with_group(ctx, args).is_none() {
        return;
    }
    let id = if args[4].as_slice() == b"$" {
        stream(ctx, &args[2]).last_id
    } else {
        match parse_id(&args[4], 0) {
            Ok(id) => id,
            Err(e) => return ctx.error(e),
        }
    };
    let s = stream(ctx, &args[2]);
    let g = s.groups.get_mut(&args[3]).expect("checked");
    g.last_id = id;
    g.entries_read = entries_read;
    ctx.server.dirty += 1;
    notify(ctx, class::STREAM, "xgroup-setid", &args[2]);
    ctx.ok();
}

pub(super) fn destroy(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let Ok(exists) = key_state(ctx, &args[2]) else {
        return;
    };
    if !exists {
        return ctx.error(NO_KEY);
    }
    let removed = stream(ctx, &args[2]).groups.remove(&args[3]);
    match removed {
        Some(g) => {
            ctx.work(1 + g.pel.len() as u64);
            ctx.server.dirty += 1;
            // Readers blocked on the group get NOGROUP when served.
            ctx.signal_key_ready(&args[2]);
            notify(ctx, class::STREAM, "xgroup-destroy", &args[2]);
            ctx.int(1);
        }
        None => ctx.int(0),
    }
}

pub(super) fn createconsumer(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if with_group(ctx, args).is_none() {
        return;
    }
    let now_ms = ctx.now_ms();
    let s = stream(ctx, &args[2]);
    let g = s.groups.get_mut(&args[3]).expect("checked");
    let (_, created) = g.consumer_or_create(&args[4], now_ms);
    if created {
        ctx.server.dirty += 1;
        notify(ctx, class::STREAM, "xgroup-createconsumer", &args[2]);
    }
    ctx.int(i64::from(created));
}

pub(super) fn delconsumer(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if with_group(ctx, args).is_none() {
        return;
    }
    let s = stream(ctx, &args[2]);
    let g = s.groups.get_mut(&args[3]).expect("checked");
    let pending = g.delete_consumer(&args[4]);
    if let Some(n) = pending {
        ctx.work(1 + n as u64);
        ctx.server.dirty += 1;
        notify(ctx, class::STREAM, "xgroup-delconsumer", &args[2]);
    }
    ctx.int(pending.unwrap_or(0) as i64);
}

pub(super) fn help(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    const HELP: &[&str] = &[
        "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CREATE <key> <groupname> <id|$> [option]",
        "    Create a new consumer group. Options are:",
        "    * MKSTREAM",
        "      Create the empty stream if it does not exist.",
        "    * ENTRIESREAD entries_read",
        "      Set the group's entries_read counter (internal use).",
        "CREATECONSUMER <key> <groupname> <consumer>",
        "    Create a new consumer in the specified group.",
        "DELCONSUMER <key> <groupname> <consumer>",
        "    Remove the specified consumer.",
        "DESTROY <key> <groupname>",
        "    Remove the specified group.",
        "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
        "    Set the current group ID and entries_read counter.",
        "HELP",
        "    Prints this help.",
    ];
    let mut w = ctx.w();
    w.array_len(HELP.len());
    for line in HELP {
        w.simple(line);
    }
}
