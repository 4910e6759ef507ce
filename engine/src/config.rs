//! Engine configuration: the redis.conf keys the engine itself enforces.
//! `CONFIG GET/SET` (commands/config.rs) reads and writes these fields by
//! their redis.conf names.

/// Configuration fixed at construction or changed by `CONFIG SET`.
#[derive(Clone, Debug)]
pub struct Config {
    /// Seeds every random choice the engine makes (hash keys, RANDOMKEY, ...).
    pub seed: u64,
    /// `requirepass`: when set, clients must AUTH before other commands.
    pub requirepass: Option<Vec<u8>>,
    /// `maxclients`.
    pub maxclients: usize,
    /// `proto-max-bulk-len`.
    pub proto_max_bulk_len_bytes: usize,
    /// `client-query-buffer-limit`.
    pub client_query_buffer_limit_bytes: usize,
    /// `hz`: how often the cron (`handle_timeout`) wants to run.
    pub hz: u32,
    /// `busy-reply-threshold` (alias `lua-time-limit`) in milliseconds: a
    /// script running longer lets other clients in, answered `-BUSY`.
    pub busy_reply_threshold_ms: u64,
    /// `lazyfree-lazy-user-del`: DEL behaves like UNLINK.
    pub lazyfree_lazy_user_del: bool,
    /// `snapshot-reads` (seedkv's own, not in Redis): KEYS, SMEMBERS,
    /// HGETALL, HKEYS and HVALS over big collections answer from a
    /// point-in-time view in slices between other clients' commands (see
    /// [`crate::snapshot_read`]).
    pub snapshot_reads: bool,
    /// Elements one slice of a snapshot read produces; a collection no
    /// bigger is read whole. A host setting, not a CONFIG parameter (the
    /// simulator draws it small so that its collections are sliced).
    pub snapshot_slice_elements: usize,
    /// `lazyfree-lazy-user-flush`: FLUSHALL/FLUSHDB default to ASYNC.
    pub lazyfree_lazy_user_flush: bool,
    /// `lazyfree-lazy-expire`.
    pub lazyfree_lazy_expire: bool,
    /// `lazyfree-lazy-server-del`: implicit deletes (overwrite, RENAME) free lazily.
    pub lazyfree_lazy_server_del: bool,
    /// `slowlog-log-slower-than` in microseconds (-1 disables).
    pub slowlog_log_slower_than_us: i64,
    /// `slowlog-max-len`.
    pub slowlog_max_len: usize,
    /// `acllog-max-len`: ACL LOG entries kept (see [`crate::acl::log`]).
    pub acllog_max_len: usize,
    /// `latency-monitor-threshold` in milliseconds (0 disables).
    pub latency_monitor_threshold_ms: u64,
    /// `latency-tracking`: per-command latency histograms (INFO
    /// latencystats, LATENCY HISTOGRAM).
    pub latency_tracking: bool,
    /// `port`, reported by INFO and CONFIG GET (the host owns the socket).
    pub port: u16,
    /// `bind`, reported by CONFIG GET.
    pub bind: String,
    /// The server's process id as reported by INFO (the host supplies it).
    pub process_id: u32,
    /// Whether to emit an [`crate::Event::Executed`] per command.
    pub record_executions: bool,
    /// Whether each execution record also carries the sizes of what the
    /// command touched ([`crate::sizes`]), for the simulator's no-freeze
    /// invariant. Costs lookups per command; off outside the simulator.
    pub record_sizes: bool,
    /// Whether the engine knows SHUTDOWN, answering it with an
    /// [`crate::Event::Shutdown`]: set by a host that can stop (the real
    /// server). Off, SHUTDOWN is an unknown command, as it always is in the
    /// simulator, whose workload never stops its server.
    pub shutdown_command: bool,
    /// Whether the host performs storage requests ([`crate::Event::Storage`]
    /// and [`crate::Event::Fork`]): set by a host with a disk (the real
    /// server, the simulator's disk model). Off, the engine never asks:
    /// nothing is loaded at start, the `save` rules never fire, and SAVE,
    /// BGSAVE and BGREWRITEAOF fail as on a server whose disk refuses.
    pub storage: bool,
    /// Whether the host calls [`crate::Engine::before_sleep`] once per
    /// turn of its event loop, after that turn's inputs and before it
    /// writes output (Redis's `beforeSleep`). Then the AOF is written (and
    /// under `appendfsync always` fsynced) once per turn for every client
    /// of the turn, and replies wait for it: group commit. Off, the AOF is
    /// written after every input.
    pub group_commit: bool,
    /// A deliberate defect for the simulator's self-test (None in production).
    pub planted_bug: Option<crate::planted::PlantedBug>,
    /// `maxmemory` (0: no limit).
    pub maxmemory_bytes: u64,
    /// `maxmemory-policy`.
    pub maxmemory_policy: MaxmemoryPolicy,
    /// `maxmemory-samples`, `lfu-log-factor`, `lfu-decay-time` (minutes),
    /// `lazyfree-lazy-eviction`: how eviction samples, counts and frees
    /// (see [`crate::evict`]).
    pub maxmemory_samples: u32,
    /// `maxmemory-clients`: bytes, or (negative) a percentage of
    /// `maxmemory`; 0 turns client eviction off (see [`crate::client_evict`]).
    pub maxmemory_clients: i64,
    pub lfu_log_factor: u32,
    /// `tracking-table-max-keys`: keys the tracking table may hold before
    /// keys are invalidated to make room (0: no limit).
    pub tracking_table_max_keys: u64,
    pub lfu_decay_time_min: u32,
    pub lazyfree_lazy_eviction: bool,
    /// `timeout`: close clients idle this long (0: never).
    pub timeout_s: u64,
    /// `hll-sparse-max-bytes`: the longest sparse HyperLogLog (header
    /// included) before it is promoted to the dense encoding.
    pub hll_sparse_max_bytes: usize,
    /// The collection encoding thresholds (`hash-max-listpack-entries`...).
    pub limits: crate::types::Limits,
    /// `client-output-buffer-limit`, per client class.
    pub client_output_buffer_limit: OutputBufferLimits,
    /// The configuration's `user` directives (name first, then the rules),
    /// applied at start; Redis refuses them next to an `aclfile`.
    pub acl_users: Vec<Vec<Vec<u8>>>,
    /// Other redis.conf keys accepted by CONFIG GET/SET and kept verbatim.
    pub extra: std::collections::BTreeMap<String, String>,
    /// `notify-keyspace-events` as class flags (see [`crate::notify`]);
    /// 0, the default, publishes nothing.
    pub notify_keyspace_events: u32,
    /// `replicaof <host> <port>` (or `slaveof`) from the configuration
    /// file or the command line: the server starts as a replica of it
    /// (see [`crate::repl::replica`]).
    pub replicaof: Option<(String, u16)>,
    /// `min-replicas-to-write` and `min-replicas-max-lag` (seconds): a
    /// primary refuses writes without that many replicas acknowledged
    /// within the lag (0 replicas, the default: never refuses).
    pub min_replicas_to_write: u32,
    pub min_replicas_max_lag_s: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            seed: 0,
            requirepass: None,
            maxclients: 10_000,
            proto_max_bulk_len_bytes: 512 * 1024 * 1024,
            client_query_buffer_limit_bytes: 1024 * 1024 * 1024,
            hz: 10,
            busy_reply_threshold_ms: crate::scripting::BUSY_REPLY_THRESHOLD_MS,
            lazyfree_lazy_user_del: false,
            snapshot_reads: true,
            snapshot_slice_elements: crate::snapshot_read::SLICE_ELEMENTS,
            lazyfree_lazy_user_flush: false,
            lazyfree_lazy_expire: false,
            lazyfree_lazy_server_del: false,
            slowlog_log_slower_than_us: 10_000,
            slowlog_max_len: 128,
            acllog_max_len: 128,
            latency_monitor_threshold_ms: 0,
            latency_tracking: true,
            port: 6379,
            bind: "127.0.0.1".into(),
            process_id: 0,
            record_executions: false,
            shutdown_command: false,
            storage: false,
            group_commit: false,
            record_sizes: false,
            planted_bug: None,
            maxmemory_bytes: 0,
            maxmemory_policy: MaxmemoryPolicy::NoEviction,
            maxmemory_samples: 5,
            maxmemory_clients: 0,
            lfu_log_factor: 10,
            tracking_table_max_keys: crate::tracking::TRACKING_TABLE_MAX_KEYS_DEFAULT,
            lfu_decay_time_min: 1,
            lazyfree_lazy_eviction: false,
            timeout_s: 0,
            hll_sparse_max_bytes: 3000,
            limits: Default::default(),
            client_output_buffer_limit: Default::default(),
            acl_users: Vec::new(),
            extra: Default::default(),
            notify_keyspace_events: 0,
            replicaof: None,
            min_replicas_to_write: 0,
            min_replicas_max_lag_s: 10,
        }
    }
}

