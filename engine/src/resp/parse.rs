//! PLACEHOLDER — being replaced by the real incremental parser (helper "resp").
//! The public interface below is fixed; implementation is not.

/// Limits on requests, named as in redis.conf.
#[derive(Clone, Debug)]
pub struct ParserLimits {
    /// `proto-max-bulk-len`: the largest bulk argument (512 MB).
    pub proto_max_bulk_len_bytes: usize,
    /// The largest inline request (64 KB, PROTO_INLINE_MAX_SIZE).
    pub inline_max_bytes: usize,
    /// The largest multibulk count (Redis: INT_MAX, 1024*1024*1024 in practice).
    pub multibulk_max_count: usize,
}

impl Default for ParserLimits {
    fn default() -> Self {
        ParserLimits {
            proto_max_bulk_len_bytes: 512 * 1024 * 1024,
            inline_max_bytes: 64 * 1024,
            multibulk_max_count: i32::MAX as usize,
        }
    }
}

/// A protocol violation. The connection gets `-ERR {message()}` and is closed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProtocolError {
    TooBigInline,
    UnbalancedQuotes,
    TooBigMbulkCountString,
    InvalidMultibulkLength,
    UnauthenticatedMultibulkLength,
    TooBigBulkCountString,
    ExpectedDollar(u8),
    InvalidBulkLength,
    UnauthenticatedBulkLength,
}

impl ProtocolError {
    /// The text after `-ERR `, exactly as Redis 7.0 words it.
    pub fn message(&self) -> String {
        match self {
            ProtocolError::TooBigInline => "Protocol error: too big inline request".into(),
            ProtocolError::UnbalancedQuotes => {
                "Protocol error: unbalanced quotes in request".into()
            }
            ProtocolError::TooBigMbulkCountString => {
                "Protocol error: too big mbulk count string".into()
            }
            ProtocolError::InvalidMultibulkLength => {
                "Protocol error: invalid multibulk length".into()
            }
            ProtocolError::UnauthenticatedMultibulkLength => {
                "Protocol error: unauthenticated multibulk length".into()
            }
            ProtocolError::TooBigBulkCountString => {
                "Protocol error: too big bulk count string".into()
            }
            ProtocolError::ExpectedDollar(c) => {
                format!("Protocol error: expected '$', got '{}'", *c as char)
            }
            ProtocolError::InvalidBulkLength => "Protocol error: invalid bulk length".into(),
            ProtocolError::UnauthenticatedBulkLength => {
                "Protocol error: unauthenticated bulk length".into()
            }
        }
    }
}

/// Incremental request parser: feed bytes split anywhere, take requests out.
#[derive(Default, Debug)]
pub struct RequestParser {
    buf: Vec<u8>,
}

impl RequestParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends received bytes to the query buffer.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes held in the query buffer (for `client-query-buffer-limit` and
    /// `CLIENT LIST qbuf=`).
    pub fn buffered_bytes(&self) -> usize {
        self.buf.len()
    }

    /// Takes the next complete request out of the buffer. `Ok(None)` means
    /// more bytes are needed. Empty requests (blank inline lines, `*0`) are
    /// skipped. `authenticated == false` applies Redis's stricter limits for
    /// clients that have not passed AUTH while a password is set.
    pub fn next_request(
        &mut self,
        limits: &ParserLimits,
        authenticated: bool,
    ) -> Result<Option<Vec<Vec<u8>>>, ProtocolError> {
        let _ = (limits, authenticated);
        // Placeholder: inline only.
        if let Some(pos) = self.buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.buf.drain(..=pos).collect();
            let args = line
                .split(|b| b.is_ascii_whitespace())
                .filter(|s| !s.is_empty())
                .map(|s| s.to_vec())
                .collect();
            return Ok(Some(args));
        }
        Ok(None)
    }
}
