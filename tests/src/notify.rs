//! The harness of the keyspace-notification differential tests
//! (`tests/tests/notify_differential.rs`, `tests/tests/notify_keymiss.rs`):
//! a script runs on a server while a RESP2 and a RESP3 client subscribed
//! to every keyspace and keyevent channel listen, and what each received
//! is kept as raw bytes to compare with another server's.
//!
//! A script has one command a line in redis-cli syntax (quotes, `\n`
//! escapes), run by a writer whose replies are kept too, except:
//!
//! - `# ...`: a comment;
//! - `~CMD ...`: its reply depends on chance (SPOP), so only its events
//!   are compared;
//! - `sleep MS`: the writer pauses, so that TTLs pass (lazy expiry on the
//!   next access) or the cron expires a key on its own (active expiry);
//! - `block CMD ...`: a second connection sends a blocking command, and
//!   the test waits until the server counts it blocked;
//! - `unblock`: the blocked command's reply, once a write served it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use seedkv_engine::resp::encode::encode_request;
use seedkv_engine::resp::{Frame, FrameDecoder};

use crate::script::split;
use crate::RespClient;

/// The message that ends a stream: PUBLISH `end` `done`.
const END_RESP2: &[u8] = b"*3\r\n$7\r\nmessage\r\n$3\r\nend\r\n$4\r\ndone\r\n";
const END_RESP3: &[u8] = b">3\r\n$7\r\nmessage\r\n$3\r\nend\r\n$4\r\ndone\r\n";

/// Bytes a stream may reach before the test gives up on its end marker.
pub const STREAM_BYTES_MAX: usize = 1 << 20;

/// A subscribed connection read as raw bytes once its setup is answered.
pub struct Subscriber {
    stream: TcpStream,
    end: &'static [u8],
}

impl Subscriber {
    pub fn connect(port: u16, resp3: bool) -> Subscriber {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("set a read timeout");
        let mut setup: Vec<&[&[u8]]> = Vec::new();
        if resp3 {
            setup.push(&[b"HELLO", b"3"]);
        }
        setup.push(&[b"PSUBSCRIBE", b"__key*__:*"]);
        setup.push(&[b"SUBSCRIBE", b"end"]);
        let mut decoder = FrameDecoder::new();
        for request in &setup {
            stream
                .write_all(&encode_request(request))
                .expect("send a request");
            loop {
                if decoder.next_frame().expect("valid RESP").is_some() {
                    break;
                }
                let mut chunk = [0u8; 4096];
                let n = stream.read(&mut chunk).expect("read a reply");
                assert!(n > 0, "the server closed the connection");
                decoder.feed(&chunk[..n]);
            }
        }
        let end = if resp3 { END_RESP3 } else { END_RESP2 };
        Subscriber { stream, end }
    }

    /// Every byte up to and including the end marker.
    pub fn stream_until_end(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        while !out.ends_with(self.end) {
            assert!(out.len() < STREAM_BYTES_MAX, "no end marker");
            let mut chunk = [0u8; 16 * 1024];
            let n = self.stream.read(&mut chunk).expect("read messages");
            assert!(n > 0, "the server closed the connection");
            out.extend_from_slice(&chunk[..n]);
        }
        out
    }
}

/// How many times the test polls INFO for a command to block.
const BLOCK_POLLS_MAX: usize = 500;

/// What one run of the script produced on a server.
pub struct Run {
    pub resp2: Vec<u8>,
    pub resp3: Vec<u8>,
    /// The writer's (and the blocked connection's) replies, one a line.
    pub replies: String,
}

/// Runs `script` on `port` with `flags` as `notify-keyspace-events`.
pub fn run(port: u16, flags: &str, script: &str) -> Run {
    run_script(port, flags, script, false)
}

/// [`run`], with INFO stats `keyspace_hits` and `keyspace_misses` after
/// every compared line appended to its reply: where two servers count
/// read lookups differently, the first line that differs names the
/// command.
pub fn run_counting_reads(port: u16, flags: &str, script: &str) -> Run {
    run_script(port, flags, script, true)
}

