//! Streams and consumer groups (`strm:` keys, `workload::streams`): the
//! checker replays the execution order through a model of each stream and
//! its groups, and judges every reply against it.
//!
//! - **IDs.** Each successful XADD's ID is above every ID the stream
//!   generated before (until the stream is deleted), and is the explicit
//!   ID asked for (or has its `ms-*` milliseconds). An XADD is refused
//!   only when its ID is not above the last one.
//! - **Reads.** XLEN, XRANGE, XREVRANGE and XREAD reply exactly the live
//!   entries (added, not deleted or trimmed) of their range, in order,
//!   with their fields. A read reply names only the streams asked for.
//! - **Delivery.** Per group, XREADGROUP `>` delivers exactly the next
//!   undelivered live entries in ID order, up to COUNT, and each joins the
//!   reader's PEL (one PEL: the group's PEL maps an entry to one owner).
//!   A history read (`XREADGROUP ... 0`) returns exactly the reader's
//!   pending entries (deleted ones as `[id, nil]`).
//! - **Acks and claims.** XACK counts the entries acked that were pending;
//!   XCLAIM and XAUTOCLAIM claim only pending, live entries (every one of
//!   them with a min-idle of 0), drop pending entries that were deleted,
//!   and XAUTOCLAIM's cursor and deleted list follow the PEL. XPENDING's
//!   summary (count, first, last, per-consumer counts) and its extended
//!   form (IDs and owners) equal the model's PEL.
//! - **Blocked readers never lose an entry.** A blocked XREADGROUP or XREAD
//!   that times out (a null reply) had nothing to read at that moment,
//!   and did not time out before its BLOCK milliseconds (when the checker
//!   can place where it parked, as `check::blocking` does).
//!
//! Approximate effects are taken from the reply: an `XTRIM ... ~` removes
//! the oldest entries its count says, a claim with a min-idle time claims
//! what it replied (an entry only the model thinks idle enough may be
//! refused). Where an effect is not determined and its reply is missing
//! (the connection died), or a command the model does not follow wrote a
//! `strm:` key, the stream (or only the group) becomes **unknown** and is
//! no longer judged; DEL makes a stream known (absent) again. After a
//! crash and restart every stream is unknown.

use std::collections::BTreeMap;

use seedkv_engine::cmd::flags;
use seedkv_engine::resp::Frame;

use super::blocking::TIMEOUT_SLACK_NS;
use super::model::index_ops;
use super::pipeline::render_args;
use crate::check::{CheckCounts, Checker, RunFacts, Violation};
use crate::fxhash::FxHashMap;
use crate::history::{ConnId, Execution, History, Received};

mod groups;
mod state;
#[cfg(test)]
mod tests;

use state::{
    model_entries, parse_bound, parse_entries, parse_id, parse_read_reply, parse_trim,
    show_entries, show_id, Id, Known, Stream, ID_MAX,
};

/// The checker.
pub struct StreamDelivery;

impl Checker for StreamDelivery {
    fn name(&self) -> &'static str {
        "streams"
    }

    fn check(&self, history: &History, facts: &RunFacts) -> Result<(), Violation> {
        self.check_counted(history, facts, &mut CheckCounts::default())
    }

    /// Counts the stream commands' replies judged against a known stream,
    /// and those declined (the stream or its group unknown).
    fn check_counted(
        &self,
        history: &History,
        _facts: &RunFacts,
        counts: &mut CheckCounts,
    ) -> Result<(), Violation> {
        check_streams_counted(history, counts).map_err(|message| Violation {
            checker: self.name(),
            message,
        })
    }
}

/// Whether `key` is one of the workload's streams.
pub fn is_stream_key(key: &[u8]) -> bool {
    key.starts_with(b"strm:")
}

/// One execution being judged.
struct At<'a> {
    exec: &'a Execution,
    args: &'a [Vec<u8>],
    /// The reply, if the client received it.
    reply: Option<&'a Frame>,
    /// Where the request parked, if it may block and can be placed.
    received: Option<&'a Received>,
    index: usize,
}

/// The model of every `strm:` key.
struct Walk {
    keys: BTreeMap<Vec<u8>, Known>,
    /// What a key never seen is: absent, or unknown after a crash.
    default: Known,
}

