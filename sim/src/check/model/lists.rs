//! The reference model's list commands, written from Redis 7.0's
//! `t_list.c`: LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LLEN LRANGE LINDEX LSET
//! LINSERT LREM LTRIM LPOS LMOVE RPOPLPUSH LMPOP and the blocking BLPOP BRPOP
//! BLMOVE BRPOPLPUSH BLMPOP. A list is a `VecDeque`; errors that do not
//! depend on the data come first, in Redis's order.
//!
//! A blocking pop is recorded when it was served or timed out, so at its
//! execution it either finds a non-empty list (served) or none (timed out,
//! a null reply). [`blocking_outcomes`] lists what it may have done when
//! that is ambiguous; the recorded reply then picks one.

use std::collections::VecDeque;

use seedkv_engine::resp::Frame;

use super::commands::Call;
use super::redis_c::{
    numkeys_keys, parse_i64_strict, parse_timeout, NOT_AN_INTEGER, OUT_OF_RANGE_POSITIVE,
    SYNTAX_ERROR, WRONGTYPE,
};
use super::{Expected, KeyState, KeyspaceModel, Typed, Value};

type List = VecDeque<Vec<u8>>;

/// Redis 7.0 arities of the modelled list commands.
pub(crate) fn arity(name: &str) -> Option<i64> {
    Some(match name {
        "lpush" | "rpush" | "lpushx" | "rpushx" | "lpos" | "blpop" | "brpop" => -3,
        "lpop" | "rpop" => -2,
        "llen" => 2,
        "lindex" | "rpoplpush" => 3,
        "lrange" | "lset" | "lrem" | "ltrim" | "brpoplpush" => 4,
        "linsert" | "lmove" => 5,
        "lmpop" => -4,
        "blmove" => 6,
        "blmpop" => -5,
        _ => return None,
    })
}

/// The keys a list command names, and whether it may write them.
pub(crate) fn keys<'a>(name: &str, args: &'a [Vec<u8>]) -> Option<(Vec<&'a [u8]>, bool)> {
    let first: Vec<&[u8]> = args.get(1).map(Vec::as_slice).into_iter().collect();
    Some(match name {
        "llen" | "lrange" | "lindex" | "lpos" => (first, false),
        "lpush" | "rpush" | "lpushx" | "rpushx" | "lpop" | "rpop" | "lset" | "linsert" | "lrem"
        | "ltrim" => (first, true),
        "lmove" | "rpoplpush" | "blmove" | "brpoplpush" => (
            args.iter().skip(1).take(2).map(Vec::as_slice).collect(),
            true,
        ),
        "blpop" | "brpop" => (
            args[1..args.len().saturating_sub(1).max(1)]
                .iter()
                .map(Vec::as_slice)
                .collect(),
            true,
        ),
        "lmpop" => (numkeys_keys(args, 1), true),
        "blmpop" => (numkeys_keys(args, 2), true),
        _ => return None,
    })
}

/// LEFT or RIGHT (`getListPositionFromObjectOrReply`): `true` for left.
fn parse_end(text: &[u8]) -> Option<bool> {
    match text.to_ascii_lowercase().as_slice() {
        b"left" => Some(true),
        b"right" => Some(false),
        _ => None,
    }
}

fn bulks(items: impl IntoIterator<Item = Vec<u8>>) -> Frame {
    Frame::Array(items.into_iter().map(Frame::Bulk).collect())
}

fn pop_end(list: &mut List, left: bool) -> Option<Vec<u8>> {
    match left {
        true => list.pop_front(),
        false => list.pop_back(),
    }
}

fn push_end(list: &mut List, left: bool, value: Vec<u8>) {
    match left {
        true => list.push_front(value),
        false => list.push_back(value),
    }
}

/// Redis's clamping of a `start..=end` index range (LRANGE, LTRIM) to a
/// list of `len`: `None` when it selects nothing.
pub(crate) fn clamp_range(start: i64, end: i64, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    let start = if start < 0 {
        (len + start).max(0)
    } else {
        start
    };
    let end = if end < 0 { len + end } else { end };
    if start > end || start >= len {
        return None;
    }
    Some((start as usize, end.min(len - 1) as usize))
}

