//! Redis's RDB serialization, format version 10 (Redis 7.0), byte for byte
//! what redis-server 7.0 reads and writes.
//!
//! This module is pure encoding: bytes in, values out, and back. It never
//! touches a file (the engine is sans-IO); DUMP/RESTORE use it today, and
//! SAVE/BGSAVE and loading at start will hand its bytes to the host.
//!
//! - [`codec`]: the primitives: lengths, strings (integer-encoded and
//!   LZF-compressed), binary doubles, the CRC64 every payload ends with;
//! - [`listpack`] and [`intset`]: Redis's in-memory blobs, which an RDB
//!   carries as opaque strings (small hashes, sorted sets and list nodes as
//!   listpacks, small integer sets as intsets);
//! - [`object`]: one value per type, in the encodings Redis 7.0 writes, and
//!   loading of the types a 7.0 file may hold;
//! - [`dump`]: the DUMP payload (object, RDB version, CRC64) and its checks;
//! - [`file`]: a whole RDB file (aux fields, databases, expiries, LRU/LFU
//!   hints, EOF and CRC64), written as a stream and loaded from a slice.
//!
//! Loading never trusts a length: every allocation is bounded by the bytes
//! actually present, every element loaded is counted as work, and anything
//! malformed is a [`Corrupt`] error, never a panic.

pub mod codec;
pub mod dump;
pub mod file;
pub mod intset;
pub mod listpack;
pub mod object;
pub mod stream;

/// The RDB format version Redis 7.0 writes (`RDB_VERSION`).
pub const RDB_VERSION: u16 = 10;

/// Object type bytes (`RDB_TYPE_*`), as they precede a value.
pub mod kind {
    pub const STRING: u8 = 0;
    pub const LIST: u8 = 1;
    pub const SET: u8 = 2;
    pub const ZSET: u8 = 3;
    pub const HASH: u8 = 4;
    pub const ZSET_2: u8 = 5;
    pub const MODULE: u8 = 6;
    pub const MODULE_2: u8 = 7;
    pub const HASH_ZIPMAP: u8 = 9;
    pub const LIST_ZIPLIST: u8 = 10;
    pub const SET_INTSET: u8 = 11;
    pub const ZSET_ZIPLIST: u8 = 12;
    pub const HASH_ZIPLIST: u8 = 13;
    pub const LIST_QUICKLIST: u8 = 14;
    pub const STREAM_LISTPACKS: u8 = 15;
    pub const HASH_LISTPACK: u8 = 16;
    pub const ZSET_LISTPACK: u8 = 17;
    pub const LIST_QUICKLIST_2: u8 = 18;
    pub const STREAM_LISTPACKS_2: u8 = 19;
}

/// Why a payload could not be loaded. Redis answers every one of them with
/// the same reply (RESTORE's "Bad data format"); the reason is for logs and
/// tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Corrupt(pub &'static str);

impl std::fmt::Display for Corrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

pub type Result<T> = std::result::Result<T, Corrupt>;