/// `maxmemory-policy`: what to do when a write would exceed `maxmemory`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MaxmemoryPolicy {
    VolatileLru,
    VolatileLfu,
    VolatileRandom,
    VolatileTtl,
    AllkeysLru,
    AllkeysLfu,
    AllkeysRandom,
    #[default]
    NoEviction,
}

impl MaxmemoryPolicy {
    /// Every policy, in the order Redis lists them in its error message.
    pub const ALL: [MaxmemoryPolicy; 8] = [
        MaxmemoryPolicy::VolatileLru,
        MaxmemoryPolicy::VolatileLfu,
        MaxmemoryPolicy::VolatileRandom,
        MaxmemoryPolicy::VolatileTtl,
        MaxmemoryPolicy::AllkeysLru,
        MaxmemoryPolicy::AllkeysLfu,
        MaxmemoryPolicy::AllkeysRandom,
        MaxmemoryPolicy::NoEviction,
    ];

    /// The redis.conf spelling.
    pub fn name(self) -> &'static str {
        match self {
            MaxmemoryPolicy::VolatileLru => "volatile-lru",
            MaxmemoryPolicy::VolatileLfu => "volatile-lfu",
            MaxmemoryPolicy::VolatileRandom => "volatile-random",
            MaxmemoryPolicy::VolatileTtl => "volatile-ttl",
            MaxmemoryPolicy::AllkeysLru => "allkeys-lru",
            MaxmemoryPolicy::AllkeysLfu => "allkeys-lfu",
            MaxmemoryPolicy::AllkeysRandom => "allkeys-random",
            MaxmemoryPolicy::NoEviction => "noeviction",
        }
    }

    /// Case-insensitive parse of the redis.conf spelling.
    pub fn from_name(name: &str) -> Option<MaxmemoryPolicy> {
        Self::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(name))
    }
}

