//! Helpers for seedkv's cross-crate integration tests: starting the real
//! `seedkv-server` binary (and, for differential tests, a real
//! `redis-server`) on free loopback ports, driving `redis-cli`, and
//! rendering RESP replies the way `redis-cli` prints them.
//!
//! Servers started here are killed when their handle drops, so a failing
//! test leaves no process behind.

pub mod closing;
pub mod draw;
pub mod fixtures;
pub mod notify;
pub mod render;
pub mod replication;
pub mod script;
pub mod twemproxy;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use seedkv_engine::resp::reply::encode_request;
use seedkv_engine::resp::{Frame, FrameDecoder};

/// How long a server may take to start accepting connections.
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a server may take to exit once asked to (SHUTDOWN, a signal).
pub const EXIT_TIMEOUT: Duration = Duration::from_secs(20);

/// How long one `redis-cli`/`redis-benchmark` run may take before the test
/// gives up on it (a hung server must fail the test, not hang CI).
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(120);

/// The workspace root (the parent of this crate).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

/// Path of the server binary the tests start, built if needed.
///
/// Cargo builds this package's `seedkv-test-server` (src/bin: the real
/// server's `main`) before running any of its integration tests, into
/// `target/<profile>/` next to the `deps/` folder that holds this test
/// executable, from the very engine the tests were compiled with; that is
/// the binary used. Building `seedkv-server` instead cost a second engine
/// compile under the dev profile whenever one test ran after an engine
/// change (minutes on a loaded machine, counted in the test's time). When
/// the test binary runs outside cargo and that binary is missing, the
/// `seedkv-server` binary is used, built once with `cargo build -p
/// seedkv-server` if missing or older than the sources.
/// `SEEDKV_SERVER_BIN` overrides the search.
pub fn server_binary() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(path) = std::env::var_os("SEEDKV_SERVER_BIN") {
            return PathBuf::from(path);
        }
        let exe = std::env::current_exe().expect("current test executable");
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("test executables live in target/<profile>/deps")
            .to_path_buf();
        let own = profile_dir.join(format!(
            "seedkv-test-server{}",
            std::env::consts::EXE_SUFFIX
        ));
        if own.exists() {
            return own;
        }
        let bin = profile_dir.join(format!("seedkv-server{}", std::env::consts::EXE_SUFFIX));
        if !is_fresh(&bin) {
            build_server(&profile_dir);
        }
        assert!(bin.exists(), "seedkv-server not found at {}", bin.display());
        bin
    })
    .clone()
}

/// Whether `bin` exists and is newer than every source file of the crates
/// it is built from.
fn is_fresh(bin: &Path) -> bool {
    let Ok(built) = bin.metadata().and_then(|m| m.modified()) else {
        return false;
    };
    let root = workspace_root();
    let newest = ["engine/src", "server/src"]
        .iter()
        .filter_map(|dir| newest_mtime(&root.join(dir)))
        .max();
    match newest {
        Some(newest) => newest <= built,
        None => true,
    }
}

fn newest_mtime(dir: &Path) -> Option<std::time::SystemTime> {
    let mut newest = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        let t = if path.is_dir() {
            newest_mtime(&path)
        } else {
            entry.metadata().and_then(|m| m.modified()).ok()
        };
        newest = newest.max(t);
    }
    newest
}

fn build_server(profile_dir: &Path) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let target_dir = profile_dir.parent().expect("target/<profile>");
    let profile = profile_dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("debug");
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "-p", "seedkv-server", "--bin", "seedkv-server"])
        .current_dir(workspace_root())
        .env("CARGO_TARGET_DIR", target_dir);
    // `target/debug` is the dev profile's folder; any other folder is named
    // after its profile.
    if profile != "debug" {
        cmd.args(["--profile", profile]);
    }
    eprintln!("building seedkv-server: {cmd:?}");
    let status = cmd.status().expect("run cargo build");
    assert!(status.success(), "cargo build -p seedkv-server failed");
}

/// A free loopback port: bound, then released. Another process could take
/// it in between; callers that can use `--port 0` should.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind an ephemeral port")
        .port()
}

