//! Planted stream bugs: [`PlantedBug::XclaimLeavesBothPels`] and
//! [`PlantedBug::XreadgroupWokenByOtherStream`].

use super::{Hook, PlantedBug};
use crate::client::ClientId;
use crate::clients::Clients;
use crate::server::Server;
use crate::types::stream::{Group, StreamId};
use crate::value::Value;

/// Seam "XCLAIM moves a pending entry": how XCLAIM moves entry `id` of a
/// group to a consumer ([`Group::transfer`] on a clean engine).
pub(crate) fn xclaim_transfer(hook: &Hook) -> fn(&mut Group, StreamId, &[u8]) {
    if hook.is(PlantedBug::XclaimLeavesBothPels) {
        transfer_leaving_both
    } else {
        Group::transfer
    }
}

/// Planted bug (PlantedBug::XclaimLeavesBothPels): the entry joins the
/// claimer's PEL and stays in its old owner's.
fn transfer_leaving_both(g: &mut Group, id: StreamId, consumer: &[u8]) {
    let old = g.pel.get(&id).map(|p| p.consumer.clone());
    g.transfer(id, consumer);
    if let Some(c) = old.and_then(|old| g.consumers.get_mut(&old)) {
        c.pel.insert(id);
    }
}

/// Seam "blocked clients are served on a key": the clients to serve on
/// `key` of `db`, first blocked first (its waiters on a clean engine).
pub(crate) fn waiters(
    server: &Server,
    clients: &mut Clients,
    db: usize,
    key: &[u8],
) -> Vec<ClientId> {
    let mut out = server.blocking.waiters(db, key);
    let is_stream = matches!(server.keyspace.dbs[db].get(key), Some(Value::Stream(_)));
    if !is_stream || !server.planted.is(PlantedBug::XreadgroupWokenByOtherStream) {
        return out;
    }
    // Planted bug (PlantedBug::XreadgroupWokenByOtherStream): the
    // XREADGROUP readers blocked on the database's other streams are woken
    // too, and read from this one, as if it were theirs.
    let Some(queues) = server.blocking.waiting_index().get(&db) else {
        return out;
    };
    for (other, queue) in queues.iter().filter(|(k, _)| k.as_slice() != key) {
        for id in queue {
            let Some(b) = clients.get_mut(id).and_then(|c| c.blocked.as_mut()) else {
                continue;
            };
            if b.spec.name != "xreadgroup" || b.keys.len() != 1 || out.contains(id) {
                continue;
            }
            if let Some(arg) = b.args.iter_mut().rev().find(|a| *a == other) {
                *arg = key.to_vec();
                out.push(*id);
            }
        }
    }
    out
}
