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

use std::collections::{BTreeMap, VecDeque};

use rand::Rng;
use seedkv_engine::cmd::flags;
use seedkv_engine::resp::encode::encode_request;
use seedkv_engine::{ClientId, ConnectInfo, PlantedBug};

use super::clients::ClusterClient;
use super::history::{ClusterHistory, Session, WitnessStream};
use super::node::{node_config, Drained, Node};
use super::tap::{Answer, DownTap, UpRequest, UpTap};
use super::ClusterKnobs;
use crate::cost::CostModel;
use crate::net::{Pipe, SERVER_READ_BYTES_MAX};
use crate::queue::EventQueue;
use crate::rng::{choice_rng, ChoiceRng};
use crate::trace::TraceHash;

/// The primary's index.
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
    pub(super) witness: Option<(ClientId, DownTap)>,
    pub(super) witness_acked: bool,
    /// Per node: the host's own admin connection (REPLICAOF at start).
    pub(super) admin: Vec<Option<ClientId>>,
    /// Per connection of a client: the primary's stream end after its
    /// last write (WAIT's offset).
    pub(super) woff: BTreeMap<ClientId, u64>,
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
            witness: None,
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
        for reset in world.knobs.link_resets.clone() {
            world.queue.push(
                reset.at_ns,
                Ev::LinkReset {
                    replica: reset.replica,
                },
            );
        }
        for crash in world.knobs.crashes.clone() {
            world
                .queue
                .push(crash.at_ns, Ev::Crash { node: crash.node });
            world.queue.push(
                crash.at_ns + crash.down_ns,
                Ev::Restart { node: crash.node },
            );
        }
        world
    }

    /// A node (re)started: the primary gets the witness, a replica is
    /// told its primary.
    fn node_started(&mut self, node: u32) {
        if node == PRIMARY {
            self.connect_witness();
        } else {
            let port = NODE_PORT.to_string();
            self.admin(
                node,
                &[b"REPLICAOF", node_host(PRIMARY).as_bytes(), port.as_bytes()],
            );
        }
        self.arm_timer(node);
    }

    /// Runs the host's own command on `node`, at once (no network).
    fn admin(&mut self, node: u32, args: &[&[u8]]) {
        let now_ns = self.now_ns;
        let n = &mut self.nodes[node as usize];
        let now = n.now(now_ns);
        let id = match self.admin[node as usize] {
            Some(id) => id,
            None => {
                let id = n.engine.connect(now, info("10.0.9.1:1", node));
                self.admin[node as usize] = Some(id);
                id
            }
        };
        n.engine.handle_input(now, id, &encode_request(args));
        let d = n.drain(now_ns, &self.cost);
        let out_len = n.engine.pending_output(id).len();
        n.engine.consume_output(id, out_len);
        self.after_drain(node, d, now_ns);
    }

    fn connect_witness(&mut self) {
        let now_ns = self.now_ns;
        let n = &mut self.nodes[PRIMARY as usize];
        let now = n.now(now_ns);
        let id = n.engine.connect(now, info("10.0.9.2:1", PRIMARY));
        let mut hello = encode_request(&[b"REPLCONF", b"capa", b"eof", b"capa", b"psync2"]);
        hello.extend_from_slice(&encode_request(&[b"PSYNC", b"?", b"-1"]));
        n.engine.handle_input(now, id, &hello);
        self.witness = Some((id, DownTap::default()));
        self.witness_acked = false;
        let incarnation = n.incarnation;
        self.history.witness.push(WitnessStream {
            incarnation,
            ..WitnessStream::default()
        });
        let d = self.nodes[PRIMARY as usize].drain(now_ns, &self.cost);
        self.after_drain(PRIMARY, d, now_ns);
    }

    /// The primary's stream end as witnessed (0 before it started).
    pub(super) fn primary_end(&self) -> u64 {
        self.history.witness.last().map_or(0, |w| w.end())
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

    /// After the engine of `node` ran at `now_ns`: its CPU is busy for
    /// the cost, then its outputs leave; closes, connects and background
    /// requests are carried out.
    pub(super) fn after_drain(&mut self, node: u32, d: Drained, now_ns: u64) {
        let n = &mut self.nodes[node as usize];
        let done_ns = n.busy_until_ns.max(now_ns) + d.cost_ns;
        n.busy_until_ns = done_ns;
        let incarnation = n.incarnation;
        self.trace.word(d.cost_ns ^ (node as u64) << 56);
        for &(token, latency_ns) in &d.background {
            self.schedule(
                now_ns + latency_ns,
                Ev::Storage {
                    node,
                    incarnation,
                    token,
                },
            );
        }
        if node != PRIMARY {
            self.note_replica_writes(node, &d);
        }
        for (client, flags_bits, _) in &d.executed {
            if node == PRIMARY && flags_bits & flags::WRITE != 0 {
                // Provisional: the stream end once this drain's output is
                // witnessed (set below).
                self.woff.insert(*client, u64::MAX);
            }
        }
        self.flush(node, done_ns);
        if node == PRIMARY {
            let end = self.primary_end();
            for v in self.woff.values_mut() {
                if *v == u64::MAX {
                    *v = end;
                }
            }
        }
        for client in d.closes {
            self.engine_closes(node, client, done_ns);
        }
        for (client, host, port) in d.connects {
            self.connect_primary(node, client, &host, port);
        }
        if !self.ready[node as usize].is_empty() {
            self.schedule(done_ns, Ev::NodeTurn { node });
        }
        self.arm_timer(node);
    }

    /// A replica changes its data only as its primary's stream says: a key
    /// it removed itself, or a write a client got through, is invented.
    fn note_replica_writes(&mut self, node: u32, d: &Drained) {
        for r in &d.removed {
            self.history.invented.push((
                node,
                self.now_ns,
                format!("removed a key by itself: {r}"),
            ));
        }
        for (client, flags_bits, name) in &d.executed {
            let from_link = matches!(self.node_conns[node as usize].get(client), Some((_, false)));
            let admin = self.admin[node as usize] == Some(*client);
            if flags_bits & flags::WRITE != 0 && !name.is_empty() && !from_link && !admin {
                self.history.invented.push((
                    node,
                    self.now_ns,
                    format!("ran {name} for a client of its own"),
                ));
            }
        }
    }

    /// Writes every output `node`'s engine holds into its pipes, leaving
    /// at `send_ns`.
    fn flush(&mut self, node: u32, send_ns: u64) {
        let mut budget = 1_000_000usize;
        while let Some(id) = self.nodes[node as usize].engine.poll_transmit() {
            budget -= 1;
            assert!(budget > 0, "poll_transmit never ends");
            let engine = &mut self.nodes[node as usize].engine;
            let bytes = engine.pending_output(id).to_vec();
            engine.consume_output(id, bytes.len());
            if bytes.is_empty() {
                continue;
            }
            if node == PRIMARY && self.witness.as_ref().is_some_and(|(w, _)| *w == id) {
                self.witness_read(&bytes);
                continue;
            }
            let Some(&(conn, acceptor)) = self.node_conns[node as usize].get(&id) else {
                continue; // the admin connection, or a connection gone
            };
            if let Peer::Client(client) = self.conns[conn as usize].peer {
                // WAIT's reply is produced now, from the acks handed over
                // so far.
                if let Some(op) = self.clients[client as usize].outstanding {
                    let op = &mut self.history.ops[op];
                    if op.args[0] == b"WAIT" && op.wait_answered_ns == 0 {
                        op.wait_answered_ns = self.now_ns;
                    }
                }
            }
            self.write(conn, acceptor, send_ns, &bytes);
        }
    }

    /// The witness reads the primary's bytes.
    fn witness_read(&mut self, bytes: &[u8]) {
        let Some((id, tap)) = &mut self.witness else {
            return;
        };
        let id = *id;
        tap.feed(bytes);
        let w = self.history.witness.last_mut().expect("witness stream");
        if let Some(Answer::Full { replid, offset }) = &tap.answer {
            if w.replid.is_empty() {
                w.replid = replid.clone();
                w.base = *offset;
            }
        }
        let have = w.bytes.len();
        if tap.stream.len() > have {
            w.bytes.extend_from_slice(&tap.stream[have..]);
        }
        if tap.rdb_done && !self.witness_acked {
            // Online (a diskless RDB waits for an ack), acking nothing.
            self.witness_acked = true;
            let now = self.nodes[PRIMARY as usize].now(self.now_ns);
            let ack = encode_request(&[b"REPLCONF", b"ACK", b"0"]);
            self.nodes[PRIMARY as usize]
                .engine
                .handle_input(now, id, &ack);
        }
    }

    /// Queues `bytes` from one end of `conn` towards the other.
    pub(super) fn write(&mut self, conn: u32, from_acceptor: bool, send_ns: u64, bytes: &[u8]) {
        let c = &self.conns[conn as usize];
        let (from_node, to_node) = match (c.peer, from_acceptor) {
            (Peer::Node { node, .. }, true) => (Some(c.node), Some(node)),
            (Peer::Node { node, .. }, false) => (Some(node), Some(c.node)),
            _ => (None, None),
        };
        let send_ns = match (from_node, to_node) {
            (Some(a), Some(b)) => self.knobs.partitions.open_at(send_ns, a, b),
            _ => send_ns,
        };
        self.trace.bytes(bytes);
        let mut arrivals = Vec::new();
        let c = &mut self.conns[conn as usize];
        let pipe = if from_acceptor {
            &mut c.down
        } else {
            &mut c.up
        };
        if (from_acceptor && !c.acceptor_open) || (!from_acceptor && !c.peer_open) {
            return;
        }
        pipe.write(send_ns, bytes, &self.knobs.net, &mut self.net_rng, |t| {
            arrivals.push(t)
        });
        for t in arrivals {
            self.schedule(
                t.max(self.now_ns),
                Ev::Arrive {
                    conn,
                    at_acceptor: !from_acceptor,
                },
            );
        }
    }

    /// Bytes or a FIN reached one end.
    fn arrive(&mut self, conn: u32, at_acceptor: bool) {
        let now_ns = self.now_ns;
        let c = &mut self.conns[conn as usize];
        let pipe = if at_acceptor { &mut c.up } else { &mut c.down };
        pipe.advance(now_ns);
        match (at_acceptor, c.peer) {
            (false, Peer::Client(client)) => {
                if c.peer_open {
                    self.client_read(client, conn);
                }
            }
            (true, _) => {
                let node = c.node;
                if !c.acceptor_open || c.incarnation != self.nodes[node as usize].incarnation {
                    return;
                }
                self.node_input_ready(node, conn, true);
            }
            (false, Peer::Node { node, .. }) => {
                if !c.peer_open || c.peer_incarnation != self.nodes[node as usize].incarnation {
                    return;
                }
                self.node_input_ready(node, conn, false);
            }
        }
    }

    fn node_input_ready(&mut self, node: u32, conn: u32, acceptor: bool) {
        let c = &mut self.conns[conn as usize];
        let flag = if acceptor {
            &mut c.acceptor_ready
        } else {
            &mut c.peer_ready
        };
        if !*flag {
            *flag = true;
            self.ready[node as usize].push_back((conn, acceptor));
        }
        let at = self.nodes[node as usize].busy_until_ns.max(self.now_ns);
        self.schedule(at, Ev::NodeTurn { node });
    }

    /// One CPU turn of `node`: one ready connection's input.
    fn node_turn(&mut self, node: u32) {
        let now_ns = self.now_ns;
        let n = &self.nodes[node as usize];
        if !n.up || n.busy_until_ns > now_ns {
            return; // a later turn event serves the queue
        }
        let Some((conn, acceptor)) = self.ready[node as usize].pop_front() else {
            return;
        };
        let c = &mut self.conns[conn as usize];
        if acceptor {
            c.acceptor_ready = false;
        } else {
            c.peer_ready = false;
        }
        let (id, open) = match (acceptor, c.peer) {
            (true, _) => (c.id, c.acceptor_open),
            (false, Peer::Node { id, .. }) => (Some(id), c.peer_open),
            (false, Peer::Client(_)) => (None, false),
        };
        let Some(id) = id.filter(|_| open) else {
            return;
        };
        let pipe = if acceptor { &mut c.up } else { &mut c.down };
        let readable = pipe.readable();
        let take = readable.len().min(SERVER_READ_BYTES_MAX);
        let bytes = readable[..take].to_vec();
        pipe.consume(take);
        let more = !pipe.readable().is_empty();
        let eof = pipe.at_eof(now_ns);
        if !bytes.is_empty() {
            self.tap(conn, acceptor, &bytes);
            let n = &mut self.nodes[node as usize];
            let now = n.now(now_ns);
            n.engine.handle_input(now, id, &bytes);
            let mut d = n.drain(now_ns, &self.cost);
            d.cost_ns += self.cost.read_ns(bytes.len() as u64);
            self.after_drain(node, d, now_ns);
        }
        if more {
            self.node_input_ready(node, conn, acceptor);
        } else if eof {
            self.engine_end_gone(node, conn, acceptor);
        }
    }

    /// Feeds a replication link's taps with the bytes an engine is handed.
    fn tap(&mut self, conn: u32, to_acceptor: bool, bytes: &[u8]) {
        let now_ns = self.now_ns;
        let primary_end = self.primary_end();
        let primary_replid = self
            .history
            .witness
            .last()
            .map_or(String::new(), |w| w.replid.clone());
        let c = &mut self.conns[conn as usize];
        let Some(s) = c.session else {
            return;
        };
        let session = &mut self.history.sessions[s];
        if to_acceptor {
            for request in c.up_tap.feed(bytes) {
                match request {
                    UpRequest::Psync { replid, offset } => {
                        c.down_tap.asked_offset = Some(offset);
                        session.psync = Some((replid, offset));
                        session.psync_ns = now_ns;
                        session.primary_end_at_psync = primary_end;
                        session.primary_replid_at_psync = primary_replid.clone();
                    }
                    UpRequest::Ack { offset } => session.acks.push((now_ns, offset)),
                }
            }
        } else {
            c.down_tap.feed(bytes);
            let t = &c.down_tap;
            if session.full.is_none() {
                match &t.answer {
                    Some(Answer::Full { replid, .. }) => {
                        session.full = Some(true);
                        session.answer_replid = Some(replid.clone());
                    }
                    Some(Answer::Continue { replid }) => {
                        session.full = Some(false);
                        session.answer_replid = replid.clone();
                    }
                    None => {}
                }
            }
            session.stream_base = t.stream_base;
            let have = session.stream.len();
            if t.stream.len() > have {
                session.stream.extend_from_slice(&t.stream[have..]);
            }
            session.garbled = t.garbled();
            session.synced = matches!(t.answer, Some(Answer::Continue { .. })) || t.rdb_done;
        }
    }

    /// A replica's engine asks for a link to its primary.
    fn connect_primary(&mut self, node: u32, id: ClientId, host: &str, port: u16) {
        let target =
            (0..self.nodes.len() as u32).find(|&i| node_host(i) == host && port == NODE_PORT);
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
    fn connect_done(&mut self, conn: u32) {
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
    fn engine_closes(&mut self, node: u32, id: ClientId, send_ns: u64) {
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
    fn engine_end_gone(&mut self, node: u32, conn: u32, acceptor: bool) {
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
    fn end_gone(&mut self, conn: u32, at_acceptor: bool) {
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

    /// Resets `replica`'s link to its primary, if it has one: both engines
    /// learn it now (a TCP reset), whatever was in flight is lost.
    fn reset_link(&mut self, replica: u32) {
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

    fn crash(&mut self, node: u32) {
        if !self.nodes[node as usize].up {
            return;
        }
        self.faults_count += 1;
        self.trace.word(0xc4a5 ^ node as u64);
        if node == PRIMARY {
            self.history.primary_crashes_ns.push(self.now_ns);
            self.witness = None;
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

    fn restart(&mut self, node: u32) {
        if self.nodes[node as usize].up {
            return;
        }
        self.trace.word(0x4e57 ^ node as u64);
        let mut d = self.nodes[node as usize].restart(self.now_ns, &self.cost);
        // Loading its own AOF is the node's persistence, not a write.
        d.executed.clear();
        d.removed.clear();
        self.after_drain(node, d, self.now_ns);
        self.node_started(node);
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
