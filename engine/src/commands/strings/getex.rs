//! GETSET GETDEL GETEX: reads that also write (replace, delete or re-time
//! the key), each replying with the value as GET would have.

use super::{
    expire_at_ms, get_generic, parse_extended_options, string_at, WrongType, STRING, SYNTAX_ERROR,
    WRITE_FAST,
};
use crate::cmd::{flags::*, CommandSpec, Ctx, Lookup};
use crate::commands::expire::propagate_deletion;
use crate::notify::{class, notify};
use crate::value::{RString, Value, WRONGTYPE};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "getset",
        arity: 3,
        flags: WRITE | DENYOOM | FAST,
        acl_categories: WRITE_FAST,
        summary: "Set the string value of a key and return its old value",
        handler: Some(getset),
        ..STRING
    },
    CommandSpec {
        name: "getdel",
        arity: 2,
        flags: WRITE | FAST,
        acl_categories: WRITE_FAST,
        summary: "Get the value of a key and delete the key",
        since: "6.2.0",
        handler: Some(getdel),
        ..STRING
    },
    CommandSpec {
        name: "getex",
        arity: -2,
        flags: WRITE | FAST,
        acl_categories: WRITE_FAST,
        summary: "Get the value of a key and optionally set its expiration",
        since: "6.2.0",
        handler: Some(getex),
        ..STRING
    },
];

fn getset(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if get_generic(ctx, &args[1]).is_err() {
        return;
    }
    // Redis 7.0 replays GETSET as the SET it amounts to.
    ctx.propagate(&[b"SET", args[1].as_slice(), &args[2]]);
    let value = RString::from_arg(&mut args[2]);
    ctx.store(&args[1], Value::Str(value), false);
    notify(ctx, class::STRING, "set", &args[1]);
}

fn getdel(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if get_generic(ctx, &args[1]).is_err() {
        return;
    }
    let lazy = ctx.server.config.lazyfree_lazy_user_del;
    if ctx.delete(&args[1], lazy) {
        propagate_deletion(ctx, &args[1], lazy);
        notify(ctx, class::GENERIC, "del", &args[1]);
    }
}

fn getex(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let Some(opts) = parse_extended_options(args, 2, false) else {
        return ctx.error(SYNTAX_ERROR);
    };
    let key = &args[1];
    // A missing key is null even when the expire argument is invalid.
    match string_at(ctx, key, Lookup::Read) {
        Ok(None) => return ctx.null(),
        Err(WrongType) => return ctx.error(WRONGTYPE),
        Ok(Some(_)) => {}
    }
    let when_ms = match opts.expire {
        None => None,
        Some((kind, i)) => match expire_at_ms(ctx, &args[i], kind) {
            Ok(ms) => Some((kind, ms)),
            Err(e) => return ctx.error(&e),
        },
    };
    let _ = get_generic(ctx, key);
    if let Some((kind, ms)) = when_ms {
        if !kind.relative() && ms <= ctx.now_ms() {
            // An absolute time already past deletes the key after replying
            // (and, unlike expiry, is not counted in `expired_keys`).
            let lazy = ctx.server.config.lazyfree_lazy_expire;
            ctx.delete(key, lazy);
            propagate_deletion(ctx, key, lazy);
            notify(ctx, class::GENERIC, "del", key);
        } else {
            let db = ctx.db_index();
            ctx.set_expire_in(db, key, ms);
            ctx.server.dirty += 1;
            let ms_text = ms.to_string();
            ctx.propagate(&[b"PEXPIREAT", key.as_slice(), ms_text.as_bytes()]);
            notify(ctx, class::GENERIC, "expire", key);
        }
    } else if opts.persist && ctx.db().persist(key) {
        ctx.server.dirty += 1;
        ctx.propagate(&[b"PERSIST", key.as_slice()]);
        notify(ctx, class::GENERIC, "persist", key);
    }
}
