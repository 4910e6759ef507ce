//! The one glob matcher: Redis 7.0.15's `stringmatchlen` (util.c), used by
//! KEYS, SCAN/HSCAN/SSCAN/ZSCAN MATCH, PUBLISH against PSUBSCRIBE patterns,
//! PUBSUB CHANNELS/SHARDCHANNELS, CONFIG GET and COMMAND LIST FILTERBY
//! PATTERN.
//!
//! Syntax: `*`, `?`, `[...]` classes (`^` negation, `a-z` ranges in either
//! order, `\` escapes) and `\` escapes, byte by byte, optionally
//! case-insensitive (ASCII, as `tolower` in the C locale).
//!
//! # Bounded
//!
//! A naive backtracking matcher is exponential in the number of `*`s
//! (`a*a*a*...*b` against a long run of `a`s). Redis 7.0.9+ stops that with
//! `skipLongerMatches`: once the rest of the pattern after a `*` matched
//! nowhere in the rest of the string, no earlier `*` can do better by
//! consuming more, so every level gives up. With it, each `*` level is
//! entered at most once per outcome and the whole match takes
//! O(pattern length × string length) steps. Recursion is cut at a nesting
//! of 1000 `*`s, where Redis answers "no match" (a quirk kept for equal
//! results).
//!
//! # Charged
//!
//! Every step (one iteration of any loop below) is counted into the
//! caller's `steps`; callers charge [`work_units`] of the total as work, so
//! a pathological pattern costs what it really costs in the simulator's
//! virtual time and in the cost audit.
//!
//! # Signed bytes
//!
//! Redis compares range bounds as C `char`s, which are signed on x86-64:
//! `[a-\xff]` is the range from -1 to 97, i.e. `\x00`..`a` and `\xff`, not
//! `a`..`\xff`. Ranges here compare bytes as `i8` to give the same answers.

/// Redis's protection against abusive patterns: deeper `*` nesting fails.
const NESTING_MAX: u32 = 1000;

/// Matcher steps per engine work unit. A step is one byte comparison or
/// one loop turn (a few ns); a work unit stands for ~300 ns of CPU in the
/// simulator's cost model (`sim/src/cost.rs`), the cost of testing one key
/// against a short pattern in KEYS. The cost audit measures this ratio.
pub const GLOB_STEPS_PER_WORK_UNIT: u64 = 64;

/// The work units to charge for `steps` matcher steps (rounded up).
pub fn work_units(steps: u64) -> u64 {
    steps.div_ceil(GLOB_STEPS_PER_WORK_UNIT)
}

/// Whether `string` matches `pattern`, adding the steps taken to `steps`.
///
/// Like Redis's matcher, a lone `*` does not match the empty string: KEYS
/// and SCAN test for the pattern `*` before calling it.
pub fn glob_match(pattern: &[u8], string: &[u8], nocase: bool, steps: &mut u64) -> bool {
    if let Some(prefix) = literal_prefix_star(pattern) {
        return prefix_star(prefix, string, nocase, steps);
    }
    general_match(pattern, string, nocase, steps)
}

/// The [`Matcher`] for any pattern.
fn general_match(pattern: &[u8], string: &[u8], nocase: bool, steps: &mut u64) -> bool {
    let mut m = Matcher {
        nocase,
        skip_longer_matches: false,
        skip_first_byte_misses: true,
        steps: 0,
    };
    let matched = m.matches(pattern, string, 0);
    *steps += m.steps;
    matched
}

/// The literal part of a pattern that is literal bytes and one final `*`
/// (`__keyspace@0__:*`, `user:*`): the shape of nearly every PSUBSCRIBE,
/// KEYS and SCAN MATCH pattern, tested against every published channel.
fn literal_prefix_star(pattern: &[u8]) -> Option<&[u8]> {
    let (&last, prefix) = pattern.split_last()?;
    let literal = !prefix
        .iter()
        .any(|c| matches!(c, b'*' | b'?' | b'[' | b'\\'));
    (last == b'*' && literal).then_some(prefix)
}

/// [`general_match`] of `prefix*`, with the same answer and the same steps
/// (the matcher counts one step per prefix byte compared, including a
/// mismatching one, and one for the `*`, which the empty string and a
/// string shorter than the prefix never reach), by comparing slices.
fn prefix_star(prefix: &[u8], string: &[u8], nocase: bool, steps: &mut u64) -> bool {
    let compared = prefix.len().min(string.len());
    let (p, s) = (&prefix[..compared], &string[..compared]);
    let equal = match nocase {
        true => p.eq_ignore_ascii_case(s),
        false => p == s,
    };
    if !equal {
        let fold = |c: u8| if nocase { c.to_ascii_lowercase() } else { c };
        let at = p.iter().zip(s).position(|(&a, &b)| fold(a) != fold(b));
        *steps += at.map_or(compared, |i| i + 1) as u64;
        return false;
    }
    if string.len() < prefix.len() || string.is_empty() {
        *steps += string.len() as u64;
        return false;
    }
    *steps += prefix.len() as u64 + 1;
    true
}

