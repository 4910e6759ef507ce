//! XINFO STREAM [FULL [COUNT n]] | GROUPS | CONSUMERS | HELP.

use super::groups::subcommand_syntax_error;
use super::range::{write_entry, write_range};
use super::{is_word, parse_i64};
use crate::cmd::Ctx;
use crate::resp::{Protocol, ReplyWriter};
use crate::types::stream::{Group, Stream, StreamId};
use crate::value::{Value, WRONGTYPE};

/// Entries, PEL entries and consumers' PEL entries XINFO STREAM FULL shows
/// without COUNT.
const FULL_DEFAULT_COUNT: usize = 10;

/// The stream at `key`, or the reply of why not (`ERR no such key`, after
/// `keymiss`; WRONGTYPE).
fn stream_or_reply<'c>(ctx: &'c mut Ctx, key: &[u8]) -> Option<&'c Stream> {
    match ctx.lookup_read(key) {
        Some(Value::Stream(_)) => {}
        Some(_) => {
            ctx.error(WRONGTYPE);
            return None;
        }
        None => {
            ctx.error("ERR no such key");
            return None;
        }
    }
    ctx.lookup(key).and_then(|v| v.as_stream())
}

/// A map header: a map in RESP3, a flat array of twice the pairs in RESP2.
fn map_len(w: &mut ReplyWriter<'_>, pairs: usize) {
    match w.protocol() {
        Protocol::Resp2 => w.array_len(pairs * 2),
        Protocol::Resp3 => w.map_len(pairs),
    }
}

fn bulk_id(w: &mut ReplyWriter<'_>, id: StreamId) {
    w.bulk(id.to_string().as_bytes());
}

fn opt_int(w: &mut ReplyWriter<'_>, v: Option<u64>) {
    match v {
        Some(n) => w.int(n as i64),
        None => w.null(),
    }
}

/// Nodes of the radix tree whose keys are the node master IDs, as Redis's
/// rax would hold them: an empty tree is its root; otherwise a run of
/// bytes all keys share is one compressed node, a byte where they differ
/// one branching node, and each key ends in a leaf node.
fn rax_nodes(keys: &[[u8; 16]], depth: usize) -> u64 {
    match keys {
        [] => 1,
        [only] if depth == only.len() => 1,
        _ => {
            let first = &keys[0];
            let last = &keys[keys.len() - 1];
            let common = (depth..16).take_while(|&i| first[i] == last[i]).count();
            if common > 0 {
                1 + rax_nodes(keys, depth + common)
            } else {
                let mut n = 1;
                let mut start = 0;
                while start < keys.len() {
                    let b = keys[start][depth];
                    let end = start + keys[start..].iter().take_while(|k| k[depth] == b).count();
                    n += rax_nodes(&keys[start..end], depth + 1);
                    start = end;
                }
                n
            }
        }
    }
}

pub(super) fn stream(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let mut full = false;
    let mut count = FULL_DEFAULT_COUNT;
    if args.len() > 3 {
        if !is_word(&args[3], "full") || args.len() == 5 || args.len() > 6 {
            return subcommand_syntax_error(ctx, args, "XINFO");
        }
        full = true;
        if args.len() == 6 {
            if !is_word(&args[4], "count") {
                return subcommand_syntax_error(ctx, args, "XINFO");
            }
            count = match parse_i64(&args[5]) {
                Ok(n) if n < 0 => FULL_DEFAULT_COUNT,
                Ok(n) => n as usize,
                Err(e) => return ctx.error(e),
            };
        }
    }
    let protocol = ctx.protocol;
    let Some(s) = stream_or_reply(ctx, &args[2]) else {
        return;
    };
    let keys: Vec<[u8; 16]> = s.nodes().map(|n| n.master.to_be_bytes()).collect();
    let mut body = Vec::new();
    let mut w = ReplyWriter::new(&mut body, protocol);
    map_len(&mut w, if full { 9 } else { 10 });
    w.bulk(b"length");
    w.int(s.len() as i64);
    w.bulk(b"radix-tree-keys");
    w.int(s.nodes_count() as i64);
    w.bulk(b"radix-tree-nodes");
    w.int(rax_nodes(&keys, 0) as i64);
    w.bulk(b"last-generated-id");
    bulk_id(&mut w, s.last_id);
    w.bulk(b"max-deleted-entry-id");
    bulk_id(&mut w, s.max_deleted_id);
    w.bulk(b"entries-added");
    w.int(s.entries_added as i64);
    w.bulk(b"recorded-first-entry-id");
    bulk_id(&mut w, s.first_id());
    let mut work = 1 + keys.len() as u64;
    if !full {
        w.bulk(b"groups");
        w.int(s.groups.len() as i64);
        for (name, last) in [("first-entry", false), ("last-entry", true)] {
            w.bulk(name.as_bytes());
            match s.edge(last) {
                Some((node, item)) => write_entry(&mut w, node, item),
                None => w.null(),
            }
        }
    } else {
        w.bulk(b"entries");
        work += write_range(&mut w, s, (StreamId::MIN, StreamId::MAX), count, false);
        w.bulk(b"groups");
        w.array_len(s.groups.len());
        for (name, g) in &s.groups {
            work += full_group(&mut w, s, name, g, count);
        }
    }
    ctx.work(work);
    ctx.w().raw(&body);
}

