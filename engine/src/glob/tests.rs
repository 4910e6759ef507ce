use proptest::prelude::*;

use super::*;

fn matches(pattern: &[u8], string: &[u8], nocase: bool) -> bool {
    let mut steps = 0;
    glob_match(pattern, string, nocase, &mut steps)
}

/// The plain backtracking matcher, written from Redis's description and
/// without `skipLongerMatches`: exponential, so only for short inputs. The
/// bounded matcher must agree with it everywhere below the nesting limit.
fn naive(p: &[u8], s: &[u8], nocase: bool) -> bool {
    let fold = |c: u8| if nocase { c.to_ascii_lowercase() } else { c };
    match p.first() {
        None => s.is_empty(),
        Some(b'*') => {
            let mut p = p;
            while p.len() >= 2 && p[1] == b'*' {
                p = &p[1..];
            }
            if p.len() == 1 {
                // Only reached with a non-empty string (see naive_step).
                return true;
            }
            (0..s.len()).any(|i| naive_step(&p[1..], &s[i..], nocase))
        }
        Some(_) if s.is_empty() => false,
        Some(b'?') => naive_step(&p[1..], &s[1..], nocase),
        Some(b'[') => {
            let mut q = &p[1..];
            let negate = q.first() == Some(&b'^');
            if negate {
                q = &q[1..];
            }
            let c = s[0];
            let mut hit = false;
            loop {
                if q.len() >= 2 && q[0] == b'\\' {
                    hit |= q[1] == c;
                    q = &q[2..];
                } else if q.first() == Some(&b']') {
                    q = &q[1..];
                    break;
                } else if q.is_empty() {
                    break;
                } else if q.len() >= 3 && q[1] == b'-' {
                    let (a, b) = (q[0] as i8 as i32, q[2] as i8 as i32);
                    let (lo, hi) = (a.min(b), a.max(b));
                    let low = |x: i32| {
                        if nocase && (65..=90).contains(&x) {
                            x + 32
                        } else {
                            x
                        }
                    };
                    let cc = low(c as i8 as i32);
                    hit |= low(lo) <= cc && cc <= low(hi);
                    q = &q[3..];
                } else {
                    hit |= fold(q[0]) == fold(c);
                    q = &q[1..];
                }
            }
            hit != negate && naive_step(q, &s[1..], nocase)
        }
        Some(b'\\') if p.len() >= 2 => {
            fold(p[1]) == fold(s[0]) && naive_step(&p[2..], &s[1..], nocase)
        }
        Some(&c) => fold(c) == fold(s[0]) && naive_step(&p[1..], &s[1..], nocase),
    }
}

/// After one element consumed a byte: Redis strips trailing `*`s once the
/// string is used up.
fn naive_step(mut p: &[u8], s: &[u8], nocase: bool) -> bool {
    if s.is_empty() {
        while p.first() == Some(&b'*') {
            p = &p[1..];
        }
        return p.is_empty();
    }
    naive(p, s, nocase)
}

#[test]
fn redis_cases() {
    let cases: &[(&[u8], &[u8], bool)] = &[
        (b"*", b"anything", true),
        (b"*", b"", false), // KEYS/SCAN special-case the lone `*`
        (b"", b"", true),
        (b"", b"a", false),
        (b"h?llo", b"hello", true),
        (b"h?llo", b"hllo", false),
        (b"h[ae]llo", b"hallo", true),
        (b"h[^e]llo", b"hello", false),
        (b"h[a-b]llo", b"hbllo", true),
        (b"h[b-a]llo", b"hbllo", true),
        (b"a\\*b", b"a*b", true),
        (b"a\\*b", b"axb", false),
        (b"a**", b"a", true),
        (b"a*", b"a", true),
        (b"[abc", b"a", true),
        (b"[abc", b"ab", false),
        (b"[\\]]", b"]", true),
        (b"[a-]", b"]", true), // a range from `a` to `]`, then unterminated
        (b"[", b"a", false),
        (b"[^", b"a", true),
        (b"a\\", b"a\\", true),
        (b"a[\\", b"a\\", true),
        (b"key:*:x", b"key:12:x", true),
        (b"key:*:x", b"key:12:y", false),
        (b"*a*b*c", b"xxaxxbxxc", true),
    ];
    for &(p, s, expected) in cases {
        assert_eq!(
            matches(p, s, false),
            expected,
            "{:?} vs {:?}",
            String::from_utf8_lossy(p),
            String::from_utf8_lossy(s)
        );
    }
}

