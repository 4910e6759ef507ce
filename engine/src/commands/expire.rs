//! Key expiry: EXPIRE PEXPIRE EXPIREAT PEXPIREAT (with NX XX GT LT), TTL
//! PTTL EXPIRETIME PEXPIRETIME PERSIST.
//!
//! Expiry times are absolute unix milliseconds on the host's wall clock
//! (`Now::unix_us`), so a simulated clock jump moves every TTL, as it does
//! in Redis.

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::notify::{class, notify};
use crate::util::parse_i64_strict;

const EXPIRE: CommandSpec = CommandSpec {
    group: "generic",
    arity: -3,
    flags: WRITE | FAST,
    first_key: 1,
    last_key: 1,
    key_step: 1,
    acl_categories: &["keyspace", "write", "fast"],
    key_spec_flags: &["RW", "update"],
    ..CommandSpec::DEFAULT
};

const TTL: CommandSpec = CommandSpec {
    arity: 2,
    flags: READONLY | FAST,
    acl_categories: &["keyspace", "read", "fast"],
    key_spec_flags: &["RO", "access"],
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
        tips: &["nondeterministic_output"],
        summary: "Get the time to live for a key in seconds",
        handler: Some(ttl),
        ..TTL
    },
    CommandSpec {
        name: "pttl",
        tips: &["nondeterministic_output"],
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
                    crate::util::sanitize(opt, 128)
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
        if self.gt {
            // No TTL is infinite: nothing is greater.
            match current {
                Some(c) if when > c => {}
                _ => return false,
            }
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
        propagate_deletion(ctx, key, lazy);
        notify(ctx, class::GENERIC, "del", key);
        ctx.int(1);
    } else {
        let db = ctx.db_index();
        ctx.set_expire_in(db, key, when as u64);
        ctx.server.dirty += 1;
        propagate_absolute(ctx, args, when, base_ms != 0 || unit == Unit::Seconds);
        // Redis replies before it raises `expire` (but after `del`), which
        // a RESP3 client subscribed to its own keys sees.
        ctx.int(1);
        notify(ctx, class::GENERIC, "expire", key);
    }
}

/// A deletion replays as DEL, or UNLINK when it freed lazily.
pub(crate) fn propagate_deletion(ctx: &mut Ctx, key: &[u8], lazy: bool) {
    let name: &[u8] = if lazy { b"UNLINK" } else { b"DEL" };
    ctx.propagate(&[name, key]);
}

