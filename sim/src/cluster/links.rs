//! The life of a connection between nodes: a replica's engine asks for a
//! link to its primary, the attempt completes or fails, and either end
//! closes it or learns it is gone.

use seedkv_engine::ClientId;

use super::history::Session;
use super::tap::{DownTap, UpTap};
use super::world::{info, node_of_host, ClusterWorld, Conn, Ev, Peer, NODE_PORT};
use crate::net::Pipe;

impl ClusterWorld {
    /// A replica's engine asks for a link to its primary.
    pub(super) fn connect_primary(&mut self, node: u32, id: ClientId, host: &str, port: u16) {
        let target = node_of_host(host, self.nodes.len() as u32).filter(|_| port == NODE_PORT);
        let conn = self.conns.len() as u32;
        assert!(
            self.conns.len() < super::world::CLUSTER_CONNS_MAX,
            "too many connections"
        );
        let peer_incarnation = self.nodes[node as usize].incarnation;
        self.conns.push(Conn {
            node: target.unwrap_or(u32::MAX),
            incarnation: target.map_or(0, |t| self.nodes[t as usize].incarnation),
            id: None,
            peer: Peer::Node { node, id },
            peer_incarnation,
            up: Pipe::default(),
            down: Pipe::default(),
            acceptor_open: false,
            peer_open: true,
            acceptor_ready: false,
            peer_ready: false,
            session: None,
            up_tap: UpTap::default(),
            down_tap: DownTap::default(),
        });
        self.node_conns[node as usize].insert(id, (conn, false));
        let reachable = target.is_some_and(|t| {
            self.nodes[t as usize].up
                && !self.knobs.partitions.blocked(self.now_ns, node, t)
                && !self.knobs.partitions.blocked(self.now_ns, t, node)
        });
        let delay_ns = if reachable {
            2 * self.knobs.net.latency_ns
        } else {
            super::partition::CONNECT_TIMEOUT_NS
        };
        self.schedule(self.now_ns + delay_ns, Ev::Connect { conn });
    }

    /// A replica's connection attempt completes: the primary accepts it
    /// if it is up and reachable now, else the attempt fails.
    pub(super) fn connect_done(&mut self, conn: u32) {
        let now_ns = self.now_ns;
        let c = &self.conns[conn as usize];
        let Peer::Node { node, id } = c.peer else {
            return;
        };
        if !c.peer_open || c.peer_incarnation != self.nodes[node as usize].incarnation {
            return;
        }
        let target = c.node;
        let ok = (target as usize) < self.nodes.len()
            && self.nodes[target as usize].up
            && self.nodes[target as usize].incarnation == c.incarnation
            && !self.knobs.partitions.blocked(now_ns, node, target)
            && !self.knobs.partitions.blocked(now_ns, target, node);
        if !ok {
            self.conns[conn as usize].peer_open = false;
            self.node_conns[node as usize].remove(&id);
            let n = &mut self.nodes[node as usize];
            let now = n.now(now_ns);
            n.engine.disconnect(now, id);
            let d = n.drain(now_ns, &self.cost);
            self.after_drain(node, d, now_ns);
            return;
        }
        let t = &mut self.nodes[target as usize];
        let acceptor_id = t
            .engine
            .connect(t.now(now_ns), info(&format!("10.0.1.{node}:40000"), target));
        let incarnation = t.incarnation;
        self.node_conns[target as usize].insert(acceptor_id, (conn, true));
        let session = self.history.sessions.len();
        let replica_incarnation = self.nodes[node as usize].incarnation;
        self.history.sessions.push(Session {
            replica: node,
            primary: target,
            replica_incarnation,
            incarnation,
            opened_ns: now_ns,
            ..Session::default()
        });
        let c = &mut self.conns[conn as usize];
        c.id = Some(acceptor_id);
        c.acceptor_open = true;
        c.session = Some(session);
        super::contract::link_up(self, node, id);
    }

    /// An engine asked to close one of its connections.
    pub(super) fn engine_closes(&mut self, node: u32, id: ClientId, send_ns: u64) {
        let Some((conn, acceptor)) = self.node_conns[node as usize].remove(&id) else {
            return;
        };
        let c = &mut self.conns[conn as usize];
        let fin_at = if acceptor {
            c.acceptor_open = false;
            c.down.write_fin(send_ns)
        } else {
            c.peer_open = false;
            c.up.write_fin(send_ns)
        };
        let n = &mut self.nodes[node as usize];
        let now = n.now(self.now_ns);
        n.engine.disconnect(now, id);
        let d = n.drain(self.now_ns, &self.cost);
        self.after_drain(node, d, self.now_ns);
        self.schedule(
            fin_at.max(self.now_ns),
            Ev::Arrive {
                conn,
                at_acceptor: !acceptor,
            },
        );
    }

    /// The other side of a node's end is gone (FIN read, or reset).
    pub(super) fn engine_end_gone(&mut self, node: u32, conn: u32, acceptor: bool) {
        let c = &mut self.conns[conn as usize];
        let (id, open) = if acceptor {
            (c.id, &mut c.acceptor_open)
        } else {
            match c.peer {
                Peer::Node { id, .. } => (Some(id), &mut c.peer_open),
                Peer::Client(_) => return,
            }
        };
        if !*open {
            return;
        }
        *open = false;
        let Some(id) = id else { return };
        self.node_conns[node as usize].remove(&id);
        let n = &mut self.nodes[node as usize];
        if !n.up {
            return;
        }
        let now = n.now(self.now_ns);
        n.engine.disconnect(now, id);
        let d = n.drain(self.now_ns, &self.cost);
        self.after_drain(node, d, self.now_ns);
    }

    /// A reset reaches one end.
    pub(super) fn end_gone(&mut self, conn: u32, at_acceptor: bool) {
        let c = &self.conns[conn as usize];
        match (at_acceptor, c.peer) {
            (true, _) => {
                if c.incarnation == self.nodes[c.node as usize].incarnation {
                    self.engine_end_gone(c.node, conn, true);
                }
            }
            (false, Peer::Node { node, .. }) => {
                if c.peer_incarnation == self.nodes[node as usize].incarnation {
                    self.engine_end_gone(node, conn, false);
                }
            }
            (false, Peer::Client(client)) => self.client_conn_lost(client, conn),
        }
    }
}