#[test]
fn nocase_folds_ascii_and_orders_range_bounds_before_folding() {
    assert!(matches(b"HELLO", b"hello", true));
    assert!(matches(b"h[A-Z]llo", b"hello", true));
    // Redis swaps `Z`,`a` (90, 97: already in order), then folds to `z`,`a`:
    // an empty range.
    assert!(!matches(b"[Z-a]", b"b", true));
    assert!(matches(b"[Z-a]", b"_", false));
    // An escape inside a class compares exactly.
    assert!(!matches(b"[\\A]", b"a", true));
}

#[test]
fn ranges_compare_signed_bytes_like_c_char() {
    // 'a' = 97 and 0xff = -1 as a signed char: the range is -1..=97.
    assert!(matches(b"[a-\xff]", b"\xff", false));
    assert!(matches(b"[a-\xff]", b"\x00", false));
    assert!(matches(b"[a-\xff]", b"A", false));
    assert!(!matches(b"[a-\xff]", b"b", false));
    assert!(!matches(b"[a-\xff]", b"\x80", false));
}

#[test]
fn pathological_pattern_is_polynomial_and_charged() {
    // The KEYS pattern against a 40-byte key, then far worse.
    let mut steps = 0;
    let pattern = b"a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b";
    assert!(!glob_match(pattern, &[b'a'; 40], false, &mut steps));
    assert!(steps < 40 * pattern.len() as u64 * 4, "{steps} steps");

    let pattern: Vec<u8> = b"a*".repeat(500).into_iter().chain(*b"b").collect();
    let string = vec![b'a'; 5000];
    let mut steps = 0;
    assert!(!glob_match(&pattern, &string, false, &mut steps));
    let bound = 4 * (pattern.len() as u64 + 1) * (string.len() as u64 + 1);
    assert!(steps > 0 && steps <= bound, "{steps} steps > {bound}");
    assert!(work_units(steps) >= steps / GLOB_STEPS_PER_WORK_UNIT);
}

#[test]
fn nesting_past_a_thousand_stars_fails_like_redis() {
    let string = vec![b'x'; 1200];
    let under: Vec<u8> = b"x*".repeat(999).into_iter().chain(*b"x").collect();
    assert!(matches(&under, &string, false));
    let over: Vec<u8> = b"x*".repeat(1100).into_iter().chain(*b"x").collect();
    assert!(!matches(&over, &string, false));
}

#[test]
fn work_units_round_up() {
    assert_eq!(work_units(0), 0);
    assert_eq!(work_units(1), 1);
    assert_eq!(work_units(GLOB_STEPS_PER_WORK_UNIT), 1);
    assert_eq!(work_units(GLOB_STEPS_PER_WORK_UNIT + 1), 2);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4096, rng_seed: proptest::test_runner::RngSeed::Fixed(14), ..ProptestConfig::default() })]

    #[test]
    fn agrees_with_plain_backtracking(
        pattern in proptest::collection::vec(prop::sample::select(b"ab*?[]^-\\\xffA".to_vec()), 0..9),
        string in proptest::collection::vec(prop::sample::select(b"abA]-\xff".to_vec()), 0..9),
        nocase in any::<bool>(),
    ) {
        let expected = naive_step_entry(&pattern, &string, nocase);
        prop_assert_eq!(matches(&pattern, &string, nocase), expected);
    }
}

/// Redis's entry: the loop runs only while both are non-empty.
fn naive_step_entry(p: &[u8], s: &[u8], nocase: bool) -> bool {
    if s.is_empty() || p.is_empty() {
        return p.is_empty() && s.is_empty();
    }
    naive(p, s, nocase)
}

