//! Pub/sub commands: SUBSCRIBE UNSUBSCRIBE PSUBSCRIBE PUNSUBSCRIBE PUBLISH
//! SSUBSCRIBE SUNSUBSCRIBE SPUBLISH PUBSUB (CHANNELS NUMSUB NUMPAT
//! SHARDCHANNELS SHARDNUMSUB HELP).
//!
//! Shard channels are Redis 7.0's cluster-scoped channels; outside cluster
//! mode (always, here) they are one more namespace on this server: SPUBLISH
//! reaches only SSUBSCRIBE subscribers (never patterns), and their
//! confirmations count shard subscriptions only.
//!
//! Confirmations and messages are push frames (`>` in RESP3, plain arrays
//! in RESP2). A RESP2 client with subscriptions may run only the commands
//! [`allowed_while_subscribed`] names; a RESP3 client may run anything, its
//! messages interleaving with its replies. The subscription tables live in
//! [`crate::pubsub`]; the engine queues receivers for transmission and
//! checks their output buffer limits after each command.

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::commands::config::help_reply;
use crate::glob::{self, glob_match};

#[cfg(test)]
mod spec_tests;

const PUBSUB_SPEC: CommandSpec = CommandSpec {
    flags: PUBSUB | NOSCRIPT | LOADING | STALE,
    acl_categories: &["pubsub", "slow"],
    group: "pubsub",
    since: "2.0.0",
    ..CommandSpec::DEFAULT
};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "subscribe",
        arity: -2,
        summary: "Listen for messages published to the given channels",
        complexity: "O(N) where N is the number of channels to subscribe to.",
        handler: Some(subscribe),
        ..PUBSUB_SPEC
    },
    CommandSpec {
        name: "unsubscribe",
        arity: -1,
        summary: "Stop listening for messages posted to the given channels",
        complexity: "O(N) where N is the number of clients already subscribed to a channel.",
        handler: Some(unsubscribe),
        ..PUBSUB_SPEC
    },
    CommandSpec {
        name: "psubscribe",
        arity: -2,
        summary: "Listen for messages published to channels matching the given patterns",
        complexity: "O(N) where N is the number of patterns the client is already subscribed to.",
        handler: Some(psubscribe),
        ..PUBSUB_SPEC
    },
    CommandSpec {
        name: "punsubscribe",
        arity: -1,
        summary: "Stop listening for messages posted to channels matching the given patterns",
        complexity: "O(N+M) where N is the number of patterns the client is already subscribed \
                     and M is the number of total patterns subscribed in the system (by any client).",
        handler: Some(punsubscribe),
        ..PUBSUB_SPEC
    },
    CommandSpec {
        name: "publish",
        arity: 3,
        flags: PUBSUB | LOADING | STALE | FAST,
        acl_categories: &["pubsub", "fast"],
        summary: "Post a message to a channel",
        complexity: "O(N+M) where N is the number of clients subscribed to the receiving \
                     channel and M is the total number of subscribed patterns (by any client).",
        handler: Some(publish),
        ..PUBSUB_SPEC
    },
    CommandSpec {
        name: "ssubscribe",
        arity: -2,
        first_key: 1,
        last_key: -1,
        key_step: 1,
        key_spec_flags: &["not_key"],
        summary: "Listen for messages published to the given shard channels",
        since: "7.0.0",
        complexity: "O(N) where N is the number of shard channels to subscribe to.",
        handler: Some(ssubscribe),
        ..PUBSUB_SPEC
    },
    CommandSpec {
        name: "sunsubscribe",
        arity: -1,
        first_key: 1,
        last_key: -1,
        key_step: 1,
        key_spec_flags: &["not_key"],
        summary: "Stop listening for messages posted to the given shard channels",
        since: "7.0.0",
        complexity: "O(N) where N is the number of clients already subscribed to a shard channel.",
        handler: Some(sunsubscribe),
        ..PUBSUB_SPEC
    },
    CommandSpec {
        name: "spublish",
        arity: 3,
        flags: PUBSUB | LOADING | STALE | FAST,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        key_spec_flags: &["not_key"],
        acl_categories: &["pubsub", "fast"],
        summary: "Post a message to a shard channel",
        since: "7.0.0",
        complexity: "O(N) where N is the number of clients subscribed to the receiving shard channel.",
        handler: Some(spublish),
        ..PUBSUB_SPEC
    },
    CommandSpec {
        name: "pubsub",
        arity: -2,
        flags: 0,
        acl_categories: &["slow"],
        summary: "A container for Pub/Sub commands",
        since: "2.8.0",
        complexity: "Depends on subcommand.",
        subcommands: PUBSUB_SUBCOMMANDS,
        ..PUBSUB_SPEC
    },
];