/// What a key means to a blocking pop at the pop's execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Readiness {
    Unknown,
    /// Absent (a collection is never empty).
    Empty,
    WrongType,
    Ready,
}

/// What a blocking pop did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    WrongType,
    /// Served from this key (index into the keys).
    Serve(usize),
    TimedOut,
}

/// Every outcome a blocking pop executed on keys in these states may have
/// had; `None` if one is unknown. Run at once, it replies WRONGTYPE on the
/// first key of another type, or pops the first non-empty one. Blocked
/// first, it was served from whichever key became ready (any non-empty
/// one: a key that became another type while it waited no longer
/// matters), or it timed out if none is.
pub(crate) fn blocking_outcomes(keys: &[Readiness]) -> Option<Vec<Outcome>> {
    if keys.contains(&Readiness::Unknown) {
        return None;
    }
    let immediate = keys
        .iter()
        .enumerate()
        .find_map(|(i, r)| match r {
            Readiness::WrongType => Some(Outcome::WrongType),
            Readiness::Ready => Some(Outcome::Serve(i)),
            _ => None,
        })
        .unwrap_or(Outcome::TimedOut);
    let mut outcomes = vec![immediate];
    if keys.contains(&Readiness::WrongType) || immediate != Outcome::TimedOut {
        for (i, r) in keys.iter().enumerate() {
            if *r == Readiness::Ready && !outcomes.contains(&Outcome::Serve(i)) {
                outcomes.push(Outcome::Serve(i));
            }
        }
        if !keys.contains(&Readiness::Ready) && !outcomes.contains(&Outcome::TimedOut) {
            outcomes.push(Outcome::TimedOut);
        }
    }
    Some(outcomes)
}

/// Picks the outcome the recorded reply shows: `(chosen, expected)`, where
/// `chosen` is `None` when the model cannot tell (no reply, or none fits).
pub(crate) fn choose_outcome(
    outcomes: &[Outcome],
    frames: Vec<Frame>,
    reply: Option<&Frame>,
) -> (Option<Outcome>, Expected) {
    debug_assert_eq!(outcomes.len(), frames.len());
    if outcomes.len() == 1 {
        let frame = frames.into_iter().next().expect("one frame");
        return (Some(outcomes[0]), Expected::Exactly(frame));
    }
    let Some(reply) = reply else {
        return (None, Expected::Unpredictable);
    };
    match frames.iter().position(|f| f == reply) {
        Some(i) => (Some(outcomes[i]), Expected::Verdict(Ok(()))),
        None => {
            let shown: Vec<String> = frames.iter().map(Frame::render).collect();
            let wanted = format!("one of [{}]", shown.join(" | "));
            (None, Expected::Verdict(Err(wanted)))
        }
    }
}

impl KeyspaceModel {
    pub(crate) fn list_command(&mut self, c: &Call) -> Expected {
        match c.name {
            "lpush" | "rpush" | "lpushx" | "rpushx" => self.lpush(c),
            "lpop" | "rpop" => self.lpop(c),
            "llen" => match self.read_as(c.db, c.key(), c.now, Value::as_list) {
                Typed::Unknown => Expected::Unpredictable,
                Typed::WrongType => Expected::error(WRONGTYPE),
                Typed::Absent => Expected::integer(0),
                Typed::Found(l) => Expected::integer(l.len() as i64),
            },
            "lrange" => self.lrange(c),
            "lindex" => self.lindex(c),
            "lset" => self.lset(c),
            "linsert" => self.linsert(c),
            "lrem" => self.lrem(c),
            "ltrim" => self.ltrim(c),
            "lpos" => self.lpos(c),
            "lmove" | "rpoplpush" | "blmove" | "brpoplpush" => self.lmove(c),
            "lmpop" | "blmpop" | "blpop" | "brpop" => self.lmpop(c),
            _ => unreachable!("not a list command: {}", c.name),
        }
    }

    fn lpush(&mut self, c: &Call) -> Expected {
        let left = c.name.starts_with('l');
        let only_existing = c.name.ends_with('x');
        let list = match only_existing {
            true => self.write_as(c.db, c.key(), c.now, Value::as_list_mut),
            false => self.upsert_as(c.db, c.key(), c.now, Value::empty_list, Value::as_list_mut),
        };
        match list {
            Typed::Unknown => Expected::Unpredictable,
            Typed::WrongType => Expected::error(WRONGTYPE),
            Typed::Absent => Expected::integer(0),
            Typed::Found(list) => {
                for value in &c.args[2..] {
                    push_end(list, left, value.clone());
                }
                Expected::integer(list.len() as i64)
            }
        }
    }

