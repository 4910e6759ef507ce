//! An exact model of the list and sorted-set keys that the blocking and
//! rotation workloads use (`blk:`, `bzs:`, `rot:`), for the blocking and
//! conservation checkers.
//!
//! Only those workloads touch these keys, and only with commands whose
//! effect is a function of their arguments and the keys' contents: pushes,
//! pops, moves, ZADD with integer scores, DEL. So, fed the engine's
//! execution order, the model knows every such key exactly, whether or not
//! the client received the reply. Where a reply did arrive it must agree
//! with the model (a mismatch is reported: the engine popped something
//! other than the head). Any other write naming one of these keys makes
//! that key **unknown**, and a checker never judges anything that depends
//! on an unknown key.
//!
//! This is deliberately narrower than the reference model: it exists so
//! that the blocking checker can tell, after every execution, which keys
//! could serve a blocked client.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use seedkv_engine::cmd::flags;
use seedkv_engine::resp::Frame;

use super::pipeline::parse_i64;
use crate::history::Execution;

/// Key prefixes the model follows.
pub const MODELLED_PREFIXES: &[&[u8]] = &[b"blk:", b"bzs:", b"rot:"];

/// Whether the model follows `key`.
pub fn is_modelled_key(key: &[u8]) -> bool {
    MODELLED_PREFIXES.iter().any(|p| key.starts_with(p))
}

/// The type a blocking command waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    List,
    ZSet,
}

/// What one execution did to the modelled keys.
#[derive(Debug, Default)]
pub struct Applied {
    /// Keys whose contents (or knownness) may have changed.
    pub changed: Vec<Vec<u8>>,
    /// Elements (members) taken out of the system by a pop, with their key.
    pub popped: Vec<(Vec<u8>, Vec<u8>)>,
    /// The key a blocking or pop command served from, if it popped.
    pub served_from: Option<Vec<u8>>,
}

/// The model's state.
#[derive(Debug, Default)]
pub struct PopModel {
    lists: BTreeMap<Vec<u8>, VecDeque<Vec<u8>>>,
    /// Per sorted set: member -> score, and (score, member) in order.
    zscores: BTreeMap<Vec<u8>, BTreeMap<Vec<u8>, i64>>,
    zorder: BTreeMap<Vec<u8>, BTreeSet<(i64, Vec<u8>)>>,
    unknown: BTreeSet<Vec<u8>>,
}

/// Where a pop takes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Left,
    Right,
}

fn end_of(arg: &[u8]) -> Option<End> {
    match arg.to_ascii_lowercase().as_slice() {
        b"left" | b"min" => Some(End::Left),
        b"right" | b"max" => Some(End::Right),
        _ => None,
    }
}

fn bulk(b: &[u8]) -> Frame {
    Frame::Bulk(b.to_vec())
}

/// A score as RESP2 (bulk) or RESP3 (double) replies carry it.
fn score_matches(frame: &Frame, score: i64) -> bool {
    match frame {
        Frame::Bulk(b) => parse_i64(b) == Some(score),
        Frame::Double(d) => *d == score as f64,
        _ => false,
    }
}

/// The keys and timeout layout of a blocking or multi-key pop command:
/// (keys, direction argument index, COUNT), or `None` if malformed.
fn mpop_layout(args: &[Vec<u8>], keys_at: usize) -> Option<(Vec<Vec<u8>>, End, usize)> {
    let numkeys = usize::try_from(parse_i64(args.get(keys_at)?)?).ok()?;
    let first = keys_at + 1;
    let keys = args.get(first..first.checked_add(numkeys)?)?.to_vec();
    if keys.is_empty() {
        return None;
    }
    let end = end_of(args.get(first + numkeys)?)?;
    let rest = &args[first + numkeys + 1..];
    let count = match rest {
        [] => 1,
        [c, n] if c.eq_ignore_ascii_case(b"count") => {
            usize::try_from(parse_i64(n)?).ok().filter(|&n| n > 0)?
        }
        _ => return None,
    };
    Some((keys, end, count))
}

impl PopModel {
    pub fn is_unknown(&self, key: &[u8]) -> bool {
        self.unknown.contains(key)
    }

    /// Elements (members) of `key` as `kind`; 0 if absent or the other type.
    pub fn len(&self, key: &[u8], kind: Kind) -> usize {
        match kind {
            Kind::List => self.lists.get(key).map_or(0, VecDeque::len),
            Kind::ZSet => self.zorder.get(key).map_or(0, BTreeSet::len),
        }
    }

