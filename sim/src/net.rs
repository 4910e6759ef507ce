//! The network model: one [`Pipe`] per direction of each connection.
//!
//! A write becomes one or more segments (fragmentation), each travelling
//! with the connection's latency plus jitter, serialised by its bandwidth,
//! arriving in order (TCP never reorders a stream). Arrival times may be
//! rounded up to a coalescing grid, so that several writes land in one read.
//! The receiver takes whatever has arrived; the server→client direction is
//! bounded by a socket buffer, so a slow reader backs output up into the
//! engine.

use std::collections::VecDeque;

use rand::Rng;

/// Segments one write is split into at most.
pub const FRAGMENT_PIECES_MAX: usize = 8;
/// Bytes the server reads from one connection per read event (Redis's
/// PROTO_IOBUF_LEN).
pub const SERVER_READ_BYTES_MAX: usize = 16 * 1024;
/// Bytes a client→server pipe may hold unread. Clients wait for replies
/// before sending more, so this is never reached by a correct simulator.
pub const CLIENT_PIPE_BYTES_MAX: usize = 64 * 1024 * 1024;
/// Segments in flight on one pipe at most (bounded by the bytes above).
pub const PIPE_SEGMENTS_MAX: usize = 1 << 20;

/// Network knobs of one run, drawn per seed within the documented ranges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetKnobs {
    /// One-way base latency: 10 µs ..= 100 µs (loopback to a LAN).
    pub latency_ns: u64,
    /// Extra uniform delay per segment: 0 ..= 2 × latency.
    pub jitter_ns_max: u64,
    /// Chance per segment of a delay spike, per million: 0 ..= 2000.
    pub spike_per_million: u32,
    /// Largest spike: 100 µs ..= 1 ms.
    pub spike_ns_max: u64,
    /// Bytes per millisecond: 100 KB/ms (100 MB/s) ..= 10 MB/ms.
    pub bandwidth_bytes_per_ms: u64,
    /// Chance that a write is fragmented, per mille: 0 ..= 600.
    pub fragment_per_mille: u32,
    /// Arrival times are rounded up to a multiple of this: 0 (off) ..=
    /// 200 µs. Rounding makes several writes arrive in one read.
    pub coalesce_grid_ns: u64,
    /// Server→client socket buffer: 4 KiB ..= 256 KiB.
    pub socket_buffer_bytes: usize,
    /// Chance that a client is a slow reader, per mille: 0 ..= 300.
    pub slow_reader_per_mille: u32,
}

impl NetKnobs {
    pub fn draw(rng: &mut impl Rng) -> NetKnobs {
        let latency_ns = rng.gen_range(10_000..=100_000);
        NetKnobs {
            latency_ns,
            jitter_ns_max: rng.gen_range(0..=2 * latency_ns),
            spike_per_million: if rng.gen_bool(0.5) {
                rng.gen_range(0..=2000)
            } else {
                0
            },
            spike_ns_max: rng.gen_range(100_000..=1_000_000),
            bandwidth_bytes_per_ms: rng.gen_range(100_000..=10_000_000),
            fragment_per_mille: if rng.gen_bool(0.7) {
                rng.gen_range(0..=600)
            } else {
                0
            },
            coalesce_grid_ns: if rng.gen_bool(0.5) {
                rng.gen_range(1..=200_000)
            } else {
                0
            },
            socket_buffer_bytes: 1 << rng.gen_range(12..=18),
            slow_reader_per_mille: if rng.gen_bool(0.5) {
                rng.gen_range(0..=300)
            } else {
                0
            },
        }
    }

    /// The longest one segment can take, excluding bandwidth queueing.
    pub fn one_way_ns_max(&self) -> u64 {
        self.latency_ns + self.jitter_ns_max + self.spike_ns_max + self.coalesce_grid_ns
    }
}

/// One direction of a connection: bytes written, in flight, and arrived.
#[derive(Debug, Default)]
pub struct Pipe {
    /// Bytes not yet read by the receiver: `data[head..]`.
    data: Vec<u8>,
    head: usize,
    /// Absolute stream offset of `data[head]`.
    read_abs: u64,
    /// Segments in flight: (arrival time, absolute end offset).
    segments: VecDeque<(u64, u64)>,
    /// Absolute end of the bytes that have arrived.
    arrived_abs: u64,
    /// Absolute end of everything written.
    written_abs: u64,
    /// When the link finishes serialising what was written so far.
    link_free_ns: u64,
    /// Latest arrival scheduled (arrivals never go back: TCP is in order).
    arrival_last_ns: u64,
    /// The writer closed the stream after this many bytes.
    fin_abs: Option<u64>,
}

impl Pipe {
    /// Queues `bytes` for delivery; returns the arrival time of the last
    /// segment. `on_segment` is called with each new arrival time.
    pub fn write(
        &mut self,
        now_ns: u64,
        bytes: &[u8],
        knobs: &NetKnobs,
        rng: &mut impl Rng,
        on_segment: impl FnMut(u64),
    ) -> u64 {
        assert!(self.fin_abs.is_none(), "write after fin");
        self.data.extend_from_slice(bytes);
        self.write_staged(now_ns, bytes.len(), knobs, rng, on_segment)
    }

    /// Where a writer appends bytes before [`Pipe::write_staged`] sends
    /// them: a client encodes its batch straight into the pipe, rather than
    /// into a scratch buffer that [`Pipe::write`] would copy again. Bytes
    /// appended here are invisible to the reader until they are written.
    pub fn stage(&mut self) -> &mut Vec<u8> {
        assert!(self.fin_abs.is_none(), "write after fin");
        &mut self.data
    }