/// Polls until `port` accepts a connection.
fn wait_for_port(port: u16, child: &mut Child, what: &str) {
    let deadline = Instant::now() + STARTUP_TIMEOUT;
    loop {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{what} exited before accepting connections: {status}");
        }
        assert!(
            Instant::now() < deadline,
            "{what} did not accept connections on port {port} within {STARTUP_TIMEOUT:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A running server process, killed on drop.
pub struct ServerProcess {
    child: Child,
    pub port: u16,
    /// Everything the process wrote to stderr so far (seedkv's log).
    log: std::sync::Arc<Mutex<String>>,
    /// The server's own `--dir`, when the caller gave none.
    _dir: Option<tempfile::TempDir>,
}

impl ServerProcess {
    /// Starts `seedkv-server` with `--port 0 --seed 1` plus `extra` flags,
    /// and waits until it accepts connections. Unless `extra` names a
    /// `--dir`, the server gets a fresh temporary one (removed on drop), so
    /// that no test loads another's files.
    pub fn seedkv(extra: &[&str]) -> ServerProcess {
        let own_dir = match extra.contains(&"--dir") {
            true => None,
            false => Some(tempfile::tempdir().expect("a temporary --dir")),
        };
        let mut command = Command::new(server_binary());
        command.args(["--port", "0", "--seed", "1"]);
        if let Some(dir) = &own_dir {
            command.arg("--dir").arg(dir.path());
        }
        let mut child = command
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn seedkv-server");
        let stderr = child.stderr.take().expect("piped stderr");
        let log = std::sync::Arc::new(Mutex::new(String::new()));
        let (port_tx, port_rx) = mpsc::channel();
        let log_writer = log.clone();
        // The reader keeps draining stderr for the server's whole life, so a
        // chatty server can never block on a full pipe.
        std::thread::spawn(move || {
            let mut port_tx = Some(port_tx);
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                log_writer.lock().unwrap().push_str(&line);
                log_writer.lock().unwrap().push('\n');
                if let Some(port) = line
                    .split("port=")
                    .nth(1)
                    .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
                    .and_then(|digits| digits.parse::<u16>().ok())
                {
                    if let Some(tx) = port_tx.take() {
                        let _ = tx.send(port);
                    }
                }
            }
        });
        let port = match port_rx.recv_timeout(STARTUP_TIMEOUT) {
            Ok(port) => port,
            Err(_) => {
                let _ = child.kill();
                panic!(
                    "seedkv-server printed no port within {STARTUP_TIMEOUT:?}; log:\n{}",
                    log.lock().unwrap()
                );
            }
        };
        wait_for_port(port, &mut child, "seedkv-server");
        ServerProcess {
            child,
            port,
            log,
            _dir: own_dir,
        }
    }

    /// Starts a real `redis-server` (no persistence) on a free port, or
    /// returns `None` if it is not installed.
    ///
    /// The port is picked, released and then bound by redis-server, so
    /// another process (a parallel test's `--port 0` server, a client's
    /// ephemeral port) can take it in between. Redis then logs "Could not
    /// create server TCP listening socket" and exits, while a connect to
    /// the port reaches the *other* process. So readiness is Redis's own
    /// "Ready to accept connections" line, never a connect, and a lost
    /// race retries on a new port.
    pub fn redis() -> Option<ServerProcess> {
        ServerProcess::redis_with(&[])
    }

    /// [`ServerProcess::redis`] with `extra` arguments after the defaults
    /// (`--dir`, `--dbfilename`, `--enable-debug-command`...). A server
    /// that exits before it is ready (say, on a file it refuses to load) is
    /// retried like a lost port, then reported with its log.
    pub fn redis_with(extra: &[&str]) -> Option<ServerProcess> {
        let bin = find_in_path("redis-server")?;
        const ATTEMPTS: usize = 10;
        let mut last_log = String::new();
        for _ in 0..ATTEMPTS {
            let port = free_port();
            // Its own directory unless the caller names one: a replica
            // stores the RDB it was sent as `dump.rdb` there, and every
            // later redis-server started in the same directory would load
            // it (the reference servers of other tests then held keys).
            let own_dir = (!extra.contains(&"--dir"))
                .then(|| tempfile::tempdir().expect("a temporary directory"));
            let dir_args: Vec<String> = own_dir
                .iter()
                .flat_map(|d| ["--dir".to_string(), d.path().display().to_string()])
                .collect();
            let mut child = Command::new(&bin)
                .args(["--port", &port.to_string()])
                .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
                .args(["--daemonize", "no", "--logfile", ""])
                .args(&dir_args)
                .args(extra)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn redis-server");
            let stdout = child.stdout.take().expect("piped stdout");
            let log = std::sync::Arc::new(Mutex::new(String::new()));
            let (ready_tx, ready_rx) = mpsc::channel();
            let log_writer = log.clone();
            std::thread::spawn(move || {
                let mut ready_tx = Some(ready_tx);
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    let mut log = log_writer.lock().unwrap();
                    log.push_str(&line);
                    log.push('\n');
                    if line.contains("Ready to accept connections") {
                        if let Some(tx) = ready_tx.take() {
                            let _ = tx.send(());
                        }
                    }
                }
                // Dropping the sender reports an exit before readiness.
            });
            match ready_rx.recv_timeout(STARTUP_TIMEOUT) {
                Ok(()) => {
                    return Some(ServerProcess {
                        child,
                        port,
                        log,
                        _dir: own_dir,
                    });
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let _ = child.wait();
                    last_log = log.lock().unwrap().clone();
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let _ = child.kill();
                    panic!(
                        "redis-server did not report readiness on port {port} within \
                         {STARTUP_TIMEOUT:?}; log:\n{}",
                        log.lock().unwrap()
                    );
                }
            }
        }
        panic!("redis-server failed to start {ATTEMPTS} times; last log:\n{last_log}");
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Sends signal `name` (`TERM`, `INT`, ...) to the process with `kill`.
    pub fn signal(&self, name: &str) {
        let ok = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .expect("run kill")
            .success();
        assert!(ok, "kill -{name} failed");
    }

    /// Waits for the process to exit, for at most [`EXIT_TIMEOUT`], and
    /// returns its status.
    pub fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + EXIT_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                // Let the log reader catch the last lines.
                std::thread::sleep(Duration::from_millis(50));
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not exit within {EXIT_TIMEOUT:?}; log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The process id (for signals a test sends itself, e.g. SIGKILL).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `redis://127.0.0.1:PORT/`
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The full path of `name` if it is on `PATH`.
pub fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Runs a tool to completion with `stdin` as its input, killing it after
/// [`TOOL_TIMEOUT`]. Returns (exit success, stdout, stderr).
pub fn run_tool(program: &Path, args: &[&str], stdin: &[u8]) -> (bool, String, String) {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {}: {e}", program.display()));
    let mut input = child.stdin.take().expect("piped stdin");
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        // The tool may exit before reading everything; that is its business.
        let _ = input.write_all(&stdin);
    });
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let out_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = stdout.read_to_end(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = stderr.read_to_end(&mut s);
        s
    });
    let deadline = Instant::now() + TOOL_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for tool") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!(
                "{} {args:?} did not finish within {TOOL_TIMEOUT:?}",
                program.display()
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let _ = writer.join();
    let out = out_reader.join().unwrap_or_default();
    let err = err_reader.join().unwrap_or_default();
    (
        status.success(),
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    )
}

