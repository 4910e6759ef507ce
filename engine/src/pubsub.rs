//! Pub/sub state: which clients listen to which channels and patterns.
//!
//! Pub/sub keeps nothing: a message goes to the clients subscribed at the
//! moment it is published and is then forgotten. Both tables are BTreeMaps
//! so that iteration (PUBSUB CHANNELS, pattern matching on PUBLISH) follows
//! a deterministic order; each channel's or pattern's subscribers are kept
//! in subscription order, which is the order they receive messages in, as
//! in Redis's per-channel client lists.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

use crate::client::ClientId;
use crate::clients::Clients;
use crate::glob::{self, glob_match};
use crate::resp::{Protocol, ReplyWriter};

/// One client's subscriptions.
///
/// Channels are a set (Redis keeps a dict, so UNSUBSCRIBE without arguments
/// goes in an unspecified order; we take name order). Patterns are a list
/// in subscription order, as Redis 7.0 keeps them, so PUNSUBSCRIBE without
/// arguments goes in that order.
#[derive(Debug, Default)]
pub struct Subscriptions {
    pub channels: BTreeSet<Vec<u8>>,
    pub patterns: Vec<Vec<u8>>,
    /// Shard channels (SSUBSCRIBE): a namespace of their own, counted
    /// apart in confirmations, as in Redis 7.0.
    pub shard_channels: BTreeSet<Vec<u8>>,
}

impl Subscriptions {
    /// Redis's `clientSubscriptionsCount`: the count subscribe and
    /// unsubscribe confirmations report.
    pub fn count(&self) -> usize {
        self.channels.len() + self.patterns.len()
    }

    /// Redis's `clientShardSubscriptionsCount`: the count shard
    /// confirmations report.
    pub fn shard_count(&self) -> usize {
        self.shard_channels.len()
    }

    /// No subscription of any kind: the client is not in subscribed mode
    /// (Redis's CLIENT_PUBSUB flag covers shard channels too).
    pub fn is_empty(&self) -> bool {
        self.count() == 0 && self.shard_count() == 0
    }
}

/// The server's subscription tables.
#[derive(Debug, Default)]
pub struct PubSub {
    /// Channel -> subscribers, in subscription order. Never holds an empty
    /// list: the channel is removed with its last subscriber.
    channels: BTreeMap<Vec<u8>, Vec<ClientId>>,
    /// Pattern -> subscribers, in subscription order. Never empty lists.
    patterns: BTreeMap<Vec<u8>, Vec<ClientId>>,
    /// Shard channel -> subscribers (SSUBSCRIBE), apart from `channels`:
    /// PUBLISH never reaches them, nor SPUBLISH the others.
    shard_channels: BTreeMap<Vec<u8>, Vec<ClientId>>,
    /// Clients given output by PUBLISH since the engine last looked, each
    /// with whether its output was empty before (then, and only then, the
    /// engine queues it for transmission). The engine drains it after every
    /// command and checks each receiver's output buffer limits.
    pub delivered: Vec<(ClientId, bool)>,
    /// Where keyspace notifications write their channel names
    /// (`notify::publish_event`), kept to spare an allocation per event;
    /// what it holds between events means nothing.
    pub(crate) channel_scratch: Vec<u8>,
}

impl PubSub {
    /// Adds `client` to `channel`'s subscribers. The caller checked that it
    /// was not subscribed.
    pub fn subscribe(&mut self, client: ClientId, channel: &[u8]) {
        let subscribers = self.channels.entry(channel.to_vec()).or_default();
        debug_assert!(!subscribers.contains(&client));
        subscribers.push(client);
    }

    /// Removes `client` from `channel`'s subscribers, and the channel with
    /// its last subscriber.
    pub fn unsubscribe(&mut self, client: ClientId, channel: &[u8]) {
        remove_subscriber(&mut self.channels, client, channel);
    }

    pub fn psubscribe(&mut self, client: ClientId, pattern: &[u8]) {
        let subscribers = self.patterns.entry(pattern.to_vec()).or_default();
        debug_assert!(!subscribers.contains(&client));
        subscribers.push(client);
    }

    pub fn punsubscribe(&mut self, client: ClientId, pattern: &[u8]) {
        remove_subscriber(&mut self.patterns, client, pattern);
    }

