//! CLIENT REPLY ON|OFF|SKIP as a client sees it: which of its requests get
//! no reply at all. The engine drops the reply of every request while
//! replies are OFF, and of the one request after a SKIP; the requests
//! CLIENT REPLY OFF and SKIP are never answered themselves; CLIENT REPLY
//! ON is, and so is a RESET under OFF (but not one that a SKIP covers).
//!
//! A workload that sends CLIENT REPLY answers 0 from
//! [`Workload::reply_frames`](crate::workload::Workload::reply_frames) for
//! the requests this says are silenced, so that the client matches the
//! replies that do come to the right requests; the pipeline-order and
//! liveness checkers ask [`silenced`] which requests are to stay
//! unanswered. Both follow each connection's requests in order, which is
//! the engine's order for one connection. A CLIENT REPLY inside MULTI
//! takes effect only at EXEC; no workload sends one there (the `rare`
//! section asserts it).

use std::collections::{BTreeMap, BTreeSet};

use crate::history::History;

/// One connection's CLIENT REPLY flags, as Redis 7.0.15 keeps them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplyState {
    off: bool,
    skip: bool,
    skip_next: bool,
}

impl ReplyState {
    /// Takes the next request sent on the connection; returns whether the
    /// server answers it.
    pub fn request(&mut self, args: &[Vec<u8>]) -> bool {
        let word = |i: usize| args.get(i).map(|a| a.to_ascii_lowercase());
        let name = word(0).unwrap_or_default();
        let mut replies = true;
        if name == b"client" && args.len() == 3 && word(1).as_deref() == Some(b"reply") {
            match word(2).as_deref() {
                Some(b"on") => *self = ReplyState::default(),
                Some(b"off") => {
                    self.off = true;
                    replies = false;
                }
                Some(b"skip") => {
                    self.skip_next |= !self.off;
                    replies = false;
                }
                // A syntax error, answered unless suppressed.
                _ => {}
            }
        } else if name == b"reset" && args.len() == 1 {
            self.off = false;
            self.skip_next = false;
        }
        let answered = replies && !self.off && !self.skip;
        self.skip = std::mem::take(&mut self.skip_next);
        answered
    }

    /// Whether every later request will be answered (no OFF, no pending
    /// SKIP): where a batch may end.
    pub fn is_on(&self) -> bool {
        *self == ReplyState::default()
    }
}

/// The indices in `history.ops` of the requests CLIENT REPLY silenced.
pub fn silenced(history: &History) -> BTreeSet<usize> {
    let sends_client_reply = history.ops.iter().any(|op| {
        op.args.len() == 3
            && op.args[0].eq_ignore_ascii_case(b"client")
            && op.args[1].eq_ignore_ascii_case(b"reply")
    });
    if !sends_client_reply {
        return BTreeSet::new();
    }
    let mut by_conn: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (i, op) in history.ops.iter().enumerate() {
        by_conn.entry(op.conn).or_default().push(i);
    }
    let mut silenced = BTreeSet::new();
    for indices in by_conn.values_mut() {
        indices.sort_by_key(|&i| history.ops[i].seq_in_conn);
        let mut state = ReplyState::default();
        for &i in indices.iter() {
            if !state.request(&history.ops[i].args) {
                silenced.insert(i);
            }
        }
    }
    silenced
}

#[cfg(test)]
mod tests {
    use super::ReplyState;

    fn answered(lines: &[&str]) -> Vec<bool> {
        let mut state = ReplyState::default();
        lines
            .iter()
            .map(|l| {
                let args: Vec<Vec<u8>> = l.split(' ').map(|a| a.as_bytes().to_vec()).collect();
                state.request(&args)
            })
            .collect()
    }

    /// The transcripts of the engine's CLIENT REPLY tests (redis-server
    /// 7.0.15).
    #[test]
    fn follows_redis_transcripts() {
        assert_eq!(
            answered(&[
                "CLIENT REPLY OFF",
                "SET k v",
                "GETX",
                "CLIENT REPLY SKIP",
                "GET k",
                "CLIENT REPLY ON",
                "GET k"
            ]),
            [false, false, false, false, false, true, true]
        );
        assert_eq!(
            answered(&["CLIENT REPLY SKIP", "CLIENT REPLY SKIP", "PING 1", "PING 2"]),
            [false, false, false, true]
        );
        assert_eq!(
            answered(&["CLIENT REPLY SKIP", "RESET", "PING 2"]),
            [false, false, true]
        );
        assert_eq!(
            answered(&["CLIENT REPLY OFF", "RESET", "PING 2"]),
            [false, true, true]
        );
        assert_eq!(
            answered(&["CLIENT REPLY bad", "CLIENT REPLY SKIP", "CLIENT REPLY bad"]),
            [true, false, false]
        );
    }
}
