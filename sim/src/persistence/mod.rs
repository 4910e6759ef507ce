//! Persistence in a simulated run: which mode the server runs in (RDB
//! snapshots, or the AOF with one of the three `appendfsync` policies),
//! the disk's knobs, and whether (and when) the world crashes the server.
//! Off unless asked for (`--persistence`), so a run without it draws and
//! behaves exactly as before.

use rand::Rng;
use seedkv_engine::commands::config::apply_config_line;
use seedkv_engine::Config;

use crate::rng::stream_rng;
use crate::world::disk::DiskKnobs;

pub mod digest;
pub mod record;

/// How the server persists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PersistMode {
    /// RDB snapshots only (`save` rules, BGSAVE in a child).
    Rdb,
    /// The AOF with `appendfsync always`, `everysec`, `no`.
    AofAlways,
    AofEverysec,
    AofNo,
}

impl PersistMode {
    pub const ALL: [PersistMode; 4] = [
        PersistMode::Rdb,
        PersistMode::AofAlways,
        PersistMode::AofEverysec,
        PersistMode::AofNo,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PersistMode::Rdb => "rdb",
            PersistMode::AofAlways => "aof-always",
            PersistMode::AofEverysec => "aof-everysec",
            PersistMode::AofNo => "aof-no",
        }
    }

    pub fn from_name(name: &str) -> Option<PersistMode> {
        PersistMode::ALL.into_iter().find(|m| m.name() == name)
    }

    pub fn is_aof(self) -> bool {
        self != PersistMode::Rdb
    }
}

/// Share of the request budget sent before the crash, per mille.
pub const CRASH_AFTER_PER_MILLE_MIN: u32 = 200;
pub const CRASH_AFTER_PER_MILLE_MAX: u32 = 900;

/// A run's persistence knobs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PersistKnobs {
    pub mode: PersistMode,
    pub disk: DiskKnobs,
    /// Crash the server once this share of the requests was sent (per
    /// mille), then restart it over the same disk; `None`: no crash.
    pub crash_after_per_mille: Option<u32>,
    /// `save <seconds> <changes>` in RDB mode.
    pub save_every_s: u64,
    /// `auto-aof-rewrite-min-size` in AOF modes, bytes.
    pub aof_rewrite_min_bytes: u64,
    /// The host ends each event-loop turn with `before_sleep`: the AOF is
    /// written once per turn and replies wait for it (group commit, as
    /// seedkv-server runs); off, after every input.
    pub group_commit: bool,
}

/// The `aclfile` of a run without a crash: installed empty on the disk
/// before the server starts (Redis refuses to start without it).
pub const ACL_FILE: &str = "users.acl";

/// The stream the persistence knobs are drawn from (its own, so that
/// turning persistence on changes no other draw).
const PERSIST_STREAM: &str = "knobs-persist";

impl PersistKnobs {
    pub fn draw(seed: u64, mode: PersistMode, crash: bool, disk_faults: bool) -> PersistKnobs {
        let mut rng = stream_rng(seed, PERSIST_STREAM, 0);
        // Disk faults make Redis refuse writes (MISCONF), which the reply
        // checkers do not model yet: only RDB mode (with
        // `stop-writes-on-bgsave-error no`, see `configure`) and `always`
        // (where a write or fsync error ends the server) draw them.
        let faults_fit = matches!(mode, PersistMode::Rdb | PersistMode::AofAlways);
        let faults = disk_faults && rng.gen_bool(0.5) && faults_fit;
        let disk = DiskKnobs::draw(&mut rng, faults);
        let crash_after = rng.gen_range(CRASH_AFTER_PER_MILLE_MIN..=CRASH_AFTER_PER_MILLE_MAX);
        PersistKnobs {
            mode,
            disk,
            crash_after_per_mille: crash.then_some(crash_after),
            save_every_s: rng.gen_range(1..=3),
            aof_rewrite_min_bytes: rng.gen_range(16 * 1024..=1024 * 1024),
            // Drawn last: the draws before it are those of older runs.
            group_commit: rng.gen_bool(0.5),
        }
    }

    /// Whether the run gets an `aclfile` ([`ACL_FILE`]) for the `acl`
    /// workload's ACL SAVE and ACL LOAD. Not across a crash (the restarted
    /// server would load the users at start, which the access checker does
    /// not follow), nor next to the `rare` workloads (their ACL LOAD would
    /// take away the user their section just made).
    pub fn wants_aclfile(&self, workloads: &[crate::workload::WorkloadKind]) -> bool {
        use crate::workload::WorkloadKind;
        let rare = workloads
            .iter()
            .any(|w| matches!(w, WorkloadKind::Rare | WorkloadKind::RareSolo));
        self.crash_after_per_mille.is_none() && !rare
    }

    /// The engine's configuration for this mode (on top of the world's).
    pub fn configure(&self, config: &mut Config) {
        config.storage = true;
        config.group_commit = self.group_commit;
        let mut set = |key: &str, value: &str| {
            apply_config_line(config, key, value)
                .unwrap_or_else(|e| panic!("config {key} {value}: {e}"));
        };
        match self.mode {
            PersistMode::Rdb => {
                set("save", &format!("{} 1", self.save_every_s));
                set("appendonly", "no");
                set("stop-writes-on-bgsave-error", "no");
            }
            mode => {
                set("save", "");
                set("appendonly", "yes");
                let policy = match mode {
                    PersistMode::AofAlways => "always",
                    PersistMode::AofEverysec => "everysec",
                    _ => "no",
                };
                set("appendfsync", policy);
                // A rewrite now and then (ignored by an engine without one).
                let _ = apply_config_line(config, "auto-aof-rewrite-percentage", "100");
                let _ = apply_config_line(
                    config,
                    "auto-aof-rewrite-min-size",
                    &self.aof_rewrite_min_bytes.to_string(),
                );
            }
        }
    }
}

/// What persistence did in a run (or summed over a sweep).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PersistStats {
    pub runs_count: u64,
    pub crashes_count: u64,
    /// Keys the restarted servers held, summed.
    pub recovered_keys_count: u64,
    pub exits_count: u64,
    pub snapshots_count: u64,
    pub fsyncs_count: u64,
    pub bytes_appended: u64,
    pub disk_faults_count: u64,
    pub torn_sectors_count: u64,
}

impl PersistStats {
    pub fn add(&mut self, other: &PersistStats) {
        self.runs_count += other.runs_count;
        self.crashes_count += other.crashes_count;
        self.recovered_keys_count += other.recovered_keys_count;
        self.exits_count += other.exits_count;
        self.snapshots_count += other.snapshots_count;
        self.fsyncs_count += other.fsyncs_count;
        self.bytes_appended += other.bytes_appended;
        self.disk_faults_count += other.disk_faults_count;
        self.torn_sectors_count += other.torn_sectors_count;
    }
}
