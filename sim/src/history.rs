//! What a run recorded: every request the simulated clients sent, with its
//! invocation and completion in virtual time, and the order in which the
//! engine executed requests. Checkers read only this (plus the run's
//! configuration), so a checker is a pure function of the history.

use seedkv_engine::resp::Frame;

/// Virtual time in nanoseconds since the start of the run.
pub type TimeNs = u64;

/// Index of a simulated client (stable across reconnects).
pub type ClientIndex = u32;

/// A connection, named by the engine's client id (unique within a run).
pub type ConnId = u64;

/// One request as the client saw it.
#[derive(Clone, Debug)]
pub struct Op {
    pub client: ClientIndex,
    pub conn: ConnId,
    /// Index of this request on its connection, from 0 (matches the engine's
    /// `Executed::request_seq`).
    pub seq_in_conn: u64,
    pub args: Vec<Vec<u8>>,
    /// The workload that issued it (e.g. "kv", "counter", "scan").
    pub workload: &'static str,
    /// When the client handed the request to the network.
    pub invoke_ns: TimeNs,
    /// The reply and when it was fully received; `None` if the connection
    /// died first (the request may or may not have executed).
    pub complete: Option<(TimeNs, Frame)>,
}

/// One request executed by the engine, in execution order.
#[derive(Clone, Debug)]
pub struct Execution {
    pub conn: ConnId,
    pub seq_in_conn: u64,
    /// Virtual time the command started and finished on the server CPU.
    pub start_ns: TimeNs,
    pub end_ns: TimeNs,
    /// Wall-clock time the engine was given (unix ms), for TTL models.
    pub unix_ms: u64,
    /// Command name (empty if rejected before execution).
    pub name: &'static str,
    pub flags: u32,
    pub work_units: u64,
    /// For a command an atomic group ran: the `seq_in_conn` of the EXEC or
    /// script (EVAL...) that ran it. EXEC's commands keep the index they
    /// were queued under, a script's calls its own; a group is recorded
    /// back to back, right before the EXEC or script itself.
    pub in_exec: Option<u64>,
    /// What the command touched, as the engine's generic execution code
    /// measured it (`seedkv_engine::sizes`); `None` for a rejected request
    /// and outside the simulator (the probe).
    pub sizes: Option<Box<seedkv_engine::sizes::Sizes>>,
}

/// The moment the engine was handed the last byte of a request that may
/// block (BLPOP, BLMOVE, BZPOPMIN...): where it executed, or parked, in the
/// execution order. A blocked request's [`Execution`] is recorded only when
/// it is served or times out, so this is the blocking checker's only view
/// of when the wait began.
#[derive(Clone, Debug)]
pub struct Received {
    pub conn: ConnId,
    pub seq_in_conn: u64,
    pub at_ns: TimeNs,
    /// `History::executions.len()` at that moment...
    pub executions_before: usize,
    /// ... and once the engine had handled that input: the request
    /// executed at once (did not park) if and only if its execution's
    /// index is below this.
    pub executions_after: usize,
}

/// A connection's life.
#[derive(Clone, Debug)]
pub struct Conn {
    pub conn: ConnId,
    pub client: ClientIndex,
    pub opened_ns: TimeNs,
    /// When it was closed or reset, and why.
    pub closed: Option<(TimeNs, String)>,
}

