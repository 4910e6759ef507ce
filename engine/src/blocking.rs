//! Blocking commands (BLPOP, BLMOVE, BZPOPMIN...): clients parked on keys
//! until a write makes one of them ready or their timeout passes.
//!
//! A handler that finds nothing to serve and [`crate::cmd::Ctx::may_block`]
//! calls [`crate::cmd::Ctx::block_on_keys`] instead of replying. Writes that
//! can serve a blocked client call [`crate::cmd::Ctx::signal_key_ready`]
//! ([`crate::cmd::Ctx::store`] does it for every stored value). After the
//! command, the engine re-runs the blocked clients' commands on the ready
//! keys in FIFO order with blocking disallowed; a re-run that replies
//! unblocks its client.
//!
//! This follows Redis 7.0's blocked.c:
//!
//! - a blocked client's later pipelined requests stay in its query buffer,
//!   unparsed, until it is unblocked (served, timed out, CLIENT UNBLOCK);
//! - each key has a FIFO queue of the clients blocked on it, and the client
//!   that blocked first is served first; a client that cannot be served (the
//!   key holds another type, a BLMPOP whose count cannot be met...) stays in
//!   place, in front of later ones;
//! - a key is served only by a value of the type its waiters wait for: a
//!   `SET` over a key that a BLPOP waits on leaves the BLPOP blocked (Redis
//!   7.2 changed this to a WRONGTYPE reply; 7.0 waits);
//! - ready keys are served in the order they were signalled, after every
//!   command, and serving may signal more keys (BLMOVE pushes into its
//!   destination), which are served in the next round of the same pass.
//!
//! The state here is the index (who waits on which key, who times out
//! when); what each client waits with (its arguments, deadline and timeout
//! reply) lives in [`crate::client::Client::blocked`]. Both are changed only
//! through [`Blocking::park`] and [`Blocking::unpark`], which keep them
//! consistent.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::client::{Client, ClientId};
use crate::cmd::CommandSpec;
use crate::resp::Protocol;

/// What a blocked command replies when its timeout passes.
///
/// Redis 7.0.15 replies `*-1` to every timed-out command, BLMOVE and
/// BRPOPLPUSH included (its `replyToBlockedClientTimedOut` sends a null
/// array for lists, sorted sets and streams alike; checked against
/// redis-server), so handlers should pass [`TimeoutReply::NullArray`].
/// Without blocking (inside MULTI), BLMOVE replies a null bulk (`$-1`),
/// which is what `NullBulk` encodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutReply {
    /// `*-1` in RESP2, `_` in RESP3 (BLPOP, BZPOPMIN, BLMPOP, BLMOVE...).
    NullArray,
    /// `$-1` in RESP2, `_` in RESP3.
    NullBulk,
}

impl TimeoutReply {
    /// The encoded reply in `protocol`.
    pub fn encoded(self, protocol: Protocol) -> &'static [u8] {
        match (protocol, self) {
            (Protocol::Resp3, _) => b"_\r\n",
            (Protocol::Resp2, TimeoutReply::NullArray) => b"*-1\r\n",
            (Protocol::Resp2, TimeoutReply::NullBulk) => b"$-1\r\n",
        }
    }
}

/// Whether `reply` is a null of any shape (`*-1`, `$-1`, `_`): what a
/// blocking command replies when it is re-run and still has nothing to
/// serve, in which case its client stays blocked.
pub fn is_null_reply(reply: &[u8]) -> bool {
    matches!(reply, b"*-1\r\n" | b"$-1\r\n" | b"_\r\n")
}

/// A handler's request to park its client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockRequest {
    pub keys: Vec<Vec<u8>>,
    /// Relative timeout in milliseconds; 0 blocks forever.
    pub timeout_ms: u64,
    pub on_timeout: TimeoutReply,
    /// The arguments to run again when served, if not the request's own
    /// (XREAD BLOCK replaces `$` with the ID it stood for).
    pub rerun_args: Option<Vec<Vec<u8>>>,
}

