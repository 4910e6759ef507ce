//! Pub/sub delivery: pub/sub keeps nothing, and delivers each message once
//! to whoever is subscribed when it is published.
//!
//! A *target* is one subscription of one connection: a channel
//! (`message`), a pattern (`pmessage`) or a shard channel (`smessage`).
//! For each PUBLISH/SPUBLISH (payloads are unique in a run, see
//! `workload::pubsub`):
//!
//! - **nothing unsubscribed**: a message reaches only targets subscribed
//!   when it was published, so nothing is replayed to a new connection
//!   and nothing reaches a connection after it unsubscribed;
//! - **exactly once**: no target gets a message twice;
//! - **no loss**: a target subscribed when the message was published, and
//!   still subscribed when its connection received the reply of a request
//!   that executed after the publish, got the message before that reply
//!   (the server writes one connection's output in execution order);
//! - **order**: each target gets its messages in publish order;
//! - **count**: PUBLISH replies the number of targets it reached.
//!
//! Where the engine's execution order is recorded (the simulator), "when"
//! is exact: subscriptions are replayed through it, with the moments the
//! engine dropped connections (`History::pubsub`). Over a real socket
//! (no executions), client-side intervals bound it conservatively: a
//! subscription confirmed before the publish was sent must deliver, one
//! begun after the publish was answered (or ended before it was sent) must
//! not; the receiver count is then not checked.
//!
//! A pure function of the history, so it can judge any recorded run.

use std::collections::{BTreeMap, BTreeSet};

use super::model::redis_c::stringmatchlen;
use seedkv_engine::resp::Frame;

use super::{Checker, RunFacts, Violation};
use crate::check::pipeline::render_args;
use crate::fxhash::{FxHashMap, FxHashSet};
use crate::history::{ConnId, Delivery, History, MessageKind, Op};

mod requests;
use requests::ConnRequests;

pub struct PubSubDelivery;

const NAME: &str = "pubsub";

/// One subscription of one connection. Borrows its name from the
/// history: the checker keys sets and maps by targets per delivery, and
/// an owned copy of each name was a third of its cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Target<'a> {
    pub conn: ConnId,
    pub kind: MessageKind,
    /// The channel, pattern or shard channel.
    pub name: &'a [u8],
}

impl<'a> Target<'a> {
    fn of(d: &'a Delivery) -> Target<'a> {
        let name = match d.kind {
            MessageKind::PMessage => d.pattern.as_deref().unwrap_or_default(),
            _ => d.channel.as_slice(),
        };
        Target {
            conn: d.conn,
            kind: d.kind,
            name,
        }
    }

    fn render(&self) -> String {
        let kind = match self.kind {
            MessageKind::Message => "channel",
            MessageKind::PMessage => "pattern",
            MessageKind::SMessage => "shard channel",
        };
        format!(
            "conn {} {kind} {}",
            self.conn,
            String::from_utf8_lossy(self.name)
        )
    }
}

/// One PUBLISH or SPUBLISH.
struct Publish<'a> {
    op: &'a Op,
    shard: bool,
    channel: &'a [u8],
    /// Its index in the execution order, if the engine executed it.
    exec: Option<usize>,
    /// Targets subscribed when it executed (execution order known), in
    /// [`Target`] order.
    receivers: Vec<Target<'a>>,
}

/// Every PUBLISH and SPUBLISH of a run, in payload order, found by
/// payload through a hash table (a tree lookup per delivery compared
/// payloads byte by byte down its depth).
struct Publishes<'a> {
    list: Vec<(&'a [u8], Publish<'a>)>,
    by_payload: FxHashMap<&'a [u8], usize>,
}

