//! seedkv-sim: a deterministic discrete-event simulator that drives the
//! seedkv engine with seeded network, clock, cost and fault models, records
//! what clients observe, and checks it.
//!
//! A run is a pure function of its [`run::RunConfig`] (seed, planted bug,
//! overrides): the same config gives the same trace hash on every machine.
//! Start at [`run::run`]; the world itself is in [`world`].
#![forbid(unsafe_code)]

pub mod argclass;
pub mod audit;
pub mod check;
pub mod client;
pub mod cluster;
pub mod cost;
pub mod coverage;
pub mod fxhash;
pub mod history;
pub mod knobs;
pub mod net;
pub mod panic;
pub mod persistence;
/// The one real-time path (sockets, threads, `Instant`): see its docs.
pub mod probe;
pub mod queue;
pub mod reply_mode;
pub mod report;
pub mod rng;
pub mod run;
pub mod shrink;
pub mod sweep;
pub mod trace;
pub mod workload;
pub mod world;
