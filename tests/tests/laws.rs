//! Algebraic laws of seedkv's building blocks, checked with quickcheck:
//!
//! - RESP: encoding a request and parsing it gives it back; writing a reply
//!   frame with the engine's `ReplyWriter` and decoding it gives it back;
//! - SCAN: a full scan over a `Dict` resized (grown, shrunk, rehashed)
//!   between calls visits every key present throughout;
//! - INCRBY: `INCRBY a` then `INCRBY b` ends where `INCRBY a+b` does, and
//!   overflows with the same error.
//!
//! Set algebra laws (SUNION/SINTER/SDIFF identities) come with the data
//! types issue, when the engine has sets.

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