impl<'a> Publishes<'a> {
    /// `None` when two publishes share a payload (payloads are unique by
    /// construction; a repeat is someone else's workload, not ours to
    /// judge).
    fn of(mut list: Vec<(&'a [u8], Publish<'a>)>) -> Option<Publishes<'a>> {
        list.sort_by(|a, b| a.0.cmp(b.0));
        if list.windows(2).any(|w| w[0].0 == w[1].0) {
            return None;
        }
        let by_payload = list
            .iter()
            .enumerate()
            .map(|(i, (payload, _))| (*payload, i))
            .collect();
        Some(Publishes { list, by_payload })
    }

    fn get(&self, payload: &[u8]) -> Option<&Publish<'a>> {
        let &i = self.by_payload.get(payload)?;
        Some(&self.list[i].1)
    }

    fn get_mut(&mut self, payload: &[u8]) -> Option<&mut Publish<'a>> {
        let &i = self.by_payload.get(payload)?;
        Some(&mut self.list[i].1)
    }

    fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// In payload order.
    fn iter(&self) -> impl Iterator<Item = (&&'a [u8], &Publish<'a>)> {
        self.list.iter().map(|(payload, p)| (payload, p))
    }
}

fn violation(message: String) -> Result<(), Violation> {
    Err(Violation {
        checker: NAME,
        message,
    })
}

/// The subscription kind a subscribe-family command changes, and whether
/// it subscribes.
fn subscription_command(name: &[u8]) -> Option<(MessageKind, bool)> {
    // Compared in place: every executed request comes here.
    const COMMANDS: [(&[u8], (MessageKind, bool)); 6] = [
        (b"SUBSCRIBE", (MessageKind::Message, true)),
        (b"UNSUBSCRIBE", (MessageKind::Message, false)),
        (b"PSUBSCRIBE", (MessageKind::PMessage, true)),
        (b"PUNSUBSCRIBE", (MessageKind::PMessage, false)),
        (b"SSUBSCRIBE", (MessageKind::SMessage, true)),
        (b"SUNSUBSCRIBE", (MessageKind::SMessage, false)),
    ];
    COMMANDS
        .iter()
        .find(|(command, _)| name.eq_ignore_ascii_case(command))
        .map(|&(_, what)| what)
}

/// Whether `op` publishes, and on a shard channel.
fn publish_command(op: &Op) -> Option<bool> {
    if op.args.len() != 3 {
        return None;
    }
    let name = &op.args[0];
    match () {
        _ if name.eq_ignore_ascii_case(b"PUBLISH") => Some(false),
        _ if name.eq_ignore_ascii_case(b"SPUBLISH") => Some(true),
        _ => None,
    }
}

/// Whether a message of a publish (`shard`, `channel`) reaches `target`'s
/// kind of subscription named `name`.
fn reaches(shard: bool, channel: &[u8], kind: MessageKind, name: &[u8]) -> bool {
    match kind {
        MessageKind::Message => !shard && name == channel,
        MessageKind::PMessage => !shard && stringmatchlen(name, channel),
        MessageKind::SMessage => shard && name == channel,
    }
}

impl Checker for PubSubDelivery {
    fn name(&self) -> &'static str {
        NAME
    }

    fn check(&self, history: &History, _facts: &RunFacts) -> Result<(), Violation> {
        let mut list = Vec::new();
        for op in &history.ops {
            let Some(shard) = publish_command(op) else {
                continue;
            };
            let publish = Publish {
                op,
                shard,
                channel: &op.args[1],
                exec: None,
                receivers: Vec::new(),
            };
            list.push((op.args[2].as_slice(), publish));
        }
        let Some(mut publishes) = Publishes::of(list) else {
            return Ok(());
        };
        if publishes.is_empty() {
            return Ok(());
        }
        if history.executions.is_empty() {
            let ops: BTreeMap<(ConnId, u64), &Op> = history
                .ops
                .iter()
                .map(|op| ((op.conn, op.seq_in_conn), op))
                .collect();
            return by_client_intervals(history, &publishes, &ops);
        }
        by_execution_order(history, &mut publishes)?;
        check_deliveries(history, &publishes, |p| p.exec.map(|e| e as u64))?;
        check_no_loss(history, &publishes, &history.op_index())
    }
}

