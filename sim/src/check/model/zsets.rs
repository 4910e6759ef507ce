//! The reference model's sorted-set commands, written from Redis 7.0's
//! `t_zset.c`: ZADD (NX XX GT LT CH INCR) ZINCRBY ZREM ZCARD ZSCORE ZMSCORE
//! ZRANK ZREVRANK ZRANGE (BYSCORE BYLEX REV LIMIT WITHSCORES)
//! ZRANGEBYSCORE ZREVRANGEBYSCORE ZCOUNT ZPOPMIN ZPOPMAX BZPOPMIN BZPOPMAX
//! ZREMRANGEBYRANK ZREMRANGEBYSCORE ZUNIONSTORE ZINTERSTORE.
//!
//! A sorted set is a member map plus a `(score, member)` order. Scores
//! reply as RESP3 doubles or as `%.17g` text. Two corners are not judged:
//! a score of -0 (Redis's listpack prints "0", its skiplist "-0") and BYLEX
//! over unequal scores (Redis leaves it unspecified).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use seedkv_engine::resp::Frame;

use super::commands::Call;
use super::expected::score_frame;
use super::lists::{blocking_outcomes, choose_outcome, clamp_range, readiness, Outcome};
use super::redis_c::{
    numkeys_keys, parse_f64_lenient, parse_f64_strict, parse_i64_strict, parse_timeout, FloatError,
    NOT_AN_INTEGER, NOT_A_FLOAT, OUT_OF_RANGE_POSITIVE, SYNTAX_ERROR, WRONGTYPE,
};
use super::{Entry, Expected, KeyspaceModel, Typed, Value};

const NAN_SCORE: &str = "ERR resulting score is not a number (NaN)";

/// A score ordered as Redis compares doubles (-0 equals 0; never NaN).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Score(f64);

impl Eq for Score {}

impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Score {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.partial_cmp(&other.0).unwrap_or(Ordering::Equal)
    }
}

/// A sorted set: each member's score, and the members by (score, member).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ZSet {
    scores: BTreeMap<Vec<u8>, f64>,
    order: BTreeSet<(Score, Vec<u8>)>,
}

impl ZSet {
    pub(crate) fn len(&self) -> usize {
        self.scores.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }

    pub(crate) fn score(&self, member: &[u8]) -> Option<f64> {
        self.scores.get(member).copied()
    }

    pub(crate) fn insert(&mut self, member: &[u8], score: f64) {
        debug_assert!(!score.is_nan());
        if let Some(old) = self.scores.insert(member.to_vec(), score) {
            self.order.remove(&(Score(old), member.to_vec()));
        }
        self.order.insert((Score(score), member.to_vec()));
        debug_assert_eq!(self.scores.len(), self.order.len());
    }

    pub(crate) fn remove(&mut self, member: &[u8]) -> Option<f64> {
        let score = self.scores.remove(member)?;
        self.order.remove(&(Score(score), member.to_vec()));
        Some(score)
    }

    /// Members with their scores, lowest first.
    pub(crate) fn iter(&self) -> impl DoubleEndedIterator<Item = (&[u8], f64)> {
        self.order.iter().map(|(s, m)| (m.as_slice(), s.0))
    }
}

/// Redis 7.0 arities of the modelled sorted-set commands.
pub(crate) fn arity(name: &str) -> Option<i64> {
    Some(match name {
        "zadd" | "zrange" | "zrangebyscore" | "zrevrangebyscore" | "zunionstore"
        | "zinterstore" => -4,
        "zincrby" | "zcount" | "zremrangebyrank" | "zremrangebyscore" => 4,
        "zrem" | "zmscore" | "bzpopmin" | "bzpopmax" => -3,
        "zcard" => 2,
        "zscore" | "zrank" | "zrevrank" => 3,
        "zpopmin" | "zpopmax" => -2,
        _ => return None,
    })
}

/// The keys a sorted-set command names, and whether it may write them.
pub(crate) fn keys<'a>(name: &str, args: &'a [Vec<u8>]) -> Option<(Vec<&'a [u8]>, bool)> {
    let first: Vec<&[u8]> = args.get(1).map(Vec::as_slice).into_iter().collect();
    Some(match name {
        "zadd" | "zincrby" | "zrem" | "zpopmin" | "zpopmax" | "zremrangebyrank"
        | "zremrangebyscore" => (first, true),
        "bzpopmin" | "bzpopmax" => (
            args[1..args.len().saturating_sub(1).max(1)]
                .iter()
                .map(Vec::as_slice)
                .collect(),
            true,
        ),
        "zunionstore" | "zinterstore" => {
            let mut keys = first;
            keys.extend(numkeys_keys(args, 2));
            (keys, true)
        }
        _ if arity(name).is_some() => (first, false),
        _ => return None,
    })
}