/// What a blocked client waits with, kept on its [`Client`].
#[derive(Debug)]
pub struct Blocked {
    /// The blocked request, re-run when one of `keys` is ready.
    pub spec: &'static CommandSpec,
    pub args: Vec<Vec<u8>>,
    /// The database the keys are in (the client's at the time it blocked;
    /// a blocked client runs nothing else, so it cannot change).
    pub db: usize,
    /// Distinct keys, in the order the command named them.
    pub keys: Vec<Vec<u8>>,
    /// Monotonic deadline; `None` blocks forever.
    pub deadline_ns: Option<u64>,
    pub on_timeout: TimeoutReply,
    /// The request's index on its connection (for `Event::Executed`).
    pub request_seq: u64,
    /// Work done by the attempts so far (the first one, and re-runs that
    /// found nothing), reported once with the reply that unblocks it.
    pub work_units: u64,
    /// Stopwatch time of those attempts (see [`crate::stopwatch`]), also
    /// reported once.
    pub elapsed_ns: u64,
    /// Attempts whose work `work_units` holds (for the execution record's
    /// [`crate::sizes::Sizes::runs`]).
    pub runs: u64,
}

impl Blocked {
    /// The value type a key must hold to serve this command: Redis 7.0
    /// serves list waiters from lists and sorted-set waiters from sorted
    /// sets only. `None` (a command of neither family) accepts any value.
    pub fn wanted_type(&self) -> Option<&'static str> {
        let categories = self.spec.acl_categories;
        if self.spec.name == "xreadgroup" {
            // Served whatever the key holds now: a stream that went away
            // ends it with an error (Redis's `signalDeletedKeyAsReady`).
            None
        } else if categories.contains(&"stream") {
            Some("stream")
        } else if categories.contains(&"sortedset") {
            Some("zset")
        } else if categories.contains(&"list") {
            Some("list")
        } else {
            None
        }
    }

    /// Bytes of arguments held (CLIENT LIST `argv-mem`).
    pub fn args_bytes(&self) -> usize {
        self.args.iter().map(Vec::len).sum()
    }
}

/// Upper bound on the keys one blocked command may wait on; more is a bug
/// in a handler, not something input can reach (requests have at most
/// `proto-max-multibulk-len` arguments).
pub const BLOCKED_KEYS_MAX: usize = 1024 * 1024;

/// The blocked clients and the keys signalled ready since the last serve.
#[derive(Debug, Default)]
pub struct Blocking {
    /// Per database, per key: the clients blocked on it, first blocked
    /// first. A key with no waiter has no entry (so `signal` is a miss).
    waiting: BTreeMap<usize, BTreeMap<Vec<u8>, VecDeque<ClientId>>>,
    /// Blocked clients with a timeout, by deadline (Redis's
    /// `clients_timeout_table`).
    deadlines: BTreeSet<(u64, ClientId)>,
    /// Keys (database, key) written since the last serve that some client
    /// is blocked on, in signal order, each once.
    pub ready: Vec<(usize, Vec<u8>)>,
    ready_set: BTreeSet<(usize, Vec<u8>)>,
    /// Clients blocked now (INFO `blocked_clients`).
    blocked_count: usize,
    /// Clients unblocked since the engine last ran their pipelined input.
    unblocked: VecDeque<ClientId>,
}

impl Blocking {
    /// Notes that `key` in database `db` may now serve blocked clients.
    /// Runs on every store, so it is a cheap miss when nobody waits.
    pub fn signal(&mut self, db: usize, key: &[u8]) {
        if self.blocked_count == 0 {
            return;
        }
        let waited = self
            .waiting
            .get(&db)
            .is_some_and(|keys| keys.contains_key(key));
        if !waited {
            return;
        }
        let entry = (db, key.to_vec());
        if !self.ready_set.contains(&entry) {
            self.ready_set.insert(entry.clone());
            self.ready.push(entry);
        }
    }

    /// Signals every key of `db` that a client waits on (SWAPDB brings a
    /// whole new keyspace under the waiters; serving checks which keys
    /// exist and hold the right type).
    pub fn signal_db(&mut self, db: usize) {
        let keys: Vec<Vec<u8>> = match self.waiting.get(&db) {
            Some(keys) => keys.keys().cloned().collect(),
            None => return,
        };
        for key in keys {
            self.signal(db, &key);
        }
    }

    /// Takes the keys signalled since the last call, in signal order.
    pub fn take_ready(&mut self) -> Vec<(usize, Vec<u8>)> {
        self.ready_set.clear();
        std::mem::take(&mut self.ready)
    }

