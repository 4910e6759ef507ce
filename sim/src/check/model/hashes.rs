//! The reference model's hash commands, written from Redis 7.0's
//! `t_hash.c`: HSET HSETNX HGET HMGET HMSET HDEL HLEN HEXISTS HKEYS HVALS
//! HGETALL HINCRBY HSTRLEN, HINCRBYFLOAT (checked loosely: Redis computes
//! it in long double, so the model takes the value it replied) and
//! HRANDFIELD (judged against the hash). A hash is a `BTreeMap`; HKEYS,
//! HVALS and HGETALL are compared in any order, HGETALL as a RESP3 map on a
//! RESP3 connection.

use seedkv_engine::resp::Frame;

use super::commands::Call;
use super::redis_c::{
    parse_f64_lenient, parse_f64_strict, parse_i64_strict, NOT_AN_INTEGER, WRONGTYPE,
};
use super::{Expected, KeyspaceModel, Shape, Typed, Value};

/// Redis 7.0 arities of the modelled hash commands.
pub(crate) fn arity(name: &str) -> Option<i64> {
    Some(match name {
        "hset" | "hmset" => -4,
        "hsetnx" | "hincrby" | "hincrbyfloat" => 4,
        "hget" | "hexists" | "hstrlen" => 3,
        "hmget" | "hdel" => -3,
        "hlen" | "hkeys" | "hvals" | "hgetall" => 2,
        "hrandfield" => -2,
        _ => return None,
    })
}

/// The keys a hash command names, and whether it may write them.
pub(crate) fn keys<'a>(name: &str, args: &'a [Vec<u8>]) -> Option<(Vec<&'a [u8]>, bool)> {
    let first: Vec<&[u8]> = args.get(1).map(Vec::as_slice).into_iter().collect();
    let writes = match name {
        "hset" | "hmset" | "hsetnx" | "hincrby" | "hincrbyfloat" | "hdel" => true,
        _ if arity(name).is_some() => false,
        _ => return None,
    };
    Some((first, writes))
}

impl KeyspaceModel {
    pub(crate) fn hash_command(&mut self, c: &Call) -> Expected {
        let (db, key, now) = (c.db, c.key(), c.now);
        match c.name {
            "hset" | "hmset" => self.hset(c),
            "hsetnx" => match self.upsert_as(db, key, now, Value::empty_hash, Value::as_hash_mut) {
                Typed::Unknown => Expected::Unpredictable,
                Typed::WrongType => Expected::error(WRONGTYPE),
                Typed::Absent => unreachable!("upsert creates"),
                Typed::Found(hash) => match hash.contains_key(&c.args[2]) {
                    true => Expected::integer(0),
                    false => {
                        hash.insert(c.args[2].clone(), c.args[3].clone());
                        Expected::integer(1)
                    }
                },
            },
            "hget" => match self.read_as(db, key, now, Value::as_hash) {
                Typed::Unknown => Expected::Unpredictable,
                Typed::WrongType => Expected::error(WRONGTYPE),
                Typed::Absent => Expected::Exactly(Frame::Null),
                Typed::Found(hash) => {
                    Expected::bulk_or_null(hash.get(&c.args[2]).map(Vec::as_slice))
                }
            },
            "hmget" => match self.read_as(db, key, now, Value::as_hash) {
                Typed::Unknown => Expected::Unpredictable,
                Typed::WrongType => Expected::error(WRONGTYPE),
                found_or_absent => {
                    let hash = match found_or_absent {
                        Typed::Found(hash) => Some(hash),
                        _ => None,
                    };
                    let values = c.args[2..]
                        .iter()
                        .map(|f| match hash.and_then(|h| h.get(f)) {
                            Some(v) => Frame::Bulk(v.clone()),
                            None => Frame::Null,
                        })
                        .collect();
                    Expected::Exactly(Frame::Array(values))
                }
            },
            "hdel" => {
                let removed = match self.write_as(db, key, now, Value::as_hash_mut) {
                    Typed::Unknown => return Expected::Unpredictable,
                    Typed::WrongType => return Expected::error(WRONGTYPE),
                    Typed::Absent => 0,
                    Typed::Found(hash) => c.args[2..]
                        .iter()
                        .filter(|f| hash.remove(*f).is_some())
                        .count(),
                };
                self.drop_if_empty(db, key);
                Expected::integer(removed as i64)
            }
            "hlen" | "hexists" | "hstrlen" => match self.read_as(db, key, now, Value::as_hash) {
                Typed::Unknown => Expected::Unpredictable,
                Typed::WrongType => Expected::error(WRONGTYPE),
                Typed::Absent => Expected::integer(0),
                Typed::Found(hash) => Expected::integer(match c.name {
                    "hlen" => hash.len() as i64,
                    "hexists" => i64::from(hash.contains_key(&c.args[2])),
                    _ => hash.get(&c.args[2]).map_or(0, |v| v.len() as i64),
                }),
            },
            "hkeys" | "hvals" | "hgetall" => self.hgetall(c),
            "hincrby" => self.hincrby(c),
            "hincrbyfloat" => self.hincrbyfloat(c),
            "hrandfield" => self.hrandfield(c),
            _ => unreachable!("not a hash command: {}", c.name),
        }
    }