/// A score range (`zslParseRange`).
#[derive(Clone, Copy, Debug)]
struct ScoreRange {
    min: f64,
    min_exclusive: bool,
    max: f64,
    max_exclusive: bool,
}

impl ScoreRange {
    fn contains(&self, s: f64) -> bool {
        let above = if self.min_exclusive {
            s > self.min
        } else {
            s >= self.min
        };
        let below = if self.max_exclusive {
            s < self.max
        } else {
            s <= self.max
        };
        above && below
    }
}

fn parse_bound(text: &[u8]) -> Result<(f64, bool), FloatError> {
    match text.strip_prefix(b"(") {
        Some(rest) => parse_f64_lenient(rest).map(|v| (v, true)),
        None => parse_f64_lenient(text).map(|v| (v, false)),
    }
}

fn parse_score_range(min: &[u8], max: &[u8]) -> Result<ScoreRange, FloatError> {
    let (min, min_exclusive) = parse_bound(min)?;
    let (max, max_exclusive) = parse_bound(max)?;
    Ok(ScoreRange {
        min,
        min_exclusive,
        max,
        max_exclusive,
    })
}

/// A lexicographic bound (`zslParseLexRangeItem`).
#[derive(Clone, Debug)]
enum LexBound {
    Min,
    Max,
    Inclusive(Vec<u8>),
    Exclusive(Vec<u8>),
}

fn parse_lex(text: &[u8]) -> Option<LexBound> {
    match text.first() {
        Some(b'+') if text.len() == 1 => Some(LexBound::Max),
        Some(b'-') if text.len() == 1 => Some(LexBound::Min),
        Some(b'[') => Some(LexBound::Inclusive(text[1..].to_vec())),
        Some(b'(') => Some(LexBound::Exclusive(text[1..].to_vec())),
        _ => None,
    }
}

fn lex_in(m: &[u8], min: &LexBound, max: &LexBound) -> bool {
    let above = match min {
        LexBound::Min => true,
        LexBound::Max => false,
        LexBound::Inclusive(v) => m >= v.as_slice(),
        LexBound::Exclusive(v) => m > v.as_slice(),
    };
    let below = match max {
        LexBound::Min => false,
        LexBound::Max => true,
        LexBound::Inclusive(v) => m <= v.as_slice(),
        LexBound::Exclusive(v) => m < v.as_slice(),
    };
    above && below
}

/// A score as a reply element; `None` when the model cannot say how Redis
/// prints it (unknown protocol, or a RESP2 -0, which depends on encoding).
fn score_reply(score: f64, resp: Option<u8>) -> Option<Frame> {
    match resp {
        Some(3) => Some(score_frame(score, true)),
        Some(_) if score == 0.0 && score.is_sign_negative() => None,
        Some(_) => Some(score_frame(score, false)),
        None => None,
    }
}

/// Members (with scores, if wanted) as ZRANGE replies them: flat in RESP2,
/// `[member, score]` pairs in RESP3 when `nested`.
fn members_reply<'a>(
    items: impl Iterator<Item = (&'a [u8], f64)>,
    with_scores: bool,
    nested: bool,
    resp: Option<u8>,
) -> Expected {
    let mut out = Vec::new();
    for (member, score) in items {
        let member = Frame::Bulk(member.to_vec());
        if !with_scores {
            out.push(member);
            continue;
        }
        let Some(score) = score_reply(score, resp) else {
            return Expected::Unpredictable;
        };
        match nested && resp == Some(3) {
            true => out.push(Frame::Array(vec![member, score])),
            false => out.extend([member, score]),
        }
    }
    Expected::Exactly(Frame::Array(out))
}

/// ZADD's options.
#[derive(Default)]
struct ZAddFlags {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
    ch: bool,
    incr: bool,
}

