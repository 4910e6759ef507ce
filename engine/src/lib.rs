//! seedkv-engine: the sans-IO core of seedkv, a Redis-compatible key-value
//! server.
//!
//! This crate contains no networking code, reads no clock and asks the OS
//! for no randomness: the host feeds it bytes and the current time, and pulls
//! out replies, close requests, background work and deadlines. It is fully
//! deterministic: the same [`Config::seed`] and the same inputs produce the
//! same outputs, byte for byte. See [`Engine`] for the drive/drain contract.
#![forbid(unsafe_code)]

pub mod acl;
pub mod blocking;
pub(crate) mod client;
pub(crate) mod client_evict;
pub(crate) mod clients;
pub mod cmd;
pub mod commands;
pub mod config;
pub mod db;
pub mod dict;
pub(crate) mod engine;
pub mod event;
pub(crate) mod evict;
pub(crate) mod evict_pool;
pub mod glob;
pub(crate) mod idle;
mod invariants;
pub(crate) mod lru;
pub mod meta;
pub(crate) mod multi;
pub mod notify;
pub(crate) mod pause;
pub mod persist;
pub(crate) mod pipeline;
pub(crate) mod planted;
pub mod propagate;
pub mod pubsub;
pub mod rdb;
pub mod repl;
pub mod reply_chunks;
pub(crate) mod reply_mode;
pub mod resp;
pub mod scripting;
pub(crate) mod server;
pub mod sizes;
pub mod snapshot_read;
pub(crate) mod stats;
pub(crate) mod stats_table;
pub mod stopwatch;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub(crate) mod time;
pub mod tracking;
pub mod types;
pub(crate) mod util;
pub mod value;

pub use client::{ClientId, CloseReason, ConnectInfo};
pub use config::Config;
pub use engine::Engine;
pub use event::{
    Event, Executed, Garbage, KeyRemoved, LogLevel, RemovalCause, Shutdown, ShutdownSave,
};
pub use planted::PlantedBug;
pub use propagate::Propagation;
pub use time::Now;
