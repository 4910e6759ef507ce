//! The append-only file (to come in this module): multi-part AOF as Redis
//! 7.0 writes it.

use crate::server::Server;

/// Whether a BGREWRITEAOF child is running.
pub(crate) fn rewrite_active(_server: &Server) -> bool {
    false
}

/// The new base file of a rewrite: the dataset as an RDB preamble, or as
/// commands.
pub(crate) fn rewrite_bytes(server: &Server, now: crate::time::Now, rdb_preamble: bool) -> (Vec<u8>, u64) {
    let _ = rdb_preamble;
    super::rdb::snapshot(server, now, true)
}

/// A rewrite child exited.
pub(crate) fn rewrite_exited(
    _server: &mut Server,
    _events: &mut std::collections::VecDeque<crate::event::Event>,
    _now: crate::time::Now,
    _id: super::ChildId,
    _ok: bool,
) {
}

/// BGREWRITEAOF.
pub(crate) fn bgrewriteaof_command(ctx: &mut crate::cmd::Ctx) {
    ctx.error("ERR");
}
