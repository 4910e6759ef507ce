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

/// Redis's `sdssplitargs` over one inline line or an ACL selector's
/// rules. `None` means unbalanced quotes. The C code walks a C string, so
/// the text ends at its first NUL (an inline line holds none: the line
/// search stops at NUL; a selector may, and a token ending at a NUL must
/// end the split, or an empty argument would be found there forever).
///
/// Whitespace between arguments is anything `isspace` accepts, but an
/// unquoted argument ends only at space, `\t`, `\r`, `\n` or the end, so
/// `a\x0bb` is one argument. A quote may open in the middle of an argument
/// (`foo"bar baz"` is `foobar baz`); a closing quote must be followed by
/// whitespace or the end of the line.
pub fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    // `at` reads past the end as NUL, which is how the C code sees the
    // string's terminator.
    let line = &line[..line.iter().position(|&b| b == 0).unwrap_or(line.len())];
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
mod tests;
