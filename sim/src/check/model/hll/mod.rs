//! The reference model's HyperLogLog commands, written from Redis 7.0's
//! `hyperloglog.c`: PFADD PFCOUNT PFMERGE PFDEBUG. An HLL is a plain string
//! value in the model (`Value::Str`), exactly the bytes Redis keeps, so GET,
//! STRLEN, APPEND, SETRANGE or SET on an HLL key need nothing special: each
//! PF command validates the bytes, applies the change in place the way
//! Redis does (`encoding.rs`) and estimates with Redis's own arithmetic
//! (`estimate.rs`).
//!
//! PFCOUNT of one key writes the estimate into the value's cache (Redis
//! flags it read-only, but the bytes change); PFCOUNT of several keys
//! estimates their union and writes nothing. PFMERGE folds the destination
//! in too, writes a dense value when any input is dense and a sparse one
//! otherwise, and creates the destination when absent.

mod encoding;
mod estimate;
#[cfg(test)]
mod tests;

use seedkv_engine::resp::Frame;

use super::commands::Call;
use super::redis_c::WRONGTYPE;
use super::{Entry, Expected, KeyState, KeyspaceModel, Typed, Value};
use encoding::{Encoding, SetOutcome, REGISTERS_COUNT};

/// `isHLLObjectOrReply`'s reply to a string that is not an HLL.
pub(crate) const NOT_AN_HLL: &str = "WRONGTYPE Key is not a valid HyperLogLog string value.";
/// `invalid_hll_err`: a sparse value whose runs do not cover the registers.
pub(crate) const CORRUPT_HLL: &str = "INVALIDOBJ Corrupted HLL object detected";

/// Redis 7.0 arities of the HyperLogLog commands.
pub(crate) fn arity(name: &str) -> Option<i64> {
    Some(match name {
        "pfadd" | "pfcount" | "pfmerge" => -2,
        "pfdebug" => 3,
        _ => return None,
    })
}

/// The keys an HLL command names, and whether it may write them (PFCOUNT
/// of one key writes the cached estimate).
pub(crate) fn keys<'a>(name: &str, args: &'a [Vec<u8>]) -> Option<(Vec<&'a [u8]>, bool)> {
    let all = || args.iter().skip(1).map(Vec::as_slice).collect();
    Some(match name {
        "pfadd" => (args.get(1).map(Vec::as_slice).into_iter().collect(), true),
        "pfcount" | "pfmerge" => (all(), true),
        "pfdebug" => (args.get(2).map(Vec::as_slice).into_iter().collect(), true),
        _ => return None,
    })
}

impl KeyspaceModel {
    pub(crate) fn hll_command(&mut self, c: &Call) -> Expected {
        match c.name {
            "pfadd" => self.pfadd(c),
            "pfcount" if c.args.len() == 2 => self.pfcount_one(c),
            "pfcount" => self.pfcount_union(c),
            "pfmerge" => self.pfmerge(c),
            "pfdebug" => self.pfdebug(c),
            _ => unreachable!("not an HLL command: {}", c.name),
        }
    }

    /// The HLL at `key` for writing: `Ok(None)` when absent, `Err` with the
    /// reply when unknown, of another type or not a valid HLL.
    fn hll_mut(
        &mut self,
        db: usize,
        key: &[u8],
        now: u64,
    ) -> Result<Option<&mut Vec<u8>>, Expected> {
        match self.write_as(db, key, now, Value::as_str_mut) {
            Typed::Unknown => Err(Expected::Unpredictable),
            Typed::Absent => Ok(None),
            Typed::WrongType => Err(Expected::error(WRONGTYPE)),
            Typed::Found(value) => match encoding::validate(value) {
                None => Err(Expected::error(NOT_AN_HLL)),
                Some(_) => Ok(Some(value)),
            },
        }
    }

    /// `pfaddCommand`: 1 when a register grew or the key was created.
    fn pfadd(&mut self, c: &Call) -> Expected {
        let (db, key, now) = (c.db, c.key(), c.now);
        let created = match self.lookup(db, key, now) {
            KeyState::Unknown => return Expected::Unpredictable,
            KeyState::Absent => true,
            KeyState::Present(_) => false,
        };
        if created {
            self.store(db, key, Entry::string(encoding::new_sparse()));
        }
        let value = match self.hll_mut(db, key, now) {
            Ok(Some(value)) => value,
            Ok(None) => unreachable!("the key was just stored"),
            Err(reply) => return reply,
        };
        let mut updated = created;
        for element in &c.args[2..] {
            match encoding::add(value, element) {
                SetOutcome::Unchanged => {}
                SetOutcome::Raised => updated = true,
                // What the earlier elements changed stays.
                SetOutcome::Corrupt => return Expected::error(CORRUPT_HLL),
                SetOutcome::Undetermined => {
                    self.forget_key(db, key);
                    return Expected::Unpredictable;
                }
            }
        }
        if updated {
            encoding::invalidate_cache(value);
        }
        Expected::integer(i64::from(updated))
    }

