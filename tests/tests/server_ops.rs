//! Operating the shipped binary: `--help`, a redis.conf-style file, CONFIG
//! SET at run time, SHUTDOWN and the signals that stop it. Each test starts
//! its own `seedkv-server` ([`ServerProcess`] gives its log, exit status
//! and signals).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

use seedkv_engine::resp::reply::Frame;
use seedkv_tests::{server_binary, RespClient, ServerProcess};

/// How long a raw connection waits for the server's bytes.
const READ_TIMEOUT: Duration = Duration::from_secs(20);

fn bulk(s: &str) -> Frame {
    Frame::Bulk(s.as_bytes().to_vec())
}

fn error(s: &str) -> Frame {
    Frame::Error(s.as_bytes().to_vec())
}

fn ok() -> Frame {
    Frame::Simple(b"OK".to_vec())
}

/// Sends PING over a raw connection and expects +PONG.
fn ping_raw(s: &mut TcpStream) {
    s.write_all(b"*1\r\n$4\r\nPING\r\n").unwrap();
    let mut pong = [0u8; 7];
    s.read_exact(&mut pong).unwrap();
    assert_eq!(&pong, b"+PONG\r\n");
}

/// A raw connection that notices when the server closes it.
fn idle_connection(port: u16) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
    ping_raw(&mut s);
    s
}

/// Reads until EOF: what the server sent before closing.
fn read_to_close(mut s: TcpStream) -> Vec<u8> {
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    rest
}

#[test]
fn help_documents_every_flag() {
    let out = Command::new(server_binary())
        .arg("--help")
        .output()
        .expect("run --help");
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "[CONFIG_FILE]",
        "--port",
        "--bind",
        "--requirepass",
        "--protected-mode",
        "--seed",
        "--help",
        "--version",
        "127.0.0.1 -::1",
        "SIGTERM",
    ] {
        assert!(
            help.contains(flag),
            "--help does not mention {flag}:\n{help}"
        );
    }
}

#[test]
fn config_file_in_redis_conf_syntax() {
    let dir = std::env::temp_dir().join(format!("seedkv-server-ops-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("seedkv.conf");
    std::fs::write(
        &path,
        "# a redis.conf\nrequirepass \"s3 cret\"\nmaxclients 77\nhz 20\ntcp-keepalive 60\nhash-max-listpack-entries 64\n",
    )
    .unwrap();
    let server = ServerProcess::seedkv(&[path.to_str().unwrap()]);
    let mut c = RespClient::connect(server.port);
    assert_eq!(
        c.command(&[b"GET", b"k"]),
        error("NOAUTH Authentication required.")
    );
    assert_eq!(c.command(&[b"AUTH", b"s3 cret"]), ok());
    for (key, want) in [
        ("maxclients", "77"),
        ("hz", "20"),
        ("tcp-keepalive", "60"),
        ("hash-max-listpack-entries", "64"),
        ("bind", "127.0.0.1 -::1"),
    ] {
        assert_eq!(
            c.command(&[b"CONFIG", b"GET", key.as_bytes()]),
            Frame::Array(vec![bulk(key), bulk(want)]),
            "{key}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn config_set_at_run_time() {
    let server = ServerProcess::seedkv(&[]);
    let mut c = RespClient::connect(server.port);
    // What Redis lets change at run time takes effect ...
    assert_eq!(
        c.command(&[b"CONFIG", b"SET", b"tcp-keepalive", b"30"]),
        ok()
    );
    assert_eq!(
        c.command(&[b"CONFIG", b"SET", b"protected-mode", b"no"]),
        ok()
    );
    assert_eq!(c.command(&[b"CONFIG", b"SET", b"requirepass", b"pw"]), ok());
    let mut other = RespClient::connect(server.port);
    assert_eq!(
        other.command(&[b"PING"]),
        error("NOAUTH Authentication required.")
    );
    assert_eq!(other.command(&[b"AUTH", b"pw"]), ok());
    assert_eq!(
        other.command(&[b"CONFIG", b"GET", b"tcp-keepalive"]),
        Frame::Array(vec![bulk("tcp-keepalive"), bulk("30")])
    );
    // ... and what it does not is refused with its words.
    assert_eq!(
        other.command(&[b"CONFIG", b"SET", b"daemonize", b"yes"]),
        error("ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable config")
    );
    assert_eq!(
        other.command(&[b"CONFIG", b"SET", b"tcp-keepalive", b"abc"]),
        error("ERR CONFIG SET failed (possibly related to argument 'tcp-keepalive') - argument couldn't be parsed into an integer")
    );
}

#[test]
fn shutdown_command_exits_zero_and_closes_connections() {
    let mut server = ServerProcess::seedkv(&[]);
    let idle = idle_connection(server.port);
    let mut c = RespClient::connect(server.port);
    assert_eq!(
        c.command(&[b"SHUTDOWN", b"ABORT"]),
        error("ERR No shutdown in progress.")
    );
    assert_eq!(
        c.command(&[b"SHUTDOWN", b"NOSAVE", b"SAVE"]),
        error("ERR syntax error")
    );
    let mut s = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    s.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
    s.write_all(b"*2\r\n$8\r\nSHUTDOWN\r\n$6\r\nNOSAVE\r\n")
        .unwrap();
    assert_eq!(read_to_close(s), b"", "SHUTDOWN itself replies nothing");
    assert_eq!(read_to_close(idle), b"", "other clients are closed");
    let status = server.wait_exit();
    let log = server.log();
    assert_eq!(status.code(), Some(0), "log:\n{log}");
    assert!(log.contains("User requested shutdown..."), "{log}");
    assert!(log.contains("ready to exit, bye bye..."), "{log}");
}

#[test]
fn sigterm_and_sigint_exit_zero_and_close_connections() {
    for (signal, line) in [
        ("TERM", "Received SIGTERM scheduling shutdown..."),
        ("INT", "Received SIGINT scheduling shutdown..."),
    ] {
        let mut server = ServerProcess::seedkv(&[]);
        let idle = idle_connection(server.port);
        server.signal(signal);
        assert_eq!(read_to_close(idle), b"", "SIG{signal} closes clients");
        let status = server.wait_exit();
        let log = server.log();
        assert_eq!(status.code(), Some(0), "SIG{signal}; log:\n{log}");
        assert!(log.contains(line), "{log}");
        assert!(log.contains("ready to exit, bye bye..."), "{log}");
    }
}

#[test]
fn default_bind_is_loopback_with_optional_ipv6() {
    let server = ServerProcess::seedkv(&[]);
    let mut c = RespClient::connect(server.port);
    assert_eq!(
        c.command(&[b"CONFIG", b"GET", b"bind"]),
        Frame::Array(vec![bulk("bind"), bulk("127.0.0.1 -::1")])
    );
    // IPv6 loopback is served when the machine has it (the `-` makes it
    // optional, so a machine without IPv6 still starts).
    if !server.log().contains("Could not bind optional address ::1") {
        let mut s = TcpStream::connect(("::1", server.port)).expect("connect over ::1");
        ping_raw(&mut s);
    }
}
