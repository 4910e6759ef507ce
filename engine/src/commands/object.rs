//! OBJECT ENCODING | FREQ | IDLETIME | REFCOUNT | HELP: introspection of
//! the value stored at a key.

use crate::cmd::{flags::*, CommandSpec, Ctx, Lookup};
use crate::commands::keys::KEYSPACE;
use crate::config::MaxmemoryPolicy;
use crate::util::parse_i64_strict;
use crate::value::Value;

/// Redis's OBJ_SHARED_REFCOUNT: the refcount `OBJECT REFCOUNT` reports for
/// the shared small integers.
const SHARED_REFCOUNT: i64 = i32::MAX as i64;

/// Redis shares the integers `0..OBJ_SHARED_INTEGERS` between keys.
const SHARED_INTEGERS: i64 = 10_000;

/// OBJECT's key-reading subcommands.
const OBJECT_SUB: CommandSpec = CommandSpec {
    arity: 3,
    flags: READONLY,
    first_key: 2,
    last_key: 2,
    key_step: 1,
    acl_categories: &["keyspace", "read", "slow"],
    since: "2.2.3",
    tips: &["nondeterministic_output"],
    key_spec_flags: &["RO"],
    ..CommandSpec::DEFAULT
};

const OBJECT_SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "object|encoding",
        summary: "Inspect the internal encoding of a Redis object",
        handler: Some(object_encoding),
        ..OBJECT_SUB
    },
    CommandSpec {
        name: "object|freq",
        summary: "Get the logarithmic access frequency counter of a Redis object",
        since: "4.0.0",
        handler: Some(object_freq),
        ..OBJECT_SUB
    },
    CommandSpec {
        name: "object|help",
        arity: 2,
        flags: LOADING | STALE,
        acl_categories: &["keyspace", "slow"],
        summary: "Show helpful text about the different subcommands",
        since: "6.2.0",
        handler: Some(object_help),
        ..CommandSpec::DEFAULT
    },
    CommandSpec {
        name: "object|idletime",
        summary: "Get the time since a Redis object was last accessed",
        handler: Some(object_idletime),
        ..OBJECT_SUB
    },
    CommandSpec {
        name: "object|refcount",
        summary: "Get the number of references to the value of the key",
        handler: Some(object_refcount),
        ..OBJECT_SUB
    },
];

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    name: "object",
    arity: -2,
    first_key: 0,
    last_key: 0,
    key_step: 0,
    acl_categories: &["slow"],
    summary: "A container for object introspection commands",
    since: "2.2.3",
    complexity: "Depends on subcommand.",
    subcommands: OBJECT_SUBCOMMANDS,
    ..KEYSPACE
}];

/// The live value for OBJECT's subcommands, or a null reply. The lookup is
/// counted in `keyspace_hits`/`keyspace_misses` but a miss raises no
/// `keymiss` (Redis looks up with `LOOKUP_NONOTIFY`).
fn object_lookup<'c>(ctx: &'c mut Ctx, key: &[u8]) -> Option<&'c mut Value> {
    if ctx.lookup_for(key, Lookup::ReadQuiet).is_none() {
        ctx.null();
        return None;
    }
    ctx.lookup(key)
}

fn object_encoding(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if let Some(v) = object_lookup(ctx, &args[2]) {
        let name = v.encoding_name();
        ctx.w().bulk_str(name);
    }
}

fn object_refcount(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if let Some(v) = object_lookup(ctx, &args[2]) {
        let shared = match v {
            Value::Str(s) => {
                s.encoding_name() == "int"
                    && parse_i64_strict(s.as_bytes())
                        .is_some_and(|n| (0..SHARED_INTEGERS).contains(&n))
            }
            _ => false,
        };
        ctx.int(if shared { SHARED_REFCOUNT } else { 1 });
    }
}

/// Whether `maxmemory-policy` is one of the LFU policies.
fn lfu_policy(ctx: &Ctx) -> bool {
    matches!(
        ctx.server.config.maxmemory_policy,
        MaxmemoryPolicy::VolatileLfu | MaxmemoryPolicy::AllkeysLfu
    )
}

/// The key's access word and the access state to read it with (the
/// OBJECT family looks keys up without touching them; see
/// [`crate::evict::admit`]).
fn access_of(ctx: &mut Ctx, key: &[u8]) -> (crate::lru::Access, u32) {
    let db = ctx.db();
    (*db.access(), db.access_meta(key).unwrap_or(0))
}

