//! Key expiry: EXPIRE PEXPIRE EXPIREAT PEXPIREAT (with NX XX GT LT), TTL
//! PTTL EXPIRETIME PEXPIRETIME PERSIST.
//!
//! Expiry times are absolute unix milliseconds on the host's wall clock
//! (`Now::unix_us`), so a simulated clock jump moves every TTL, as it does
//! in Redis.

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::util::parse_i64_strict;

const EXPIRE: CommandSpec = CommandSpec {
    group: "generic",
    arity: -3,
    flags: WRITE | FAST,
    first_key: 1,
    last_key: 1,
    key_step: 1,
    acl_categories: &["keyspace", "write", "fast"],
    ..CommandSpec::DEFAULT
};

const TTL: CommandSpec = CommandSpec {
    arity: 2,
    flags: READONLY | FAST,
    acl_categories: &["keyspace", "read", "fast"],
    ..EXPIRE
};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "expire",
        summary: "Set a key's time to live in seconds",
        handler: Some(expire),
        ..EXPIRE
    },
    CommandSpec {
        name: "pexpire",
        summary: "Set a key's time to live in milliseconds",
        since: "2.6.0",
        handler: Some(pexpire),
        ..EXPIRE
    },
    CommandSpec {
        name: "expireat",
        summary: "Set the expiration for a key as a UNIX timestamp",
        since: "1.2.0",
        handler: Some(expireat),
        ..EXPIRE
    },
    CommandSpec {
        name: "pexpireat",
        summary: "Set the expiration for a key as a UNIX timestamp specified in milliseconds",
        since: "2.6.0",
        handler: Some(pexpireat),
        ..EXPIRE
    },
    CommandSpec {
        name: "ttl",
        summary: "Get the time to live for a key in seconds",
        handler: Some(ttl),
        ..TTL
    },
    CommandSpec {
        name: "pttl",
        summary: "Get the time to live for a key in milliseconds",
        since: "2.6.0",
        handler: Some(pttl),
        ..TTL
    },
    CommandSpec {
        name: "expiretime",
        summary: "Get the expiration Unix timestamp for a key",
        since: "7.0.0",
        handler: Some(expiretime),
        ..TTL
    },
    CommandSpec {
        name: "pexpiretime",
        summary: "Get the expiration Unix timestamp for a key in milliseconds",
        since: "7.0.0",
        handler: Some(pexpiretime),
        ..TTL
    },
    CommandSpec {
        name: "persist",
        arity: 2,
        summary: "Remove the expiration from a key",
        since: "2.2.0",
        handler: Some(persist),
        ..EXPIRE
    },
];

/// The units of the number an EXPIRE-family command takes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Unit {
    Seconds,
    Milliseconds,
}

/// The NX / XX / GT / LT conditions.
#[derive(Clone, Copy, Default)]
struct Conditions {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
}

impl Conditions {
    /// Redis's `parseExtendedExpireArgumentsOrReply`: every option is
    /// parsed before the compatibility checks.
    fn parse(options: &[Vec<u8>]) -> Result<Conditions, String> {
        let mut c = Conditions::default();
        for opt in options {
            if opt.eq_ignore_ascii_case(b"nx") {
                c.nx = true;
            } else if opt.eq_ignore_ascii_case(b"xx") {
                c.xx = true;
            } else if opt.eq_ignore_ascii_case(b"gt") {
                c.gt = true;
            } else if opt.eq_ignore_ascii_case(b"lt") {
                c.lt = true;
            } else {
                return Err(format!(
                    "ERR Unsupported option {}",
                    crate::engine::sanitize(opt, 128)
                ));
            }
        }
        if c.nx && (c.xx || c.gt || c.lt) {
            return Err(
                "ERR NX and XX, GT or LT options at the same time are not compatible".into(),
            );
        }
        if c.gt && c.lt {
            return Err("ERR GT and LT options at the same time are not compatible".into());
        }
        Ok(c)
    }