/// Everything a run recorded.
#[derive(Clone, Debug, Default)]
pub struct History {
    /// In invocation order.
    pub ops: Vec<Op>,
    /// In execution order.
    pub executions: Vec<Execution>,
    pub conns: Vec<Conn>,
    /// Requests that may block, as the engine received them, in order.
    pub received: Vec<Received>,
    /// Virtual time at which fault injection stopped (liveness is judged after it).
    pub faults_end_ns: TimeNs,
    /// Pub/sub messages the clients received, and where connections left
    /// the engine (see [`PubSubRecord`]).
    pub pubsub: PubSubRecord,
    /// Client-side caching: invalidations received and cached reads.
    pub tracking: TrackingRecord,
    /// Virtual time at which the run ended.
    pub end_ns: TimeNs,
    /// Snapshots, the crash and the restarted dataset (persistence runs).
    pub persist: Option<Box<crate::persistence::record::PersistRecord>>,
    /// Spans (start, end) the command thread was busy outside any
    /// execution: inline storage requests (an `appendfsync always`
    /// fsync), DEBUG SLEEP, the slices of a suspended script (its
    /// EVAL's execution covers only the last) and reads that executed
    /// nothing. In time order; they never overlap an execution (inline
    /// storage may overlap a read's span: readers merge them).
    pub thread_busy_spans: Vec<(TimeNs, TimeNs)>,
    /// Keys the engine removed on its own (expiry, eviction), in order.
    pub key_removals: Vec<KeyRemoval>,
    /// Scripts that ran in several slices (see [`ScriptRun`]), in start
    /// order.
    pub script_runs: Vec<ScriptRun>,
    /// Slices of snapshot reads (see [`ReplySlice`]), in time order.
    pub reply_slices: Vec<ReplySlice>,
    /// Connections read after a snapshot read's slice ran while their
    /// input waited (see [`SliceWait`]).
    pub slice_waits: Vec<SliceWait>,
    /// The indexes of [`History::op_index`] and
    /// [`History::first_executions`], built by the first checker that
    /// asks and shared by the rest; a literal history takes
    /// `..History::default()`.
    pub index_cache: IndexCache,
}

/// A connection's input that waited while a snapshot read's slice ran:
/// ready (readable at the server) at `ready_ns`, read at `read_ns`.
#[derive(Clone, Debug)]
pub struct SliceWait {
    pub conn: ConnId,
    pub ready_ns: TimeNs,
    pub read_ns: TimeNs,
}

/// A slice of a snapshot read (the engine's `Event::ReplySlice`): its
/// command executed, and was recorded, when the read opened; slices
/// produce its reply while other clients' commands run between them.
#[derive(Clone, Debug)]
pub struct ReplySlice {
    pub conn: ConnId,
    pub seq_in_conn: u64,
    pub start_ns: TimeNs,
    pub end_ns: TimeNs,
    pub work_units: u64,
    /// Elements it visited or emitted.
    pub elements: u64,
    /// The read's last slice.
    pub last: bool,
}

/// A key that left the keyspace without a command asking for it (the
/// engine's `Event::KeyRemoved`), placed in the execution order.
#[derive(Clone, Debug)]
pub struct KeyRemoval {
    /// `History::executions.len()` when the engine reported it: a lazy
    /// expiry happened inside the execution of that index (before its
    /// writes), a cron expiry or an eviction before it.
    pub executions_before: usize,
    pub db: usize,
    pub key: Vec<u8>,
    pub cause: seedkv_engine::RemovalCause,
}

/// A script that gave control back to the host between slices (the
/// engine's `Event::ScriptSlice`). Other clients' commands may execute
/// inside it only in busy mode: past `threshold_ms` after its start, and
/// then only those allowed while busy (or a `-BUSY` refusal).
#[derive(Clone, Debug)]
pub struct ScriptRun {
    pub conn: ConnId,
    pub seq_in_conn: u64,
    /// The engine's `now` in the turn the script started in.
    pub started_ns: TimeNs,
    /// `History::executions.len()` when its first slice ended: what
    /// executed from there until its EVAL's execution ran inside it.
    pub executions_from: usize,
    /// The index of its EVAL's execution; `None` while it ran when the
    /// run ended (or the server crashed).
    pub eval_execution: Option<usize>,
    /// `busy-reply-threshold` while it ran (it cannot change meanwhile:
    /// CONFIG SET waits before the threshold and is refused after it).
    pub threshold_ms: u64,
}

/// At most this many requests are reserved for up front (a run may send
/// more; the vectors then grow as usual).
const REQUESTS_RESERVED_MAX: u64 = 1 << 20;

impl History {
    /// An empty history with room for `requests` ops and executions: both
    /// vectors grow to about that, and doubling them copied every record
    /// made so far (2% of the light mix's instructions).
    pub fn with_request_capacity(requests: u64) -> History {
        let requests = requests.min(REQUESTS_RESERVED_MAX) as usize;
        History {
            ops: Vec::with_capacity(requests),
            executions: Vec::with_capacity(requests),
            ..History::default()
        }
    }
}

