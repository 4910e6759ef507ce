//! Keyspace notifications: every subscriber of the keyspace and keyevent
//! channels receives exactly the events Redis would publish, in order,
//! nothing missing, nothing extra, nothing twice.
//!
//! The checker replays the `notify` workload's writes (database
//! [`NOTIFY_DB`]) through the engine's execution order on a model of its
//! keys (existence, TTL, string value, collection members), which tells
//! what each write did and so which events it owes, in Redis's order:
//! `new` when a key is created, the command's event, `del` when a removal
//! empties a collection; `keymiss` when EXISTS reads a key the model does
//! not hold. Keys the engine removed on its own (expiry, on
//! access or in the cron; eviction) are in the history's
//! [`KeyRemoval`] records, placed in the same order: each owes `expired`
//! or `evicted`. The classes in force are those the last executed
//! `CONFIG SET notify-keyspace-events` chose.
//!
//! Every message has a place in the execution order: the events of
//! execution `i` come at `2i + 1`, a removal reported before execution
//! `i` (a cron expiry, an eviction, a lazy expiry inside it) at `2i`. A
//! subscriber whose PSUBSCRIBE executed at `p` and whose connection the
//! engine dropped at `d` is owed every message placed in `(2p + 1, 2d)`.
//! It must have received a prefix of that sequence (**exact order, no
//! extra, no duplicate**), and when it received the reply of a request
//! executed at `j`, exactly the messages placed before `2j + 1` had come
//! before it (**no loss**: the server writes one connection's output in
//! execution order).

use std::collections::{BTreeMap, BTreeSet};

use seedkv_engine::notify::{class, parse_flags};
use seedkv_engine::RemovalCause;

use super::name_buffer::NameBuffer;
use super::{Checker, RunFacts, Violation};
use crate::check::pipeline::render_args;
use crate::history::{ConnId, Delivery, History, KeyRemoval, MessageKind, Op, OpIndex};
use crate::workload::notify::{NOTIFY_DB, PATTERNS};

/// Each request's execution index (requests EXEC ran excluded), looked up
/// by `(connection, index)`, never walked.
type ExecIndex = crate::fxhash::FxHashMap<(ConnId, u64), usize>;

pub struct NotifyEvents;

const NAME: &str = "notify";

/// The workload whose writes the checker models.
const WORKLOAD: &str = "notify";

/// A key of the model: what the checker must know to tell what a write
/// did.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Held {
    Str(Vec<u8>),
    /// A list's length (pushes and pops at either end change only that).
    List(usize),
    /// Set members, hash fields or sorted-set members.
    Members(BTreeSet<Vec<u8>>),
}

#[derive(Clone, Debug)]
struct Key {
    held: Held,
    has_ttl: bool,
}

/// One event, as `notifyKeyspaceEvent` raises it.
#[derive(Clone, Debug)]
struct Event {
    class: u32,
    name: &'static str,
    key: Vec<u8>,
}

/// One message a subscriber is owed: where it sits in the execution
/// order, the pattern that matches it, its channel and payload.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Message {
    place: u64,
    pattern: &'static [u8],
    channel: Vec<u8>,
    payload: Vec<u8>,
}

impl Message {
    fn render(&self) -> String {
        format!(
            "{} -> {}",
            String::from_utf8_lossy(&self.channel),
            String::from_utf8_lossy(&self.payload)
        )
    }
}

/// The model of the workload's keys, and the classes in force.
#[derive(Default)]
struct Model {
    keys: BTreeMap<Vec<u8>, Key>,
    flags: u32,
}

impl Model {
    /// Removes `key`, returning the `del` it owes if it existed.
    fn delete(&mut self, key: &[u8], out: &mut Vec<Event>) -> bool {
        let existed = self.keys.remove(key).is_some();
        if existed {
            out.push(event(class::GENERIC, "del", key));
        }
        existed
    }

    /// The key's entry, created (raising `new`) with `fresh` if missing.
    fn entry(&mut self, key: &[u8], fresh: Held, out: &mut Vec<Event>) -> &mut Key {
        if !self.keys.contains_key(key) {
            out.push(event(class::NEW, "new", key));
        }
        // Looked up before a key is copied: most writes find theirs.
        if !self.keys.contains_key(key) {
            self.keys.insert(
                key.to_vec(),
                Key {
                    held: fresh,
                    has_ttl: false,
                },
            );
        }
        self.keys.get_mut(key).expect("just inserted")
    }

