//! Pub/sub: publishers of sequence-numbered messages and subscribers that
//! come and go, for `check::pubsub`.
//!
//! A client's role follows its index (`client % 4`), so any four
//! consecutive pub/sub clients hold every role, and a run shrunk to two
//! clients still has a publisher and a subscriber:
//!
//! - 0: a RESP2 **publisher**: PUBLISH and SPUBLISH of `<client>:<seq>`
//!   (unique in the run: `seq` never restarts) on a few channels.
//! - 1 and 3: RESP2 **subscribers** in subscribed mode: SUBSCRIBE,
//!   PSUBSCRIBE and SSUBSCRIBE, and their unsubscribes, with and without
//!   arguments. A SUBSCRIBE of a channel already held is their heartbeat:
//!   each reply after a publish proves that its messages were written
//!   before, which is what lets the checker require them.
//! - 2: a RESP3 subscriber (HELLO 3 first on each connection) whose
//!   messages arrive as pushes between replies, and which publishes too
//!   (its own messages arrive ahead of its PUBLISH's reply).
//!
//! Subscriptions live with the connection: after a reset or a disconnect
//! the client starts over with none, and nothing is replayed to it.

use std::collections::BTreeSet;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{Request, Workload, WorkloadKind};
use crate::history::Delivery;

/// Channels `chan:0 ..` and shard channels `shard:0 ..`.
pub const CHANNELS_COUNT: u32 = 3;
pub const SHARD_CHANNELS_COUNT: u32 = 2;
/// Patterns: every channel, two of them, and one that also matches a
/// PUBLISH (not an SPUBLISH) to `shard:1`.
pub const PATTERNS: &[&[u8]] = &[b"chan:*", b"chan:[02]", b"*:1"];
/// Longest pause between batches of a publisher and of a subscriber.
pub const PUBLISHER_THINK_NS_MAX: u64 = 400_000;
pub const SUBSCRIBER_THINK_NS_MAX: u64 = 600_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Publisher,
    Subscriber,
    Resp3Subscriber,
}

/// What the server holds for this client's current connection, as the
/// requests sent so far leave it (only this connection changes it).
#[derive(Debug, Default)]
struct Held {
    channels: BTreeSet<Vec<u8>>,
    patterns: BTreeSet<Vec<u8>>,
    shard_channels: BTreeSet<Vec<u8>>,
}

pub struct PubSub {
    client: u32,
    role: Role,
    /// Next message's sequence number (never reused).
    seq_next: u64,
    held: Held,
    /// The RESP3 subscriber has sent HELLO 3 on this connection.
    hello_sent: bool,
    /// Messages received, for the trace of a run (the checker reads the
    /// history, not this).
    pub messages_count: u64,
}

fn channel(rng: &mut ChaCha8Rng) -> Vec<u8> {
    format!("chan:{}", rng.gen_range(0..CHANNELS_COUNT)).into_bytes()
}

fn shard_channel(rng: &mut ChaCha8Rng) -> Vec<u8> {
    format!("shard:{}", rng.gen_range(0..SHARD_CHANNELS_COUNT)).into_bytes()
}

fn pattern(rng: &mut ChaCha8Rng) -> Vec<u8> {
    PATTERNS[rng.gen_range(0..PATTERNS.len())].to_vec()
}

impl PubSub {
    pub fn new(client: u32) -> PubSub {
        let role = match client % 4 {
            0 => Role::Publisher,
            2 => Role::Resp3Subscriber,
            _ => Role::Subscriber,
        };
        PubSub {
            client,
            role,
            seq_next: 0,
            held: Held::default(),
            hello_sent: false,
            messages_count: 0,
        }
    }

    fn payload(&mut self) -> Vec<u8> {
        let p = format!("{}:{}", self.client, self.seq_next).into_bytes();
        self.seq_next += 1;
        p
    }

    fn publish(&mut self, rng: &mut ChaCha8Rng) -> Request {
        match rng.gen_range(0..100) {
            0..=69 => vec![b"PUBLISH".to_vec(), channel(rng), self.payload()],
            70..=89 => vec![b"SPUBLISH".to_vec(), shard_channel(rng), self.payload()],
            // No channel subscriber; the `*:1` pattern may match.
            _ => vec![b"PUBLISH".to_vec(), shard_channel(rng), self.payload()],
        }
    }

    fn subscription_change(rng: &mut ChaCha8Rng) -> Request {
        let few = |rng: &mut ChaCha8Rng, name: &[u8], of: fn(&mut ChaCha8Rng) -> Vec<u8>| {
            let mut r = vec![name.to_vec()];
            for _ in 0..rng.gen_range(1..=3) {
                r.push(of(rng));
            }
            r
        };
        match rng.gen_range(0..100) {
            0..=44 => few(rng, b"SUBSCRIBE", channel),
            45..=56 => vec![b"UNSUBSCRIBE".to_vec(), channel(rng)],
            57..=59 => vec![b"UNSUBSCRIBE".to_vec()],
            60..=71 => few(rng, b"PSUBSCRIBE", pattern),
            72..=78 => vec![b"PUNSUBSCRIBE".to_vec(), pattern(rng)],
            79..=80 => vec![b"PUNSUBSCRIBE".to_vec()],
            81..=92 => few(rng, b"SSUBSCRIBE", shard_channel),
            93..=98 => vec![b"SUNSUBSCRIBE".to_vec(), shard_channel(rng)],
            _ => vec![b"SUNSUBSCRIBE".to_vec()],
        }
    }
}