/// Where [`History::op_index`] and [`History::first_executions`] keep
/// what they built (opaque).
#[derive(Clone, Debug, Default)]
pub struct IndexCache {
    ops: std::sync::OnceLock<OpPositions>,
    /// Per execution, the position of its op (`u32::MAX`: none).
    op_of_execution: std::sync::OnceLock<Vec<u32>>,
    /// With the number of executions it was built over.
    first_executions: std::sync::OnceLock<(usize, FirstExecutions)>,
    /// See [`History::ops_by_conn`].
    conn_order: std::sync::OnceLock<ConnOrder>,
    /// The ops CLIENT REPLY silenced (`crate::reply_mode::silenced`),
    /// ascending, with the number of ops it was built over.
    silenced: std::sync::OnceLock<(usize, Vec<u32>)>,
}

/// Every op's position in [`History::ops`], by connection (ascending) and
/// within one in recording order, and whether that is also each
/// connection's request order.
#[derive(Clone, Debug, Default)]
struct ConnOrder {
    positions: Vec<u32>,
    /// Within every connection `seq_in_conn` never decreases along
    /// `positions`: then the order is also `(conn, seq_in_conn, position)`.
    seq_follows_recording: bool,
}

impl ConnOrder {
    fn of(ops: &[Op]) -> ConnOrder {
        assert!(u32::try_from(ops.len()).is_ok(), "fewer than 2^32 ops");
        // A counting sort by connection: a run has a few hundred
        // connections and hundreds of thousands of ops, and sorting the
        // (connection, position) pairs compared each about twenty times.
        // Positions go into their connection's bucket in increasing order,
        // so the result is the sorted pairs' positions exactly.
        let mut bucket_of: crate::fxhash::FxHashMap<ConnId, usize> = Default::default();
        let mut conns: Vec<(ConnId, usize)> = Vec::new();
        let op_buckets: Vec<u32> = ops
            .iter()
            .map(|op| {
                let next = bucket_of.len();
                let b = *bucket_of.entry(op.conn).or_insert(next);
                if b == conns.len() {
                    conns.push((op.conn, 0));
                }
                conns[b].1 += 1;
                b as u32
            })
            .collect();
        // Buckets in connection order: each one's first slot.
        let mut order: Vec<usize> = (0..conns.len()).collect();
        order.sort_unstable_by_key(|&b| conns[b].0);
        let mut start = vec![0usize; conns.len()];
        let mut at = 0;
        for &b in &order {
            start[b] = at;
            at += conns[b].1;
        }
        let mut positions = vec![0u32; ops.len()];
        for (i, &b) in op_buckets.iter().enumerate() {
            let slot = &mut start[b as usize];
            positions[*slot] = i as u32;
            *slot += 1;
        }
        let seq_follows_recording = positions.windows(2).all(|w| {
            let (a, b) = (&ops[w[0] as usize], &ops[w[1] as usize]);
            a.conn != b.conn || a.seq_in_conn <= b.seq_in_conn
        });
        ConnOrder {
            positions,
            seq_follows_recording,
        }
    }
}

/// The index in [`History::executions`] of the first execution recorded
/// under each `(connection, index on the connection)`.
pub type FirstExecutions = crate::fxhash::FxHashMap<(ConnId, u64), usize>;

/// Each op's position in [`History::ops`] by `(connection, index on the
/// connection)`, with the number of ops it was built over.
#[derive(Clone, Debug, Default)]
struct OpPositions {
    ops_count: usize,
    positions: crate::fxhash::FxHashMap<(ConnId, u64), u32>,
}

impl OpPositions {
    fn of(ops: &[Op]) -> OpPositions {
        let mut positions = crate::fxhash::FxHashMap::default();
        positions.reserve(ops.len());
        for (i, op) in ops.iter().enumerate() {
            let i = u32::try_from(i).expect("fewer than 2^32 ops");
            let previous = positions.insert((op.conn, op.seq_in_conn), i);
            debug_assert!(
                previous.is_none(),
                "two ops named conn {} request {}",
                op.conn,
                op.seq_in_conn
            );
        }
        OpPositions {
            ops_count: ops.len(),
            positions,
        }
    }
}

/// Every op by `(connection, index on the connection)`: how a checker
/// finds the op behind an execution, a reply or a message in O(1).
pub struct OpIndex<'a> {
    ops: &'a [Op],
    positions: std::borrow::Cow<'a, OpPositions>,
    /// Per execution, the position of its op, if the cache has it.
    op_of_execution: &'a [u32],
}

