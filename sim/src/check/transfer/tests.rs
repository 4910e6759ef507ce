//! Hand-built histories for every verdict of `check::transfer` and
//! `check::atomicity::check_groups`.

use seedkv_engine::resp::Frame;

use super::*;
use crate::check::atomicity::check_groups;
use crate::history::Execution;
use crate::workload::transfer::{account_key, lease_key, loose_key, pool_keys};

/// Builds a history request by request: each `send` records an op on a
/// connection (with its next index), each `run` an execution of it.
#[derive(Default)]
struct Builder {
    h: History,
    next_seq: FxHashMap<ConnId, u64>,
    now_ms: u64,
}

fn b(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

fn bulk(n: i64) -> Frame {
    Frame::Bulk(n.to_string().into_bytes())
}

fn ok() -> Frame {
    Frame::Simple(b"OK".to_vec())
}

fn queued() -> Frame {
    Frame::Simple(b"QUEUED".to_vec())
}

impl Builder {
    /// Records a request on `conn` with its reply; returns its index.
    fn send(&mut self, conn: ConnId, args: Vec<Vec<u8>>, reply: Option<Frame>) -> u64 {
        let seq = self.next_seq.entry(conn).or_default();
        let s = *seq;
        *seq += 1;
        let t = self.h.ops.len() as u64;
        self.h.ops.push(Op {
            client: conn as u32,
            conn,
            seq_in_conn: s,
            args,
            workload: "transfer",
            invoke_ns: t,
            complete: reply.map(|r| (t + 1000, r)),
        });
        s
    }

    fn run(&mut self, conn: ConnId, seq: u64, name: &'static str, in_exec: Option<u64>) {
        self.h.executions.push(Execution {
            conn,
            seq_in_conn: seq,
            start_ns: 0,
            end_ns: 0,
            unix_ms: self.now_ms,
            name,
            flags: 0,
            work_units: 1,
            in_exec,
            sizes: None,
        });
    }

    /// A request executed at once.
    fn cmd(&mut self, conn: ConnId, args: Vec<Vec<u8>>, name: &'static str, reply: Frame) {
        let s = self.send(conn, args, Some(reply));
        self.run(conn, s, name, None);
    }

    fn open_accounts(&mut self, conn: ConnId) {
        for pool in [Pool::Protected, Pool::Loose] {
            let mut r = vec![b("MSETNX")];
            for k in pool_keys(pool) {
                r.push(k);
                r.push(b("1000"));
            }
            self.cmd(conn, r, "msetnx", Frame::Integer(1));
        }
    }

    fn mget(&mut self, conn: ConnId, pool: Pool, values: &[i64]) {
        let mut r = vec![b("MGET")];
        r.extend(pool_keys(pool));
        let reply = Frame::Array(values.iter().map(|&v| bulk(v)).collect());
        self.cmd(conn, r, "mget", reply);
    }

    fn check(&self) -> Result<(), String> {
        check_observations(&self.h.ops)?;
        check_execution_order(&self.h)?;
        check_groups(&self.h)
    }
}

const ALL: [i64; 5] = [1000; 5];

/// MULTI / DECRBY from x / INCRBY to x / EXEC on `conn`; the EXEC's reply
/// given. Returns the request indices (MULTI, DECRBY, INCRBY, EXEC)
/// without executing the queue.
fn queue_transfer(bd: &mut Builder, conn: ConnId, from: u32, to: u32, x: i64) -> [u64; 4] {
    let m = bd.send(conn, vec![b("MULTI")], Some(ok()));
    bd.run(conn, m, "multi", None);
    let d = bd.send(
        conn,
        vec![b("DECRBY"), account_key(from), x.to_string().into_bytes()],
        Some(queued()),
    );
    let i = bd.send(
        conn,
        vec![b("INCRBY"), account_key(to), x.to_string().into_bytes()],
        Some(queued()),
    );
    let reply = Frame::Array(vec![Frame::Integer(1000 - x), Frame::Integer(1000 + x)]);
    let e = bd.send(conn, vec![b("EXEC")], Some(reply));
    [m, d, i, e]
}

#[test]
fn an_atomic_transfer_and_readers_pass() {
    let mut bd = Builder::default();
    bd.open_accounts(1);
    bd.mget(2, Pool::Protected, &ALL);
    let [_, d, i, e] = queue_transfer(&mut bd, 1, 0, 1, 10);
    bd.run(1, d, "decrby", Some(e));
    bd.run(1, i, "incrby", Some(e));
    bd.run(1, e, "exec", None);
    bd.mget(2, Pool::Protected, &[990, 1010, 1000, 1000, 1000]);
    assert_eq!(bd.check(), Ok(()));
}

#[test]
fn an_exec_interleaved_with_a_reader_fails() {
    let mut bd = Builder::default();
    bd.open_accounts(1);
    let [_, d, i, e] = queue_transfer(&mut bd, 1, 0, 1, 10);
    bd.run(1, d, "decrby", Some(e));
    // Conn 2's MGET runs between the EXEC's two commands.
    bd.mget(2, Pool::Protected, &[990, 1000, 1000, 1000, 1000]);
    bd.run(1, i, "incrby", Some(e));
    bd.run(1, e, "exec", None);
    let groups = check_groups(&bd.h).unwrap_err();
    assert!(groups.contains("not atomic"), "{groups}");
    let seen = check_observations(&bd.h.ops).unwrap_err();
    assert!(seen.contains("partial transfer"), "{seen}");
}

#[test]
fn an_exec_whose_commands_run_after_it_fails() {
    let mut bd = Builder::default();
    bd.open_accounts(1);
    let [_, d, i, e] = queue_transfer(&mut bd, 1, 0, 1, 10);
    bd.run(1, d, "decrby", Some(e));
    bd.run(1, e, "exec", None);
    bd.run(1, i, "incrby", Some(e));
    let groups = check_groups(&bd.h).unwrap_err();
    assert!(groups.contains("2 results but only 1"), "{groups}");
    assert!(check_execution_order(&bd.h).is_err());
}

#[test]
fn an_exec_running_other_than_its_queue_fails() {
    let mut bd = Builder::default();
    bd.open_accounts(1);
    let [_, d, i, e] = queue_transfer(&mut bd, 1, 0, 1, 10);
    bd.run(1, i, "incrby", Some(e));
    bd.run(1, d, "decrby", Some(e));
    bd.run(1, e, "exec", None);
    let groups = check_groups(&bd.h).unwrap_err();
    assert!(groups.contains("were queued"), "{groups}");
}

#[test]
fn a_pipelined_pair_may_interleave() {
    let mut bd = Builder::default();
    bd.open_accounts(1);
    let d = bd.send(
        1,
        vec![b("DECRBY"), loose_key(0), b("7")],
        Some(Frame::Integer(993)),
    );
    let i = bd.send(
        1,
        vec![b("INCRBY"), loose_key(1), b("7")],
        Some(Frame::Integer(1007)),
    );
    bd.run(1, d, "decrby", None);
    // Another client sees the money in flight: allowed for a pipeline.
    bd.mget(2, Pool::Loose, &[993, 1000, 1000, 1000, 1000]);
    bd.run(1, i, "incrby", None);
    bd.mget(2, Pool::Loose, &[993, 1007, 1000, 1000, 1000]);
    assert_eq!(bd.check(), Ok(()));
}

#[test]
fn a_lost_exec_reply_counts_as_it_ran() {
    for ran in [false, true] {
        let mut bd = Builder::default();
        bd.open_accounts(1);
        let [_, d, i, e] = queue_transfer(&mut bd, 1, 0, 1, 10);
        // The EXEC's reply never came; the order says whether it ran.
        bd.h.ops.last_mut().expect("exec").complete = None;
        if ran {
            bd.run(1, d, "decrby", Some(e));
            bd.run(1, i, "incrby", Some(e));
            bd.run(1, e, "exec", None);
        }
        let after = if ran { [990, 1010] } else { [1000, 1000] };
        bd.mget(2, Pool::Protected, &[after[0], after[1], 1000, 1000, 1000]);
        assert_eq!(bd.check(), Ok(()), "ran: {ran}");
        // A reader that saw the other outcome fails.
        let mut wrong = Builder::default();
        wrong.open_accounts(1);
        let [_, d, i, e] = queue_transfer(&mut wrong, 1, 0, 1, 10);
        wrong.h.ops.last_mut().expect("exec").complete = None;
        if ran {
            wrong.run(1, d, "decrby", Some(e));
            wrong.run(1, i, "incrby", Some(e));
            wrong.run(1, e, "exec", None);
        }
        let other = if ran { [1000, 1000] } else { [990, 1010] };
        wrong.mget(2, Pool::Protected, &[other[0], other[1], 1000, 1000, 1000]);
        let err = check_execution_order(&wrong.h).unwrap_err();
        assert!(err.contains("lost, duplicated"), "{err}");
    }
}

#[test]
fn a_reader_sum_off_fails_from_the_history_alone() {
    let mut bd = Builder::default();
    bd.open_accounts(1);
    bd.mget(2, Pool::Protected, &[1000, 1000, 1000, 1000, 999]);
    assert!(check_observations(&bd.h.ops).is_err());
    // The loose pool is exempt from the sum.
    let mut loose = Builder::default();
    loose.open_accounts(1);
    loose.h.ops.clear();
    loose.mget(2, Pool::Loose, &[1000, 1000, 1000, 1000, 999]);
    assert_eq!(check_observations(&loose.h.ops), Ok(()));
}

#[test]
fn a_multi_of_gets_is_an_observation() {
    let mut bd = Builder::default();
    bd.open_accounts(1);
    let m = bd.send(2, vec![b("MULTI")], Some(ok()));
    bd.run(2, m, "multi", None);
    let gets: Vec<u64> = pool_keys(Pool::Protected)
        .into_iter()
        .map(|k| bd.send(2, vec![b("GET"), k], Some(queued())))
        .collect();
    let values = [1000, 1000, 1000, 1000, 1001];
    let e = bd.send(
        2,
        vec![b("EXEC")],
        Some(Frame::Array(values.iter().map(|&v| bulk(v)).collect())),
    );
    for g in gets {
        bd.run(2, g, "get", Some(e));
    }
    bd.run(2, e, "exec", None);
    let err = check_observations(&bd.h.ops).unwrap_err();
    assert!(err.contains("a MULTI of GETs"), "{err}");
    assert!(check_execution_order(&bd.h).is_err());
}

/// WATCH on a lease (set with PX `ttl_ms` at 0 ms) and two accounts, then
/// MULTI SET SET EXEC at `exec_ms`; `committed` says whether it ran.
fn watch_round(ttl_ms: u64, exec_ms: u64, committed: bool) -> Builder {
    let mut bd = Builder::default();
    bd.open_accounts(1);
    let lease = lease_key(1);
    bd.cmd(
        1,
        vec![
            b("SET"),
            lease.clone(),
            b("held"),
            b("PX"),
            ttl_ms.to_string().into_bytes(),
        ],
        "set",
        ok(),
    );
    bd.cmd(
        1,
        vec![b("WATCH"), lease, account_key(0), account_key(1)],
        "watch",
        ok(),
    );
    bd.cmd(1, vec![b("GET"), account_key(0)], "get", bulk(1000));
    bd.cmd(1, vec![b("GET"), account_key(1)], "get", bulk(1000));
    bd.now_ms = exec_ms;
    let m = bd.send(1, vec![b("MULTI")], Some(ok()));
    bd.run(1, m, "multi", None);
    let s1 = bd.send(1, vec![b("SET"), account_key(0), b("990")], Some(queued()));
    let s2 = bd.send(1, vec![b("SET"), account_key(1), b("1010")], Some(queued()));
    let reply = if committed {
        Frame::Array(vec![ok(), ok()])
    } else {
        Frame::Null
    };
    let e = bd.send(1, vec![b("EXEC")], Some(reply));
    if committed {
        bd.run(1, s1, "set", Some(e));
        bd.run(1, s2, "set", Some(e));
    }
    bd.run(1, e, "exec", None);
    bd
}

#[test]
fn watch_verdicts() {
    // The lease outlived the round: the EXEC runs.
    assert_eq!(watch_round(10, 2, true).check(), Ok(()));
    // ...and may not fail.
    let err = watch_round(10, 2, false).check().unwrap_err();
    assert!(err.contains("replied null"), "{err}");
    // The lease expired before EXEC: the EXEC fails...
    assert_eq!(watch_round(2, 10, false).check(), Ok(()));
    // ...and may not run (a WATCH that ignores expiry).
    let err = watch_round(2, 10, true).check().unwrap_err();
    assert!(err.contains("expired"), "{err}");
    // Within a millisecond of the expiry: either.
    assert_eq!(watch_round(3, 3, true).check(), Ok(()));
    assert_eq!(watch_round(3, 3, false).check(), Ok(()));
}

#[test]
fn a_watched_key_written_by_another_client_fails_the_exec() {
    let mut bd = watch_round(10, 2, false);
    // Conn 2's write runs right after the WATCH round's GETs.
    let seq = bd.send(
        2,
        vec![b("INCRBY"), account_key(0), b("5")],
        Some(Frame::Integer(1005)),
    );
    let e = bd.h.executions.pop().expect("exec");
    let m = bd.h.executions.pop().expect("multi");
    bd.run(2, seq, "incrby", None);
    bd.h.executions.push(m);
    bd.h.executions.push(e);
    assert_eq!(check_execution_order(&bd.h), Ok(()));
    // Had it committed anyway, it must fail.
    let mut bad = watch_round(10, 2, true);
    let seq = bad.send(
        2,
        vec![b("INCRBY"), account_key(0), b("5")],
        Some(Frame::Integer(1005)),
    );
    let tail: Vec<Execution> = bad
        .h
        .executions
        .drain(bad.h.executions.len() - 4..)
        .collect();
    bad.run(2, seq, "incrby", None);
    bad.h.executions.extend(tail);
    let err = check_execution_order(&bad.h).unwrap_err();
    assert!(err.contains("written after WATCH"), "{err}");
}

#[test]
fn scripts_are_groups_and_replayed_whole() {
    let mut bd = Builder::default();
    bd.open_accounts(1);
    let args = crate::workload::transfer::eval(
        TRANSFER_SCRIPT,
        vec![account_key(2), account_key(3)],
        &[b("4")],
    );
    let s = bd.send(
        1,
        args,
        Some(Frame::Array(vec![
            Frame::Integer(996),
            Frame::Integer(1004),
        ])),
    );
    bd.run(1, s, "decrby", Some(s));
    bd.run(1, s, "incrby", Some(s));
    bd.run(1, s, "eval", None);
    bd.mget(2, Pool::Protected, &[1000, 1000, 996, 1004, 1000]);
    assert_eq!(bd.check(), Ok(()));
    // A reader between the script's calls breaks it.
    let mut bad = Builder::default();
    bad.open_accounts(1);
    let args = crate::workload::transfer::eval(
        TRANSFER_SCRIPT,
        vec![account_key(2), account_key(3)],
        &[b("4")],
    );
    let s = bad.send(1, args, None);
    bad.run(1, s, "decrby", Some(s));
    bad.mget(2, Pool::Protected, &[1000, 1000, 996, 1000, 1000]);
    bad.run(1, s, "incrby", Some(s));
    bad.run(1, s, "eval", None);
    assert!(check_groups(&bad.h).is_err());
    assert!(check_observations(&bad.h.ops).is_err());
}
