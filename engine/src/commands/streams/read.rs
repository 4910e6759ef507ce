//! XREAD and XREADGROUP (`xreadCommand`), blocking or not.
//!
//! A read that finds nothing to serve and may block parks its client on
//! the streams' keys (see [`crate::blocking`]); it is re-run, without
//! blocking, when one of them is written. XREAD's `$` means "after the
//! last ID now", so before parking the request is rewritten with the IDs
//! it resolved to; XREADGROUP's `>` is re-resolved from the group at each
//! run, as Redis does when it serves a blocked consumer. A re-run of a
//! blocked XREADGROUP whose key was deleted, overwritten or lost its group
//! ends with Redis's UNBLOCKED or NOGROUP error.

use super::range::write_entry;
use super::{is_word, parse_i64, parse_strict_id, SYNTAX_ERROR};
use crate::blocking::TimeoutReply;
use crate::cmd::Ctx;
use crate::resp::{Protocol, ReplyWriter};
use crate::types::stream::{Group, Stream, StreamId};
use crate::value::{Value, WRONGTYPE};

/// COUNT of a blocked read served without one (`XREAD_BLOCKED_DEFAULT_COUNT`).
const BLOCKED_DEFAULT_COUNT: usize = 1000;

/// What a stream is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum From {
    /// Entries after this ID (XREAD, and `$` resolved).
    After(StreamId),
    /// XREADGROUP `>`: entries never delivered to the group.
    New,
    /// XREADGROUP with an ID: the consumer's pending entries after it.
    History(StreamId),
}

struct ReadArgs {
    timeout_ms: Option<u64>,
    count: usize,
    noack: bool,
    /// Group and consumer names.
    group: Option<(Vec<u8>, Vec<u8>)>,
    /// Index of the first key.
    streams_at: usize,
    streams_count: usize,
}

/// Parses the options before STREAMS.
fn parse_options(args: &[Vec<u8>], xreadgroup: bool, in_script: bool) -> Result<ReadArgs, String> {
    let mut r = ReadArgs {
        timeout_ms: None,
        count: 0,
        noack: false,
        group: None,
        streams_at: 0,
        streams_count: 0,
    };
    let mut i = 1;
    while i < args.len() {
        let more = args.len() - i - 1;
        let o = &args[i];
        if is_word(o, "block") && more > 0 {
            if in_script {
                return Err(format!(
                    "ERR {} command is not allowed with BLOCK option from scripts",
                    String::from_utf8_lossy(crate::commands::lists::c_str(&args[0]))
                ));
            }
            i += 1;
            r.timeout_ms = Some(parse_timeout_ms(&args[i])?);
        } else if is_word(o, "count") && more > 0 {
            i += 1;
            r.count = parse_i64(&args[i])?.max(0) as usize;
        } else if is_word(o, "streams") && more > 0 {
            r.streams_at = i + 1;
            let n = args.len() - r.streams_at;
            if !n.is_multiple_of(2) {
                let (name, symbol) = if xreadgroup {
                    ("XREADGROUP", '>')
                } else {
                    ("XREAD", '$')
                };
                return Err(format!(
                    "ERR Unbalanced {name} list of streams: for each stream key an ID or '{symbol}' must be specified."
                ));
            }
            r.streams_count = n / 2;
            break;
        } else if is_word(o, "group") && more >= 2 {
            if !xreadgroup {
                return Err(
                    "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead."
                        .into(),
                );
            }
            r.group = Some((args[i + 1].clone(), args[i + 2].clone()));
            i += 2;
        } else if is_word(o, "noack") {
            if !xreadgroup {
                return Err(
                    "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead."
                        .into(),
                );
            }
            r.noack = true;
        } else {
            return Err(SYNTAX_ERROR.into());
        }
        i += 1;
    }
    if r.streams_at == 0 {
        return Err(SYNTAX_ERROR.into());
    }
    if xreadgroup && r.group.is_none() {
        return Err("ERR Missing GROUP option for XREADGROUP".into());
    }
    Ok(r)
}

/// BLOCK's milliseconds (`getTimeoutFromObjectOrReply` in milliseconds).
fn parse_timeout_ms(arg: &[u8]) -> Result<u64, String> {
    match crate::util::parse_i64_strict(arg) {
        None => Err("ERR timeout is not an integer or out of range".into()),
        Some(ms) if ms < 0 => Err("ERR timeout is negative".into()),
        Some(ms) => Ok(ms as u64),
    }
}