const PUBSUB_SUB: CommandSpec = CommandSpec {
    arity: -2,
    flags: PUBSUB | LOADING | STALE,
    since: "2.8.0",
    ..PUBSUB_SPEC
};

const PUBSUB_SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "pubsub|channels",
        flags: PUBSUB | LOADING | STALE | O_N,
        summary: "List active channels",
        complexity: "O(N) where N is the number of active channels, and assuming constant time \
                     pattern matching (relatively short channels and patterns)",
        handler: Some(pubsub_channels),
        ..PUBSUB_SUB
    },
    CommandSpec {
        name: "pubsub|numsub",
        summary: "Get the count of subscribers for channels",
        complexity: "O(N) for the NUMSUB subcommand, where N is the number of requested channels",
        handler: Some(pubsub_numsub),
        ..PUBSUB_SUB
    },
    CommandSpec {
        name: "pubsub|numpat",
        arity: 2,
        summary: "Get the count of unique patterns pattern subscriptions",
        complexity: "O(1)",
        handler: Some(pubsub_numpat),
        ..PUBSUB_SUB
    },
    CommandSpec {
        name: "pubsub|shardchannels",
        summary: "List active shard channels",
        since: "7.0.0",
        complexity: "O(N) where N is the number of active shard channels, and assuming constant \
                     time pattern matching (relatively short shard channels).",
        handler: Some(pubsub_shardchannels),
        ..PUBSUB_SUB
    },
    CommandSpec {
        name: "pubsub|shardnumsub",
        summary: "Get the count of subscribers for shard channels",
        since: "7.0.0",
        complexity: "O(N) for the SHARDNUMSUB subcommand, where N is the number of requested \
                     shard channels",
        handler: Some(pubsub_shardnumsub),
        ..PUBSUB_SUB
    },
    CommandSpec {
        name: "pubsub|help",
        arity: 2,
        flags: LOADING | STALE,
        acl_categories: &["slow"],
        summary: "Show helpful text about the different subcommands",
        since: "6.2.0",
        handler: Some(pubsub_help),
        ..PUBSUB_SUB
    },
];

/// The commands a RESP2 client may run while subscribed (Redis's check in
/// processCommand); every other command gets [`not_allowed_while_subscribed`].
pub fn allowed_while_subscribed(name: &str) -> bool {
    matches!(
        name,
        "subscribe"
            | "unsubscribe"
            | "psubscribe"
            | "punsubscribe"
            | "ssubscribe"
            | "sunsubscribe"
            | "ping"
            | "quit"
            | "reset"
    )
}

/// Redis's error for any other command in RESP2 subscribed mode; `name` is
/// the command's full name (`get`, `client|list`).
pub fn not_allowed_while_subscribed(name: &str) -> String {
    format!(
        "ERR Can't execute '{name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET \
         are allowed in this context"
    )
}

/// Writes one confirmation: `[kind, name or nil, subscription count]`;
/// shard confirmations count shard channels only.
fn confirm(ctx: &mut Ctx, kind: &str, name: Option<&[u8]>) {
    let subscriptions = &ctx.client().subscriptions;
    let count = if matches!(kind, "ssubscribe" | "sunsubscribe") {
        subscriptions.shard_count()
    } else {
        subscriptions.count()
    };
    ctx.push_to_self(|w| {
        w.push_len(3);
        w.bulk_str(kind);
        match name {
            Some(name) => w.bulk(name),
            None => w.null(),
        }
        w.int(count as i64);
    });
}

