//! The replica's side: the link to a primary (REPLICAOF host port).
//!
//! The engine never opens the link itself: it asks its host with an event,
//! and the host reports the connection, its bytes and its end as inputs.

use crate::cmd::Ctx;
use crate::server::Server;

/// The primary this server replicates, and where its link stands.
#[derive(Debug)]
pub struct MasterLink {
    pub host: String,
    pub port: u16,
}

/// Why this server refuses a SYNC/PSYNC now, if it does.
pub fn refuses_sync(server: &Server) -> Option<&'static str> {
    server
        .repl
        .is_replica()
        .then_some("NOMASTERLINK Can't SYNC while not connected with my master")
}

/// `REPLCONF GETACK`: only a replica's primary asks it (and gets an ACK).
pub fn getack(_ctx: &mut Ctx) {}

/// ROLE on a replica; false on a primary (the caller answers).
pub fn write_role(_ctx: &mut Ctx) -> bool {
    false
}

/// INFO replication's replica fields (after `# Replication`).
pub fn write_info(
    _link: &MasterLink,
    _repl: &super::Replication,
    _now: crate::time::Now,
    out: &mut String,
) {
    out.push_str("role:slave\r\n");
}
