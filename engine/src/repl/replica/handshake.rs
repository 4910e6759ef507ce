//! The replica's reading of its primary's replies: handshake lines, the
//! PSYNC verdict and the RDB bulk of a full resync (`$<len>` or diskless
//! `$EOF:<mark>`), fed in whatever pieces the network delivers.

/// Redis reads a handshake reply into a buffer of this size
/// (`PROTO_IOBUF_LEN`); a longer line is a protocol error here.
pub const LINE_MAX_BYTES: usize = 16 * 1024;

/// The diskless transfer's end mark length (`RDB_EOF_MARK_SIZE`).
pub const EOF_MARK_BYTES: usize = 40;

/// Takes the next complete line (`\n`-terminated, a trailing `\r` cut) out
/// of `buf` extended by `input[*pos..]`, advancing `pos`. `Err` when the
/// line is longer than [`LINE_MAX_BYTES`].
pub fn next_line(buf: &mut Vec<u8>, input: &[u8], pos: &mut usize) -> Result<Option<Vec<u8>>, ()> {
    let rest = &input[*pos..];
    match rest.iter().position(|&b| b == b'\n') {
        Some(i) => {
            buf.extend_from_slice(&rest[..i]);
            *pos += i + 1;
            let mut line = std::mem::take(buf);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            match line.len() > LINE_MAX_BYTES {
                true => Err(()),
                false => Ok(Some(line)),
            }
        }
        None => {
            buf.extend_from_slice(rest);
            *pos = input.len();
            match buf.len() > LINE_MAX_BYTES {
                true => Err(()),
                false => Ok(None),
            }
        }
    }
}

/// What a primary answered to PSYNC (Redis's
/// `slaveTryPartialResynchronization`, reading half).
#[derive(Debug, PartialEq, Eq)]
pub enum PsyncReply {
    /// An empty line: a keepalive newline before the reply.
    Wait,
    /// `+FULLRESYNC <replid> <offset>`.
    Full { replid: String, offset: i64 },
    /// `+CONTINUE [<new replid>]`.
    Continue { replid: Option<String> },
    /// `-NOMASTERLINK` or `-LOADING`: try again later.
    TryLater,
    /// Any other reply: the primary does not know PSYNC; fall back to SYNC.
    NotSupported,
}

/// Parses a PSYNC reply line.
pub fn psync_reply(line: &[u8]) -> PsyncReply {
    if line.is_empty() {
        return PsyncReply::Wait;
    }
    if let Some(rest) = line.strip_prefix(b"+FULLRESYNC") {
        let text = String::from_utf8_lossy(rest);
        let mut words = text.split(' ').filter(|w| !w.is_empty());
        let replid = words.next().unwrap_or("");
        let offset = words.next().and_then(|o| o.parse::<i64>().ok());
        return match (replid.len() == super::super::NULL_REPLID.len(), offset) {
            (true, Some(offset)) => PsyncReply::Full {
                replid: replid.to_string(),
                offset,
            },
            // Redis: "Master replied with wrong +FULLRESYNC syntax." and
            // goes on with an unknown id (`PSYNC ? -1` next time).
            _ => PsyncReply::Full {
                replid: super::super::NULL_REPLID.to_string(),
                offset: -1,
            },
        };
    }
    if let Some(rest) = line.strip_prefix(b"+CONTINUE") {
        let text = String::from_utf8_lossy(rest);
        let id = text.trim_start_matches(' ');
        let id = id.split([' ', '\r', '\n']).next().unwrap_or("");
        return PsyncReply::Continue {
            replid: (id.len() == super::super::NULL_REPLID.len()).then(|| id.to_string()),
        };
    }
    if line.starts_with(b"-NOMASTERLINK") || line.starts_with(b"-LOADING") {
        return PsyncReply::TryLater;
    }
    PsyncReply::NotSupported
}

/// How the RDB's length was announced.
#[derive(Debug, PartialEq, Eq)]
pub enum Bulk {
    /// The `$...` line has not arrived yet.
    Header,
    /// `$<len>`: exactly this many bytes.
    Len(usize),
    /// `$EOF:<mark>`: until the bytes end with the mark.
    Eof(Vec<u8>),
}

/// A full resync's RDB being read.
#[derive(Debug)]
pub struct Transfer {
    pub bulk: Bulk,
    /// The header line read so far.
    pub line: Vec<u8>,
    pub rdb: Vec<u8>,
}

/// What a header line of the transfer means.
#[derive(Debug, PartialEq, Eq)]
pub enum Header {
    /// A newline: the primary is still preparing the RDB.
    Keepalive,
    Bulk(Bulk),
    /// `-...`: the primary gave up ("MASTER aborted replication ...").
    Aborted(String),
    /// Anything else ("Bad protocol from MASTER ...").
    Bad(String),
}

/// Parses the `$...` line that starts the RDB (Redis's
/// `readSyncBulkPayload`, first call).
pub fn header(line: &[u8]) -> Header {
    let text = String::from_utf8_lossy(line).into_owned();
    match line.first() {
        None => Header::Keepalive,
        Some(b'-') => Header::Aborted(text),
        Some(b'$') => {
            let rest = &line[1..];
            if let Some(mark) = rest.strip_prefix(b"EOF:") {
                if mark.len() >= EOF_MARK_BYTES {
                    return Header::Bulk(Bulk::Eof(mark[..EOF_MARK_BYTES].to_vec()));
                }
            }
            // strtol: leading digits, garbage after ignored, 0 if none.
            let digits: String = String::from_utf8_lossy(rest)
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            Header::Bulk(Bulk::Len(digits.parse().unwrap_or(0)))
        }
        Some(_) => Header::Bad(text),
    }
}

impl Transfer {
    pub fn new() -> Transfer {
        Transfer {
            bulk: Bulk::Header,
            line: Vec::new(),
            rdb: Vec::new(),
        }
    }

    /// INFO's `master_sync_total_bytes` (-1 for a diskless transfer).
    pub fn total_bytes(&self) -> i64 {
        match self.bulk {
            Bulk::Len(n) => n as i64,
            _ => -1,
        }
    }

    pub fn read_bytes(&self) -> usize {
        self.rdb.len()
    }

    /// Takes payload bytes from `input[*pos..]`. Returns whether the RDB is
    /// complete (the mark is cut off a diskless one); bytes after a
    /// `$<len>` payload are left in `input` for the stream.
    pub fn take_payload(&mut self, input: &[u8], pos: &mut usize) -> bool {
        match &self.bulk {
            Bulk::Header => false,
            Bulk::Len(n) => {
                let want = n - self.rdb.len();
                let take = want.min(input.len() - *pos);
                self.rdb.extend_from_slice(&input[*pos..*pos + take]);
                *pos += take;
                self.rdb.len() == *n
            }
            Bulk::Eof(mark) => {
                self.rdb.extend_from_slice(&input[*pos..]);
                *pos = input.len();
                if !self.rdb.ends_with(mark) {
                    return false;
                }
                self.rdb.truncate(self.rdb.len() - EOF_MARK_BYTES);
                true
            }
        }
    }
}

impl Default for Transfer {
    fn default() -> Self {
        Transfer::new()
    }
}

/// A command as Redis's `sendCommand` writes it (a RESP array of bulks).
pub fn command(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}
