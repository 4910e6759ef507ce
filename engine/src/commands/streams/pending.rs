//! XACK XPENDING XCLAIM XAUTOCLAIM: the pending entries lists of consumer
//! groups. XCLAIM and XAUTOCLAIM propagate as one forced XCLAIM per entry
//! they change (`streamPropagateXCLAIM`), never as themselves.

use super::range::write_entry;
use super::read::{setid_argv, xclaim_argv, Propagated};
use super::{is_word, lookup_stream, parse_i64, parse_strict_id, wrongtype, SYNTAX_ERROR};
use crate::cmd::{Ctx, Lookup};
use crate::resp::ReplyWriter;
use crate::types::stream::{Group, Stream, StreamId};

/// `NOGROUP No such key 'k' or consumer group 'g'`.
fn no_group(ctx: &mut Ctx, key: &[u8], group: &[u8]) {
    ctx.error(&format!(
        "NOGROUP No such key '{}' or consumer group '{}'",
        String::from_utf8_lossy(crate::commands::lists::c_str(key)),
        String::from_utf8_lossy(crate::commands::lists::c_str(group))
    ));
}

/// The stream at `key` if it has `group`: `Ok(None)` when not, `Err` after
/// replying WRONGTYPE. XACK, XPENDING, XCLAIM and XAUTOCLAIM read the key:
/// a miss raises `keymiss`.
fn with_group<'c>(
    ctx: &'c mut Ctx,
    key: &[u8],
    group: &[u8],
) -> Result<Option<&'c mut Stream>, ()> {
    let has_group = match lookup_stream(ctx, key, Lookup::Read) {
        Err(()) => None,
        Ok(Some(s)) => Some(s.groups.contains_key(group)),
        Ok(None) => Some(false),
    };
    match has_group {
        None => {
            wrongtype(ctx);
            Err(())
        }
        Some(false) => Ok(None),
        Some(true) => Ok(lookup_stream(ctx, key, Lookup::Read).ok().flatten()),
    }
}

fn group_of<'s>(s: &'s mut Stream, name: &[u8]) -> &'s mut Group {
    s.groups.get_mut(name).expect("checked by the caller")
}

pub(super) fn xack(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    match with_group(ctx, &args[1], &args[2]) {
        Err(()) => return,
        Ok(None) => return ctx.int(0),
        Ok(Some(_)) => {}
    }
    let mut ids = Vec::with_capacity(args.len() - 3);
    for arg in &args[3..] {
        match parse_strict_id(arg, 0) {
            Ok(id) => ids.push(id),
            Err(e) => return ctx.error(e),
        }
    }
    ctx.work(ids.len() as u64);
    let Ok(Some(s)) = with_group(ctx, &args[1], &args[2]) else {
        return ctx.int(0);
    };
    let g = group_of(s, &args[2]);
    let acked = ids.iter().filter(|&&id| g.ack(id)).count() as u64;
    ctx.server.dirty += acked;
    ctx.int(acked as i64);
}

/// An interval bound of XPENDING and XAUTOCLAIM (see `range.rs`).
fn parse_bound(arg: &[u8], missing_seq: u64, start: bool) -> Result<StreamId, &'static str> {
    if arg.len() > 1 && arg[0] == b'(' {
        let id = parse_strict_id(&arg[1..], missing_seq)?;
        if start {
            id.next().ok_or("ERR invalid start ID for the interval")
        } else {
            id.prev().ok_or("ERR invalid end ID for the interval")
        }
    } else {
        super::parse_id(arg, missing_seq)
    }
}

