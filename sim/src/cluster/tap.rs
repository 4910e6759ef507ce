//! What the host reads off a replication link, without trusting either
//! engine: the replica's requests (its PSYNC and its `REPLCONF ACK`s) and
//! the primary's answer (`+FULLRESYNC <replid> <offset>` and an RDB, or
//! `+CONTINUE`) followed by the stream, each stream byte at its offset.
//!
//! Both directions are parsed incrementally as the bytes are handed to
//! the engine that receives them, so that what the checkers see is what
//! that engine was given, and when.

/// Bytes one RESP line may hold before the link is called garbled.
const LINE_BYTES_MAX: usize = 64 * 1024;
/// Arguments one request may have at most.
const ARGS_MAX: usize = 64;

/// The replica's requests on its link, as the primary is handed them.
#[derive(Debug, Default)]
pub struct UpTap {
    buf: Vec<u8>,
    garbled: bool,
}

/// A request of the replica that the checkers care about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UpRequest {
    Psync { replid: String, offset: i64 },
    Ack { offset: u64 },
}

impl UpTap {
    /// Feeds bytes handed to the primary; returns the requests they
    /// completed, in order.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<UpRequest> {
        let mut out = Vec::new();
        if self.garbled {
            return out;
        }
        self.buf.extend_from_slice(bytes);
        let mut at = 0;
        while let Some((args, end)) = parse_request(&self.buf[at..]) {
            at += end;
            let name = args.first().map(|a| a.to_ascii_lowercase());
            match (name.as_deref(), args.len()) {
                // `PSYNC <replid> <offset> FAILOVER` too: the old primary's
                // PSYNC after a FAILOVER's hand-over.
                (Some(b"psync"), 3 | 4) => {
                    let offset = parse_num(&args[2]).unwrap_or(-1);
                    out.push(UpRequest::Psync {
                        replid: String::from_utf8_lossy(&args[1]).into_owned(),
                        offset,
                    });
                }
                (Some(b"replconf"), n) if n >= 3 && args[1].eq_ignore_ascii_case(b"ack") => {
                    if let Some(offset) = parse_num(&args[2]).filter(|o| *o >= 0) {
                        out.push(UpRequest::Ack {
                            offset: offset as u64,
                        });
                    }
                }
                _ => {}
            }
        }
        self.buf.drain(..at);
        if self.buf.len() > LINE_BYTES_MAX {
            self.garbled = true;
        }
        out
    }
}

/// Where the primary's side of a link stands.
#[derive(Clone, Debug, PartialEq, Eq)]
enum DownState {
    /// Handshake replies (`+PONG`, `+OK`) until the PSYNC's answer.
    Handshake,
    /// After `+FULLRESYNC`: the RDB's `$<len>` or `$EOF:<mark>` header.
    RdbHeader,
    /// The RDB's bytes: this many left.
    RdbLen(u64),
    /// The RDB's bytes up to the 40-byte end mark.
    RdbEof(Vec<u8>),
    /// The stream.
    Stream,
    /// Something the tap does not understand: it stops reading.
    Garbled,
}

/// How the primary answered a PSYNC.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    Full { replid: String, offset: u64 },
    Continue { replid: Option<String> },
}

/// The primary's bytes on a link, as the replica is handed them.
#[derive(Debug)]
pub struct DownTap {
    state: DownState,
    buf: Vec<u8>,
    /// How the PSYNC was answered, once it was.
    pub answer: Option<Answer>,
    /// The offset of the last stream byte before the first one received
    /// (known once the answer is).
    pub stream_base: Option<u64>,
    /// Stream bytes received, in order.
    pub stream: Vec<u8>,
    /// The PSYNC offset the replica asked for (`+CONTINUE` starts there).
    pub asked_offset: Option<i64>,
    /// Whether the RDB of a full resync was wholly received.
    pub rdb_done: bool,
}

