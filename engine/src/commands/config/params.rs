//! The parameter table: every parameter CONFIG and redis.conf know, its
//! type (which fixes the parser, the bounds and Redis's error text) and
//! where its value lives, with the lookups by name.

use super::parse::Parsed;
use crate::config::{Config, MaxmemoryPolicy};
use crate::db::DATABASES_COUNT;

/// The value type of a parameter, which fixes its parser and its errors.
#[derive(Clone, Copy, Debug)]
pub(super) enum Type {
    /// `yes` / `no`, case-insensitive.
    Bool,
    /// A strict decimal integer within bounds.
    Int { min: i64, max: i64 },
    /// A byte count with an optional unit (`100mb`, `1g`), within bounds.
    Memory { min: u64, max: u64 },
    /// A byte count as `Memory`, or `N%` with N in 0..=100 (stored
    /// negative, Redis's PERCENT_CONFIG): `maxmemory-clients`.
    MemoryOrPercent,
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
    /// `notify-keyspace-events`: class characters (see [`crate::notify`]).
    KeyspaceEvents,
}

/// Parameter flags.
pub(super) const IMMUTABLE: u8 = 1;
/// Redis's PROTECTED_CONFIG: not settable while `enable-protected-configs` is `no`.
pub(super) const PROTECTED: u8 = 2;