fn subscribe(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let id = ctx.client_id;
    for channel in &args[1..] {
        ctx.work(1);
        if ctx.client().subscriptions.channels.insert(channel.clone()) {
            ctx.server.pubsub.subscribe(id, channel);
        }
        confirm(ctx, "subscribe", Some(channel));
    }
}

fn unsubscribe(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let id = ctx.client_id;
    let channels: Vec<Vec<u8>> = if args.len() > 1 {
        args[1..].to_vec()
    } else {
        let all: Vec<Vec<u8>> = ctx
            .client()
            .subscriptions
            .channels
            .iter()
            .cloned()
            .collect();
        if all.is_empty() {
            return confirm(ctx, "unsubscribe", None);
        }
        all
    };
    for channel in channels {
        ctx.work(1);
        if ctx.client().subscriptions.channels.remove(&channel) {
            ctx.server.pubsub.unsubscribe(id, &channel);
        }
        confirm(ctx, "unsubscribe", Some(&channel));
    }
}

fn psubscribe(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let id = ctx.client_id;
    for pattern in &args[1..] {
        let subscriptions = &mut ctx.client().subscriptions;
        // Redis 7.0 keeps a client's patterns in a list and searches it.
        let known = subscriptions.patterns.contains(pattern);
        let visited = subscriptions.patterns.len() as u64;
        if !known {
            subscriptions.patterns.push(pattern.clone());
            ctx.server.pubsub.psubscribe(id, pattern);
        }
        ctx.work(1 + visited);
        confirm(ctx, "psubscribe", Some(pattern));
    }
}

fn punsubscribe(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let id = ctx.client_id;
    let patterns: Vec<Vec<u8>> = if args.len() > 1 {
        args[1..].to_vec()
    } else {
        let all = ctx.client().subscriptions.patterns.clone();
        if all.is_empty() {
            return confirm(ctx, "punsubscribe", None);
        }
        all
    };
    for pattern in patterns {
        let subscriptions = &mut ctx.client().subscriptions;
        let visited = subscriptions.patterns.len() as u64;
        let position = subscriptions.patterns.iter().position(|p| *p == pattern);
        if let Some(i) = position {
            subscriptions.patterns.remove(i);
            ctx.server.pubsub.punsubscribe(id, &pattern);
        }
        ctx.work(1 + visited);
        confirm(ctx, "punsubscribe", Some(&pattern));
    }
}

fn ssubscribe(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let id = ctx.client_id;
    for channel in &args[1..] {
        ctx.work(1);
        if ctx
            .client()
            .subscriptions
            .shard_channels
            .insert(channel.clone())
        {
            ctx.server.pubsub.ssubscribe(id, channel);
        }
        confirm(ctx, "ssubscribe", Some(channel));
    }
}

fn sunsubscribe(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let id = ctx.client_id;
    let channels: Vec<Vec<u8>> = if args.len() > 1 {
        args[1..].to_vec()
    } else {
        let all = &ctx.client().subscriptions.shard_channels;
        if all.is_empty() {
            return confirm(ctx, "sunsubscribe", None);
        }
        all.iter().cloned().collect()
    };
    for channel in channels {
        ctx.work(1);
        if ctx.client().subscriptions.shard_channels.remove(&channel) {
            ctx.server.pubsub.sunsubscribe(id, &channel);
        }
        confirm(ctx, "sunsubscribe", Some(&channel));
    }
}

/// SPUBLISH: the shard channel's subscribers only (patterns never match
/// shard messages), as `smessage`.
fn spublish(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let (channel, message) = (&args[1], &args[2]);
    let subscribers = ctx.server.pubsub.shard_subscribers(channel).to_vec();
    let mut caller = Some(crate::pubsub::caller_of!(ctx));
    for &id in &subscribers {
        crate::pubsub::deliver(
            &mut ctx.server.pubsub.delivered,
            ctx.clients,
            caller.as_mut(),
            id,
            |w| {
                w.push_len(3);
                w.bulk_str("smessage");
                w.bulk(channel);
                w.bulk(message);
            },
        );
    }
    ctx.work(subscribers.len() as u64);
    ctx.int(subscribers.len() as i64);
}

