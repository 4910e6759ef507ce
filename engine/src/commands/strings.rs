//! String commands. (Being completed by the strings family owner.)

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::value::{RString, Value, WRONGTYPE};

const STRING: CommandSpec = CommandSpec {
    group: "string",
    first_key: 1,
    last_key: 1,
    key_step: 1,
    ..CommandSpec::DEFAULT
};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "get",
        arity: 2,
        flags: READONLY | FAST,
        acl_categories: &["read", "string", "fast"],
        summary: "Get the value of a key",
        handler: Some(get),
        ..STRING
    },
    CommandSpec {
        name: "set",
        arity: -3,
        flags: WRITE | DENYOOM,
        acl_categories: &["write", "string", "slow"],
        summary: "Set the string value of a key",
        handler: Some(set),
        ..STRING
    },
];

fn get(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let (value, mut w) = ctx.lookup_and_writer(&args[1]);
    match value {
        None => w.null(),
        Some(Value::Str(s)) => w.bulk(&s.bytes),
        #[allow(unreachable_patterns)]
        Some(_) => w.error(WRONGTYPE),
    }
}

fn set(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let value = std::mem::take(&mut args[2]);
    ctx.store(&args[1], Value::Str(RString::new(value)), false);
    ctx.ok();
}