/// Resolves each stream's ID, checking types and groups in key order.
fn resolve(ctx: &mut Ctx, args: &[Vec<u8>], r: &ReadArgs) -> Result<Vec<From>, String> {
    let mut froms = Vec::with_capacity(r.streams_count);
    for k in 0..r.streams_count {
        ctx.work(1);
        let key = &args[r.streams_at + k];
        let id_arg = &args[r.streams_at + r.streams_count + k];
        let s: Option<&Stream> = match ctx.lookup_read(key) {
            None => None,
            Some(Value::Stream(s)) => Some(s),
            Some(_) => return Err(WRONGTYPE.into()),
        };
        if let Some((group, _)) = &r.group {
            if !s.is_some_and(|s| s.groups.contains_key(group)) {
                return Err(format!(
                    "NOGROUP No such key '{}' or consumer group '{}' in XREADGROUP with GROUP option",
                    String::from_utf8_lossy(crate::commands::lists::c_str(key)),
                    String::from_utf8_lossy(crate::commands::lists::c_str(group))
                ));
            }
        }
        let xreadgroup = r.group.is_some();
        let from = match id_arg.as_slice() {
            b"$" if xreadgroup => {
                return Err("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.".into());
            }
            b"$" => From::After(s.map_or(StreamId::MIN, |s| s.last_id)),
            b">" if !xreadgroup => {
                return Err("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.".into());
            }
            b">" => From::New,
            _ => {
                let id = parse_strict_id(id_arg, 0)?;
                if xreadgroup {
                    From::History(id)
                } else {
                    From::After(id)
                }
            }
        };
        froms.push(from);
    }
    Ok(froms)
}

/// The last live entry's ID, if any.
fn last_live(s: &Stream) -> Option<StreamId> {
    s.edge(true).map(|(_, i)| i.id)
}

pub(super) fn xread(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    read_generic(ctx, args, false);
}

pub(super) fn xreadgroup(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    read_generic(ctx, args, true);
}

fn read_generic(ctx: &mut Ctx, args: &mut [Vec<u8>], xreadgroup: bool) {
    let r = match parse_options(args, xreadgroup, ctx.in_script) {
        Ok(r) => r,
        Err(e) => return ctx.error(&e),
    };
    // A blocked read being served again: its client is still parked.
    let rerun = ctx.client().blocked.is_some();
    if rerun && xreadgroup {
        if let Some(e) = vanished_error(ctx, args, &r) {
            return ctx.error(e);
        }
    }
    let froms = match resolve(ctx, args, &r) {
        Ok(f) => f,
        Err(e) => return ctx.error(&e),
    };
    let count = if rerun && r.count == 0 {
        BLOCKED_DEFAULT_COUNT
    } else {
        r.count
    };
    if xreadgroup {
        // XREADGROUP propagates the XCLAIMs and SETIDs it implies, never
        // itself.
        ctx.propagate_none();
    }
    let mut body = Vec::new();
    let mut served = 0usize;
    for (k, from) in froms.iter().enumerate() {
        let key = args[r.streams_at + k].clone();
        if serve_one(ctx, &key, *from, &r, count, &mut body) {
            served += 1;
        }
    }
    if served > 0 {
        let mut w = ctx.w();
        match w.protocol() {
            Protocol::Resp2 => w.array_len(served),
            Protocol::Resp3 => w.map_len(served),
        }
        w.raw(&body);
        return;
    }
    match r.timeout_ms {
        Some(timeout_ms) if ctx.may_block() => {
            // `$` must keep meaning the last ID at the time of blocking.
            let mut rewritten = args.to_vec();
            for (k, from) in froms.iter().enumerate() {
                if let From::After(id) = from {
                    rewritten[r.streams_at + r.streams_count + k] = id.to_bytes();
                }
            }
            let keys = args[r.streams_at..r.streams_at + r.streams_count].to_vec();
            ctx.block_on_keys(keys, timeout_ms, TimeoutReply::NullArray);
            if let Some(block) = ctx.block.as_mut() {
                block.rerun_args = Some(rewritten);
            }
        }
        _ => ctx.w().null_array(),
    }
}

/// The error a blocked XREADGROUP gets when its stream or group went
/// away while it waited.
fn vanished_error(ctx: &mut Ctx, args: &[Vec<u8>], r: &ReadArgs) -> Option<&'static str> {
    let (group, _) = r.group.as_ref()?;
    for k in 0..r.streams_count {
        match ctx.lookup(&args[r.streams_at + k]) {
            Some(Value::Stream(s)) if s.groups.contains_key(group) => {}
            Some(Value::Stream(_)) => {
                return Some(
                    "NOGROUP the consumer group this client was blocked on no longer exists",
                )
            }
            _ => return Some("UNBLOCKED the stream key no longer exists"),
        }
    }
    None
}