    /// The last `len` bytes appended through [`Pipe::stage`]: queued for
    /// delivery as [`Pipe::write`] queues its bytes (same draws, same
    /// arrivals).
    pub fn write_staged(
        &mut self,
        now_ns: u64,
        len: usize,
        knobs: &NetKnobs,
        rng: &mut impl Rng,
        mut on_segment: impl FnMut(u64),
    ) -> u64 {
        assert!(self.fin_abs.is_none(), "write after fin");
        assert!(len <= self.unread_bytes() - self.readable().len());
        if len == 0 {
            return self.arrival_last_ns.max(now_ns);
        }
        let total = len;
        let mut cuts = [0usize; FRAGMENT_PIECES_MAX];
        let mut pieces = 1;
        if total > 1 && rng.gen_range(0..1000) < knobs.fragment_per_mille {
            pieces = rng.gen_range(2..=FRAGMENT_PIECES_MAX.min(total));
            for cut in cuts.iter_mut().take(pieces - 1) {
                *cut = rng.gen_range(1..total);
            }
            cuts[..pieces - 1].sort_unstable();
        }
        cuts[pieces - 1] = total;
        let mut start = 0;
        for &end in &cuts[..pieces] {
            if end <= start {
                continue;
            }
            let len = (end - start) as u64;
            let send_ns = self.link_free_ns.max(now_ns);
            self.link_free_ns = send_ns + len * 1_000_000 / knobs.bandwidth_bytes_per_ms.max(1);
            let mut arrive = self.link_free_ns + knobs.latency_ns;
            if knobs.jitter_ns_max > 0 {
                arrive += rng.gen_range(0..=knobs.jitter_ns_max);
            }
            if knobs.spike_per_million > 0 && rng.gen_range(0..1_000_000) < knobs.spike_per_million
            {
                arrive += rng.gen_range(0..=knobs.spike_ns_max);
            }
            if knobs.coalesce_grid_ns > 0 {
                arrive = arrive.div_ceil(knobs.coalesce_grid_ns) * knobs.coalesce_grid_ns;
            }
            arrive = arrive.max(self.arrival_last_ns);
            // A segment arriving with the previous one needs no event of
            // its own: that event is still pending (arrivals are in the
            // future) and will deliver both.
            let needs_event = arrive > self.arrival_last_ns || self.segments.is_empty();
            self.arrival_last_ns = arrive;
            self.written_abs += len;
            self.segments.push_back((arrive, self.written_abs));
            assert!(self.segments.len() <= PIPE_SEGMENTS_MAX);
            if needs_event {
                on_segment(arrive);
            }
            start = end;
        }
        self.arrival_last_ns
    }

    /// Closes the stream after what was written; returns when the FIN
    /// arrives.
    pub fn write_fin(&mut self, now_ns: u64) -> u64 {
        if self.fin_abs.is_none() {
            self.fin_abs = Some(self.written_abs);
            self.arrival_last_ns = self.arrival_last_ns.max(now_ns);
        }
        self.arrival_last_ns
    }

    /// Moves segments that arrived by `now_ns` to the readable part.
    pub fn advance(&mut self, now_ns: u64) {
        while let Some(&(at, end)) = self.segments.front() {
            if at > now_ns {
                break;
            }
            self.arrived_abs = end;
            self.segments.pop_front();
        }
    }

    /// Bytes arrived and not yet read.
    pub fn readable(&self) -> &[u8] {
        let n = (self.arrived_abs - self.read_abs) as usize;
        &self.data[self.head..self.head + n]
    }

    /// The receiver read `n` readable bytes.
    pub fn consume(&mut self, n: usize) {
        debug_assert!(n <= self.readable().len());
        self.head += n;
        self.read_abs += n as u64;
        if self.head == self.data.len() {
            self.data.clear();
            self.head = 0;
        } else if self.head >= 4096 && self.head * 2 >= self.data.len() {
            self.data.drain(..self.head);
            self.head = 0;
        }
    }

    /// Bytes written and not yet read (in flight or arrived).
    pub fn unread_bytes(&self) -> usize {
        self.data.len() - self.head
    }

    /// Whether the writer's FIN has arrived and every byte before it was read.
    pub fn at_eof(&self, now_ns: u64) -> bool {
        self.fin_abs == Some(self.read_abs)
            && self.segments.is_empty()
            && self.arrival_last_ns <= now_ns
    }

    pub fn in_flight(&self) -> bool {
        !self.segments.is_empty()
    }

    /// When the last segment written so far arrives.
    pub fn arrival_last_ns(&self) -> u64 {
        self.arrival_last_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn bytes_arrive_in_order_whatever_the_fragmentation() {
        let knobs = NetKnobs {
            latency_ns: 1000,
            jitter_ns_max: 5000,
            spike_per_million: 100_000,
            spike_ns_max: 10_000,
            bandwidth_bytes_per_ms: 1_000_000,
            fragment_per_mille: 1000,
            coalesce_grid_ns: 0,
            socket_buffer_bytes: 4096,
            slow_reader_per_mille: 0,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut pipe = Pipe::default();
        let mut arrivals = Vec::new();
        let msg: Vec<u8> = (0..=255u8).collect();
        pipe.write(0, &msg, &knobs, &mut rng, |t| arrivals.push(t));
        pipe.write(10, &msg, &knobs, &mut rng, |t| arrivals.push(t));
        assert!(arrivals.windows(2).all(|w| w[0] <= w[1]));
        let mut got = Vec::new();
        for t in arrivals {
            pipe.advance(t);
            got.extend_from_slice(pipe.readable());
            let n = pipe.readable().len();
            pipe.consume(n);
        }
        assert_eq!(got.len(), 512);
        assert_eq!(&got[..256], &msg[..]);
        assert_eq!(&got[256..], &msg[..]);
    }
}