#[cfg(test)]
pub(crate) fn check_streams(history: &History) -> Result<(), String> {
    check_streams_counted(history, &mut CheckCounts::default())
}

pub(crate) fn check_streams_counted(
    history: &History,
    counts: &mut CheckCounts,
) -> Result<(), String> {
    if !history
        .ops
        .iter()
        .any(|op| op.args.iter().any(|a| is_stream_key(a)))
    {
        return Ok(());
    }
    let ops = index_ops(history);
    let placed = placed_requests(history, &ops);
    let crash_at = history
        .persist
        .as_ref()
        .and_then(|p| p.crash.as_ref())
        .map(|c| c.executions_count);
    let mut walk = Walk {
        keys: BTreeMap::new(),
        default: Known::Absent,
    };
    for (index, exec) in history.executions.iter().enumerate() {
        if crash_at == Some(index) {
            walk.forget_all();
        }
        let Some(op) = ops.of_execution(index, exec) else {
            continue;
        };
        if exec.name.is_empty() {
            continue;
        }
        let at = At {
            exec,
            args: &op.args,
            reply: op.complete.as_ref().map(|(_, f)| f),
            received: placed.get(&(op.conn, op.seq_in_conn)).copied(),
            index,
        };
        if let Some(key) = at.reply.and(judged_key(exec.name, &op.args)) {
            match walk.key(key) {
                Known::Unknown => counts.declined += 1,
                _ => counts.compared += 1,
            }
        }
        walk.apply(&at).map_err(|why| {
            format!(
                "execution #{index} (conn {} request #{}, unix_ms {}): `{}` replied {}: {why}",
                exec.conn,
                exec.seq_in_conn,
                exec.unix_ms,
                render_args(&op.args),
                at.reply.map_or(
                    "nothing (connection lost)".to_string(),
                    crate::world::frame_summary
                )
            )
        })?;
    }
    Ok(())
}

/// The stream whose model a stream command's reply is judged against.
fn judged_key<'a>(name: &str, args: &'a [Vec<u8>]) -> Option<&'a Vec<u8>> {
    let key = match name {
        "xread" | "xreadgroup" => {
            let at = args
                .iter()
                .position(|a| a.eq_ignore_ascii_case(b"streams"))?;
            args.get(at + 1)?
        }
        n if n.starts_with("xgroup") => args.get(2)?,
        n if n.starts_with('x') => args.get(1)?,
        _ => return None,
    };
    is_stream_key(key).then_some(key)
}

/// Blocking requests with nothing of their connection ahead of them: they
/// executed or parked when the engine received them.
fn placed_requests<'a>(
    history: &'a History,
    ops: &crate::history::OpIndex<'a>,
) -> FxHashMap<(ConnId, u64), &'a Received> {
    let mut out = FxHashMap::default();
    for r in &history.received {
        let Some(op) = ops.get(&(r.conn, r.seq_in_conn)) else {
            continue;
        };
        if r.seq_in_conn > 0 {
            let ahead_done = ops
                .get(&(r.conn, r.seq_in_conn - 1))
                .and_then(|p| p.complete.as_ref())
                .is_some_and(|(at, _)| *at <= op.invoke_ns);
            if !ahead_done {
                continue;
            }
        }
        out.insert((r.conn, r.seq_in_conn), r);
    }
    out
}

/// The integer of a reply, or a description of what came instead.
fn integer(reply: &Frame) -> Result<i64, String> {
    match reply {
        Frame::Integer(n) => Ok(*n),
        other => Err(format!("expected an integer, got {other:?}")),
    }
}

/// COUNT's value among `args`, if given.
fn count_option(args: &[Vec<u8>]) -> Option<usize> {
    let at = args.iter().position(|a| a.eq_ignore_ascii_case(b"count"))?;
    std::str::from_utf8(args.get(at + 1)?).ok()?.parse().ok()
}

impl Walk {
    fn forget_all(&mut self) {
        for v in self.keys.values_mut() {
            *v = Known::Unknown;
        }
        self.default = Known::Unknown;
    }

