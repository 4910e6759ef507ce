//! XADD XTRIM XDEL XSETID: the commands that add, trim and delete entries
//! or move a stream's counters.

use super::{
    is_word, lookup_stream, parse_add_id, parse_i64, parse_strict_id, wrongtype, SYNTAX_ERROR,
};
use crate::cmd::{Ctx, Lookup};
use crate::notify::{class, notify};
use crate::types::stream::{AppendError, Stream, StreamId, Trim};
use crate::value::Value;

/// The trimming and (for XADD) ID options (`streamAddTrimArgs`).
#[derive(Debug, Default)]
struct AddTrimArgs {
    trim: Option<Trim>,
    approx: bool,
    /// 0: no limit.
    limit: u64,
    /// The index of the MAXLEN/MINID value (0: none).
    trim_arg: usize,
    no_mkstream: bool,
    /// XADD's ID (None: `*`) and its index.
    id: Option<crate::types::stream::ParsedId>,
    id_at: usize,
}

/// `streamParseAddOrTrimArgsOrReply`: the options from argument 2 on, up
/// to XADD's ID. `node_max_entries` sets the default LIMIT of `~`.
fn parse_add_trim(
    args: &[Vec<u8>],
    xadd: bool,
    (node_max_entries, obey): (usize, bool),
) -> Result<AddTrimArgs, &'static str> {
    const BOTH: &str =
        "ERR syntax error, MAXLEN and MINID options at the same time are not compatible";
    let mut a = AddTrimArgs::default();
    let mut limit_given = false;
    let mut limit = 0i64;
    let mut i = 2;
    while i < args.len() {
        let more = args.len() - 1 - i;
        let opt = &args[i];
        if xadd && opt.as_slice() == b"*" {
            break;
        } else if (is_word(opt, "maxlen") || is_word(opt, "minid")) && more > 0 {
            if a.trim.is_some() {
                return Err(BOTH);
            }
            a.approx = false;
            let next = &args[i + 1];
            if more >= 2 && next.as_slice() == b"~" {
                a.approx = true;
                i += 1;
            } else if more >= 2 && next.as_slice() == b"=" {
                i += 1;
            }
            let value = &args[i + 1];
            a.trim = Some(if is_word(opt, "maxlen") {
                let n = parse_i64(value)?;
                if n < 0 {
                    return Err("ERR The MAXLEN argument must be >= 0.");
                }
                Trim::MaxLen(n as u64)
            } else {
                Trim::MinId(parse_strict_id(value, 0)?)
            });
            i += 1;
            a.trim_arg = i;
        } else if is_word(opt, "limit") && more > 0 {
            limit = parse_i64(&args[i + 1])?;
            if limit < 0 {
                return Err("ERR The LIMIT argument must be >= 0.");
            }
            limit_given = true;
            i += 1;
        } else if xadd && is_word(opt, "nomkstream") {
            a.no_mkstream = true;
        } else if xadd {
            a.id = Some(parse_add_id(opt)?);
            break;
        } else {
            return Err(SYNTAX_ERROR);
        }
        i += 1;
    }
    a.id_at = i;
    if limit != 0 && a.trim_arg == 0 {
        return Err(
            "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy",
        );
    }
    if !xadd && a.trim_arg == 0 {
        return Err("ERR syntax error, XTRIM must be called with a trimming strategy");
    }
    if obey {
        // Replayed trims were rewritten to exact ones (`=`), which Redis
        // then runs without a limit.
        a.limit = 0;
    } else if limit_given {
        if !a.approx {
            return Err("ERR syntax error, LIMIT cannot be used without the special ~ option");
        }
        a.limit = limit as u64;
    } else if a.approx {
        a.limit = 100u64.saturating_mul(node_max_entries as u64);
    }
    Ok(a)
}

/// Entries freed per work unit when a trim drops whole nodes.
const FREED_ENTRIES_PER_UNIT: u64 = 4;

/// Trims `key`'s stream per `a`; returns the entries removed. Charges the
/// nodes and entries visited.
fn trim_stream(ctx: &mut Ctx, key: &[u8], a: &AddTrimArgs) -> u64 {
    let Some(trim) = a.trim else { return 0 };
    let Ok(Some(s)) = lookup_stream(ctx, key, Lookup::Write) else {
        return 0;
    };
    let (deleted, visited) = s.trim(trim, a.approx, a.limit);
    // Whole nodes go in one step each, but each of their entries is freed.
    ctx.work(visited + deleted / FREED_ENTRIES_PER_UNIT);
    deleted
}