/// What one `zsetAdd` did.
enum Added {
    New(f64),
    Updated(f64),
    /// Nothing changed but the element counts as processed.
    Same(f64),
    /// Not performed (NX, XX, GT, LT).
    Nop,
    Nan,
}

fn zset_add(z: &mut ZSet, member: &[u8], score: f64, f: &ZAddFlags) -> Added {
    match z.score(member) {
        Some(_) if f.nx => Added::Nop,
        Some(current) => {
            let score = if f.incr { score + current } else { score };
            if score.is_nan() {
                return Added::Nan;
            }
            if (f.lt && score >= current) || (f.gt && score <= current) {
                return Added::Nop;
            }
            if score != current {
                z.insert(member, score);
                return Added::Updated(score);
            }
            Added::Same(score)
        }
        None if f.xx => Added::Nop,
        None => {
            z.insert(member, score);
            Added::New(score)
        }
    }
}

impl KeyspaceModel {
    pub(crate) fn zset_command(&mut self, c: &Call) -> Expected {
        let (db, key, now) = (c.db, c.key(), c.now);
        match c.name {
            "zadd" | "zincrby" => self.zadd(c),
            "zrem" => {
                let removed = match self.write_as(db, key, now, Value::as_zset_mut) {
                    Typed::Unknown => return Expected::Unpredictable,
                    Typed::WrongType => return Expected::error(WRONGTYPE),
                    Typed::Absent => 0,
                    Typed::Found(z) => c.args[2..].iter().filter_map(|m| z.remove(m)).count(),
                };
                self.drop_if_empty(db, key);
                Expected::integer(removed as i64)
            }
            "zcard" | "zscore" | "zmscore" | "zrank" | "zrevrank" => {
                let empty = ZSet::default();
                let z = match self.read_as(db, key, now, Value::as_zset) {
                    Typed::Unknown => return Expected::Unpredictable,
                    Typed::WrongType => return Expected::error(WRONGTYPE),
                    Typed::Absent => &empty,
                    Typed::Found(z) => z,
                };
                let score_of = |m: &[u8]| match z.score(m) {
                    None => Some(Frame::Null),
                    Some(s) => score_reply(s, c.resp),
                };
                let frame = match c.name {
                    "zcard" => Some(Frame::Integer(z.len() as i64)),
                    "zscore" => score_of(&c.args[2]),
                    "zmscore" => c.args[2..]
                        .iter()
                        .map(|m| score_of(m))
                        .collect::<Option<Vec<_>>>()
                        .map(Frame::Array),
                    _ => Some(
                        match z.iter().position(|(m, _)| m == c.args[2].as_slice()) {
                            None => Frame::Null,
                            Some(i) if c.name == "zrank" => Frame::Integer(i as i64),
                            Some(i) => Frame::Integer((z.len() - 1 - i) as i64),
                        },
                    ),
                };
                frame.map_or(Expected::Unpredictable, Expected::Exactly)
            }
            "zrange" | "zrangebyscore" | "zrevrangebyscore" => self.zrange(c),
            "zcount" | "zremrangebyscore" => {
                let range = match parse_score_range(&c.args[2], &c.args[3]) {
                    Ok(range) => range,
                    Err(FloatError::Invalid) => {
                        return Expected::error("ERR min or max is not a float")
                    }
                    Err(FloatError::Unsure) => return self.zset_unsure(c),
                };
                self.zremrange(c, |z| {
                    z.iter()
                        .filter(|(_, s)| range.contains(*s))
                        .map(|(m, _)| m.to_vec())
                        .collect()
                })
            }
            "zremrangebyrank" => {
                let (Some(start), Some(end)) =
                    (parse_i64_strict(&c.args[2]), parse_i64_strict(&c.args[3]))
                else {
                    return Expected::error(NOT_AN_INTEGER);
                };
                self.zremrange(c, |z| match clamp_range(start, end, z.len()) {
                    None => Vec::new(),
                    Some((from, to)) => z
                        .iter()
                        .skip(from)
                        .take(to - from + 1)
                        .map(|(m, _)| m.to_vec())
                        .collect(),
                })
            }
            "zpopmin" | "zpopmax" => self.zpop(c),
            "bzpopmin" | "bzpopmax" => self.bzpop(c),
            "zunionstore" | "zinterstore" => self.zstore(c),
            _ => unreachable!("not a sorted-set command: {}", c.name),
        }
    }