fn publish(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let receivers = publish_message(ctx, &args[1], &args[2]);
    ctx.int(receivers as i64);
}

/// Delivers `message` to `channel`'s subscribers and to those of the
/// patterns that match it (see [`crate::pubsub::publish`]), and returns how
/// many deliveries were made. Shared with scripts' `redis.call('publish')`
/// through the command itself.
pub fn publish_message(ctx: &mut Ctx, channel: &[u8], message: &[u8]) -> usize {
    let first_copies = ctx.server.planted.publish_copies();
    let caller = Some(crate::pubsub::caller_of!(ctx));
    let mut work_units = 0;
    let receivers = crate::pubsub::publish(
        &mut ctx.server.pubsub,
        ctx.clients,
        caller,
        (channel, message),
        first_copies,
        &mut work_units,
    );
    ctx.work(work_units);
    receivers
}

fn pubsub_channels(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    list_channels(ctx, args, false);
}

fn pubsub_shardchannels(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    list_channels(ctx, args, true);
}

/// PUBSUB CHANNELS / SHARDCHANNELS: the active (shard) channels matching
/// the optional pattern, in name order.
fn list_channels(ctx: &mut Ctx, args: &[Vec<u8>], shard: bool) {
    if args.len() > 3 {
        return ctx.error(&format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try PUBSUB HELP.",
            crate::util::sanitize(&args[1], 128),
        ));
    }
    let pattern = args.get(2).map(Vec::as_slice);
    let pubsub = &ctx.server.pubsub;
    let all: Vec<&[u8]> = if shard {
        pubsub.shard_channels().collect()
    } else {
        pubsub.channels().collect()
    };
    let visited = all.len() as u64;
    let mut glob_steps = 0;
    let channels: Vec<Vec<u8>> = all
        .into_iter()
        .filter(|ch| pattern.is_none_or(|p| glob_match(p, ch, false, &mut glob_steps)))
        .map(<[u8]>::to_vec)
        .collect();
    ctx.work(visited + channels.len() as u64 + glob::work_units(glob_steps));
    let mut w = ctx.w();
    w.array_len(channels.len());
    for channel in &channels {
        w.bulk(channel);
    }
}

fn pubsub_numsub(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    count_subscribers(ctx, args, false);
}

fn pubsub_shardnumsub(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    count_subscribers(ctx, args, true);
}

/// PUBSUB NUMSUB / SHARDNUMSUB: each named (shard) channel with its
/// subscriber count (patterns not counted).
fn count_subscribers(ctx: &mut Ctx, args: &[Vec<u8>], shard: bool) {
    ctx.work(args.len() as u64);
    let pubsub = &ctx.server.pubsub;
    let counts: Vec<usize> = args[2..]
        .iter()
        .map(|ch| {
            if shard {
                pubsub.shard_subscribers(ch).len()
            } else {
                pubsub.channel_subscribers(ch).len()
            }
        })
        .collect();
    let mut w = ctx.w();
    // An array even in RESP3, as Redis 7.0 replies.
    w.array_len(counts.len() * 2);
    for (channel, count) in args[2..].iter().zip(counts) {
        w.bulk(channel);
        w.int(count as i64);
    }
}

fn pubsub_numpat(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let count = ctx.server.pubsub.patterns_count();
    ctx.int(count as i64);
}

fn pubsub_help(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    help_reply(
        ctx,
        "PUBSUB",
        &[
            "CHANNELS [<pattern>]",
            "    Return the currently active channels matching a <pattern> (default: '*').",
            "NUMPAT",
            "    Return number of subscriptions to patterns.",
            "NUMSUB [<channel> ...]",
            "    Return the number of subscribers for the specified channels, excluding",
            "    pattern subscriptions(default: no channels).",
            "SHARDCHANNELS [<pattern>]",
            "    Return the currently active shard level channels matching a <pattern> (default: '*').",
            "SHARDNUMSUB [<shardchannel> ...]",
            "    Return the number of subscribers for the specified shard level channel(s)",
        ],
    );
}