impl Default for DownTap {
    fn default() -> Self {
        DownTap {
            state: DownState::Handshake,
            buf: Vec::new(),
            answer: None,
            stream_base: None,
            stream: Vec::new(),
            asked_offset: None,
            rdb_done: false,
        }
    }
}

impl DownTap {
    /// The offset of the last stream byte received (the replica's offset
    /// once it applied them), if the stream started.
    pub fn offset(&self) -> Option<u64> {
        self.stream_base.map(|b| b + self.stream.len() as u64)
    }

    pub fn garbled(&self) -> bool {
        self.state == DownState::Garbled
    }

    /// Feeds bytes handed to the replica.
    pub fn feed(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        // Each pass consumes at least one byte or changes state towards
        // the stream; the stream state consumes everything.
        while !rest.is_empty() {
            match &mut self.state {
                DownState::Garbled => return,
                DownState::Stream => {
                    self.stream.extend_from_slice(rest);
                    return;
                }
                DownState::RdbLen(left) => {
                    let n = (*left).min(rest.len() as u64) as usize;
                    *left -= n as u64;
                    rest = &rest[n..];
                    if *left == 0 {
                        self.rdb_done = true;
                        self.state = DownState::Stream;
                    }
                }
                DownState::RdbEof(mark) => {
                    let mark = mark.clone();
                    self.buf.extend_from_slice(rest);
                    rest = &[];
                    if let Some(end) = find(&self.buf, &mark) {
                        let tail = self.buf.split_off(end + mark.len());
                        self.buf.clear();
                        self.rdb_done = true;
                        self.state = DownState::Stream;
                        self.stream.extend_from_slice(&tail);
                    } else {
                        // Keep only what may still hold the mark's start.
                        let keep = self.buf.len().saturating_sub(mark.len());
                        self.buf.drain(..keep);
                    }
                }
                DownState::Handshake | DownState::RdbHeader => {
                    let Some(nl) = rest.iter().position(|&b| b == b'\n') else {
                        self.buf.extend_from_slice(rest);
                        if self.buf.len() > LINE_BYTES_MAX {
                            self.state = DownState::Garbled;
                        }
                        return;
                    };
                    self.buf.extend_from_slice(&rest[..=nl]);
                    rest = &rest[nl + 1..];
                    let line = std::mem::take(&mut self.buf);
                    self.line(&line);
                }
            }
        }
    }