/// The trim value a `~` trim propagates as (`streamRewriteTrimArgument`):
/// the resulting length, or the first ID left (tombstones included).
fn trim_value_after(s: &Stream, trim: Trim) -> Vec<u8> {
    match trim {
        Trim::MaxLen(_) => s.len().to_string().into_bytes(),
        Trim::MinId(_) => s.first_id_with_tombstones().to_bytes(),
    }
}

pub(super) fn xadd(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let limits = ctx.limits();
    let a = match parse_add_trim(
        args,
        true,
        (limits.stream_node_max_entries, ctx.client().replaying_aof),
    ) {
        Ok(a) => a,
        Err(e) => return ctx.error(e),
    };
    let field_at = a.id_at + 1;
    let fields = args.len().saturating_sub(field_at);
    if fields < 2 || fields % 2 == 1 {
        return ctx.error("ERR wrong number of arguments for 'xadd' command");
    }
    if let Some(p) = a.id {
        if p.seq_given && p.id.is_zero() {
            return ctx.error("ERR The ID specified in XADD must be greater than 0-0");
        }
    }
    let key = args[1].clone();
    let now_ms = ctx.now_ms();
    let existing = match lookup_stream(ctx, &key, Lookup::Write) {
        Err(()) => return wrongtype(ctx),
        Ok(s) => s.map(|s| (s.last_id, s.next_auto_id(now_ms))),
    };
    if existing.is_none() && a.no_mkstream {
        return ctx.null();
    }
    let last_id = existing.map_or(StreamId::MIN, |(last, _)| last);
    if last_id == StreamId::MAX {
        return ctx
            .error("ERR The stream has exhausted the last possible ID, unable to add more items");
    }
    let empty = Stream::new();
    let id = match a.id {
        None => existing.map_or(empty.next_auto_id(now_ms), |(_, next)| next),
        Some(p) if !p.seq_given => {
            let mut probe = Stream::new();
            probe.last_id = last_id;
            probe.next_id_in_ms(p.id.ms)
        }
        Some(p) => Some(p.id).filter(|&id| id > last_id),
    };
    let Some(id) = id else {
        return ctx.error(
            "ERR The ID specified in XADD is equal or smaller than the target stream top item",
        );
    };
    let pairs = &args[field_at..];
    ctx.work(1 + pairs.len() as u64 / 2);
    let result = match lookup_stream(ctx, &key, Lookup::Write) {
        Ok(Some(s)) => {
            let r = s.append(id, pairs, &limits);
            if r.is_ok() {
                ctx.modified_in_place(&key);
            }
            r
        }
        _ => {
            let mut s = Stream::new();
            let r = s.append(id, pairs, &limits);
            // Redis creates the key before appending; a refused append
            // leaves the empty stream.
            ctx.store(&key, Value::Stream(Box::new(s)), false);
            r
        }
    };
    match result {
        Ok(()) => {}
        Err(AppendError::IdTooSmall) => {
            return ctx.error(
                "ERR The ID specified in XADD is equal or smaller than the target stream top item",
            )
        }
        Err(AppendError::TooLarge) => return ctx.error("ERR Elements are too large to be stored"),
    }
    ctx.bulk(&id.to_bytes());
    notify(ctx, class::STREAM, "xadd", &key);
    if trim_stream(ctx, &key, &a) > 0 {
        notify(ctx, class::STREAM, "xtrim", &key);
    }
    if ctx.propagating() {
        let mut argv = args.to_vec();
        if a.id.is_none_or(|p| !p.seq_given) {
            argv[a.id_at] = id.to_bytes();
        }
        if let (true, Some(trim), Ok(Some(s))) =
            (a.approx, a.trim, lookup_stream(ctx, &key, Lookup::Write))
        {
            argv[a.trim_arg - 1] = b"=".to_vec();
            argv[a.trim_arg] = trim_value_after(s, trim);
        }
        ctx.propagate(&argv);
    }
}

