//! Algebraic laws of seedkv's building blocks, checked with quickcheck:
//!
//! - RESP: encoding a request and parsing it gives it back; writing a reply
//!   frame with the engine's `ReplyWriter` and decoding it gives it back;
//! - SCAN: a full scan over a `Dict` resized (grown, shrunk, rehashed)
//!   between calls visits every key present throughout;
//! - INCRBY: `INCRBY a` then `INCRBY b` ends where `INCRBY a+b` does, and
//!   overflows with the same error.
//!
//! - sets, through the engine: SUNION and SINTER commute; `A∖B ∪ (A∩B) =
//!   A`; `|A∪B| = |A| + |B| − |A∩B|`; SINTERCARD is the SCARD of SINTER
//!   (and LIMIT caps it); each *STORE stores exactly what its read form
//!   replies and returns its size; all of it equals a `BTreeSet` model,
//!   across intset and hashtable encodings (small `set-max-intset-entries`
//!   thresholds, integer-only and mixed members).

use std::collections::BTreeSet;

use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};
use seedkv_engine::dict::Dict;
use seedkv_engine::resp::encode::encode_request;
use seedkv_engine::resp::{
    Frame, FrameDecoder, ParserLimits, Protocol, ReplyWriter, RequestParser,
};
use seedkv_engine::testing::{int, TestEngine};

/// Cases per law: enough to matter, few enough that `cargo test` stays fast.
const CASES: u64 = 300;

/// quickcheck seeds its generator from the OS; the laws are cheap enough
/// that a fixed case count keeps the run time bounded either way.
fn quickcheck<A: quickcheck::Testable>(law: A) {
    QuickCheck::new()
        .tests(CASES)
        .max_tests(CASES * 10)
        .quickcheck(law);
}

// ---- RESP requests ----

fn parse_one(bytes: &[u8]) -> Result<Vec<Vec<Vec<u8>>>, String> {
    let mut parser = RequestParser::new();
    parser.feed(bytes);
    let mut out = Vec::new();
    while let Some(request) = parser
        .next_request(&ParserLimits::default(), true)
        .map_err(|e| e.message())?
    {
        out.push(request);
    }
    Ok(out)
}

#[test]
fn request_encode_then_parse_is_identity() {
    fn law(args: Vec<Vec<u8>>) -> TestResult {
        if args.is_empty() {
            // `*0` is an empty request, which the parser skips.
            return TestResult::discard();
        }
        let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        TestResult::from_bool(parse_one(&encode_request(&refs)) == Ok(vec![args]))
    }
    quickcheck(law as fn(Vec<Vec<u8>>) -> TestResult);
}

#[test]
fn pipeline_encode_then_parse_is_identity() {
    fn law(requests: Vec<(Vec<u8>, Vec<Vec<u8>>)>) -> bool {
        // The first argument is never missing: (name, rest).
        let requests: Vec<Vec<Vec<u8>>> = requests
            .into_iter()
            .map(|(name, rest)| std::iter::once(name).chain(rest).collect())
            .collect();
        let mut bytes = Vec::new();
        for request in &requests {
            let refs: Vec<&[u8]> = request.iter().map(Vec::as_slice).collect();
            bytes.extend(encode_request(&refs));
        }
        parse_one(&bytes) == Ok(requests)
    }
    quickcheck(law as fn(Vec<(Vec<u8>, Vec<Vec<u8>>)>) -> bool);
}

// ---- RESP reply frames ----

/// A reply frame the engine's `ReplyWriter` can write, with the protocol
/// it is written in.
#[derive(Clone, Debug)]
struct WritableFrame {
    protocol: Protocol,
    frame: Frame,
}

/// Text without CR or LF (simple strings and errors cannot hold them).
fn line_text(g: &mut Gen) -> Vec<u8> {
    let text: String = Arbitrary::arbitrary(g);
    text.replace(['\r', '\n'], " ").into_bytes()
}

