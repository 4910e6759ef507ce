//! One probe client: a thread that drives one simulator workload over real
//! TCP connections, injects its drawn faults, and records what it saw in
//! the simulator's history types (`Op`, `Conn`) with real monotonic time.
//!
//! It behaves as the simulated client does (`world.rs`): a batch is sent as
//! one pipeline, replies are matched first in first out, a request whose
//! connection died before its reply has an unknown outcome (`complete:
//! None`, and the workload hears `on_reply(None)`), and the client
//! reconnects after a lost connection.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rand_chacha::ChaCha8Rng;
use seedkv_engine::resp::Frame;

use super::conn::{ProbeConn, ReadError};
use super::faults::{Fault, FaultKind, SharedFaults, FAULTS_STOP_PER_MILLE};
use crate::check::blocking::blocking_timeout;
use crate::client::encode_request_into;
use crate::history::{ClientIndex, Conn, ConnId, Delivery, Op};
use crate::rng::{stream, stream_rng};
use crate::workload::{Request, Workload, WorkloadKind, BATCH_REQUESTS_MAX};

/// A client waits this long for the server to accept a connection and
/// answer `CLIENT ID`, ...
pub const HANDSHAKE_MS: u64 = 2_000;
/// ... and gives up after this many failed connection attempts in a row.
pub const CONNECT_FAILURES_MAX: u32 = 20;
/// Pause between connection attempts.
pub const RECONNECT_MS: u64 = 5;
/// Think time actually slept at most (workloads ask for up to 2 ms).
pub const THINK_NS_MAX: u64 = 2_000_000;
/// The workload name of the requests faults send.
pub const FAULT_WORKLOAD: &str = "fault";

/// What every client thread shares.
pub struct Shared {
    pub addr: SocketAddr,
    pub seed: u64,
    pub start: Instant,
    pub deadline: Instant,
    /// Requests the whole probe may send.
    pub ops_max: u64,
    pub ops_reserved: AtomicU64,
    /// Faults stop at this many reserved requests or at `faults_stop_at`.
    pub faults_stop_ops: u64,
    pub faults_stop_at: Instant,
    /// When the first client saw faults stop (ns since `start`; `u64::MAX`
    /// while they go on).
    pub faults_end_ns: AtomicU64,
    pub fault_per_mille: u32,
    pub faults: SharedFaults,
    pub next_conn: AtomicU64,
    /// The wait for a reply that the liveness checker allows; a client waits
    /// a little longer before it gives up on its connection.
    pub liveness_bound_ns: u64,
    /// Set while the crash-restart fault restarts the server
    /// ([`super::restart`]): clients do not connect until it answers PONG.
    pub restarting: std::sync::atomic::AtomicBool,
    /// The address is a sharding proxy ([`super::proxy`]): connections
    /// shake hands with PING and no server-side fault is sent.
    pub through_proxy: bool,
}

impl Shared {
    pub fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// Reserves `n` requests of the budget; `false` (and nothing reserved)
    /// if they do not fit, so that smaller batches of other clients can
    /// still use what is left.
    fn reserve(&self, n: u64) -> bool {
        let before = self.ops_reserved.fetch_add(n, Ordering::Relaxed);
        if before + n <= self.ops_max {
            return true;
        }
        self.ops_reserved.fetch_sub(n, Ordering::Relaxed);
        false
    }

    pub(super) fn faults_active(&self) -> bool {
        let active = self.fault_per_mille > 0
            && Instant::now() < self.faults_stop_at
            && self.ops_reserved.load(Ordering::Relaxed) < self.faults_stop_ops;
        if !active {
            let _ = self.faults_end_ns.compare_exchange(
                u64::MAX,
                self.now_ns(),
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
        }
        active
    }
}

/// Where faults stop, from the budget and the duration.
pub fn faults_stop(ops_max: u64, start: Instant, duration: Duration) -> (u64, Instant) {
    (
        ops_max * FAULTS_STOP_PER_MILLE / 1000,
        start + duration.mul_f64(FAULTS_STOP_PER_MILLE as f64 / 1000.0),
    )
}

/// What one client recorded.
#[derive(Debug, Default)]
pub struct ClientRecord {
    pub ops: Vec<Op>,
    pub conns: Vec<Conn>,
    /// The client stopped because a reply never came on an open connection
    /// (the liveness checker reports those requests).
    pub gave_up: bool,
    /// Set-up failures: connects or `CLIENT ID`s that failed.
    pub connect_failures: u64,
    /// Pub/sub messages received (`History::pubsub.deliveries`), in the
    /// order this client read them.
    pub deliveries: Vec<Delivery>,
}

/// The connection in use.
struct Live {
    conn: ProbeConn,
    id: ConnId,
    /// Index into `ClientRecord::conns`.
    slot: usize,
    seq_next: u64,
    /// Per request sent and not yet answered, how many frames its reply
    /// is made of (`Workload::reply_frames`: subscribe confirmations).
    reply_frames: VecDeque<usize>,
}

struct Client<'a> {
    shared: &'a Shared,
    index: ClientIndex,
    workload: Box<dyn Workload>,
    workload_name: &'static str,
    rng: ChaCha8Rng,
    fault_rng: ChaCha8Rng,
    live: Option<Live>,
    record: ClientRecord,
}

