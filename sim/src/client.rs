//! A simulated client: runs one workload over one connection at a time,
//! matches replies to requests first-in first-out (as every Redis client
//! does), records each request in the history, and reconnects after its
//! connection dies.

use std::collections::VecDeque;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use seedkv_engine::resp::{Frame, FrameDecoder};

use crate::history::ClientIndex;
use crate::net::NetKnobs;
use crate::workload::{Request, Workload};

/// Slow readers read this many bytes per read at least / at most.
pub const SLOW_READ_BYTES_MIN: usize = 512;
pub const SLOW_READ_BYTES_MAX: usize = 8192;
/// Slow readers wait this long between reads at most.
pub const SLOW_READ_INTERVAL_NS_MAX: u64 = 2_000_000;
/// Pause before reconnecting after a connection died.
pub const RECONNECT_NS: u64 = 1_000_000;

/// A client that reads its socket only now and then, a little at a time.
#[derive(Clone, Copy, Debug)]
pub struct SlowReader {
    pub read_bytes_max: usize,
    pub interval_ns: u64,
}

impl SlowReader {
    /// Draws whether a client is a slow reader, and how slow.
    pub fn draw(rng: &mut ChaCha8Rng, net: &NetKnobs) -> Option<SlowReader> {
        if rng.gen_range(0..1000) >= net.slow_reader_per_mille {
            return None;
        }
        Some(SlowReader {
            read_bytes_max: rng.gen_range(SLOW_READ_BYTES_MIN..=SLOW_READ_BYTES_MAX),
            interval_ns: rng.gen_range(100_000..=SLOW_READ_INTERVAL_NS_MAX),
        })
    }
}

pub struct SimClient {
    pub index: ClientIndex,
    pub workload: Box<dyn Workload>,
    /// The client's own workload stream.
    pub rng: ChaCha8Rng,
    /// The engine id of the current connection, if connected.
    pub conn: Option<u64>,
    pub decoder: FrameDecoder,
    /// History indices of requests awaiting replies, oldest first.
    pub outstanding: VecDeque<usize>,
    /// For each of `outstanding`, the frames its reply is made of (see
    /// `Workload::reply_frames`), and the frames of the oldest's reply
    /// received so far.
    pub reply_frames: VecDeque<usize>,
    pub reply_parts: Vec<Frame>,
    /// Index of the next request on the current connection.
    pub seq_next: u64,
    /// Requests this client may still send.
    pub ops_left: u64,
    pub slow_reader: Option<SlowReader>,
    /// Whether a slow read is scheduled.
    pub read_scheduled: bool,
    /// Bumped whenever a scheduled wake-up becomes stale.
    pub wake_gen: u64,
    /// Finished: budget spent and every reply in.
    pub done: bool,
    /// Scratch for building a batch (kept to avoid reallocating).
    pub batch: Vec<Request>,
}

impl SimClient {
    pub fn new(
        index: ClientIndex,
        workload: Box<dyn Workload>,
        rng: ChaCha8Rng,
        ops_left: u64,
        slow_reader: Option<SlowReader>,
    ) -> SimClient {
        SimClient {
            index,
            workload,
            rng,
            conn: None,
            decoder: FrameDecoder::new(),
            outstanding: VecDeque::new(),
            reply_frames: VecDeque::new(),
            reply_parts: Vec::new(),
            seq_next: 0,
            ops_left,
            slow_reader,
            read_scheduled: false,
            wake_gen: 0,
            done: false,
            batch: Vec::new(),
        }
    }

    /// The connection is gone: forget it. The caller reports the requests
    /// still outstanding to the workload.
    pub fn drop_conn(&mut self) {
        self.conn = None;
        self.decoder = FrameDecoder::new();
        self.reply_frames.clear();
        self.reply_parts.clear();
        self.seq_next = 0;
        self.read_scheduled = false;
        self.wake_gen += 1;
    }
}

/// Appends `request` in RESP multibulk form to `out`.
pub fn encode_request_into(out: &mut Vec<u8>, request: &Request) {
    fn header(out: &mut Vec<u8>, prefix: u8, n: usize) {
        // Most counts and lengths have one or two digits: one append.
        if n < 10 {
            out.extend_from_slice(&[prefix, b'0' + n as u8, b'\r', b'\n']);
            return;
        }
        if n < 100 {
            let (tens, ones) = (b'0' + (n / 10) as u8, b'0' + (n % 10) as u8);
            out.extend_from_slice(&[prefix, tens, ones, b'\r', b'\n']);
            return;
        }
        out.push(prefix);
        let mut buf = [0u8; 20];
        let mut i = buf.len();
        let mut v = n;
        loop {
            i -= 1;
            buf[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        out.extend_from_slice(&buf[i..]);
        out.extend_from_slice(b"\r\n");
    }
    header(out, b'*', request.len());
    for arg in request {
        header(out, b'$', arg.len());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_like_the_engine_encoder() {
        // Lengths of one, two, three and more digits.
        for len in [0, 1, 9, 10, 42, 99, 100, 999, 1000, 123_456] {
            let mut req: Request = vec![b"SET".to_vec(), b"k".to_vec(), vec![b'v'; len]];
            req.extend((0..len % 13).map(|i| vec![b'x'; i]));
            let mut out = Vec::new();
            encode_request_into(&mut out, &req);
            let parts: Vec<&[u8]> = req.iter().map(|a| a.as_slice()).collect();
            assert_eq!(out, seedkv_engine::resp::encode::encode_request(&parts));
        }
    }
}
