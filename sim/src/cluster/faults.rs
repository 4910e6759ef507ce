//! The faults of the multi-node world, other than partitions (which the
//! network applies, see [`super::partition`]): replication link resets,
//! node crashes and restarts, scheduled from the drawn knobs.

use seedkv_engine::ClientId;

use super::world::{ClusterWorld, Ev};
use crate::net::Pipe;

impl ClusterWorld {
    /// Puts the drawn link resets, crashes and restarts on the queue.
    pub(super) fn schedule_faults(&mut self) {
        for reset in self.knobs.link_resets.clone() {
            self.queue.push(
                reset.at_ns,
                Ev::LinkReset {
                    replica: reset.replica,
                },
            );
        }
        if let Some(f) = self.knobs.failover {
            self.queue.push(f.at_ns, Ev::Failover);
        }
        for crash in self.knobs.crashes.clone() {
            self.queue.push(crash.at_ns, Ev::Crash { node: crash.node });
            self.queue.push(
                crash.at_ns + crash.down_ns,
                Ev::Restart { node: crash.node },
            );
        }
    }

    /// Resets `replica`'s link to its primary, if it has one: both engines
    /// learn it now (a TCP reset), whatever was in flight is lost.
    pub(super) fn reset_link(&mut self, replica: u32) {
        let link = self.node_conns[replica as usize]
            .values()
            .find(|&&(_, acceptor)| !acceptor)
            .map(|&(conn, _)| conn);
        let Some(conn) = link else {
            return;
        };
        self.faults_count += 1;
        self.trace.word(0x4e5e ^ conn as u64);
        let c = &mut self.conns[conn as usize];
        c.up = Pipe::default();
        c.down = Pipe::default();
        self.end_gone(conn, false);
        self.end_gone(conn, true);
    }

    pub(super) fn crash(&mut self, node: u32) {
        if !self.nodes[node as usize].up {
            return;
        }
        self.faults_count += 1;
        self.trace.word(0xc4a5 ^ node as u64);
        if node == self.witness_node {
            self.witness = None;
        }
        if node == self.primary {
            self.history.primary_crashes_ns.push(self.now_ns);
            // The restarted primary numbers its clients afresh.
            self.woff.clear();
        }
        self.nodes[node as usize].crash(self.now_ns);
        self.ready[node as usize].clear();
        self.admin[node as usize] = None;
        let ends: Vec<(ClientId, (u32, bool))> =
            std::mem::take(&mut self.node_conns[node as usize])
                .into_iter()
                .collect();
        let latency_ns = self.knobs.net.latency_ns;
        for (_, (conn, acceptor)) in ends {
            let c = &mut self.conns[conn as usize];
            if acceptor {
                c.acceptor_open = false;
            } else {
                c.peer_open = false;
            }
            self.schedule(
                self.now_ns + latency_ns,
                Ev::Reset {
                    conn,
                    at_acceptor: !acceptor,
                },
            );
        }
    }

    pub(super) fn restart(&mut self, node: u32) {
        if self.nodes[node as usize].up {
            return;
        }
        self.trace.word(0x4e57 ^ node as u64);
        let mut d = self.nodes[node as usize].restart(self.now_ns, &self.cost);
        // A fresh engine is a primary until told otherwise.
        self.role_primary[node as usize] = true;
        // Loading its own AOF is the node's persistence, not a write.
        d.executed.clear();
        d.removed.clear();
        self.after_drain(node, d, self.now_ns);
        self.node_started(node);
    }
}
