//! The consumer-group commands of the stream checker: XGROUP CREATE and
//! DESTROY, XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM.

use seedkv_engine::resp::Frame;

use super::state::{
    model_entries, next_id, parse_bound, parse_entries, parse_id, parse_read_reply, show_entries,
    show_id, Group, Id, Known, ReplyEntry, Stream, ID_MAX, ID_MIN,
};
use super::{integer, At, ReadArgs, Walk};

/// Where a group stands in the model.
enum Standing<'a> {
    /// The stream exists with the group, known.
    Known(&'a mut Stream),
    /// The stream or the group is not known.
    Unknown,
    /// The stream does not exist, or has no such group (NOGROUP).
    Missing,
}

fn is_nogroup(reply: &Frame) -> bool {
    matches!(reply, Frame::Error(e) if e.starts_with(b"NOGROUP") || e.starts_with(b"UNBLOCKED"))
}

/// The group `name` of a stream the caller checked has it.
fn group<'s>(s: &'s mut Stream, name: &[u8]) -> &'s mut Group {
    s.groups
        .get_mut(name)
        .and_then(Option::as_mut)
        .expect("a known group")
}

/// The live entries (or bare IDs) a claim replied, as the model has them.
fn claimed_entries(s: &Stream, ids: &[Id], justid: bool) -> Vec<ReplyEntry> {
    model_entries(ids.iter().map(|id| (*id, s.entries.get(id))), justid)
}