/// Replays subscriptions through the execution order: each publish's
/// receivers and its reply.
fn by_execution_order<'a>(
    history: &'a History,
    publishes: &mut Publishes<'a>,
) -> Result<(), Violation> {
    let ops = history.op_index();
    // Names borrowed from the requests; iterated in (conn, kind, name)
    // order, so each publish's receivers come out in `Target` order.
    let mut held: BTreeMap<ConnId, BTreeSet<(MessageKind, &[u8])>> = BTreeMap::new();
    let mut disconnects = history.pubsub.server_disconnects.iter().peekable();
    for (index, exec) in history.executions.iter().enumerate() {
        while let Some(&&(conn, _)) = disconnects.peek().filter(|(_, at)| *at <= index) {
            held.remove(&conn);
            disconnects.next();
        }
        let Some(op) = ops.of_execution(index, exec) else {
            continue;
        };
        if exec.name.is_empty() {
            continue;
        }
        if let Some((kind, subscribe)) = subscription_command(&op.args[0]) {
            let set = held.entry(op.conn).or_default();
            let names = &op.args[1..];
            if subscribe {
                set.extend(names.iter().map(|n| (kind, n.as_slice())));
            } else if names.is_empty() {
                set.retain(|(k, _)| *k != kind);
            } else {
                for n in names {
                    set.remove(&(kind, n.as_slice()));
                }
            }
            continue;
        }
        if publish_command(op).is_none() {
            continue;
        }
        let Some(p) = publishes.get_mut(op.args[2].as_slice()) else {
            continue;
        };
        p.exec = Some(index);
        for (&conn, set) in &held {
            for (kind, name) in set {
                if reaches(p.shard, p.channel, *kind, name) {
                    p.receivers.push(Target {
                        conn,
                        kind: *kind,
                        name,
                    });
                }
            }
        }
        if let Some((_, reply)) = &op.complete {
            let expected = p.receivers.len() as i64;
            if *reply != Frame::Integer(expected) {
                return violation(format!(
                    "execution #{index} `{}` (conn {} request {}) replied {} but {expected} \
                     subscription(s) held it then: {}",
                    render_args(&op.args),
                    op.conn,
                    op.seq_in_conn,
                    crate::world::frame_summary(reply),
                    render_targets(&p.receivers)
                ));
            }
        }
    }
    Ok(())
}

/// The deliveries of PUBLISH and SPUBLISH: keyspace notifications are the
/// `notify` checker's to judge.
fn published_deliveries(history: &History) -> impl Iterator<Item = &Delivery> {
    history
        .pubsub
        .deliveries
        .iter()
        .filter(|d| !d.is_keyspace_notification())
}

fn render_targets(targets: &[Target]) -> String {
    let v: Vec<String> = targets.iter().take(8).map(Target::render).collect();
    format!("[{}]", v.join(", "))
}

/// The rules every delivery obeys on its own: it was published, to a
/// subscription it reaches, once, in order. `order_of` gives a publish's
/// place in publish order (None: never executed).
fn check_deliveries(
    history: &History,
    publishes: &Publishes,
    order_of: impl Fn(&Publish) -> Option<u64>,
) -> Result<(), Violation> {
    let mut seen: FxHashSet<(&[u8], Target)> = FxHashSet::default();
    let mut last: FxHashMap<Target, (u64, &[u8])> = FxHashMap::default();
    for d in published_deliveries(history) {
        let target = Target::of(d);
        // Rendered only for a violation.
        let what = || {
            format!(
                "{} at {} ns got {:?} on {}",
                target.render(),
                d.at_ns,
                String::from_utf8_lossy(&d.payload),
                String::from_utf8_lossy(&d.channel)
            )
        };
        let Some(p) = publishes.get(d.payload.as_slice()) else {
            return violation(format!("{}: no such message was ever published", what()));
        };
        if p.channel != d.channel.as_slice()
            || !reaches(p.shard, p.channel, target.kind, target.name)
        {
            return violation(format!(
                "{}: it was published by `{}`",
                what(),
                render_args(&p.op.args)
            ));
        }
        let Some(order) = order_of(p) else {
            return violation(format!(
                "{}: its `{}` never executed",
                what(),
                render_args(&p.op.args)
            ));
        };
        if p.exec.is_some() && p.receivers.binary_search(&target).is_err() {
            return violation(format!(
                "{}: not subscribed when `{}` executed (execution #{order}): delivered \
                 to a connection that was not listening, or replayed",
                what(),
                render_args(&p.op.args)
            ));
        }
        if !seen.insert((&d.payload, target)) {
            return violation(format!("{}: delivered twice", what()));
        }
        if let Some(&(prev, prev_payload)) = last.get(&target) {
            if prev >= order {
                return violation(format!(
                    "{}: after {:?}, which was published later",
                    what(),
                    String::from_utf8_lossy(prev_payload)
                ));
            }
        }
        last.insert(target, (order, &d.payload));
    }
    Ok(())
}