fn arbitrary_frame(g: &mut Gen, protocol: Protocol, depth: usize) -> Frame {
    let resp3 = protocol == Protocol::Resp3;
    let kinds: &[u8] = match (resp3, depth) {
        (false, 0) => &[0, 1, 2, 3, 4],
        (false, _) => &[0, 1, 2, 3, 4, 5],
        (true, 0) => &[0, 1, 2, 3, 4, 6, 7, 8],
        (true, _) => &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
    };
    let children = |g: &mut Gen| {
        let n = usize::arbitrary(g) % 4;
        (0..n)
            .map(|_| arbitrary_frame(g, protocol, depth - 1))
            .collect::<Vec<_>>()
    };
    match *g.choose(kinds).unwrap() {
        0 => Frame::Simple(line_text(g)),
        1 => {
            // Errors carry a code; an empty error is not a frame Redis sends.
            let mut text = b"ERR ".to_vec();
            text.extend(line_text(g));
            Frame::Error(text)
        }
        2 => Frame::Integer(i64::arbitrary(g)),
        3 => Frame::Bulk(Vec::<u8>::arbitrary(g)),
        4 => Frame::Null,
        5 => Frame::Array(children(g)),
        6 => Frame::Boolean(bool::arbitrary(g)),
        7 => {
            let d = f64::arbitrary(g);
            Frame::Double(if d.is_nan() { 0.5 } else { d })
        }
        8 => Frame::Verbatim {
            format: *g.choose(&[*b"txt", *b"mkd"]).unwrap(),
            data: Vec::<u8>::arbitrary(g),
        },
        9 => {
            let items = children(g);
            let pairs = items.chunks_exact(2).map(|p| (p[0].clone(), p[1].clone()));
            Frame::Map(pairs.collect())
        }
        10 => Frame::Set(children(g)),
        _ => Frame::Push(children(g)),
    }
}

impl Arbitrary for WritableFrame {
    fn arbitrary(g: &mut Gen) -> Self {
        let protocol = *g.choose(&[Protocol::Resp2, Protocol::Resp3]).unwrap();
        WritableFrame {
            protocol,
            frame: arbitrary_frame(g, protocol, 3),
        }
    }
}

fn write_frame(w: &mut ReplyWriter, frame: &Frame) {
    match frame {
        Frame::Simple(s) => w.simple(std::str::from_utf8(s).unwrap()),
        Frame::Error(s) => w.error(std::str::from_utf8(s).unwrap()),
        Frame::Integer(n) => w.int(*n),
        Frame::Bulk(b) => w.bulk(b),
        Frame::Null => w.null(),
        Frame::Array(items) => {
            w.array_len(items.len());
            items.iter().for_each(|f| write_frame(w, f));
        }
        Frame::Map(pairs) => {
            w.map_len(pairs.len());
            for (k, v) in pairs {
                write_frame(w, k);
                write_frame(w, v);
            }
        }
        Frame::Set(items) => {
            w.set_len(items.len());
            items.iter().for_each(|f| write_frame(w, f));
        }
        Frame::Push(items) => {
            w.push_len(items.len());
            items.iter().for_each(|f| write_frame(w, f));
        }
        Frame::Double(d) => w.double(*d),
        Frame::Boolean(b) => w.bool(*b),
        Frame::Verbatim { format, data } => w.verbatim(std::str::from_utf8(format).unwrap(), data),
        Frame::BigNumber(_) => unreachable!("the engine never writes big numbers"),
    }
}

#[test]
fn reply_write_then_decode_is_identity() {
    fn law(case: WritableFrame) -> bool {
        let mut out = Vec::new();
        write_frame(&mut ReplyWriter::new(&mut out, case.protocol), &case.frame);
        let mut decoder = FrameDecoder::new();
        decoder.feed(&out);
        let decoded = decoder.next_frame();
        decoded == Ok(Some(case.frame)) && decoder.buffered_bytes() == 0
    }
    quickcheck(law as fn(WritableFrame) -> bool);
}

// ---- SCAN over a resized dict ----

/// What happens to the dict between two SCAN calls.
#[derive(Clone, Debug)]
enum Between {
    /// Insert this many new keys (grows the table).
    Insert(u8),
    /// Remove this many of the keys that come and go (may shrink it).
    Remove(u8),
    Shrink,
    Rehash(u8),
}

impl Arbitrary for Between {
    fn arbitrary(g: &mut Gen) -> Self {
        match u8::arbitrary(g) % 4 {
            0 => Between::Insert(u8::arbitrary(g)),
            1 => Between::Remove(u8::arbitrary(g)),
            2 => Between::Shrink,
            _ => Between::Rehash(u8::arbitrary(g) % 8),
        }
    }
}