impl Walk {
    fn standing(&mut self, key: &[u8], name: &[u8]) -> Standing<'_> {
        match self.key(key) {
            Known::Unknown => Standing::Unknown,
            Known::Absent => Standing::Missing,
            Known::Present(s) => match s.groups.get(name) {
                None => Standing::Missing,
                Some(None) => Standing::Unknown,
                Some(Some(_)) => Standing::Known(s),
            },
        }
    }

    fn forget_group(&mut self, key: &[u8], name: &[u8]) {
        if let Known::Present(s) = self.key(key) {
            s.groups.insert(name.to_vec(), None);
        }
    }

    /// A command that answers NOGROUP when the group is missing: `Ok(true)`
    /// when the caller should go on judging (the group is known), after
    /// checking a NOGROUP reply against the model.
    fn judge_missing(&mut self, at: &At<'_>, key: &[u8], name: &[u8]) -> Result<bool, String> {
        let standing = self.standing(key, name);
        let nogroup = at.reply.is_some_and(is_nogroup);
        match standing {
            Standing::Unknown => Ok(false),
            Standing::Missing if at.reply.is_some_and(|r| !matches!(r, Frame::Error(_))) => {
                Err("a group reply, although the stream or its group does not exist".into())
            }
            Standing::Missing => Ok(false),
            Standing::Known(_) if nogroup => {
                Err("NOGROUP, although the stream has the group".into())
            }
            Standing::Known(_) => Ok(at.reply.is_none_or(|r| !matches!(r, Frame::Error(_)))),
        }
    }

    pub(super) fn xgroup_create(&mut self, at: &At<'_>) -> Result<(), String> {
        let args = at.args;
        let (Some(key), Some(name), Some(id_arg)) = (args.get(2), args.get(3), args.get(4)) else {
            return Ok(());
        };
        let mkstream = args[5..]
            .iter()
            .any(|a| a.eq_ignore_ascii_case(b"mkstream"));
        let ok = at
            .reply
            .is_some_and(|r| matches!(r, Frame::Simple(s) if s == b"OK"));
        let busy = at
            .reply
            .is_some_and(|r| matches!(r, Frame::Error(e) if e.starts_with(b"BUSYGROUP")));
        let known = self.key(key);
        match known {
            Known::Unknown => Ok(()),
            Known::Absent if !mkstream => match ok {
                true => {
                    Err("created a group on a stream that does not exist, without MKSTREAM".into())
                }
                false => Ok(()),
            },
            Known::Present(s) if s.groups.contains_key(name.as_slice()) => match ok {
                true => Err("created a group that exists (expected BUSYGROUP)".into()),
                false => Ok(()),
            },
            _ => {
                if busy {
                    return Err("BUSYGROUP, although the group does not exist".into());
                }
                if at.reply.is_some() && !ok {
                    return Ok(()); // refused for another reason (not sent)
                }
                if matches!(known, Known::Absent) {
                    *known = Known::Present(Stream::default());
                }
                let Known::Present(s) = known else {
                    return Ok(());
                };
                let last = match id_arg.as_slice() {
                    b"$" => s.last,
                    arg => match parse_id(arg, 0) {
                        Some(id) => id,
                        None => {
                            s.groups.insert(name.clone(), None);
                            return Ok(());
                        }
                    },
                };
                s.groups.insert(
                    name.clone(),
                    Some(Group {
                        last,
                        ..Group::default()
                    }),
                );
                Ok(())
            }
        }
    }

    pub(super) fn xgroup_destroy(&mut self, at: &At<'_>) -> Result<(), String> {
        let (Some(key), Some(name)) = (at.args.get(2), at.args.get(3)) else {
            return Ok(());
        };
        let removed = match self.key(key) {
            Known::Unknown => return Ok(()),
            Known::Absent => return Ok(()), // an error
            Known::Present(s) => s.groups.remove(name.as_slice()).is_some(),
        };
        match at.reply {
            Some(r) if integer(r)? != i64::from(removed) => {
                Err(format!("expected {}", i64::from(removed)))
            }
            _ => Ok(()),
        }
    }

    pub(super) fn xreadgroup(&mut self, at: &At<'_>) -> Result<(), String> {
        let Some(read) = ReadArgs::parse(at.args) else {
            return Ok(());
        };
        let Some((name, consumer)) = read.group else {
            return Ok(());
        };
        let streams: Vec<(&Vec<u8>, &Vec<u8>)> = read.streams().collect();
        if let Some(reply) = at.reply.filter(|r| matches!(r, Frame::Error(_))) {
            if is_nogroup(reply) {
                let all_known = streams
                    .iter()
                    .all(|(key, _)| matches!(self.standing(key, name), Standing::Known(_)));
                if all_known {
                    return Err("NOGROUP, although every stream named has the group".into());
                }
            }
            return Ok(());
        }
        let got = match at.reply {
            Some(reply) => {
                let got = parse_read_reply(reply)?;
                read.only_requested(&got)?;
                Some(got)
            }
            None => None,
        };
        let count = read.count_now(at);
        for (key, id_arg) in streams {
            let got_key: Option<&[ReplyEntry]> = got.as_ref().map(|g| {
                g.iter()
                    .find(|(k, _)| k == key)
                    .map_or(&[][..], |(_, e)| e.as_slice())
            });
            let s = match self.standing(key, name) {
                Standing::Unknown => continue,
                Standing::Missing => {
                    if got.is_some() {
                        return Err(format!(
                            "served {} although it has no group {}",
                            String::from_utf8_lossy(key),
                            String::from_utf8_lossy(name)
                        ));
                    }
                    continue;
                }
                Standing::Known(s) => s,
            };
            let expected = if id_arg.as_slice() == b">" {
                let g = group(s, name);
                let from = next_id(g.last).unwrap_or(ID_MAX);
                let ids: Vec<Id> = s
                    .range(from, ID_MAX, count, false)
                    .into_iter()
                    .map(|(id, _)| id)
                    .collect();
                let expected = claimed_entries(s, &ids, false);
                let g = group(s, name);
                for &id in &ids {
                    g.last = g.last.max(id);
                    if !read.noack {
                        g.pel.insert(id, consumer.to_vec());
                    }
                }
                expected
            } else {
                let Some(after) = parse_id(id_arg, 0) else {
                    continue;
                };
                let g = group(s, name);
                let limit = if count == 0 { usize::MAX } else { count };
                let ids: Vec<Id> = match next_id(after) {
                    Some(from) => g
                        .pel
                        .range(from..)
                        .filter(|(_, owner)| owner.as_slice() == consumer)
                        .map(|(id, _)| *id)
                        .take(limit)
                        .collect(),
                    None => Vec::new(),
                };
                claimed_entries(s, &ids, false)
            };
            if let Some(got_key) = got_key {
                if got_key != expected.as_slice() {
                    let what = if id_arg.as_slice() == b">" {
                        "the next undelivered live entries"
                    } else {
                        "the consumer's pending entries"
                    };
                    return Err(format!(
                        "{}: expected {what} {}, got {}",
                        String::from_utf8_lossy(key),
                        show_entries(&expected),
                        show_entries(got_key)
                    ));
                }
            }
        }
        if at.reply.is_some_and(|r| matches!(r, Frame::Null)) {
            read.timed_out_in_time(at)?;
        }
        Ok(())
    }

    pub(super) fn xack(&mut self, at: &At<'_>) -> Result<(), String> {
        let (key, name) = (&at.args[1], &at.args[2]);
        let ids: Option<Vec<Id>> = at.args[3..].iter().map(|a| parse_id(a, 0)).collect();
        let Some(ids) = ids else { return Ok(()) };
        let acked = match self.standing(key, name) {
            Standing::Unknown => return Ok(()),
            Standing::Missing => 0,
            Standing::Known(s) => {
                let g = group(s, name);
                ids.iter().filter(|id| g.pel.remove(id).is_some()).count()
            }
        };
        match at.reply {
            Some(r) if integer(r)? != acked as i64 => {
                Err(format!("expected {acked} acknowledged (of those pending)"))
            }
            _ => Ok(()),
        }
    }

    pub(super) fn xpending(&mut self, at: &At<'_>) -> Result<(), String> {
        let args = at.args;
        let (key, name) = (&args[1], &args[2]);
        if !self.judge_missing(at, key, name)? {
            return Ok(());
        }
        let Some(reply) = at.reply else { return Ok(()) };
        let Standing::Known(s) = self.standing(key, name) else {
            return Ok(());
        };
        let g = group(s, name);
        if args.len() == 3 {
            return pending_summary(g, reply);
        }
        let mut i = 3;
        let idle = args[3].eq_ignore_ascii_case(b"idle");
        if idle {
            i += 2;
        }
        let (Some(start), Some(end), Some(count)) = (
            args.get(i).and_then(|a| parse_bound(a, true)),
            args.get(i + 1).and_then(|a| parse_bound(a, false)),
            args.get(i + 2)
                .and_then(|a| std::str::from_utf8(a).ok()?.parse::<usize>().ok()),
        ) else {
            return Ok(());
        };
        let consumer = args.get(i + 3);
        let expected: Vec<(Id, Vec<u8>)> = if start > end {
            Vec::new()
        } else {
            g.pel
                .range(start..=end)
                .filter(|(_, owner)| consumer.is_none_or(|c| c == *owner))
                .map(|(id, owner)| (*id, owner.clone()))
                .collect()
        };
        let got = pending_rows(reply)?;
        let fits = if idle {
            // Some rows are filtered by idle time: an ordered subset.
            let mut rest = expected.iter();
            got.len() <= count && got.iter().all(|row| rest.any(|e| e == row))
        } else {
            got.as_slice() == &expected[..expected.len().min(count)]
        };
        if !fits {
            let show = |rows: &[(Id, Vec<u8>)]| {
                rows.iter()
                    .take(8)
                    .map(|(id, c)| format!("{} {}", show_id(*id), String::from_utf8_lossy(c)))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(format!(
                "expected the pending entries [{}] (at most {count}), got [{}]",
                show(&expected),
                show(&got)
            ));
        }
        Ok(())
    }

    pub(super) fn xclaim(&mut self, at: &At<'_>) -> Result<(), String> {
        let args = at.args;
        if args.len() < 6 {
            return Ok(());
        }
        let (key, name, consumer) = (&args[1], &args[2], &args[3]);
        let Some(min_idle) = std::str::from_utf8(&args[4])
            .ok()
            .and_then(|a| a.parse::<i64>().ok())
        else {
            return Ok(());
        };
        let ids: Vec<Id> = args[5..].iter().map_while(|a| parse_id(a, 0)).collect();
        let options = &args[5 + ids.len()..];
        let justid = options.iter().any(|o| o.eq_ignore_ascii_case(b"justid"));
        if options.len() > usize::from(justid) {
            // FORCE, IDLE, TIME, RETRYCOUNT, LASTID: not followed.
            self.forget_group(key, name);
            return Ok(());
        }
        if !self.judge_missing(at, key, name)? {
            return Ok(());
        }
        let got: Option<Vec<ReplyEntry>> = match at.reply {
            Some(r) => Some(parse_entries(r)?),
            None if min_idle <= 0 => None,
            None => {
                self.forget_group(key, name);
                return Ok(());
            }
        };
        let Standing::Known(s) = self.standing(key, name) else {
            return Ok(());
        };
        let mut claimed = Vec::new();
        let mut next = 0;
        for id in ids {
            let live = s.entries.contains_key(&id);
            let g = group(s, name);
            if !live {
                g.pel.remove(&id);
                continue;
            }
            if !g.pel.contains_key(&id) {
                continue;
            }
            let replied = got
                .as_ref()
                .is_none_or(|got| got.get(next).is_some_and(|e| e.id == id));
            if !replied {
                if min_idle <= 0 {
                    return Err(format!(
                        "pending entry {} was not claimed (min-idle {min_idle})",
                        show_id(id)
                    ));
                }
                continue;
            }
            next += 1;
            g.pel.insert(id, consumer.clone());
            claimed.push(id);
        }
        if let Some(got) = got {
            let expected = claimed_entries(s, &claimed, justid);
            if got != expected {
                return Err(format!(
                    "expected the pending live entries claimed {}",
                    show_entries(&expected)
                ));
            }
        }
        Ok(())
    }

    pub(super) fn xautoclaim(&mut self, at: &At<'_>) -> Result<(), String> {
        let args = at.args;
        if args.len() < 6 {
            return Ok(());
        }
        let (key, name, consumer) = (&args[1], &args[2], &args[3]);
        let (Some(min_idle), Some(start)) = (
            std::str::from_utf8(&args[4])
                .ok()
                .and_then(|a| a.parse::<i64>().ok()),
            parse_bound(&args[5], true),
        ) else {
            return Ok(());
        };
        let justid = args[6..].iter().any(|o| o.eq_ignore_ascii_case(b"justid"));
        let count = match super::count_option(&args[6..]) {
            Some(n) if n > 0 => n,
            Some(_) => return Ok(()),
            None => 100,
        };
        if !self.judge_missing(at, key, name)? {
            return Ok(());
        }
        let got = match at.reply {
            Some(r) => Some(autoclaim_reply(r)?),
            None if min_idle <= 0 => None,
            None => {
                self.forget_group(key, name);
                return Ok(());
            }
        };
        let Standing::Known(s) = self.standing(key, name) else {
            return Ok(());
        };
        let (mut attempts, mut left) = (count.saturating_mul(10), count);
        let (mut claimed, mut deleted) = (Vec::new(), Vec::new());
        let mut cursor = Some(start);
        while attempts > 0 && left > 0 {
            let Some(from) = cursor else { break };
            let Some(id) = group(s, name).pel.range(from..).next().map(|(id, _)| *id) else {
                cursor = None;
                break;
            };
            attempts -= 1;
            cursor = next_id(id);
            let live = s.entries.contains_key(&id);
            let g = group(s, name);
            if !live {
                g.pel.remove(&id);
                deleted.push(id);
                left -= 1;
                continue;
            }
            let replied = got
                .as_ref()
                .is_none_or(|(_, ids, _)| ids.get(claimed.len()).is_some_and(|e| e.id == id));
            if !replied {
                if min_idle <= 0 {
                    return Err(format!(
                        "pending entry {} was not claimed (min-idle {min_idle})",
                        show_id(id)
                    ));
                }
                continue;
            }
            g.pel.insert(id, consumer.clone());
            claimed.push(id);
            left -= 1;
        }
        let g = group(s, name);
        let next = cursor
            .and_then(|from| g.pel.range(from..).next().map(|(id, _)| *id))
            .unwrap_or(ID_MIN);
        if let Some((got_cursor, got_claimed, got_deleted)) = got {
            let expected = claimed_entries(s, &claimed, justid);
            if got_claimed != expected {
                return Err(format!(
                    "expected the entries claimed {}",
                    show_entries(&expected)
                ));
            }
            if got_deleted != deleted {
                return Err(format!(
                    "expected the deleted pending entries [{}]",
                    deleted
                        .iter()
                        .map(|id| show_id(*id))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            if got_cursor != next {
                return Err(format!("expected the cursor {}", show_id(next)));
            }
        }
        Ok(())
    }
}

/// XPENDING's summary equals the group's PEL: the count, the first and
/// last IDs, and each owner's count (owners in name order).
fn pending_summary(g: &Group, reply: &Frame) -> Result<(), String> {
    let mut owners: std::collections::BTreeMap<&[u8], usize> = Default::default();
    for owner in g.pel.values() {
        *owners.entry(owner.as_slice()).or_default() += 1;
    }
    let bulk_id =
        |id: Option<&Id>| id.map_or(Frame::Null, |id| Frame::Bulk(show_id(*id).into_bytes()));
    let expected = Frame::Array(vec![
        Frame::Integer(g.pel.len() as i64),
        bulk_id(g.pel.keys().next()),
        bulk_id(g.pel.keys().next_back()),
        if owners.is_empty() {
            Frame::Null
        } else {
            Frame::Array(
                owners
                    .iter()
                    .map(|(name, n)| {
                        Frame::Array(vec![
                            Frame::Bulk(name.to_vec()),
                            Frame::Bulk(n.to_string().into_bytes()),
                        ])
                    })
                    .collect(),
            )
        },
    ]);
    if *reply != expected {
        return Err(format!(
            "expected the summary of the group's PEL: {}",
            crate::world::frame_summary(&expected)
        ));
    }
    Ok(())
}

/// XPENDING's extended rows as (ID, owner).
fn pending_rows(reply: &Frame) -> Result<Vec<(Id, Vec<u8>)>, String> {
    let Frame::Array(rows) = reply else {
        return Err(format!("not an array of pending entries: {reply:?}"));
    };
    rows.iter()
        .map(|row| match row {
            Frame::Array(cols) if cols.len() == 4 => match (&cols[0], &cols[1]) {
                (Frame::Bulk(id), Frame::Bulk(owner)) => parse_id(id, 0)
                    .map(|id| (id, owner.clone()))
                    .ok_or_else(|| "a row's ID does not parse".to_string()),
                _ => Err(format!("a malformed row {row:?}")),
            },
            _ => Err(format!("a malformed row {row:?}")),
        })
        .collect()
}

/// XAUTOCLAIM's `[cursor, claimed, deleted]`.
fn autoclaim_reply(reply: &Frame) -> Result<(Id, Vec<ReplyEntry>, Vec<Id>), String> {
    let Frame::Array(parts) = reply else {
        return Err(format!("not an XAUTOCLAIM reply: {reply:?}"));
    };
    let [Frame::Bulk(cursor), claimed, deleted] = parts.as_slice() else {
        return Err(format!("not an XAUTOCLAIM reply: {reply:?}"));
    };
    let cursor = parse_id(cursor, 0).ok_or("the cursor is not an ID")?;
    let deleted = parse_entries(deleted)?.into_iter().map(|e| e.id).collect();
    Ok((cursor, parse_entries(claimed)?, deleted))
}
