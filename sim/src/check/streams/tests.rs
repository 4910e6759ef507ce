//! Hand-built histories for the stream checker: a consistent history
//! passes, and each violation kind is planted once into it.

use seedkv_engine::resp::Frame;

use super::check_streams;
use crate::check::model::testkit::{bulk, error, simple, Builder};
use crate::history::Received;

fn entry(id: &str, fields: &[&str]) -> Frame {
    Frame::Array(vec![
        bulk(id),
        Frame::Array(fields.iter().map(|f| bulk(f)).collect()),
    ])
}

fn entries(items: &[(&str, &str)]) -> Frame {
    Frame::Array(items.iter().map(|(id, t)| entry(id, &["t", t])).collect())
}

fn read(key: &str, items: &[(&str, &str)]) -> Frame {
    Frame::Array(vec![Frame::Array(vec![bulk(key), entries(items)])])
}

fn ids(items: &[&str]) -> Frame {
    Frame::Array(items.iter().map(|i| bulk(i)).collect())
}

/// Three entries in `strm:0`, group g0 made, two delivered to c1.
fn base() -> Builder {
    let mut b = Builder::new();
    b.run(1, "XADD strm:0 1-1 t a", bulk("1-1"));
    b.run(1, "XADD strm:0 5-0 t b", bulk("5-0"));
    b.run(1, "XADD strm:0 5-* t c", bulk("5-1"));
    b.run(2, "XGROUP CREATE strm:0 g0 0 MKSTREAM", simple("OK"));
    b.run(
        2,
        "XGROUP CREATE strm:0 g0 0 MKSTREAM",
        error("BUSYGROUP Consumer Group name already exists"),
    );
    b.run(
        2,
        "XREADGROUP GROUP g0 c1 COUNT 2 STREAMS strm:0 >",
        read("strm:0", &[("1-1", "a"), ("5-0", "b")]),
    );
    b
}

fn summary(count: i64, first: &str, last: &str, owners: &[(&str, &str)]) -> Frame {
    Frame::Array(vec![
        Frame::Integer(count),
        bulk(first),
        bulk(last),
        Frame::Array(
            owners
                .iter()
                .map(|(c, n)| Frame::Array(vec![bulk(c), bulk(n)]))
                .collect(),
        ),
    ])
}

#[test]
fn a_consistent_history_passes() {
    let mut b = base();
    b.run(3, "XLEN strm:0", Frame::Integer(3));
    b.run(
        3,
        "XRANGE strm:0 - + COUNT 2",
        entries(&[("1-1", "a"), ("5-0", "b")]),
    );
    b.run(
        3,
        "XREVRANGE strm:0 + (1-1",
        entries(&[("5-1", "c"), ("5-0", "b")]),
    );
    b.run(
        3,
        "XREAD COUNT 5 STREAMS strm:0 5",
        read("strm:0", &[("5-1", "c")]),
    );
    b.run(
        2,
        "XPENDING strm:0 g0",
        summary(2, "1-1", "5-0", &[("c1", "2")]),
    );
    b.run(4, "XCLAIM strm:0 g0 c2 0 1-1 JUSTID", ids(&["1-1"]));
    b.run(
        2,
        "XPENDING strm:0 g0",
        summary(2, "1-1", "5-0", &[("c1", "1"), ("c2", "1")]),
    );
    b.run(
        2,
        "XREADGROUP GROUP g0 c1 STREAMS strm:0 0",
        read("strm:0", &[("5-0", "b")]),
    );
    b.run(2, "XACK strm:0 g0 5-0 5-0 9-9", Frame::Integer(1));
    b.run(3, "XDEL strm:0 1-1 7-7", Frame::Integer(1));
    b.run(
        4,
        "XAUTOCLAIM strm:0 g0 c3 0 0 COUNT 5",
        Frame::Array(vec![bulk("0-0"), Frame::Array(vec![]), ids(&["1-1"])]),
    );
    b.run(3, "XTRIM strm:0 MAXLEN = 1", Frame::Integer(1));
    b.run(
        2,
        "XREADGROUP GROUP g0 c1 COUNT 9 STREAMS strm:0 >",
        read("strm:0", &[("5-1", "c")]),
    );
    check_streams(&b.history).expect("consistent");
}

fn fails(b: &Builder, what: &str) {
    let message = check_streams(&b.history).expect_err(what);
    assert!(message.contains(what), "{message}");
}

