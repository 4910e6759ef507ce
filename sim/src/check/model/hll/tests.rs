//! The HLL model against fixtures taken from redis-server 7.0.15: the bytes
//! of HLLs grown by PFADD (sparse, and dense after promotion) with their
//! estimates, and a transcript of PF commands with every reply, corrupt
//! values included.

use seedkv_engine::resp::Frame;

use super::encoding::{self, Encoding};
use crate::check::model::testkit::Builder;
use crate::check::model::ReferenceModel;
use crate::check::{Checker, RunFacts};

/// Elements per PFADD when growing the fixtures (as the script did).
const FIXTURE_BATCH: usize = 37;

fn unhex(text: &str) -> Vec<u8> {
    let text = text.trim();
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

fn check(b: &Builder) -> Result<(), String> {
    ReferenceModel
        .check(&b.history, &RunFacts::default())
        .map_err(|v| v.message)
}

/// Runs `text` with its reply unrecorded (it still takes effect).
fn run_unanswered(b: &mut Builder, text: &str) {
    let index = b.op(1, text, b.now_ns, None);
    b.execute(index, 10);
}

/// PFADD of `e0 .. e<n>` in batches, then GET, PFCOUNT, GET: the bytes and
/// the estimate are redis-server's.
fn grown_matches_redis(n: usize, fixture: &str, count: i64, dense: bool) {
    let bytes = unhex(fixture);
    assert_eq!(encoding::validate(&bytes).is_some(), true);
    assert_eq!(
        encoding::validate(&bytes) == Some(Encoding::Dense),
        dense,
        "fixture encoding"
    );
    let mut b = Builder::new();
    for start in (0..n).step_by(FIXTURE_BATCH) {
        let elements: Vec<String> = (start..n.min(start + FIXTURE_BATCH))
            .map(|i| format!("e{i}"))
            .collect();
        run_unanswered(&mut b, &format!("PFADD f {}", elements.join(" ")));
    }
    b.run(1, "GET f", Frame::Bulk(bytes.clone()));
    b.run(1, "PFCOUNT f", Frame::Integer(count));
    let mut cached = bytes.clone();
    encoding::store_cardinality(&mut cached, count as u64);
    b.run(1, "GET f", Frame::Bulk(cached));
    check(&b).unwrap_or_else(|why| panic!("{n} elements: {why}"));
    // The estimate is compared, not declined.
    let last = b.history.ops.len() - 2;
    b.history.ops[last].complete.as_mut().expect("completed").1 = Frame::Integer(count + 1);
    assert!(check(&b).is_err(), "a wrong estimate is caught");
}

#[test]
fn one_element_is_sparse_like_redis() {
    grown_matches_redis(1, include_str!("fixtures/pfadd_1.hex"), 1, false);
}

#[test]
fn hundred_elements_are_sparse_like_redis() {
    grown_matches_redis(100, include_str!("fixtures/pfadd_100.hex"), 100, false);
}

#[test]
fn three_thousand_elements_promote_to_dense_like_redis() {
    grown_matches_redis(3_000, include_str!("fixtures/pfadd_3000.hex"), 2_979, true);
}

#[test]
fn twenty_thousand_elements_like_redis() {
    grown_matches_redis(
        20_000,
        include_str!("fixtures/pfadd_20000.hex"),
        19_901,
        true,
    );
}

#[test]
fn murmur_and_patterns_are_stable() {
    // The register and run of "a" as redis-server's PFDEBUG GETREG shows
    // them: one register set after PFADD h a.
    let (index, count) = encoding::pattern(b"a");
    assert!(index < encoding::REGISTERS_COUNT);
    assert!((1..=51).contains(&count));
    assert_eq!(encoding::new_sparse().len(), encoding::HEADER_BYTES + 2);
}

/// A recorded reply: `:n`, `+simple`, `-error`, `$hex`, `_` (null), or
/// `*hex` (an array of small integers, one per byte).
fn reply(text: &str) -> Frame {
    let (kind, rest) = text.split_at(1);
    match kind {
        ":" => Frame::Integer(rest.parse().expect("integer")),
        "+" => Frame::Simple(rest.as_bytes().to_vec()),
        "-" => Frame::Error(rest.as_bytes().to_vec()),
        "$" => Frame::Bulk(unhex(rest)),
        "_" => Frame::Null,
        "*" => Frame::Array(
            unhex(rest)
                .into_iter()
                .map(|v| Frame::Integer(i64::from(v)))
                .collect(),
        ),
        _ => panic!("unknown reply {text}"),
    }
}

/// The transcript, as a history the model must pass.
fn transcript() -> Builder {
    let mut b = Builder::new();
    for line in include_str!("fixtures/transcript.txt").lines() {
        let (command, recorded) = line.split_once('\t').expect("command<TAB>reply");
        b.run(1, command, reply(recorded));
    }
    b
}

#[test]
fn transcript_of_redis_replies_passes() {
    check(&transcript()).expect("the model predicts redis-server's replies");
}

#[test]
fn every_reply_of_the_transcript_is_compared() {
    let b = transcript();
    for index in 0..b.history.ops.len() {
        let mut planted = transcript();
        let slot = &mut planted.history.ops[index]
            .complete
            .as_mut()
            .expect("done")
            .1;
        *slot = match slot {
            Frame::Integer(n) => Frame::Integer(*n + 1),
            _ => Frame::Integer(-7),
        };
        assert!(
            check(&planted).is_err(),
            "a wrong reply to `{}` is caught",
            String::from_utf8_lossy(&b.history.ops[index].args.join(&b' '))
        );
    }
}