/// Seconds since the key was last accessed, at the LRU clock's resolution
/// (Redis's `estimateObjectIdleTime / 1000`).
fn object_idletime(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if object_lookup(ctx, &args[2]).is_none() {
        return;
    }
    if lfu_policy(ctx) {
        return ctx.error("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.");
    }
    let (access, meta) = access_of(ctx, &args[2]);
    ctx.int((access.idle_ms(meta) / 1000) as i64);
}

/// The key's logarithmic access counter, decayed to now (Redis's
/// `LFUDecrAndReturn`).
fn object_freq(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if object_lookup(ctx, &args[2]).is_none() {
        return;
    }
    if !lfu_policy(ctx) {
        return ctx.error("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.");
    }
    let (access, meta) = access_of(ctx, &args[2]);
    ctx.int(i64::from(access.lfu_counter(meta)));
}

fn object_help(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    const HELP: &[&str] = &[
        "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to store the value",
        "    associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned integer is",
        "    proportional to the logarithm of the recent access frequency of the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with the specified",
        "    <key>.",
        "HELP",
        "    Prints this help.",
    ];
    let mut w = ctx.w();
    w.array_len(HELP.len());
    for line in HELP {
        w.simple(line);
    }
}

#[cfg(test)]
mod tests {
    use crate::resp::Frame;
    use crate::testing::{bulk, err, int, simple, TestEngine};
    use crate::Config;

    #[test]
    fn object_subcommands() {
        let mut t = TestEngine::new();
        let c = t.connect();
        t.cmd(c, &["SET", "i", "1"]);
        t.cmd(c, &["SET", "big", "10000"]);
        t.cmd(c, &["SET", "s", "hello"]);
        t.cmd(c, &["SET", "r", &"x".repeat(45)]);
        assert_eq!(t.cmd(c, &["OBJECT", "ENCODING", "i"]), bulk("int"));
        assert_eq!(t.cmd(c, &["object", "encoding", "s"]), bulk("embstr"));
        assert_eq!(t.cmd(c, &["OBJECT", "ENCODING", "r"]), bulk("raw"));
        assert_eq!(t.cmd(c, &["OBJECT", "ENCODING", "nokey"]), Frame::Null);
        assert_eq!(t.cmd(c, &["OBJECT", "REFCOUNT", "i"]), int(2147483647));
        assert_eq!(t.cmd(c, &["OBJECT", "REFCOUNT", "big"]), int(1));
        assert_eq!(t.cmd(c, &["OBJECT", "REFCOUNT", "s"]), int(1));
        assert_eq!(t.cmd(c, &["OBJECT", "IDLETIME", "s"]), int(0));
        assert_eq!(t.cmd(c, &["OBJECT", "IDLETIME", "nokey"]), Frame::Null);
        assert_eq!(
            t.cmd(c, &["OBJECT", "FREQ", "s"]),
            err("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
        );
        assert_eq!(
            t.cmd(c, &["OBJECT", "foo", "s"]),
            err("ERR unknown subcommand 'foo'. Try OBJECT HELP.")
        );
        assert_eq!(
            t.cmd(c, &["OBJECT", "ENCODING"]),
            err("ERR wrong number of arguments for 'object|encoding' command")
        );
        assert_eq!(
            t.cmd(c, &["OBJECT", "HELP", "x"]),
            err("ERR wrong number of arguments for 'object|help' command")
        );
        assert_eq!(
            t.cmd(c, &["OBJECT"]),
            err("ERR wrong number of arguments for 'object' command")
        );
        let Frame::Array(lines) = t.cmd(c, &["OBJECT", "HELP"]) else {
            panic!("help is an array");
        };
        assert_eq!(lines.len(), 15);
        assert_eq!(
            lines[0],
            simple("OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
        );
        assert_eq!(lines[14], simple("    Prints this help."));
    }

    #[test]
    fn object_freq_and_idletime_under_lfu() {
        let mut t = TestEngine::with_config(Config {
            maxmemory_policy: crate::config::MaxmemoryPolicy::AllkeysLfu,
            ..Config::default()
        });
        let c = t.connect();
        t.cmd(c, &["SET", "s", "v"]);
        assert_eq!(
            t.cmd(c, &["OBJECT", "FREQ", "s"]),
            int(i64::from(crate::lru::LFU_INIT_VAL))
        );
        assert_eq!(t.cmd(c, &["OBJECT", "FREQ", "nokey"]), Frame::Null);
        assert_eq!(
            t.cmd(c, &["OBJECT", "IDLETIME", "s"]),
            err("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
        );
    }
}
