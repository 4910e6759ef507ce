//! A RESP2/RESP3 reply decoder and a renderer that prints replies exactly as
//! `redis-cli` does on a terminal (its `--no-raw` format), so transcripts
//! read like a redis-cli session and compare with real redis-cli output.

/// One decoded reply.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    Status(Vec<u8>),
    Error(Vec<u8>),
    Integer(i64),
    Bulk(Vec<u8>),
    Nil,
    Double(String),
    Boolean(bool),
    BigNumber(String),
    Verbatim(Vec<u8>),
    Array(Vec<Reply>),
    Set(Vec<Reply>),
    Push(Vec<Reply>),
    /// Keys and values interleaved, as hiredis stores them.
    Map(Vec<Reply>),
}

/// Nesting deeper than this is treated as invalid (a bound on recursion).
pub const DEPTH_MAX: usize = 64;

/// Decodes one reply from the start of `buf`. `Ok(None)`: incomplete.
/// On success returns the reply and the bytes it used.
pub fn decode(buf: &[u8]) -> Result<Option<(Reply, usize)>, String> {
    decode_at(buf, 0, 0)
}

/// Decodes every complete reply in `buf`; an incomplete tail is an error.
pub fn decode_all(mut buf: &[u8]) -> Result<Vec<Reply>, String> {
    let mut out = Vec::new();
    while !buf.is_empty() {
        match decode(buf)? {
            Some((r, used)) => {
                out.push(r);
                buf = &buf[used..];
            }
            None => {
                return Err(format!(
                    "incomplete reply: {:?}",
                    String::from_utf8_lossy(buf)
                ))
            }
        }
    }
    Ok(out)
}

fn line(buf: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let rest = buf.get(at..)?;
    let end = rest.windows(2).position(|w| w == b"\r\n")?;
    Some((&rest[..end], at + end + 2))
}

fn number(text: &[u8]) -> Result<i64, String> {
    std::str::from_utf8(text)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("bad number {:?}", String::from_utf8_lossy(text)))
}

fn decode_at(buf: &[u8], at: usize, depth: usize) -> Result<Option<(Reply, usize)>, String> {
    if depth > DEPTH_MAX {
        return Err("reply nested too deeply".into());
    }
    let Some(&kind) = buf.get(at) else {
        return Ok(None);
    };
    let Some((text, next)) = line(buf, at + 1) else {
        return Ok(None);
    };
    let text_string = || String::from_utf8_lossy(text).into_owned();
    let reply = match kind {
        b'+' => Reply::Status(text.to_vec()),
        b'-' => Reply::Error(text.to_vec()),
        b':' => Reply::Integer(number(text)?),
        b'_' => Reply::Nil,
        b',' => Reply::Double(text_string()),
        b'(' => Reply::BigNumber(text_string()),
        b'#' => match text {
            b"t" => Reply::Boolean(true),
            b"f" => Reply::Boolean(false),
            _ => return Err(format!("bad boolean {:?}", text_string())),
        },
        b'$' | b'=' | b'!' => {
            let len = number(text)?;
            if len < 0 {
                return Ok(Some((Reply::Nil, next)));
            }
            let len = len as usize;
            if buf.len() < next + len + 2 {
                return Ok(None);
            }
            if &buf[next + len..next + len + 2] != b"\r\n" {
                return Err("bulk not terminated by CRLF".into());
            }
            let data = buf[next..next + len].to_vec();
            let reply = match kind {
                b'$' => Reply::Bulk(data),
                b'!' => Reply::Error(data),
                // hiredis drops the `txt:` format prefix of verbatim strings.
                _ => Reply::Verbatim(data.get(4..).unwrap_or_default().to_vec()),
            };
            return Ok(Some((reply, next + len + 2)));
        }
        b'*' | b'~' | b'>' | b'%' => {
            let n = number(text)?;
            if n < 0 {
                return Ok(Some((Reply::Nil, next)));
            }
            let items = if kind == b'%' {
                n as usize * 2
            } else {
                n as usize
            };
            let mut elems = Vec::with_capacity(items.min(1024));
            let mut pos = next;
            for _ in 0..items {
                match decode_at(buf, pos, depth + 1)? {
                    Some((r, p)) => {
                        elems.push(r);
                        pos = p;
                    }
                    None => return Ok(None),
                }
            }
            let reply = match kind {
                b'*' => Reply::Array(elems),
                b'~' => Reply::Set(elems),
                b'>' => Reply::Push(elems),
                _ => Reply::Map(elems),
            };
            return Ok(Some((reply, pos)));
        }
        other => return Err(format!("unknown reply type byte {:?}", other as char)),
    };
    Ok(Some((reply, next)))
}

