//! The two scripted clients of the head-of-line latency report: a prober
//! that sends PING back to back, and an operator that fills the database,
//! then runs the heavy operations one after the other with quiet gaps
//! between them.
//!
//! They are ordinary [`Workload`]s driven by the simulator's world, so every
//! byte goes through the same network, CPU and cost model as a sweep. The
//! scripts do not know the virtual time: the report reconstructs every
//! window afterwards from the recorded history and the pause constants
//! below, which are the only timing the operator decides.

use std::cell::Cell;
use std::rc::Rc;

use rand_chacha::ChaCha8Rng;
use seedkv_engine::resp::Frame;

use crate::workload::{Request, Workload, WorkloadKind, BATCH_REQUESTS_MAX};

/// Keys per MSET and fields per HSET while filling: large enough that the
/// fill is quick, small enough that one request is a short CPU turn.
pub const FILL_ELEMENTS_PER_REQUEST: u64 = 1_000;
/// Fill requests sent as one pipeline.
pub const FILL_PIPELINE_DEPTH: u64 = 8;
/// COUNT of every SCAN call (the seed's figure).
pub const SCAN_COUNT: u64 = 1_000;
/// Quiet time between two measured windows, so that no PING overlaps two.
pub const GAP_NS: u64 = 100_000_000;
/// Length of the idle window, and the shortest window of any operation:
/// an operation that returns at once (UNLINK) is still watched for this
/// long, which covers the background free it started.
pub const WINDOW_NS_MIN: u64 = 1_000_000_000;
/// The big hash's key; outside the `k:` namespace, so `KEYS k:1*` skips it.
pub const HASH_KEY: &[u8] = b"bighash";

/// The key of the `i`th filled string key.
pub fn string_key(i: u64) -> Vec<u8> {
    format!("k:{i}").into_bytes()
}

/// What the operator does, in order. The report recognises each step in
/// the history by its command name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    FillKeys,
    FillHash,
    /// DBSIZE and HLEN, then the idle window.
    CheckFilled,
    KeysPrefix,
    KeysAll,
    Scan,
    Del,
    RefillHash,
    /// DBSIZE and HLEN again before UNLINK.
    CheckRefilled,
    Unlink,
    /// DBSIZE and EXISTS: the hash is gone, the keys are all there.
    CheckEnd,
    Done,
}

/// The operator: fills `keys_count` keys `k:<i>` and a `hash_fields_count`
/// field hash, then runs the measured operations.
pub struct Operator {
    keys_count: u64,
    hash_fields_count: u64,
    step: Step,
    /// Elements of the current fill sent so far.
    filled: u64,
    /// The cursor of the next SCAN call (`None`: the iteration is over).
    scan_cursor: Option<Vec<u8>>,
    scan_calls: u64,
    /// Pause after the batch in flight.
    pause_ns: u64,
    /// Set with the last batch; the prober stops with it.
    done: Rc<Cell<bool>>,
}

impl Operator {
    /// An operator and the flag it raises when its script is over.
    pub fn new(keys_count: u64, hash_fields_count: u64) -> (Operator, Rc<Cell<bool>>) {
        assert!(keys_count > 0 && hash_fields_count > 0);
        let done = Rc::new(Cell::new(false));
        let operator = Operator {
            keys_count,
            hash_fields_count,
            step: Step::FillKeys,
            filled: 0,
            scan_cursor: Some(b"0".to_vec()),
            scan_calls: 0,
            pause_ns: 0,
            done: Rc::clone(&done),
        };
        (operator, done)
    }

    /// SCAN calls at most: a full iteration over a table of `n` keys takes
    /// about n / COUNT calls; this bound only stops a broken cursor.
    fn scan_calls_max(&self) -> u64 {
        4 * (self.keys_count + 1) / SCAN_COUNT + 1_000
    }

    /// Appends up to [`FILL_PIPELINE_DEPTH`] MSETs or HSETs; returns whether
    /// the fill is complete.
    fn fill(&mut self, batch: &mut Vec<Request>, hash: bool) -> bool {
        let total = if hash {
            self.hash_fields_count
        } else {
            self.keys_count
        };
        for _ in 0..FILL_PIPELINE_DEPTH {
            if self.filled == total {
                break;
            }
            let n = FILL_ELEMENTS_PER_REQUEST.min(total - self.filled);
            let mut request = Vec::with_capacity(2 + 2 * n as usize);
            if hash {
                request.push(b"HSET".to_vec());
                request.push(HASH_KEY.to_vec());
            } else {
                request.push(b"MSET".to_vec());
            }
            for i in self.filled..self.filled + n {
                if hash {
                    request.push(format!("f:{i}").into_bytes());
                } else {
                    request.push(string_key(i));
                }
                request.push(format!("v:{i}").into_bytes());
            }
            self.filled += n;
            batch.push(request);
        }
        debug_assert!(batch.len() <= BATCH_REQUESTS_MAX);
        if self.filled == total {
            self.filled = 0;
            return true;
        }
        false
    }
}