#[test]
fn scan_over_resized_dict_covers_keys_present_throughout() {
    fn law(seed: u64, stable_count: u8, churn_count: u8, between: Vec<Between>) -> bool {
        let mut dict: Dict<()> = Dict::new(seed);
        let key = |prefix: &str, i: usize| format!("{prefix}:{i}").into_bytes().into_boxed_slice();
        for i in 0..stable_count as usize {
            dict.insert(key("stable", i), ());
        }
        let mut churn: Vec<Box<[u8]>> = Vec::new();
        let mut next_churn = 0;
        for _ in 0..churn_count {
            churn.push(key("churn", next_churn));
            dict.insert(key("churn", next_churn), ());
            next_churn += 1;
        }
        let mut seen = BTreeSet::new();
        let mut cursor = 0;
        // Each step runs once, between two calls; later calls see no change,
        // so the dict's size (and the scan's length) stays bounded.
        let mut steps = between.iter();
        // The cursor's reversed value strictly increases, so a scan ends
        // within (largest table size) calls once the steps run out.
        for _ in 0..100_000 {
            cursor = dict.scan(cursor, |k, _| {
                seen.insert(k.to_vec());
            });
            if cursor == 0 {
                break;
            }
            match steps.next() {
                Some(Between::Insert(n)) => {
                    for _ in 0..*n {
                        churn.push(key("churn", next_churn));
                        dict.insert(key("churn", next_churn), ());
                        next_churn += 1;
                    }
                }
                Some(Between::Remove(n)) => {
                    for _ in 0..(*n as usize).min(churn.len()) {
                        let k = churn.pop().unwrap();
                        dict.remove(&k);
                    }
                    dict.shrink_if_needed();
                }
                Some(Between::Shrink) => {
                    dict.shrink_if_needed();
                }
                Some(Between::Rehash(n)) => {
                    dict.rehash_steps(*n as usize);
                }
                None => {}
            }
        }
        cursor == 0 && (0..stable_count as usize).all(|i| seen.contains(&*key("stable", i)))
    }
    quickcheck(law as fn(u64, u8, u8, Vec<Between>) -> bool);
}

// ---- INCRBY ----

/// An integer biased towards the edges of `i64`, where overflow lives.
#[derive(Clone, Copy, Debug)]
struct Edgy(i64);

impl Arbitrary for Edgy {
    fn arbitrary(g: &mut Gen) -> Self {
        let small = i64::from(i16::arbitrary(g));
        Edgy(match u8::arbitrary(g) % 4 {
            0 => small,
            1 => i64::MAX - small.abs(),
            2 => i64::MIN + small.abs(),
            _ => i64::arbitrary(g),
        })
    }
}

#[test]
fn incrby_a_then_b_is_incrby_a_plus_b() {
    fn law(start: Edgy, a: Edgy, b: Edgy) -> TestResult {
        let (start, a, b) = (start.0, a.0, b.0);
        let Some(sum) = a.checked_add(b) else {
            // a+b cannot be sent as one INCRBY.
            return TestResult::discard();
        };
        let mut engine = TestEngine::new();
        let c = engine.connect();
        let start_text = start.to_string();
        let (a_text, b_text, sum_text) = (a.to_string(), b.to_string(), sum.to_string());

        engine.cmd(c, &["SET", "k", &start_text]);
        let reply_a = engine.cmd(c, &["INCRBY", "k", &a_text]);
        let reply_b = engine.cmd(c, &["INCRBY", "k", &b_text]);
        let two_steps = engine.cmd(c, &["GET", "k"]);

        engine.cmd(c, &["SET", "k", &start_text]);
        let reply_sum = engine.cmd(c, &["INCRBY", "k", &sum_text]);
        let one_step = engine.cmd(c, &["GET", "k"]);

        let after_a = start.checked_add(a);
        let total = i128::from(start) + i128::from(sum);
        let ok = match (after_a, i64::try_from(total)) {
            // No overflow: both end at the total.
            (Some(x), Ok(t)) => {
                reply_a == int(x)
                    && reply_b == int(t)
                    && reply_sum == int(t)
                    && two_steps == one_step
            }
            // The total overflows but `a` alone does not: `b` fails with
            // the very error the sum fails with, and neither writes.
            (Some(x), Err(_)) => {
                matches!(reply_sum, Frame::Error(_))
                    && reply_b == reply_sum
                    && reply_a == int(x)
                    && one_step == Frame::Bulk(start_text.into_bytes())
            }
            // `a` alone overflows (and so must the sum, or the law does
            // not compare): the same error, nothing written.
            (None, Err(_)) => reply_a == reply_sum && matches!(reply_sum, Frame::Error(_)),
            (None, Ok(_)) => return TestResult::discard(),
        };
        TestResult::from_bool(ok)
    }
    quickcheck(law as fn(Edgy, Edgy, Edgy) -> TestResult);
}