pub(super) fn xpending(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let argc = args.len();
    if argc != 3 && !(6..=9).contains(&argc) {
        return ctx.error(SYNTAX_ERROR);
    }
    let mut range = None;
    if argc >= 6 {
        let mut at = 3;
        let mut min_idle_ms = 0i64;
        if is_word(&args[3], "idle") {
            min_idle_ms = match parse_i64(&args[4]) {
                Ok(n) => n,
                Err(e) => return ctx.error(e),
            };
            if argc < 8 {
                return ctx.error(SYNTAX_ERROR);
            }
            at += 2;
        }
        let count = match parse_i64(&args[at + 2]) {
            Ok(n) => n.max(0) as u64,
            Err(e) => return ctx.error(e),
        };
        let start = match parse_bound(&args[at], 0, true) {
            Ok(id) => id,
            Err(e) => return ctx.error(e),
        };
        let end = match parse_bound(&args[at + 1], u64::MAX, false) {
            Ok(id) => id,
            Err(e) => return ctx.error(e),
        };
        let consumer = args.get(at + 3).cloned();
        range = Some((start, end, count, min_idle_ms, consumer));
    }
    let now_ms = ctx.now_ms() as i64;
    let protocol = ctx.protocol;
    let (key, group) = (args[1].clone(), args[2].clone());
    let s = match with_group(ctx, &key, &group) {
        Err(()) => return,
        Ok(None) => return no_group(ctx, &key, &group),
        Ok(Some(s)) => s,
    };
    let g = &s.groups[&group];
    let mut body = Vec::new();
    let mut w = ReplyWriter::new(&mut body, protocol);
    let work = match range {
        None => pending_summary(&mut w, g),
        Some((start, end, count, min_idle_ms, consumer)) => {
            let pel: Vec<StreamId> = match &consumer {
                None => g
                    .pel
                    .range(start..)
                    .map(|(id, _)| *id)
                    .take_while(|&id| id <= end)
                    .collect(),
                Some(name) => match g.consumers.get(name) {
                    None => Vec::new(),
                    Some(c) => c
                        .pel
                        .range(start..)
                        .copied()
                        .take_while(|&id| id <= end)
                        .collect(),
                },
            };
            let mut rows = Vec::new();
            let mut looked = 0u64;
            for id in pel {
                if rows.len() as u64 >= count {
                    break;
                }
                looked += 1;
                let p = &g.pel[&id];
                let idle = now_ms - p.delivery_time_ms as i64;
                if min_idle_ms != 0 && idle < min_idle_ms {
                    continue;
                }
                rows.push((id, p.consumer.clone(), idle.max(0), p.delivery_count));
            }
            w.array_len(rows.len());
            for (id, consumer, idle, count) in &rows {
                w.array_len(4);
                w.bulk(id.to_string().as_bytes());
                w.bulk(consumer);
                w.int(*idle);
                w.int(*count as i64);
            }
            1 + looked
        }
    };
    ctx.work(work);
    ctx.w().raw(&body);
}

/// XPENDING key group: the count, the first and last IDs, and the pending
/// count of each consumer that has some.
fn pending_summary(w: &mut ReplyWriter<'_>, g: &Group) -> u64 {
    w.array_len(4);
    w.int(g.pel.len() as i64);
    let (Some((first, _)), Some((last, _))) = (g.pel.first_key_value(), g.pel.last_key_value())
    else {
        w.null();
        w.null();
        w.null_array();
        return 1;
    };
    w.bulk(first.to_string().as_bytes());
    w.bulk(last.to_string().as_bytes());
    let owners: Vec<_> = g
        .consumers
        .iter()
        .filter(|(_, c)| !c.pel.is_empty())
        .collect();
    w.array_len(owners.len());
    for (name, c) in &owners {
        w.array_len(2);
        w.bulk(name);
        w.bulk(c.pel.len().to_string().as_bytes());
    }
    1 + g.consumers.len() as u64
}

/// XCLAIM's options after the IDs.
#[derive(Default)]
struct ClaimOptions {
    force: bool,
    justid: bool,
    /// Delivery time to set (unix ms), if IDLE or TIME was given.
    delivery_ms: Option<i64>,
    retry_count: Option<u64>,
    last_id: StreamId,
}

fn parse_claim_options(args: &[Vec<u8>], from: usize, now_ms: i64) -> Result<ClaimOptions, String> {
    let mut o = ClaimOptions::default();
    let mut j = from;
    while j < args.len() {
        let more = args.len() - 1 - j;
        let opt = &args[j];
        let number = |arg: &[u8], what: &str| {
            crate::util::parse_i64_strict(arg)
                .ok_or_else(|| format!("ERR Invalid {what} option argument for XCLAIM"))
        };
        if is_word(opt, "force") {
            o.force = true;
        } else if is_word(opt, "justid") {
            o.justid = true;
        } else if is_word(opt, "idle") && more > 0 {
            j += 1;
            o.delivery_ms = Some(now_ms.wrapping_sub(number(&args[j], "IDLE")?));
        } else if is_word(opt, "time") && more > 0 {
            j += 1;
            o.delivery_ms = Some(number(&args[j], "TIME")?);
        } else if is_word(opt, "retrycount") && more > 0 {
            j += 1;
            let n = number(&args[j], "RETRYCOUNT")?;
            // Redis treats a negative count as not given.
            o.retry_count = u64::try_from(n).ok();
        } else if is_word(opt, "lastid") && more > 0 {
            j += 1;
            o.last_id = parse_strict_id(&args[j], 0).map_err(String::from)?;
        } else {
            return Err(format!(
                "ERR Unrecognized XCLAIM option '{}'",
                String::from_utf8_lossy(crate::commands::lists::c_str(opt))
            ));
        }
        j += 1;
    }
    Ok(o)
}

