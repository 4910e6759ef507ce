//! SORT and SORT_RO: the elements of a list, set or sorted set, sorted
//! numerically or lexically, by themselves or by other keys (`BY weight_*`,
//! `BY obj_*->field`), with LIMIT, GET (`#` is the element itself), ASC or
//! DESC, ALPHA, and STORE into a list.
//!
//! The semantics are Redis 7.0's sort.c, edge cases included:
//!
//! - a BY pattern without `*` means "don't sort": lists and sorted sets keep
//!   their order (reversed by DESC), a set keeps its iteration order, unless
//!   the result is STOREd, when a set is sorted ALPHA so that the stored
//!   list does not depend on hashing;
//! - numeric sorting parses each weight like C's `strtod` (leading spaces,
//!   hex, `inf` accepted; trailing bytes, NaN, overflow and underflow are
//!   "One or more scores can't be converted into double"); a missing weight
//!   key weighs 0, and equal weights are ordered by the elements' bytes;
//! - with ALPHA and BY, a missing weight sorts first;
//! - GET of a missing key (or field) is a null, or an empty string in a
//!   STOREd list; STORE of nothing deletes the destination;
//! - BY with a `*` pattern and any GET (even `GET #`) read keys no key spec
//!   names, so they are refused, with an error of their own, to a user
//!   without read access to every key (see [`full_key_access`]).
//!
//! Work: one unit per element loaded, per weight or GET looked up, per
//! comparison (so O(N log N) when sorting), and per element produced.

use crate::notify::{class, notify};
use std::cmp::Ordering;

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::util::parse_i64_strict;
use crate::value::{Value, WRONGTYPE};

const SORT_ACL: &[&str] = &["write", "set", "sortedset", "list", "slow", "dangerous"];
const SORT_RO_ACL: &[&str] = &["read", "set", "sortedset", "list", "slow", "dangerous"];
const SORT_COMPLEXITY: &str = "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number of returned elements. When the elements are not sorted, complexity is O(N).";

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "sort",
        arity: -2,
        flags: WRITE | DENYOOM | O_N,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: SORT_ACL,
        summary: "Sort the elements in a list, set or sorted set",
        since: "1.0.0",
        complexity: SORT_COMPLEXITY,
        key_spec_flags: &["RO", "access"],
        handler: Some(sort),
        ..CommandSpec::DEFAULT
    },
    CommandSpec {
        name: "sort_ro",
        arity: -2,
        flags: READONLY | O_N,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        acl_categories: SORT_RO_ACL,
        summary: "Sort the elements in a list, set or sorted set. Read-only variant of SORT.",
        since: "7.0.0",
        complexity: SORT_COMPLEXITY,
        key_spec_flags: &["RO", "access"],
        handler: Some(sort_ro),
        ..CommandSpec::DEFAULT
    },
];

fn sort(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    sort_generic(ctx, args, false);
}

fn sort_ro(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    sort_generic(ctx, args, true);
}

/// The parsed options of one SORT.
#[derive(Default)]
struct Options<'a> {
    by: Option<&'a [u8]>,
    /// Set by a BY pattern without `*`; a later BY with `*` does not clear
    /// it (as in Redis).
    dont_sort: bool,
    limit_start: i64,
    /// Negative: to the end.
    limit_count: i64,
    gets: Vec<&'a [u8]>,
    desc: bool,
    alpha: bool,
    store: Option<&'a [u8]>,
}

const BY_DENIED: &str = "ERR BY option of SORT denied due to insufficient ACL permissions.";
const GET_DENIED: &str = "ERR GET option of SORT denied due to insufficient ACL permissions.";