/// The environment variable that turns a missing external tool from a
/// skipped test into a failed one; `.ci/run` sets it to `1`.
pub const REQUIRE_TOOLS_ENV: &str = "SEEDKV_REQUIRE_TOOLS";

/// Whether tests must fail, not skip, when a tool they need is missing.
pub fn tools_required() -> bool {
    std::env::var(REQUIRE_TOOLS_ENV).is_ok_and(|v| v == "1")
}

/// Called by a test that cannot run because `what` is missing: prints why
/// it skips and returns, or panics when [`tools_required`].
pub fn missing_tool(what: &str, install: &str) {
    missing_tool_with(what, install, tools_required());
}

fn missing_tool_with(what: &str, install: &str, required: bool) {
    if required {
        panic!("{what} is not installed and {REQUIRE_TOOLS_ENV}=1 requires it ({install})");
    }
    eprintln!("SKIPPED: {what} is not installed ({install}; .ci/run installs it)");
}

/// Whether `name` is on PATH; when it is not, the test skips (printing why)
/// or, under `SEEDKV_REQUIRE_TOOLS=1`, fails.
pub fn require_tool(name: &str) -> bool {
    let found = find_in_path(name).is_some();
    if !found {
        missing_tool(name, install_hint(name));
    }
    found
}

/// The Debian package that brings `name`.
fn install_hint(name: &str) -> &'static str {
    match name {
        "redis-server" => "apt-get install redis-server",
        "redis-cli" | "redis-benchmark" => "apt-get install redis-tools",
        "python3" => "apt-get install python3",
        _ => "see .ci/run",
    }
}

