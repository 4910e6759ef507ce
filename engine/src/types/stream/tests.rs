use super::*;

fn pairs(items: &[&str]) -> Vec<Vec<u8>> {
    items.iter().map(|s| s.as_bytes().to_vec()).collect()
}

fn ids(s: &Stream, start: StreamId, end: StreamId, rev: bool) -> Vec<u64> {
    let mut out = Vec::new();
    s.walk(start, end, rev, |_, i| {
        out.push(i.id.ms);
        true
    });
    out
}

fn filled(n: u64, limits: &Limits) -> Stream {
    let mut s = Stream::new();
    for ms in 1..=n {
        s.append(StreamId::new(ms, 0), &pairs(&["f", "v"]), limits)
            .unwrap();
    }
    s
}

#[test]
fn nodes_split_by_entries_and_ranges_cross_them() {
    let limits = Limits {
        stream_node_max_entries: 3,
        ..Limits::default()
    };
    let mut s = filled(10, &limits);
    assert_eq!(s.nodes_count(), 4);
    assert_eq!(s.len(), 10);
    let (lo, hi) = (StreamId::new(2, 0), StreamId::new(8, 0));
    assert_eq!(ids(&s, lo, hi, false), [2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(ids(&s, lo, hi, true), [8, 7, 6, 5, 4, 3, 2]);
    assert!(s.delete(StreamId::new(4, 0)));
    assert!(!s.delete(StreamId::new(4, 0)));
    assert_eq!(ids(&s, lo, hi, false), [2, 3, 5, 6, 7, 8]);
    assert_eq!(s.max_deleted_id, StreamId::new(4, 0));
    assert!(s.delete(StreamId::new(1, 0)));
    assert_eq!(s.first_id(), StreamId::new(2, 0));
    assert_eq!(
        s.append(StreamId::new(10, 0), &pairs(&["a", "b"]), &limits),
        Err(AppendError::IdTooSmall)
    );
}

#[test]
fn approximate_trim_removes_whole_nodes_only() {
    let limits = Limits {
        stream_node_max_entries: 3,
        ..Limits::default()
    };
    let mut s = filled(10, &limits);
    assert_eq!(s.trim(Trim::MaxLen(8), true, 0).0, 0);
    assert_eq!(s.trim(Trim::MaxLen(7), true, 0).0, 3);
    assert_eq!(s.len(), 7);
    assert_eq!(s.trim(Trim::MaxLen(5), false, 0).0, 2);
    assert_eq!(
        ids(&s, StreamId::MIN, StreamId::MAX, false),
        [6, 7, 8, 9, 10]
    );
    assert_eq!(s.first_id_with_tombstones(), StreamId::new(4, 0));
    assert_eq!(s.trim(Trim::MinId(StreamId::new(9, 0)), false, 0).0, 3);
    assert_eq!(s.first_id(), StreamId::new(9, 0));
}

#[test]
fn lag_needs_no_tombstones_ahead() {
    let limits = Limits::default();
    let mut s = filled(5, &limits);
    let g = Group::new(StreamId::new(2, 0), Some(2));
    assert_eq!(s.group_lag(&g), Some(3));
    s.delete(StreamId::new(4, 0));
    assert_eq!(s.group_lag(&g), None);
    let g = Group::new(StreamId::new(5, 0), None);
    assert_eq!(s.group_lag(&g), Some(0));
}

#[test]
fn group_pels_stay_consistent() {
    let mut g = Group::new(StreamId::MIN, None);
    g.consumer_or_create(b"a", 1);
    g.consumer_or_create(b"b", 1);
    g.deliver_new(StreamId::new(1, 0), b"a", 5);
    g.deliver_new(StreamId::new(2, 0), b"a", 5);
    g.transfer(StreamId::new(1, 0), b"b");
    assert!(g.is_consistent());
    assert!(g.ack(StreamId::new(2, 0)));
    assert_eq!(g.delete_consumer(b"b"), Some(1));
    assert!(g.pel.is_empty() && g.is_consistent());
}
