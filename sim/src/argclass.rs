//! Argument classes: what kind of value each argument of each sent request
//! was (empty, an integer at the i64 edge, a float special, binary bytes,
//! a pathological glob...), so that a sweep can say how much of the input
//! space its workloads reached. Self-contained: it reads only the requests
//! of a history.
//!
//! A pair is `(command, class)`; a triple adds the argument's position
//! (1 ..= [`ARG_POSITION_MAX`], later ones counted as the last). The sweep
//! prints how many distinct ones all its seeds reached together.

use std::collections::{BTreeMap, BTreeSet};

use crate::history::History;

/// Positions past this one count as this one (variadic tails).
pub const ARG_POSITION_MAX: u8 = 7;
/// Command names longer than this are not real commands: counted as "?".
const COMMAND_NAME_MAX_BYTES: usize = 32;
/// From this length an argument is "long" (near a listpack or inline limit).
pub const ARG_LONG_BYTES_MIN: usize = 1024;
/// From this length an argument is "huge" (a large bulk).
pub const ARG_HUGE_BYTES_MIN: usize = 64 * 1024;
/// From this many `*` a glob is pathological.
const GLOB_STARS_MANY_MIN: usize = 4;

/// What kind of value an argument is; the first matching class wins, in
/// declaration order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ArgClass {
    Empty,
    /// Contains a NUL byte.
    Nul,
    /// Contains `\r` or `\n`.
    Crlf,
    /// Not valid UTF-8.
    NonUtf8,
    Huge,
    Long,
    Zero,
    /// 1 ..= 1,000,000.
    SmallInt,
    /// -1,000,000 ..= -1.
    NegInt,
    /// Beyond ±1,000,000 but inside i64, not at an edge.
    BigInt,
    I64Max,
    I64Min,
    /// Digits (optionally signed) outside i64.
    PastI64,
    /// "-0".
    NegZero,
    /// Leading or trailing whitespace before a number ("  12").
    SpacedNumber,
    /// "+5".
    PlusNumber,
    /// "0x10".
    HexNumber,
    /// "007".
    LeadingZero,
    /// inf, -inf, +inf, infinity (any case).
    Inf,
    /// nan (any case).
    NaN,
    /// A float with an exponent of 100 or more (1e308).
    FloatHuge,
    /// A float with a negative exponent below -100 (underflow).
    FloatTiny,
    /// -0.0 and the like.
    FloatNegZero,
    /// Any other decimal float (1.5, -2e3).
    Float,
    /// A glob of many stars ("a*a*a*a*b").
    GlobManyStars,
    /// `[` without a closing `]`.
    GlobUnterminated,
    /// Ends with a lone backslash.
    GlobTrailingBackslash,
    /// A `[...]` class.
    GlobClass,
    /// Contains `*` or `?` (a simple glob).
    Glob,
    /// Anything else.
    Plain,
}

