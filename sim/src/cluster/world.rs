//! The multi-node world: nodes, the connections between them and their
//! clients, and one event queue in virtual time.
//!
//! Every connection has an acceptor (a node's engine client) and a peer:
//! a simulated client, or another node's engine (a replica's link to its
//! primary, opened when the replica's engine asks with
//! `Event::ConnectPrimary`). Bytes travel in [`Pipe`]s under the seed's
//! network knobs; between nodes, a partition holds them until it heals
//! (see [`super::partition`]). Each node's CPU serves one connection's
//! input per turn and writes the outputs when the turn's cost is over.
//!
//! The witness is the host's own replica link to the primary, outside
//! the network (no latency, never partitioned, never acking an offset):
//! it reads the primary's stream as the primary wrote it, so the checkers
//! compare each replica's stream to it rather than to anything a replica
//! says.
//!
//! This file holds the world's state and its run loop; the rest is split
//! by concern: `wiring.rs` (a node started, its admin commands, its
//! outputs after each drain, the witness), `delivery.rs` (bytes through
//! pipes to a node's CPU or a client, the taps), `links.rs` (connections
//! between nodes opened, closed, lost), `faults.rs` (link resets,
//! crashes, restarts), `clients.rs` and `settle.rs`.

use std::collections::{BTreeMap, VecDeque};

use rand::Rng;
use seedkv_engine::{ClientId, ConnectInfo, PlantedBug};

use super::clients::ClusterClient;
use super::history::ClusterHistory;
use super::node::{node_config, Node};
use super::tap::{DownTap, UpTap};
use super::ClusterKnobs;
use crate::cost::CostModel;
use crate::net::Pipe;
use crate::queue::EventQueue;
use crate::rng::{choice_rng, ChoiceRng};
use crate::trace::TraceHash;

/// The first primary's index (a failover hands the role to another).
pub const PRIMARY: u32 = 0;
/// The port every node listens on (nodes are told apart by host name).
pub const NODE_PORT: u16 = 6379;
/// Events a run may process at most, and virtual time it may last.
pub const CLUSTER_EVENTS_MAX: u64 = 50_000_000;
pub const CLUSTER_VIRTUAL_NS_MAX: u64 = 3600 * 1_000_000_000;
/// How often convergence is looked at once the clients are done.
pub const SETTLE_POLL_NS: u64 = 50_000_000;
/// Connections a run may open at most.
pub const CLUSTER_CONNS_MAX: usize = 100_000;

/// A node's host name, as REPLICAOF names it.
pub fn node_host(node: u32) -> String {
    format!("node{node}")
}

/// The node a host names: its name (`node1`, as the admin's REPLICAOF
/// says) or its address (`10.0.1.1`, as a primary sees its replicas and
/// FAILOVER hands over to them).
pub fn node_of_host(host: &str, nodes_count: u32) -> Option<u32> {
    let n = host
        .strip_prefix("node")
        .or_else(|| host.strip_prefix("10.0.1."))?;
    n.parse().ok().filter(|&n| n < nodes_count)
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Ev {
    /// A replica's link to its primary is reset (both ends lose it).
    LinkReset {
        replica: u32,
    },
    Wake {
        client: u32,
    },
    /// Bytes (or the FIN) reach one end of a connection.
    Arrive {
        conn: u32,
        at_acceptor: bool,
    },
    /// The other end vanished (its node crashed).
    Reset {
        conn: u32,
        at_acceptor: bool,
    },
    NodeTurn {
        node: u32,
    },
    Timer {
        node: u32,
        deadline_ns: u64,
    },
    Storage {
        node: u32,
        incarnation: u32,
        token: u64,
    },
    /// A replica's connection attempt completes (or fails).
    Connect {
        conn: u32,
    },
    Crash {
        node: u32,
    },
    Restart {
        node: u32,
    },
    Settle,
    /// The admin sends FAILOVER to the primary, FAILOVER ABORT, or points
    /// the other replicas at the new primary.
    Failover,
    FailoverAbort,
    Repoint,
}

impl Ev {
    fn tag(self) -> u64 {
        match self {
            Ev::Wake { client } => 1 | (client as u64) << 8,
            Ev::Arrive { conn, at_acceptor } => 2 | (conn as u64) << 8 | (at_acceptor as u64) << 40,
            Ev::Reset { conn, at_acceptor } => 3 | (conn as u64) << 8 | (at_acceptor as u64) << 40,
            Ev::NodeTurn { node } => 4 | (node as u64) << 8,
            Ev::Timer { node, deadline_ns } => 5 | (node as u64) << 8 | deadline_ns << 16,
            Ev::Storage { node, token, .. } => 6 | (node as u64) << 8 | token << 16,
            Ev::Connect { conn } => 7 | (conn as u64) << 8,
            Ev::Crash { node } => 8 | (node as u64) << 8,
            Ev::Restart { node } => 9 | (node as u64) << 8,
            Ev::Settle => 10,
            Ev::LinkReset { replica } => 11 | (replica as u64) << 8,
            Ev::Failover => 12,
            Ev::FailoverAbort => 13,
            Ev::Repoint => 14,
        }
    }
}

/// The far end of a connection from its acceptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Peer {
    Client(u32),
    Node { node: u32, id: ClientId },
}

