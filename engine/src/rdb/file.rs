//! A whole RDB file, format version 10, as redis-server 7.0.15 writes and
//! reads it (`rdbSaveRio` / `rdbLoadRioWithLoadingCtx`):
//!
//! ```text
//! "REDIS0010"
//! AUX redis-ver 7.0.15 | AUX redis-bits 64 | AUX ctime <unix s>
//! AUX used-mem <bytes> | AUX aof-base 0|1
//! per non-empty database:
//!     SELECTDB <index>  RESIZEDB <keys> <keys with a TTL>
//!     per key: [EXPIRETIME_MS <8 bytes LE>] [IDLE <len> | FREQ <byte>]
//!              <type byte> <key string> <payload>
//! EOF <CRC64 of every byte before it, 8 bytes LE; zero when rdbchecksum no>
//! ```
//!
//! Both directions are pure functions over bytes: [`save::write_file`]
//! streams a keyspace out through a sink in chunks, [`load::load_file`]
//! takes a whole file as a slice. Neither touches a file: the host (or the
//! simulated disk) does, and an AOF base file with an RDB preamble goes on
//! after [`load::LoadReport::consumed_bytes`].

mod error;
pub mod load;
pub mod save;

#[cfg(test)]
mod tests;

pub use load::{load_file, AuxFields, LoadError, LoadErrorKind, LoadOptions, LoadReport};
pub use save::{write_file, ReplSaveInfo, SaveOptions, SaveReport};

/// The file's first bytes: "REDIS" and the version in four digits.
pub const MAGIC: &[u8; 9] = b"REDIS0010";
/// What Redis 7.0.15 writes as `redis-ver`.
pub const REDIS_VERSION: &str = "7.0.15";

/// Opcodes (`RDB_OPCODE_*`): the bytes in a file that are not a value's
/// type byte.
pub mod opcode {
    /// A function library (7.0 GA).
    pub const FUNCTION2: u8 = 245;
    /// A function library in the 7.0 release candidates' layout.
    pub const FUNCTION: u8 = 246;
    pub const MODULE_AUX: u8 = 247;
    /// The key's LRU idle time, in seconds, as a length.
    pub const IDLE: u8 = 248;
    /// The key's LFU counter, one byte.
    pub const FREQ: u8 = 249;
    pub const AUX: u8 = 250;
    pub const RESIZEDB: u8 = 251;
    pub const EXPIRETIME_MS: u8 = 252;
    /// An expiry in seconds (files older than RDB 3).
    pub const EXPIRETIME: u8 = 253;
    pub const SELECTDB: u8 = 254;
    pub const EOF: u8 = 255;
}