/// One class's `client-output-buffer-limit`: a client whose pending output
/// reaches `hard_bytes`, or stays at or over `soft_bytes` for
/// `soft_seconds`, is closed. Zero disables a limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct OutputBufferLimit {
    pub hard_bytes: u64,
    pub soft_bytes: u64,
    pub soft_seconds: u64,
}

/// `client-output-buffer-limit` for the three classes Redis names (a
/// subscribed client is `pubsub`; seedkv has no replicas, but keeps their
/// limit for CONFIG GET/SET).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputBufferLimits {
    pub normal: OutputBufferLimit,
    pub replica: OutputBufferLimit,
    pub pubsub: OutputBufferLimit,
}

impl Default for OutputBufferLimits {
    /// Redis's defaults: `normal 0 0 0 slave 256mb 64mb 60 pubsub 32mb 8mb 60`.
    fn default() -> Self {
        const MB: u64 = 1024 * 1024;
        OutputBufferLimits {
            normal: OutputBufferLimit::default(),
            replica: OutputBufferLimit {
                hard_bytes: 256 * MB,
                soft_bytes: 64 * MB,
                soft_seconds: 60,
            },
            pubsub: OutputBufferLimit {
                hard_bytes: 32 * MB,
                soft_bytes: 8 * MB,
                soft_seconds: 60,
            },
        }
    }
}

impl OutputBufferLimits {
    /// CONFIG GET's rendering: every class, bytes as plain numbers.
    pub fn render(&self) -> String {
        let classes = [
            ("normal", self.normal),
            ("slave", self.replica),
            ("pubsub", self.pubsub),
        ];
        classes
            .iter()
            .map(|(name, l)| {
                format!(
                    "{name} {} {} {}",
                    l.hard_bytes, l.soft_bytes, l.soft_seconds
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Applies `<class> <hard> <soft> <soft seconds>` groups (classes not
    /// named keep their limits). Everything is validated before anything
    /// changes; errors are Redis's texts.
    pub fn apply(&mut self, text: &str) -> Result<(), &'static str> {
        let parts: Vec<&str> = text.split_ascii_whitespace().collect();
        if !parts.len().is_multiple_of(4) {
            return Err("Wrong number of arguments in buffer limit configuration.");
        }
        let mut updated = *self;
        for group in parts.chunks_exact(4) {
            let class = match group[0].to_ascii_lowercase().as_str() {
                "normal" => &mut updated.normal,
                "slave" | "replica" => &mut updated.replica,
                "pubsub" => &mut updated.pubsub,
                _ => return Err("Invalid client class specified in buffer limit configuration."),
            };
            const BAD: &str =
                "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
            let memory = crate::commands::config::parse_memory;
            let hard_bytes = memory(group[1]).ok_or(BAD)?;
            let soft_bytes = memory(group[2]).ok_or(BAD)?;
            let soft_seconds = crate::util::parse_i64_strict(group[3].as_bytes())
                .and_then(|s| u64::try_from(s).ok())
                .ok_or(BAD)?;
            *class = OutputBufferLimit {
                hard_bytes,
                soft_bytes,
                soft_seconds,
            };
        }
        *self = updated;
        Ok(())
    }
}
