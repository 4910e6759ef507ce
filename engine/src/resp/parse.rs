//! The incremental request parser: bytes in, argument vectors out.
//!
//! This is a faithful port of Redis 7.0's `processInputBuffer`,
//! `processInlineBuffer`, `processMultibulkBuffer` and `sdssplitargs`
//! (networking.c, sds.c), including their quirks, because clients and test
//! suites observe them:
//!
//! - A request whose first byte is `*` is multibulk; anything else (even
//!   `$`) is an inline request.
//! - Line searches stop at a NUL byte, as `strchr` does. A NUL before the
//!   terminator therefore means "no terminator yet", and the connection waits
//!   until the 64 KB "too big" limit closes it.
//! - The count and bulk-length lines end at the first `\r`; the byte after it
//!   is skipped unchecked, and so are the two bytes after a bulk's payload.
//! - `*0`, `*-N` and blank inline lines are not requests: they are skipped.
//! - The "too big" limits are only checked while no terminator is buffered,
//!   so one large read that holds a whole long line is accepted (Redis checks
//!   after every read; we check on every [`RequestParser::next_request`]).
//!
//! The parser keeps a read position into its buffer instead of draining
//! bytes per request, remembers how far a pending line search already looked,
//! and compacts the buffer only once at least half of it is consumed, so
//! feeding a request in pieces of any size costs time linear in its length.

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

/// A client that has not authenticated (while a password is required) may
/// announce at most this many arguments (Redis: hard-coded 10).
pub const UNAUTHENTICATED_MULTIBULK_MAX_COUNT: i64 = 10;

/// A client that has not authenticated may announce bulks of at most this
/// many bytes (Redis: hard-coded 16384).
pub const UNAUTHENTICATED_BULK_MAX_BYTES: i64 = 16 * 1024;

/// Bulks at least this large are preallocated in full and, when they arrive
/// alone, taken out of the buffer without a copy (Redis: PROTO_MBULK_BIG_ARG).
pub const BULK_BIG_ARG_BYTES: usize = 32 * 1024;

/// Redis preallocates at most this many argument slots from the announced
/// count, so that a lying `*` header cannot reserve unbounded memory.
const ARGV_PREALLOC_MAX: usize = 1024;

/// [`RequestParser::next_request_into`] keeps at most this many spare
/// argument buffers, each of at most [`SPARE_ARG_MAX_BYTES`].
pub const SPARE_ARGS_MAX: usize = 16;

/// Most digits [`RequestParser::short_length_line`] reads: enough for any
/// length a request may announce (proto-max-bulk-len is at most 2^63), and
/// few enough that the value cannot overflow an i64.
const SHORT_LENGTH_DIGITS_MAX: usize = 18;

/// Argument buffers larger than this are freed rather than kept as spares.
pub const SPARE_ARG_MAX_BYTES: usize = 1024;

/// The buffer is compacted only once this many bytes are consumed (and at
/// least half of it), which keeps compaction amortised O(1) per byte.
const COMPACT_MIN_BYTES: usize = 4 * 1024;

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
    ///
    /// Redis turns CR and LF inside error replies into spaces, so
    /// `ExpectedDollar(b'\r')` reads `got ' '`. A byte above 0x7f cannot be
    /// carried by a `String` as itself; [`ProtocolError::message_bytes`] gives
    /// the exact bytes Redis sends.
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
                format!(
                    "Protocol error: expected '$', got '{}'",
                    reply_safe_byte(*c) as char
                )
            }
            ProtocolError::InvalidBulkLength => "Protocol error: invalid bulk length".into(),
            ProtocolError::UnauthenticatedBulkLength => {
                "Protocol error: unauthenticated bulk length".into()
            }
        }
    }

    /// The exact bytes after `-ERR ` that Redis 7.0 sends, including a raw
    /// non-ASCII byte in `expected '$', got 'X'`.
    pub fn message_bytes(&self) -> Vec<u8> {
        match self {
            ProtocolError::ExpectedDollar(c) => {
                let mut out = b"Protocol error: expected '$', got '".to_vec();
                out.push(reply_safe_byte(*c));
                out.push(b'\'');
                out
            }
            other => other.message().into_bytes(),
        }
    }
}

/// Redis maps CR and LF in error messages to spaces (addReplyErrorLength).
fn reply_safe_byte(c: u8) -> u8 {
    if c == b'\r' || c == b'\n' {
        b' '
    } else {
        c
    }
}

/// What kind of request the bytes at the read position belong to
/// (Redis: `c->reqtype` plus `c->multibulklen`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum State {
    /// Between requests: the next byte decides the request type.
    #[default]
    Start,
    /// Waiting for the `\n` that ends an inline request.
    Inline,
    /// Waiting for the `*<count>\r` line.
    MultibulkCount,
    /// Reading the announced arguments (`remaining` of them still to come).
    MultibulkArgs,
}

/// Incremental request parser: feed bytes split anywhere, take requests out.
#[derive(Default, Debug)]
pub struct RequestParser {
    /// The query buffer. Bytes before `pos` are consumed.
    buf: Vec<u8>,
    /// The read position (Redis: `c->qb_pos`).
    pos: usize,
    /// How many bytes after `pos` a pending line search has already looked
    /// at without finding its terminator, so that the next search resumes
    /// there instead of rescanning. Reset whenever `pos` moves.
    scanned: usize,
    state: State,
    /// Arguments of the multibulk request being read.
    args: Vec<Vec<u8>>,
    /// Arguments still to read in the current multibulk request.
    remaining: usize,
    /// The announced length of the bulk being read, once its `$` line is in.
    bulk_len: Option<usize>,
    /// Set by the first protocol error; every later call returns it again.
    failed: Option<ProtocolError>,
}