    /// A float the model does not parse (hexadecimal): the command is not
    /// judged and whatever it may write becomes unknown.
    fn zset_unsure(&mut self, c: &Call) -> Expected {
        if let Some((keys, true)) = keys(c.name, c.args) {
            keys.into_iter()
                .map(<[u8]>::to_vec)
                .collect::<Vec<_>>()
                .iter()
                .for_each(|k| self.forget_key(c.db, k));
        }
        Expected::Unpredictable
    }

    fn zadd(&mut self, c: &Call) -> Expected {
        let mut f = ZAddFlags::default();
        let mut j = 2;
        if c.name == "zincrby" {
            f.incr = true;
        } else {
            while let Some(arg) = c.args.get(j) {
                match arg.to_ascii_lowercase().as_slice() {
                    b"nx" => f.nx = true,
                    b"xx" => f.xx = true,
                    b"gt" => f.gt = true,
                    b"lt" => f.lt = true,
                    b"ch" => f.ch = true,
                    b"incr" => f.incr = true,
                    _ => break,
                }
                j += 1;
            }
            let elements = c.args.len() - j;
            if elements == 0 || elements % 2 == 1 {
                return Expected::error(SYNTAX_ERROR);
            }
            if f.nx && f.xx {
                return Expected::error(
                    "ERR XX and NX options at the same time are not compatible",
                );
            }
            if (f.nx && (f.gt || f.lt)) || (f.gt && f.lt) {
                return Expected::error(
                    "ERR GT, LT, and/or NX options at the same time are not compatible",
                );
            }
            if f.incr && elements > 2 {
                return Expected::error("ERR INCR option supports a single increment-element pair");
            }
        }
        let mut pairs = Vec::with_capacity((c.args.len() - j) / 2);
        for pair in c.args[j..].chunks(2) {
            match parse_f64_strict(&pair[0]) {
                Ok(score) => pairs.push((score, &pair[1])),
                Err(FloatError::Invalid) => return Expected::error(NOT_A_FLOAT),
                Err(FloatError::Unsure) => return self.zset_unsure(c),
            }
        }
        let absent = match self.read_as(c.db, c.key(), c.now, Value::as_zset) {
            Typed::Unknown => return Expected::Unpredictable,
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Absent => true,
            Typed::Found(_) => false,
        };
        if absent && f.xx {
            return match f.incr {
                true => Expected::Exactly(Frame::Null),
                false => Expected::integer(0),
            };
        }
        let Typed::Found(z) =
            self.upsert_as(c.db, c.key(), c.now, Value::empty_zset, Value::as_zset_mut)
        else {
            return Expected::Unpredictable;
        };
        let (mut added, mut updated, mut last) = (0, 0, None);
        let mut nan = false;
        for (score, member) in pairs {
            match zset_add(z, member, score, &f) {
                Added::New(s) => (added, last) = (added + 1, Some(s)),
                Added::Updated(s) => (updated, last) = (updated + 1, Some(s)),
                Added::Same(s) => last = Some(s),
                Added::Nop => {}
                Added::Nan => nan = true,
            }
        }
        self.drop_if_empty(c.db, c.key());
        if nan {
            return Expected::error(NAN_SCORE);
        }
        match (f.incr, last) {
            (true, None) => Expected::Exactly(Frame::Null),
            (true, Some(s)) => {
                score_reply(s, c.resp).map_or(Expected::Unpredictable, Expected::Exactly)
            }
            (false, _) => Expected::integer(added + if f.ch { updated } else { 0 }),
        }
    }

    /// ZCOUNT (which removes nothing), ZREMRANGEBYSCORE, ZREMRANGEBYRANK:
    /// `select` picks the members.
    fn zremrange(&mut self, c: &Call, select: impl Fn(&ZSet) -> Vec<Vec<u8>>) -> Expected {
        let count_only = c.name == "zcount";
        let z = match self.read_as(c.db, c.key(), c.now, Value::as_zset) {
            Typed::Unknown => return Expected::Unpredictable,
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Absent => return Expected::integer(0),
            Typed::Found(z) => z,
        };
        let members = select(z);
        if !count_only {
            if let Typed::Found(z) = self.write_as(c.db, c.key(), c.now, Value::as_zset_mut) {
                members.iter().for_each(|m| {
                    z.remove(m);
                });
            }
            self.drop_if_empty(c.db, c.key());
        }
        Expected::integer(members.len() as i64)
    }

