//! The engine's keyspace as an RDB file and back ([`crate::rdb::file`]),
//! with the engine's configuration (`rdbcompression`, `rdbchecksum`,
//! `maxmemory-policy`, the encoding thresholds). The storage code and the
//! cross-loading tests call these; they are not part of the driving API.

use super::Engine;
use crate::commands::config::config_get;
use crate::db::Keyspace;
use crate::lru::Access;
use crate::rdb::file::{self, LoadError, LoadOptions, LoadReport, SaveOptions, SaveReport};
use crate::rdb::object::Build;
use crate::server::Server;
use crate::time::Now;
use crate::Config;

impl Server {
    /// The options a save at `now` writes with under this configuration
    /// (`rdbcompression`, `rdbchecksum`, `maxmemory-policy`,
    /// `lfu-decay-time`) and replication state; `aof_base` for the RDB
    /// preamble of an AOF base, which carries no replication fields (Redis
    /// passes no `rsi` to an AOF rewrite).
    pub(crate) fn rdb_save_options(
        &self,
        now: Now,
        used_mem_bytes: u64,
        aof_base: bool,
    ) -> SaveOptions {
        let config = &self.config;
        SaveOptions {
            now_ms: now.unix_ms(),
            compress: config_yes(config, "rdbcompression"),
            checksum: config_yes(config, "rdbchecksum"),
            aof_base,
            used_mem_bytes,
            maxmemory_policy: config.maxmemory_policy,
            lfu_decay_time_min: config.lfu_decay_time_min,
            repl: if aof_base {
                None
            } else {
                self.repl.save_info(self.propagation.selected_db())
            },
        }
    }

    /// The options a load at `now` reads with: `rdbchecksum`, the encoding
    /// thresholds and collection seed; `drop_expired` as a master loading
    /// its dump (not for an AOF's RDB preamble).
    pub(crate) fn rdb_load_options(&self, now: Now, drop_expired: bool) -> LoadOptions {
        LoadOptions {
            now_ms: now.unix_ms(),
            checksum: config_yes(&self.config, "rdbchecksum"),
            drop_expired,
            build: Build {
                limits: self.config.limits,
                seed: self.collection_hash_seed(),
            },
        }
    }
}

impl Engine {
    /// The options a SAVE at `now` writes with: the engine's configuration,
    /// `used-mem` as INFO reports it, and `aof-base` 0 (an AOF rewrite sets
    /// it before calling [`Engine::write_rdb`]).
    #[doc(hidden)]
    pub fn rdb_save_options(&self, now: Now) -> SaveOptions {
        let used_mem_bytes = self.server.allocated_bytes.unwrap_or_else(|| {
            crate::commands::server::memory_report_of(&self.server, &self.clients).used_bytes
        });
        self.server.rdb_save_options(now, used_mem_bytes, false)
    }

    /// Streams the keyspace as an RDB file through `sink` (see
    /// [`file::write_file`]).
    #[doc(hidden)]
    pub fn write_rdb(&self, opts: &SaveOptions, sink: &mut dyn FnMut(&[u8])) -> SaveReport {
        let functions = self.server.functions.rdb_records(opts.compress);
        file::write_file(&self.server.keyspace, &functions, opts, sink)
    }

    /// The whole RDB file a SAVE at `now` would write.
    #[doc(hidden)]
    pub fn rdb_file_bytes(&self, now: Now) -> Vec<u8> {
        let mut bytes = Vec::new();
        self.write_rdb(&self.rdb_save_options(now), &mut |chunk| {
            bytes.extend_from_slice(chunk)
        });
        bytes
    }

    /// Loads an RDB file at `now` as a master does at start (expired keys
    /// dropped) into a fresh keyspace, which replaces the engine's on
    /// success; on error the keyspace is left as it was.
    #[doc(hidden)]
    pub fn load_rdb_file(&mut self, now: Now, bytes: &[u8]) -> Result<LoadReport, LoadError> {
        self.load_rdb_file_with(now, bytes, true)
    }

    /// [`Engine::load_rdb_file`], but keeping expired keys when
    /// `!drop_expired` (the RDB preamble of an AOF base file).
    #[doc(hidden)]
    pub fn load_rdb_file_with(
        &mut self,
        now: Now,
        bytes: &[u8],
        drop_expired: bool,
    ) -> Result<LoadReport, LoadError> {
        let opts = self.server.rdb_load_options(now, drop_expired);
        let mut keyspace = Keyspace::new(self.server.config.seed);
        keyspace.set_access(Access::at(now, &self.server.config, true));
        let report = file::load_file(bytes, &opts, &mut keyspace)?;
        self.server
            .functions
            .load_from_rdb(report.functions.clone())
            .map_err(|e| LoadError::function_library(report.consumed_bytes, e))?;
        // An open snapshot read's data is about to go: it ends first.
        self.finish_snapshot_read_now(now);
        self.server.keyspace = keyspace;
        Ok(report)
    }
}

/// A yes/no parameter kept in the config's extras.
fn config_yes(config: &Config, name: &str) -> bool {
    config_get(config, name).is_none_or(|v| v == "yes")
}
