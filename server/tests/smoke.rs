//! The binary starts, prints its ready line, and answers over TCP. (Having
//! an integration test here also makes `cargo test --workspace` build the
//! `seedkv-server` binary that the seedkv-tests crate drives.)

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn answers_ping_set_get_over_tcp() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_seedkv-server"))
        .args(["--port", "0", "--seed", "3"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn seedkv-server");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut port = None;
    let mut log = String::new();
    for _ in 0..10 {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap() == 0 {
            break;
        }
        log.push_str(&line);
        if let Some(p) = line.split("port=").nth(1) {
            let digits: String = p.chars().take_while(|c| c.is_ascii_digit()).collect();
            port = port.or(digits.parse::<u16>().ok());
        }
        if line.contains("Ready to accept connections tcp") {
            break;
        }
    }
    let port = port.unwrap_or_else(|| panic!("no port in the log:\n{log}"));
    assert!(log.contains("Ready to accept connections tcp"), "{log}");

    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"*1\r\n$4\r\nPING\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n")
        .unwrap();
    let want = b"+PONG\r\n+OK\r\n$1\r\nv\r\n";
    let mut got = vec![0u8; want.len()];
    s.read_exact(&mut got).unwrap();
    assert_eq!(got, want);

    // QUIT replies, then the server closes the connection.
    s.write_all(b"QUIT\r\n").unwrap();
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).unwrap();
    assert_eq!(rest, b"+OK\r\n");

    child.kill().unwrap();
    child.wait().unwrap();
}