    /// The events a write owes, applying it. `args[0]` is the name.
    fn apply(&mut self, args: &[Vec<u8>], out: &mut Vec<Event>) {
        let mut name_buffer = NameBuffer::default();
        let name = name_buffer.upper(&args[0]);
        let key = args.get(1).map_or(&[][..], Vec::as_slice);
        match name {
            b"DEL" => {
                self.delete(key, out);
            }
            b"PEXPIRE" => {
                if let Some(k) = self.keys.get_mut(key) {
                    k.has_ttl = true;
                    out.push(event(class::GENERIC, "expire", key));
                }
            }
            b"PERSIST" => {
                if let Some(k) = self.keys.get_mut(key).filter(|k| k.has_ttl) {
                    k.has_ttl = false;
                    out.push(event(class::GENERIC, "persist", key));
                }
            }
            // The one read: a key the model holds no longer (never
            // created, deleted, or just expired, whose removal was placed
            // first) owes `keymiss` (class `m`), as `lookupKeyRead` raises.
            b"EXISTS" if !self.keys.contains_key(key) => {
                out.push(event(class::KEY_MISS, "keymiss", key));
            }
            b"SET" => self.set(args, out),
            b"INCRBY" => self.incrby(key, &args[2], out),
            b"APPEND" => {
                let k = self.entry(key, Held::Str(Vec::new()), out);
                if let Held::Str(v) = &mut k.held {
                    v.extend_from_slice(&args[2]);
                }
                out.push(event(class::STRING, "append", key));
            }
            b"LPUSH" => {
                let k = self.entry(key, Held::List(0), out);
                if let Held::List(n) = &mut k.held {
                    *n += args.len() - 2;
                }
                out.push(event(class::LIST, "lpush", key));
            }
            b"LPOP" | b"RPOP" => {
                let Some(Held::List(n)) = self.keys.get_mut(key).map(|k| &mut k.held) else {
                    return;
                };
                *n -= 1;
                let empty = *n == 0;
                let pop = if name == b"LPOP" { "lpop" } else { "rpop" };
                out.push(event(class::LIST, pop, key));
                if empty {
                    self.delete(key, out);
                }
            }
            b"SADD" => self.add_member(key, &args[2], (class::SET, "sadd"), out),
            b"HSET" => {
                let k = self.entry(key, Held::Members(BTreeSet::new()), out);
                if let Held::Members(m) = &mut k.held {
                    m.insert(args[2].clone());
                }
                // HSET raises its event even when it only overwrote.
                out.push(event(class::HASH, "hset", key));
            }
            b"ZADD" => self.add_member(key, &args[4], (class::ZSET, "zadd"), out),
            b"SREM" => self.remove_member(key, &args[2], (class::SET, "srem"), out),
            b"HDEL" => self.remove_member(key, &args[2], (class::HASH, "hdel"), out),
            b"ZREM" => self.remove_member(key, &args[2], (class::ZSET, "zrem"), out),
            _ => {}
        }
    }

    /// SET key value [PX ms].
    fn set(&mut self, args: &[Vec<u8>], out: &mut Vec<Event>) {
        let key = &args[1];
        let with_ttl = args.len() > 3;
        let k = self.entry(key, Held::Str(Vec::new()), out);
        k.held = Held::Str(args[2].clone());
        k.has_ttl = with_ttl;
        out.push(event(class::STRING, "set", key));
        if with_ttl {
            out.push(event(class::GENERIC, "expire", key));
        }
    }

    /// INCRBY: nothing when the value is not an integer or the sum
    /// overflows (an error reply); the key keeps its TTL.
    fn incrby(&mut self, key: &[u8], by: &[u8], out: &mut Vec<Event>) {
        let current = match self.keys.get(key).map(|k| &k.held) {
            None => Some(0),
            Some(Held::Str(v)) => parse_i64(v),
            Some(_) => None,
        };
        let Some(next) = current
            .zip(parse_i64(by))
            .and_then(|(a, b)| a.checked_add(b))
        else {
            return;
        };
        let k = self.entry(key, Held::Str(Vec::new()), out);
        k.held = Held::Str(next.to_string().into_bytes());
        out.push(event(class::STRING, "incrby", key));
    }