    fn zrange(&mut self, c: &Call) -> Expected {
        #[derive(Clone, Copy, PartialEq)]
        enum Kind {
            Auto,
            Rank,
            Score,
            Lex,
        }
        let (mut kind, mut rev) = match c.name {
            "zrangebyscore" => (Kind::Score, Some(false)),
            "zrevrangebyscore" => (Kind::Score, Some(true)),
            _ => (Kind::Auto, None),
        };
        let (mut with_scores, mut offset, mut limit) = (false, 0i64, -1i64);
        let mut j = 4;
        while j < c.args.len() {
            let left = c.args.len() - j - 1;
            match c.args[j].to_ascii_lowercase().as_slice() {
                b"withscores" => with_scores = true,
                b"limit" if left >= 2 => {
                    match (
                        parse_i64_strict(&c.args[j + 1]),
                        parse_i64_strict(&c.args[j + 2]),
                    ) {
                        (Some(o), Some(l)) => (offset, limit) = (o, l),
                        _ => return Expected::error(NOT_AN_INTEGER),
                    }
                    j += 2;
                }
                b"rev" if rev.is_none() => rev = Some(true),
                b"bylex" if kind == Kind::Auto => kind = Kind::Lex,
                b"byscore" if kind == Kind::Auto => kind = Kind::Score,
                _ => return Expected::error(SYNTAX_ERROR),
            }
            j += 1;
        }
        let rev = rev.unwrap_or(false);
        if kind == Kind::Auto {
            kind = Kind::Rank;
        }
        if limit != -1 && kind == Kind::Rank {
            return Expected::error(
                "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
            );
        }
        if with_scores && kind == Kind::Lex {
            return Expected::error(
                "ERR syntax error, WITHSCORES not supported in combination with BYLEX",
            );
        }
        let (mut min, mut max) = (&c.args[2], &c.args[3]);
        if rev && kind != Kind::Rank {
            std::mem::swap(&mut min, &mut max);
        }
        enum Range {
            Rank(i64, i64),
            Score(ScoreRange),
            Lex(LexBound, LexBound),
        }
        let range = match kind {
            Kind::Score => match parse_score_range(min, max) {
                Ok(r) => Range::Score(r),
                Err(FloatError::Invalid) => {
                    return Expected::error("ERR min or max is not a float")
                }
                Err(FloatError::Unsure) => return Expected::Unpredictable,
            },
            Kind::Lex => match (parse_lex(min), parse_lex(max)) {
                (Some(a), Some(b)) => Range::Lex(a, b),
                _ => return Expected::error("ERR min or max not valid string range item"),
            },
            _ => match (parse_i64_strict(min), parse_i64_strict(max)) {
                (Some(a), Some(b)) => Range::Rank(a, b),
                _ => return Expected::error(NOT_AN_INTEGER),
            },
        };
        let z = match self.read_as(c.db, c.key(), c.now, Value::as_zset) {
            Typed::Unknown => return Expected::Unpredictable,
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Absent => return Expected::Exactly(Frame::Array(Vec::new())),
            Typed::Found(z) => z,
        };
        let ordered: Box<dyn Iterator<Item = (&[u8], f64)>> = match rev {
            true => Box::new(z.iter().rev()),
            false => Box::new(z.iter()),
        };
        let selected: Vec<(&[u8], f64)> = match range {
            Range::Rank(start, end) => match clamp_range(start, end, z.len()) {
                None => Vec::new(),
                Some((from, to)) => ordered.skip(from).take(to - from + 1).collect(),
            },
            Range::Score(r) => window(ordered.filter(|(_, s)| r.contains(*s)), offset, limit),
            Range::Lex(a, b) => {
                let first = z.iter().next().map(|(_, s)| s);
                if z.iter().any(|(_, s)| Some(s) != first) {
                    return Expected::Unpredictable;
                }
                window(ordered.filter(|(m, _)| lex_in(m, &a, &b)), offset, limit)
            }
        };
        members_reply(selected.into_iter(), with_scores, true, c.resp)
    }