/// Parses SORT's options (`args[2..]`) in Redis's order; `Err` is the
/// error reply. SORT_RO does not know STORE. `full_key_access`: the user
/// may read every key, which BY (with a `*`) and GET need.
fn parse_options(
    args: &[Vec<u8>],
    read_only: bool,
    full_key_access: bool,
) -> Result<Options<'_>, &'static str> {
    let mut o = Options {
        limit_count: -1,
        ..Options::default()
    };
    let mut j = 2;
    while j < args.len() {
        let left = args.len() - j - 1;
        let word = args[j].as_slice();
        if word.eq_ignore_ascii_case(b"asc") {
            o.desc = false;
        } else if word.eq_ignore_ascii_case(b"desc") {
            o.desc = true;
        } else if word.eq_ignore_ascii_case(b"alpha") {
            o.alpha = true;
        } else if word.eq_ignore_ascii_case(b"limit") && left >= 2 {
            let (Some(start), Some(count)) = (
                parse_i64_strict(&args[j + 1]),
                parse_i64_strict(&args[j + 2]),
            ) else {
                return Err("ERR value is not an integer or out of range");
            };
            (o.limit_start, o.limit_count) = (start, count);
            j += 2;
        } else if !read_only && word.eq_ignore_ascii_case(b"store") && left >= 1 {
            o.store = Some(&args[j + 1]);
            j += 1;
        } else if word.eq_ignore_ascii_case(b"by") && left >= 1 {
            let pattern = args[j + 1].as_slice();
            if !pattern.contains(&b'*') {
                o.dont_sort = true;
            } else if !full_key_access {
                return Err(BY_DENIED);
            }
            o.by = Some(pattern);
            j += 1;
        } else if word.eq_ignore_ascii_case(b"get") && left >= 1 {
            if !full_key_access {
                return Err(GET_DENIED);
            }
            o.gets.push(&args[j + 1]);
            j += 1;
        } else {
            return Err("ERR syntax error");
        }
        j += 1;
    }
    Ok(o)
}

/// One element being sorted and what it is compared by.
struct Item {
    element: Vec<u8>,
    /// The numeric weight (0 when the BY key is missing).
    score: f64,
    /// The ALPHA weight from a BY key; `None` when missing (sorts first).
    by_text: Option<Vec<u8>>,
}

/// Whether the client's user may read every key (Redis's
/// `ACLUserCheckCmdWithUnrestrictedKeyAccess` with `CMD_KEY_ACCESS`, asked
/// before SORT parses its options). A replayed AOF obeys no user. The
/// check's steps are charged.
fn full_key_access(ctx: &mut Ctx, args: &[Vec<u8>]) -> bool {
    let c = &ctx.clients[&ctx.client_id];
    if c.replaying_aof {
        return true;
    }
    let Some(user) = ctx.server.acl.user(&c.user) else {
        return false;
    };
    let root = user.root();
    if root.all_commands && root.all_keys {
        return true;
    }
    let mut steps = 0;
    let acl = &ctx.server.acl;
    let read = crate::acl::selector::KEY_READ;
    let full = crate::acl::check::user_has_unrestricted_key_access(
        user, &acl.index, ctx.spec, args, read, &mut steps,
    );
    ctx.work(crate::glob::work_units(steps));
    full
}