/// No op (in [`IndexCache::op_of_execution`]).
const NO_OP: u32 = u32::MAX;

impl<'a> OpIndex<'a> {
    /// The op named `(conn, seq_in_conn)`.
    pub fn get(&self, key: &(ConnId, u64)) -> Option<&'a Op> {
        let &i = self.positions.positions.get(key)?;
        Some(&self.ops[i as usize])
    }

    /// The op of `exec`, the execution at `index` in the history: what
    /// [`OpIndex::get`] finds for its name, read from a vector the
    /// checkers that walk the executions share (a hash lookup per
    /// execution per checker missed the cache on most). Checked against
    /// the name, so a history changed since cannot mislead it.
    pub fn of_execution(&self, index: usize, exec: &Execution) -> Option<&'a Op> {
        match self.op_of_execution.get(index) {
            // Rare (a request whose op was never recorded): asked again.
            Some(&NO_OP) => self.get(&(exec.conn, exec.seq_in_conn)),
            Some(&i) => self
                .ops
                .get(i as usize)
                .filter(|op| op.conn == exec.conn && op.seq_in_conn == exec.seq_in_conn)
                .or_else(|| self.get(&(exec.conn, exec.seq_in_conn))),
            None => self.get(&(exec.conn, exec.seq_in_conn)),
        }
    }
}

impl History {
    /// The [`OpIndex`] of this run's ops. A dozen checkers and the
    /// coverage count look ops up by name; the table is built once per
    /// history (each building its own was a tenth of the checks' CPU). A
    /// history whose ops changed since (tests push to one between checks)
    /// gets a fresh one.
    pub fn op_index(&self) -> OpIndex<'_> {
        let cached = self
            .index_cache
            .ops
            .get_or_init(|| OpPositions::of(&self.ops));
        let positions = match cached.ops_count == self.ops.len() {
            true => std::borrow::Cow::Borrowed(cached),
            false => std::borrow::Cow::Owned(OpPositions::of(&self.ops)),
        };
        let op_of_execution = match (&positions, self.index_cache.op_of_execution.get()) {
            (std::borrow::Cow::Owned(_), _) => &[][..],
            (_, Some(built)) if built.len() == self.executions.len() => built.as_slice(),
            (_, Some(_)) => &[][..],
            (std::borrow::Cow::Borrowed(positions), None) => self
                .index_cache
                .op_of_execution
                .get_or_init(|| {
                    let of = |e: &Execution| positions.positions.get(&(e.conn, e.seq_in_conn));
                    self.executions
                        .iter()
                        .map(|e| of(e).copied().unwrap_or(NO_OP))
                        .collect()
                })
                .as_slice(),
        };
        OpIndex {
            ops: &self.ops,
            positions,
            op_of_execution,
        }
    }

    /// The [`FirstExecutions`] of this run, built once per history as
    /// [`History::op_index`] is (five checkers place requests by it).
    pub fn first_executions(&self) -> std::borrow::Cow<'_, FirstExecutions> {
        let build = || {
            let mut first = FirstExecutions::default();
            first.reserve(self.executions.len());
            for (i, e) in self.executions.iter().enumerate() {
                first.entry((e.conn, e.seq_in_conn)).or_insert(i);
            }
            first
        };
        let (count, cached) = self
            .index_cache
            .first_executions
            .get_or_init(|| (self.executions.len(), build()));
        match *count == self.executions.len() {
            true => std::borrow::Cow::Borrowed(cached),
            false => std::borrow::Cow::Owned(build()),
        }
    }

    /// Every op's position in [`History::ops`], grouped by connection
    /// (ascending [`ConnId`]) and within one in recording order: what a
    /// map of per-connection lists gives, built once per history and
    /// shared (five checkers grouped the ops by connection each).
    pub fn ops_by_conn(&self) -> std::borrow::Cow<'_, [u32]> {
        match self.conn_order() {
            std::borrow::Cow::Borrowed(order) => std::borrow::Cow::Borrowed(&order.positions),
            std::borrow::Cow::Owned(order) => std::borrow::Cow::Owned(order.positions),
        }
    }

    /// Every op's position in [`History::ops`] in `(connection, request
    /// index, position)` order: each connection's requests as it sent
    /// them. The same as [`History::ops_by_conn`] unless a connection's
    /// ops were recorded out of request order.
    pub fn ops_in_conn_order(&self) -> std::borrow::Cow<'_, [u32]> {
        let order = self.conn_order();
        if order.seq_follows_recording {
            return match order {
                std::borrow::Cow::Borrowed(order) => std::borrow::Cow::Borrowed(&order.positions),
                std::borrow::Cow::Owned(order) => std::borrow::Cow::Owned(order.positions),
            };
        }
        let mut positions = order.positions.clone();
        positions.sort_by_key(|&i| {
            let op = &self.ops[i as usize];
            (op.conn, op.seq_in_conn)
        });
        std::borrow::Cow::Owned(positions)
    }

    fn conn_order(&self) -> std::borrow::Cow<'_, ConnOrder> {
        let cached = self
            .index_cache
            .conn_order
            .get_or_init(|| ConnOrder::of(&self.ops));
        match cached.positions.len() == self.ops.len() {
            true => std::borrow::Cow::Borrowed(cached),
            false => std::borrow::Cow::Owned(ConnOrder::of(&self.ops)),
        }
    }

    /// `build`'s positions of silenced ops, built once per history (the
    /// pipeline-order and liveness checkers both ask).
    pub(crate) fn silenced_cached(
        &self,
        build: impl Fn(&History) -> Vec<u32>,
    ) -> std::borrow::Cow<'_, [u32]> {
        let (count, cached) = self
            .index_cache
            .silenced
            .get_or_init(|| (self.ops.len(), build(self)));
        match *count == self.ops.len() {
            true => std::borrow::Cow::Borrowed(cached),
            false => std::borrow::Cow::Owned(build(self)),
        }
    }

    /// Whether a request whose last byte the engine got after
    /// `executions_before` executions arrived while a script was suspended
    /// between slices. The engine then keeps it in the query buffer until
    /// the script ends (or refuses it `-BUSY` past the threshold), so it
    /// did not execute or park where it was received.
    pub fn received_inside_script_run(&self, executions_before: usize) -> bool {
        self.script_runs.iter().any(|run| {
            run.executions_from <= executions_before
                && run
                    .eval_execution
                    .is_none_or(|eval| executions_before <= eval)
        })
    }
}