pub(super) struct Conn {
    pub node: u32,
    pub incarnation: u32,
    /// The acceptor's engine client (`None` until connected).
    pub id: Option<ClientId>,
    pub peer: Peer,
    pub peer_incarnation: u32,
    pub up: Pipe,
    pub down: Pipe,
    pub acceptor_open: bool,
    pub peer_open: bool,
    pub acceptor_ready: bool,
    pub peer_ready: bool,
    /// Replication links: their session and taps.
    pub session: Option<usize>,
    pub up_tap: UpTap,
    pub down_tap: DownTap,
}

pub struct ClusterWorld {
    pub(super) now_ns: u64,
    pub(super) queue: EventQueue<Ev>,
    pub(super) nodes: Vec<Node>,
    /// Per node: engine client → (connection, whether the node is its
    /// acceptor).
    pub(super) node_conns: Vec<BTreeMap<ClientId, (u32, bool)>>,
    pub(super) ready: Vec<VecDeque<(u32, bool)>>,
    pub(super) conns: Vec<Conn>,
    pub(super) clients: Vec<ClusterClient>,
    pub(super) knobs: ClusterKnobs,
    pub(super) cost: CostModel,
    pub(super) net_rng: ChoiceRng,
    /// The primary of the moment: where writers are sent, whose stream
    /// the witness reads, which node a replica (re)starting follows.
    pub(super) primary: u32,
    /// Per node: whether its engine was a primary after its last drain
    /// (how the world notices a failover's hand-over and promotion).
    pub(super) role_primary: Vec<bool>,
    pub(super) witness: Option<(ClientId, DownTap)>,
    /// The node the witness is connected to.
    pub(super) witness_node: u32,
    pub(super) witness_acked: bool,
    /// Per node: the host's own admin connection (REPLICAOF at start).
    pub(super) admin: Vec<Option<ClientId>>,
    /// Per (node, connection) of a client: the primary's stream end after
    /// its last write (WAIT's offset).
    pub(super) woff: BTreeMap<(u32, ClientId), u64>,
    pub(super) clients_done: bool,
    pub(super) settle_started_ns: Option<u64>,
    pub history: ClusterHistory,
    pub trace: TraceHash,
    pub events_count: u64,
    pub bound_hit: bool,
    pub faults_count: u64,
}

impl ClusterWorld {
    pub fn new(seed: u64, knobs: ClusterKnobs, bug: Option<PlantedBug>, trace: TraceHash) -> Self {
        let nodes_count = knobs.replicas_count + 1;
        let cost = CostModel::default();
        let nodes: Vec<Node> = (0..nodes_count)
            .map(|i| {
                let config = node_config(seed, i, bug, &knobs.repl);
                Node::new(i, seed, config, knobs.clocks[i as usize])
            })
            .collect();
        let clients = (0..knobs.writers_count + knobs.readers_count)
            .map(|i| ClusterClient::new(seed, i, &knobs))
            .collect();
        let mut world = ClusterWorld {
            now_ns: 0,
            queue: EventQueue::default(),
            nodes,
            node_conns: vec![BTreeMap::new(); nodes_count as usize],
            ready: vec![VecDeque::new(); nodes_count as usize],
            conns: Vec::new(),
            clients,
            cost,
            net_rng: choice_rng(seed, "cluster-network", 0),
            primary: PRIMARY,
            role_primary: vec![true; nodes_count as usize],
            witness: None,
            witness_node: PRIMARY,
            witness_acked: false,
            admin: vec![None; nodes_count as usize],
            woff: BTreeMap::new(),
            clients_done: false,
            settle_started_ns: None,
            history: ClusterHistory {
                replicas_count: knobs.replicas_count,
                backlog_bytes: knobs.repl.backlog_bytes,
                faults_end_ns: knobs.faults_end_ns(),
                convergence_bound_ns: knobs.convergence_bound_ns(),
                ..ClusterHistory::default()
            },
            knobs,
            trace,
            events_count: 0,
            bound_hit: false,
            faults_count: 0,
        };
        for node in 0..nodes_count {
            let d = world.nodes[node as usize].drain(0, &world.cost);
            world.after_drain(node, d, 0);
            world.node_started(node);
        }
        for client in 0..world.clients.len() as u32 {
            let at = world.net_rng.gen_range(0..=1_000_000);
            world.queue.push(at, Ev::Wake { client });
        }
        world.schedule_faults();
        world
    }

