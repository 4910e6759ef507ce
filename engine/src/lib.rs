//! seedkv-engine: the sans-IO core of seedkv, a Redis-compatible key-value
//! server.
//!
//! This crate contains no networking code, reads no clock and asks the OS
//! for no randomness: the host feeds it bytes and the current time, and pulls
//! out replies, close requests, background work and deadlines. It is fully
//! deterministic: the same [`Config::seed`] and the same inputs produce the
//! same outputs, byte for byte. See [`Engine`] for the drive/drain contract.
#![forbid(unsafe_code)]

pub mod blocking;
pub mod client;
pub mod clients;
pub mod cmd;
pub mod commands;
pub mod config;
pub mod db;
pub mod dict;
pub mod engine;
pub mod event;
pub mod evict;
pub mod evict_pool;
pub mod glob;
pub mod idle;
pub mod lru;
pub mod multi;
pub mod planted;
pub mod pubsub;
pub mod rdb;
pub mod resp;
pub mod scripting;
pub mod server;
pub mod sizes;
pub mod stats;
pub mod stats_table;
pub mod stopwatch;
pub mod testing;
pub mod time;
pub mod types;
pub mod util;
pub mod value;

pub use client::{ClientId, CloseReason, ConnectInfo};
pub use config::Config;
pub use engine::Engine;
pub use event::{Event, Executed, Garbage};
pub use planted::PlantedBug;
pub use time::Now;