pub(super) fn xtrim(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let limits = ctx.limits();
    let a = match parse_add_trim(
        args,
        false,
        (limits.stream_node_max_entries, ctx.client().replaying_aof),
    ) {
        Ok(a) => a,
        Err(e) => return ctx.error(e),
    };
    let key = args[1].clone();
    match lookup_stream(ctx, &key, Lookup::Write) {
        Err(()) => return wrongtype(ctx),
        Ok(None) => return ctx.int(0),
        Ok(Some(_)) => {}
    }
    let deleted = trim_stream(ctx, &key, &a);
    if deleted > 0 {
        ctx.modified_in_place(&key);
        ctx.server.dirty += deleted - 1;
        notify(ctx, class::STREAM, "xtrim", &key);
        if ctx.propagating() && a.approx {
            if let (Some(trim), Ok(Some(s))) = (a.trim, lookup_stream(ctx, &key, Lookup::Write)) {
                let mut argv = args.to_vec();
                argv[a.trim_arg - 1] = b"=".to_vec();
                argv[a.trim_arg] = trim_value_after(s, trim);
                ctx.propagate(&argv);
            }
        }
    }
    ctx.int(deleted as i64);
}

pub(super) fn xdel(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let key = args[1].clone();
    match lookup_stream(ctx, &key, Lookup::Write) {
        Err(()) => return wrongtype(ctx),
        Ok(None) => return ctx.int(0),
        Ok(Some(_)) => {}
    }
    // Redis checks every ID before deleting any.
    let mut ids = Vec::with_capacity(args.len() - 2);
    for arg in &args[2..] {
        match parse_strict_id(arg, 0) {
            Ok(id) => ids.push(id),
            Err(e) => return ctx.error(e),
        }
    }
    ctx.work(ids.len() as u64);
    let Ok(Some(s)) = lookup_stream(ctx, &key, Lookup::Write) else {
        return ctx.int(0);
    };
    let deleted = ids.iter().filter(|&&id| s.delete(id)).count() as u64;
    if deleted > 0 {
        ctx.modified_in_place(&key);
        ctx.server.dirty += deleted - 1;
        notify(ctx, class::STREAM, "xdel", &key);
    }
    ctx.int(deleted as i64);
}

/// XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id].
pub(super) fn xsetid(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let id = match parse_strict_id(&args[2], 0) {
        Ok(id) => id,
        Err(e) => return ctx.error(e),
    };
    let mut entries_added: Option<u64> = None;
    let mut max_deleted: Option<StreamId> = None;
    let mut i = 3;
    while i < args.len() {
        let more = args.len() - 1 - i;
        if is_word(&args[i], "entriesadded") && more > 0 {
            match parse_i64(&args[i + 1]) {
                Ok(n) if n < 0 => {
                    return ctx.error("ERR entries_added must be positive");
                }
                Ok(n) => entries_added = Some(n as u64),
                Err(e) => return ctx.error(e),
            }
            i += 2;
        } else if is_word(&args[i], "maxdeletedid") && more > 0 {
            match parse_strict_id(&args[i + 1], 0) {
                Ok(m) if id < m => {
                    return ctx.error(
                        "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id",
                    );
                }
                Ok(m) => max_deleted = Some(m),
                Err(e) => return ctx.error(e),
            }
            i += 2;
        } else {
            return ctx.error(SYNTAX_ERROR);
        }
    }
    let key = args[1].clone();
    let s = match lookup_stream(ctx, &key, Lookup::Write) {
        Err(()) => return wrongtype(ctx),
        Ok(None) => return ctx.error("ERR no such key"),
        Ok(Some(s)) => s,
    };
    if let Some((_, last)) = s.edge(true) {
        if id < last.id {
            return ctx.error(
                "ERR The ID specified in XSETID is smaller than the target stream top item",
            );
        }
        if entries_added.is_some_and(|n| (s.len() as u64) > n) {
            return ctx.error(
                "ERR The entries_added specified in XSETID is smaller than the target stream length",
            );
        }
    }
    s.last_id = id;
    if let Some(n) = entries_added {
        s.entries_added = n;
    }
    if let Some(m) = max_deleted.filter(|m| !m.is_zero()) {
        s.max_deleted_id = m;
    }
    ctx.modified_in_place(&key);
    notify(ctx, class::STREAM, "xsetid", &key);
    ctx.ok();
}
