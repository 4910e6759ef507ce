//! One real TCP connection of the probe: a blocking socket read by the
//! client's thread, and a writer thread that owns the sending half.
//!
//! Why a writer thread: a batch is written whole before its replies are
//! read (that is what a pipeline is), and a batch can be large (MSETs of
//! thousands of keys, 1000-deep pipelines). Written from the reading thread,
//! a server that stops reading until its output drains would deadlock with
//! us; with a separate writer, the client keeps reading replies while the
//! rest of the batch goes out, as an event-loop client would.
//!
//! Real time lives here (read timeouts), which is allowed only in the probe
//! module: see `probe/mod.rs`.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::mpsc::{channel, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use seedkv_engine::resp::Frame;
use seedkv_engine::resp::FrameDecoder;

/// How long one blocking read may wait before the caller re-checks its
/// deadlines (the bound of every read loop is a deadline, not this).
pub const READ_POLL_MS: u64 = 50;

/// Connecting to the server may take this long.
pub const CONNECT_TIMEOUT_MS: u64 = 2_000;

/// Bytes read from the socket per `read` call.
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// What ended a wait for a reply.
#[derive(Debug)]
pub enum ReadError {
    /// The server closed the connection (EOF or reset).
    Closed(String),
    /// The reply stream is not RESP.
    Invalid(String),
    /// The deadline passed with no complete reply.
    TimedOut,
}

pub struct ProbeConn {
    stream: TcpStream,
    /// Sends encoded batches to the writer thread; `None` once shut down.
    writer: Option<Sender<Vec<u8>>>,
    writer_thread: Option<JoinHandle<()>>,
    decoder: FrameDecoder,
    chunk: Vec<u8>,
}

impl ProbeConn {
    /// Connects to `addr` (a loopback address: the caller checked).
    pub fn connect(addr: SocketAddr) -> std::io::Result<ProbeConn> {
        debug_assert!(addr.ip().is_loopback());
        let stream = TcpStream::connect_timeout(&addr, Duration::from_millis(CONNECT_TIMEOUT_MS))?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_millis(READ_POLL_MS)))?;
        let mut write_half = stream.try_clone()?;
        let (tx, rx) = channel::<Vec<u8>>();
        let writer_thread = std::thread::Builder::new()
            .name("probe-writer".into())
            .spawn(move || {
                // Ends when the sender is dropped or the socket fails (the
                // connection was shut down or reset).
                for bytes in rx {
                    if write_half.write_all(&bytes).is_err() {
                        break;
                    }
                }
            })?;
        Ok(ProbeConn {
            stream,
            writer: Some(tx),
            writer_thread: Some(writer_thread),
            decoder: FrameDecoder::new(),
            chunk: vec![0; READ_CHUNK_BYTES],
        })
    }

    /// Hands `bytes` to the writer thread. `false` if the connection is
    /// already known to be gone.
    pub fn send(&mut self, bytes: Vec<u8>) -> bool {
        match &self.writer {
            Some(tx) => tx.send(bytes).is_ok(),
            None => false,
        }
    }

    /// The next reply, waiting until `deadline` at most. Push frames (never
    /// sent to a RESP2 client that did not subscribe) are returned like any
    /// other frame: the caller decides.
    pub fn read_frame(&mut self, deadline: Instant) -> Result<Frame, ReadError> {
        // Bounded by the deadline: every iteration either returns or waits
        // at most READ_POLL_MS in `read`.
        loop {
            match self.decoder.next_frame() {
                Ok(Some(frame)) => return Ok(frame),
                Ok(None) => {}
                Err(e) => return Err(ReadError::Invalid(e)),
            }
            if Instant::now() >= deadline {
                return Err(ReadError::TimedOut);
            }
            match self.stream.read(&mut self.chunk) {
                Ok(0) => return Err(ReadError::Closed("server closed".into())),
                Ok(n) => self.decoder.feed(&self.chunk[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock
                            | std::io::ErrorKind::TimedOut
                            | std::io::ErrorKind::Interrupted
                    ) => {}
                Err(e) => return Err(ReadError::Closed(format!("server reset: {e}"))),
            }
        }
    }

    /// A complete frame already received, without reading the socket.
    pub fn buffered_frame(&mut self) -> Option<Frame> {
        self.decoder.next_frame().ok().flatten()
    }

    /// One request and its reply, outside the recorded history (set-up
    /// commands such as `CLIENT ID`).
    pub fn call(&mut self, request: &[&[u8]], deadline: Instant) -> Result<Frame, ReadError> {
        let bytes = seedkv_engine::resp::encode::encode_request(request);
        if !self.send(bytes) {
            return Err(ReadError::Closed("writer gone".into()));
        }
        self.read_frame(deadline)
    }

    /// Drops the connection at once, whatever is in flight in either
    /// direction (the abrupt disconnect of a crashing client).
    pub fn abort(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Both);
        self.writer = None;
        if let Some(handle) = self.writer_thread.take() {
            // The shutdown makes a blocked write fail, so this returns.
            let _ = handle.join();
        }
    }
}

impl Drop for ProbeConn {
    fn drop(&mut self) {
        self.shutdown();
    }
}
