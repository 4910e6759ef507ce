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
        // Compared in place: every request of a run comes here, and a
        // lowercased copy of each word was most of this function's cost.
        let word_is = |i: usize, w: &[u8]| args.get(i).is_some_and(|a| a.eq_ignore_ascii_case(w));
        let mut replies = true;
        if word_is(0, b"client") && args.len() == 3 && word_is(1, b"reply") {
            if word_is(2, b"on") {
                *self = ReplyState::default();
            } else if word_is(2, b"off") {
                self.off = true;
                replies = false;
            } else if word_is(2, b"skip") {
                self.skip_next |= !self.off;
                replies = false;
            }
            // Anything else is a syntax error, answered unless suppressed.
        } else if word_is(0, b"reset") && args.len() == 1 {
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

/// The requests CLIENT REPLY silenced, by index in `history.ops`.
pub struct Silenced<'a>(std::borrow::Cow<'a, [u32]>);

impl Silenced<'_> {
    /// Whether the op at `index` in `history.ops` was silenced.
    pub fn contains(&self, index: usize) -> bool {
        !self.0.is_empty() && u32::try_from(index).is_ok_and(|i| self.0.binary_search(&i).is_ok())
    }
}

/// The requests CLIENT REPLY silenced, found once per history.
pub fn silenced(history: &History) -> Silenced<'_> {
    Silenced(history.silenced_cached(find_silenced))
}

/// The positions in `history.ops` of the silenced requests, ascending.
fn find_silenced(history: &History) -> Vec<u32> {
    let sends_client_reply = history.ops.iter().any(|op| {
        op.args.len() == 3
            && op.args[0].eq_ignore_ascii_case(b"client")
            && op.args[1].eq_ignore_ascii_case(b"reply")
    });
    if !sends_client_reply {
        return Vec::new();
    }
    let order = history.ops_in_conn_order();
    let mut silenced = Vec::new();
    for indices in
        order.chunk_by(|&a, &b| history.ops[a as usize].conn == history.ops[b as usize].conn)
    {
        let mut state = ReplyState::default();
        for &i in indices {
            if !state.request(&history.ops[i as usize].args) {
                silenced.push(i);
            }
        }
    }
    silenced.sort_unstable();
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