/// XCLAIM key group consumer min-idle-time id... [options].
pub(super) fn xclaim(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let (key, group) = (args[1].clone(), args[2].clone());
    match with_group(ctx, &key, &group) {
        Err(()) => return,
        Ok(None) => return no_group(ctx, &key, &group),
        Ok(Some(_)) => {}
    }
    let Some(min_idle_ms) = crate::util::parse_i64_strict(&args[4]) else {
        return ctx.error("ERR Invalid min-idle-time argument for XCLAIM");
    };
    let min_idle_ms = min_idle_ms.max(0);
    let mut ids = Vec::new();
    let mut j = 5;
    while j < args.len() {
        match parse_strict_id(&args[j], 0) {
            Ok(id) => ids.push((id, j)),
            Err(_) => break,
        }
        j += 1;
    }
    let now_ms = ctx.now_ms() as i64;
    let o = match parse_claim_options(args, j, now_ms) {
        Ok(o) => o,
        Err(e) => return ctx.error(&e),
    };
    ctx.work(1 + ids.len() as u64);
    let consumer = args[3].clone();
    // A replayed XCLAIM keeps its TIME: the AOF is replayed on a clock at
    // unix time 0 (see `engine/aof.rs`), before every recorded time.
    let obey = ctx.client().replaying_aof;
    let delivery_ms = match o.delivery_ms {
        Some(t) if t < 0 || (t > now_ms && !obey) => now_ms,
        Some(t) => t,
        None => now_ms,
    } as u64;
    let transfer = crate::planted::xclaim_transfer(&ctx.server.planted);
    let mut propagate = Propagated::new(ctx.propagating());
    let mut dirty = 0u64;
    let mut body = Vec::new();
    let mut w = ReplyWriter::new(&mut body, ctx.protocol);
    let Ok(Some(s)) = with_group(ctx, &key, &group) else {
        return;
    };
    let mut propagate_last_id = false;
    {
        let g = group_of(s, &group);
        if o.last_id > g.last_id {
            g.last_id = o.last_id;
            propagate_last_id = true;
        }
    }
    let mut claimed = 0usize;
    let mut consumer_seen = false;
    let mut consumer_created = false;
    for (id, at) in ids {
        let exists = s.get(id).is_some();
        let g = group_of(s, &group);
        if !exists {
            if let Some(p) = g.pel.get(&id) {
                propagate.push(|| {
                    let argv = xclaim_argv(&key, &group, &p.consumer, id, p, g.last_id);
                    with_id_arg(argv, &args[at])
                });
                propagate_last_id = false;
                dirty += 1;
                g.ack(id);
            }
            continue;
        }
        let forced = o.force && !g.pel.contains_key(&id);
        if !g.pel.contains_key(&id) && !forced {
            continue;
        }
        if !forced && min_idle_ms > 0 {
            let p = &g.pel[&id];
            if now_ms - (p.delivery_time_ms as i64) < min_idle_ms {
                continue;
            }
        }
        if !consumer_seen {
            let (c, created) = g.consumer_or_create(&consumer, now_ms as u64);
            c.seen_time_ms = now_ms as u64;
            consumer_seen = true;
            consumer_created = created;
        }
        if forced {
            // A forced entry starts as delivered once (`streamCreateNACK`).
            g.deliver_new(id, &consumer, delivery_ms);
        } else {
            transfer(g, id, &consumer);
        }
        let p = g.pel.get_mut(&id).expect("pending");
        p.delivery_time_ms = delivery_ms;
        if let Some(n) = o.retry_count {
            p.delivery_count = n;
        } else if !o.justid {
            p.delivery_count += 1;
        }
        propagate.push(|| {
            let argv = xclaim_argv(&key, &group, &consumer, id, p, g.last_id);
            with_id_arg(argv, &args[at])
        });
        propagate_last_id = false;
        dirty += 1;
        claimed += 1;
        if o.justid {
            w.bulk(id.to_string().as_bytes());
        } else {
            let (node, item) = s.get(id).expect("exists");
            write_entry(&mut w, node, item);
        }
    }
    if propagate_last_id {
        propagate.push(|| setid_argv(&key, &group, &s.groups[&group]));
        dirty += 1;
    }
    ctx.server.dirty += dirty;
    if consumer_created {
        consumer_created_event(ctx, &key);
    }
    ctx.propagate_none();
    propagate.hand_over(ctx);
    let mut w = ctx.w();
    w.array_len(claimed);
    w.raw(&body);
}

/// The propagated XCLAIM names the ID as the request wrote it.
fn with_id_arg(mut argv: Vec<Vec<u8>>, arg: &[u8]) -> Vec<Vec<u8>> {
    argv[5] = arg.to_vec();
    argv
}

