//! Printing replies exactly as `redis-cli` does on a terminal (its
//! `--no-raw` format), so transcripts read like a redis-cli session and
//! compare with real redis-cli output.
//!
//! Decoding and the terminal format itself are the engine's
//! ([`FrameDecoder`], [`Frame::render`]); what lives here is redis-cli's
//! per-command choice of format: a few commands always print raw.

use seedkv_engine::resp::encode::format_double;
use seedkv_engine::resp::{Frame, FrameDecoder};

/// Decodes every complete reply in `bytes`; an incomplete tail is an error.
pub fn decode_all(bytes: &[u8]) -> Result<Vec<Frame>, String> {
    let mut decoder = FrameDecoder::new();
    decoder.feed(bytes);
    let mut out = Vec::new();
    while let Some(frame) = decoder.next_frame()? {
        out.push(frame);
    }
    if decoder.is_mid_frame() {
        return Err(format!(
            "incomplete reply: {} bytes left over",
            decoder.buffered_bytes()
        ));
    }
    Ok(out)
}

/// The reply to `args` as `redis-cli --no-raw` prints it, ending with a
/// newline: a few commands whose replies are text for humans (INFO, CLIENT
/// LIST/INFO, LATENCY DOCTOR, ...) are always printed raw, as redis-cli's
/// `cliSendCommand` decides; everything else as on a terminal.
pub fn render_reply_to(args: &[Vec<u8>], reply: &Frame) -> String {
    let mut out = if prints_raw(args) {
        render_raw(reply)
    } else {
        reply.render()
    };
    out.push('\n');
    out
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
pub fn render_raw(reply: &Frame) -> String {
    match reply {
        Frame::Simple(b) | Frame::Error(b) | Frame::Bulk(b) | Frame::Verbatim { data: b, .. } => {
            String::from_utf8_lossy(b).into_owned()
        }
        Frame::Null => String::new(),
        Frame::Integer(n) => n.to_string(),
        Frame::Double(d) => format_double(*d),
        Frame::BigNumber(n) => String::from_utf8_lossy(n).into_owned(),
        Frame::Boolean(b) => if *b { "(true)" } else { "(false)" }.into(),
        Frame::Array(items) | Frame::Set(items) | Frame::Push(items) => {
            items.iter().map(render_raw).collect::<Vec<_>>().join("\n")
        }
        Frame::Map(pairs) => pairs
            .iter()
            .map(|(k, v)| format!("{} {}", render_raw(k), render_raw(v)))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<Vec<u8>> {
        line.split(' ').map(|a| a.as_bytes().to_vec()).collect()
    }

    fn show(command: &str, bytes: &[u8]) -> String {
        decode_all(bytes)
            .unwrap()
            .iter()
            .map(|r| render_reply_to(&args(command), r))
            .collect()
    }

    // Expected strings were taken from redis-cli 7.0.15 (--no-raw).
    #[test]
    fn terminal_format() {
        assert_eq!(show("GET k", b"$-1\r\n"), "(nil)\n");
        assert_eq!(show("SET k v", b"+OK\r\n"), "OK\n");
        assert_eq!(show("SET k v", b"+\r\n"), "\n");
        assert_eq!(
            show(
                "LRANGE k 0 -1",
                b"*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n"
            ),
            "1) \"0\"\n2) 1) \"a\"\n   2) \"b\"\n"
        );
        // `eval "return {1,{map={a={1,{2,3}}}}}" 0` with redis-cli -3.
        assert_eq!(
            show(
                "EVAL",
                b"*2\r\n:1\r\n%1\r\n$1\r\na\r\n*2\r\n:1\r\n*2\r\n:2\r\n:3\r\n"
            ),
            "1) (integer) 1\n2) 1# \"a\" => \n      1) (integer) 1\n      2) 1) (integer) 2\n         2) (integer) 3\n"
        );
    }

    #[test]
    fn raw_commands() {
        assert_eq!(show("INFO", b"$8\r\na:1\r\nb:2\r\n"), "a:1\r\nb:2\n");
        assert_eq!(
            show("client list x", b"-ERR syntax error\r\n"),
            "ERR syntax error\n"
        );
        assert_eq!(show("CLIENT INFO", b"=9\r\ntxt:id=3\n\r\n"), "id=3\n\n");
        assert_eq!(show("latency doctor", b"*2\r\n:1\r\n_\r\n"), "1\n\n");
        // `eval "return {map={a={1,2},b={}}}" 0` piped through redis-cli -3.
        assert_eq!(
            show("lolwut", b"%2\r\n+a\r\n*2\r\n:1\r\n:2\r\n+b\r\n*0\r\n"),
            "a 1\n2\nb \n"
        );
        assert_eq!(show("INFO", b",3.5\r\n#t\r\n"), "3.5\n(true)\n");
    }

    #[test]
    fn incomplete_input_is_an_error() {
        assert!(decode_all(b"+OK\r\n$5\r\nab").is_err());
        assert!(decode_all(b"*2\r\n:1\r\n").is_err());
        assert!(decode_all(b"?\r\n").is_err());
        assert_eq!(decode_all(b"").unwrap(), vec![]);
    }
}
