//! Planted bug [`PlantedBug::ScriptPartialVisible`]: after a script's first
//! write, its later writes are put off until the next script starts, so
//! other clients see the first write alone; the script is told OK.

use super::PlantedBug;
use crate::client::ClientId;
use crate::cmd::Ctx;

/// A script's write put off.
#[derive(Debug)]
pub(super) struct DeferredWrite {
    client: ClientId,
    db: usize,
    argv: Vec<Vec<u8>>,
    request_seq: u64,
}

/// Puts off `argv`, a write of the script run of `request_seq` (see
/// [`super::defers_script_write`]).
pub(crate) fn defer_script_write(ctx: &mut Ctx, argv: Vec<Vec<u8>>, request_seq: u64) {
    let (client, db) = (ctx.client_id, ctx.db_index());
    if let Some(p) = ctx.server.planted.planted(PlantedBug::ScriptPartialVisible) {
        p.script_writes.push(DeferredWrite {
            client,
            db,
            argv,
            request_seq,
        });
    }
}

/// Seam "a script starts": runs the writes earlier scripts put off, each as
/// its client (if still connected) in the database it was issued in,
/// recorded in its script's group, now that other clients' commands have
/// run in between.
pub(crate) fn script_starts(ctx: &mut Ctx) {
    let Some(p) = ctx.server.planted.planted.as_deref_mut() else {
        return;
    };
    let writes = std::mem::take(&mut p.script_writes);
    let caller = ctx.client_id;
    for write in writes {
        let Some(c) = ctx.clients.get_mut(&write.client) else {
            continue;
        };
        let db_before = std::mem::replace(&mut c.db, write.db);
        ctx.client_id = write.client;
        crate::scripting::run_write(ctx, write.argv, write.request_seq);
        if let Some(c) = ctx.clients.get_mut(&write.client) {
            c.db = db_before;
        }
        ctx.client_id = caller;
    }
}
