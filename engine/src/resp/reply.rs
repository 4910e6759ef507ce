//! PLACEHOLDER — being replaced by the real client-side decoder (helper "resp").

/// A decoded reply, as a client sees it.
#[derive(Clone, Debug, PartialEq)]
pub enum Frame {
    Simple(Vec<u8>),
    Error(Vec<u8>),
    Integer(i64),
    Bulk(Vec<u8>),
    /// RESP2 `$-1`/`*-1` and RESP3 `_`.
    Null,
    Array(Vec<Frame>),
    Map(Vec<(Frame, Frame)>),
    Set(Vec<Frame>),
    Push(Vec<Frame>),
    Double(f64),
    Boolean(bool),
    Verbatim {
        format: [u8; 3],
        data: Vec<u8>,
    },
    BigNumber(Vec<u8>),
}

/// Incremental reply decoder: feed bytes split anywhere, take frames out.
#[derive(Default, Debug)]
pub struct FrameDecoder {
    buf: Vec<u8>,
}

impl FrameDecoder {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn feed(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }
    /// `Ok(None)`: need more bytes. `Err`: the stream is not valid RESP.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, String> {
        Ok(None)
    }
}