// ---- Set algebra ----

/// Two sets and an intset threshold. Members are integers (intset while
/// few enough) or, in a mixed set, also short strings (hashtable).
#[derive(Clone, Debug)]
struct TwoSets {
    a: BTreeSet<Vec<u8>>,
    b: BTreeSet<Vec<u8>>,
    intset_entries_max: u16,
}

fn arbitrary_members(g: &mut Gen, mixed: bool) -> BTreeSet<Vec<u8>> {
    let count = usize::arbitrary(g) % 24;
    (0..count)
        .map(|_| {
            // A narrow range, so that the two sets overlap.
            let n = i64::from(i8::arbitrary(g) % 16);
            match mixed && bool::arbitrary(g) {
                true => format!("m{n}").into_bytes(),
                false => n.to_string().into_bytes(),
            }
        })
        .collect()
}

impl Arbitrary for TwoSets {
    fn arbitrary(g: &mut Gen) -> Self {
        let (a_mixed, b_mixed) = (bool::arbitrary(g), bool::arbitrary(g));
        TwoSets {
            a: arbitrary_members(g, a_mixed),
            b: arbitrary_members(g, b_mixed),
            intset_entries_max: *g.choose(&[0, 1, 4, 16, 512]).expect("non-empty"),
        }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        let (b, max) = (self.b.clone(), self.intset_entries_max);
        let from_a = self.a.clone().shrink().map(move |a| TwoSets {
            a,
            b: b.clone(),
            intset_entries_max: max,
        });
        let a = self.a.clone();
        let from_b = self.b.clone().shrink().map(move |b| TwoSets {
            a: a.clone(),
            b,
            intset_entries_max: max,
        });
        Box::new(from_a.chain(from_b))
    }
}

/// An engine holding `sets.a` at `a` and `sets.b` at `b` (absent if empty).
fn engine_with(sets: &TwoSets) -> (TestEngine, seedkv_engine::ClientId) {
    let mut engine = TestEngine::new();
    let c = engine.connect();
    let max = sets.intset_entries_max.to_string();
    assert_eq!(
        engine.cmd(c, &["CONFIG", "SET", "set-max-intset-entries", &max]),
        Frame::Simple(b"OK".to_vec())
    );
    for (key, members) in [("a", &sets.a), ("b", &sets.b)] {
        if members.is_empty() {
            continue;
        }
        let mut args: Vec<&[u8]> = vec![b"SADD", key.as_bytes()];
        args.extend(members.iter().map(Vec::as_slice));
        assert_eq!(engine.cmd_bytes(c, &args), int(members.len() as i64));
    }
    (engine, c)
}

/// The members of a set reply (an array of bulk strings, any order).
fn members_of(reply: &Frame) -> BTreeSet<Vec<u8>> {
    let Frame::Array(items) = reply else {
        panic!("not an array: {reply:?}");
    };
    let members: BTreeSet<Vec<u8>> = items
        .iter()
        .map(|item| match item {
            Frame::Bulk(m) => m.clone(),
            other => panic!("not a bulk string: {other:?}"),
        })
        .collect();
    assert_eq!(members.len(), items.len(), "duplicates in {reply:?}");
    members
}

/// The encoding Redis 7.0 gives a set of these members.
fn expected_encoding(members: &BTreeSet<Vec<u8>>, intset_entries_max: u16) -> &'static str {
    let all_integers = members
        .iter()
        .all(|m| std::str::from_utf8(m).is_ok_and(|t| t.parse::<i64>().is_ok()));
    match all_integers && members.len() <= usize::from(intset_entries_max) {
        true => "intset",
        false => "hashtable",
    }
}