    /// SADD and ZADD NX of one member: an event only if it was added.
    fn add_member(
        &mut self,
        key: &[u8],
        member: &[u8],
        (class, name): (u32, &'static str),
        out: &mut Vec<Event>,
    ) {
        let k = self.entry(key, Held::Members(BTreeSet::new()), out);
        if let Held::Members(m) = &mut k.held {
            if m.insert(member.to_vec()) {
                out.push(event(class, name, key));
            }
        }
    }

    /// SREM, HDEL, ZREM of one member: the event if it was there, then
    /// `del` if that emptied the key.
    fn remove_member(
        &mut self,
        key: &[u8],
        member: &[u8],
        (class, name): (u32, &'static str),
        out: &mut Vec<Event>,
    ) {
        let Some(Held::Members(m)) = self.keys.get_mut(key).map(|k| &mut k.held) else {
            return;
        };
        if !m.remove(member) {
            return;
        }
        let empty = m.is_empty();
        out.push(event(class, name, key));
        if empty {
            self.delete(key, out);
        }
    }

    /// The messages `events` publish under the classes in force, placed
    /// at `place`: for each event, the keyspace message, then the keyevent
    /// one (the order of `notifyKeyspaceEvent`).
    fn messages(&self, events: &[Event], place: u64, out: &mut Vec<Message>) {
        for e in events {
            if self.flags & e.class == 0 {
                continue;
            }
            if self.flags & class::KEYSPACE != 0 {
                let mut channel = format!("__keyspace@{NOTIFY_DB}__:").into_bytes();
                channel.extend_from_slice(&e.key);
                out.push(Message {
                    place,
                    pattern: PATTERNS[0],
                    channel,
                    payload: e.name.as_bytes().to_vec(),
                });
            }
            if self.flags & class::KEYEVENT != 0 {
                out.push(Message {
                    place,
                    pattern: PATTERNS[1],
                    channel: format!("__keyevent@{NOTIFY_DB}__:{}", e.name).into_bytes(),
                    payload: e.key.clone(),
                });
            }
        }
    }
}

fn event(class: u32, name: &'static str, key: &[u8]) -> Event {
    Event {
        class,
        name,
        key: key.to_vec(),
    }
}

fn parse_i64(bytes: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(bytes).ok()?;
    // Redis's `string2ll`: no sign but '-', no leading zeros or spaces.
    if text.starts_with('+') || (text.len() > 1 && text.starts_with('0')) {
        return None;
    }
    if text.starts_with("-0") {
        return None;
    }
    text.parse().ok()
}

/// Whether `op` (executed) set `notify-keyspace-events`, and to what: a
/// value that parses is accepted, whether or not its reply arrived.
fn flags_set(op: &Op) -> Option<u32> {
    let [config, set, param, value] = op.args.as_slice() else {
        return None;
    };
    (config.eq_ignore_ascii_case(b"CONFIG")
        && set.eq_ignore_ascii_case(b"SET")
        && param.eq_ignore_ascii_case(b"notify-keyspace-events"))
    .then(|| parse_flags(value))
    .flatten()
}

/// A key the engine removed on its own owes `expired` or `evicted`.
fn remove(model: &mut Model, r: &KeyRemoval, owed: &mut Vec<Message>) {
    if r.db != NOTIFY_DB {
        return;
    }
    model.keys.remove(&r.key);
    let e = match r.cause {
        RemovalCause::Evicted => event(class::EVICTED, "evicted", &r.key),
        RemovalCause::ExpiredInCron | RemovalCause::ExpiredOnAccess => {
            event(class::EXPIRED, "expired", &r.key)
        }
    };
    model.messages(&[e], 2 * r.executions_before as u64, owed);
}

/// Every message of the run, in execution order, as the model owes them.
fn owed_messages(history: &History, ops: &OpIndex<'_>) -> Vec<Message> {
    let mut model = Model::default();
    let mut removals = history.key_removals.iter().peekable();
    let mut owed = Vec::new();
    let mut events = Vec::new();
    for (i, exec) in history.executions.iter().enumerate() {
        while let Some(r) = removals.next_if(|r| r.executions_before <= i) {
            remove(&mut model, r, &mut owed);
        }
        let Some(op) = ops.of_execution(i, exec) else {
            continue;
        };
        if exec.name.is_empty() {
            continue;
        }
        if let Some(flags) = flags_set(op) {
            model.flags = flags;
            continue;
        }
        if op.workload != WORKLOAD {
            continue;
        }
        events.clear();
        model.apply(&op.args, &mut events);
        model.messages(&events, 2 * i as u64 + 1, &mut owed);
    }
    for r in removals {
        remove(&mut model, r, &mut owed);
    }
    owed
}

/// A subscriber connection: where its PSUBSCRIBE executed, and where the
/// engine dropped it (`usize::MAX`: never).
struct Subscriber {
    conn: ConnId,
    subscribed_at: usize,
    dropped_at: usize,
}

fn subscribers(history: &History, exec_index: &ExecIndex) -> Vec<Subscriber> {
    let dropped: BTreeMap<ConnId, usize> = history
        .pubsub
        .server_disconnects
        .iter()
        .map(|&(conn, at)| (conn, at))
        .collect();
    // A connection's first PSUBSCRIBE subscribes it; later ones are
    // heartbeats of patterns it holds.
    let mut first: BTreeMap<ConnId, usize> = BTreeMap::new();
    for op in &history.ops {
        if op.workload != WORKLOAD || !op.args[0].eq_ignore_ascii_case(b"PSUBSCRIBE") {
            continue;
        }
        if let Some(&at) = exec_index.get(&(op.conn, op.seq_in_conn)) {
            let slot = first.entry(op.conn).or_insert(at);
            *slot = (*slot).min(at);
        }
    }
    first
        .into_iter()
        .map(|(conn, at)| Subscriber {
            conn,
            subscribed_at: at,
            dropped_at: dropped.get(&conn).copied().unwrap_or(usize::MAX),
        })
        .collect()
}

fn violation(message: String) -> Result<(), Violation> {
    Err(Violation {
        checker: NAME,
        message,
    })
}

/// One subscriber's messages against what it was owed.
fn check_subscriber(
    history: &History,
    s: &Subscriber,
    owed: &[Message],
    exec_index: &ExecIndex,
) -> Result<(), Violation> {
    let from = 2 * s.subscribed_at as u64 + 1;
    let to = (s.dropped_at as u64).saturating_mul(2);
    // A removal reported at the moment the engine dropped the connection
    // (`2d`) may have come before or after the drop: its messages may
    // close the stream, or not.
    let owed: Vec<&Message> = owed
        .iter()
        .filter(|m| m.place > from && m.place <= to)
        .collect();

    let got: Vec<&Delivery> = history
        .pubsub
        .deliveries
        .iter()
        .filter(|d| d.conn == s.conn && d.is_keyspace_notification())
        .collect();
    for (j, d) in got.iter().enumerate() {
        let matches = owed.get(j).is_some_and(|m| {
            d.kind == MessageKind::PMessage
                && d.pattern.as_deref() == Some(m.pattern)
                && d.channel == m.channel
                && d.payload == m.payload
        });
        if !matches {
            let wanted = owed
                .get(j)
                .map_or("nothing more".to_string(), |m| m.render());
            let context: Vec<String> = owed
                .iter()
                .skip(j.saturating_sub(2))
                .take(5)
                .map(|m| m.render())
                .collect();
            return violation(format!(
                "conn {} message #{j} at {} ns was {} -> {}, but the writes owed {wanted} \
                 (owed around it: [{}])",
                s.conn,
                d.at_ns,
                String::from_utf8_lossy(&d.channel),
                String::from_utf8_lossy(&d.payload),
                context.join(", ")
            ));
        }
    }
    // No loss: each reply came after exactly the messages placed before
    // its request's execution. Counted by binary search over sorted
    // copies (a count per reply over every message was quadratic).
    let mut owed_places: Vec<u64> = owed.iter().map(|m| m.place).collect();
    owed_places.sort_unstable();
    let mut got_before_seqs: Vec<u64> = got.iter().map(|d| d.before_seq).collect();
    got_before_seqs.sort_unstable();
    for op in history.ops.iter().filter(|op| op.conn == s.conn) {
        let (Some(_), Some(&j)) = (&op.complete, exec_index.get(&(op.conn, op.seq_in_conn))) else {
            continue;
        };
        if j <= s.subscribed_at {
            continue;
        }
        let place = 2 * j as u64 + 1;
        let owed_before = owed_places.partition_point(|&p| p < place);
        let got_before = got_before_seqs.partition_point(|&b| b <= op.seq_in_conn);
        if got_before != owed_before {
            let missing = owed.get(got_before).map_or(String::new(), |m| m.render());
            return violation(format!(
                "conn {} had {got_before} keyspace messages before the reply to `{}` \
                 (execution #{j}), but {owed_before} were published before it; first \
                 missing: {missing}",
                s.conn,
                render_args(&op.args)
            ));
        }
    }
    Ok(())
}

impl Checker for NotifyEvents {
    fn name(&self) -> &'static str {
        NAME
    }

    fn check(&self, history: &History, _facts: &RunFacts) -> Result<(), Violation> {
        if history.executions.is_empty() || !history.ops.iter().any(|op| op.workload == WORKLOAD) {
            return Ok(());
        }
        let ops = history.op_index();
        let exec_index: ExecIndex = history
            .executions
            .iter()
            .enumerate()
            .filter(|(_, e)| e.in_exec.is_none())
            .map(|(i, e)| ((e.conn, e.seq_in_conn), i))
            .collect();
        let owed = owed_messages(history, &ops);
        for s in subscribers(history, &exec_index) {
            check_subscriber(history, &s, &owed, &exec_index)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