    fn lpop(&mut self, c: &Call) -> Expected {
        if c.args.len() > 3 {
            return Expected::error(&format!(
                "ERR wrong number of arguments for '{}' command",
                c.name
            ));
        }
        let count = match c.args.get(2).map(|a| parse_i64_strict(a)) {
            None => None,
            Some(Some(n)) if n >= 0 => Some(n as usize),
            Some(_) => return Expected::error(OUT_OF_RANGE_POSITIVE),
        };
        let left = c.name == "lpop";
        let list = match self.write_as(c.db, c.key(), c.now, Value::as_list_mut) {
            Typed::Unknown => return Expected::Unpredictable,
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Absent => return Expected::Exactly(Frame::Null),
            Typed::Found(list) => list,
        };
        let expected = match count {
            None => Expected::bulk_or_null(pop_end(list, left).as_deref()),
            Some(n) => {
                let n = n.min(list.len());
                Expected::Exactly(bulks((0..n).filter_map(|_| pop_end(list, left))))
            }
        };
        self.drop_if_empty(c.db, c.key());
        expected
    }

    fn lrange(&mut self, c: &Call) -> Expected {
        let (Some(start), Some(end)) = (parse_i64_strict(&c.args[2]), parse_i64_strict(&c.args[3]))
        else {
            return Expected::error(NOT_AN_INTEGER);
        };
        match self.read_as(c.db, c.key(), c.now, Value::as_list) {
            Typed::Unknown => Expected::Unpredictable,
            Typed::WrongType => Expected::error(WRONGTYPE),
            Typed::Absent => Expected::Exactly(Frame::Array(Vec::new())),
            Typed::Found(list) => Expected::Exactly(match clamp_range(start, end, list.len()) {
                None => Frame::Array(Vec::new()),
                Some((from, to)) => bulks(list.range(from..=to).cloned()),
            }),
        }
    }

    fn lindex(&mut self, c: &Call) -> Expected {
        let list = match self.read_as(c.db, c.key(), c.now, Value::as_list) {
            Typed::Unknown => return Expected::Unpredictable,
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Absent => return Expected::Exactly(Frame::Null),
            Typed::Found(list) => list,
        };
        let Some(index) = parse_i64_strict(&c.args[2]) else {
            return Expected::error(NOT_AN_INTEGER);
        };
        let index = if index < 0 {
            index + list.len() as i64
        } else {
            index
        };
        let value = usize::try_from(index).ok().and_then(|i| list.get(i));
        Expected::bulk_or_null(value.map(Vec::as_slice))
    }

    fn lset(&mut self, c: &Call) -> Expected {
        let list = match self.write_as(c.db, c.key(), c.now, Value::as_list_mut) {
            Typed::Unknown => return Expected::Unpredictable,
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Absent => return Expected::error("ERR no such key"),
            Typed::Found(list) => list,
        };
        let Some(index) = parse_i64_strict(&c.args[2]) else {
            return Expected::error(NOT_AN_INTEGER);
        };
        let index = if index < 0 {
            index + list.len() as i64
        } else {
            index
        };
        match usize::try_from(index).ok().and_then(|i| list.get_mut(i)) {
            None => Expected::error("ERR index out of range"),
            Some(slot) => {
                *slot = c.args[3].clone();
                Expected::ok()
            }
        }
    }

    fn linsert(&mut self, c: &Call) -> Expected {
        let after = match c.args[2].to_ascii_lowercase().as_slice() {
            b"after" => true,
            b"before" => false,
            _ => return Expected::error(SYNTAX_ERROR),
        };
        let list = match self.write_as(c.db, c.key(), c.now, Value::as_list_mut) {
            Typed::Unknown => return Expected::Unpredictable,
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Absent => return Expected::integer(0),
            Typed::Found(list) => list,
        };
        match list.iter().position(|v| *v == c.args[3]) {
            None => Expected::integer(-1),
            Some(i) => {
                list.insert(i + usize::from(after), c.args[4].clone());
                Expected::integer(list.len() as i64)
            }
        }
    }