/// The outcome of searching for a line terminator from the read position.
enum LineEnd {
    /// The terminator's absolute index in the buffer.
    At(usize),
    /// No terminator before the end of the buffer or a NUL byte.
    Missing,
}

impl RequestParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends received bytes to the query buffer.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.compact_if_worthwhile();
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes held in the query buffer (for `client-query-buffer-limit` and
    /// `CLIENT LIST qbuf=`). Like Redis's `sdslen(c->querybuf)` after its
    /// trim, this counts unparsed bytes only: arguments of a partly read
    /// multibulk request that were already taken out are not included.
    pub fn buffered_bytes(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Takes the next complete request out of the buffer. `Ok(None)` means
    /// more bytes are needed. Empty requests (blank inline lines, `*0`) are
    /// skipped. `authenticated == false` applies Redis's stricter limits for
    /// clients that have not passed AUTH while a password is set.
    ///
    /// After an `Err` the parser is poisoned: the caller replies with the
    /// error and closes the connection, and later calls return the same error.
    pub fn next_request(
        &mut self,
        limits: &ParserLimits,
        authenticated: bool,
    ) -> Result<Option<Vec<Vec<u8>>>, ProtocolError> {
        let complete = self.parse_next_checked(limits, authenticated, &mut Vec::new())?;
        Ok(complete.then(|| std::mem::take(&mut self.args)))
    }

    /// Like [`RequestParser::next_request`], but the caller owns the buffers:
    /// the request's arguments are put in `args` (`Ok(true)`), and the
    /// buffers `args` held on entry (the previous request's arguments) are
    /// cleared and kept in `spare` for the parser to reuse, so that a host
    /// that passes the same two vectors every time parses without allocating.
    ///
    /// A spare is reused only for an argument of exactly its capacity, so
    /// every argument has the capacity `next_request` would give it (stored
    /// strings report their capacity as memory use). On `Ok(false)` and on
    /// errors `args` is left empty.
    pub fn next_request_into(
        &mut self,
        limits: &ParserLimits,
        authenticated: bool,
        args: &mut Vec<Vec<u8>>,
        spare: &mut Vec<Vec<u8>>,
    ) -> Result<bool, ProtocolError> {
        recycle_args(args, spare);
        let complete = self.parse_next_checked(limits, authenticated, spare)?;
        if complete {
            // The emptied `args` becomes the next request's argument vector.
            std::mem::swap(&mut self.args, args);
        }
        Ok(complete)
    }

    /// Parses the next request into `self.args`, remembering the first error.
    fn parse_next_checked(
        &mut self,
        limits: &ParserLimits,
        authenticated: bool,
        spare: &mut Vec<Vec<u8>>,
    ) -> Result<bool, ProtocolError> {
        if let Some(err) = &self.failed {
            return Err(err.clone());
        }
        let result = self.parse_next(limits, authenticated, spare);
        if let Err(err) = &result {
            self.failed = Some(err.clone());
        }
        result
    }

    /// Parses the next request into `self.args`. `Ok(false)` means more bytes
    /// are needed.
    fn parse_next(
        &mut self,
        limits: &ParserLimits,
        authenticated: bool,
        spare: &mut Vec<Vec<u8>>,
    ) -> Result<bool, ProtocolError> {
        // Every iteration either returns or consumes at least one byte (an
        // empty request is skipped only after its bytes are consumed), so the
        // loop is bounded by the buffered length.
        loop {
            match self.state {
                State::Start => {
                    if self.pos == self.buf.len() {
                        return Ok(false);
                    }
                    self.state = if self.buf[self.pos] == b'*' {
                        State::MultibulkCount
                    } else {
                        State::Inline
                    };
                }
                State::Inline => match self.parse_inline(limits)? {
                    None => return Ok(false),
                    Some(args) if args.is_empty() => self.state = State::Start,
                    Some(args) => {
                        self.state = State::Start;
                        self.args = args;
                        return Ok(true);
                    }
                },
                State::MultibulkCount => {
                    if !self.parse_multibulk_count(limits, authenticated)? {
                        return Ok(false);
                    }
                }
                State::MultibulkArgs => {
                    if !self.parse_multibulk_args(limits, authenticated, spare)? {
                        return Ok(false);
                    }
                    debug_assert_eq!(self.remaining, 0);
                    self.state = State::Start;
                    return Ok(true);
                }
            }
        }
    }

    /// Redis's processInlineBuffer. `Ok(None)`: no complete line yet.
    fn parse_inline(
        &mut self,
        limits: &ParserLimits,
    ) -> Result<Option<Vec<Vec<u8>>>, ProtocolError> {
        let newline = match self.find_line_end(b'\n') {
            LineEnd::At(i) => i,
            LineEnd::Missing => {
                if self.buffered_bytes() > limits.inline_max_bytes {
                    return Err(ProtocolError::TooBigInline);
                }
                return Ok(None);
            }
        };
        let mut end = newline;
        if end > self.pos && self.buf[end - 1] == b'\r' {
            end -= 1;
        }
        let args = split_args(&self.buf[self.pos..end]).ok_or(ProtocolError::UnbalancedQuotes)?;
        self.advance_to(newline + 1);
        Ok(Some(args))
    }

    /// Reads the `*<count>` line. Returns whether it was complete.
    fn parse_multibulk_count(
        &mut self,
        limits: &ParserLimits,
        authenticated: bool,
    ) -> Result<bool, ProtocolError> {
        debug_assert_eq!(self.buf[self.pos], b'*');
        let (count, cr) = match self.short_length_line() {
            Some(found) => found,
            None => {
                let Some(cr) =
                    self.find_length_line_end(limits, ProtocolError::TooBigMbulkCountString)?
                else {
                    return Ok(false);
                };
                let count = string2ll(&self.buf[self.pos + 1..cr])
                    .ok_or(ProtocolError::InvalidMultibulkLength)?;
                (count, cr)
            }
        };
        if count > 0 && count as u64 > limits.multibulk_max_count as u64 {
            return Err(ProtocolError::InvalidMultibulkLength);
        }
        if count > UNAUTHENTICATED_MULTIBULK_MAX_COUNT && !authenticated {
            return Err(ProtocolError::UnauthenticatedMultibulkLength);
        }
        self.advance_to(cr + 2);
        if count <= 0 {
            // `*0` and `*-1` are not requests: Redis resets the client and
            // goes on with the next one.
            self.state = State::Start;
            return Ok(true);
        }
        let count = count as usize;
        self.remaining = count;
        self.bulk_len = None;
        // Between requests `args` is empty; it may keep a capacity from a
        // vector the host handed back (`next_request_into`).
        debug_assert!(self.args.is_empty());
        self.args.reserve(count.min(ARGV_PREALLOC_MAX));
        self.state = State::MultibulkArgs;
        Ok(true)
    }

    /// Reads `$<len>\r\n<payload>\r\n` arguments until the request is
    /// complete (returns `true`) or the buffer runs dry (returns `false`).
    fn parse_multibulk_args(
        &mut self,
        limits: &ParserLimits,
        authenticated: bool,
        spare: &mut Vec<Vec<u8>>,
    ) -> Result<bool, ProtocolError> {
        while self.remaining > 0 {
            let len = match self.bulk_len {
                Some(len) => len,
                None => {
                    let short = match self.buf.get(self.pos) {
                        Some(b'$') => self.short_length_line(),
                        _ => None,
                    };
                    let (parsed, cr) = match short {
                        Some((len, cr)) => (Some(len), cr),
                        None => {
                            let Some(cr) = self.find_length_line_end(
                                limits,
                                ProtocolError::TooBigBulkCountString,
                            )?
                            else {
                                return Ok(false);
                            };
                            let first = self.buf[self.pos];
                            if first != b'$' {
                                return Err(ProtocolError::ExpectedDollar(first));
                            }
                            (string2ll(&self.buf[self.pos + 1..cr]), cr)
                        }
                    };
                    let len = match parsed {
                        Some(len)
                            if len >= 0 && len as u64 <= limits.proto_max_bulk_len_bytes as u64 =>
                        {
                            len
                        }
                        _ => return Err(ProtocolError::InvalidBulkLength),
                    };
                    if len > UNAUTHENTICATED_BULK_MAX_BYTES && !authenticated {
                        return Err(ProtocolError::UnauthenticatedBulkLength);
                    }
                    self.advance_to(cr + 2);
                    let len = len as usize;
                    if len >= BULK_BIG_ARG_BYTES && self.buffered_bytes() <= len + 2 {
                        // As Redis does: move the bulk's start to the front of
                        // the buffer and reserve room for all of it, so that it
                        // arrives without reallocations and can be taken out
                        // without a copy.
                        self.compact();
                        self.buf.reserve_exact(len + 2 - self.buf.len());
                    }
                    self.bulk_len = Some(len);
                    len
                }
            };
            if self.buffered_bytes() < len + 2 {
                return Ok(false);
            }
            let arg = if self.pos == 0 && len >= BULK_BIG_ARG_BYTES && self.buf.len() == len + 2 {
                // The buffer holds exactly this bulk: hand it over as is.
                let mut arg = std::mem::take(&mut self.buf);
                arg.truncate(len);
                self.pos = 0;
                self.scanned = 0;
                arg
            } else {
                let bytes = &self.buf[self.pos..self.pos + len];
                // A spare of exactly this capacity, or a new buffer: either
                // way the argument's capacity is its length.
                let arg = match spare.iter().rposition(|a| a.capacity() == len) {
                    Some(i) if len > 0 => {
                        let mut arg = spare.swap_remove(i);
                        debug_assert!(arg.is_empty());
                        arg.extend_from_slice(bytes);
                        arg
                    }
                    _ => bytes.to_vec(),
                };
                // Redis skips the two bytes after the payload without
                // checking that they are CRLF.
                self.advance_to(self.pos + len + 2);
                arg
            };
            self.args.push(arg);
            self.bulk_len = None;
            self.remaining -= 1;
        }
        Ok(true)
    }

    /// The common case of a `*` or `$` line, read in one pass: one to
    /// [`SHORT_LENGTH_DIGITS_MAX`] digits without a leading zero (or a lone
    /// `0`), then `\r` and one more buffered byte. Returns the value and the
    /// `\r`'s index. Anything else (a sign, a leading zero, more digits, a
    /// line not yet complete) returns `None` for the general path, which
    /// gives exactly the same answer for these lines: `strchr` finds this
    /// `\r` (no NUL or `\r` among digits) and `string2ll` accepts them.
    #[inline]
    fn short_length_line(&self) -> Option<(i64, usize)> {
        let digits_start = self.pos + 1;
        let line = self.buf.get(digits_start..)?;
        let mut value: i64 = 0;
        for (i, &b) in line.iter().enumerate().take(SHORT_LENGTH_DIGITS_MAX + 1) {
            match b {
                b'0'..=b'9' => {
                    if (i == 1 && value == 0) || i == SHORT_LENGTH_DIGITS_MAX {
                        // A leading zero or too many digits: string2ll decides.
                        return None;
                    }
                    value = value * 10 + i64::from(b - b'0');
                }
                b'\r' if i > 0 => {
                    let cr = digits_start + i;
                    // The byte after `\r` must have arrived (it is skipped).
                    return (cr + 1 < self.buf.len()).then_some((value, cr));
                }
                _ => return None,
            }
        }
        None
    }

    /// Finds the `\r` that ends a `*` or `$` line and checks that the byte
    /// after it (skipped unchecked, as Redis does) has arrived.
    fn find_length_line_end(
        &mut self,
        limits: &ParserLimits,
        too_big: ProtocolError,
    ) -> Result<Option<usize>, ProtocolError> {
        match self.find_line_end(b'\r') {
            LineEnd::Missing => {
                if self.buffered_bytes() > limits.inline_max_bytes {
                    return Err(too_big);
                }
                Ok(None)
            }
            LineEnd::At(cr) if cr + 1 >= self.buf.len() => {
                // Resume the next search at this `\r`.
                self.scanned = cr - self.pos;
                Ok(None)
            }
            LineEnd::At(cr) => Ok(Some(cr)),
        }
    }

    /// `strchr(querybuf + qb_pos, needle)`: the first `needle` at or after
    /// the read position, unless a NUL byte comes first.
    fn find_line_end(&mut self, needle: u8) -> LineEnd {
        let from = self.pos + self.scanned;
        match self.buf[from..].iter().position(|&b| b == needle || b == 0) {
            Some(off) if self.buf[from + off] == needle => LineEnd::At(from + off),
            Some(off) => {
                // A NUL: strchr stops here for good, so later searches find it
                // again at once.
                self.scanned += off;
                LineEnd::Missing
            }
            None => {
                self.scanned = self.buf.len() - self.pos;
                LineEnd::Missing
            }
        }
    }

    fn advance_to(&mut self, pos: usize) {
        debug_assert!(pos <= self.buf.len());
        self.pos = pos;
        self.scanned = 0;
    }

    fn compact_if_worthwhile(&mut self) {
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
            self.scanned = 0;
        } else if self.pos >= COMPACT_MIN_BYTES && self.pos >= self.buf.len() - self.pos {
            self.compact();
        }
    }

    /// Moves the unread bytes to the front of the buffer. `scanned` is
    /// relative to `pos`, so it stays valid.
    fn compact(&mut self) {
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
    }
}