/// Applies a subscribe-family request to `set` and returns how many
/// confirmations answer it: one per argument, or without arguments one
/// per subscription dropped (one with a nil name if there was none).
fn apply(set: &mut BTreeSet<Vec<u8>>, request: &Request, subscribe: bool) -> usize {
    let names = &request[1..];
    if subscribe {
        set.extend(names.iter().cloned());
        return names.len();
    }
    if names.is_empty() {
        let dropped = set.len();
        set.clear();
        return dropped.max(1);
    }
    for name in names {
        set.remove(name);
    }
    names.len()
}

/// How many frames answer `request` on a connection holding `held` (and
/// what it holds after): subscribe-family commands are answered by one
/// confirmation per channel, everything else by one reply.
fn confirmations(held: &mut Held, request: &Request) -> usize {
    let name = request[0].to_ascii_uppercase();
    match name.as_slice() {
        b"SUBSCRIBE" => apply(&mut held.channels, request, true),
        b"UNSUBSCRIBE" => apply(&mut held.channels, request, false),
        b"PSUBSCRIBE" => apply(&mut held.patterns, request, true),
        b"PUNSUBSCRIBE" => apply(&mut held.patterns, request, false),
        b"SSUBSCRIBE" => apply(&mut held.shard_channels, request, true),
        b"SUNSUBSCRIBE" => apply(&mut held.shard_channels, request, false),
        _ => 1,
    }
}

impl Workload for PubSub {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::PubSub
    }

    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        match self.role {
            Role::Publisher => {
                for _ in 0..rng.gen_range(1..=4) {
                    let r = self.publish(rng);
                    batch.push(r);
                }
                if rng.gen_bool(0.05) {
                    let mut r = vec![b"PUBSUB".to_vec(), b"NUMSUB".to_vec()];
                    r.push(channel(rng));
                    batch.push(r);
                }
            }
            Role::Subscriber | Role::Resp3Subscriber => {
                if self.role == Role::Resp3Subscriber && !self.hello_sent {
                    batch.push(vec![b"HELLO".to_vec(), b"3".to_vec()]);
                    self.hello_sent = true;
                }
                for _ in 0..rng.gen_range(1..=2) {
                    batch.push(Self::subscription_change(rng));
                }
                if self.role == Role::Resp3Subscriber && rng.gen_bool(0.3) {
                    let r = self.publish(rng);
                    batch.push(r);
                }
            }
        }
    }

    fn reply_frames(&mut self, request: &Request) -> usize {
        confirmations(&mut self.held, request)
    }

    fn takes_messages(&self) -> bool {
        self.role != Role::Publisher
    }

    fn on_message(&mut self, _delivery: &Delivery) {
        self.messages_count += 1;
    }

    fn on_connect(&mut self) {
        self.held = Held::default();
        self.hello_sent = false;
    }

    fn think_ns(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        match self.role {
            Role::Publisher => rng.gen_range(0..=PUBLISHER_THINK_NS_MAX),
            _ => rng.gen_range(0..=SUBSCRIBER_THINK_NS_MAX),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::request;

    #[test]
    fn confirmations_follow_what_the_connection_holds() {
        let mut held = Held::default();
        let mut n = |r: &[&[u8]]| confirmations(&mut held, &request(r));
        assert_eq!(n(&[b"UNSUBSCRIBE"]), 1, "nil confirmation");
        assert_eq!(n(&[b"SUBSCRIBE", b"a", b"b", b"a"]), 3);
        assert_eq!(n(&[b"SSUBSCRIBE", b"s"]), 1);
        assert_eq!(n(&[b"UNSUBSCRIBE"]), 2, "one per channel held");
        assert_eq!(n(&[b"UNSUBSCRIBE"]), 1);
        assert_eq!(n(&[b"SUNSUBSCRIBE", b"x", b"y"]), 2);
        assert_eq!(n(&[b"SUNSUBSCRIBE"]), 1);
        assert_eq!(n(&[b"PUBLISH", b"a", b"m"]), 1);
    }

    #[test]
    fn roles_cycle_and_payloads_are_unique() {
        let roles: Vec<Role> = (0..4).map(|i| PubSub::new(i).role).collect();
        assert_eq!(
            roles,
            [
                Role::Publisher,
                Role::Subscriber,
                Role::Resp3Subscriber,
                Role::Subscriber
            ]
        );
        let mut p = PubSub::new(4);
        assert_eq!(p.payload(), b"4:0");
        p.on_connect();
        assert_eq!(p.payload(), b"4:1");
    }
}