    /// The list's elements, front to back (empty if absent).
    pub fn list(&self, key: &[u8]) -> Vec<&[u8]> {
        self.lists
            .get(key)
            .map(|l| l.iter().map(Vec::as_slice).collect())
            .unwrap_or_default()
    }

    fn forget(&mut self, key: &[u8], applied: &mut Applied) {
        self.lists.remove(key);
        self.zscores.remove(key);
        self.zorder.remove(key);
        self.unknown.insert(key.to_vec());
        applied.changed.push(key.to_vec());
    }

    fn delete(&mut self, key: &[u8], applied: &mut Applied) {
        self.lists.remove(key);
        self.zscores.remove(key);
        self.zorder.remove(key);
        self.unknown.remove(key);
        applied.changed.push(key.to_vec());
    }

    fn push(&mut self, key: &[u8], end: End, elements: &[Vec<u8>], applied: &mut Applied) {
        if self.zscores.contains_key(key) {
            return; // WRONGTYPE: nothing changes.
        }
        let list = self.lists.entry(key.to_vec()).or_default();
        for e in elements {
            match end {
                End::Left => list.push_front(e.clone()),
                End::Right => list.push_back(e.clone()),
            }
        }
        applied.changed.push(key.to_vec());
    }

    fn pop_list(
        &mut self,
        key: &[u8],
        end: End,
        count: usize,
        applied: &mut Applied,
    ) -> Vec<Vec<u8>> {
        let Some(list) = self.lists.get_mut(key) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        while out.len() < count {
            let e = match end {
                End::Left => list.pop_front(),
                End::Right => list.pop_back(),
            };
            match e {
                Some(e) => out.push(e),
                None => break,
            }
        }
        if list.is_empty() {
            self.lists.remove(key);
        }
        if !out.is_empty() {
            applied.changed.push(key.to_vec());
        }
        out
    }

    fn pop_zset(
        &mut self,
        key: &[u8],
        end: End,
        count: usize,
        applied: &mut Applied,
    ) -> Vec<(Vec<u8>, i64)> {
        let (Some(order), Some(scores)) = (self.zorder.get_mut(key), self.zscores.get_mut(key))
        else {
            return Vec::new();
        };
        let mut out = Vec::new();
        while out.len() < count {
            let e = match end {
                End::Left => order.pop_first(),
                End::Right => order.pop_last(),
            };
            let Some((score, member)) = e else { break };
            scores.remove(&member);
            out.push((member, score));
        }
        if order.is_empty() {
            self.zorder.remove(key);
            self.zscores.remove(key);
        }
        if !out.is_empty() {
            applied.changed.push(key.to_vec());
        }
        out
    }

    /// The first of `keys` holding elements of `kind`.
    fn first_nonempty(&self, keys: &[Vec<u8>], kind: Kind) -> Option<Vec<u8>> {
        keys.iter().find(|k| self.len(k, kind) > 0).cloned()
    }

    /// Applies one execution. `Err` when a received reply contradicts the
    /// model (the engine took something other than what was there).
    pub fn apply(
        &mut self,
        exec: &Execution,
        args: &[Vec<u8>],
        reply: Option<&Frame>,
    ) -> Result<Applied, String> {
        let mut applied = Applied::default();
        // Rejected requests and error replies change nothing.
        if exec.name.is_empty() || matches!(reply, Some(Frame::Error(_))) || args.is_empty() {
            return Ok(applied);
        }
        if !args[1..].iter().any(|a| is_modelled_key(a)) {
            return Ok(applied);
        }
        let known = self.apply_known(exec.name, args, reply, &mut applied);
        match known {
            Some(result) => result.map(|()| applied),
            None => {
                // A command the model does not follow: a write makes every
                // modelled key it names unknown; a read changes nothing.
                if exec.flags & flags::WRITE != 0 {
                    for a in &args[1..] {
                        if is_modelled_key(a) {
                            self.forget(a, &mut applied);
                        }
                    }
                }
                Ok(applied)
            }
        }
    }

