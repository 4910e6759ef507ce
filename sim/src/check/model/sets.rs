//! The reference model's set commands, written from Redis 7.0's `t_set.c`:
//! SADD SREM SMEMBERS SISMEMBER SMISMEMBER SCARD SMOVE SINTER SUNION SDIFF
//! SINTERSTORE SUNIONSTORE SDIFFSTORE SINTERCARD, and the random SPOP and
//! SRANDMEMBER, judged against the modelled members (SPOP then removes
//! exactly what it replied). A set is a `BTreeSet`; whole-set replies are
//! compared in any order, as RESP3 sets on a RESP3 connection.

use std::collections::BTreeSet;

use seedkv_engine::resp::Frame;

use super::commands::Call;
use super::redis_c::{parse_i64_strict, OUT_OF_RANGE_POSITIVE, SYNTAX_ERROR, WRONGTYPE};
use super::{Entry, Expected, KeyspaceModel, Shape, Typed, Value};

type Set = BTreeSet<Vec<u8>>;

/// Redis 7.0 arities of the modelled set commands.
pub(crate) fn arity(name: &str) -> Option<i64> {
    Some(match name {
        "sadd" | "srem" | "smismember" | "sinterstore" | "sunionstore" | "sdiffstore"
        | "sintercard" => -3,
        "smembers" | "scard" => 2,
        "sismember" => 3,
        "smove" => 4,
        "sinter" | "sunion" | "sdiff" | "spop" | "srandmember" => -2,
        _ => return None,
    })
}

/// The keys a set command names, and whether it may write them.
pub(crate) fn keys<'a>(name: &str, args: &'a [Vec<u8>]) -> Option<(Vec<&'a [u8]>, bool)> {
    let first: Vec<&[u8]> = args.get(1).map(Vec::as_slice).into_iter().collect();
    let all: Vec<&[u8]> = args.iter().skip(1).map(Vec::as_slice).collect();
    Some(match name {
        "sadd" | "srem" | "spop" => (first, true),
        "smembers" | "scard" | "sismember" | "smismember" | "srandmember" => (first, false),
        "smove" => (
            args.iter().skip(1).take(2).map(Vec::as_slice).collect(),
            true,
        ),
        "sinter" | "sunion" | "sdiff" => (all, false),
        "sinterstore" | "sunionstore" | "sdiffstore" => (all, true),
        "sintercard" => (super::redis_c::numkeys_keys(args, 1), false),
        _ => return None,
    })
}

/// The set algebra.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Algebra {
    Inter,
    Union,
    Diff,
}

fn bulks(members: impl IntoIterator<Item = Vec<u8>>) -> Vec<Frame> {
    members.into_iter().map(Frame::Bulk).collect()
}

impl KeyspaceModel {
    pub(crate) fn set_command(&mut self, c: &Call) -> Expected {
        let (db, key, now) = (c.db, c.key(), c.now);
        match c.name {
            "sadd" => match self.upsert_as(db, key, now, Value::empty_set, Value::as_set_mut) {
                Typed::Unknown => Expected::Unpredictable,
                Typed::WrongType => Expected::error(WRONGTYPE),
                Typed::Absent => unreachable!("upsert creates"),
                Typed::Found(set) => {
                    let added = c.args[2..]
                        .iter()
                        .filter(|m| set.insert(m.to_vec()))
                        .count();
                    Expected::integer(added as i64)
                }
            },
            "srem" => {
                let removed = match self.write_as(db, key, now, Value::as_set_mut) {
                    Typed::Unknown => return Expected::Unpredictable,
                    Typed::WrongType => return Expected::error(WRONGTYPE),
                    Typed::Absent => 0,
                    Typed::Found(set) => c.args[2..].iter().filter(|m| set.remove(*m)).count(),
                };
                self.drop_if_empty(db, key);
                Expected::integer(removed as i64)
            }
            "scard" | "sismember" | "smismember" => {
                let empty = Set::new();
                let set = match self.read_as(db, key, now, Value::as_set) {
                    Typed::Unknown => return Expected::Unpredictable,
                    Typed::WrongType => return Expected::error(WRONGTYPE),
                    Typed::Absent => &empty,
                    Typed::Found(set) => set,
                };
                let is_member = |m: &Vec<u8>| Frame::Integer(i64::from(set.contains(m)));
                Expected::Exactly(match c.name {
                    "scard" => Frame::Integer(set.len() as i64),
                    "sismember" => is_member(&c.args[2]),
                    _ => Frame::Array(c.args[2..].iter().map(is_member).collect()),
                })
            }
            "smembers" => self.algebra(c, Algebra::Union, &c.args[1..2], None),
            "sinter" => self.algebra(c, Algebra::Inter, &c.args[1..], None),
            "sunion" => self.algebra(c, Algebra::Union, &c.args[1..], None),
            "sdiff" => self.algebra(c, Algebra::Diff, &c.args[1..], None),
            "sinterstore" => self.algebra(c, Algebra::Inter, &c.args[2..], Some(&c.args[1])),
            "sunionstore" => self.algebra(c, Algebra::Union, &c.args[2..], Some(&c.args[1])),
            "sdiffstore" => self.algebra(c, Algebra::Diff, &c.args[2..], Some(&c.args[1])),
            "sintercard" => self.sintercard(c),
            "smove" => self.smove(c),
            "spop" | "srandmember" => self.spop(c),
            _ => unreachable!("not a set command: {}", c.name),
        }
    }