    fn hset(&mut self, c: &Call) -> Expected {
        if c.args.len() % 2 == 1 {
            return Expected::error(&format!(
                "ERR wrong number of arguments for '{}' command",
                c.name
            ));
        }
        match self.upsert_as(c.db, c.key(), c.now, Value::empty_hash, Value::as_hash_mut) {
            Typed::Unknown => Expected::Unpredictable,
            Typed::WrongType => Expected::error(WRONGTYPE),
            Typed::Absent => unreachable!("upsert creates"),
            Typed::Found(hash) => {
                let mut created = 0;
                for pair in c.args[2..].chunks(2) {
                    if hash.insert(pair[0].clone(), pair[1].clone()).is_none() {
                        created += 1;
                    }
                }
                match c.name {
                    "hmset" => Expected::ok(),
                    _ => Expected::integer(created),
                }
            }
        }
    }

    fn hgetall(&mut self, c: &Call) -> Expected {
        let map = c.name == "hgetall";
        let shape = match (map, c.resp) {
            (false, _) => Shape::Array,
            (true, Some(3)) => Shape::Map,
            (true, Some(_)) => Shape::FlatPairs,
            (true, None) => return Expected::Unpredictable,
        };
        let hash = match self.read_as(c.db, c.key(), c.now, Value::as_hash) {
            Typed::Unknown => return Expected::Unpredictable,
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Absent => return Expected::Unordered(shape, Vec::new()),
            Typed::Found(hash) => hash,
        };
        let mut items = Vec::with_capacity(hash.len() * if map { 2 } else { 1 });
        for (field, value) in hash {
            if c.name != "hvals" {
                items.push(Frame::Bulk(field.clone()));
            }
            if c.name != "hkeys" {
                items.push(Frame::Bulk(value.clone()));
            }
        }
        Expected::Unordered(shape, items)
    }

    fn hincrby(&mut self, c: &Call) -> Expected {
        let Some(by) = parse_i64_strict(&c.args[3]) else {
            return Expected::error(NOT_AN_INTEGER);
        };
        let hash = match self.upsert_as(c.db, c.key(), c.now, Value::empty_hash, Value::as_hash_mut)
        {
            Typed::Unknown => return Expected::Unpredictable,
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Absent => unreachable!("upsert creates"),
            Typed::Found(hash) => hash,
        };
        let old = match hash.get(&c.args[2]).map(|v| parse_i64_strict(v)) {
            None => Some(0),
            Some(parsed) => parsed,
        };
        let expected = match old.map(|old| old.checked_add(by)) {
            None => Expected::error("ERR hash value is not an integer"),
            Some(None) => Expected::error("ERR increment or decrement would overflow"),
            Some(Some(new)) => {
                hash.insert(c.args[2].clone(), new.to_string().into_bytes());
                Expected::integer(new)
            }
        };
        self.drop_if_empty(c.db, c.key());
        expected
    }