#[test]
fn an_id_not_above_the_last_fails() {
    let mut b = base();
    b.run(1, "XADD strm:0 * t d", bulk("1700000000000-0"));
    check_streams(&b.history).expect("the clock's ms");
    b.run(1, "XADD strm:0 * t e", bulk("1700000000000-0"));
    fails(&b, "not strictly increasing");
}

#[test]
fn an_automatic_id_off_the_clock_fails() {
    let mut b = base();
    b.run(1, "XADD strm:0 * t d", bulk("1700000000007-0"));
    fails(&b, "expected the ID 1700000000000-0");
}

#[test]
fn a_refused_id_above_the_last_fails() {
    let mut b = base();
    b.run(
        1,
        "XADD strm:0 9-0 t d",
        error("ERR The ID specified in XADD is equal or smaller than the target stream top item"),
    );
    fails(&b, "refused");
}

#[test]
fn a_range_missing_an_entry_fails() {
    let mut b = base();
    b.run(
        3,
        "XRANGE strm:0 - +",
        entries(&[("1-1", "a"), ("5-1", "c")]),
    );
    fails(&b, "expected [1-1 t a, 5-0 t b, 5-1 t c]");
}

#[test]
fn a_read_of_a_stream_not_named_fails() {
    let mut b = base();
    b.run(3, "XREAD STREAMS strm:1 0", read("strm:0", &[("1-1", "a")]));
    fails(&b, "did not name");
}

#[test]
fn a_delivery_skipping_an_entry_fails() {
    let mut b = base();
    b.run(
        2,
        "XREADGROUP GROUP g0 c2 COUNT 1 STREAMS strm:0 >",
        Frame::Null,
    );
    fails(&b, "next undelivered live entries [5-1 t c]");
}

#[test]
fn a_wrong_ack_count_fails() {
    let mut b = base();
    b.run(2, "XACK strm:0 g0 5-1", Frame::Integer(1));
    fails(&b, "expected 0 acknowledged");
}

#[test]
fn an_entry_left_in_two_pels_fails() {
    let mut b = base();
    b.run(4, "XCLAIM strm:0 g0 c2 0 1-1 JUSTID", ids(&["1-1"]));
    // As the planted bug answers: 1-1 still counted for c1.
    b.run(
        2,
        "XPENDING strm:0 g0",
        summary(2, "1-1", "5-0", &[("c1", "2"), ("c2", "1")]),
    );
    fails(&b, "summary of the group's PEL");
}

#[test]
fn a_history_read_showing_a_claimed_entry_fails() {
    let mut b = base();
    b.run(4, "XCLAIM strm:0 g0 c2 0 1-1", entries(&[("1-1", "a")]));
    b.run(
        2,
        "XREADGROUP GROUP g0 c1 STREAMS strm:0 0",
        read("strm:0", &[("1-1", "a"), ("5-0", "b")]),
    );
    fails(&b, "the consumer's pending entries [5-0 t b]");
}

#[test]
fn a_claim_of_an_entry_not_pending_fails() {
    let mut b = base();
    b.run(4, "XCLAIM strm:0 g0 c2 5 5-1", entries(&[("5-1", "c")]));
    fails(&b, "claimed []");
}

#[test]
fn an_autoclaim_with_a_wrong_cursor_fails() {
    let mut b = base();
    b.run(
        4,
        "XAUTOCLAIM strm:0 g0 c3 0 0 COUNT 1",
        Frame::Array(vec![bulk("0-0"), entries(&[("1-1", "a")]), ids(&[])]),
    );
    fails(&b, "expected the cursor 5-0");
}

#[test]
fn a_wrong_extended_pending_fails() {
    let mut b = base();
    let row = |id: &str, c: &str| {
        Frame::Array(vec![
            bulk(id),
            bulk(c),
            Frame::Integer(0),
            Frame::Integer(1),
        ])
    };
    b.run(
        2,
        "XPENDING strm:0 g0 - + 10 c1",
        Frame::Array(vec![row("1-1", "c1"), row("5-0", "c1")]),
    );
    check_streams(&b.history).expect("right");
    b.run(
        2,
        "XPENDING strm:0 g0 - + 10 c2",
        Frame::Array(vec![row("1-1", "c1")]),
    );
    fails(&b, "expected the pending entries []");
}

#[test]
fn an_exact_trim_removing_too_little_fails() {
    let mut b = base();
    b.run(3, "XTRIM strm:0 MAXLEN = 1", Frame::Integer(1));
    fails(&b, "an exact trim removes 2");
}