/// The kind of a pub/sub message, as its first element names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MessageKind {
    /// `message`: a channel subscription (SUBSCRIBE).
    Message,
    /// `pmessage`: a pattern subscription (PSUBSCRIBE).
    PMessage,
    /// `smessage`: a shard channel subscription (SSUBSCRIBE).
    SMessage,
}

/// One pub/sub message a client received: a RESP2 array in subscribed
/// mode or a RESP3 push, unsolicited (it answers no request).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    pub conn: ConnId,
    pub client: ClientIndex,
    pub at_ns: TimeNs,
    /// Index on the connection of the request whose reply comes next in
    /// the stream (the first still unanswered, or the next to be sent):
    /// the message was written before that reply.
    pub before_seq: u64,
    pub kind: MessageKind,
    /// The pattern that matched (`pmessage` only).
    pub pattern: Option<Vec<u8>>,
    pub channel: Vec<u8>,
    pub payload: Vec<u8>,
}

/// A message frame taken apart: kind, pattern (`pmessage` only), channel,
/// payload.
pub type ParsedMessage = (MessageKind, Option<Vec<u8>>, Vec<u8>, Vec<u8>);

impl Delivery {
    /// Whether the engine published it as a keyspace notification (on a
    /// `__keyspace@<db>__:` or `__keyevent@<db>__:` channel).
    pub fn is_keyspace_notification(&self) -> bool {
        self.channel.starts_with(b"__keyspace@") || self.channel.starts_with(b"__keyevent@")
    }

    /// The message a frame carries, if it is one: `[message, channel,
    /// payload]`, `[pmessage, pattern, channel, payload]` or `[smessage,
    /// channel, payload]`, as a push or (RESP2) an array. The caller knows
    /// that the connection may be subscribed (a reply array of another
    /// command could have the same shape).
    pub fn parse(frame: &Frame) -> Option<ParsedMessage> {
        let (Frame::Push(items) | Frame::Array(items)) = frame else {
            return None;
        };
        let bulk = |f: &Frame| match f {
            Frame::Bulk(b) => Some(b.clone()),
            _ => None,
        };
        let kind = bulk(items.first()?)?;
        match (kind.as_slice(), items.len()) {
            (b"message", 3) => Some((
                MessageKind::Message,
                None,
                bulk(&items[1])?,
                bulk(&items[2])?,
            )),
            (b"smessage", 3) => Some((
                MessageKind::SMessage,
                None,
                bulk(&items[1])?,
                bulk(&items[2])?,
            )),
            (b"pmessage", 4) => Some((
                MessageKind::PMessage,
                Some(bulk(&items[1])?),
                bulk(&items[2])?,
                bulk(&items[3])?,
            )),
            _ => None,
        }
    }
}

