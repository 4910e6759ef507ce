//! Which of the simulator's checkers a probe can run, and why.
//!
//! A real server is a black box: the probe sees each request's invocation,
//! its reply (or none) and when they happened, and nothing of the order in
//! which the server executed requests. A checker is run here only if it is
//! sound on that alone.

use crate::check::{
    atomicity, linearizability, liveness, pipeline, pubsub, Checker, RunFacts, Violation,
};
use crate::history::{Execution, History};

/// The checkers a probe runs, in this order.
/// `transfer_end`: both account pools as read after every client stopped
/// (`None` when no client ran the transfer workload).
pub fn black_box(transfer_end: Option<super::transfer::EndState>) -> Vec<Box<dyn Checker>> {
    vec![
        // Exactly one reply per request, in order, each one plausible for
        // its request; its executed-request rules see the synthesized
        // executions (below), which make them vacuous, not wrong.
        Box::new(pipeline::PipelineOrder),
        // Once faults stop, every request on an open connection is
        // answered within the bound: invocation and reply times only.
        Box::new(liveness::Liveness),
        // INCR never loses an update: bounds from what was acknowledged
        // before an invocation and sent before a reply.
        Box::new(atomicity::IncrAtomicity),
        // Per-key linearizability (Wing & Gong with Lowe's memo) of the
        // clients' observations alone.
        Box::new(linearizability::Linearizability),
        // SCAN's guarantees, from real-time order alone.
        Box::new(super::scan::BlackBoxScan),
        // Every reader's view of the protected pool sums to the total, and
        // each account ends within what the acknowledged and lost
        // transfers allow (see `probe::transfer`).
        Box::new(super::transfer::BlackBoxTransfer {
            end_state: transfer_end,
        }),
        // Pub/sub delivery in its client-interval mode.
        Box::new(BlackBoxPubSub),
    ]
}

/// The pub/sub checker without the synthesized executions: with none, it
/// judges by client-side intervals (a synthesized "execution" is only a
/// reply time, which its execution-order mode would take for the
/// server's order).
pub struct BlackBoxPubSub;

impl Checker for BlackBoxPubSub {
    fn name(&self) -> &'static str {
        "pubsub"
    }

    fn check(&self, history: &History, facts: &RunFacts) -> Result<(), Violation> {
        if history.pubsub.deliveries.is_empty()
            && !history.ops.iter().any(|op| op.workload == "pubsub")
        {
            return Ok(());
        }
        let view = History {
            ops: history.ops.clone(),
            conns: history.conns.clone(),
            pubsub: history.pubsub.clone(),
            faults_end_ns: history.faults_end_ns,
            end_ns: history.end_ns,
            ..History::default()
        };
        pubsub::PubSubDelivery.check(&view, facts)
    }
}

/// The simulator's checkers a probe does not run, with the reason.
pub const NOT_RUN: &[(&str, &str)] = &[
    (
        "group-atomicity",
        "needs which requests ran between an EXEC's or a script's commands in execution order",
    ),
    (
        "transfer (replay)",
        "replays every account through the execution order (the probe runs the transfer \
         checker's history-only half and an end-state range check)",
    ),
    (
        "reference-model",
        "replays the server's execution order through a model; a real server does not reveal it",
    ),
    (
        "scan-completeness",
        "follows each iteration through the execution order (the probe runs its black-box variant)",
    ),
    (
        "tail-latency",
        "bounds latency by the simulator's cost and network models, not real time on a shared machine",
    ),
    (
        "collection-scan",
        "needs element presence through the execution order",
    ),
    (
        "blocking",
        "needs where each blocking request parked (History::received), which only the engine knows",
    ),
    (
        "conservation",
        "needs which writes interleaved each snapshot in execution order",
    ),
    (
        "streams",
        "replays XADD, XREADGROUP, XCLAIM and trims in execution order against its model of \
         each stream and group (the probe runs the stream workload under the other checkers)",
    ),
];

/// Fills `history.executions` with one execution per answered request (in
/// reply order): over a socket, "executed" can only mean "answered". The
/// pipeline checker's rules about executions then hold by construction and
/// its reply-order and plausibility rules judge the replies. No other probe
/// checker reads executions.
pub fn synthesize_executions(history: &mut History) {
    let mut answered: Vec<(u64, u64, u64)> = history
        .ops
        .iter()
        .filter_map(|op| Some((op.complete.as_ref()?.0, op.conn, op.seq_in_conn)))
        .collect();
    answered.sort_unstable();
    history.executions = answered
        .into_iter()
        .map(|(at_ns, conn, seq_in_conn)| Execution {
            conn,
            seq_in_conn,
            start_ns: at_ns,
            end_ns: at_ns,
            unix_ms: 0,
            name: "",
            flags: 0,
            work_units: 0,
            in_exec: None,
            sizes: None,
        })
        .collect();
}