impl ArgClass {
    /// Every class, in declaration order: `ALL[c as usize] == c`.
    pub const ALL: [ArgClass; 30] = [
        ArgClass::Empty,
        ArgClass::Nul,
        ArgClass::Crlf,
        ArgClass::NonUtf8,
        ArgClass::Huge,
        ArgClass::Long,
        ArgClass::Zero,
        ArgClass::SmallInt,
        ArgClass::NegInt,
        ArgClass::BigInt,
        ArgClass::I64Max,
        ArgClass::I64Min,
        ArgClass::PastI64,
        ArgClass::NegZero,
        ArgClass::SpacedNumber,
        ArgClass::PlusNumber,
        ArgClass::HexNumber,
        ArgClass::LeadingZero,
        ArgClass::Inf,
        ArgClass::NaN,
        ArgClass::FloatHuge,
        ArgClass::FloatTiny,
        ArgClass::FloatNegZero,
        ArgClass::Float,
        ArgClass::GlobManyStars,
        ArgClass::GlobUnterminated,
        ArgClass::GlobTrailingBackslash,
        ArgClass::GlobClass,
        ArgClass::Glob,
        ArgClass::Plain,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ArgClass::Empty => "empty",
            ArgClass::Nul => "nul",
            ArgClass::Crlf => "crlf",
            ArgClass::NonUtf8 => "non-utf8",
            ArgClass::Huge => "huge",
            ArgClass::Long => "long",
            ArgClass::Zero => "zero",
            ArgClass::SmallInt => "small-int",
            ArgClass::NegInt => "neg-int",
            ArgClass::BigInt => "big-int",
            ArgClass::I64Max => "i64-max",
            ArgClass::I64Min => "i64-min",
            ArgClass::PastI64 => "past-i64",
            ArgClass::NegZero => "neg-zero",
            ArgClass::SpacedNumber => "spaced-number",
            ArgClass::PlusNumber => "plus-number",
            ArgClass::HexNumber => "hex-number",
            ArgClass::LeadingZero => "leading-zero",
            ArgClass::Inf => "inf",
            ArgClass::NaN => "nan",
            ArgClass::FloatHuge => "float-huge",
            ArgClass::FloatTiny => "float-tiny",
            ArgClass::FloatNegZero => "float-neg-zero",
            ArgClass::Float => "float",
            ArgClass::GlobManyStars => "glob-many-stars",
            ArgClass::GlobUnterminated => "glob-unterminated",
            ArgClass::GlobTrailingBackslash => "glob-trailing-backslash",
            ArgClass::GlobClass => "glob-class",
            ArgClass::Glob => "glob",
            ArgClass::Plain => "plain",
        }
    }
}

/// The class of one argument.
pub fn classify(arg: &[u8]) -> ArgClass {
    if arg.is_empty() {
        return ArgClass::Empty;
    }
    if arg.contains(&0) {
        return ArgClass::Nul;
    }
    // Two memchr scans, not one byte loop: the big workload's values are
    // tens of kilobytes.
    if arg.contains(&b'\r') || arg.contains(&b'\n') {
        return ArgClass::Crlf;
    }
    let Ok(text) = std::str::from_utf8(arg) else {
        return ArgClass::NonUtf8;
    };
    if arg.len() >= ARG_HUGE_BYTES_MIN {
        return ArgClass::Huge;
    }
    if arg.len() >= ARG_LONG_BYTES_MIN {
        return ArgClass::Long;
    }
    classify_number(text)
        .or_else(|| classify_glob(arg))
        .unwrap_or(ArgClass::Plain)
}

