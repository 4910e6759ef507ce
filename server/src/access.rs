//! Who may connect, and how accepted sockets are set up: protected mode and
//! TCP keepalive, read from the engine's configuration at each accept so
//! that `CONFIG SET protected-mode` / `tcp-keepalive` take effect for the
//! next connection, as in Redis.

use std::net::SocketAddr;
use std::time::Duration;

use seedkv_engine::commands::config::config_get;
use seedkv_engine::Config;

/// What Redis 7.0.15 (networking.c, `acceptCommonHandler`) writes to a
/// non-loopback client in protected mode before closing it, byte for byte
/// (including its "Setup a an" typo: clients and scripts match on it).
pub const DENIED_PROTECTED_MODE: &str = "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.\r\n";

/// Whether a client from `peer` must be refused with
/// [`DENIED_PROTECTED_MODE`]: protected mode is on, the default user has no
/// password, and the peer is not a loopback address. Redis 7 applies this
/// whatever `bind` says (the bind-address condition of Redis 3.2-6 is gone).
pub fn protected_mode_refuses(config: &Config, peer: &SocketAddr) -> bool {
    let protected = config_get(config, "protected-mode").as_deref() != Some("no");
    protected && config.requirepass.is_none() && !is_loopback(peer)
}

/// Loopback as Redis's `connIsLocal` sees it: 127.0.0.0/8 (Redis checks the
/// `127.` prefix), `::1`, and IPv4-mapped loopback.
fn is_loopback(peer: &SocketAddr) -> bool {
    match peer {
        SocketAddr::V4(a) => a.ip().is_loopback(),
        SocketAddr::V6(a) => {
            a.ip().is_loopback() || a.ip().to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// The keepalive Redis's `anetKeepAlive` sets for `tcp-keepalive N` (N > 0):
/// first probe after N seconds idle, then every N/3 seconds (at least one),
/// and the peer is dead after three unanswered probes. 0 leaves keepalive off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keepalive {
    pub idle: Duration,
    pub interval: Duration,
    pub retries: u32,
}

/// Probes Redis sends before declaring a peer dead (`TCP_KEEPCNT`).
pub const KEEPALIVE_RETRIES: u32 = 3;

/// The keepalive `config` asks for, or `None` when `tcp-keepalive` is 0.
pub fn keepalive(config: &Config) -> Option<Keepalive> {
    let secs: u64 = config_get(config, "tcp-keepalive")?.parse().ok()?;
    if secs == 0 {
        return None;
    }
    Some(Keepalive {
        idle: Duration::from_secs(secs),
        interval: Duration::from_secs((secs / 3).max(1)),
        retries: KEEPALIVE_RETRIES,
    })
}

/// Applies `keepalive` to a connected socket (SO_KEEPALIVE plus the Linux
/// TCP_KEEPIDLE / TCP_KEEPINTVL / TCP_KEEPCNT knobs).
pub fn set_keepalive(socket: socket2::SockRef<'_>, keepalive: &Keepalive) -> std::io::Result<()> {
    let params = socket2::TcpKeepalive::new().with_time(keepalive.idle);
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let params = params
        .with_interval(keepalive.interval)
        .with_retries(keepalive.retries);
    socket.set_tcp_keepalive(&params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use seedkv_engine::commands::config::apply_config_line;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn protected_mode_refuses_only_remote_peers_without_a_password() {
        let mut config = Config::default();
        assert!(protected_mode_refuses(&config, &addr("10.1.2.3:5000")));
        assert!(protected_mode_refuses(&config, &addr("[fe80::1]:5000")));
        assert!(!protected_mode_refuses(&config, &addr("127.0.0.1:5000")));
        assert!(!protected_mode_refuses(&config, &addr("127.4.5.6:5000")));
        assert!(!protected_mode_refuses(&config, &addr("[::1]:5000")));
        assert!(!protected_mode_refuses(
            &config,
            &addr("[::ffff:127.0.0.1]:5000")
        ));
        apply_config_line(&mut config, "requirepass", "pw").unwrap();
        assert!(!protected_mode_refuses(&config, &addr("10.1.2.3:5000")));
        let mut config = Config::default();
        apply_config_line(&mut config, "protected-mode", "no").unwrap();
        assert!(!protected_mode_refuses(&config, &addr("10.1.2.3:5000")));
    }

    #[test]
    fn denied_message_is_one_error_line() {
        assert!(DENIED_PROTECTED_MODE.starts_with("-DENIED "));
        assert!(DENIED_PROTECTED_MODE.ends_with("outside.\r\n"));
        assert_eq!(DENIED_PROTECTED_MODE.matches('\n').count(), 1);
    }

    #[test]
    fn keepalive_follows_tcp_keepalive_like_anet() {
        let mut config = Config::default();
        let k = keepalive(&config).expect("Redis's default is 300 s");
        assert_eq!(k.idle, Duration::from_secs(300));
        assert_eq!(k.interval, Duration::from_secs(100));
        assert_eq!(k.retries, 3);
        apply_config_line(&mut config, "tcp-keepalive", "2").unwrap();
        assert_eq!(keepalive(&config).unwrap().interval, Duration::from_secs(1));
        apply_config_line(&mut config, "tcp-keepalive", "0").unwrap();
        assert_eq!(keepalive(&config), None);
    }

    #[test]
    fn keepalive_is_set_on_a_real_socket() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        let mut config = Config::default();
        apply_config_line(&mut config, "tcp-keepalive", "60").unwrap();
        let k = keepalive(&config).unwrap();
        let sock = socket2::SockRef::from(&server);
        assert!(!sock.keepalive().unwrap());
        set_keepalive(sock, &k).unwrap();
        let sock = socket2::SockRef::from(&server);
        assert!(sock.keepalive().unwrap());
        #[cfg(target_os = "linux")]
        {
            assert_eq!(sock.tcp_keepalive_time().unwrap(), Duration::from_secs(60));
            assert_eq!(
                sock.tcp_keepalive_interval().unwrap(),
                Duration::from_secs(20)
            );
            assert_eq!(sock.tcp_keepalive_retries().unwrap(), 3);
        }
        drop(client);
    }
}
