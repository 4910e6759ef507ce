//! Pipeline order: per connection, exactly one reply per request, in
//! request order, whatever the network fragmented or coalesced.
//!
//! Clients match replies to requests first in, first out, so a lost, extra
//! or misrouted reply shows up as one of:
//! - a reply with no request waiting (the client closes the connection
//!   with "client: unexpected reply"), or a byte stream that is not RESP;
//! - a reply for a request the engine never executed, or more replies on a
//!   connection than requests it executed;
//! - a reply that cannot belong to its request: the wrong shape (an INCR
//!   answered with a bulk string), `PING <token>` answered with anything
//!   but the token, or a value read from a key that does not start with
//!   that key's name (every workload writes `<key>|...` values).
//!
//! Every rule holds for any correct server, so the checker has no false
//! positives: error replies are always accepted (a command may be missing
//! from the engine), and shapes are checked only for commands whose every
//! success reply has one shape.

use seedkv_engine::resp::Frame;

use super::name_buffer::NameBuffer;
use super::{Checker, RunFacts, Violation};
use crate::fxhash::FxHashMap;
use crate::history::{ConnId, History};
use crate::workload::PREFIXED_NAMESPACES;

pub struct PipelineOrder;

const NAME: &str = "pipeline-order";

fn violation(message: String) -> Result<(), Violation> {
    Err(Violation {
        checker: NAME,
        message,
    })
}

