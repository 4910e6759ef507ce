//! The shipped server's network code under turmoil's simulated TCP.
//!
//! The server host runs `seedkv_server::serve` — the binary's accept, read
//! and write loop, not a copy — over turmoil's listener and streams, with a
//! [`VirtualClock`] so that every `now` the engine sees is simulated time.
//! Several client hosts run a seeded mix of SETs, GETs, INCRs, pipelines and
//! abandoned connections while the test injects holds and releases,
//! partitions and repairs between each client and the server. Every reply is
//! checked as it arrives, and at the end a fresh connection per client reads
//! every key back:
//!
//! - no acknowledged write is lost: a key reads as its last acknowledged
//!   value, or a value that was never acknowledged (sent later, or sent on a
//!   connection the client gave up on, which may still land) — never an
//!   older acknowledged one;
//! - INCR counters only move forward past every acknowledged value and
//!   never beyond the number of INCRs sent;
//! - a pipeline's replies come back complete and in order.
//!
//! The whole run is traced (simulated time, client, request, reply), and the
//! same seed must give the same trace, byte for byte (`same_seed_same_trace`
//! compares the FNV-1a digests of two runs).
//!
//! The pieces: `net` puts the server on turmoil's sockets, `conn` is a
//! minimal RESP client, `workload` is the clients' run and its checks, and
//! `access` tests protected mode, AUTH and SHUTDOWN where peers are not on
//! loopback.

mod access;
mod conn;
mod net;
mod workload;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use net::{add_server, open_config};
use workload::{client, Rng, Trace, CLIENTS};

/// A run: the server, `CLIENTS` clients and a seeded fault schedule. Returns
/// the trace (client events, then the faults), or the first failure.
fn run(seed: u64) -> Result<Vec<String>, String> {
    let mut sim = turmoil::Builder::new()
        .rng_seed(seed)
        .simulation_duration(Duration::from_secs(120))
        .min_message_latency(Duration::from_millis(1))
        .max_message_latency(Duration::from_millis(20))
        .build();
    add_server(&mut sim, open_config());
    let trace: Trace = Rc::new(RefCell::new(Vec::new()));
    let failures: Rc<RefCell<Vec<String>>> = Rc::new(RefCell::new(Vec::new()));
    for who in 0..CLIENTS {
        let trace = trace.clone();
        let failures = failures.clone();
        sim.client(format!("c{who}"), async move {
            if let Err(e) = client(who, seed, trace).await {
                failures.borrow_mut().push(e);
            }
            Ok(())
        });
    }
    // Faults: every ~150 ms of simulated time, maybe start one on a random
    // client's link; each lasts 100-600 ms. No fault starts after 5 s, so
    // the end of the run (the read-backs) is healthy.
    let mut rng = Rng(seed);
    let mut faults: Vec<String> = Vec::new();
    let mut active: Option<(String, bool, Duration)> = None;
    let mut next_fault = Duration::from_millis(150);
    loop {
        let done = sim.step().map_err(|e| e.to_string())?;
        if done {
            break;
        }
        let now = sim.elapsed();
        if let Some((who, is_hold, until)) = &active {
            if now >= *until {
                if *is_hold {
                    sim.release("server", who.as_str());
                } else {
                    sim.repair("server", who.as_str());
                }
                faults.push(format!("{:>6} end fault {who}", now.as_millis()));
                active = None;
            }
        }
        if active.is_none() && now >= next_fault && now < Duration::from_secs(5) {
            next_fault = now + Duration::from_millis(150);
            if rng.below(3) > 0 {
                let who = format!("c{}", rng.below(CLIENTS as u64));
                let is_hold = rng.below(2) == 0;
                let len = Duration::from_millis(100 + rng.below(500));
                if is_hold {
                    sim.hold("server", who.as_str());
                } else {
                    sim.partition("server", who.as_str());
                }
                let what = if is_hold { "hold" } else { "partition" };
                faults.push(format!("{:>6} {what} {who} for {len:?}", now.as_millis()));
                active = Some((who, is_hold, now + len));
            }
        }
    }
    if let Some(e) = failures.borrow().first() {
        return Err(format!("seed {seed}: {e}"));
    }
    let mut all = trace.borrow().clone();
    all.extend(faults);
    Ok(all)
}

fn digest(lines: &[String]) -> u64 {
    // FNV-1a over the trace: stable across runs and platforms.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in lines.iter().flat_map(|l| l.bytes().chain([b'\n'])) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[test]
fn acknowledged_writes_survive_holds_partitions_and_drops() {
    for seed in 1..=8 {
        let trace = run(seed).unwrap_or_else(|e| panic!("{e}"));
        let timeouts = trace.iter().filter(|l| l.contains("no reply")).count();
        let faults = trace
            .iter()
            .filter(|l| l.contains("hold") || l.contains("partition"))
            .count();
        let finals = trace.iter().filter(|l| l.contains("final")).count();
        eprintln!(
            "seed {seed}: {} events, {faults} faults, {timeouts} timed-out requests, digest {:016x}",
            trace.len(),
            digest(&trace)
        );
        assert!(faults > 0, "seed {seed} injected no fault");
        assert!(finals >= CLIENTS, "seed {seed}: not every client read back");
    }
}

#[test]
fn same_seed_same_trace() {
    let a = run(11).unwrap_or_else(|e| panic!("{e}"));
    let b = run(11).unwrap_or_else(|e| panic!("{e}"));
    if a != b {
        let i = a
            .iter()
            .zip(&b)
            .position(|(x, y)| x != y)
            .unwrap_or(a.len().min(b.len()));
        panic!(
            "seed 11 diverged at event {i}: {:?} vs {:?}",
            a.get(i),
            b.get(i)
        );
    }
    let c = run(12).unwrap_or_else(|e| panic!("{e}"));
    assert_ne!(
        digest(&a),
        digest(&c),
        "a different seed should change the run"
    );
}