    fn zpop(&mut self, c: &Call) -> Expected {
        if c.args.len() > 3 {
            return Expected::error(SYNTAX_ERROR);
        }
        let count = match c.args.get(2).map(|a| parse_i64_strict(a)) {
            None => None,
            Some(Some(n)) if n >= 0 => Some(n as usize),
            Some(_) => return Expected::error(OUT_OF_RANGE_POSITIVE),
        };
        let z = match self.write_as(c.db, c.key(), c.now, Value::as_zset_mut) {
            Typed::Unknown => return Expected::Unpredictable,
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Absent => return Expected::Exactly(Frame::Array(Vec::new())),
            Typed::Found(z) => z,
        };
        let n = count.unwrap_or(1).min(z.len());
        let popped = pop_n(z, c.name == "zpopmax", n);
        self.drop_if_empty(c.db, c.key());
        let items = popped.iter().map(|(m, s)| (m.as_slice(), *s));
        members_reply(items, true, count.is_some(), c.resp)
    }

    fn bzpop(&mut self, c: &Call) -> Expected {
        if let Err(error) = parse_timeout(&c.args[c.args.len() - 1]) {
            return error;
        }
        let keys = &c.args[1..c.args.len() - 1];
        let max = c.name == "bzpopmax";
        for key in keys {
            self.settle(c.db, key, c.now);
        }
        let states: Vec<_> = keys
            .iter()
            .map(|k| readiness(self.peek(c.db, k, c.now), Value::as_zset))
            .collect();
        let Some(outcomes) = blocking_outcomes(&states) else {
            keys.iter().for_each(|k| self.forget_key(c.db, k));
            return Expected::Unpredictable;
        };
        let mut frames = Vec::with_capacity(outcomes.len());
        for outcome in &outcomes {
            frames.push(match outcome {
                Outcome::WrongType => Frame::Error(WRONGTYPE.as_bytes().to_vec()),
                Outcome::TimedOut => Frame::Null,
                Outcome::Serve(i) => {
                    let top = match self.get_as(c.db, &keys[*i], c.now, Value::as_zset) {
                        Typed::Found(z) => peek_end(z, max),
                        _ => None,
                    };
                    let Some((member, score)) = top else {
                        return Expected::Unpredictable;
                    };
                    let Some(score) = score_reply(score, c.resp) else {
                        keys.iter().for_each(|k| self.forget_key(c.db, k));
                        return Expected::Unpredictable;
                    };
                    let key = Frame::Bulk(keys[*i].clone());
                    Frame::Array(vec![key, Frame::Bulk(member.to_vec()), score])
                }
            });
        }
        let (chosen, expected) = choose_outcome(&outcomes, frames, c.reply);
        match chosen {
            Some(Outcome::Serve(i)) => {
                if let Typed::Found(z) = self.write_as(c.db, &keys[i], c.now, Value::as_zset_mut) {
                    pop_n(z, max, 1);
                }
                self.drop_if_empty(c.db, &keys[i]);
            }
            Some(_) => {}
            None => keys.iter().for_each(|k| self.forget_key(c.db, k)),
        }
        expected
    }

