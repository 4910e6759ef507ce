//! Set algebra over sorted sets (and plain sets, whose members score 1):
//! ZUNION ZINTER ZDIFF, their STORE forms, and ZINTERCARD, following
//! Redis's `zunionInterDiffGenericCommand`, including the order in which it
//! checks numkeys, the keys' types, then the options.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::parse::parse_score;
use super::{new_zset_seed, write_elements, NOT_AN_INTEGER, SYNTAX_ERROR};
use crate::cmd::Ctx;
use crate::types::zset::{cmp_elements, ZSet};
use crate::types::Set;
use crate::util::parse_i64_strict;
use crate::value::{Value, WRONGTYPE};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Union,
    Inter,
    Diff,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Aggregate {
    Sum,
    Min,
    Max,
}

impl Aggregate {
    /// Redis's `zunionInterAggregate`: a sum of +inf and -inf is 0.
    fn apply(self, target: &mut f64, value: f64) {
        match self {
            Aggregate::Sum => {
                *target += value;
                if target.is_nan() {
                    *target = 0.0;
                }
            }
            Aggregate::Min => {
                if value < *target {
                    *target = value;
                }
            }
            Aggregate::Max => {
                if value > *target {
                    *target = value;
                }
            }
        }
    }
}

/// What the command does with the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Output {
    Reply,
    /// Store into `args[1]`.
    Store,
    /// ZINTERCARD: only count, up to a limit (0: none).
    Cardinality,
}

/// One input: a sorted set, a set (every member scores 1) or a missing key
/// (empty).
#[derive(Clone, Copy)]
enum Source<'a> {
    Missing,
    ZSet(&'a ZSet),
    Set(&'a Set),
}

impl<'a> Source<'a> {
    fn len(&self) -> usize {
        match self {
            Source::Missing => 0,
            Source::ZSet(z) => z.len(),
            Source::Set(s) => s.len(),
        }
    }

    /// A listpack's walk per lookup (see [`ZSet::walk_units`]).
    fn walk_units(&self) -> u64 {
        match self {
            Source::ZSet(z) => z.walk_units(),
            Source::Missing | Source::Set(_) => 0,
        }
    }

    fn score(&self, member: &[u8]) -> Option<f64> {
        match self {
            Source::Missing => None,
            Source::ZSet(z) => z.score(member),
            Source::Set(s) => s.contains(member).then_some(1.0),
        }
    }

    /// Every element with its score.
    fn elements(&self) -> Vec<(Box<[u8]>, f64)> {
        match self {
            Source::Missing => Vec::new(),
            Source::ZSet(z) => z
                .iter_ranks(0, z.len(), false)
                .map(|(m, s)| (Box::from(m), s))
                .collect(),
            Source::Set(s) => s
                .iter()
                .map(|m| (m.to_vec().into_boxed_slice(), 1.0))
                .collect(),
        }
    }

    /// Whether two inputs are the same stored value (a key given twice).
    fn same_as(&self, other: &Source) -> bool {
        match (self, other) {
            (Source::ZSet(a), Source::ZSet(b)) => std::ptr::eq(*a, *b),
            (Source::Set(a), Source::Set(b)) => std::ptr::eq(*a, *b),
            _ => false,
        }
    }
}

/// The options after the keys.
struct Options {
    weights: Vec<f64>,
    aggregate: Aggregate,
    withscores: bool,
    limit: u64,
}

fn parse_options(
    args: &[Vec<u8>],
    first: usize,
    keys: usize,
    op: Op,
    output: Output,
) -> Result<Options, &'static str> {
    let mut o = Options {
        weights: vec![1.0; keys],
        aggregate: Aggregate::Sum,
        withscores: false,
        limit: 0,
    };
    let algebra = op != Op::Diff && output != Output::Cardinality;
    let mut j = first;
    while j < args.len() {
        let remaining = args.len() - j;
        let arg = &args[j];
        if algebra && remaining > keys && arg.eq_ignore_ascii_case(b"weights") {
            for (i, weight) in o.weights.iter_mut().enumerate() {
                *weight = parse_score(&args[j + 1 + i]).ok_or("ERR weight value is not a float")?;
            }
            j += 1 + keys;
        } else if algebra && remaining >= 2 && arg.eq_ignore_ascii_case(b"aggregate") {
            let name = &args[j + 1];
            o.aggregate = if name.eq_ignore_ascii_case(b"sum") {
                Aggregate::Sum
            } else if name.eq_ignore_ascii_case(b"min") {
                Aggregate::Min
            } else if name.eq_ignore_ascii_case(b"max") {
                Aggregate::Max
            } else {
                return Err(SYNTAX_ERROR);
            };
            j += 2;
        } else if output == Output::Reply && arg.eq_ignore_ascii_case(b"withscores") {
            o.withscores = true;
            j += 1;
        } else if output == Output::Cardinality
            && remaining >= 2
            && arg.eq_ignore_ascii_case(b"limit")
        {
            match parse_i64_strict(&args[j + 1]) {
                Some(n) if n >= 0 => o.limit = n as u64,
                _ => return Err("ERR LIMIT can't be negative"),
            }
            j += 2;
        } else {
            return Err(SYNTAX_ERROR);
        }
    }
    Ok(o)
}