/// `redis-cli`, or `None` (with the reason printed) when it is absent;
/// under `SEEDKV_REQUIRE_TOOLS=1` its absence fails the test.
pub fn redis_cli() -> Option<PathBuf> {
    require_tool("redis-cli")
        .then(|| find_in_path("redis-cli"))
        .flatten()
}

/// A real `redis-server` for a comparison, or `None` when it is not
/// installed (the test then skips; under `SEEDKV_REQUIRE_TOOLS=1` it fails).
pub fn redis_server() -> Option<ServerProcess> {
    if !require_tool("redis-server") {
        return None;
    }
    ServerProcess::redis()
}

/// [`redis_server`] with `extra` arguments (see [`ServerProcess::redis_with`]).
pub fn redis_server_with(extra: &[&str]) -> Option<ServerProcess> {
    if !require_tool("redis-server") {
        return None;
    }
    ServerProcess::redis_with(extra)
}

/// Runs `redis-cli -p PORT args...` and returns its stdout.
pub fn cli(port: u16, args: &[&str]) -> String {
    let bin = find_in_path("redis-cli").expect("redis-cli installed");
    let port = port.to_string();
    let mut all = vec!["-p", port.as_str()];
    all.extend_from_slice(args);
    let (_, out, _) = run_tool(&bin, &all, b"");
    out
}

/// A minimal blocking RESP client: sends one command, reads one reply.
pub struct RespClient {
    stream: TcpStream,
    decoder: FrameDecoder,
}

impl RespClient {
    pub fn connect(port: u16) -> RespClient {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream
            .set_read_timeout(Some(TOOL_TIMEOUT))
            .expect("set a read timeout");
        stream.set_nodelay(true).expect("set nodelay");
        RespClient {
            stream,
            decoder: FrameDecoder::new(),
        }
    }

    /// Sends `args` as one multibulk request without waiting for a reply
    /// (a blocking command; read it later with [`RespClient::next_reply`]).
    pub fn send(&mut self, args: &[&[u8]]) {
        self.stream
            .write_all(&encode_request(args))
            .expect("send a request");
    }

    /// Sends `args` as one multibulk request and returns the decoded reply.
    pub fn command(&mut self, args: &[&[u8]]) -> Frame {
        self.stream
            .write_all(&encode_request(args))
            .expect("send a request");
        self.next_reply()
    }

    /// The next frame the server sends: a further frame of a reply made of
    /// several (UNSUBSCRIBE a b answers one confirmation per channel).
    pub fn next_reply(&mut self) -> Frame {
        loop {
            if let Some(reply) = self.decoder.next_frame().expect("valid RESP") {
                return reply;
            }
            let mut chunk = [0u8; 16 * 1024];
            let n = self.stream.read(&mut chunk).expect("read a reply");
            assert!(n > 0, "the server closed the connection");
            self.decoder.feed(&chunk[..n]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tool_skips_when_not_required() {
        missing_tool_with("no-such-tool", "nowhere", false);
    }

    #[test]
    #[should_panic(expected = "SEEDKV_REQUIRE_TOOLS=1 requires it")]
    fn a_missing_tool_fails_when_required() {
        missing_tool_with("no-such-tool", "nowhere", true);
    }

    #[test]
    fn require_tool_finds_what_is_on_path_and_not_what_is_not() {
        assert!(find_in_path("sh").is_some() || find_in_path("ls").is_some());
        if !tools_required() {
            assert!(!require_tool("seedkv-no-such-tool-anywhere"));
        }
    }
}