/// Empties `args`, keeping its small buffers (cleared) in `spare` for
/// [`RequestParser::next_request_into`] to reuse, up to [`SPARE_ARGS_MAX`].
pub fn recycle_args(args: &mut Vec<Vec<u8>>, spare: &mut Vec<Vec<u8>>) {
    for mut arg in args.drain(..) {
        if spare.len() == SPARE_ARGS_MAX {
            break;
        }
        if arg.capacity() > 0 && arg.capacity() <= SPARE_ARG_MAX_BYTES {
            arg.clear();
            spare.push(arg);
        }
    }
    debug_assert!(args.is_empty());
}

/// Redis's `string2ll`: a strict decimal i64 (no `+`, no leading zeros, no
/// `-0`, no spaces, fewer than 21 bytes).
pub(crate) fn string2ll(s: &[u8]) -> Option<i64> {
    /// LONG_STR_SIZE in Redis: lengths from this up are rejected outright.
    const LONG_STR_SIZE: usize = 21;
    if s.is_empty() || s.len() >= LONG_STR_SIZE {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (negative, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    match digits.first() {
        Some(b'1'..=b'9') => {}
        _ => return None,
    }
    let mut v: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    if negative {
        if v > i64::MAX as u64 + 1 {
            return None;
        }
        Some((v as i64).wrapping_neg())
    } else {
        i64::try_from(v).ok()
    }
}

/// C's `isspace` in the "C" locale.
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Redis's `sdssplitargs` over one inline line (which holds no NUL: the
/// line search stops at NUL). `None` means unbalanced quotes.
///
/// Whitespace between arguments is anything `isspace` accepts, but an
/// unquoted argument ends only at space, `\t`, `\r`, `\n` or the end, so
/// `a\x0bb` is one argument. A quote may open in the middle of an argument
/// (`foo"bar baz"` is `foobar baz`); a closing quote must be followed by
/// whitespace or the end of the line.
pub fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    // `at` reads past the end as NUL, which is how the C code sees the
    // string's terminator.
    let at = |i: usize| line.get(i).copied().unwrap_or(0);
    let mut args = Vec::new();
    let mut p = 0;
    loop {
        while p < line.len() && is_c_space(line[p]) {
            p += 1;
        }
        if p >= line.len() {
            return Some(args);
        }
        let mut current = Vec::new();
        let mut in_double = false;
        let mut in_single = false;
        let mut done = false;
        while !done {
            let c = at(p);
            if in_double {
                let hex_escape = (hex_value(at(p + 2)), hex_value(at(p + 3)));
                if let (b'\\', b'x', (Some(hi), Some(lo))) = (c, at(p + 1), hex_escape) {
                    current.push(hi * 16 + lo);
                    p += 3;
                } else if c == b'\\' && at(p + 1) != 0 {
                    p += 1;
                    current.push(match at(p) {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 0x08,
                        b'a' => 0x07,
                        other => other,
                    });
                } else if c == b'"' {
                    if at(p + 1) != 0 && !is_c_space(at(p + 1)) {
                        return None;
                    }
                    done = true;
                } else if c == 0 {
                    return None;
                } else {
                    current.push(c);
                }
            } else if in_single {
                if c == b'\\' && at(p + 1) == b'\'' {
                    p += 1;
                    current.push(b'\'');
                } else if c == b'\'' {
                    if at(p + 1) != 0 && !is_c_space(at(p + 1)) {
                        return None;
                    }
                    done = true;
                } else if c == 0 {
                    return None;
                } else {
                    current.push(c);
                }
            } else {
                match c {
                    b' ' | b'\n' | b'\r' | b'\t' | 0 => done = true,
                    b'"' => in_double = true,
                    b'\'' => in_single = true,
                    _ => current.push(c),
                }
            }
            if at(p) != 0 {
                p += 1;
            }
        }
        args.push(current);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Requests = Vec<Vec<Vec<u8>>>;

    /// Feeds `input` in one piece and drains every request.
    fn parse_all(input: &[u8]) -> Result<Requests, ProtocolError> {
        parse_pieces(&[input], true)
    }

    /// Feeds the pieces one by one, draining after each, as a host does.
    fn parse_pieces(pieces: &[&[u8]], authenticated: bool) -> Result<Requests, ProtocolError> {
        let limits = ParserLimits::default();
        let mut parser = RequestParser::new();
        let mut out = Vec::new();
        for piece in pieces {
            parser.feed(piece);
            while let Some(req) = parser.next_request(&limits, authenticated)? {
                out.push(req);
            }
        }
        Ok(out)
    }

    /// The first error (or the requests) for `input` fed at once.
    fn first_error(input: &[u8], authenticated: bool) -> Option<ProtocolError> {
        parse_pieces(&[input], authenticated).err()
    }

    fn req(args: &[&str]) -> Vec<Vec<u8>> {
        args.iter().map(|a| a.as_bytes().to_vec()).collect()
    }

    /// Every way of cutting `input` in two, and byte by byte, gives the same
    /// result as feeding it at once.
    fn assert_split_invariant(input: &[u8]) {
        let whole = parse_all(input);
        for cut in 0..=input.len() {
            let (a, b) = input.split_at(cut);
            assert_eq!(
                parse_pieces(&[a, b], true),
                whole,
                "cut at {cut} of {input:?}"
            );
        }
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(parse_pieces(&bytes, true), whole, "byte by byte: {input:?}");
    }

    #[test]
    fn parse_multibulk_requests() {
        let input = b"*1\r\n$4\r\nPING\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n";
        assert_eq!(
            parse_all(input).unwrap(),
            vec![req(&["PING"]), req(&["SET", "k", ""])]
        );
        assert_split_invariant(input);
    }

    #[test]
    fn parse_multibulk_binary_payload() {
        let input = b"*2\r\n$4\r\nECHO\r\n$6\r\n\0\r\n*\n$\r\n";
        assert_eq!(
            parse_all(input).unwrap(),
            vec![vec![b"ECHO".to_vec(), b"\0\r\n*\n$".to_vec()]]
        );
        assert_split_invariant(input);
    }

    #[test]
    fn parse_skips_empty_requests() {
        let input = b"*0\r\n*-1\r\n*-5\r\n\r\n\n   \r\n\t\r\n*1\r\n$4\r\nPING\r\n";
        assert_eq!(parse_all(input).unwrap(), vec![req(&["PING"])]);
        assert_split_invariant(input);
    }

    #[test]
    fn parse_inline_line_endings() {
        assert_eq!(parse_all(b"PING\n").unwrap(), vec![req(&["PING"])]);
        assert_eq!(parse_all(b"PING\r\n").unwrap(), vec![req(&["PING"])]);
        // Only one `\r` is stripped; the second ends the unquoted token.
        assert_eq!(parse_all(b"PING\r\r\n").unwrap(), vec![req(&["PING"])]);
        assert_eq!(parse_all(b"a\rb\r\n").unwrap(), vec![req(&["a", "b"])]);
        assert_eq!(parse_all(b"PING").unwrap(), Vec::<Vec<Vec<u8>>>::new());
        assert_eq!(parse_all(b"PING\r").unwrap(), Vec::<Vec<Vec<u8>>>::new());
        assert_split_invariant(b"SET a b\r\nGET a\nPING\r\n");
    }

    #[test]
    fn parse_inline_whitespace_follows_c_isspace() {
        // \x0b (vertical tab) separates arguments only between them: inside
        // an unquoted token it is part of the token (checked on Redis 7.0.15).
        assert_eq!(
            parse_all(b"ECHO a\x0bb\r\n").unwrap(),
            vec![req(&["ECHO", "a\x0bb"])]
        );
        assert_eq!(
            parse_all(b"\x0b\x0cECHO \t x\r\n").unwrap(),
            vec![req(&["ECHO", "x"])]
        );
    }

    #[test]
    fn parse_inline_quotes() {
        let cases: &[(&[u8], &[&[u8]])] = &[
            (b"SET \"a b\" 'c d'\n", &[b"SET", b"a b", b"c d"]),
            (
                b"X \"\\n\\r\\t\\b\\a\\\\\\\"\\q\"\n",
                &[b"X", b"\n\r\t\x08\x07\\\"q"],
            ),
            (b"X \"\\x41\\x7a\\xff\\x00\"\n", &[b"X", b"Az\xff\x00"]),
            (b"X \"\\xZZ\" \"\\x4\"\n", &[b"X", b"xZZ", b"x4"]),
            (
                b"X 'it\\'s' 'a\\nb' 'q\"q'\n",
                &[b"X", b"it's", b"a\\nb", b"q\"q"],
            ),
            (b"X foo\"bar baz\"\n", &[b"X", b"foobar baz"]),
            (b"X \"\" ''\n", &[b"X", b"", b""]),
            (b"X \"a\"\rb\n", &[b"X", b"a", b"b"]),
            (b"X \"a\\\\\"\n", &[b"X", b"a\\"]),
            (b"X \"a\"\x0bb\n", &[b"X", b"a", b"b"]),
        ];
        for (input, want) in cases {
            let want: Vec<Vec<u8>> = want.iter().map(|a| a.to_vec()).collect();
            assert_eq!(parse_all(input).unwrap(), vec![want], "{input:?}");
            assert_split_invariant(input);
        }
    }

    #[test]
    fn parse_inline_unbalanced_quotes() {
        for input in [
            &b"ECHO \"a\"b\r\n"[..],
            b"ECHO 'a'b\r\n",
            b"ECHO \"abc\r\n",
            b"ECHO 'abc\n",
            b"ECHO \"a\\\"\n",
            b"ECHO \"\\\n",
            b"ECHO 'a\\'\n",
        ] {
            assert_eq!(
                first_error(input, true),
                Some(ProtocolError::UnbalancedQuotes),
                "{input:?}"
            );
        }
    }

    #[test]
    fn parse_dollar_first_is_inline() {
        // Redis quirk: only `*` starts a multibulk request.
        assert_eq!(
            parse_all(b"$4\r\nPING\r\n").unwrap(),
            vec![req(&["$4"]), req(&["PING"])]
        );
    }

    #[test]
    fn parse_quirk_terminators_are_not_checked() {
        // The byte after a length line's `\r` and the two bytes after a
        // payload are skipped unchecked (checked on Redis 7.0.15).
        assert_eq!(
            parse_all(b"*1\rX$4\rXPING\r\n").unwrap(),
            vec![req(&["PING"])]
        );
        let input = b"*1\r\n$4\r\nPINGXY*1\r\n$4\r\nPING\r\n";
        assert_eq!(
            parse_all(input).unwrap(),
            vec![req(&["PING"]), req(&["PING"])]
        );
        assert_split_invariant(input);
    }

    #[test]
    fn parse_nul_blocks_the_line_until_too_big() {
        let mut input = b"ECHO a\0b\r\nPING\r\n".to_vec();
        assert_eq!(parse_all(&input).unwrap(), Vec::<Vec<Vec<u8>>>::new());
        input.extend_from_slice(&vec![b'x'; 70_000]);
        assert_eq!(first_error(&input, true), Some(ProtocolError::TooBigInline));

        let mut input = b"*1\0\r\n".to_vec();
        assert_eq!(parse_all(&input).unwrap(), Vec::<Vec<Vec<u8>>>::new());
        input.extend_from_slice(&vec![b'x'; 70_000]);
        assert_eq!(
            first_error(&input, true),
            Some(ProtocolError::TooBigMbulkCountString)
        );

        let mut input = b"*1\r\n$3\0\r\n".to_vec();
        input.extend_from_slice(&vec![b'x'; 70_000]);
        assert_eq!(
            first_error(&input, true),
            Some(ProtocolError::TooBigBulkCountString)
        );
    }

    #[test]
    fn parse_too_big_limits_are_exclusive() {
        let limit = ParserLimits::default().inline_max_bytes;
        assert_eq!(first_error(&vec![b'x'; limit], true), None);
        assert_eq!(
            first_error(&vec![b'x'; limit + 1], true),
            Some(ProtocolError::TooBigInline)
        );

        let mut count = b"*".to_vec();
        count.extend_from_slice(&vec![b'1'; limit]);
        assert_eq!(
            first_error(&count, true),
            Some(ProtocolError::TooBigMbulkCountString)
        );

        let mut bulk = b"*1\r\n$".to_vec();
        bulk.extend_from_slice(&vec![b'1'; limit]);
        assert_eq!(
            first_error(&bulk, true),
            Some(ProtocolError::TooBigBulkCountString)
        );
    }

    #[test]
    fn parse_long_inline_line_in_one_read_is_accepted() {
        // Redis only checks the limit while no newline is buffered.
        let mut input = b"ECHO ".to_vec();
        input.extend_from_slice(&vec![b'y'; 100_000]);
        input.extend_from_slice(b"\r\n");
        let reqs = parse_all(&input).unwrap();
        assert_eq!(reqs.len(), 1);
        assert_eq!(reqs[0][1].len(), 100_000);
    }

    #[test]
    fn parse_multibulk_count_errors() {
        use ProtocolError::*;
        for (input, want) in [
            (&b"*x\r\n"[..], InvalidMultibulkLength),
            (b"*\r\n", InvalidMultibulkLength),
            (b"*-0\r\n", InvalidMultibulkLength),
            (b"*01\r\n", InvalidMultibulkLength),
            (b"*+1\r\n", InvalidMultibulkLength),
            (b"*1 \r\n", InvalidMultibulkLength),
            (b"*2147483648\r\n", InvalidMultibulkLength),
            (b"*99999999999999999999\r\n", InvalidMultibulkLength),
            (b"*1\r\nx3\r\n", ExpectedDollar(b'x')),
            (b"*1\r\n\r\n", ExpectedDollar(b'\r')),
            (b"*1\r\n$-1\r\n", InvalidBulkLength),
            (b"*1\r\n$-0\r\n", InvalidBulkLength),
            (b"*1\r\n$+3\r\n", InvalidBulkLength),
            (b"*1\r\n$x\r\n", InvalidBulkLength),
            (b"*1\r\n$\r\n", InvalidBulkLength),
            (b"*1\r\n$536870913\r\n", InvalidBulkLength),
        ] {
            assert_eq!(first_error(input, true), Some(want), "{input:?}");
        }
        assert_eq!(first_error(b"*2147483647\r\n", true), None);
        assert_eq!(first_error(b"*1\r\n$536870912\r\n", true), None);
    }

    #[test]
    fn parse_multibulk_limit_is_configurable() {
        let limits = ParserLimits {
            multibulk_max_count: 3,
            proto_max_bulk_len_bytes: 5,
            ..ParserLimits::default()
        };
        let mut parser = RequestParser::new();
        parser.feed(b"*3\r\n$5\r\nhello\r\n");
        assert_eq!(parser.next_request(&limits, true), Ok(None));
        parser.feed(b"$6\r\n");
        assert_eq!(
            parser.next_request(&limits, true),
            Err(ProtocolError::InvalidBulkLength)
        );
        let mut parser = RequestParser::new();
        parser.feed(b"*4\r\n");
        assert_eq!(
            parser.next_request(&limits, true),
            Err(ProtocolError::InvalidMultibulkLength)
        );
    }

    #[test]
    fn parse_unauthenticated_limits() {
        use ProtocolError::*;
        assert_eq!(first_error(b"*10\r\n", false), None);
        assert_eq!(
            first_error(b"*11\r\n", false),
            Some(UnauthenticatedMultibulkLength)
        );
        assert_eq!(first_error(b"*11\r\n", true), None);
        // An invalid count is reported as invalid even when unauthenticated.
        assert_eq!(
            first_error(b"*2147483648\r\n", false),
            Some(InvalidMultibulkLength)
        );
        assert_eq!(first_error(b"*1\r\n$16384\r\n", false), None);
        assert_eq!(
            first_error(b"*1\r\n$16385\r\n", false),
            Some(UnauthenticatedBulkLength)
        );
        assert_eq!(first_error(b"*1\r\n$16385\r\n", true), None);
        assert_eq!(
            first_error(b"*1\r\n$536870913\r\n", false),
            Some(InvalidBulkLength)
        );
    }

    #[test]
    fn parse_error_messages_match_redis() {
        use ProtocolError::*;
        let cases = [
            (TooBigInline, "Protocol error: too big inline request"),
            (
                UnbalancedQuotes,
                "Protocol error: unbalanced quotes in request",
            ),
            (
                TooBigMbulkCountString,
                "Protocol error: too big mbulk count string",
            ),
            (
                InvalidMultibulkLength,
                "Protocol error: invalid multibulk length",
            ),
            (
                UnauthenticatedMultibulkLength,
                "Protocol error: unauthenticated multibulk length",
            ),
            (
                TooBigBulkCountString,
                "Protocol error: too big bulk count string",
            ),
            (
                ExpectedDollar(b'x'),
                "Protocol error: expected '$', got 'x'",
            ),
            (
                ExpectedDollar(b'\r'),
                "Protocol error: expected '$', got ' '",
            ),
            (InvalidBulkLength, "Protocol error: invalid bulk length"),
            (
                UnauthenticatedBulkLength,
                "Protocol error: unauthenticated bulk length",
            ),
        ];
        for (err, text) in cases {
            assert_eq!(err.message(), text);
            assert_eq!(err.message_bytes(), text.as_bytes());
        }
        assert_eq!(
            ExpectedDollar(0xff).message_bytes(),
            b"Protocol error: expected '$', got '\xff'"
        );
    }

    #[test]
    fn parse_requests_before_an_error_are_returned() {
        let limits = ParserLimits::default();
        let mut parser = RequestParser::new();
        parser.feed(b"PING\r\n*1\r\nx\r\nPING\r\n");
        assert_eq!(parser.next_request(&limits, true), Ok(Some(req(&["PING"]))));
        assert_eq!(
            parser.next_request(&limits, true),
            Err(ProtocolError::ExpectedDollar(b'x'))
        );
        // The parser stays failed.
        parser.feed(b"PING\r\n");
        assert_eq!(
            parser.next_request(&limits, true),
            Err(ProtocolError::ExpectedDollar(b'x'))
        );
    }

    #[test]
    fn parse_string2ll_matches_redis() {
        assert_eq!(string2ll(b"0"), Some(0));
        assert_eq!(string2ll(b"-1"), Some(-1));
        assert_eq!(string2ll(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(string2ll(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            &b""[..],
            b"-",
            b"-0",
            b"00",
            b"01",
            b"+1",
            b" 1",
            b"1 ",
            b"9223372036854775808",
            b"1a",
        ] {
            assert_eq!(string2ll(bad), None, "{bad:?}");
        }
        // 21 bytes and up are rejected before looking at them.
        assert_eq!(string2ll(b"-000000000000000000001"), None);
    }

    #[test]
    fn parse_buffered_bytes_counts_unparsed_input() {
        let limits = ParserLimits::default();
        let mut parser = RequestParser::new();
        parser.feed(b"*2\r\n$3\r\nGET\r\n$1\r");
        assert_eq!(parser.next_request(&limits, true), Ok(None));
        assert_eq!(parser.buffered_bytes(), 3);
        parser.feed(b"\nk\r\nPI");
        assert_eq!(
            parser.next_request(&limits, true),
            Ok(Some(req(&["GET", "k"])))
        );
        assert_eq!(parser.buffered_bytes(), 2);
    }

    #[test]
    fn parse_big_bulk_in_small_pieces() {
        let payload: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
        let mut input = format!("*2\r\n$3\r\nSET\r\n${}\r\n", payload.len()).into_bytes();
        input.extend_from_slice(&payload);
        input.extend_from_slice(b"\r\n*1\r\n$4\r\nPING\r\n");
        let limits = ParserLimits::default();
        let mut parser = RequestParser::new();
        let mut reqs = Vec::new();
        for piece in input.chunks(7) {
            parser.feed(piece);
            while let Some(r) = parser.next_request(&limits, true).unwrap() {
                reqs.push(r);
            }
            // The buffer never holds much more than one pending bulk.
            assert!(parser.buf.len() <= payload.len() + 64 + COMPACT_MIN_BYTES);
        }
        assert_eq!(reqs.len(), 2);
        assert_eq!(reqs[0][1], payload);
        assert_eq!(reqs[1], req(&["PING"]));
    }

    #[test]
    fn parse_big_bulk_alone_is_taken_without_copy() {
        let payload = vec![b'z'; BULK_BIG_ARG_BYTES];
        let mut input = format!("*1\r\n${}\r\n", payload.len()).into_bytes();
        input.extend_from_slice(&payload);
        input.extend_from_slice(b"\r\n");
        let limits = ParserLimits::default();
        let mut parser = RequestParser::new();
        parser.feed(&input[..20]);
        assert_eq!(parser.next_request(&limits, true), Ok(None));
        // The bulk was moved to the front and fully reserved.
        assert_eq!(parser.pos, 0);
        assert!(parser.buf.capacity() >= payload.len() + 2);
        parser.feed(&input[20..]);
        let got = parser.next_request(&limits, true).unwrap().unwrap();
        assert_eq!(got, vec![payload]);
        assert_eq!(parser.buffered_bytes(), 0);
    }

    #[test]
    fn parse_mixed_stream_is_split_invariant() {
        let mut input = Vec::new();
        input.extend_from_slice(b"*2\r\n$4\r\nECHO\r\n$5\r\na\r\nbc\r\n");
        input.extend_from_slice(b"SET \"k\\x00\" 'v v'\r\n\r\n*0\r\n");
        input.extend_from_slice(b"GET k\n*3\r\n$1\r\na\r\n$0\r\n\r\n$2\r\n\r\n\r\n");
        assert_eq!(parse_all(&input).unwrap().len(), 4);
        assert_split_invariant(&input);
        // An erroring stream is split invariant too.
        assert_split_invariant(b"PING\r\n*1\r\n$x\r\n");
        assert_split_invariant(b"PING\r\nECHO \"a\r\n");
    }

    mod prop {
        use super::super::*;
        use proptest::prelude::*;

        /// How one request is written on the wire.
        #[derive(Clone, Debug)]
        enum Encoding {
            Multibulk,
            /// Inline, every argument double-quoted with `\xHH` escapes.
            InlineQuoted {
                crlf: bool,
            },
            /// Inline, bare arguments (only for simple arguments).
            InlineBare {
                crlf: bool,
            },
        }

        fn is_simple(arg: &[u8]) -> bool {
            !arg.is_empty()
                && arg
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || b"_:.-{}".contains(b))
        }

        fn encode(args: &[Vec<u8>], how: &Encoding, out: &mut Vec<u8>) {
            match how {
                Encoding::Multibulk => {
                    let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
                    out.extend_from_slice(&crate::resp::reply::encode_request(&refs));
                }
                Encoding::InlineQuoted { crlf } | Encoding::InlineBare { crlf } => {
                    let bare = matches!(how, Encoding::InlineBare { .. })
                        && args.iter().all(|a| is_simple(a));
                    for (i, arg) in args.iter().enumerate() {
                        if i > 0 {
                            out.push(b' ');
                        }
                        if bare {
                            out.extend_from_slice(arg);
                        } else {
                            out.push(b'"');
                            for b in arg {
                                out.extend_from_slice(format!("\\x{b:02x}").as_bytes());
                            }
                            out.push(b'"');
                        }
                    }
                    out.extend_from_slice(if *crlf { b"\r\n" } else { b"\n" });
                }
            }
        }

        fn arg() -> impl Strategy<Value = Vec<u8>> {
            prop_oneof![
                proptest::collection::vec(any::<u8>(), 0..200),
                "[a-zA-Z0-9_:.-]{1,20}".prop_map(|s| s.into_bytes()),
            ]
        }

        fn encoding() -> impl Strategy<Value = Encoding> {
            prop_oneof![
                2 => Just(Encoding::Multibulk),
                1 => any::<bool>().prop_map(|crlf| Encoding::InlineQuoted { crlf }),
                1 => any::<bool>().prop_map(|crlf| Encoding::InlineBare { crlf }),
            ]
        }

        fn requests() -> impl Strategy<Value = Vec<(Vec<Vec<u8>>, Encoding)>> {
            proptest::collection::vec((proptest::collection::vec(arg(), 1..20), encoding()), 1..12)
        }

        fn drain(parser: &mut RequestParser, out: &mut Vec<Vec<Vec<u8>>>) {
            let limits = ParserLimits::default();
            while let Some(r) = parser.next_request(&limits, true).expect("valid input") {
                out.push(r);
            }
        }

        proptest! {
            // A fixed seed: CI runs the same cases every time (set
            // PROPTEST_RNG_SEED... or change it here to explore others).
            #![proptest_config(ProptestConfig { rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed), ..ProptestConfig::default() })]
            #[test]
            fn parse_prop_split_anywhere(reqs in requests(), cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..40)) {
                let mut wire = Vec::new();
                for (args, how) in &reqs {
                    encode(args, how, &mut wire);
                }
                let mut at_once = Vec::new();
                let mut parser = RequestParser::new();
                parser.feed(&wire);
                drain(&mut parser, &mut at_once);
                let want: Vec<Vec<Vec<u8>>> = reqs.iter().map(|(args, _)| args.clone()).collect();
                prop_assert_eq!(&at_once, &want);

                let mut points: Vec<usize> = cuts.iter().map(|i| i.index(wire.len() + 1)).collect();
                points.push(0);
                points.push(wire.len());
                points.sort_unstable();
                let mut piecewise = Vec::new();
                let mut parser = RequestParser::new();
                for w in points.windows(2) {
                    parser.feed(&wire[w[0]..w[1]]);
                    drain(&mut parser, &mut piecewise);
                }
                prop_assert_eq!(parser.buffered_bytes(), 0);
                prop_assert_eq!(piecewise, want);
            }
        }
    }
}
