//! The replica side's sans-IO contract, in one place: the engine asks for
//! its link to a primary with `Event::ConnectPrimary`, the host reports it
//! up with `Engine::primary_link_up` (or failed with `disconnect`).

use seedkv_engine::{ClientId, Event};

use super::node::Drained;
use super::world::ClusterWorld;

/// The link `id` of replica `node` is connected.
pub(super) fn link_up(world: &mut ClusterWorld, node: u32, id: ClientId) {
    let now_ns = world.now_ns;
    let n = &mut world.nodes[node as usize];
    let now = n.now(now_ns);
    n.engine.primary_link_up(now, id);
    let d = n.drain(now_ns, &world.cost);
    world.after_drain(node, d, now_ns);
}

/// Events of the replica side: a link to open, an RDB loaded.
pub(super) fn host_event(event: Event, d: &mut Drained, cost: &crate::cost::CostModel) {
    match event {
        Event::ConnectPrimary { client, host, port } => d.connects.push((client, host, port)),
        Event::SyncLoaded { work_units, .. } => d.cost_ns += cost.command_ns(work_units, 0),
        _ => {}
    }
}
