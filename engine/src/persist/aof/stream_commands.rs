//! A stream as the commands that rebuild it (Redis's `rewriteStreamObject`):
//! an XADD per entry (or `XADD key MAXLEN 0 0-1 x y` for an empty stream),
//! XSETID with the counters, then per group XGROUP CREATE with ENTRIESREAD,
//! and per consumer XGROUP CREATECONSUMER when it owns nothing, else an
//! `XCLAIM ... 0 id TIME t RETRYCOUNT n JUSTID FORCE` per pending entry.

use crate::resp::encode::encode_request;
use crate::types::stream::{Stream, StreamId};

/// Appends the commands that build `key`; returns the items written.
pub(super) fn stream_commands(out: &mut Vec<u8>, key: &[u8], s: &Stream) -> u64 {
    let mut items = 0u64;
    if s.is_empty() {
        let argv: [&[u8]; 7] = [b"XADD", key, b"MAXLEN", b"0", b"0-1", b"x", b"y"];
        out.extend(encode_request(&argv));
    } else {
        s.walk(StreamId::MIN, StreamId::MAX, false, |node, item| {
            let id = item.id.to_bytes();
            let mut argv: Vec<&[u8]> = vec![b"XADD", key, &id];
            for (f, v) in node.pairs(item) {
                argv.push(f);
                argv.push(v);
            }
            out.extend(encode_request(&argv));
            items += 1;
            true
        });
    }
    let (last, added, max_deleted) = (
        s.last_id.to_bytes(),
        s.entries_added.to_string(),
        s.max_deleted_id.to_bytes(),
    );
    let argv: [&[u8]; 7] = [
        b"XSETID",
        key,
        &last,
        b"ENTRIESADDED",
        added.as_bytes(),
        b"MAXDELETEDID",
        &max_deleted,
    ];
    out.extend(encode_request(&argv));
    for (name, g) in &s.groups {
        let last = g.last_id.to_bytes();
        let read = g.entries_read.map_or(-1, |n| n as i64).to_string();
        let argv: [&[u8]; 7] = [
            b"XGROUP",
            b"CREATE",
            key,
            name,
            &last,
            b"ENTRIESREAD",
            read.as_bytes(),
        ];
        out.extend(encode_request(&argv));
        for (cname, c) in &g.consumers {
            if c.pel.is_empty() {
                let argv: [&[u8]; 5] = [b"XGROUP", b"CREATECONSUMER", key, name, cname];
                out.extend(encode_request(&argv));
                continue;
            }
            for id in &c.pel {
                let Some(p) = g.pel.get(id) else { continue };
                let (id, time, count) = (
                    id.to_bytes(),
                    p.delivery_time_ms.to_string(),
                    p.delivery_count.to_string(),
                );
                let argv: [&[u8]; 12] = [
                    b"XCLAIM",
                    key,
                    name,
                    cname,
                    b"0",
                    &id,
                    b"TIME",
                    time.as_bytes(),
                    b"RETRYCOUNT",
                    count.as_bytes(),
                    b"JUSTID",
                    b"FORCE",
                ];
                out.extend(encode_request(&argv));
                items += 1;
            }
        }
    }
    items + 1
}
