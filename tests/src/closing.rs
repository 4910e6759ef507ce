//! A connection for differential scripts in which the server may close a
//! connection on purpose (ACL LOAD logs users out, DELUSER disconnects
//! them): a reply, or `None` once the server closed it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use seedkv_engine::resp::encode::encode_request;
use seedkv_engine::resp::{Frame, FrameDecoder};

/// How long a reply may take before the connection counts as closed.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(5);

pub struct ClosingConnection {
    stream: TcpStream,
    decoder: FrameDecoder,
    closed: bool,
}

impl ClosingConnection {
    pub fn open(port: u16) -> ClosingConnection {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream
            .set_read_timeout(Some(REPLY_TIMEOUT))
            .expect("timeout");
        ClosingConnection {
            stream,
            decoder: FrameDecoder::new(),
            closed: false,
        }
    }

    /// The reply to `args`, or `None` once the server closed the
    /// connection (or did not answer within [`REPLY_TIMEOUT`]).
    pub fn command(&mut self, args: &[&[u8]]) -> Option<Frame> {
        if self.closed {
            return None;
        }
        if self.stream.write_all(&encode_request(args)).is_err() {
            self.closed = true;
            return None;
        }
        loop {
            if let Some(frame) = self.decoder.next_frame().expect("valid RESP") {
                return Some(frame);
            }
            let mut chunk = [0u8; 16 * 1024];
            match self.stream.read(&mut chunk) {
                Ok(n) if n > 0 => self.decoder.feed(&chunk[..n]),
                _ => {
                    self.closed = true;
                    return None;
                }
            }
        }
    }
}
