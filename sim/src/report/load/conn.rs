//! One RESP connection of the load tool: requests are encoded into an
//! output buffer and written as one pipeline, replies decoded one frame at
//! a time. Every error reply is counted here, so no caller can forget to.

use std::io;

use seedkv_engine::resp::{Frame, FrameDecoder};
use tokio::net::TcpStream;

/// Bytes read per `read` call.
const READ_CHUNK_BYTES: usize = 64 * 1024;

pub struct Conn {
    stream: TcpStream,
    decoder: FrameDecoder,
    out: Vec<u8>,
    read_buf: Vec<u8>,
    /// Requests written whose replies were not read yet.
    pub in_flight: u64,
    pub replies_count: u64,
    pub errors_count: u64,
    /// The first error reply, for the abort message.
    pub first_error: Option<String>,
}

impl Conn {
    pub async fn connect(addr: &str) -> io::Result<Conn> {
        let stream = TcpStream::connect(addr).await?;
        // One small request at a time must not wait for Nagle.
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream,
            decoder: FrameDecoder::new(),
            out: Vec::with_capacity(64 * 1024),
            read_buf: vec![0; READ_CHUNK_BYTES],
            in_flight: 0,
            replies_count: 0,
            errors_count: 0,
            first_error: None,
        })
    }

    /// Starts a request of `args_count` arguments in the output buffer;
    /// follow with exactly that many [`Conn::arg`] calls.
    pub fn begin(&mut self, args_count: usize) {
        header(&mut self.out, b'*', args_count);
        self.in_flight += 1;
    }

    pub fn arg(&mut self, bytes: &[u8]) {
        header(&mut self.out, b'$', bytes.len());
        self.out.extend_from_slice(bytes);
        self.out.extend_from_slice(b"\r\n");
    }

    /// Queues a whole request.
    pub fn push(&mut self, args: &[&[u8]]) {
        self.begin(args.len());
        for a in args {
            self.arg(a);
        }
    }

    /// Writes every queued request.
    pub async fn flush(&mut self) -> io::Result<()> {
        let mut written = 0;
        while written < self.out.len() {
            self.stream.writable().await?;
            match self.stream.try_write(&self.out[written..]) {
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(e),
            }
        }
        self.out.clear();
        Ok(())
    }

    /// The next reply (error replies included, and counted).
    pub async fn recv(&mut self) -> io::Result<Frame> {
        if self.in_flight == 0 {
            return Err(io::Error::other(
                "a reply was read with no request in flight",
            ));
        }
        loop {
            match self.decoder.next_frame() {
                Ok(Some(frame)) => {
                    self.in_flight -= 1;
                    self.replies_count += 1;
                    if let Frame::Error(e) = &frame {
                        self.errors_count += 1;
                        self.first_error
                            .get_or_insert_with(|| String::from_utf8_lossy(e).into_owned());
                    }
                    return Ok(frame);
                }
                Ok(None) => {}
                Err(e) => return Err(io::Error::other(format!("invalid reply stream: {e}"))),
            }
            self.stream.readable().await?;
            match self.stream.try_read(&mut self.read_buf) {
                Ok(0) => return Err(io::Error::other("the server closed the connection")),
                Ok(n) => self.decoder.feed(&self.read_buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Sends one request and waits for its reply.
    pub async fn call(&mut self, args: &[&[u8]]) -> io::Result<Frame> {
        self.push(args);
        self.flush().await?;
        self.recv().await
    }
}

fn header(out: &mut Vec<u8>, prefix: u8, n: usize) {
    out.push(prefix);
    out.extend_from_slice(n.to_string().as_bytes());
    out.extend_from_slice(b"\r\n");
}
