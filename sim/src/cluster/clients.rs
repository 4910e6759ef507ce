//! The clients of the multi-node world: writers on the primary (lists
//! that only grow, registers, counters, keys with TTLs, and WAIT), and
//! readers on the replicas (reads that may be stale, and writes a
//! read-only replica must refuse). One request at a time per client; a
//! lost connection leaves its request's outcome unknown and reconnects.
//! A writer told `-READONLY`, or whose connection was lost, asks its node
//! ROLE next and follows the primary that names (a failover moved it).

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use seedkv_engine::resp::encode::encode_request;
use seedkv_engine::resp::{Frame, FrameDecoder};

use super::history::ClusterOp;
use super::world::{info, node_of_host, ClusterWorld, Conn, Ev, Peer, PRIMARY, SETTLE_POLL_NS};
use super::ClusterKnobs;
use crate::net::Pipe;
use crate::rng::stream_rng;

/// The node a ROLE reply names the primary: the answering node's own
/// index is not in the reply, so a `master` answer names nothing (stay);
/// a `slave` answer names its primary's host.
fn role_primary(frame: &Frame, nodes_count: u32) -> Option<u32> {
    let Frame::Array(items) = frame else {
        return None;
    };
    match (items.first(), items.get(1)) {
        (Some(Frame::Bulk(role)), Some(Frame::Bulk(host))) if role == b"slave" => {
            node_of_host(&String::from_utf8_lossy(host), nodes_count)
        }
        _ => None,
    }
}

/// Keys per family (few, so that writes and reads meet).
pub const KEYS_PER_FAMILY: u32 = 4;
/// Think time between a reply and the next request: 50 µs ..= 2 ms.
pub const THINK_NS_MIN: u64 = 50_000;
pub const THINK_NS_MAX: u64 = 2_000_000;
/// How long a client waits before reconnecting, or retrying a node that
/// is down.
pub const RECONNECT_NS: u64 = 20_000_000;

pub struct ClusterClient {
    pub index: u32,
    pub node: u32,
    pub writer: bool,
    rng: ChaCha8Rng,
    pub ops_left: u64,
    pub conn: Option<u32>,
    conns_count: u64,
    decoder: FrameDecoder,
    /// The request awaiting its reply (index into the history's ops).
    pub outstanding: Option<usize>,
    wrote_on_conn: bool,
    values_count: u64,
    /// The next request is ROLE: where is the primary now?
    rediscover: bool,
}

impl ClusterClient {
    pub fn new(seed: u64, index: u32, knobs: &ClusterKnobs) -> ClusterClient {
        let writer = index < knobs.writers_count;
        let node = if writer {
            PRIMARY
        } else {
            1 + (index - knobs.writers_count) % knobs.replicas_count
        };
        ClusterClient {
            index,
            node,
            writer,
            rng: stream_rng(seed, "cluster-client", index as u64),
            ops_left: knobs.ops_per_client,
            conn: None,
            conns_count: 0,
            decoder: FrameDecoder::new(),
            outstanding: None,
            wrote_on_conn: false,
            values_count: 0,
            rediscover: false,
        }
    }

    fn key(&mut self, family: &str) -> Vec<u8> {
        format!("{family}:{}", self.rng.gen_range(0..KEYS_PER_FAMILY)).into_bytes()
    }

    fn value(&mut self) -> Vec<u8> {
        self.values_count += 1;
        format!("c{}.{}", self.index, self.values_count).into_bytes()
    }