/// EXPIRE, PEXPIRE and EXPIREAT replay as PEXPIREAT with the absolute
/// time and the same options; PEXPIREAT as it was sent (Redis's
/// `expireGenericCommand` rewrites `args[2]` only where it differs).
fn propagate_absolute(ctx: &mut Ctx, args: &[Vec<u8>], when_ms: i64, rewrite_time: bool) {
    if !ctx.propagating() || ctx.spec.name == "pexpireat" {
        return;
    }
    let when_text = when_ms.to_string();
    let mut argv: Vec<&[u8]> = vec![b"PEXPIREAT", &args[1]];
    argv.push(if rewrite_time {
        when_text.as_bytes()
    } else {
        &args[2]
    });
    argv.extend(args[3..].iter().map(Vec::as_slice));
    ctx.propagate(&argv);
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
    if ctx.lookup_read(key).is_none() {
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
        notify(ctx, class::GENERIC, "persist", key);
        ctx.int(1);
    } else {
        ctx.int(0);
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{err, int, simple, TestEngine};

    /// INFO persistence's `rdb_changes_since_last_save`.
    fn changes(t: &mut TestEngine, c: crate::ClientId) -> u64 {
        let crate::resp::Frame::Bulk(text) = t.cmd(c, &["INFO", "persistence"]) else {
            panic!("INFO is a bulk string in RESP2")
        };
        let text = String::from_utf8(text).expect("utf-8");
        text.lines()
            .find_map(|l| l.strip_prefix("rdb_changes_since_last_save:"))
            .and_then(|v| v.parse().ok())
            .expect("field present")
    }

    /// A PERSIST that removes a TTL is a change, one that finds none is not
    /// (found by cargo-mutants: the dirty count was not checked).
    #[test]
    fn persist_counts_as_one_change() {
        let mut t = TestEngine::new();
        let c = t.connect();
        t.cmd(c, &["SET", "k", "v", "EX", "100"]);
        let before = changes(&mut t, c);
        assert_eq!(t.cmd(c, &["PERSIST", "k"]), int(1));
        assert_eq!(changes(&mut t, c), before + 1);
        assert_eq!(t.cmd(c, &["PERSIST", "k"]), int(0));
        assert_eq!(changes(&mut t, c), before + 1);
    }

    #[test]
    fn expire_and_ttl() {
        let mut t = TestEngine::new();
        let c = t.connect();
        assert_eq!(t.cmd(c, &["TTL", "k"]), int(-2));
        assert_eq!(t.cmd(c, &["EXPIRE", "k", "10"]), int(0));
        t.cmd(c, &["SET", "k", "v"]);
        assert_eq!(t.cmd(c, &["TTL", "k"]), int(-1));
        assert_eq!(t.cmd(c, &["PTTL", "k"]), int(-1));
        assert_eq!(t.cmd(c, &["EXPIRETIME", "k"]), int(-1));
        assert_eq!(t.cmd(c, &["EXPIRE", "k", "100"]), int(1));
        assert_eq!(t.cmd(c, &["TTL", "k"]), int(100));
        assert_eq!(t.cmd(c, &["PTTL", "k"]), int(100_000));
        let now_ms = (crate::testing::UNIX_ORIGIN_US / 1000) as i64;
        assert_eq!(t.cmd(c, &["PEXPIRETIME", "k"]), int(now_ms + 100_000));
        assert_eq!(t.cmd(c, &["EXPIRETIME", "k"]), int(now_ms / 1000 + 100));
        t.advance_ms(40_400);
        // 59.6 s rounds to 60.
        assert_eq!(t.cmd(c, &["TTL", "k"]), int(60));
        assert_eq!(t.cmd(c, &["PTTL", "k"]), int(59_600));
        assert_eq!(t.cmd(c, &["PERSIST", "k"]), int(1));
        assert_eq!(t.cmd(c, &["PERSIST", "k"]), int(0));
        assert_eq!(t.cmd(c, &["PERSIST", "nokey"]), int(0));
        assert_eq!(t.cmd(c, &["TTL", "k"]), int(-1));
    }

    #[test]
    fn keys_expire_lazily_and_actively() {
        let mut t = TestEngine::new();
        let c = t.connect();
        t.cmd(c, &["SET", "lazy", "v"]);
        t.cmd(c, &["SET", "active", "v"]);
        assert_eq!(t.cmd(c, &["PEXPIRE", "lazy", "1500"]), int(1));
        assert_eq!(
            t.cmd(
                c,
                &[
                    "PEXPIREAT",
                    "active",
                    &((crate::testing::UNIX_ORIGIN_US / 1000) + 1500).to_string()
                ]
            ),
            int(1)
        );
        t.advance_ms(1499);
        assert_eq!(t.cmd(c, &["PTTL", "lazy"]), int(1));
        t.advance_ms(1);
        // Active expiry may or may not have sampled them; either way they are gone.
        assert_eq!(t.cmd(c, &["EXISTS", "lazy", "active"]), int(0));
        assert_eq!(t.cmd(c, &["DBSIZE"]), int(0));
    }

    #[test]
    fn active_expiry_removes_untouched_keys() {
        let mut t = TestEngine::new();
        let c = t.connect();
        for i in 0..50 {
            let k = format!("k{i}");
            t.cmd(c, &["SET", &k, "v"]);
            t.cmd(c, &["PEXPIRE", &k, "100"]);
        }
        t.cmd(c, &["SET", "forever", "v"]);
        assert_eq!(t.cmd(c, &["DBSIZE"]), int(51));
        for _ in 0..50 {
            t.advance_ms(100);
        }
        assert_eq!(t.cmd(c, &["DBSIZE"]), int(1));
    }

    #[test]
    fn past_times_delete() {
        let mut t = TestEngine::new();
        let c = t.connect();
        t.cmd(c, &["SET", "a", "1"]);
        t.cmd(c, &["SET", "b", "1"]);
        t.cmd(c, &["SET", "c", "1"]);
        assert_eq!(t.cmd(c, &["EXPIRE", "a", "-1"]), int(1));
        assert_eq!(t.cmd(c, &["EXPIREAT", "b", "-9223372036854775"]), int(1));
        assert_eq!(t.cmd(c, &["PEXPIRE", "c", "0"]), int(1));
        assert_eq!(t.cmd(c, &["EXISTS", "a", "b", "c"]), int(0));
        assert_eq!(t.cmd(c, &["DBSIZE"]), int(0));
    }

    #[test]
    fn overflow_and_parse_errors() {
        let mut t = TestEngine::new();
        let c = t.connect();
        t.cmd(c, &["SET", "a", "1"]);
        let e = |cmd: &str| err(&format!("ERR invalid expire time in '{cmd}' command"));
        assert_eq!(t.cmd(c, &["EXPIRE", "a", "9223372036854776"]), e("expire"));
        assert_eq!(t.cmd(c, &["EXPIRE", "a", "9223372036854775"]), e("expire"));
        assert_eq!(t.cmd(c, &["EXPIRE", "a", "-9223372036854776"]), e("expire"));
        assert_eq!(
            t.cmd(c, &["PEXPIRE", "a", "9223372036854775807"]),
            e("pexpire")
        );
        assert_eq!(
            t.cmd(c, &["EXPIREAT", "a", "9223372036854776"]),
            e("expireat")
        );
        assert_eq!(t.cmd(c, &["PEXPIREAT", "a", "9223372036854775807"]), int(1));
        assert_eq!(
            t.cmd(c, &["TTL", "a"]),
            int((9223372036854775807 - 1_700_000_000_000 + 500) / 1000)
        );
        assert_eq!(
            t.cmd(c, &["EXPIRE", "a", "x"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(
            t.cmd(c, &["EXPIRE", "a", " 1"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(
            t.cmd(c, &["EXPIRE", "a"]),
            err("ERR wrong number of arguments for 'expire' command")
        );
    }

    #[test]
    fn option_errors_come_before_the_number() {
        let mut t = TestEngine::new();
        let c = t.connect();
        t.cmd(c, &["SET", "a", "1"]);
        assert_eq!(
            t.cmd(c, &["EXPIRE", "a", "10", "foo"]),
            err("ERR Unsupported option foo")
        );
        let nx = err("ERR NX and XX, GT or LT options at the same time are not compatible");
        assert_eq!(t.cmd(c, &["EXPIRE", "a", "x", "nx", "xx"]), nx);
        assert_eq!(t.cmd(c, &["EXPIRE", "a", "10", "NX", "gt"]), nx);
        assert_eq!(t.cmd(c, &["EXPIRE", "a", "10", "lt", "nx"]), nx);
        assert_eq!(
            t.cmd(c, &["PEXPIRE", "a", "10", "gt", "LT"]),
            err("ERR GT and LT options at the same time are not compatible")
        );
        // Unknown options win over incompatibilities only if seen first.
        assert_eq!(
            t.cmd(c, &["EXPIRE", "a", "10", "nx", "xx", "bad"]),
            err("ERR Unsupported option bad")
        );
    }

    #[test]
    fn nx_xx_gt_lt() {
        let mut t = TestEngine::new();
        let c = t.connect();
        t.cmd(c, &["SET", "z", "1"]);
        // No TTL counts as infinite.
        assert_eq!(t.cmd(c, &["EXPIRE", "z", "100", "XX"]), int(0));
        assert_eq!(t.cmd(c, &["EXPIRE", "z", "100", "GT"]), int(0));
        assert_eq!(t.cmd(c, &["EXPIRE", "z", "100", "xx", "gt"]), int(0));
        assert_eq!(t.cmd(c, &["EXPIRE", "z", "100", "LT"]), int(1));
        assert_eq!(t.cmd(c, &["EXPIRE", "z", "50", "NX"]), int(0));
        assert_eq!(t.cmd(c, &["EXPIRE", "z", "100", "gt"]), int(0));
        assert_eq!(t.cmd(c, &["EXPIRE", "z", "200", "gt"]), int(1));
        assert_eq!(t.cmd(c, &["EXPIRE", "z", "200", "lt"]), int(0));
        assert_eq!(t.cmd(c, &["EXPIRE", "z", "150", "lt"]), int(1));
        assert_eq!(t.cmd(c, &["EXPIRE", "z", "150", "xx", "lt"]), int(0));
        assert_eq!(t.cmd(c, &["EXPIRE", "z", "120", "xx", "lt"]), int(1));
        assert_eq!(t.cmd(c, &["TTL", "z"]), int(120));
        t.cmd(c, &["PERSIST", "z"]);
        assert_eq!(t.cmd(c, &["EXPIRE", "z", "30", "nx"]), int(1));
        assert_eq!(t.cmd(c, &["TTL", "z"]), int(30));
        // A failing condition never deletes, even for a time in the past.
        assert_eq!(t.cmd(c, &["EXPIRE", "z", "-1", "gt"]), int(0));
        assert_eq!(t.cmd(c, &["EXPIRE", "z", "-1", "lt"]), int(1));
        assert_eq!(t.cmd(c, &["EXISTS", "z"]), int(0));
    }

    #[test]
    fn set_clears_the_ttl() {
        let mut t = TestEngine::new();
        let c = t.connect();
        t.cmd(c, &["SET", "a", "1"]);
        t.cmd(c, &["EXPIRE", "a", "10"]);
        assert_eq!(t.cmd(c, &["SET", "a", "2"]), simple("OK"));
        assert_eq!(t.cmd(c, &["TTL", "a"]), int(-1));
    }
}