    fn lrem(&mut self, c: &Call) -> Expected {
        let Some(count) = parse_i64_strict(&c.args[2]) else {
            return Expected::error(NOT_AN_INTEGER);
        };
        let list = match self.write_as(c.db, c.key(), c.now, Value::as_list_mut) {
            Typed::Unknown => return Expected::Unpredictable,
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Absent => return Expected::integer(0),
            Typed::Found(list) => list,
        };
        let element = &c.args[3];
        let limit = if count == 0 {
            usize::MAX
        } else {
            count.unsigned_abs() as usize
        };
        let mut removed = 0usize;
        let mut kept: List = VecDeque::with_capacity(list.len());
        let mut take = |value: Vec<u8>, kept: &mut List, front: bool| {
            if removed < limit && value == *element {
                removed += 1;
            } else if front {
                kept.push_back(value);
            } else {
                kept.push_front(value);
            }
        };
        if count >= 0 {
            list.drain(..).for_each(|v| take(v, &mut kept, true));
        } else {
            list.drain(..).rev().for_each(|v| take(v, &mut kept, false));
        }
        *list = kept;
        self.drop_if_empty(c.db, c.key());
        Expected::integer(removed as i64)
    }

    fn ltrim(&mut self, c: &Call) -> Expected {
        let (Some(start), Some(end)) = (parse_i64_strict(&c.args[2]), parse_i64_strict(&c.args[3]))
        else {
            return Expected::error(NOT_AN_INTEGER);
        };
        match self.write_as(c.db, c.key(), c.now, Value::as_list_mut) {
            Typed::Unknown => return Expected::Unpredictable,
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Absent => return Expected::ok(),
            Typed::Found(list) => match clamp_range(start, end, list.len()) {
                None => list.clear(),
                Some((from, to)) => {
                    list.truncate(to + 1);
                    list.drain(..from);
                }
            },
        }
        self.drop_if_empty(c.db, c.key());
        Expected::ok()
    }

    fn lpos(&mut self, c: &Call) -> Expected {
        let (mut rank, mut count, mut maxlen) = (1i64, None::<usize>, 0usize);
        let mut j = 3;
        while j < c.args.len() {
            let value = c.args.get(j + 1).map(|v| parse_i64_strict(v));
            match (c.args[j].to_ascii_lowercase().as_slice(), value) {
                (b"rank", Some(None)) => return Expected::error(NOT_AN_INTEGER),
                (b"rank", Some(Some(0))) => {
                    return Expected::error(
                        "ERR RANK can't be zero: use 1 to start from the first match, 2 from \
                         the second ... or use negative to start from the end of the list",
                    )
                }
                // Outside -LONG_MAX..: Redis's reply there is odd; not modelled.
                (b"rank", Some(Some(i64::MIN))) => return Expected::Unpredictable,
                (b"rank", Some(Some(r))) => rank = r,
                (b"count", Some(Some(n))) if n >= 0 => count = Some(n as usize),
                (b"count", Some(_)) => return Expected::error("ERR COUNT can't be negative"),
                (b"maxlen", Some(Some(n))) if n >= 0 => maxlen = n as usize,
                (b"maxlen", Some(_)) => return Expected::error("ERR MAXLEN can't be negative"),
                _ => return Expected::error(SYNTAX_ERROR),
            }
            j += 2;
        }
        let list = match self.read_as(c.db, c.key(), c.now, Value::as_list) {
            Typed::Unknown => return Expected::Unpredictable,
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Absent => {
                return Expected::Exactly(match count {
                    Some(_) => Frame::Array(Vec::new()),
                    None => Frame::Null,
                })
            }
            Typed::Found(list) => list,
        };
        let wanted = match count {
            Some(0) => usize::MAX,
            Some(n) => n,
            None => 1,
        };
        let scanned = if maxlen == 0 {
            list.len()
        } else {
            maxlen.min(list.len())
        };
        let indices: Box<dyn Iterator<Item = usize>> = match rank > 0 {
            true => Box::new(0..scanned),
            false => Box::new((list.len() - scanned..list.len()).rev()),
        };
        let mut skip = rank.unsigned_abs() - 1;
        let mut found = Vec::new();
        for i in indices {
            if list[i] != c.args[2] {
                continue;
            }
            if skip > 0 {
                skip -= 1;
                continue;
            }
            found.push(Frame::Integer(i as i64));
            if found.len() >= wanted {
                break;
            }
        }
        Expected::Exactly(match count {
            Some(_) => Frame::Array(found),
            None => found.into_iter().next().unwrap_or(Frame::Null),
        })
    }