    /// The next request, drawn from this client's own stream.
    fn next_request(&mut self, replicas_count: u32) -> Vec<Vec<u8>> {
        if std::mem::take(&mut self.rediscover) {
            return vec![b"ROLE".to_vec()];
        }
        let roll = self.rng.gen_range(0..100);
        if !self.writer {
            return match roll {
                0..=44 => vec![
                    b"LRANGE".to_vec(),
                    self.key("log"),
                    b"0".to_vec(),
                    b"-1".to_vec(),
                ],
                45..=79 => vec![b"GET".to_vec(), self.key("reg")],
                80..=89 => vec![b"GET".to_vec(), self.key("ttl")],
                _ => vec![b"SET".to_vec(), self.key("reg"), self.value()],
            };
        }
        match roll {
            0..=9 if self.wrote_on_conn => {
                let n = self.rng.gen_range(1..=replicas_count);
                let timeout_ms = self.rng.gen_range(10..=500u32);
                vec![
                    b"WAIT".to_vec(),
                    n.to_string().into_bytes(),
                    timeout_ms.to_string().into_bytes(),
                ]
            }
            0..=44 => vec![b"RPUSH".to_vec(), self.key("log"), self.value()],
            45..=64 => vec![b"SET".to_vec(), self.key("reg"), self.value()],
            65..=74 => vec![b"INCR".to_vec(), self.key("ctr")],
            75..=84 => {
                let px = self.rng.gen_range(20..=2_000u32);
                vec![
                    b"SET".to_vec(),
                    self.key("ttl"),
                    b"100".to_vec(),
                    b"PX".to_vec(),
                    px.to_string().into_bytes(),
                ]
            }
            85..=94 => vec![b"INCRBY".to_vec(), self.key("ttl"), b"1".to_vec()],
            _ => vec![b"PERSIST".to_vec(), self.key("ttl")],
        }
    }
}

impl ClusterWorld {
    pub(super) fn client_wake(&mut self, client: u32) {
        let now_ns = self.now_ns;
        let c = &self.clients[client as usize];
        if c.outstanding.is_some() {
            return;
        }
        if c.ops_left == 0 {
            self.check_clients_done();
            return;
        }
        let node = c.node;
        let conn = match c.conn {
            Some(conn) => conn,
            None => {
                if !self.nodes[node as usize].up {
                    self.schedule(now_ns + RECONNECT_NS, Ev::Wake { client });
                    return;
                }
                self.client_connect(client)
            }
        };
        let replicas_count = self.knobs.replicas_count;
        let c = &mut self.clients[client as usize];
        let args = c.next_request(replicas_count);
        c.ops_left -= 1;
        if !matches!(args[0].as_slice(), b"WAIT" | b"GET" | b"LRANGE" | b"ROLE") {
            c.wrote_on_conn = true;
        }
        let acceptor_id = self.conns[conn as usize].id.expect("connected");
        let wait_woff = match args[0].as_slice() {
            b"WAIT" => self.woff.get(&(node, acceptor_id)).copied().unwrap_or(0),
            _ => 0,
        };
        let op = self.history.ops.len();
        self.clients[client as usize].outstanding = Some(op);
        let arg_refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        let bytes = encode_request(&arg_refs);
        self.history.ops.push(ClusterOp {
            client,
            node,
            conn: conn as u64,
            args,
            invoke_ns: now_ns,
            reply: None,
            complete_ns: 0,
            wait_woff,
            wait_answered_ns: 0,
        });
        self.write(conn, false, now_ns, &bytes);
    }

    /// Opens a connection from `client` to its node (which is up).
    fn client_connect(&mut self, client: u32) -> u32 {
        let now_ns = self.now_ns;
        let node = self.clients[client as usize].node;
        let conn = self.conns.len() as u32;
        assert!(
            self.conns.len() < super::world::CLUSTER_CONNS_MAX,
            "too many connections"
        );
        let n = &mut self.nodes[node as usize];
        let addr = format!("10.0.0.{client}:{}", 10_000 + conn);
        let id = n.engine.connect(n.now(now_ns), info(&addr, node));
        let incarnation = n.incarnation;
        self.conns.push(Conn {
            node,
            incarnation,
            id: Some(id),
            peer: Peer::Client(client),
            peer_incarnation: 0,
            up: Pipe::default(),
            down: Pipe::default(),
            acceptor_open: true,
            peer_open: true,
            acceptor_ready: false,
            peer_ready: false,
            session: None,
            up_tap: Default::default(),
            down_tap: Default::default(),
        });
        self.node_conns[node as usize].insert(id, (conn, true));
        let c = &mut self.clients[client as usize];
        c.conn = Some(conn);
        c.conns_count += 1;
        c.decoder = FrameDecoder::new();
        c.wrote_on_conn = false;
        conn
    }

