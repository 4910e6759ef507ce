//! Planted bug [`PlantedBug::InvalidateBeforeWrite`]: a SET of a key some
//! client tracks sends the invalidations at once but leaves the old value
//! in place until its client's next input. A tracking client that re-reads
//! the key on the invalidation reads the old value and caches it, and the
//! write that lands later sends no invalidation: the cache stays stale.

use super::PlantedBug;
use crate::client::ClientId;
use crate::cmd::Ctx;
use crate::server::Server;
use crate::value::Value;

/// A SET held back: `(client, db, key, value, keep_ttl)`.
pub(super) type HeldStore = (ClientId, usize, Box<[u8]>, Value, bool);

/// Seam "SET stores a value": `value` back when the store is to happen
/// now (always on a clean engine), or `None` when the planted bug held it
/// after invalidating `key`.
#[inline]
pub(crate) fn tracked_store(
    ctx: &mut Ctx,
    key: &[u8],
    value: Value,
    keep_ttl: bool,
) -> Option<Value> {
    if !ctx.server.planted.is(PlantedBug::InvalidateBeforeWrite)
        || !ctx.server.tracking.is_tracked_by_anyone(key)
    {
        return Some(value);
    }
    ctx.invalidate_tracked(key);
    let (client, db) = (ctx.client_id, ctx.db_index());
    if let Some(p) = ctx
        .server
        .planted
        .planted(PlantedBug::InvalidateBeforeWrite)
    {
        p.tracked_stores
            .push((client, db, key.into(), value, keep_ttl));
    }
    None
}

/// Seam "an input of `client` begins": the SETs it held land now,
/// silently (no invalidation, no WATCH touched).
#[inline]
pub(crate) fn client_input_begins(server: &mut Server, client: ClientId) {
    let Some(p) = server.planted.planted(PlantedBug::InvalidateBeforeWrite) else {
        return;
    };
    let (mine, others): (Vec<HeldStore>, Vec<HeldStore>) = std::mem::take(&mut p.tracked_stores)
        .into_iter()
        .partition(|(c, ..)| *c == client);
    p.tracked_stores = others;
    for (_, db, key, value, keep_ttl) in mine {
        drop(server.keyspace.dbs[db].set(&key, value, keep_ttl));
        server.dirty += 1;
    }
}