    pub(super) fn schedule(&mut self, at_ns: u64, ev: Ev) {
        debug_assert!(at_ns >= self.now_ns);
        self.queue.push(at_ns, ev);
    }

    /// Runs to the end: the clients are done and the replicas converged
    /// (or the convergence bound passed), or a hard bound.
    pub fn run(&mut self) {
        loop {
            if self.events_count >= CLUSTER_EVENTS_MAX || self.now_ns >= CLUSTER_VIRTUAL_NS_MAX {
                self.bound_hit = true;
                break;
            }
            if self.settled() {
                break;
            }
            let Some((at, ev)) = self.queue.pop() else {
                break;
            };
            assert!(at >= self.now_ns, "time went back");
            self.now_ns = at;
            self.events_count += 1;
            self.trace.begin_event(at, ev.tag());
            if self.trace.printing() {
                self.trace.line(at, format_args!("{ev:?}"));
            }
            self.handle(ev);
            self.trace.end_event();
        }
        self.history.end_ns = self.now_ns;
        self.read_datasets();
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::Wake { client } => self.client_wake(client),
            Ev::Arrive { conn, at_acceptor } => self.arrive(conn, at_acceptor),
            Ev::Reset { conn, at_acceptor } => self.end_gone(conn, at_acceptor),
            Ev::NodeTurn { node } => self.node_turn(node),
            Ev::Timer { node, deadline_ns } => self.timer(node, deadline_ns),
            Ev::Storage {
                node,
                incarnation,
                token,
            } => {
                let n = &mut self.nodes[node as usize];
                if n.up && n.incarnation == incarnation && n.storage_done(self.now_ns, token) {
                    let d = n.drain(self.now_ns, &self.cost);
                    self.after_drain(node, d, self.now_ns);
                }
            }
            Ev::Connect { conn } => self.connect_done(conn),
            Ev::Crash { node } => self.crash(node),
            Ev::Restart { node } => self.restart(node),
            Ev::Settle => self.settle_poll(),
            Ev::LinkReset { replica } => self.reset_link(replica),
            Ev::Failover => self.failover_begin(),
            Ev::FailoverAbort => self.failover_abort(),
            Ev::Repoint => self.repoint(),
        }
    }

    fn timer(&mut self, node: u32, deadline_ns: u64) {
        let n = &mut self.nodes[node as usize];
        if !n.up || n.timer_ns != Some(deadline_ns) {
            return;
        }
        n.timer_ns = None;
        if n.busy_until_ns > self.now_ns {
            let at = n.busy_until_ns;
            n.timer_ns = Some(at);
            self.schedule(
                at,
                Ev::Timer {
                    node,
                    deadline_ns: at,
                },
            );
            return;
        }
        let now = n.now(self.now_ns);
        n.engine.handle_timeout(now);
        let mut d = n.drain(self.now_ns, &self.cost);
        d.cost_ns += self.cost.cron_overhead_ns;
        self.after_drain(node, d, self.now_ns);
    }

    /// Arms the node's engine timer at its `poll_timeout`.
    pub(super) fn arm_timer(&mut self, node: u32) {
        let n = &mut self.nodes[node as usize];
        if !n.up {
            return;
        }
        let deadline = n.engine.poll_timeout().max(self.now_ns);
        if deadline == u64::MAX || n.timer_ns.is_some_and(|t| t <= deadline) {
            return;
        }
        n.timer_ns = Some(deadline);
        self.schedule(
            deadline,
            Ev::Timer {
                node,
                deadline_ns: deadline,
            },
        );
    }
}

/// The address pair of a connection to `node`.
pub(super) fn info(addr: &str, node: u32) -> ConnectInfo {
    ConnectInfo {
        addr: addr.to_string(),
        laddr: format!("10.0.1.{node}:{NODE_PORT}"),
        fd: 7,
    }
}
