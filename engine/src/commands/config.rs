//! CONFIG GET / SET / RESETSTAT / REWRITE / HELP, and the parameter table
//! they share with redis.conf loading ([`apply_config_line`],
//! [`load_config_str`]).
//!
//! Every parameter is one row of [`PARAMS`]: its redis.conf name, its type
//! (which fixes the parser, the bounds and the exact Redis error text), and
//! where it lives: a typed field of [`Config`] that the engine enforces, or
//! `Config::extra`, where parameters the engine accepts but does not act on
//! are kept in canonical form (the host may read them, e.g. `appendonly`,
//! through [`config_get`]).
//!
//! Deviations from Redis 7.0: `port` and `bind` are immutable at run time
//! because the host owns the sockets and there is no event to rebind;
//! `databases` is fixed at 16.

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::config::{Config, MaxmemoryPolicy};
use crate::db::DATABASES_COUNT;
use crate::util::{glob_match, parse_i64_strict};

/// The value type of a parameter, which fixes its parser and its errors.
#[derive(Clone, Copy, Debug)]
enum Type {
    /// `yes` / `no`, case-insensitive.
    Bool,
    /// A strict decimal integer within bounds.
    Int { min: i64, max: i64 },
    /// A byte count with an optional unit (`100mb`, `1g`), within bounds.
    Memory { min: u64, max: u64 },
    /// One of a fixed set of names, case-insensitive; stored lowercase.
    Enum(&'static [&'static str]),
    /// Any string.
    Str,
    /// `save`: pairs of `<seconds> <changes>`, or empty.
    Save,
    /// A space-separated list (`bind`).
    List,
    /// `client-output-buffer-limit`: groups of `<class> <hard> <soft>
    /// <soft seconds>`.
    OutputBufferLimit,
}

/// Parameter flags.
const IMMUTABLE: u8 = 1;
/// Redis's PROTECTED_CONFIG: not settable while `enable-protected-configs` is `no`.
const PROTECTED: u8 = 2;