    /// `None`: not a command (or form) the model follows.
    fn apply_known(
        &mut self,
        name: &str,
        args: &[Vec<u8>],
        reply: Option<&Frame>,
        applied: &mut Applied,
    ) -> Option<Result<(), String>> {
        let touched: Vec<&Vec<u8>> = args[1..].iter().filter(|a| is_modelled_key(a)).collect();
        let involves_unknown = touched.iter().any(|k| self.is_unknown(k));
        match name {
            "lpush" | "rpush" if args.len() >= 3 && !involves_unknown => {
                let end = if name == "lpush" {
                    End::Left
                } else {
                    End::Right
                };
                self.push(&args[1], end, &args[2..], applied);
                Some(Ok(()))
            }
            "lpop" | "rpop" if !involves_unknown && (args.len() == 2 || args.len() == 3) => {
                let end = if name == "lpop" {
                    End::Left
                } else {
                    End::Right
                };
                let count = match args.get(2) {
                    Some(n) => usize::try_from(parse_i64(n)?).ok()?,
                    None => 1,
                };
                let exists = self.len(&args[1], Kind::List) > 0;
                let got = self.pop_list(&args[1], end, count, applied);
                let expected = match (args.len(), exists) {
                    (2, _) => got.first().map_or(Frame::Null, |e| bulk(e)),
                    (_, false) => Frame::Null,
                    _ => Frame::Array(got.iter().map(|e| bulk(e)).collect()),
                };
                Some(self.note_pops(&args[1], got, reply, expected, applied))
            }
            "lmove" | "rpoplpush" | "blmove" | "brpoplpush" if !involves_unknown => {
                let (from, to) = match name {
                    "rpoplpush" | "brpoplpush" => (End::Right, End::Left),
                    _ => (end_of(args.get(3)?)?, end_of(args.get(4)?)?),
                };
                let (src, dst) = (args.get(1)?, args.get(2)?);
                if !is_modelled_key(src)
                    || !is_modelled_key(dst)
                    || self.zscores.contains_key(dst.as_slice())
                {
                    return None;
                }
                let got = self.pop_list(src, from, 1, applied);
                let expected = got.first().map_or(Frame::Null, |e| bulk(e));
                if let Some(e) = got.first() {
                    applied.served_from = Some(src.clone());
                    self.push(dst, to, std::slice::from_ref(e), applied);
                }
                Some(check_reply(reply, &expected))
            }
            "blpop" | "brpop" if args.len() >= 3 && !involves_unknown => {
                let end = if name == "blpop" {
                    End::Left
                } else {
                    End::Right
                };
                let keys = &args[1..args.len() - 1];
                let key = self.served_key(keys, Kind::List, reply)?;
                let Some(key) = key else {
                    return Some(check_reply(reply, &Frame::Null));
                };
                let got = self.pop_list(&key, end, 1, applied);
                let expected = match got.first() {
                    Some(e) => Frame::Array(vec![bulk(&key), bulk(e)]),
                    None => Frame::Null,
                };
                applied.served_from = Some(key.clone());
                Some(self.note_pops(&key, got, reply, expected, applied))
            }
            "blmpop" | "lmpop" if !involves_unknown => {
                let keys_at = if name == "blmpop" { 2 } else { 1 };
                let (keys, end, count) = mpop_layout(args, keys_at)?;
                let Some(key) = self.served_key(&keys, Kind::List, reply)? else {
                    return Some(check_reply(reply, &Frame::Null));
                };
                let got = self.pop_list(&key, end, count, applied);
                let expected = Frame::Array(vec![
                    bulk(&key),
                    Frame::Array(got.iter().map(|e| bulk(e)).collect()),
                ]);
                applied.served_from = Some(key.clone());
                Some(self.note_pops(&key, got, reply, expected, applied))
            }
            "zadd" if args.len() >= 4 && args.len().is_multiple_of(2) && !involves_unknown => {
                let key = &args[1];
                if self.lists.contains_key(key.as_slice()) {
                    return Some(Ok(()));
                }
                let mut pairs = Vec::new();
                for pair in args[2..].chunks(2) {
                    // Options or non-integer scores: not followed.
                    pairs.push((parse_i64(&pair[0])?, pair[1].clone()));
                }
                let scores = self.zscores.entry(key.clone()).or_default();
                let order = self.zorder.entry(key.clone()).or_default();
                for (score, member) in pairs {
                    if let Some(old) = scores.insert(member.clone(), score) {
                        order.remove(&(old, member.clone()));
                    }
                    order.insert((score, member));
                }
                applied.changed.push(key.clone());
                Some(Ok(()))
            }
            "zpopmin" | "zpopmax" if !involves_unknown && (args.len() == 2 || args.len() == 3) => {
                let end = if name == "zpopmin" {
                    End::Left
                } else {
                    End::Right
                };
                let count = match args.get(2) {
                    Some(n) => usize::try_from(parse_i64(n)?).ok()?,
                    None => 1,
                };
                let got = self.pop_zset(&args[1], end, count, applied);
                let popped: Vec<Vec<u8>> = got.iter().map(|(m, _)| m.clone()).collect();
                let result = check_zpop_flat(reply, &got);
                applied
                    .popped
                    .extend(popped.into_iter().map(|m| (args[1].clone(), m)));
                Some(result)
            }
            "bzpopmin" | "bzpopmax" if args.len() >= 3 && !involves_unknown => {
                let end = if name == "bzpopmin" {
                    End::Left
                } else {
                    End::Right
                };
                let keys = &args[1..args.len() - 1];
                let Some(key) = self.served_key(keys, Kind::ZSet, reply)? else {
                    return Some(check_reply(reply, &Frame::Null));
                };
                let got = self.pop_zset(&key, end, 1, applied);
                applied.served_from = Some(key.clone());
                let result = match (reply, got.first()) {
                    (None, _) => Ok(()),
                    (Some(Frame::Array(items)), Some((m, s)))
                        if items.len() == 3
                            && items[0] == bulk(&key)
                            && items[1] == bulk(m)
                            && score_matches(&items[2], *s) =>
                    {
                        Ok(())
                    }
                    (Some(other), _) => Err(format!(
                        "replied {} but the model pops {:?} from {}",
                        crate::world::frame_summary(other),
                        got.first()
                            .map(|(m, s)| (String::from_utf8_lossy(m).into_owned(), *s)),
                        String::from_utf8_lossy(&key)
                    )),
                };
                applied
                    .popped
                    .extend(got.into_iter().map(|(m, _)| (key.clone(), m)));
                Some(result)
            }
            "bzmpop" | "zmpop" if !involves_unknown => {
                let keys_at = if name == "bzmpop" { 2 } else { 1 };
                let (keys, end, count) = mpop_layout(args, keys_at)?;
                let Some(key) = self.served_key(&keys, Kind::ZSet, reply)? else {
                    return Some(check_reply(reply, &Frame::Null));
                };
                let got = self.pop_zset(&key, end, count, applied);
                applied.served_from = Some(key.clone());
                let result = match reply {
                    None => Ok(()),
                    Some(Frame::Array(items)) if items.len() == 2 && items[0] == bulk(&key) => {
                        check_zpop_pairs(&items[1], &got)
                    }
                    Some(other) => Err(format!(
                        "replied {} but the model pops {} member(s) from {}",
                        crate::world::frame_summary(other),
                        got.len(),
                        String::from_utf8_lossy(&key)
                    )),
                };
                applied
                    .popped
                    .extend(got.into_iter().map(|(m, _)| (key.clone(), m)));
                Some(result)
            }
            "del" | "unlink" => {
                for k in touched {
                    self.delete(k, applied);
                }
                Some(Ok(()))
            }
            _ => None,
        }
    }