    fn key(&mut self, key: &[u8]) -> &mut Known {
        // Looked up before a key is copied: most calls find theirs.
        if !self.keys.contains_key(key) {
            self.keys.insert(key.to_vec(), self.default.clone());
        }
        self.keys.get_mut(key).expect("just inserted")
    }

    fn forget(&mut self, key: &[u8]) {
        *self.key(key) = Known::Unknown;
    }

    fn apply(&mut self, at: &At<'_>) -> Result<(), String> {
        let args = at.args;
        if at.exec.in_exec.is_some() || args.len() < 2 {
            return self.unfollowed(at);
        }
        let sub = args[1].to_ascii_lowercase();
        match at.exec.name {
            "xadd" => self.xadd(at),
            "xdel" => self.xdel(at),
            "xtrim" => self.xtrim(at),
            "xlen" => self.xlen(at),
            "xrange" => self.xrange(at, false),
            "xrevrange" => self.xrange(at, true),
            "xread" => self.xread(at),
            "xreadgroup" => self.xreadgroup(at),
            "xack" => self.xack(at),
            "xpending" => self.xpending(at),
            "xclaim" => self.xclaim(at),
            "xautoclaim" => self.xautoclaim(at),
            name if name.starts_with("xgroup") && sub == b"create" => self.xgroup_create(at),
            name if name.starts_with("xgroup") && sub == b"destroy" => self.xgroup_destroy(at),
            "del" | "unlink" => {
                for key in args[1..].iter().filter(|k| is_stream_key(k)) {
                    *self.key(key) = Known::Absent;
                }
                Ok(())
            }
            "flushall" => {
                self.keys.clear();
                self.default = Known::Absent;
                Ok(())
            }
            "flushdb" | "swapdb" => {
                self.forget_all();
                Ok(())
            }
            _ => self.unfollowed(at),
        }
    }

    /// A command the model does not follow: the streams it may have
    /// written become unknown.
    fn unfollowed(&mut self, at: &At<'_>) -> Result<(), String> {
        if at.exec.flags & flags::READONLY != 0 {
            return Ok(());
        }
        for key in at.args.iter().skip(1).filter(|a| is_stream_key(a)) {
            self.forget(key);
        }
        Ok(())
    }

