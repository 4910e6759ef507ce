//! A minimal RESP client over turmoil's TCP: replies rendered as text,
//! every read bounded by [`REPLY_TIMEOUT`].

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::net::PORT;

/// How long a client waits for a reply before it gives the connection up.
const REPLY_TIMEOUT: Duration = Duration::from_millis(400);

/// A reply rendered as text: `+OK`, `-ERR ...`, `:5`, `$hello`, `$nil`,
/// `*[a,b]`.
pub(super) type Reply = String;

pub(super) struct Conn {
    pub(super) stream: turmoil::net::TcpStream,
    buf: Vec<u8>,
}

pub(super) fn encode(args: &[&str]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n{a}\r\n", a.len()).as_bytes());
    }
    out
}

/// Parses one reply from `buf`: the reply and the bytes it used, or `None`
/// if incomplete.
fn parse(buf: &[u8]) -> Option<(Reply, usize)> {
    let end = buf.windows(2).position(|w| w == b"\r\n")?;
    let line = std::str::from_utf8(&buf[1..end]).expect("utf-8 reply line");
    let rest = end + 2;
    match buf.first()? {
        b'+' | b'-' | b':' => Some((format!("{}{line}", buf[0] as char), rest)),
        b'$' => {
            let n: i64 = line.parse().expect("bulk length");
            if n < 0 {
                return Some(("$nil".into(), rest));
            }
            let n = n as usize;
            if buf.len() < rest + n + 2 {
                return None;
            }
            let body = String::from_utf8_lossy(&buf[rest..rest + n]);
            Some((format!("${body}"), rest + n + 2))
        }
        b'*' => {
            let n: usize = line.parse().expect("array length");
            let mut used = rest;
            let mut items = Vec::new();
            for _ in 0..n {
                let (item, len) = parse(&buf[used..])?;
                items.push(item);
                used += len;
            }
            Some((format!("*[{}]", items.join(",")), used))
        }
        other => panic!("unexpected reply type byte {other:?}"),
    }
}

impl Conn {
    /// A client over an already connected `stream`.
    pub(super) fn new(stream: turmoil::net::TcpStream) -> Conn {
        Conn {
            stream,
            buf: Vec::new(),
        }
    }

    /// Connects, or `None` if the server cannot be reached in time.
    pub(super) async fn open() -> Option<Conn> {
        let connect = turmoil::net::TcpStream::connect(("server", PORT));
        match tokio::time::timeout(REPLY_TIMEOUT, connect).await {
            Ok(Ok(stream)) => Some(Conn::new(stream)),
            _ => None,
        }
    }

    pub(super) async fn send(&mut self, requests: &[Vec<u8>]) -> bool {
        let bytes: Vec<u8> = requests.concat();
        self.stream.write_all(&bytes).await.is_ok()
    }

    /// The next `n` replies, or `None` on timeout or a closed connection.
    async fn replies(&mut self, n: usize) -> Option<Vec<Reply>> {
        let mut out = Vec::new();
        let read = async {
            while out.len() < n {
                if let Some((reply, used)) = parse(&self.buf) {
                    self.buf.drain(..used);
                    out.push(reply);
                    continue;
                }
                let mut chunk = [0u8; 4096];
                match self.stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => return false,
                    Ok(k) => self.buf.extend_from_slice(&chunk[..k]),
                }
            }
            true
        };
        match tokio::time::timeout(REPLY_TIMEOUT, read).await {
            Ok(true) => Some(out),
            _ => None,
        }
    }

    /// Sends `requests` as one write and reads their replies.
    pub(super) async fn call(&mut self, requests: &[Vec<u8>]) -> Option<Vec<Reply>> {
        if !self.send(requests).await {
            return None;
        }
        self.replies(requests.len()).await
    }
}

/// Reads everything until the server closes the connection.
pub(super) async fn read_to_close(stream: &mut turmoil::net::TcpStream) -> String {
    let mut all = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut all)).await;
    String::from_utf8_lossy(&all).into_owned()
}