/// Serves one stream into `body` as `[key, entries]` (a map entry in
/// RESP3) if there is something to serve; returns whether it did.
fn serve_one(
    ctx: &mut Ctx,
    key: &[u8],
    from: From,
    r: &ReadArgs,
    count: usize,
    body: &mut Vec<u8>,
) -> bool {
    let protocol = ctx.protocol;
    let now_ms = ctx.now_ms();
    let propagating = ctx.propagating();
    // Redis looks every stream up a second time to serve it: a missing
    // one raises `keymiss` again.
    let Some(Value::Stream(s)) = ctx.lookup_read(key) else {
        return false;
    };
    let s: &mut Stream = s;
    let start = match from {
        From::After(id) => {
            if last_live(s).is_none_or(|last| last <= id) {
                return false;
            }
            id
        }
        From::New => {
            let group = s.groups.get(&r.group.as_ref().expect("a group").0);
            let last = group.expect("resolved").last_id;
            if last_live(s).is_none_or(|l| l <= last) {
                return false;
            }
            last
        }
        From::History(id) => id,
    };
    let Some(start) = start.next() else {
        // Nothing can follow the last possible ID; Redis's increment
        // wraps to 0-0 there, which no stream reaches in practice.
        return false;
    };
    let mut w = ReplyWriter::new(body, protocol);
    if protocol == Protocol::Resp2 {
        w.array_len(2);
    }
    w.bulk(key);
    let Some((group_name, consumer)) = r.group.clone() else {
        let work = super::range::write_range(&mut w, s, (start, StreamId::MAX), count, false);
        ctx.work(work);
        return true;
    };
    let group = s.groups.get_mut(&group_name).expect("resolved");
    let (c, created) = group.consumer_or_create(&consumer, now_ms);
    c.seen_time_ms = now_ms;
    let mut propagate = Propagated::new(propagating);
    if created && r.noack {
        propagate.push(|| {
            vec![
                b"XGROUP".to_vec(),
                b"CREATECONSUMER".to_vec(),
                key.to_vec(),
                group_name.clone(),
                consumer.clone(),
            ]
        });
    }
    let work = match from {
        From::History(_) => serve_history(&mut w, s, &group_name, &consumer, start, count, now_ms),
        _ => serve_new(
            &mut w,
            s,
            (&group_name, &consumer),
            start,
            count,
            (r.noack, now_ms),
            (key, &mut propagate),
        ),
    };
    ctx.work(work);
    ctx.server.dirty += 1;
    propagate.hand_over(ctx);
    if created {
        // Redis creates the consumer (and raises its event) only when it
        // serves it something, now or when a write wakes it.
        crate::notify::notify(
            ctx,
            crate::notify::class::STREAM,
            "xgroup-createconsumer",
            key,
        );
    }
    true
}

/// XREADGROUP with an ID: the consumer's own pending entries from `start`,
/// each delivered again (a deleted entry shows as its ID and a null).
fn serve_history(
    w: &mut ReplyWriter<'_>,
    s: &mut Stream,
    group_name: &[u8],
    consumer: &[u8],
    start: StreamId,
    count: usize,
    now_ms: u64,
) -> u64 {
    let group = s.groups.get(group_name).expect("resolved");
    let ids: Vec<StreamId> = group.consumers[consumer]
        .pel
        .range(start..)
        .take(if count == 0 { usize::MAX } else { count })
        .copied()
        .collect();
    w.array_len(ids.len());
    let mut delivered = Vec::new();
    for &id in &ids {
        match s.get(id) {
            Some((node, item)) => {
                write_entry(w, node, item);
                delivered.push(id);
            }
            None => {
                w.array_len(2);
                w.bulk(id.to_string().as_bytes());
                w.null_array();
            }
        }
    }
    let group = s.groups.get_mut(group_name).expect("resolved");
    for id in delivered {
        if let Some(p) = group.pel.get_mut(&id) {
            p.delivery_time_ms = now_ms;
            p.delivery_count += 1;
        }
    }
    1 + ids.len() as u64
}