    fn xadd(&mut self, at: &At<'_>) -> Result<(), String> {
        let args = at.args;
        let key = &args[1];
        let mut i = 2;
        let mut nomkstream = false;
        let mut trim = None;
        while i < args.len() {
            if args[i].eq_ignore_ascii_case(b"nomkstream") {
                nomkstream = true;
                i += 1;
            } else if args[i].eq_ignore_ascii_case(b"maxlen")
                || args[i].eq_ignore_ascii_case(b"minid")
            {
                let Some((t, approx, next)) = parse_trim(args, i) else {
                    return self.unfollowed(at);
                };
                trim = Some((t, approx));
                i = next;
            } else {
                break;
            }
        }
        let (Some(id_arg), Some(fields)) = (args.get(i), args.get(i + 1..)) else {
            return Ok(());
        };
        let unix_ms = at.exec.unix_ms;
        let known = self.key(key);
        let stream = match known {
            Known::Unknown => return Ok(()),
            Known::Absent => None,
            Known::Present(s) => Some(&*s),
        };
        let last = stream.map_or((0, 0), |s| s.last);
        // What the ID argument asks for: explicit, `ms-*`, or `*`.
        let asked: Option<(u64, Option<u64>)> = match id_arg.as_slice() {
            b"*" => None,
            text => match text.strip_suffix(b"-*") {
                Some(ms) => match std::str::from_utf8(ms).ok().and_then(|m| m.parse().ok()) {
                    Some(ms) => Some((ms, None)),
                    None => return Ok(()),
                },
                None => match parse_id(text, 0) {
                    Some((ms, seq)) => Some((ms, Some(seq))),
                    None => return Ok(()),
                },
            },
        };
        // The ID it takes, if accepted: `*` is the command's clock (unix
        // ms) after the last ID, `ms-*` the next sequence in `ms`.
        let predicted: Option<Id> = match asked {
            None if unix_ms > last.0 => Some((unix_ms, 0)),
            None => state::next_id(last),
            Some((ms, None)) if ms > last.0 => Some((ms, 0)),
            Some((ms, None)) => state::next_id(last).filter(|id| id.0 == ms),
            Some((ms, Some(seq))) => Some((ms, seq)).filter(|&id| id > last && id != (0, 0)),
        };
        let acceptable = predicted.is_some();
        let Some(reply) = at.reply else {
            // Lost: it ran all the same, as the model says.
            let created = stream.is_some() || !nomkstream;
            match predicted {
                Some(id) if created => {
                    if matches!(known, Known::Absent) {
                        *known = Known::Present(Stream::default());
                    }
                    return self.xadd_apply(key, id, fields, trim);
                }
                _ => return Ok(()),
            }
        };
        match reply {
            Frame::Error(_) => {
                if acceptable && (stream.is_some() || !nomkstream) {
                    return Err(format!(
                        "refused, although the stream's last ID was {}",
                        show_id(last)
                    ));
                }
                Ok(())
            }
            Frame::Null => {
                if stream.is_some() || !nomkstream {
                    return Err("a null reply, although the stream exists or may be made".into());
                }
                Ok(())
            }
            Frame::Bulk(text) => {
                if stream.is_none() && nomkstream {
                    return Err("added to a stream that did not exist despite NOMKSTREAM".into());
                }
                let Some(id) = parse_id(text, 0).filter(|_| text.contains(&b'-')) else {
                    return Err("the reply is not an ID".into());
                };
                if id <= last {
                    return Err(format!(
                        "IDs not strictly increasing: {} added after {}",
                        show_id(id),
                        show_id(last)
                    ));
                }
                if predicted.is_some_and(|p| p != id) {
                    return Err(format!(
                        "expected the ID {} (the last ID was {}, the clock {unix_ms} ms)",
                        show_id(predicted.unwrap_or(id)),
                        show_id(last)
                    ));
                }
                match asked {
                    Some((ms, Some(seq))) if id != (ms, seq) => {
                        return Err(format!(
                            "the ID is not the explicit one asked for ({})",
                            show_id((ms, seq))
                        ));
                    }
                    Some((ms, None)) if id.0 != ms => {
                        return Err(format!("the ID's milliseconds are not the {ms} asked for"));
                    }
                    _ => {}
                }
                if matches!(known, Known::Absent) {
                    *known = Known::Present(Stream::default());
                }
                self.xadd_apply(key, id, fields, trim)
            }
            other => Err(format!("expected an ID, got {other:?}")),
        }
    }

    fn xadd_apply(
        &mut self,
        key: &[u8],
        id: Id,
        fields: &[Vec<u8>],
        trim: Option<(state::Trim, bool)>,
    ) -> Result<(), String> {
        let known = self.key(key);
        let Known::Present(s) = known else {
            return Ok(());
        };
        s.entries.insert(id, fields.to_vec());
        s.last = id;
        match trim {
            None => {}
            Some((t, false)) => {
                let n = s.exact_trim(&t);
                s.trim_first(n);
            }
            Some((_, true)) => *known = Known::Unknown,
        }
        Ok(())
    }

    fn xdel(&mut self, at: &At<'_>) -> Result<(), String> {
        let key = &at.args[1];
        let ids: Option<Vec<Id>> = at.args[2..].iter().map(|a| parse_id(a, 0)).collect();
        let Some(ids) = ids else {
            return Ok(()); // refused as a whole
        };
        let known = self.key(key);
        let removed = match known {
            Known::Unknown => return Ok(()),
            Known::Absent => 0,
            Known::Present(s) => ids
                .iter()
                .filter(|id| s.entries.remove(id).is_some())
                .count(),
        };
        match at.reply {
            Some(r) if integer(r)? != removed as i64 => Err(format!("expected {removed} deleted")),
            _ => Ok(()),
        }
    }