    /// PFCOUNT of one key: the cached estimate, or a fresh one, cached.
    fn pfcount_one(&mut self, c: &Call) -> Expected {
        let value = match self.hll_mut(c.db, c.key(), c.now) {
            Ok(Some(value)) => value,
            Ok(None) => return Expected::integer(0),
            Err(reply) => return reply,
        };
        if let Some(card) = encoding::cached_cardinality(value) {
            return Expected::integer(card as i64);
        }
        let Ok(histogram) = encoding::histogram(value) else {
            return Expected::error(CORRUPT_HLL);
        };
        let card = estimate::cardinality(&histogram);
        encoding::store_cardinality(value, card);
        Expected::integer(card as i64)
    }

    /// The registers of the union of `keys` (absent keys are empty HLLs),
    /// and whether one of them is dense; `Err` with the reply of the first
    /// key Redis refuses, or `Unpredictable` when one is unknown.
    fn hll_union(
        &mut self,
        db: usize,
        keys: &[Vec<u8>],
        now: u64,
    ) -> Result<(Box<[u8; REGISTERS_COUNT]>, bool), Expected> {
        let mut max = Box::new([0u8; REGISTERS_COUNT]);
        let mut any_dense = false;
        for key in keys {
            match self.read_as(db, key, now, Value::as_str) {
                Typed::Unknown => return Err(Expected::Unpredictable),
                Typed::Absent => {}
                Typed::WrongType => return Err(Expected::error(WRONGTYPE)),
                Typed::Found(value) => {
                    match encoding::validate(value) {
                        None => return Err(Expected::error(NOT_AN_HLL)),
                        Some(Encoding::Dense) => any_dense = true,
                        Some(Encoding::Sparse) => {}
                    }
                    if encoding::merge_into(&mut max, value).is_err() {
                        return Err(Expected::error(CORRUPT_HLL));
                    }
                }
            }
        }
        Ok((max, any_dense))
    }

    /// PFCOUNT of several keys: the estimate of their union.
    fn pfcount_union(&mut self, c: &Call) -> Expected {
        match self.hll_union(c.db, &c.args[1..], c.now) {
            Err(reply) => reply,
            Ok((max, _)) => {
                let histogram = estimate::histogram_of(&max);
                Expected::integer(estimate::cardinality(&histogram) as i64)
            }
        }
    }

    /// `pfmergeCommand`.
    fn pfmerge(&mut self, c: &Call) -> Expected {
        let (db, dest, now) = (c.db, c.key(), c.now);
        let (max, any_dense) = match self.hll_union(db, &c.args[1..], now) {
            Ok(union) => union,
            Err(Expected::Unpredictable) => {
                self.forget_key(db, dest);
                return Expected::Unpredictable;
            }
            Err(reply) => return reply,
        };
        if matches!(self.lookup(db, dest, now), KeyState::Absent) {
            self.store(db, dest, Entry::string(encoding::new_sparse()));
        }
        let value = match self.hll_mut(db, dest, now) {
            Ok(Some(value)) => value,
            _ => unreachable!("the destination is a valid HLL: it was merged"),
        };
        if any_dense {
            match encoding::to_dense(value) {
                Ok(dense) => *value = dense,
                Err(_) => return Expected::error(CORRUPT_HLL),
            }
        }
        for (index, &count) in max.iter().enumerate().filter(|(_, &m)| m > 0) {
            let outcome = match encoding::validate(value) {
                Some(Encoding::Dense) => {
                    encoding::dense_raise(value, index, count);
                    SetOutcome::Raised
                }
                _ => encoding::sparse_set(value, index, count),
            };
            // Redis ignores a corrupt sparse destination here.
            if outcome == SetOutcome::Undetermined {
                self.forget_key(db, dest);
                return Expected::Unpredictable;
            }
        }
        encoding::invalidate_cache(value);
        Expected::ok()
    }

    /// `pfdebugCommand`: GETREG DECODE ENCODING TODENSE.
    fn pfdebug(&mut self, c: &Call) -> Expected {
        let sub = &c.args[1];
        let value = match self.hll_mut(c.db, &c.args[2], c.now) {
            Ok(Some(value)) => value,
            Ok(None) => return Expected::error("ERR The specified key does not exist"),
            Err(reply) => return reply,
        };
        let sparse = encoding::validate(value) == Some(Encoding::Sparse);
        match sub.to_ascii_lowercase().as_slice() {
            b"getreg" | b"todense" if sparse => match encoding::to_dense(value) {
                Err(_) => return Expected::error(CORRUPT_HLL),
                Ok(dense) => *value = dense,
            },
            _ => {}
        }
        match sub.to_ascii_lowercase().as_slice() {
            b"getreg" => {
                let registers = &value[encoding::HEADER_BYTES..];
                let items = (0..REGISTERS_COUNT)
                    .map(|i| Frame::Integer(i64::from(encoding::dense_get(registers, i))))
                    .collect();
                Expected::Exactly(Frame::Array(items))
            }
            b"decode" if !sparse => Expected::error("ERR HLL encoding is not sparse"),
            b"decode" => Expected::bulk_or_null(Some(encoding::decode(value).as_bytes())),
            b"encoding" => {
                let name: &[u8] = if sparse { b"sparse" } else { b"dense" };
                Expected::Exactly(Frame::Simple(name.to_vec()))
            }
            b"todense" => Expected::integer(i64::from(sparse)),
            _ if sub.iter().all(|b| (b' '..=b'~').contains(b)) => Expected::error(&format!(
                "ERR Unknown PFDEBUG subcommand '{}'",
                String::from_utf8_lossy(sub)
            )),
            _ => Expected::AnyError,
        }
    }
}
