//! MGET MSET MSETNX: the multi-key string commands. Work is one unit per key.

use super::{READ_FAST, STRING, WRITE_SLOW};
use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::notify::{class, notify};
use crate::value::{RString, Value};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "mget",
        arity: -2,
        flags: READONLY | FAST,
        last_key: -1,
        acl_categories: READ_FAST,
        summary: "Get the values of all the given keys",
        complexity: "O(N) where N is the number of keys to retrieve.",
        handler: Some(mget),
        ..STRING
    },
    CommandSpec {
        name: "mset",
        arity: -3,
        flags: WRITE | DENYOOM,
        last_key: -1,
        key_step: 2,
        acl_categories: WRITE_SLOW,
        summary: "Set multiple keys to multiple values",
        since: "1.0.1",
        complexity: "O(N) where N is the number of keys to set.",
        handler: Some(mset),
        ..STRING
    },
    CommandSpec {
        name: "msetnx",
        arity: -3,
        flags: WRITE | DENYOOM,
        last_key: -1,
        key_step: 2,
        acl_categories: WRITE_SLOW,
        summary: "Set multiple keys to multiple values, only if none of the keys exist",
        since: "1.0.1",
        complexity: "O(N) where N is the number of keys to set.",
        handler: Some(msetnx),
        ..STRING
    },
];

fn mget(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    ctx.w().array_len(args.len() - 1);
    for key in &args[1..] {
        // Like Redis, a key of another type reads as null, not WRONGTYPE.
        let (value, mut w) = ctx.lookup_read_and_writer(key);
        match value {
            Some(Value::Str(s)) => w.bulk(s.as_bytes()),
            #[allow(unreachable_patterns)]
            _ => w.null(),
        }
        ctx.work(1);
    }
}

/// MSET and MSETNX. Every pair is stored with its TTL cleared; a key given
/// twice ends with its last value.
fn mset_generic(ctx: &mut Ctx, args: &mut [Vec<u8>], nx: bool) {
    // The name and then key/value pairs: an odd count.
    if args.len() % 2 != 1 {
        let msg = format!(
            "ERR wrong number of arguments for '{}' command",
            ctx.spec.name
        );
        return ctx.error(&msg);
    }
    if nx {
        for key in args[1..].iter().step_by(2) {
            ctx.work(1);
            if ctx.exists(key) {
                return ctx.int(0);
            }
        }
    }
    for pair in args[1..].chunks_exact_mut(2) {
        let value = RString::from_arg(&mut pair[1]);
        ctx.store(&pair[0], Value::Str(value), false);
        notify(ctx, class::STRING, "set", &pair[0]);
        ctx.work(1);
    }
    if nx {
        ctx.int(1);
    } else {
        ctx.ok();
    }
}

fn mset(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    mset_generic(ctx, args, false);
}

fn msetnx(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    mset_generic(ctx, args, true);
}