    pub fn ssubscribe(&mut self, client: ClientId, channel: &[u8]) {
        let subscribers = self.shard_channels.entry(channel.to_vec()).or_default();
        debug_assert!(!subscribers.contains(&client));
        subscribers.push(client);
    }

    pub fn sunsubscribe(&mut self, client: ClientId, channel: &[u8]) {
        remove_subscriber(&mut self.shard_channels, client, channel);
    }

    /// Subscribers of shard channel `channel`, in subscription order.
    pub fn shard_subscribers(&self, channel: &[u8]) -> &[ClientId] {
        self.shard_channels.get(channel).map_or(&[], Vec::as_slice)
    }

    /// Shard channels with at least one subscriber, in name order.
    pub fn shard_channels(&self) -> impl Iterator<Item = &[u8]> {
        self.shard_channels.keys().map(Vec::as_slice)
    }

    /// Drops every subscription of a client that disconnects or resets.
    pub fn remove_client(&mut self, client: ClientId, subscriptions: &mut Subscriptions) {
        for channel in std::mem::take(&mut subscriptions.channels) {
            self.unsubscribe(client, &channel);
        }
        for pattern in std::mem::take(&mut subscriptions.patterns) {
            self.punsubscribe(client, &pattern);
        }
        for channel in std::mem::take(&mut subscriptions.shard_channels) {
            self.sunsubscribe(client, &channel);
        }
    }

    /// Subscribers of `channel`, in subscription order.
    pub fn channel_subscribers(&self, channel: &[u8]) -> &[ClientId] {
        self.channels.get(channel).map_or(&[], Vec::as_slice)
    }

    /// Channels with at least one subscriber, in name order.
    pub fn channels(&self) -> impl Iterator<Item = &[u8]> {
        self.channels.keys().map(Vec::as_slice)
    }

    /// Patterns with their subscribers, in pattern order.
    pub fn patterns(&self) -> impl Iterator<Item = (&[u8], &[ClientId])> {
        self.patterns
            .iter()
            .map(|(p, subs)| (p.as_slice(), subs.as_slice()))
    }

    /// Whether a PUBLISH to a channel starting with `prefix` could reach
    /// anyone: a pattern is subscribed, or a channel with that prefix.
    /// Keyspace notifications ask it before they build channel names.
    pub fn may_reach(&self, prefix: &[u8]) -> bool {
        if !self.patterns.is_empty() {
            return true;
        }
        let from = (Bound::Included(prefix), Bound::Unbounded);
        self.channels
            .range::<[u8], _>(from)
            .next()
            .is_some_and(|(channel, _)| channel.starts_with(prefix))
    }

    /// Channels with at least one subscriber (INFO `pubsub_channels`).
    pub fn channels_count(&self) -> usize {
        self.channels.len()
    }

    /// Shard channels with at least one subscriber (INFO
    /// `pubsubshard_channels`).
    pub fn shard_channels_count(&self) -> usize {
        self.shard_channels.len()
    }

    /// Patterns with at least one subscriber (PUBSUB NUMPAT, INFO
    /// `pubsub_patterns`: Redis 7.0 counts distinct patterns).
    pub fn patterns_count(&self) -> usize {
        self.patterns.len()
    }
}

/// The client whose command publishes, if any: its messages go into the
/// reply being built (ahead of the reply itself, as in Redis 7.0) rather
/// than its output buffer. The cron and eviction publish without one.
pub(crate) struct Caller<'a> {
    pub id: ClientId,
    pub reply: &'a mut Vec<u8>,
    pub protocol: Protocol,
    /// The command runs inside a script or function, whose reply buffer
    /// is the script's (in the script's protocol): the caller's messages
    /// wait in its held pushes, in its own protocol, and join the EVAL's
    /// reply when `redis.call` returns (see `scripting::call`), ahead of
    /// the EVAL's own reply as in Redis, where a script publishes through
    /// a fake client.
    pub in_script: bool,
}

/// The caller of the command run with `ctx` (see [`Caller`]).
macro_rules! caller_of {
    ($ctx:expr) => {
        $crate::pubsub::Caller {
            id: $ctx.client_id,
            reply: &mut $ctx.reply,
            protocol: $ctx.protocol,
            in_script: $ctx.in_script,
        }
    };
}
pub(crate) use caller_of;

