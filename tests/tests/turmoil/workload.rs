//! The clients' workload and its checks: seeded SETs, GETs, INCRs,
//! pipelines and abandoned connections, each reply checked as it arrives,
//! then a read-back of every key.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use super::conn::{encode, Conn};

pub(super) const CLIENTS: usize = 4;
const OPS_PER_CLIENT: usize = 120;
const KEYS_PER_CLIENT: u64 = 6;

/// splitmix64: the clients' and the fault schedule's deterministic choices.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What one client knows about its own keys (no other client writes them).
#[derive(Default)]
struct KeyState {
    /// The last write acknowledged with +OK.
    acked_seq: Option<u64>,
    /// Every acknowledged write.
    acked_all: Vec<u64>,
    /// The highest write sent.
    sent_seq: Option<u64>,
}

impl KeyState {
    /// Whether a read of `reply` is allowed: nothing was ever acknowledged
    /// and nothing or nil was written, or the value is the last acknowledged
    /// one, or a value that was sent but never acknowledged.
    fn check_read(&self, key: &str, reply: &str) -> Result<(), String> {
        if reply == "$nil" {
            return match self.acked_seq {
                None => Ok(()),
                Some(s) => Err(format!("{key} lost its acknowledged write {s}: read nil")),
            };
        }
        let seq: u64 = reply
            .strip_prefix(&format!("${key}="))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("{key}: unexpected value {reply}"))?;
        if self.sent_seq.is_none_or(|sent| seq > sent) {
            return Err(format!("{key}: read {seq}, which was never sent"));
        }
        match self.acked_seq {
            Some(acked) if seq != acked && self.acked_all.contains(&seq) => Err(format!(
                "{key}: read {seq}, overwritten by acknowledged {acked}: an acknowledged write was lost"
            )),
            _ => Ok(()),
        }
    }
}

#[derive(Default)]
struct ClientState {
    keys: BTreeMap<String, KeyState>,
    incr_sent: i64,
    incr_acked_max: i64,
    next_seq: u64,
}

impl ClientState {
    fn check_incr(&mut self, reply: &str) -> Result<(), String> {
        let v: i64 = reply
            .strip_prefix(':')
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("INCR replied {reply}"))?;
        if v <= self.incr_acked_max || v > self.incr_sent {
            return Err(format!(
                "INCR replied {v}: acknowledged max {}, sent {}",
                self.incr_acked_max, self.incr_sent
            ));
        }
        self.incr_acked_max = v;
        Ok(())
    }
}

pub(super) type Trace = Rc<RefCell<Vec<String>>>;

fn log(trace: &Trace, who: usize, what: String) {
    let ms = turmoil::elapsed().as_millis();
    trace.borrow_mut().push(format!("{ms:>6} c{who} {what}"));
}