/// XREADGROUP `>`: entries after the group's last ID, which moves past
/// them; each joins the consumer's PEL unless NOACK.
fn serve_new(
    w: &mut ReplyWriter<'_>,
    s: &mut Stream,
    (group_name, consumer): (&[u8], &[u8]),
    start: StreamId,
    count: usize,
    (noack, now_ms): (bool, u64),
    (key, propagate): (&[u8], &mut Propagated),
) -> u64 {
    let mut ids = Vec::new();
    let mut body = Vec::new();
    let mut inner = ReplyWriter::new(&mut body, w.protocol());
    let seen = s.walk(start, StreamId::MAX, false, |node, item| {
        write_entry(&mut inner, node, item);
        ids.push(item.id);
        count == 0 || ids.len() < count
    });
    w.array_len(ids.len());
    w.raw(&body);
    let mut moved = false;
    for &id in &ids {
        let lag_state = read_counter_after(s, s.groups.get(group_name).expect("resolved"), id);
        let group = s.groups.get_mut(group_name).expect("resolved");
        if id > group.last_id {
            group.entries_read = lag_state;
            group.last_id = id;
            moved = true;
        }
        if !noack {
            group.deliver_new(id, consumer, now_ms);
            let p = &group.pel[&id];
            propagate.push(|| xclaim_argv(key, group_name, consumer, id, p, group.last_id));
        }
    }
    if noack && moved {
        let group = &s.groups[group_name];
        propagate.push(|| setid_argv(key, group_name, group));
    }
    seen + ids.len() as u64
}

/// The group's read counter once it has read `id` (above its last ID):
/// one more when it was known and no tombstone lies ahead, else an
/// estimate.
fn read_counter_after(s: &Stream, group: &Group, id: StreamId) -> Option<u64> {
    match group.entries_read {
        Some(n) if !s.range_has_tombstones(id, StreamId::MAX) => Some(n + 1),
        _ if s.entries_added > 0 => s.estimate_distance(id),
        current => current,
    }
}

/// Work units of one command built for propagation (an XCLAIM or XGROUP
/// SETID of a dozen arguments, each allocated): an entry delivered or
/// claimed costs more in them than in the stream itself.
pub(super) const PROPAGATED_ARGV_UNITS: u64 = 8;

/// The commands a consumer-group write propagates instead of itself (one
/// XCLAIM per entry it delivered, claimed or dropped; a SETID, a
/// CREATECONSUMER), built only while writes propagate
/// ([`Ctx::propagating`]), as every rewriting handler does. Built when
/// nothing propagates, they were work thrown away, and worse: the dozen
/// blocks of each of n commands, held to the end and freed together,
/// left the allocator (glibc) tens of thousands of chunks to sort, which
/// the next command's first allocation paid for (the cost audit billed
/// 1.3 ms to an XACK of one ID after an XREADGROUP of 65,536 entries).
pub(super) struct Propagated {
    enabled: bool,
    argvs: Vec<Vec<Vec<u8>>>,
}

impl Propagated {
    pub(super) fn new(enabled: bool) -> Propagated {
        Propagated {
            enabled,
            argvs: Vec::new(),
        }
    }

    /// Queues the command `build` makes, building it only if it will be
    /// propagated.
    pub(super) fn push(&mut self, build: impl FnOnce() -> Vec<Vec<u8>>) {
        if self.enabled {
            self.argvs.push(build());
        }
    }

    /// Charges the commands built and propagates them, in order.
    pub(super) fn hand_over(self, ctx: &mut Ctx) {
        debug_assert!(self.enabled || self.argvs.is_empty());
        ctx.work(PROPAGATED_ARGV_UNITS * self.argvs.len() as u64);
        for argv in &self.argvs {
            ctx.propagate(argv);
        }
    }
}

/// `XCLAIM key group consumer 0 id TIME t RETRYCOUNT n FORCE JUSTID
/// LASTID last` (`streamPropagateXCLAIM`).
pub(super) fn xclaim_argv(
    key: &[u8],
    group: &[u8],
    consumer: &[u8],
    id: StreamId,
    p: &crate::types::stream::Pending,
    last_id: StreamId,
) -> Vec<Vec<u8>> {
    vec![
        b"XCLAIM".to_vec(),
        key.to_vec(),
        group.to_vec(),
        consumer.to_vec(),
        b"0".to_vec(),
        id.to_bytes(),
        b"TIME".to_vec(),
        p.delivery_time_ms.to_string().into_bytes(),
        b"RETRYCOUNT".to_vec(),
        p.delivery_count.to_string().into_bytes(),
        b"FORCE".to_vec(),
        b"JUSTID".to_vec(),
        b"LASTID".to_vec(),
        last_id.to_bytes(),
    ]
}

/// `XGROUP SETID key group last ENTRIESREAD n` (`streamPropagateGroupID`).
pub(super) fn setid_argv(key: &[u8], name: &[u8], group: &Group) -> Vec<Vec<u8>> {
    vec![
        b"XGROUP".to_vec(),
        b"SETID".to_vec(),
        key.to_vec(),
        name.to_vec(),
        group.last_id.to_bytes(),
        b"ENTRIESREAD".to_vec(),
        group
            .entries_read
            .map_or(-1, |n| n as i64)
            .to_string()
            .into_bytes(),
    ]
}
