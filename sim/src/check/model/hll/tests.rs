//! The HLL model against fixtures taken from redis-server 7.0.15: the bytes
//! of HLLs grown by PFADD (sparse, and dense after promotion) with their
//! estimates, and a transcript of PF commands with every reply, corrupt
//! values included.

use seedkv_engine::resp::Frame;

use super::encoding::{self, Encoding};
use crate::check::model::testkit::{check, Builder};
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

/// Runs `text` with its reply unrecorded (it still takes effect).
fn run_unanswered(b: &mut Builder, text: &str) {
    let index = b.op(1, text, b.now_ns, None);
    b.execute(index, 10);
}

/// PFADD of `e0 .. e<n>` in batches, then GET, PFCOUNT, GET: the bytes and
/// the estimate are redis-server's.
fn grown_matches_redis(n: usize, fixture: &str, count: i64, dense: bool) {
    let bytes = unhex(fixture);
    assert!(encoding::validate(&bytes).is_some());
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

/// A real run of the hll workload: the model compares most replies (it
/// is not passing by declining).
#[test]
fn an_hll_run_is_mostly_compared() {
    use crate::knobs::{Knobs, Overrides};
    use crate::workload::WorkloadKind;
    let overrides = Overrides {
        workloads: Some(vec![WorkloadKind::Hll]),
        ops: Some(3_000),
        no_faults: true,
        ..Overrides::default()
    };
    let mut world = crate::world::World::new(1, Knobs::draw(1, &overrides), None, false, false);
    world.run();
    let mut counts = crate::check::CheckCounts::default();
    ReferenceModel
        .check_counted(&world.history, &RunFacts::default(), &mut counts)
        .expect("clean engine");
    assert!(counts.compared_percent() > 90.0, "{counts:?}");
}

/// Debugging aid: `HLL_DUMP_SEED=N HLL_DUMP_OPS=M cargo test ... dump_run
/// -- --ignored` writes the run's executed requests, in execution order,
/// with their recorded replies, as `/tmp/hll-run.resp` (RESP commands) and
/// `/tmp/hll-run.replies` (one rendered reply a line), to replay against
/// redis-server.
#[test]
#[ignore]
fn dump_run() {
    use crate::knobs::{Knobs, Overrides};
    use crate::workload::WorkloadKind;
    use std::fmt::Write as _;
    let seed = std::env::var("HLL_DUMP_SEED").map_or(1, |s| s.parse().expect("seed"));
    let ops = std::env::var("HLL_DUMP_OPS").map_or(130, |s| s.parse().expect("ops"));
    let overrides = Overrides {
        workloads: Some(vec![WorkloadKind::Hll]),
        ops: Some(ops),
        clients: Some(1),
        no_faults: true,
        ..Overrides::default()
    };
    let mut world =
        crate::world::World::new(seed, Knobs::draw(seed, &overrides), None, false, false);
    world.run();
    let history = &world.history;
    let ops = crate::check::model::index_ops(history);
    let mut resp = Vec::new();
    let mut replies = String::new();
    for exec in &history.executions {
        let Some(op) = ops.get(&(exec.conn, exec.seq_in_conn)) else {
            continue;
        };
        resp.extend_from_slice(format!("*{}\r\n", op.args.len()).as_bytes());
        for a in &op.args {
            resp.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            resp.extend_from_slice(a);
            resp.extend_from_slice(b"\r\n");
        }
        let shown = op.complete.as_ref().map(|(_, r)| format!("{r:?}"));
        let _ = writeln!(replies, "{}", shown.unwrap_or_default());
    }
    std::fs::write("/tmp/hll-run.resp", resp).expect("write");
    std::fs::write("/tmp/hll-run.replies", replies).expect("write");
    if let Err(v) = ReferenceModel.check(history, &RunFacts::default()) {
        panic!("{}", v.message);
    }
}

/// Debugging aid: checks the model against `/tmp/hll-tx.txt`, a transcript
/// of raw requests (hex arguments) and redis-server's replies.
#[test]
#[ignore]
fn replay_redis_transcript() {
    let text = std::fs::read_to_string("/tmp/hll-tx.txt").expect("transcript");
    let mut b = Builder::new();
    for line in text.lines() {
        let (args, recorded) = line.split_once('\t').expect("args<TAB>reply");
        let args: Vec<Vec<u8>> = args.split(' ').map(unhex).collect();
        let index = b.op(1, "PING", b.now_ns, None);
        b.history.ops[index].args = args;
        b.execute(index, 10);
        b.history.ops[index].complete = Some((b.now_ns, reply(recorded)));
        b.advance_ms(0);
    }
    check(&b).expect("the model agrees with redis-server");
}