    fn xtrim(&mut self, at: &At<'_>) -> Result<(), String> {
        let key = &at.args[1];
        let Some((trim, approx, _)) = parse_trim(at.args, 2) else {
            return Ok(());
        };
        let known = self.key(key);
        let Known::Present(s) = known else {
            if matches!(known, Known::Absent) {
                if let Some(r) = at.reply {
                    if !matches!(r, Frame::Error(_)) && integer(r)? != 0 {
                        return Err("trimmed a stream that does not exist".into());
                    }
                }
            }
            return Ok(());
        };
        let exact = s.exact_trim(&trim);
        let removed = match at.reply {
            None if approx => {
                *known = Known::Unknown;
                return Ok(());
            }
            None => exact,
            Some(Frame::Error(_)) => return Ok(()),
            Some(r) => {
                let n = integer(r)?;
                if (!approx && n != exact as i64) || (approx && (n < 0 || n > exact as i64)) {
                    return Err(format!(
                        "the stream had {} entries: an {} trim removes {exact}",
                        s.entries.len(),
                        if approx { "approximate" } else { "exact" }
                    ));
                }
                n as usize
            }
        };
        s.trim_first(removed);
        Ok(())
    }

    fn xlen(&mut self, at: &At<'_>) -> Result<(), String> {
        let len = match self.key(&at.args[1]) {
            Known::Unknown => return Ok(()),
            Known::Absent => 0,
            Known::Present(s) => s.entries.len(),
        };
        match at.reply {
            Some(r) if integer(r)? != len as i64 => Err(format!("the stream has {len} entries")),
            _ => Ok(()),
        }
    }

    fn xrange(&mut self, at: &At<'_>, rev: bool) -> Result<(), String> {
        let args = at.args;
        if args.len() < 4 {
            return Ok(());
        }
        let (start_arg, end_arg) = if rev {
            (&args[3], &args[2])
        } else {
            (&args[2], &args[3])
        };
        let (Some(start), Some(end)) = (parse_bound(start_arg, true), parse_bound(end_arg, false))
        else {
            return Ok(());
        };
        let count = count_option(&args[4..]);
        let Some(reply) = at.reply.filter(|r| !matches!(r, Frame::Error(_))) else {
            return Ok(());
        };
        let expected = match self.key(&args[1]) {
            Known::Unknown => return Ok(()),
            Known::Absent => Vec::new(),
            Known::Present(_) if count == Some(0) => Vec::new(),
            Known::Present(s) => model_entries(
                s.range(start, end, count.unwrap_or(0), rev)
                    .into_iter()
                    .map(|(id, f)| (id, Some(f))),
                false,
            ),
        };
        let got = parse_entries(reply)?;
        if got != expected {
            return Err(format!("expected {}", show_entries(&expected)));
        }
        Ok(())
    }

    fn xread(&mut self, at: &At<'_>) -> Result<(), String> {
        let Some(read) = ReadArgs::parse(at.args) else {
            return Ok(());
        };
        let Some(reply) = at.reply.filter(|r| !matches!(r, Frame::Error(_))) else {
            return Ok(());
        };
        let got = parse_read_reply(reply)?;
        read.only_requested(&got)?;
        let count = read.count_now(at);
        for (key, id_arg) in read.streams() {
            let s = match self.key(key) {
                Known::Unknown => continue,
                Known::Absent => None,
                Known::Present(s) => Some(&*s),
            };
            let got_key: &[state::ReplyEntry] = got
                .iter()
                .find(|(k, _)| k == key)
                .map_or(&[], |(_, e)| e.as_slice());
            if id_arg.as_slice() == b"$" {
                // After the last ID when it parked: entries, if any, are
                // consecutive live ones.
                let Some(first) = got_key.first() else {
                    continue;
                };
                let expected = s.map_or_else(Vec::new, |s| {
                    model_entries(
                        s.range(first.id, ID_MAX, got_key.len(), false)
                            .into_iter()
                            .map(|(id, f)| (id, Some(f))),
                        false,
                    )
                });
                if got_key != expected.as_slice() {
                    return Err(format!(
                        "{}: expected consecutive live entries {}",
                        String::from_utf8_lossy(key),
                        show_entries(&expected)
                    ));
                }
                continue;
            }
            let Some(after) = parse_id(id_arg, 0) else {
                return Ok(());
            };
            let expected = match (s, state::next_id(after)) {
                (Some(s), Some(from)) => model_entries(
                    s.range(from, ID_MAX, count, false)
                        .into_iter()
                        .map(|(id, f)| (id, Some(f))),
                    false,
                ),
                _ => Vec::new(),
            };
            if got_key != expected.as_slice() {
                return Err(format!(
                    "{}: expected the live entries after {}: {}",
                    String::from_utf8_lossy(key),
                    show_id(after),
                    show_entries(&expected)
                ));
            }
        }
        if matches!(reply, Frame::Null) {
            read.timed_out_in_time(at)?;
        }
        Ok(())
    }
}

