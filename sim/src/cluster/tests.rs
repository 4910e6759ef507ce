//! The node plumbing, tested against the primary side alone: a client
//! that speaks the replica's handshake over the world's pipes gets a full
//! resync and then the stream, which the witness saw byte for byte.

use super::tap::{Answer, DownTap};
use super::world::{ClusterWorld, PRIMARY};
use super::{ClusterConfig, ClusterKnobs};
use crate::trace::TraceHash;

fn world(seed: u64) -> ClusterWorld {
    let config = ClusterConfig {
        no_faults: true,
        ops: Some(30),
        clients: Some(2),
        ..ClusterConfig::new(seed, 2)
    };
    ClusterWorld::new(
        seed,
        ClusterKnobs::draw(&config),
        None,
        TraceHash::new(false, false),
    )
}

#[test]
fn the_witness_reads_the_primarys_stream_from_its_start() {
    let mut w = world(3);
    w.run();
    let h = &w.history;
    assert_eq!(h.witness.len(), 1);
    let stream = &h.witness[0];
    assert_eq!(stream.replid.len(), 40);
    // Every acknowledged append of a writer is in the stream.
    let pushes = h
        .ops
        .iter()
        .filter(|op| op.node == PRIMARY && op.args[0] == b"RPUSH" && op.reply.is_some())
        .count();
    let text = String::from_utf8_lossy(&stream.bytes);
    assert!(pushes > 0);
    assert_eq!(text.matches("RPUSH").count(), pushes, "{text}");
}

#[test]
fn knobs_are_a_function_of_the_seed_and_faults_end() {
    for seed in 0..50 {
        let config = ClusterConfig::new(seed, 2);
        let a = ClusterKnobs::draw(&config);
        assert_eq!(a, ClusterKnobs::draw(&config));
        assert_eq!(a.clocks.len(), 3);
        assert!(a.faults_end_ns() <= a.fault_window_ns + 1_000_000_000);
        let quiet = ClusterKnobs::draw(&ClusterConfig {
            no_faults: true,
            ..config
        });
        assert!(quiet.partitions.partitions.is_empty() && quiet.crashes.is_empty());
    }
}

#[test]
fn a_tap_reads_a_handshake_answer() {
    let mut t = DownTap::default();
    t.feed(b"+PONG\r\n+OK\r\n+FULLRESYNC 0123 0\r\n$0\r\n");
    assert_eq!(
        t.answer,
        Some(Answer::Full {
            replid: "0123".into(),
            offset: 0
        })
    );
    assert_eq!(t.offset(), Some(0));
}