fn sort_generic(ctx: &mut Ctx, args: &mut [Vec<u8>], read_only: bool) {
    let full_key_access = full_key_access(ctx, args);
    let mut o = match parse_options(args, read_only, full_key_access) {
        Ok(o) => o,
        Err(e) => return ctx.error(e),
    };
    // A read, STORE or not: a miss raises `keymiss`.
    let (elements, kind) = match ctx.lookup_read(&args[1]) {
        None => (Vec::new(), Kind::List),
        Some(value) => match natural_order(value) {
            Some(loaded) => loaded,
            None => return ctx.error(WRONGTYPE),
        },
    };
    ctx.work(elements.len() as u64);
    if o.dont_sort && kind == Kind::Set && o.store.is_some() {
        // A set's iteration order depends on its hashing; what is stored
        // must not (Redis forces ALPHA for the replication's sake).
        (o.dont_sort, o.alpha, o.by) = (false, true, None);
    }
    let (start, end) = limit_range(o.limit_start, o.limit_count, elements.len());
    let mut items: Vec<Item> = elements
        .into_iter()
        .map(|element| Item {
            element,
            score: 0.0,
            by_text: None,
        })
        .collect();
    if o.dont_sort {
        if o.desc && kind != Kind::Set {
            items.reverse();
        }
    } else if let Err(e) = weigh_and_sort(ctx, &mut items, &o) {
        return ctx.error(e);
    }
    let selected = match (start, end) {
        (Some(start), Some(end)) if start <= end => &items[start..=end],
        _ => &items[..0],
    };
    match o.store {
        None => reply_elements(ctx, selected, &o.gets),
        Some(destination) => store_elements(ctx, selected, &o.gets, destination),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    List,
    Set,
    ZSet,
}

/// The elements of a list (in order), set (iteration order) or sorted set
/// (rank order); `None` for another type. A sorted set is converted to its
/// skiplist encoding first, as Redis does (OBJECT ENCODING shows it).
fn natural_order(value: &mut Value) -> Option<(Vec<Vec<u8>>, Kind)> {
    match value {
        Value::List(list) => Some((list.iter().map(|e| e.to_vec()).collect(), Kind::List)),
        Value::Set(set) => Some((set.iter().map(|m| m.to_vec()).collect(), Kind::Set)),
        Value::ZSet(zset) => {
            zset.convert_to_skiplist();
            Some((
                zset.iter_ranks(0, zset.len(), false)
                    .map(|(m, _)| m.to_vec())
                    .collect(),
                Kind::ZSet,
            ))
        }
        Value::Str(_) | Value::Hash(_) | Value::Stream(_) => None,
    }
}

/// Redis's LIMIT arithmetic: the inclusive index range `start..=end` of
/// `len` elements to output, `None` ends meaning "nothing".
fn limit_range(limit_start: i64, limit_count: i64, len: usize) -> (Option<usize>, Option<usize>) {
    let len = len as i64;
    let mut start = limit_start.max(0);
    let mut end = if limit_count < 0 {
        len - 1
    } else {
        start.saturating_add(limit_count) - 1
    };
    if start >= len {
        start = len - 1;
        end = len - 2;
    }
    end = end.min(len - 1);
    let index = |i: i64| usize::try_from(i).ok();
    (index(start), index(end))
}

/// Looks up each item's weight (BY, or the element itself) and sorts.
fn weigh_and_sort(ctx: &mut Ctx, items: &mut [Item], o: &Options) -> Result<(), &'static str> {
    let mut unconvertible = false;
    for item in items.iter_mut() {
        let weight = match o.by {
            Some(pattern) => {
                ctx.work(1);
                match lookup_by_pattern(ctx, pattern, &item.element) {
                    Some(w) => w,
                    None => continue,
                }
            }
            None => {
                if !o.alpha {
                    match strtod(&item.element) {
                        Some(score) => item.score = score,
                        None => unconvertible = true,
                    }
                }
                continue;
            }
        };
        if o.alpha {
            item.by_text = Some(weight);
        } else {
            match strtod(&weight) {
                Some(score) => item.score = score,
                None => unconvertible = true,
            }
        }
    }
    // Redis sorts before it notices the error; the work is the same.
    let mut comparisons = 0u64;
    let by_pattern = o.by.is_some();
    items.sort_by(|a, b| {
        comparisons += 1;
        let ordering = compare(a, b, o.alpha, by_pattern);
        if o.desc {
            ordering.reverse()
        } else {
            ordering
        }
    });
    ctx.work(comparisons);
    if unconvertible {
        return Err("ERR One or more scores can't be converted into double");
    }
    Ok(())
}

/// Redis's `sortCompare` (before DESC): numeric weights with ties broken
/// by the elements' bytes; ALPHA by BY weights (missing first) or by the
/// elements. Collation is byte order, as `strcoll` in the C locale.
fn compare(a: &Item, b: &Item, alpha: bool, by_pattern: bool) -> Ordering {
    if !alpha {
        return match a.score.partial_cmp(&b.score) {
            Some(Ordering::Equal) | None => a.element.cmp(&b.element),
            Some(ordering) => ordering,
        };
    }
    if by_pattern {
        return match (&a.by_text, &b.by_text) {
            (Some(x), Some(y)) => x.cmp(y),
            (x, y) => x.is_some().cmp(&y.is_some()),
        };
    }
    a.element.cmp(&b.element)
}

/// Redis's `lookupKeyByPattern`: `#` is the element itself; otherwise the
/// first `*` of the pattern is replaced by the element, and the key read as
/// a string, or, with `->field` after the `*`, as a hash field. A pattern
/// without `*`, a missing key or a key of another type give `None`; a
/// missing key raises `keymiss` (a read, each time it is looked up).
fn lookup_by_pattern(ctx: &mut Ctx, pattern: &[u8], element: &[u8]) -> Option<Vec<u8>> {
    if pattern == b"#" {
        return Some(element.to_vec());
    }
    let star = pattern.iter().position(|&b| b == b'*')?;
    let after = &pattern[star + 1..];
    let arrow = after.windows(2).position(|w| w == b"->");
    let (postfix, field) = match arrow {
        Some(at) if at + 2 < after.len() => (&after[..at], Some(&after[at + 2..])),
        _ => (after, None),
    };
    let mut key = Vec::with_capacity(star + element.len() + postfix.len());
    key.extend_from_slice(&pattern[..star]);
    key.extend_from_slice(element);
    key.extend_from_slice(postfix);
    match (ctx.lookup_read(&key)?, field) {
        (Value::Str(s), None) => Some(s.as_bytes().to_vec()),
        (Value::Hash(hash), Some(field)) => hash.get(field).map(|v| v.to_vec()),
        _ => None,
    }
}