    /// The key a (blocking) pop over `keys` serves from: the key its reply
    /// names if there is one, else the first non-empty key. `None` (outer):
    /// the reply names a key the command did not ask for.
    #[allow(clippy::option_option)]
    fn served_key(
        &self,
        keys: &[Vec<u8>],
        kind: Kind,
        reply: Option<&Frame>,
    ) -> Option<Option<Vec<u8>>> {
        match reply {
            Some(Frame::Array(items)) => match items.first() {
                Some(Frame::Bulk(k)) if keys.contains(k) => Some(Some(k.clone())),
                _ => Some(self.first_nonempty(keys, kind)),
            },
            _ => Some(self.first_nonempty(keys, kind)),
        }
    }

    /// Records popped list elements and compares the reply.
    fn note_pops(
        &mut self,
        key: &[u8],
        got: Vec<Vec<u8>>,
        reply: Option<&Frame>,
        expected: Frame,
        applied: &mut Applied,
    ) -> Result<(), String> {
        applied
            .popped
            .extend(got.into_iter().map(|e| (key.to_vec(), e)));
        check_reply(reply, &expected)
    }
}

fn check_reply(reply: Option<&Frame>, expected: &Frame) -> Result<(), String> {
    match reply {
        None => Ok(()),
        Some(r) if r == expected => Ok(()),
        Some(r) => Err(format!(
            "replied {} but the model expects {}",
            crate::world::frame_summary(r),
            crate::world::frame_summary(expected)
        )),
    }
}

/// ZPOPMIN/ZPOPMAX: a flat `[member, score, ...]` (RESP2) or pairs (RESP3).
fn check_zpop_flat(reply: Option<&Frame>, got: &[(Vec<u8>, i64)]) -> Result<(), String> {
    let Some(Frame::Array(items)) = reply else {
        return Ok(()); // unknown, or a shape the reference model judges
    };
    let flat_ok = items.len() == 2 * got.len()
        && got
            .iter()
            .enumerate()
            .all(|(i, (m, s))| items[2 * i] == bulk(m) && score_matches(&items[2 * i + 1], *s));
    if flat_ok || check_zpop_pairs(&Frame::Array(items.clone()), got).is_ok() {
        return Ok(());
    }
    Err(format!(
        "replied {} but the model pops {} member(s)",
        crate::world::frame_summary(&Frame::Array(items.clone())),
        got.len()
    ))
}