/// One client's run: `OPS_PER_CLIENT` operations, reconnecting after every
/// timeout, then a final read-back of every key over a fresh connection.
pub(super) async fn client(who: usize, seed: u64, trace: Trace) -> Result<(), String> {
    let mut rng = Rng(seed ^ (who as u64 + 1).wrapping_mul(0x5851_f42d_4c95_7f2d));
    let mut st = ClientState::default();
    let ctr = format!("c{who}:ctr");
    let mut conn: Option<Conn> = None;
    for op in 0..OPS_PER_CLIENT {
        // Think time spreads the run over the fault window.
        tokio::time::sleep(Duration::from_millis(rng.below(40))).await;
        if conn.is_none() {
            conn = Conn::open().await;
            if conn.is_none() {
                log(&trace, who, format!("#{op} connect timed out"));
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        }
        let c = conn.as_mut().expect("connected above");
        let key = format!("c{who}:k{}", rng.below(KEYS_PER_CLIENT));
        let kind = rng.below(10);
        let seq = st.next_seq;
        st.next_seq += 1;
        let value = format!("{key}={seq}");
        let (requests, what): (Vec<Vec<u8>>, &str) = match kind {
            0..=3 => (vec![encode(&["SET", &key, &value])], "set"),
            4..=5 => (vec![encode(&["GET", &key])], "get"),
            6 => (vec![encode(&["INCR", &ctr])], "incr"),
            7..=8 => (
                vec![
                    encode(&["SET", &key, &value]),
                    encode(&["GET", &key]),
                    encode(&["INCR", &ctr]),
                    encode(&["PING"]),
                ],
                "pipeline",
            ),
            _ => (vec![encode(&["SET", &key, &value])], "set-and-drop"),
        };
        let writes = matches!(what, "set" | "pipeline" | "set-and-drop");
        if writes {
            st.keys.entry(key.clone()).or_default().sent_seq = Some(seq);
        }
        if matches!(what, "incr" | "pipeline") {
            st.incr_sent += 1;
        }
        if what == "set-and-drop" {
            // The connection goes away before the reply: the write may or
            // may not have happened, and the server must cope.
            let sent = c.send(&requests).await;
            log(
                &trace,
                who,
                format!("#{op} SET {key} {seq} then drop (sent {sent})"),
            );
            conn = None;
            continue;
        }
        let Some(replies) = c.call(&requests).await else {
            log(
                &trace,
                who,
                format!("#{op} {what} {key} {seq}: no reply, reconnect"),
            );
            conn = None;
            continue;
        };
        log(
            &trace,
            who,
            format!("#{op} {what} {key} {seq} -> {replies:?}"),
        );
        let ks = st.keys.entry(key.clone()).or_default();
        let check = match what {
            "set" => expect_ok(&replies[0]).map(|()| ack(ks, seq)),
            "get" => ks.check_read(&key, &replies[0]),
            "incr" => st.check_incr(&replies[0]),
            _ => {
                // A pipeline: in order, and the GET sees the SET just before
                // it on the same connection.
                let r = expect_ok(&replies[0]).map(|()| ack(ks, seq));
                let want = format!("${value}");
                let r = r.and_then(|()| {
                    if replies[1] == want {
                        Ok(())
                    } else {
                        Err(format!("pipeline GET {key} read {} not {want}", replies[1]))
                    }
                });
                let r = r.and_then(|()| st.check_incr(&replies[2]));
                r.and_then(|()| match replies[3].as_str() {
                    "+PONG" => Ok(()),
                    other => Err(format!("pipeline PING replied {other}")),
                })
            }
        };
        check.map_err(|e| format!("client {who} op {op}: {e}"))?;
    }
    drop(conn);
    // Read every key back over a fresh connection, retrying through the
    // faults still running for other clients' sake (they stop by 10 s).
    let mut names: Vec<&String> = st.keys.keys().collect();
    names.push(&ctr);
    let requests: Vec<Vec<u8>> = names.iter().map(|k| encode(&["GET", k])).collect();
    let mut finals = None;
    for _ in 0..READ_BACK_ATTEMPTS {
        if let Some(mut c) = Conn::open().await {
            if let Some(replies) = c.call(&requests).await {
                finals = Some(replies);
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let finals = finals.ok_or_else(|| format!("client {who}: the read-back never got through"))?;
    for ((key, ks), reply) in st.keys.iter().zip(&finals) {
        log(&trace, who, format!("final {key} -> {reply}"));
        ks.check_read(key, reply)
            .map_err(|e| format!("client {who} final read: {e}"))?;
    }
    let final_ctr: i64 = finals[finals.len() - 1]
        .strip_prefix('$')
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    log(&trace, who, format!("final {ctr} -> {final_ctr}"));
    if final_ctr < st.incr_acked_max || final_ctr > st.incr_sent {
        return Err(format!(
            "client {who}: counter {final_ctr}, acknowledged {}, sent {}",
            st.incr_acked_max, st.incr_sent
        ));
    }
    Ok(())
}

/// Tries of the final read-back, 500 ms apart: enough to outlast the faults.
const READ_BACK_ATTEMPTS: usize = 40;

fn expect_ok(reply: &str) -> Result<(), String> {
    match reply {
        "+OK" => Ok(()),
        other => Err(format!("SET replied {other}")),
    }
}

fn ack(ks: &mut KeyState, seq: u64) {
    ks.acked_seq = Some(seq);
    ks.acked_all.push(seq);
}