fn req(parts: &[&[u8]]) -> Request {
    parts.iter().map(|p| p.to_vec()).collect()
}

impl Workload for Operator {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Big
    }

    fn next_batch(&mut self, _rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        let measured_pause_ns = WINDOW_NS_MIN + GAP_NS;
        self.pause_ns = 0;
        match self.step {
            Step::FillKeys => {
                if self.fill(batch, false) {
                    self.step = Step::FillHash;
                }
            }
            Step::FillHash | Step::RefillHash => {
                if self.fill(batch, true) {
                    self.step = if self.step == Step::FillHash {
                        Step::CheckFilled
                    } else {
                        Step::CheckRefilled
                    };
                }
            }
            Step::CheckFilled => {
                batch.push(req(&[b"DBSIZE"]));
                batch.push(req(&[b"HLEN", HASH_KEY]));
                // A gap, the idle window, and a gap before the first KEYS.
                self.pause_ns = GAP_NS + WINDOW_NS_MIN + GAP_NS;
                self.step = Step::KeysPrefix;
            }
            Step::KeysPrefix => {
                batch.push(req(&[b"KEYS", b"k:1*"]));
                self.pause_ns = measured_pause_ns;
                self.step = Step::KeysAll;
            }
            Step::KeysAll => {
                batch.push(req(&[b"KEYS", b"*"]));
                self.pause_ns = measured_pause_ns;
                self.step = Step::Scan;
            }
            Step::Scan => {
                let cursor = self.scan_cursor.clone().unwrap_or_else(|| b"0".to_vec());
                let count = SCAN_COUNT.to_string().into_bytes();
                batch.push(vec![b"SCAN".to_vec(), cursor, b"COUNT".to_vec(), count]);
                self.scan_calls += 1;
                // The step moves on in `on_reply`, when the cursor is 0.
            }
            Step::Del => {
                batch.push(req(&[b"DEL", HASH_KEY]));
                self.pause_ns = measured_pause_ns;
                self.step = Step::RefillHash;
            }
            Step::CheckRefilled => {
                batch.push(req(&[b"DBSIZE"]));
                batch.push(req(&[b"HLEN", HASH_KEY]));
                self.pause_ns = GAP_NS;
                self.step = Step::Unlink;
            }
            Step::Unlink => {
                batch.push(req(&[b"UNLINK", HASH_KEY]));
                self.pause_ns = measured_pause_ns;
                self.step = Step::CheckEnd;
            }
            Step::CheckEnd | Step::Done => {
                batch.push(req(&[b"DBSIZE"]));
                batch.push(req(&[b"EXISTS", HASH_KEY]));
                self.step = Step::Done;
                self.done.set(true);
            }
        }
    }

    fn on_reply(&mut self, request: &Request, reply: Option<&Frame>) {
        if request.first().map(Vec::as_slice) != Some(b"SCAN".as_slice()) {
            return;
        }
        // A reply that is not [cursor, keys] ends the iteration: the report
        // counts it as an error and refuses to print figures.
        let next = match reply {
            Some(Frame::Array(items)) => match items.first() {
                Some(Frame::Bulk(cursor)) if cursor.as_slice() != b"0" => Some(cursor.clone()),
                _ => None,
            },
            _ => None,
        };
        if next.is_none() || self.scan_calls >= self.scan_calls_max() {
            self.scan_cursor = None;
            self.step = Step::Del;
            self.pause_ns = WINDOW_NS_MIN + GAP_NS;
        } else {
            self.scan_cursor = next;
        }
    }

    fn think_ns(&mut self, _rng: &mut ChaCha8Rng) -> u64 {
        self.pause_ns
    }

    fn finished(&self) -> bool {
        self.done.get()
    }
}

/// The prober: one PING at a time, the next sent as soon as the reply is
/// in (`redis-cli --latency` without its sleep), until the operator is done.
pub struct Prober {
    operator_done: Rc<Cell<bool>>,
}

impl Prober {
    pub fn new(operator_done: Rc<Cell<bool>>) -> Prober {
        Prober { operator_done }
    }
}

impl Workload for Prober {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Ping
    }

    fn next_batch(&mut self, _rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        batch.push(req(&[b"PING"]));
    }

    fn think_ns(&mut self, _rng: &mut ChaCha8Rng) -> u64 {
        0
    }

    fn finished(&self) -> bool {
        self.operator_done.get()
    }
}