struct Matcher {
    nocase: bool,
    skip_longer_matches: bool,
    /// [`Matcher::star`] passes over the positions whose byte cannot start
    /// a match of a literal byte after the `*` in one scan, adding the
    /// steps the position-by-position loop would have counted. Off only
    /// in tests, which compare both ways.
    skip_first_byte_misses: bool,
    steps: u64,
}

impl Matcher {
    fn fold(&self, c: u8) -> u8 {
        if self.nocase {
            c.to_ascii_lowercase()
        } else {
            c
        }
    }

    fn matches(&mut self, mut p: &[u8], mut s: &[u8], nesting: u32) -> bool {
        if nesting > NESTING_MAX {
            return false;
        }
        while !p.is_empty() && !s.is_empty() {
            self.steps += 1;
            p = match p[0] {
                b'*' => return self.star(p, s, nesting),
                b'?' => &p[1..],
                b'[' => {
                    let (matched, rest) = self.class(&p[1..], s[0]);
                    if !matched {
                        return false;
                    }
                    rest
                }
                b'\\' if p.len() >= 2 => {
                    if self.fold(p[1]) != self.fold(s[0]) {
                        return false;
                    }
                    &p[2..]
                }
                c => {
                    if self.fold(c) != self.fold(s[0]) {
                        return false;
                    }
                    &p[1..]
                }
            };
            s = &s[1..];
            if s.is_empty() {
                while p.first() == Some(&b'*') {
                    self.steps += 1;
                    p = &p[1..];
                }
                break;
            }
        }
        p.is_empty() && s.is_empty()
    }

    /// A `*` at the head of `p`: tries the rest of the pattern at every
    /// position of `s`, giving up everywhere once one level found no match.
    fn star(&mut self, mut p: &[u8], mut s: &[u8], nesting: u32) -> bool {
        while p.len() >= 2 && p[1] == b'*' {
            self.steps += 1;
            p = &p[1..];
        }
        if p.len() == 1 {
            return true;
        }
        // `*:1`-like patterns (against every channel a notification
        // publishes): the rest starts with a literal byte, so where the
        // string's byte differs the nested match fails at its first
        // comparison, leaving `skip_longer_matches` as it was. Each such
        // position costs two steps (this loop's and the comparison's),
        // unless the nesting cut would answer first with none.
        let first = p[1];
        let literal_first = self.skip_first_byte_misses
            && !matches!(first, b'*' | b'?' | b'[' | b'\\')
            && nesting < NESTING_MAX;
        let first = self.fold(first);
        while !s.is_empty() {
            if literal_first {
                let misses = match self.nocase {
                    true => s.iter().position(|&c| c.to_ascii_lowercase() == first),
                    false => s.iter().position(|&c| c == first),
                };
                let misses = misses.unwrap_or(s.len());
                self.steps += 2 * misses as u64;
                s = &s[misses..];
                if s.is_empty() {
                    break;
                }
            }
            self.steps += 1;
            if self.matches(&p[1..], s, nesting + 1) {
                return true;
            }
            if self.skip_longer_matches {
                return false;
            }
            s = &s[1..];
        }
        self.skip_longer_matches = true;
        false
    }

    /// A `[...]` class after its `[`, against byte `c`: whether it matched,
    /// and the pattern after the closing `]` (empty when unterminated: the
    /// class then takes the rest of the pattern, as in Redis).
    fn class<'p>(&mut self, mut p: &'p [u8], c: u8) -> (bool, &'p [u8]) {
        let negate = p.first() == Some(&b'^');
        if negate {
            p = &p[1..];
        }
        let mut matched = false;
        loop {
            self.steps += 1;
            if p.len() >= 2 && p[0] == b'\\' {
                // An escape compares exactly, even without case.
                p = &p[1..];
                matched |= p[0] == c;
            } else if p.is_empty() || p[0] == b']' {
                break;
            } else if p.len() >= 3 && p[1] == b'-' {
                matched |= self.in_range(p[0], p[2], c);
                p = &p[2..];
            } else {
                matched |= self.fold(p[0]) == self.fold(c);
            }
            p = &p[1..];
        }
        // Past the `]`; an unterminated class ends the pattern.
        let rest = if p.is_empty() { p } else { &p[1..] };
        (matched != negate, rest)
    }

    /// `c` within the range `a-b`, as Redis decides it on x86-64: the
    /// bounds are C's signed `char`s, put in order, and only then folded to
    /// lower case (so under NOCASE `[Z-a]` is the empty range `z`..`a`).
    fn in_range(&self, a: u8, b: u8, c: u8) -> bool {
        let signed = |x: u8| i32::from(x as i8);
        let (mut low, mut high) = (signed(a), signed(b));
        if low > high {
            std::mem::swap(&mut low, &mut high);
        }
        let fold = |x: i32| {
            if self.nocase && (i32::from(b'A')..=i32::from(b'Z')).contains(&x) {
                x + 32
            } else {
                x
            }
        };
        let c = fold(signed(c));
        fold(low) <= c && c <= fold(high)
    }
}

#[cfg(test)]
mod tests;