    /// LMOVE, RPOPLPUSH and their blocking forms.
    fn lmove(&mut self, c: &Call) -> Expected {
        let (from_left, to_left) = match c.name {
            "rpoplpush" | "brpoplpush" => (false, true),
            _ => match (parse_end(&c.args[3]), parse_end(&c.args[4])) {
                (Some(from), Some(to)) => (from, to),
                _ => return Expected::error(SYNTAX_ERROR),
            },
        };
        if c.name.starts_with('b') {
            if let Err(error) = parse_timeout(&c.args[c.args.len() - 1]) {
                return error;
            }
        }
        let (src, dst) = (&c.args[1], &c.args[2]);
        let src_state = readiness(self.lookup(c.db, src, c.now), Value::as_list);
        let dst_state = readiness(self.lookup(c.db, dst, c.now), Value::as_list);
        let head = |model: &KeyspaceModel| match model.get_as(c.db, src, c.now, Value::as_list) {
            Typed::Found(list) => Frame::Bulk(
                (if from_left { list.front() } else { list.back() })
                    .cloned()
                    .unwrap_or_default(),
            ),
            _ => Frame::Null,
        };
        let blocking = c.name.starts_with('b');
        let outcomes = match (src_state, dst_state) {
            (Readiness::Unknown, _) => None,
            // A blocked BLMOVE whose source turned into another type times
            // out.
            (Readiness::WrongType, _) if blocking => {
                Some(vec![Outcome::WrongType, Outcome::TimedOut])
            }
            (Readiness::WrongType, _) => Some(vec![Outcome::WrongType]),
            (Readiness::Empty, _) => Some(vec![Outcome::TimedOut]),
            (Readiness::Ready, Readiness::Empty | Readiness::Ready) => {
                Some(vec![Outcome::Serve(0)])
            }
            (Readiness::Ready, Readiness::WrongType) if !blocking => Some(vec![Outcome::WrongType]),
            // A served BLMOVE whose destination changed type, or an
            // unknown destination.
            (Readiness::Ready, _) => None,
        };
        let Some(outcomes) = outcomes else {
            self.forget_key(c.db, src);
            self.forget_key(c.db, dst);
            return Expected::Unpredictable;
        };
        let frames = outcomes
            .iter()
            .map(|o| match o {
                Outcome::WrongType => Frame::Error(WRONGTYPE.as_bytes().to_vec()),
                Outcome::TimedOut => Frame::Null,
                Outcome::Serve(_) => head(self),
            })
            .collect();
        let (chosen, expected) = choose_outcome(&outcomes, frames, c.reply);
        match chosen {
            Some(Outcome::Serve(_)) => {}
            Some(_) => return expected,
            None => {
                // Only WRONGTYPE or a timeout were possible: no change.
                return expected;
            }
        }
        let value = match self.write_as(c.db, src, c.now, Value::as_list_mut) {
            Typed::Found(list) => pop_end(list, from_left),
            _ => None,
        };
        self.drop_if_empty(c.db, src);
        if let (Some(value), Typed::Found(list)) = (
            value,
            self.upsert_as(c.db, dst, c.now, Value::empty_list, Value::as_list_mut),
        ) {
            push_end(list, to_left, value);
        }
        expected
    }