#[test]
fn a_lost_reply_of_an_approximate_trim_makes_the_stream_unknown_until_del() {
    let mut b = base();
    b.run(3, "XTRIM strm:0 MAXLEN ~ 1", Frame::Integer(1));
    let i = b.op(1, "XTRIM strm:0 MAXLEN ~ 0", b.now_ns, None);
    b.execute(i, 10);
    b.run(3, "XLEN strm:0", Frame::Integer(99)); // not judged
    b.run(3, "DEL strm:0", Frame::Integer(1));
    b.run(3, "XLEN strm:0", Frame::Integer(0));
    check_streams(&b.history).expect("unknown, then known again");
    b.run(3, "XLEN strm:0", Frame::Integer(1));
    fails(&b, "the stream has 0 entries");
}

/// A blocked XREADGROUP that the engine received now and that parked.
fn park(b: &mut Builder, conn: u64, text: &str) -> usize {
    let i = b.op(conn, text, b.now_ns, None);
    b.now_ns += 10;
    let op = &b.history.ops[i];
    let n = b.history.executions.len();
    b.history.received.push(Received {
        conn: op.conn,
        seq_in_conn: op.seq_in_conn,
        at_ns: b.now_ns,
        executions_before: n,
        executions_after: n,
    });
    i
}

fn resume(b: &mut Builder, i: usize, reply: Frame) {
    b.execute(i, 10);
    b.history.ops[i].complete = Some((b.now_ns + 10, reply));
    b.now_ns += 20;
}

#[test]
fn a_blocked_reader_is_served_the_next_entry() {
    let mut b = base();
    b.run(
        2,
        "XREADGROUP GROUP g0 c1 COUNT 5 STREAMS strm:0 >",
        read("strm:0", &[("5-1", "c")]),
    );
    let i = park(
        &mut b,
        5,
        "XREADGROUP GROUP g0 c5 COUNT 5 BLOCK 10 STREAMS strm:0 >",
    );
    b.run(1, "XADD strm:0 6-0 t d", bulk("6-0"));
    resume(&mut b, i, read("strm:0", &[("6-0", "d")]));
    check_streams(&b.history).expect("served");
}

#[test]
fn a_blocked_reader_timing_out_with_an_entry_to_read_fails() {
    let mut b = base();
    b.run(
        2,
        "XREADGROUP GROUP g0 c1 COUNT 5 STREAMS strm:0 >",
        read("strm:0", &[("5-1", "c")]),
    );
    let i = park(
        &mut b,
        5,
        "XREADGROUP GROUP g0 c5 COUNT 5 BLOCK 10 STREAMS strm:0 >",
    );
    b.run(1, "XADD strm:0 6-0 t d", bulk("6-0"));
    b.advance_ms(11);
    resume(&mut b, i, Frame::Null);
    fails(&b, "next undelivered live entries [6-0 t d]");
}

#[test]
fn a_blocked_reader_timing_out_early_fails() {
    let mut b = base();
    let i = park(&mut b, 5, "XREAD COUNT 5 BLOCK 10 STREAMS strm:0 5-1");
    b.now_ns += 2_000_000;
    resume(&mut b, i, Frame::Null);
    fails(&b, "before its BLOCK of 10 ms");
    let mut b = base();
    let i = park(&mut b, 5, "XREAD COUNT 5 BLOCK 10 STREAMS strm:0 5-1");
    b.now_ns += 10_000_000;
    resume(&mut b, i, Frame::Null);
    check_streams(&b.history).expect("in time");
}

/// A real run of the streams workload: the checker judges most replies
/// against a known stream (it is not passing by declining).
#[test]
fn a_streams_run_is_mostly_judged() {
    use crate::knobs::{Knobs, Overrides};
    use crate::workload::WorkloadKind;
    let overrides = Overrides {
        workloads: Some(vec![WorkloadKind::Streams]),
        ops: Some(3_000),
        ..Overrides::default()
    };
    let mut world = crate::world::World::new(1, Knobs::draw(1, &overrides), None, false, false);
    world.run();
    let mut counts = crate::check::CheckCounts::default();
    super::check_streams_counted(&world.history, &mut counts).expect("clean engine");
    assert!(counts.compared > 1_500, "{counts:?}");
    assert!(counts.compared_percent() > 80.0, "{counts:?}");
}