    pub fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    /// The clients blocked on `key` in `db`, first blocked first.
    pub fn waiters(&self, db: usize, key: &[u8]) -> Vec<ClientId> {
        self.waiting
            .get(&db)
            .and_then(|keys| keys.get(key))
            .map(|q| q.iter().copied().collect())
            .unwrap_or_default()
    }

    /// Queues `client`, just unblocked with a reply, for the engine to send
    /// its output and run its pipelined requests.
    pub fn push_unblocked(&mut self, client: ClientId) {
        self.unblocked.push_back(client);
    }

    pub fn pop_unblocked(&mut self) -> Option<ClientId> {
        self.unblocked.pop_front()
    }

    /// Clients blocked now (INFO `blocked_clients`).
    pub fn blocked_count(&self) -> usize {
        self.blocked_count
    }

    /// Keys some client is blocked on, over all databases.
    pub fn blocking_keys_count(&self) -> usize {
        self.waiting.values().map(BTreeMap::len).sum()
    }

    /// Blocked clients with a timeout (INFO `clients_in_timeout_table`).
    pub fn timeouts_count(&self) -> usize {
        self.deadlines.len()
    }

    /// The earliest deadline of a blocked client, if any.
    pub fn next_deadline_ns(&self) -> Option<u64> {
        self.deadlines.first().map(|&(ns, _)| ns)
    }

    /// The first blocked client whose deadline is at or before `now_ns`.
    pub fn first_expired(&self, now_ns: u64) -> Option<ClientId> {
        self.deadlines
            .first()
            .filter(|&&(ns, _)| ns <= now_ns)
            .map(|&(_, id)| id)
    }

    /// Per database, per key, the queue of waiters (for
    /// [`crate::invariants`]).
    pub(crate) fn waiting_index(&self) -> &BTreeMap<usize, BTreeMap<Vec<u8>, VecDeque<ClientId>>> {
        &self.waiting
    }

    /// The timeout table (for [`crate::invariants`]).
    pub(crate) fn deadline_index(&self) -> &BTreeSet<(u64, ClientId)> {
        &self.deadlines
    }

    /// The set mirroring [`Blocking::ready`] (for [`crate::invariants`]).
    pub(crate) fn ready_index(&self) -> &BTreeSet<(usize, Vec<u8>)> {
        &self.ready_set
    }

    /// A key's queue, created if missing: lets invariant tests corrupt it.
    #[cfg(test)]
    pub(crate) fn queue_mut(&mut self, db: usize, key: &[u8]) -> &mut VecDeque<ClientId> {
        self.waiting
            .entry(db)
            .or_default()
            .entry(key.to_vec())
            .or_default()
    }

    /// Parks `client` (which must not be blocked already) with `blocked`:
    /// it joins the end of each key's queue and, with a deadline, the
    /// timeout table.
    pub fn park(&mut self, client: &mut Client, blocked: Blocked) {
        assert!(client.blocked.is_none(), "client blocked twice");
        assert!(!blocked.keys.is_empty(), "blocking on no key");
        assert!(blocked.keys.len() <= BLOCKED_KEYS_MAX);
        let keys = self.waiting.entry(blocked.db).or_default();
        for key in &blocked.keys {
            let queue = keys.entry(key.clone()).or_default();
            debug_assert!(!queue.contains(&client.id), "keys are distinct");
            queue.push_back(client.id);
        }
        if let Some(ns) = blocked.deadline_ns {
            self.deadlines.insert((ns, client.id));
        }
        self.blocked_count += 1;
        client.blocked = Some(Box::new(blocked));
    }