/// Where a parameter's value lives.
#[derive(Clone, Copy)]
enum Store {
    /// A typed field of [`Config`]: `get` renders it, `set` stores a value
    /// already validated by the parameter's type.
    Field {
        get: fn(&Config) -> String,
        set: fn(&mut Config, &Parsed),
    },
    /// `Config::extra[name]`, defaulting to the given canonical text.
    Extra(&'static str),
}

/// A validated value, handed to a field's setter.
#[derive(Clone, Debug, PartialEq)]
enum Parsed {
    Bool(bool),
    Int(i64),
    Memory(u64),
    Text(String),
}

impl Parsed {
    fn as_bool(&self) -> bool {
        matches!(self, Parsed::Bool(true))
    }
    fn as_i64(&self) -> i64 {
        match self {
            Parsed::Int(v) => *v,
            Parsed::Memory(v) => (*v).min(i64::MAX as u64) as i64,
            Parsed::Bool(b) => *b as i64,
            Parsed::Text(_) => 0,
        }
    }
    fn as_u64(&self) -> u64 {
        match self {
            Parsed::Memory(v) => *v,
            other => other.as_i64().max(0) as u64,
        }
    }
    fn text(&self) -> String {
        match self {
            Parsed::Bool(b) => yes_no(*b).to_string(),
            Parsed::Int(v) => v.to_string(),
            Parsed::Memory(v) => v.to_string(),
            Parsed::Text(s) => s.clone(),
        }
    }
}

/// One configuration parameter.
struct Param {
    name: &'static str,
    /// The pre-7.0 name still accepted (`hash-max-ziplist-entries`).
    alias: Option<&'static str>,
    ty: Type,
    flags: u8,
    store: Store,
}

const fn extra(name: &'static str, ty: Type, default: &'static str) -> Param {
    Param {
        name,
        alias: None,
        ty,
        flags: 0,
        store: Store::Extra(default),
    }
}

const fn with_flags(mut p: Param, flags: u8) -> Param {
    p.flags = flags;
    p
}

const fn with_alias(mut p: Param, alias: &'static str) -> Param {
    p.alias = Some(alias);
    p
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

const INT_MAX: i64 = i32::MAX as i64;
const LLONG_MAX: i64 = i64::MAX;
const MB: u64 = 1024 * 1024;
const YES_NO: Type = Type::Bool;

/// Every parameter CONFIG knows, in the order `CONFIG GET *` lists them.
static PARAMS: &[Param] = &[
    Param {
        name: "requirepass",
        alias: None,
        ty: Type::Str,
        flags: 0,
        store: Store::Field {
            get: |c| {
                c.requirepass
                    .as_deref()
                    .map(|p| String::from_utf8_lossy(p).into_owned())
                    .unwrap_or_default()
            },
            set: |c, v| {
                let t = v.text();
                c.requirepass = if t.is_empty() {
                    None
                } else {
                    Some(t.into_bytes())
                };
            },
        },
    },
    Param {
        name: "maxclients",
        alias: None,
        ty: Type::Int {
            min: 1,
            max: u32::MAX as i64,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.maxclients.to_string(),
            set: |c, v| c.maxclients = v.as_u64() as usize,
        },
    },
    Param {
        name: "proto-max-bulk-len",
        alias: None,
        ty: Type::Memory {
            min: MB,
            max: LLONG_MAX as u64,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.proto_max_bulk_len_bytes.to_string(),
            set: |c, v| c.proto_max_bulk_len_bytes = v.as_u64() as usize,
        },
    },
    Param {
        name: "client-query-buffer-limit",
        alias: None,
        ty: Type::Memory {
            min: MB,
            max: LLONG_MAX as u64,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.client_query_buffer_limit_bytes.to_string(),
            set: |c, v| c.client_query_buffer_limit_bytes = v.as_u64() as usize,
        },
    },
    Param {
        name: "hz",
        alias: None,
        ty: Type::Int {
            min: 0,
            max: INT_MAX,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.hz.to_string(),
            // Redis clamps hz to [1, 500] (CONFIG_MIN_HZ, CONFIG_MAX_HZ).
            set: |c, v| c.hz = v.as_i64().clamp(1, 500) as u32,
        },
    },
    Param {
        name: "lazyfree-lazy-user-del",
        alias: None,
        ty: YES_NO,
        flags: 0,
        store: Store::Field {
            get: |c| yes_no(c.lazyfree_lazy_user_del).into(),
            set: |c, v| c.lazyfree_lazy_user_del = v.as_bool(),
        },
    },
    Param {
        name: "lazyfree-lazy-user-flush",
        alias: None,
        ty: YES_NO,
        flags: 0,
        store: Store::Field {
            get: |c| yes_no(c.lazyfree_lazy_user_flush).into(),
            set: |c, v| c.lazyfree_lazy_user_flush = v.as_bool(),
        },
    },
    Param {
        name: "lazyfree-lazy-expire",
        alias: None,
        ty: YES_NO,
        flags: 0,
        store: Store::Field {
            get: |c| yes_no(c.lazyfree_lazy_expire).into(),
            set: |c, v| c.lazyfree_lazy_expire = v.as_bool(),
        },
    },
    Param {
        name: "lazyfree-lazy-server-del",
        alias: None,
        ty: YES_NO,
        flags: 0,
        store: Store::Field {
            get: |c| yes_no(c.lazyfree_lazy_server_del).into(),
            set: |c, v| c.lazyfree_lazy_server_del = v.as_bool(),
        },
    },
    Param {
        name: "lazyfree-lazy-eviction",
        alias: None,
        ty: YES_NO,
        flags: 0,
        store: Store::Field {
            get: |c| yes_no(c.lazyfree_lazy_eviction).into(),
            set: |c, v| c.lazyfree_lazy_eviction = v.as_bool(),
        },
    },
    Param {
        name: "slowlog-log-slower-than",
        alias: None,
        ty: Type::Int {
            min: -1,
            max: LLONG_MAX,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.slowlog_log_slower_than_us.to_string(),
            set: |c, v| c.slowlog_log_slower_than_us = v.as_i64(),
        },
    },
    Param {
        name: "slowlog-max-len",
        alias: None,
        ty: Type::Int {
            min: 0,
            max: LLONG_MAX,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.slowlog_max_len.to_string(),
            set: |c, v| c.slowlog_max_len = v.as_u64() as usize,
        },
    },
    Param {
        name: "latency-monitor-threshold",
        alias: None,
        ty: Type::Int {
            min: 0,
            max: LLONG_MAX,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.latency_monitor_threshold_ms.to_string(),
            set: |c, v| c.latency_monitor_threshold_ms = v.as_u64(),
        },
    },
    Param {
        name: "port",
        alias: None,
        ty: Type::Int { min: 0, max: 65535 },
        flags: IMMUTABLE,
        store: Store::Field {
            get: |c| c.port.to_string(),
            set: |c, v| c.port = v.as_i64() as u16,
        },
    },
    Param {
        name: "bind",
        alias: None,
        ty: Type::List,
        flags: IMMUTABLE,
        store: Store::Field {
            get: |c| c.bind.clone(),
            set: |c, v| c.bind = v.text(),
        },
    },
    Param {
        name: "databases",
        alias: None,
        ty: Type::Int {
            min: 1,
            max: INT_MAX,
        },
        flags: IMMUTABLE,
        store: Store::Field {
            get: |_| DATABASES_COUNT.to_string(),
            // Only 16 passes `apply_config_line`'s check; nothing to store.
            set: |_, _| {},
        },
    },
    Param {
        name: "maxmemory",
        alias: None,
        ty: Type::Memory {
            min: 0,
            max: u64::MAX,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.maxmemory_bytes.to_string(),
            set: |c, v| c.maxmemory_bytes = v.as_u64(),
        },
    },
    Param {
        name: "maxmemory-policy",
        alias: None,
        ty: Type::Enum(&[
            "volatile-lru",
            "volatile-lfu",
            "volatile-random",
            "volatile-ttl",
            "allkeys-lru",
            "allkeys-lfu",
            "allkeys-random",
            "noeviction",
        ]),
        flags: 0,
        store: Store::Field {
            get: |c| c.maxmemory_policy.name().into(),
            set: |c, v| {
                c.maxmemory_policy =
                    MaxmemoryPolicy::from_name(&v.text()).expect("validated by the enum type")
            },
        },
    },
    Param {
        name: "maxmemory-samples",
        alias: None,
        ty: Type::Int {
            min: 1,
            max: INT_MAX,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.maxmemory_samples.to_string(),
            set: |c, v| c.maxmemory_samples = v.as_u64() as u32,
        },
    },
    extra(
        "maxmemory-eviction-tenacity",
        Type::Int { min: 0, max: 100 },
        "10",
    ),
    extra(
        "maxmemory-clients",
        Type::Memory {
            min: 0,
            max: LLONG_MAX as u64,
        },
        "0",
    ),
    Param {
        name: "timeout",
        alias: None,
        ty: Type::Int {
            min: 0,
            max: INT_MAX,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.timeout_s.to_string(),
            set: |c, v| c.timeout_s = v.as_u64(),
        },
    },
    extra(
        "tcp-keepalive",
        Type::Int {
            min: 0,
            max: INT_MAX,
        },
        "300",
    ),
    with_flags(
        extra(
            "tcp-backlog",
            Type::Int {
                min: 0,
                max: INT_MAX,
            },
            "511",
        ),
        IMMUTABLE,
    ),
    with_flags(extra("unixsocket", Type::Str, ""), IMMUTABLE),
    extra("save", Type::Save, "3600 1 300 100 60 10000"),
    extra("appendonly", YES_NO, "no"),
    extra(
        "appendfsync",
        Type::Enum(&["always", "everysec", "no"]),
        "everysec",
    ),
    with_flags(
        extra("appendfilename", Type::Str, "appendonly.aof"),
        IMMUTABLE,
    ),
    with_flags(
        extra("appenddirname", Type::Str, "appendonlydir"),
        IMMUTABLE,
    ),
    extra("no-appendfsync-on-rewrite", YES_NO, "no"),
    extra(
        "auto-aof-rewrite-percentage",
        Type::Int {
            min: 0,
            max: INT_MAX,
        },
        "100",
    ),
    extra(
        "auto-aof-rewrite-min-size",
        Type::Memory {
            min: 0,
            max: LLONG_MAX as u64,
        },
        "67108864",
    ),
    extra("aof-use-rdb-preamble", YES_NO, "yes"),
    with_flags(extra("dir", Type::Str, "."), PROTECTED),
    with_flags(extra("dbfilename", Type::Str, "dump.rdb"), PROTECTED),
    extra("rdbcompression", YES_NO, "yes"),
    with_flags(extra("rdbchecksum", YES_NO, "yes"), IMMUTABLE),
    extra("stop-writes-on-bgsave-error", YES_NO, "yes"),
    extra(
        "loglevel",
        Type::Enum(&["debug", "verbose", "notice", "warning"]),
        "notice",
    ),
    with_flags(extra("logfile", Type::Str, ""), IMMUTABLE),
    with_flags(extra("pidfile", Type::Str, ""), IMMUTABLE),
    with_flags(extra("daemonize", YES_NO, "no"), IMMUTABLE),
    with_flags(
        extra(
            "supervised",
            Type::Enum(&["upstart", "systemd", "auto", "no"]),
            "no",
        ),
        IMMUTABLE,
    ),
    with_flags(
        extra("io-threads", Type::Int { min: 1, max: 128 }, "1"),
        IMMUTABLE,
    ),
    with_flags(extra("io-threads-do-reads", YES_NO, "no"), IMMUTABLE),
    extra("activerehashing", YES_NO, "yes"),
    extra("active-expire-effort", Type::Int { min: 1, max: 10 }, "1"),
    extra("protected-mode", YES_NO, "yes"),
    with_flags(
        extra(
            "enable-protected-configs",
            Type::Enum(&["no", "yes", "local"]),
            "no",
        ),
        IMMUTABLE,
    ),
    with_flags(
        extra(
            "enable-debug-command",
            Type::Enum(&["no", "yes", "local"]),
            "no",
        ),
        IMMUTABLE,
    ),
    with_flags(extra("cluster-enabled", YES_NO, "no"), IMMUTABLE),
    extra("notify-keyspace-events", Type::Str, ""),
    extra(
        "busy-reply-threshold",
        Type::Int {
            min: 0,
            max: LLONG_MAX,
        },
        "5000",
    ),
    extra(
        "lua-time-limit",
        Type::Int {
            min: 0,
            max: LLONG_MAX,
        },
        "5000",
    ),
    Param {
        name: "client-output-buffer-limit",
        alias: None,
        ty: Type::OutputBufferLimit,
        flags: 0,
        store: Store::Field {
            get: |c| c.client_output_buffer_limit.render(),
            set: |c, v| {
                let applied = c.client_output_buffer_limit.apply(&v.text());
                debug_assert!(applied.is_ok(), "validated by parse_value");
            },
        },
    },
    Param {
        name: "latency-tracking",
        alias: None,
        ty: YES_NO,
        flags: 0,
        store: Store::Field {
            get: |c| yes_no(c.latency_tracking).into(),
            set: |c, v| c.latency_tracking = v.as_bool(),
        },
    },
    extra(
        "latency-tracking-info-percentiles",
        Type::List,
        "50 99 99.9",
    ),
    Param {
        name: "lfu-log-factor",
        alias: None,
        ty: Type::Int {
            min: 0,
            max: INT_MAX,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.lfu_log_factor.to_string(),
            set: |c, v| c.lfu_log_factor = v.as_u64().min(u32::MAX as u64) as u32,
        },
    },
    Param {
        name: "lfu-decay-time",
        alias: None,
        ty: Type::Int {
            min: 0,
            max: INT_MAX,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.lfu_decay_time_min.to_string(),
            set: |c, v| c.lfu_decay_time_min = v.as_u64().min(u32::MAX as u64) as u32,
        },
    },
    Param {
        name: "hash-max-listpack-entries",
        alias: Some("hash-max-ziplist-entries"),
        ty: Type::Int {
            min: 0,
            max: LLONG_MAX,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.limits.hash_max_listpack_entries.to_string(),
            set: |c, v| c.limits.hash_max_listpack_entries = v.as_i64() as usize,
        },
    },
    Param {
        name: "hash-max-listpack-value",
        alias: Some("hash-max-ziplist-value"),
        ty: Type::Int {
            min: 0,
            max: LLONG_MAX,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.limits.hash_max_listpack_value_bytes.to_string(),
            set: |c, v| c.limits.hash_max_listpack_value_bytes = v.as_i64() as usize,
        },
    },
    Param {
        name: "list-max-listpack-size",
        alias: Some("list-max-ziplist-size"),
        ty: Type::Int {
            min: i32::MIN as i64,
            max: INT_MAX,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.limits.list_max_listpack_size.to_string(),
            set: |c, v| c.limits.list_max_listpack_size = v.as_i64(),
        },
    },
    extra(
        "list-compress-depth",
        Type::Int {
            min: 0,
            max: INT_MAX,
        },
        "0",
    ),
    Param {
        name: "set-max-intset-entries",
        alias: None,
        ty: Type::Int {
            min: 0,
            max: LLONG_MAX,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.limits.set_max_intset_entries.to_string(),
            set: |c, v| c.limits.set_max_intset_entries = v.as_i64() as usize,
        },
    },
    Param {
        name: "zset-max-listpack-entries",
        alias: Some("zset-max-ziplist-entries"),
        ty: Type::Int {
            min: 0,
            max: LLONG_MAX,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.limits.zset_max_listpack_entries.to_string(),
            set: |c, v| c.limits.zset_max_listpack_entries = v.as_i64() as usize,
        },
    },
    Param {
        name: "zset-max-listpack-value",
        alias: Some("zset-max-ziplist-value"),
        ty: Type::Int {
            min: 0,
            max: LLONG_MAX,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.limits.zset_max_listpack_value_bytes.to_string(),
            set: |c, v| c.limits.zset_max_listpack_value_bytes = v.as_i64() as usize,
        },
    },
    extra(
        "stream-node-max-bytes",
        Type::Memory {
            min: 0,
            max: LLONG_MAX as u64,
        },
        "4096",
    ),
    extra(
        "stream-node-max-entries",
        Type::Int {
            min: 0,
            max: LLONG_MAX,
        },
        "100",
    ),
    with_alias(extra("replica-read-only", YES_NO, "yes"), "slave-read-only"),
    with_alias(
        extra("replica-serve-stale-data", YES_NO, "yes"),
        "slave-serve-stale-data",
    ),
    extra(
        "repl-backlog-size",
        Type::Memory {
            min: 1,
            max: LLONG_MAX as u64,
        },
        "1048576",
    ),
];

fn find_param(name: &str) -> Option<&'static Param> {
    PARAMS.iter().find(|p| {
        p.name.eq_ignore_ascii_case(name) || p.alias.is_some_and(|a| a.eq_ignore_ascii_case(name))
    })
}

/// The current value of `name` in canonical text, as CONFIG GET shows it,
/// or `None` for unknown parameters. Hosts read host-side settings
/// (`appendonly`, `dir`, `io-threads`...) through this.
pub fn config_get(config: &Config, name: &str) -> Option<String> {
    find_param(name).map(|p| current_value(config, p))
}

fn current_value(config: &Config, p: &Param) -> String {
    match p.store {
        Store::Field { get, .. } => get(config),
        Store::Extra(default) => config
            .extra
            .get(p.name)
            .cloned()
            .unwrap_or_else(|| default.to_string()),
    }
}

/// Redis's `memtoull`: digits with an optional unit `b`, `k`, `kb`, `m`,
/// `mb`, `g`, `gb` (case-insensitive; `k` is 1000, `kb` is 1024).
pub fn parse_memory(s: &str) -> Option<u64> {
    let digits_end = s
        .bytes()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(s.len());
    let (digits, unit) = s.split_at(digits_end);
    let mul: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1024,
        "m" => 1000 * 1000,
        "mb" => 1024 * 1024,
        "g" => 1000 * 1000 * 1000,
        "gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    if digits.is_empty() {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(mul)
}

/// Validates `value` against `p`'s type, giving Redis's error text on failure.
fn parse_value(p: &Param, value: &str) -> Result<Parsed, String> {
    match p.ty {
        Type::Bool => {
            if value.eq_ignore_ascii_case("yes") {
                Ok(Parsed::Bool(true))
            } else if value.eq_ignore_ascii_case("no") {
                Ok(Parsed::Bool(false))
            } else {
                Err("argument must be 'yes' or 'no'".into())
            }
        }
        Type::Int { min, max } => {
            let v = parse_i64_strict(value.as_bytes())
                .ok_or_else(|| "argument couldn't be parsed into an integer".to_string())?;
            if v < min || v > max {
                return Err(format!(
                    "argument must be between {min} and {max} inclusive"
                ));
            }
            Ok(Parsed::Int(v))
        }
        Type::Memory { min, max } => {
            let v =
                parse_memory(value).ok_or_else(|| "argument must be a memory value".to_string())?;
            if v < min || v > max {
                return Err(format!(
                    "argument must be between {min} and {max} inclusive"
                ));
            }
            Ok(Parsed::Memory(v))
        }
        Type::Enum(names) => names
            .iter()
            .find(|n| n.eq_ignore_ascii_case(value))
            .map(|n| Parsed::Text(n.to_string()))
            .ok_or_else(|| {
                format!(
                    "argument(s) must be one of the following: {}",
                    names.join(", ")
                )
            }),
        Type::Str => Ok(Parsed::Text(value.to_string())),
        Type::List => Ok(Parsed::Text(
            value.split_ascii_whitespace().collect::<Vec<_>>().join(" "),
        )),
        Type::Save => parse_save(value).map(Parsed::Text),
        Type::OutputBufferLimit => {
            // Validated against a scratch copy; the setter applies it.
            let mut scratch = crate::config::OutputBufferLimits::default();
            scratch.apply(value)?;
            Ok(Parsed::Text(value.to_string()))
        }
    }
}

/// `save`: an even number of integers, seconds >= 1 and changes >= 0.
/// Returns the canonical text (numbers re-rendered, single spaces).
fn parse_save(value: &str) -> Result<String, String> {
    const INVALID: &str = "Invalid save parameters";
    let parts: Vec<&str> = value.split_ascii_whitespace().collect();
    if parts.len() % 2 == 1 {
        return Err(INVALID.into());
    }
    let mut out = Vec::with_capacity(parts.len());
    for (i, part) in parts.iter().enumerate() {
        let v: i64 = part.parse().map_err(|_| INVALID.to_string())?;
        if (i % 2 == 0 && v < 1) || (i % 2 == 1 && v < 0) {
            return Err(INVALID.into());
        }
        out.push(v.to_string());
    }
    Ok(out.join(" "))
}

fn store_value(config: &mut Config, p: &Param, v: &Parsed) {
    match p.store {
        Store::Field { set, .. } => set(config, v),
        Store::Extra(_) => {
            config.extra.insert(p.name.to_string(), v.text());
        }
    }
}

/// Applies one redis.conf directive (`key` and the rest of the line as
/// `value`) through the same validation as CONFIG SET. Unlike CONFIG SET,
/// immutable and protected parameters may be set here (this is the startup
/// path), except `databases`, which must be 16.
pub fn apply_config_line(config: &mut Config, key: &str, value: &str) -> Result<(), String> {
    let p = find_param(key)
        .ok_or_else(|| format!("Bad directive or wrong number of arguments: '{key}'"))?;
    let v = parse_value(p, value)?;
    if p.name == "databases" && v.as_i64() != DATABASES_COUNT as i64 {
        return Err(format!(
            "seedkv supports exactly {DATABASES_COUNT} databases"
        ));
    }
    store_value(config, p, &v);
    Ok(())
}

/// Loads redis.conf text: one directive per line, `#` comments, arguments
/// quoted as in Redis (`sdssplitargs`). As in Redis, the first `save` line
/// replaces the default and later ones append. Returns the first error as
/// `line N: message`.
pub fn load_config_str(config: &mut Config, text: &str) -> Result<(), String> {
    let mut save_seen = false;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fail = |msg: String| format!("line {}: {msg}", i + 1);
        let args = split_config_line(line.as_bytes())
            .ok_or_else(|| fail("Unbalanced quotes in configuration line".into()))?;
        let Some((key, rest)) = args.split_first() else {
            continue;
        };
        let key = String::from_utf8_lossy(key).into_owned();
        let value = rest
            .iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect::<Vec<_>>()
            .join(" ");
        if key.eq_ignore_ascii_case("save") {
            let old = if save_seen {
                config_get(config, "save").unwrap_or_default()
            } else {
                String::new()
            };
            save_seen = true;
            let joined = format!("{old} {value}");
            apply_config_line(config, "save", joined.trim()).map_err(fail)?;
            continue;
        }
        apply_config_line(config, &key, &value).map_err(fail)?;
    }
    Ok(())
}

