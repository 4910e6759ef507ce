//! The replica side's sans-IO contract (TEMPORARY until s4-replica merges).

use seedkv_engine::{ClientId, Event};

use super::node::Drained;
use super::world::ClusterWorld;

pub(super) fn link_up(world: &mut ClusterWorld, node: u32, id: ClientId) {
    let _ = (world, node, id);
    unreachable!("no ConnectPrimary before the replica side merges");
}

pub(super) fn host_event(event: Event, d: &mut Drained, cost: &crate::cost::CostModel) {
    let _ = (event, d, cost);
}
