//! The client side of RESP: an incremental RESP2 + RESP3 reply decoder, the
//! multibulk request encoder, and redis-cli style rendering of replies.
//!
//! The simulator's clients and the tests use these to talk to the engine as
//! a real client would. The decoder keeps partly built aggregates on an
//! explicit stack rather than recursing, so a reply nested a thousand levels
//! deep costs heap, not native stack, and nesting beyond
//! [`FRAME_DEPTH_MAX`] is rejected.

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

/// The deepest nesting of aggregates the decoder accepts.
pub const FRAME_DEPTH_MAX: usize = 1024;

/// The longest `+`, `-`, `:`, `,`, `(` (and header) line the decoder
/// accepts before calling the stream invalid.
pub const FRAME_LINE_MAX_BYTES: usize = 64 * 1024 * 1024;

/// The largest bulk (`$`, `=`, `!`) payload the decoder accepts.
pub const FRAME_BULK_MAX_BYTES: usize = i32::MAX as usize;

/// The largest aggregate element count the decoder accepts (hiredis's
/// default `maxelements`).
pub const FRAME_AGGREGATE_MAX_COUNT: usize = u32::MAX as usize;

/// At most this many element slots are reserved from an announced count, so
/// that a header alone cannot reserve unbounded memory.
const AGGREGATE_PREALLOC_MAX: usize = 1024;

/// The fewest bytes an element takes (`_\r\n`, `+\r\n`).
const ELEMENT_BYTES_MIN: usize = 3;

/// The buffer is compacted only once this many bytes are consumed (and at
/// least half of it), which keeps compaction amortised O(1) per byte.
const COMPACT_MIN_BYTES: usize = 4 * 1024;

pub use super::encode::encode_request;

/// The kinds of aggregate a decoder can be inside of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AggregateKind {
    Array,
    Map,
    Set,
    Push,
    /// RESP3 `|` attributes describe the reply that follows them; clients may
    /// ignore them, and this decoder drops them.
    Attribute,
}

/// An aggregate whose header has been read but not all its elements.
#[derive(Debug)]
struct Partial {
    kind: AggregateKind,
    /// Elements still to come (for maps and attributes, keys and values
    /// each count).
    remaining: usize,
    items: Vec<Frame>,
}

impl Partial {
    fn into_frame(self) -> Frame {
        debug_assert_eq!(self.remaining, 0);
        build_aggregate(self.kind, self.items)
    }
}

fn build_aggregate(kind: AggregateKind, items: Vec<Frame>) -> Frame {
    match kind {
        AggregateKind::Array => Frame::Array(items),
        AggregateKind::Set => Frame::Set(items),
        AggregateKind::Push => Frame::Push(items),
        AggregateKind::Map | AggregateKind::Attribute => {
            debug_assert_eq!(items.len() % 2, 0);
            let mut pairs = Vec::with_capacity(items.len() / 2);
            let mut it = items.into_iter();
            while let (Some(k), Some(v)) = (it.next(), it.next()) {
                pairs.push((k, v));
            }
            Frame::Map(pairs)
        }
    }
}

/// The kinds of bulk payload (`$len\r\n<payload>\r\n`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BulkKind {
    Bulk,
    Verbatim,
    BlobError,
}

/// What one header or scalar yields.
enum Element {
    Value(Frame),
    Aggregate(AggregateKind, usize),
    Bulk(BulkKind, usize),
    /// An empty attribute: nothing to keep.
    Nothing,
}

/// Incremental reply decoder: feed bytes split anywhere, take frames out.
#[derive(Default, Debug)]
pub struct FrameDecoder {
    /// Received bytes; those before `pos` are consumed.
    buf: Vec<u8>,
    pos: usize,
    /// How far past `pos` a pending line search already looked.
    scanned: usize,
    /// Open aggregates, outermost first. Never longer than FRAME_DEPTH_MAX.
    stack: Vec<Partial>,
    /// A bulk header already read whose payload has not fully arrived.
    pending_bulk: Option<(BulkKind, usize)>,
    /// Set by the first error; every later call returns it again.
    failed: Option<String>,
}