    /// ZUNIONSTORE and ZINTERSTORE (sources may be sets, scored 1).
    fn zstore(&mut self, c: &Call) -> Expected {
        let union = c.name == "zunionstore";
        let Some(numkeys) = parse_i64_strict(&c.args[2]) else {
            return Expected::error(NOT_AN_INTEGER);
        };
        if numkeys < 1 {
            return Expected::error(&format!(
                "ERR at least 1 input key is needed for '{}' command",
                c.name
            ));
        }
        let numkeys = numkeys as usize;
        if numkeys > c.args.len() - 3 {
            return Expected::error(SYNTAX_ERROR);
        }
        let mut weights = vec![1.0f64; numkeys];
        let mut aggregate = b"sum".to_vec();
        let mut j = 3 + numkeys;
        while j < c.args.len() {
            let left = c.args.len() - j - 1;
            match c.args[j].to_ascii_lowercase().as_slice() {
                b"weights" if left >= numkeys => {
                    for (i, w) in weights.iter_mut().enumerate() {
                        match parse_f64_strict(&c.args[j + 1 + i]) {
                            Ok(v) => *w = v,
                            Err(FloatError::Invalid) => {
                                return Expected::error("ERR weight value is not a float")
                            }
                            Err(FloatError::Unsure) => return self.zset_unsure(c),
                        }
                    }
                    j += numkeys;
                }
                b"aggregate" if left >= 1 => {
                    aggregate = c.args[j + 1].to_ascii_lowercase();
                    if !matches!(aggregate.as_slice(), b"sum" | b"min" | b"max") {
                        return Expected::error(SYNTAX_ERROR);
                    }
                    j += 1;
                }
                _ => return Expected::error(SYNTAX_ERROR),
            }
            j += 1;
        }
        let dst = &c.args[1];
        let sources = &c.args[3..3 + numkeys];
        for key in sources {
            self.settle(c.db, key, c.now);
        }
        // Each source as (member, score) pairs; an absent key is empty.
        let mut inputs: Vec<Vec<(Vec<u8>, f64)>> = Vec::with_capacity(numkeys);
        let mut unknown = false;
        for key in sources {
            match self.peek(c.db, key, c.now) {
                super::KeyState::Unknown => unknown = true,
                super::KeyState::Absent => inputs.push(Vec::new()),
                super::KeyState::Present(e) => match &e.value {
                    Value::ZSet(z) => inputs.push(z.iter().map(|(m, s)| (m.to_vec(), s)).collect()),
                    Value::Set(s) => inputs.push(s.iter().map(|m| (m.clone(), 1.0)).collect()),
                    _ => return Expected::error(WRONGTYPE),
                },
            }
        }
        if unknown {
            self.forget_key(c.db, dst);
            return Expected::Unpredictable;
        }
        let combine = |acc: f64, v: f64| -> f64 {
            match aggregate.as_slice() {
                b"min" => acc.min(v),
                b"max" => acc.max(v),
                _ => {
                    let sum = acc + v;
                    if sum.is_nan() {
                        0.0
                    } else {
                        sum
                    }
                }
            }
        };
        // Member -> (aggregate, sources it is in, whether every addend is
        // an integer: Redis sums in an order the model does not follow).
        let mut acc: BTreeMap<Vec<u8>, (f64, usize, bool)> = BTreeMap::new();
        for (input, weight) in inputs.iter().zip(&weights) {
            let mut seen = BTreeSet::new();
            for (member, score) in input {
                if !seen.insert(member) {
                    continue;
                }
                let mut v = score * weight;
                if v.is_nan() {
                    v = 0.0;
                }
                let exact = v.fract() == 0.0 && v.abs() < 9e15;
                acc.entry(member.clone())
                    .and_modify(|(a, n, e)| {
                        *a = combine(*a, v);
                        *n += 1;
                        *e &= exact;
                    })
                    .or_insert((v, 1, exact));
            }
        }
        let mut result = ZSet::default();
        let mut determined = true;
        for (member, (score, n, exact)) in acc {
            if !union && n < numkeys {
                continue;
            }
            determined &= aggregate != b"sum" || n <= 2 || exact;
            result.insert(&member, score);
        }
        let len = result.len() as i64;
        match (result.is_empty(), determined) {
            (true, _) => self.remove(c.db, dst),
            (false, true) => self.store(
                c.db,
                dst,
                Entry {
                    value: Value::ZSet(result),
                    expire_unix_ms: None,
                },
            ),
            (false, false) => self.forget_key(c.db, dst),
        }
        Expected::integer(len)
    }
}

/// LIMIT offset count over a score or lex range: a negative offset selects
/// nothing, a negative count everything after the offset.
fn window<'a>(
    items: impl Iterator<Item = (&'a [u8], f64)>,
    offset: i64,
    limit: i64,
) -> Vec<(&'a [u8], f64)> {
    if offset < 0 {
        return Vec::new();
    }
    let taken = items.skip(offset as usize);
    match usize::try_from(limit) {
        Ok(limit) => taken.take(limit).collect(),
        Err(_) => taken.collect(),
    }
}

/// Pops `n` members from the low (or high) end.
fn pop_n(z: &mut ZSet, from_max: bool, n: usize) -> Vec<(Vec<u8>, f64)> {
    let mut popped = Vec::with_capacity(n);
    for _ in 0..n {
        let Some((member, score)) = peek_end(z, from_max) else {
            break;
        };
        z.remove(&member);
        popped.push((member, score));
    }
    popped
}

/// The lowest (or highest) member and its score.
fn peek_end(z: &ZSet, from_max: bool) -> Option<(Vec<u8>, f64)> {
    let mut it = z.iter();
    let top = if from_max { it.next_back() } else { it.next() };
    top.map(|(m, s)| (m.to_vec(), s))
}