fn classify_number(text: &str) -> Option<ArgClass> {
    /// The magnitude up to which an integer is "small".
    const SMALL_MAX: i64 = 1_000_000;
    let trimmed = text.trim_matches(|c: char| c.is_ascii_whitespace());
    if trimmed.len() != text.len() {
        let inner = classify_number(trimmed);
        return inner
            .filter(|c| *c != ArgClass::Plain)
            .map(|_| ArgClass::SpacedNumber);
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    if unsigned.eq_ignore_ascii_case("inf") || unsigned.eq_ignore_ascii_case("infinity") {
        return Some(ArgClass::Inf);
    }
    if unsigned.eq_ignore_ascii_case("nan") {
        return Some(ArgClass::NaN);
    }
    let bytes = unsigned.as_bytes();
    if bytes.len() > 2 && bytes[0] == b'0' && bytes[1].eq_ignore_ascii_case(&b'x') {
        return Some(ArgClass::HexNumber);
    }
    let all_digits = !unsigned.is_empty() && unsigned.bytes().all(|b| b.is_ascii_digit());
    if all_digits {
        if text.starts_with('+') {
            return Some(ArgClass::PlusNumber);
        }
        if unsigned.len() > 1 && unsigned.starts_with('0') {
            return Some(ArgClass::LeadingZero);
        }
        if text == "-0" {
            return Some(ArgClass::NegZero);
        }
        return Some(match text.parse::<i64>() {
            Err(_) => ArgClass::PastI64,
            Ok(0) => ArgClass::Zero,
            Ok(i64::MAX) => ArgClass::I64Max,
            Ok(i64::MIN) => ArgClass::I64Min,
            Ok(n) if (1..=SMALL_MAX).contains(&n) => ArgClass::SmallInt,
            Ok(n) if (-SMALL_MAX..0).contains(&n) => ArgClass::NegInt,
            Ok(_) => ArgClass::BigInt,
        });
    }
    let float_like = unsigned
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
        && unsigned.bytes().any(|b| b.is_ascii_digit());
    if !float_like {
        return None;
    }
    let value: f64 = text.parse().ok()?;
    let exponent = unsigned
        .split_once(['e', 'E'])
        .and_then(|(_, e)| e.parse::<i64>().ok())
        .unwrap_or(0);
    Some(if exponent >= 100 || value.is_infinite() {
        ArgClass::FloatHuge
    } else if exponent <= -100 {
        ArgClass::FloatTiny
    } else if value == 0.0 && value.is_sign_negative() {
        ArgClass::FloatNegZero
    } else {
        ArgClass::Float
    })
}

fn classify_glob(arg: &[u8]) -> Option<ArgClass> {
    let stars = arg.iter().filter(|&&b| b == b'*').count();
    if stars >= GLOB_STARS_MANY_MIN {
        return Some(ArgClass::GlobManyStars);
    }
    if let Some(open) = arg.iter().position(|&b| b == b'[') {
        if !arg[open..].contains(&b']') {
            return Some(ArgClass::GlobUnterminated);
        }
    }
    let trailing_backslashes = arg.iter().rev().take_while(|&&b| b == b'\\').count();
    if trailing_backslashes % 2 == 1 {
        return Some(ArgClass::GlobTrailingBackslash);
    }
    if arg.contains(&b'[') {
        return Some(ArgClass::GlobClass);
    }
    if stars > 0 || arg.contains(&b'?') {
        return Some(ArgClass::Glob);
    }
    None
}

/// Arguments up to this length are remembered by [`ClassMemo`]; longer
/// ones (values) rarely repeat and are classified each time.
const MEMO_ARG_BYTES_MAX: usize = 64;
/// At most this many distinct arguments are remembered per history.
const MEMO_ENTRIES_MAX: usize = 1 << 16;

/// The class of each short argument of one history, computed once: a run
/// sends the same keys, fields and options thousands of times, and
/// [`classify`] passes over an argument up to ten times (~565
/// instructions per argument on the default mix, 5% of a sweep's CPU).
#[derive(Default)]
struct ClassMemo<'a> {
    classes: crate::fxhash::FxHashMap<&'a [u8], ArgClass>,
}

/// Whether `arg` is short and made of letters, digits, `:`, `_` and `|`
/// only, with a byte that no number has (not a digit, not an exponent's
/// `e`), no leading `0` (`0x1f` is hex) and not `inf`, `infinity` or
/// `nan`: then [`classify`] finds no number and no glob in it, and says
/// [`ArgClass::Plain`]. Most of a run's keys and fields are such words,
/// and one pass over their bytes costs less than a memo lookup.
fn is_plain_word(arg: &[u8]) -> bool {
    let special = |word: &[u8]| arg.eq_ignore_ascii_case(word);
    if arg.len() > MEMO_ARG_BYTES_MAX || arg.first().is_none_or(|&b| b == b'0') {
        return false;
    }
    // One pass, one table load per byte: every short argument of a run
    // comes here, and two closure tests per byte were most of the count.
    let (mut all, mut any) = (WORD_ALLOWED, 0);
    for &b in arg {
        let bits = WORD_BYTES[usize::from(b)];
        all &= bits;
        any |= bits;
    }
    all & WORD_ALLOWED != 0
        && any & WORD_UNLIKE_A_NUMBER != 0
        && !special(b"inf")
        && !special(b"infinity")
        && !special(b"nan")
}

/// [`WORD_BYTES`]: a letter, digit, `:`, `_` or `|`.
const WORD_ALLOWED: u8 = 1;
/// [`WORD_BYTES`]: neither a digit nor an exponent's `e`/`E`.
const WORD_UNLIKE_A_NUMBER: u8 = 2;

/// Per byte value, its [`WORD_ALLOWED`] and [`WORD_UNLIKE_A_NUMBER`] bits.
const WORD_BYTES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let byte = b as u8;
        let mut bits = 0;
        if byte.is_ascii_alphanumeric() || matches!(byte, b':' | b'_' | b'|') {
            bits |= WORD_ALLOWED;
        }
        if !byte.is_ascii_digit() && !matches!(byte, b'e' | b'E') {
            bits |= WORD_UNLIKE_A_NUMBER;
        }
        table[b] = bits;
        b += 1;
    }
    table
};