/// Splits a redis.conf line into arguments like Redis's `sdssplitargs`:
/// whitespace separates, `"..."` takes `\n`, `\t`, `\r`, `\"`, `\\` and
/// `\xHH` escapes, `'...'` takes `\'`. `None` on unbalanced quotes or a
/// closing quote not followed by whitespace.
fn split_config_line(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut args = Vec::new();
    let mut i = 0;
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    while i < line.len() {
        if line[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let mut arg = Vec::new();
        let quote = match line[i] {
            q @ (b'"' | b'\'') => {
                i += 1;
                Some(q)
            }
            _ => None,
        };
        loop {
            let Some(&c) = line.get(i) else {
                if quote.is_some() {
                    return None;
                }
                break;
            };
            match quote {
                None if c.is_ascii_whitespace() => break,
                None => arg.push(c),
                Some(q) if c == q => {
                    i += 1;
                    if line.get(i).is_some_and(|b| !b.is_ascii_whitespace()) {
                        return None;
                    }
                    break;
                }
                Some(b'"') if c == b'\\' && i + 1 < line.len() => {
                    i += 1;
                    let e = line[i];
                    let hex_pair = (
                        line.get(i + 1).copied().and_then(hex),
                        line.get(i + 2).copied().and_then(hex),
                    );
                    match (e, hex_pair) {
                        (b'x', (Some(hi), Some(lo))) => {
                            arg.push(hi * 16 + lo);
                            i += 2;
                        }
                        (b'n', _) => arg.push(b'\n'),
                        (b'r', _) => arg.push(b'\r'),
                        (b't', _) => arg.push(b'\t'),
                        (b'b', _) => arg.push(0x08),
                        (b'a', _) => arg.push(0x07),
                        (other, _) => arg.push(other),
                    }
                }
                Some(b'\'') if c == b'\\' && line.get(i + 1) == Some(&b'\'') => {
                    i += 1;
                    arg.push(b'\'');
                }
                Some(_) => arg.push(c),
            }
            i += 1;
        }
        args.push(arg);
    }
    Some(args)
}

const CONFIG: CommandSpec = CommandSpec {
    group: "server",
    since: "2.0.0",
    flags: ADMIN | NOSCRIPT | LOADING | STALE,
    acl_categories: &["admin", "slow", "dangerous"],
    ..CommandSpec::DEFAULT
};

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    name: "config",
    arity: -2,
    flags: 0,
    acl_categories: &["slow"],
    summary: "A container for server configuration commands",
    complexity: "Depends on subcommand.",
    subcommands: &[
        CommandSpec {
            name: "config|get",
            arity: -3,
            summary: "Get the values of configuration parameters",
            complexity: "O(N) when N is the number of configuration parameters provided",
            handler: Some(config_get_cmd),
            ..CONFIG
        },
        CommandSpec {
            name: "config|set",
            arity: -4,
            summary: "Set configuration parameters to the given values",
            complexity: "O(N) when N is the number of configuration parameters provided",
            tips: &["request_policy:all_nodes", "response_policy:all_succeeded"],
            handler: Some(config_set_cmd),
            ..CONFIG
        },
        CommandSpec {
            name: "config|resetstat",
            arity: 2,
            summary: "Reset the stats returned by INFO",
            handler: Some(config_resetstat),
            ..CONFIG
        },
        CommandSpec {
            name: "config|rewrite",
            arity: 2,
            since: "2.8.0",
            summary: "Rewrite the configuration file with the in memory configuration",
            handler: Some(config_rewrite),
            ..CONFIG
        },
        CommandSpec {
            name: "config|help",
            arity: 2,
            since: "5.0.0",
            flags: LOADING | STALE,
            acl_categories: &["slow"],
            summary: "Show helpful text about the different subcommands",
            handler: Some(config_help),
            ..CONFIG
        },
    ],
    ..CONFIG
}];