    fn line(&mut self, line: &[u8]) {
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end_matches(['\r', '\n']);
        let mut words = text.split(' ');
        let first = words.next().unwrap_or("");
        match (&self.state, first) {
            (DownState::Handshake, "+FULLRESYNC") => {
                let replid = words.next().unwrap_or("").to_string();
                let Some(offset) = words.next().and_then(|o| o.parse().ok()) else {
                    self.state = DownState::Garbled;
                    return;
                };
                self.answer = Some(Answer::Full { replid, offset });
                self.stream_base = Some(offset);
                self.state = DownState::RdbHeader;
            }
            (DownState::Handshake, "+CONTINUE") => {
                let replid = words.next().map(str::to_string);
                self.answer = Some(Answer::Continue { replid });
                self.stream_base = self.asked_offset.map(|o| (o.max(1) - 1) as u64);
                self.state = DownState::Stream;
            }
            (DownState::Handshake, _) => {} // +PONG, +OK, an error
            (DownState::RdbHeader, _) if first.starts_with("$EOF:") => {
                self.state = DownState::RdbEof(first.as_bytes()[5..].to_vec());
            }
            (DownState::RdbHeader, _) if first.starts_with('$') => {
                match first[1..].parse::<u64>() {
                    Ok(0) => {
                        self.rdb_done = true;
                        self.state = DownState::Stream;
                    }
                    Ok(n) => self.state = DownState::RdbLen(n),
                    Err(_) => self.state = DownState::Garbled,
                }
            }
            // A newline keepalive before the RDB (Redis sends them).
            (DownState::RdbHeader, "") => {}
            _ => self.state = DownState::Garbled,
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

fn parse_num(bytes: &[u8]) -> Option<i64> {
    std::str::from_utf8(bytes).ok()?.parse().ok()
}

/// One RESP multibulk request at the start of `bytes` (an inline one is
/// skipped as a line): its arguments and where it ends.
pub fn parse_request(bytes: &[u8]) -> Option<(Vec<Vec<u8>>, usize)> {
    if bytes.first() != Some(&b'*') {
        let nl = bytes.iter().position(|&b| b == b'\n')?;
        return Some((Vec::new(), nl + 1));
    }
    let (argc, mut at) = number_line(bytes, 0)?;
    let mut args = Vec::new();
    for _ in 0..argc.min(ARGS_MAX) {
        if bytes.get(at) != Some(&b'$') {
            return None;
        }
        let (len, next) = number_line(bytes, at)?;
        let end = next.checked_add(len)?;
        if end + 2 > bytes.len() {
            return None;
        }
        args.push(bytes[next..end].to_vec());
        at = end + 2;
    }
    Some((args, at))
}

/// `<prefix><digits>\r\n` at `at`: the number and the offset after it.
fn number_line(bytes: &[u8], at: usize) -> Option<(usize, usize)> {
    let line = bytes.get(at + 1..)?;
    let nl = line.iter().take(LINE_BYTES_MAX).position(|&b| b == b'\n')?;
    let digits = std::str::from_utf8(line[..nl].strip_suffix(b"\r")?).ok()?;
    let n = digits.parse::<i64>().ok()?.max(0) as usize;
    Some((n, at + 1 + nl + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_resync_then_the_stream_whatever_the_cuts() {
        let bytes =
            b"+PONG\r\n+OK\r\n+OK\r\n+FULLRESYNC abc 100\r\n$5\r\nREDIS*1\r\n$4\r\nPING\r\n";
        for cut in 0..bytes.len() {
            let mut t = DownTap::default();
            t.feed(&bytes[..cut]);
            t.feed(&bytes[cut..]);
            assert_eq!(
                t.answer,
                Some(Answer::Full {
                    replid: "abc".into(),
                    offset: 100
                })
            );
            assert!(t.rdb_done);
            assert_eq!(t.stream, b"*1\r\n$4\r\nPING\r\n");
            assert_eq!(t.offset(), Some(114));
        }
    }

    #[test]
    fn a_diskless_rdb_ends_at_its_mark() {
        let mark = "m".repeat(40);
        let bytes = format!("+FULLRESYNC x 7\r\n$EOF:{mark}\r\nRDBDATA{mark}*1\r\n");
        for cut in 0..bytes.len() {
            let mut t = DownTap::default();
            t.feed(&bytes.as_bytes()[..cut]);
            t.feed(&bytes.as_bytes()[cut..]);
            assert_eq!(t.stream, b"*1\r\n", "cut {cut}");
        }
    }

    #[test]
    fn a_continue_starts_at_the_asked_offset() {
        let mut t = DownTap {
            asked_offset: Some(51),
            ..DownTap::default()
        };
        t.feed(b"+CONTINUE id2\r\nabc");
        assert_eq!(t.stream_base, Some(50));
        assert_eq!(t.offset(), Some(53));
    }

    #[test]
    fn the_up_tap_sees_psync_and_acks() {
        let mut t = UpTap::default();
        let mut got = t.feed(b"*3\r\n$5\r\nPSYNC\r\n$1\r\n?\r\n$2\r\n-1\r\n*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$2\r");
        got.extend(t.feed(b"\n12\r\n"));
        assert_eq!(
            got,
            vec![
                UpRequest::Psync {
                    replid: "?".into(),
                    offset: -1
                },
                UpRequest::Ack { offset: 12 }
            ]
        );
    }
}