/// XAUTOCLAIM key group consumer min-idle-time start [COUNT n] [JUSTID].
pub(super) fn xautoclaim(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let Some(min_idle_ms) = crate::util::parse_i64_strict(&args[4]) else {
        return ctx.error("ERR Invalid min-idle-time argument for XAUTOCLAIM");
    };
    let min_idle_ms = min_idle_ms.max(0);
    let start = match parse_bound(&args[5], 0, true) {
        Ok(id) => id,
        Err(e) => return ctx.error(e),
    };
    let mut count: u64 = 100;
    let mut justid = false;
    let mut j = 6;
    while j < args.len() {
        let more = args.len() - 1 - j;
        if is_word(&args[j], "count") && more > 0 {
            // LONG_MAX / max(sizeof(streamID), attempts factor 10).
            const COUNT_MAX: i64 = i64::MAX / 16;
            match crate::util::parse_i64_strict(&args[j + 1]) {
                Some(n) if (1..=COUNT_MAX).contains(&n) => count = n as u64,
                _ => return ctx.error("ERR COUNT must be > 0"),
            }
            j += 1;
        } else if is_word(&args[j], "justid") {
            justid = true;
        } else {
            return ctx.error(SYNTAX_ERROR);
        }
        j += 1;
    }
    let (key, group, consumer) = (args[1].clone(), args[2].clone(), args[3].clone());
    let now_ms = ctx.now_ms();
    let protocol = ctx.protocol;
    let mut propagate = Propagated::new(ctx.propagating());
    let s = match with_group(ctx, &key, &group) {
        Err(()) => return,
        Ok(None) => return no_group(ctx, &key, &group),
        Ok(Some(s)) => s,
    };
    let mut attempts = count.saturating_mul(10);
    let mut deleted = Vec::new();
    let mut claimed = Vec::new();
    let mut cursor = Some(start);
    let mut consumer_seen = false;
    let mut consumer_created = false;
    let mut looked = 0u64;
    while attempts > 0 && count > 0 {
        let Some(from) = cursor else { break };
        let g = group_of(s, &group);
        let Some(id) = g.pel.range(from..).next().map(|(id, _)| *id) else {
            cursor = None;
            break;
        };
        attempts -= 1;
        looked += 1;
        cursor = id.next();
        if s.get(id).is_none() {
            let g = group_of(s, &group);
            let p = &g.pel[&id];
            propagate.push(|| xclaim_argv(&key, &group, &p.consumer, id, p, g.last_id));
            g.ack(id);
            deleted.push(id);
            count -= 1;
            continue;
        }
        let g = group_of(s, &group);
        if min_idle_ms > 0 && (now_ms as i64) - (g.pel[&id].delivery_time_ms as i64) < min_idle_ms {
            continue;
        }
        if !consumer_seen {
            let (c, created) = g.consumer_or_create(&consumer, now_ms);
            c.seen_time_ms = now_ms;
            consumer_seen = true;
            consumer_created = created;
        }
        g.transfer(id, &consumer);
        let p = g.pel.get_mut(&id).expect("pending");
        p.delivery_time_ms = now_ms;
        if !justid {
            p.delivery_count += 1;
        }
        propagate.push(|| xclaim_argv(&key, &group, &consumer, id, p, g.last_id));
        claimed.push(id);
        count -= 1;
    }
    let g = group_of(s, &group);
    let next = cursor
        .and_then(|from| g.pel.range(from..).next().map(|(id, _)| *id))
        .unwrap_or(StreamId::MIN);
    let mut body = Vec::new();
    let mut w = ReplyWriter::new(&mut body, protocol);
    w.array_len(3);
    w.bulk(next.to_string().as_bytes());
    w.array_len(claimed.len());
    for &id in &claimed {
        if justid {
            w.bulk(id.to_string().as_bytes());
        } else {
            let (node, item) = s.get(id).expect("claimed entries exist");
            write_entry(&mut w, node, item);
        }
    }
    w.array_len(deleted.len());
    for id in &deleted {
        w.bulk(id.to_string().as_bytes());
    }
    ctx.work(1 + looked + claimed.len() as u64);
    // One change per entry claimed or dropped, as Redis counts them.
    ctx.server.dirty += (claimed.len() + deleted.len()) as u64;
    if consumer_created {
        consumer_created_event(ctx, &key);
    }
    ctx.propagate_none();
    propagate.hand_over(ctx);
    ctx.w().raw(&body);
}

/// A claim that created its consumer raises `xgroup-createconsumer`, as
/// Redis's `streamCreateConsumer` does (XCLAIM itself raises nothing).
fn consumer_created_event(ctx: &mut Ctx, key: &[u8]) {
    crate::notify::notify(
        ctx,
        crate::notify::class::STREAM,
        "xgroup-createconsumer",
        key,
    );
}