    /// The sets named by `keys`, absent ones empty; `Err` is the reply when
    /// one is unknown or of another type (Redis checks every type first).
    fn sets_of(&mut self, c: &Call, keys: &[Vec<u8>]) -> Result<Vec<Option<&Set>>, Expected> {
        for key in keys {
            self.settle(c.db, key, c.now);
        }
        let mut sets = Vec::with_capacity(keys.len());
        let mut unknown = false;
        for key in keys {
            match self.get_as(c.db, key, c.now, Value::as_set) {
                Typed::Unknown => unknown = true,
                // Whatever the unknown keys hold, this one fails the command.
                Typed::WrongType => return Err(Expected::error(WRONGTYPE)),
                Typed::Absent => sets.push(None),
                Typed::Found(set) => sets.push(Some(set)),
            }
        }
        match unknown {
            true => Err(Expected::Unpredictable),
            false => Ok(sets),
        }
    }

    /// SINTER, SUNION, SDIFF (and SMEMBERS), and their STORE forms.
    fn algebra(
        &mut self,
        c: &Call,
        op: Algebra,
        keys: &[Vec<u8>],
        dst: Option<&Vec<u8>>,
    ) -> Expected {
        let result = match self.sets_of(c, keys) {
            Ok(sets) => Ok(combine(op, &sets)),
            Err(expected) => Err(expected),
        };
        let result = match result {
            Ok(result) => result,
            Err(expected) => {
                if let (Some(dst), Expected::Unpredictable) = (dst, &expected) {
                    self.forget_key(c.db, dst);
                }
                return expected;
            }
        };
        let Some(dst) = dst else {
            return match c.resp {
                Some(3) => Expected::Unordered(Shape::Set, bulks(result)),
                Some(_) => Expected::Unordered(Shape::Array, bulks(result)),
                None => Expected::Unpredictable,
            };
        };
        let len = result.len() as i64;
        match result.is_empty() {
            true => self.remove(c.db, dst),
            false => self.store(
                c.db,
                dst,
                Entry {
                    value: Value::Set(result),
                    expire_unix_ms: None,
                },
            ),
        }
        Expected::integer(len)
    }

    fn sintercard(&mut self, c: &Call) -> Expected {
        let numkeys = match parse_i64_strict(&c.args[1]) {
            Some(n) if n > 0 => n as usize,
            _ => return Expected::error("ERR numkeys should be greater than 0"),
        };
        if numkeys > c.args.len() - 2 {
            return Expected::error("ERR Number of keys can't be greater than number of args");
        }
        let mut limit = 0usize;
        let mut j = 2 + numkeys;
        while j < c.args.len() {
            if c.args[j].eq_ignore_ascii_case(b"limit") && j + 1 < c.args.len() {
                match parse_i64_strict(&c.args[j + 1]) {
                    Some(n) if n >= 0 => limit = n as usize,
                    _ => return Expected::error("ERR LIMIT can't be negative"),
                }
                j += 2;
            } else {
                return Expected::error(SYNTAX_ERROR);
            }
        }
        let keys = &c.args[2..2 + numkeys];
        match self.sets_of(c, keys) {
            Err(expected) => expected,
            Ok(sets) => {
                let n = combine(Algebra::Inter, &sets).len();
                Expected::integer(if limit == 0 { n } else { n.min(limit) } as i64)
            }
        }
    }

    fn smove(&mut self, c: &Call) -> Expected {
        let (src, dst, member) = (&c.args[1], &c.args[2], &c.args[3]);
        self.settle(c.db, dst, c.now);
        let dst_state = match self.get_as(c.db, dst, c.now, Value::as_set) {
            Typed::Unknown => None,
            Typed::WrongType => Some(false),
            _ => Some(true),
        };
        let has_member = match self.read_as(c.db, src, c.now, Value::as_set) {
            Typed::Unknown => None,
            Typed::Absent => return Expected::integer(0),
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Found(set) => Some(set.contains(member)),
        };
        let (Some(has_member), Some(dst_ok)) = (has_member, dst_state) else {
            self.forget_key(c.db, src);
            self.forget_key(c.db, dst);
            return Expected::Unpredictable;
        };
        if !dst_ok {
            return Expected::error(WRONGTYPE);
        }
        if src == dst || !has_member {
            return Expected::integer(i64::from(has_member));
        }
        if let Typed::Found(set) = self.write_as(c.db, src, c.now, Value::as_set_mut) {
            set.remove(member);
        }
        self.drop_if_empty(c.db, src);
        if let Typed::Found(set) =
            self.upsert_as(c.db, dst, c.now, Value::empty_set, Value::as_set_mut)
        {
            set.insert(member.clone());
        }
        Expected::integer(1)
    }

