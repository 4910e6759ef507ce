//! HSCAN/SSCAN/ZSCAN iterations, shared by the hash, set and sorted-set
//! workloads: one iteration at a time per client, one step per batch,
//! COUNT and MATCH varied, the cursor taken from the previous reply.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use seedkv_engine::resp::Frame;

use super::Request;

/// COUNT at most.
pub const CSCAN_COUNT_MAX: u64 = 40;

/// Key, next cursor, MATCH.
type Iteration = (Vec<u8>, Vec<u8>, Option<Vec<u8>>);

pub struct CollectionScan {
    /// `HSCAN`, `SSCAN` or `ZSCAN`.
    command: &'static [u8],
    /// The iteration under way: key, next cursor, MATCH.
    current: Option<Iteration>,
    /// A step was sent and its reply is not in yet.
    awaiting: bool,
}

impl CollectionScan {
    pub fn new(command: &'static [u8]) -> CollectionScan {
        CollectionScan {
            command,
            current: None,
            awaiting: false,
        }
    }

    /// The next step: continues the iteration under way, or starts one on
    /// `fresh_key` with patterns drawn from `patterns`. `None` while a step
    /// is in flight.
    pub fn step(
        &mut self,
        rng: &mut ChaCha8Rng,
        fresh_key: &[u8],
        patterns: &[&[u8]],
    ) -> Option<Request> {
        if self.awaiting {
            return None;
        }
        let (key, cursor, pattern) = match self.current.take() {
            Some(c) => c,
            None => {
                let pattern = (!patterns.is_empty() && rng.gen_bool(0.3))
                    .then(|| patterns[rng.gen_range(0..patterns.len())].to_vec());
                (fresh_key.to_vec(), b"0".to_vec(), pattern)
            }
        };
        let mut r = vec![self.command.to_vec(), key.clone(), cursor.clone()];
        if let Some(p) = &pattern {
            r.push(b"MATCH".to_vec());
            r.push(p.clone());
        }
        if rng.gen_bool(0.7) {
            r.push(b"COUNT".to_vec());
            r.push(rng.gen_range(1..=CSCAN_COUNT_MAX).to_string().into_bytes());
        }
        self.current = Some((key, cursor, pattern));
        self.awaiting = true;
        Some(r)
    }

    /// Whether `request` is one of this scanner's steps.
    pub fn is_step(&self, request: &Request) -> bool {
        request.first().is_some_and(|c| c == self.command)
    }

    pub fn on_reply(&mut self, reply: Option<&Frame>) {
        self.awaiting = false;
        let next = match reply {
            Some(Frame::Array(items)) if items.len() == 2 => match &items[0] {
                Frame::Bulk(c) if c != b"0" => Some(c.clone()),
                _ => None,
            },
            _ => None,
        };
        match (next, self.current.as_mut()) {
            (Some(c), Some(cur)) => cur.1 = c,
            _ => self.current = None,
        }
    }
}
