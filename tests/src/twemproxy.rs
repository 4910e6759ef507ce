//! twemproxy (Debian's `nutcracker`) in front of seedkv servers: a pool
//! configuration generated for the shards' ports, and the proxy process,
//! killed when its handle drops.
//!
//! The pool names its servers (`shard0`, `shard1`...): ketama places a
//! named server on the ring by its name, not its address, so which shard
//! owns a key does not depend on the free ports a run happened to get.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::{find_in_path, free_port, missing_tool, STARTUP_TIMEOUT};

/// The pool's name in the generated configuration (and in the stats).
pub const POOL: &str = "seedkv";

/// How a pool spreads keys and waits for its servers.
#[derive(Clone, Debug)]
pub struct PoolOptions {
    /// `ketama` (consistent hashing) or `modula` (hash mod servers).
    pub distribution: &'static str,
    /// Two characters that delimit the part of a key that is hashed
    /// (`{}`: `{user1}:a` and `{user1}:b` go to one server).
    pub hash_tag: Option<&'static str>,
    /// How long the proxy waits for a server's reply before it answers
    /// `-ERR Connection timed out` (milliseconds).
    pub timeout_ms: u64,
}

impl Default for PoolOptions {
    fn default() -> PoolOptions {
        PoolOptions {
            distribution: "ketama",
            hash_tag: Some("{}"),
            timeout_ms: 5_000,
        }
    }
}

/// The YAML of one redis pool listening on `listen_port` in front of the
/// servers on `shard_ports` (weight 1 each, named `shard<i>`).
///
/// `preconnect` opens the server connections at start, so a shard that is
/// down shows at once; `auto_eject_hosts: false` keeps the key placement
/// fixed when a shard fails (its keys get errors instead of moving to
/// another shard, which would split the data); one connection per server
/// keeps each client's requests to one shard in order (twemproxy's
/// recommendation for read-your-writes with pipelining).
pub fn pool_config(listen_port: u16, shard_ports: &[u16], options: &PoolOptions) -> String {
    let mut yaml = format!(
        "{POOL}:\n  listen: 127.0.0.1:{listen_port}\n  redis: true\n  hash: fnv1a_64\n  \
         distribution: {}\n",
        options.distribution
    );
    if let Some(tag) = options.hash_tag {
        yaml.push_str(&format!("  hash_tag: \"{tag}\"\n"));
    }
    yaml.push_str(&format!(
        "  timeout: {}\n  preconnect: true\n  auto_eject_hosts: false\n  server_connections: 1\n  \
         servers:\n",
        options.timeout_ms
    ));
    for (i, port) in shard_ports.iter().enumerate() {
        yaml.push_str(&format!("   - 127.0.0.1:{port}:1 shard{i}\n"));
    }
    yaml
}

/// `nutcracker` on PATH or in /usr/sbin (where Debian puts it, and which a
/// non-root PATH may lack), or `None` after [`missing_tool`] (which fails
/// the test under `SEEDKV_REQUIRE_TOOLS=1`).
pub fn nutcracker_binary() -> Option<PathBuf> {
    let found = find_in_path("nutcracker").or_else(|| {
        let sbin = PathBuf::from("/usr/sbin/nutcracker");
        sbin.is_file().then_some(sbin)
    });
    if found.is_none() {
        missing_tool("nutcracker (twemproxy)", "apt-get install nutcracker");
    }
    found
}

/// A running nutcracker, killed on drop.
pub struct Nutcracker {
    child: Child,
    /// The pool's listening port: where clients connect.
    pub port: u16,
    /// The stats port (JSON per pool and server on every connect).
    pub stats_port: u16,
    /// The configuration it runs, as written.
    pub config: String,
    dir: tempfile::TempDir,
}

impl Nutcracker {
    /// Starts nutcracker in front of the servers on `shard_ports` and waits
    /// until it answers PING, or returns `None` when it is not installed.
    ///
    /// Its ports are picked free, released and then bound by nutcracker,
    /// so another process can take one in between: nutcracker then exits,
    /// and the start is retried on new ports. Readiness is a PONG through
    /// the pool *and* nutcracker's own stats on the stats port, so that a
    /// process that stole the pool's port is never taken for the proxy.
    pub fn start(shard_ports: &[u16], options: &PoolOptions) -> Option<Nutcracker> {
        let bin = nutcracker_binary()?;
        const ATTEMPTS: usize = 10;
        let mut last = String::new();
        for _ in 0..ATTEMPTS {
            let dir = tempfile::tempdir().expect("a temporary directory");
            let (port, stats_port) = (free_port(), free_port());
            let config = pool_config(port, shard_ports, options);
            let path = dir.path().join("nutcracker.yml");
            std::fs::write(&path, &config).expect("write nutcracker.yml");
            let child = Command::new(&bin)
                .arg("--conf-file")
                .arg(&path)
                .args(["--stats-addr", "127.0.0.1"])
                .args(["--stats-port", &stats_port.to_string()])
                .arg("--output")
                .arg(dir.path().join("nutcracker.log"))
                .arg("--pid-file")
                .arg(dir.path().join("nutcracker.pid"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn nutcracker");
            let mut proxy = Nutcracker {
                child,
                port,
                stats_port,
                config,
                dir,
            };
            if proxy.wait_ready() {
                return Some(proxy);
            }
            last = proxy.log();
        }
        panic!("nutcracker failed to start {ATTEMPTS} times; last log:\n{last}");
    }

    /// Polls until the pool answers PING and the stats port serves
    /// nutcracker's stats; `false` if the process exited first.
    fn wait_ready(&mut self) -> bool {
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            if self.answers_ping() && self.stats().contains("\"service\":\"nutcracker\"") {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!(
            "nutcracker did not serve on port {} within {STARTUP_TIMEOUT:?}; log:\n{}",
            self.port,
            self.log()
        );
    }

    /// Whether the pool answers PING with PONG within a second (a closed
    /// connection or silence is `false`, never a panic: the process
    /// behind the port may not be ours yet).
    fn answers_ping(&self) -> bool {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
        if s.write_all(b"*1\r\n$4\r\nPING\r\n").is_err() {
            return false;
        }
        let mut reply = [0u8; 7];
        s.read_exact(&mut reply).is_ok() && &reply == b"+PONG\r\n"
    }

    /// The stats JSON (empty if the stats port does not answer).
    pub fn stats(&self) -> String {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.stats_port)) else {
            return String::new();
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
        let mut text = String::new();
        let _ = s.read_to_string(&mut text);
        text
    }

    /// What nutcracker logged so far (unsupported commands, server errors).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("nutcracker.log")).unwrap_or_default()
    }

    /// `127.0.0.1:PORT` of the pool.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for Nutcracker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_config_names_every_shard_with_its_weight() {
        let yaml = pool_config(22121, &[7001, 7002], &PoolOptions::default());
        assert!(
            yaml.starts_with("seedkv:\n  listen: 127.0.0.1:22121\n"),
            "{yaml}"
        );
        assert!(yaml.contains("  hash_tag: \"{}\"\n"), "{yaml}");
        assert!(yaml.contains("  distribution: ketama\n"), "{yaml}");
        assert!(yaml.ends_with("   - 127.0.0.1:7001:1 shard0\n   - 127.0.0.1:7002:1 shard1\n"));
    }
}