/// Runs client `index` with a `kind` workload until the budget, the
/// deadline or the workload ends.
pub fn run_client(shared: &Shared, index: ClientIndex, kind: WorkloadKind) -> ClientRecord {
    // The same streams as the simulator's client `index`: the same seed
    // makes the same workload choices.
    let mut rng = stream_rng(shared.seed, stream::WORKLOAD, index as u64);
    let workload = kind.build(index, &mut rng);
    let mut client = Client {
        shared,
        index,
        workload,
        workload_name: kind.name(),
        rng,
        fault_rng: stream_rng(shared.seed, "probe-faults", index as u64),
        live: None,
        record: ClientRecord::default(),
    };
    client.run();
    let Client {
        mut live, record, ..
    } = client;
    if let Some(live) = live.take() {
        live.conn.abort();
    }
    record
}

impl Client<'_> {
    fn run(&mut self) {
        let mut batch: Vec<Request> = Vec::new();
        let mut failures_in_row = 0u32;
        // Bounded: every iteration reserves requests from the finite budget,
        // or fails to connect (at most CONNECT_FAILURES_MAX in a row), or waits
        // out a restart (bounded by restart::RESTART_READY_MS), and
        // the deadline ends it anyway.
        while Instant::now() < self.shared.deadline && !self.workload.finished() {
            if self.live.is_none() {
                // A restarting server may accept connections while it
                // loads, answering -LOADING: wait until it answers PONG.
                if self.shared.restarting.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(RECONNECT_MS));
                    continue;
                }
                if !self.connect() {
                    failures_in_row += 1;
                    if failures_in_row >= CONNECT_FAILURES_MAX {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(RECONNECT_MS));
                    continue;
                }
                failures_in_row = 0;
            }
            batch.clear();
            self.workload.next_batch(&mut self.rng, &mut batch);
            assert!(!batch.is_empty() && batch.len() <= BATCH_REQUESTS_MAX);
            let fault = Fault::draw(&mut self.fault_rng, self.shared.fault_per_mille)
                .filter(|_| self.shared.faults_active());
            if !self
                .shared
                .reserve(batch.len() as u64 + u64::from(fault.is_some()))
            {
                return;
            }
            if let Some(fault) = &fault {
                if !self.server_fault(fault) {
                    return;
                }
                // The fault's own connection may have died (another client
                // killed it): the batch goes out on a new one, or is lost
                // unsent if there is none.
                if self.live.is_none() && !self.connect() {
                    for request in batch.drain(..) {
                        self.workload.on_reply(&request, None);
                    }
                    continue;
                }
            }
            if !self.send_batch(&mut batch, fault.as_ref()) {
                return;
            }
            let think_ns = self.workload.think_ns(&mut self.rng).min(THINK_NS_MAX);
            if think_ns > 0 {
                std::thread::sleep(Duration::from_nanos(think_ns));
            }
        }
    }

    /// Opens a connection and learns its server id. `false` on failure.
    fn connect(&mut self) -> bool {
        let Ok(mut conn) = ProbeConn::connect(self.shared.addr) else {
            self.record.connect_failures += 1;
            return false;
        };
        let Some(server_id) = self.handshake(&mut conn) else {
            self.record.connect_failures += 1;
            return false;
        };
        let id = self.shared.next_conn.fetch_add(1, Ordering::Relaxed);
        self.record.conns.push(Conn {
            conn: id,
            client: self.index,
            opened_ns: self.shared.now_ns(),
            closed: None,
        });
        self.shared.faults.conn_ids[self.index as usize].store(server_id, Ordering::Relaxed);
        self.live = Some(Live {
            conn,
            id,
            slot: self.record.conns.len() - 1,
            seq_next: 0,
            reply_frames: VecDeque::new(),
        });
        // Whatever the server held for the previous connection is gone.
        self.workload.on_connect();
        true
    }

    /// The connection's server id (`CLIENT ID`), or 0 through a proxy,
    /// which has no such command and answers PING instead (a server id of
    /// 0 is never a KILL victim). `None` if the server did not answer.
    fn handshake(&self, conn: &mut ProbeConn) -> Option<u64> {
        let deadline = Instant::now() + Duration::from_millis(HANDSHAKE_MS);
        if self.shared.through_proxy {
            return match conn.call(&[b"PING"], deadline) {
                Ok(Frame::Simple(s)) if s == b"PONG" => Some(0),
                _ => None,
            };
        }
        match conn.call(&[b"CLIENT", b"ID"], deadline) {
            Ok(Frame::Integer(id)) if id > 0 => Some(id as u64),
            _ => None,
        }
    }

    /// Sends a server-side fault's command as a one-request batch of the
    /// `fault` workload and waits for its reply. `false`: give up.
    fn server_fault(&mut self, fault: &Fault) -> bool {
        let faults = &self.shared.faults;
        let victim = match fault {
            Fault::KillOther { victim_pick } => faults.victim(self.index, *victim_pick),
            _ => None,
        };
        let refused = matches!(fault, Fault::DebugSleep { .. })
            && faults.debug_refused.load(Ordering::Relaxed);
        // A RESP2 connection in subscribed mode refuses every other
        // command: a client that may be subscribed sends no server fault
        // (its draw is still consumed, so the streams stay the same).
        let subscribed = self.workload.takes_messages();
        // A proxy routes none of the fault commands (twemproxy closes the
        // connection on them): they are counted as skipped.
        let command = if refused || subscribed || self.shared.through_proxy {
            None
        } else {
            fault.command(victim)
        };
        let Some(command) = command else {
            if !matches!(
                fault,
                Fault::DisconnectMidPipeline { .. } | Fault::SlowRead { .. }
            ) {
                faults.count(fault.kind(), false);
            }
            return true;
        };
        let mut one = vec![command];
        let first = self.record.ops.len();
        if !self.send_requests(&mut one, FAULT_WORKLOAD) {
            return true;
        }
        if !self.read_replies(first, None) {
            return false;
        }
        let refusal = matches!(self.record.ops[first].complete, Some((_, Frame::Error(_))));
        if refusal && fault.kind() == FaultKind::DebugSleep {
            faults.debug_refused.store(true, Ordering::Relaxed);
        }
        faults.count(fault.kind(), !refusal);
        true
    }

    /// Sends the workload's batch (and applies a socket fault). `false`:
    /// give up.
    fn send_batch(&mut self, batch: &mut Vec<Request>, fault: Option<&Fault>) -> bool {
        let first = self.record.ops.len();
        let name = self.workload_name;
        if !self.send_requests(batch, name) {
            return true;
        }
        if let Some(Fault::SlowRead { stall_ms }) = fault {
            self.shared.faults.count(FaultKind::SlowRead, true);
            std::thread::sleep(Duration::from_millis(*stall_ms));
        }
        let keep = match fault {
            Some(Fault::DisconnectMidPipeline { keep_per_mille }) => {
                let n = (self.record.ops.len() - first) as u64;
                Some((n * u64::from(*keep_per_mille) / 1000) as usize)
            }
            _ => None,
        };
        self.read_replies(first, keep)
    }

    /// Records `requests` as ops on the live connection and hands them to
    /// the writer as one write. `false` if there is no connection.
    fn send_requests(&mut self, requests: &mut Vec<Request>, workload: &'static str) -> bool {
        let Some(live) = self.live.as_mut() else {
            return false;
        };
        let mut bytes = Vec::new();
        let invoke_ns = self.shared.now_ns();
        for request in requests.drain(..) {
            encode_request_into(&mut bytes, &request);
            let frames = match workload == FAULT_WORKLOAD {
                true => 1,
                false => self.workload.reply_frames(&request),
            };
            live.reply_frames.push_back(frames);
            self.record.ops.push(Op {
                client: self.index,
                conn: live.id,
                seq_in_conn: live.seq_next,
                args: request,
                workload,
                invoke_ns,
                complete: None,
            });
            live.seq_next += 1;
        }
        // A failed send shows up as a closed connection on the next read.
        let _ = live.conn.send(bytes);
        true
    }

    /// Reads the replies of ops `first..` (or only `keep` of them, then
    /// drops the connection: a disconnect mid-pipeline). `false`: a reply
    /// never came on an open connection; the client stops.
    fn read_replies(&mut self, first: usize, keep: Option<usize>) -> bool {
        let blocking_ns: u64 = self.record.ops[first..]
            .iter()
            .filter_map(|op| blocking_timeout(&op.args)?.wait_ns_max())
            .sum();
        let wait = Duration::from_nanos(self.shared.liveness_bound_ns + blocking_ns)
            + Duration::from_secs(1);
        let deadline = Instant::now() + wait;
        let end = self.record.ops.len();
        for i in first..end {
            if keep == Some(i - first) {
                self.shared
                    .faults
                    .count(FaultKind::DisconnectMidPipeline, true);
                self.close("client: disconnect mid-pipeline (probe fault)".into(), i);
                return true;
            }
            let Some(live) = self.live.as_mut() else {
                return true;
            };
            let before_seq = self.record.ops[i].seq_in_conn;
            let wanted = live.reply_frames.pop_front().unwrap_or(1);
            if wanted == 0 {
                // Silenced by CLIENT REPLY: no reply will come.
                continue;
            }
            let messages = self.workload.takes_messages();
            let mut parts: Vec<Frame> = Vec::new();
            // Bounded by the deadline: a message or a part of a reply of
            // several frames is taken, anything else ends the wait.
            let frame = loop {
                let frame = match live.conn.read_frame(deadline) {
                    Ok(frame) => frame,
                    Err(e) => break Err(e),
                };
                if messages {
                    if let Some(d) = delivery(&frame, live.id, self.index, before_seq, self.shared)
                    {
                        self.workload.on_message(&d);
                        self.record.deliveries.push(d);
                        continue;
                    }
                } else if matches!(frame, Frame::Push(_)) {
                    continue;
                }
                if wanted <= 1 {
                    break Ok(frame);
                }
                parts.push(frame);
                if parts.len() >= wanted {
                    break Ok(Frame::Array(std::mem::take(&mut parts)));
                }
            };
            match frame {
                Ok(frame) => {
                    let op = &mut self.record.ops[i];
                    self.workload.on_reply(&op.args, Some(&frame));
                    op.complete = Some((self.shared.now_ns(), frame));
                }
                Err(ReadError::Closed(reason)) => {
                    self.close(reason, i);
                    return true;
                }
                Err(ReadError::Invalid(e)) => {
                    self.close(format!("client: invalid reply stream: {e}"), i);
                    return true;
                }
                Err(ReadError::TimedOut) => {
                    // Leave the connection open in the history: the liveness
                    // checker judges these requests unanswered.
                    self.record.gave_up = true;
                    return false;
                }
            }
        }
        // A complete frame already buffered answers nothing: a message
        // (recorded), or an extra or misrouted reply. Bounded by what is
        // buffered.
        while let Some(live) = self.live.as_mut() {
            let Some(frame) = live.conn.buffered_frame() else {
                break;
            };
            let before_seq = live.seq_next;
            if self.workload.takes_messages() {
                if let Some(d) = delivery(&frame, live.id, self.index, before_seq, self.shared) {
                    self.workload.on_message(&d);
                    self.record.deliveries.push(d);
                    continue;
                }
            }
            let reason = format!(
                "client: unexpected reply {}",
                crate::world::frame_summary(&frame)
            );
            self.close(reason, end);
        }
        true
    }

    /// Drops the live connection; ops `from..` lose their replies.
    fn close(&mut self, reason: String, from: usize) {
        let Some(live) = self.live.take() else {
            return;
        };
        self.record.conns[live.slot].closed = Some((self.shared.now_ns(), reason));
        self.shared.faults.conn_ids[self.index as usize].store(0, Ordering::Relaxed);
        live.conn.abort();
        for op in &self.record.ops[from..] {
            self.workload.on_reply(&op.args, None);
        }
    }
}

/// The pub/sub message `frame` carries, as received now on connection
/// `conn` before the reply of its request `before_seq`.
fn delivery(
    frame: &Frame,
    conn: ConnId,
    client: ClientIndex,
    before_seq: u64,
    shared: &Shared,
) -> Option<Delivery> {
    let (kind, pattern, channel, payload) = Delivery::parse(frame)?;
    Some(Delivery {
        conn,
        client,
        at_ns: shared.now_ns(),
        before_seq,
        kind,
        pattern,
        channel,
        payload,
    })
}