/// Every pattern of the literal-prefix-and-star shape, over a small
/// alphabet with both cases, answers and counts steps exactly as the
/// general matcher does, with and without NOCASE.
#[test]
fn prefix_star_fast_path_equals_the_general_matcher() {
    let alphabet: &[u8] = b"aAb";
    let words = |max: usize| {
        let mut all = vec![Vec::new()];
        let mut frontier = vec![Vec::new()];
        for _ in 0..max {
            let mut next = Vec::new();
            for w in &frontier {
                for &c in alphabet {
                    let mut w2: Vec<u8> = w.clone();
                    w2.push(c);
                    next.push(w2);
                }
            }
            all.extend(next.iter().cloned());
            frontier = next;
        }
        all
    };
    let mut checked = 0;
    for prefix in words(3) {
        let mut pattern = prefix.clone();
        pattern.push(b'*');
        assert_eq!(literal_prefix_star(&pattern), Some(&prefix[..]));
        for string in words(4) {
            for nocase in [false, true] {
                let (mut fast, mut general) = (0, 0);
                let a = prefix_star(&prefix, &string, nocase, &mut fast);
                let b = general_match(&pattern, &string, nocase, &mut general);
                assert_eq!((a, fast), (b, general), "{pattern:?} {string:?} {nocase}");
                checked += 1;
            }
        }
    }
    assert!(checked > 4000);
    for other in [&b"a*b"[..], b"a?*", b"[a]*", b"\\a*", b"a", b"", b"**"] {
        assert_eq!(literal_prefix_star(other), None, "{other:?}");
    }
}

/// The matcher without [`Matcher::star`]'s scan over first-byte misses:
/// the position-by-position loop it must equal.
fn stepwise_match(pattern: &[u8], string: &[u8], nocase: bool, steps: &mut u64) -> bool {
    let mut m = Matcher {
        nocase,
        skip_longer_matches: false,
        skip_first_byte_misses: false,
        steps: 0,
    };
    let matched = m.matches(pattern, string, 0);
    *steps += m.steps;
    matched
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8192, rng_seed: proptest::test_runner::RngSeed::Fixed(22), ..ProptestConfig::default() })]

    /// Skipping first-byte misses after a `*` changes neither the answer
    /// nor the steps charged, for any pattern, case and nesting.
    #[test]
    fn star_scan_counts_the_steps_of_the_stepwise_loop(
        pattern in proptest::collection::vec(prop::sample::select(b"ab:*?[]^-\\A".to_vec()), 0..12),
        string in proptest::collection::vec(prop::sample::select(b"abA:]-\\".to_vec()), 0..24),
        nocase in any::<bool>(),
    ) {
        let (mut fast, mut stepwise) = (0, 0);
        let a = general_match(&pattern, &string, nocase, &mut fast);
        let b = stepwise_match(&pattern, &string, nocase, &mut stepwise);
        prop_assert_eq!((a, fast), (b, stepwise));
    }
}

/// The shapes the simulator's subscribers hold, against keyspace channel
/// names, and the nesting cut (where the nested match answers with no
/// step), charge the same steps either way.
#[test]
fn star_scan_equals_stepwise_on_channels_and_at_the_nesting_cut() {
    let channels: [&[u8]; 4] = [
        b"__keyspace@0__:key:1",
        b"__keyevent@7__:expired",
        b"chan:1",
        b"",
    ];
    for pattern in [&b"*:1"[..], b"*:*:1", b"chan:[02]", b"*e*d", b"*E", b"a*"] {
        for channel in channels {
            for nocase in [false, true] {
                let (mut fast, mut stepwise) = (0, 0);
                let a = general_match(pattern, channel, nocase, &mut fast);
                let b = stepwise_match(pattern, channel, nocase, &mut stepwise);
                assert_eq!((a, fast), (b, stepwise), "{pattern:?} {channel:?}");
            }
        }
    }
    let string = vec![b'x'; 1200];
    for stars in [998, 999, 1000, 1001, 1100] {
        let pattern: Vec<u8> = b"x*".repeat(stars).into_iter().chain(*b"x").collect();
        let (mut fast, mut stepwise) = (0, 0);
        let a = general_match(&pattern, &string, false, &mut fast);
        let b = stepwise_match(&pattern, &string, false, &mut stepwise);
        assert_eq!((a, fast), (b, stepwise), "{stars} stars");
    }
}