/// `sdscatrepr`: a quoted string with C escapes, as redis-cli prints bulks.
pub fn repr(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() + 2);
    s.push('"');
    for &b in bytes {
        match b {
            b'\\' => s.push_str("\\\\"),
            b'"' => s.push_str("\\\""),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            7 => s.push_str("\\a"),
            8 => s.push_str("\\b"),
            0x20..=0x7e => s.push(b as char),
            _ => s.push_str(&format!("\\x{b:02x}")),
        }
    }
    s.push('"');
    s
}

/// The reply to `args` as `redis-cli --no-raw` prints it: a few commands
/// whose replies are text for humans (INFO, CLIENT LIST/INFO, LATENCY
/// DOCTOR, ...) are always printed raw, as redis-cli's `cliSendCommand`
/// decides; everything else as on a terminal.
pub fn render_reply_to(args: &[Vec<u8>], reply: &Reply) -> String {
    if prints_raw(args) {
        let mut out = render_raw(reply);
        out.push('\n');
        out
    } else {
        render(reply)
    }
}

fn prints_raw(args: &[Vec<u8>]) -> bool {
    let arg = |i: usize| {
        args.get(i)
            .map(|a| String::from_utf8_lossy(a).to_ascii_lowercase())
            .unwrap_or_default()
    };
    let (cmd, sub) = (arg(0), arg(1));
    let argc = args.len();
    matches!(cmd.as_str(), "info" | "lolwut")
        || (cmd == "debug" && matches!(sub.as_str(), "htstats" | "htstats-key" | "client-eviction"))
        || (cmd == "memory" && matches!(sub.as_str(), "malloc-stats" | "doctor"))
        || (argc == 2 && cmd == "cluster" && matches!(sub.as_str(), "nodes" | "info"))
        || (cmd == "client" && matches!(sub.as_str(), "list" | "info"))
        || (argc == 3 && cmd == "latency" && sub == "graph")
        || (argc == 2 && cmd == "latency" && sub == "doctor")
}

/// `cliFormatReplyRaw`, without the final newline.
pub fn render_raw(reply: &Reply) -> String {
    match reply {
        Reply::Status(b) | Reply::Error(b) | Reply::Bulk(b) | Reply::Verbatim(b) => {
            String::from_utf8_lossy(b).into_owned()
        }
        Reply::Nil => String::new(),
        Reply::Integer(n) => n.to_string(),
        Reply::Double(d) | Reply::BigNumber(d) => d.clone(),
        Reply::Boolean(b) => if *b { "(true)" } else { "(false)" }.into(),
        Reply::Array(e) | Reply::Set(e) | Reply::Push(e) | Reply::Map(e) => {
            e.iter().map(render_raw).collect::<Vec<_>>().join("\n")
        }
    }
}

/// The reply as redis-cli prints it on a terminal (`cliFormatReplyTTY`),
/// ending with a newline.
pub fn render(reply: &Reply) -> String {
    render_prefixed(reply, "")
}