    /// Whether setting `when` over the `current` expiry (None: no TTL,
    /// which counts as infinite) passes the conditions.
    fn allow(self, current: Option<i64>, when: i64) -> bool {
        if self.nx && current.is_some() {
            return false;
        }
        if self.xx && current.is_none() {
            return false;
        }
        if self.gt && current.map_or(true, |c| when <= c) {
            return false;
        }
        if self.lt && current.is_some_and(|c| when >= c) {
            return false;
        }
        true
    }
}

fn expire(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let base = ctx.now_ms() as i64;
    expire_generic(ctx, args, base, Unit::Seconds);
}

fn pexpire(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let base = ctx.now_ms() as i64;
    expire_generic(ctx, args, base, Unit::Milliseconds);
}

fn expireat(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    expire_generic(ctx, args, 0, Unit::Seconds);
}

fn pexpireat(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    expire_generic(ctx, args, 0, Unit::Milliseconds);
}

/// Redis's `expireGenericCommand`: `when = args[2] (in unit) + base_ms`,
/// refusing any overflow of a signed 64-bit millisecond count. A time at or
/// before now deletes the key.
fn expire_generic(ctx: &mut Ctx, args: &[Vec<u8>], base_ms: i64, unit: Unit) {
    let conditions = match Conditions::parse(&args[3..]) {
        Ok(c) => c,
        Err(e) => return ctx.error(&e),
    };
    let Some(mut when) = parse_i64_strict(&args[2]) else {
        return ctx.error("ERR value is not an integer or out of range");
    };
    let invalid = format!("ERR invalid expire time in '{}' command", ctx.spec.name);
    if unit == Unit::Seconds {
        let Some(ms) = when.checked_mul(1000) else {
            return ctx.error(&invalid);
        };
        when = ms;
    }
    let Some(when) = when.checked_add(base_ms) else {
        return ctx.error(&invalid);
    };
    let key = &args[1];
    if ctx.lookup(key).is_none() {
        return ctx.int(0);
    }
    let current = ctx.db().get_expire(key).map(|w| w as i64);
    if !conditions.allow(current, when) {
        return ctx.int(0);
    }
    if when <= ctx.now_ms() as i64 {
        let lazy = ctx.server.config.lazyfree_lazy_expire;
        let deleted = ctx.delete(key, lazy);
        debug_assert!(deleted);
    } else {
        ctx.db().set_expire(key, when as u64);
        ctx.server.dirty += 1;
    }
    ctx.int(1);
}

/// How TTL-family commands report the expiry.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TtlForm {
    /// Remaining time.
    Relative,
    /// Absolute unix time.
    Absolute,
}

fn ttl(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    ttl_generic(ctx, &args[1], Unit::Seconds, TtlForm::Relative);
}

fn pttl(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    ttl_generic(ctx, &args[1], Unit::Milliseconds, TtlForm::Relative);
}

fn expiretime(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    ttl_generic(ctx, &args[1], Unit::Seconds, TtlForm::Absolute);
}

fn pexpiretime(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    ttl_generic(ctx, &args[1], Unit::Milliseconds, TtlForm::Absolute);
}

/// -2 for a missing key, -1 for a key without TTL; seconds are rounded to
/// the nearest, as Redis does.
fn ttl_generic(ctx: &mut Ctx, key: &[u8], unit: Unit, form: TtlForm) {
    if ctx.lookup(key).is_none() {
        return ctx.int(-2);
    }
    let Some(when) = ctx.db().get_expire(key) else {
        return ctx.int(-1);
    };
    let when = when as i64;
    let ms = match form {
        TtlForm::Absolute => when,
        TtlForm::Relative => (when - ctx.now_ms() as i64).max(0),
    };
    ctx.int(match unit {
        Unit::Milliseconds => ms,
        Unit::Seconds => (ms + 500) / 1000,
    });
}

fn persist(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let key = &args[1];
    if ctx.lookup(key).is_some() && ctx.db().persist(key) {
        ctx.server.dirty += 1;
        ctx.int(1);
    } else {
        ctx.int(0);
    }
}