/// Replies the selected elements, or for each the GET lookups.
fn reply_elements(ctx: &mut Ctx, selected: &[Item], gets: &[&[u8]]) {
    let per_item = gets.len().max(1);
    ctx.work((selected.len() * per_item) as u64);
    let mut values: Vec<Option<Vec<u8>>> = Vec::with_capacity(selected.len() * per_item);
    for item in selected {
        if gets.is_empty() {
            values.push(Some(item.element.clone()));
        }
        for pattern in gets {
            values.push(lookup_by_pattern(ctx, pattern, &item.element));
        }
    }
    let mut w = ctx.w();
    w.array_len(values.len());
    for value in &values {
        match value {
            Some(bytes) => w.bulk(bytes),
            None => w.null(),
        }
    }
}

/// STORE: the selected elements (or GET lookups, missing ones as empty
/// strings) become a list at `destination`, replacing whatever was there;
/// with nothing to store, `destination` is deleted. Replies the length.
fn store_elements(ctx: &mut Ctx, selected: &[Item], gets: &[&[u8]], destination: &[u8]) {
    let per_item = gets.len().max(1);
    ctx.work((selected.len() * per_item) as u64);
    let mut values: Vec<Vec<u8>> = Vec::with_capacity(selected.len() * per_item);
    for item in selected {
        if gets.is_empty() {
            values.push(item.element.clone());
        }
        for pattern in gets {
            values.push(lookup_by_pattern(ctx, pattern, &item.element).unwrap_or_default());
        }
    }
    let stored = values.len();
    if stored == 0 {
        let lazy = ctx.server.config.lazyfree_lazy_server_del;
        if ctx.delete(destination, lazy) {
            notify(ctx, class::GENERIC, "del", destination);
        }
    } else {
        let mut list = crate::types::List::new(ctx.limits().list_max_listpack_size);
        for value in &values {
            list.push_back(value);
        }
        ctx.store(destination, Value::List(Box::new(list)), false);
        // `store` counted one change; Redis counts one per element.
        ctx.server.dirty += stored as u64 - 1;
        notify(ctx, class::LIST, "sortstore", destination);
    }
    ctx.int(stored as i64);
}

/// C's `strtod` over the whole string, as SORT uses it: leading white
/// space, a sign, decimal or hexadecimal (`0x1p4`) digits, `inf` and
/// `infinity`. `None` where Redis reports "can't be converted": trailing
/// bytes, NaN, overflow to infinity and underflow (ERANGE). The empty
/// string is 0, as `strtod` consumes nothing and leaves no trailing byte.
fn strtod(text: &[u8]) -> Option<f64> {
    let trimmed = match text.iter().position(|b| !is_c_space(*b)) {
        Some(at) => &text[at..],
        None => return if text.is_empty() { Some(0.0) } else { None },
    };
    let text = std::str::from_utf8(trimmed).ok()?;
    let (negative, unsigned) = match text.as_bytes()[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let magnitude = if unsigned.len() > 1 && unsigned[..2].eq_ignore_ascii_case("0x") {
        parse_hex_float(&unsigned[2..])?
    } else {
        let lower = unsigned.to_ascii_lowercase();
        if lower == "inf" || lower == "infinity" {
            return Some(if negative {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            });
        }
        // Rust's parser takes what strtod takes for decimals, plus words
        // ("nan", "inf") that are handled or rejected here.
        if !lower
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'-' | b'+'))
        {
            return None;
        }
        let v: f64 = unsigned.parse().ok()?;
        let nonzero_digits = unsigned
            .split(['e', 'E'])
            .next()
            .is_some_and(|m| m.bytes().any(|b| (b'1'..=b'9').contains(&b)));
        if v.is_infinite() || v.is_subnormal() || (v == 0.0 && nonzero_digits) {
            return None;
        }
        v
    };
    Some(if negative { -magnitude } else { magnitude })
}

fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// The part of a hexadecimal float after `0x`: hex digits with an optional
/// point, then an optional binary exponent `p[+-]digits`.
fn parse_hex_float(text: &str) -> Option<f64> {
    let (digits, exponent) = match text.find(['p', 'P']) {
        Some(at) => (&text[..at], Some(&text[at + 1..])),
        None => (text, None),
    };
    let (int_part, frac_part) = digits.split_once('.').unwrap_or((digits, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let mut value = 0f64;
    for c in int_part.chars() {
        value = value * 16.0 + f64::from(c.to_digit(16)?);
    }
    let mut scale = 1.0 / 16.0;
    for c in frac_part.chars() {
        value += f64::from(c.to_digit(16)?) * scale;
        scale /= 16.0;
    }
    if let Some(exponent) = exponent {
        let e: i32 = exponent.parse().ok()?;
        value *= 2f64.powi(e);
    }
    if value.is_infinite() || value.is_subnormal() {
        return None;
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{int, TestEngine};
    use crate::types::List;
    use crate::{Config, Engine};

    /// `FILL key element...`: a list built without the list commands, so
    /// that SORT's accounting is tested on its own.
    fn fill(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
        let mut list = List::new(ctx.limits().list_max_listpack_size);
        for element in &args[2..] {
            list.push_back(element);
        }
        ctx.store(&args[1], Value::List(Box::new(list)), false);
        ctx.ok();
    }

    static FIXTURE: &[CommandSpec] = &[CommandSpec {
        name: "sorttest-fill",
        arity: -3,
        flags: WRITE,
        first_key: 1,
        last_key: 1,
        key_step: 1,
        handler: Some(fill),
        ..CommandSpec::DEFAULT
    }];

    #[test]
    fn work_grows_as_n_log_n_when_sorting_and_n_when_not() {
        let config = Config {
            record_executions: true,
            ..Config::default()
        };
        let mut t = TestEngine::with_config(config.clone());
        t.engine = Engine::with_commands(config, t.now, &[FIXTURE]);
        let c = t.connect();
        let n = 1024u64;
        let mut args = vec!["sorttest-fill".to_string(), "l".to_string()];
        // A descending run and its mirror: a merge sort cannot finish in
        // O(N) comparisons on this.
        args.extend((0..n).map(|i| ((i * 7919) % n).to_string()));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        t.cmd(c, &refs);
        assert!(
            matches!(t.cmd(c, &["SORT", "l"]), crate::resp::Frame::Array(a) if a.len() == n as usize)
        );
        let sorted = t.executed_work("sort");
        let n_log_n = n * 10;
        assert!(sorted >= n_log_n / 2, "{sorted} < N log N / 2");
        assert!(sorted <= 4 * n_log_n, "{sorted} > 4 N log N");
        t.cmd(c, &["SORT", "l", "BY", "nosort"]);
        let unsorted = t.executed_work("sort");
        assert!(unsorted >= 2 * n && unsorted < sorted / 2, "{unsorted}");
        assert_eq!(t.cmd(c, &["SORT", "l", "STORE", "dst"]), int(n as i64));
        for spec in COMMANDS {
            assert!(spec.has(O_N), "{} is O(N)", spec.name);
        }
    }

    #[test]
    fn strtod_like_redis() {
        assert_eq!(strtod(b""), Some(0.0));
        assert_eq!(strtod(b" 5"), Some(5.0));
        assert_eq!(strtod(b"5 "), None);
        assert_eq!(strtod(b"1e400"), None);
        assert_eq!(strtod(b"1e-400"), None);
        assert_eq!(strtod(b"1e-310"), None);
        assert_eq!(strtod(b"0e-400"), Some(0.0));
        assert_eq!(strtod(b"0x10"), Some(16.0));
        assert_eq!(strtod(b"-0x1.8p1"), Some(-3.0));
        assert_eq!(strtod(b"0x"), None);
        assert_eq!(strtod(b"inf"), Some(f64::INFINITY));
        assert_eq!(strtod(b"-Infinity"), Some(f64::NEG_INFINITY));
        assert_eq!(strtod(b"nan"), None);
        assert_eq!(strtod(b"+3"), Some(3.0));
        assert_eq!(strtod(b".5"), Some(0.5));
        assert_eq!(strtod(b"5."), Some(5.0));
        assert_eq!(strtod(b"1_0"), None);
        assert_eq!(strtod(b"   "), None);
    }

    #[test]
    fn limit_arithmetic() {
        assert_eq!(limit_range(0, -1, 5), (Some(0), Some(4)));
        assert_eq!(limit_range(-3, 2, 5), (Some(0), Some(1)));
        assert_eq!(limit_range(1, 0, 5), (Some(1), Some(0)));
        assert_eq!(limit_range(7, 2, 5), (Some(4), Some(3)));
        assert_eq!(limit_range(3, 100, 5), (Some(3), Some(4)));
        assert_eq!(limit_range(0, -1, 0), (None, None));
        assert_eq!(limit_range(i64::MAX, i64::MAX, 3), (Some(2), Some(1)));
    }
}
