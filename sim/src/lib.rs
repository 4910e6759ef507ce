//! seedkv-sim: a deterministic discrete-event simulator that drives the
//! seedkv engine with seeded network, clock, cost and fault models, records
//! what clients observe, and checks it.
#![forbid(unsafe_code)]

pub mod check;
pub mod history;