#[test]
fn set_algebra_identities_hold() {
    fn law(sets: TwoSets) -> bool {
        let (mut e, c) = engine_with(&sets);
        let (a, b) = (&sets.a, &sets.b);
        let union: BTreeSet<Vec<u8>> = a.union(b).cloned().collect();
        let inter: BTreeSet<Vec<u8>> = a.intersection(b).cloned().collect();
        let diff: BTreeSet<Vec<u8>> = a.difference(b).cloned().collect();

        let sunion_ab = members_of(&e.cmd(c, &["SUNION", "a", "b"]));
        let sunion_ba = members_of(&e.cmd(c, &["SUNION", "b", "a"]));
        let sinter_ab = members_of(&e.cmd(c, &["SINTER", "a", "b"]));
        let sinter_ba = members_of(&e.cmd(c, &["SINTER", "b", "a"]));
        let sdiff_ab = members_of(&e.cmd(c, &["SDIFF", "a", "b"]));
        let smembers_a = members_of(&e.cmd(c, &["SMEMBERS", "a"]));
        let scard = |e: &mut TestEngine, key: &str| match e.cmd(c, &["SCARD", key]) {
            Frame::Integer(n) => n,
            other => panic!("SCARD {key}: {other:?}"),
        };
        let (card_a, card_b) = (scard(&mut e, "a"), scard(&mut e, "b"));

        // Commutativity, and agreement with the model.
        assert_eq!(sunion_ab, sunion_ba);
        assert_eq!(sinter_ab, sinter_ba);
        assert_eq!(sunion_ab, union);
        assert_eq!(sinter_ab, inter);
        assert_eq!(sdiff_ab, diff);
        // A∖B ∪ (A∩B) = A, and the two parts are disjoint.
        let rebuilt: BTreeSet<Vec<u8>> = sdiff_ab.union(&sinter_ab).cloned().collect();
        assert_eq!(rebuilt, smembers_a);
        assert!(sdiff_ab.is_disjoint(&sinter_ab));
        // Inclusion–exclusion.
        assert_eq!(
            sunion_ab.len() as i64,
            card_a + card_b - sinter_ab.len() as i64
        );
        // SINTERCARD = SCARD of SINTER; LIMIT caps it (0: no limit).
        assert_eq!(
            e.cmd(c, &["SINTERCARD", "2", "a", "b"]),
            int(inter.len() as i64)
        );
        for limit in [0usize, 1, 2, 5] {
            let capped = match limit {
                0 => inter.len(),
                _ => inter.len().min(limit),
            };
            let reply = e.cmd(
                c,
                &["SINTERCARD", "2", "a", "b", "LIMIT", &limit.to_string()],
            );
            assert_eq!(reply, int(capped as i64), "LIMIT {limit}");
        }
        // Each *STORE stores what its read form replies, returns its size,
        // and gives the destination the encoding Redis would.
        for (store, read, expected) in [
            ("SUNIONSTORE", "SUNION", &union),
            ("SINTERSTORE", "SINTER", &inter),
            ("SDIFFSTORE", "SDIFF", &diff),
        ] {
            let read_reply = members_of(&e.cmd(c, &[read, "a", "b"]));
            assert_eq!(
                e.cmd(c, &[store, "d", "a", "b"]),
                int(expected.len() as i64)
            );
            assert_eq!(members_of(&e.cmd(c, &["SMEMBERS", "d"])), read_reply);
            let encoding = e.cmd(c, &["OBJECT", "ENCODING", "d"]);
            match expected.is_empty() {
                // An empty result deletes the destination.
                true => assert_eq!(encoding, Frame::Null, "{store}"),
                false => assert_eq!(
                    encoding,
                    Frame::Bulk(
                        expected_encoding(expected, sets.intset_entries_max)
                            .as_bytes()
                            .to_vec()
                    ),
                    "{store} of {expected:?}"
                ),
            }
        }
        // The sources kept their encodings.
        for (key, members) in [("a", a), ("b", b)] {
            if !members.is_empty() {
                let encoding = expected_encoding(members, sets.intset_entries_max);
                assert_eq!(
                    e.cmd(c, &["OBJECT", "ENCODING", key]),
                    Frame::Bulk(encoding.as_bytes().to_vec()),
                    "{key} = {members:?}"
                );
            }
        }
        true
    }
    quickcheck(law as fn(TwoSets) -> bool);
}