/// XREAD's and XREADGROUP's arguments.
pub(crate) struct ReadArgs<'a> {
    args: &'a [Vec<u8>],
    pub count: Option<usize>,
    pub block_ms: Option<u64>,
    pub noack: bool,
    pub group: Option<(&'a [u8], &'a [u8])>,
    streams_at: usize,
    streams_count: usize,
}

impl<'a> ReadArgs<'a> {
    fn parse(args: &'a [Vec<u8>]) -> Option<ReadArgs<'a>> {
        let mut r = ReadArgs {
            args,
            count: None,
            block_ms: None,
            noack: false,
            group: None,
            streams_at: 0,
            streams_count: 0,
        };
        let mut i = 1;
        while i < args.len() {
            let a = &args[i];
            let number = |at: usize| -> Option<u64> {
                std::str::from_utf8(args.get(at)?).ok()?.parse().ok()
            };
            if a.eq_ignore_ascii_case(b"count") {
                r.count = Some(number(i + 1)? as usize);
                i += 2;
            } else if a.eq_ignore_ascii_case(b"block") {
                r.block_ms = Some(number(i + 1)?);
                i += 2;
            } else if a.eq_ignore_ascii_case(b"noack") {
                r.noack = true;
                i += 1;
            } else if a.eq_ignore_ascii_case(b"group") {
                r.group = Some((args.get(i + 1)?, args.get(i + 2)?));
                i += 3;
            } else if a.eq_ignore_ascii_case(b"streams") {
                let n = args.len() - i - 1;
                if n == 0 || !n.is_multiple_of(2) {
                    return None;
                }
                r.streams_at = i + 1;
                r.streams_count = n / 2;
                return Some(r);
            } else {
                return None;
            }
        }
        None
    }

    /// (key, ID argument) per stream read.
    fn streams(&self) -> impl Iterator<Item = (&'a Vec<u8>, &'a Vec<u8>)> {
        let keys = &self.args[self.streams_at..self.streams_at + self.streams_count];
        let ids = &self.args[self.streams_at + self.streams_count..];
        keys.iter().zip(ids.iter())
    }

    /// COUNT as it applied when the request executed: a blocked read
    /// served without one reads 1000 entries (0: no limit).
    fn count_now(&self, at: &At<'_>) -> usize {
        match self.count {
            Some(n) => n,
            None if self.block_ms.is_some() && !executed_at_once(at) => 1000,
            None => 0,
        }
    }

    fn only_requested(&self, got: &[(Vec<u8>, Vec<state::ReplyEntry>)]) -> Result<(), String> {
        for (key, _) in got {
            if !self.streams().any(|(k, _)| k == key) {
                return Err(format!(
                    "the reply carries stream {} that the request did not name",
                    String::from_utf8_lossy(key)
                ));
            }
        }
        Ok(())
    }

    /// A null reply to a blocking read is a timeout: it parked, and waited
    /// its BLOCK milliseconds (when the checker can place it).
    fn timed_out_in_time(&self, at: &At<'_>) -> Result<(), String> {
        let (Some(ms), Some(r)) = (self.block_ms, at.received) else {
            return Ok(());
        };
        if ms == 0 {
            return Err("a null reply to a read blocking forever".into());
        }
        if executed_at_once(at) {
            return Err(format!(
                "replied null at once instead of blocking up to {ms} ms"
            ));
        }
        let waited_ns = at.exec.start_ns.saturating_sub(r.at_ns);
        if waited_ns + TIMEOUT_SLACK_NS < ms * 1_000_000 {
            return Err(format!(
                "timed out {waited_ns} ns after it parked (received at {} ns), before its BLOCK of {ms} ms",
                r.at_ns
            ));
        }
        Ok(())
    }
}

/// Whether the request executed in the turn that received it (it did not
/// park). Unknown (false) when it cannot be placed.
fn executed_at_once(at: &At<'_>) -> bool {
    at.received.is_some_and(|r| at.index < r.executions_after)
}
