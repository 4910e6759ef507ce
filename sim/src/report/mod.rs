//! Reports: experiments run in the simulator's world whose output is a
//! table (and a chart) rather than a pass or a failure.
//!
//! - [`latency`]: seed 002's head-of-line blocking table (PING p50, p99 and
//!   max while KEYS, SCAN, DEL and UNLINK run), in virtual time.
//! - [`load`]: the same experiment over real sockets against any RESP
//!   server (the `seedkv-load` binary); with the probe, the crate's only
//!   real-time code. Both print [`table`]'s table.

pub mod chart;
pub mod cli;
pub mod latency;
pub mod load;
pub mod script;
pub mod table;
pub mod verify;