fn config_get_cmd(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let mut matched: Vec<(&'static str, String)> = Vec::new();
    for pattern in &args[2..] {
        ctx.work(PARAMS.len() as u64);
        for p in PARAMS {
            let names = std::iter::once(p.name).chain(p.alias);
            for name in names {
                let hit = name.as_bytes().eq_ignore_ascii_case(pattern)
                    || glob_match(pattern, name.as_bytes(), true);
                if hit && !matched.iter().any(|(n, _)| *n == name) {
                    matched.push((name, current_value(&ctx.server.config, p)));
                }
            }
        }
    }
    let mut w = ctx.w();
    w.map_len(matched.len());
    for (name, value) in &matched {
        w.bulk_str(name);
        w.bulk_str(value);
    }
}

fn config_set_cmd(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if args.len() % 2 == 1 {
        return ctx.error("ERR syntax error");
    }
    let pairs: Vec<(String, String)> = args[2..]
        .chunks(2)
        .map(|kv| {
            (
                String::from_utf8_lossy(&kv[0]).into_owned(),
                String::from_utf8_lossy(&kv[1]).into_owned(),
            )
        })
        .collect();
    ctx.work(pairs.len() as u64);
    // First pass, as in Redis: unknown names win over every other error;
    // then immutability and duplicates, reported with the name as typed.
    if let Some((name, _)) = pairs.iter().find(|(n, _)| find_param(n).is_none()) {
        return ctx.error(&format!(
            "ERR Unknown option or number of arguments for CONFIG SET - '{name}'"
        ));
    }
    let mut chosen: Vec<&'static Param> = Vec::with_capacity(pairs.len());
    for (name, _) in &pairs {
        let p = find_param(name).expect("checked above");
        let problem = if p.flags & IMMUTABLE != 0 {
            Some("can't set immutable config")
        } else if p.flags & PROTECTED != 0 {
            Some("can't set protected config")
        } else if chosen.iter().any(|c| std::ptr::eq(*c, p)) {
            Some("duplicate parameter")
        } else {
            None
        };
        if let Some(problem) = problem {
            return ctx.error(&format!(
                "ERR CONFIG SET failed (possibly related to argument '{name}') - {problem}"
            ));
        }
        chosen.push(p);
    }
    // Validate everything before storing anything, so a failed CONFIG SET
    // changes nothing.
    let mut parsed = Vec::with_capacity(pairs.len());
    for (p, (_, value)) in chosen.iter().zip(&pairs) {
        match parse_value(p, value) {
            Ok(v) => parsed.push(v),
            Err(e) => {
                return ctx.error(&format!(
                    "ERR CONFIG SET failed (possibly related to argument '{}') - {e}",
                    p.name
                ))
            }
        }
    }
    for (p, v) in chosen.iter().zip(&parsed) {
        store_value(&mut ctx.server.config, p, v);
    }
    ctx.ok();
}

fn config_resetstat(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    ctx.server.stats.reset();
    ctx.server.keyspace.expired_keys = 0;
    ctx.server.evict.reset_stats(ctx.now);
    ctx.ok();
}

fn config_rewrite(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    // The engine owns no file; a host that loaded one may handle REWRITE itself.
    ctx.error("ERR The server is running without a config file");
}

/// Writes Redis's HELP reply: a status header line, then status lines.
pub(crate) fn help_reply(ctx: &mut Ctx, command: &str, lines: &[&str]) {
    let mut w = ctx.w();
    w.array_len(lines.len() + 3);
    w.simple(&format!(
        "{command} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    ));
    for line in lines {
        w.simple(line);
    }
    w.simple("HELP");
    w.simple("    Prints this help.");
}

fn config_help(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    help_reply(
        ctx,
        "CONFIG",
        &[
            "GET <pattern>",
            "    Return parameters matching the glob-like <pattern> and their values.",
            "SET <directive> <value>",
            "    Set the configuration <directive> to <value>.",
            "RESETSTAT",
            "    Reset statistics reported by the INFO command.",
            "REWRITE",
            "    Rewrite the configuration file.",
        ],
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::Frame;
    use crate::testing::{bulk, err, simple, TestEngine};

    fn pairs(f: Frame) -> Vec<(String, String)> {
        let Frame::Array(items) = f else {
            panic!("expected array, got {f:?}")
        };
        items
            .chunks(2)
            .map(|kv| match (&kv[0], &kv[1]) {
                (Frame::Bulk(k), Frame::Bulk(v)) => (
                    String::from_utf8_lossy(k).into_owned(),
                    String::from_utf8_lossy(v).into_owned(),
                ),
                other => panic!("unexpected {other:?}"),
            })
            .collect()
    }

    #[test]
    fn get_exact_and_glob() {
        let mut t = TestEngine::new();
        let c = t.connect();
        assert_eq!(
            t.cmd(c, &["CONFIG", "GET", "maxmemory"]),
            Frame::Array(vec![bulk("maxmemory"), bulk("0")])
        );
        let lazy = pairs(t.cmd(c, &["config", "get", "lazyfree*"]));
        assert_eq!(lazy.len(), 5);
        assert!(lazy
            .iter()
            .all(|(k, v)| k.starts_with("lazyfree-") && v == "no"));
        assert_eq!(t.cmd(c, &["config", "get", "nosuch"]), Frame::Array(vec![]));
        let multi = pairs(t.cmd(c, &["config", "get", "hz", "HZ", "port"]));
        assert_eq!(
            multi,
            vec![("hz".into(), "10".into()), ("port".into(), "6379".into())]
        );
        assert_eq!(
            t.cmd(c, &["config", "get"]),
            err("ERR wrong number of arguments for 'config|get' command")
        );
        // Aliases answer under their own name.
        assert_eq!(
            pairs(t.cmd(c, &["config", "get", "hash-max-ziplist-entries"])),
            vec![("hash-max-ziplist-entries".into(), "128".into())]
        );
    }

    #[test]
    fn get_is_a_map_in_resp3() {
        let mut t = TestEngine::new();
        let c = t.connect();
        t.cmd(c, &["HELLO", "3"]);
        assert_eq!(
            t.cmd(c, &["config", "get", "hz"]),
            Frame::Map(vec![(bulk("hz"), bulk("10"))])
        );
    }

    #[test]
    fn set_validates_like_redis() {
        let mut t = TestEngine::new();
        let c = t.connect();
        let cases = [
            (vec!["foo", "bar"], "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"),
            (vec!["hz", "abc"], "ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be parsed into an integer"),
            (vec!["hz", "-1"], "ERR CONFIG SET failed (possibly related to argument 'hz') - argument must be between 0 and 2147483647 inclusive"),
            (vec!["maxmemory", "1.5gb"], "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value"),
            (vec!["maxmemory-policy", "foo"], "ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"),
            (vec!["lazyfree-lazy-expire", "maybe"], "ERR CONFIG SET failed (possibly related to argument 'lazyfree-lazy-expire') - argument must be 'yes' or 'no'"),
            (vec!["databases", "4"], "ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config"),
            (vec!["dir", "/tmp"], "ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config"),
            (vec!["hz", "10", "hz", "11"], "ERR CONFIG SET failed (possibly related to argument 'hz') - duplicate parameter"),
            (vec!["hz", "10", "foo", "1"], "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"),
            (vec!["hz", "10", "maxmemory"], "ERR syntax error"),
            (vec!["proto-max-bulk-len", "10"], "ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - argument must be between 1048576 and 9223372036854775807 inclusive"),
            (vec!["save", "10"], "ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters"),
            (vec!["loglevel", "loud"], "ERR CONFIG SET failed (possibly related to argument 'loglevel') - argument(s) must be one of the following: debug, verbose, notice, warning"),
        ];
        for (args, expected) in cases {
            let mut full = vec!["config", "set"];
            full.extend(args.iter());
            assert_eq!(t.cmd(c, &full), err(expected), "{args:?}");
        }
        assert_eq!(
            t.cmd(c, &["config", "set", "hz"]),
            err("ERR wrong number of arguments for 'config|set' command")
        );
    }

    #[test]
    fn set_is_all_or_nothing_and_applies() {
        let mut t = TestEngine::new();
        let c = t.connect();
        assert_eq!(
            t.cmd(c, &["config", "set", "hz", "5", "maxmemory-policy", "bad"]),
            err("ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction")
        );
        assert_eq!(t.engine.config().hz, 10);
        assert_eq!(
            t.cmd(
                c,
                &[
                    "config",
                    "set",
                    "hz",
                    "1000",
                    "maxmemory",
                    "1gb",
                    "MAXMEMORY-POLICY",
                    "ALLKEYS-LRU"
                ]
            ),
            simple("OK")
        );
        let cfg = t.engine.config();
        assert_eq!(cfg.hz, 500);
        assert_eq!(cfg.maxmemory_bytes, 1 << 30);
        assert_eq!(cfg.maxmemory_policy, MaxmemoryPolicy::AllkeysLru);
        assert_eq!(
            pairs(t.cmd(c, &["config", "get", "maxmemory-policy"])),
            vec![("maxmemory-policy".into(), "allkeys-lru".into())]
        );
        t.cmd(
            c,
            &[
                "config",
                "set",
                "maxmemory",
                "1g",
                "save",
                "900  1 300 10",
                "appendonly",
                "YES",
            ],
        );
        assert_eq!(t.engine.config().maxmemory_bytes, 1_000_000_000);
        assert_eq!(
            pairs(t.cmd(c, &["config", "get", "save", "appendonly"])),
            vec![
                ("save".into(), "900 1 300 10".into()),
                ("appendonly".into(), "yes".into())
            ]
        );
        t.cmd(c, &["config", "set", "requirepass", "secret"]);
        assert_eq!(
            t.engine.config().requirepass.as_deref(),
            Some(&b"secret"[..])
        );
        t.cmd(c, &["config", "set", "requirepass", ""]);
        assert_eq!(t.engine.config().requirepass, None);
    }

    #[test]
    fn memory_units() {
        assert_eq!(parse_memory("100"), Some(100));
        assert_eq!(parse_memory("1k"), Some(1000));
        assert_eq!(parse_memory("1KB"), Some(1024));
        assert_eq!(parse_memory("100mb"), Some(100 << 20));
        assert_eq!(parse_memory("2G"), Some(2_000_000_000));
        assert_eq!(parse_memory("-1"), None);
        assert_eq!(parse_memory("1.5gb"), None);
        assert_eq!(parse_memory("gb"), None);
        assert_eq!(parse_memory("99999999999999999999gb"), None);
    }

    #[test]
    fn config_file_lines() {
        let mut cfg = Config::default();
        let text = "# comment\nport 7000\nbind 127.0.0.1 ::1\nsave 900 1\nsave 60 100\nmaxmemory 100mb\ndatabases 16\nappendonly \"yes\"\n";
        load_config_str(&mut cfg, text).unwrap();
        assert_eq!(cfg.port, 7000);
        assert_eq!(cfg.bind, "127.0.0.1 ::1");
        assert_eq!(cfg.maxmemory_bytes, 100 << 20);
        assert_eq!(config_get(&cfg, "save").unwrap(), "900 1 60 100");
        assert_eq!(config_get(&cfg, "appendonly").unwrap(), "yes");
        assert!(load_config_str(&mut cfg, "databases 4").is_err());
        assert!(load_config_str(&mut cfg, "dir \"/tmp").is_err());
        assert_eq!(
            split_config_line(br#"a "b c\x41\n" 'd\'e'  f"#).unwrap(),
            vec![
                b"a".to_vec(),
                b"b cA\n".to_vec(),
                b"d'e".to_vec(),
                b"f".to_vec()
            ]
        );
        assert_eq!(
            apply_config_line(&mut cfg, "hz", "x").unwrap_err(),
            "argument couldn't be parsed into an integer"
        );
        assert!(apply_config_line(&mut cfg, "nosuch", "1").is_err());
    }

    #[test]
    fn resetstat_rewrite_help() {
        let mut t = TestEngine::new();
        let c = t.connect();
        t.cmd(c, &["ping"]);
        assert_eq!(t.cmd(c, &["config", "resetstat"]), simple("OK"));
        assert_eq!(t.engine.server().stats.total_commands_processed, 1);
        assert_eq!(
            t.cmd(c, &["config", "rewrite"]),
            err("ERR The server is running without a config file")
        );
        let Frame::Array(lines) = t.cmd(c, &["config", "help"]) else {
            panic!()
        };
        assert_eq!(lines.len(), 11);
        assert_eq!(
            t.cmd(c, &["config", "nope"]),
            err("ERR unknown subcommand 'nope'. Try CONFIG HELP.")
        );
    }
}