/// One group of XINFO STREAM FULL.
fn full_group(w: &mut ReplyWriter<'_>, s: &Stream, name: &[u8], g: &Group, count: usize) -> u64 {
    let limit = if count == 0 { usize::MAX } else { count };
    map_len(w, 7);
    w.bulk(b"name");
    w.bulk(name);
    w.bulk(b"last-delivered-id");
    bulk_id(w, g.last_id);
    w.bulk(b"entries-read");
    opt_int(w, g.entries_read);
    w.bulk(b"lag");
    opt_int(w, s.group_lag(g));
    w.bulk(b"pel-count");
    w.int(g.pel.len() as i64);
    w.bulk(b"pending");
    let shown = g.pel.len().min(limit);
    w.array_len(shown);
    for (id, p) in g.pel.iter().take(shown) {
        w.array_len(4);
        bulk_id(w, *id);
        w.bulk(&p.consumer);
        w.int(p.delivery_time_ms as i64);
        w.int(p.delivery_count as i64);
    }
    let mut work = 1 + shown as u64;
    w.bulk(b"consumers");
    w.array_len(g.consumers.len());
    for (cname, c) in &g.consumers {
        map_len(w, 4);
        w.bulk(b"name");
        w.bulk(cname);
        w.bulk(b"seen-time");
        w.int(c.seen_time_ms as i64);
        w.bulk(b"pel-count");
        w.int(c.pel.len() as i64);
        w.bulk(b"pending");
        let shown = c.pel.len().min(limit);
        w.array_len(shown);
        for id in c.pel.iter().take(shown) {
            let p = &g.pel[id];
            w.array_len(3);
            bulk_id(w, *id);
            w.int(p.delivery_time_ms as i64);
            w.int(p.delivery_count as i64);
        }
        work += 1 + shown as u64;
    }
    work
}

pub(super) fn groups(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let protocol = ctx.protocol;
    let Some(s) = stream_or_reply(ctx, &args[2]) else {
        return;
    };
    let mut body = Vec::new();
    let mut w = ReplyWriter::new(&mut body, protocol);
    w.array_len(s.groups.len());
    for (name, g) in &s.groups {
        map_len(&mut w, 6);
        w.bulk(b"name");
        w.bulk(name);
        w.bulk(b"consumers");
        w.int(g.consumers.len() as i64);
        w.bulk(b"pending");
        w.int(g.pel.len() as i64);
        w.bulk(b"last-delivered-id");
        bulk_id(&mut w, g.last_id);
        w.bulk(b"entries-read");
        opt_int(&mut w, g.entries_read);
        w.bulk(b"lag");
        opt_int(&mut w, s.group_lag(g));
    }
    let work = 1 + s.groups.len() as u64;
    ctx.work(work);
    ctx.w().raw(&body);
}

pub(super) fn consumers(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let protocol = ctx.protocol;
    let now_ms = ctx.now_ms() as i64;
    let Some(s) = stream_or_reply(ctx, &args[2]) else {
        return;
    };
    let Some(g) = s.groups.get(&args[3]) else {
        let msg = format!(
            "NOGROUP No such consumer group '{}' for key name '{}'",
            String::from_utf8_lossy(crate::commands::lists::c_str(&args[3])),
            String::from_utf8_lossy(crate::commands::lists::c_str(&args[2]))
        );
        return ctx.error(&msg);
    };
    let mut body = Vec::new();
    let mut w = ReplyWriter::new(&mut body, protocol);
    w.array_len(g.consumers.len());
    for (name, c) in &g.consumers {
        map_len(&mut w, 3);
        w.bulk(b"name");
        w.bulk(name);
        w.bulk(b"pending");
        w.int(c.pel.len() as i64);
        w.bulk(b"idle");
        w.int((now_ms - c.seen_time_ms as i64).max(0));
    }
    let work = 1 + g.consumers.len() as u64;
    ctx.work(work);
    ctx.w().raw(&body);
}

pub(super) fn help(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    const HELP: &[&str] = &[
        "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CONSUMERS <key> <groupname>",
        "    Show consumers of <groupname>.",
        "GROUPS <key>",
        "    Show the stream consumer groups.",
        "STREAM <key> [FULL [COUNT <count>]",
        "    Show information about the stream.",
        "HELP",
        "    Prints this help.",
    ];
    let mut w = ctx.w();
    w.array_len(HELP.len());
    for line in HELP {
        w.simple(line);
    }
}

#[cfg(test)]
mod tests {
    use super::rax_nodes;
    use crate::types::stream::StreamId;

    #[test]
    fn rax_node_counts_match_redis() {
        let keys = |ms: &[u64]| -> Vec<[u8; 16]> {
            ms.iter()
                .map(|&m| StreamId::new(m, 1).to_be_bytes())
                .collect()
        };
        assert_eq!(rax_nodes(&keys(&[]), 0), 1);
        assert_eq!(rax_nodes(&keys(&[1]), 0), 2);
        assert_eq!(rax_nodes(&keys(&[1, 2]), 0), 6);
        assert_eq!(rax_nodes(&keys(&[1, 2, 3, 300]), 0), 11);
    }
}