impl<'a> ClassMemo<'a> {
    fn classify(&mut self, arg: &'a [u8]) -> ArgClass {
        if arg.len() > MEMO_ARG_BYTES_MAX {
            return classify(arg);
        }
        if is_plain_word(arg) {
            debug_assert_eq!(classify(arg), ArgClass::Plain, "{arg:?}");
            return ArgClass::Plain;
        }
        if let Some(&class) = self.classes.get(arg) {
            return class;
        }
        let class = classify(arg);
        if self.classes.len() < MEMO_ENTRIES_MAX {
            self.classes.insert(arg, class);
        }
        class
    }
}

/// Per argument position (index 0 unused), a bit per [`ArgClass`].
type PositionClasses = [u32; ARG_POSITION_MAX as usize + 1];

/// The distinct `(command, position, class)` triples a set of requests
/// reached.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArgClasses {
    /// Per command: the `(position, class)` seen.
    seen: BTreeMap<String, BTreeSet<(u8, ArgClass)>>,
}

impl ArgClasses {
    /// Every argument of every request of `history`.
    ///
    /// Gathered per request name as sent, one bit per (position, class),
    /// and entered into the sorted map once per name: a tree lookup by
    /// name and a set insert per argument were most of the cost.
    pub fn of_history(history: &History) -> ArgClasses {
        let mut memo = ClassMemo::default();
        let mut by_name: crate::fxhash::FxHashMap<&[u8], PositionClasses> =
            crate::fxhash::FxHashMap::default();
        for op in &history.ops {
            let (Some(name), true) = (op.args.first(), op.args.len() >= 2) else {
                continue;
            };
            let seen = by_name.entry(name.as_slice()).or_default();
            for (i, arg) in op.args.iter().enumerate().skip(1) {
                let position = i.min(usize::from(ARG_POSITION_MAX));
                seen[position] |= 1 << memo.classify(arg) as u32;
            }
        }
        let mut classes = ArgClasses::default();
        for (name, seen) in by_name {
            let entry = classes.entry(name);
            for (position, bits) in seen.iter().enumerate() {
                for class in ArgClass::ALL
                    .iter()
                    .filter(|&&c| bits & (1 << c as u32) != 0)
                {
                    entry.insert((position as u8, *class));
                }
            }
        }
        classes
    }

    /// Every argument (not the name) of one request.
    pub fn add_request(&mut self, args: &[Vec<u8>]) {
        self.add_classified(args, classify);
    }

    /// [`Self::add_request`] with the classifier given.
    fn add_classified<'a>(
        &mut self,
        args: &'a [Vec<u8>],
        mut class_of: impl FnMut(&'a [u8]) -> ArgClass,
    ) {
        let Some(name) = args.first() else { return };
        if args.len() < 2 {
            return;
        }
        let seen = self.entry(name);
        for (i, arg) in args.iter().enumerate().skip(1) {
            let position = i.min(usize::from(ARG_POSITION_MAX)) as u8;
            seen.insert((position, class_of(arg)));
        }
    }

    /// The set of the command a request names (lowercase; "?" for a name
    /// too long to be a command).
    fn entry(&mut self, name: &[u8]) -> &mut BTreeSet<(u8, ArgClass)> {
        // The lowercase name in a stack buffer, so that a command already
        // seen costs no allocation (every request of a run comes here).
        let mut lower = [0u8; COMMAND_NAME_MAX_BYTES];
        let borrowed = match name.len() <= COMMAND_NAME_MAX_BYTES {
            true => {
                let lower = &mut lower[..name.len()];
                lower.copy_from_slice(name);
                lower.make_ascii_lowercase();
                std::str::from_utf8(lower).ok()
            }
            false => Some("?"),
        };
        match borrowed.filter(|command| self.seen.contains_key(*command)) {
            Some(command) => self.seen.get_mut(command).expect("just found"),
            None => {
                let command = match name.len() <= COMMAND_NAME_MAX_BYTES {
                    true => String::from_utf8_lossy(name).to_ascii_lowercase(),
                    false => "?".to_string(),
                };
                self.seen.entry(command).or_default()
            }
        }
    }

