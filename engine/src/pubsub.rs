//! Pub/sub state: which clients listen to which channels and patterns.
//!
//! Pub/sub keeps nothing: a message goes to the clients subscribed at the
//! moment it is published and is then forgotten. Both tables are BTreeMaps
//! so that iteration (PUBSUB CHANNELS, pattern matching on PUBLISH) follows
//! a deterministic order; each channel's or pattern's subscribers are kept
//! in subscription order, which is the order they receive messages in, as
//! in Redis's per-channel client lists.

use std::collections::{BTreeMap, BTreeSet};

use crate::client::ClientId;

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