/// What the pub/sub checker needs beyond the ops and executions.
#[derive(Clone, Debug, Default)]
pub struct PubSubRecord {
    /// Every message received, in the order the world saw them.
    pub deliveries: Vec<Delivery>,
    /// Connections the engine dropped (disconnect or reset), each with
    /// `History::executions.len()` at that moment: from then on it holds
    /// no subscription, so PUBLISH no longer counts it.
    pub server_disconnects: Vec<(ConnId, usize)>,
}

/// One invalidation a tracking client received (client-side caching): a
/// RESP3 `invalidate` push. `keys` is `None` for the flush invalidation
/// (every key of the client's cache).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalidation {
    pub conn: ConnId,
    pub client: ClientIndex,
    pub at_ns: TimeNs,
    /// As [`Delivery::before_seq`]: the message was written before the
    /// reply to this request of the connection.
    pub before_seq: u64,
    pub keys: Option<Vec<Vec<u8>>>,
}

/// A read a tracking client answered from its local cache instead of
/// asking the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheServe {
    pub conn: ConnId,
    pub client: ClientIndex,
    pub at_ns: TimeNs,
    /// The connection's next request index when the read was served: every
    /// request before it had been answered, so the client had seen the
    /// effect of each.
    pub seq_next: u64,
    pub key: Vec<u8>,
    /// The value served (`None`: the key was cached as absent).
    pub value: Option<Vec<u8>>,
}

/// What the tracking checker needs beyond the ops and executions.
#[derive(Clone, Debug, Default)]
pub struct TrackingRecord {
    /// Every invalidation received, in the order the world saw them.
    pub invalidations: Vec<Invalidation>,
    /// Every read served from a client's cache, in time order.
    pub serves: Vec<CacheServe>,
}

impl Invalidation {
    /// The keys an invalidation frame names (`Some(None)` for the flush
    /// invalidation's null), if the frame is one: `>2 invalidate [keys]`.
    pub fn parse(frame: &Frame) -> Option<Option<Vec<Vec<u8>>>> {
        let Frame::Push(items) = frame else {
            return None;
        };
        if items.len() != 2 || !matches!(&items[0], Frame::Bulk(b) if b == b"invalidate") {
            return None;
        }
        match &items[1] {
            Frame::Array(keys) => keys
                .iter()
                .map(|k| match k {
                    Frame::Bulk(b) => Some(b.clone()),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()
                .map(Some),
            Frame::Null => Some(None),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ConnOrder, Op};

    fn op(conn: u64, seq_in_conn: u64) -> Op {
        Op {
            client: 0,
            conn,
            seq_in_conn,
            args: vec![b"PING".to_vec()],
            workload: "test",
            invoke_ns: 0,
            complete: None,
        }
    }

    /// The counting sort gives the positions of the sorted (connection,
    /// position) pairs, connections in any recording order.
    #[test]
    fn conn_order_is_the_sorted_pairs() {
        let mut ops = Vec::new();
        let mut seqs = [0u64; 7];
        let mut x: u64 = 12345;
        for _ in 0..500 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let c = (x >> 33) % 7;
            let conn = [90, 3, 17, 1, 1000, 5, 42][c as usize];
            ops.push(op(conn, seqs[c as usize]));
            seqs[c as usize] += 1;
        }
        let mut pairs: Vec<(u64, u32)> = ops
            .iter()
            .enumerate()
            .map(|(i, o)| (o.conn, i as u32))
            .collect();
        pairs.sort_unstable();
        let expected: Vec<u32> = pairs.into_iter().map(|(_, i)| i).collect();
        let order = ConnOrder::of(&ops);
        assert_eq!(order.positions, expected);
        assert!(order.seq_follows_recording);
        assert!(ConnOrder::of(&[]).positions.is_empty());
    }
}