    /// Unparks `client` if it is blocked: it leaves every queue and the
    /// timeout table. Returns what it was blocked with, for the caller to
    /// reply (or not, for a client going away).
    pub fn unpark(&mut self, client: &mut Client) -> Option<Box<Blocked>> {
        let blocked = client.blocked.take()?;
        let id = client.id;
        if let Some(keys) = self.waiting.get_mut(&blocked.db) {
            for key in &blocked.keys {
                if let Some(queue) = keys.get_mut(key.as_slice()) {
                    let before = queue.len();
                    queue.retain(|&c| c != id);
                    debug_assert_eq!(queue.len() + 1, before, "queued once per key");
                    if queue.is_empty() {
                        keys.remove(key.as_slice());
                    }
                }
            }
            if keys.is_empty() {
                self.waiting.remove(&blocked.db);
            }
        }
        if let Some(ns) = blocked.deadline_ns {
            let removed = self.deadlines.remove(&(ns, id));
            debug_assert!(removed, "deadline was in the table");
        }
        assert!(self.blocked_count > 0);
        self.blocked_count -= 1;
        if self.blocked_count == 0 {
            debug_assert!(self.waiting.is_empty() && self.deadlines.is_empty());
            // Nobody can be served any more: drop stale signals.
            self.ready.clear();
            self.ready_set.clear();
        }
        Some(blocked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Now;
    use crate::ConnectInfo;

    static SPEC: CommandSpec = CommandSpec {
        name: "blpop",
        acl_categories: &["write", "list", "slow", "blocking"],
        ..CommandSpec::DEFAULT
    };

    fn client(id: u64) -> Client {
        Client::new(ClientId(id), ConnectInfo::default(), Now::default(), true)
    }

    fn blocked(keys: &[&str], deadline_ns: Option<u64>) -> Blocked {
        Blocked {
            spec: &SPEC,
            args: Vec::new(),
            db: 0,
            keys: keys.iter().map(|k| k.as_bytes().to_vec()).collect(),
            deadline_ns,
            on_timeout: TimeoutReply::NullArray,
            request_seq: 0,
            work_units: 1,
            elapsed_ns: 0,
            runs: 1,
        }
    }

    #[test]
    fn signal_is_a_miss_without_waiters() {
        let mut b = Blocking::default();
        b.signal(0, b"k");
        assert!(!b.has_ready());
        let mut c = client(1);
        b.park(&mut c, blocked(&["k"], None));
        b.signal(1, b"k");
        b.signal(0, b"other");
        assert!(!b.has_ready());
        b.signal(0, b"k");
        b.signal(0, b"k");
        assert_eq!(b.take_ready(), vec![(0, b"k".to_vec())]);
        assert!(!b.has_ready());
    }

    #[test]
    fn park_and_unpark_keep_queues_and_deadlines_consistent() {
        let mut b = Blocking::default();
        let (mut c1, mut c2) = (client(1), client(2));
        b.park(&mut c1, blocked(&["a", "b"], Some(50)));
        b.park(&mut c2, blocked(&["b"], None));
        assert_eq!(b.waiters(0, b"b"), [ClientId(1), ClientId(2)]);
        assert_eq!(b.blocked_count(), 2);
        assert_eq!(b.blocking_keys_count(), 2);
        assert_eq!(b.next_deadline_ns(), Some(50));
        assert_eq!(b.first_expired(49), None);
        assert_eq!(b.first_expired(50), Some(ClientId(1)));
        assert_eq!(b.wanted_type_of(&c1), Some("list"));
        assert!(b.unpark(&mut c1).is_some());
        assert!(b.unpark(&mut c1).is_none());
        assert_eq!(b.waiters(0, b"a"), []);
        assert_eq!(b.waiters(0, b"b"), [ClientId(2)]);
        assert_eq!(b.next_deadline_ns(), None);
        b.signal(0, b"b");
        assert!(b.unpark(&mut c2).is_some());
        assert!(!b.has_ready(), "stale signals dropped with the last waiter");
        assert_eq!(b.blocked_count(), 0);
    }

    impl Blocking {
        fn wanted_type_of(&self, c: &Client) -> Option<&'static str> {
            c.blocked.as_ref().and_then(|b| b.wanted_type())
        }
    }

    #[test]
    fn timeout_replies() {
        assert_eq!(TimeoutReply::NullArray.encoded(Protocol::Resp2), b"*-1\r\n");
        assert_eq!(TimeoutReply::NullBulk.encoded(Protocol::Resp2), b"$-1\r\n");
        assert_eq!(TimeoutReply::NullBulk.encoded(Protocol::Resp3), b"_\r\n");
        assert!(is_null_reply(b"_\r\n"));
        assert!(!is_null_reply(b"*0\r\n"));
    }
}