fn render_prefixed(reply: &Reply, prefix: &str) -> String {
    match reply {
        Reply::Status(s) => format!("{}\n", String::from_utf8_lossy(s)),
        Reply::Error(e) => format!("(error) {}\n", String::from_utf8_lossy(e)),
        Reply::Integer(n) => format!("(integer) {n}\n"),
        Reply::Double(d) => format!("(double) {d}\n"),
        Reply::BigNumber(n) => format!("(big number) {n}\n"),
        Reply::Boolean(b) => format!("({b})\n"),
        Reply::Bulk(b) => format!("{}\n", repr(b)),
        Reply::Verbatim(v) => format!("{}\n", String::from_utf8_lossy(v)),
        Reply::Nil => "(nil)\n".into(),
        Reply::Array(e) | Reply::Set(e) | Reply::Push(e) | Reply::Map(e) if e.is_empty() => {
            match reply {
                Reply::Array(_) => "(empty array)\n",
                Reply::Set(_) => "(empty set)\n",
                Reply::Push(_) => "(empty push)\n",
                _ => "(empty hash)\n",
            }
            .into()
        }
        Reply::Array(elems) | Reply::Set(elems) | Reply::Push(elems) | Reply::Map(elems) => {
            let is_map = matches!(reply, Reply::Map(_));
            let shown = if is_map { elems.len() / 2 } else { elems.len() };
            let width = shown.to_string().len();
            let nested = format!("{prefix}{}", " ".repeat(width + 2));
            let sep = match reply {
                Reply::Set(_) => '~',
                Reply::Map(_) => '#',
                _ => ')',
            };
            let mut out = String::new();
            let step = if is_map { 2 } else { 1 };
            for (i, chunk) in elems.chunks(step).enumerate() {
                let lead = if i == 0 { "" } else { prefix };
                out.push_str(&format!("{lead}{:>width$}{sep} ", i + 1));
                out.push_str(&render_prefixed(&chunk[0], &nested));
                if let Some(value) = chunk.get(1) {
                    out.pop();
                    out.push_str(" => ");
                    out.push_str(&render_prefixed(value, &nested));
                }
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(bytes: &[u8]) -> String {
        decode_all(bytes).unwrap().iter().map(render).collect()
    }

    #[test]
    fn scalars() {
        assert_eq!(show(b"+OK\r\n"), "OK\n");
        assert_eq!(show(b"-ERR x\r\n"), "(error) ERR x\n");
        assert_eq!(show(b":-3\r\n"), "(integer) -3\n");
        assert_eq!(show(b"$-1\r\n"), "(nil)\n");
        assert_eq!(show(b"$4\r\na\"\n\x01\r\n"), "\"a\\\"\\n\\x01\"\n");
        assert_eq!(
            show(b",3.5\r\n#t\r\n_\r\n"),
            "(double) 3.5\n(true)\n(nil)\n"
        );
        assert_eq!(show(b"=7\r\ntxt:abc\r\n"), "abc\n");
    }

    #[test]
    fn aggregates_like_redis_cli() {
        assert_eq!(
            show(b"*0\r\n%0\r\n~0\r\n"),
            "(empty array)\n(empty hash)\n(empty set)\n"
        );
        assert_eq!(
            show(b"*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
            "1) \"0\"\n2) 1) \"a\"\n   2) \"b\"\n"
        );
        assert_eq!(
            show(b"%2\r\n$1\r\nk\r\n:1\r\n$1\r\nm\r\n*0\r\n"),
            "1# \"k\" => (integer) 1\n2# \"m\" => (empty array)\n"
        );
        let ten: Vec<u8> = b"*10\r\n"
            .iter()
            .copied()
            .chain((0..10).flat_map(|_| b":1\r\n".iter().copied()))
            .collect();
        let shown = show(&ten);
        assert!(shown.starts_with(" 1) (integer) 1\n 2)"), "{shown}");
        assert!(shown.ends_with("10) (integer) 1\n"), "{shown}");
    }

    #[test]
    fn incomplete_input_waits() {
        assert_eq!(decode(b"$5\r\nab").unwrap(), None);
        assert_eq!(decode(b"*2\r\n:1\r\n").unwrap(), None);
        assert!(decode(b"?\r\n").is_err());
    }
}