    /// SPOP and SRANDMEMBER: the reply is judged against the set, and SPOP
    /// removes what it replied (or, with no reply, what it must have).
    fn spop(&mut self, c: &Call) -> Expected {
        let pop = c.name == "spop";
        if c.args.len() > 3 {
            return Expected::error(SYNTAX_ERROR);
        }
        let count = match c.args.get(2).map(|a| parse_i64_strict(a)) {
            None => None,
            Some(Some(n)) if n >= 0 || !pop => match n.checked_neg() {
                Some(_) => Some(n),
                None => return Expected::Unpredictable,
            },
            Some(Some(_)) => return Expected::error(OUT_OF_RANGE_POSITIVE),
            Some(None) if pop => return Expected::error(OUT_OF_RANGE_POSITIVE),
            Some(None) => return Expected::error(super::redis_c::NOT_AN_INTEGER),
        };
        let empty_reply = || match (count, pop, c.resp) {
            (None, _, _) => Expected::Exactly(Frame::Null),
            (Some(_), true, Some(3)) => Expected::Exactly(Frame::Set(Vec::new())),
            (Some(_), _, Some(_)) => Expected::Exactly(Frame::Array(Vec::new())),
            (Some(_), _, None) => Expected::Unpredictable,
        };
        let set = match self.read_as(c.db, c.key(), c.now, Value::as_set) {
            Typed::Unknown => return Expected::Unpredictable,
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Absent => return empty_reply(),
            Typed::Found(set) => set,
        };
        if count == Some(0) {
            return empty_reply();
        }
        let wanted = match count {
            None => 1,
            Some(n) if n >= 0 => (n as usize).min(set.len()),
            Some(n) => n.unsigned_abs() as usize,
        };
        let distinct = count.is_none_or(|n| n >= 0);
        let judged = c
            .reply
            .map(|reply| judge_members(c, set, reply, count.is_some(), wanted, distinct));
        if !pop {
            return match judged {
                None => Expected::Unpredictable,
                Some(Ok(_)) => Expected::Verdict(Ok(())),
                Some(Err(wanted)) => Expected::Verdict(Err(wanted)),
            };
        }
        let whole_set = wanted == set.len();
        let expected = match judged {
            Some(Ok(members)) => {
                if let Typed::Found(set) = self.write_as(c.db, c.key(), c.now, Value::as_set_mut) {
                    members.iter().for_each(|m| {
                        set.remove(m);
                    });
                }
                Expected::Verdict(Ok(()))
            }
            // SPOP of the whole set is determined whatever it replied.
            _ if whole_set => {
                self.remove(c.db, c.key());
                match judged {
                    Some(Err(wanted)) => Expected::Verdict(Err(wanted)),
                    _ => Expected::Unpredictable,
                }
            }
            Some(Err(wanted)) => {
                self.forget_key(c.db, c.key());
                Expected::Verdict(Err(wanted))
            }
            None => {
                self.forget_key(c.db, c.key());
                Expected::Unpredictable
            }
        };
        self.drop_if_empty(c.db, c.key());
        expected
    }
}

/// Checks a random reply against the set: `wanted` members of it (distinct
/// if so), in a bulk (no count) or an array (a RESP3 set for SPOP).
/// `Ok` holds the members replied.
fn judge_members(
    c: &Call,
    set: &Set,
    reply: &Frame,
    with_count: bool,
    wanted: usize,
    distinct: bool,
) -> Result<Vec<Vec<u8>>, String> {
    let items: Option<&[Frame]> = match (reply, with_count, c.resp) {
        (Frame::Bulk(_), false, _) => Some(std::slice::from_ref(reply)),
        (Frame::Set(items), true, Some(3)) if c.name == "spop" => Some(items),
        (Frame::Array(items), true, Some(2)) => Some(items),
        (Frame::Array(items), true, Some(3)) if c.name == "srandmember" => Some(items),
        _ => None,
    };
    let mut members = Vec::with_capacity(wanted);
    let mut seen = BTreeSet::new();
    let ok = items.is_some_and(|items| {
        items.len() == wanted
            && items.iter().all(|item| match item {
                Frame::Bulk(m) if set.contains(m) => {
                    members.push(m.clone());
                    !distinct || seen.insert(m.as_slice())
                }
                _ => false,
            })
    });
    match ok {
        true => Ok(members),
        false => Err(format!(
            "{wanted}{} members of the set ({} members)",
            if distinct { " distinct" } else { "" },
            set.len()
        )),
    }
}

/// The algebra over sets in key order (`None`: an absent key, empty).
fn combine(op: Algebra, sets: &[Option<&Set>]) -> Set {
    let Some((first, rest)) = sets.split_first() else {
        return Set::new();
    };
    let mut result: Set = first.map(|s| (*s).clone()).unwrap_or_default();
    for set in rest {
        match (op, set) {
            (Algebra::Inter, None) => result.clear(),
            (Algebra::Inter, Some(s)) => result.retain(|m| s.contains(m)),
            (Algebra::Union, Some(s)) => result.extend(s.iter().cloned()),
            (Algebra::Diff, Some(s)) => result.retain(|m| !s.contains(m)),
            (_, None) => {}
        }
    }
    result
}