    pub fn merge(&mut self, other: &ArgClasses) {
        for (command, seen) in &other.seen {
            self.seen
                .entry(command.clone())
                .or_default()
                .extend(seen.iter().copied());
        }
    }

    /// Distinct `(command, class)` pairs.
    pub fn pairs_count(&self) -> usize {
        self.seen
            .values()
            .map(|seen| seen.iter().map(|&(_, c)| c).collect::<BTreeSet<_>>().len())
            .sum()
    }

    /// Distinct `(command, position, class)` triples.
    pub fn triples_count(&self) -> usize {
        self.seen.values().map(BTreeSet::len).sum()
    }

    /// Distinct classes reached by any command.
    pub fn classes_count(&self) -> usize {
        self.seen
            .values()
            .flat_map(|seen| seen.iter().map(|&(_, c)| c))
            .collect::<BTreeSet<_>>()
            .len()
    }

    /// Per command, the classes reached (for a detailed report).
    pub fn by_command(&self) -> impl Iterator<Item = (&str, BTreeSet<ArgClass>)> {
        self.seen
            .iter()
            .map(|(c, seen)| (c.as_str(), seen.iter().map(|&(_, c)| c).collect()))
    }

    /// The summary line the sweep prints.
    pub fn summary_line(&self) -> String {
        format!(
            "argument classes: {} distinct (command, argument-class) pairs \
             ({} with the argument position; {} classes)",
            self.pairs_count(),
            self.triples_count(),
            self.classes_count()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_of_edge_arguments() {
        let cases: &[(&[u8], ArgClass)] = &[
            (b"", ArgClass::Empty),
            (b"a\0b", ArgClass::Nul),
            (b"a\r\nb", ArgClass::Crlf),
            (b"\xff\xfe", ArgClass::NonUtf8),
            (b"0", ArgClass::Zero),
            (b"12", ArgClass::SmallInt),
            (b"-3", ArgClass::NegInt),
            (b"123456789012", ArgClass::BigInt),
            (b"9223372036854775807", ArgClass::I64Max),
            (b"-9223372036854775808", ArgClass::I64Min),
            (b"9223372036854775808", ArgClass::PastI64),
            (b"-99999999999999999999", ArgClass::PastI64),
            (b"-0", ArgClass::NegZero),
            (b"  12", ArgClass::SpacedNumber),
            (b"12 ", ArgClass::SpacedNumber),
            (b"+5", ArgClass::PlusNumber),
            (b"0x10", ArgClass::HexNumber),
            (b"007", ArgClass::LeadingZero),
            (b"inf", ArgClass::Inf),
            (b"-Infinity", ArgClass::Inf),
            (b"+inf", ArgClass::Inf),
            (b"NaN", ArgClass::NaN),
            (b"1e308", ArgClass::FloatHuge),
            (b"1e400", ArgClass::FloatHuge),
            (b"1e-400", ArgClass::FloatTiny),
            (b"-0.0", ArgClass::FloatNegZero),
            (b"1.5", ArgClass::Float),
            (b"a*a*a*a*b", ArgClass::GlobManyStars),
            (b"k[abc", ArgClass::GlobUnterminated),
            (b"k\\", ArgClass::GlobTrailingBackslash),
            (b"k\\\\", ArgClass::Plain),
            (b"k[a-z]", ArgClass::GlobClass),
            (b"k:*", ArgClass::Glob),
            (b"hello", ArgClass::Plain),
            (b"  ", ArgClass::Plain),
            (b"LIMIT", ArgClass::Plain),
        ];
        for &(arg, class) in cases {
            assert_eq!(classify(arg), class, "{:?}", String::from_utf8_lossy(arg));
        }
        assert_eq!(classify(&[b'x'; ARG_LONG_BYTES_MIN]), ArgClass::Long);
        assert_eq!(classify(&vec![b'x'; ARG_HUGE_BYTES_MIN]), ArgClass::Huge);
    }

    #[test]
    fn a_history_counts_what_its_requests_count_one_by_one() {
        let requests: &[&[&[u8]]] = &[
            &[b"SET", b"k", b"12"],
            &[b"set", b"k:*", b"-0", b"EX", b"10"],
            &[b"GET", b"k"],
            &[b"PING"],
            &[
                b"MSET", b"a", b"1", b"b", b"2", b"c", b"3", b"d", b"inf", b"e", b"",
            ],
            &[b"\xff\xfe", b"x"],
            &[&[b'x'; COMMAND_NAME_MAX_BYTES + 1], b"y"],
        ];
        let mut history = History::default();
        let mut one_by_one = ArgClasses::default();
        for (i, parts) in requests.iter().enumerate() {
            let args: Vec<Vec<u8>> = parts.iter().map(|p| p.to_vec()).collect();
            one_by_one.add_request(&args);
            history.ops.push(crate::history::Op {
                client: 0,
                conn: 1,
                seq_in_conn: i as u64,
                args,
                workload: "test",
                invoke_ns: 0,
                complete: None,
            });
        }
        assert_eq!(ArgClasses::of_history(&history), one_by_one);
        assert!(one_by_one.triples_count() > 10);
    }

    #[test]
    fn all_lists_every_class_at_its_index() {
        for (i, class) in ArgClass::ALL.iter().enumerate() {
            assert_eq!(*class as usize, i);
        }
        assert!(ArgClass::ALL.len() <= u32::BITS as usize);
    }

    #[test]
    fn the_memo_answers_what_classify_answers() {
        let long = vec![b'7'; MEMO_ARG_BYTES_MAX + 1];
        let args: Vec<&[u8]> = vec![b"", b"12", b"k:*", b"k:*", b"-0", b"12", &long, &long];
        let mut memo = ClassMemo::default();
        for arg in &args {
            assert_eq!(memo.classify(arg), classify(arg));
        }
        // Short arguments are remembered once each; the long one never.
        assert_eq!(memo.classes.len(), 4);
    }

    #[test]
    fn a_plain_word_is_what_classify_calls_plain() {
        for word in [&b"key:12"[..], b"field_3", b"ns|x", b"Infinityx", b"abc"] {
            assert!(is_plain_word(word), "{word:?}");
            assert_eq!(classify(word), ArgClass::Plain);
        }
        for other in [
            &b""[..],
            b"0x1f",
            b"e5",
            b"1E5",
            b"123",
            b"inf",
            b"NaN",
            b"INFINITY",
            b"k:*",
            b"k?",
            b"a[b]",
            b"-1",
            b" a",
        ] {
            assert!(!is_plain_word(other), "{other:?}");
        }
        // Every word of up to three bytes over an alphabet of each kind of
        // byte the test looks at: the fast answer is never a wrong one.
        let alphabet = b"0159eExXinfaINF:_|.-+* ?[]\\\0";
        let mut word = Vec::new();
        for len in 1..=3u32 {
            for mut code in 0..alphabet.len().pow(len) {
                word.clear();
                for _ in 0..len {
                    word.push(alphabet[code % alphabet.len()]);
                    code /= alphabet.len();
                }
                if is_plain_word(&word) {
                    assert_eq!(classify(&word), ArgClass::Plain, "{word:?}");
                }
            }
        }
    }

    #[test]
    fn counts_distinct_pairs_and_triples() {
        let mut classes = ArgClasses::default();
        let req = |parts: &[&[u8]]| parts.iter().map(|p| p.to_vec()).collect::<Vec<_>>();
        classes.add_request(&req(&[b"INCRBY", b"k", b"9223372036854775807"]));
        classes.add_request(&req(&[b"incrby", b"k", b"9223372036854775807"]));
        classes.add_request(&req(&[b"incrby", b"0", b"k"]));
        classes.add_request(&req(&[b"get"]));
        // incrby: (1, plain), (2, i64-max), (1, zero), (2, plain).
        assert_eq!(classes.triples_count(), 4);
        // incrby: plain, i64-max, zero.
        assert_eq!(classes.pairs_count(), 3);
        let mut other = ArgClasses::default();
        other.add_request(&req(&[b"GET", b""]));
        classes.merge(&other);
        assert_eq!(classes.pairs_count(), 4);
        assert!(classes
            .summary_line()
            .starts_with("argument classes: 4 distinct"));
    }
}