    /// LMPOP, BLMPOP, BLPOP and BRPOP: pop from the first non-empty list.
    fn lmpop(&mut self, c: &Call) -> Expected {
        let (keys, left, count) = match parse_mpop(c) {
            Ok(parsed) => parsed,
            Err(error) => return error,
        };
        let nested = matches!(c.name, "lmpop" | "blmpop");
        for key in &keys {
            self.settle(c.db, key, c.now);
        }
        let states: Vec<Readiness> = keys
            .iter()
            .map(|k| readiness(self.peek(c.db, k, c.now), Value::as_list))
            .collect();
        let outcomes = match blocking_outcomes(&states) {
            // A non-blocking LMPOP runs at once: only its first outcome.
            Some(outcomes) if !c.name.starts_with('b') => vec![outcomes[0]],
            Some(outcomes) => outcomes,
            None => {
                keys.iter().for_each(|k| self.forget_key(c.db, k));
                return Expected::Unpredictable;
            }
        };
        let frames: Vec<Frame> = outcomes
            .iter()
            .map(|outcome| match outcome {
                Outcome::WrongType => Frame::Error(WRONGTYPE.as_bytes().to_vec()),
                Outcome::TimedOut => Frame::Null,
                Outcome::Serve(i) => {
                    let Typed::Found(list) = self.get_as(c.db, keys[*i], c.now, Value::as_list)
                    else {
                        return Frame::Null;
                    };
                    let n = count.min(list.len());
                    let taken: Vec<Vec<u8>> = match left {
                        true => list.iter().take(n).cloned().collect(),
                        false => list.iter().rev().take(n).cloned().collect(),
                    };
                    let key = Frame::Bulk(keys[*i].to_vec());
                    match nested {
                        true => Frame::Array(vec![key, bulks(taken)]),
                        false => {
                            let mut items = vec![key];
                            items.extend(taken.into_iter().map(Frame::Bulk));
                            Frame::Array(items)
                        }
                    }
                }
            })
            .collect();
        let (chosen, expected) = choose_outcome(&outcomes, frames, c.reply);
        match chosen {
            Some(Outcome::Serve(i)) => {
                if let Typed::Found(list) = self.write_as(c.db, keys[i], c.now, Value::as_list_mut)
                {
                    let n = count.min(list.len());
                    (0..n).for_each(|_| {
                        pop_end(list, left);
                    });
                }
                self.drop_if_empty(c.db, keys[i]);
            }
            Some(_) => {}
            None => keys.iter().for_each(|k| self.forget_key(c.db, k)),
        }
        expected
    }
}

/// How a key's state reads to a pop of the type `cast` selects.
pub(crate) fn readiness<T>(state: KeyState<'_>, cast: fn(&Value) -> Option<&T>) -> Readiness {
    match state {
        KeyState::Unknown => Readiness::Unknown,
        KeyState::Absent => Readiness::Empty,
        KeyState::Present(e) if cast(&e.value).is_some() => Readiness::Ready,
        KeyState::Present(_) => Readiness::WrongType,
    }
}

/// The keys, end and count of LMPOP, BLMPOP, BLPOP or BRPOP, or the error
/// Redis replies (in its order: numkeys, end, COUNT, then the timeout).
fn parse_mpop<'a>(c: &Call<'a>) -> Result<(Vec<&'a [u8]>, bool, usize), Expected> {
    let args = c.args;
    if matches!(c.name, "blpop" | "brpop") {
        parse_timeout(&args[args.len() - 1])?;
        let keys = args[1..args.len() - 1].iter().map(Vec::as_slice).collect();
        return Ok((keys, c.name == "blpop", 1));
    }
    let numkeys_at = if c.name == "blmpop" { 2 } else { 1 };
    let numkeys = match parse_i64_strict(&args[numkeys_at]) {
        Some(n) if n > 0 => n as usize,
        _ => return Err(Expected::error("ERR numkeys should be greater than 0")),
    };
    let end_at = numkeys_at + 1 + numkeys;
    let Some(left) = args.get(end_at).and_then(|a| parse_end(a)) else {
        return Err(Expected::error(SYNTAX_ERROR));
    };
    let mut count = None;
    let mut j = end_at + 1;
    while j < args.len() {
        if count.is_none() && args[j].eq_ignore_ascii_case(b"count") && j + 1 < args.len() {
            match parse_i64_strict(&args[j + 1]) {
                Some(n) if n > 0 => count = Some(n as usize),
                _ => return Err(Expected::error("ERR count should be greater than 0")),
            }
            j += 2;
        } else {
            return Err(Expected::error(SYNTAX_ERROR));
        }
    }
    if c.name == "blmpop" {
        parse_timeout(&args[1])?;
    }
    let keys = args[numkeys_at + 1..end_at]
        .iter()
        .map(Vec::as_slice)
        .collect();
    Ok((keys, left, count.unwrap_or(1)))
}