fn run_script(port: u16, flags: &str, script: &str, count_reads: bool) -> Run {
    let mut writer = RespClient::connect(port);
    writer.command(&[b"FLUSHALL"]);
    let set = writer.command(&[
        b"CONFIG",
        b"SET",
        b"notify-keyspace-events",
        flags.as_bytes(),
    ]);
    assert_eq!(set, Frame::Simple(b"OK".to_vec()));
    let mut resp2 = Subscriber::connect(port, false);
    let mut resp3 = Subscriber::connect(port, true);
    let mut blocker = RespClient::connect(port);
    let mut replies = String::new();
    let mut in_multi = false;
    for line in script.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (compared, command) = match line.strip_prefix('~') {
            Some(rest) => (false, rest),
            None => (true, line),
        };
        let args = split(command);
        let args: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        let reply = match args[0] {
            b"sleep" => {
                let ms: u64 = std::str::from_utf8(args[1]).unwrap().parse().unwrap();
                std::thread::sleep(Duration::from_millis(ms));
                continue;
            }
            b"block" => {
                blocker.send(&args[1..]);
                wait_until_blocked(&mut writer);
                continue;
            }
            b"unblock" => blocker.next_reply(),
            _ => writer.command(&args),
        };
        if compared {
            replies.push_str(&format!("{command} -> {reply:?}\n"));
        }
        // INFO inside MULTI would be queued: counts are read after EXEC.
        match args[0].to_ascii_lowercase().as_slice() {
            b"multi" => in_multi = true,
            b"exec" | b"discard" => in_multi = false,
            _ => {}
        }
        if count_reads && !in_multi {
            let counts = read_counts(&mut writer);
            replies.push_str(&format!("{command} => {counts}\n"));
        }
    }
    writer.command(&[b"PUBLISH", b"end", b"done"]);
    Run {
        resp2: resp2.stream_until_end(),
        resp3: resp3.stream_until_end(),
        replies,
    }
}

/// INFO stats' `keyspace_hits` and `keyspace_misses` lines.
fn read_counts(writer: &mut RespClient) -> String {
    let Frame::Bulk(info) = writer.command(&[b"INFO", b"stats"]) else {
        panic!("INFO replies with a bulk string");
    };
    String::from_utf8_lossy(&info)
        .lines()
        .filter(|l| l.starts_with("keyspace_hits:") || l.starts_with("keyspace_misses:"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Polls INFO until the server counts one blocked client.
pub fn wait_until_blocked(writer: &mut RespClient) {
    for _ in 0..BLOCK_POLLS_MAX {
        let Frame::Bulk(info) = writer.command(&[b"INFO", b"clients"]) else {
            panic!("INFO replies with a bulk string");
        };
        if String::from_utf8_lossy(&info).contains("blocked_clients:1\r\n") {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    panic!("the command never blocked");
}

/// Where two streams part: the decoded messages around the first that
/// differs (the bytes decide equality; this only explains a failure).
pub fn first_difference(theirs: &[u8], ours: &[u8]) -> String {
    let (theirs, ours) = (messages(theirs), messages(ours));
    let at = theirs.iter().zip(&ours).take_while(|(a, b)| a == b).count();
    let from = at.saturating_sub(4);
    format!(
        "message {at}:\n redis-server: {:#?}\n seedkv:       {:#?}",
        &theirs[from..(at + 8).min(theirs.len())],
        &ours[from..(at + 8).min(ours.len())]
    )
}

/// A stream's messages, each as its frame's debug text.
pub fn messages(stream: &[u8]) -> Vec<String> {
    let mut decoder = FrameDecoder::new();
    decoder.feed(stream);
    let mut out = Vec::new();
    while let Ok(Some(frame)) = decoder.next_frame() {
        let text = match frame {
            Frame::Array(parts) | Frame::Push(parts) => parts
                .iter()
                .skip(1)
                .map(|p| match p {
                    Frame::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
                    other => format!("{other:?}"),
                })
                .collect::<Vec<_>>()
                .join(" "),
            other => format!("{other:?}"),
        };
        out.push(text);
    }
    out
}

/// Asserts that two runs' replies and RESP2 and RESP3 streams are equal.
pub fn assert_same_streams(theirs: &Run, ours: &Run) {
    let (theirs_lines, ours_lines): (Vec<&str>, Vec<&str>) = (
        theirs.replies.lines().collect(),
        ours.replies.lines().collect(),
    );
    for (t, o) in theirs_lines.iter().zip(&ours_lines) {
        assert_eq!(t, o, "replies differ");
    }
    assert_eq!(theirs_lines.len(), ours_lines.len());
    assert!(
        ours.resp2 == theirs.resp2,
        "RESP2 streams differ at {}",
        first_difference(&theirs.resp2, &ours.resp2)
    );
    assert!(
        ours.resp3 == theirs.resp3,
        "RESP3 streams differ at {}",
        first_difference(&theirs.resp3, &ours.resp3)
    );
}