impl Caller<'_> {
    /// The same caller for one more publish.
    pub(crate) fn reborrow(&mut self) -> Caller<'_> {
        Caller {
            id: self.id,
            reply: &mut *self.reply,
            protocol: self.protocol,
            in_script: self.in_script,
        }
    }
}

/// Delivers `(channel, message)` to the channel's subscribers, then to the
/// subscribers of each matching pattern (patterns in name order, each
/// pattern's subscribers in subscription order), and returns how many
/// deliveries were made (a client subscribed to the channel and to a
/// matching pattern counts twice, as in Redis). The first channel
/// subscriber gets `first_copies` copies (1 but under a planted bug). Adds
/// the work done to `work_units`: one unit per delivery and per pattern
/// visited, plus the matcher's steps. PUBLISH and keyspace notifications
/// both publish through here, so they cost the same.
pub(crate) fn publish(
    pubsub: &mut PubSub,
    clients: &mut Clients,
    mut caller: Option<Caller>,
    (channel, message): (&[u8], &[u8]),
    first_copies: usize,
    work_units: &mut u64,
) -> usize {
    // The tables are only read and `delivered` only written while
    // delivering, so both are borrowed apart rather than copied: no
    // allocation per publish. The work units add up to the same total as
    // counting every pattern before any pattern delivery.
    let PubSub {
        channels,
        patterns,
        delivered,
        ..
    } = pubsub;
    let mut receivers = 0;
    let subscribers = channels.get(channel).map_or(&[][..], Vec::as_slice);
    for (i, &id) in subscribers.iter().enumerate() {
        *work_units += 1;
        receivers += 1;
        let copies = if i == 0 { first_copies } else { 1 };
        for _ in 0..copies {
            deliver(delivered, clients, caller.as_mut(), id, |w| {
                w.push_len(3);
                w.bulk_str("message");
                w.bulk(channel);
                w.bulk(message);
            });
        }
    }
    let mut patterns_visited = 0;
    let mut glob_steps = 0;
    for (pattern, subscribers) in patterns.iter() {
        patterns_visited += 1;
        if !glob_match(pattern, channel, false, &mut glob_steps) {
            continue;
        }
        for &id in subscribers {
            *work_units += 1;
            receivers += 1;
            deliver(delivered, clients, caller.as_mut(), id, |w| {
                w.push_len(4);
                w.bulk_str("pmessage");
                w.bulk(pattern);
                w.bulk(channel);
                w.bulk(message);
            });
        }
    }
    *work_units += patterns_visited + glob::work_units(glob_steps);
    receivers
}

/// Writes a message to `id`'s output in its protocol. The caller's
/// messages land in the reply being built. Another client is recorded in
/// `delivered`, with whether its output was empty before, so that the
/// engine queues it for transmission once and checks its limits.
pub(crate) fn deliver(
    delivered: &mut Vec<(ClientId, bool)>,
    clients: &mut Clients,
    caller: Option<&mut Caller>,
    id: ClientId,
    write: impl FnOnce(&mut ReplyWriter),
) {
    if let Some(caller) = caller.filter(|c| c.id == id) {
        // Under CLIENT REPLY OFF or SKIP the caller's own messages wait in
        // its held pushes rather than in a reply that will be dropped; in
        // a script, until `redis.call` returns.
        let held = clients
            .get_mut(&id)
            .filter(|c| caller.in_script || c.reply_mode.suppressed())
            .map(|c| (&mut c.held_pushes, c.protocol));
        let (out, protocol) = held.unwrap_or((caller.reply, caller.protocol));
        write(&mut ReplyWriter::new(out, protocol));
        return;
    }
    let Some(c) = clients.get_mut(&id) else {
        debug_assert!(false, "a subscriber is connected");
        return;
    };
    if c.closing.is_some() {
        // Closed over its output limit (or killed): it will never read this.
        return;
    }
    let was_idle = c.pending_output().is_empty();
    write(&mut ReplyWriter::new(&mut c.output, c.protocol));
    delivered.push((id, was_idle));
}

fn remove_subscriber(table: &mut BTreeMap<Vec<u8>, Vec<ClientId>>, client: ClientId, name: &[u8]) {
    let Some(subscribers) = table.get_mut(name) else {
        debug_assert!(false, "unsubscribing from an unknown channel");
        return;
    };
    subscribers.retain(|&c| c != client);
    if subscribers.is_empty() {
        table.remove(name);
    }
}