impl FrameDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn feed(&mut self, bytes: &[u8]) {
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        } else if self.pos >= COMPACT_MIN_BYTES && self.pos >= self.buf.len() - self.pos {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes received but not yet consumed by a complete element.
    pub fn buffered_bytes(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Whether the decoder is in the middle of a frame (a partly received
    /// aggregate, bulk or line). A connection closed in that state lost a
    /// reply mid-way.
    pub fn is_mid_frame(&self) -> bool {
        !self.stack.is_empty() || self.pending_bulk.is_some() || self.pos < self.buf.len()
    }

    /// `Ok(None)`: need more bytes. `Err`: the stream is not valid RESP; the
    /// decoder then stays failed.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, String> {
        if let Some(err) = &self.failed {
            return Err(err.clone());
        }
        let result = self.decode();
        if let Err(err) = &result {
            self.failed = Some(err.clone());
        }
        result
    }

    fn decode(&mut self) -> Result<Option<Frame>, String> {
        // Each iteration consumes at least one complete element or returns,
        // so the loop is bounded by the buffered bytes.
        loop {
            let element = match self.pending_bulk {
                Some((kind, len)) => match self.take_bulk(kind, len)? {
                    Some(frame) => Element::Value(frame),
                    None => return Ok(None),
                },
                None => match self.read_element()? {
                    Some(element) => element,
                    None => return Ok(None),
                },
            };
            let frame = match element {
                Element::Nothing => continue,
                Element::Bulk(kind, len) => {
                    self.pending_bulk = Some((kind, len));
                    continue;
                }
                Element::Value(frame) => frame,
                Element::Aggregate(AggregateKind::Attribute, 0) => continue,
                Element::Aggregate(kind, 0) => build_aggregate(kind, Vec::new()),
                Element::Aggregate(kind, remaining) => {
                    if self.stack.len() >= FRAME_DEPTH_MAX {
                        return Err(format!(
                            "Protocol error: nesting deeper than {FRAME_DEPTH_MAX}"
                        ));
                    }
                    // Every element takes at least 3 bytes (`_\r\n`), so
                    // the bytes already here bound what a top-level
                    // aggregate may reserve beyond the fixed cap (once per
                    // frame, not per nesting level): a long reply that
                    // arrived whole is collected without regrowing (and
                    // copying) its Vec.
                    let arrived_max = if self.stack.is_empty() {
                        self.buffered_bytes() / ELEMENT_BYTES_MIN
                    } else {
                        0
                    };
                    let reserve = remaining.min(AGGREGATE_PREALLOC_MAX.max(arrived_max));
                    self.stack.push(Partial {
                        kind,
                        remaining,
                        items: Vec::with_capacity(reserve),
                    });
                    continue;
                }
            };
            if let Some(done) = self.complete(frame) {
                return Ok(Some(done));
            }
        }
    }

    /// Hands a finished element to the innermost open aggregate, closing
    /// every aggregate it completes. Returns a finished top-level frame.
    fn complete(&mut self, mut frame: Frame) -> Option<Frame> {
        loop {
            let Some(top) = self.stack.last_mut() else {
                return Some(frame);
            };
            debug_assert!(top.remaining > 0);
            top.items.push(frame);
            top.remaining -= 1;
            if top.remaining > 0 {
                return None;
            }
            let finished = self.stack.pop().expect("stack top exists");
            if finished.kind == AggregateKind::Attribute {
                // The attribute is not an element of its parent: drop it
                // without counting it.
                return None;
            }
            frame = finished.into_frame();
        }
    }

    /// Reads one type byte and its line. `Ok(None)`: the line is incomplete.
    fn read_element(&mut self) -> Result<Option<Element>, String> {
        if self.pos == self.buf.len() {
            return Ok(None);
        }
        let Some(end) = self.find_crlf()? else {
            return Ok(None);
        };
        let kind = self.buf[self.pos];
        let line = &self.buf[self.pos + 1..end];
        let element = match kind {
            b'+' => Element::Value(Frame::Simple(line.to_vec())),
            b'-' => Element::Value(Frame::Error(line.to_vec())),
            b':' => Element::Value(Frame::Integer(parse_i64(line)?)),
            b'(' => Element::Value(Frame::BigNumber(line.to_vec())),
            b',' => Element::Value(Frame::Double(parse_double(line)?)),
            b'#' => Element::Value(match line {
                b"t" => Frame::Boolean(true),
                b"f" => Frame::Boolean(false),
                _ => return Err(format!("Protocol error: bad boolean {:?}", lossy(line))),
            }),
            b'_' => {
                if !line.is_empty() {
                    return Err(format!("Protocol error: bad null {:?}", lossy(line)));
                }
                Element::Value(Frame::Null)
            }
            b'$' | b'=' | b'!' => {
                let bulk = match kind {
                    b'$' => BulkKind::Bulk,
                    b'=' => BulkKind::Verbatim,
                    _ => BulkKind::BlobError,
                };
                match parse_length(line, FRAME_BULK_MAX_BYTES)? {
                    None => Element::Value(Frame::Null),
                    Some(len) => Element::Bulk(bulk, len),
                }
            }
            b'*' | b'%' | b'~' | b'>' | b'|' => {
                let aggregate = match kind {
                    b'*' => AggregateKind::Array,
                    b'%' => AggregateKind::Map,
                    b'~' => AggregateKind::Set,
                    b'>' => AggregateKind::Push,
                    _ => AggregateKind::Attribute,
                };
                match parse_length(line, FRAME_AGGREGATE_MAX_COUNT)? {
                    None if aggregate == AggregateKind::Attribute => {
                        return Err("Protocol error: null attribute".into());
                    }
                    None => Element::Value(Frame::Null),
                    Some(count) => {
                        let paired =
                            matches!(aggregate, AggregateKind::Map | AggregateKind::Attribute);
                        let remaining = if paired { count * 2 } else { count };
                        if remaining == 0 && aggregate == AggregateKind::Attribute {
                            Element::Nothing
                        } else {
                            Element::Aggregate(aggregate, remaining)
                        }
                    }
                }
            }
            other => {
                return Err(format!(
                    "Protocol error, got {:?} as reply type byte",
                    other as char
                ))
            }
        };
        self.consume_to(end + 2);
        Ok(Some(element))
    }

    /// Takes a bulk payload once it and its CRLF have arrived.
    fn take_bulk(&mut self, kind: BulkKind, len: usize) -> Result<Option<Frame>, String> {
        if self.buffered_bytes() < len + 2 {
            return Ok(None);
        }
        let start = self.pos;
        if &self.buf[start + len..start + len + 2] != b"\r\n" {
            return Err("Protocol error: bulk payload not followed by CRLF".into());
        }
        let data = self.buf[start..start + len].to_vec();
        self.consume_to(start + len + 2);
        self.pending_bulk = None;
        Ok(Some(match kind {
            BulkKind::Bulk => Frame::Bulk(data),
            BulkKind::BlobError => Frame::Error(data),
            BulkKind::Verbatim => {
                if data.len() < 4 || data[3] != b':' {
                    return Err("Protocol error: verbatim string without a format".into());
                }
                Frame::Verbatim {
                    format: [data[0], data[1], data[2]],
                    data: data[4..].to_vec(),
                }
            }
        }))
    }

    /// The index of the `\r` of the first CRLF after the type byte.
    fn find_crlf(&mut self) -> Result<Option<usize>, String> {
        // Resume where the previous search stopped; the `\r` before a `\n`
        // is checked by index, so it may lie before the resume point.
        let from = self.pos + 1 + self.scanned;
        let window = &self.buf[from..];
        match window.iter().position(|&b| b == b'\n') {
            Some(off) => {
                let nl = from + off;
                if nl == self.pos + 1 || self.buf[nl - 1] != b'\r' {
                    return Err("Protocol error: line not terminated by CRLF".into());
                }
                Ok(Some(nl - 1))
            }
            None => {
                self.scanned = self.buf.len() - self.pos - 1;
                if self.scanned > FRAME_LINE_MAX_BYTES {
                    return Err("Protocol error: line too long".into());
                }
                Ok(None)
            }
        }
    }

    fn consume_to(&mut self, pos: usize) {
        debug_assert!(pos <= self.buf.len());
        self.pos = pos;
        self.scanned = 0;
    }
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn parse_i64(line: &[u8]) -> Result<i64, String> {
    decimal_i64(line).ok_or_else(|| format!("Protocol error: bad integer {:?}", lossy(line)))
}

/// `str::parse::<i64>` over bytes, without the UTF-8 check: an optional
/// sign, then one or more ASCII digits, `None` on overflow. Every integer
/// and length line of every reply goes through it.
fn decimal_i64(line: &[u8]) -> Option<i64> {
    let (negative, digits) = match line.first() {
        Some(b'-') => (true, &line[1..]),
        Some(b'+') => (false, &line[1..]),
        _ => (false, line),
    };
    if digits.is_empty() {
        return None;
    }
    let mut n: i64 = 0;
    for &b in digits {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        n = n.checked_mul(10)?;
        // Accumulated on the sign's side, so that i64::MIN parses.
        n = if negative {
            n.checked_sub(i64::from(digit))?
        } else {
            n.checked_add(i64::from(digit))?
        };
    }
    Some(n)
}

fn parse_double(line: &[u8]) -> Result<f64, String> {
    std::str::from_utf8(line)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .ok_or_else(|| format!("Protocol error: bad double {:?}", lossy(line)))
}

/// A length or count: `-1` is null (`None`), anything else must lie in
/// `0..=max`.
fn parse_length(line: &[u8], max: usize) -> Result<Option<usize>, String> {
    let n = parse_i64(line)?;
    if n == -1 {
        return Ok(None);
    }
    match usize::try_from(n) {
        Ok(n) if n <= max => Ok(Some(n)),
        _ => Err(format!("Protocol error: bad length {n}")),
    }
}

impl Frame {
    /// Renders the frame the way `redis-cli` (7.0, TTY mode) prints it, e.g.
    /// `"bar"`, `(integer) 1`, `(nil)`, `(error) ERR ...`, and numbered lines
    /// `1) "a"` for aggregates (`1~` for sets, `1#` with `=>` for maps). The
    /// result has no trailing newline.
    ///
    /// Doubles print as `%.17g`, the text Redis 7.0 sends them as. redis-cli
    /// 7.0 cannot print big numbers; they render as `(big number) N`.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.render_into("", &mut out);
        if out.ends_with('\n') {
            out.pop();
        }
        out
    }

    /// cliFormatReplyTTY: appends this frame and a newline. `prefix` is the
    /// indentation for every line after the first.
    fn render_into(&self, prefix: &str, out: &mut String) {
        match self {
            Frame::Error(e) => {
                out.push_str("(error) ");
                out.push_str(&String::from_utf8_lossy(e));
            }
            Frame::Simple(s) => out.push_str(&String::from_utf8_lossy(s)),
            Frame::Integer(n) => out.push_str(&format!("(integer) {n}")),
            Frame::Double(d) => {
                out.push_str("(double) ");
                out.push_str(&super::encode::format_double(*d));
            }
            Frame::BigNumber(n) => {
                out.push_str("(big number) ");
                out.push_str(&String::from_utf8_lossy(n));
            }
            Frame::Bulk(b) => out.push_str(&repr(b)),
            Frame::Verbatim { data, .. } => out.push_str(&String::from_utf8_lossy(data)),
            Frame::Null => out.push_str("(nil)"),
            Frame::Boolean(b) => out.push_str(if *b { "(true)" } else { "(false)" }),
            Frame::Array(items) | Frame::Set(items) | Frame::Push(items) => {
                if items.is_empty() {
                    out.push_str(match self {
                        Frame::Array(_) => "(empty array)",
                        Frame::Set(_) => "(empty set)",
                        _ => "(empty push)",
                    });
                } else {
                    let sep = if matches!(self, Frame::Set(_)) {
                        '~'
                    } else {
                        ')'
                    };
                    let width = decimal_width(items.len());
                    let inner = format!("{prefix}{}", " ".repeat(width + 2));
                    for (i, item) in items.iter().enumerate() {
                        let lead = if i == 0 { "" } else { prefix };
                        out.push_str(&format!("{lead}{:>width$}{sep} ", i + 1));
                        item.render_into(&inner, out);
                    }
                    // Every element ended its own line.
                    return;
                }
            }
            Frame::Map(pairs) => {
                if pairs.is_empty() {
                    out.push_str("(empty hash)");
                } else {
                    let width = decimal_width(pairs.len());
                    let inner = format!("{prefix}{}", " ".repeat(width + 2));
                    for (i, (key, value)) in pairs.iter().enumerate() {
                        let lead = if i == 0 { "" } else { prefix };
                        out.push_str(&format!("{lead}{:>width$}# ", i + 1));
                        key.render_into(&inner, out);
                        out.pop();
                        out.push_str(" => ");
                        if value.is_multiline_tty() {
                            // redis-cli breaks the line so the value's
                            // numbered lines align.
                            out.push('\n');
                            out.push_str(&inner);
                        }
                        value.render_into(&inner, out);
                    }
                    return;
                }
            }
        }
        out.push('\n');
    }

    /// cliIsMultilineValueTTY.
    fn is_multiline_tty(&self) -> bool {
        let mut frame = self;
        // Iterative: only a single-element chain can recurse.
        loop {
            match frame {
                Frame::Array(items) | Frame::Set(items) | Frame::Push(items) => match items.len() {
                    0 => return false,
                    1 => frame = &items[0],
                    _ => return true,
                },
                Frame::Map(pairs) => match pairs.len() {
                    0 => return false,
                    1 => frame = &pairs[0].1,
                    _ => return true,
                },
                _ => return false,
            }
        }
    }
}

fn decimal_width(mut n: usize) -> usize {
    let mut width = 1;
    while n >= 10 {
        n /= 10;
        width += 1;
    }
    width
}

/// sdscatrepr: a double-quoted string with C-style escapes.
fn repr(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    for &b in bytes {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests;