/// `[[member, score], ...]`.
fn check_zpop_pairs(frame: &Frame, got: &[(Vec<u8>, i64)]) -> Result<(), String> {
    let ok = match frame {
        Frame::Array(pairs) => {
            pairs.len() == got.len()
                && pairs.iter().zip(got).all(|(p, (m, s))| match p {
                    Frame::Array(ms) => {
                        ms.len() == 2 && ms[0] == bulk(m) && score_matches(&ms[1], *s)
                    }
                    _ => false,
                })
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "replied {} but the model pops {} member(s)",
            crate::world::frame_summary(frame),
            got.len()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exec(name: &'static str) -> Execution {
        Execution {
            conn: 1,
            seq_in_conn: 0,
            start_ns: 0,
            end_ns: 0,
            unix_ms: 0,
            name,
            flags: flags::WRITE,
            work_units: 1,
            in_exec: None,
            sizes: None,
        }
    }

    fn args(text: &str) -> Vec<Vec<u8>> {
        text.split(' ').map(|s| s.as_bytes().to_vec()).collect()
    }

    fn arr(items: &[&str]) -> Frame {
        Frame::Array(items.iter().map(|s| bulk(s.as_bytes())).collect())
    }

    #[test]
    fn pushes_pops_and_moves_follow_redis() {
        let mut m = PopModel::default();
        m.apply(&exec("rpush"), &args("RPUSH blk:0 a b c"), None)
            .unwrap();
        m.apply(&exec("lpush"), &args("LPUSH blk:0 z"), None)
            .unwrap();
        assert_eq!(m.list(b"blk:0"), vec![&b"z"[..], b"a", b"b", b"c"]);
        m.apply(
            &exec("blpop"),
            &args("BLPOP blk:9 blk:0 0.1"),
            Some(&arr(&["blk:0", "z"])),
        )
        .unwrap();
        let err = m
            .apply(
                &exec("brpop"),
                &args("BRPOP blk:0 0.1"),
                Some(&arr(&["blk:0", "a"])),
            )
            .expect_err("the tail is c");
        assert!(err.contains("model expects"), "{err}");
        m.apply(
            &exec("lmove"),
            &args("LMOVE blk:0 rot:0:1 LEFT RIGHT"),
            Some(&bulk(b"a")),
        )
        .unwrap();
        assert_eq!(m.list(b"rot:0:1"), vec![&b"a"[..]]);
        assert_eq!(m.list(b"blk:0"), vec![&b"b"[..]], "c went to the BRPOP");
        m.apply(&exec("lpop"), &args("LPOP blk:0"), Some(&bulk(b"b")))
            .unwrap();
        assert_eq!(m.len(b"blk:0", Kind::List), 0, "emptied lists are deleted");
        let a = m
            .apply(
                &exec("blmpop"),
                &args("BLMPOP 0.1 1 rot:0:1 LEFT COUNT 5"),
                None,
            )
            .unwrap();
        assert_eq!(a.popped, vec![(b"rot:0:1".to_vec(), b"a".to_vec())]);
    }

    #[test]
    fn sorted_sets_pop_by_score_and_unknown_writes_forget() {
        let mut m = PopModel::default();
        m.apply(&exec("zadd"), &args("ZADD bzs:0 5 e 1 a 3 c"), None)
            .unwrap();
        let reply = Frame::Array(vec![bulk(b"bzs:0"), bulk(b"a"), bulk(b"1")]);
        m.apply(&exec("bzpopmin"), &args("BZPOPMIN bzs:0 0.1"), Some(&reply))
            .unwrap();
        let reply = Frame::Array(vec![bulk(b"bzs:0"), bulk(b"c"), Frame::Double(3.0)]);
        m.apply(&exec("bzpopmax"), &args("BZPOPMAX bzs:0 0.1"), Some(&reply))
            .expect_err("the max is e");
        m.apply(&exec("zincrby"), &args("ZINCRBY bzs:0 1 e"), None)
            .unwrap();
        assert!(m.is_unknown(b"bzs:0"));
        m.apply(&exec("del"), &args("DEL bzs:0"), None).unwrap();
        assert!(!m.is_unknown(b"bzs:0"));
    }
}
