use seedkv_engine::resp::Frame;

use super::{check_bounded, check_linearizability, LinearizabilityReport};
use crate::check::model::testkit::{bulk, simple, Builder};

fn ok() -> Option<Frame> {
    Some(simple("OK"))
}

/// Adds an op on its own connection over `[invoke, complete]`.
fn op(b: &mut Builder, text: &str, invoke: u64, complete: Option<(u64, Frame)>) {
    let conn = b.history.ops.len() as u64 + 1;
    b.op(conn, text, invoke, complete);
}

fn done(t: u64, reply: Option<Frame>) -> Option<(u64, Frame)> {
    reply.map(|r| (t, r))
}

fn report(b: &Builder) -> LinearizabilityReport {
    check_linearizability(&b.history)
}

#[test]
fn stale_read_after_completed_write_fails() {
    let mut b = Builder::new();
    op(&mut b, "SET k a", 0, done(10, ok()));
    op(&mut b, "SET k b", 20, done(30, ok()));
    op(&mut b, "GET k", 40, Some((50, bulk("b"))));
    let good = report(&b);
    assert!(good.violation.is_none(), "{good:?}");
    assert_eq!(good.keys_linearizable, 1);
    b.history.ops[2].complete = Some((50, bulk("a")));
    let bad = report(&b);
    assert!(
        bad.violation
            .as_deref()
            .is_some_and(|m| m.contains("\"k\"")),
        "{bad:?}"
    );
}

#[test]
fn overlapping_ops_may_take_effect_in_either_order() {
    for seen in ["a", "b"] {
        let mut b = Builder::new();
        op(&mut b, "SET k a", 0, done(10, ok()));
        op(&mut b, "SET k b", 20, done(60, ok()));
        op(&mut b, "GET k", 30, Some((50, bulk(seen))));
        assert!(report(&b).violation.is_none(), "GET may see {seen}");
    }
    let mut b = Builder::new();
    op(&mut b, "SET k a", 0, done(10, ok()));
    op(&mut b, "SET k b", 20, done(60, ok()));
    op(&mut b, "GET k", 30, Some((50, bulk("c"))));
    assert!(report(&b).violation.is_some(), "a value never written");
}

#[test]
fn a_read_cannot_go_back_in_time() {
    let mut b = Builder::new();
    op(&mut b, "SET k a", 0, done(10, ok()));
    op(&mut b, "SET k b", 20, done(100, ok()));
    op(&mut b, "GET k", 30, Some((40, bulk("b"))));
    op(&mut b, "GET k", 50, Some((60, bulk("b"))));
    assert!(report(&b).violation.is_none());
    b.history.ops[3].complete = Some((60, bulk("a")));
    assert!(report(&b).violation.is_some(), "b was seen, then a again");
}

#[test]
fn unanswered_writes_may_happen_later_or_never() {
    for seen in [Frame::Null, bulk("x")] {
        let mut b = Builder::new();
        op(&mut b, "SET k x", 0, None);
        op(&mut b, "GET k", 100, Some((110, seen)));
        assert!(report(&b).violation.is_none());
    }
    let mut b = Builder::new();
    op(&mut b, "SET k x", 50, None);
    op(&mut b, "GET k", 0, Some((10, bulk("x"))));
    assert!(report(&b).violation.is_some(), "seen before it was sent");
}

#[test]
fn lost_increment_fails_and_concurrent_increments_pass() {
    let mut b = Builder::new();
    op(&mut b, "INCR n", 0, Some((50, Frame::Integer(2))));
    op(&mut b, "INCR n", 10, Some((40, Frame::Integer(1))));
    op(&mut b, "INCRBY n 5", 60, Some((70, Frame::Integer(7))));
    assert!(report(&b).violation.is_none());
    b.history.ops[1].complete = Some((40, Frame::Integer(2)));
    assert!(report(&b).violation.is_some(), "two INCRs both returned 2");
}

#[test]
fn other_commands_that_write_the_key_exclude_it() {
    let mut b = Builder::new();
    op(&mut b, "SET k a", 0, done(10, ok()));
    op(&mut b, "SET k b", 20, done(30, ok()));
    op(&mut b, "GET k", 40, Some((50, bulk("a"))));
    assert!(report(&b).violation.is_some());
    for writer in [
        "MSET k a j b",
        "EXPIRE k 10",
        "SET k a EX 5",
        "FLUSHDB",
        "HSET k f v",
    ] {
        let mut excluded = b.history.clone();
        excluded.ops.push(excluded.ops[0].clone());
        let extra = excluded.ops.last_mut().unwrap();
        extra.conn = 99;
        extra.args = crate::check::model::testkit::args(writer);
        let r = check_linearizability(&excluded);
        assert!(r.violation.is_none(), "{writer}: {r:?}");
        assert_eq!(r.keys_excluded, 1, "{writer}");
    }
}

#[test]
fn selected_database_separates_keys() {
    let mut b = Builder::new();
    b.op(1, "SELECT 1", 0, done(5, ok()));
    b.op(1, "SET k one", 10, done(20, ok()));
    b.op(2, "SET k zero", 30, done(40, ok()));
    b.op(1, "GET k", 50, Some((60, bulk("one"))));
    assert!(report(&b).violation.is_none());
    b.history.ops[3].complete = Some((60, bulk("zero")));
    assert!(report(&b).violation.is_some());
}

#[test]
fn many_unanswered_increments_stay_decidable() {
    // 40 INCRs whose connections died: 2^40 subsets may have run, but
    // they are interchangeable, so the search stays small and still
    // sees that no subset explains a read of 41.
    let mut b = Builder::new();
    for i in 0..40 {
        op(&mut b, "INCR n", i, None);
    }
    op(&mut b, "GET n", 100, Some((110, bulk("17"))));
    op(&mut b, "INCR n", 120, Some((130, Frame::Integer(20))));
    let r = check_bounded(&b.history, 20_000);
    assert!(r.violation.is_none(), "{r:?}");
    assert_eq!((r.keys_linearizable, r.keys_unknown), (1, 0), "{r:?}");
    b.history.ops[40].complete = Some((110, bulk("41")));
    let r = check_bounded(&b.history, 20_000);
    assert!(r.violation.is_some(), "only 40 increments were sent: {r:?}");
}

#[test]
fn effort_is_bounded_and_reported_as_unknown() {
    let mut b = Builder::new();
    // Many overlapping writes and an impossible read: the search must
    // try every order before failing, which the bound cuts short.
    for i in 0..200 {
        op(
            &mut b,
            &format!("SET k v{i}"),
            i,
            Some((10_000, simple("OK"))),
        );
    }
    op(&mut b, "GET k", 500, Some((600, bulk("never"))));
    let r = check_bounded(&b.history, 20_000);
    assert!(r.violation.is_none(), "{r:?}");
    assert_eq!(r.keys_unknown, 1);
}
