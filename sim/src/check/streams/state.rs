//! What the stream checker knows of each `strm:` key: its live entries,
//! its last generated ID and its groups (each group's last delivered ID
//! and pending entries list), and the parsing of IDs, bounds and entry
//! replies.

use std::collections::BTreeMap;

use seedkv_engine::resp::Frame;

/// A stream ID `(ms, seq)`.
pub type Id = (u64, u64);

pub const ID_MIN: Id = (0, 0);
pub const ID_MAX: Id = (u64::MAX, u64::MAX);

/// `ms-seq`, or a bare `ms` with `missing_seq`.
pub fn parse_id(text: &[u8], missing_seq: u64) -> Option<Id> {
    let text = std::str::from_utf8(text).ok()?;
    match text.split_once('-') {
        Some((ms, seq)) => Some((ms.parse().ok()?, seq.parse().ok()?)),
        None => Some((text.parse().ok()?, missing_seq)),
    }
}

pub fn show_id((ms, seq): Id) -> String {
    format!("{ms}-{seq}")
}

/// The ID right after `id`.
pub fn next_id(id: Id) -> Option<Id> {
    match id.1.checked_add(1) {
        Some(seq) => Some((id.0, seq)),
        None => Some((id.0.checked_add(1)?, 0)),
    }
}

fn prev(id: Id) -> Option<Id> {
    match id.1.checked_sub(1) {
        Some(seq) => Some((id.0, seq)),
        None => Some((id.0.checked_sub(1)?, u64::MAX)),
    }
}

/// A range bound of XRANGE/XREVRANGE/XPENDING: `-`, `+`, `(id`, `ms`,
/// `ms-seq`. `None` for what Redis refuses (the reply is an error).
pub fn parse_bound(arg: &[u8], start: bool) -> Option<Id> {
    match arg {
        b"-" => Some(ID_MIN),
        b"+" => Some(ID_MAX),
        [b'(', rest @ ..] => {
            let id = parse_id(rest, if start { 0 } else { u64::MAX })?;
            if start {
                next_id(id)
            } else {
                prev(id)
            }
        }
        _ => parse_id(arg, if start { 0 } else { u64::MAX }),
    }
}

/// A consumer group as far as delivery goes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Group {
    /// The last delivered ID.
    pub last: Id,
    /// Pending entries and the consumer owning each.
    pub pel: BTreeMap<Id, Vec<u8>>,
}

/// A stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stream {
    /// Live entries and their fields (`field value ...`).
    pub entries: BTreeMap<Id, Vec<Vec<u8>>>,
    /// The last generated ID (deleted or trimmed entries included).
    pub last: Id,
    /// Groups; `None` for one whose state is not known.
    pub groups: BTreeMap<Vec<u8>, Option<Group>>,
}

/// What the checker knows of a key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Known {
    #[default]
    Absent,
    Present(Stream),
    Unknown,
}

impl Stream {
    /// The live entries in `[from, to]`, ascending or descending, at most
    /// `count` (0: all).
    pub fn range(&self, from: Id, to: Id, count: usize, rev: bool) -> Vec<(Id, &Vec<Vec<u8>>)> {
        if from > to {
            return Vec::new();
        }
        let limit = if count == 0 { usize::MAX } else { count };
        let it = self.entries.range(from..=to).map(|(id, f)| (*id, f));
        if rev {
            it.rev().take(limit).collect()
        } else {
            it.take(limit).collect()
        }
    }

    /// Removes the first `n` live entries (a trim).
    pub fn trim_first(&mut self, n: usize) {
        for _ in 0..n {
            if self.entries.pop_first().is_none() {
                break;
            }
        }
    }

    /// The entries an exact trim removes: down to `maxlen` entries, or
    /// those below `minid`.
    pub fn exact_trim(&self, threshold: &Trim) -> usize {
        match *threshold {
            Trim::MaxLen(n) => self.entries.len().saturating_sub(n),
            Trim::MinId(id) => self.entries.range(..id).count(),
        }
    }
}

/// A trim's threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trim {
    MaxLen(usize),
    MinId(Id),
}