/// Requests of each connection in execution order: (execution index,
/// request index). Looked up by connection, never walked in order.
fn executions_by_conn(history: &History) -> FxHashMap<ConnId, Vec<(usize, u64)>> {
    let mut by_conn: FxHashMap<ConnId, Vec<(usize, u64)>> = FxHashMap::default();
    for (index, e) in history.executions.iter().enumerate() {
        by_conn
            .entry(e.conn)
            .or_default()
            .push((index, e.seq_in_conn));
    }
    by_conn
}

/// Where each (payload, target) was delivered: the request whose reply
/// came next.
fn delivered_before(history: &History) -> FxHashMap<(&[u8], Target<'_>), u64> {
    let mut at = FxHashMap::default();
    for d in published_deliveries(history) {
        at.entry((d.payload.as_slice(), Target::of(d)))
            .or_insert(d.before_seq);
    }
    at
}

/// No loss, by execution order: a receiver whose connection answered a
/// request executed after the publish got the message before that answer.
fn check_no_loss(
    history: &History,
    publishes: &Publishes,
    ops: &crate::history::OpIndex,
) -> Result<(), Violation> {
    let by_conn = executions_by_conn(history);
    let delivered = delivered_before(history);
    for (payload, p) in publishes.iter() {
        let Some(exec) = p.exec else { continue };
        for target in &p.receivers {
            let Some(execs) = by_conn.get(&target.conn) else {
                continue;
            };
            let first_after = execs.partition_point(|&(e, _)| e <= exec);
            let Some(&(later_exec, later_seq)) = execs.get(first_after) else {
                continue;
            };
            let answered = ops
                .get(&(target.conn, later_seq))
                .is_some_and(|op| op.complete.is_some());
            if !answered {
                continue;
            }
            let got = delivered.get(&(*payload, *target));
            if got.is_none_or(|&before| before > later_seq) {
                return violation(format!(
                    "{} lost {:?} (`{}`, execution #{exec}): subscribed then, and request \
                     #{later_seq} (execution #{later_exec}) was answered {}",
                    target.render(),
                    String::from_utf8_lossy(payload),
                    render_args(&p.op.args),
                    match got {
                        None => "without the message ever arriving".to_string(),
                        Some(b) => format!("before it (it came before request #{b})"),
                    }
                ));
            }
        }
    }
    Ok(())
}

/// One subscription change on a connection, from the client's view.
struct Change<'a> {
    op: &'a Op,
    kind: MessageKind,
    subscribe: bool,
}

impl Change<'_> {
    /// Whether it adds or drops `target`'s subscription.
    fn touches(&self, target: &Target) -> bool {
        self.kind == target.kind
            && (self.op.args.len() == 1 || self.op.args[1..].iter().any(|a| a == target.name))
    }
}

