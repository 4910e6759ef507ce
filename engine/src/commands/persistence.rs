//! SAVE, BGSAVE [SCHEDULE], LASTSAVE and BGREWRITEAOF, as Redis 7.0.15's
//! `rdb.c` and `aof.c` answer them (the work is in [`crate::persist`]).
//!
//! SAVE serializes the dataset on the command thread (Redis's `rdbSave`)
//! and then waits, unserved, for its inline storage requests; its `+OK`
//! or `-ERR` comes when the file is renamed into place. On a host without
//! storage (`Config::storage` off) SAVE, BGSAVE and BGREWRITEAOF fail as
//! they do on a server whose disk refuses: `-ERR`.

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::persist::rdb::{self, AfterSave, BgsaveRefused};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "save",
        arity: 1,
        flags: ADMIN | NOSCRIPT | NO_MULTI,
        acl_categories: &["admin", "slow", "dangerous"],
        group: "server",
        summary: "Synchronously save the dataset to disk",
        complexity: "O(N) where N is the total number of keys in all databases",
        handler: Some(save),
        ..CommandSpec::DEFAULT
    },
    CommandSpec {
        name: "bgsave",
        arity: -1,
        flags: ADMIN | NOSCRIPT,
        acl_categories: &["admin", "slow", "dangerous"],
        group: "server",
        summary: "Asynchronously save the dataset to disk",
        handler: Some(bgsave),
        ..CommandSpec::DEFAULT
    },
    CommandSpec {
        name: "lastsave",
        arity: 1,
        flags: LOADING | STALE | FAST,
        acl_categories: &["admin", "fast", "dangerous"],
        group: "server",
        summary: "Get the UNIX time stamp of the last successful save to disk",
        tips: &["nondeterministic_output"],
        handler: Some(lastsave),
        ..CommandSpec::DEFAULT
    },
    CommandSpec {
        name: "bgrewriteaof",
        arity: 1,
        flags: ADMIN | NOSCRIPT,
        acl_categories: &["admin", "slow", "dangerous"],
        group: "server",
        summary: "Asynchronously rewrite the append-only file",
        handler: Some(bgrewriteaof),
        ..CommandSpec::DEFAULT
    },
];

const IN_PROGRESS: &str = "ERR Background save already in progress";

fn save(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    if ctx.server.persist.rdb.child.is_some() {
        return ctx.error(IN_PROGRESS);
    }
    if !ctx.server.config.storage || ctx.server.persist.rdb.save.is_some() {
        return ctx.error("ERR");
    }
    let client = ctx.client_id;
    let after = AfterSave::Reply(client);
    let work_units = rdb::start_save(ctx.server, ctx.events, ctx.now, after);
    ctx.work(work_units);
    if let Some(c) = ctx.clients.get_mut(&client) {
        c.waiting_save = true;
    }
}

fn bgsave(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let schedule = match args.len() {
        1 => false,
        2 if args[1].eq_ignore_ascii_case(b"schedule") => true,
        _ => return ctx.error("ERR syntax error"),
    };
    if !ctx.server.config.storage {
        return ctx.error("ERR");
    }
    match rdb::start_bgsave(ctx.server, ctx.events, ctx.now) {
        Ok(()) => ctx.w().simple("Background saving started"),
        Err(BgsaveRefused::InProgress) => ctx.error(IN_PROGRESS),
        Err(BgsaveRefused::OtherChild) if schedule => {
            ctx.server.persist.rdb.scheduled = true;
            ctx.w().simple("Background saving scheduled");
        }
        Err(BgsaveRefused::OtherChild) => ctx.error(
            "ERR Another child process is active (AOF?): can't BGSAVE right now. \
             Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.",
        ),
    }
}

fn lastsave(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let at = ctx.server.persist.rdb.lastsave_unix_s as i64;
    ctx.int(at);
}

fn bgrewriteaof(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    if !ctx.server.config.storage {
        return ctx.error("ERR");
    }
    crate::persist::aof::bgrewriteaof_command(ctx);
}