/// `MAXLEN|MINID [=|~] threshold [LIMIT n]` at `args[at..]`: the trim,
/// whether it is approximate, and the index after it.
pub fn parse_trim(args: &[Vec<u8>], at: usize) -> Option<(Trim, bool, usize)> {
    let kind = args.get(at)?;
    let mut i = at + 1;
    let mut approx = false;
    match args.get(i).map(Vec::as_slice) {
        Some(b"~") => {
            approx = true;
            i += 1;
        }
        Some(b"=") => i += 1,
        _ => {}
    }
    let threshold = args.get(i)?;
    i += 1;
    let trim = if kind.eq_ignore_ascii_case(b"maxlen") {
        Trim::MaxLen(std::str::from_utf8(threshold).ok()?.parse().ok()?)
    } else if kind.eq_ignore_ascii_case(b"minid") {
        Trim::MinId(parse_id(threshold, 0)?)
    } else {
        return None;
    };
    if args
        .get(i)
        .is_some_and(|a| a.eq_ignore_ascii_case(b"limit"))
    {
        i += 2;
    }
    Some((trim, approx, i))
}

/// One entry of a reply: `[id, [field, value...]]`, the fields `None`
/// for a deleted entry (`[id, nil]`), or a bare ID (JUSTID).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplyEntry {
    pub id: Id,
    pub fields: Option<Vec<Vec<u8>>>,
}

/// An array of entries; `Err` describes what does not parse.
pub fn parse_entries(frame: &Frame) -> Result<Vec<ReplyEntry>, String> {
    let Frame::Array(items) = frame else {
        return Err(format!("not an array of entries: {frame:?}"));
    };
    items.iter().map(parse_entry).collect()
}

fn bulk_id(frame: &Frame) -> Result<Id, String> {
    match frame {
        Frame::Bulk(b) => parse_id(b, 0)
            .filter(|_| b.contains(&b'-'))
            .ok_or_else(|| format!("not an ID: {:?}", String::from_utf8_lossy(b))),
        other => Err(format!("not an ID: {other:?}")),
    }
}

fn parse_entry(frame: &Frame) -> Result<ReplyEntry, String> {
    match frame {
        Frame::Bulk(_) => Ok(ReplyEntry {
            id: bulk_id(frame)?,
            fields: None,
        }),
        Frame::Array(pair) if pair.len() == 2 => {
            let id = bulk_id(&pair[0])?;
            let fields = match &pair[1] {
                Frame::Null => None,
                Frame::Array(fs) => Some(
                    fs.iter()
                        .map(|f| match f {
                            Frame::Bulk(b) => Ok(b.clone()),
                            other => Err(format!("a field is not a string: {other:?}")),
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                ),
                other => Err(format!("entry fields are {other:?}"))?,
            };
            Ok(ReplyEntry { id, fields })
        }
        other => Err(format!("not an entry: {other:?}")),
    }
}

/// Entries per stream key, as a read reply carries them.
pub type ReadReply = Vec<(Vec<u8>, Vec<ReplyEntry>)>;

/// A read reply (`[[key, entries]...]`, a map in RESP3, or null) as
/// (key, entries) pairs.
pub fn parse_read_reply(frame: &Frame) -> Result<ReadReply, String> {
    let pairs: Vec<(&Frame, &Frame)> = match frame {
        Frame::Null => return Ok(Vec::new()),
        Frame::Array(items) => items
            .iter()
            .map(|item| match item {
                Frame::Array(p) if p.len() == 2 => Ok((&p[0], &p[1])),
                other => Err(format!("not a [key, entries] pair: {other:?}")),
            })
            .collect::<Result<_, _>>()?,
        Frame::Map(pairs) => pairs.iter().map(|(k, v)| (k, v)).collect(),
        other => return Err(format!("not a read reply: {other:?}")),
    };
    pairs
        .into_iter()
        .map(|(k, v)| match k {
            Frame::Bulk(key) => Ok((key.clone(), parse_entries(v)?)),
            other => Err(format!("a key is {other:?}")),
        })
        .collect()
}

/// Entries as the model says they are, for comparison with a reply.
pub fn model_entries<'a>(
    entries: impl IntoIterator<Item = (Id, Option<&'a Vec<Vec<u8>>>)>,
    justid: bool,
) -> Vec<ReplyEntry> {
    entries
        .into_iter()
        .map(|(id, fields)| ReplyEntry {
            id,
            fields: if justid { None } else { fields.cloned() },
        })
        .collect()
}

/// Entries for a message, shortened.
pub fn show_entries(entries: &[ReplyEntry]) -> String {
    const SHOWN_MAX: usize = 8;
    let mut parts: Vec<String> = entries
        .iter()
        .take(SHOWN_MAX)
        .map(|e| match &e.fields {
            None => show_id(e.id),
            Some(fs) => format!(
                "{} {}",
                show_id(e.id),
                fs.iter()
                    .map(|f| String::from_utf8_lossy(f).into_owned())
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
        })
        .collect();
    if entries.len() > SHOWN_MAX {
        parts.push(format!("... {} more", entries.len() - SHOWN_MAX));
    }
    format!("[{}]", parts.join(", "))
}