impl Checker for PipelineOrder {
    fn name(&self) -> &'static str {
        NAME
    }

    fn check(&self, history: &History, _facts: &RunFacts) -> Result<(), Violation> {
        for conn in &history.conns {
            if let Some((at, reason)) = &conn.closed {
                if reason.starts_with("client: unexpected reply")
                    || reason.starts_with("client: invalid reply stream")
                {
                    return violation(format!(
                        "conn {} (client {}) at {} ns: {}",
                        conn.conn, conn.client, at, reason
                    ));
                }
            }
        }
        // Executions per connection, by request index (looked up, never
        // walked in order).
        let mut executed: FxHashMap<ConnId, Vec<u64>> = FxHashMap::default();
        for e in &history.executions {
            // A script's calls are recorded under the script's own index.
            if e.in_exec != Some(e.seq_in_conn) {
                executed.entry(e.conn).or_default().push(e.seq_in_conn);
            }
        }
        for seqs in executed.values_mut() {
            seqs.sort_unstable();
        }
        let silenced = crate::reply_mode::silenced(history);
        let by_conn = history.ops_by_conn();
        let empty = Vec::new();
        let op_at = |i: u32| &history.ops[i as usize];
        for positions in by_conn.chunk_by(|&a, &b| op_at(a).conn == op_at(b).conn) {
            let conn = &op_at(positions[0]).conn;
            let ops = positions
                .iter()
                .map(|&i| (silenced.contains(i as usize), op_at(i)));
            let seqs = executed.get(conn).unwrap_or(&empty);
            if let Some(w) = seqs.windows(2).find(|w| w[0] == w[1]) {
                return violation(format!("conn {conn}: request {} executed twice", w[0]));
            }
            if let Some(&last) = seqs.last() {
                if last >= positions.len() as u64 {
                    return violation(format!(
                        "conn {conn}: the engine executed request #{last} but only {} were sent",
                        positions.len()
                    ));
                }
            }
            let mut answered_prefix = true;
            let mut last_complete_ns = 0;
            // Between MULTI and EXEC/DISCARD a request may be answered
            // +QUEUED, and runs only if EXEC does.
            let mut in_multi = false;
            for (i, (silenced, op)) in ops.enumerate() {
                let queued = in_multi
                    && matches!(&op.complete, Some((_, Frame::Simple(s))) if s == b"QUEUED");
                // Compared in place, gated by length: every request comes here.
                let name = op.args[0].as_slice();
                match name.len() {
                    5 if name.eq_ignore_ascii_case(b"MULTI") => in_multi = true,
                    4 | 5 | 7
                        if name.eq_ignore_ascii_case(b"EXEC")
                            || name.eq_ignore_ascii_case(b"DISCARD")
                            || name.eq_ignore_ascii_case(b"RESET") =>
                    {
                        in_multi = false
                    }
                    _ => {}
                }
                if op.seq_in_conn != i as u64 {
                    return violation(format!(
                        "conn {conn}: request #{i} recorded with index {}",
                        op.seq_in_conn
                    ));
                }
                if silenced {
                    // CLIENT REPLY dropped its reply: none may come.
                    if let Some((_, reply)) = &op.complete {
                        return violation(format!(
                            "conn {conn}: request #{i} ({}) got a reply ({}) that CLIENT REPLY \
                             suppressed",
                            render_args(&op.args),
                            crate::world::frame_summary(reply)
                        ));
                    }
                    continue;
                }
                let Some((complete_ns, reply)) = &op.complete else {
                    answered_prefix = false;
                    continue;
                };
                if !answered_prefix {
                    return violation(format!(
                        "conn {conn}: request #{i} answered after an earlier one was not"
                    ));
                }
                if *complete_ns < last_complete_ns {
                    return violation(format!("conn {conn}: request #{i} answered out of order"));
                }
                last_complete_ns = *complete_ns;
                if queued {
                    continue;
                }
                if seqs.binary_search(&(i as u64)).is_err() {
                    return violation(format!(
                        "conn {conn}: request #{i} ({}) got a reply ({}) but the engine never \
                         executed it: an extra or misrouted reply",
                        render_args(&op.args),
                        crate::world::frame_summary(reply)
                    ));
                }
                if let Err(why) = reply_plausible(&op.args, reply) {
                    return violation(format!(
                        "conn {conn}: request #{i} ({}) got a reply that cannot be its own: {} ({why})",
                        render_args(&op.args),
                        crate::world::frame_summary(reply)
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The request as a short string for messages.
pub fn render_args(args: &[Vec<u8>]) -> String {
    let mut s = String::new();
    for (i, a) in args.iter().enumerate() {
        if i == 6 {
            s.push_str(&format!(" ...(+{})", args.len() - 6));
            break;
        }
        if i > 0 {
            s.push(' ');
        }
        s.push_str(&String::from_utf8_lossy(&a[..a.len().min(40)]));
    }
    s
}

fn has_flag(args: &[Vec<u8>], flag: &[u8]) -> bool {
    args.iter().skip(3).any(|a| a.eq_ignore_ascii_case(flag))
}

/// Whether `value`, read from `key`, could have been written there.
fn value_fits_key(key: &[u8], value: &[u8]) -> Result<(), String> {
    if PREFIXED_NAMESPACES.iter().any(|ns| key.starts_with(ns)) {
        let fits = value.len() > key.len() && value.starts_with(key) && value[key.len()] == b'|';
        if !fits {
            return Err(format!(
                "value {:?} was never written to key {:?}",
                String::from_utf8_lossy(&value[..value.len().min(60)]),
                String::from_utf8_lossy(key)
            ));
        }
    } else if key.starts_with(b"ctr:") && parse_i64(value).is_none() {
        return Err("a counter holds a non-integer".into());
    }
    Ok(())
}

pub fn parse_i64(bytes: &[u8]) -> Option<i64> {
    std::str::from_utf8(bytes).ok()?.parse().ok()
}

fn integer_in(reply: &Frame, lo: i64, hi: i64) -> Result<(), String> {
    match reply {
        Frame::Integer(n) if (lo..=hi).contains(n) => Ok(()),
        Frame::Integer(n) => Err(format!("integer {n} outside {lo}..={hi}")),
        _ => Err("expected an integer".into()),
    }
}

/// Whether `reply` could be a correct server's reply to `args`.
pub fn reply_plausible(args: &[Vec<u8>], reply: &Frame) -> Result<(), String> {
    if matches!(reply, Frame::Error(_)) {
        return Ok(());
    }
    let mut name_buffer = NameBuffer::default();
    let keys_count = args.len() as i64 - 1;
    match name_buffer.upper(&args[0]) {
        b"PING" => match (args.len(), reply) {
            (1, Frame::Simple(s)) if s == b"PONG" => Ok(()),
            (2, Frame::Bulk(b)) if *b == args[1] => Ok(()),
            _ => Err("not this PING's answer".into()),
        },
        b"ECHO" => match reply {
            Frame::Bulk(b) if args.len() == 2 && *b == args[1] => Ok(()),
            _ => Err("not this ECHO's answer".into()),
        },
        b"GET" => match reply {
            Frame::Null => Ok(()),
            Frame::Bulk(v) => value_fits_key(&args[1], v),
            _ => Err("expected a bulk string or nil".into()),
        },
        b"SET" if has_flag(args, b"GET") => match reply {
            Frame::Null => Ok(()),
            Frame::Bulk(v) => value_fits_key(&args[1], v),
            _ => Err("expected a bulk string or nil".into()),
        },
        b"SET" => match reply {
            Frame::Simple(s) if s == b"OK" => Ok(()),
            Frame::Null if has_flag(args, b"NX") || has_flag(args, b"XX") => Ok(()),
            _ => Err("expected OK".into()),
        },
        b"MSET" => match reply {
            Frame::Simple(s) if s == b"OK" => Ok(()),
            _ => Err("expected OK".into()),
        },
        b"MGET" => match reply {
            Frame::Array(items) if items.len() as i64 == keys_count => {
                for (key, item) in args[1..].iter().zip(items) {
                    match item {
                        Frame::Null => {}
                        Frame::Bulk(v) => value_fits_key(key, v)?,
                        _ => return Err("MGET element not a bulk string or nil".into()),
                    }
                }
                Ok(())
            }
            _ => Err(format!("expected an array of {keys_count}")),
        },
        b"DEL" | b"UNLINK" | b"EXISTS" => integer_in(reply, 0, keys_count),
        b"INCR" | b"DECR" | b"INCRBY" | b"DECRBY" | b"DBSIZE" => {
            integer_in(reply, i64::MIN, i64::MAX)
        }
        // APPEND of an empty value to an absent key replies 0.
        b"APPEND" => integer_in(reply, 0, i64::MAX),
        b"EXPIRE" | b"PEXPIRE" | b"PERSIST" => integer_in(reply, 0, 1),
        b"TTL" | b"PTTL" => integer_in(reply, -2, i64::MAX),
        b"KEYS" => match reply {
            Frame::Array(items) => {
                // A literal prefix then `*`: no other glob syntax in it.
                let prefix = args[1]
                    .strip_suffix(b"*")
                    .filter(|p| !p.iter().any(|b| matches!(b, b'*' | b'?' | b'[' | b'\\')));
                for item in items {
                    match item {
                        Frame::Bulk(k) => {
                            if let Some(p) = prefix {
                                if !k.starts_with(p) {
                                    return Err("KEYS returned a key outside its pattern".into());
                                }
                            }
                        }
                        _ => return Err("KEYS element not a bulk string".into()),
                    }
                }
                Ok(())
            }
            _ => Err("expected an array".into()),
        },
        b"SCAN" => match reply {
            Frame::Array(items) if items.len() == 2 => {
                match &items[0] {
                    Frame::Bulk(c) if parse_u64(c).is_some() => {}
                    _ => return Err("SCAN cursor is not a number".into()),
                }
                let Frame::Array(keys) = &items[1] else {
                    return Err("SCAN keys not an array".into());
                };
                let pattern = args
                    .iter()
                    .position(|a| a.eq_ignore_ascii_case(b"MATCH"))
                    .and_then(|i| args.get(i + 1));
                let prefix = pattern
                    .and_then(|p| p.strip_suffix(b"*"))
                    .filter(|p| !p.iter().any(|b| matches!(b, b'*' | b'?' | b'[' | b'\\')));
                for k in keys {
                    match k {
                        Frame::Bulk(k) => {
                            if let Some(p) = prefix {
                                if !k.starts_with(p) {
                                    return Err(
                                        "SCAN MATCH returned a key outside the pattern".into()
                                    );
                                }
                            }
                        }
                        _ => return Err("SCAN key not a bulk string".into()),
                    }
                }
                Ok(())
            }
            _ => Err("expected [cursor, keys]".into()),
        },
        _ => Ok(()),
    }
}

fn parse_u64(bytes: &[u8]) -> Option<u64> {
    std::str::from_utf8(bytes).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Conn, Execution, Op};

    fn req(parts: &[&str]) -> Vec<Vec<u8>> {
        parts.iter().map(|p| p.as_bytes().to_vec()).collect()
    }

    fn op(conn: u64, seq: u64, args: &[&str], reply: Option<Frame>) -> Op {
        Op {
            client: 0,
            conn,
            seq_in_conn: seq,
            args: req(args),
            workload: "test",
            invoke_ns: 10 * seq,
            complete: reply.map(|r| (10 * seq + 5, r)),
        }
    }

    fn exec(conn: u64, seq: u64) -> Execution {
        Execution {
            conn,
            seq_in_conn: seq,
            start_ns: 0,
            end_ns: 0,
            unix_ms: 0,
            name: "x",
            flags: 0,
            work_units: 1,
            in_exec: None,
            sizes: None,
        }
    }

    fn history(ops: Vec<Op>, execs: Vec<Execution>) -> History {
        History {
            ops,
            executions: execs,
            conns: vec![Conn {
                conn: 1,
                client: 0,
                opened_ns: 0,
                closed: None,
            }],
            received: vec![],
            faults_end_ns: 0,
            pubsub: Default::default(),
            tracking: Default::default(),
            end_ns: 1000,
            persist: None,
            thread_busy_spans: Vec::new(),
            key_removals: Vec::new(),
            script_runs: Vec::new(),
            reply_slices: Vec::new(),
            slice_waits: Vec::new(),
            ..History::default()
        }
    }

    #[test]
    fn accepts_a_well_formed_pipeline() {
        let h = history(
            vec![
                op(1, 0, &["PING", "t1"], Some(Frame::Bulk(b"t1".to_vec()))),
                op(1, 1, &["INCR", "ctr:0"], Some(Frame::Integer(1))),
                op(
                    1,
                    2,
                    &["GET", "kv:1"],
                    Some(Frame::Bulk(b"kv:1|s0.1".to_vec())),
                ),
                op(1, 3, &["GET", "kv:1"], None),
            ],
            vec![exec(1, 0), exec(1, 1), exec(1, 2)],
        );
        assert_eq!(PipelineOrder.check(&h, &RunFacts::default()), Ok(()));
    }

    #[test]
    fn catches_a_shifted_reply() {
        // The reply to PING t1 was lost: INCR got PING's token.
        let h = history(
            vec![
                op(1, 0, &["INCR", "ctr:0"], Some(Frame::Bulk(b"t1".to_vec()))),
                op(1, 1, &["PING", "t1"], None),
            ],
            vec![exec(1, 0), exec(1, 1)],
        );
        assert!(PipelineOrder.check(&h, &RunFacts::default()).is_err());
    }

    #[test]
    fn catches_another_keys_value_and_a_wrong_token() {
        let h = history(
            vec![op(
                1,
                0,
                &["GET", "kv:1"],
                Some(Frame::Bulk(b"kv:2|s0.1".to_vec())),
            )],
            vec![exec(1, 0)],
        );
        assert!(PipelineOrder.check(&h, &RunFacts::default()).is_err());
        let h = history(
            vec![op(1, 0, &["PING", "a"], Some(Frame::Bulk(b"b".to_vec())))],
            vec![exec(1, 0)],
        );
        assert!(PipelineOrder.check(&h, &RunFacts::default()).is_err());
    }

    #[test]
    fn catches_a_reply_for_a_request_never_executed() {
        let h = history(
            vec![op(
                1,
                0,
                &["SET", "kv:1", "kv:1|x"],
                Some(Frame::Simple(b"OK".to_vec())),
            )],
            vec![],
        );
        assert!(PipelineOrder.check(&h, &RunFacts::default()).is_err());
    }

    #[test]
    fn catches_an_unexpected_reply() {
        let mut h = history(vec![], vec![]);
        h.conns[0].closed = Some((5, "client: unexpected reply Integer(3)".into()));
        assert!(PipelineOrder.check(&h, &RunFacts::default()).is_err());
    }

    #[test]
    fn errors_are_always_plausible() {
        let e = Frame::Error(b"ERR unknown command".to_vec());
        assert!(reply_plausible(&req(&["INCR", "x"]), &e).is_ok());
    }
}