    /// Replies (or the FIN) reached `client` on `conn`.
    pub(super) fn client_read(&mut self, client: u32, conn: u32) {
        let now_ns = self.now_ns;
        if self.clients[client as usize].conn != Some(conn) {
            return;
        }
        let cs = &mut self.conns[conn as usize];
        let bytes = cs.down.readable().to_vec();
        cs.down.consume(bytes.len());
        let eof = cs.down.at_eof(now_ns);
        let nodes_count = self.nodes.len() as u32;
        let mut follow = None;
        let c = &mut self.clients[client as usize];
        c.decoder.feed(&bytes);
        loop {
            match c.decoder.next_frame() {
                Ok(Some(frame)) => {
                    let Some(op) = c.outstanding.take() else {
                        break; // nothing asked: a stray reply
                    };
                    let record = &mut self.history.ops[op];
                    if c.writer {
                        match (record.args[0].as_slice(), &frame) {
                            (b"ROLE", _) => follow = role_primary(&frame, nodes_count),
                            (_, Frame::Error(e)) if e.starts_with(b"READONLY") => {
                                c.rediscover = true
                            }
                            _ => {}
                        }
                    }
                    record.reply = Some(frame);
                    record.complete_ns = now_ns;
                    let think = c.rng.gen_range(THINK_NS_MIN..=THINK_NS_MAX);
                    self.queue.push(now_ns + think, Ev::Wake { client });
                }
                Ok(None) => break,
                Err(_) => {
                    self.client_conn_lost(client, conn);
                    return;
                }
            }
        }
        if eof {
            self.client_conn_lost(client, conn);
        } else if let Some(node) = follow.filter(|&n| n != self.clients[client as usize].node) {
            self.client_follow(client, conn, node);
        }
    }

    /// The client's end of `conn` closes: its FIN reaches the node's end
    /// if that is still open.
    fn peer_closes(&mut self, conn: u32, now_ns: u64) {
        let cs = &mut self.conns[conn as usize];
        cs.peer_open = false;
        if cs.acceptor_open {
            let fin = cs.up.write_fin(now_ns);
            self.schedule(
                fin.max(now_ns),
                Ev::Arrive {
                    conn,
                    at_acceptor: true,
                },
            );
        }
    }

    /// `client` leaves `conn` for `node`, which ROLE named the primary.
    fn client_follow(&mut self, client: u32, conn: u32, node: u32) {
        let now_ns = self.now_ns;
        let c = &mut self.clients[client as usize];
        c.node = node;
        c.conn = None;
        self.peer_closes(conn, now_ns);
    }

    /// `client`'s connection `conn` is gone: its request's outcome is
    /// unknown; it reconnects later.
    pub(super) fn client_conn_lost(&mut self, client: u32, conn: u32) {
        let now_ns = self.now_ns;
        let c = &mut self.clients[client as usize];
        if c.conn != Some(conn) {
            return;
        }
        c.conn = None;
        c.rediscover |= c.writer;
        if let Some(op) = c.outstanding.take() {
            self.history.ops[op].complete_ns = now_ns;
        }
        self.peer_closes(conn, now_ns);
        self.schedule(now_ns + RECONNECT_NS, Ev::Wake { client });
    }

    /// Every client finished: the settle phase starts.
    fn check_clients_done(&mut self) {
        if self.clients_done {
            return;
        }
        if self
            .clients
            .iter()
            .all(|c| c.ops_left == 0 && c.outstanding.is_none())
        {
            self.clients_done = true;
            self.settle_started_ns = Some(self.now_ns);
            self.schedule(self.now_ns + SETTLE_POLL_NS, Ev::Settle);
        }
    }
}