fn union(sources: &[(Source, f64)], aggregate: Aggregate, work: &mut u64) -> Vec<(Box<[u8]>, f64)> {
    let mut acc: BTreeMap<Box<[u8]>, f64> = BTreeMap::new();
    for (source, weight) in sources {
        for (member, score) in source.elements() {
            *work += 1;
            let mut score = weight * score;
            if score.is_nan() {
                score = 0.0;
            }
            match acc.get_mut(&member) {
                Some(total) => aggregate.apply(total, score),
                None => {
                    acc.insert(member, score);
                }
            }
        }
    }
    acc.into_iter().collect()
}

/// Elements of the smallest input present in every other one; with
/// `limit` (ZINTERCARD) stops after that many.
fn inter(
    sources: &[(Source, f64)],
    aggregate: Aggregate,
    limit: u64,
    work: &mut u64,
) -> Vec<(Box<[u8]>, f64)> {
    let mut out = Vec::new();
    let Some(((first, first_weight), rest)) = sources.split_first() else {
        return out;
    };
    'elements: for (member, zscore) in first.elements() {
        *work += 1;
        let mut score = first_weight * zscore;
        if score.is_nan() {
            score = 0.0;
        }
        for (source, weight) in rest {
            *work += 1;
            let value = if source.same_as(first) {
                zscore * weight
            } else {
                *work += source.walk_units();
                match source.score(&member) {
                    Some(s) => s * weight,
                    None => continue 'elements,
                }
            };
            aggregate.apply(&mut score, value);
        }
        out.push((member, score));
        if limit > 0 && out.len() as u64 >= limit {
            break;
        }
    }
    out
}

/// Elements of the first input in none of the others (nothing when a key
/// is repeated, as Redis short-cuts).
fn diff(sources: &[(Source, f64)], work: &mut u64) -> Vec<(Box<[u8]>, f64)> {
    let Some(((first, _), rest)) = sources.split_first() else {
        return Vec::new();
    };
    if rest.iter().any(|(s, _)| s.same_as(first)) {
        return Vec::new();
    }
    let mut out = first.elements();
    let walk_units: u64 = rest.iter().map(|(s, _)| s.walk_units()).sum();
    out.retain(|(member, _)| {
        *work += 1 + rest.len() as u64 + walk_units;
        rest.iter().all(|(s, _)| s.score(member).is_none())
    });
    out
}