    /// Checked loosely: Redis adds in long double and prints with `%.17Lg`,
    /// so the model accepts a reply within a relative 1e-9 of its double
    /// sum and then stores the text the engine replied.
    fn hincrbyfloat(&mut self, c: &Call) -> Expected {
        let Ok(by) = parse_f64_strict(&c.args[3]) else {
            // Invalid here may be a long double Redis accepts: not judged.
            self.forget_key(c.db, c.key());
            return Expected::Unpredictable;
        };
        if by.is_infinite() {
            // Redis checks the increment before it looks at the key, so
            // this is the reply even on a key of another type.
            return Expected::error("ERR value is NaN or Infinity");
        }
        let hash = match self.upsert_as(c.db, c.key(), c.now, Value::empty_hash, Value::as_hash_mut)
        {
            Typed::Unknown => return Expected::Unpredictable,
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Absent => unreachable!("upsert creates"),
            Typed::Found(hash) => hash,
        };
        let old = match hash.get(&c.args[2]) {
            None => Some(0.0),
            Some(v) => parse_f64_strict(v).ok(),
        };
        let sum = old
            .map(|old| old + by)
            .filter(|s| s.is_finite() && s.abs() < 1e300);
        let replied = match c.reply {
            Some(Frame::Bulk(text)) => Some(text.clone()),
            _ => None,
        };
        let (Some(sum), Some(text)) = (sum, replied) else {
            self.forget_key(c.db, c.key());
            return Expected::Unpredictable;
        };
        // `%.17Lf` prints 17 decimals: a tiny sum prints as 0.
        let close = parse_f64_lenient(&text)
            .is_ok_and(|got| got == sum || (got - sum).abs() <= (1e-9 * sum.abs()).max(1e-17));
        hash.insert(c.args[2].clone(), text.clone());
        Expected::Verdict(match close {
            true => Ok(()),
            false => Err(format!("a bulk string close to {sum}")),
        })
    }

    /// Judged against the hash: the right number of fields, each from the
    /// hash (distinct for a positive count), with their values.
    fn hrandfield(&mut self, c: &Call) -> Expected {
        let count = match c.args.get(2).map(|a| parse_i64_strict(a)) {
            None => None,
            Some(Some(n)) if n.checked_neg().is_some() => Some(n),
            Some(_) => return Expected::Unpredictable,
        };
        let with_values = match c.args.len() {
            2 | 3 => false,
            4 if c.args[3].eq_ignore_ascii_case(b"withvalues") => true,
            _ => return Expected::AnyError,
        };
        let hash = match self.read_as(c.db, c.key(), c.now, Value::as_hash) {
            Typed::Unknown => return Expected::Unpredictable,
            Typed::WrongType => return Expected::error(WRONGTYPE),
            Typed::Absent => {
                return Expected::Exactly(match count {
                    None => Frame::Null,
                    Some(_) => Frame::Array(Vec::new()),
                })
            }
            Typed::Found(hash) => hash,
        };
        let Some(reply) = c.reply else {
            return Expected::Unpredictable;
        };
        let Some(count) = count else {
            return Expected::Verdict(match reply {
                Frame::Bulk(f) if hash.contains_key(f) => Ok(()),
                _ => Err("a field of the hash".into()),
            });
        };
        let wanted = match count >= 0 {
            true => (count as usize).min(hash.len()),
            false => count.unsigned_abs() as usize,
        };
        let pairs: Option<Vec<(&Frame, Option<&Frame>)>> = match (reply, with_values, c.resp) {
            (Frame::Array(items), false, _) => Some(items.iter().map(|f| (f, None)).collect()),
            (Frame::Array(items), true, Some(2)) if items.len() % 2 == 0 => {
                Some(items.chunks(2).map(|p| (&p[0], Some(&p[1]))).collect())
            }
            (Frame::Array(items), true, Some(3)) => items
                .iter()
                .map(|p| match p {
                    Frame::Array(pair) if pair.len() == 2 => Some((&pair[0], Some(&pair[1]))),
                    _ => None,
                })
                .collect(),
            (_, _, None) => return Expected::Unpredictable,
            _ => None,
        };
        let mut seen = std::collections::BTreeSet::new();
        let ok = pairs.is_some_and(|pairs| {
            pairs.len() == wanted
                && pairs.iter().all(|(field, value)| {
                    let Frame::Bulk(field) = field else {
                        return false;
                    };
                    let value_ok = match (hash.get(field), value) {
                        (Some(_), None) => true,
                        (Some(v), Some(Frame::Bulk(got))) => v == got,
                        _ => false,
                    };
                    value_ok && (count < 0 || seen.insert(field.clone()))
                })
        });
        Expected::Verdict(match ok {
            true => Ok(()),
            false => Err(format!("{wanted} fields of the hash")),
        })
    }
}