/// The conservative checks when only client-side times are known.
fn by_client_intervals(
    history: &History,
    publishes: &Publishes,
    ops: &BTreeMap<(ConnId, u64), &Op>,
) -> Result<(), Violation> {
    let mut changes: BTreeMap<ConnId, Vec<Change>> = BTreeMap::new();
    for op in &history.ops {
        if let Some((kind, subscribe)) = subscription_command(&op.args[0]) {
            changes.entry(op.conn).or_default().push(Change {
                op,
                kind,
                subscribe,
            });
        }
    }
    // Publish order per publisher: the sequence number in `<client>:<seq>`.
    let seq_of = |p: &Publish| -> Option<u64> {
        let payload = std::str::from_utf8(&p.op.args[2]).ok()?;
        payload.rsplit_once(':')?.1.parse().ok()
    };
    let empty = Vec::new();
    for d in published_deliveries(history) {
        let Some(p) = publishes.get(d.payload.as_slice()) else {
            continue;
        };
        let target = Target::of(d);
        let end_ns = p.op.complete.as_ref().map_or(u64::MAX, |(t, _)| *t);
        let conn_changes = changes.get(&d.conn).unwrap_or(&empty);
        let possible = conn_changes.iter().any(|s| {
            s.subscribe
                && s.touches(&target)
                && s.op.invoke_ns <= end_ns
                && !conn_changes.iter().any(|u| {
                    !u.subscribe
                        && u.touches(&target)
                        && u.op.seq_in_conn > s.op.seq_in_conn
                        && u.op
                            .complete
                            .as_ref()
                            .is_some_and(|(t, _)| *t < p.op.invoke_ns)
                })
        });
        if !possible {
            return violation(format!(
                "{} got {:?} (`{}`) though no subscription of it can have been active \
                 between {} and {} ns",
                target.render(),
                String::from_utf8_lossy(&d.payload),
                render_args(&p.op.args),
                p.op.invoke_ns,
                end_ns
            ));
        }
    }
    // Exactly once, and per publisher in its sequence order (a publisher
    // keeps one order across its connections: it reconnects only when
    // nothing is in flight).
    let mut seen: BTreeSet<(&[u8], Target)> = BTreeSet::new();
    let mut last: BTreeMap<(Target, &[u8]), u64> = BTreeMap::new();
    for d in published_deliveries(history) {
        let target = Target::of(d);
        if !seen.insert((&d.payload, target)) {
            return violation(format!(
                "{} got {:?} twice",
                target.render(),
                String::from_utf8_lossy(&d.payload)
            ));
        }
        let Some(p) = publishes.get(d.payload.as_slice()) else {
            return violation(format!(
                "{} got {:?}: no such message was ever published",
                target.render(),
                String::from_utf8_lossy(&d.payload)
            ));
        };
        let Some((publisher, _)) = std::str::from_utf8(&d.payload)
            .ok()
            .and_then(|s| s.rsplit_once(':'))
        else {
            continue;
        };
        if let Some(seq) = seq_of(p) {
            let key = (target, publisher.as_bytes());
            if last.get(&key).is_some_and(|&prev| prev >= seq) {
                return violation(format!(
                    "{} got {:?} after a later message of the same publisher",
                    target.render(),
                    String::from_utf8_lossy(&d.payload)
                ));
            }
            last.insert(key, seq);
        }
    }
    // No loss: confirmed before the publish was sent, and a request sent
    // after its reply was answered, with no unsubscribe of it in between.
    let delivered = delivered_before(history);
    let requests = ConnRequests::index(ops);
    for (payload, p) in publishes.iter() {
        let Some((published_ns, _)) = &p.op.complete else {
            continue;
        };
        for (&conn, conn_changes) in &changes {
            for s in conn_changes {
                let confirmed =
                    s.op.complete
                        .as_ref()
                        .is_some_and(|(t, _)| *t < p.op.invoke_ns);
                if !s.subscribe || !confirmed {
                    continue;
                }
                for name in &s.op.args[1..] {
                    let target = Target {
                        conn,
                        kind: s.kind,
                        name,
                    };
                    if !reaches(p.shard, p.channel, s.kind, name) {
                        continue;
                    }
                    let later = requests
                        .get(&conn)
                        .and_then(|r| r.first_sent_after(s.op.seq_in_conn, *published_ns));
                    let Some(later) = later.filter(|op| op.complete.is_some()) else {
                        continue;
                    };
                    let dropped = conn_changes.iter().any(|u| {
                        !u.subscribe
                            && u.touches(&target)
                            && u.op.seq_in_conn > s.op.seq_in_conn
                            && u.op.seq_in_conn < later.seq_in_conn
                    });
                    if dropped {
                        continue;
                    }
                    let got = delivered.get(&(*payload, target));
                    if got.is_none_or(|&before| before > later.seq_in_conn) {
                        return violation(format!(
                            "{} lost {:?} (`{}`): confirmed before it was sent, and request \
                             #{} sent after its reply was answered",
                            target.render(),
                            String::from_utf8_lossy(payload),
                            render_args(&p.op.args),
                            later.seq_in_conn
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