/// The shared body; `numkeys_at` is 1 for ZUNION/ZINTER/ZDIFF/ZINTERCARD
/// and 2 for the STORE forms.
fn algebra(ctx: &mut Ctx, args: &mut [Vec<u8>], numkeys_at: usize, op: Op, output: Output) {
    let Some(numkeys) = parse_i64_strict(&args[numkeys_at]) else {
        return ctx.error(NOT_AN_INTEGER);
    };
    if numkeys < 1 {
        let name = String::from_utf8_lossy(&args[0]).to_ascii_lowercase();
        return ctx.error(&format!(
            "ERR at least 1 input key is needed for '{name}' command"
        ));
    }
    let first_key = numkeys_at + 1;
    if numkeys as u64 > (args.len() - first_key) as u64 {
        return ctx.error(SYNTAX_ERROR);
    }
    let keys = first_key..first_key + numkeys as usize;
    // Every source is a read (a miss raises `keymiss`), STORE forms too.
    for key in &args[keys.clone()] {
        if !matches!(
            ctx.lookup_read(key),
            None | Some(Value::ZSet(_) | Value::Set(_))
        ) {
            return ctx.error(WRONGTYPE);
        }
    }
    let options = match parse_options(args, keys.end, keys.len(), op, output) {
        Ok(o) => o,
        Err(e) => return ctx.error(e),
    };

    let mut work = 0u64;
    let mut result = {
        let db = &ctx.server.keyspace.dbs[ctx.clients[&ctx.client_id].db];
        let mut sources: Vec<(Source, f64)> = args[keys]
            .iter()
            .zip(&options.weights)
            .map(|(key, &weight)| {
                let source = match db.get(key) {
                    Some(Value::ZSet(z)) => Source::ZSet(z),
                    Some(Value::Set(s)) => Source::Set(s),
                    _ => Source::Missing,
                };
                (source, weight)
            })
            .collect();
        if op != Op::Diff {
            // Smallest first (a stable sort, as glibc's merge-sort qsort).
            sources.sort_by_key(|(s, _)| s.len());
        }
        match op {
            Op::Union => union(&sources, options.aggregate, &mut work),
            Op::Inter => inter(&sources, options.aggregate, options.limit, &mut work),
            Op::Diff => diff(&sources, &mut work),
        }
    };
    ctx.work(work + result.len() as u64);
    if output == Output::Cardinality {
        return ctx.int(result.len() as i64);
    }
    result.sort_unstable_by(|(m1, s1), (m2, s2)| cmp_elements(*s1, m1, *s2, m2));
    debug_assert!(result
        .windows(2)
        .all(|w| cmp_elements(w[0].1, &w[0].0, w[1].1, &w[1].0) == Ordering::Less));
    if output == Output::Reply {
        let n = result.len();
        let mut w = ctx.w();
        write_elements(
            &mut w,
            n,
            result.iter().map(|(m, s)| (&**m, *s)),
            options.withscores,
        );
        return;
    }
    let dst = &args[1];
    let limits = ctx.limits();
    let zset = (!result.is_empty()).then(|| ZSet::from_sorted(result, &limits, new_zset_seed(ctx)));
    super::store_or_delete(ctx, dst, zset);
}

/// ZUNION numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]
pub(super) fn zunion(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    algebra(ctx, args, 1, Op::Union, Output::Reply);
}

/// ZINTER numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]
pub(super) fn zinter(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    algebra(ctx, args, 1, Op::Inter, Output::Reply);
}

/// ZDIFF numkeys key [key ...] [WITHSCORES]
pub(super) fn zdiff(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    algebra(ctx, args, 1, Op::Diff, Output::Reply);
}

/// ZUNIONSTORE dst numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX]
pub(super) fn zunionstore(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    algebra(ctx, args, 2, Op::Union, Output::Store);
}

/// ZINTERSTORE dst numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX]
pub(super) fn zinterstore(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    algebra(ctx, args, 2, Op::Inter, Output::Store);
}

/// ZDIFFSTORE dst numkeys key [key ...]
pub(super) fn zdiffstore(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    algebra(ctx, args, 2, Op::Diff, Output::Store);
}

/// ZINTERCARD numkeys key [key ...] [LIMIT limit]
pub(super) fn zintercard(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    algebra(ctx, args, 1, Op::Inter, Output::Cardinality);
}