/// Where a parameter's value lives.
#[derive(Clone, Copy)]
pub(super) enum Store {
    /// A typed field of [`Config`]: `get` renders it, `set` stores a value
    /// already validated by the parameter's type.
    Field {
        get: fn(&Config) -> String,
        set: fn(&mut Config, &Parsed),
    },
    /// `Config::extra[name]`, defaulting to the given canonical text.
    Extra(&'static str),
}

/// One configuration parameter.
pub(super) struct Param {
    pub(super) name: &'static str,
    /// The pre-7.0 name still accepted (`hash-max-ziplist-entries`).
    pub(super) alias: Option<&'static str>,
    pub(super) ty: Type,
    pub(super) flags: u8,
    pub(super) store: Store,
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

pub(super) fn yes_no(b: bool) -> &'static str {
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
pub(super) static PARAMS: &[Param] = &[
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
    // seedkv's own: sliced point-in-time O(N) reads (crate::snapshot_read).
    Param {
        name: "snapshot-reads",
        alias: None,
        ty: YES_NO,
        flags: 0,
        store: Store::Field {
            get: |c| yes_no(c.snapshot_reads).into(),
            set: |c, v| c.snapshot_reads = v.as_bool(),
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
        name: "acllog-max-len",
        alias: None,
        ty: Type::Int {
            min: 0,
            max: LLONG_MAX,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.acllog_max_len.to_string(),
            set: |c, v| c.acllog_max_len = v.as_u64() as usize,
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
        name: "tracking-table-max-keys",
        alias: None,
        ty: Type::Int {
            min: 0,
            max: LLONG_MAX,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.tracking_table_max_keys.to_string(),
            set: |c, v| c.tracking_table_max_keys = v.as_u64(),
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
    Param {
        name: "maxmemory-clients",
        alias: None,
        ty: Type::MemoryOrPercent,
        flags: 0,
        store: Store::Field {
            get: |c| match c.maxmemory_clients {
                v if v < 0 => format!("{}%", -v),
                v => v.to_string(),
            },
            set: |c, v| c.maxmemory_clients = v.as_i64(),
        },
    },
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
    extra("aof-load-truncated", YES_NO, "yes"),
    extra("aof-rewrite-incremental-fsync", YES_NO, "yes"),
    extra("rdb-save-incremental-fsync", YES_NO, "yes"),
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
    // The channels a new ACL user starts with (see `crate::acl`).
    extra(
        "acl-pubsub-default",
        Type::Enum(&["allchannels", "resetchannels"]),
        "resetchannels",
    ),
    // Users are loaded from it at start, by ACL LOAD, and saved by ACL SAVE.
    with_flags(extra("aclfile", Type::Str, ""), IMMUTABLE),
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
    Param {
        name: "notify-keyspace-events",
        alias: None,
        ty: Type::KeyspaceEvents,
        flags: 0,
        store: Store::Field {
            get: |c| crate::notify::render_flags(c.notify_keyspace_events),
            set: |c, v| {
                let flags = crate::notify::parse_flags(v.text().as_bytes());
                debug_assert!(flags.is_some(), "validated by parse_value");
                c.notify_keyspace_events = flags.unwrap_or(0);
            },
        },
    },
    Param {
        name: "busy-reply-threshold",
        alias: Some("lua-time-limit"),
        ty: Type::Int {
            min: 0,
            max: LLONG_MAX,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.busy_reply_threshold_ms.to_string(),
            set: |c, v| c.busy_reply_threshold_ms = v.as_i64() as u64,
        },
    },
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
    Param {
        name: "hll-sparse-max-bytes",
        alias: None,
        ty: Type::Memory {
            min: 0,
            max: LLONG_MAX as u64,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.hll_sparse_max_bytes.to_string(),
            set: |c, v| c.hll_sparse_max_bytes = v.as_u64() as usize,
        },
    },
    Param {
        name: "stream-node-max-bytes",
        alias: None,
        ty: Type::Memory {
            min: 0,
            max: LLONG_MAX as u64,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.limits.stream_node_max_bytes.to_string(),
            set: |c, v| c.limits.stream_node_max_bytes = v.as_u64() as usize,
        },
    },
    Param {
        name: "stream-node-max-entries",
        alias: None,
        ty: Type::Int {
            min: 0,
            max: LLONG_MAX,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.limits.stream_node_max_entries.to_string(),
            set: |c, v| c.limits.stream_node_max_entries = v.as_i64() as usize,
        },
    },
    with_alias(extra("replica-read-only", YES_NO, "yes"), "slave-read-only"),
    with_alias(
        extra(
            "replica-priority",
            Type::Int {
                min: 0,
                max: i32::MAX as i64,
            },
            "100",
        ),
        "slave-priority",
    ),
    extra("replica-announced", YES_NO, "yes"),
    with_alias(
        extra(
            "replica-announce-port",
            Type::Int { min: 0, max: 65535 },
            "0",
        ),
        "slave-announce-port",
    ),
    with_alias(
        extra("replica-lazy-flush", YES_NO, "no"),
        "slave-lazy-flush",
    ),
    with_alias(
        extra("replica-serve-stale-data", YES_NO, "yes"),
        "slave-serve-stale-data",
    ),
    extra("repl-diskless-sync", YES_NO, "yes"),
    extra(
        "repl-diskless-sync-delay",
        Type::Int {
            min: 0,
            max: i32::MAX as i64,
        },
        "5",
    ),
    // Typed fields, not `extra`: every write on a primary reads them
    // (`repl::primary::admit`), and a lookup by name there cost a tenth
    // of a pipelined SET.
    Param {
        name: "min-replicas-to-write",
        alias: None,
        ty: Type::Int {
            min: 0,
            max: INT_MAX,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.min_replicas_to_write.to_string(),
            set: |c, v| c.min_replicas_to_write = v.as_u64() as u32,
        },
    },
    Param {
        name: "min-replicas-max-lag",
        alias: None,
        ty: Type::Int {
            min: 0,
            max: INT_MAX,
        },
        flags: 0,
        store: Store::Field {
            get: |c| c.min_replicas_max_lag_s.to_string(),
            set: |c, v| c.min_replicas_max_lag_s = v.as_u64() as u32,
        },
    },
    extra(
        "repl-timeout",
        Type::Int {
            min: 1,
            max: i32::MAX as i64,
        },
        "60",
    ),
    extra(
        "repl-ping-replica-period",
        Type::Int {
            min: 1,
            max: i32::MAX as i64,
        },
        "10",
    ),
    with_flags(extra("masterauth", Type::Str, ""), 0),
    extra("masteruser", Type::Str, ""),
    extra(
        "repl-backlog-size",
        Type::Memory {
            min: 1,
            max: LLONG_MAX as u64,
        },
        "1048576",
    ),
];

pub(super) fn find_param(name: &str) -> Option<&'static Param> {
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

pub(super) fn current_value(config: &Config, p: &Param) -> String {
    match p.store {
        Store::Field { get, .. } => get(config),
        Store::Extra(default) => config
            .extra
            .get(p.name)
            .cloned()
            .unwrap_or_else(|| default.to_string()),
    }
}
